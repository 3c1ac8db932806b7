"""The recorded corpora (tests/dra/cel/data/cases-1.36.jsonl.gz and cases-1.37.jsonl.gz, from
/work/shared/cel): 3,000 random selectors each, every one paired with a device and the outcome
Kubernetes' DRA CEL environment gave (k8s.io/dynamic-resource-allocation v0.36.2, and 1.37's
development code, as the scheduler compiles and evaluates them). Every case must end the same
way here: a compile error, a runtime error, true or false; and a runtime error is the cost
limit's exactly when it was in Kubernetes (dradash charges costs before calls, cel-go after)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from dradash.dra.cel import CelCompileError, CelEvalError, DeviceInput, cel_device, compile_selector
from dradash.dra.cel.dialect import Dialect

DATA = Path(__file__).parent / "data"
# The recordings' schedulers: 1.36's and 1.37's default gates.
RELEASES = {36: Dialect(release=36), 37: Dialect(release=37)}


def load(release: int) -> list[dict[str, Any]]:
    with gzip.open(DATA / f"cases-1.{release}.jsonl.gz", "rt") as lines:
        return [json.loads(line) | {"release": release} for line in lines]


CASES = load(36) + load(37)
COST_LIMIT = "actual cost limit exceeded"


def recorded(expect: dict[str, Any]) -> str:
    if expect["compile_error"]:
        return "compile error"
    if expect["runtime_error"]:
        return "runtime error"
    return "true" if expect["matches"] else "false"


def outcome(case: dict[str, Any]) -> tuple[str, str]:
    device = case["device"]
    value = DeviceInput(
        driver=case["driver"],
        attributes=device.get("attributes") or {},
        capacity=device.get("capacity") or {},
        allow_multiple_allocations=bool(device.get("allowMultipleAllocations")),
    )
    try:
        program = compile_selector(case["expression"], RELEASES[case["release"]])
    except CelCompileError as exc:
        return "compile error", str(exc)
    try:
        matches = program.matches(cel_device(value, program.list_values))
        return ("true" if matches else "false"), ""
    except CelEvalError as exc:
        return "runtime error", str(exc)


@pytest.mark.parametrize(
    ("release", "mix"),
    [
        (36, {"true": 1145, "false": 1081, "runtime error": 253, "compile error": 521}),
        (37, {"true": 1158, "false": 1056, "runtime error": 314, "compile error": 472}),
    ],
)
def test_the_corpus_has_every_kind_of_outcome(release: int, mix: dict[str, int]) -> None:
    kinds = [recorded(c["expect"]) for c in CASES if c["release"] == release]
    assert len(kinds) == 3000
    assert {k: kinds.count(k) for k in set(kinds)} == mix


@pytest.mark.parametrize("case", CASES, ids=[f"1.{c['release']}-{c['name']}" for c in CASES])
def test_each_case_ends_as_it_did_in_kubernetes(case: dict[str, Any]) -> None:
    kind, message = outcome(case)
    assert kind == recorded(case["expect"]), (case["expression"], message)
    assert (COST_LIMIT in message) == (COST_LIMIT in case["expect"]["error_text"]), message
