"""Pods that ask for devices as extended resources, judged like any DRA Pod (issue 23): from
their creation, per node (a device plugin serves the name where the node advertises it), at
the snapshot's release, and once bound through the claim the scheduler created."""

from __future__ import annotations

from typing import Any

from dradash.dra import chain, diagnosis, extended
from dradash.dra.allocator import explain
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    DRIVER,
    claim,
    consumer,
    container,
    device,
    device_class,
    node,
    owner,
    pod,
    request,
    resource_slice,
    result,
)

GPU = "example.com/gpu"
CLASS = "gpu.example.com"


def gpu_class(name: str = CLASS, ern: str | None = GPU, created: str = "") -> dict[str, Any]:
    out = device_class(name, f'device.driver == "{DRIVER}"')
    if ern:
        out["spec"]["extendedResourceName"] = ern
    if created:
        out["metadata"]["creationTimestamp"] = created
    return out


def asking(name: str, resources: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    ctr = container("ctr0")
    ctr["resources"] = {"limits": resources}
    return pod(name, containers=[ctr], **kwargs)


def with_allocatable(obj: dict[str, Any], **allocatable: str) -> dict[str, Any]:
    obj["status"]["allocatable"] = {"cpu": "8", **allocatable}
    return obj


def cluster(*objects: dict[str, Any], version: str = "") -> ClusterState:
    base = [
        node("node-1"),
        resource_slice("s1", node_name="node-1", pool="node-1",
                       devices=[device("gpu-0"), device("gpu-1")]),
    ]  # fmt: skip
    return ClusterState.build([*base, *objects], SnapshotMeta(server_version=version))


def verdict(state: ClusterState, name: str) -> diagnosis.Diagnosis:
    return diagnosis.diagnose_pod(state, state.pods[("default", name)])


def test_a_pending_pod_asking_for_a_mapped_name_is_a_dra_pod_from_its_creation() -> None:
    state = cluster(gpu_class(), asking("train", {GPU: "1"}), asking("web", {"cpu": "1"}))
    train, web = state.pods[("default", "train")], state.pods[("default", "web")]
    assert train.uses_dra and not web.uses_dra
    assert [p.name for p in state.dra_pods] == ["train"]
    (ref,) = train.claim_refs
    assert (ref.source, ref.status, ref.containers) == (
        "extended-resource",
        "implicit",
        [("ctr0", "container-0-request-0")],
    )
    assert ref.claim is not None and ref.claim.implicit
    assert ref.claim.requests[0].exactly.count == 1
    d = verdict(state, "train")
    # it fits node-1: the scheduler has not got to it yet
    assert (d.stage, d.reason) == ("claim-unallocated", "schedulable-now")
    assert "The extended resources of Pod default/train (example.com/gpu: 1)" in d.summary
    assert "<extended-resources>" not in " ".join(d.next_steps)


def test_more_than_the_cluster_has_gets_the_funnel_reason_and_the_nodes_answers() -> None:
    state = cluster(gpu_class(), asking("train", {GPU: "3"}))
    d = verdict(state, "train")
    assert d.stage == "claim-unallocated"
    assert d.reason == "no-matching-devices"  # 2 GPUs match in all, it needs 3
    assert d.explanation is not None
    assert [n.as_dict() for n in d.explanation.nodes] == [
        {
            "node": "node-1",
            "outcome": "nofit",
            "error": "",
            "why": "only 2 devices of class gpu.example.com on this node, 3 needed",
        }
    ]
    assert d.explanation.requests[0].need == 3


def test_the_implicit_name_of_a_class_asks_that_class() -> None:
    state = cluster(gpu_class(ern=None), asking("p", {extended.CLASS_PREFIX + CLASS: "2"}))
    (ref,) = state.pods[("default", "p")].claim_refs
    assert ref.claim is not None
    assert ref.claim.requests[0].exactly.device_class_name == CLASS
    assert verdict(state, "p").reason == "schedulable-now"


def test_a_name_no_class_maps_is_not_dra() -> None:
    state = cluster(gpu_class(), asking("p", {"nvidia.com/gpu": "1"}))
    assert not state.pods[("default", "p")].uses_dra


def test_where_a_device_plugin_serves_the_name_the_node_is_judged_by_its_allocatable() -> None:
    """filterExtendedResources: node-2 advertises example.com/gpu, so its device plugin serves
    it there (NodeResourcesFit counts what the Pods on it request); node-1 has DRA devices."""
    busy = asking("busy", {GPU: "3"}, node_name="node-2", phase="Running")
    plugin_node = with_allocatable(node("node-2"), **{GPU: "4"})
    state = cluster(gpu_class(), plugin_node, busy, asking("one", {GPU: "1"}),
                    asking("three", {GPU: "3"}))  # fmt: skip

    one = verdict(state, "one")
    assert one.explanation is not None
    outcomes = {n.node: n.outcome for n in one.explanation.nodes}
    assert outcomes == {"node-1": "fit", "node-2": "fit"}  # DRA on node-1, the plugin on node-2
    # node-2 has 1 of its 4 free: three GPUs fit neither node
    three = verdict(state, "three")
    assert three.stage == "claim-unallocated" and three.reason == "no-matching-devices"
    assert three.explanation is not None
    assert [n.node for n in three.explanation.nodes] == ["node-1"]  # node-2: Insufficient
    pod_three = state.pods[("default", "three")]
    from dradash.dra.allocator import pod_node_problem

    assert pod_node_problem(pod_three, state.nodes["node-2"]) == f"Insufficient {GPU}"
    assert pod_node_problem(pod_three, state.nodes["node-1"]) is None

    # on node-2 alone (nodeSelector), the Pod asking 1 fits through the plugin: no DRA request
    alone = asking("alone", {GPU: "1"})
    alone["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "node-2"}
    state = cluster(gpu_class(), plugin_node, busy, alone)
    d = verdict(state, "alone")
    assert d.reason == "schedulable-now"
    assert f"device plugin serves {GPU}: 1" in d.summary


def test_a_resource_neither_serves_keeps_the_node_out() -> None:
    state = cluster(gpu_class(), asking("p", {GPU: "1", "example.com/nic": "1"}))
    d = verdict(state, "p")
    assert d.stage == "claim-unallocated"
    assert d.explanation is not None and d.explanation.nodes == []  # no node may take it


def test_bound_through_the_claim_the_scheduler_created() -> None:
    mapping = {"containerName": "ctr0", "resourceName": GPU, "requestName": "container-0-request-0"}
    bound = asking(
        "train",
        {GPU: "1"},
        node_name="node-1",
        phase="Running",
        extended={
            "resourceClaimName": "train-extended-resources-x7k9m",
            "requestMappings": [mapping],
        },
    )
    bound["status"]["containerStatuses"] = [
        {"name": "ctr0", "ready": True, "state": {"running": {}}}
    ]
    generated = claim(
        "train-extended-resources-x7k9m",
        requests=[request("container-0-request-0", CLASS, allocationMode="ExactCount", count=1)],
        results=[result("container-0-request-0", "gpu-0")],
        reserved_for=[consumer(bound)],
        owners=[owner("Pod", "train", bound["metadata"]["uid"])],
        annotations={extended.CLAIM_ANNOTATION: "true"},
    )
    state = cluster(gpu_class(), bound, generated)
    p = state.pods[("default", "train")]
    (ref,) = p.claim_refs
    assert (ref.status, ref.claim_name) == ("ok", "train-extended-resources-x7k9m")
    assert verdict(state, "train").stage == "healthy"
    entries = chain.pod_chain(state, p)["extended_resources"]
    assert entries == [
        {"container": "ctr0", "init": False, "resource": GPU, "quantity": 1,
         "device_class": CLASS, "served_by": "dra", "request": "container-0-request-0"}
    ]  # fmt: skip

    # Created, but the Pod's status not patched yet: found by its annotation and owner.
    del bound["status"]["extendedResourceClaimStatus"]
    bound["spec"].pop("nodeName")
    bound["status"] = {"phase": "Pending"}
    state = cluster(gpu_class(), bound, generated)
    (ref,) = state.pods[("default", "train")].claim_refs
    assert (ref.status, ref.claim_name) == ("ok", "train-extended-resources-x7k9m")


def test_served_by_the_plugin_on_its_node() -> None:
    running = asking("p", {GPU: "1"}, node_name="node-2", phase="Running")
    state = cluster(gpu_class(), with_allocatable(node("node-2"), **{GPU: "4"}), running)
    p = state.pods[("default", "p")]
    assert p.uses_dra and p.claim_refs == []
    assert [e["served_by"] for e in chain.pod_chain(state, p)["extended_resources"]] == [
        "device-plugin"
    ]


def test_older_releases_follow_the_feature_gate() -> None:
    """DRAExtendedResource: alpha (off) in 1.34 and 1.35 unless the snapshot proves it on,
    beta (on) in 1.36, GA in 1.37."""
    implicit_pod = asking("p", {extended.CLASS_PREFIX + CLASS: "1"})
    for version, explicit, dra in [
        ("v1.37.0", False, True),
        ("v1.36.2", False, True),
        ("v1.35.4", False, False),  # the gate is off: the Pod waits for a device plugin
        ("v1.35.4", True, True),  # a class's extendedResourceName shows the gate is on
        ("v1.33.1", True, False),
    ]:
        state = cluster(gpu_class(ern=GPU if explicit else None), implicit_pod, version=version)
        assert state.pods[("default", "p")].uses_dra is dra, version


def test_the_newest_class_serves_a_shared_name() -> None:
    old = gpu_class("gpu-old", created="2026-01-01T00:00:00Z")
    old["spec"]["selectors"] = [{"cel": {"expression": 'device.driver == "none"'}}]
    new = gpu_class("gpu-new", created="2026-02-01T00:00:00Z")
    state = cluster(old, new, asking("p", {GPU: "1"}))
    (ref,) = state.pods[("default", "p")].claim_refs
    assert ref.claim is not None
    assert ref.claim.requests[0].exactly.device_class_name == "gpu-new"
    assert verdict(state, "p").reason == "schedulable-now"


def test_init_containers_reuse_the_devices_of_later_containers() -> None:
    init = container("setup")
    init["resources"] = {"limits": {GPU: "1"}}
    main = container("train")
    main["resources"] = {"limits": {GPU: "2"}}
    state = cluster(gpu_class(), pod("p", containers=[main], init_containers=[init]))
    (ref,) = state.pods[("default", "p")].claim_refs
    assert ref.claim is not None
    assert [(r.name, r.exactly.count) for r in ref.claim.requests] == [("container-1-request-0", 2)]
    assert sorted(ref.containers) == [
        ("setup", "container-1-request-0"),
        ("train", "container-1-request-0"),
    ]
    assert explain(state, [ref.claim], pod=state.pods[("default", "p")]).allocatable


def test_a_claim_left_from_an_attempt_that_did_not_bind_is_named() -> None:
    """filterExtendedResources: a Pod not bound whose extended-resource claim already exists
    (allocated in an earlier cycle) is unschedulable until PostFilter deletes the claim."""
    pending = asking("train", {GPU: "1"})
    left = claim(
        "train-extended-resources-q2w3e",
        requests=[request("container-0-request-0", CLASS, allocationMode="ExactCount", count=1)],
        results=[result("container-0-request-0", "gpu-0")],
        owners=[owner("Pod", "train", pending["metadata"]["uid"])],
        annotations={extended.CLAIM_ANNOTATION: "true"},
    )
    state = cluster(gpu_class(), pending, left)
    d = verdict(state, "train")
    assert (d.stage, d.reason) == ("allocated-not-bound", "stale-extended-claim")
    assert "default/train-extended-resources-q2w3e" in d.summary
    # a claim of the Pod's spec, allocated, is not mistaken for one
    ordinary = pod("other", claims=[{"name": "gpu", "resourceClaimName": "shared"}])
    shared = claim("shared", results=[result("gpu", "gpu-1")])
    state = cluster(gpu_class(), ordinary, shared)
    assert verdict(state, "other").reason != "stale-extended-claim"


def test_the_explanation_says_where_a_device_plugin_serves_the_name() -> None:
    plugin_node = with_allocatable(node("node-2"), **{GPU: "4"})
    state = cluster(gpu_class(), plugin_node, asking("p", {GPU: "1"}))
    d = verdict(state, "p")
    assert d.explanation is not None
    assert [n.as_dict() for n in d.explanation.nodes] == [
        {"node": "node-1", "outcome": "fit", "error": ""},
        {"node": "node-2", "outcome": "fit", "error": "", "device_plugin": [GPU]},
    ]
