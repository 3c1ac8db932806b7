"""The demo cluster's gang (DESIGN "Kubernetes 1.37 workloads" → "Gangs"): the JobSet
``llm-train``'s four workers, one A100 each, scheduled as one PodGroup with minCount 4. Each
would fit alone; together only three do, as the A100 node has three GPUs free."""

from __future__ import annotations

import pytest

from dradash.demo import cluster as demo
from dradash.dra import gangs
from dradash.dra.diagnosis import diagnose_pod, gang_summary
from dradash.dra.state import ClusterState, SnapshotMeta

NS = "llm-train"


def state_of(later: bool) -> ClusterState:
    return ClusterState.build(demo.build(later), SnapshotMeta(server_version=demo.SERVER_VERSION))


@pytest.fixture(scope="module", params=[False, True], ids=["first", "later"])
def state(request: pytest.FixtureRequest) -> ClusterState:
    return state_of(request.param)


def the_gang(state: ClusterState) -> gangs.Gang:
    return gangs.judge(state, state.podgroups[(NS, "llm-train")])


def test_the_podgroup_and_its_workload_are_read(state: ClusterState) -> None:
    group = state.podgroups[(NS, "llm-train")]
    assert (group.policy, group.min_count) == ("gang", 4)
    assert group.workload is state.workloads[(NS, "llm-train")]
    assert group.workload.controller == "JobSet llm-train"
    assert group.template_ref == ("llm-train", "workers")
    assert group.scheduled_condition is not None and not group.scheduled
    assert gangs.condition_text(group) == (
        "PodGroupScheduled=False (Unschedulable: pod group is unschedulable)"
    )
    assert [p.name[:-6] for p in group.pods] == [f"llm-train-workers-0-{i}" for i in range(4)]


def test_three_of_the_four_members_fit_together_and_the_fourth_breaks_the_gang(
    state: ClusterState,
) -> None:
    gang = the_gang(state)
    assert (gang.state, gang.min_count, gang.fit) == ("does-not-fit", 4, 3)
    assert [p.node for p in gang.placements] == ["a100-node-01"] * 3 + [None]
    assert gang.breaking is gang.placements[3]
    fourth = gang.members[3].name
    assert fourth.startswith("llm-train-workers-0-3-")
    assert gang_summary(gang) == (
        f"Gang {NS}/llm-train needs all 4 member Pods placed together, but only 3 fit at "
        f"once; the first that does not is Pod {fourth}."
    )


def test_each_member_would_fit_alone(state: ClusterState) -> None:
    for pod in the_gang(state).members:
        (placement,) = gangs.replay(state, [pod])
        assert placement.node == "a100-node-01", pod.name


def test_every_member_gets_the_gang_verdict_next_to_its_own(state: ClusterState) -> None:
    gang = the_gang(state)
    fourth = gang.members[3].name
    for pod in gang.members:
        d = diagnose_pod(state, pod)
        assert (d.stage, d.reason) == ("claim-unallocated", "gang-does-not-fit"), pod.name
        assert d.alone is not None
        assert (d.alone.stage, d.alone.reason) == ("claim-unallocated", "schedulable-now")
        assert "only 3 fit at once" in d.summary
        assert f"the first that does not is Pod {fourth}" in d.summary
        # Why the fourth does not: the A100s left are held, three by the members before it.
        assert (
            "(4 devices held by earlier members of gang llm-train/llm-train (3) and "
            "smoke/cuda-smoke-gpu-z2c5k (1))" in d.summary
        )
        assert ("PodGroup", "status.conditions") in {(e.kind, e.field) for e in d.evidence}
        events = [e.detail for e in d.evidence if e.field == "event FailedScheduling"]
        assert len(events) == 1
        if pod.name == fourth:
            assert "5 cannot allocate all claims" in events[0]
        else:
            assert events[0].startswith(
                "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
            )


def test_the_members_claims_are_generated_for_each_pod_and_unallocated(
    state: ClusterState,
) -> None:
    for pod in the_gang(state).members:
        (claim,) = pod.claims
        assert claim.owner_pod is pod
        assert claim.pod_claim_name == "gpu"
        assert not claim.allocated and not claim.consumers


def test_the_later_snapshot_still_holds_the_gang_stuck() -> None:
    first, later = state_of(False), state_of(True)
    assert the_gang(later).state == the_gang(first).state == "does-not-fit"
    counts = [
        sum(
            e.count for p in the_gang(s).members for e in p.events if e.reason == "FailedScheduling"
        )
        for s in (first, later)
    ]
    assert counts == [40, 64]
