"""Large JSON bundles are parsed as a stream: the same objects, or a refusal, as read whole."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given

from dradash.dra.bundle import BundleError, parse_bundle
from tests.fuzz.strategies import fuzz_settings, mutated_documents


def outcome(data: bytes, *, stream: bool) -> Any:
    source: Any = io.BytesIO(data) if stream else data
    try:
        bundle = parse_bundle(
            [("f.json", source)], max_bytes=10**8, stream_over=0 if stream else 10**12
        )
    except BundleError as exc:
        return ("refused", exc.filename)
    return ("parsed", list(bundle.objects.items()), dict(bundle.ignored), bundle.info)


def plain_json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


@fuzz_settings(max_examples=150)
@given(data=mutated_documents())
def test_streamed_json_reads_as_the_whole_file_does(data: bytes) -> None:
    doc = plain_json(data)
    if doc is None:
        return  # not JSON: YAML, read whole either way
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        kind = doc.get("kind")
        if not (isinstance(kind, str) and kind.endswith("List")):
            return  # streamed, "items" of something not a List is refused (see below)
    assert outcome(data, stream=True) == outcome(data, stream=False)


def test_a_streamed_list_names_the_item_and_line_of_a_problem() -> None:
    items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}} for i in range(3)]
    items[2]["metadata"] = {}
    data = json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=1).encode()

    try:
        parse_bundle([("f.json", io.BytesIO(data))], max_bytes=10**8, stream_over=0)
    except BundleError as exc:
        assert "document 1, List item 3: Pod has no metadata.name" in str(exc)
    else:
        raise AssertionError("not refused")
    truncated = data[: len(data) // 2]
    try:
        parse_bundle([("f.json", io.BytesIO(truncated))], max_bytes=10**8, stream_over=0)
    except BundleError as exc:
        assert str(exc).startswith("f.json: truncated JSON: ")
        lines = truncated.count(b"\n") + 1
        assert f"line {lines} " in str(exc)
    else:
        raise AssertionError("not refused")


def test_streamed_items_of_something_that_is_not_a_list_are_refused() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}
    data = json.dumps({"apiVersion": "v1", "items": [pod], "kind": "Pod"}).encode()
    try:
        parse_bundle([("f.json", io.BytesIO(data))], max_bytes=10**8, stream_over=0)
    except BundleError as exc:
        assert "has items but is a Pod, not a List" in str(exc)
    else:
        raise AssertionError("not refused")


def test_a_list_whose_items_are_null_is_refused_streamed_as_read_whole() -> None:
    """ "items": null is no list: the List is an object of its own, without a name (streamed,
    it was taken for an empty List)."""
    data = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": None}).encode()

    for stream in (True, False):
        source: Any = io.BytesIO(data) if stream else data
        try:
            parse_bundle([("f.json", source)], max_bytes=10**8, stream_over=0 if stream else 10**9)
        except BundleError as exc:
            assert str(exc) == "f.json: document 1: List has no metadata.name"
        else:
            raise AssertionError(f"not refused (stream={stream})")
