"""YAML bundles are read as a stream, an object at a time: the same objects (or a refusal) as
PyYAML's safe loader reading the whole file, and memory that does not grow with the file."""

from __future__ import annotations

import io
import json
import math
import tracemalloc
from collections.abc import Hashable
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from dradash.dra.bundle import BundleError, parse_bundle
from tests.fuzz.strategies import SPECIAL_INPUTS, fuzz_settings, mutated_documents


class KeyTwice(ValueError):
    pass


class WholeFile(yaml.CSafeLoader):
    """The safe loader, timestamps kept as text (as dradash keeps them), refusing a key given
    twice in one mapping (merge keys aside), which dradash refuses where the loader keeps the
    last value."""

    def flatten_mapping(self, node: Any) -> None:
        keys = [
            # "=" is the string "=" (flatten_mapping makes it one)
            key.value if key.tag == "tag:yaml.org,2002:value" else self.construct_object(key)
            for key, _ in node.value
            if key.tag != "tag:yaml.org,2002:merge"
        ]
        hashable = [key for key in keys if isinstance(key, Hashable)]
        if len(set(hashable)) != len(hashable):
            raise KeyTwice
        super().flatten_mapping(node)


WholeFile.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


def outcome(name: str, data: bytes) -> Any:
    try:
        bundle = parse_bundle([(name, io.BytesIO(data))], max_bytes=10**8)
    except BundleError as exc:
        return ("refused", exc.filename)
    return ("parsed", list(bundle.objects.items()), dict(bundle.ignored), bundle.info)


def plain(value: Any) -> bool:
    """Whether JSON holds the value as it is (string keys, finite numbers)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def whole_file(data: bytes) -> list[Any] | None:
    """The file's objects as the safe loader reads it whole (its non-empty documents, a
    top-level sequence's items), or None when it refuses the file, the file has aliases, a key
    twice in one mapping, or a value JSON cannot hold."""
    try:
        text = data.decode("utf-8-sig")
        if any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=WholeFile)):
            return None
        found: list[Any] = []
        for doc in yaml.load_all(text, Loader=WholeFile):
            if doc is not None:
                found.extend(doc if isinstance(doc, list) else [doc])
        return found if plain(found) else None
    except (yaml.YAMLError, ValueError, RecursionError):  # too deep for plain() too
        return None


YAML_CASES = [
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n, <<: {labels: {a: b}}}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata:\n  <<: [{name: q}, {name: r, namespace: s}]\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {x: [yes, no, on, 0x1f, 1_000, ~]}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {'=': 1, x: 2001-12-14}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {=: 1, x: 2}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: !!map {=: 1, '=': 2}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: !!map {x: !!str 1, y: !!int '2'}\n",
    b"apiVersion: v1\nitems:\n- kind: Pod\n  metadata: {name: a}\n- metadata: {name: b}\n"
    b"kind: PodList\n",
    b"items:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\nkind: List\n---\n"
    b"- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: &m {name: p}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, name: q}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, <<: {name: q, namespace: s}}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, <<: {namespace: q, namespace: s}}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: !!map {name: p, name: q}\n",
    b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\napiVersion: v1\nkind: Pod\n",
]


@fuzz_settings(max_examples=300)
@given(data=st.one_of(mutated_documents(), st.sampled_from(YAML_CASES + SPECIAL_INPUTS)))
def test_streamed_yaml_reads_as_the_safe_loader_reads_the_whole_file(data: bytes) -> None:
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
        return  # read as JSON
    expected = whole_file(data)
    if expected == []:
        return  # an empty file, or one without objects: test_bundle.py says what then
    streamed = outcome("f", data)
    if expected is None:
        assert streamed == ("refused", "f")
    else:
        assert streamed == outcome("f", json.dumps(expected).encode())


def kubectl_yaml(count: int) -> bytes:
    """What `kubectl get pods -o yaml` prints: one List, its items (Pods of 2 KB) in block
    style."""
    pods = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p-{i}", "namespace": "ml", "labels": {"i": str(i)}},
            "spec": {"containers": [{"name": "main", "image": "busybox", "args": ["x" * 2000]}]},
        }
        for i in range(count)
    ]
    body = {"apiVersion": "v1", "items": pods, "kind": "List", "metadata": {}}
    return yaml.dump(body, Dumper=yaml.CSafeDumper).encode()


def peak_parsing(data: bytes) -> int:
    """Peak bytes allocated while parsing the file as an upload is parsed (each object handed
    to a sink that keeps nothing)."""
    tracemalloc.start()
    try:
        parse_bundle([("pods.yaml", io.BytesIO(data))], max_bytes=10**9, on_object=lambda k, o: 0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_yaml_list_is_parsed_in_a_fraction_of_its_size() -> None:
    small, large = kubectl_yaml(1_000), kubectl_yaml(4_000)  # 2 and 9 MB

    small_peak, large_peak = peak_parsing(small), peak_parsing(large)

    # Read whole, the file took 7 times its size (34 times with smaller objects). A stream
    # holds a window of the text and one object at a time, and each object's key (to find
    # duplicates): a further object costs its key, not its size.
    assert large_peak < len(large) / 1.5, (large_peak, len(large))
    assert large_peak - small_peak < 3_000 * 1_024, (small_peak, large_peak)


@pytest.mark.parametrize("documents", [1, 3])
def test_yaml_and_json_of_the_same_objects_are_the_same_bundle(documents: int) -> None:
    data = b"---\n".join([kubectl_yaml(20)] * documents)
    as_json = json.dumps(list(yaml.safe_load_all(data))).encode()

    assert outcome("pods.yaml", data) == outcome("pods.json", as_json)
