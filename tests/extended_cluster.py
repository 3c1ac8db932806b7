"""A cluster whose Pods ask for devices as extended resources backed by DRA (KEP-5004), built
from the shapes of the upstream fixtures: dra-example-driver's eight-GPU ResourceSlice on
``dra-example-driver-cluster-worker``, its DeviceClass rendered with
``deviceClass.extendedResourceName=example.com/gpu``, its extended-resource-request Pods, and
the claim the NVIDIA driver's gpu-full demo shows the scheduler generating.

Two snapshots, earlier then later:

* earlier: Job ``hog`` holds all eight GPUs; ``pod0`` (the implicit name
  ``deviceclass.resource.kubernetes.io/gpu.example.com: 1``) waits for one.
* later: ``hog`` gave back gpu-0; the scheduler bound ``pod0`` with the claim it generated
  (``pod0-extended-resources-abcde``, gpu-0) and the Pod runs; ``pod1`` (``example.com/gpu:
  1``, no spec.resourceClaims) appeared and waits: every GPU is taken; ``web`` asks for no
  device.

``TOO_FEW`` is one more Pod that asks for more GPUs than exist.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.dra.builders import (
    claim,
    consumer,
    fixture_objects,
    node,
    owner,
    pod,
    request,
    result,
)

NS = "extended-resource-request"
NODE = "dra-example-driver-cluster-worker"
CLASS = "gpu.example.com"
RESOURCE = "example.com/gpu"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
GENERATED = "pod0-extended-resources-abcde"
EARLIER = "2026-11-20T10:00:00Z"
LATER = "2026-11-20T11:00:00Z"


def _fixture(name: str) -> list[dict[str, Any]]:
    return copy.deepcopy(fixture_objects(name))


def device_class() -> dict[str, Any]:
    """dra-example-driver's Helm DeviceClass, rendered with deviceClass.extendedResourceName."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": CLASS, "creationTimestamp": "2026-11-01T00:00:00Z"},
        "spec": {
            "selectors": [{"cel": {"expression": f"device.driver == '{CLASS}'"}}],
            "extendedResourceName": RESOURCE,
        },
    }


def example_pods() -> dict[str, dict[str, Any]]:
    """pod0 (implicit name) and pod1 (example.com/gpu) of the extended-resource-request
    example, as the API server returns them (a uid, a phase)."""
    out = {}
    for obj in _fixture(
        "dra-example-driver__extended-resource-request__extended-resource-request.yaml"
    ):
        if obj["kind"] == "Pod":
            obj["metadata"]["uid"] = f"uid-{obj['metadata']['name']}"
            obj["status"] = {
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
            out[obj["metadata"]["name"]] = obj
    return out


def _started(container: str) -> dict[str, Any]:
    return {
        "name": container,
        "ready": True,
        "restartCount": 0,
        "image": "ubuntu:22.04",
        "state": {"running": {"startedAt": "2026-11-20T09:30:00Z"}},
    }


def _hog(gpus: list[int]) -> list[dict[str, Any]]:
    """A Pod of Job hog running with a claim that holds these GPUs."""
    hog_pod = pod(
        "hog-0",
        NS,
        claims=[{"name": "gpus", "resourceClaimName": "hog-gpus"}],
        node_name=NODE,
        phase="Running",
        owners=[owner("Job", "hog", "uid-job-hog")],
    )
    hog_pod["status"]["containerStatuses"] = [_started("ctr0")]
    hog_pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    hog_claim = claim(
        "hog-gpus",
        NS,
        requests=[request("gpus", CLASS, allocationMode="ExactCount", count=len(gpus))],
        results=[result("gpus", f"gpu-{i}", pool=NODE) for i in gpus],
        reserved_for=[consumer(hog_pod)],
    )
    return [hog_pod, hog_claim]


def _running(obj: dict[str, Any], claim_name: str, request_name: str) -> dict[str, Any]:
    """The Pod as the scheduler and kubelet left it: bound, its extended resources' claim
    recorded, running."""
    obj["spec"]["nodeName"] = NODE
    container = obj["spec"]["containers"][0]["name"]
    resource = next(iter(obj["spec"]["containers"][0]["resources"]["limits"]))
    obj["status"] = {
        "phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [_started(container)],
        "extendedResourceClaimStatus": {
            "resourceClaimName": claim_name,
            "requestMappings": [
                {"containerName": container, "resourceName": resource, "requestName": request_name}
            ],
        },
    }
    return obj


def generated_claim(pod_obj: dict[str, Any], device: str) -> dict[str, Any]:
    """The claim the scheduler created at binding (gpu-full.yaml's comments show its shape)."""
    name = pod_obj["metadata"]["name"]
    out = claim(
        f"{name}-extended-resources-abcde",
        NS,
        owners=[owner("Pod", name, pod_obj["metadata"]["uid"])],
        annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
        requests=[request("container-0-request-0", CLASS, allocationMode="ExactCount", count=1)],
        results=[result("container-0-request-0", device, pool=NODE)],
        reserved_for=[consumer(pod_obj)],
    )
    out["metadata"]["generateName"] = f"{name}-extended-resources-"
    return out


def _info(captured_at: str) -> dict[str, Any]:
    return {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "info"},
        "spec": {"cluster": "gpu-lab", "capturedAt": captured_at, "serverVersion": "v1.37.0"},
    }


def _common() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        node(NODE),
        *_fixture("dra-example-driver__README__resourceslice-list-8gpu.yaml"),
        device_class(),
    ]


def web() -> dict[str, Any]:
    """A Pod that asks for no device at all."""
    return pod("web", NS, node_name=NODE, phase="Running")


def earlier() -> list[dict[str, Any]]:
    """Every GPU held by hog; pod0 waits for one."""
    return [_info(EARLIER), *_common(), *_hog(list(range(8))), example_pods()["pod0"]]


def later() -> list[dict[str, Any]]:
    """pod0 runs with gpu-0 through its generated claim; pod1 waits, every GPU taken."""
    pods = example_pods()
    pod0 = _running(pods["pod0"], GENERATED, "container-0-request-0")
    return [
        _info(LATER),
        *_common(),
        *_hog(list(range(1, 8))),
        pod0,
        generated_claim(pod0, "gpu-0"),
        pods["pod1"],
        web(),
    ]


def too_few() -> dict[str, Any]:
    """A Pod asking for nine GPUs of a cluster that has eight."""
    obj = example_pods()["pod1"]
    obj["metadata"].update(name="pod-nine", uid="uid-pod-nine")
    obj["spec"]["containers"][0]["resources"]["limits"] = {RESOURCE: 9}
    return obj


def bundle(objects: list[dict[str, Any]]) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()
