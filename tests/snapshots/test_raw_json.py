"""The stored text of an object is json.dumps's, byte for byte, however raw_json makes it.

Stored digests are taken of this text, and equal objects must give equal text whether they come
from a bundle or a capture, today or in a year: a change would store every object again and
break the dedupe against what is stored already. raw_json makes most text with orjson; these
tests hold it to the text of json.dumps, the format it has always been.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dradash.demo.cluster import build
from dradash.dra.bundle import BundleError, parse_bundle
from dradash.snapshots.services import raw_json
from tests.fuzz.strategies import fuzz_settings
from tests.kubeapi import fixture_objects, legacy_v1beta1_objects

FIXTURES = Path(__file__).parent.parent / "fixtures" / "upstream"


def reference(obj: Any) -> str:
    """The stored format: compact, UTF-8, NaN refused."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def corpus_objects() -> list[dict[str, Any]]:
    """Every object of the real driver manifests that import."""
    objects: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.iterdir()):
        try:
            bundle = parse_bundle([(path.name, path.read_bytes())], max_bytes=10**8)
        except BundleError:
            continue
        objects += bundle.objects.values()
    return objects


def test_every_fixture_and_demo_object_gets_the_text_json_dumps_gives() -> None:
    objects = [
        *build(False),
        *build(True),
        *fixture_objects(),
        *legacy_v1beta1_objects(),
        *corpus_objects(),
    ]
    assert len(objects) > 500
    for obj in objects:
        assert raw_json(obj) == reference(obj), obj


EDGE_VALUES: list[Any] = [
    "Grüße, 東京, ΔΣ",
    "line\u2028separator\u2029paragraph",
    "delete\x7f",
    "controls\x00\x01\x08\x09\x0a\x0c\x0d\x1b\x1f",
    'quote " backslash \\ slash /',
    "emoji 😀 and astral \U0010ffff",
    "\ufeffbyte order mark, \ufffd replacement",
    "\\u00e9 escaped text stays text",
    "e-7, 0.0000 and null inside a string",
    1e21,
    1e16,
    1234567890123456.7,
    0.1,
    -0.0,
    0.0,
    100.0,
    1e-4,
    9.99e-5,
    1e-5,
    -2.5e-05,
    1e-6,
    1.234e-7,
    1e-9,
    1.5e-10,
    5e-324,
    1.7976931348623157e308,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    -(2**63),
    -(2**63) - 1,
    10**100,
    None,
    True,
    False,
    [],
    {},
]


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_edge_cases_get_the_text_json_dumps_gives(value: Any) -> None:
    obj = {"kind": "ConfigMap", "data": {"value": value, "list": [value, {"k": value}]}}
    assert raw_json(obj) == reference(obj)


def test_keys_keep_their_order_and_odd_keys_their_text() -> None:
    obj = {"z": 1, "a": 2, "": 3, "ü\u2028": 4, "\x00": 5, "m": {"y": 1, "b": 2}}
    assert raw_json(obj) == reference(obj)
    assert raw_json(obj).startswith('{"z":1,"a":2,"":3')


def test_deep_nesting_gets_the_same_text() -> None:
    obj: dict[str, Any] = {"leaf": 0.5e-5}
    for _ in range(300):  # deeper than orjson goes
        obj = {"next": [obj]}
    assert raw_json(obj) == reference(obj)


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_numbers_json_cannot_hold_are_refused_as_before(number: float) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        raw_json({"spec": {"value": [number]}})


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@fuzz_settings(2000)
@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4))
def test_any_json_object_gets_the_text_json_dumps_gives(obj: dict[str, Any]) -> None:
    assert raw_json(obj) == reference(obj)
