"""Reasons under DESIGN's funnel rule, summaries that name what was lost on the way, and verdicts
on snapshots that lack a kind they rest on (issue 15, and issue 14's part for the diagnosis).

The reason of an unallocatable claim is the first funnel step where fewer devices remain, over
every node the Pod may use, than the request needs. When the verdict needs a kind the snapshot
does not prove absent (not exported, forbidden), it is ``snapshot-incomplete``, naming the kind
and how to capture it, and no next step proposes deleting or changing anything.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dradash.demo import cluster as demo
from dradash.dra.analysis import severity
from dradash.dra.diagnosis import Diagnosis, diagnose_all, diagnose_claim, diagnose_pod
from dradash.dra.kinds import KINDS
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    claim,
    consumer,
    device,
    device_class,
    node,
    pod,
    pod_claim,
    request,
    resource_slice,
    result,
    template,
)

GPU = "gpu.example.com"
INDEX = f'device.attributes["{GPU}"].index'


def imported(objects: list[dict[str, Any]], version: str = "v1.37.0") -> ClusterState:
    """A snapshot imported from a bundle: the kinds it holds are "ok", the others "absent"
    (which proves nothing: people export only some kinds)."""
    present = {o["kind"] for o in objects}
    kinds = {k: {"status": "ok" if k in present else "absent"} for k in KINDS}
    meta = SnapshotMeta(server_version=version, kinds=kinds, source="import")
    return ClusterState.build(objects, meta)


def captured(objects: list[dict[str, Any]], **statuses: str) -> ClusterState:
    """A live capture where some kinds could not be read (e.g. Node="forbidden")."""
    present = {o["kind"] for o in objects}
    kinds: dict[str, dict[str, Any]] = {
        k: {"status": "ok" if k in present else "absent"} for k in KINDS
    }
    for kind, status in statuses.items():
        kinds[kind] = {"status": status, "message": f"{status} (test)"}
    meta = SnapshotMeta(server_version="v1.37.0", kinds=kinds, source="capture")
    return ClusterState.build(objects, meta)


def waiting_pod(selector: str | None = None, count: int = 2) -> list[dict[str, Any]]:
    """A Pending Pod with claim "train" asking for ``count`` GPUs (optionally selected)."""
    fields: dict[str, Any] = {"count": count}
    if selector:
        fields["selectors"] = [{"cel": {"expression": selector}}]
    return [
        claim("train", requests=[request("gpu", GPU, **fields)]),
        pod("trainer", claims=[pod_claim("gpu", claim="train")]),
    ]


def gpus(node_name: str, *names: str, pool: str = "", count: int = 1) -> dict[str, Any]:
    return resource_slice(
        f"{pool or node_name}-gpus",
        pool=pool or node_name,
        node_name=node_name,
        count=count,
        devices=[device(n) for n in names],
    )


def four_free_gpus() -> list[dict[str, Any]]:
    """The walkthrough's bundle: one node with 4 free GPUs."""
    return [
        node("gpu-worker-1"),
        device_class(GPU, f'device.driver == "{GPU}"'),
        gpus("gpu-worker-1", "gpu-0", "gpu-1", "gpu-2", "gpu-3"),
    ]


def trainer(state: ClusterState) -> Diagnosis:
    return diagnose_pod(state, state.pods[("default", "trainer")])


# --- the three walkthrough cases of issue 15 ------------------------------------------------


def test_a_selector_that_admits_one_of_four_free_gpus_is_no_matching_devices() -> None:
    """One node, 4 free GPUs, a selector admitting 1, a 2-GPU request: the selector is the
    problem, not the count (it used to say insufficient-count: "no single node has enough")."""
    d = trainer(imported([*four_free_gpus(), *waiting_pod(f"{INDEX} == 0")]))
    assert (d.stage, d.reason) == ("claim-unallocated", "no-matching-devices")
    assert d.summary == (
        "Only 1 device matches request gpu of default/train (class and request selectors); it "
        "needs 2; 3 free devices of its class do not match its selectors."
    )
    assert d.explanation is not None
    (request_,) = d.explanation.requests
    assert dict(request_.funnel)["request-selectors"] == 1 and request_.need == 2
    assert request_.short_step == "request-selectors"
    assert any("playground" in step for step in d.next_steps)


