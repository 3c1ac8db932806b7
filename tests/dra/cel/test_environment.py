"""The DRA CEL environment beyond Kubernetes' own table: each library function, CEL's error
absorption, optional syntax, cel.bind, limits, and what the compiler learns about an expression."""

from __future__ import annotations

import time

import pytest

from dradash.dra.cel import (
    MAX_EXPRESSION_LENGTH,
    CelCompileError,
    CelEvalError,
    DeviceInput,
    cel_device,
    compile_selector,
)
from dradash.dra.cel.compiler import KEYS, Context
from dradash.dra.cel.values import Interrupted

NVIDIA = "gpu.nvidia.com"
H100 = DeviceInput(
    driver=NVIDIA,
    attributes={
        "productName": {"string": "NVIDIA H100 80GB HBM3"},
        "type": {"string": "gpu"},
        "driverVersion": {"version": "570.158.1"},
        "cudaComputeCapability": {"version": "9.0.0"},
        "resource.kubernetes.io/numaNode": {"int": 1},
        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:1a"},
        "addressingMode": {"string": "HMM"},
    },
    capacity={"memory": {"value": "81559Mi"}},
)


def run(expression: str, device: DeviceInput = H100) -> bool:
    return compile_selector(expression).matches(cel_device(device))


def error_of(expression: str, device: DeviceInput = H100) -> str:
    with pytest.raises(CelEvalError) as excinfo:
        run(expression, device)
    return str(excinfo.value)


def compile_error_of(expression: str) -> str:
    with pytest.raises(CelCompileError) as excinfo:
        compile_selector(expression)
    return str(excinfo.value)


A = f"device.attributes['{NVIDIA}']"
C = f"device.capacity['{NVIDIA}']"


