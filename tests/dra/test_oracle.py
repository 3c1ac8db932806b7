"""The recorded corpora of upstream allocator outcomes, replayed: 100 %, not "about".

``data/oracle-cases-1.36.jsonl.gz`` and ``oracle-cases-1.37.jsonl.gz`` are
``shared/oracle/cases-1.3x.jsonl.gz`` (format in its README): 1,500 small random clusters each
and what ``k8s.io/dynamic-resource-allocation`` decided for one Pod's pending claims on each node
(v0.36.2; 1.37 development code at 3d036712930c, whose lines compare with
DRAFractionalCapacityRange off, as 1.37 ships it until the compatibility version is 1.37).
The port is driven as kube-scheduler drives upstream's: one ``Allocator`` built from the
allocated claims, every slice (with DeviceTaintRules applied) and every class, then one
``allocate`` per node. Every node's outcome (fit, nofit,
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
from dradash.dra.objects import ResourceClaim
from dradash.dra.state import ClusterState
from tests.oracle_bundle import comparable

DATA = Path(__file__).parent / "data"


@cache
def corpus(release: int = 36) -> dict[str, dict[str, Any]]:
    with gzip.open(DATA / f"oracle-cases-1.{release}.jsonl.gz", "rt", encoding="utf-8") as fh:
        cases = [json.loads(line) for line in fh]
    return {c["name"]: c | {"release": release} for c in cases}


def features(gates: dict[str, bool], release: int = 36) -> Features:
    """structured.Features of a line, as the port's Features (the release's rules otherwise)."""
    return Features(
        prioritized_list=gates["PrioritizedList"],
        admin_access=gates["AdminAccess"],
        device_taints=gates["DeviceTaints"],
        partitionable_devices=gates["PartitionableDevices"],
        consumable_capacity=gates["ConsumableCapacity"],
        binding_conditions=gates["DeviceBindingAndStatus"],
        list_type_attributes=gates["ListTypeAttributes"],
        fractional_capacity_range=gates.get("FractionalCapacityRange", False),
        release=release,
    )


def replay(case: dict[str, Any]) -> list[str]:
    """The differences between the port and the recording, one line each."""
    given = case["input"]
    gates = features(given["features"], case["release"])
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
            mine = [[comparable(r) for r in a["devices"]["results"]] for a in got.allocations or []]
            theirs = [[comparable(r) for r in a] for a in expected["allocations"]]
            if mine != theirs:
                problems.append(f"{node}: chose {mine}, recorded {theirs}")
    return problems


@pytest.mark.parametrize(
    ("release", "nodes", "profiles"),
    [
        (36, 3889, {"plain", "advanced", "mixed"}),
        (37, 3900, {"plain", "advanced", "mixed", "v137"}),
    ],
)
def test_the_corpus_is_the_shared_one(release: int, nodes: int, profiles: set[str]) -> None:
    cases = corpus(release)
    assert len(cases) == 1500
    assert sum(len(c["expect"]["nodes"]) for c in cases.values()) == nodes
    assert {c["profile"] for c in cases.values()} == profiles


@pytest.mark.parametrize("name", sorted(corpus(36)))
def test_recorded_outcome(name: str) -> None:
    assert replay(corpus(36)[name]) == []


@pytest.mark.parametrize("name", sorted(corpus(37)))
def test_recorded_outcome_137(name: str) -> None:
    assert replay(corpus(37)[name]) == []


def test_stable_ran_where_the_readme_says() -> None:
    """v0.36.2 picks stable when ConsumableCapacity, DeviceBindingAndStatus and
    ListTypeAttributes are all off; the corpus has such lines, and incubating ones."""
    kinds = {features(c["input"]["features"]).implementation for c in corpus().values()}
    assert kinds == {"stable", "incubating"}
