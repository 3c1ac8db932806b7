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
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from dradash.sharing.pages import page_title
from dradash.sharing.services import share_link_create, shared_view_allowed
from tests import gang_cluster
from tests.sharing.conftest import page_urls, share_url
from tests.stored import import_analysed

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


def test_the_node_api_lists_the_device_taint_rules_on_its_devices(api_client, demo) -> None:
    """The MIG node's GPU 1 threw XID 79: a NoExecute DeviceTaintRule per partition, one Pod
    evicted, one tolerating it for an hour, as its page shows."""
    later = demo[-1].pk
    data = api_client.get(f"/api/v1/snapshots/{later}/nodes/h100-mig-node-01").json()
    rules = {r["name"]: r for r in data["rules"]}
    assert set(rules) == {"xid-79-gpu-1-mig-3g40gb-9-0", "xid-79-gpu-1-mig-3g40gb-9-4"}
    ft = rules["xid-79-gpu-1-mig-3g40gb-9-0"]
    assert ft["effect"] == "NoExecute"
    assert [d["device"] for d in ft["devices"]] == ["gpu-1-mig-3g40gb-9-0"]
    assert ft["conditions"][0]["reason"] == "PodsPendingEviction"
    assert [(e["pod"], e["state"]) for e in ft["evictions"]] == [
        ("finetune/llama-ft-x8k2q", "tolerated")
    ]
    eval_ = rules["xid-79-gpu-1-mig-3g40gb-9-4"]["evictions"]
    assert [e["state"] for e in eval_] == ["evicted"]
    first = demo[0].pk
    assert api_client.get(f"/api/v1/snapshots/{first}/nodes/h100-mig-node-01").json()["rules"] == []


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
    assert "2026-11-28 10:15:00 UTC" in taints and "its ResourceSlice" in taints
    data = api_client.get(f"/api/v1/snapshots/{later}/devices/{'/'.join(MIG)}").json()
    (source,) = data["taint_sources"]
    assert (source["key"], source["effect"], source["source_kind"]) == (
        data["taints"][0]["key"],
        "NoSchedule",
        "ResourceSlice",
    )


def test_an_unknown_device_is_a_404(client_logged_in, api_client, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "device-detail", later, NVIDIA, H100, "gpu-99", status=404)
    assert f"Device {NVIDIA}/{H100}/gpu-99 is not in snapshot #{later}" in html
    url = f"/api/v1/snapshots/{later}/devices/{NVIDIA}/{H100}/gpu-99"
    assert api_client.get(url).status_code == 404


def test_the_node_and_device_pages_render_as_fragments_for_htmx(client_logged_in, demo) -> None:
    later = demo[-1].pk
    for url in (
        reverse("node-detail", args=[later, H100]),
        reverse("device-detail", args=[later, *GPU5]),
    ):
        response = client_logged_in.get(url, headers={"HX-Request": "true"})
        assert response.status_code == 200
        assert "<html" not in response.content.decode()


def test_the_node_and_device_pages_need_a_login(client, api_client, demo) -> None:
    later = demo[-1].pk
    for url in (
        reverse("node-detail", args=[later, H100]),
        reverse("device-detail", args=[later, *GPU5]),
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    for url in (
        f"/api/v1/snapshots/{later}/nodes/{H100}",
        f"/api/v1/snapshots/{later}/devices/{'/'.join(GPU5)}",
    ):
        assert client.get(url).status_code in (401, 403)


RULED = (NVIDIA, "h100-mig-node-01", "gpu-1-mig-3g40gb-9-0")  # llama-ft waits to be evicted
EVICTED = (NVIDIA, "h100-mig-node-01", "gpu-1-mig-3g40gb-9-4")  # llama-eval was evicted


def test_a_device_taint_rule_shows_its_effect_condition_and_the_pod_it_evicts(
    client_logged_in, demo
) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "device-detail", later, *RULED)
    rule = section(html, 'class="taint-rule"', "</section>")
    assert "xid-79-gpu-1-mig-3g40gb-9-0" in rule and "NoExecute" in rule
    conditions = words(section(rule, 'class="table compact rule-conditions"', "</table>"))
    assert "EvictionInProgress True PodsPendingEviction" in conditions
    assert "1 pod needs to be evicted in 1 namespace." in conditions
    evictions = section(rule, 'class="table compact rule-evictions"', "</table>")
    pod = reverse("pod-detail", args=[later, "finetune", "llama-ft-x8k2q"])
    assert f'href="{pod}"' in evictions and "evict" in words(evictions)
    evicted = get(client_logged_in, "device-detail", later, *EVICTED)
    assert "Completed" in section(evicted, 'class="table compact rule-conditions"', "</table>")
    assert "evicted" in words(section(evicted, 'class="table compact rule-evictions"', "</table>"))


