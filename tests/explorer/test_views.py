from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from tests.stored import import_analysed

pytestmark = pytest.mark.django_db


def page(client, name: str, *args: object, **params: str) -> str:
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode().replace("<wbr>", "")  # where long names may wrap


# --- claims list -------------------------------------------------------------------------


def test_claims_list_shows_every_claim_with_state_class_driver_and_node(
    client_logged_in, demo
) -> None:
    html = page(client_logged_in, "claim-list", demo[0].pk)
    assert "28 of 28 claims" in html
    assert "vllm-0-gpus-q8z4m" in html
    assert "h100-node-01" in html
    assert "mig.nvidia.com" in html
    assert "gpu.example.com" in html


@pytest.mark.parametrize(
    ("params", "included", "excluded"),
    [
        ({"namespace": "render"}, ["render-farm-0-"], ["vllm-0-gpus"]),
        ({"state": "pending"}, ["h200-eval", "rocm-smoke-gpu"], ["vllm-0-gpus"]),
        ({"state": "reserved"}, ["vllm-0-gpus"], ["h200-eval"]),
        ({"device_class": "mig.nvidia.com"}, ["embedder-0-mig"], ["vllm-0-gpus"]),
        ({"driver": "gpu.example.com"}, ["gpu-test1/", "render-farm-"], ["vllm-0-gpus"]),
        ({"node": "h100-mig-node-01"}, ["embedder-0-mig"], ["vllm-0-gpus", "render-farm"]),
        ({"q": "crashy"}, ["trainer-crashy-gpu"], ["vllm-0-gpus"]),
    ],
)
def test_claims_list_filters(client_logged_in, demo, params, included, excluded) -> None:
    html = page(client_logged_in, "claim-list", demo[0].pk, **params)
    for text in included:
        assert text in html
    for text in excluded:
        assert text not in html


