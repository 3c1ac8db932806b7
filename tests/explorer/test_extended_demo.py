"""The demo cluster's Pods that ask for GPUs as extended resources (KEP-5004), in the shapes of
the NVIDIA driver's extended-resources demo: ``gpu-full-pod`` runs on one GPU through the claim
the scheduler created when it bound it; ``cuda-train-4gpu`` asks for four GPUs of the
``gpu.nvidia.com`` class (it maps ``nvidia.com/gpu``) where no node has more than three free."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

NS = "extended-resources"
CLAIM = "gpu-full-pod-extended-resources-x7k9m"


def api(client: Any, name: str, *args: object) -> dict[str, Any]:
    response = client.get(reverse(name, args=args))
    assert response.status_code == 200, response.content[:500]
    return response.json()


def page(client: Any, name: str, *args: object, **params: str) -> str:
    response = client.get(reverse(name, args=args), params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode().replace("<wbr>", "")


@pytest.mark.parametrize("which", [0, 1], ids=["first", "later"])
def test_the_pod_asking_for_four_gpus_waits_for_devices_the_funnel_explains(
    api_client: Any, demo: Any, which: int
) -> None:
    data = api(api_client, "api-pod-diagnosis", demo[which].pk, NS, "cuda-train-4gpu")

    assert (data["stage"], data["reason"]) == ("claim-unallocated", "insufficient-count")
    assert "the extended resources of Pod extended-resources/cuda-train-4gpu" in data["summary"]
    assert "(nvidia.com/gpu: 4)" in data["summary"]
    assert "no node the Pod may use has 4 of them (at most 3, on a100-node-01)" in data["summary"]
    assert data["evidence"][0]["detail"] == "nvidia.com/gpu: 4"
    funnel = [e["detail"] for e in data["evidence"] if "request " in e["field"]]
    assert funnel and funnel[0].endswith("count 3")
    assert data["chain"]["extended_resources"] == [
        {
            "container": "cuda-container",
            "init": False,
            "resource": "nvidia.com/gpu",
            "quantity": 4,
            "device_class": "gpu.nvidia.com",
            "served_by": "dra",
            "request": None,
        }
    ]
    (ref,) = data["chain"]["claims"]
    assert (ref["source"], ref["status"]) == ("extended-resource", "implicit")


def test_the_running_pod_has_the_claim_the_scheduler_created_for_it(
    api_client: Any, demo: Any
) -> None:
    data = api(api_client, "api-pod-diagnosis", demo[0].pk, NS, "gpu-full-pod")

    assert (data["stage"], data["reason"]) == ("healthy", "running")
    (ref,) = data["chain"]["claims"]
    assert (ref["source"], ref["status"], ref["claim_name"]) == ("extended-resource", "ok", CLAIM)
    claim = ref["claim"]["claim"]
    assert (claim["name"], claim["owner_pod"], claim["state"]) == (
        CLAIM,
        "gpu-full-pod",
        "reserved",
    )
    assert ref["containers"] == [
        {"container": "cuda-container", "request": "container-0-request-0"}
    ]
    (resource,) = data["chain"]["extended_resources"]
    assert (resource["served_by"], resource["request"]) == ("dra", "container-0-request-0")
    # Its claim is a claim like any other: in use by the Pod, on the H100 node's gpu-6.
    claim_data = api(api_client, "api-claim-diagnosis", demo[0].pk, NS, CLAIM)
    assert (claim_data["stage"], claim_data["reason"]) == ("healthy", "running")
    assert "gpu-full-pod is running on h100-node-01" in claim_data["summary"]
    devices = api(api_client, "api-devices", demo[0].pk)
    rows = devices["results"] if isinstance(devices, dict) else devices
    where = ("gpu.nvidia.com", "h100-node-01", "gpu-6")
    (gpu6,) = [r for r in rows if (r["driver"], r["node"], r["device"]) == where]
    assert gpu6["allocated_to"] == f"{NS}/{CLAIM}"


def test_the_pods_list_and_pages_show_them(client_logged_in: Any, demo: Any) -> None:
    html = page(client_logged_in, "pod-list", demo[0].pk, namespace=NS)
    assert "gpu-full-pod" in html and "cuda-train-4gpu" in html

    pending = page(client_logged_in, "pod-detail", demo[0].pk, NS, "cuda-train-4gpu")
    assert "insufficient-count" in pending
    rows = re.sub(r"\s+", " ", pending.split('id="extended-resources"')[1].split("</table>")[0])
    assert (
        "<td><strong>cuda-container</strong></td> <td><code>nvidia.com/gpu</code></td> <td>4</td>"
        in rows
    )
    assert "the claim the scheduler creates at binding" in pending
    # The claim it waits for exists only in the scheduler's memory: no page, so no link to one.
    assert "/claims/extended-resources/%3Cextended-resources%3E/" not in pending

    running = page(client_logged_in, "pod-detail", demo[0].pk, NS, "gpu-full-pod")
    assert f"extended resources → claim <code>{CLAIM}</code>" in running
    assert f'href="/snapshots/{demo[0].pk}/claims/{NS}/{CLAIM}/"' in running
    assert "(request container-0-request-0)" in running