def test_the_same_bundle_without_nodes_still_blames_the_selector() -> None:
    """Without Node objects the selector step still decides: it comes before the nodes."""
    objects = [o for o in four_free_gpus() if o["kind"] != "Node"]
    d = trainer(imported([*objects, *waiting_pod(f"{INDEX} == 0")]))
    assert d.reason == "no-matching-devices"


def test_without_nodes_a_verdict_that_needs_them_is_snapshot_incomplete() -> None:
    """Enough devices match; whether a node the Pod may use has them needs the Nodes: the
    verdict says so instead of blaming the devices (it used to say devices-unreachable)."""
    objects = [o for o in four_free_gpus() if o["kind"] != "Node"]
    d = trainer(imported([*objects, *waiting_pod(f"{INDEX} <= 1")]))
    assert (d.stage, d.reason) == ("claim-unallocated", "snapshot-incomplete")
    assert d.summary == (
        "2 free devices in usable pools match request gpu of default/train (it needs 2), but "
        "which nodes the Pod may use is unknown: the snapshot has no nodes."
    )
    assert d.next_steps[0] == (
        "Add the nodes to the bundle and import both files together: kubectl get nodes -o json "
        "> nodes.json"
    )
    assert any(e.field == "kinds" and e.detail.startswith("Node:") for e in d.evidence)
    assert d.explanation is not None  # the funnel is still shown


def test_free_gpus_in_an_incomplete_pool_are_named_when_the_rest_are_allocated() -> None:
    """A Pod waits while 4 free GPUs sit in an incomplete pool: every usable device is
    allocated, and the summary says where the 4 free ones are (it used to say nothing)."""
    holder = claim(
        "holder",
        "other",
        requests=[request("gpu", GPU, count=2)],
        results=[
            result("gpu", "gpu-0", pool="gpu-worker-1"),
            result("gpu", "gpu-1", pool="gpu-worker-1"),
        ],
    )
    objects = [
        node("gpu-worker-1"),
        node("gpu-example-worker-3"),
        device_class(GPU, f'device.driver == "{GPU}"'),
        gpus("gpu-worker-1", "gpu-0", "gpu-1"),
        gpus("gpu-example-worker-3", "gpu-0", "gpu-1", "gpu-2", "gpu-3", count=2),
        holder,
        *waiting_pod(count=1),
    ]
    d = trainer(imported(objects))
    assert (d.stage, d.reason) == ("claim-unallocated", "devices-exhausted")
    assert d.summary == (
        "Every device matching request gpu of default/train is already allocated to other "
        "claims (2 devices held by other/holder); 4 more are free, enough for it, but in pool "
        f"{GPU}/gpu-example-worker-3, which has 1 of 2 slices (incomplete pools are skipped "
        "until the driver has published all of them)."
    )
    # The best single action first: the pool whose free devices would serve, and what
    # completes it.
    assert d.next_steps[0].startswith(
        f"Complete pool {GPU}/gpu-example-worker-3: 4 free devices there match request gpu "
        "(1 needed), "
        f"but driver {GPU} has published 1 of the pool's 2 ResourceSlices"
    )
    assert (
        f"--field-selector spec.driver={GPU},spec.nodeName=gpu-example-worker-3" in d.next_steps[0]
    )


# --- the funnel rule, reason by reason ------------------------------------------------------


def test_fewer_free_devices_than_needed_anywhere_is_devices_exhausted() -> None:
    """3 free of 4 needed, all on one node: exhausted, not insufficient-count."""
    holder = claim(
        "holder",
        "other",
        requests=[request("gpu", GPU)],
        results=[result("gpu", "gpu-0", pool="gpu-worker-1")],
    )
    d = trainer(imported([*four_free_gpus(), holder, *waiting_pod(count=4)]))
    assert d.reason == "devices-exhausted"
    assert d.summary.startswith(
        "Only 3 devices matching request gpu of default/train are free (it needs 4)"
    )


def test_enough_free_devices_but_not_on_one_node_is_insufficient_count() -> None:
    objects = [
        node("n1"),
        node("n2"),
        device_class(GPU, f'device.driver == "{GPU}"'),
        gpus("n1", "gpu-0", "gpu-1"),
        gpus("n2", "gpu-0", "gpu-1"),
        *waiting_pod(count=3),
    ]
    d = trainer(imported(objects))
    assert d.reason == "insufficient-count"
    assert d.summary == (
        "4 usable devices are free for request gpu of default/train, but no node the Pod may "
        "use has 3 of them (at most 2, on n1)."
    )


