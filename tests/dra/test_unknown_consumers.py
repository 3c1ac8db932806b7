"""A claim whose Pods are unknown is not stuck (issue 27, DESIGN "Unknown is an answer").

Real dumps often hold ResourceClaims and no Pods (`kubectl get resourceclaim … -o yaml` in a
blog post, a conformance report). Whether a Pod uses such a claim, or waits for it, is unknown:
its verdict says so (reason ``consumers-unknown``, severity ``unknown``, ``unknown: ["Pod"]``),
names the kind and how to add it, and is counted apart from the stuck ones.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dradash.dra import why
from dradash.dra.analysis import analyse, diagnosis_dict, severity
from dradash.dra.diagnosis import Diagnosis, diagnose_all, diagnose_claim
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
)

REAL = Path(__file__).parent.parent / "fixtures" / "real-dumps"
ROCM_CLAIM = "rocm-blogs__dra-gpu__resourceclaim-allocated.yaml"
VKS_CLAIM = "cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml"
VKS_SLICES = "cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml"
VKS_REF = ("gpu-test1", "dra-gpu-example-798fccd4d-sfl2p-single-gpu-d2jzk")
GPU = "gpu.example.com"


def load(*names: str) -> ClusterState:
    """The files as one import, as `dradash why -f …` and import_bundle read them."""
    files = [(name, (REAL / name).read_bytes()) for name in names]
    return why.load(files, max_bytes=1 << 24)


def imported(objects: list[dict[str, Any]], **statuses: str) -> ClusterState:
    present = {o["kind"] for o in objects}
    kinds: dict[str, dict[str, Any]] = {
        k: {"status": "ok" if k in present else "absent"} for k in KINDS
    }
    for kind, status in statuses.items():
        kinds[kind] = {"status": status, "message": f"{status} (test)"}
    source = "capture" if statuses else "import"
    meta = SnapshotMeta(server_version="v1.37.0", kinds=kinds, source=source)
    return ClusterState.build(objects, meta)


def cluster() -> list[dict[str, Any]]:
    """One node with 2 GPUs."""
    return [
        node("gpu-worker-1"),
        device_class(GPU, f'device.driver == "{GPU}"'),
        resource_slice(
            "gpu-worker-1-gpus",
            pool="gpu-worker-1",
            node_name="gpu-worker-1",
            devices=[device("gpu-0"), device("gpu-1")],
        ),
    ]


def allocated_claim() -> dict[str, Any]:
    return claim(
        "train",
        requests=[request("gpu", GPU)],
        results=[result("gpu", "gpu-0", pool="gpu-worker-1")],
        reserved_for=[{"resource": "pods", "name": "trainer", "uid": "uid-pod-trainer"}],
    )


def assert_unknown(d: Diagnosis) -> None:
    assert d.reason == "consumers-unknown"
    assert d.unknown == ["Pod"]
    assert not d.stuck
    assert severity(d) == "unknown"
    assert any(e.field == "kinds" and e.detail.startswith("Pod:") for e in d.evidence)
    assert not any(s.startswith(("Delete", "Create", "Remove")) for s in d.next_steps)


# --- the real dumps ------------------------------------------------------------------------


def test_the_rocm_claim_without_its_pod_is_unknown_not_allocated_not_bound() -> None:
    state = load(ROCM_CLAIM)
    d = diagnose_claim(state, state.claims[("gpu-test", "pod1-gpu-7j2k4")])

    assert_unknown(d)
    assert d.stage == "allocated-not-bound"  # how far the claim itself got
    assert d.summary == (
        "ResourceClaim gpu-test/pod1-gpu-7j2k4 is allocated and reserved for pod1, but the "
        "snapshot has no pods, so whether a Pod uses it is unknown."
    )
    assert d.next_steps[0] == (
        "Add the pods to the bundle and import both files together: kubectl get pods -A -o json "
        "> pods.json"
    )


def test_the_vks_claim_with_its_slices_but_no_pods_is_unknown() -> None:
    state = load(VKS_CLAIM, VKS_SLICES)
    d = diagnose_claim(state, state.claims[VKS_REF])

    assert_unknown(d)
    assert "reserved for dra-gpu-example-798fccd4d-sfl2p" in d.summary
    assert "the snapshot has no pods" in d.summary


def test_dradash_why_calls_it_unknown_in_text_and_json() -> None:
    verdict = why.verdict(load(ROCM_CLAIM), "claim", "gpu-test", "pod1-gpu-7j2k4")
    assert verdict.unknown and not verdict.healthy

    lines = why.render(verdict).splitlines()
    assert lines[1] == "unknown (consumers-unknown): allocated-not-bound so far; missing Pods"
    assert "? Allocated, not bound" in lines[2] and "✗" not in lines[2]
    body = why.as_json(verdict)
    assert (body["stage"], body["reason"]) == ("allocated-not-bound", "consumers-unknown")
    assert (body["severity"], body["unknown"]) == ("unknown", ["Pod"])


def test_the_summary_counts_unknown_claims_apart_from_the_stuck() -> None:
    result_ = analyse(load(VKS_CLAIM, VKS_SLICES))

    assert result_.summary["claim_stages"] == {}
    assert result_.summary["claims_unknown"] == 1
    assert result_.summary["unknown"]["dra_pods"] == ["Pod"]


# --- every claim verdict that rests on Pods --------------------------------------------------


def test_an_unallocated_claim_without_pods_keeps_the_allocators_answer() -> None:
    state = imported([*cluster(), claim("train", requests=[request("gpu", GPU)])])
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert_unknown(d)
    assert d.stage == "claim-unallocated"
    assert d.summary == (
        "ResourceClaim default/train is not allocated (it would allocate on gpu-worker-1), but "
        "the snapshot has no pods, so whether a Pod waits for it is unknown."
    )
    assert d.explanation is not None and d.explanation.allocatable


def test_an_unallocatable_claim_without_pods_says_why_the_allocator_cannot() -> None:
    greedy = claim("train", requests=[request("gpu", GPU, count=3)])
    state = imported([*cluster(), greedy])
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert_unknown(d)
    assert "(the allocator could not allocate it now: no-matching-devices)" in d.summary
    assert any(e.detail.startswith("allocator funnel: ") for e in d.evidence)


def test_without_nodes_either_the_allocators_answer_is_not_claimed() -> None:
    objects = [o for o in cluster() if o["kind"] != "Node"]
    greedy = claim("train", requests=[request("gpu", GPU, count=1)])
    state = imported([*objects, greedy])
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert_unknown(d)
    assert "allocator" not in d.summary


def test_pods_that_could_not_be_read_make_it_unknown_and_say_how_to_grant_them() -> None:
    state = imported([*cluster(), allocated_claim()], Pod="forbidden")
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert d.reason == "consumers-unknown" and d.unknown == ["Pod"] and not d.stuck
    assert "reading pods was forbidden" in d.summary
    assert "kubectl auth can-i list pods" in d.next_steps[0]


def test_a_capture_that_listed_no_pods_proves_the_claim_unused() -> None:
    """Listed and none found: nobody uses it, a stuck claim (and the verdict stands)."""
    objects = [*cluster(), allocated_claim()]
    kinds = {
        k: {"status": "ok" if any(o["kind"] == k for o in objects) else "absent"} for k in KINDS
    }
    state = ClusterState.build(objects, SnapshotMeta(kinds=kinds, source="capture"))
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert (d.stage, d.reason, d.unknown, d.stuck) == (
        "allocated-not-bound",
        "no-consumer",
        [],
        True,
    )
    assert severity(d) == "error"


def test_a_claim_reserved_for_a_pod_missing_from_a_bundle_with_pods_stands() -> None:
    """A bundle with Pods proves which exist: a claim reserved for one that does not is held
    for nobody, whatever the bundle lacks besides."""
    other = pod("other", claims=[])
    state = imported([*cluster(), allocated_claim(), other])
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert (d.reason, d.unknown) == ("no-consumer", [])
    assert severity(d) == "error"


@pytest.mark.parametrize("with_pods", [True, False])
def test_a_claim_is_judged_by_its_pod_when_the_bundle_has_it(with_pods: bool) -> None:
    trainer = pod(
        "trainer",
        claims=[pod_claim("gpu", claim="train")],
        node_name="gpu-worker-1",
        phase="Running",
    )
    c = allocated_claim()
    c["status"]["reservedFor"] = [consumer(trainer)]
    state = imported([*cluster(), c, *([trainer] if with_pods else [])])
    d = diagnose_all(state).claims[("default", "train")]

    if with_pods:
        assert d.unknown == [] and d.reason != "consumers-unknown"
        assert severity(d) != "unknown"
        assert diagnosis_dict(d)["unknown"] == []
    else:
        assert_unknown(d)
        assert diagnosis_dict(d)["unknown"] == ["Pod"]


def test_a_claim_being_deleted_is_a_fact_without_pods_too() -> None:
    c = allocated_claim()
    c["metadata"]["deletionTimestamp"] = "2026-08-10T11:00:00Z"
    state = imported([*cluster(), c])
    d = diagnose_claim(state, state.claims[("default", "train")])

    assert (d.reason, d.unknown) == ("claim-being-deleted", [])