@pytest.mark.parametrize(
    "expression",
    [
        # the quantity library
        "quantity('1Gi') == quantity('1024Mi')",
        "isQuantity('80Gi') && !isQuantity('eighty')",
        f"{C}.memory.isGreaterThan(quantity('79Gi'))",
        f"{C}.memory.isLessThan(quantity('100Gi'))",
        f"{C}.memory.compareTo(quantity('81559Mi')) == 0",
        "quantity('1.5').isInteger() == false && quantity('2k').isInteger()",
        "quantity('2k').asInteger() == 2000",
        "quantity('1.5').asApproximateFloat() == 1.5",
        "sign(quantity('-1')) == -1 && sign(quantity('0')) == 0",
        "quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi')",
        "quantity('1Gi').sub(quantity('512Mi')) == quantity('512Mi')",
        "quantity('1').add(1) == quantity('2')",
        # the semver library
        f"{A}.driverVersion.isGreaterThan(semver('550.54.15'))",
        f"{A}.driverVersion.isLessThan(semver('580.0.0'))",
        f"{A}.driverVersion.compareTo(semver('570.158.1')) == 0",
        f"{A}.driverVersion == semver('570.158.1')",
        f"{A}.driverVersion.major() == 570 && {A}.driverVersion.minor() == 158",
        f"{A}.cudaComputeCapability.patch() == 0",
        "isSemver('1.2.3') && !isSemver('v1.2.3') && isSemver('v1.2.3', true)",
        "semver('1.2', true) == semver('1.2.0')",
        "semver('1.0.0-alpha').isLessThan(semver('1.0.0'))",
        # strings (ext.Strings) and regular expressions
        f"{A}.productName.lowerAscii() == 'nvidia h100 80gb hbm3'",
        f"{A}.productName.upperAscii().startsWith('NVIDIA H')",
        f"{A}.productName.split(' ')[1] == 'H100'",
        f"{A}.productName.split(' ', 2) == ['NVIDIA', 'H100 80GB HBM3']",
        f"{A}.productName.substring(7, 11) == 'H100'",
        f"{A}.productName.substring(7) == 'H100 80GB HBM3'",
        f"{A}.productName.indexOf('80GB') == 12 && {A}.productName.lastIndexOf('H') == 17",
        f"{A}.productName.charAt(7) == 'H'",
        f"{A}.productName.replace(' ', '-') == 'NVIDIA-H100-80GB-HBM3'",
        f"{A}.productName.replace(' ', '-', 1) == 'NVIDIA-H100 80GB HBM3'",
        "'  gpu  '.trim() == 'gpu'",
        "['a', 'b'].join('-') == 'a-b' && ['a', 'b'].join() == 'ab'",
        "strings.quote('a\"b') == '\"a\\\\\"b\"'",
        f"{A}.productName.contains('H100') && {A}.productName.endsWith('HBM3')",
        f"{A}.productName.matches('H[0-9]+') && !{A}.productName.matches('^H')",
        f"{A}.productName.find('[0-9]+GB') == '80GB'",
        "'a1b22c333'.findAll('[0-9]+') == ['1', '22', '333']",
        "'a1b22c333'.findAll('[0-9]+', 2) == ['1', '22']",
        f"size({A}.productName) == 21 && {A}.productName.size() == 21",
        # lists (library.Lists, ext.Lists)
        "[1, 2, 3].isSorted() && ![3, 1].isSorted()",
        "[1, 2, 3].sum() == 6 && [1.5, 2.5].sum() == 4.0",
        "[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3",
        "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2",
        "[1, 2, 3, 4].slice(1, 3) == [2, 3]",
        "[[1], [2, 3]].flatten() == [1, 2, 3] && [[[1]], [[2]]].flatten(2) == [1, 2]",
        "[1, 1, 2].distinct() == [1, 2] && [3, 1].sort() == [1, 3] && [1, 2].reverse() == [2, 1]",
        "[1, 2].first().value() == 1 && [1, 2].last().value() == 2 && ![].first().hasValue()",
        "lists.range(3) == [0, 1, 2]",
        "sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [2])",
        "sets.equivalent([1, 2], [2, 1, 1]) && sets.intersects([1, 2], [2, 5])",
        # macros
        "[1, 2, 3].all(x, x > 0) && [1, 2, 3].exists(x, x == 2)",
        "[1, 2, 3].exists_one(x, x > 2) && [1, 2, 3].existsOne(x, x == 1)",
        "[1, 2, 3].map(x, x * 2) == [2, 4, 6] && [1, 2, 3].map(x, x > 1, x) == [2, 3]",
        "[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]",
        "[10, 20].all(i, v, v == (i + 1) * 10) && {'a': 1}.exists(k, v, k == 'a' && v == 1)",
        "[1, 2].transformList(i, v, v + i) == [1, 3]",
        "{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
        f"{A}.exists(name, name == 'productName')",
        "device.attributes.exists(domain, domain == 'resource.kubernetes.io')",
        f"cel.bind(gpu, {A}, gpu.type == 'gpu' && gpu.productName.contains('H100'))",
        "cel.bind(x, 2, cel.bind(y, x * 3, y == 6))",
        # arithmetic, conversions, comparisons across numeric types
        "1 + 2 * 3 == 7 && 7 / 2 == 3 && -7 / 2 == -3 && -7 % 3 == -1 && 7.0 / 2.0 == 3.5",
        "1 < 2.5 && 2u > 1 && dyn(1) == 1.0 && 3 >= 3u",
        "int('42') == 42 && string(42) == '42' && double('1.5') == 1.5 && uint(3) == 3u",
        "bool('true') && string(true) == 'true' && dyn(1) == 1",
        "'ab' + 'cd' == 'abcd' && [1] + [2] == [1, 2]",
        "'a' < 'b' && !(true < false)",
        "2 in [1, 2] && 'a' in {'a': 1} && !('b' in {'a': 1})",
        "(true ? 1 : 2) == 1",
        "{'a': {'b': 1}}.a.b == 1 && {'a': 1}['a'] == 1 && [1, 2][1] == 2",
        "has({'a': 1}.a) && !has({'a': 1}.b)",
        # device fields
        f"device.driver == '{NVIDIA}' && !device.allowMultipleAllocations",
        "device.attributes['resource.kubernetes.io'].numaNode == 1",
        f"'{NVIDIA}' in device.attributes && !('amd.com' in device.attributes)",
        f"'productName' in {A} && has({A}.productName) && !has({A}.index)",
        "device.attributes['no.such.domain'].size() == 0",
        f"device.attributes.{NVIDIA.split('.')[0]}.size() == 0",
    ],
)
def test_it_evaluates_like_kubernetes(expression: str) -> None:
    assert run(expression) is True


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # && and || absorb errors, in either order, like cel-go
        (f"false && {A}.index == 0", False),
        (f"{A}.index == 0 && false", False),
        (f"true || {A}.index == 0", True),
        (f"{A}.index == 0 || true", True),
        # all/exists absorb errors the same way
        (f"[0, 1].all(i, i == 1 && {A}.index == i)", False),
        (f"[0, 1].exists(i, i == 0 || {A}.index == i)", True),
        # optional syntax
        (f"{A}.?index.orValue(0) == 0", True),
        (f"{A}.?index.hasValue()", False),
        (f"{A}.?productName.value() == 'NVIDIA H100 80GB HBM3'", True),
        (f"{A}[?'productName'].hasValue()", True),
        ("device.attributes['nope'].?x.orValue(7) == 7", True),
        ("optional.of(1).or(optional.of(2)).value() == 1", True),
        ("optional.none().or(optional.of(2)).value() == 2", True),
        ("optional.ofNonZeroValue('').hasValue()", False),
        ("optional.ofNonZeroValue('x').hasValue()", True),
        ("{'a': {'b': 1}}.?a.b.orValue(0) == 1", True),
        ("{'a': {'b': 1}}.?c.b.orValue(0) == 0", True),
        ("[1][?5].orValue(9) == 9", True),
    ],
)
def test_errors_are_absorbed_and_optionals_guard_lookups(expression: str, expected: bool) -> None:
    assert run(expression) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (f"{A}.index == 0", "no such key: index"),
        (f"{A}['index'] == 0", "no such key: index"),
        (f"{A}.index == 0 && true", "no such key: index"),
        (f"[0].all(i, {A}.index == i)", "no such key: index"),
        (f"{A}.productName > 1", "no such overload"),
        (f"{A}.productName.exists(x, x == 'a')", "got 'types.String', expected iterable type"),
        (f"{A}.driverVersion.exists(x, true)", "got 'cel.Semver', expected iterable type"),
        (f"{A}.productName", "CEL result of type string could not be converted to bool"),
        ("[1, 2][2] == 1", "index out of bounds: 2"),
        ("1 / 0 == 1", "division by zero"),
        ("1 % 0 == 1", "modulus by zero"),
        ("9223372036854775807 + 1 > 0", "integer overflow"),
        ("quantity('eighty') == quantity('80')", "quantities must match the regular expression"),
        ("semver('v1.0.0') == semver('1.0.0')", 'Invalid character(s) found in major number "v1"'),
        ("quantity('1.5').asInteger() == 1", "cannot convert"),
        ("optional.none().value() == 1", "optional.none() dereference"),
        ("'abc'.substring(5) == ''", "index out of range"),
        ("[].min() == 1", "empty list"),
    ],
)
def test_runtime_errors_carry_cel_go_wording(expression: str, message: str) -> None:
    assert message in error_of(expression)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("?!", "Syntax error"),
        ("device.attributes[", "Syntax error"),
        ("1", "must evaluate to bool or the unknown type, not int"),
        ("'a'", "must evaluate to bool or the unknown type, not string"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ("request.name == 'x'", "undeclared reference to 'request'"),
        ("foo(1)", "undeclared reference to 'foo'"),
        ("'a'.foo()", "undeclared reference to 'foo'"),
        ("device.name == 'gpu-0'", "undefined field 'name'"),
        ("1 + 'a' == 1", "found no matching overload for '_+_' applied to '(int, string)'"),
        ("cel.bind(1, 2, true)", "cel.bind() variable names must be simple identifiers"),
        ("'abc'.reverse() == 'cba'", "found no matching overload for 'reverse'"),
        ("1 == 1.0", "found no matching overload for '_==_' applied to '(int, double)'"),
        ("quantity('1').sign() == 1", "found no matching overload for 'sign'"),
        ("[1, 'a'].size() == 2", "expected type 'int' but found 'string'"),
        ("'x'.matches('(?=a)')", "invalid matches argument"),
        ("int('abc') == 1 || true", "program instantiation failed"),
        ("uint(-1) == 1u", "program instantiation failed: unsigned integer overflow"),
        ("'\\q' == 'q'", "Syntax error"),
        ("'\\u12' == 'q'", "Syntax error"),
        ("optional.of(true)", "must evaluate to bool or the unknown type, not optional_type(bool)"),
        ("", "Syntax error"),
        ("has(device)", "invalid argument to has() macro"),
    ],
)
def test_compile_errors_carry_kubernetes_wording(expression: str, message: str) -> None:
    assert message in compile_error_of(expression)


