"""List-typed attributes (KEP-5491, DRAListTypeAttributes) and ``includes()``, as each release's
DRA CEL environment has them.

The 32 cases compile_test.go gained in v0.36.2 (dra-reference §2.2), with their gates and
environments, then 1.37's TestCompileEnvironments matrix (k8s.io/dynamic-resource-allocation
master, "KEP-5491: list attributes and includes function should be usable in StoredExpression
environment even if the feature gate is disabled"): the stored environment — the scheduler's —
knows lists and ``includes`` whatever the gate; only a new selector checked by the apiserver
follows it.
"""

from __future__ import annotations

from typing import Any

import pytest

from dradash.dra.cel import CelCompileError, CelEvalError, DeviceInput, cel_device
from dradash.dra.cel import compile_selector as compile_
from dradash.dra.cel.dialect import Dialect

D = "dra.example.com"
A = f'device.attributes["{D}"]'
NEW_ON = Dialect(release=36, list_types=True, new_expressions=True)
NEW_OFF = Dialect(release=36, consumable_capacity=False, new_expressions=True)
STORED_OFF = Dialect(release=36)
LONG = [f"value-{i}" for i in range(48)]

# (name, expression, attributes, dialect, expected: True/False, or ("compile"|"eval", text))
CASES_1_36: list[tuple[str, str, dict[str, Any], Dialect, Any]] = [
    ("macro-exists-on-int", f"{A}.name.exists(x, x > 0)", {"name": {"int": 1}}, NEW_ON,
     ("eval", "got 'types.Int', expected iterable type")),
    ("macro-exists-on-bool", f"{A}.name.exists(x, x == true)", {"name": {"bool": True}}, NEW_ON,
     ("eval", "got 'types.Bool', expected iterable type")),
    ("macro-exists-on-string", f'{A}.name.exists(x, x == "fish")', {"name": {"string": "fish"}},
     NEW_ON, ("eval", "got 'types.String', expected iterable type")),
    ("attribute-access-causes-match-error", f"{A}.names", {"names": {"strings": ["fish", "bird"]}},
     STORED_OFF, ("eval", "attribute names: unsupported attribute value")),
    ("list-of-bool", f"{A}.names.size() == 2", {"names": {"bools": [True, False]}}, NEW_ON, True),
    ("list-of-int", f"{A}.names.size() == 2", {"names": {"ints": [1, 2]}}, NEW_ON, True),
    ("list-of-string", f"{A}.names.size() == 2", {"names": {"strings": ["fish", "bird"]}}, NEW_ON,
     True),
    ("list-of-semver", f"{A}.names.size() == 2", {"names": {"versions": ["1.0.0", "2.0.0"]}},
     NEW_ON, True),
    ("macro-on-list-of-int", f"{A}.names.exists(x, x > 0)", {"names": {"ints": [1, 2]}}, NEW_ON,
     True),
    ("macro-on-list-of-string", f'{A}.names.all(x, x != "")',
     {"names": {"strings": ["fish", "bird"]}}, NEW_ON, True),
    ("macro-on-list-of-semver", f'{A}.names.all(x, x.isGreaterThan(semver("0.0.1")))',
     {"names": {"versions": ["1.0.0", "2.0.0"]}}, NEW_ON, True),
    ("includes-function-undeclared-error", f'{A}.name.includes("fish")', {}, NEW_OFF,
     ("compile", "undeclared reference to 'includes'")),
    ("includes-function-on-bool-scalar-positive", f"{A}.name.includes(true)",
     {"name": {"bool": True}}, NEW_ON, True),
    ("includes-function-on-bool-scalar-negative", f"{A}.name.includes(true)",
     {"name": {"bool": False}}, NEW_ON, False),
    ("includes-function-on-bool-list-positive", f"{A}.name.includes(true)",
     {"name": {"bools": [True, False]}}, NEW_ON, True),
    ("includes-function-on-bool-list-negative", f"{A}.name.includes(false)",
     {"name": {"bools": [True, True]}}, NEW_ON, False),
    ("includes-function-on-int-scalar-positive", f"{A}.name.includes(1)", {"name": {"int": 1}},
     NEW_ON, True),
    ("includes-function-on-int-scalar-negative", f"{A}.name.includes(1)", {"name": {"int": 2}},
     NEW_ON, False),
    ("includes-function-on-int-list-positive", f"{A}.name.includes(1)",
     {"name": {"ints": [1, 2]}}, NEW_ON, True),
    ("includes-function-on-int-list-negative", f"{A}.name.includes(3)",
     {"name": {"ints": [1, 2]}}, NEW_ON, False),
    ("includes-function-on-string-scalar-positive", f'{A}.name.includes("fish")',
     {"name": {"string": "fish"}}, NEW_ON, True),
    ("includes-function-on-string-scalar-negative", f'{A}.name.includes("bird")',
     {"name": {"string": "fish"}}, NEW_ON, False),
    ("includes-function-on-string-list-positive", f'{A}.name.includes("fish")',
     {"name": {"strings": ["fish", "bird"]}}, NEW_ON, True),
    ("includes-function-on-string-list-negative", f'{A}.name.includes("cat")',
     {"name": {"strings": ["fish", "bird"]}}, NEW_ON, False),
    ("includes-function-on-semver-scalar-positive", f'{A}.name.includes(semver("1.0.0"))',
     {"name": {"version": "1.0.0"}}, NEW_ON, True),
    ("includes-function-on-semver-scalar-negative", f'{A}.name.includes(semver("2.0.0"))',
     {"name": {"version": "1.0.0"}}, NEW_ON, False),
    ("includes-function-on-semver-list-positive", f'{A}.name.includes(semver("1.0.0"))',
     {"name": {"versions": ["1.0.0", "2.0.0"]}}, NEW_ON, True),
    ("includes-function-on-semver-list-negative", f'{A}.name.includes(semver("3.0.0"))',
     {"name": {"versions": ["1.0.0", "2.0.0"]}}, NEW_ON, False),
    ("includes-function-on-very-long-list-positive", f'{A}.name.includes("value-48")',
     {"name": {"strings": LONG}}, NEW_ON, False),
    ("includes-function-on-very-long-list-runtime-error", f'{A}.name.includes("value-49")',
     {"name": {"strings": [*LONG, "value-48"]}}, NEW_ON,
     ("eval", "'includes' function cannot be applied to lists longer than 48 values")),
    ("in-operator-on-list", f"1 in {A}.names", {"names": {"ints": [1, 2, 3]}}, NEW_ON, True),
    ("macro-exists-on-version", f'{A}.name.exists(x, x.isGreaterThan(semver("0.0.1")))',
     {"name": {"version": "1.0.0"}}, NEW_ON,
     ("eval", "got 'cel.Semver', expected iterable type")),
]  # fmt: skip


