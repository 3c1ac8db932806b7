"""Lists: Kubernetes' ``library.Lists`` (``isSorted``, ``sum``, ``max``, ``min``,
``indexOf``, ``lastIndexOf``: ``k8s.io/apiserver/pkg/cel/library/lists.go`` at v0.36.2) and
cel-go's ``ext.Lists`` at version 3 (``slice``, ``flatten``, ``sort``, ``sortBy``'s
``@sortByAssociatedKeys``, ``lists.range``, ``reverse``, ``distinct``: ``ext/lists.go`` in
the cel-go that ``k8s.io/apiserver`` v0.36.2 requires). ``first`` and ``last`` are the optional
library's (optional.py).

The base environment adds them apart (library.Lists with version 1.0, ext.Lists later), hence
two registrations.
"""

from __future__ import annotations

import functools
from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel import types as t
from dradash.dra.cel.functions import (
    BOOL,
    BYTES,
    DBL,
    DUR,
    INT,
    LIST_A,
    STR,
    TS,
    UINT,
    A,
    Impl,
    declare,
    m,
    nso,
    o,
)
from dradash.dra.cel.library.stdlib import add, compare
from dradash.dra.cel.timelib import Duration, Timestamp
from dradash.dra.cel.values import NO_SUCH_OVERLOAD, CelEvalError, UInt, equals, python_equality


def _is_sorted(items: list[Any]) -> bool:
    prev = None
    for item in budget.each(items):
        if type(item) not in (int, UInt, float, str, bytes, bool, Timestamp, Duration):
            raise nso()
        if prev is not None and compare(prev, item) == 1:
            return False
        prev = item
    return True


def _sum(zero: Any) -> Impl:
    def total(items: list[Any]) -> Any:
        acc = zero
        for item in budget.each(items):
            acc = add(acc, item)
        return acc

    return total


def _extreme(name: str, prefer: int) -> Impl:
    def pick(items: list[Any]) -> Any:
        result = None
        for item in budget.each(items):
            if type(item) not in (int, UInt, float, str, bytes, bool, Timestamp, Duration):
                raise nso()
            if result is None or compare(result, item) == prefer:
                result = item
        if result is None:
            raise CelEvalError(f"{name} called on empty list")
        return result

    return pick


def _list_index_of(items: list[Any], value: Any) -> int:
    if python_equality([value], items):
        return items.index(value) if value in items else -1
    return next((i for i, item in enumerate(budget.each(items)) if equals(item, value)), -1)


def _list_last_index_of(items: list[Any], value: Any) -> int:
    if python_equality([value], items):
        return len(items) - 1 - items[::-1].index(value) if value in items else -1
    return next(
        (i for i in budget.each(range(len(items) - 1, -1, -1)) if equals(items[i], value)), -1
    )


