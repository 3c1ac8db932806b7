"""The device inventory page and API on a snapshot with stale, incomplete, invalid and tainted
pools, shared counters and hostile names; and the SVG charts it draws."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from dradash.sharing.services import share_link_create
from dradash.ui.charts import BarRow, bar_chart, stacked_bar
from tests.dra.builders import (
    claim,
    consumer,
    device,
    device_class,
    fixture_objects,
    node,
    pod,
    resource_slice,
    result,
    taint_rule,
)
from tests.stored import analysed, import_analysed

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
SVG = "<svg onload=alert(1)>"  # object names may not contain "/"


def example_gpu(index: int, **fields: Any) -> dict[str, Any]:
    """A device as dra-example-driver publishes it (README resourceslice-list-8gpu)."""
    return device(
        f"gpu-{index}",
        attributes={
            "driverVersion": {"version": "1.0.0"},
            "index": {"int": index},
            "model": {"string": "LATEST-GPU-MODEL"},
        },
        **fields,
    )


def troubled_cluster() -> list[dict[str, Any]]:
    """12 devices the allocator would consider (Kubernetes 1.36 rules):

    worker-1: pool generation 2 (gpu-0, gpu-1, free) beside a stale generation-1 slice of 4
    worker-2: incomplete pool (1 of 2 slices): gpu-0, gpu-1 skipped
    worker-3: invalid pool (gpu-1 published twice): gpu-0, gpu-1 skipped
    worker-4: gpu-0 allocated to default/trainer (Pod trainer-0), gpu-1 tainted in the slice,
              gpu-2 tainted by a DeviceTaintRule, gpu-3 free
    dra.example.com pool "pool" (the docs' counter-set example, on worker-1): device-1
              allocated to default/part (6Gi of the 8Gi counter), device-2 free
    """
    trainer = pod(
        "trainer-0",
        node_name="worker-4",
        phase="Running",
        claims=[{"name": "gpu", "resourceClaimName": "trainer"}],
    )
    return [
        *(node(f"worker-{i}") for i in range(1, 5)),
        device_class("gpu.example.com", "device.driver == 'gpu.example.com'"),
        device_class("dra.example.com", "device.driver == 'dra.example.com'"),
        resource_slice(
            "worker-1-gpu.example.com-new",
            pool="worker-1",
            node_name="worker-1",
            generation=2,
            devices=[example_gpu(0), example_gpu(1)],
        ),
        resource_slice(
            "worker-1-gpu.example.com-old",
            pool="worker-1",
            node_name="worker-1",
            generation=1,
            devices=[example_gpu(i) for i in range(4)],
        ),
        resource_slice(
            "worker-2-gpu.example.com-a",
            pool="worker-2",
            node_name="worker-2",
            count=2,
            devices=[example_gpu(0), example_gpu(1)],
        ),
        resource_slice(
            "worker-3-gpu.example.com-a",
            pool="worker-3",
            node_name="worker-3",
            count=2,
            devices=[example_gpu(0), example_gpu(1)],
        ),
        resource_slice(
            "worker-3-gpu.example.com-b",
            pool="worker-3",
            node_name="worker-3",
            count=2,
            devices=[example_gpu(1)],
        ),
        resource_slice(
            "worker-4-gpu.example.com",
            pool="worker-4",
            node_name="worker-4",
            devices=[
                example_gpu(0),
                example_gpu(1, taints=[{"key": "gpu.example.com/xid", "effect": "NoExecute"}]),
                example_gpu(2),
                example_gpu(3),
            ],
        ),
        taint_rule(
            "gpu-2-unhealthy",
            {"driver": "gpu.example.com", "pool": "worker-4", "device": "gpu-2"},
            {"key": "gpu.example.com/unhealthy", "value": "true", "effect": "NoSchedule"},
        ),
        *fixture_objects("k8s-website__docs__dra-features__resourceslices-countersets.yaml"),
        trainer,
        claim(
            "trainer",
            results=[result("gpu", "gpu-0", pool="worker-4")],
            reserved_for=[consumer(trainer)],
        ),
        claim(
            "part",
            requests=[{"name": "gpu", "exactly": {"deviceClassName": "dra.example.com"}}],
            results=[result("gpu", "device-1", driver="dra.example.com", pool="pool")],
        ),
    ]


def stored_unvalidated(objects: list[dict[str, Any]]) -> Any:
    from django.utils import timezone

    from dradash.dra.kinds import kind_of, object_key
    from dradash.snapshots.services import cluster_for_name, snapshot_store

    keyed = {object_key(kind_of(o), o): o for o in objects}
    return analysed(
        snapshot_store(
            cluster=cluster_for_name("troubled"),
            objects=keyed,
            source="import",
            captured_at=timezone.now(),
        )
    )


def snapshot_of(objects: list[dict[str, Any]], version: str = "") -> Any:
    if version:
        objects = [
            {
                "apiVersion": "dradash.io/v1",
                "kind": "SnapshotInfo",
                "metadata": {"name": "info"},
                "spec": {"serverVersion": version},
            },
            *objects,
        ]
    data = json.dumps(objects).encode()
    return import_analysed(files=[("cluster.json", data)], cluster_name="troubled")


@pytest.fixture
def troubled() -> Any:
    return snapshot_of(troubled_cluster())


def get(client: Client, snapshot: Any, **params: str) -> str:
    response = client.get(reverse("device-list", args=[snapshot.pk]), params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode().replace("<wbr>", "")  # where long names may wrap


def filtered(snapshot: Any, **params: str) -> str:
    """A link of the page to the list filtered by ``params`` (as the template writes it)."""
    query = "&amp;".join(f"{k}={v}" for k, v in params.items())
    return f'href="{reverse("device-list", args=[snapshot.pk])}?{query}"'


def results(html: str) -> str:
    return html[html.index('<section id="results"') :]


def listed(html: str) -> list[str]:
    """The device names in the results table (each linked to its page), in order."""
    return re.findall(r"<tr>\s*<td><a [^>]+><code>([^<]+)</code>", results(html))


# --- counts ---------------------------------------------------------------------------------------


def test_inventory_counts_devices_as_the_allocator_would_use_them(
    client_logged_in, troubled
) -> None:
    html = get(client_logged_in, troubled)
    assert "12 devices in current pools" in html
    assert ">2 allocated</a>" in html and ">4 free</a>" in html and ">2 tainted</a>" in html
    assert ">4 unusable</a> (in pools the allocator skips: not free for any claim)" in html
    assert "The snapshot does not say its Kubernetes version: rules of 1.37" in html
    # Per class: 10 example GPUs: 1 allocated, 3 free, 2 tainted, 4 in skipped pools.
    link = filtered
    for params, count in (
        ({"device_class": "gpu.example.com"}, 10),
        ({"device_class": "gpu.example.com", "state": "allocated"}, 1),
        ({"device_class": "gpu.example.com", "state": "free"}, 3),
        ({"device_class": "gpu.example.com", "state": "tainted"}, 2),
        ({"device_class": "gpu.example.com", "state": "unusable"}, 4),
        ({"device_class": "dra.example.com", "state": "free"}, 1),
    ):
        assert f"{link(troubled, **params)}>{count}</a>" in html, params
    # The list behind each link has exactly that many devices.
    assert "4 of 12 devices" in get(
        client_logged_in, troubled, device_class="gpu.example.com", state="unusable"
    )


def test_pools_show_stale_slices_incomplete_and_invalid_pools_and_counters(
    client_logged_in, troubled
) -> None:
    html = get(client_logged_in, troubled)
    pools = html[html.index("<h2>Pools</h2>") : html.index('<form class="filters"')]
    # Pools that need attention come first.
    assert pools.index("worker-1") < pools.index("worker-4")
    assert "+ 1 stale: <code>worker-1-gpu.example.com-old</code> (generation 1, 4 devices)" in pools
    assert "1 of 2" in pools and "skipped by the allocator" in pools
    assert "duplicate device name: <code>gpu-1</code>" in pools
    assert "gpu-1-counters" in pools
    assert 'pool</a><br><span class="small muted">worker-1</span>' in pools  # not named after it
    assert "<td>memory</td><td>6Gi</td><td>8Gi</td>" in pools
    assert "memory: 6Gi of 8Gi consumed" in pools  # the counter's bar


def test_stale_slices_hold_no_listed_devices(client_logged_in, troubled) -> None:
    html = get(client_logged_in, troubled, pool="worker-1", driver="gpu.example.com")
    assert "2 of 12 devices" in html
    assert listed(html) == ["gpu-0", "gpu-1"]
    # gpu-3 exists only in the stale slice of worker-1: the attribute finds worker-4's alone.
    one = get(client_logged_in, troubled, attribute="index=3")
    assert "1 of 12 devices" in one and "Node <a" in one and "worker-4</a>" in one


def test_a_1_34_snapshot_still_uses_incomplete_pools(client_logged_in) -> None:
    snapshot = snapshot_of(troubled_cluster(), version="v1.34.2")
    html = get(client_logged_in, snapshot)
    assert "Rules of Kubernetes 1.34: incomplete pools are still used" in html
    assert ">2 unusable</a> (in pools the allocator skips" in html  # only the invalid pool
    assert "still used by Kubernetes 1.34" in html
    assert listed(get(client_logged_in, snapshot, state="free", pool="worker-2")) == [
        "gpu-0",
        "gpu-1",
    ]


# --- filters --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"device_class": "dra.example.com"}, ["device-1", "device-2"]),
        ({"state": "unusable"}, ["gpu-0", "gpu-1", "gpu-0", "gpu-1"]),
        ({"state": "tainted"}, ["gpu-1", "gpu-2"]),
        ({"state": "free"}, ["device-2", "gpu-0", "gpu-1", "gpu-3"]),
        ({"state": "allocated"}, ["device-1", "gpu-0"]),
        ({"node": "worker-4", "state": "free"}, ["gpu-3"]),
        ({"attribute": "gpu.example.com/index=2"}, ["gpu-2"]),
        ({"attribute": "model=LATEST-GPU-MODEL", "node": "worker-3"}, ["gpu-0", "gpu-1"]),
        ({"attribute": "dra.example.com/model"}, []),
        ({"device_class": "no-such-class"}, []),
        ({"q": "trainer"}, ["gpu-0"]),
    ],
)
def test_filters(client_logged_in, troubled, params, expected) -> None:
    html = get(client_logged_in, troubled, **params)
    assert listed(html) == expected
    assert f"{len(expected)} of 12 devices" in html
    if not expected:
        assert "No device matches these filters." in html


@pytest.mark.parametrize(
    "params", [{"attribute": "=LATEST"}, {"attribute": "a/b/c"}, {"state": "bogus"}]
)
def test_invalid_filters_are_refused(client_logged_in, troubled, params) -> None:
    response = client_logged_in.get(reverse("device-list", args=[troubled.pk]), params)
    assert response.status_code == 400


def test_filters_as_htmx_partial_and_without_javascript(client_logged_in, troubled) -> None:
    url = reverse("device-list", args=[troubled.pk])
    params = {"device_class": "gpu.example.com", "attribute": "index=1"}
    partial = client_logged_in.get(url, params, headers={"HX-Request": "true"})
    body = partial.content.decode()
    assert partial.status_code == 200 and "<html" not in body
    assert body.strip().startswith('<section id="results"')
    assert "4 of 12 devices" in body  # gpu-1 of workers 1 to 4
    assert "HX-Request" in partial["Vary"]
    page = client_logged_in.get(url, params).content.decode()  # a plain GET: the whole page
    assert "<html" in page and "4 of 12 devices" in page
    assert '<option value="gpu.example.com" selected>' in page
    assert 'name="attribute" value="index=1"' in page
    assert 'hx-get="' + url + '"' in page and 'action="' + url + '"' in page


def test_pages_keep_the_filters_and_restate_the_groups(client_logged_in, troubled, monkeypatch):
    monkeypatch.setattr("dradash.explorer.views.DEVICES_PAGE_SIZE", 3)
    second = get(client_logged_in, troubled, driver="gpu.example.com", page="2")
    assert "page 2 of 4" in second
    assert "driver=gpu.example.com&amp;page=3" in second
    rows = results(second)
    # The page starts inside worker-2's pool: its driver, pool and node come first again.
    assert rows.index('class="group group-driver"') < rows.index('class="group group-pool"')
    assert "worker-2</a>" in rows


# --- the device rows ------------------------------------------------------------------------------


def test_devices_are_grouped_by_driver_pool_and_node(client_logged_in, troubled) -> None:
    rows = results(get(client_logged_in, troubled))
    drivers = re.findall(r'group-driver"><th colspan="6">Driver <code>([^<]+)</code>', rows)
    assert drivers == ["dra.example.com", "gpu.example.com"]
    pools = re.findall(r'group-pool"><th colspan="6">Pool <a [^>]+>([^<]+)</a>', rows)
    assert pools == ["pool", "worker-1", "worker-2", "worker-3", "worker-4"]
    assert "incomplete: skipped by the allocator" in rows
    assert "invalid: skipped by the allocator" in rows
    assert "1 stale slice not counted" in rows
    assert "duplicate: gpu-1" in rows


def test_a_device_row_names_its_claim_pods_taints_classes_and_attributes(
    client_logged_in, troubled
) -> None:
    html = results(get(client_logged_in, troubled, node="worker-4"))
    assert reverse("claim-detail", args=[troubled.pk, "default", "trainer"]) in html
    assert reverse("pod-detail", args=[troubled.pk, "default", "trainer-0"]) in html
    assert reverse("class-detail", args=[troubled.pk, "gpu.example.com"]) in html
    assert "<code>gpu.example.com/xid:NoExecute</code>" in html
    assert "<code>gpu.example.com/unhealthy=true:NoSchedule</code>" in html  # the rule's
    assert "<dt>model</dt><dd>LATEST-GPU-MODEL</dd>" in html
    assert "<dt>memory <span" in html and "<dd>80Gi</dd>" in html
    counters = results(get(client_logged_in, troubled, pool="pool"))
    assert "<dt>gpu-1-counters/memory <span" in counters and "<dd>6Gi</dd>" in counters


def test_the_node_chart_shows_the_busiest_and_the_most_free_nodes(
    client_logged_in, monkeypatch
) -> None:
    monkeypatch.setattr("dradash.dra.analysis.NODES_SHOWN", 1)  # when the analysis runs
    troubled = snapshot_of(troubled_cluster())
    html = get(client_logged_in, troubled)
    charts = re.findall(r'<svg class="chart bars".*?</svg>', html, re.S)
    assert len(charts) == 2
    busiest, most_free = charts
    # worker-1 and worker-4 both have 1 of 4 allocated; then worker-4 has the most free.
    # Each bar links to its node's page.
    worker = {n: reverse("node-detail", args=[troubled.pk, n]) for n in ("worker-1", "worker-4")}
    assert f'href="{worker["worker-1"]}"' in busiest and "worker-4" not in busiest
    assert f'href="{worker["worker-4"]}"' in most_free and "worker-1" not in most_free
    assert "2 more nodes not shown" in html


def test_the_share_link_opens_the_filtered_inventory(client_logged_in, troubled, user) -> None:
    html = get(client_logged_in, troubled, device_class="gpu.example.com")
    assert "Share this view" in html
    _, token = share_link_create(snapshot=troubled, user=user, expires_in=timedelta(days=1))
    shared = Client().get(f"/share/{token}/snapshots/{troubled.pk}/devices/", {"state": "tainted"})
    body = shared.content.decode()
    assert shared.status_code == 200
    assert "2 of 12 devices" in body and "Shared read-only view" in body


# --- the API --------------------------------------------------------------------------------------


def test_devices_api_has_the_new_fields_and_filters(api_client, troubled) -> None:
    url = reverse("api-devices", args=[troubled.pk])
    devices = api_client.get(url).json()
    assert len(devices) == 12
    held = next(d for d in devices if d["pool"] == "worker-4" and d["device"] == "gpu-0")
    assert held["allocated_to"] == "default/trainer" and held["claims"] == ["default/trainer"]
    assert held["pods"] == ["default/trainer-0"]
    assert held["status"] == "allocated" and held["classes"] == ["gpu.example.com"]
    assert held["attributes"]["model"] == {"string": "LATEST-GPU-MODEL"}
    assert held["capacity"]["memory"] == {"value": "80Gi"}
    part = next(d for d in devices if d["device"] == "device-1")
    assert part["consumes_counters"][0]["counterSet"] == "gpu-1-counters"
    assert part["consumed_capacity"] == {}  # only devices allowing multiple allocations
    skipped = api_client.get(url, {"state": "unusable"}).json()
    assert {(d["pool"], d["status"]) for d in skipped} == {
        ("worker-2", "unusable"),
        ("worker-3", "unusable"),
    }
    by_attribute = api_client.get(url, {"attribute": "index=3"}).json()
    assert [(d["pool"], d["device"]) for d in by_attribute] == [("worker-4", "gpu-3")]
    by_class = api_client.get(url, {"device_class": "dra.example.com"}).json()
    assert [d["device"] for d in by_class] == ["device-1", "device-2"]
    assert api_client.get(url, {"attribute": "=x"}).status_code == 400


def test_pools_api_has_stale_slices_duplicates_and_counters(api_client, troubled) -> None:
    pools = {p["pool"]: p for p in api_client.get(reverse("api-pools", args=[troubled.pk])).json()}
    assert pools["worker-1"]["stale_slices"] == [
        {"name": "worker-1-gpu.example.com-old", "generation": 1, "devices": 4}
    ]
    assert pools["worker-1"]["devices"] == 2 and pools["worker-1"]["usable"] is True
    assert pools["worker-2"]["complete"] is False and pools["worker-2"]["problem"] == "incomplete"
    assert pools["worker-3"]["valid"] is False and pools["worker-3"]["problem"] == "invalid"
    assert pools["worker-3"]["duplicate_devices"] == ["gpu-1"]
    assert pools["worker-4"]["tainted"] == 2 and pools["worker-4"]["free"] == 1
    assert pools["pool"]["counter_sets"] == [
        {
            "name": "gpu-1-counters",
            "counters": [{"name": "memory", "total": "8Gi", "consumed": "6Gi", "fraction": 0.75}],
        }
    ]


# --- hostile names --------------------------------------------------------------------------------


def test_hostile_names_are_escaped_in_html_and_svg(client_logged_in, api_client) -> None:
    hostile_node = f"node-{SVG}"
    objects = [
        node(hostile_node),
        device_class(f"class-{IMG}", f"device.driver == '{SCRIPT}'"),
        resource_slice(
            f"slice-{IMG}",
            driver=SCRIPT,
            pool=f"pool-{IMG}",
            node_name=hostile_node,
            count=2,
            generation=2,
            devices=[
                device(
                    f"gpu-{SCRIPT}",
                    attributes={f"{SCRIPT}": {"string": IMG}, "model": {"string": SCRIPT}},
                    capacity={"memory": {"value": IMG}},
                    taints=[{"key": SCRIPT, "value": IMG, "effect": "NoSchedule"}],
                )
            ],
        ),
        resource_slice(f"old-{IMG}", driver=SCRIPT, pool=f"pool-{IMG}", node_name=hostile_node),
    ]
    # The import refuses these names as the API server does (dradash.dra.validation); snapshots
    # stored before it did may hold them, so they are stored here as they were then.
    snapshot = stored_unvalidated(objects)
    html = get(client_logged_in, snapshot)
    for raw in ("<script>alert", "<img src=x", "<svg onload"):
        assert raw not in html, raw
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    charts = re.findall(r"<svg .*?</svg>", html, re.S)
    node_chart = next(c for c in charts if 'class="chart bars"' in c)
    assert "node-&lt;svg onload=alert(1)&gt;" in node_chart
    assert "/nodes/node-%3Csvg%20onload%3Dalert%281%29%3E/" in node_chart
    class_bar = html[html.index("<h2>By device class</h2>") :]
    assert "class-&quot;&gt;&lt;img" in class_bar
    for params in ({"attribute": "model"}, {"device_class": f"class-{IMG}"}, {"q": SCRIPT}):
        partial = client_logged_in.get(
            reverse("device-list", args=[snapshot.pk]), params, headers={"HX-Request": "true"}
        ).content.decode()
        assert "<script>alert" not in partial and "<img src=x" not in partial, params
    assert api_client.get(reverse("api-pools", args=[snapshot.pk])).status_code == 200


# --- the SVG charts -------------------------------------------------------------------------------


def test_stacked_bar_segments_are_as_wide_as_their_share() -> None:
    svg = stacked_bar([("allocated", 3), ("free", 1)], title="3 of 4", width=100)
    assert svg.startswith('<svg class="chart bar" width="100" height="12"')
    assert 'class="seg seg-allocated" x="0" y="0" width="75"' in svg
    assert 'class="seg seg-free" x="75" y="0" width="25"' in svg
    assert "<title>3 allocated</title>" in svg and "<title>1 free</title>" in svg
    assert "style=" not in svg and "<script" not in svg


def test_an_empty_bar_has_no_segments() -> None:
    svg = stacked_bar([("allocated", 0), ("free", 0)], title="nothing")
    assert "seg-" not in svg and 'class="bar-bg"' in svg


def test_bar_chart_escapes_labels_links_and_shortens_long_names() -> None:
    long_name = "n" * 60
    svg = bar_chart(
        [
            BarRow(SCRIPT, [("allocated", 1)], f'/x?node="{IMG}', "1/1"),
            BarRow(long_name, [("free", 2)], "/x?node=n", "0/2"),
        ],
        title=f"nodes {SCRIPT}",
        label_width=230,
    )
    assert "<script>" not in svg and "<img" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert 'href="/x?node=&quot;&quot;&gt;&lt;img' in svg
    assert "n" * 10 + "…" + "n" * 21 + "</text>" in svg  # its start and its end
    assert f"<title>{long_name}: 0/2</title>" in svg
    # One scale for all rows: 1 device is half as wide as 2.
    assert 'class="seg seg-allocated" x="230" y="3" width="130"' in svg
    assert 'class="seg seg-free" x="230" y="23" width="260"' in svg
