"""The recorded corpus of upstream allocator outcomes, replayed: 100 %, not "about".

``data/oracle-cases-1.36.jsonl.gz`` is ``shared/oracle/cases-1.36.jsonl.gz`` (format in its
README): 1,500 small random clusters and what ``k8s.io/dynamic-resource-allocation`` v0.36.2
decided for one Pod's pending claims on each node. The port is driven as kube-scheduler drives
upstream's: one ``Allocator`` built from the allocated claims, every slice (with DeviceTaintRules
applied) and every class, then one ``allocate`` per node. Every node's outcome (fit, nofit,
node-error, error) and error text must equal the recording; where the claims fit under the
``incubating`` implementation, the devices chosen too (results in order, admin access, whether a
share ID was set, consumed capacity as quantities). Where upstream's ``stable`` implementation
ran (neither ConsumableCapacity, DeviceBindingAndStatus nor ListTypeAttributes on), it walked the
pools in Go map order, so only the outcome is compared.
"""

from __future__ import annotations

import copy
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dradash.dra.allocator import Allocator, Features
from dradash.dra.cel.quantity import Quantity
from dradash.dra.objects import ResourceClaim
from dradash.dra.state import ClusterState

CORPUS = Path(__file__).parent / "data" / "oracle-cases-1.36.jsonl.gz"


@cache
def corpus() -> dict[str, dict[str, Any]]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    return {c["name"]: c for c in cases}


def features(gates: dict[str, bool]) -> Features:
    """structured.Features of a line, as the port's Features (1.36 rules otherwise)."""
    return Features(
        prioritized_list=gates["PrioritizedList"],
        admin_access=gates["AdminAccess"],
        device_taints=gates["DeviceTaints"],
        partitionable_devices=gates["PartitionableDevices"],
        consumable_capacity=gates["ConsumableCapacity"],
        binding_conditions=gates["DeviceBindingAndStatus"],
        list_type_attributes=gates["ListTypeAttributes"],
        release=36,
    )


def _result(r: dict[str, Any]) -> tuple[Any, ...]:
    consumed = r.get("consumedCapacity") or {}
    return (
        r["request"],
        r["driver"],
        r["pool"],
        r["device"],
        bool(r.get("adminAccess")),
        "shareID" in r,
        tuple(sorted((k, Quantity.parse(v)._value.normalize()) for k, v in consumed.items())),
    )


def replay(case: dict[str, Any]) -> list[str]:
    """The differences between the port and the recording, one line each."""
    given = case["input"]
    gates = features(given["features"])
    state = ClusterState.build(
        [
            *given["nodes"],
            *given["resourceSlices"],
            *given["deviceClasses"],
            *given["deviceTaintRules"],
            *given["allocatedClaims"],
        ]
    )
    claims = [ResourceClaim(copy.deepcopy(c)) for c in given["claims"]]
    allocator = Allocator(state, gates, exclude=claims)
    problems = []
    for expected in case["expect"]["nodes"]:
        node = expected["node"]
        got = allocator.allocate(state.nodes[node], claims)
        if got.error is not None:
            outcome = "node-error" if got.node_error else "error"
        else:
            outcome = "nofit" if got.allocations is None else "fit"
        if (outcome, got.error or "") != (expected["outcome"], expected["error"]):
            problems.append(
                f"{node}: {outcome} {got.error or ''!r}, recorded {expected['outcome']} "
                f"{expected['error']!r}"
            )
        elif outcome == "fit" and gates.implementation != "stable":
            mine = [[_result(r) for r in a["devices"]["results"]] for a in got.allocations or []]
            theirs = [[_result(r) for r in a] for a in expected["allocations"]]
            if mine != theirs:
                problems.append(f"{node}: chose {mine}, recorded {theirs}")
    return problems


def test_the_corpus_is_the_shared_one() -> None:
    cases = corpus()
    assert len(cases) == 1500
    assert sum(len(c["expect"]["nodes"]) for c in cases.values()) == 3889
    assert {c["profile"] for c in cases.values()} == {"plain", "advanced", "mixed"}


@pytest.mark.parametrize("name", sorted(corpus()))
def test_recorded_outcome(name: str) -> None:
    assert replay(corpus()[name]) == []


def test_stable_ran_where_the_readme_says() -> None:
    """v0.36.2 picks stable when ConsumableCapacity, DeviceBindingAndStatus and
    ListTypeAttributes are all off; the corpus has such lines, and incubating ones."""
    kinds = {features(c["input"]["features"]).implementation for c in corpus().values()}
    assert kinds == {"stable", "incubating"}