def _slice(items: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise CelEvalError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise CelEvalError(
            f"cannot slice({start}, {end}), start index must be less than or equal to end index"
        )
    if end > len(items):
        raise CelEvalError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(items: Any, depth: Any = 1) -> list[Any]:
    if not isinstance(items, list) or type(depth) is not int:
        raise CelEvalError(NO_SUCH_OVERLOAD)
    if depth < 0:
        raise CelEvalError("level must be non-negative")
    out: list[Any] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in budget.each(items):
            if isinstance(item, list) and depth > 0:
                walk(item, depth - 1)
            else:
                out.append(item)

    walk(items, depth)
    return out


def flattened_size(items: Any, depth: Any = 1) -> int:
    """How many elements ``items.flatten(depth)`` has, counted without building it: once per
    distinct list and depth (a list that holds the same list many times over is cheap to build
    and enormous flattened)."""
    if not isinstance(items, list) or type(depth) is not int or depth < 0:
        return 0
    counted: dict[tuple[int, int], int] = {}

    def count(items: list[Any], depth: int) -> int:
        key = (id(items), depth)
        if key not in counted:
            counted[key] = sum(
                count(x, depth - 1) if isinstance(x, list) and depth > 0 else 1
                for x in budget.each(items)
            )
        return counted[key]

    return count(items, depth)


def _sort(items: list[Any]) -> list[Any]:
    if not items:
        return items
    first = items[0]
    if type(first) not in (int, UInt, float, str, bytes, bool, Timestamp, Duration):
        raise CelEvalError("list elements must be comparable")
    if any(type(x) is not type(first) for x in items):
        raise CelEvalError("list elements must have the same type")

    return sorted(items, key=functools.cmp_to_key(compare))


def _distinct(items: list[Any]) -> list[Any]:
    if python_equality(items):  # hashable, and equal as CEL says
        seen: set[Any] = set()
        return [x for x in items if not (x in seen or seen.add(x))]  # type: ignore[func-returns-value]
    out: list[Any] = []
    for item in budget.each(items):
        if not any(equals(item, seen) for seen in budget.each(out)):
            out.append(item)
    return out


def _range(n: int) -> list[int]:
    return list(range(max(n, 0)))


def _sort_by_keys(items: list[Any], keys: list[Any]) -> list[Any]:
    if len(items) != len(keys):
        raise CelEvalError(
            "@sortByAssociatedKeys() expected a list of the same size as the associated keys "
            f"list, but got {len(items)} and {len(keys)} elements respectively"
        )
    if not items:
        return items
    order = _sort(list(keys))
    used = [False] * len(keys)
    out = []
    for k in budget.each(order):
        for i, key in enumerate(keys):
            if not used[i] and equals(key, k) and type(key) is type(k):
                used[i] = True
                out.append(items[i])
                break
    return out


def register_kubernetes() -> None:
    """library.Lists."""
    comparable = [
        ("int", INT), ("uint", UINT), ("double", DBL), ("bool", BOOL), ("duration", DUR),
        ("timestamp", TS), ("string", STR), ("bytes", BYTES),
    ]  # fmt: skip
    declare(
        "isSorted",
        *(m(f"list_{n}_is_sorted_bool", [t.list_of(x)], BOOL, _is_sorted) for n, x in comparable),
    )
    zeros = {"int": 0, "uint": UInt(0), "double": 0.0, "duration": Duration(0)}
    declare(
        "sum",
        *(m(f"list_{n}_sum_{n}", [t.list_of(x)], x, _sum(zeros[n]))
          for n, x in comparable[:3] + [comparable[4]]),
    )  # fmt: skip
    declare(
        "max",
        *(m(f"list_{n}_max_{n}", [t.list_of(x)], x, _extreme("max", -1)) for n, x in comparable),
    )
    declare(
        "min",
        *(m(f"list_{n}_min_{n}", [t.list_of(x)], x, _extreme("min", 1)) for n, x in comparable),
    )
    declare("indexOf", m("list_a_index_of_int", [LIST_A, A], INT, _list_index_of))
    declare("lastIndexOf", m("list_a_last_index_of_int", [LIST_A, A], INT, _list_last_index_of))


def register_ext() -> None:
    """ext.Lists v3."""
    lt = t.list_of(t.param("T"))
    declare("slice", m("list_slice", [lt, INT, INT], lt, _slice))
    declare(
        "flatten",
        m("list_flatten", [t.list_of(lt)], lt, _flatten),
        m("list_flatten_int", [t.list_of(t.DYN), INT], t.list_of(t.DYN), _flatten),
        guards=False,
    )
    comparable = [INT, UINT, DBL, BOOL, DUR, TS, STR, BYTES]
    declare(
        "sort",
        *(m(f"list_{c.name}_sort", [t.list_of(c)], t.list_of(c)) for c in comparable),
        singleton=_sort,
    )
    declare(
        "@sortByAssociatedKeys",
        *(m(f"list_{c.name}_sortByAssociatedKeys", [lt, t.list_of(c)], lt) for c in comparable),
        singleton=_sort_by_keys,
    )
    declare("lists.range", o("lists_range", [INT], t.list_of(INT), _range))
    declare("reverse", m("list_reverse", [lt], lt, lambda x: x[::-1]))
    declare("distinct", m("list_distinct", [lt], lt, _distinct))
