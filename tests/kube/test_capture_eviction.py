"""What a capture keeps of a device's health, its taints and the Pods they evict (DESIGN "A
device's health and life").

Upstream, the device taint eviction controller (kube-controller-manager, pkg/controller/
devicetainteviction) records ``DeviceTaintManagerEviction`` events ("Marking for deletion",
"Cancelling deletion") about Pods only, sets the Pod condition DisruptionTarget (reason
DeletionByDeviceTaintManager) before deleting it, and writes a DeviceTaintRule's
EvictionInProgress condition into its status. The kubelet reports device health in
``status.containerStatuses[].allocatedResourcesStatus`` and records no event for it; its own
events about a node name the node with the node's name as uid. So a capture keeps Pods and
DeviceTaintRules whole, and the Events about the captured Pods, claims, ResourceSlices,
DeviceTaintRules and the Nodes that publish slices or run a captured Pod.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kube.test_capture import run
from tests.kubeapi import KubeAPIServer, fixture_objects

TS = "2026-11-28T10:29:30Z"
H100 = "h100-node-01"


def event(name: str, involved: dict[str, Any], reason: str, message: str, **extra: Any) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": involved.get("namespace", "default")},
        "involvedObject": involved,
        "reason": reason,
        "message": message,
        "type": "Normal",
        "firstTimestamp": TS,
        "lastTimestamp": TS,
        "count": 1,
        **extra,
    }


def find(objects: list[dict], kind: str, name: str) -> dict:
    (obj,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


def cluster() -> list[dict]:
    """The fixture cluster, its DeviceTaintRule with a status, a DRA Pod evicted by it and one
    reported unhealthy, and events about Pods, Nodes, a slice and the rule."""
    objects = fixture_objects()
    rule = find(objects, "DeviceTaintRule", "example")
    rule["status"] = {
        "conditions": [
            {
                "type": "EvictionInProgress",
                "status": "True",
                "reason": "PodsPendingEviction",
                "message": "1 pod needs to be evicted in 1 namespace. "
                "1 pod evicted since starting the controller.",
                "observedGeneration": 1,
                "lastTransitionTime": TS,
            }
        ]
    }
    evicted = find(objects, "Pod", "trainer-crashy")
    evicted["metadata"]["deletionTimestamp"] = TS
    evicted["status"]["phase"] = "Failed"
    evicted["status"]["conditions"].append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByDeviceTaintManager",
            "message": "Device Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": TS,
        }
    )
    unhealthy = find(objects, "Pod", "vllm-0")
    unhealthy["status"]["containerStatuses"][0]["allocatedResourcesStatus"] = [
        {
            "name": "claim:gpus",
            "resources": [
                {
                    "resourceID": "k8s.gpu.nvidia.com/claim=0b8e-gpu-0",
                    "health": "Unhealthy",
                    "message": "critical XID 79 reported by NVML",
                }
            ],
        }
    ]
    ev = evicted["metadata"]
    h100 = find(objects, "Node", H100)
    slice_ = next(o for o in objects if o["kind"] == "ResourceSlice")
    objects += [
        # The eviction controller's event: about the Pod, with its uid.
        event(
            f"{ev['name']}.evict",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": ev["name"],
                "namespace": ev["namespace"],
                "uid": ev["uid"],
            },
            "DeviceTaintManagerEviction",
            "Marking for deletion",
            source={"component": "device-taint-eviction-controller"},
        ),
        # The kubelet's about its node: the node's name as uid.
        event(
            f"{H100}.rebooted",
            {"kind": "Node", "name": H100, "uid": H100},
            "Rebooted",
            f"Node {H100} has been rebooted, boot id: 5f2a",
            type="Warning",
            source={"component": "kubelet", "host": H100},
        ),
        # The node controller's: the node's own uid.
        event(
            f"{H100}.registered",
            {"kind": "Node", "name": H100, "uid": h100["metadata"]["uid"], "apiVersion": "v1"},
            "RegisteredNode",
            f"Node {H100} event: Registered Node {H100} in Controller",
            source={"component": "node-controller"},
        ),
        # A remediation tool's, about the rule and about a slice (no upstream component
        # records these; a capture keeps them if someone does).
        event(
            "example.remediation",
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "name": "example"},
            "Tainted",
            "DeviceTaintRule created after XID 79",
        ),
        event(
            "slice.remediation",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "name": slice_["metadata"]["name"],
            },
            "Inspected",
            "slice inspected",
        ),
        # About a DeviceTaintRule and a Node the capture does not hold.
        event(
            "gone.remediation",
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "name": "gone"},
            "Tainted",
            "no such rule",
        ),
        event(
            "cpu-node.rebooted",
            {"kind": "Node", "name": "cpu-node-7", "uid": "cpu-node-7"},
            "Rebooted",
            "Node cpu-node-7 has been rebooted",
        ),
    ]
    return objects


def test_health_taint_and_eviction_are_captured_with_their_events(tmp_path: Path) -> None:
    with KubeAPIServer(cluster(), version="v1.37.1") as api:
        result = run(api, tmp_path)

    events = {name for kind, _, name in result.objects if kind == "Event"}
    assert {
        "trainer-crashy.evict",
        f"{H100}.rebooted",
        f"{H100}.registered",
        "example.remediation",
        "slice.remediation",
    } <= events
    # Not about anything captured: a rule that does not exist, a node without DRA, and the
    # fixture's event about the control plane (no slices, no DRA Pods).
    assert not {"gone.remediation", "cpu-node.rebooted", "control-plane.18a1b2c3d4e5f603"} & events

    rule = result.objects[("DeviceTaintRule", "", "example")]
    (condition,) = rule["status"]["conditions"]
    assert (condition["type"], condition["status"]) == ("EvictionInProgress", "True")
    pod = result.objects[("Pod", "ml-team", "trainer-crashy")]
    assert pod["metadata"]["deletionTimestamp"] == TS
    assert pod["status"]["phase"] == "Failed"
    assert any(
        c["type"] == "DisruptionTarget" and c["reason"] == "DeletionByDeviceTaintManager"
        for c in pod["status"]["conditions"]
    )
    (status,) = result.objects[("Pod", "inference", "vllm-0")]["status"]["containerStatuses"]
    (health,) = status["allocatedResourcesStatus"][0]["resources"]
    assert (health["health"], health["message"]) == (
        "Unhealthy",
        "critical XID 79 reported by NVML",
    )
