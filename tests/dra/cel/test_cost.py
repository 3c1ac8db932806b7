"""Runtime cost, as cel-go's CostTracker and the apiserver's library.CostEstimator count it.

The tables are ported from k8s.io/apiserver/pkg/cel/library/cost_test.go (v0.36.2), whose
environment does not set cel.OptOptimize: they run here with the optimizer off too (with it, as
in DRA's environment, literal lists are constants and cost nothing)."""

from __future__ import annotations

import pytest

from dradash.dra.cel import DeviceInput, cel_device, compile_selector
from dradash.dra.cel.checker import check
from dradash.dra.cel.compiler import Context, plan
from dradash.dra.cel.dialect import DEFAULT
from dradash.dra.cel.syntax import parse


def actual_cost(expression: str, *, optimize: bool = False, device: object = None) -> int:
    program = plan(expression, check(parse(expression), DEFAULT), optimize=optimize)
    ctx = Context()
    program.evaluate(device or {}, ctx)  # type: ignore[arg-type]
    return ctx.cost


@pytest.mark.parametrize(
    ("expression", "cost"),
    [
        # TestStringLibrary
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3),
        ("'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9),
        ("'ABCDEFGHIJ abcdefghij'.upperAscii()", 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij')", 3),
        ("strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 9),
        ("'abc 123 def 123'.replace('123', '456')", 3),
        ("'abc 123 def 123'.replace('', 'x')", 3),
        ("'abc 123 def 123'.replace('123', '')", 3),
        ("'abc 123 def 123'.replace('123', '456', 1)", 3),
        ("'abc 123 def 123'.split(' ')", 3),
        ("'abc 123 def 123'.split(' ', 1)", 3),
        ("'abc 123 def 123'.substring(5)", 2),
        ("'abc 123 def 123'.substring(5, 8)", 2),
        ("'  abc 123 def 123  '.trim()", 2),
        ("['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", 15),
        ("['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", 13),
        ("'abc 123 def 123'.find('123')", 2),
        ("'abc 123 def 123'.findAll('123')", 2),
        ("'abc 123 def 123'.findAll('123', 1)", 2),
        # TestQuantity
        ('quantity("12Mi")', 1),
        ('isQuantity("20")', 1),
        ('quantity("200M") == quantity("200M")', 3),
        ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 6),
        ('quantity("50M").isLessThan(quantity("50Mi"))', 3),
        ('quantity("200M").compareTo(quantity("0.2G")) > 0', 4),
        ('quantity("50k").add(quantity("20")) == quantity("50.02k")', 5),
        ('quantity("50k").sub(20) == quantity("49980")', 4),
        ('quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0', 6),
        ('quantity("50k").asInteger() > 0', 3),
        ('quantity("50").isInteger()', 2),
        ('quantity("50.703k").asApproximateFloat() > 0.0', 3),
        # TestSetsCost
        ("sets.contains([], [])", 21),
        ("sets.contains([1], [1])", 22),
        ("sets.contains([1, 2, 3, 4], [2, 3])", 29),
        ("!sets.contains([1], [1, 2])", 24),
        # (the table's cases mixing element types do not compile here: Kubernetes' base
        # environment validates homogeneous aggregate literals, the test's does not)
    ],
)
def test_runtime_cost_matches_the_apiserver_table(expression: str, cost: int) -> None:
    assert actual_cost(expression) == cost


D = "dra.example.com"
TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


@pytest.mark.parametrize(
    ("expression", "cost"),
    [
        # attribute chains: the variable costs 1, each field or index 1 more
        (f'device.attributes["{D}"].name', 4),
        (f'"{D}" in device.attributes', 3),
        ('device.driver == ""', 2),
        # literal lists are constants under OptOptimize; `in` a literal list is a set lookup
        ("1 in [1, 2, 3]", 0),
        # all(): per element the loop condition (2) and the step (1 + predicate), then 1
        (f"{TEN}.all(x, x > 0)", 10 * (2 + 1 + 2) + 1),
        # cel.bind: the bound value is computed when first used, once
        (f'cel.bind(d, device.attributes["{D}"], d.name && d.name)', 3 + 2 * 2),
    ],
)
def test_runtime_cost_in_the_dra_environment(expression: str, cost: int) -> None:
    dev = cel_device(DeviceInput(driver=D, attributes={"name": {"bool": True}}, capacity={}))
    assert actual_cost(expression, optimize=True, device=dev) == cost


def test_nested_loops_cost_what_kubernetes_charges() -> None:
    """The corpus's rc0001050: this costs 724,812 in Kubernetes (issue 16)."""
    expression = "lists.range(300).all(i, lists.range(300).all(j, i + j >= 0))"
    assert actual_cost(expression, optimize=True) == 724_812


def test_diagnostics_never_turn_a_false_into_a_cost_error() -> None:
    expensive = " && ".join([f"{TEN}.all(a, {TEN}.all(b, {TEN}.all(c, {TEN}.all(d, true))))"] * 20)
    program = compile_selector(f"1 == 2 && {expensive}")
    dev = cel_device(DeviceInput(driver=D, attributes={}, capacity={}))
    assert program.matches(dev) is False
    assert program.failed_clauses(dev)[0] == "1 == 2"
