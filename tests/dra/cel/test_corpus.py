"""The recorded corpus (tests/dra/cel/data/cases-1.36.jsonl.gz, from /work/shared/cel): 3,000
random selectors, each paired with a device and the outcome Kubernetes' DRA CEL environment
(k8s.io/dynamic-resource-allocation v0.36.2, as the scheduler compiles and evaluates them) gave.
Every case must end the same way here: a compile error, a runtime error, true or false."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from dradash.dra.cel import CelCompileError, CelEvalError, DeviceInput, cel_device, compile_selector
from dradash.dra.cel.dialect import Dialect

KUBERNETES_1_36 = Dialect(release=36)  # the recording's scheduler: 1.36's default gates

CORPUS = Path(__file__).parent / "data" / "cases-1.36.jsonl.gz"
with gzip.open(CORPUS, "rt") as lines:
    CASES = [json.loads(line) for line in lines]


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
        program = compile_selector(case["expression"], KUBERNETES_1_36)
    except CelCompileError as exc:
        return "compile error", str(exc)
    try:
        return ("true" if program.matches(cel_device(value)) else "false"), ""
    except CelEvalError as exc:
        return "runtime error", str(exc)


def test_the_corpus_has_every_kind_of_outcome() -> None:
    kinds = [recorded(c["expect"]) for c in CASES]
    assert len(CASES) == 3000
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "true": 1145,
        "false": 1081,
        "runtime error": 253,
        "compile error": 521,
    }


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_case_ends_as_it_did_in_kubernetes(case: dict[str, Any]) -> None:
    kind, message = outcome(case)
    assert kind == recorded(case["expect"]), (case["expression"], message)
