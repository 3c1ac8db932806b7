"""Kubernetes' own selector test table, ported: k8s.io/dynamic-resource-allocation/cel
compile_test.go, the 37 cases valid for 1.34+ (identical in v0.34.9, v0.35.6, v0.36.2 and master;
see dra-reference §2.1). Each case compiles the expression, then matches one device."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from dradash.dra.cel import CelCompileError, CelEvalError, DeviceInput, cel_device
from dradash.dra.cel import compile_selector as compile_
from dradash.dra.cel.dialect import Dialect


@dataclass
class Case:
    name: str
    expression: str
    driver: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    capacity: dict[str, Any] = field(default_factory=dict)
    allow_multiple: bool | None = None
    expect: bool | None = None
    compile_error: str = ""
    match_error: str = ""
    new_expression_gate_off: bool = False  # NewExpressions env with DRAConsumableCapacity off


D = "dra.example.com"
QTY_1MI = {"value": "1Mi"}
SERVICES = {"services": {"string": "some_example_value"}}

ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
EXPENSIVE = (
    f"{TEN}.all(x, {TEN}.all(y, {TEN}.all(z, {TEN}.all(z2, {TEN}.all(z3, {TEN}.all(z4, "
    f"{TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)

CASES = [
    Case("true", "true", expect=True),
    Case("false", "false", expect=False),
    Case("syntax-error", "?!", compile_error="Syntax error"),
    Case("type-error", "1", compile_error="must evaluate to bool or the unknown type, not int"),
    Case(
        "runtime-error-lookup-identifier",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
    ),
    Case(
        "runtime-error-lookup-map",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        match_error="no such key: noSuchAttr",
    ),
    Case("domain-check-negative", '"no-such-domain" in device.attributes', expect=False),
    Case(
        "domain-check-positive",
        '"dra.example.com" in device.attributes',
        attributes={f"{D}/something": {"bool": True}},
        expect=True,
    ),
    Case("empty-driver-name", 'device.driver == ""', expect=True),
    Case("real-driver-name", 'device.driver == "dra.example.com"', driver=D, expect=True),
    Case(
        "driver-name-qualifier",
        'device.attributes["dra.example.com"].name',
        driver=D,
        attributes={"name": {"bool": True}},
        expect=True,
    ),
    Case(
        "driver-name-qualifier-map-lookup",
        'device.attributes["dra.example.com"]["name"]',
        driver=D,
        attributes={"name": {"bool": True}},
        expect=True,
    ),
    Case(
        "bind",
        'cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
        driver=D,
        attributes={"name": {"bool": True}},
        expect=True,
    ),
    Case(
        "qualified-attribute-name",
        'device.attributes["other.example.com"].name',
        driver=D,
        attributes={"other.example.com/name": {"bool": True}},
        expect=True,
    ),
    Case(
        "bool",
        'device.attributes["dra.example.com"].name',
        driver=D,
        attributes={"name": {"bool": True}},
        expect=True,
    ),
    Case(
        "int",
        'device.attributes["dra.example.com"].name > 0',
        driver=D,
        attributes={"name": {"int": 1}},
        expect=True,
    ),
    Case(
        "string",
        'device.attributes["dra.example.com"].name == "fish"',
        driver=D,
        attributes={"name": {"string": "fish"}},
        expect=True,
    ),
    Case(
        "version",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        driver=D,
        attributes={"name": {"version": "1.0.0"}},
        expect=True,
    ),
    Case(
        "version_v",
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true))'
        ' && isSemver("v1.0.0", true)',
        driver=D,
        attributes={"name": {"version": "1.0.0"}},
        expect=True,
    ),
    Case(
        "quantity",
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        driver=D,
        capacity={"name": QTY_1MI},
        expect=True,
    ),
    Case(
        "check-positive",
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        driver=D,
        capacity={"name": QTY_1MI},
        expect=True,
    ),
    Case(
        "check-negative",
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        expect=True,
    ),
    Case(
        "all",
        ALL,
        driver=D,
        attributes={
            "bool": {"bool": True},
            "int": {"int": 1},
            "string": {"string": "fish"},
            "version": {"version": "1.0.0"},
        },
        capacity={"quantity": QTY_1MI},
        expect=True,
    ),
    Case(
        "many",
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && '
        'device.attributes["dra.example.com"].c',
        driver=D,
        attributes={"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        expect=True,
    ),
    Case(
        "check_attribute_domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        driver=D,
        attributes=SERVICES,
        expect=True,
    ),
    Case(
        "check_attribute_ids",
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        driver=D,
        attributes=SERVICES,
        expect=True,
    ),
    Case(
        "split_attribute",
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        driver=D,
        attributes=SERVICES,
        expect=True,
    ),
    Case(
        "regexp_attribute",
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        driver=D,
        attributes={"services": {"string": "asymetric"}},
        expect=True,
    ),
    Case(
        "check_capacity_domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        driver=D,
        capacity={"memory": QTY_1MI},
        expect=True,
    ),
    Case(
        "check_capacity_ids",
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        driver=D,
        capacity={"memory": QTY_1MI},
        expect=True,
    ),
    Case(
        "expensive",
        EXPENSIVE,
        driver=D,
        attributes={f"attr-{i}": {"string": "abc"} for i in range(32)},
        match_error="actual cost limit exceeded",
    ),
    Case(
        "allow_multiple_allocations",
        "device.allowMultipleAllocations == true",
        driver=D,
        allow_multiple=True,
        expect=True,
    ),
    Case(
        "allow_multiple_allocations_default",
        "device.allowMultipleAllocations == false",
        driver=D,
        expect=True,
    ),
    Case(
        "allow_multiple_allocations_false",
        "device.allowMultipleAllocations == false",
        driver=D,
        allow_multiple=False,
        expect=True,
    ),
    Case(
        "allow_multiple_allocations_new",
        "device.allowMultipleAllocations == false",
        driver=D,
        allow_multiple=False,
        expect=True,
    ),
    Case(
        "allow_multiple_allocations_enabled",
        "device.allowMultipleAllocations == false",
        driver=D,
        allow_multiple=False,
        expect=True,
    ),
    Case(
        "allow_multiple_allocations_disabled",
        "device.allowMultipleAllocations == false",
        driver=D,
        compile_error="undefined field 'allowMultipleAllocations'",
        new_expression_gate_off=True,
    ),
]


def test_the_table_has_all_37_cases() -> None:
    assert len(CASES) == 37
    assert len({c.name for c in CASES}) == 37


def dialect_of(case: Case) -> Dialect:
    if case.new_expression_gate_off:
        return Dialect(consumable_capacity=False, new_expressions=True)
    return Dialect()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kubernetes_selector_case(case: Case) -> None:
    if case.compile_error:
        with pytest.raises(CelCompileError) as excinfo:
            compile_(case.expression, dialect_of(case))
        assert case.compile_error in str(excinfo.value)
        return
    program = compile_(case.expression)
    device = cel_device(
        DeviceInput(
            driver=case.driver,
            attributes=case.attributes,
            capacity=case.capacity,
            allow_multiple_allocations=bool(case.allow_multiple),
        )
    )
    if case.match_error:
        with pytest.raises(CelEvalError) as excinfo:
            program.matches(device)
        assert case.match_error in str(excinfo.value)
        return
    assert program.matches(device) is case.expect
