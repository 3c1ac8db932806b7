"""parse_bundle and write_bundle: every accepted form; every bad input named by file and problem."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from dradash.dra import chain
from dradash.dra.bundle import (
    DEFAULT_API_VERSIONS,
    Bundle,
    BundleError,
    info_object,
    parse_bundle,
    write_bundle,
)
from dradash.dra.state import ClusterState

from .builders import FIXTURES, NOT_MANIFESTS, claim, node, pod, pod_claim, resource_slice

MAX = 10_000_000
REPO = Path(__file__).resolve().parents[2]


def parse(*files: tuple[str, bytes | str], max_bytes: int = MAX) -> Bundle:
    return parse_bundle(
        [(name, data.encode() if isinstance(data, str) else data) for name, data in files],
        max_bytes=max_bytes,
    )


def refused(name: str, data: bytes | str, max_bytes: int = MAX) -> BundleError:
    """Parse one file that must be refused; check the error names it, and return the error."""
    with pytest.raises(BundleError) as info:
        parse((name, data), max_bytes=max_bytes)
    error = info.value
    assert str(error).startswith(f"{name}: ")
    assert error.filename == name
    assert error.problem
    assert str(error) == f"{name}: {error.problem}"
    return error


def upstream(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def without_source_line(name: str) -> bytes:
    """A fixture as it is upstream: without the ``# SOURCE:`` line the corpus adds."""
    return upstream(name).split(b"\n", 1)[1]


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
CLAIM = claim("c", "ns")
INFO_SPEC = {
    "cluster": "prod-eu",
    "capturedAt": "2025-06-01T12:00:00Z",
    "serverVersion": "v1.34.1",
    "apiVersions": ["resource.k8s.io/v1", "v1"],
    "kinds": {"Pod": {"status": "ok", "message": ""}, "Job": {"status": "forbidden"}},
    "ignored": {"apps/v1 Deployment": 2},
}


def yaml_doc(obj: dict[str, Any]) -> str:
    """Block YAML as kubectl prints it (json is valid YAML, but this checks the YAML path)."""
    return yaml.safe_dump(obj, sort_keys=False)


# --- accepted forms -------------------------------------------------------------------------


def test_kubectl_list_json_is_read_item_by_item() -> None:
    data = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"resourceVersion": ""},
            "items": [POD, CLAIM],
        },
        indent=4,
    )

    bundle = parse(("all.json", data))

    assert bundle.objects == {("Pod", "ns", "p"): POD, ("ResourceClaim", "ns", "c"): CLAIM}
    assert bundle.info == {}
    assert not bundle.ignored


SLICE_SPEC = {
    "driver": "d",
    "nodeName": "n",
    "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
    "devices": [],
}


def test_typed_list_items_get_the_kind_and_api_version_of_the_list() -> None:
    data = json.dumps(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSliceList",
            "metadata": {"resourceVersion": "123"},
            "items": [{"metadata": {"name": "s1"}, "spec": SLICE_SPEC}],
        }
    )

    bundle = parse(("slices.json", data))

    assert bundle.objects == {
        ("ResourceSlice", "", "s1"): {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "s1"},
            "spec": SLICE_SPEC,
        }
    }


def test_core_typed_list_items_are_read_as_pods() -> None:
    data = json.dumps(
        {"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a"}}]}
    )

    bundle = parse(("pods.json", data))

    assert list(bundle.objects) == [("Pod", "default", "a")]
    assert bundle.objects[("Pod", "default", "a")]["apiVersion"] == "v1"


def test_json_array_of_objects_is_accepted() -> None:
    bundle = parse(("array.json", json.dumps([POD, CLAIM])))

    assert set(bundle.objects) == {("Pod", "ns", "p"), ("ResourceClaim", "ns", "c")}


def test_single_json_object_is_accepted() -> None:
    bundle = parse(("pod.json", json.dumps(POD)))

    assert bundle.objects == {("Pod", "ns", "p"): POD}


def test_single_yaml_document_is_accepted() -> None:
    bundle = parse(("claim.yaml", yaml_doc(CLAIM)))

    assert bundle.objects == {("ResourceClaim", "ns", "c"): CLAIM}


def test_multi_document_yaml_with_empty_documents_is_accepted() -> None:
    data = "---\n" + yaml_doc(POD) + "---\n---\n" + yaml_doc(CLAIM) + "...\n"

    bundle = parse(("stream.yaml", data))

    assert bundle.objects == {("Pod", "ns", "p"): POD, ("ResourceClaim", "ns", "c"): CLAIM}


def test_yaml_document_that_is_a_kubectl_list_is_expanded() -> None:
    name = "dra-example-driver__README__resourceslice-list-8gpu.yaml"

    bundle = parse((name, upstream(name)))

    ((key, obj),) = bundle.objects.items()
    assert key[0] == "ResourceSlice"
    assert [d["name"] for d in obj["spec"]["devices"]] == [f"gpu-{i}" for i in range(8)]


