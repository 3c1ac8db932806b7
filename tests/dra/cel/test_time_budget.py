"""Time is dradash's safety net, never the verdict Kubernetes gives by cost (budget.py, batch.py).

Kubernetes bounds a selector by its runtime cost alone. dradash's time limits (the safety net
of each evaluation: CPU time growing with the cost spent; a request's time limit, between
devices) must not turn a cost-limit error into something else on a slow or busy machine, and
what they do stop is *unknown*, worded as dradash's own limit: not a CEL runtime error, not a
no-match. The clocks here are fakes that advance by a fixed step at each look, so the tests
do not depend on this machine's speed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from dradash.dra.cel import DeviceInput, budget, cel_device, compile_selector
from dradash.dra.cel import batch as batch_module
from dradash.dra.cel.batch import Selector, evaluate_devices
from dradash.dra.cel.budget import Context
from dradash.dra.cel.values import CostLimitExceeded, Interrupted

D = "dra.example.com"
TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
# compile_test.go's "expensive" (test_kubernetes_table.py): 10^7 steps, stopped by the cost limit.
EXPENSIVE = (
    f"{TEN}.all(x, {TEN}.all(y, {TEN}.all(z, {TEN}.all(z2, {TEN}.all(z3, {TEN}.all(z4, "
    f"{TEN}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
)
COST_LIMIT = "operation cancelled: actual cost limit exceeded"
UNKNOWN = "the outcome on these devices is unknown"


def upstream_device(model: str = "abc") -> DeviceInput:
    attributes = {f"attr-{i}": {"string": "abc"} for i in range(32)}
    return DeviceInput(driver=D, attributes=attributes | {"model": {"string": model}}, capacity={})


class SteppingClock:
    """``thread_time`` and ``monotonic`` that advance by ``step`` seconds at each look."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.looks = 0

    def __call__(self) -> float:
        self.looks += 1
        self.now += self.step
        return self.now


class FakeTime:
    def __init__(self, thread_time: Callable[[], float], monotonic: Callable[[], float]) -> None:
        self.thread_time = thread_time
        self.monotonic = monotonic


@pytest.fixture
def slow_machine(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], SteppingClock]:
    """Every look at either clock finds ``step`` seconds gone."""

    def install(step: float) -> SteppingClock:
        clock = SteppingClock(step)
        fake: Any = FakeTime(clock, clock)
        monkeypatch.setattr(budget, "time", fake)
        monkeypatch.setattr(batch_module, "time", fake)
        return clock

    return install


def test_the_expensive_case_ends_at_the_cost_limit_on_a_slow_machine(slow_machine) -> None:
    """The evaluation looks at the clock every 256 loop steps; 20 ms each time is 80 µs a step,
    six times what the steps of this selector take on a loaded 2-core EPYC. The net grows with
    the cost spent (20 µs a unit, this selector spends 6.7 a step), so the cost limit comes
    first: Kubernetes' answer."""
    clock = slow_machine(0.02)
    program = compile_selector(EXPENSIVE)
    with pytest.raises(CostLimitExceeded, match=COST_LIMIT):
        program.matches(cel_device(upstream_device()))
    assert clock.looks > 500  # the clock was looked at all along, and let it run
    # Through the fleet's evaluation too, with a request's time limit long past by its end.
    [verdict] = evaluate_devices([Selector(program)], [upstream_device()], time_limit=0.03)
    assert verdict.matches is None
    assert not verdict.unknown
    assert verdict.error == f"CEL runtime error: {COST_LIMIT}"


def test_the_net_stops_an_evaluation_whose_time_outruns_its_cost(slow_machine) -> None:
    """10 s at each look: far more than any work the cost model charges for; the outcome is
    unknown and says it is dradash's limit."""
    slow_machine(10.0)
    program = compile_selector(EXPENSIVE)
    with pytest.raises(Interrupted, match=r"its own limit, not Kubernetes'"):
        program.matches(cel_device(upstream_device()))
    [verdict] = evaluate_devices(
        [Selector(program, "class gpu: selector #0: ")], [upstream_device()]
    )
    assert verdict.matches is None
    assert verdict.unknown
    assert verdict.error == (
        "class gpu: selector #0: dradash stopped evaluating after 10 s of CPU time (its own "
        f"limit, not Kubernetes'): {UNKNOWN}"
    )
    assert "CEL runtime error" not in verdict.error


def test_a_context_without_a_net_never_looks_at_the_clock(slow_machine) -> None:
    clock = slow_machine(10.0)
    program = compile_selector("lists.range(1000).all(i, i >= 0)")
    assert program.matches({}, Context(net=None)) is True
    assert clock.looks == 0


def test_a_requests_time_limit_stops_between_devices_never_inside_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first device's evaluation outlasts the request's time limit: it still ends at the
    cost limit; the devices after it are unknown, worded as dradash's limit."""
    looks = iter([0.0, 0.0])  # the deadline is set, the first device starts: then 1,000 s on

    def monotonic() -> float:
        return next(looks, 1000.0)

    fake: Any = FakeTime(budget.time.thread_time, monotonic)
    monkeypatch.setattr(batch_module, "time", fake)
    program = compile_selector(f'device.attributes["{D}"].model != "" && {EXPENSIVE}')
    devices = [upstream_device("a"), upstream_device("b"), upstream_device("c")]
    first, second, third = evaluate_devices([Selector(program)], devices, time_limit=5)
    assert first.error == f"CEL runtime error: {COST_LIMIT}"
    assert not first.unknown
    for verdict in (second, third):
        assert verdict.matches is None
        assert verdict.unknown
        assert verdict.error == (
            f"dradash stopped evaluating after 5 s (its own time limit for one request, not "
            f"Kubernetes'): {UNKNOWN}"
        )
    assert second is third  # one message: the playground shows them as one group


def test_diagnostics_share_one_net() -> None:
    """failed_clauses runs each clause on its own cost budget but all under the net of the
    context it is given."""
    program = compile_selector("1 == 2 && lists.range(1000).all(i, i >= 0) && false")
    ctx = Context(net=-1.0)  # run out at the first look
    assert program.failed_clauses({}, ctx) == [
        "1 == 2",
        "lists.range(1000).all(i, i >= 0)",
        "false",
    ]
    assert program.failed_clauses({}, Context()) == ["1 == 2", "false"]
