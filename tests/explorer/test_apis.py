from __future__ import annotations

import pytest
from django.urls import reverse

from dradash.dra.diagnosis import STAGES

pytestmark = pytest.mark.django_db


def get(client, name: str, *args: object):
    return client.get(reverse(name, args=args))


def test_pod_diagnosis_has_the_designed_shape(api_client, demo) -> None:
    response = get(api_client, "api-pod-diagnosis", demo[0].pk, "render", "render-farm-6-05b2e")
    assert response.status_code == 200
    data = response.json()
    assert set(data) == {
        "stage",
        "reason",
        "severity",
        "unknown",
        "summary",
        "evidence",
        "next_steps",
        "findings",
        "chain",
        "history",
    }
    assert (data["stage"], data["reason"]) == ("claim-unallocated", "devices-exhausted")
    assert (data["severity"], data["unknown"]) == ("error", [])
    assert data["evidence"][0] == {
        "kind": "ResourceClaim",
        "namespace": "render",
        "name": "render-farm-6-05b2e-gpus-9927f",
        "field": "status.allocation",
        "detail": "not set",
    }
    assert any(step.startswith("kubectl describe") for step in data["next_steps"])
    assert data["chain"]["pod"]["name"] == "render-farm-6-05b2e"


def test_pod_diagnosis_lists_the_findings_about_it(api_client, demo) -> None:
    data = get(api_client, "api-pod-diagnosis", demo[0].pk, "manual", "pinned-job").json()
    assert data["reason"] == "nodename-bypass"
    assert "nodename-bypass" in {f["code"] for f in data["findings"]}


def test_claim_diagnosis_and_explain(api_client, demo) -> None:
    data = get(api_client, "api-claim-diagnosis", demo[0].pk, "llm-eval", "h200-eval").json()
    assert (data["stage"], data["reason"]) == ("claim-unallocated", "no-matching-devices")
    explain = get(api_client, "api-claim-explain", demo[0].pk, "llm-eval", "h200-eval").json()
    assert explain["allocatable"] is False
    assert explain["error"] is None
    assert explain["node"] is None
    request = explain["requests"][0]
    assert request["name"] == "gpu"
    assert [s["step"] for s in request["funnel"]][:4] == [
        "class",
        "driver",
        "class-selectors",
        "request-selectors",
    ]
    assert {s["step"]: s["remaining"] for s in request["funnel"]}["request-selectors"] == 0
    assert {"driver", "pool", "device", "failed_step"} <= set(request["devices"][0])


def test_explain_says_where_a_claim_would_allocate(api_client, demo) -> None:
    # etl-worker-7's claim exists in the later snapshot, allocated; a fresh look at it:
    data = get(
        api_client, "api-claim-explain", demo[0].pk, "gpu-test6", "pod-5c8d7b9f4-qx2lm-gpu-t9h6c"
    ).json()
    assert data["allocatable"] is None
    assert "CEL runtime error: no such key: index" in data["error"]


def test_findings_list(api_client, demo) -> None:
    data = get(api_client, "api-findings", demo[0].pk).json()
    codes = {f["code"] for f in data}
    assert {
        "nodename-bypass",
        "shared-claim",
        "class-missing",
        "parallelism-exceeds-capacity",
    } <= codes
    assert all(set(f) >= {"code", "severity", "message", "objects"} for f in data)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("api-pod-diagnosis", ("render", "nope")),
        ("api-pod-diagnosis", ("cel-selector", "nope")),
        ("api-claim-diagnosis", ("render", "nope")),
        ("api-claim-explain", ("render", "nope")),
    ],
)
def test_unknown_objects_are_404(api_client, demo, name, args) -> None:
    assert get(api_client, name, demo[0].pk, *args).status_code == 404


def test_unknown_snapshot_is_404(api_client) -> None:
    assert get(api_client, "api-findings", 424242).status_code == 404


def test_anonymous_is_refused(client, demo) -> None:
    assert get(client, "api-findings", demo[0].pk).status_code in (401, 403)