def test_expressions_over_the_length_limit_are_refused() -> None:
    longest = "true" + " " * (MAX_EXPRESSION_LENGTH - 4)
    assert compile_selector(longest).matches(cel_device(H100))
    message = compile_error_of(longest + " ")
    assert "Too long: may not be more than 10240 bytes" in message


def test_a_bad_version_attribute_fails_every_selector_on_that_device() -> None:
    device = DeviceInput(
        driver=NVIDIA, attributes={"driverVersion": {"version": "v570"}}, capacity={}
    )
    with pytest.raises(CelEvalError, match="attribute driverVersion: parse semantic version"):
        cel_device(device)


def test_list_valued_attributes_are_unsupported_values() -> None:
    device = DeviceInput(driver=NVIDIA, attributes={"names": {"strings": ["a", "b"]}}, capacity={})
    with pytest.raises(CelEvalError, match="attribute names: unsupported attribute value"):
        cel_device(device)


def test_the_cost_limit_stops_runaway_expressions_quickly() -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expression = (
        f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, true))))))"
    )
    started = time.monotonic()
    assert "actual cost limit exceeded" in error_of(expression)
    assert time.monotonic() - started < 30


def test_the_time_safety_net_interrupts_evaluation() -> None:
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    program = compile_selector(f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, true))))")
    with pytest.raises(Interrupted):
        program.matches(cel_device(H100), Context(net=-1.0))


