"""A key given twice in one mapping is refused, naming the file and the line (issue 27): YAML and
JSON readers keep the last value, so two `kubectl get -o yaml` outputs joined with `cat` would
import as the second file alone."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dradash.dra.bundle import BundleError, parse_bundle

REAL_DUMPS = Path(__file__).parent.parent / "fixtures" / "real-dumps"
SLICES = "cncf-ai-conformance__v1.36-vks__vgpu-a100-10c-resourceslices.yaml"
CLAIMS = "cncf-ai-conformance__v1.36-vks__resourceclaims-allocated.yaml"


def pods(*names: str) -> dict[str, Any]:
    """`kubectl get pods -o yaml` output, as a dict."""
    return {
        "apiVersion": "v1",
        "items": [
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": n, "namespace": "ml"}}
            for n in names
        ],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


def refused(name: str, data: bytes, *, stream: bool, skip_invalid: bool = False) -> BundleError:
    """The error for a file read whole (bytes) or as a stream (a file object)."""
    source: Any = io.BytesIO(data) if stream else data
    with pytest.raises(BundleError) as caught:
        parse_bundle(
            [(name, source)],
            max_bytes=10**8,
            stream_over=0 if stream else 10**9,
            skip_invalid=skip_invalid,
        )
    assert caught.value.filename == name
    return caught.value


def line_of(data: bytes, text: bytes, occurrence: int) -> int:
    """The line (from 1) of the ``occurrence``-th (from 1) line that starts with ``text``."""
    starts = [i for i, line in enumerate(data.split(b"\n"), 1) if line.startswith(text)]
    return starts[occurrence - 1]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("skip_invalid", [False, True])
def test_two_yaml_lists_joined_with_cat_are_refused_at_the_second_ones_first_key(
    stream: bool, skip_invalid: bool
) -> None:
    slices, claims = (REAL_DUMPS / SLICES).read_bytes(), (REAL_DUMPS / CLAIMS).read_bytes()
    joined = slices + claims  # what `cat slices.yaml claims.yaml > both.yaml` writes

    error = refused("both.yaml", joined, stream=stream, skip_invalid=skip_invalid)

    second = line_of(joined, b"apiVersion:", 2)
    assert second == slices.count(b"\n") + 1
    assert error.problem.startswith(
        f"document 1 has the key 'apiVersion' twice (again at line {second}, first at line 1)"
    )
    assert "two files joined without `---` between them" in error.problem
    assert "put a line `---` between them, or upload them as separate files" in error.problem


def test_the_same_files_with_a_document_separator_are_one_bundle() -> None:
    slices, claims = (REAL_DUMPS / SLICES).read_bytes(), (REAL_DUMPS / CLAIMS).read_bytes()

    bundle = parse_bundle([("both.yaml", slices + b"---\n" + claims)], max_bytes=10**8)

    assert sorted(kind for kind, _, _ in bundle.objects) == [
        "ResourceClaim",
        "ResourceSlice",
        "ResourceSlice",
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_two_single_objects_joined_are_refused_too(stream: bool) -> None:
    pod = yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}})
    data = (pod + pod.replace("name: a", "name: b")).encode()

    error = refused("pods.yaml", data, stream=stream)

    assert line_of(data, b"apiVersion:", 2) == 5
    assert "has the key 'apiVersion' twice (again at line 5, first at line 1)" in error.problem


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("text", "line"),
    [
        # block style, inside a List item
        (
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n"
            "    name: p\n    labels:\n      team: a\n      team: b\n",
            10,
        ),
        # flow style
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p,\n  name: q}\n", 4),
        # a mapping with a tag of its own
        ("apiVersion: v1\nkind: Pod\nmetadata: !!map {name: p,\n  name: q}\n", 4),
        # in what a merge key (<<) merges
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, <<: {namespace: a,\n  namespace: b}}\n",
            4,
        ),
        # the same key written two ways
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  'name': q\n", 5),
    ],
)
def test_a_key_twice_in_a_nested_yaml_mapping_is_refused_with_its_line(
    text: str, line: int, stream: bool
) -> None:
    error = refused("pod.yaml", text.encode(), stream=stream)

    assert error.problem.startswith("document 1 has the key ")
    assert f"twice in one mapping (again at line {line})" in error.problem
    assert "YAML keeps only the last value" in error.problem


def test_a_merge_key_may_bring_in_keys_the_mapping_sets_itself() -> None:
    """What YAML's merge key is for: the mapping's own keys win, nothing is given twice."""
    data = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, <<: {name: q, namespace: s}}\n"

    bundle = parse_bundle([("pod.yaml", data)], max_bytes=10**8)

    assert list(bundle.objects) == [("Pod", "s", "p")]


@pytest.mark.parametrize("stream", [False, True])
def test_a_key_twice_at_the_top_of_a_json_object_is_refused_with_line_and_column(
    stream: bool,
) -> None:
    data = b'{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "p"},\n  "kind": "Job"}'

    error = refused("pod.json", data, stream=stream)

    assert error.problem.startswith(
        "document 1 has the key 'kind' twice in one object (again at line 3 column 3, first at "
        "line 1)"
    )
    assert "JSON readers keep only the last value" in error.problem


@pytest.mark.parametrize("stream", [False, True])
def test_a_key_twice_in_a_json_list_is_refused(stream: bool) -> None:
    """The List's own keys (as the API server writes a typed list) and, in files read whole,
    its items' keys at every level."""
    data = json.dumps(pods("a"), indent=1).replace(
        '"kind": "List"', '"kind": "List", "kind": "PodList"'
    )

    error = refused("pods.json", data.encode(), stream=stream)

    assert "has the key 'kind' twice in one object" in error.problem
    if not stream:
        nested = json.dumps(pods("a", "b"), indent=1).replace(
            '"name": "b"', '"name": "b",\n "name": "c"'
        )
        error = refused("pods.json", nested.encode(), stream=False)
        assert "has the key 'name' twice in one object (again at line" in error.problem


@pytest.mark.parametrize("stream", [False, True])
def test_a_key_twice_inside_a_single_json_object_is_refused(stream: bool) -> None:
    data = (
        b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1",\n'
        b'  "a": "2"}}}'
    )

    error = refused("pod.json", data, stream=stream)

    assert error.problem.startswith(
        "document 1 has the key 'a' twice in one object (again at line 2 column 3, first at line 1)"
    )


@pytest.mark.parametrize("stream", [False, True])
def test_two_json_files_joined_say_what_they_look_like(stream: bool) -> None:
    data = (json.dumps(pods("a"), indent=2) + "\n" + json.dumps(pods("b"), indent=2)).encode()

    error = refused("pods.json", data, stream=stream)

    assert error.problem.startswith("invalid JSON: Extra data at line ")
    assert "two JSON files joined together" in error.problem
    assert "upload them as separate files" in error.problem


def test_json_without_keys_twice_reads_as_before() -> None:
    data = json.dumps(pods("a", "b")).encode()

    whole = parse_bundle([("p.json", data)], max_bytes=10**8)
    streamed = parse_bundle([("p.json", io.BytesIO(data))], max_bytes=10**8, stream_over=0)

    assert whole.objects == streamed.objects
    assert list(whole.objects) == [("Pod", "ml", "a"), ("Pod", "ml", "b")]