def test_several_files_make_one_bundle() -> None:
    bundle = parse(
        ("pods.json", json.dumps([POD])),
        ("claims.yaml", yaml_doc(CLAIM)),
        ("nodes.yaml", yaml_doc(node("n1"))),
    )

    assert set(bundle.objects) == {
        ("Pod", "ns", "p"),
        ("ResourceClaim", "ns", "c"),
        ("Node", "", "n1"),
    }


@pytest.mark.parametrize(
    ("name", "text"), [("bom.json", json.dumps(POD)), ("bom.yaml", yaml_doc(POD))]
)
def test_utf8_byte_order_mark_is_skipped(name: str, text: str) -> None:
    bundle = parse((name, b"\xef\xbb\xbf" + text.encode()))

    assert bundle.objects == {("Pod", "ns", "p"): POD}


def test_json_file_preceded_by_a_comment_line_is_accepted() -> None:
    data = "# kubectl get pods -A -o json\n" + json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [POD]}, indent=2
    )

    bundle = parse(("pods.json", data))

    assert bundle.objects == {("Pod", "ns", "p"): POD}


def test_real_json_fixture_with_source_comment_is_read_and_its_kind_ignored() -> None:
    name = "k8s-website__docs__dra-observability__device-metadata.json"

    bundle = parse((name, upstream(name)))

    assert bundle.objects == {}
    assert bundle.ignored == {"metadata.resource.k8s.io/v1alpha1 DeviceMetadata": 1}


def test_non_ascii_text_is_kept() -> None:
    obj = pod("gpu-ü", "ns")
    obj["metadata"]["annotations"] = {"note": "Grafikkarte für Tests ✓"}

    bundle = parse(("u.yaml", yaml_doc(obj)))

    assert bundle.objects[("Pod", "ns", "gpu-ü")]["metadata"]["annotations"]["note"].endswith("✓")


def test_timestamps_stay_strings_as_kubernetes_sends_them() -> None:
    data = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
    data += "  creationTimestamp: 2025-01-02T03:04:05Z\n"

    bundle = parse(("p.yaml", data))

    assert bundle.objects[("Pod", "default", "p")]["metadata"]["creationTimestamp"] == (
        "2025-01-02T03:04:05Z"
    )


def test_an_empty_kubectl_list_is_an_empty_bundle() -> None:
    bundle = parse(("none.json", '{"apiVersion": "v1", "kind": "List", "items": []}'))

    assert bundle.objects == {}


@pytest.mark.parametrize(("kind", "api_version"), sorted(DEFAULT_API_VERSIONS.items()))
def test_kinds_with_one_stable_version_get_it_when_it_is_missing(
    kind: str, api_version: str
) -> None:
    data = f"kind: {kind}\nmetadata:\n  name: x\n"

    bundle = parse(("x.yaml", data))

    ((obj),) = bundle.objects.values()
    assert obj["apiVersion"] == api_version
    assert obj["kind"] == kind


# --- SnapshotInfo ---------------------------------------------------------------------------


def test_snapshot_info_is_taken_from_the_bundle_and_not_stored_as_an_object() -> None:
    bundle = parse(("b.json", json.dumps([info_object(INFO_SPEC), POD])))

    assert bundle.info == INFO_SPEC
    assert list(bundle.objects) == [("Pod", "ns", "p")]


def test_snapshot_info_may_leave_fields_out() -> None:
    bundle = parse(("b.json", json.dumps([info_object({"cluster": "c"})])))

    assert bundle.info == {"cluster": "c"}


def test_the_same_snapshot_info_in_two_files_is_fine() -> None:
    info = json.dumps(info_object(INFO_SPEC))

    bundle = parse(("a.json", info), ("b.json", info))

    assert bundle.info == INFO_SPEC


def test_two_different_snapshot_infos_are_refused_naming_both_files() -> None:
    with pytest.raises(BundleError) as info:
        parse(
            ("a.json", json.dumps(info_object(INFO_SPEC))),
            ("b.json", json.dumps(info_object({**INFO_SPEC, "cluster": "other"}))),
        )

    assert str(info.value).startswith("b.json: ")
    assert "second, different SnapshotInfo" in str(info.value)
    assert "a.json" in info.value.problem


def test_a_second_snapshot_info_differing_from_an_empty_first_one_is_refused() -> None:
    with pytest.raises(BundleError, match="different SnapshotInfo"):
        parse(
            ("a.json", json.dumps(info_object({}))),
            ("b.json", json.dumps(info_object({"cluster": "other"}))),
        )


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"cluster": 7}, "spec.cluster has the wrong type"),
        ({"capturedAt": ["2025"]}, "spec.capturedAt has the wrong type"),
        ({"serverVersion": {"v": 1}}, "spec.serverVersion has the wrong type"),
        ({"apiVersions": "v1"}, "spec.apiVersions has the wrong type"),
        ({"apiVersions": ["v1", 2]}, "spec.apiVersions must be strings"),
        ({"kinds": ["Pod"]}, "spec.kinds has the wrong type"),
        ({"kinds": {"Pod": {"status": "fine"}}}, "spec.kinds.Pod needs a status"),
        ({"kinds": {"Pod": "ok"}}, "spec.kinds.Pod needs a status"),
        ({"kinds": {"Pod": {}}}, "spec.kinds.Pod needs a status"),
        ({"kinds": {"Pod": {"status": "ok", "message": 3}}}, "spec.kinds.Pod.message"),
        ({"ignored": [1]}, "spec.ignored has the wrong type"),
        ({"ignored": {"apps/v1 Deployment": -1}}, "spec.ignored.apps/v1 Deployment is not a count"),
        (
            {"ignored": {"apps/v1 Deployment": "2"}},
            "spec.ignored.apps/v1 Deployment is not a count",
        ),
        (
            {"ignored": {"apps/v1 Deployment": True}},
            "spec.ignored.apps/v1 Deployment is not a count",
        ),
        ({"cluster": "c", "secretToken": "x"}, "unknown fields ['secretToken']"),
    ],
)
def test_snapshot_info_is_validated(spec: dict[str, Any], problem: str) -> None:
    obj = {**info_object({}), "spec": spec}

    error = refused("info.json", json.dumps(obj))

    assert "SnapshotInfo" in error.problem
    assert problem in error.problem


