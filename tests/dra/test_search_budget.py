"""The allocator's search has a budget of allocateOne calls, its stand-in for kube-scheduler's
filter timeout (dradash/dra/allocator/budget.py): a node whose search runs out has the outcome
"timeout", reported as the scheduler of the snapshot's release reports it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dradash.dra.allocator import Allocator, Features, SearchBudget, explain
from dradash.dra.allocator.budget import Cancelled
from dradash.dra.analysis import analyse
from dradash.dra.objects import ResourceClaim
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import claim, device, device_class, node, pod, pod_claim, request, resource_slice

GPU = "gpu.example.com"


def grouped(name: str, groups: str) -> list[dict[str, Any]]:
    """One GPU per letter of ``groups``, with that letter as attribute ``group``."""
    return [device(f"gpu-{i}", attributes={"group": {"string": g}}) for i, g in enumerate(groups)]


def same_group(count: int) -> dict[str, Any]:
    """A claim for ``count`` GPUs that share one ``group``."""
    out = claim("train", requests=[request("gpus", GPU, count=count)])
    out["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{GPU}/group"}]
    return out


def cluster(groups: dict[str, str], *extra: dict[str, Any], version: str = "") -> ClusterState:
    """A node per entry, with GPUs in those groups, and a Pod using claim ``train``."""
    objects = [device_class(GPU, f'device.driver == "{GPU}"')]
    for name, letters in groups.items():
        objects.append(node(name))
        objects.append(
            resource_slice(
                f"{name}-gpus", pool=name, node_name=name, devices=grouped(name, letters)
            )
        )
    objects.append(pod("trainer", claims=[pod_claim("gpus", claim="train")]))
    return ClusterState.build([*objects, *extra], SnapshotMeta(server_version=version))


def allocate(state: ClusterState, calls: int) -> Any:
    train = state.claims[("default", "train")]
    allocator = Allocator(state, Features.of(state), exclude=[train], budget=SearchBudget(calls))
    return allocator.allocate(state.nodes["n1"], [train])


def test_a_budget_just_big_enough_fits_and_one_call_less_times_out() -> None:
    # 4 "a" GPUs first, then 6 "b": 5 of one group are only found after trying the a's.
    state = cluster({"n1": "aaaabbbbbb"}, same_group(5))
    needed = allocate(state, 10_000).calls
    assert needed > 16  # it had to backtrack through the sets of a's

    enough = allocate(state, needed)
    assert enough.allocations is not None and not enough.timed_out
    assert {r["device"] for r in enough.allocations[0]["devices"]["results"]} == {
        f"gpu-{i}" for i in range(4, 9)
    }

    short = allocate(state, needed - 1)
    assert short.timed_out and short.allocations is None
    assert short.calls == needed  # the call over the budget stops it, as ctx.Err() would


def test_releases_before_136_try_every_order_and_so_count_more_calls() -> None:
    # 6 of one group where each has 5: 1.36's allocator tries each set of a group once (2^5
    # per group), 1.35's every order of them (326 per group).
    groups = {"n1": "aaaaabbbbb"}
    new = cluster(groups, same_group(6))
    old = cluster(groups, same_group(6), version="v1.35.2")
    assert allocate(new, 10_000).calls == 2 * 2**5 - 1
    assert allocate(old, 10_000).calls == 2 * (1 + 5 + 20 + 60 + 120 + 120) - 1
    assert allocate(old, 600).timed_out and not allocate(new, 600).timed_out


def verdict(state: ClusterState, calls: int) -> Any:
    """The Pod's diagnosis in an analysis whose searches get ``calls`` calls."""
    return next(r.diagnosis for r in analyse(state, SearchBudget(calls)).pods)


def explain_train(state: ClusterState, calls: int, **kwargs: Any) -> Any:
    return explain(
        state,
        [state.claims[("default", "train")]],
        pod=state.pods[("default", "trainer")],
        features=Features.of(state),
        every_node=True,
        budget=SearchBudget(calls, **kwargs),
    )


def test_since_136_a_timeout_fails_the_attempt_even_where_another_node_fits() -> None:
    # n1: no 4 of one group, and 2^4 sets to try; n2: 4 b's.
    state = cluster({"n1": "aaabbb", "n2": "bbbb"}, same_group(4))
    x = explain_train(state, calls=10)
    assert x.allocatable is None
    assert x.error == "node n1: timed out trying to allocate devices"
    assert x.reason == "allocation-timeout"
    assert [(n.node, n.outcome) for n in x.nodes] == [("n1", "timeout"), ("n2", "fit")]
    found = verdict(state, calls=10)
    assert (found.stage, found.reason) == ("claim-unallocated", "allocation-timeout")


def test_in_134_and_135_a_timed_out_node_is_one_that_does_not_fit() -> None:
    fits_elsewhere = cluster({"n1": "aaabbb", "n2": "bbbb"}, same_group(4), version="v1.35.0")
    x = explain_train(fits_elsewhere, calls=10)
    assert (x.allocatable, x.node) == (True, "n2")
    assert x.nodes[0].as_dict() == {
        "node": "n1",
        "outcome": "timeout",
        "error": "timed out trying to allocate devices",
    }

    nowhere = cluster({"n1": "aaabbb"}, same_group(4), version="v1.34.1")
    x = explain_train(nowhere, calls=10)
    assert (x.allocatable, x.reason, x.message) == (
        False,
        "allocation-timeout",
        "timed out trying to allocate devices",
    )
    found = verdict(nowhere, calls=10)
    assert found.reason == "allocation-timeout"
    assert 'kube-scheduler stops too, with "timed out trying to allocate devices"' in found.summary
    assert "1 node of the 1 the Pod may use searched, 1 timed out" in found.summary
    assert any("filterTimeout" in step for step in found.next_steps)