def test_devices_on_nodes_the_pod_may_not_use_are_unreachable_and_named() -> None:
    objects = [*four_free_gpus(), *waiting_pod(count=1)]
    objects[-1]["spec"]["nodeSelector"] = {"pool": "inference"}
    d = trainer(imported(objects))
    assert d.reason == "devices-unreachable"
    assert "on node gpu-worker-1, which the Pod may not use: node(s) didn't match Pod's node" in (
        d.summary
    )


def test_tainted_devices_with_free_untainted_ones_lost_to_the_selector() -> None:
    objects = four_free_gpus()
    slice_ = objects[2]
    for d in slice_["spec"]["devices"][:2]:
        d["taints"] = [{"key": "xid", "value": "79", "effect": "NoSchedule"}]
    # gpu-0 and gpu-1 are tainted; the selector admits them only: the free gpu-2 and gpu-3
    # match the class but not the request.
    d = trainer(imported([*objects, *waiting_pod(f"{INDEX} <= 1", count=1)]))
    assert d.reason == "devices-tainted"
    assert d.summary == (
        "No free device matching request gpu of default/train tolerates the taints on it (it "
        "needs 1): the others carry taints the request does not tolerate (taint "
        "xid=79:NoSchedule not tolerated); 2 free devices of its class do not match its selectors."
    )


# --- every node that does not fit says why (issue 27 item 3) --------------------------------


def node_whys(d: Diagnosis) -> dict[str, tuple[str, str]]:
    assert d.explanation is not None
    return {n.node: (n.outcome, n.why) for n in d.explanation.nodes}


def test_a_node_with_tainted_devices_says_which_taint() -> None:
    objects = four_free_gpus()
    for d in objects[2]["spec"]["devices"][:3]:
        d["taints"] = [{"key": "xid", "value": "79", "effect": "NoSchedule"}]
    d = trainer(imported([*objects, *waiting_pod(count=2)]))
    assert d.reason == "devices-tainted"
    assert node_whys(d) == {
        "gpu-worker-1": (
            "nofit",
            "1 of 2 needed with taints it tolerates: 3 devices: taint xid=79:NoSchedule not "
            "tolerated",
        )
    }


def test_a_node_whose_devices_satisfy_no_constraint_names_the_constraint() -> None:
    """4 free GPUs, two per NUMA node; 3 that share one: enough devices, no set."""
    objects = four_free_gpus()
    for i, d in enumerate(objects[2]["spec"]["devices"]):
        d["attributes"]["numa"] = {"int": i // 2}
    objects += waiting_pod(count=3)
    objects[-2]["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{GPU}/numa"}]
    d = trainer(imported(objects))
    assert d.reason == "constraint-unsatisfiable"
    assert node_whys(d) == {
        "gpu-worker-1": (
            "nofit",
            f"no 3 of its 4 usable devices satisfy constraint matchAttribute {GPU}/numa",
        )
    }


def test_a_node_whose_devices_match_no_selector_and_one_without_the_class() -> None:
    objects = [*four_free_gpus(), node("cpu-worker-1")]
    d = trainer(imported([*objects, *waiting_pod(f"{INDEX} > 7", count=1)]))
    assert d.reason == "no-matching-devices"
    assert node_whys(d) == {
        "cpu-worker-1": ("nofit", f"no device of class {GPU} on this node"),
        "gpu-worker-1": (
            "nofit",
            f"none of its 4 devices of class {GPU} matches the request's selectors",
        ),
    }
    # no node reaches a matching device: "enough on one node" names none
    assert d.explanation is not None and d.explanation.requests[0].node is None


def test_requests_that_fit_alone_but_not_together_say_so() -> None:
    objects = four_free_gpus()
    objects += [
        claim("train", requests=[request("a", GPU, count=3), request("b", GPU, count=2)]),
        pod("trainer", claims=[pod_claim("gpu", claim="train")]),
    ]
    d = trainer(imported(objects))
    assert node_whys(d) == {
        "gpu-worker-1": (
            "nofit",
            "each request has enough devices here on its own, but not all of them together "
            "(they compete for the same devices)",
        )
    }


# --- snapshot-incomplete: each reason on a bundle without the kind it rests on --------------


def _no(kind: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] != kind]


