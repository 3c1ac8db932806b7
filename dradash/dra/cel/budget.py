"""What one evaluation may spend: cel-go's runtime cost, wall-clock time and memory.

* **Cost** is Kubernetes' (``cel-go``'s CostTracker with the DRA limit of 1,000,000). dradash
  charges each call's cost *before* the call runs (from its arguments' sizes, as cel-go computes
  it after), so a call the budget cannot pay for never runs; the verdict is cel-go's.
* **Time** (not upstream: Kubernetes bounds a selector by its cost alone): a safety net for what
  the cost model misses, never the verdict on a selector that Kubernetes' cost limit stops. It
  is measured in the evaluating thread's CPU time, which a busy machine does not stretch, and it
  grows with the cost spent: an evaluation may use ``NET_SECONDS``, plus ``NET_PER_UNIT`` for
  each cost unit it has been charged (25 s at the cost limit). Work spends cost far faster than
  that: a comprehension step costs a unit or more in well under a microsecond, dradash's slowest
  function (CIDR parsing) about 5 µs a unit on a loaded 2-core EPYC; so an evaluation the cost
  limit stops reaches it first, on a machine several times slower too. What the net stops is
  an evaluation whose time outruns its cost (an equality over a list of lists repeated
  millions of times costs 1): ``Interrupted``, dradash's own limit, whose outcome is unknown.
  Every loop of the runtime (comprehensions and the functions' own loops) looks at the clock
  every ``CHECK_EVERY`` steps, from the first look on.
* **Memory** (not upstream): the values one evaluation creates (strings, bytes, lists, maps, list
  concatenations, comprehension results) are counted in approximate bytes, before each is built,
  against ``MEMORY_BUDGET``. cel-go builds a concatenation of lists lazily at a cost of 1 and
  formats a width of a billion if asked; Python would hold them. An evaluation that would go over
  ends with ``MemoryBudgetExceeded``, a runtime error on that device, instead.

The functions' implementations take plain CEL values, not the context: an evaluation makes its
context the thread's current one (``activate``), and the implementations reach it through
``each`` (their loops), ``allocate`` and ``remaining_cost``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from dradash.dra.cel.errors import CostLimitExceeded, Interrupted, MemoryBudgetExceeded

COST_LIMIT = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
MEMORY_BUDGET = 64 * 1024 * 1024  # approximate bytes of values created by one evaluation
CHECK_EVERY = 256  # loop steps between two looks at the clock
NET_SECONDS = 5.0  # CPU seconds any evaluation may use …
NET_PER_UNIT = 20e-6  # … and more for each cost unit it has been charged

# What a created value counts, in approximate bytes: a character of a string or a byte of bytes
# 1, a list element 8 (a pointer), a map entry 64, an integer that lists.range creates 36, a
# string that is one of many pieces (split, findAll, format) 56 more than its characters.
LIST_SLOT, MAP_ENTRY, NEW_INT, NEW_STRING = 8, 64, 36, 56

T = TypeVar("T")


@dataclass
class Context:
    """One evaluation's budget: cost units, the time safety net, memory."""

    limit: int = COST_LIMIT
    net: float | None = NET_SECONDS  # None: no time safety net
    per_unit: float = NET_PER_UNIT
    memory_limit: int = MEMORY_BUDGET
    cost: int = 0
    ticks: int = 0
    memory: int = 0
    # The evaluating thread's CPU time at the first look at the clock (CHECK_EVERY steps in:
    # reading it costs a system call, which an evaluation without loops never makes).
    started: float | None = None

    def spend(self, units: int = 1) -> None:
        self.cost += units
        if self.cost > self.limit:
            raise CostLimitExceeded()

    def tick(self) -> None:
        """Called once per loop step: looks at the clock every CHECK_EVERY steps."""
        self.ticks += 1
        if self.net is not None and not self.ticks % CHECK_EVERY:
            self.look_at_the_clock()

    def look_at_the_clock(self) -> None:
        """Interrupted once the evaluation has used more CPU time than its net allows."""
        now = time.thread_time()
        if self.started is None:
            self.started = now
        used = now - self.started
        if self.net is not None and used > self.net + self.cost * self.per_unit:
            raise Interrupted(used)

    def allocate(self, size: int, what: str) -> None:
        """Count a value of ``size`` approximate bytes before it is built."""
        self.memory += size
        if self.memory > self.memory_limit:
            raise MemoryBudgetExceeded(what, self.memory_limit)


class _Current(threading.local):
    context: Context | None = None


_current = _Current()


def activate(ctx: Context) -> Context | None:
    """Make ``ctx`` the thread's current context; returns the one it replaces (to restore)."""
    previous = _current.context
    _current.context = ctx
    return previous


def restore(previous: Context | None) -> None:
    _current.context = previous


def each(items: Iterable[T]) -> Iterator[T]:
    """``items``, one loop step of the current evaluation each (see Context.tick: the steps of
    all loops count together, so loops nested in loops look at the clock too)."""
    ctx = _current.context
    if ctx is None or ctx.net is None:
        yield from items
        return
    tick = ctx.tick
    for item in items:
        tick()
        yield item


def allocate(size: int, what: str) -> None:
    """Count a value an implementation is about to build against the current context."""
    ctx = _current.context
    if ctx is not None:
        ctx.allocate(size, what)


def require(size: int, what: str) -> None:
    """Refuse at once what would take more memory than the current evaluation has left (its
    parts are counted as they are built)."""
    ctx = _current.context
    if ctx is not None and ctx.memory + size > ctx.memory_limit:
        raise MemoryBudgetExceeded(what, ctx.memory_limit)


def remaining_cost() -> int:
    """How many cost units the current evaluation may still spend (the limit, without one)."""
    ctx = _current.context
    return COST_LIMIT if ctx is None else ctx.limit - ctx.cost
