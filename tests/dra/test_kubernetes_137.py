"""Kubernetes 1.37, the newest release: snapshots of it (and those without a version) are judged
by its rules.

What changed for the allocator since 1.36 (dynamic-resource-allocation master after v0.36.2,
v0.37.0-alpha.2 and later; kube_features.go of 1.37): DRADeviceTaints and DRADeviceTaintRules
GA (rules in resource.k8s.io/v1, applied by default), DRAResourceClaimDeviceStatus and
DRAExtendedResource GA; an AllocationResult's config names its requests only when it does not
apply to all of them, and a claim config is added once; CEL runtime errors name the device and
suggest optional chaining for "no such key"; shared-counter slices of other nodes are read only
when a pool is incomplete for the node. DRAListTypeAttributes is still alpha (off): with it, the
experimental allocator compares list-typed attributes as sets. DRAFractionalCapacityRange is beta
but off until the compatibility version is 1.37; DRADeviceCompatibilityGroups,
DRAOptionalNodeOperations (skipNodeOperations) and DRADerivedAttributes are alpha, off.

The allocator cases below are upstream's new or changed ones from
``structured/internal/allocatortesting/allocator_testing.go`` (master, July 2026), ported with the
builders of ``test_allocator``.
"""

from __future__ import annotations

from typing import Any

import pytest

from dradash.dra.allocator import Features
from dradash.dra.bundle import parse_bundle
from dradash.dra.kinds import kind_of
from dradash.dra.state import ClusterState

from .builders import fixture_objects
from .test_allocator import (
    BOOL_ATTRIBUTE,
    CLAIM0,
    CLASS_A,
    CLASS_B,
    COUNTER_SET1,
    DEVICE1,
    DEVICE2,
    DEVICE3,
    DRIVER_A,
    DRIVER_B,
    FROM_COUNTERS,
    INT_ATTRIBUTE,
    NODE1,
    NODE2,
    POOL1,
    REGION1,
    REQ0,
    REQ0_SUBREQ0,
    REQ0_SUBREQ1,
    REQ1,
    REQ2,
    SLICE1,
    SLICE2,
    SLICE3,
    STRING_ATTRIBUTE,
    SUBREQ0,
    SUBREQ1,
    VERSION_ATTRIBUTE,
    Case,
    allocation,
    allocation_with_configs,
    check_case,
    claim,
    claim_config,
    claim_with_requests,
    class_config,
    class_with_config,
    counter_consumption,
    counter_set,
    device,
    device_claim_config,
    device_class,
    device_configuration,
    distinct,
    gates,
    local_node_selector,
    match,
    node,
    request,
    request_with_prioritized_list,
    resource_pool,
    result,
    slice_with_counter_sets,
    slice_with_devices,
    slice_with_multiple_devices,
    slice_with_one_device,
    sub_request,
    with_configs,
    with_counters,
    with_requests,
)

_LOCAL = local_node_selector(NODE1)
DEVICE0 = "device-0"


def test_the_newest_release_is_the_default() -> None:
    features = Features.for_version("v1.37.1")
    assert features == Features() == Features.for_version("")
    assert features.release == 37 and features.device_taints  # DeviceTaintRules apply
    assert features.binding_conditions and features.consumable_capacity
    assert not features.list_type_attributes  # alpha
    assert not features.fractional_capacity_range  # beta, off until compatibility 1.37
    assert Features.for_version("v1.36.4").release == 36


# --- configs: once per claim config, no request list when it applies to all ----------------