def _incomplete(d: Diagnosis, kind: str) -> None:
    assert d.reason == "snapshot-incomplete", (d.reason, d.summary)
    plural = KINDS[kind].plural
    assert f"the snapshot has no {plural}" in d.summary or plural in d.summary
    assert any(e.field == "kinds" and e.detail.startswith(f"{kind}:") for e in d.evidence)
    assert not any(s.startswith(("Delete", "Create", "Remove")) for s in d.next_steps)


def _unknown(d: Diagnosis, kind: str) -> None:
    """Not a verdict: whether the object is stuck at all needs ``kind`` (issue 27)."""
    assert (d.reason, d.unknown, d.stuck) == ("consumers-unknown", [kind], False), d.summary
    assert severity(d) == "unknown"
    assert f"the snapshot has no {KINDS[kind].plural}" in d.summary
    assert any(e.field == "kinds" and e.detail.startswith(f"{kind}:") for e in d.evidence)
    assert not any(s.startswith(("Delete", "Create", "Remove")) for s in d.next_steps)


def test_class_missing_needs_the_device_classes() -> None:
    objects = [*_no("DeviceClass", four_free_gpus()), *waiting_pod()]
    _incomplete(trainer(imported(objects)), "DeviceClass")
    # With the classes exported, a missing class is a fact.
    objects = [*four_free_gpus(), *waiting_pod()]
    objects[-2]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "other"
    assert trainer(imported(objects)).reason == "class-missing"


def test_no_slices_needs_the_resource_slices() -> None:
    objects = [*_no("ResourceSlice", four_free_gpus()), *waiting_pod()]
    _incomplete(trainer(imported(objects)), "ResourceSlice")
    # A capture that listed slices and found none proves there are none.
    assert trainer(captured(objects)).reason == "no-slices"


def test_devices_unreachable_needs_the_nodes() -> None:
    objects = [*_no("Node", four_free_gpus()), *waiting_pod(count=1)]
    _incomplete(trainer(imported(objects)), "Node")


def test_a_forbidden_kind_says_how_to_grant_it() -> None:
    objects = [*_no("Node", four_free_gpus()), *waiting_pod(count=1)]
    d = trainer(captured(objects, Node="forbidden"))
    assert d.reason == "snapshot-incomplete"
    assert "reading nodes was forbidden" in d.summary
    assert d.next_steps[0].startswith("Grant dradash's ClusterRole get, list and watch on nodes")


def test_schedulable_now_needs_the_events() -> None:
    objects = [*four_free_gpus(), *waiting_pod(count=1)]
    d = trainer(imported(objects))
    _incomplete(d, "Event")
    assert d.summary.startswith("default/train would allocate now on node gpu-worker-1")
    # With events exported (none of them a timeout), the verdict is schedulable-now.
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "trainer", "namespace": "default"},
        "reason": "Scheduled",
        "message": "Successfully assigned",
    }
    assert trainer(imported([*objects, event])).reason == "schedulable-now"


def test_waiting_for_the_kubelet_needs_the_events() -> None:
    objects = [*four_free_gpus(), *waiting_pod(count=1)]
    objects[-2]["status"] = {
        "allocation": {"devices": {"results": [result("gpu", "gpu-0", pool="gpu-worker-1")]}},
        "reservedFor": [consumer(objects[-1])],
    }
    objects[-1]["spec"]["nodeName"] = "gpu-worker-1"
    objects[-1]["status"] = {
        "phase": "Pending",
        "containerStatuses": [
            {"name": "ctr0", "state": {"waiting": {"reason": "ContainerCreating"}}}
        ],
    }
    d = trainer(imported(objects))
    assert d.stage == "device-not-prepared"
    _incomplete(d, "Event")


def test_claim_missing_needs_the_claims() -> None:
    objects = [*four_free_gpus(), waiting_pod()[1]]
    d = trainer(imported(objects))
    assert d.stage == "pod-pending"
    _incomplete(d, "ResourceClaim")


def test_template_missing_and_claim_not_created_need_templates_and_claims() -> None:
    p = pod("trainer", claims=[pod_claim("gpu", template="gpu-template")])
    d = trainer(imported([*four_free_gpus(), p]))
    assert d.stage == "pod-pending"
    _incomplete(d, "ResourceClaimTemplate")
    # The template is there, the generated claim is not: it may exist in the cluster.
    t = template("gpu-template", requests=[request("gpu", GPU)])
    d = trainer(imported([*_no("ResourceClaim", four_free_gpus()), p, t]))
    _incomplete(d, "ResourceClaim")