def test_claims_list_filter_as_htmx_partial(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("claim-list", args=[demo[0].pk]),
        {"state": "pending"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert html.strip().startswith('<section id="results"')
    assert "9 of 28 claims" in html
    assert response["Vary"] and "HX-Request" in response["Vary"]


def test_claims_list_rejects_an_unknown_state(client_logged_in, demo) -> None:
    response = client_logged_in.get(reverse("claim-list", args=[demo[0].pk]), {"state": "bogus"})
    assert response.status_code == 400


def test_claims_list_pages_through_large_snapshots(client_logged_in, monkeypatch, demo) -> None:
    monkeypatch.setattr("dradash.explorer.views.PAGE_SIZE", 5)
    first = page(client_logged_in, "claim-list", demo[0].pk)
    assert "page 1 of 6" in first
    last = page(client_logged_in, "claim-list", demo[0].pk, page="6", sort="namespace")
    assert "page 6 of 6" in last
    assert "team-amd/" in last  # sorted by namespace, the last namespace's claims come last
    # The pager keeps the sort order.
    assert "sort=namespace" in first or "sort=namespace" in page(
        client_logged_in, "claim-list", demo[0].pk, sort="namespace"
    )


def test_lists_sort_worst_stage_first_by_default(client_logged_in, demo) -> None:
    pods = page(client_logged_in, "pod-list", demo[0].pk)
    order = [s for s in ("pod-pending", "claim-unallocated", "healthy") if s in pods]
    assert order == ["pod-pending", "claim-unallocated", "healthy"]
    positions = [
        pods.index(f'badge-{b}">{s}')
        for s, b in (("pod-pending", "warn"), ("claim-unallocated", "bad"), ("healthy", "ok"))
    ]
    assert positions == sorted(positions)
    by_name = page(client_logged_in, "pod-list", demo[0].pk, sort="name")
    names = re.findall(r'pods/[^/"]+/([^/"]+)/"', by_name)
    assert names == sorted(names)


# --- pods list ---------------------------------------------------------------------------


def test_pods_list_shows_dra_pods_and_filters(client_logged_in, demo) -> None:
    html = page(client_logged_in, "pod-list", demo[0].pk)
    assert "36 of 36 Pods using DRA" in html
    pending = page(client_logged_in, "pod-list", demo[0].pk, phase="Pending")
    assert "etl-worker-7" in pending
    assert "vllm-0" not in pending
    on_node = page(client_logged_in, "pod-list", demo[0].pk, node="a100-node-01")
    assert "cuda-smoke" in on_node
    assert "trainer-crashy" not in on_node


def test_pods_list_as_htmx_partial(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("pod-list", args=[demo[0].pk]), headers={"HX-Request": "true"}
    )
    assert b"<html" not in response.content
    assert b'id="results"' in response.content


# --- the chain pages ---------------------------------------------------------------------


def test_pod_page_shows_the_whole_chain_down_to_device_and_node(client_logged_in, demo) -> None:
    html = page(client_logged_in, "pod-detail", demo[0].pk, "inference", "vllm-0")
    # Pod -> template -> generated claim
    assert "h100-pair" in html
    assert "vllm-0-gpus-q8z4m" in html
    # requests: class, count, selectors from the class; constraint
    assert "gpu.nvidia.com" in html
    assert "device.attributes[&#x27;gpu.nvidia.com&#x27;].type == &#x27;gpu&#x27;" in html
    assert "resource.kubernetes.io/numaNode" in html
    # allocation results -> device with attributes and capacity -> slice -> pool -> node
    assert "gpu-0" in html and "gpu-1" in html
    assert "NVIDIA H100 80GB HBM3" in html
    assert "81559Mi" in html
    assert "00000-gpu.nvidia.com-h100-node-01-gdnk7" in html
    assert "1/1 slices" in html
    assert "h100-node-01" in html
    # reservedFor and container state
    assert "Reserved for" in html
    assert "running" in html


def test_pod_page_explains_a_claim_not_created_yet(client_logged_in, demo) -> None:
    html = page(client_logged_in, "pod-detail", demo[0].pk, "batch", "etl-worker-7")
    assert "not-created" in html
    assert "No claim has been generated from template h100-single yet" in html
    # The template's requests are shown, since there is no claim to show them.
    assert "productName == &#x27;NVIDIA H100 80GB HBM3&#x27;" in html


def test_pod_page_explains_a_missing_template_with_the_controller_event(
    client_logged_in, demo
) -> None:
    html = page(client_logged_in, "pod-detail", demo[0].pk, "notebooks", "notebook-0")
    assert "template-missing" in html
    assert "ResourceClaimTemplate notebooks/gpu-notebook does not exist" in html
    assert "FailedResourceClaimCreation" in html


def test_pod_page_shows_conditions_events_and_container_states(client_logged_in, demo) -> None:
    html = page(client_logged_in, "pod-detail", demo[0].pk, "gpu-test6", "pod-5c8d7b9f4-qx2lm")
    assert "SchedulerError" in html
    assert "CEL runtime error: no such key: index" in html
    crashy = page(client_logged_in, "pod-detail", demo[0].pk, "ml-team", "trainer-crashy")
    assert "CrashLoopBackOff" in crashy
    assert "exit 1" in crashy
    assert "research-high" in crashy


def test_pod_page_as_htmx_fragment(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("pod-detail", args=[demo[0].pk, "inference", "vllm-0"]),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"vllm-0-gpus-q8z4m" in response.content


def test_claim_page_shows_consumers_allocation_and_device(client_logged_in, demo) -> None:
    html = page(client_logged_in, "claim-detail", demo[0].pk, "gpu-test2", "single-gpu")
    assert "pod0" in html and "pod1" in html and "pod2" in html
    assert "gpu-2" in html
    assert "LATEST-GPU-MODEL" in html
    assert "gpu-example-worker-1" in html
    assert "metadata.name = gpu-example-worker-1" in html


def test_claim_page_of_an_unallocated_claim(client_logged_in, demo) -> None:
    html = page(client_logged_in, "claim-detail", demo[0].pk, "team-amd", "rocm-smoke-gpu-v2n8r")
    assert "Not allocated" in html
    assert "class missing" in html


def test_claim_page_as_htmx_fragment(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("claim-detail", args=[demo[0].pk, "gpu-test2", "single-gpu"]),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert b"<html" not in response.content


def test_the_later_snapshot_shows_the_cluster_30_minutes_on(client_logged_in, demo) -> None:
    html = page(client_logged_in, "pod-detail", demo[1].pk, "batch", "etl-worker-7")
    assert "etl-worker-7-gpu-k3f7w" in html
    assert "gpu-5" in html


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("pod-detail", ("inference", "no-such-pod")),
        ("pod-detail", ("no-such-namespace", "vllm-0")),
        ("claim-detail", ("inference", "no-such-claim")),
    ],
)
def test_unknown_objects_are_404(client_logged_in, demo, name, args) -> None:
    assert client_logged_in.get(reverse(name, args=[demo[0].pk, *args])).status_code == 404


def test_the_404_page_says_what_is_missing(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("pod-detail", args=[demo[0].pk, "inference", "no-such-pod"])
    )
    html = response.content.decode()
    assert f"No Pod inference/no-such-pod in snapshot {demo[0].pk}" in html
    assert reverse("home") in html


def test_lists_of_an_unknown_snapshot_are_404(client_logged_in) -> None:
    for name in ("claim-list", "pod-list"):
        assert client_logged_in.get(reverse(name, args=[424242])).status_code == 404


# --- cluster strings are escaped ---------------------------------------------------------

XSS = '<script>alert("x")</script>'


def test_cluster_strings_are_rendered_escaped(client_logged_in) -> None:
    objects = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "uid": "u1",
                "labels": {"x": XSS},
                "annotations": {"y": XSS},
            },
            "spec": {
                "containers": [{"name": "c", "image": XSS}],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "claim"}],
            },
            "status": {"phase": "Pending", "message": XSS},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "claim", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                # A class name the API server accepts (the import refuses
                                # others); the selector still carries the hostile text.
                                "deviceClassName": "gpu.example.com",
                                "selectors": [{"cel": {"expression": f'device.driver == "{XSS}"'}}],
                            },
                        }
                    ]
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
            "reason": XSS,
            "message": XSS,
            "type": "Warning",
        },
    ]
    snapshot = import_analysed(files=[("xss.json", json.dumps(objects).encode())], cluster_name="x")
    for name, args in (
        ("pod-detail", ("default", "web")),
        ("claim-detail", ("default", "claim")),
        ("claim-list", ()),
        ("pod-list", ()),
    ):
        html = page(client_logged_in, name, snapshot.pk, *args)
        assert "<script>alert" not in html, name
    assert "&lt;script&gt;alert" in page(
        client_logged_in, "pod-detail", snapshot.pk, "default", "web"
    )