def test_the_device_api_carries_its_rules(api_client, demo) -> None:
    later = demo[-1].pk
    data = api_client.get(f"/api/v1/snapshots/{later}/devices/{'/'.join(RULED)}").json()
    (rule,) = data["rules"]
    assert (rule["name"], rule["effect"]) == ("xid-79-gpu-1-mig-3g40gb-9-0", "NoExecute")
    assert rule["conditions"][0]["type"] == "EvictionInProgress"
    # the allocation result carries its request's toleration: for an hour, time to checkpoint
    assert [e["pod"] for e in rule["evictions"]] == ["finetune/llama-ft-x8k2q"]
    assert rule["evictions"][0]["state"] == "tolerated"
    untainted = api_client.get(f"/api/v1/snapshots/{later}/devices/{'/'.join(GPU5)}").json()
    assert untainted["rules"] == []


def test_the_node_page_lists_the_rules_tainting_its_devices(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "node-detail", later, RULED[1])
    rules = section(html, 'class="card node-rules"')
    for device in (RULED, EVICTED):
        assert f"xid-79-{device[2]}" in rules
        assert f'href="{reverse("device-detail", args=[later, *device])}"' in rules
    assert "PodsPendingEviction" in rules and "Completed" in rules
    for pod in ("llama-ft-x8k2q", "llama-eval-p3m7d"):
        assert f'href="{reverse("pod-detail", args=[later, "finetune", pod])}"' in rules
    assert "node-rules" not in get(client_logged_in, "node-detail", later, H100)


# --- links to them ---------------------------------------------------------------------------


def test_a_pods_page_links_its_node_and_its_claims_devices(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "pod-detail", later, "batch", "etl-worker-7")
    node = reverse("node-detail", args=[later, H100])
    assert f'<a href="{node}" class="node-link">{H100}</a>' in section(html, "pod-node", "</dd>")
    assert f'href="{reverse("device-detail", args=[later, *GPU5])}"' in html


def test_a_claims_page_links_its_allocated_device_and_node(client_logged_in, demo) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "claim-detail", later, *HOLDER.split("/"))
    head = section(html, 'class="device-head"', "</div>")
    assert f'href="{reverse("device-detail", args=[later, *GPU5])}"' in head
    assert f'href="{reverse("node-detail", args=[later, H100])}"' in html


def test_the_lists_link_nodes_and_devices(client_logged_in, demo) -> None:
    later = demo[-1].pk
    node = f'href="{reverse("node-detail", args=[later, H100])}"'
    assert node in get(client_logged_in, "pod-list", later)
    assert node in get(client_logged_in, "claim-list", later)
    devices = client_logged_in.get(reverse("device-list", args=[later]), {"node": H100})
    html = htmllib.unescape(devices.content.decode())
    assert node in html
    assert f'href="{reverse("device-detail", args=[later, *GPU5])}"' in html


def test_search_links_the_nodes_it_finds(client_logged_in, demo) -> None:
    later = demo[-1].pk
    response = client_logged_in.get(reverse("snapshot-search", args=[later]), {"q": "h100"})
    assert f'href="{reverse("node-detail", args=[later, H100])}"' in response.content.decode()


