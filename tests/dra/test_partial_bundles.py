"""Findings and checklist items on bundles that lack a kind: skipped and named, never guessed.

People export what they think matters (``kubectl get resourceclaims,resourceslices``). A check
that rests on a kind the bundle does not have must not report its absence as a fact, nor propose
deleting or changing anything because of it: it is skipped, and one kinds-missing finding names
the kinds and the checks. A live capture that listed a kind and found none proves there is none.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dradash.demo import cluster as demo
from dradash.dra.checklist import evaluate
from dradash.dra.findings import NEEDS, Finding, find
from dradash.dra.kinds import KINDS
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    claim,
    consumer,
    container,
    core_event,
    device,
    device_class,
    fixture_objects,
    generated_claim,
    member,
    node,
    pod,
    pod_claim,
    podgroup,
    request,
    resource_slice,
    result,
    taint_rule,
)

DEMO_DRIVER = "gpu.nvidia.com"
DEMO_CLASS = "gpu.nvidia.com"


def scenario() -> list[dict[str, Any]]:
    """The demo cluster 30 minutes later, plus one object for each finding it lacks."""
    objects = list(demo.build(True))
    gone = pod("gone", "ml", uid="uid-gone")
    stuck = claim("stuck", "ml", deleting=True)
    stuck["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    unused = pod(
        "unused", "ml", claims=[pod_claim("gpu", claim="idle")], containers=[container("main")]
    )
    # An older class declaring the demo's nvidia.com/gpu too, and a node whose device plugin
    # advertises it.
    legacy = device_class("legacy-gpu.nvidia.com", f"device.driver == '{DEMO_DRIVER}'")
    legacy["metadata"]["creationTimestamp"] = "2020-01-01T00:00:00Z"
    legacy["spec"]["extendedResourceName"] = "nvidia.com/gpu"
    plugin_node = node("device-plugin-node")
    plugin_node["status"]["allocatable"] = {"nvidia.com/gpu": "8"}
    # A gang that can never fit (each member asks for more devices than the cluster has), one
    # of whose members holds a device while it waits, and the allocation-in-progress loop.
    huge = [
        member(pod(f"huge-{i}", "ml", claims=[pod_claim("gpu", claim=f"huge-{i}")]), "huge")
        for i in range(2)
    ]
    loop = core_event("Pod", "huge-0", "ml", "FailedScheduling", "2026-01-01T00:00:00Z")
    loop["message"] = "resource claim huge-1 is in the process of being allocated"
    objects += [
        podgroup("huge", "ml", min_count=2),
        *huge,
        claim("huge-0", "ml", requests=[request(device_class=DEMO_CLASS, count=1000)]),
        claim(
            "huge-1",
            "ml",
            results=[result(pool="nowhere", driver=DEMO_DRIVER)],
            reserved_for=[consumer(huge[1])],
        ),
        loop,
    ]
    objects += [
        generated_claim(gone, "gpu", results=[result(pool="nowhere", driver=DEMO_DRIVER)]),
        claim("idle", "ml", results=[result(pool="nowhere", driver=DEMO_DRIVER)]),
        stuck,
        claim("for-gone", "ml", results=[result(pool="nowhere")], reserved_for=[consumer(gone)]),
        unused,
        legacy,
        plugin_node,
        resource_slice("empty", pool="empty-node", devices=[], node_name="empty-node"),
        resource_slice(
            "twice", pool="twice-node", devices=[device("gpu-0"), device("gpu-0")], node_name="x"
        ),
    ]
    # A running Pod whose device the kubelet reports Unhealthy and a rule evicting it; MIG
    # partitions of a tainted GPU, still allocatable.
    sick = next(
        o
        for o in objects
        if o["kind"] == "Pod"
        and o["metadata"]["name"] == "pod0"
        and o["metadata"]["namespace"] == "gpu-test1"
    )
    sick = copy.deepcopy(sick)
    objects = [o for o in objects if not (o["kind"] == "Pod" and o["metadata"] == sick["metadata"])]
    sick["status"]["containerStatuses"][0]["allocatedResourcesStatus"] = [
        {
            "name": "claim:gpu",
            "resources": [
                {"resourceID": "gpu.example.com/gpu-example-worker-1/gpu-0", "health": "Unhealthy"}
            ],
        }
    ]
    objects += [
        sick,
        taint_rule(
            "worker-1-gpu-0",
            {"driver": "gpu.example.com", "pool": "gpu-example-worker-1", "device": "gpu-0"},
            {"key": "gpu.example.com/unhealthy", "effect": "NoExecute"},
        ),
        *fixture_objects("nvidia-gpu__SYNTH__h100-dynamic-mig-partitionable-resourceslices.yaml"),
        taint_rule(
            "h100-gpu-0",
            {"driver": "gpu.nvidia.com", "pool": "h100-dynmig-node-01", "device": "gpu-0"},
            {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"},
        ),
    ]
    return objects


def imported(objects: list[dict[str, Any]]) -> ClusterState:
    """As snapshot_store records a bundle imported without SnapshotInfo: absent means unproven."""
    kinds = {
        k: {"status": "ok" if any(o["kind"] == k for o in objects) else "absent"} for k in KINDS
    }
    return ClusterState.build(objects, SnapshotMeta(kinds=kinds, source="import"))


def codes(state: ClusterState) -> set[str]:
    return {f.code for f in find(state)}


def kinds_missing(state: ClusterState) -> Finding:
    (finding,) = [f for f in find(state) if f.code == "kinds-missing"]
    return finding


# Codes the scenario cannot raise: dra-api-not-served needs served API versions (no kind), and
# no-preemption a priority ladder of Pods, which its own tests build (test_findings).
NOT_IN_SCENARIO = {"dra-api-not-served", "no-preemption"}


def test_the_whole_scenario_raises_every_finding_and_skips_none() -> None:
    found = codes(imported(scenario()))

    assert set(NEEDS) - NOT_IN_SCENARIO <= found
    assert "kinds-missing" not in found


PAIRS = [(code, kind) for code, kinds in sorted(NEEDS.items()) for kind in kinds]


@pytest.mark.parametrize(("code", "kind"), PAIRS, ids=[f"{c}-without-{k}" for c, k in PAIRS])
def test_a_finding_is_skipped_and_named_on_a_bundle_without_a_kind_it_rests_on(
    code: str, kind: str
) -> None:
    state = imported([o for o in scenario() if o["kind"] != kind])

    assert code not in codes(state)
    missing = kinds_missing(state)
    assert code in missing.message
    plural = kind + ("es" if kind.endswith("s") else "s")
    assert f"{plural}" in missing.message
    assert "not in the imported bundle" in missing.message
    assert KINDS[kind].plural in missing.next_step
    assert missing.objects == []


def test_a_capture_that_found_no_pods_proves_there_are_none() -> None:
    objects = [o for o in scenario() if o["kind"] != "Pod"]
    kinds = {
        k: {"status": "ok" if any(o["kind"] == k for o in objects) else "absent"} for k in KINDS
    }
    captured = ClusterState.build(objects, SnapshotMeta(kinds=kinds, source="capture"))

    found = codes(captured)
    assert {"orphaned-claim", "reserved-for-missing-pod"} <= found
    assert "kinds-missing" not in found


def test_forbidden_kinds_are_named_with_why() -> None:
    objects = [o for o in scenario() if o["kind"] != "Pod"]
    kinds = {k: {"status": "ok"} for k in KINDS}
    kinds["Pod"] = {"status": "forbidden", "message": 'pods is forbidden: User "x" cannot list'}
    state = ClusterState.build(objects, SnapshotMeta(kinds=kinds, source="capture"))

    missing = kinds_missing(state)
    assert "Pods could not be read" in missing.message
    assert "forbidden" in missing.message
    assert "kubectl auth can-i list pods" in missing.next_step


def test_claims_only_bundle_proposes_no_deletion_for_what_it_lacks() -> None:
    """The issue's case: allocated claims without their Pods and slices."""
    claims = [o for o in scenario() if o["kind"] == "ResourceClaim"]
    state = imported(claims)

    found = find(state)
    raised = {f.code for f in found}
    assert not raised & {
        "dangling-allocation",
        "orphaned-claim",
        "reserved-for-missing-pod",
        "reserved-for-finished-pod",
    }
    for finding in found:
        # What is left rests on the claims' own fields (empty reservedFor, deletionTimestamp).
        assert set(NEEDS.get(finding.code, ())) <= {"ResourceClaim"}, finding.code


@pytest.mark.parametrize("kind", sorted({k for kinds in NEEDS.values() for k in kinds}))
def test_checklist_items_are_unknown_rather_than_passing_without_a_kind(kind: str) -> None:
    objects = [o for o in scenario() if o["kind"] != kind]
    state = imported(objects)
    full = {i.code: i for i in evaluate(imported(scenario()), find(imported(scenario())))}

    for item in evaluate(state, find(state)):
        if item.status == "pass":
            # A pass is only allowed where the full scenario passes too and the item never
            # needed the kind: it must not turn a problem the snapshot lacks into a pass.
            assert full[item.code].status == "pass", item.code
        if item.status == "unknown" and kind in item.summary:
            assert "not in the imported bundle" in item.summary