def test_devices_and_pools_have_the_designed_shape(api_client, demo) -> None:
    devices = get(api_client, "api-devices", demo[1].pk).json()
    # 37 devices, and 4 more in gpu-example-worker-3's incomplete pool (the allocator skips it)
    assert len(devices) == 41
    # The designed fields stay; later ones come on top.
    assert {"driver", "pool", "device", "node", "allocated_to", "taints"} <= set(devices[0])
    held = [d for d in devices if d["allocated_to"]]
    assert len(held) == 27  # finetune's two on the MIG node's GPU 1 among them
    assert all("/" in d["allocated_to"] for d in held)
    tainted = [d for d in devices if d["taints"]]
    assert [(d["device"], d["taints"][0]["key"]) for d in tainted] == [
        ("gpu-0-mig-1g10gb-19-6", "gpu.nvidia.com/xid"),
        ("gpu-1-mig-3g40gb-9-0", "gpu.nvidia.com/xid"),  # XID 79: held, tainted, unhealthy
        ("gpu-1-mig-3g40gb-9-4", "gpu.nvidia.com/xid"),
    ]
    free = api_client.get(reverse("api-devices", args=[demo[1].pk]), {"state": "free"}).json()
    # Free: neither allocated nor tainted (the tainted MIG device goes only to a tolerating claim).
    assert len(free) == 37 - 27 - 1 and not any(d["allocated_to"] or d["taints"] for d in free)
    unusable = [d for d in devices if d["status"] == "unusable"]
    assert {d["pool"] for d in unusable} == {"gpu-example-worker-3"} and len(unusable) == 4
    bad = api_client.get(reverse("api-devices", args=[demo[1].pk]), {"state": "bogus"})
    assert bad.status_code == 400

    pools = get(api_client, "api-pools", demo[1].pk).json()
    assert len(pools) == 6
    assert {
        "driver",
        "pool",
        "generation",
        "slices",
        "resource_slice_count",
        "complete",
        "devices",
        "allocated",
    } <= set(pools[0])
    assert sum(p["devices"] for p in pools) == 41
    assert sum(p["allocated"] for p in pools) == 27
    mig = next(p for p in pools if p["pool"] == "h100-mig-node-01")
    assert mig["generation"] == 2 and mig["complete"] is True
    # the slice of generation 1 lingers beside it, its devices not counted
    assert [s["generation"] for s in mig["stale_slices"]] == [1]
    joined = next(p for p in pools if p["pool"] == "gpu-example-worker-3")
    assert (joined["slices"], joined["resource_slice_count"], joined["complete"]) == (1, 2, False)
    assert get(api_client, "api-pools", 999999).status_code == 404


def test_explain_answers_on_every_node_and_gives_the_allocation(api_client, demo) -> None:
    """DESIGN: ``nodes`` is the allocator's answer on every node the Pod may use, in name order;
    ``allocation`` what the scheduler would write when the claims fit."""
    data = get(
        api_client, "api-claim-explain", demo[0].pk, "render", "render-farm-6-05b2e-gpus-9927f"
    ).json()
    assert data["allocatable"] is False
    names = [n["node"] for n in data["nodes"]]
    assert names and names == sorted(names)
    assert {n["outcome"] for n in data["nodes"]} <= {"fit", "nofit", "node-error", "error"}
    assert all(n["outcome"] != "fit" for n in data["nodes"])
    assert data["allocation"] == []


def test_the_claim_page_counts_the_allocators_answer_per_node(client_logged_in, demo) -> None:
    html = client_logged_in.get(
        reverse("claim-detail", args=[demo[0].pk, "render", "render-farm-6-05b2e-gpus-9927f"])
    ).content.decode()
    assert "node the Pod may use" in html
    assert "nofit" in html


def test_pod_and_claim_lists_filter_and_sort_as_their_pages_do(api_client, demo) -> None:
    pk = demo[0].pk
    data = api_client.get(f"/api/v1/snapshots/{pk}/pods").json()
    stages = [row["stage"] for row in data["results"]]
    assert data["count"] == len(stages) == 36 and stages[0] == "pod-pending"
    assert stages == sorted(stages, key=lambda s: STAGES.index(s))  # worst first
    stuck = api_client.get(f"/api/v1/snapshots/{pk}/pods?stage=claim-unallocated").json()
    assert {r["reason"] for r in stuck["results"]} >= {"devices-exhausted", "selector-error"}
    assert all(r["severity"] == "error" for r in stuck["results"])
    by_name = api_client.get(f"/api/v1/snapshots/{pk}/pods?sort=-name&limit=3").json()
    assert [r["name"] for r in by_name["results"]] == sorted(
        [r["name"] for r in data["results"]], reverse=True
    )[:3]
    assert by_name["next"] is not None
    claims = api_client.get(f"/api/v1/snapshots/{pk}/claims?device_class=gpu.example.com")
    assert claims.status_code == 200
    assert all("gpu.example.com" in r["classes"] for r in claims.json()["results"])
    bad = api_client.get(f"/api/v1/snapshots/{pk}/claims?stage=nonsense")
    assert bad.status_code == 400


def test_explain_of_an_allocated_claim_is_its_allocation(api_client, demo) -> None:
    data = get(api_client, "api-claim-explain", demo[0].pk, "gpu-test1", "pod0-gpu-x7k2p").json()
    assert data["allocatable"] is True
    assert data["node"]
    (allocation,) = data["allocation"]
    assert allocation["devices"]["results"][0]["driver"] == "gpu.example.com"