@pytest.mark.parametrize("spec", [None, [], "prod"])
def test_snapshot_info_without_a_spec_mapping_is_refused(spec: Any) -> None:
    obj = {"apiVersion": "dradash.io/v1", "kind": "SnapshotInfo", "metadata": {"name": "s"}}
    if spec is not None:
        obj["spec"] = spec

    error = refused("info.json", json.dumps(obj))

    assert "SnapshotInfo has no spec mapping" in error.problem


@pytest.mark.parametrize("status", ["ok", "absent", "forbidden", "not-found", "error"])
def test_snapshot_info_accepts_every_kind_status(status: str) -> None:
    spec = {"kinds": {"DeviceTaintRule": {"status": status, "message": "m"}}}

    assert parse(("i.json", json.dumps(info_object(spec)))).info == spec


# --- duplicates, ignored and refused kinds --------------------------------------------------


def test_identical_duplicates_are_merged() -> None:
    bundle = parse(("a.json", json.dumps([POD, POD])), ("b.yaml", yaml_doc(POD)))

    assert bundle.objects == {("Pod", "ns", "p"): POD}


def test_differing_duplicates_are_refused_naming_both_files() -> None:
    changed = {**POD, "status": {"phase": "Running"}}

    with pytest.raises(BundleError) as info:
        parse(("first.json", json.dumps(POD)), ("second.yaml", yaml_doc(changed)))

    message = str(info.value)
    assert message.startswith("second.yaml: ")
    assert "Pod ns/p differs from the one in first.json" in message


def test_a_namespace_less_pod_and_one_in_default_are_the_same_object() -> None:
    explicit = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
    }
    implicit = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}

    with pytest.raises(BundleError, match="differs from the one in a.json"):
        parse(("a.json", json.dumps(explicit)), ("b.json", json.dumps(implicit)))


def test_ignored_kinds_are_counted_by_api_version_and_kind() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    crd_event = {"apiVersion": "example.com/v1", "kind": "Event", "metadata": {"name": "e"}}
    data = json.dumps([deployment, {**deployment, "metadata": {"name": "d2"}}, crd_event, POD])

    bundle = parse(("mixed.json", data))

    assert bundle.ignored == {"apps/v1 Deployment": 2, "example.com/v1 Event": 1}
    assert list(bundle.objects) == [("Pod", "ns", "p")]


def test_ignored_kinds_are_not_checked_for_spec_shape() -> None:
    data = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: [1, 2]\n"

    assert parse(("d.yaml", data)).ignored == {"apps/v1 Deployment": 1}


def test_classic_dra_v1alpha2_objects_are_ignored_not_refused() -> None:
    name = "nvidia-gpu__demo__specs__mig+mps__sharing-demo-claims.yaml"

    bundle = parse((name, upstream(name)))

    assert bundle.objects == {}
    assert bundle.ignored == {"resource.k8s.io/v1alpha2 ResourceClaim": 4}


def test_unknown_versions_of_resource_kinds_are_ignored() -> None:
    data = "apiVersion: resource.k8s.io/v9\nkind: ResourceSlice\nmetadata: {name: s}\n"

    assert parse(("s.yaml", data)).ignored == {"resource.k8s.io/v9 ResourceSlice": 1}


@pytest.mark.parametrize("kind", ["Secret", "ConfigMap"])
def test_secrets_and_config_maps_are_refused_naming_the_object(kind: str) -> None:
    data = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [POD, {"apiVersion": "v1", "kind": kind, "metadata": {"name": "creds"}}],
        }
    )

    error = refused("all.json", data)

    assert f"{kind} 'creds'" in error.problem
    assert "never stores Secrets or ConfigMaps" in error.problem
    assert "List item 2" in error.problem


def test_classic_dra_example_with_a_config_map_is_refused() -> None:
    name = "k8s__e2e-dra-example__resourceclaim-v1alpha2-classic.yaml"

    error = refused(name, upstream(name))

    assert "ConfigMap 'example-claim-parameters'" in error.problem


# --- bad input: every problem named -------------------------------------------------------


KUBECTL_JSON = json.dumps({"apiVersion": "v1", "kind": "List", "items": [POD, CLAIM]}, indent=4)


