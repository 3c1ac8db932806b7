"""The functions of Kubernetes' CEL base environment that device selectors can call.

Standard CEL (size, contains, startsWith, endsWith, matches, conversions), ``ext.Strings`` v2,
Kubernetes' ``library.Regex`` (find, findAll), ``library.Lists`` (isSorted, sum, min, max,
indexOf, lastIndexOf), ``ext.Lists`` v3 (slice, flatten, distinct, reverse, sort, first, last,
lists.range), ``ext.Sets``, ``library.Quantity``, ``library.SemverLib`` v1 and the optional
type's methods. Functions take and return plain CEL values (see values.py) and raise
CelEvalError; the compiler dispatches to them by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.cel.semver import Semver, SemverError
from dradash.dra.cel.values import (
    INT64_MIN,
    NONE,
    CelEvalError,
    Optional,
    UInt,
    check_int,
    check_uint,
    equals,
    is_number,
    no_overload,
    type_name,
)

Function = Callable[..., Any]
ANY = object


def _isa(value: Any, types: type | tuple[type, ...]) -> bool:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool):  # in CEL a bool is never an int
        return bool in types or object in types
    return isinstance(value, types)


def overloads(name: str, *signatures: tuple[tuple[Any, ...], Function]) -> Function:
    """A CEL function: the first signature whose argument types match is called."""

    def call(*args: Any) -> Any:
        for types, fn in signatures:
            if len(args) == len(types) and all(map(_isa, args, types)):
                return fn(*args)
        raise no_overload(name, *args)

    return call


# --- regular expressions (RE2 in Go; Python's re is close for the patterns selectors use) ---


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise CelEvalError(f"invalid regular expression {pattern!r}: {exc}") from None


def _matches(s: str, pattern: str) -> bool:
    return _regex(pattern).search(s) is not None


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


# --- strings (ext.Strings v2) -------------------------------------------------------------


def _char_at(s: str, i: int) -> str:
    if not 0 <= i <= len(s):
        raise CelEvalError(f"index out of range: {i}")
    return s[i : i + 1]


def _index_of(s: str, sub: str, offset: int = 0) -> int:
    if not 0 <= offset <= len(s):
        raise CelEvalError(f"index out of range: {offset}")
    return s.find(sub, offset)


def _last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        return s.rfind(sub)
    if not 0 <= offset < len(s) + 1:
        raise CelEvalError(f"index out of range: {offset}")
    return s.rfind(sub, 0, offset + len(sub))


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n if n >= 0 else -1)


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        parts = list(s)
        return parts if n < 0 or n >= len(parts) else [*parts[: n - 1], "".join(parts[n - 1 :])]
    return s.split(sep, n - 1 if n > 0 else -1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if not 0 <= start <= len(s) or not start <= end <= len(s):
        raise CelEvalError(f"index out of range: {start if not 0 <= start <= len(s) else end}")
    return s[start:end]


def _join(items: list[Any], sep: str = "") -> str:
    if not all(isinstance(i, str) for i in items):
        raise no_overload("join", items)
    return sep.join(items)


def _quote(s: str) -> str:
    escaped = s.replace("\\", "\\\\").replace('"', '\\"')
    for char, code in (("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r")):
        escaped = escaped.replace(char, code)
    return f'"{escaped}"'


# --- lists (library.Lists, ext.Lists v3) --------------------------------------------------


def _comparable(items: list[Any], name: str) -> None:
    kinds = {("number" if is_number(i) else type_name(i)) for i in items}
    if len(kinds) > 1 or kinds & {"list", "map", "null_type", "optional_type", "bool"} - {"bool"}:
        raise no_overload(name, items)


def _less(a: Any, b: Any) -> bool:
    return bool(a < b)


def _is_sorted(items: list[Any]) -> bool:
    _comparable(items, "isSorted")
    return all(not _less(b, a) for a, b in zip(items, items[1:], strict=False))


def _sum(items: list[Any]) -> Any:
    if not items:
        return 0
    if not all(is_number(i) for i in items):
        raise no_overload("sum", items)
    total = sum(items)
    if isinstance(total, float):
        return total
    return check_uint(total) if all(isinstance(i, UInt) for i in items) else check_int(total)


def _min(items: list[Any]) -> Any:
    if not items:
        raise CelEvalError("min called on empty list")
    _comparable(items, "min")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise CelEvalError("max called on empty list")
    _comparable(items, "max")
    return max(items)


def _list_index_of(items: list[Any], value: Any) -> int:
    return next((i for i, item in enumerate(items) if equals(item, value)), -1)


def _list_last_index_of(items: list[Any], value: Any) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if equals(items[i], value)), -1)


def _slice(items: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0 or start > end or end > len(items):
        raise CelEvalError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(items: list[Any], depth: int = 1) -> list[Any]:
    if depth < 0:
        raise CelEvalError("level must be non-negative")
    out: list[Any] = []
    for item in items:
        if isinstance(item, list) and depth > 0:
            out.extend(_flatten(item, depth - 1))
        else:
            out.append(item)
    return out


def _distinct(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if not any(equals(item, seen) for seen in out):
            out.append(item)
    return out


def _sort(items: list[Any]) -> list[Any]:
    _comparable(items, "sort")
    return sorted(items)


def _range(n: int) -> list[int]:
    if n > 10_000:
        raise CelEvalError("lists.range: too many elements")
    return list(range(max(n, 0)))


def _first(items: list[Any]) -> Optional:
    return Optional(items[0]) if items else NONE


def _last(items: list[Any]) -> Optional:
    return Optional(items[-1]) if items else NONE


# --- sets (ext.Sets) ----------------------------------------------------------------------


def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    return all(any(equals(x, y) for y in a) for x in b)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(any(equals(x, y) for y in a) for x in b)


# --- quantities (library.Quantity) and semver (library.SemverLib v1) ----------------------


def _quantity(s: str) -> Quantity:
    try:
        return Quantity.parse(s)
    except QuantityError as exc:
        raise CelEvalError(str(exc)) from None


def _is_quantity(s: str) -> bool:
    try:
        Quantity.parse(s)
    except QuantityError:
        return False
    return True


def _as_integer(q: Quantity) -> int:
    try:
        return q.as_integer()
    except QuantityError as exc:
        raise CelEvalError(str(exc)) from None


def _semver(s: str, normalize: bool = False) -> Semver:
    try:
        return Semver.parse(s, normalize=normalize)
    except SemverError as exc:
        raise CelEvalError(str(exc)) from None


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        Semver.parse(s, normalize=normalize)
    except SemverError:
        return False
    return True


# --- optionals ----------------------------------------------------------------------------


def _opt_value(o: Optional) -> Any:
    if not o.present:
        raise CelEvalError("optional.none() dereference")
    return o.value


# --- conversions --------------------------------------------------------------------------


def _to_int(v: Any) -> int:
    if isinstance(v, bool):
        raise no_overload("int", v)
    if isinstance(v, int):
        return check_int(int(v))
    if isinstance(v, float):
        if v != v or not INT64_MIN <= v < 2.0**63:
            raise CelEvalError("range error converting double to int")
        return int(v)
    if isinstance(v, str):
        try:
            return check_int(int(v, 10))
        except ValueError:
            raise CelEvalError(f"type conversion error from 'string' to 'int': {v!r}") from None
    raise no_overload("int", v)


def _to_uint(v: Any) -> UInt:
    if isinstance(v, bool):
        raise no_overload("uint", v)
    if isinstance(v, int | float) and not (isinstance(v, float) and v != v):
        return check_uint(int(v))
    if isinstance(v, str):
        try:
            return check_uint(int(v, 10))
        except ValueError:
            raise CelEvalError(f"type conversion error from 'string' to 'uint': {v!r}") from None
    raise no_overload("uint", v)


def _to_double(v: Any) -> float:
    if isinstance(v, bool):
        raise no_overload("double", v)
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            raise CelEvalError(f"type conversion error from 'string' to 'double': {v!r}") from None
    raise no_overload("double", v)


def _to_string(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e21 else f"{v:.0f}" if v == v else "NaN"
    if isinstance(v, int | str):
        return str(int(v)) if isinstance(v, int) else v
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelEvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    raise no_overload("string", v)


def _to_bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in (
        "true",
        "True",
        "TRUE",
        "t",
        "1",
        "false",
        "False",
        "FALSE",
        "f",
        "0",
    ):
        return v in ("true", "True", "TRUE", "t", "1")
    raise no_overload("bool", v)


def _size(v: Any) -> int:
    if isinstance(v, str | bytes | list | dict):
        return len(v)
    raise no_overload("size", v)


STR, INT, LIST, QTY, VER, OPT = str, int, list, Quantity, Semver, Optional


def _ordered(name: str, sign: int) -> Function:
    """isGreaterThan / isLessThan on two quantities or two semvers."""
    return overloads(
        name,
        ((QTY, QTY), lambda a, b: a.compare(b) == sign),
        ((VER, VER), lambda a, b: a.compare(b) == sign),
    )


def _opt_or(o: Optional, other: Optional) -> Optional:
    return o if o.present else other


def _of_non_zero(value: Any) -> Optional:
    if isinstance(value, Quantity | Semver):
        return Optional(value)
    zero = value is None or value is False or value in (0, "", b"") or value in ([], {})
    return NONE if zero else Optional(value)


# Functions called as f(x, …).
GLOBAL: dict[str, Function] = {
    "size": _size,
    "int": _to_int,
    "uint": _to_uint,
    "double": _to_double,
    "string": _to_string,
    "bool": _to_bool,
    "bytes": overloads("bytes", ((STR,), lambda s: s.encode())),
    "dyn": lambda v: v,
    "matches": overloads("matches", ((STR, STR), _matches)),
    "quantity": overloads("quantity", ((STR,), _quantity)),
    "isQuantity": overloads("isQuantity", ((STR,), _is_quantity)),
    "semver": overloads("semver", ((STR,), _semver), ((STR, bool), _semver)),
    "isSemver": overloads("isSemver", ((STR,), _is_semver), ((STR, bool), _is_semver)),
}

# Functions called as x.f(…): the receiver is the first argument.
MEMBER: dict[str, Function] = {
    "size": _size,
    "contains": overloads("contains", ((STR, STR), lambda s, sub: sub in s)),
    "startsWith": overloads("startsWith", ((STR, STR), lambda s, p: s.startswith(p))),
    "endsWith": overloads("endsWith", ((STR, STR), lambda s, p: s.endswith(p))),
    "matches": overloads("matches", ((STR, STR), _matches)),
    # strings (ext.Strings v2) and regex (library.Regex)
    "find": overloads("find", ((STR, STR), _find)),
    "findAll": overloads("findAll", ((STR, STR), _find_all), ((STR, STR, INT), _find_all)),
    "charAt": overloads("charAt", ((STR, INT), _char_at)),
    "indexOf": overloads(
        "indexOf",
        ((STR, STR), _index_of),
        ((STR, STR, INT), _index_of),
        ((LIST, ANY), _list_index_of),
    ),
    "lastIndexOf": overloads(
        "lastIndexOf",
        ((STR, STR), _last_index_of),
        ((STR, STR, INT), _last_index_of),
        ((LIST, ANY), _list_last_index_of),
    ),
    "lowerAscii": overloads("lowerAscii", ((STR,), lambda s: s.translate(_LOWER))),
    "upperAscii": overloads("upperAscii", ((STR,), lambda s: s.translate(_UPPER))),
    "replace": overloads("replace", ((STR, STR, STR), _replace), ((STR, STR, STR, INT), _replace)),
    "split": overloads("split", ((STR, STR), _split), ((STR, STR, INT), _split)),
    "substring": overloads("substring", ((STR, INT), _substring), ((STR, INT, INT), _substring)),
    "trim": overloads("trim", ((STR,), lambda s: s.strip(" \t\n\r\v\f\u0085\u00a0"))),
    "join": overloads("join", ((LIST,), _join), ((LIST, STR), _join)),
    "reverse": overloads("reverse", ((STR,), lambda s: s[::-1]), ((LIST,), lambda x: x[::-1])),
    # lists (library.Lists, ext.Lists v3)
    "isSorted": overloads("isSorted", ((LIST,), _is_sorted)),
    "sum": overloads("sum", ((LIST,), _sum)),
    "min": overloads("min", ((LIST,), _min)),
    "max": overloads("max", ((LIST,), _max)),
    "slice": overloads("slice", ((LIST, INT, INT), _slice)),
    "flatten": overloads("flatten", ((LIST,), _flatten), ((LIST, INT), _flatten)),
    "distinct": overloads("distinct", ((LIST,), _distinct)),
    "sort": overloads("sort", ((LIST,), _sort)),
    "first": overloads("first", ((LIST,), _first)),
    "last": overloads("last", ((LIST,), _last)),
    # library.Quantity
    "isInteger": overloads("isInteger", ((QTY,), lambda q: q.is_integer())),
    "asInteger": overloads("asInteger", ((QTY,), _as_integer)),
    "asApproximateFloat": overloads(
        "asApproximateFloat", ((QTY,), lambda q: q.as_approximate_float())
    ),
    "sign": overloads("sign", ((QTY,), lambda q: q.sign())),
    "add": overloads("add", ((QTY, (QTY, INT)), lambda q, o: q.add(o))),
    "sub": overloads("sub", ((QTY, (QTY, INT)), lambda q, o: q.sub(o))),
    "isGreaterThan": _ordered("isGreaterThan", 1),
    "isLessThan": _ordered("isLessThan", -1),
    "compareTo": overloads(
        "compareTo",
        ((QTY, QTY), lambda a, b: a.compare(b)),
        ((VER, VER), lambda a, b: a.compare(b)),
    ),
    # library.SemverLib v1
    "major": overloads("major", ((VER,), lambda v: v.major())),
    "minor": overloads("minor", ((VER,), lambda v: v.minor())),
    "patch": overloads("patch", ((VER,), lambda v: v.patch())),
    # optional_type
    "hasValue": overloads("hasValue", ((OPT,), lambda o: o.present)),
    "value": overloads("value", ((OPT,), _opt_value)),
    "orValue": overloads("orValue", ((OPT, ANY), lambda o, d: o.value if o.present else d)),
    "or": overloads("or", ((OPT, OPT), _opt_or)),
}

# Functions of a namespace: ns.f(…).
NAMESPACED: dict[str, Function] = {
    "optional.of": overloads("optional.of", ((ANY,), Optional)),
    "optional.none": overloads("optional.none", ((), lambda: NONE)),
    "optional.ofNonZeroValue": overloads("optional.ofNonZeroValue", ((ANY,), _of_non_zero)),
    "lists.range": overloads("lists.range", ((INT,), _range)),
    "sets.contains": overloads("sets.contains", ((LIST, LIST), _sets_contains)),
    "sets.equivalent": overloads(
        "sets.equivalent",
        ((LIST, LIST), lambda a, b: _sets_contains(a, b) and _sets_contains(b, a)),
    ),
    "sets.intersects": overloads("sets.intersects", ((LIST, LIST), _sets_intersects)),
    "strings.quote": overloads("strings.quote", ((STR,), _quote)),
}

_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")

# Return types the compiler can know statically (for "must evaluate to bool").
RETURNS: dict[str, str] = {
    "size": "int",
    "int": "int",
    "uint": "uint",
    "double": "double",
    "string": "string",
    "bool": "bool",
    "bytes": "bytes",
    "matches": "bool",
    "contains": "bool",
    "startsWith": "bool",
    "endsWith": "bool",
    "isQuantity": "bool",
    "isSemver": "bool",
    "quantity": "kubernetes.Quantity",
    "semver": "kubernetes.Semver",
    "find": "string",
    "findAll": "list",
    "charAt": "string",
    "indexOf": "int",
    "lastIndexOf": "int",
    "lowerAscii": "string",
    "upperAscii": "string",
    "replace": "string",
    "split": "list",
    "substring": "string",
    "trim": "string",
    "join": "string",
    "isSorted": "bool",
    "isInteger": "bool",
    "asInteger": "int",
    "asApproximateFloat": "double",
    "sign": "int",
    "isGreaterThan": "bool",
    "isLessThan": "bool",
    "compareTo": "int",
    "major": "int",
    "minor": "int",
    "patch": "int",
    "hasValue": "bool",
    "sets.contains": "bool",
    "sets.equivalent": "bool",
    "sets.intersects": "bool",
    "strings.quote": "string",
    "lists.range": "list",
}
