"""Import validates resource.k8s.io objects as the API server does (validation.go, strict v1).

A refused object stops the import with the file, the object and the field named; older API
versions keep working, their fields named as they are written there.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from dradash.dra import validation
from dradash.dra.bundle import BundleError, parse_bundle

from .builders import claim, device, device_class, load_fixture, request

REAL = Path(__file__).parent.parent / "fixtures" / "real-dumps"
V1 = "resource.k8s.io/v1"


def parse(obj: dict[str, Any], name: str = "bundle.json") -> Any:
    return parse_bundle([(name, json.dumps(obj).encode())], max_bytes=10**7)


def refused(obj: dict[str, Any]) -> str:
    with pytest.raises(BundleError) as caught:
        parse(obj)
    return str(caught.value)


def good_slice(api_version: str = V1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.example.com-abcde"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
            "devices": [device("gpu-0"), device("gpu-1")],
            **spec,
        },
    }


@pytest.mark.parametrize(
    "kind", ["DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"]
)
def test_the_v1_schema_has_every_field_of_upstreams_round_trip_fixture(kind: str) -> None:
    """apimachinery's round-trip test data sets every field of the v1 types."""
    (obj,) = load_fixture(f"k8s-api__roundtrip-testdata__resource.k8s.io.v1.{kind}.yaml")

    assert validation._unknown_fields(obj, validation.SCHEMAS[kind], "") == []


def test_a_valid_slice_and_its_older_versions_are_accepted() -> None:
    assert parse(good_slice()).objects
    old = good_slice("resource.k8s.io/v1beta1")
    old["spec"]["devices"] = [{"name": d["name"], "basic": {}} for d in old["spec"]["devices"]]
    assert parse(old).objects


def test_a_v1_slice_with_the_v1beta1_basic_wrapper_is_refused_naming_the_field() -> None:
    """IBM Spyre's demo slice: apiVersion edited to v1, the basic wrapper kept."""
    name = "spyre__demo__generated-resourceslices__v1-with-basic.yaml"
    with pytest.raises(BundleError) as caught:
        parse_bundle([(name, (REAL / name).read_bytes())], max_bytes=10**7)

    message = str(caught.value)
    assert message.startswith(f"{name}: document 1: ")
    assert "ResourceSlice dra-example-driver-cluster-worker-spyre.ibm.com-k6wcv" in message
    assert 'spec.devices[0].basic: unknown field "spec.devices[0].basic"' in message
    assert "v1beta1 device wrapper" in message
    # The same slice declared as v1beta1 is what the driver published: it is read.
    v1beta1 = "spyre__demo__generated-resourceslices__v1beta1.yaml"
    assert parse_bundle([(v1beta1, (REAL / v1beta1).read_bytes())], max_bytes=10**7).objects


def test_unknown_fields_named_like_numbers_are_reported_in_order_not_a_crash() -> None:
    """Found by schemathesis through the selector API's inline slices: a field named "5" beside
    indexed paths made the sorting of the problems compare a number with a name."""
    bad = good_slice()
    bad["5"] = 1
    bad["spec"]["devices"][0]["7"] = True
    found = validation.problems(bad)
    assert [path for path, _ in found] == ["5", "spec.devices[0].7"]