@pytest.mark.parametrize(
    "cut_after",
    ['"kind": ', '"apiVersion": "v1",', '"metadata": {', '"items": [', "{"],
)
def test_truncated_json_is_called_truncated(cut_after: str) -> None:
    cut = KUBECTL_JSON.rindex(cut_after) + len(cut_after)

    error = refused("cut.json", KUBECTL_JSON[:cut])

    assert error.problem.startswith("truncated JSON: ")
    assert re.search(r"at line \d+ column \d+", error.problem)


@pytest.mark.parametrize("cut_after", ['"apiVersion": "resource.k8', '"name": "'])
def test_json_truncated_inside_a_string_is_called_truncated(cut_after: str) -> None:
    cut = KUBECTL_JSON.rindex(cut_after) + len(cut_after)

    error = refused("cut.json", KUBECTL_JSON[:cut])

    assert error.problem.startswith("truncated JSON: ")


def test_invalid_json_is_called_invalid_with_its_position() -> None:
    error = refused("bad.json", '{"apiVersion": "v1",,\n "kind": "Pod"}')

    assert error.problem.startswith("invalid JSON: ")
    assert "at line 1 column 21" in error.problem


def test_trailing_data_after_json_is_invalid_json() -> None:
    error = refused("two.json", json.dumps(POD) + "\n" + json.dumps(POD))

    assert error.problem.startswith("invalid JSON: Extra data at line 2 column 1")


def test_invalid_yaml_names_the_line() -> None:
    data = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n labels: [a\n"

    error = refused("bad.yaml", data)

    assert error.problem.startswith("invalid YAML: ")
    assert re.search(r"at line [56] column \d+", error.problem)
    assert "render it first" not in error.problem


@pytest.mark.parametrize(
    ("data", "what"),
    [
        ("just some text\n", "document 1 is not a Kubernetes object (a string, not a mapping)"),
        ("42\n", "document 1 is not a Kubernetes object (a number, not a mapping)"),
        ("- 1\n- 2\n", "document 1, item 1 is not a Kubernetes object (a number, not a mapping)"),
        ("- a\n", "document 1, item 1 is not a Kubernetes object (a string, not a mapping)"),
        ('["a"]', "document 1, item 1 is not a Kubernetes object (a string, not a mapping)"),
        ("true\n", "document 1 is not a Kubernetes object (a boolean, not a mapping)"),
        (
            yaml_doc(POD) + "---\n- [1]\n",
            "document 2, item 1 is not a Kubernetes object (a list, not a mapping)",
        ),
    ],
)
def test_scalars_and_lists_of_scalars_are_not_kubernetes_objects(data: str, what: str) -> None:
    error = refused("x.yaml", data)

    assert error.problem == what


def test_list_items_that_are_not_objects_are_named_by_position() -> None:
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": [POD, "oops"]})

    error = refused("l.json", data)

    assert error.problem == (
        "document 1, List item 2 is not a Kubernetes object (a string, not a mapping)"
    )


def test_a_list_inside_a_list_is_refused() -> None:
    inner = {"apiVersion": "v1", "kind": "List", "items": [POD]}
    data = json.dumps({"apiVersion": "v1", "kind": "List", "items": [inner]})

    assert refused("l.json", data).problem == "document 1, List item 1 is a list inside a list"


@pytest.mark.parametrize("kind", [None, "", 3, ["Pod"]])
def test_objects_without_a_kind_are_refused(kind: Any) -> None:
    obj: dict[str, Any] = {"apiVersion": "v1", "metadata": {"name": "p"}}
    if kind is not None:
        obj["kind"] = kind

    error = refused("k.json", json.dumps([POD, obj]))

    assert error.problem == "document 1, item 2 has no kind; is it a Kubernetes object?"


@pytest.mark.parametrize(
    "kind", ["ResourceClaim", "ResourceSlice", "DeviceClass", "Deployment", "Event"]
)
def test_objects_without_an_api_version_are_refused_unless_it_has_one_stable_version(
    kind: str,
) -> None:
    error = refused("a.yaml", f"kind: {kind}\nmetadata:\n  name: x\n")

    assert error.problem == f"document 1: {kind} has no apiVersion"


@pytest.mark.parametrize("api_version", ["", 1, None])
def test_empty_or_mistyped_api_versions_are_refused(api_version: Any) -> None:
    obj = {"apiVersion": api_version, "kind": "ResourceClaim", "metadata": {"name": "c"}}

    assert (
        refused("a.json", json.dumps(obj)).problem == "document 1: ResourceClaim has no apiVersion"
    )


@pytest.mark.parametrize("metadata", ["missing", None, "name: x", ["name"]])
def test_objects_without_metadata_are_refused(metadata: Any) -> None:
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim"}
    if metadata != "missing":
        obj["metadata"] = metadata

    assert refused("m.json", json.dumps(obj)).problem == "document 1: ResourceClaim has no metadata"


@pytest.mark.parametrize("name", ["missing", "", None, 5])
def test_objects_without_a_name_are_refused(name: Any) -> None:
    meta: dict[str, Any] = {"namespace": "ns"}
    if name != "missing":
        meta["name"] = name
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta}

    assert refused("n.json", json.dumps(obj)).problem == "document 1: Pod has no metadata.name"