def test_an_allocated_claim_without_pods_is_never_to_be_deleted() -> None:
    """Issue 14: a bundle with slices and allocated claims but no Pods. The claim's Pods were
    not exported; deleting the claim would kill a running workload's device."""
    allocated = claim(
        "train",
        requests=[request("gpu", GPU)],
        results=[result("gpu", "gpu-0", pool="gpu-worker-1")],
        reserved_for=[{"resource": "pods", "name": "trainer", "uid": "uid-pod-trainer"}],
    )
    state = imported([*_no("Node", four_free_gpus()), allocated])
    d = diagnose_claim(state, state.claims[("default", "train")])
    assert d.stage == "allocated-not-bound"
    _unknown(d, "Pod")
    assert d.summary == (
        "ResourceClaim default/train is allocated and reserved for trainer, but the snapshot has "
        "no pods, so whether a Pod uses it is unknown."
    )
    assert d.next_steps[0] == (
        "Add the pods to the bundle and import both files together: kubectl get pods -A -o json "
        "> pods.json"
    )
    assert not any("Delete" in s for s in d.next_steps)
    # A capture that listed Pods and found none of them proves nobody uses it.
    state = captured([*four_free_gpus(), allocated])
    d = diagnose_claim(state, state.claims[("default", "train")])
    assert d.reason == "no-consumer" and any("Delete" in s for s in d.next_steps)


def test_an_unallocated_claim_without_pods_is_not_called_unused() -> None:
    state = imported([*four_free_gpus(), waiting_pod()[0]])
    d = diagnose_claim(state, state.claims[("default", "train")])
    assert d.stage == "claim-unallocated"
    _unknown(d, "Pod")
    assert d.summary == (
        "ResourceClaim default/train is not allocated (it would allocate on gpu-worker-1), but "
        "the snapshot has no pods, so whether a Pod waits for it is unknown."
    )
    assert d.explanation is not None and d.explanation.allocatable


def test_node_conflict_needs_the_nodes() -> None:
    objects = [*_no("Node", four_free_gpus()), *waiting_pod(count=1)]
    objects[-2]["status"] = {
        "allocation": {
            "devices": {"results": [result("gpu", "gpu-0", pool="gpu-worker-1")]},
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["gpu-worker-1"]}
                        ]
                    }
                ]
            },
        }
    }
    d = trainer(imported(objects))
    assert d.stage == "allocated-not-bound"
    _incomplete(d, "Node")


def test_verdicts_that_need_no_missing_kind_stand() -> None:
    """A selector error, a class missing among exported classes, a too-large request: proven
    whatever else the bundle lacks."""
    objects = _no("Node", four_free_gpus())
    error = trainer(imported([*objects, *waiting_pod(f'device.attributes["{GPU}"].nope', 1)]))
    assert error.reason == "selector-error"
    greedy = trainer(imported([*objects, *waiting_pod(count=33)]))
    assert greedy.reason == "too-many-devices"


@pytest.mark.parametrize("kind", ["Pod", "Node", "Event", "ResourceClaimTemplate", "Job"])
def test_no_next_step_deletes_or_changes_anything_on_a_partial_demo_bundle(kind: str) -> None:
    """Every Pod and claim of the demo cluster, exported without one kind: wherever a verdict
    turns snapshot-incomplete (or unknown: a claim without Pods), its next steps only read or
    capture."""
    objects = [o for o in copy.deepcopy(demo.build()) if o["kind"] != kind]
    result_ = diagnose_all(imported(objects, demo.SERVER_VERSION))
    verdicts = [*result_.pods.values(), *result_.claims.values()]
    incomplete = [d for d in verdicts if d.reason in ("snapshot-incomplete", "consumers-unknown")]
    if kind in ("Pod", "Node", "Event"):
        assert incomplete
    for d in incomplete:
        for step in d.next_steps:
            assert not step.startswith(("Delete", "Create", "Remove", "Fix", "Free")), step
    if kind == "Pod":
        assert not any(d.reason == "no-consumer" for d in verdicts)
        # Whether a claim is in use needs its Pods: none is stuck, each is unknown.
        claims = list(result_.claims.values())
        assert not any(d.stuck for d in claims if d.reason != "claim-being-deleted")
        assert all(d.unknown == ["Pod"] for d in claims if d.reason != "claim-being-deleted")
