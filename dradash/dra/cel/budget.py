"""What one evaluation may spend: cel-go's runtime cost, wall-clock time and memory.

* **Cost** is Kubernetes' (``cel-go``'s CostTracker with the DRA limit of 1,000,000). dradash
  charges each call's cost *before* the call runs (from its arguments' sizes, as cel-go computes
  it after), so a call the budget cannot pay for never runs; the verdict is cel-go's.
* **Time**: an optional deadline, checked in every loop of the runtime (comprehensions and the
  functions' own loops), now and then. A safety net: an evaluation within the cost limit ends
  long before it.
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

# What a created value counts, in approximate bytes: a character of a string or a byte of bytes
# 1, a list element 8 (a pointer), a map entry 64, an integer that lists.range creates 36, a
# string that is one of many pieces (split, findAll, format) 56 more than its characters.
LIST_SLOT, MAP_ENTRY, NEW_INT, NEW_STRING = 8, 64, 36, 56

T = TypeVar("T")


@dataclass
class Context:
    """One evaluation's budget: cost units, an optional wall-clock deadline, memory."""

    limit: int = COST_LIMIT
    deadline: float | None = None
    memory_limit: int = MEMORY_BUDGET
    cost: int = 0
    ticks: int = 0
    memory: int = 0

    def spend(self, units: int = 1) -> None:
        self.cost += units
        if self.cost > self.limit:
            raise CostLimitExceeded()

    def tick(self) -> None:
        """Called once per loop step: looks at the clock every CHECK_EVERY steps."""
        self.ticks += 1
        if (
            self.deadline is not None
            and not self.ticks % CHECK_EVERY
            and time.monotonic() > self.deadline
        ):
            raise Interrupted()

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
    if ctx is None or ctx.deadline is None:
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
