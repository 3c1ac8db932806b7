"""Selectors over a whole fleet: one evaluation per distinct projection of the devices.

A fleet of 40,000 GPUs has few distinct values of the attributes a selector reads (products,
driver versions, NUMA nodes), so devices are grouped by that projection and each group is
evaluated once. Selectors apply in order, like the allocator's selectorsMatch: a device class's
selectors first, then the request's; the first that does not match decides, and the first error
aborts (an error would abort scheduling of any Pod whose claim uses the selector).

Time is dradash's concern, not Kubernetes': each evaluation has the safety net of budget.py
(CPU time growing with the cost spent), so a selector the cost limit stops gets the cost limit's
answer however busy the machine; and a caller's ``time_limit`` (a request's) applies to the
fleet, between evaluations, never to one in progress. A device either limit leaves unanswered
is *unknown*: ``matches`` None, ``unknown`` set and ``error`` saying that dradash stopped, never
a Kubernetes runtime error or a no-match.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel.compiler import Context, Program
from dradash.dra.cel.device import DeviceInput, cel_device, conversion_error, projections
from dradash.dra.cel.values import CelEvalError, Interrupted
from dradash.dra.stack import on_fresh_stack

UNKNOWN = "the outcome on these devices is unknown"


@dataclass(frozen=True)
class Selector:
    program: Program
    label: str = ""  # "class gpu.nvidia.com: selector #0: " for a class's own selectors


@dataclass
class DeviceVerdict:
    matches: bool | None  # None exactly when error is set
    error: str | None = None
    failed_clauses: list[str] = field(default_factory=list)  # for a device that does not match
    clauses: int = 0  # how many top-level && clauses the deciding selector has
    decided_by: str = ""  # the label of the selector that did not match or failed
    # dradash stopped before the verdict (its own time limits, not Kubernetes'): error says so
    unknown: bool = False


def evaluate_devices(
    selectors: Sequence[Selector],
    devices: Sequence[DeviceInput],
    *,
    errors: Sequence[str | None] | None = None,
    time_limit: float | None = None,
    columns: dict[tuple[str, ...], list[Any]] | None = None,
) -> list[DeviceVerdict]:
    """One verdict per device. ``errors`` are precomputed conversion errors and ``columns`` a
    cache of attribute values for this list of devices (see device.py). Runs on a fresh stack
    (dradash.dra.stack): its speed must not depend on how deep the caller is."""
    return on_fresh_stack(_evaluate_devices, selectors, devices, errors, time_limit, columns)


def _evaluate_devices(
    selectors: Sequence[Selector],
    devices: Sequence[DeviceInput],
    errors: Sequence[str | None] | None,
    time_limit: float | None,
    columns: dict[tuple[str, ...], list[Any]] | None,
) -> list[DeviceVerdict]:
    deadline = time.monotonic() + time_limit if time_limit else None
    reads = frozenset().union(*(s.program.reads for s in selectors))
    lists = any(s.program.list_values for s in selectors)  # one environment compiled them all
    verdicts: list[DeviceVerdict | None] = [None] * len(devices)
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, (device, key) in enumerate(
        zip(devices, projections(reads, devices, columns), strict=True)
    ):
        error = errors[i] if errors is not None else conversion_error(device, lists)
        if error is not None:
            verdicts[i] = DeviceVerdict(matches=None, error=error)
            continue
        groups.setdefault(key, []).append(i)
    stopped: DeviceVerdict | None = None
    for members in groups.values():
        if stopped is None and deadline is not None and time.monotonic() > deadline:
            stopped = DeviceVerdict(
                None,
                f"dradash stopped evaluating after {time_limit:.3g} s (its own time limit for "
                f"one request, not Kubernetes'): {UNKNOWN}",
                unknown=True,
            )
        verdict = stopped or _evaluate(selectors, devices[members[0]], lists)
        for i in members:
            verdicts[i] = verdict
    return [v for v in verdicts if v is not None]


def _evaluate(selectors: Sequence[Selector], device: DeviceInput, lists: bool) -> DeviceVerdict:
    try:
        value = cel_device(device, lists)
    except CelEvalError as exc:
        return DeviceVerdict(None, str(exc))
    for selector in selectors:
        program = selector.program
        try:
            if not program.matches(value, _context()):
                # Diagnostics only: failed_clauses never raises, so never changes the verdict.
                return DeviceVerdict(
                    False,
                    failed_clauses=program.failed_clauses(value, _context()),
                    clauses=len(program.clauses),
                    decided_by=selector.label,
                )
        except Interrupted as exc:
            return DeviceVerdict(
                None, f"{selector.label}{exc}: {UNKNOWN}", decided_by=selector.label, unknown=True
            )
        except CelEvalError as exc:
            return DeviceVerdict(
                None, f"{selector.label}CEL runtime error: {exc}", decided_by=selector.label
            )
    return DeviceVerdict(True)


def _context() -> Context:
    """A device evaluation's budget, with budget.py's safety net (read when called)."""
    return Context(net=budget.NET_SECONDS, per_unit=budget.NET_PER_UNIT)
