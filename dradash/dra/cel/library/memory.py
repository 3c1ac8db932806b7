"""What a call adds to its evaluation's memory (approximate bytes, see budget.py), known from
its arguments before it runs: the size of the value it builds, or an upper bound where the exact
size would take the work itself. The planner counts it before the call; format and findAll
count their pieces as they make them. Not upstream: cel-go has no memory budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dradash.dra.cel.budget import LIST_SLOT, MAP_ENTRY, NEW_INT, NEW_STRING
from dradash.dra.cel.library.lists import flattened_size
from dradash.dra.cel.library.strings import replace_size
from dradash.dra.cel.values import Opaque

Growth = Callable[[tuple[Any, ...], int], int]


def _text(v: Any) -> int:
    return len(v) if type(v) in (str, bytes) else 0


def _slots(v: Any) -> int:
    return LIST_SLOT * len(v) if isinstance(v, list) else 0


def _concat(args: tuple[Any, ...], size: int) -> int:
    a, b = args
    kind = type(a)
    if kind is list:
        return LIST_SLOT * (len(a) + len(b)) if type(b) is list else 0
    if kind is str or kind is bytes:
        return len(a) + len(b) if type(b) is kind else 0
    return 0


def _replaced(args: tuple[Any, ...], size: int) -> int:
    if not all(type(a) is str for a in args[:3]):
        return 0
    n = args[3] if len(args) == 4 and type(args[3]) is int else -1
    return replace_size(args[0], args[1], args[2], n)


def _split_size(args: tuple[Any, ...], size: int) -> int:
    """split: its pieces, each a string of its own, and their characters."""
    s, sep, *rest = args
    if type(s) is not str or type(sep) is not str:
        return 0
    pieces = len(s) if sep == "" else s.count(sep) + 1
    if rest and type(rest[0]) is int and rest[0] >= 0:
        pieces = min(pieces, rest[0])
    return NEW_STRING * pieces + len(s)


def _inserted(args: tuple[Any, ...], size: int) -> int:
    m, *rest = args
    if not isinstance(m, dict):
        return 0
    added = len(rest[0]) if len(rest) == 1 and isinstance(rest[0], dict) else 1
    return MAP_ENTRY * (len(m) + added)


def _query(args: tuple[Any, ...], size: int) -> int:
    text = args[0].text if isinstance(args[0], Opaque) else ""
    return (MAP_ENTRY + LIST_SLOT) * (text.count("&") + 1) + len(text)


_GROWTH: dict[str, Growth] = {
    "_+_": _concat,
    "replace": _replaced,
    "join": lambda args, size: size,  # result_size: the joined string's length
    "lists.range": lambda args, size: NEW_INT * max(args[0], 0) if type(args[0]) is int else 0,
    "split": _split_size,
    "strings.quote": lambda args, size: 4 * _text(args[0]) + 2,
    "bytes": lambda args, size: 4 * _text(args[0]),
    "cel.@mapInsert": _inserted,
    "flatten": lambda args, size: LIST_SLOT * flattened_size(*args),
    "getQuery": _query,
    **dict.fromkeys(
        ("upperAscii", "lowerAscii", "trim", "substring", "find", "string"),
        lambda args, size: _text(args[0]),
    ),
    **dict.fromkeys(
        ("sort", "distinct", "reverse", "slice", "unwrapOpt", "optional.unwrap"),
        lambda args, size: _slots(args[0]),
    ),
    "@sortByAssociatedKeys": lambda args, size: _slots(args[0]),
    **dict.fromkeys(
        ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"),
        lambda args, size: len(args[0].text) if isinstance(args[0], Opaque) else 0,
    ),
}


def growth(function: str) -> Growth | None:
    """How much memory a call of ``function`` may add, from its arguments (None: nothing worth
    counting: a scalar, a value of bounded size, or one of its arguments)."""
    return _GROWTH.get(function)


def accumulator_growth(args: tuple[Any, ...], size: int) -> int:
    """``accumulator + [x]`` or ``cel.@mapInsert(accumulator, …)`` done in place: what it adds."""
    acc, *rest = args
    if isinstance(acc, dict):
        return MAP_ENTRY * (len(rest[0]) if len(rest) == 1 and isinstance(rest[0], dict) else 1)
    return _slots(rest[0]) if isinstance(acc, list) else _concat(args, size)