def test_a_verdict_naming_a_node_the_snapshot_lacks_links_to_a_404_that_says_so(
    client_logged_in, demo
) -> None:
    later = demo[-1].pk
    html = get(client_logged_in, "node-detail", later, "gpu-example-worker-9", status=404)
    assert "Node gpu-example-worker-9 is not in snapshot" in words(html)


# --- share links -----------------------------------------------------------------------------


def test_a_share_link_opens_the_node_and_device_pages_of_its_snapshot_only(
    client, demo, user
) -> None:
    earlier, later = demo
    _, token = share_link_create(snapshot=later, user=user, expires_in=timedelta(days=1))
    for path in (
        reverse("node-detail", args=[later.pk, H100]),
        reverse("device-detail", args=[later.pk, *GPU5]),
    ):
        response = client.get(share_url(token, path))
        assert response.status_code == 200, path
        for _, _, url in page_urls(response.content.decode()):
            if url.startswith("/static/") or url.startswith("?"):
                continue
            rest = "/" + url.split("?")[0].removeprefix(f"/share/{token}/")
            assert rest == "/" or shared_view_allowed(
                path_info=rest, method="GET", snapshot_id=later.pk
            ), (path, url)
    other = reverse("device-detail", args=[earlier.pk, *GPU5])
    assert client.get(share_url(token, other)).status_code == 404
    assert page_title(reverse("node-detail", args=[later.pk, H100])) == f"node {H100}"


# --- a cluster of its own: hostile strings, a pool with slashes --------------------------------

HOSTILE = '<script>alert("x")</script>'


def _cluster() -> list[dict[str, Any]]:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n-1", "uid": "u-n1", "labels": {"kubernetes.io/hostname": "n-1"}},
        "spec": {"taints": [{"key": "k", "value": HOSTILE, "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True", "message": HOSTILE}]},
    }
    resource_slice = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "n-1-gpu.example.com", "uid": "u-s1"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "n-1",
            "pool": {"name": "rack-1/n-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": "gpu-0",
                    "attributes": {
                        "model": {"string": HOSTILE},
                        "index": {"int": 0},
                        "healthy": {"bool": True},
                        "driverVersion": {"version": "1.2.3"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
            ],
        },
    }
    return [node, resource_slice]


@pytest.fixture
def hostile(db: None) -> Any:
    return import_analysed(files=[("c.json", gang_cluster.bundle(_cluster()))])


def test_a_pool_with_slashes_has_a_device_page_and_api(client_logged_in, api_client, hostile):
    url = reverse("device-detail", args=[hostile.pk, "gpu.example.com", "rack-1/n-1", "gpu-0"])
    assert url.endswith("/devices/gpu.example.com/rack-1/n-1/gpu-0/")
    html = get(
        client_logged_in, "device-detail", hostile.pk, "gpu.example.com", "rack-1/n-1", "gpu-0"
    )
    rows = re.findall(r"<tr><td><code>([^<]+)</code></td><td[^>]*>([^<]+)</td>", html)
    assert {("model", "string"), ("index", "int"), ("healthy", "bool")} <= set(rows)
    assert ("driverVersion", "version") in rows
    data = api_client.get(
        f"/api/v1/snapshots/{hostile.pk}/devices/gpu.example.com/rack-1/n-1/gpu-0"
    ).json()
    assert data["pool"] == "rack-1/n-1" and data["node"] == "n-1"
    assert data["attributes"]["model"] == {"string": HOSTILE}
    node = api_client.get(f"/api/v1/snapshots/{hostile.pk}/nodes/n-1").json()
    assert [d["device"] for d in node["devices"]] == ["gpu-0"]
    assert node["drivers"][0]["slices"][0]["pool"] == "rack-1/n-1"


def test_cluster_strings_on_the_node_and_device_pages_are_escaped(client_logged_in, hostile):
    for args in (
        ("node-detail", "n-1"),
        ("device-detail", "gpu.example.com", "rack-1/n-1", "gpu-0"),
    ):
        response = client_logged_in.get(reverse(args[0], args=[hostile.pk, *args[1:]]))
        assert response.status_code == 200
        body = response.content.decode()
        assert "<script>alert" not in body
        assert "&lt;script&gt;alert" in body