@pytest.mark.parametrize(
    ("expression", "reads"),
    [
        (f"{A}.productName == 'x'", {("attributes", NVIDIA, "productName")}),
        (f"{A}['productName'] == 'x'", {("attributes", NVIDIA, "productName")}),
        (f"{C}.memory.isGreaterThan(quantity('1'))", {("capacity", NVIDIA, "memory")}),
        (f"device.driver == '{NVIDIA}'", {("driver",)}),
        (f"'{NVIDIA}' in device.attributes", {("attributes", KEYS)}),
        (f"'index' in {A}", {("attributes", NVIDIA, KEYS)}),
        (f"has({A}.index)", {("attributes", NVIDIA, "index")}),
        (f"{A}.?index.orValue(0) == 0", {("attributes", NVIDIA, "index")}),
        (f"cel.bind(g, {A}, g.type == 'gpu')", {("attributes", NVIDIA, "type")}),
        (f"{A}.exists(k, k == 'x')", {("attributes", NVIDIA, KEYS)}),
        (f"{A}[device.driver] == 1", {("attributes", NVIDIA), ("driver",)}),
        ("true", set()),
    ],
)
def test_the_compiler_knows_which_device_fields_an_expression_reads(
    expression: str, reads: set[tuple[str, ...]]
) -> None:
    assert compile_selector(expression).reads == reads


def test_top_level_clauses_tell_which_part_of_a_conjunction_fails() -> None:
    program = compile_selector(
        f"{A}.type == 'gpu' && {A}.productName.contains('A100') && {A}.index == 0"
    )
    failed = program.failed_clauses(cel_device(H100))
    assert failed == [f"{A}.productName.contains('A100')", f"{A}.index == 0"]


def test_compiled_programs_are_cached() -> None:
    assert compile_selector("device.driver == 'x'") is compile_selector("device.driver == 'x'")
