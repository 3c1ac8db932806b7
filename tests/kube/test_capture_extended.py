"""Capture of Pods that ask for devices as extended resources (KEP-5004, DESIGN "Kubernetes 1.37
workloads"): a Pod without spec.resourceClaims that asks for ``example.com/gpu`` which a
DeviceClass maps, or for ``deviceclass.resource.kubernetes.io/<class>``, is a DRA Pod from its
creation and is captured while it is still pending; a Pod whose extended resource no class maps
(a device plugin's ``nvidia.com/gpu``) or that asks only for cpu and memory is not. When the
DeviceClasses cannot be read, which names they map is unknown, so every Pod asking for an
extended resource is kept."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from dradash.dra.state import ClusterState, SnapshotMeta
from tests.dra.builders import fixture_objects
from tests.kube.test_capture import run
from tests.kubeapi import KubeAPIServer

NS = "extended-resource-request"
WORKER = "dra-example-driver-cluster-worker"
PLUGIN_NODE = "gpu-plugin-node"
# The Kubernetes docs' DeviceClass mapping example.com/gpu to gpu.example.com (dra-features.md).
MAPPING_CLASS = "k8s-website__docs__dra-features__deviceclass-extendedresource.yaml"
# dra-example-driver's Pods: pod0 asks deviceclass.resource.kubernetes.io/gpu.example.com: 1,
# pod1 asks example.com/gpu: 1.
EXTENDED_PODS = "dra-example-driver__extended-resource-request__extended-resource-request.yaml"
README_SLICES = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
TS = "2026-11-28T09:20:00Z"


def node(name: str, allocatable: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110", **(allocatable or {})},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def plain_pod(name: str, limits: dict[str, str], node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "ctr0", "image": "ubuntu:24.04", "resources": {"limits": limits}}]
    }
    phase = "Pending"
    if node_name:
        spec["nodeName"] = node_name
        phase = "Running"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": TS},
        "spec": spec,
        "status": {"phase": phase},
    }


def failed_scheduling(pod: dict[str, Any], message: str) -> dict[str, Any]:
    name = pod["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.18a1b2c3d4e5f6aa", "namespace": NS},
        "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": NS},
        "reason": "FailedScheduling",
        "message": message,
        "type": "Warning",
        "source": {"component": "default-scheduler"},
        "firstTimestamp": TS,
        "lastTimestamp": TS,
        "count": 1,
    }


def cluster() -> list[dict[str, Any]]:
    """A kind cluster with dra-example-driver's 8 GPUs and its two extended-resource Pods
    pending, beside a node whose device plugin advertises nvidia.com/gpu, a Pod using it and a
    web Pod asking for cpu and memory only."""
    objects = [node(WORKER), node(PLUGIN_NODE, {"nvidia.com/gpu": "8"})]
    objects += fixture_objects(README_SLICES) + fixture_objects(MAPPING_CLASS)
    objects += fixture_objects(EXTENDED_PODS)  # the Namespace and pod0, pod1
    for pod in objects:
        if pod["kind"] == "Pod":
            pod["status"] = {"phase": "Pending"}
    plugin = plain_pod("cuda-device-plugin", {"nvidia.com/gpu": "1"}, PLUGIN_NODE)
    web = plain_pod("web", {"cpu": "500m", "memory": "256Mi"})
    objects += [plugin, web]
    (pod1,) = [o for o in objects if o["kind"] == "Pod" and o["metadata"]["name"] == "pod1"]
    objects.append(
        failed_scheduling(pod1, "0/2 nodes are available: 2 cannot allocate all claims.")
    )
    objects.append(failed_scheduling(web, "0/2 nodes are available: 2 Insufficient cpu."))
    return copy.deepcopy(objects)


def pods(result: Any) -> set[str]:
    return {name for kind, _, name in result.objects if kind == "Pod"}


def test_pending_pods_asking_for_extended_resources_a_class_maps_are_captured(
    tmp_path: Path,
) -> None:
    with KubeAPIServer(cluster(), version="v1.37.1") as api:
        result = run(api, tmp_path)

    # pod1 asks example.com/gpu, which the DeviceClass maps; pod0 the class's implicit name.
    # The device plugin's nvidia.com/gpu (no class maps it) and plain cpu/memory are left out.
    assert pods(result) == {"pod0", "pod1"}
    assert result.kind_status["Pod"]["status"] == "ok"
    events = {name for kind, _, name in result.objects if kind == "Event"}
    assert events == {"pod1.18a1b2c3d4e5f6aa"}  # the web Pod's event is not about DRA
    # The snapshot shows both as DRA Pods waiting for their devices.
    state = ClusterState.build(
        result.objects.values(), SnapshotMeta(server_version=result.server_version)
    )
    assert {p.name for p in state.pods.values() if p.uses_dra} == {"pod0", "pod1"}
    pod1 = state.pods[(NS, "pod1")]
    assert [(r.status, r.claim.implicit) for r in pod1.claim_refs] == [("implicit", True)]


def test_a_class_mapping_another_name_does_not_keep_a_device_plugin_pod(
    tmp_path: Path,
) -> None:
    objects = cluster()
    (mapping,) = [o for o in objects if o["kind"] == "DeviceClass"]
    mapping["spec"]["extendedResourceName"] = "example.com/other"

    with KubeAPIServer(objects, version="v1.37.1") as api:
        result = run(api, tmp_path)

    # pod1's example.com/gpu is now a name nothing maps: the scheduler gives it to no DRA
    # driver, so it is no DRA Pod; the implicit name still is.
    assert pods(result) == {"pod0"}


def test_a_class_mapping_the_device_plugins_name_keeps_its_pods(tmp_path: Path) -> None:
    objects = cluster()
    (mapping,) = [o for o in objects if o["kind"] == "DeviceClass"]
    mapping["spec"]["extendedResourceName"] = "nvidia.com/gpu"

    with KubeAPIServer(objects, version="v1.37.1") as api:
        result = run(api, tmp_path)

    # On a node without the device plugin the scheduler would give nvidia.com/gpu through DRA,
    # so the Pod using the plugin is kept too (where it runs, the plugin serves it).
    assert pods(result) == {"pod0", "cuda-device-plugin"}


def test_when_device_classes_cannot_be_listed_any_extended_resource_may_be_dra(
    tmp_path: Path,
) -> None:
    with KubeAPIServer(cluster(), version="v1.37.1") as api:
        api.forbid("deviceclasses", "resource.k8s.io")
        result = run(api, tmp_path)

    assert result.kind_status["DeviceClass"]["status"] == "forbidden"
    # Which names the classes map is unknown: every Pod asking for an extended resource is kept,
    # the one asking only for cpu and memory is not.
    assert pods(result) == {"pod0", "pod1", "cuda-device-plugin"}


def test_a_cluster_without_the_resource_api_keeps_no_device_plugin_pods(
    tmp_path: Path,
) -> None:
    objects = [o for o in cluster() if not o["apiVersion"].startswith("resource.k8s.io/")]

    with KubeAPIServer(objects, version="v1.33.4", resource_versions=()) as api:
        result = run(api, tmp_path)

    # No resource.k8s.io at all: no DeviceClass can map a name, so only the implicit names
    # could be DRA's (and a Pod asking for one waits forever: it is kept to say so).
    assert result.kind_status["DeviceClass"]["status"] == "not-found"
    assert result.api_versions == []
    assert pods(result) == {"pod0"}
