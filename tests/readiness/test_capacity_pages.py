"""The capacity page and API of a snapshot."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.stored import import_analysed

pytestmark = pytest.mark.django_db


def _slice(node: str, devices: int) -> dict:
    """A dra-example-driver ResourceSlice (README's kubectl get resourceslice output)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu.example.com-abcde"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": node,
            "pool": {"generation": 1, "name": node, "resourceSliceCount": 1},
            "devices": [
                {
                    "name": f"gpu-{i}",
                    "attributes": {
                        "driverVersion": {"version": "1.0.0"},
                        "index": {"int": i},
                        "model": {"string": "LATEST-GPU-MODEL"},
                        "uuid": {"string": f"gpu-{node}-{i}"},
                    },
                    "capacity": {"memory": {"value": "80Gi"}},
                }
                for i in range(devices)
            ],
        },
    }


def _spread_cluster() -> list[dict]:
    """8 free GPUs, one per node, and a Pod waiting for a 2-GPU claim."""
    objects: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu.example.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]},
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "two-gpus", "namespace": "train", "uid": "c1"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "exactly": {"deviceClassName": "gpu.example.com", "count": 2},
                        }
                    ]
                }
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "train", "uid": "p1"},
            "spec": {
                "containers": [{"name": "c", "resources": {"claims": [{"name": "gpus"}]}}],
                "resourceClaims": [{"name": "gpus", "resourceClaimName": "two-gpus"}],
            },
            "status": {"phase": "Pending"},
        },
    ]
    for i in range(8):
        objects.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}"}})
        objects.append(_slice(f"node-{i}", 1))
    return objects


def test_free_devices_spread_one_per_node_cannot_serve_a_two_device_claim(
    client_logged_in, api_client
) -> None:
    data = json.dumps(_spread_cluster()).encode()
    snapshot = import_analysed(files=[("spread.json", data)], cluster_name="spread")
    html = client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk])).content.decode()
    assert "<strong>8</strong> free" in html
    assert "at most <strong>1</strong> free on one node" in html
    assert "8 of 8 free devices are unusable for the waiting 2-device request" in html
    claim = reverse("claim-detail", args=[snapshot.pk, "train", "two-gpus"])
    assert f'href="{claim}"' in html
    # the spread picture: one row, "1 free" on 8 nodes
    assert "<svg" in html and "on 8 nodes" in html

    body = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/capacity").json()
    (gpu,) = body["classes"]
    assert (gpu["devices"], gpu["free"], gpu["allocated"], gpu["largest_free_set"]) == (8, 8, 0, 1)
    assert gpu["waiting"] == [
        {
            "devices_per_request": 2,
            "requests": 1,
            "servable": 0,
            "unusable_free_devices": 8,
            "claims": ["train/two-gpus"],
            "extended_resource_pods": [],
            "summary": gpu["waiting"][0]["summary"],
        }
    ]


def test_the_same_gpus_on_one_node_serve_the_claim(api_client) -> None:
    objects = [o for o in _spread_cluster() if o["kind"] not in ("ResourceSlice", "Node")]
    objects += [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"}}]
    objects.append(_slice("node-0", 8))
    snapshot = import_analysed(
        files=[("one.json", json.dumps(objects).encode())], cluster_name="one-node"
    )
    (gpu,) = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/capacity").json()["classes"]
    assert gpu["largest_free_set"] == 8
    assert gpu["waiting"][0]["servable"] == 1
    assert gpu["waiting"][0]["unusable_free_devices"] == 0


def test_the_demo_job_needs_more_devices_than_match(client_logged_in, api_client, demo) -> None:
    snapshot = demo[0]
    jobs = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/capacity").json()["jobs"]
    render = next(j for j in jobs if j["job"] == "render/render-farm")
    assert render["pods_wanted"] == 7
    assert render["devices_per_pod"] == {"gpu.example.com": 2}
    assert (render["demand"], render["pods_fit"], render["fits"]) == (14, 6, False)
    html = client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk])).content.decode()
    assert "6 of 7" in html
    assert 'aria-current="page">Capacity</a>' in html