def outcome(expression: str, attributes: dict[str, Any], dialect: Dialect) -> Any:
    try:
        program = compile_(expression, dialect)
    except CelCompileError as exc:
        return ("compile", str(exc))
    try:
        return program.matches(cel_device(DeviceInput(D, attributes, {}), program.list_values))
    except CelEvalError as exc:
        return ("eval", str(exc))


def test_the_table_has_all_32_cases() -> None:
    assert len({c[0] for c in CASES_1_36}) == 32


@pytest.mark.parametrize(
    ("expression", "attributes", "dialect", "expected"),
    [c[1:] for c in CASES_1_36],
    ids=[c[0] for c in CASES_1_36],
)
def test_kubernetes_1_36_list_attribute_case(
    expression: str, attributes: dict[str, Any], dialect: Dialect, expected: Any
) -> None:
    got = outcome(expression, attributes, dialect)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple), got
        assert got[0] == expected[0]
        assert expected[1] in got[1]
    else:
        assert got is expected


# 1.37's TestCompileEnvironments: which of five expressions compile in each environment; each
# that compiles must match its device.
EXPRESSIONS = {
    "scalar-attribute": (f"{A}.ready", {"ready": {"bool": True}}, False),
    "list-attribute": (f"{A}.ids.exists(id, id == 1)", {"ids": {"ints": [1, 2]}}, False),
    "includes-function": (f'{A}.name.includes("fish")', {"name": {"string": "fish"}}, False),
    "multiple-allocations": ("device.allowMultipleAllocations", {}, True),
    "list-attribute-with-multiple-allocations": (
        f"device.allowMultipleAllocations && {A}.ids.exists(id, id == 1)",
        {"ids": {"ints": [1, 2]}},
        True,
    ),
}
EVERYTHING = set(EXPRESSIONS)
ENVIRONMENTS = {
    # (new_expressions, consumable_capacity, list_types): the expressions that compile
    (False, False, False): EVERYTHING,
    (False, True, False): EVERYTHING,
    (False, False, True): EVERYTHING,
    (False, True, True): EVERYTHING,
    (True, False, False): {"scalar-attribute"},
    (True, True, False): {"scalar-attribute", "multiple-allocations"},
    (True, False, True): {"scalar-attribute", "list-attribute", "includes-function"},
    (True, True, True): EVERYTHING,
}


