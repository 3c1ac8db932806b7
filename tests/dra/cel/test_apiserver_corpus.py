"""The API server's verdict on a new selector (tests/dra/cel/data/cases-1.37.jsonl.gz, from
/work/shared/cel): for each of the 3,000 recorded selectors, whether kube-apiserver 1.37 accepts
it in a new ResourceClaim or DeviceClass, with ``DRAListTypeAttributes`` off
(``expect_apiserver``) and on (``expect_apiserver_lists``). That is the length check, then
``CompileCELExpression`` in the NewExpressions environment with the static cost estimate: a
worst-case cost above 1,000,000 is refused as "too complex, exceeds cost limit".

dradash must refuse exactly those, for the same kind of reason."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from dradash.dra.cel import CelCompileError, compile_selector
from dradash.dra.cel.dialect import Dialect

DATA = Path(__file__).parent / "data"
TOO_COMPLEX = "too complex, exceeds cost limit"
GATES = (("expect_apiserver", False), ("expect_apiserver_lists", True))


def load() -> list[dict[str, Any]]:
    with gzip.open(DATA / "cases-1.37.jsonl.gz", "rt") as lines:
        return [json.loads(line) for line in lines]


CASES = load()
PARAMS = [
    pytest.param(case, key, lists, id=f"{case['name']}-{'lists' if lists else 'default'}")
    for case in CASES
    for key, lists in GATES
]


@pytest.mark.parametrize(
    ("key", "refused", "too_complex"),
    [
        ("expect_apiserver", 1981, 44),
        ("expect_apiserver_lists", 568, 96),
    ],
)
def test_the_recordings_refuse_some_selectors_for_their_cost(
    key: str, refused: int, too_complex: int
) -> None:
    assert len(CASES) == 3000
    assert sum(c[key]["compile_error"] for c in CASES) == refused
    assert sum(TOO_COMPLEX in c[key]["error_text"] for c in CASES) == too_complex


@pytest.mark.parametrize(("case", "key", "lists"), PARAMS)
def test_the_apiserver_accepts_a_new_selector_as_kubernetes_does(
    case: dict[str, Any], key: str, lists: bool
) -> None:
    expect = case[key]
    try:
        compile_selector(
            case["expression"], Dialect(release=37, list_types=lists).as_new_expression()
        )
        message = None
    except CelCompileError as exc:
        message = str(exc)
    assert (message is not None) == expect["compile_error"], (case["expression"], message)
    recorded_cost = TOO_COMPLEX in expect["error_text"]
    assert (message is not None and TOO_COMPLEX in message) == recorded_cost, message