# --- device classes ----------------------------------------------------------------------


def test_class_page_shows_selectors_devices_and_claims(client_logged_in, demo) -> None:
    html = page(client_logged_in, "class-detail", demo[0].pk, "gpu.nvidia.com")
    assert "device.attributes[&#x27;gpu.nvidia.com&#x27;].type == &#x27;gpu&#x27;" in html
    assert "12 in current pools, 7 allocated" in html  # 8 H100 and 4 A100 GPUs
    assert "nvidia.com/gpu" in html  # extended resource name
    assert "vllm-0-gpus-q8z4m" in html
    assert "open in playground" in html


def test_class_page_as_htmx_fragment_and_404(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("class-detail", args=[demo[0].pk, "mig.nvidia.com"]),
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"9 in current pools, 3 allocated" in response.content
    missing = client_logged_in.get(reverse("class-detail", args=[demo[0].pk, "gpu.amd.com"]))
    assert missing.status_code == 404


# --- the verdict -------------------------------------------------------------------------


def test_pod_page_leads_with_the_verdict_and_the_funnel(client_logged_in, demo) -> None:
    html = page(client_logged_in, "pod-detail", demo[0].pk, "render", "render-farm-6-05b2e")
    verdict = html.index('class="verdict')
    assert verdict < html.index('class="chain"')
    assert 'class="stagestep current failing">Claim unallocated' in html
    assert "devices-exhausted" in html
    assert "Allocator:" in html and "cannot allocate" in html
    assert "Next steps" in html and "kubectl describe resourceclaim" in html


def test_claim_page_shows_the_verdict(client_logged_in, demo) -> None:
    html = page(
        client_logged_in, "claim-detail", demo[0].pk, "gpu-test6", "pod-5c8d7b9f4-qx2lm-gpu-t9h6c"
    )
    assert "selector-error" in html
    assert "no such key: index" in html


def test_overview_counts_pods_per_stage_and_lists_findings(client_logged_in, demo) -> None:
    html = page(client_logged_in, "snapshot-detail", demo[0].pk)
    assert "36 Pods using DRA, by stage" in html
    assert "?stage=claim-unallocated" in html
    assert "nodename-bypass" in html and "parallelism-exceeds-capacity" in html


def test_lists_filter_by_stage_and_reason(client_logged_in, demo) -> None:
    claims = page(client_logged_in, "claim-list", demo[0].pk, stage="claim-unallocated")
    assert "render-farm-6-05b2e-gpus" in claims and "vllm-0-gpus" not in claims
    pods = page(client_logged_in, "pod-list", demo[0].pk, reason="oom-killed")
    assert "batch-ocr" in pods and "trainer-crashy" not in pods
    assert (
        client_logged_in.get(reverse("pod-list", args=[demo[0].pk]), {"stage": "nope"}).status_code
        == 400
    )


def test_device_inventory_filters_and_links_to_claims(client_logged_in, demo) -> None:
    url = reverse("device-list", args=[demo[1].pk])
    page = client_logged_in.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert "41 of 41 devices" in html
    assert "h100-mig-node-01" in html  # the pools table
    tainted = client_logged_in.get(url, {"state": "tainted"}).content.decode()
    tainted = tainted.replace("<wbr>", "")
    assert "3 of 41 devices" in tainted and "gpu.nvidia.com/xid=43:NoSchedule" in tainted
    assert "gpu.nvidia.com/xid=79:NoExecute" in tainted
    partial = client_logged_in.get(url, {"state": "free"}, headers={"HX-Request": "true"})
    body = partial.content.decode()
    # neither the tainted one nor those of the incomplete pool are free
    assert "9 of 41 devices" in body and "<html" not in body
    held = client_logged_in.get(url, {"q": "render-farm-0"}).content.decode()
    claim = reverse("claim-detail", args=[demo[1].pk, "render", "render-farm-0-d1ce0-gpus-29c90"])
    assert claim in held