@pytest.mark.parametrize(("environment", "compiles"), ENVIRONMENTS.items())
def test_kubernetes_1_37_environments(environment: tuple[bool, bool, bool], compiles: set) -> None:
    new_expressions, consumable_capacity, list_types = environment
    dialect = Dialect(37, list_types, consumable_capacity, new_expressions)
    for name, (expression, attributes, multiple) in EXPRESSIONS.items():
        try:
            program = compile_(expression, dialect)
        except CelCompileError:
            assert name not in compiles, name
            continue
        assert name in compiles, name
        device = DeviceInput(D, attributes, {}, allow_multiple_allocations=multiple)
        assert program.matches(cel_device(device, program.list_values)) is True, name


def test_1_36_scheduler_knows_includes_but_not_lists_without_the_gate() -> None:
    """v0.36.2: the stored environment declares ``includes`` whatever the gate (so a selector
    written for a newer apiserver still runs on scalars), but without the gate attributes are
    of the unknown type, which no macro may range over, and a list value stops every selector
    on the device; 1.35 has no ``includes`` at all."""
    assert outcome(f"{A}.name.includes(1)", {"name": {"int": 1}}, STORED_OFF) is True
    assert (
        "expression of type 'any' cannot be range of a comprehension (must be list, map, or "
        "dynamic)" in outcome(f"{A}.ids.exists(i, i == 1)", {}, STORED_OFF)[1]
    )
    assert outcome("dyn(true)", {}, STORED_OFF) == (
        "compile",
        "must evaluate to bool or the unknown type, not dyn",
    )
    assert (
        "undeclared reference to 'includes'"
        in outcome(f"{A}.name.includes(1)", {"name": {"int": 1}}, Dialect(release=35))[1]
    )
    assert outcome("true", {"ids": {"ints": [1]}}, STORED_OFF) == (
        "eval",
        "attribute ids: unsupported attribute value",
    )
    assert outcome("true", {"ids": {"ints": [1]}}, Dialect(release=36, list_types=True)) is True


def test_1_37_scheduler_converts_lists_whatever_the_gate() -> None:
    assert outcome(f"{A}.ids.size() == 2", {"ids": {"ints": [1, 2]}}, Dialect()) is True
    assert outcome("dyn(true)", {}, Dialect()) is True
    assert outcome("dyn(true)", {}, Dialect(new_expressions=True))[0] == "compile"


def test_a_bad_version_in_a_list_stops_the_device_as_a_scalar_one_does() -> None:
    assert outcome("true", {"v": {"versions": ["1.0.0", "v2"]}}, Dialect()) == (
        "eval",
        "attribute v: parse semantic version: No Major.Minor.Patch elements found",
    )
