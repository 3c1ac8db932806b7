"""A bundle with a Pod asking for an extended resource that a DeviceClass maps (KEP-5004)
imports, and the analyse task gives it the verdict and chain the diagnosis API serves.

The path is the real one: bundle_import stores the objects and queues the analyse task on
commit, the Celery task (eager without a broker) stores the PodVerdict rows, and
``GET /api/v1/snapshots/{id}/pods/{namespace}/{name}/diagnosis`` reads them. Imports keep every
Pod a bundle holds (a ``kubectl get pods -A -o json`` list too): those that use DRA get a
verdict, the others a row without one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.urls import reverse

from dradash.analysis.models import PodVerdict, SnapshotAnalysis
from dradash.snapshots.services import bundle_import

pytestmark = pytest.mark.django_db

NS = "extended-resource-request"
# The Kubernetes docs' DeviceClass mapping example.com/gpu to gpu.example.com; its selector
# reads the attribute `type`, which dra-example-driver's devices do not publish.
DOCS_CLASS = "k8s-website__docs__dra-features__deviceclass-extendedresource.yaml"
SLICES = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
EXAMPLE_PODS = "dra-example-driver__extended-resource-request__extended-resource-request.yaml"
WORKER = "dra-example-driver-cluster-worker"


def kubectl_pods(fixtures_dir: Path, *extra: dict[str, Any]) -> bytes:
    """What ``kubectl get pods -A -o json`` prints: the example driver's pod1 pending (it asks
    example.com/gpu: 1), a Pod of a device plugin's nvidia.com/gpu, and a web Pod."""
    docs = yaml.safe_load_all((fixtures_dir / EXAMPLE_PODS).read_text(encoding="utf-8"))
    (pod1,) = [d for d in docs if d and d["metadata"]["name"] == "pod1"]
    pod1["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 cannot allocate all claims.",
            }
        ],
    }
    items = [pod1, *extra]
    items.append(other_pod("cuda-plugin", {"nvidia.com/gpu": "1"}))
    items.append(other_pod("web", {"cpu": "500m", "memory": "256Mi"}))
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()


def other_pod(name: str, limits: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [{"name": "ctr0", "image": "busybox", "resources": {"limits": limits}}]
        },
        "status": {"phase": "Pending"},
    }


def node() -> bytes:
    return json.dumps(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": WORKER}, "status": {}}
    ).encode()


def diagnosis(client: Any, snapshot: Any, name: str) -> Any:
    return client.get(reverse("api-pod-diagnosis", args=(snapshot.pk, NS, name)))


def test_the_docs_class_on_the_example_drivers_devices_gives_the_pod_a_selector_error(
    api_client: Any, analysed: Any, fixtures_dir: Path
) -> None:
    files = [
        (DOCS_CLASS, (fixtures_dir / DOCS_CLASS).read_bytes()),
        (SLICES, (fixtures_dir / SLICES).read_bytes()),
        ("node.json", node()),
        ("pods.json", kubectl_pods(fixtures_dir)),
    ]
    with analysed():  # the analyse task queued on commit runs when the block ends
        snapshot = bundle_import(files=files, cluster_name="kind")

    assert SnapshotAnalysis.objects.get(pk=snapshot.pk).status == "done"
    # Every Pod of the list is stored; only the one asking for a mapped name uses DRA.
    rows = {r.name: r for r in PodVerdict.objects.filter(snapshot=snapshot)}
    assert {name: r.uses_dra for name, r in rows.items()} == {
        "pod1": True,
        "cuda-plugin": False,
        "web": False,
    }
    assert (rows["pod1"].stage, rows["pod1"].reason) == ("claim-unallocated", "selector-error")

    response = diagnosis(api_client, snapshot, "pod1")

    assert response.status_code == 200
    data = response.json()
    assert (data["stage"], data["reason"]) == ("claim-unallocated", "selector-error")
    assert (
        "extended resources of Pod extended-resource-request/pod1 (example.com/gpu: 1)"
        in (data["summary"])
    )
    assert "no such key: type" in data["summary"]
    assert data["evidence"][0] == {
        "kind": "Pod",
        "namespace": NS,
        "name": "pod1",
        "field": "resources",
        "detail": "example.com/gpu: 1",
    }
    assert data["chain"]["extended_resources"] == [
        {
            "container": "ctr0",
            "init": False,
            "resource": "example.com/gpu",
            "quantity": 1,
            "device_class": "gpu.example.com",
            "served_by": "dra",
            "request": None,
        }
    ]
    (ref,) = data["chain"]["claims"]
    assert (ref["source"], ref["status"]) == ("extended-resource", "implicit")
    assert ref["containers"] == [{"container": "ctr0", "request": "container-0-request-0"}]
    # The device plugin's Pod and the web Pod are stored, but do not use DRA.
    assert diagnosis(api_client, snapshot, "cuda-plugin").status_code == 404
    assert diagnosis(api_client, snapshot, "web").status_code == 404


def test_more_gpus_than_the_node_has_is_told_by_the_allocators_funnel(
    api_client: Any, analysed: Any, fixtures_dir: Path
) -> None:
    docs = yaml.safe_load((fixtures_dir / DOCS_CLASS).read_text(encoding="utf-8"))
    # The class as the example driver's chart installs it (a selector its devices satisfy).
    docs["spec"]["selectors"] = [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}]
    greedy = other_pod("greedy", {"example.com/gpu": "9"})
    files = [
        ("class.json", json.dumps(docs).encode()),
        (SLICES, (fixtures_dir / SLICES).read_bytes()),
        ("node.json", node()),
        ("pods.json", kubectl_pods(fixtures_dir, greedy)),
    ]
    with analysed():
        snapshot = bundle_import(files=files, cluster_name="kind")

    data = diagnosis(api_client, snapshot, "greedy").json()

    assert data["stage"] == "claim-unallocated"
    assert "Only 8 devices match" in data["summary"] and "it needs 9" in data["summary"]
    funnel = [e for e in data["evidence"] if "request " in e["field"]]
    assert funnel and "class 8" in funnel[0]["detail"]
    assert data["chain"]["extended_resources"][0]["quantity"] == 9
    # pod1's one GPU would fit: why it still waits would be in its events, which the bundle
    # does not hold.
    pod1 = diagnosis(api_client, snapshot, "pod1").json()
    assert (pod1["stage"], pod1["reason"]) == ("claim-unallocated", "snapshot-incomplete")
    assert f"would allocate now on node {WORKER}" in pod1["summary"]
    assert "which are unknown" in pod1["summary"]