CASES: dict[str, Case] = {
    "with-claim-config-for-two-requests": Case(
        claims=[
            with_configs(
                claim_with_requests(
                    CLAIM0,
                    None,
                    request(REQ0, CLASS_A, 1),
                    request(REQ1, CLASS_A, 1),
                    request(REQ2, CLASS_A, 1),
                ),
                device_claim_config(
                    [REQ0, REQ1], device_configuration(DRIVER_A, "deviceAttribute")
                ),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 3)],
        node=node(NODE1, REGION1),
        results=[
            allocation_with_configs(
                _LOCAL,
                [
                    result(REQ0, DRIVER_A, POOL1, DEVICE0),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                    result(REQ2, DRIVER_A, POOL1, DEVICE2),
                ],
                [claim_config([REQ0, REQ1], device_configuration(DRIVER_A, "deviceAttribute"))],
            )
        ],
    ),
    "claim-config-scoped-to-subrequests-of-one-request": Case(
        features=gates(prioritized_list=True),
        claims=[
            with_configs(
                with_requests(
                    claim(CLAIM0),
                    request_with_prioritized_list(
                        REQ0, sub_request(SUBREQ0, CLASS_A, 1), sub_request(SUBREQ1, CLASS_B, 1)
                    ),
                    request(REQ1, CLASS_A, 1),
                ),
                device_claim_config(
                    [REQ0_SUBREQ0, REQ0_SUBREQ1], device_configuration(DRIVER_A, "scoped")
                ),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2)],
        node=node(NODE1, REGION1),
        results=[
            allocation_with_configs(
                _LOCAL,
                [
                    result(REQ0_SUBREQ0, DRIVER_A, POOL1, DEVICE0),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                ],
                [
                    claim_config(
                        [REQ0_SUBREQ0, REQ0_SUBREQ1], device_configuration(DRIVER_A, "scoped")
                    )
                ],
            )
        ],
    ),
    "claim-config-covering-all-requests-is-cleared": Case(
        features=gates(prioritized_list=True),
        claims=[
            with_configs(
                with_requests(
                    claim(CLAIM0),
                    request_with_prioritized_list(
                        REQ0, sub_request(SUBREQ0, CLASS_A, 1), sub_request(SUBREQ1, CLASS_B, 1)
                    ),
                    request(REQ1, CLASS_A, 1),
                ),
                # Covers req0 (by its selected subrequest) and req1 (by name): every request.
                device_claim_config([REQ0_SUBREQ0, REQ1], device_configuration(DRIVER_A, "all")),
            )
        ],
        classes=[device_class(CLASS_A, DRIVER_A), device_class(CLASS_B, DRIVER_B)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 2)],
        node=node(NODE1, REGION1),
        results=[
            allocation_with_configs(
                _LOCAL,
                [
                    result(REQ0_SUBREQ0, DRIVER_A, POOL1, DEVICE0),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                ],
                [claim_config(None, device_configuration(DRIVER_A, "all"))],
            )
        ],
    ),
    # Shared counters on node-1, devices on node-1 and node-2: device-1 (node-1) already uses
    # 6 of 8 Gi, so on node-2 only device-3 (2 Gi) fits.
    "partitionable-devices-devices-consume-counter-set-in-different-nodes": Case(
        features=gates(partitionable_devices=True),
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[
            slice_with_counter_sets(
                SLICE1,
                NODE1,
                resource_pool(POOL1, 3),
                DRIVER_A,
                counter_set(COUNTER_SET1, {"memory": "8Gi"}),
            ),
            slice_with_devices(
                SLICE2,
                NODE1,
                resource_pool(POOL1, 3),
                DRIVER_A,
                with_counters(
                    device(DEVICE1, FROM_COUNTERS),
                    counter_consumption(COUNTER_SET1, {"memory": "6Gi"}),
                ),
            ),
            slice_with_devices(
                SLICE3,
                NODE2,
                resource_pool(POOL1, 3),
                DRIVER_A,
                with_counters(
                    device(DEVICE2, FROM_COUNTERS),
                    counter_consumption(COUNTER_SET1, {"memory": "6Gi"}),
                ),
                with_counters(
                    device(DEVICE3, FROM_COUNTERS),
                    counter_consumption(COUNTER_SET1, {"memory": "2Gi"}),
                ),
            ),
        ],
        allocated=[(DRIVER_A, POOL1, DEVICE1)],
        node=node(NODE2, REGION1),
        results=[allocation(local_node_selector(NODE2), result(REQ0, DRIVER_A, POOL1, DEVICE3))],
    ),
}

