"""Findings about extended resources backed by DRA (KEP-5004): classes sharing an
extendedResourceName, names a device plugin serves on some nodes, and the claim the scheduler
created for a Pod's extended resources once the Pod is gone.

The DeviceClass is the Kubernetes docs' ``gpu.example.com`` with ``extendedResourceName:
example.com/gpu`` (k8s-website dra-features), the Pods are dra-example-driver's
extended-resource-request demo (``limits: {example.com/gpu: 1}``), and the generated claim is
what kube-scheduler's bindClaim writes: annotation ``resource.kubernetes.io/extended-resource-
claim: "true"``, the Pod as controller owner, requests ``container-<i>-request-<j>``, and the
Pod's ``status.extendedResourceClaimStatus`` naming it.
"""

from __future__ import annotations

import copy
from typing import Any

from dradash.dra.findings import find
from dradash.dra.kinds import KINDS
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    DRIVER,
    claim,
    consumer,
    container,
    fixture_objects,
    node,
    owner,
    pod_claim,
    request,
    resource_slice,
    result,
)
from .test_findings import build, imported, of, the

ERN = "example.com/gpu"
DOCS_CLASS = "k8s-website__docs__dra-features__deviceclass-extendedresource.yaml"
DEMO = "dra-example-driver__extended-resource-request__extended-resource-request.yaml"
NS = "extended-resource-request"
ANNOTATION = {"resource.kubernetes.io/extended-resource-claim": "true"}


def docs_class(name: str = DRIVER, created: str = "", ern: str = ERN) -> dict[str, Any]:
    (obj,) = copy.deepcopy(fixture_objects(DOCS_CLASS))
    obj["metadata"]["name"] = name
    if created:
        obj["metadata"]["creationTimestamp"] = created
    obj["spec"]["extendedResourceName"] = ern
    return obj


def demo_pod(name: str = "pod1", like: str = "") -> dict[str, Any]:
    """pod1 asks for example.com/gpu: 1, pod0 for the implicit name of gpu.example.com; another
    name is a copy of ``like``."""
    (obj,) = [
        copy.deepcopy(o)
        for o in fixture_objects(DEMO)
        if o["kind"] == "Pod" and o["metadata"]["name"] == (like or name)
    ]
    obj["metadata"]["name"] = name
    obj["metadata"]["uid"] = f"uid-{name}"
    obj["status"] = {"phase": "Pending"}
    return obj


def on_node(obj: dict[str, Any], node_name: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["spec"]["nodeName"] = node_name
    obj["status"] = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}]}
    return obj


def plugin_node(name: str, count: str) -> dict[str, Any]:
    """A node whose device plugin advertises example.com/gpu."""
    obj = node(name)
    obj["status"]["allocatable"] = {"cpu": "8", "memory": "32Gi", ERN: count}
    return obj