def test_objects_with_only_generate_name_get_a_hint() -> None:
    name = "kueue__site__static__examples__dra__sample-dra-rct-job.yaml"

    error = refused(name, upstream(name))

    assert error.problem == (
        "document 2: Job has no metadata.name "
        "(only generateName, as in a manifest for kubectl create)"
    )


@pytest.mark.parametrize("namespace", [3, ["ns"], {"name": "ns"}, True])
def test_a_namespace_that_is_not_a_string_is_refused(namespace: Any) -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": namespace}}

    error = refused("ns.json", json.dumps(obj))

    assert error.problem == "document 1: Pod p: metadata.namespace is not a string"


@pytest.mark.parametrize(
    ("kind", "api_version"),
    [
        ("ResourceClaim", "resource.k8s.io/v1"),
        ("ResourceSlice", "resource.k8s.io/v1beta1"),
        ("Pod", "v1"),
        ("Node", "v1"),
        ("DeviceClass", "resource.k8s.io/v1"),
    ],
)
@pytest.mark.parametrize("part", ["spec", "status"])
@pytest.mark.parametrize("value", [[], "text", 0])
def test_spec_or_status_that_is_not_a_mapping_is_refused_for_kinds_dradash_reads(
    kind: str, api_version: str, part: str, value: Any
) -> None:
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, part: value}

    error = refused("s.json", json.dumps(obj))

    assert error.problem == f"document 1: {kind} x: {part} is not a mapping"


def test_a_null_spec_is_allowed() -> None:
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": None}

    assert parse(("n.json", json.dumps(obj))).objects[("Node", "", "n")] == obj


def test_a_file_over_the_size_limit_is_refused_with_both_sizes() -> None:
    data = json.dumps(POD).encode()

    error = refused("big.json", data, max_bytes=len(data) - 1)

    assert error.problem == (
        f"file is {len(data):,} bytes, over the limit of {len(data) - 1:,} bytes"
    )


def test_a_file_exactly_at_the_size_limit_is_accepted() -> None:
    data = json.dumps(POD).encode()

    assert parse(("ok.json", data), max_bytes=len(data)).objects


def test_the_size_limit_applies_to_each_file() -> None:
    small = json.dumps(POD).encode()
    with pytest.raises(BundleError) as info:
        parse(("a.json", small), ("b.json", small + b" " * 100), max_bytes=len(small) + 10)

    assert info.value.filename == "b.json"


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n", 42),
        (b"\x80", 0),
        ("kind: Pod\nmetadata: {name: é}\n".encode("latin-1"), 27),
        ("kind: Pod".encode("utf-16"), 0),
    ],
)
def test_bytes_that_are_not_utf8_are_refused_with_their_offset(data: bytes, offset: int) -> None:
    error = refused("bin.yaml", data)

    assert error.problem == f"not UTF-8 text (byte {offset})"


@pytest.mark.parametrize("data", [b"", b"   \n\t\n", b"\xef\xbb\xbf"])
def test_an_empty_file_is_refused(data: bytes) -> None:
    assert refused("empty.yaml", data).problem == "the file is empty"


@pytest.mark.parametrize(
    "data", ["# just a comment\n# and another\n", "---\n---\n", "# c\n---\n...\n"]
)
def test_a_file_of_only_comments_or_separators_has_no_objects(data: str) -> None:
    assert refused("c.yaml", data).problem == "no Kubernetes objects found"


@pytest.mark.parametrize(
    ("name", "data", "shown"),
    [
        ("nan.json", '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"x":NaN}', "nan"),
        (
            "inf.json",
            '[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"x":Infinity}]',
            "inf",
        ),
        (
            "ninf.json",
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"x":-Infinity}',
            "-inf",
        ),
        ("nan.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: .nan\n", "nan"),
        ("inf.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: [.inf]\n", "inf"),
    ],
)
def test_numbers_json_cannot_hold_are_refused(name: str, data: str, shown: str) -> None:
    error = refused(name, data)

    assert f"has a number JSON cannot hold ({shown})" in error.problem


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {1: a}\n", "1"),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {on: a}\n", "True"),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {null: a}\n", "None"),
        ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec: {2.5: x}\n", "2.5"),
    ],
)
def test_keys_that_are_not_strings_are_refused(data: str, key: str) -> None:
    error = refused("keys.yaml", data)

    assert error.problem == f"document 1 has a key that is not a string: {key}"


def test_yaml_aliases_of_mappings_are_refused() -> None:
    data = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "spec:\n  nodeSelector: &sel {zone: a}\n  other: *sel\n"
    )

    error = refused("alias.yaml", data)

    assert error.problem == "document 1 uses YAML anchors or aliases (line 7); expand them"