# A pool of one slice that only defines counter sets (twice the same: invalid), on node-1.
_COUNTERS_ON_NODE1 = [
    slice_with_counter_sets(
        SLICE1,
        NODE1,
        resource_pool(POOL1, 1),
        DRIVER_A,
        counter_set(COUNTER_SET1, {"memory": "8Gi"}),
        counter_set(COUNTER_SET1, {"memory": "8Gi"}),
    )
]


def _counters_only(release: int, error: str | None) -> Case:
    return Case(
        features=gates(partitionable_devices=True, release=release),
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=_COUNTERS_ON_NODE1,
        node=node(NODE2, REGION1),
        error=error,
    )


def test_shared_counter_slices_follow_their_node_selection_from_137() -> None:
    """1.36 read every slice with shared counters on every node, so node-2 saw node-1's
    invalid pool (a node error); 1.37 reads it where its node selection says (nothing fits)."""
    check_case(_counters_only(36, "invalid resource pools were encountered"))
    check_case(_counters_only(37, None))


# The same configs as 1.36 (v0.36.2) wrote them: every config with its request list, and a claim
# config once per request it names.
_V136 = gates(release=36)
CASES_136: dict[str, Case] = {
    "with-class-device-config": Case(
        features=_V136,
        claims=[claim_with_requests(CLAIM0, None, request(REQ0, CLASS_A, 1))],
        classes=[class_with_config(CLASS_A, DRIVER_A, "classAttribute")],
        slices=[slice_with_one_device(SLICE1, NODE1, POOL1, DRIVER_A)],
        node=node(NODE1, REGION1),
        results=[
            allocation_with_configs(
                _LOCAL,
                [result(REQ0, DRIVER_A, POOL1, DEVICE1)],
                [class_config([REQ0], device_configuration(DRIVER_A, "classAttribute"))],
            )
        ],
    ),
    "with-claim-config-for-two-requests": Case(
        features=_V136,
        claims=CASES["with-claim-config-for-two-requests"].claims,
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_multiple_devices(SLICE1, NODE1, POOL1, DRIVER_A, 3)],
        node=node(NODE1, REGION1),
        results=[
            allocation_with_configs(
                _LOCAL,
                [
                    result(REQ0, DRIVER_A, POOL1, DEVICE0),
                    result(REQ1, DRIVER_A, POOL1, DEVICE1),
                    result(REQ2, DRIVER_A, POOL1, DEVICE2),
                ],
                [claim_config([REQ0, REQ1], device_configuration(DRIVER_A, "deviceAttribute"))]
                * 2,  # fixed in 1.37: "Fix duplicated configs reported in resourceclaim status"
            )
        ],
    ),
}


# --- list-typed attributes (DRAListTypeAttributes, the experimental allocator) -------------
# These cases test the constraints. Upstream's class selects the driver with CEL, which reads
# every attribute; here the class has no selector, as dradash's CEL does not read list-typed
# attribute values (a device publishing one fails every selector, as in 1.36 with the gate
# off). The two cases where CEL must reject an attribute keep the CEL class.

_LISTS = gates(list_type_attributes=True)
_LISTS_DISTINCT = gates(list_type_attributes=True, consumable_capacity=True)


def _any_class(name: str) -> dict[str, Any]:
    out = device_class(name, DRIVER_A)
    out["spec"]["selectors"] = []
    return out


def _attr(name: str, **value: Any) -> dict[str, Any]:
    return {name: value}