def test_before_134_the_scheduler_has_no_filter_timeout_and_the_verdict_says_so() -> None:
    state = cluster({"n1": "aaabbb"}, same_group(4), version="v1.33.4")
    x = explain_train(state, calls=10)
    assert x.reason == "allocation-timeout"
    assert "no filter timeout" in x.nodes[0].error
    found = verdict(state, calls=10)
    assert "has no filter timeout (it came in 1.34): it keeps searching" in found.summary


def test_an_analysis_searches_16_nodes_that_run_out_and_names_those_it_left() -> None:
    state = cluster({f"n{i:02}": "aaabbb" for i in range(20)}, same_group(4), version="v1.35.0")
    budget = SearchBudget(10)
    x = explain(
        state,
        [state.claims[("default", "train")]],
        pod=state.pods[("default", "trainer")],
        features=Features.of(state),
        every_node=True,
        budget=budget,
    )
    assert (x.timed_out_nodes, x.not_searched, budget.timed_out) == (16, 4, 16)
    assert [n.outcome for n in x.nodes] == ["timeout"] * 16  # the rest are not listed
    assert not x.nodes_complete

    # A second claim on the same budget is not searched at all, and says so.
    again = explain(
        state,
        [state.claims[("default", "train")]],
        features=Features.of(state),
        every_node=True,
        budget=budget,
    )
    assert (again.reason, again.searched_nodes, again.not_searched) == ("allocation-timeout", 0, 20)


def test_once_16_searches_ran_out_ordinary_claims_are_still_answered() -> None:
    state = cluster({"n1": "a" * 15 + "b" * 15}, same_group(16))
    spent = SearchBudget(timed_out=16)  # an analysis that met 16 searches running out
    ordinary = ResourceClaim(claim("one", requests=[request("gpus", GPU, count=2)]))
    x = explain(state, [ordinary], features=Features.of(state), every_node=True, budget=spent)
    assert (x.allocatable, x.node) == (True, "n1")  # searched with the few calls left
    x = explain_train(state, calls=spent.calls, timed_out=16)  # 2^16 calls, more than left
    assert (x.reason, x.searched_nodes, x.not_searched, x.nodes) == (
        "allocation-timeout",
        0,
        1,
        [],
    )


def test_too_few_devices_is_no_quick_answer_when_the_search_would_run_out() -> None:
    # As kube-scheduler's FilterTimeout test (21 devices asked of a node with 20): the search
    # does not count the devices first, it tries every set of them (here 2^10) and runs out.
    state = ClusterState.build(
        [
            node("n1"),
            device_class(GPU, f'device.driver == "{GPU}"'),
            resource_slice(
                "n1-gpus",
                pool="n1",
                node_name="n1",
                devices=[device(f"gpu-{i}") for i in range(10)],
            ),
            claim("train", requests=[request("gpus", GPU, count=11)]),
            pod("trainer", claims=[pod_claim("gpus", claim="train")]),
        ]
    )
    assert explain_train(state, calls=2**10 - 1).nodes[0].outcome == "timeout"
    assert explain_train(state, calls=2**10).nodes[0].outcome == "nofit"


def test_cancelling_the_budget_stops_a_search_from_another_thread() -> None:
    state = cluster({"n1": "a" * 30 + "b" * 30}, same_group(31))
    budget = SearchBudget(calls=1 << 40, seconds=600)
    train = state.claims[("default", "train")]
    allocator = Allocator(state, Features.of(state), exclude=[train], budget=budget)
    threading.Timer(0.2, lambda: setattr(budget, "cancelled", True)).start()
    with pytest.raises(Cancelled):
        allocator.allocate(state.nodes["n1"], [ResourceClaim(train.raw)])


def test_a_device_dradash_stopped_evaluating_makes_the_search_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A selector verdict that dradash's time safety net left unknown (cel/budget.py) is not
    an error the allocator would stop with, nor a device that does not match: the search
    stops as dradash's clock stops it (by_clock), an outcome the diagnosis calls unknown."""
    from dradash.dra.allocator.index import Unknown, selector_verdicts, snapshot_index

    monkeypatch.setattr("dradash.dra.cel.budget.NET_SECONDS", -1.0)  # run out at the first look
    state = cluster({"n1": "aabb"}, claim("train", requests=[request("gpus", GPU, count=1)]))
    gpu = state.classes[GPU]
    gpu.spec["selectors"] = [{"cel": {"expression": "lists.range(1000).all(i, i >= 0)"}}]
    result = allocate(state, 10_000)
    assert result.timed_out and result.by_clock
    assert result.allocations is None and result.error is None
    verdicts = selector_verdicts(
        snapshot_index(state), gpu, [], "default/train", Features.of(state).cel
    )
    assert all(isinstance(v, Unknown) for v in verdicts)
    assert "CEL runtime error" not in verdicts[0]
    assert "its own limit, not Kubernetes'" in verdicts[0]