def extended_claim(pod_obj: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """The claim kube-scheduler creates at binding for the Pod's extended resources."""
    m = pod_obj["metadata"]
    return claim(
        f"{m['name']}-extended-resources-x7k2p",
        m["namespace"],
        owners=[owner("Pod", m["name"], m["uid"])],
        annotations=ANNOTATION,
        requests=[request("container-0-request-0", DRIVER, allocationMode="ExactCount", count=1)],
        **kwargs,
    )


def bound_with_claim(node_name: str = "node-1") -> list[dict[str, Any]]:
    """pod1 running on node-1 with the claim the scheduler made for it, allocated and reserved."""
    p = on_node(demo_pod(), node_name)
    c = extended_claim(p, results=[result("container-0-request-0", "gpu-0")])
    c["status"]["reservedFor"] = [consumer(p)]
    p["status"]["extendedResourceClaimStatus"] = {
        "resourceClaimName": c["metadata"]["name"],
        "requestMappings": [
            {"containerName": "ctr0", "resourceName": ERN, "requestName": "container-0-request-0"}
        ],
    }
    return [p, c]


def cluster() -> list[dict[str, Any]]:
    return [docs_class(), node("node-1"), resource_slice("node-1-gpu.example.com-abcde")]


# --- extended-resource-conflict ---------------------------------------------------------------


def test_two_classes_declaring_one_name_the_newer_wins() -> None:
    old = docs_class("gpu-old.example.com", "2026-10-01T08:00:00Z")
    new = docs_class("gpu-new.example.com", "2026-11-02T10:00:00Z")

    finding = the(build(old, new, demo_pod()), "extended-resource-conflict")

    assert finding.severity == "warning"
    assert finding.message.startswith(
        "DeviceClasses gpu-new.example.com and gpu-old.example.com both declare "
        "extendedResourceName example.com/gpu: the scheduler gives it to gpu-new.example.com, "
        "the newest (created 2026-11-02T10:00:00Z); gpu-old.example.com (created "
        "2026-10-01T08:00:00Z) loses it and stays reachable only by its implicit name "
        "deviceclass.resource.kubernetes.io/gpu-old.example.com"
    )
    assert "1 Pod asking for example.com/gpu (extended-resource-request/pod1)" in finding.message
    assert [o["name"] for o in finding.objects] == ["gpu-new.example.com", "gpu-old.example.com"]
    assert "kubectl patch deviceclass gpu-old.example.com" in finding.next_step


def test_classes_created_in_the_same_second_go_by_name() -> None:
    at = "2026-11-02T10:00:00Z"
    found = the(
        build(docs_class("b-gpu", at), docs_class("a-gpu", at), docs_class("c-gpu", at)),
        "extended-resource-conflict",
    )

    assert "all declare extendedResourceName example.com/gpu" in found.message
    assert (
        f"they were created at the same time (created {at}), so the scheduler gives it to "
        "a-gpu, whose name sorts first" in found.message
    )
    assert "b-gpu (created at the same time, its name sorts after)" in found.message
    assert "their implicit names" in found.message


def test_a_newest_class_tied_with_one_and_newer_than_another() -> None:
    at = "2026-11-02T10:00:00Z"
    found = the(
        build(
            docs_class("b-gpu", at),
            docs_class("a-gpu", at),
            docs_class("old-gpu", "2025-01-01T00:00:00Z"),
        ),
        "extended-resource-conflict",
    )

    assert "gives it to a-gpu, the newest (created " in found.message
    assert "of the classes created then, its name sorts first" in found.message
    assert "old-gpu (created 2025-01-01T00:00:00Z)" in found.message


def test_no_conflict_for_one_class_per_name_or_with_the_feature_off() -> None:
    other = docs_class("nic.example.com", ern="example.com/nic")
    assert of(build(docs_class(), other), "extended-resource-conflict") == []

    # DRAExtendedResource is alpha before 1.34 and not in any release before: the API server
    # drops extendedResourceName and the scheduler maps no name at all.
    old = docs_class("gpu-old.example.com", "2026-10-01T08:00:00Z")
    new = docs_class("gpu-new.example.com", "2026-11-02T10:00:00Z")
    meta = SnapshotMeta(server_version="v1.33.4")
    assert of(build(old, new, meta=meta), "extended-resource-conflict") == []


# --- extended-resource-device-plugin ----------------------------------------------------------


def test_nodes_advertising_a_mapped_name_use_the_device_plugin() -> None:
    objects = [
        docs_class(),
        plugin_node("gpu-dp-1", "4"),
        plugin_node("gpu-dp-2", "8"),
        node("node-1"),
        node("node-2"),
        node("node-3"),
        on_node(demo_pod(), "gpu-dp-1"),
        demo_pod("pod0"),  # the implicit name: not this finding's
        demo_pod("waiting", like="pod1"),
    ]
    objects[-1]["spec"]["containers"][0]["resources"] = {"limits": {ERN: "2"}}

    finding = the(build(*objects), "extended-resource-device-plugin")

    assert finding.severity == "info"
    assert finding.message == (
        "DeviceClass gpu.example.com maps extended resource example.com/gpu, but 2 nodes "
        "advertise it in status.allocatable (gpu-dp-1: 4 and gpu-dp-2: 8): a device plugin "
        "serves it there, and the scheduler gives it from the device plugin instead of DRA; on "
        "the other 3 nodes it allocates gpu.example.com devices through DRA; 2 Pods ask for it "
        "(extended-resource-request/pod1 and extended-resource-request/waiting): 1 served by "
        "the device plugin and 1 not on a node yet."
    )
    assert [o["name"] for o in finding.objects if o["kind"] == "Node"] == ["gpu-dp-1", "gpu-dp-2"]
    assert "example\\.com/gpu" in finding.next_step
    assert "deviceclass.resource.kubernetes.io/gpu.example.com" in finding.next_step


def test_a_pod_on_a_node_without_the_plugin_gets_it_through_dra() -> None:
    objects = [docs_class(), plugin_node("gpu-dp-1", "4"), node("node-1"), *bound_with_claim()]

    finding = the(build(*objects), "extended-resource-device-plugin")

    assert "on the other node it allocates gpu.example.com devices through DRA" in finding.message
    assert "1 Pod asks for it (extended-resource-request/pod1): 1 through DRA." in finding.message


def test_no_device_plugin_finding_for_zero_unmapped_names_or_no_nodes() -> None:
    # Allocatable 0 is no device plugin: filterExtendedResources uses DRA there.
    assert of(build(docs_class(), plugin_node("n", "0")), "extended-resource-device-plugin") == []
    nic = node("nic-node")
    nic["status"]["allocatable"] = {"example.com/nic": "4"}  # no class maps it
    assert of(build(docs_class(), nic), "extended-resource-device-plugin") == []
    # The feature off: nothing is DRA's.
    meta = SnapshotMeta(server_version="v1.33.4")
    assert (
        of(build(docs_class(), plugin_node("n", "8"), meta=meta), "extended-resource-device-plugin")
        == []
    )


def without_nodes(*objects: dict[str, Any]) -> ClusterState:
    """A bundle imported with every kind but Nodes."""
    kinds = {k: {"status": "absent" if k == "Node" else "ok"} for k in KINDS}
    return ClusterState.build(objects, SnapshotMeta(kinds=kinds, source="import"))


def test_without_nodes_the_device_plugin_check_is_skipped_only_where_a_name_is_mapped() -> None:
    missing = the(without_nodes(docs_class(), demo_pod()), "kinds-missing")

    assert missing.message.startswith("Nodes are not in the imported bundle")
    assert missing.message.endswith(
        "so 1 check that rests on them was skipped rather than guessed: "
        "extended-resource-device-plugin."
    )

    # A class without extendedResourceName maps only its implicit name, which no device plugin
    # can advertise: no Node is needed, nothing is reported missing.
    plain = docs_class()
    del plain["spec"]["extendedResourceName"]
    assert of(without_nodes(plain, demo_pod("pod0")), "kinds-missing") == []


# --- orphaned-claim: the claim of a deleted Pod's extended resources ---------------------------


def test_the_claim_of_a_deleted_pods_extended_resources() -> None:
    _, c = bound_with_claim()

    finding = the(build(*cluster(), c), "orphaned-claim")

    assert finding.message.startswith(
        "ResourceClaim extended-resource-request/pod1-extended-resources-x7k2p is the claim of a "
        "deleted Pod's extended resources: the scheduler created it for Pod pod1 "
        "(1 gpu.example.com device), but Pod pod1 no longer exists; it is still allocated, "
        "holding 1 device (node-1/gpu-0); "
    )
    assert "garbage collector removes it through its owner reference" in finding.message
    assert "has not got to it yet" in finding.message
    assert [o["kind"] for o in finding.objects] == ["ResourceClaim", "Pod"]
    assert "uid uid-pod1" in finding.next_step
    # The reservation of the deleted Pod is its own finding, as for any claim.
    assert of(build(*cluster(), c), "reserved-for-missing-pod")


def test_the_extended_claim_of_a_recreated_pod() -> None:
    _, c = bound_with_claim()
    again = demo_pod()
    again["metadata"]["uid"] = "uid-the-new-pod1"

    finding = the(build(*cluster(), again, c), "orphaned-claim")

    assert "the Pod pod1 there is now has another uid" in finding.message
    assert "the new Pod gets a claim of its own" in finding.message


def test_an_extended_claim_that_lost_its_owner_reference() -> None:
    _, c = bound_with_claim()
    del c["metadata"]["ownerReferences"]  # kubectl delete pod --cascade=orphan

    finding = the(build(*cluster(), c), "orphaned-claim")

    assert "has no owner reference to a Pod anymore" in finding.message
    assert "will never delete it" in finding.message
    assert "status.reservedFor names Pod pod1, which the snapshot does not have" in finding.message


def test_extended_claims_in_use_or_pods_not_captured_are_not_orphaned() -> None:
    assert of(build(*cluster(), *bound_with_claim()), "orphaned-claim") == []
    # Without the owner reference, but the Pod's status still names it: in use.
    p, c = bound_with_claim()
    del c["metadata"]["ownerReferences"]
    assert of(build(*cluster(), p, c), "orphaned-claim") == []
    # A bundle without Pods proves nothing about them.
    assert of(imported(bound_with_claim()[1]), "orphaned-claim") == []


def test_a_running_pod_with_extended_resources_raises_nothing() -> None:
    """Its containers use the claim through status requestMappings, not resources.claims, so
    claim-not-used-by-container, shared-claim and allocated-unreserved have nothing to say;
    neither for a Pod that has a claim of its own in spec.resourceClaims beside it."""
    assert find(build(*cluster(), *bound_with_claim())) == []

    p, c = bound_with_claim()
    p["spec"]["resourceClaims"] = [pod_claim("nic", claim="nic")]
    p["spec"]["containers"].append(container("sidecar", "nic"))
    nic = claim("nic", NS, results=[result("nic", "gpu-1")], reserved_for=[consumer(p)])
    nic["spec"]["devices"]["requests"] = [request("nic")]
    assert find(build(*cluster(), p, c, nic)) == []
