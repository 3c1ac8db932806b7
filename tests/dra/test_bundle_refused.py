"""Bundles that would import as less than they hold (issue 27): one with no object dradash reads
is refused saying why (check_usable); with skip_invalid, invalid objects are left out and
recorded (Bundle.refused) instead of refusing the bundle."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from dradash.dra.bundle import (
    EXPORT_COMMAND,
    MAX_REFUSED,
    REFUSED_FIELDS,
    Bundle,
    BundleError,
    check_usable,
    info_object,
    parse_bundle,
)

from .builders import claim, resource_slice

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}}
CLASSIC_SLICE = {
    "apiVersion": "resource.k8s.io/v1alpha2",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpu.example.com"},
    "driverName": "gpu.example.com",
    "namedResources": {"instances": [{"name": "gpu-0"}]},
}


def listed(*items: Any) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}).encode()


def parse(data: bytes, name: str = "b.json", **kwargs: Any) -> Bundle:
    return parse_bundle([(name, data)], max_bytes=10**8, **kwargs)


def unusable(bundle: Bundle) -> BundleError:
    with pytest.raises(BundleError) as caught:
        check_usable(bundle)
    return caught.value


def slice_without_pool(name: str = "s") -> dict[str, Any]:
    """A ResourceSlice trimmed as some published dumps are: no spec.pool."""
    obj = resource_slice(name, node_name="node-1", devices=[])
    del obj["spec"]["pool"]
    return obj


# --- a bundle with nothing dradash reads ----------------------------------------------------


def test_a_classic_dra_bundle_is_refused_saying_what_to_export_instead() -> None:
    error = unusable(parse(listed(CLASSIC_SLICE, CLASSIC_SLICE | {"metadata": {"name": "b"}})))

    assert error.filename == "b.json"
    assert error.problem == (
        "no object in the bundle is one dradash reads, so there is nothing to import. Ignored: "
        "2 × resource.k8s.io/v1alpha2 ResourceSlice (classic DRA). resource.k8s.io/v1alpha2 is "
        "the API of classic DRA (Kubernetes 1.30 and earlier): structured parameters replaced "
        "it in Kubernetes 1.31, and 1.32 removed it. dradash reads resource.k8s.io/v1, v1beta2, "
        "v1beta1 and v1alpha3. Export again from a cluster of Kubernetes 1.31 or later: "
        f"{EXPORT_COMMAND}"
    )


def test_other_ignored_kinds_are_named_with_why() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    crd_event = {"apiVersion": "example.com/v1", "kind": "Event", "metadata": {"name": "e"}}
    future = claim("c", "ml") | {"apiVersion": "resource.k8s.io/v9"}

    error = unusable(parse(listed(deployment, crd_event, future)))

    assert "Ignored: 1 × apps/v1 Deployment (a kind dradash does not read), " in error.problem
    assert "1 × example.com/v1 Event (Event of an API group dradash does not read)" in (
        error.problem
    )
    assert (
        "1 × resource.k8s.io/v9 ResourceClaim (dradash reads ResourceClaim at resource.k8s.io/v1, "
        "resource.k8s.io/v1beta2, resource.k8s.io/v1beta1, resource.k8s.io/v1alpha3, not v9)"
    ) in error.problem
    assert "dradash reads these kinds: Namespace, Node, Pod, Event" in error.problem
    assert f"Export them with: {EXPORT_COMMAND}" in error.problem
    assert "classic DRA" not in error.problem


def test_several_files_are_all_named() -> None:
    bundle = parse_bundle(
        [("a.json", listed(CLASSIC_SLICE)), ("b.json", listed())], max_bytes=10**8
    )

    assert unusable(bundle).filename == "a.json, b.json"


@pytest.mark.parametrize(
    "data",
    [
        listed(POD, CLASSIC_SLICE),  # one object read is enough
        listed(),  # nothing at all: an empty List says what it has
        listed(info_object({"cluster": "c", "ignored": {"apps/v1 Deployment": 2}})),
    ],
    ids=["some-read", "empty-list", "snapshot-info-alone"],
)
def test_a_bundle_with_an_object_read_or_with_none_at_all_is_usable(data: bytes) -> None:
    check_usable(parse(data))


def test_a_bundle_whose_every_object_was_refused_is_refused_with_the_first_problem() -> None:
    bundle = parse(listed(slice_without_pool("s1"), slice_without_pool("s2")), skip_invalid=True)

    error = unusable(bundle)

    assert "Refused as invalid: 2 objects, the first (b.json, document 1, List item 1)" in (
        error.problem
    )
    assert "ResourceSlice s1 is invalid" in error.problem
    assert "spec.pool: Required value" in error.problem


# --- skip_invalid ------------------------------------------------------------------------------


def test_without_skip_invalid_an_invalid_object_refuses_the_bundle_naming_it() -> None:
    with pytest.raises(BundleError) as caught:
        parse(listed(POD, slice_without_pool()))

    assert caught.value.problem.startswith(
        "document 1, List item 2: resource.k8s.io/v1 ResourceSlice s is invalid"
    )


@pytest.mark.parametrize("stream", [False, True])
def test_skip_invalid_keeps_the_valid_objects_and_records_each_refused_one(stream: bool) -> None:
    items = [
        POD,
        slice_without_pool(),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "ml"}},  # no name
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "ml"}},
        "just text",
        POD | {"spec": {"nodeName": "other"}},  # the same Pod again, different
        claim("c", "ml"),
    ]
    data = listed(*items)
    source: Any = io.BytesIO(data) if stream else data

    bundle = parse_bundle(
        [("dump.json", source)],
        max_bytes=10**8,
        stream_over=0 if stream else 10**9,
        skip_invalid=True,
    )

    assert sorted(bundle.objects) == [("Pod", "ml", "p"), ("ResourceClaim", "ml", "c")]
    assert bundle.refused_count == 5
    assert [set(entry) for entry in bundle.refused] == [set(REFUSED_FIELDS)] * 5
    where = [e["location"] for e in bundle.refused]
    assert where == [f"document 1, List item {i}" for i in (2, 3, 4, 5, 6)]
    assert all(e["file"] == "dump.json" for e in bundle.refused)
    identities = [(e["kind"], e["namespace"], e["name"]) for e in bundle.refused]
    assert identities == [
        ("ResourceSlice", "", "s"),
        ("Pod", "ml", ""),
        ("Secret", "ml", "creds"),
        ("", "", ""),
        ("Pod", "ml", "p"),
    ]
    problems = [e["problem"] for e in bundle.refused]
    assert "the API server would refuse it: spec.pool: Required value" in problems[0]
    assert problems[1] == "Pod has no metadata.name"
    assert "never stores Secrets or ConfigMaps" in problems[2]
    assert problems[3] == "not a Kubernetes object (a string, not a mapping)"
    assert "differs from the one in dump.json" in problems[4]


def test_skip_invalid_records_the_first_thousand_and_counts_the_rest() -> None:
    bad = [slice_without_pool(f"s{i}") for i in range(MAX_REFUSED + 5)]

    bundle = parse(listed(POD, *bad), skip_invalid=True)

    assert list(bundle.objects) == [("Pod", "ml", "p")]
    assert bundle.refused_count == MAX_REFUSED + 5
    assert len(bundle.refused) == MAX_REFUSED
    assert bundle.refused[-1]["name"] == f"s{MAX_REFUSED - 1}"


def test_what_is_recorded_can_be_stored() -> None:
    """No NUL or half surrogate pair (which PostgreSQL's JSON refuses), nothing over its
    length: a name with a control character is shown escaped, a long problem cut short."""
    named = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a\x00b", "namespace": "ml"}}
    long = slice_without_pool("x" * 250)
    long["spec"]["devices"] = [{"name": "d" * 70, "attributes": {"a" * 40: {}}}] * 3

    bundle = parse_bundle(
        [("\udcff.json", listed(POD, named, long))], max_bytes=10**8, skip_invalid=True
    )

    assert bundle.refused_count == 2
    text = json.dumps(bundle.refused, ensure_ascii=False)
    assert "\x00" not in text and "\\u0000" in text
    assert bundle.refused[0]["name"] == '"a\\u0000b"'
    assert bundle.refused[0]["file"] == "\ufffd.json"
    for entry in bundle.refused:
        for name, limit in REFUSED_FIELDS.items():
            assert len(entry[name]) <= limit


@pytest.mark.parametrize(
    "data",
    [
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: p\n",  # YAML that does not parse
        b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}',  # JSON cut short
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: p, name: q}\n",  # a key twice
        b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {x: .nan}\n",  # no JSON value
    ],
    ids=["yaml", "truncated-json", "key-twice", "nan"],
)
def test_a_file_that_cannot_be_read_is_refused_even_with_skip_invalid(data: bytes) -> None:
    with pytest.raises(BundleError):
        parse(data, name="f.yaml", skip_invalid=True)


def test_a_file_over_the_size_limit_is_refused_even_with_skip_invalid() -> None:
    with pytest.raises(BundleError) as caught:
        parse_bundle([("big.json", listed(POD))], max_bytes=10, skip_invalid=True)

    assert "over the limit of 10 bytes" in caught.value.problem


# --- SnapshotInfo carries what was refused --------------------------------------------------

ENTRY = {
    "file": "dump.json",
    "location": "document 1, List item 2",
    "kind": "ResourceSlice",
    "namespace": "",
    "name": "s",
    "problem": "resource.k8s.io/v1 ResourceSlice s is invalid: spec.pool: Required value",
}


def test_snapshot_info_keeps_refused_objects() -> None:
    spec = {"cluster": "c", "refused": [ENTRY], "refusedCount": 3}

    bundle = parse(listed(info_object(spec), POD))

    assert bundle.info["refused"] == [ENTRY]
    assert bundle.info["refusedCount"] == 3
    assert bundle.refused == []  # recorded before; nothing refused now


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"refused": {"a": 1}}, "spec.refused has the wrong type"),
        ({"refused": ["x"]}, "spec.refused[0] is not a mapping"),
        ({"refused": [ENTRY | {"extra": ""}]}, "spec.refused[0] has unknown fields ['extra']"),
        ({"refused": [ENTRY | {"name": 3}]}, "spec.refused[0].name must be text"),
        ({"refused": [ENTRY | {"problem": "x" * 1001}]}, "spec.refused[0].problem must be text"),
        ({"refused": [ENTRY] * (MAX_REFUSED + 1)}, "spec.refused has over 1,000 entries"),
        ({"refused": [ENTRY | {"name": "a\x00"}]}, "spec.refused has a NUL character"),
        ({"refusedCount": "2"}, "spec.refusedCount has the wrong type"),
        ({"refusedCount": True}, "spec.refusedCount must be a count"),
        ({"refused": [ENTRY, ENTRY], "refusedCount": 1}, "spec.refusedCount must be a count"),
        ({"refusedCount": 2**31}, "spec.refusedCount must be a count"),
    ],
)
def test_snapshot_info_with_bad_refused_objects_is_refused(
    spec: dict[str, Any], problem: str
) -> None:
    with pytest.raises(BundleError) as caught:
        parse(listed(info_object({"cluster": "c", **spec}), POD))

    assert problem in caught.value.problem