def test_a_billion_laughs_alias_bomb_fails_fast() -> None:
    lines = ["apiVersion: v1", "kind: Pod", "metadata: {name: p}", "spec:"]
    lines.append('  l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for level in range(1, 10):
        refs = ",".join([f"*l{level - 1}"] * 10)
        lines.append(f"  l{level}: &l{level} [{refs}]")

    started = time.perf_counter()
    error = refused("lol.yaml", "\n".join(lines) + "\n")
    elapsed = time.perf_counter() - started

    assert error.problem == "document 1 uses YAML anchors or aliases (line 6); expand them"
    assert elapsed < 0.5


@pytest.mark.parametrize(
    ("value", "what"),
    [("!!binary aGVsbG8=", "a bytes"), ("!!set {a, b}", "a set")],
)
def test_yaml_values_json_cannot_hold_are_refused(value: str, what: str) -> None:
    data = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{x: {value}}}\n"

    error = refused("bin.yaml", data)

    assert error.problem == f"document 1 has a value JSON cannot hold ({what})"


def test_python_object_tags_are_invalid_yaml_and_never_run() -> None:
    data = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
    data += "spec: !!python/object/apply:os.system ['true']\n"

    error = refused("evil.yaml", data)

    assert error.problem.startswith("invalid YAML: could not determine a constructor")
    assert "at line 4" in error.problem


