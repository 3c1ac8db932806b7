"""cel-go's ``ext.Sets`` (``sets.contains``, ``sets.equivalent``, ``sets.intersects``:
``ext/sets.go`` in the cel-go that ``k8s.io/apiserver`` v0.36.2 requires). Their costs are the
set trackers' (cost.py).
"""

from __future__ import annotations

from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, declare, o
from dradash.dra.cel.values import equals, python_equality


def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    if python_equality(a, b):  # hashable, and equal as CEL says
        return set(b) <= set(a)
    return all(any(equals(x, y) for y in budget.each(a)) for x in b)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    if python_equality(a, b):
        return not set(a).isdisjoint(b)
    return any(any(equals(x, y) for y in budget.each(b)) for x in a)


def register() -> None:
    lt = t.list_of(t.param("T"))
    declare("sets.contains", o("list_sets_contains_list", [lt, lt], BOOL, _sets_contains))
    declare(
        "sets.equivalent",
        o("list_sets_equivalent_list", [lt, lt], BOOL,
          lambda a, b: _sets_contains(a, b) and _sets_contains(b, a)),
    )  # fmt: skip
    declare("sets.intersects", o("list_sets_intersects_list", [lt, lt], BOOL, _sets_intersects))
