"""Pods that ask for devices as extended resources backed by DRA (issue 23, KEP-5004) appear
wherever a DRA Pod does: the Pods list and its API, the search, the overview's counts, the Pod
page's chain, the diagnosis and explain APIs, the history across snapshots, the capacity.

The cluster is tests/extended_cluster.py's (fixture ``gpu_lab``): in the later snapshot pod1
(``example.com/gpu: 1``, no spec.resourceClaims) waits while every GPU is taken, pod0 runs with
the claim the scheduler generated for it, hog-0 holds seven GPUs through a claim of its own and
web asks for no device.
"""

from __future__ import annotations

import html as htmllib
import re
from urllib.parse import unquote

import pytest
from django.urls import reverse

from tests.extended_cluster import GENERATED, NS, RESOURCE

pytestmark = pytest.mark.django_db


def page(client, name: str, *args: object, **params: str) -> str:
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200, response.content[:500]
    return htmllib.unescape(response.content.decode().replace("<wbr>", ""))


def words(html: str) -> str:
    """What a person reads: the page without its tags, spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def api(client, name: str, *args: object, **params: str) -> dict:
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def rows(html: str) -> dict[str, str]:
    """The Pods table: Pod name -> the words of its row."""
    body = html.split('id="results"')[1]
    out = {}
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL):
        if name := re.search(rf"{NS}/</span>([\w-]+)</a>", row):
            out[name.group(1)] = words(row)
    return out


# --- lists, search, overview -----------------------------------------------------------------


def test_the_pods_list_shows_a_pod_without_claims_and_what_it_asks_for(
    client_logged_in, gpu_lab
) -> None:
    html = page(client_logged_in, "pod-list", gpu_lab[1].pk)
    assert "3 of 3 Pods using DRA" in html
    found = rows(html)
    assert set(found) == {"pod1", "pod0", "hog-0"}  # web asks for no device
    assert "claim-unallocated devices-exhausted" in found["pod1"]
    assert f"{RESOURCE}: 1" in found["pod1"]
    # The claim the scheduler keeps in memory is neither a claim nor an unresolved reference.
    assert "unresolved" not in found["pod1"]
    assert "healthy running" in found["pod0"]
    assert "deviceclass.resource.kubernetes.io/gpu.example.com: 1" in found["pod0"]
    assert RESOURCE not in found["hog-0"]  # a Pod with claims only shows no extended resource


def test_the_pods_list_filters_by_stage_and_reason_as_a_fragment_too(
    client_logged_in, gpu_lab
) -> None:
    url = reverse("pod-list", args=[gpu_lab[1].pk])
    response = client_logged_in.get(
        url, {"stage": "claim-unallocated"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    fragment = response.content.decode().replace("<wbr>", "")
    assert "<html" not in fragment
    assert set(rows(fragment)) == {"pod1"}
    healthy = page(client_logged_in, "pod-list", gpu_lab[1].pk, reason="running")
    assert set(rows(healthy)) == {"pod0", "hog-0"}


def test_the_pods_api_lists_them_and_filters_by_stage_and_reason(api_client, gpu_lab) -> None:
    later = gpu_lab[1].pk
    listed = {r["name"]: r for r in api(api_client, "api-pods", later)["results"]}
    assert set(listed) == {"pod1", "pod0", "hog-0"}
    pending = listed["pod1"]
    assert (pending["stage"], pending["reason"]) == ("claim-unallocated", "devices-exhausted")
    assert pending["claims"] == []  # no claim exists before binding
    assert pending["extended_resources"] == {RESOURCE: 1}
    assert listed["pod0"]["claims"] == [GENERATED]
    assert listed["hog-0"]["extended_resources"] == {}
    stuck = api(api_client, "api-pods", later, stage="claim-unallocated")["results"]
    assert [r["name"] for r in stuck] == ["pod1"]
    exhausted = api(api_client, "api-pods", later, reason="devices-exhausted")["results"]
    assert [r["name"] for r in exhausted] == ["pod1"]
    running = api(api_client, "api-pods", later, stage="healthy")["results"]
    assert {r["name"] for r in running} == {"pod0", "hog-0"}


def test_the_search_finds_the_pending_pod(client_logged_in, api_client, gpu_lab) -> None:
    later = gpu_lab[1].pk
    # One hit opens its page.
    response = client_logged_in.get(reverse("snapshot-search", args=[later]), {"q": "pod1"})
    assert response.status_code == 302
    assert response["Location"] == reverse("pod-detail", args=[later, NS, "pod1"])
    html = page(client_logged_in, "snapshot-search", later, q="pod")
    assert "pod1" in html and "pod0" in html and "claim-unallocated" in html
    found = api(api_client, "api-search", later, q="pod1")
    assert [p["name"] for p in found["pods"]] == ["pod1"]
    assert found["pods"][0]["stage"] == "claim-unallocated"
    assert found["pods"][0]["extended_resources"] == {RESOURCE: 1}
    assert found["claims"] == []  # the in-memory claim is no claim to find


def test_the_overview_counts_them_by_stage(client_logged_in, gpu_lab) -> None:
    earlier, later = gpu_lab
    text = words(page(client_logged_in, "snapshot-detail", later.pk))
    assert "3 Pods using DRA, by stage" in text
    assert re.search(r"\b1 Claim unallocated\b", text)
    assert re.search(r"\b2 Healthy\b", text)
    stuck = text.split("Pods to look at first")[1].split("Findings")[0]
    assert "pod1" in stuck and "devices-exhausted" in stuck
    assert "pod0" not in stuck  # running
    before = words(page(client_logged_in, "snapshot-detail", earlier.pk))
    assert "2 Pods using DRA, by stage" in before  # hog-0 and pod0, pending then
    assert re.search(r"\b1 Claim unallocated\b", before)


# --- the Pod page --------------------------------------------------------------------------


def claim_links(html: str) -> list[str]:
    return [
        unquote(href)
        for href in re.findall(r'href="([^"]*/claims/[^"]+)"', html)
        if href.count("/") > 5
    ]


def test_the_pending_pod_page_shows_its_extended_resources_and_the_claim_to_come(
    client_logged_in, gpu_lab
) -> None:
    later = gpu_lab[1].pk
    html = page(client_logged_in, "pod-detail", later, NS, "pod1")
    text = words(html)
    assert 'class="stagestep current failing">Claim unallocated' in html
    assert "devices-exhausted" in text
    # container → resource → quantity → class → served by
    table = words(html.split('id="extended-resources"')[1].split("</table>")[0])
    assert f"ctr0 {RESOURCE} 1 gpu.example.com DRA" in table
    assert f'href="{reverse("class-detail", args=[later, "gpu.example.com"])}"' in html
    # The claim the scheduler keeps in memory: its requests, no page.
    assert "The claim the scheduler creates at binding" in text
    assert "creates it as pod1-extended-resources-… when it binds the Pod" in text
    assert "container-0-request-0" in text
    assert "<extended-resources>" not in text
    assert "No resource claims" not in text
    links = claim_links(html)
    assert links, "the devices the Pod waits for link to the claims holding them"
    for href in set(links):
        assert client_logged_in.get(href).status_code == 200, href
    assert not any("extended-resources>" in href for href in links)


def test_the_running_pod_page_links_its_generated_claim_whose_page_shows_the_pod(
    client_logged_in, gpu_lab
) -> None:
    later = gpu_lab[1].pk
    html = page(client_logged_in, "pod-detail", later, NS, "pod0")
    table = words(html.split('id="extended-resources"')[1].split("</table>")[0])
    assert "ctr0 deviceclass.resource.kubernetes.io/gpu.example.com 1 gpu.example.com DRA" in table
    assert "container-0-request-0" in table  # the request of the claim that stands for it
    claim_url = reverse("claim-detail", args=[later, NS, GENERATED])
    assert f'href="{claim_url}"' in html
    assert "The claim the scheduler creates at binding" not in html
    claim_page = page(client_logged_in, "claim-detail", later, NS, GENERATED)
    assert "created by the scheduler for the extended resources of Pod pod0" in words(claim_page)
    assert f'href="{reverse("pod-detail", args=[later, NS, "pod0"])}"' in claim_page
    assert "gpu-0" in claim_page


def test_a_pod_asking_for_no_device_says_it_does_not_use_dra(client_logged_in, gpu_lab) -> None:
    text = words(page(client_logged_in, "pod-detail", gpu_lab[1].pk, NS, "web"))
    assert "This Pod does not use Dynamic Resource Allocation" in text
    assert "asks for no extended resource" in text


# --- APIs ------------------------------------------------------------------------------------


def test_the_diagnosis_api_carries_the_extended_resources_and_history(api_client, gpu_lab) -> None:
    earlier, later = gpu_lab
    pending = api(api_client, "api-pod-diagnosis", later.pk, NS, "pod1")
    assert (pending["stage"], pending["reason"]) == ("claim-unallocated", "devices-exhausted")
    assert pending["chain"]["extended_resources"] == [
        {
            "container": "ctr0",
            "init": False,
            "resource": RESOURCE,
            "quantity": 1,
            "device_class": "gpu.example.com",
            "served_by": "dra",
            "request": None,
        }
    ]
    # Evidence names objects that exist: the Pod, not a claim that does not yet.
    assert {(e["kind"], e["name"]) for e in pending["evidence"]} == {("Pod", "pod1")}
    assert pending["history"] == [
        {
            "snapshot": later.pk,
            "captured_at": "2026-11-20T11:00:00Z",
            "stage": "claim-unallocated",
            "reason": "devices-exhausted",
        }
    ]
    running = api(api_client, "api-pod-diagnosis", later.pk, NS, "pod0")
    assert running["chain"]["extended_resources"][0]["request"] == "container-0-request-0"
    assert running["chain"]["claims"][0]["claim"]["claim"]["name"] == GENERATED
    assert [(h["snapshot"], h["stage"]) for h in running["history"]] == [
        (later.pk, "healthy"),
        (earlier.pk, "claim-unallocated"),
    ]


def test_the_pod_page_shows_the_history_across_snapshots(client_logged_in, gpu_lab) -> None:
    earlier, later = gpu_lab
    html = page(client_logged_in, "pod-detail", later.pk, NS, "pod0")
    history = words(html.split("Across this cluster's snapshots")[1].split("</ol>")[0])
    assert "healthy running in snapshot" in history
    assert "claim-unallocated devices-exhausted in snapshot" in history
    assert f'href="{reverse("snapshot-detail", args=[earlier.pk])}"' in html


def test_the_pod_explain_api_explains_the_claim_the_scheduler_keeps_in_memory(
    api_client, gpu_lab
) -> None:
    later = gpu_lab[1].pk
    explained = api(api_client, "api-pod-explain", later, NS, "pod1")
    claim = api(api_client, "api-claim-explain", later, NS, "hog-gpus")
    assert set(explained) == set(claim)  # the same fields as a claim's explanation
    assert explained["allocatable"] is False
    assert explained["reason"] == "devices-exhausted"
    (request,) = explained["requests"]
    assert request["name"] == "container-0-request-0"
    funnel = {f["step"]: f["remaining"] for f in request["funnel"]}
    assert (funnel["class-selectors"], funnel["free"]) == (8, 0)
    assert {d["failed_step"] for d in request["devices"]} == {"free"}
    assert [n["outcome"] for n in explained["nodes"]] == ["nofit"]
    assert explained["allocation"] == []


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("pod0", "waits for no allocation"),  # its claim is allocated
        ("hog-0", "waits for no allocation"),
        ("web", "No Pod using DRA"),  # asks for no device
        ("nope", "No Pod using DRA"),
    ],
)
def test_the_pod_explain_api_is_404_where_nothing_waits(api_client, gpu_lab, name, message):
    response = api_client.get(reverse("api-pod-explain", args=[gpu_lab[1].pk, NS, name]))
    assert response.status_code == 404
    assert message in response.json()["detail"]


def test_the_schema_documents_the_pod_explain_api_and_the_lists_extended_resources(
    client, db
) -> None:
    spec = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    op = spec["paths"]["/api/v1/snapshots/{snapshot_id}/pods/{namespace}/{name}/explain"]["get"]
    assert "extended resources" in op["description"]
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Explanation"
    }
    pod_row = spec["components"]["schemas"]["PodVerdict"]["properties"]
    assert pod_row["extended_resources"]["type"] == "object"
    waiting = spec["components"]["schemas"]["WaitingRequests"]["properties"]
    assert "extended_resource_pods" in waiting


# --- capacity --------------------------------------------------------------------------------


def test_capacity_counts_the_pending_pods_request_as_waiting(
    client_logged_in, api_client, gpu_lab
) -> None:
    later = gpu_lab[1].pk
    (gpus,) = api(api_client, "api-capacity", later)["classes"]
    (waiting,) = gpus["waiting"]
    assert (waiting["devices_per_request"], waiting["requests"], waiting["servable"]) == (1, 1, 0)
    assert waiting["claims"] == []
    assert waiting["extended_resource_pods"] == [f"{NS}/pod1"]
    html = page(client_logged_in, "snapshot-capacity", later)
    assert "No free device can serve the waiting 1-device request." in html
    assert f'href="{reverse("pod-detail", args=[later, NS, "pod1"])}"' in html
    # Before, nothing waited while pod0 did: the same count, for pod0.
    (before,) = api(api_client, "api-capacity", gpu_lab[0].pk)["classes"]
    assert before["waiting"][0]["extended_resource_pods"] == [f"{NS}/pod0"]


def test_a_pod_page_says_whether_extended_resources_make_it_a_dra_pod(client_logged_in) -> None:
    """Without the DeviceClasses, whether DRA serves example.com/gpu is unknown; with a class
    that maps another name, it is a device plugin's."""
    from tests import extended_cluster
    from tests.stored import import_analysed

    objects = extended_cluster.later()
    no_classes = import_analysed(
        files=[("pods.json", extended_cluster.bundle([o for o in objects if o["kind"] == "Pod"]))]
    )
    text = words(page(client_logged_in, "pod-detail", no_classes.pk, NS, "pod1"))
    assert "This Pod may use Dynamic Resource Allocation: whether it uses DRA is unknown" in text
    assert "does not use" not in text
    for obj in objects:
        if obj["kind"] == "DeviceClass":
            obj["spec"]["extendedResourceName"] = "example.com/other-gpu"
    unmapped = import_analysed(files=[("other.json", extended_cluster.bundle(objects))])
    text = words(page(client_logged_in, "pod-detail", unmapped.pk, NS, "pod1"))
    assert "This Pod does not use Dynamic Resource Allocation" in text
    assert f"no DeviceClass maps the extended resources it asks for ({RESOURCE})" in text
