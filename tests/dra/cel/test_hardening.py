"""Issue 13 item 1: nothing one selector sends can take a worker down. Regexes are RE2 (linear
time), string functions cost what the strings they touch cost (so a string-building expression
stops at the cost limit before it builds), and every evaluation has a wall-clock budget."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from dradash.dra.cel import CelCompileError, CelEvalError, DeviceInput, cel_device, compile_selector
from dradash.dra.cel.batch import Selector, evaluate_devices
from dradash.dra.cel.compiler import Context
from dradash.dra.cel.values import CostLimitExceeded, Interrupted, MemoryBudgetExceeded

D = "dra.example.com"


def device(model: str) -> DeviceInput:
    return DeviceInput(driver=D, attributes={"model": {"string": model}}, capacity={})


@pytest.mark.parametrize("length", [27, 64, 100_000])
def test_a_backtracking_regex_answers_at_once(length: int) -> None:
    program = compile_selector(f'device.attributes["{D}"].model.matches("(a+)+$")')
    started = time.monotonic()
    assert program.matches(cel_device(device("a" * length + "!"))) is False
    assert time.monotonic() - started < 0.5


def test_regexes_are_re2() -> None:
    assert compile_selector('"\\u00e9t\\u00e9".matches("^\\\\pL+$")').matches({}) is True
    with pytest.raises(CelCompileError, match="invalid matches argument"):
        compile_selector('"x".matches("(?=a)")')
    with pytest.raises(CelCompileError, match="program instantiation failed"):
        compile_selector('"x".find("(") == ""')


EIGHT_REPLACES = f'device.attributes["{D}"].model' + '.replace("a", "aaaaaaaaaa")' * 8


def test_chained_replaces_stop_at_the_cost_limit_before_building_the_string() -> None:
    program = compile_selector(EIGHT_REPLACES + ".size() > 0")
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(CostLimitExceeded, match="actual cost limit exceeded"):
            program.matches(cel_device(device("a" * 10)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 1
    assert peak < 64 * 1024 * 1024  # Kubernetes builds 10^8 characters before it stops


def test_string_concatenation_is_charged_by_size() -> None:
    doubling = "cel.bind(s0, 'xxxxxxxxxxxxxxxx', " + "".join(
        f"cel.bind(s{i + 1}, s{i} + s{i}, " for i in range(30)
    )
    program = compile_selector(doubling + "size(s30) > 0" + ")" * 31)
    with pytest.raises(CostLimitExceeded):
        program.matches({})


def test_lists_doubled_past_the_memory_budget_are_refused() -> None:
    """Not upstream: cel-go concatenates lists lazily at cost 1, so `size(l30) > 0` is true
    there; dradash stops at its memory budget instead of holding 2^33 elements."""
    doubling = "cel.bind(l0, [1, 2, 3, 4, 5, 6, 7, 8], " + "".join(
        f"cel.bind(l{i + 1}, l{i} + l{i}, " for i in range(30)
    )
    program = compile_selector(doubling + "size(l30) > 0" + ")" * 31)
    started = time.monotonic()
    with pytest.raises(MemoryBudgetExceeded):
        program.matches({})
    assert time.monotonic() - started < 2


SLOW = "lists.range(300).all(x, lists.range(300).all(y, y >= 0))"


def test_the_safety_net_interrupts_an_evaluation_whose_time_outruns_its_cost() -> None:
    program = compile_selector(SLOW)
    assert program.matches({}) is True  # within the cost limit
    started = time.monotonic()
    with pytest.raises(Interrupted):  # a net that allows nothing per cost unit
        program.matches({}, Context(net=0.01, per_unit=0.0))
    assert time.monotonic() - started < 0.5


def test_every_device_evaluation_has_its_own_safety_net(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dradash.dra.cel.budget.NET_SECONDS", 0.01)
    monkeypatch.setattr("dradash.dra.cel.budget.NET_PER_UNIT", 0.0)
    [verdict] = evaluate_devices([Selector(compile_selector(SLOW))], [device("a")])
    assert verdict.matches is None
    assert verdict.unknown
    assert "its own limit, not Kubernetes'" in (verdict.error or "")


def test_a_runtime_error_is_not_a_compile_error_for_costly_expressions() -> None:
    program = compile_selector(EIGHT_REPLACES + ' == ""')
    with pytest.raises(CelEvalError, match="actual cost limit exceeded"):
        program.matches(cel_device(device("aaaaaaaaaa")))