def test_deeply_nested_json_is_refused() -> None:
    data = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":' + "[" * 100_000
    data += "]" * 100_000 + "}"

    assert refused("deep.json", data).problem == "JSON is nested too deeply"


def test_deeply_nested_yaml_is_refused_like_json() -> None:
    depth = 5_000
    data = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  x: " + "[" * depth
    data += "]" * depth + "\n"

    error = refused("deep.yaml", data)

    assert "nested too deeply" in error.problem


def test_moderately_deep_yaml_that_is_accepted_can_be_written_back() -> None:
    depth = 100
    data = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  x: " + "[" * depth
    data += "]" * depth + "\n"
    bundle = parse(("deep.yaml", data))

    again = parse(("again.json", "".join(write_bundle({}, bundle.objects.values()))))

    assert again.objects == bundle.objects


def test_very_deeply_nested_yaml_is_a_bundle_error_not_a_crash(tmp_path: Path) -> None:
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        "from dradash.dra.bundle import BundleError, parse_bundle\n"
        "data = b'apiVersion: v1\\nkind: Pod\\nmetadata: {name: p}\\nspec:\\n  x: '"
        " + b'[' * 50000 + b']' * 50000\n"
        "try:\n"
        "    parse_bundle([('deep.yaml', data)], max_bytes=10**7)\n"
        "except BundleError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )

    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-500:]}"
    assert proc.stdout.startswith("deep.yaml: ")
    assert "nested" in proc.stdout


def test_deep_block_yaml_below_the_crash_depth_is_handled() -> None:
    data = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  x:\n    " + "- " * 100 + "a\n"

    bundle = parse(("deep.yaml", data))

    assert ("Pod", "default", "p") in bundle.objects


@pytest.mark.parametrize(
    "name",
    [
        "dra-example-driver__helm__deviceclass.yaml",
        "nvidia-gpu__helm__deviceclass-gpu.yaml",
        "intel__charts__intel-gpu-resource-driver__templates__device-class.yaml",
        "nvidia-gpu__test__e2e__framework__specs__timeslicing.yaml.tmpl",
    ],
)
def test_helm_templates_get_a_hint_to_render_them_first(name: str) -> None:
    error = refused(name, upstream(name))

    assert error.problem.startswith("invalid YAML: ")
    assert error.problem.endswith("it looks like a Helm or Go template: render it first")


@pytest.mark.parametrize(
    "name",
    [
        "nvidia-gpu__helm__deviceclass-gpu.yaml",
        "intel__charts__intel-gpu-resource-driver__templates__device-class.yaml",
    ],
)
def test_helm_templates_starting_with_a_template_action_get_the_hint(name: str) -> None:
    data = without_source_line(name)
    assert data.startswith(b"{{")

    error = refused(name, data)

    assert "render it first" in error.problem


def test_a_yaml_flow_mapping_document_is_accepted() -> None:
    data = "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}}\n"

    assert parse(("flow.yaml", data)).objects == {("Pod", "ns", "p"): POD}


def test_go_templates_that_happen_to_parse_are_refused_with_the_hint() -> None:
    name = "k8s__schedperf-dra__resourceclaim-partitionable.yaml.tmpl"

    error = refused(name, upstream(name))

    assert "render it first" in error.problem


# --- writing --------------------------------------------------------------------------------


ROUND_TRIP_FILES = [
    "dra-example-driver__README__resourceslice-list-8gpu.yaml",
    "nvidia-gpu__legacy-v1alpha3__imex-resourceslice.yaml",
    "nvidia-gpu__demo__specs__quickstart__v1__gpu-test1.yaml",
    "nvidia-gpu__demo__specs__quickstart__v1beta1__gpu-test-mps.yaml",
    "intel__doc-gaudi-USAGE__resourceslice-output.yaml",
    "nvidia-gpu__demo__specs__quickstart__v1__imex-test1.yaml",
]


def test_write_then_parse_gives_identical_objects_and_info() -> None:
    bundle = parse(*[(name, upstream(name)) for name in ROUND_TRIP_FILES])
    assert len(bundle.objects) > 10

    text = "".join(write_bundle(INFO_SPEC, bundle.objects.values()))
    again = parse(("export.json", text.encode()))

    assert again.info == INFO_SPEC
    assert again.objects == bundle.objects
    assert list(again.objects) == list(bundle.objects)


def test_written_bundle_is_a_kubectl_list_with_snapshot_info_first() -> None:
    text = "".join(write_bundle(INFO_SPEC, [POD]))
    doc = json.loads(text)

    assert doc["kind"] == "List"
    assert doc["apiVersion"] == "v1"
    assert doc["items"][0] == info_object(INFO_SPEC)
    assert doc["items"][0]["metadata"]["name"] == "prod-eu"
    assert doc["items"][1:] == [POD]


def test_write_then_parse_without_info_and_with_non_ascii_text() -> None:
    obj = pod("p", "ns")
    obj["metadata"]["annotations"] = {"owner": "Zoë ✓"}

    text = "".join(write_bundle({}, [obj]))
    again = parse(("e.json", text.encode("utf-8")))

    assert again.info == {}
    assert again.objects == {("Pod", "ns", "p"): obj}
    assert "Zoë ✓" in text


# --- the real corpus ------------------------------------------------------------------------


CORPUS = sorted(p.name for p in FIXTURES.iterdir() if p.name not in NOT_MANIFESTS)


def _index_rows() -> dict[str, dict[str, str]]:
    """INDEX.md's "All files" table: file -> {"kinds", "parse"}."""
    rows = {}
    for line in (FIXTURES / "INDEX.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] in CORPUS:
            rows[cells[0]] = {"kinds": cells[1], "parse": cells[3]}
    return rows


def _must_parse() -> list[str]:
    # Excluded as fragments although INDEX.md marks them `ok`: pieces of objects cut from docs,
    # with no kind or metadata -
    #   dra-example-driver__binding-conditions__README__claim-status.yaml,
    #   nvidia-gpu__docs__allocating-gpus__frag-devices-{1,2}.yaml,
    #   nvidia-gpu__docs__gpu-health-checking__device-taint.json (json fragment),
    #   nvidia-gpu__docs__resourceslice-attributes__device-{full-gpu,mig,vfio}.yaml.
    # Excluded although it parses: a List whose device is the placeholder "- ...", which the
    # API server refuses (spec.devices[0] is not a device) and so does the import.
    return sorted(
        name
        for name, row in _index_rows().items()
        if name.startswith(("dra-example-driver__", "nvidia-gpu__"))
        and row["parse"] in ("ok", "ok(json)")
        and "fragment" not in row["kinds"]
        and name not in NOT_VALID_AS_IS
    )


NOT_VALID_AS_IS = {"nvidia-gpu__docs__view-resources__resourceslice-list-skeleton.yaml"}


MUST_PARSE = _must_parse()


def test_the_index_lists_every_corpus_file() -> None:
    assert set(_index_rows()) == set(CORPUS)
    assert len(CORPUS) > 300


def test_the_must_parse_list_is_not_empty_and_excludes_fragments() -> None:
    assert len(MUST_PARSE) >= 90
    assert "nvidia-gpu__demo__specs__quickstart__v1__gpu-test1.yaml" in MUST_PARSE
    assert "dra-example-driver__binding-conditions__README__claim-status.yaml" not in MUST_PARSE
    assert "nvidia-gpu__docs__gpu-health-checking__device-taint.json" not in MUST_PARSE
    assert "nvidia-gpu__helm__deviceclass-gpu.yaml" not in MUST_PARSE


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_file_parses_or_is_refused_by_name_and_its_chains_build(name: str) -> None:
    try:
        bundle = parse_bundle([(name, upstream(name))], max_bytes=MAX)
    except BundleError as exc:
        assert str(exc).startswith(f"{name}: ")
        assert exc.problem
        return

    state = ClusterState.build(bundle.objects.values())
    for pod_obj in state.pods.values():
        json.dumps(chain.pod_chain(state, pod_obj))
    for claim_obj in state.claims.values():
        json.dumps(chain.claim_chain(state, claim_obj))
    for template_obj in state.templates.values():
        json.dumps(chain.template_summary(state, template_obj))


@pytest.mark.parametrize("name", MUST_PARSE)
def test_driver_demo_file_marked_ok_parses(name: str) -> None:
    bundle = parse_bundle([(name, upstream(name))], max_bytes=MAX)

    assert bundle.objects or bundle.ignored


def test_corpus_pods_and_claims_from_one_demo_are_linked() -> None:
    name = "nvidia-gpu__demo__specs__quickstart__v1__gpu-test3.yaml"
    bundle = parse((name, upstream(name)))

    state = ClusterState.build(bundle.objects.values())

    (shared,) = state.claims.values()
    assert sorted(p.name for p in shared.pods) == ["pod1", "pod2"]
    assert all(r.status == "ok" for p in state.pods.values() for r in p.claim_refs)


def test_builders_make_objects_the_bundle_accepts() -> None:
    # The hand-made objects of the state tests pass the same checks as real files.
    objects = [
        pod("p", claims=[pod_claim("gpu", template="t")]),
        claim("c"),
        node("n"),
        resource_slice("s", node_name="n"),
    ]

    bundle = parse(("built.json", json.dumps(objects)))

    assert len(bundle.objects) == 4


# --- values the database (or Python) cannot store ------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "problem"),
    [
        (
            "big.json",
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"x":1' + "0" * 4300 + "}",
            "invalid JSON: a number is too large",
        ),
        (
            "big.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: 1" + "0" * 4300 + "\n",
            "invalid YAML: a number is too large",
        ),
        (
            "hex.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nx: 0x" + "f" * 4000 + "\n",
            "document 1 has a number too large",
        ),
        (
            "inf.json",
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"a":[1,-1e400]}}',
            "document 1 has a number JSON cannot hold (-inf) in Pod p at spec.a[1]",
        ),
        (
            "list.json",
            '{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"},'
            '"x":1e999}]}',
            "document 1 has a number JSON cannot hold (inf) in Pod q at x",
        ),
    ],
)
def test_numbers_too_large_are_refused_naming_the_object(
    name: str, data: str, problem: str
) -> None:
    assert problem in refused(name, data).problem


