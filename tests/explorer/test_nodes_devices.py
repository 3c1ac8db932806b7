"""The node page and the device page (issue 25), their APIs, and the links to them from every
node and device name: the Pod and claim chains, the lists, the funnel, search, the PodGroup
page and the sentences dradash writes.

The cluster is the demo's (dradash.demo.cluster): its two snapshots, 30 minutes apart. Device
gpu.nvidia.com/h100-node-01/gpu-5 is free in the first and allocated to batch's
etl-worker-7-gpu-k3f7w in the second; a MIG partition on h100-mig-node-01 carries a driver
taint.
"""

from __future__ import annotations

import html as htmllib
import re

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

NVIDIA = "gpu.nvidia.com"
H100 = "h100-node-01"
GPU5 = (NVIDIA, H100, "gpu-5")
HOLDER = "batch/etl-worker-7-gpu-k3f7w"
MIG = (NVIDIA, "h100-mig-node-01", "gpu-0-mig-1g10gb-19-6")


def get(client: Client, name: str, *args: object, status: int = 200) -> str:
    response = client.get(reverse(name, args=args))
    assert response.status_code == status, response.content[:500]
    return htmllib.unescape(response.content.decode().replace("<wbr>", ""))


def words(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def section(html: str, start: str, end: str = "</section>") -> str:
    return html.split(start, 1)[1].split(end, 1)[0]


# --- the node page and API -------------------------------------------------------------------


def test_the_node_page_shows_its_drivers_devices_pods_and_events(
    client_logged_in, api_client, demo
) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "node-detail", later, H100)
    text = words(html)
    assert f"Node {H100}" in text
    assert "Ready" in text
    drivers = section(html, 'class="table compact node-drivers"', "</table>")
    assert NVIDIA in drivers and "its own" in drivers
    devices = section(html, 'class="table compact node-devices"', "</table>")
    gpu5 = reverse("device-detail", args=[later, *GPU5])
    assert f'href="{gpu5}"' in devices
    assert "etl-worker-7-gpu-k3f7w" in devices
    pods = section(html, 'class="table compact node-pods"', "</table>")
    on_it = api_client.get(f"/api/v1/snapshots/{later}/nodes/{H100}").json()["pods"]
    assert on_it
    for p in on_it:
        assert reverse("pod-detail", args=[later, p["namespace"], p["name"]]) in pods
        assert p["stage"] in pods


def test_the_node_api_answers_with_its_devices_and_pods(api_client, demo) -> None:
    later = demo[-1].pk
    data = api_client.get(f"/api/v1/snapshots/{later}/nodes/{H100}").json()
    assert data["name"] == H100
    assert data["labels"]["kubernetes.io/hostname"] == H100
    assert data["ready"]["status"] == "True"
    assert [d["driver"] for d in data["drivers"]] == [NVIDIA]
    assert data["drivers"][0]["local"] is True
    gpu5 = next(d for d in data["devices"] if d["device"] == "gpu-5")
    assert gpu5["status"] == "allocated" and gpu5["claims"] == [HOLDER]
    assert all({"namespace", "name", "stage", "reason", "phase"} <= set(p) for p in data["pods"])
    assert isinstance(data["events"], list)


def test_an_unknown_node_is_a_404_that_says_so(client_logged_in, api_client, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "node-detail", later, "no-such-node", status=404)
    assert f"Node no-such-node is not in snapshot #{later}" in html
    assert api_client.get(f"/api/v1/snapshots/{later}/nodes/no-such-node").status_code == 404


# --- the device page and API -----------------------------------------------------------------


def test_the_device_page_shows_every_attribute_with_its_type(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "device-detail", later, *GPU5)
    table = section(html, 'class="table compact device-attributes"', "</table>")
    rows = re.findall(r"<tr><td><code>([^<]+)</code></td><td[^>]*>([^<]+)</td>", table)
    assert len(rows) >= 8, rows
    assert ("productName", "string") in rows
    holders = section(html, "device-holders", "</dd>")
    claim = reverse("claim-detail", args=[later, *HOLDER.split("/")])
    assert f'href="{claim}"' in holders and "request" in holders
    assert "Pods:" in holders
    node = reverse("node-detail", args=[later, H100])
    assert f'href="{node}"' in section(html, "device-node", "</dd>")


def test_the_device_api_has_all_attributes_capacity_holders_and_history(api_client, demo) -> None:
    earlier, later = (s.pk for s in demo)
    url = "/api/v1/snapshots/{}/devices/" + "/".join(GPU5)
    data = api_client.get(url.format(later)).json()
    assert data["device"] == "gpu-5" and data["node"] == H100
    assert data["claims"] == [HOLDER] and data["allocations"][0]["claim"] == HOLDER
    assert "productName" in data["attributes"]
    assert data["capacity"]
    assert [(h["snapshot"], h["status"], h["claims"]) for h in data["history"]] == [
        (later, "allocated", [HOLDER]),
        (earlier, "free", []),
    ]
    # the earlier snapshot's page answers the same history
    assert api_client.get(url.format(earlier)).json()["history"] == data["history"]


def test_the_device_page_shows_its_history_across_the_clusters_snapshots(
    client_logged_in, demo
) -> None:
    earlier, later = (s.pk for s in demo)
    html = get(client_logged_in, "device-detail", later, *GPU5)
    history = section(html, 'class="table compact device-history"', "</table>")
    assert history.index(f"#{later}") < history.index(f"#{earlier}")
    assert f'href="{reverse("device-detail", args=[earlier, *GPU5])}"' in history
    assert HOLDER in history and "free" in history


def test_a_tainted_device_says_where_its_taint_comes_from(client_logged_in, api_client, demo):
    later = demo[-1].pk
    html = get(client_logged_in, "device-detail", later, *MIG)
    taints = words(section(html, 'class="table compact device-taints"', "</table>"))
    assert "gpu.nvidia.com/xid=43" in taints and "NoSchedule" in taints
    assert "2026-11-28T10:15:00Z" in taints and "its ResourceSlice" in taints
    data = api_client.get(f"/api/v1/snapshots/{later}/devices/{'/'.join(MIG)}").json()
    assert data["taint_sources"] == [{"taint": data["taints"][0], "rule": None}]


def test_an_unknown_device_is_a_404(client_logged_in, api_client, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "device-detail", later, NVIDIA, H100, "gpu-99", status=404)
    assert f"Device {NVIDIA}/{H100}/gpu-99 is not in snapshot #{later}" in html
    url = f"/api/v1/snapshots/{later}/devices/{NVIDIA}/{H100}/gpu-99"
    assert api_client.get(url).status_code == 404