def test_a_v1_claim_with_flat_v1beta1_request_fields_is_refused() -> None:
    obj = claim("c", requests=[{"name": "gpu", "deviceClassName": "gpu.example.com"}])

    message = refused(obj)
    assert "spec.devices.requests[0].deviceClassName: unknown field" in message
    assert "belongs under `exactly`" in message


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        (lambda s: s["spec"].pop("pool"), "spec.pool", "Required value"),
        (lambda s: s["spec"].pop("driver"), "spec.driver", "Required value"),
        (lambda s: s["spec"]["pool"].update(name=""), "spec.pool.name", "Required value"),
        (
            lambda s: s["spec"]["pool"].pop("resourceSliceCount"),
            "spec.pool.resourceSliceCount",
            "must be greater than zero",
        ),
        (
            lambda s: s["spec"]["pool"].update(generation=-1),
            "spec.pool.generation",
            "must be greater than or equal to zero",
        ),
        (lambda s: s["spec"].pop("nodeName"), "spec", "exactly one of `nodeName`"),
        (lambda s: s["spec"].update(allNodes=True), "spec", "multiple fields are set"),
        (
            lambda s: s["spec"]["devices"][1].update(name="GPU 1"),
            "spec.devices[1].name",
            "RFC 1123 label",
        ),
        (lambda s: s["spec"]["devices"][1].pop("name"), "spec.devices[1].name", "Required"),
        (
            lambda s: s["spec"]["devices"][1].update(name="gpu-0"),
            "spec.devices[1]",
            "Duplicate value: 'gpu-0'",
        ),
        (
            lambda s: s["spec"].update(devices=[device(f"gpu-{i}") for i in range(129)]),
            "spec.devices",
            "Too many: 129: must have at most 128 items",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update({"a" * 33: {"string": "x"}}),
            f'spec.devices[0].attributes["{"a" * 33}"]',
            "Too long: may not be more than 32 bytes",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update({"bad-name": {"string": "x"}}),
            'spec.devices[0].attributes["bad-name"]',
            "C identifier",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update(
                {"model": {"string": "x", "int": 1}}
            ),
            'spec.devices[0].attributes["model"]',
            "exactly one value must be specified",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update(
                {"driverVersion": {"version": "580.105"}}
            ),
            'spec.devices[0].attributes["driverVersion"].version',
            "semver.org",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update({"model": {"string": "x" * 65}}),
            'spec.devices[0].attributes["model"].string',
            "Too long: may not be more than 64 bytes",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update(
                {f"a{i}": {"int": i} for i in range(32)}
            ),
            "spec.devices[0]",
            "the total number of attributes and capacities must not exceed 32",
        ),
        (
            lambda s: s["spec"]["devices"][0].update(taints=[{"key": "k"}]),
            "spec.devices[0].taints[0].effect",
            "Required value",
        ),
        (
            lambda s: s["spec"]["devices"][0].update(nodeName="node-1"),
            "spec.devices[0]",
            "can only be set if `perDeviceNodeSelection`",
        ),
    ],
)
def test_slices_the_api_server_refuses_are_refused_with_the_field(
    change: Any, path: str, words: str
) -> None:
    obj = good_slice()
    change(obj)

    message = refused(obj)
    assert message.startswith("bundle.json: document 1: resource.k8s.io/v1 ResourceSlice ")
    assert f"would refuse it: {path}: " in message
    assert words in message


def test_older_versions_name_fields_as_they_are_written() -> None:
    obj = good_slice("resource.k8s.io/v1beta1")
    obj["spec"]["devices"] = [{"name": "gpu-0", "basic": {"attributes": {"x-y": {"int": 1}}}}]
    assert 'spec.devices[0].basic.attributes["x-y"]' in refused(obj)

    old_claim = claim("c", api_version="resource.k8s.io/v1beta1", requests=[{"name": "gpu"}])
    assert "spec.devices.requests[0].deviceClassName: Required value" in refused(old_claim)


@pytest.mark.parametrize(
    ("obj", "path", "words"),
    [
        (claim("c", requests=[{"name": "gpu"}]), "spec.devices.requests[0]", "exactly one of"),
        (
            claim("c", requests=[request(allocationMode="All", count=2)]),
            "spec.devices.requests[0].exactly.count",
            "must not be specified when allocationMode is 'All'",
        ),
        (
            claim("c", requests=[request(count=0)]),
            "spec.devices.requests[0].exactly.count",
            "must be greater than zero",
        ),
        (
            claim("c", requests=[request(allocationMode="Some")]),
            "spec.devices.requests[0].exactly.allocationMode",
            "Unsupported value",
        ),
        (
            claim("c", requests=[request(selectors=[{"cel": None}])]),
            "spec.devices.requests[0].exactly.selectors[0].cel",
            "Required value",
        ),
        (
            claim("c", requests=[request(selectors=[{"cel": {"expression": "x" * 10241}}])]),
            "spec.devices.requests[0].exactly.selectors[0].cel.expression",
            "Too long",
        ),
        (
            claim("c", results=[{"request": "gpu", "driver": "gpu.example.com", "pool": "p"}]),
            "status.allocation.devices.results[0].device",
            "Required value",
        ),
        (
            claim("c", reserved_for=[{"resource": "pods", "name": "p", "uid": "u"}]),
            "status.reservedFor",
            "may not be specified when `allocated` is not set",
        ),
        (device_class("x", ""), "spec.selectors[0].cel.expression", "Required value"),
    ],
)
def test_claims_and_classes_the_api_server_refuses_are_refused(
    obj: dict[str, Any], path: str, words: str
) -> None:
    message = refused(obj)
    assert f"would refuse it: {path}: " in message
    assert words in message


def test_several_problems_are_counted_and_the_first_is_named() -> None:
    obj = good_slice()
    obj["spec"].pop("pool")
    obj["spec"].pop("driver")

    assert "(and 1 more problem)" in refused(obj)


def test_a_refused_object_in_a_later_file_stops_the_whole_bundle() -> None:
    good = json.dumps(good_slice()).encode()
    bad = copy.deepcopy(good_slice())
    bad["metadata"]["name"] = "other"
    bad["spec"]["pool"]["resourceSliceCount"] = 0
    with pytest.raises(BundleError) as caught:
        parse_bundle([("a.json", good), ("b.yaml", yaml.safe_dump(bad).encode())], max_bytes=10**7)

    assert caught.value.filename == "b.yaml"
    assert "spec.pool.resourceSliceCount: Invalid value: 0" in str(caught.value)