def test_class_names_are_escaped_in_the_page_and_its_svg(client_logged_in) -> None:
    xss = "<img src=x onerror=alert(1)>"  # a name may not hold "/" (the bundle refuses it)
    objects = _spread_cluster()
    objects[0]["metadata"]["name"] = xss
    objects[1]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = xss
    # Names the import now refuses (as the API server does): stored as older versions did.
    snapshot = import_analysed(
        files=[("xss.json", json.dumps(objects).encode())], cluster_name="x", validate=False
    )
    response = client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_unknown_snapshot_is_404(client_logged_in, api_client) -> None:
    assert client_logged_in.get(reverse("snapshot-capacity", args=[424242])).status_code == 404
    assert api_client.get("/api/v1/snapshots/424242/capacity").status_code == 404


def test_devices_in_pools_the_allocator_skips_are_named_not_counted(
    client_logged_in, api_client, demo
) -> None:
    """The later demo snapshot: gpu-example-worker-3 published 1 of its pool's 2 slices."""
    snapshot = demo[1]
    classes = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/capacity").json()["classes"]
    example = next(c for c in classes if c["device_class"] == "gpu.example.com")
    assert (example["devices"], example["in_skipped_pools"]) == (16, 4)
    html = client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk])).content.decode()
    assert "4 more unusable (in pools the allocator skips)" in html
    assert "state=unusable" in html


def _extended_cluster() -> list[dict]:
    """The spread cluster with its class mapping example.com/gpu (the Kubernetes docs' class),
    a node whose device plugin advertises 4 of it, and dra-example-driver's pod1 asking for 4."""
    objects = _spread_cluster()
    objects[0]["spec"]["extendedResourceName"] = "example.com/gpu"
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "gpu-dp-1"},
            "status": {"allocatable": {"cpu": "8", "example.com/gpu": "4"}},
        }
    )
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pod1", "namespace": "extended-resource-request", "uid": "p2"},
            "spec": {
                "containers": [{"name": "ctr0", "resources": {"limits": {"example.com/gpu": "4"}}}]
            },
            "status": {"phase": "Pending"},
        }
    )
    return objects


def test_extended_resources_say_how_much_one_node_can_serve(client_logged_in, api_client) -> None:
    """Could a Pod asking example.com/gpu: 4 run anywhere? The 8 GPUs are one per node, but
    the device-plugin node has 4."""
    data = json.dumps(_extended_cluster()).encode()
    snapshot = import_analysed(files=[("extended.json", data)], cluster_name="extended")

    body = api_client.get(f"/api/v1/snapshots/{snapshot.pk}/capacity").json()
    rows = {e["resource"]: e for e in body["extended_resources"]}
    assert list(rows) == ["example.com/gpu", "deviceclass.resource.kubernetes.io/gpu.example.com"]
    gpu = rows["example.com/gpu"]
    assert (gpu["device_class"], gpu["explicit"], gpu["dra_free"], gpu["dra_nodes"]) == (
        "gpu.example.com",
        True,
        8,
        8,
    )
    assert (gpu["plugin_nodes"], gpu["plugin_free"]) == (1, 4)
    assert (gpu["largest_request"], gpu["largest_on"]) == (4, "gpu-dp-1")
    assert (gpu["pods_waiting"], gpu["pods_too_big"]) == (1, 0)
    implicit = rows["deviceclass.resource.kubernetes.io/gpu.example.com"]
    assert (implicit["explicit"], implicit["largest_request"]) == (False, 1)

    html = client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk])).content.decode()
    assert "Extended resources backed by DRA" in html
    assert "<code>example.<wbr>com/<wbr>gpu</code>" in html
    assert '<span class="badge badge-ok">4</span> <span class="small">on gpu-dp-1</span>' in html
    assert (
        "A Pod can get up to 4 example.com/gpu on one node now (node gpu-dp-1, whose device "
        in (html)
    )


def test_no_extended_resource_section_without_device_classes(client_logged_in, api_client) -> None:
    objects = [o for o in _extended_cluster() if o["kind"] != "DeviceClass"]
    snapshot = import_analysed(
        files=[("no-classes.json", json.dumps(objects).encode())], cluster_name="no-classes"
    )

    assert (
        api_client.get(f"/api/v1/snapshots/{snapshot.pk}/capacity").json()["extended_resources"]
        == []
    )
    html = client_logged_in.get(reverse("snapshot-capacity", args=[snapshot.pk])).content.decode()
    assert "Extended resources backed by DRA" not in html
