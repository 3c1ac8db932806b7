"""normalize(): older resource.k8s.io shapes become v1, and the input is never touched."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from dradash.dra.normalize import normalize

from .builders import fixture_objects, load_fixture


def _claim(api_version: str, requests: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"resource.k8s.io/{api_version}",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"devices": {"requests": requests}},
    }


def _slice(api_version: str, devices: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"resource.k8s.io/{api_version}",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "n",
            "devices": devices,
        },
    }


def _by_kind_and_name(name: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"]["name"]): o for o in fixture_objects(name)}


def _claim_specs(name: str) -> dict[tuple[str, str], Any]:
    """The normalised claim specs of every ResourceClaim and ResourceClaimTemplate in a file."""
    out = {}
    for obj in fixture_objects(name):
        if obj["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
            out[(obj["kind"], obj["metadata"]["name"])] = normalize(obj)["spec"]
    return out


# --- claims and templates ------------------------------------------------------------------


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha3"])
def test_flat_request_fields_move_under_exactly(version: str) -> None:
    flat = {
        "name": "gpus",
        "deviceClassName": "gpu.example.com",
        "selectors": [{"cel": {"expression": "device.driver == 'gpu.example.com'"}}],
        "allocationMode": "ExactCount",
        "count": 2,
        "adminAccess": True,
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "capacity": {"requests": {"memory": "10Gi"}},
    }
    out = normalize(_claim(version, [flat]))

    assert out["apiVersion"] == "resource.k8s.io/v1"
    assert out["spec"]["devices"]["requests"] == [
        {
            "name": "gpus",
            "exactly": {k: v for k, v in flat.items() if k != "name"},
        }
    ]


def test_a_minimal_flat_request_gets_an_exactly_with_only_its_class() -> None:
    out = normalize(_claim("v1beta1", [{"name": "gpu", "deviceClassName": "gpu.example.com"}]))

    assert out["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}
    ]


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha3"])
def test_first_available_requests_are_kept_as_they_are(version: str) -> None:
    first_available = [
        {"name": "big", "deviceClassName": "gpu.example.com", "count": 1},
        {"name": "small", "deviceClassName": "gpu.example.com", "count": 2},
    ]
    out = normalize(_claim(version, [{"name": "gpu", "firstAvailable": first_available}]))

    assert out["spec"]["devices"]["requests"] == [
        {"name": "gpu", "firstAvailable": first_available}
    ]


def test_v1alpha3_first_available_template_from_scheduler_perf_keeps_both_subrequests() -> None:
    (tmpl,) = load_fixture("k8s__schedperf-dra__resourceclaimtemplate-first-available.yaml")

    out = normalize(tmpl)

    assert out["apiVersion"] == "resource.k8s.io/v1"
    assert out["spec"]["spec"]["devices"]["requests"] == [
        {
            "name": "req-0",
            "firstAvailable": [
                {"name": "sub-0", "deviceClassName": "no-such-class"},
                {"name": "sub-1", "deviceClassName": "test-class"},
            ],
        }
    ]


def test_template_claim_spec_is_normalised_and_its_metadata_kept() -> None:
    tmpl = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "c"}]}},
        },
    }

    out = normalize(tmpl)

    assert out["spec"]["metadata"] == {"labels": {"app": "x"}}
    assert out["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "c"}}
    ]


def test_constraints_config_and_status_of_a_v1beta1_claim_are_carried_over() -> None:
    obj = _claim("v1beta1", [{"name": "gpu", "deviceClassName": "c"}])
    obj["spec"]["devices"]["constraints"] = [{"matchAttribute": "gpu.example.com/numa"}]
    obj["spec"]["devices"]["config"] = [{"opaque": {"driver": "d", "parameters": {"a": 1}}}]
    obj["status"] = {"allocation": {"devices": {"results": [{"request": "gpu", "device": "g"}]}}}

    out = normalize(obj)

    assert out["spec"]["devices"]["constraints"] == obj["spec"]["devices"]["constraints"]
    assert out["spec"]["devices"]["config"] == obj["spec"]["devices"]["config"]
    assert out["status"] == obj["status"]


def test_v1beta2_claim_keeps_its_shape_but_is_labelled_v1() -> None:
    obj = _claim("v1beta2", [{"name": "gpu", "exactly": {"deviceClassName": "c", "count": 2}}])

    out = normalize(obj)

    assert out["apiVersion"] == "resource.k8s.io/v1"
    assert out["spec"] == obj["spec"]
    assert {k: v for k, v in out.items() if k != "apiVersion"} == {
        k: v for k, v in obj.items() if k != "apiVersion"
    }


def test_v1beta2_round_trip_claim_normalises_to_the_v1_round_trip_claim() -> None:
    (v1,) = load_fixture("k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaim.yaml")
    (v1beta2,) = load_fixture(
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta2.ResourceClaim.yaml"
    )

    assert normalize(v1beta2) == v1


def test_v1beta1_round_trip_claim_matches_v1_except_where_first_available_is_set() -> None:
    (v1,) = load_fixture("k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaim.yaml")
    (v1beta1,) = load_fixture(
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta1.ResourceClaim.yaml"
    )

    out = normalize(v1beta1)
    out_request = out["spec"]["devices"]["requests"][0]
    v1_request = v1["spec"]["devices"]["requests"][0]

    assert out["status"] == v1["status"]
    assert out["metadata"] == v1["metadata"]
    assert out["spec"]["devices"]["constraints"] == v1["spec"]["devices"]["constraints"]
    assert out_request["firstAvailable"] == v1_request["firstAvailable"]
    assert out_request["name"] == v1_request["name"]


def test_v1beta1_round_trip_claim_normalises_to_the_v1_round_trip_claim() -> None:
    # The fixtures are fuzzed separately (count 5 against 4), so compare which fields are set.
    (v1,) = load_fixture("k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaim.yaml")
    (v1beta1,) = load_fixture(
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta1.ResourceClaim.yaml"
    )

    (out_request,) = normalize(v1beta1)["spec"]["devices"]["requests"]
    (v1_request,) = v1["spec"]["devices"]["requests"]

    assert set(out_request) == set(v1_request) == {"name", "exactly", "firstAvailable"}
    assert set(out_request["exactly"]) == set(v1_request["exactly"])


@pytest.mark.parametrize(
    "name",
    ["gpu-test1", "gpu-test2", "gpu-test3", "gpu-test4", "gpu-test5", "gpu-test-mps", "imex-test1"],
)
def test_nvidia_quickstart_v1beta1_claims_normalise_to_their_v1_versions(name: str) -> None:
    prefix = "nvidia-gpu__demo__specs__quickstart"
    legacy = _claim_specs(f"{prefix}__v1beta1__{name}.yaml")
    current = _claim_specs(f"{prefix}__v1__{name}.yaml")

    assert legacy
    assert legacy == current


def test_nvidia_quickstart_v1alpha3_vfio_template_normalises_to_its_v1_version() -> None:
    prefix = "nvidia-gpu__demo__specs__quickstart"
    legacy_file = f"{prefix}__v1beta1__gpu-test-vfiopci.yaml"
    assert any(o["apiVersion"] == "resource.k8s.io/v1alpha3" for o in load_fixture(legacy_file))

    assert _claim_specs(legacy_file) == _claim_specs(f"{prefix}__v1__gpu-test-vfiopci.yaml")


def test_nvidia_quickstart_gpu_test6_differs_from_v1_only_in_cel_whitespace() -> None:
    # Upstream re-indented one line of the CEL expression when it copied the file to v1.
    prefix = "nvidia-gpu__demo__specs__quickstart"
    legacy = _claim_specs(f"{prefix}__v1beta1__gpu-test6.yaml")
    current = _claim_specs(f"{prefix}__v1__gpu-test6.yaml")

    def squash(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: squash(v) for k, v in value.items()}
        if isinstance(value, list):
            return [squash(v) for v in value]
        return re.sub(r"\s+", " ", value) if isinstance(value, str) else value

    assert legacy != current
    assert {k: squash(v) for k, v in legacy.items()} == {k: squash(v) for k, v in current.items()}


@pytest.mark.parametrize(
    ("legacy", "current"),
    [
        ("gpu-test1", "basic-resourceclaimtemplate__basic-resourceclaimtemplate"),
        ("gpu-test4", "basic-shared-claim-across-pods__basic-shared-claim-across-pods"),
        ("gpu-test5", "basic-resourceclaim-opaque-config__basic-resourceclaim-opaque-config"),
        ("gpu-test6", "initcontainer-shared-gpu__initcontainer-shared-gpu"),
    ],
)
def test_example_driver_legacy_v1beta1_demos_normalise_to_their_v1_examples(
    legacy: str, current: str
) -> None:
    old = _claim_specs(f"dra-example-driver__legacy-v1beta1__{legacy}.yaml")
    new = _claim_specs(f"dra-example-driver__{current}.yaml")

    assert old
    assert old == new


# --- slices --------------------------------------------------------------------------------


def test_v1beta1_basic_device_is_flattened() -> None:
    basic = {
        "attributes": {"model": {"string": "LATEST-GPU-MODEL"}},
        "capacity": {"memory": {"value": "80Gi"}},
    }
    out = normalize(_slice("v1beta1", [{"name": "gpu-0", "basic": basic}]))

    assert out["apiVersion"] == "resource.k8s.io/v1"
    assert out["spec"]["devices"] == [{"name": "gpu-0", **basic}]


def test_v1alpha3_bare_quantity_capacity_is_wrapped_in_value() -> None:
    device = {"name": "gpu-0", "basic": {"capacity": {"memory": "80Gi", "cores": 4}}}

    out = normalize(_slice("v1alpha3", [device]))

    assert out["spec"]["devices"][0]["capacity"] == {
        "memory": {"value": "80Gi"},
        "cores": {"value": 4},
    }


def test_capacity_already_in_value_form_is_left_alone() -> None:
    capacity = {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi"}}}

    out = normalize(_slice("v1beta2", [{"name": "gpu-0", "capacity": capacity}]))

    assert out["spec"]["devices"][0]["capacity"] == capacity


def test_example_driver_v1beta1_8gpu_listing_normalises_to_the_same_devices_as_v1() -> None:
    legacy = fixture_objects(
        "dra-example-driver__legacy-v1beta1__README__resourceslice-list-8gpu.yaml"
    )
    current = fixture_objects("dra-example-driver__README__resourceslice-list-8gpu.yaml")

    legacy_devices = [d for s in legacy for d in normalize(s)["spec"]["devices"]]
    current_devices = [d for s in current for d in normalize(s)["spec"]["devices"]]

    assert len(legacy_devices) == 8
    assert all("basic" not in d for d in legacy_devices)
    assert legacy_devices == current_devices


def test_v1alpha3_imex_slices_keep_their_ten_channels_and_node_selector() -> None:
    slices = load_fixture("nvidia-gpu__legacy-v1alpha3__imex-resourceslice.yaml")

    out = [normalize(s) for s in slices]

    assert [s["apiVersion"] for s in out] == ["resource.k8s.io/v1"] * 2
    for original, normalised in zip(slices, out, strict=True):
        devices = normalised["spec"]["devices"]
        assert [d["name"] for d in devices] == [f"imex-channel-{i}" for i in range(10)]
        assert devices[3] == {
            "name": "imex-channel-3",
            "attributes": {"type": {"string": "imex-channel"}, "channel": {"int": 3}},
        }
        assert normalised["spec"]["nodeSelector"] == original["spec"]["nodeSelector"]
        assert normalised["spec"]["pool"] == original["spec"]["pool"]


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_round_trip_slice_normalises_to_the_v1_round_trip_slice(version: str) -> None:
    (v1,) = load_fixture("k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceSlice.yaml")
    (old,) = load_fixture(
        f"k8s-api__roundtrip-testdata__resource.k8s.io.{version}.ResourceSlice.yaml"
    )

    assert normalize(old) == v1


# --- what is left alone ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaim.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceSlice.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaimTemplate.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.DeviceClass.yaml",
    ],
)
def test_v1_objects_come_out_equal(name: str) -> None:
    (obj,) = load_fixture(name)

    assert normalize(obj) == obj


@pytest.mark.parametrize("kind", ["ResourceClaim", "ResourceSlice", "DeviceClass"])
def test_v1_objects_are_returned_as_the_same_object(kind: str) -> None:
    (obj,) = load_fixture(f"k8s-api__roundtrip-testdata__resource.k8s.io.v1.{kind}.yaml")

    assert normalize(obj) is obj


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}},
        {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain", "spec": {}},
        {"kind": "ResourceClaim", "metadata": {"name": "no-api-version"}},
    ],
)
def test_objects_outside_resource_k8s_io_are_returned_as_is(obj: dict[str, Any]) -> None:
    assert normalize(obj) is obj


@pytest.mark.parametrize(
    "name",
    [
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta1.ResourceClaim.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta1.ResourceSlice.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta2.ResourceClaim.yaml",
        "nvidia-gpu__legacy-v1alpha3__imex-resourceslice.yaml",
        "nvidia-gpu__demo__specs__quickstart__v1beta1__gpu-test1.yaml",
        "dra-example-driver__legacy-v1beta1__README__resourceslice-list-8gpu.yaml",
    ],
)
def test_the_input_is_never_modified(name: str) -> None:
    objects = fixture_objects(name)
    before = copy.deepcopy(objects)

    for obj in objects:
        normalize(obj)

    assert objects == before


def test_the_output_shares_no_changed_container_with_the_input() -> None:
    obj = _claim("v1beta1", [{"name": "gpu", "deviceClassName": "c"}])
    before = copy.deepcopy(obj)

    out = normalize(obj)
    out["spec"]["devices"]["requests"].append({"name": "extra"})
    out["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3

    assert obj == before


# --- malformed shapes -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "spec": ["a"]},
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "spec": "text"},
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "spec": None},
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim"},
        _claim("v1beta1", {"name": "gpu"}),
        _claim("v1beta1", "gpu"),
        _claim("v1beta1", None),
        _claim("v1beta1", ["gpu", 3, None, ["x"]]),
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceClaim",
            "spec": {"devices": ["requests"]},
        },
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaimTemplate", "spec": [1]},
        {
            "apiVersion": "resource.k8s.io/v1beta1",
            "kind": "ResourceClaimTemplate",
            "spec": {"spec": "not a claim spec"},
        },
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "spec": []},
        _slice("v1beta1", {"gpu-0": {}}),
        _slice("v1beta1", ["gpu-0", 1, None]),
        _slice("v1beta1", [{"name": "gpu-0", "basic": "x"}]),
        _slice("v1beta1", [{"name": "gpu-0", "basic": {"capacity": ["80Gi"]}}]),
        _slice("v1alpha3", [{"name": "gpu-0", "capacity": "80Gi"}]),
        {"apiVersion": "resource.k8s.io/v1beta1", "kind": ["ResourceSlice"]},
        {"apiVersion": 7, "kind": "ResourceClaim", "spec": {}},
    ],
)
def test_malformed_shapes_never_raise_and_are_never_modified(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)

    out = normalize(obj)

    assert isinstance(out, dict)
    assert obj == before


def test_non_dict_entries_among_requests_and_devices_are_kept_in_place() -> None:
    claim = normalize(_claim("v1beta1", ["junk", {"name": "gpu", "deviceClassName": "c"}]))
    slice_ = normalize(_slice("v1beta1", [42, {"name": "gpu-0", "basic": {}}]))

    assert claim["spec"]["devices"]["requests"] == [
        "junk",
        {"name": "gpu", "exactly": {"deviceClassName": "c"}},
    ]
    assert slice_["spec"]["devices"] == [42, {"name": "gpu-0"}]


def test_a_request_with_exactly_already_is_not_wrapped_again() -> None:
    request = {"name": "gpu", "exactly": {"deviceClassName": "c"}}

    out = normalize(_claim("v1beta1", [request]))

    assert out["spec"]["devices"]["requests"] == [request]


def test_normalised_claim_keeps_its_kind_and_metadata() -> None:
    objects = _by_kind_and_name("nvidia-gpu__demo__specs__quickstart__v1beta1__gpu-test3.yaml")
    claim = objects[("ResourceClaim", "single-gpu")]

    out = normalize(claim)

    assert out["metadata"] == claim["metadata"]
    assert out["kind"] == "ResourceClaim"