def _lists_case(
    features: Any,
    constraint: dict[str, Any],
    count: int,
    attributes: list[dict[str, Any]],
    chosen: list[str] | None,
    *,
    requests: int = 1,
    cel_class: bool = False,
    error: str | None = None,
) -> Case:
    names = [DEVICE1, DEVICE2, DEVICE3][: len(attributes)]
    reqs = [request(REQ0, CLASS_A, count)] * requests
    return Case(
        features=features,
        claims=[claim_with_requests(CLAIM0, [constraint], *reqs)],
        classes=[device_class(CLASS_A, DRIVER_A) if cel_class else _any_class(CLASS_A)],
        slices=[
            slice_with_devices(
                SLICE1,
                NODE1,
                POOL1,
                DRIVER_A,
                *(device(n, None, a) for n, a in zip(names, attributes, strict=True)),
            )
        ],
        node=node(NODE1, REGION1),
        results=None
        if chosen is None
        else [allocation(_LOCAL, *(result(REQ0, DRIVER_A, POOL1, d) for d in chosen))],
        error=error,
    )


_S = "stringAttribute"
LIST_CASES: dict[str, Case] = {
    "list-attributes-match-constaint-scalar-string-values": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        2,
        [_attr(_S, string="value1"), _attr(_S, string="value1")],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-match-constaint-list-of-string-values-with-common-elements": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        2,
        [
            _attr(_S, strings=["value1", "value2", "value3"]),
            _attr(_S, strings=["value2", "value3", "value4"]),
        ],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-match-constaint-list-of-string-values-with-partially-common-elements": (
        _lists_case(
            _LISTS,
            match(STRING_ATTRIBUTE),
            3,
            [
                _attr(_S, strings=["value1", "value2"]),
                _attr(_S, strings=["value2", "value3"]),
                _attr(_S, strings=["value3", "value1"]),
            ],
            None,
        )
    ),
    "list-attributes-match-constaint-list-of-string-values-without-common-elements": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        1,
        [_attr(_S, strings=["value1", "value2"]), _attr(_S, strings=["value3", "value4"])],
        None,
        requests=2,
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-common-"
    "elements": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        2,
        [_attr(_S, string="value1"), _attr(_S, strings=["value1", "value2"])],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-with-partially-"
    "common-elements": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        3,
        [
            _attr(_S, string="value1"),
            _attr(_S, strings=["value1", "value2"]),
            _attr(_S, strings=["value2", "value3"]),
        ],
        None,
    ),
    "list-attributes-match-constaint-mixed-scalar-and-list-of-string-values-without-common-"
    "elements": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        2,
        [_attr(_S, string="value1"), _attr(_S, strings=["value2", "value3"])],
        None,
    ),
    "list-attributes-match-constaint-list-of-int-values-with-common-elements": _lists_case(
        _LISTS,
        match(INT_ATTRIBUTE),
        2,
        [_attr("numa", ints=[0, 1, 2]), _attr("numa", ints=[1, 2, 3])],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-match-constaint-list-of-bool-values-with-common-elements": _lists_case(
        _LISTS,
        match(BOOL_ATTRIBUTE),
        2,
        [_attr("boolAttribute", bools=[True, False]), _attr("boolAttribute", bools=[True])],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-match-constaint-list-of-version-values-with-common-elements": _lists_case(
        _LISTS,
        match(VERSION_ATTRIBUTE),
        2,
        [
            _attr("driverVersion", versions=["1.0.0", "1.1.0", "2.0.0"]),
            _attr("driverVersion", versions=["1.1.0", "2.0.0", "2.1.0"]),
        ],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-match-constaint-with-empty-or-unknown-type": _lists_case(
        _LISTS,
        match(STRING_ATTRIBUTE),
        2,
        [{_S: {}}, _attr(_S, strings=[])],
        None,
        cel_class=True,
        error="unsupported attribute value",
    ),
    "list-attributes-distinct-constraint-scalar-string-values-all-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(STRING_ATTRIBUTE),
        2,
        [_attr(_S, string="value1"), _attr(_S, string="value2")],
        [DEVICE1, DEVICE2],
    ),
    "list-attributes-distinct-constraint-scalar-string-values-not-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(STRING_ATTRIBUTE),
        2,
        [_attr(_S, string="value1"), _attr(_S, string="value1")],
        None,
    ),
    "list-attributes-distinct-constraint-list-of-string-values-all-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(STRING_ATTRIBUTE),
        2,
        [
            _attr(_S, strings=["value1", "value2"]),
            _attr(_S, strings=["value2", "value3"]),
            _attr(_S, strings=["value3", "value4"]),
        ],
        [DEVICE1, DEVICE3],
    ),
    "list-attributes-distinct-constraint-list-of-string-values-with-common-elements": (
        _lists_case(
            _LISTS_DISTINCT,
            distinct(STRING_ATTRIBUTE),
            2,
            [
                _attr(_S, strings=["value1", "value2", "value3"]),
                _attr(_S, strings=["value2", "value4", "value5"]),
            ],
            None,
        )
    ),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-all-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(STRING_ATTRIBUTE),
        2,
        [
            _attr(_S, string="value1"),
            _attr(_S, strings=["value1", "value2"]),
            _attr(_S, strings=["value2", "value3"]),
        ],
        [DEVICE1, DEVICE3],
    ),
    "list-attributes-distinct-constraint-mixed-scalar-and-list-with-common-elements": (
        _lists_case(
            _LISTS_DISTINCT,
            distinct(STRING_ATTRIBUTE),
            2,
            [_attr(_S, string="value1"), _attr(_S, strings=["value1", "value2"])],
            None,
        )
    ),
    "list-attributes-distinct-constraint-list-of-int-values-all-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(INT_ATTRIBUTE),
        2,
        [_attr("numa", ints=[0, 1]), _attr("numa", ints=[1, 2]), _attr("numa", ints=[2, 3])],
        [DEVICE1, DEVICE3],
    ),
    "list-attributes-distinct-constraint-list-of-bool-values-all-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(BOOL_ATTRIBUTE),
        2,
        [
            _attr("boolAttribute", bools=[True]),
            _attr("boolAttribute", bools=[True, False]),
            _attr("boolAttribute", bools=[False]),
        ],
        [DEVICE1, DEVICE3],
    ),
    "list-attributes-distinct-constraint-list-of-version-values-all-distinct": _lists_case(
        _LISTS_DISTINCT,
        distinct(VERSION_ATTRIBUTE),
        2,
        [
            _attr("driverVersion", versions=["1.0.0", "1.1.0"]),
            _attr("driverVersion", versions=["1.1.0", "2.0.0"]),
            _attr("driverVersion", versions=["2.0.0", "2.1.0"]),
        ],
        [DEVICE1, DEVICE3],
    ),
    "list-attributes-distinct-constaint-with-empty-or-unknown-type": _lists_case(
        _LISTS_DISTINCT,
        distinct(VERSION_ATTRIBUTE),
        2,
        [_attr("driverVersion", versions=[]), {"driverVersion": {"versions": None}}],
        None,
        cel_class=True,
        error="unsupported attribute value",
    ),
    # With the gate off, 1.36's CEL rejects a list-typed attribute (v0.36.2 expects this error;
    # 1.37's stored-expression environment reads lists whatever the gate, and then the
    # constraint fails instead: that needs list values in dradash's CEL).
    "list-attributes-disabled-match-constraint-with-lists": _lists_case(
        gates(release=36),
        match(STRING_ATTRIBUTE),
        2,
        [
            _attr(_S, strings=["value1", "value2", "value3"]),
            _attr(_S, strings=["value2", "value3", "value4"]),
        ],
        None,
        cel_class=True,
        error="unsupported attribute value",
    ),
    "list-attributes-disabled-distinct-constraint-with-lists": _lists_case(
        gates(consumable_capacity=True, release=36),
        distinct(STRING_ATTRIBUTE),
        2,
        [
            _attr(_S, strings=["value1", "value2", "value3"]),
            _attr(_S, strings=["value2", "value3", "value4"]),
        ],
        None,
        cel_class=True,
        error="unsupported attribute value",
    ),
    # Without the gate, the allocator compares scalars only: the first device's list is
    # remembered, the second has no scalar value to compare (the class reads no attribute).
    "list-attributes-disabled-match-constraint-without-cel": _lists_case(
        gates(),
        match(STRING_ATTRIBUTE),
        2,
        [
            _attr(_S, strings=["value1", "value2", "value3"]),
            _attr(_S, strings=["value2", "value3", "value4"]),
        ],
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_137_table(name: str) -> None:
    check_case(CASES[name])


@pytest.mark.parametrize("name", sorted(CASES_136))
def test_the_same_configs_under_136(name: str) -> None:
    check_case(CASES_136[name])


@pytest.mark.parametrize("name", sorted(LIST_CASES))
def test_list_typed_attributes(name: str) -> None:
    check_case(LIST_CASES[name])


def test_list_typed_attributes_select_the_experimental_allocator() -> None:
    assert _LISTS.implementation == "experimental"
    assert gates(consumable_capacity=True).implementation == "incubating"


# --- fractional capacity ranges (DRAFractionalCapacityRange, beta, off by default) ----------
# Upstream's consumable_capacity_test.go (useMilli, violatesPolicy, calculateConsumedCapacity).
# Not ported: its cases for requests past MaxInt64 or the milli-value range, which a later
# hardening turns into errors that abort the allocation.

_TOO_BIG_FOR_MILLI = "9224372036854776E3"


def _range(**bounds: str) -> dict[str, Any]:
    return {"validRange": bounds}


@pytest.mark.parametrize(
    ("valid_range", "fractional", "milli"),
    [
        ({"min": "200m", "max": "1", "step": "100m"}, False, False),  # fractional disabled
        ({"min": "200m", "max": "1", "step": "100m"}, True, True),  # all fractional
        ({"min": "1", "max": "3", "step": "1"}, True, True),  # all integer, fits in milli
        ({"min": _TOO_BIG_FOR_MILLI, "step": "1"}, True, False),  # min overflows milli
        ({"min": "1", "step": "0"}, True, False),  # step below 1m
    ],
)
def test_use_milli(valid_range: dict[str, str], fractional: bool, milli: bool) -> None:
    from dradash.dra.allocator.consumable import _scale

    assert (_scale(valid_range, fractional) == 1000) is milli


@pytest.mark.parametrize(
    ("requested", "policy", "fractional", "violates"),
    [
        ("1", None, False, False),  # no constraint
        ("1", {"default": "1", **_range(min="1", max="2")}, False, False),  # less than max
        ("2", {"default": "1", **_range(min="1", max="1")}, False, True),  # more than max
        ("1", {"default": "1", "validValues": ["1"]}, False, False),  # in set
        ("2", {"default": "1", "validValues": ["1"]}, False, True),  # not in set
        ("300m", {"default": "200m", **_range(min="200m", max="1", step="100m")}, True, False),
        ("250m", {"default": "200m", **_range(min="200m", max="1", step="100m")}, True, True),
        (_TOO_BIG_FOR_MILLI, {"default": "1", **_range(min="1", step="1")}, True, True),
    ],
)
def test_violates_policy(
    requested: str, policy: dict[str, Any] | None, fractional: bool, violates: bool
) -> None:
    from dradash.dra.allocator.consumable import violates_policy
    from dradash.dra.cel.quantity import Quantity

    assert violates_policy(Quantity.parse(requested), policy, fractional) is violates


@pytest.mark.parametrize(
    ("requested", "value", "policy", "fractional", "consumed"),
    [
        (None, "1", {}, False, "1"),  # empty
        (None, "2", {"default": "1", **_range(min="1")}, False, "1"),  # min in range
        (None, "2", {"default": "1", "validValues": ["1"]}, False, "1"),  # default in set
        ("2", "2", {"default": "1", **_range(min="1")}, False, "2"),  # more than min
        ("1", "2", {"default": "1", **_range(min="2")}, False, "2"),  # less than min
        ("2", "3", {"default": "1", **_range(min="1", step="2")}, False, "3"),  # round up
        ("2", "2", {"default": "1", **_range(min="1", step="1")}, False, "2"),  # no remaining
        (
            "9223372036854775806",
            "9223372036854775807",
            {"default": "1", **_range(min="1", step="2")},
            False,
            "9223372036854775807",
        ),  # the maximum safe boundary
        (
            "250m",
            "1",
            {"default": "200m", **_range(min="200m", max="1", step="100m")},
            True,
            "300m",
        ),
        (
            "400m",
            "1",
            {"default": "200m", **_range(min="200m", max="1", step="100m")},
            True,
            "400m",
        ),
        ("2", "3", {"default": "1", "validValues": ["1", "2", "3"]}, False, "2"),  # in set
        ("2", "3", {"default": "1", "validValues": ["1", "3"]}, False, "3"),  # set: round up
        ("3", "3", {"default": "1", "validValues": ["1", "2"]}, False, "3"),  # larger than set
    ],
)
def test_consumed_capacity(
    requested: str | None, value: str, policy: dict[str, Any], fractional: bool, consumed: str
) -> None:
    from dradash.dra.allocator.consumable import consumed_capacity
    from dradash.dra.cel.quantity import Quantity

    got = consumed_capacity(
        Quantity.parse(requested) if requested else None, Quantity.parse(value), policy, fractional
    )
    assert got.compare(Quantity.parse(consumed)) == 0


def test_fractional_ranges_allocate_under_the_gate_only() -> None:
    """A shared device with a range of 0.1 steps from 0.2: a request of 0.25 rounds up to 0.3
    with the gate; without it, whole units (Quantity.Value(), rounded up) read the range as
    1..1 in steps of 1, and the request consumes the whole 1."""
    capacity = {
        "value": "1",
        "requestPolicy": {"default": "200m", **_range(min="200m", max="1", step="100m")},
    }
    shared = {"name": DEVICE1, "allowMultipleAllocations": True, "capacity": {"cores": capacity}}
    req = request(REQ0, CLASS_A, 1)
    req["exactly"]["capacity"] = {"requests": {"cores": "250m"}}
    base = Case(
        claims=[claim_with_requests(CLAIM0, None, req)],
        classes=[device_class(CLASS_A, DRIVER_A)],
        slices=[slice_with_devices(SLICE1, NODE1, POOL1, DRIVER_A, shared)],
        node=node(NODE1, REGION1),
    )
    from dataclasses import replace

    from .test_allocator import run_case

    on, _ = run_case(
        replace(base, features=gates(consumable_capacity=True, fractional_capacity_range=True))
    )
    assert on.allocations is not None
    (result_,) = on.allocations[0]["devices"]["results"]
    assert result_["consumedCapacity"] == {"cores": "300m"}
    off, _ = run_case(replace(base, features=gates(consumable_capacity=True)))
    assert off.allocations is not None
    (result_,) = off.allocations[0]["devices"]["results"]
    assert result_["consumedCapacity"] == {"cores": "1"}


# --- DeviceTaintRules in resource.k8s.io/v1 ------------------------------------------------


def test_v1_device_taint_rules_in_a_bundle_taint_their_devices() -> None:
    """The rule of the Kubernetes docs (device-taints.md), as 1.37 serves it: v1."""
    (rule,) = fixture_objects("k8s-website__docs__device-taints__devicetaintrule-v1.yaml")
    assert rule["apiVersion"] == "resource.k8s.io/v1" and kind_of(rule) is not None
    selector = rule["spec"]["deviceSelector"]
    target = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": selector.get("driver", DRIVER_A),
            "pool": {"name": selector.get("pool", POOL1), "generation": 1, "resourceSliceCount": 1},
            "nodeName": NODE1,
            "devices": [{"name": selector.get("device", DEVICE1)}],
        },
    }
    bundle = parse_bundle([("bundle.json", _json([rule, target]))], max_bytes=1 << 20)
    state = ClusterState.build(bundle.objects.values())
    (device_,) = state.devices.values()
    assert device_.taints == [rule["spec"]["taint"]]


def _json(objects: list[dict[str, Any]]) -> bytes:
    import json

    return json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}).encode()