@pytest.mark.parametrize(
    ("data", "at"),
    [
        (
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"\\ud800"}}',
            "metadata.uid",
        ),
        (
            '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"\\udfff":"x"}}}',
            'metadata.labels."\\udfff"',
        ),
        ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"\\uDC00"}}', "metadata.name"),
    ],
)
def test_lone_surrogate_escapes_are_refused(data: str, at: str) -> None:
    error = refused("s.json", data)

    assert "lone surrogate" in error.problem
    assert error.problem.endswith(f" at {at}")
    error.problem.encode()  # the message itself can be printed


def test_surrogate_pairs_are_characters_and_kept() -> None:
    data = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"\\ud83d\\ude00"}}'

    assert parse(("e.json", data)).objects["Pod", "default", "p"]["metadata"]["uid"] == "\U0001f600"


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ({"name": "p\x00"}, 'Pod "p\\u0000": metadata.name has control characters'),
        ({"name": "p", "namespace": "a\nb"}, "Pod p: metadata.namespace has control characters"),
        ({"name": "p" * 254}, "metadata.name is 254 characters long, over the limit of 253"),
        ({"name": "p", "namespace": "n" * 254}, "metadata.namespace is 254 characters long"),
        # the API server refuses these too: they would not be one segment of a page's URL
        ({"name": "a/b"}, "metadata.name a/b is not a valid Kubernetes name"),
        ({"name": "p", "namespace": "x%2f"}, "metadata.namespace x%2f is not a valid"),
        ({"name": ".."}, "metadata.name .. is not a valid Kubernetes name"),
    ],
)
def test_names_the_database_cannot_store_are_refused(
    metadata: dict[str, Any], problem: str
) -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}

    assert problem in refused("n.json", json.dumps(obj)).problem


def test_names_of_253_characters_are_fine() -> None:
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p" * 253, "namespace": "n"}}

    assert ("Pod", "n", "p" * 253) in parse(("n.json", json.dumps(obj))).objects


@pytest.mark.parametrize(
    ("obj", "problem"),
    [
        ({"apiVersion": "v1", "kind": "Po\x00d"}, 'the kind "Po\\u0000d" is not a kind'),
        ({"apiVersion": "v\x001", "kind": "Thing"}, "is not an apiVersion"),
    ],
)
def test_kinds_and_api_versions_with_control_characters_are_refused(
    obj: dict[str, Any], problem: str
) -> None:
    obj = {**obj, "metadata": {"name": "x"}}

    assert problem in refused("k.yaml", yaml_doc(obj)).problem


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"serverVersion": "v" * 65}, "spec.serverVersion is 65 characters long"),
        ({"cluster": "c" * 254}, "spec.cluster is 254 characters long"),
        ({"cluster": "a\x00"}, "spec.cluster has control characters"),
        ({"cluster": "a\tb"}, "spec.cluster has control characters"),
        ({"serverVersion": "v1\n"}, "spec.serverVersion has control characters"),
        ({"apiVersions": ["v1", "\x00"]}, "spec.apiVersions has a NUL character"),
        ({"kinds": {"Pod": {"status": "ok", "message": "a\x00"}}}, "spec.kinds has a NUL"),
        ({"ignored": {"\x00": 1}}, "spec.ignored has a NUL character"),
    ],
)
def test_snapshot_info_values_the_database_cannot_store_are_refused(
    spec: dict[str, Any], problem: str
) -> None:
    obj = {**info_object(spec), "metadata": {"name": "i"}}

    assert problem in refused("info.json", json.dumps(obj)).problem


def test_snapshot_info_messages_may_have_several_lines() -> None:
    spec = {"kinds": {"Pod": {"status": "error", "message": "line 1\nline 2"}}}

    assert parse(("i.json", json.dumps(info_object(spec)))).info == spec


def test_the_file_of_the_snapshot_info_is_kept() -> None:
    bundle = parse(("pod.json", json.dumps(POD)), ("info.json", json.dumps(info_object({}))))

    assert bundle.info_file == "info.json"
