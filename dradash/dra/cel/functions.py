"""Every function of Kubernetes' DRA CEL environment: its cel-go declaration (overload ids,
argument and result types, receiver style) for the checker, and its runtime behaviour.

The environment is ``k8s.io/apiserver/pkg/cel/environment/base.go`` at v0.36.2 for stored
expressions plus DRA's ``device`` variable and ``cel.bind``: cel-go's standard library with
cross-type numeric comparisons and optional types, ``library.URLs``, ``Regex``, ``Lists``,
``Authz`` (+ selectors), ``Quantity``, ``IP``, ``CIDR``, ``Format``, ``SemverLib`` v1, and
cel-go's ``ext.Strings`` v2, ``ext.Sets``, ``ext.TwoVarComprehensions`` and ``ext.Lists`` v3.

At runtime a call goes to the overload the checker resolved when it resolved exactly one
(behind cel-go's runtime type guard), else to the first overload whose guard accepts the
arguments; functions cel-go binds once for all overloads (operators, ``size``) are one Python
function. Costs follow ``interpreter/runtimecost.go``, the apiserver's ``library/cost.go`` and
the trackers of ``ext/lists.go`` and ``ext/sets.go`` (see ``call_cost``).
"""

from __future__ import annotations

import ipaddress
import itertools
import math
import re
import threading
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import re2

from dradash.dra.cel import budget, timelib
from dradash.dra.cel import types as t
from dradash.dra.cel.budget import LIST_SLOT, MAP_ENTRY, NEW_INT, NEW_STRING
from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.cel.semver import Semver, SemverError
from dradash.dra.cel.timelib import Duration, Timestamp
from dradash.dra.cel.types import T
from dradash.dra.cel.values import (
    INT64_MAX,
    INT64_MIN,
    NO_SUCH_OVERLOAD,
    NONE,
    CelEvalError,
    CostLimitExceeded,
    Opaque,
    Optional,
    TypeValue,
    UInt,
    check_int,
    check_uint,
    equals,
    is_number,
    map_get,
    no_overload,
    python_equality,
    size_of,
    type_name,
)

Impl = Callable[..., Any]


@dataclass
class Overload:
    id: str
    args: tuple[T, ...]  # the receiver first for member overloads
    result: T
    member: bool = False
    impl: Impl | None = None
    non_strict: bool = False

    def matches(self, values: tuple[Any, ...]) -> bool:
        """cel-go's runtime type guard (matchesRuntimeSignature)."""
        if len(values) != len(self.args):
            return False
        return all(runtime_assignable(a, v) for a, v in zip(self.args, values, strict=True))


@dataclass
class Function:
    name: str
    overloads: list[Overload] = field(default_factory=list)
    singleton: Impl | None = None  # one implementation for every overload (no type guards)
    guards: bool = True

    def overload(self, oid: str) -> Overload | None:
        return next((o for o in self.overloads if o.id == oid), None)


def runtime_assignable(ty: T, value: Any) -> bool:
    """Type.IsAssignableRuntimeType: the value's type name, and for lists and maps the type of
    the first element (or entry)."""
    if ty.kind in ("dyn", "any", "param"):
        return True
    if ty.kind == "null":
        return value is None
    name = type_name(value)
    if ty.kind == "type":
        return name == "type"
    if name != ty.name:
        return False
    if ty.kind == "list" and value:
        return runtime_assignable(ty.params[0], value[0])
    if ty.kind == "map" and value:
        k = next(iter(value))
        return runtime_assignable(ty.params[0], k) and runtime_assignable(ty.params[1], value[k])
    return True


ENV: dict[str, Function] = {}


def declare(
    name: str,
    *overloads: Overload,
    singleton: Impl | None = None,
    guards: bool = True,
) -> None:
    fn = ENV.setdefault(name, Function(name))
    fn.overloads.extend(overloads)
    if singleton is not None:
        fn.singleton = singleton
    fn.guards = fn.guards and guards


def o(oid: str, args: list[T], result: T, impl: Impl | None = None, **kw: Any) -> Overload:
    return Overload(oid, tuple(args), result, False, impl, **kw)


def m(oid: str, args: list[T], result: T, impl: Impl | None = None, **kw: Any) -> Overload:
    return Overload(oid, tuple(args), result, True, impl, **kw)


A, B, K, V = t.param("A"), t.param("B"), t.param("K"), t.param("V")
LIST_A, MAP_AB = t.list_of(A), t.map_of(A, B)
STR, INT, UINT, DBL, BOOL, BYTES = t.STRING, t.INT, t.UINT, t.DOUBLE, t.BOOL, t.BYTES
TS, DUR, QTY, VER = t.TIMESTAMP, t.DURATION, t.QUANTITY, t.SEMVER


def _err(message: str) -> CelEvalError:
    return CelEvalError(message)


def _nso() -> CelEvalError:
    return CelEvalError(NO_SUCH_OVERLOAD)


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_uint(v: Any) -> bool:
    return type(v) is UInt


def _is_double(v: Any) -> bool:
    return type(v) is float


# --- arithmetic and comparison (the singleton bindings of common/stdlib) --------------------


def _add(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int:
        if type(b) is not int:
            raise _nso()
        return check_int(a + b)
    if ta is UInt:
        if type(b) is not UInt:
            raise _nso()
        return check_uint(a + b)
    if ta is float:
        if type(b) is not float:
            raise _nso()
        return a + b
    if ta is str:
        if type(b) is not str:
            raise _nso()
        return a + b
    if ta is bytes:
        if type(b) is not bytes:
            raise _nso()
        return a + b
    if ta is list:
        if type(b) is not list:
            raise _nso()
        return a + b
    if ta is Duration:
        if isinstance(b, Duration):
            return Duration(check_int(a.ns + b.ns))
        if isinstance(b, Timestamp):
            return _ts(b.ns + a.ns)
        raise _nso()
    if ta is Timestamp:
        if isinstance(b, Duration):
            return _ts(a.ns + b.ns)
        raise _nso()
    raise CelEvalError("no such overload: _+_")


def _ts(ns: int) -> Timestamp:
    if not timelib.MIN_UNIX <= ns // timelib.NS <= timelib.MAX_UNIX:
        raise CelEvalError("timestamp overflow")
    return Timestamp(ns)


def _sub(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int:
        if type(b) is not int:
            raise _nso()
        return check_int(a - b)
    if ta is UInt:
        if type(b) is not UInt:
            raise _nso()
        return check_uint(a - b)
    if ta is float:
        if type(b) is not float:
            raise _nso()
        return a - b
    if ta is Duration:
        if isinstance(b, Duration):
            return Duration(check_int(a.ns - b.ns))
        raise _nso()
    if ta is Timestamp:
        if isinstance(b, Duration):
            return _ts(a.ns - b.ns)
        if isinstance(b, Timestamp):
            return Duration(check_int(a.ns - b.ns))
        raise _nso()
    raise CelEvalError("no such overload: _-_")


def _mul(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int:
        if type(b) is not int:
            raise _nso()
        return check_int(a * b)
    if ta is UInt:
        if type(b) is not UInt:
            raise _nso()
        return check_uint(a * b)
    if ta is float:
        if type(b) is not float:
            raise _nso()
        return a * b
    raise CelEvalError("no such overload: _*_")


def _div(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int or ta is UInt:
        if type(b) is not ta:
            raise _nso()
        if b == 0:
            raise CelEvalError("division by zero")
        if ta is int and a == INT64_MIN and b == -1:
            raise CelEvalError("integer overflow")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if ta is int else UInt(q)
    if ta is float:
        if type(b) is not float:
            raise _nso()
        if b == 0:
            if a == 0 or a != a:
                return math.nan
            return math.copysign(math.inf, a) * math.copysign(1.0, b)
        return a / b
    raise CelEvalError("no such overload: _/_")


def _mod(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int or ta is UInt:
        if type(b) is not ta:
            raise _nso()
        if b == 0:
            raise CelEvalError("modulus by zero")
        if ta is int and a == INT64_MIN and b == -1:
            raise CelEvalError("integer overflow")
        r = abs(a) % abs(b) * (1 if a >= 0 else -1)
        return r if ta is int else UInt(r)
    raise CelEvalError("no such overload: _%_")


def _neg(a: Any) -> Any:
    ta = type(a)
    if ta is int:
        if a == INT64_MIN:
            raise CelEvalError("integer overflow")
        return -a
    if ta is float:
        return -a
    if ta is Duration:
        return Duration(check_int(-a.ns))
    if ta is bool:
        raise _nso()
    raise CelEvalError("no such overload: -_")


def compare(a: Any, b: Any) -> int:
    """traits.Comparer.Compare: -1, 0 or 1, or CelEvalError."""
    ta = type(a)
    if ta in (int, UInt, float):
        if type(b) not in (int, UInt, float):
            raise _nso()
        if a != a or b != b:
            raise CelEvalError("NaN values cannot be ordered")
        return (a > b) - (a < b)
    if ta in (str, bytes, bool):
        if type(b) is not ta:
            raise _nso()
        if ta is str:
            x, y = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
            return (x > y) - (x < y)
        return (a > b) - (a < b)
    if ta in (Timestamp, Duration):
        if type(b) is not ta:
            raise _nso()
        return (a.ns > b.ns) - (a.ns < b.ns)
    raise CelEvalError("no such overload")


def _relation(name: str, test: Callable[[int], bool]) -> Impl:
    comparable = (int, UInt, float, str, bytes, bool, Timestamp, Duration)

    def rel(a: Any, b: Any) -> bool:
        if type(a) not in comparable:
            raise CelEvalError(f"no such overload: {name}")
        return test(compare(a, b))

    return rel


def _size(v: Any) -> int:
    if isinstance(v, str | bytes | list | dict):
        return len(v)
    raise CelEvalError("no such overload: size")


def _index(obj: Any, key: Any) -> Any:
    """The _[_] singleton: list index or map lookup."""
    if isinstance(obj, list):
        if type(key) is float:
            if key != int(key):
                raise CelEvalError(f"unsupported index value {key!r} in list")
            key = int(key)
        if type(key) not in (int, UInt):
            raise CelEvalError(f"unsupported index type '{type_name(key)}' in list")
        if not 0 <= key < len(obj):
            raise CelEvalError(f"index out of bounds: {key}")
        return obj[key]
    if isinstance(obj, dict):
        if not (isinstance(key, str | int | float) or key is None):
            raise CelEvalError(f"unsupported key type: {type_name(key)}")
        found, value = map_get(obj, key)
        if not found:
            raise CelEvalError(f"no such key: {format_key(key)}")
        return value
    raise CelEvalError("no such overload: _[_]")


def format_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return go_g(key)
    return str(key)


def _in(a: Any, b: Any) -> bool:
    if isinstance(b, list):
        if python_equality([a], b):
            return a in b
        return any(equals(a, x) for x in budget.each(b))
    if isinstance(b, dict):
        return map_get(b, a)[0]
    raise CelEvalError(NO_SUCH_OVERLOAD)


# --- conversions ------------------------------------------------------------------------------


def _re2_options(max_mem: int) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return options


_INT_RE = re.compile(r"[+-]?[0-9]+")
_UINT_RE = re.compile(r"\+?[0-9]+")
# RE2, not re: Python's backtracking took quadratic time over a long run of digits (seconds
# for 8,000 digits that double() refuses).
_FLOAT_RE = re2.compile(
    r"(?i)[+-]?(?:(?:[0-9](?:_?[0-9])*)?\.?[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9]+)?|[0-9]+\.|"
    r"inf|infinity|nan)",
    options=_re2_options(8 << 20),
)
_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_BOOLS.update({"0": False, "f": False, "F": False, "FALSE": False, "false": False})
_BOOLS["False"] = False


def conversion_error(frm: str, to: str) -> CelEvalError:
    return CelEvalError(f"type conversion error from '{frm}' to '{to}'")


def go_g(f: float) -> str:
    """Go's fmt %g (strconv 'g', shortest), as cel-go's string(double)."""
    if f != f:
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    r = repr(f)
    mantissa, _, exp_part = r.partition("e")
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    int_part, _, frac = mantissa.partition(".")
    digits = (int_part + frac).lstrip("0")
    point = len(int_part) + (int(exp_part) if exp_part else 0)
    if int_part.strip("0") == "":
        lead = len(frac) - len(frac.lstrip("0"))
        point = -lead + (int(exp_part) if exp_part else 0)
    digits = digits.rstrip("0") or "0"
    exp = point - 1
    if exp < -4 or exp >= 21:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def to_int(v: Any) -> int:
    tv = type(v)
    if tv is int:
        return v
    if tv is UInt:
        if v > INT64_MAX:
            raise CelEvalError("integer overflow")
        return int(v)
    if tv is float:
        if v != v or math.isinf(v) or v <= -(2.0**63) or v >= 2.0**63:
            raise CelEvalError("integer overflow")
        return int(v)
    if tv is str:
        if _INT_RE.fullmatch(v) and len(digits := _digits(v)) <= 19:
            n = -int(digits or "0") if v[0] == "-" else int(digits or "0")
            if INT64_MIN <= n <= INT64_MAX:
                return n
        raise conversion_error("string", "int")
    if tv is Duration:
        return v.ns
    if tv is Timestamp:
        return v.ns // timelib.NS
    raise no_overload("int", v)


def _digits(v: str) -> str:
    """The significant digits of a decimal integer (Go's ParseInt reads any number of leading
    zeros; Python's int() refuses strings of more than 4,300 digits)."""
    return v.lstrip("+-").lstrip("0")


def to_uint(v: Any) -> UInt:
    tv = type(v)
    if tv is UInt:
        return v
    if tv is int:
        if v < 0:
            raise CelEvalError("unsigned integer overflow")
        return UInt(v)
    if tv is float:
        if v != v or math.isinf(v) or v < 0 or v >= 2.0**64:
            raise CelEvalError("unsigned integer overflow")
        return UInt(int(v))
    if tv is str:
        if _UINT_RE.fullmatch(v) and len(digits := _digits(v)) <= 20:
            n = int(digits or "0")
            if n <= 2**64 - 1:
                return UInt(n)
        raise conversion_error("string", "uint")
    raise no_overload("uint", v)


def _parse_go_float(s: str) -> float | None:
    text = s.replace("_", "") if "_" in s and s.lower().startswith(("0x", "-0x", "+0x")) else s
    if "_" in text or not _FLOAT_RE.fullmatch(text):
        if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F.]+[pP][+-]?[0-9]+", text):
            return float.fromhex(text)
        return None
    lowered = text.lower().lstrip("+-")
    if lowered in ("infinity", "inf", "nan"):
        return float(text)
    try:
        f = float(text)
    except ValueError:
        return None
    if math.isinf(f):
        return None
    return f


def to_double(v: Any) -> float:
    tv = type(v)
    if tv is float:
        return v
    if tv is int or tv is UInt:
        return float(v)
    if tv is str:
        f = _parse_go_float(v)
        if f is None:
            raise conversion_error("string", "double")
        return f
    raise no_overload("double", v)


def to_string(v: Any) -> str:
    tv = type(v)
    if tv is str:
        return v
    if tv is bool:
        return "true" if v else "false"
    if tv is int or tv is UInt:
        return str(int(v))
    if tv is float:
        return go_g(v)
    if tv is bytes:
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CelEvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    if tv in (Timestamp, Duration):
        return str(v)
    if tv is Opaque and v.kind in ("ip", "cidr"):
        return v.text
    raise no_overload("string", v)


def to_bool(v: Any) -> bool:
    if type(v) is bool:
        return v
    if type(v) is str and v in _BOOLS:
        return _BOOLS[v]
    if type(v) is str:
        raise conversion_error("string", "bool")
    raise no_overload("bool", v)


def to_bytes(v: Any) -> bytes:
    if type(v) is bytes:
        return v
    if type(v) is str:
        return v.encode()
    raise no_overload("bytes", v)


def to_timestamp(v: Any) -> Timestamp:
    if type(v) is Timestamp:
        return v
    if type(v) is int:
        if not timelib.MIN_UNIX <= v <= timelib.MAX_UNIX:
            raise CelEvalError("timestamp overflow")
        return Timestamp(v * timelib.NS)
    if type(v) is str:
        return timelib.parse_timestamp(v)
    raise no_overload("timestamp", v)


def to_duration(v: Any) -> Duration:
    if type(v) is Duration:
        return v
    if type(v) is int:
        return Duration(v)
    if type(v) is str:
        return timelib.parse_duration(v)
    raise no_overload("duration", v)


def type_value(v: Any) -> TypeValue:
    return TypeValue(type_name(v))


# --- strings (cel-go standard and ext.Strings v2) ----------------------------------------------


# RE2 bounds what a compiled regex may use, its program and the DFA states it caches as it
# matches (it falls back to its slower linear-time NFA when they run out), by max_mem. A regex
# compiles when its program fits RE2's default of 8 MiB (Go's regexp takes larger programs:
# a few regexes it accepts are "pattern too large" here). dradash keeps the REGEX_CACHE most
# recently used regexes, each compiled to use at most 1 MiB; a regex whose program needs more is
# compiled for the call and dropped after it (Go compiles a regex that is not a literal at every
# call, and Kubernetes keeps the programs of only 10 selectors).
REGEX_CACHE = 64
_CACHED = _re2_options(1 << 20)
_UNCACHED = _re2_options(8 << 20)
_regexes: OrderedDict[str, Any] = OrderedDict()
_regexes_lock = threading.Lock()


def regex(pattern: str) -> Any:
    """RE2, as Go's regexp (and Kubernetes) evaluate CEL regexes: linear time."""
    with _regexes_lock:
        compiled = _regexes.get(pattern)
        if compiled is not None:
            _regexes.move_to_end(pattern)
            return compiled
    try:
        compiled = re2.compile(pattern, options=_CACHED)
    except re2.error as exc:
        if "too large" not in _re2_message(exc):
            raise CelEvalError(f"error parsing regexp: {_re2_message(exc)}") from None
        try:
            return re2.compile(pattern, options=_UNCACHED)
        except re2.error as exc:
            raise CelEvalError(f"error parsing regexp: {_re2_message(exc)}") from None
    with _regexes_lock:
        _regexes[pattern] = compiled
        if len(_regexes) > REGEX_CACHE:
            _regexes.popitem(last=False)
    return compiled


def _re2_message(exc: Exception) -> str:
    message = exc.args[0] if exc.args else str(exc)
    return message.decode(errors="replace") if isinstance(message, bytes) else str(message)


def regex_error(pattern: str) -> str | None:
    try:
        regex(pattern)
    except CelEvalError as exc:
        return str(exc)
    return None


def _matches(s: str, pattern: str) -> bool:
    return regex(pattern).search(s) is not None


def _find(s: str, pattern: str) -> str:
    try:
        found = regex(pattern).search(s)
    except CelEvalError as exc:
        raise CelEvalError(f"Illegal regex: {str(exc)}") from None
    return found.group(0) if found else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    try:
        compiled = regex(pattern)
    except CelEvalError as exc:
        raise CelEvalError(f"Illegal regex: {str(exc)}") from None
    if n == 0:
        return []
    out: list[str] = []
    prev_end = -1
    for found in budget.each(compiled.finditer(s)):
        if found.start() == found.end() and found.start() == prev_end:
            continue  # Go skips an empty match right after the previous match
        budget.allocate(NEW_STRING + found.end() - found.start(), "the result of findAll()")
        out.append(found.group(0))
        prev_end = found.end()
        if 0 < n <= len(out):
            break
    return out


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise CelEvalError(f"index out of range: {i}")
    return s[i : i + 1]


def _index_of(s: str, sub: str, offset: int = 0) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise CelEvalError(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def _last_index_of(s: str, sub: str) -> int:
    if sub == "":
        return len(s)
    if len(s.encode()) < len(sub.encode()):
        return -1
    return _last_index_of_offset(s, sub, len(s) - 1)


def _last_index_of_offset(s: str, sub: str, offset: int) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise CelEvalError(f"index out of range: {offset}")
    if offset >= len(s):
        return -1
    if offset > len(s) - len(sub):
        offset = len(s) - len(sub)
    if offset < 0:
        return -1
    return s.rfind(sub, 0, offset + len(sub))


def _ascii(s: str, upper: bool) -> str:
    table = _UPPER if upper else _LOWER
    return s.translate(table)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    if n < 0:
        n = -1
    if old == "":
        # Go inserts new before every code point and at the end (up to n times).
        if n == 0:
            return s
        if n < 0 or n > len(s):
            return new + new.join(s) + new
        return new + new.join(s[:n]) + s[n:]
    return s.replace(old, new, n)


def replace_size(s: str, old: str, new: str, n: int = -1) -> int:
    """The length of the string _replace would build (computed first: see planner.py)."""
    count = len(s) + 1 if old == "" else s.count(old)
    if n >= 0:
        count = min(count, n)
    return len(s) + count * (len(new) - len(old))


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        if n < 0 or n >= len(chars):
            return chars
        return [*chars[: n - 1], "".join(chars[n - 1 :])]
    return s.split(sep, n - 1 if n > 0 else -1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise CelEvalError(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise CelEvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(s):
        raise CelEvalError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise CelEvalError(f"index out of range: {end}")
    return s[start:end]


_GO_SPACE = " \t\n\v\f\r\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
_GO_SPACE += "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _trim(s: str) -> str:
    return s.strip(_GO_SPACE)


def _join(items: list[Any], sep: str = "") -> str:
    for item in budget.each(items):
        if type(item) is not str:
            raise CelEvalError(f"join: invalid input: {item}")
    return sep.join(items)


def _quote(s: str) -> str:
    return '"' + s.translate(_QUOTE_TABLE) + '"'


_QUOTE = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
    "\\": "\\\\", '"': '\\"',
}  # fmt: skip
_QUOTE_TABLE = str.maketrans(_QUOTE)
# Go's %q: control characters as \x hex escapes too.
_GO_QUOTE_TABLE = str.maketrans({chr(c): f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | _QUOTE)


# --- lists (library.Lists, ext.Lists v3, ext.Sets) ------------------------------------------


def _is_sorted(items: list[Any]) -> bool:
    prev = None
    for item in budget.each(items):
        if type(item) not in (int, UInt, float, str, bytes, bool, Timestamp, Duration):
            raise _nso()
        if prev is not None and compare(prev, item) == 1:
            return False
        prev = item
    return True


def _sum(zero: Any) -> Impl:
    def total(items: list[Any]) -> Any:
        acc = zero
        for item in budget.each(items):
            acc = _add(acc, item)
        return acc

    return total


def _extreme(name: str, prefer: int) -> Impl:
    def pick(items: list[Any]) -> Any:
        result = None
        for item in budget.each(items):
            if type(item) not in (int, UInt, float, str, bytes, bool, Timestamp, Duration):
                raise _nso()
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
    import functools

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


def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    if python_equality(a, b):  # hashable, and equal as CEL says
        return set(b) <= set(a)
    return all(any(equals(x, y) for y in budget.each(a)) for x in b)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    if python_equality(a, b):
        return not set(a).isdisjoint(b)
    return any(any(equals(x, y) for y in budget.each(b)) for x in a)


def _map_insert(m: dict[Any, Any], *rest: Any) -> dict[Any, Any]:
    return insert_into(dict(m), *rest)


def insert_into(out: dict[Any, Any], *rest: Any) -> dict[Any, Any]:
    """cel.@mapInsert into ``out`` itself (a comprehension's own accumulator: see planner.py)."""
    pairs = list(rest[0].items()) if len(rest) == 1 else [(rest[0], rest[1])]
    for k, _ in pairs:
        if map_get(out, k)[0]:
            raise CelEvalError(f"insert failed: key {format_key(k)} already exists")
    for k, v in pairs:
        out[k] = v
    return out


# --- optionals ----------------------------------------------------------------------------------


def _opt_value(opt: Optional) -> Any:
    if not opt.present:
        raise CelEvalError("optional.none() dereference")
    return opt.value


def _of_non_zero(value: Any) -> Optional:
    zero = (
        value is None
        or value is False
        or (type(value) in (int, UInt, float) and value == 0)
        or (isinstance(value, str | bytes | list | dict) and len(value) == 0)
        or (isinstance(value, Duration | Timestamp) and value.ns == 0)
    )
    return NONE if zero else Optional(value)


def _unwrap(items: list[Any]) -> list[Any]:
    out = []
    for item in budget.each(items):
        if not isinstance(item, Optional):
            raise CelEvalError(f"value {item} is not optional")
        if item.present:
            out.append(item.value)
    return out


# --- quantity, semver ---------------------------------------------------------------------


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


def _qty_arith(name: str) -> Impl:
    def arith(q: Quantity, other: Any) -> Quantity:
        try:
            return q.aliasing(other, 1 if name == "add" else -1)
        except QuantityError as exc:
            raise CelEvalError(str(exc)) from None

    return arith


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


# --- IP, CIDR, URL (library.IP, CIDR, URLs) -------------------------------------------------


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    try:
        if "%" in s:
            raise ValueError("IPv6 zones are not allowed")
        addr = ipaddress.ip_address(s)
    except ValueError as exc:
        raise CelEvalError(
            f'IP Address "{s}" parse error during conversion from string: {exc}'
        ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CelEvalError(
            f'IP Address "{s}" parse error during conversion from string: '
            "IPv4-mapped IPv6 addresses are not allowed"
        )
    return addr


def _ip(s: str) -> Opaque:
    addr = _parse_ip(s)
    return Opaque("ip", addr, str(addr))


def _is_ip(s: str) -> bool:
    try:
        _parse_ip(s)
    except CelEvalError:
        return False
    return True


def _ip_is_canonical(s: str) -> bool:
    return str(_parse_ip(s)) == s


def _parse_cidr(s: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        addr, _, bits = s.partition("/")
        if not bits or not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
            raise ValueError("invalid prefix")
        parsed = _parse_ip(addr)
        net = ipaddress.ip_network(f"{parsed}/{bits}", strict=False)
        return net
    except (ValueError, CelEvalError) as exc:
        raise CelEvalError(
            f"network address parse error during conversion from string: {exc}"
        ) from None


def _cidr(s: str) -> Opaque:
    net = _parse_cidr(s)
    addr = _parse_ip(s.partition("/")[0])
    return Opaque("cidr", (addr, net.prefixlen), f"{addr}/{net.prefixlen}")


def _is_cidr(s: str) -> bool:
    try:
        _parse_cidr(s)
    except CelEvalError:
        return False
    return True


def _cidr_network(c: Opaque) -> Any:
    addr, bits = c.value
    return ipaddress.ip_network(f"{addr}/{bits}", strict=False)


def _contains_ip(c: Opaque, other: Any) -> bool:
    addr = _parse_ip(other) if isinstance(other, str) else other.value
    return addr.version == c.value[0].version and addr in _cidr_network(c)


def _contains_cidr(c: Opaque, other: Any) -> bool:
    o2 = _cidr(other) if isinstance(other, str) else other
    net, sub = _cidr_network(c), _cidr_network(o2)
    return sub.version == net.version and sub.subnet_of(net)  # type: ignore[arg-type]


def _masked(c: Opaque) -> Opaque:
    net = _cidr_network(c)
    return Opaque("cidr", (net.network_address, net.prefixlen), str(net))


def _url(s: str) -> Opaque:
    parsed = _parse_url(s)
    if parsed is None:
        raise CelEvalError(f"URL parse error during conversion from string: parse {s!r}: invalid")
    return Opaque("url", s, s)


def _parse_url(s: str) -> urllib.parse.SplitResult | None:
    if not s or (not s.startswith("/") and ":" not in s):
        return None
    if any(c in s for c in " \t\n") or False:
        return None
    try:
        parts = urllib.parse.urlsplit(s)
    except ValueError:
        return None
    if not parts.scheme and not s.startswith("/"):
        return None
    return parts


def _url_part(part: str) -> Impl:
    def get(u: Opaque) -> Any:
        p = urllib.parse.urlsplit(u.value)
        host = p.netloc.rpartition("@")[2]
        if part == "getScheme":
            return p.scheme
        if part == "getHost":
            return host
        if part == "getHostname":
            h = host
            if h.startswith("["):
                return h[1 : h.find("]")]
            return h.rsplit(":", 1)[0] if ":" in h else h
        if part == "getPort":
            h = host
            if h.startswith("["):
                rest = h[h.find("]") + 1 :]
                return rest[1:] if rest.startswith(":") else ""
            return h.rsplit(":", 1)[1] if ":" in h else ""
        if part == "getEscapedPath":
            return p.path
        query: dict[str, list[str]] = {}
        for k, v in urllib.parse.parse_qsl(p.query, keep_blank_values=True):
            query.setdefault(k, []).append(v)
        return query

    return get


def _is_url(s: str) -> bool:
    return _parse_url(s) is not None


_NAMED_FORMATS = {
    "dns1123Label": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "dns1123Subdomain": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    "dns1035Label": r"[a-z]([-a-z0-9]*[a-z0-9])?",
    "qualifiedName": r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
    "dns1123LabelPrefix": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?",
    "dns1123SubdomainPrefix": r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
    "dns1035LabelPrefix": r"[a-z]([-a-z0-9]*[a-z0-9])?",
    "labelValue": r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
    "uri": r".+",
    "uuid": r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}",
    "byte": r"[A-Za-z0-9+/]*={0,2}",
    "date": r"\d{4}-\d{2}-\d{2}",
    "datetime": r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})",
}


def _validate(f: Opaque, s: str) -> Optional:
    pattern = _NAMED_FORMATS.get(f.value, ".*")
    if regex(f"^(?:{pattern})$").search(s) is not None:  # RE2: linear, as Go's regexp
        return NONE
    return Optional([f"does not match the {f.text} format"])


def _format_named(name: str) -> Optional:
    return Optional(Opaque("format", name, name)) if name in _NAMED_FORMATS else NONE


# --- string.format (ext strings, format v1 as Kubernetes' strings v2 has it) ----------------


class FormatError(Exception):
    def __init__(self, message: str, arg: int = -1) -> None:
        super().__init__(message)
        self.arg = arg


_STRING_CLAUSE_TYPES = (
    "strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"
)


def _fmt_string(arg: Any) -> str:
    if isinstance(arg, list):
        return _joined("[", [_quote_for_cel(x, _fmt_clause_any(x)) for x in budget.each(arg)], "]")
    if isinstance(arg, dict):
        pairs = []
        for k, v in budget.each(arg.items()):
            if type(k) in (str, bool):
                ks = _fmt_string(k)
            elif type(k) in (int, UInt):
                ks = str(int(k))
            else:
                raise FormatError(f"no formatting function for map key of type {type_name(k)}")
            pairs.append((_quote_for_cel(k, ks), _quote_for_cel(v, _fmt_clause_any(v))))
        pairs.sort(key=lambda p: p[0])
        return _joined("{", [f"{k}:{v}" for k, v in pairs], "}")
    if arg is None:
        return "null"
    if type(arg) in (int, UInt, float, bool, str, bytes, Timestamp, Duration):
        return to_string(arg) if type(arg) is not bytes else arg.decode("utf-8", "replace")
    if isinstance(arg, TypeValue):
        return arg.name
    raise FormatError(
        f"string clause can only be used on {_STRING_CLAUSE_TYPES}, was given {type_name(arg)}"
    )


def _joined(first: str, pieces: list[str], last: str) -> str:
    """``first + ", ".join(pieces) + last``, counted against the memory budget first (with the
    pieces, each a string object of its own)."""
    budget.allocate(
        sum(map(len, pieces)) + (2 + NEW_STRING) * len(pieces) + 2, "the result of format()"
    )
    return first + ", ".join(pieces) + last


def formatted_size(value: Any) -> int:
    """The least memory ``%s`` of a list or map takes (its pieces and the text they make),
    counted once per distinct list or map: a list that holds the same list many times over is
    cheap to build and enormous formatted."""
    sizes: dict[int, int] = {}

    def size(v: Any) -> int:
        if isinstance(v, str | bytes):
            return len(v) + 2
        if not isinstance(v, list | dict):
            return 1
        if id(v) not in sizes:
            items = v if isinstance(v, list) else list(itertools.chain.from_iterable(v.items()))
            kinds = set(map(type, items))
            each = len(items) * (2 + NEW_STRING)
            if not any(issubclass(k, list | dict | str | bytes) for k in kinds):  # scalars
                sizes[id(v)] = 2 + each + len(items)
            elif kinds <= {str, bytes}:
                sizes[id(v)] = 2 + each + sum(map(len, items)) + 2 * len(items)
            else:
                sizes[id(v)] = 2 + each + sum(size(x) for x in budget.each(items))
        return sizes[id(v)]

    return size(value)


def _fmt_clause_any(arg: Any) -> str:
    ta = type(arg)
    if ta in (int, UInt):
        return str(int(arg))
    if ta in (str, bytes, bool) or arg is None or ta is TypeValue:
        return _fmt_string(arg)
    if ta in (Timestamp, Duration):
        kind = "timestamp" if ta is Timestamp else "duration"
        return f'{kind}("{arg}")'
    if ta is list or ta is dict:
        return _fmt_string(arg)
    if ta is float:
        return f"{arg:.6f}"
    raise FormatError(f"no formatting function for {type_name(arg)}")


def _quote_for_cel(value: Any, text: str) -> str:
    if type(value) is str:
        return _go_quote(text)
    if type(value) is bytes:
        return "b" + _go_quote(text)
    if type(value) is float and (math.isinf(value) or value != value):
        return _go_quote(text)
    return text


def _go_quote(s: str) -> str:
    return '"' + s.translate(_GO_QUOTE_TABLE) + '"'


def _fmt_fixed(arg: Any, precision: int) -> str:
    if type(arg) is str and arg in ("NaN", "Infinity", "-Infinity"):
        arg = to_double(arg)
    if type(arg) is not float:
        raise FormatError(
            f"fixed-point clause can only be used on doubles, was given {type_name(arg)}"
        )
    if arg != arg:
        return "NaN"
    if math.isinf(arg):
        return "∞" if arg > 0 else "-∞"
    budget.allocate(precision + 420, "the result of format()")  # 309 digits, 103 commas, sign
    return f"{arg:,.{precision}f}"


def _fmt_scientific(arg: Any, precision: int) -> str:
    if type(arg) is str and arg in ("NaN", "Infinity", "-Infinity"):
        arg = to_double(arg)
    if type(arg) is not float:
        raise FormatError(
            f"scientific clause can only be used on doubles, was given {type_name(arg)}"
        )
    budget.allocate(max(precision, 0) + 32, "the result of format()")  # the width, or the text
    if arg != arg:
        text = "NaN"
    elif math.isinf(arg):
        text = "∞" if arg > 0 else "-∞"
    else:
        # golang.org/x/text/message's en_US printer, with cel-go's "%<precision>e": the
        # precision becomes a width and the digits stay at 6.
        mantissa, _, exp = f"{arg:.6e}".partition("e")
        n = int(exp)
        digits = "".join(_SUPERSCRIPT[d] for d in f"{abs(n):02d}")
        minus = "\u207b" if n < 0 else ""
        text = f"{mantissa}\u202f\u00d7\u202f10{minus}{digits}"
    return text.rjust(precision)


_SUPERSCRIPT = dict(
    zip("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079", strict=True)
)


def _fmt_binary(arg: Any) -> str:
    if type(arg) is bool:
        return "1" if arg else "0"
    if type(arg) in (int, UInt):
        return format(int(arg), "b")
    raise FormatError(
        f"only integers and bools can be formatted as binary, was given {type_name(arg)}"
    )


def _fmt_hex(arg: Any, upper: bool) -> str:
    budget.allocate(8 * size_of(arg), "the result of format()")
    if type(arg) in (int, UInt):
        text = format(int(arg), "x")
    elif type(arg) is str:
        text = arg.encode().hex()
    elif type(arg) is bytes:
        text = arg.hex()
    else:
        raise FormatError(
            "only integers, byte buffers, and strings can be formatted as hex, "
            f"was given {type_name(arg)}"
        )
    return text.upper() if upper else text


def _fmt_octal(arg: Any) -> str:
    if type(arg) in (int, UInt):
        return format(int(arg), "o")
    raise FormatError(f"octal clause can only be used on integers, was given {type_name(arg)}")


def _fmt_decimal(arg: Any) -> str:
    if type(arg) in (int, UInt):
        return str(int(arg))
    raise FormatError(f"decimal clause can only be used on integers, was given {type_name(arg)}")


def parse_format(
    fmt: str, n_args: int, clause: Callable[[str, int | None, int], str]
) -> tuple[str, int]:
    """ext/formatting.go parseFormatString: the formatted string and how many arguments it
    used; ``clause(verb, precision, index)`` formats one argument. Raises FormatError."""
    out: list[str] = []
    data = fmt.encode()
    i, arg = 0, 0
    while i < len(data):
        if data[i : i + 1] != b"%":
            j = data.find(b"%", i)
            j = len(data) if j < 0 else j
            out.append(data[i:j].decode("utf-8", "replace"))
            i = j
            continue
        if data[i + 1 : i + 2] == b"%":
            out.append("%")
            i += 2
            continue
        if arg >= n_args:
            raise FormatError(f"index {arg} out of range", arg)
        if i + 1 >= len(data):
            raise FormatError("unexpected end of string", arg)
        j = i + 1
        precision = None
        if data[j : j + 1] == b".":
            k = j + 1
            while k < len(data) and data[k : k + 1].isdigit():
                k += 1
            if k >= len(data):
                raise FormatError(
                    "could not parse formatting clause: error while parsing precision: "
                    "could not find end of precision specifier",
                    arg,
                )
            digits = data[j + 1 : k].decode()
            if not digits:
                raise FormatError(
                    "could not parse formatting clause: error while parsing precision: error "
                    'while converting precision to integer: strconv.Atoi: parsing "": invalid '
                    "syntax",
                    arg,
                )
            if len(digits.lstrip("0")) > 19 or int(digits) > INT64_MAX:
                raise FormatError(
                    "could not parse formatting clause: error while parsing precision: error "
                    f'while converting precision to integer: strconv.Atoi: parsing "{digits}": '
                    "value out of range",
                    arg,
                )
            precision = int(digits)
            j = k
        verb = chr(data[j])
        if verb not in "sdfebxXo":
            raise FormatError(
                f'could not parse formatting clause: unrecognized formatting clause "{verb}"', arg
            )
        try:
            out.append(clause(verb, precision, arg))
        except FormatError as exc:
            raise FormatError(f"error during formatting: {exc}", arg) from None
        i = j + 1
        arg += 1
    budget.allocate(sum(map(len, out)), "the result of format()")
    return "".join(out), arg


def _format(fmt: str, args: list[Any]) -> str:
    def clause(verb: str, precision: int | None, index: int) -> str:
        value = args[index]
        if verb == "s":
            if isinstance(value, list | dict):
                budget.require(formatted_size(value), "the result of format()")
            return _fmt_string(value)
        if verb == "d":
            return _fmt_decimal(value)
        if verb == "f":
            return _fmt_fixed(value, 6 if precision is None else precision)
        if verb == "e":
            return _fmt_scientific(value, 6 if precision is None else precision)
        if verb == "b":
            return _fmt_binary(value)
        if verb in "xX":
            return _fmt_hex(value, verb == "X")
        return _fmt_octal(value)

    try:
        text, _ = parse_format(fmt, len(args), clause)
    except FormatError as exc:
        raise CelEvalError(str(exc)) from None
    return text


# --- declarations ---------------------------------------------------------------------------


def _strings(test: Callable[[str, str], bool]) -> Impl:
    """A string function cel-go binds without a type guard: its binding refuses anything else
    (a list-typed attribute's ``contains``) with "no such overload"."""

    def binding(s: Any, x: Any) -> bool:
        if type(s) is not str or type(x) is not str:
            raise _nso()
        return test(s, x)

    return binding


def _declare_stdlib() -> None:
    declare("_?_:_", o("conditional", [BOOL, A, A], A, non_strict=True))
    declare("_&&_", o("logical_and", [BOOL, BOOL], BOOL, non_strict=True))
    declare("_||_", o("logical_or", [BOOL, BOOL], BOOL, non_strict=True))

    def negate(v: Any) -> bool:
        if type(v) is not bool:
            raise _nso()
        return not v

    declare("!_", o("logical_not", [BOOL], BOOL), singleton=negate)
    declare(
        "@not_strictly_false",
        o("not_strictly_false", [BOOL], BOOL, lambda v: v if type(v) is bool else True,
          non_strict=True),
    )  # fmt: skip
    declare("_==_", o("equals", [A, A], BOOL))
    declare("_!=_", o("not_equals", [A, A], BOOL))
    declare(
        "_+_",
        o("add_bytes", [BYTES, BYTES], BYTES),
        o("add_double", [DBL, DBL], DBL),
        o("add_duration_duration", [DUR, DUR], DUR),
        o("add_duration_timestamp", [DUR, TS], TS),
        o("add_timestamp_duration", [TS, DUR], TS),
        o("add_int64", [INT, INT], INT),
        o("add_list", [LIST_A, LIST_A], LIST_A),
        o("add_string", [STR, STR], STR),
        o("add_uint64", [UINT, UINT], UINT),
        singleton=_add,
    )
    declare(
        "_/_",
        o("divide_double", [DBL, DBL], DBL),
        o("divide_int64", [INT, INT], INT),
        o("divide_uint64", [UINT, UINT], UINT),
        singleton=_div,
    )
    declare(
        "_%_",
        o("modulo_int64", [INT, INT], INT),
        o("modulo_uint64", [UINT, UINT], UINT),
        singleton=_mod,
    )
    declare(
        "_*_",
        o("multiply_double", [DBL, DBL], DBL),
        o("multiply_int64", [INT, INT], INT),
        o("multiply_uint64", [UINT, UINT], UINT),
        singleton=_mul,
    )
    declare("-_", o("negate_double", [DBL], DBL), o("negate_int64", [INT], INT), singleton=_neg)
    declare(
        "_-_",
        o("subtract_double", [DBL, DBL], DBL),
        o("subtract_duration_duration", [DUR, DUR], DUR),
        o("subtract_int64", [INT, INT], INT),
        o("subtract_timestamp_duration", [TS, DUR], TS),
        o("subtract_timestamp_timestamp", [TS, TS], DUR),
        o("subtract_uint64", [UINT, UINT], UINT),
        singleton=_sub,
    )
    for op, word, test in (
        ("_<_", "less", lambda c: c == -1),
        ("_<=_", "less_equals", lambda c: c != 1),
        ("_>_", "greater", lambda c: c == 1),
        ("_>=_", "greater_equals", lambda c: c != -1),
    ):
        pairs = [
            ("bool", BOOL, BOOL), ("int64", INT, INT), ("int64_double", INT, DBL),
            ("int64_uint64", INT, UINT), ("uint64", UINT, UINT), ("uint64_double", UINT, DBL),
            ("uint64_int64", UINT, INT), ("double", DBL, DBL), ("double_int64", DBL, INT),
            ("double_uint64", DBL, UINT), ("string", STR, STR), ("bytes", BYTES, BYTES),
            ("timestamp", TS, TS), ("duration", DUR, DUR),
        ]  # fmt: skip
        declare(
            op,
            *(o(f"{word}_{suffix}", [x, y], BOOL) for suffix, x, y in pairs),
            singleton=_relation(op, test),
        )
    declare(
        "_[_]",
        o("index_list", [LIST_A, INT], A),
        o("index_map", [MAP_AB, A], B),
        o("optional_list_index_int", [t.optional_of(t.list_of(V)), INT], t.optional_of(V)),
        o("optional_map_index_value", [t.optional_of(t.map_of(K, V)), K], t.optional_of(V)),
    )
    declare(
        "@in",
        o("in_list", [A, LIST_A], BOOL),
        o("in_map", [A, MAP_AB], BOOL),
        singleton=lambda a, b: _in(a, b),
    )
    size_types = [("bytes", BYTES), ("list", LIST_A), ("map", MAP_AB), ("string", STR)]
    declare(
        "size",
        *(o(f"size_{n}", [x], INT) for n, x in size_types),
        *(m(f"{n}_size", [x], INT) for n, x in size_types),
        singleton=_size,
    )
    declare("type", o("type", [A], t.type_of(A)), singleton=type_value)
    declare(
        "bool",
        o("bool_to_bool", [BOOL], BOOL, to_bool),
        o("string_to_bool", [STR], BOOL, to_bool),
    )
    declare(
        "bytes",
        o("bytes_to_bytes", [BYTES], BYTES, to_bytes),
        o("string_to_bytes", [STR], BYTES, to_bytes),
    )
    declare(
        "double",
        *(o(f"{n}_to_double", [x], DBL, to_double)
          for n, x in (("double", DBL), ("int64", INT), ("string", STR), ("uint64", UINT))),
    )  # fmt: skip
    declare(
        "duration",
        *(o(f"{n}_to_duration", [x], DUR, to_duration)
          for n, x in (("duration", DUR), ("int64", INT), ("string", STR))),
    )  # fmt: skip
    declare("dyn", o("to_dyn", [A], t.DYN), singleton=lambda v: v)
    declare(
        "int",
        *(o(f"{n}_to_int64", [x], INT, to_int)
          for n, x in (("int64", INT), ("double", DBL), ("duration", DUR), ("string", STR),
                       ("timestamp", TS), ("uint64", UINT))),
    )  # fmt: skip
    declare(
        "string",
        *(o(f"{n}_to_string", [x], STR, to_string)
          for n, x in (("string", STR), ("bool", BOOL), ("bytes", BYTES), ("double", DBL),
                       ("duration", DUR), ("int64", INT), ("timestamp", TS), ("uint64", UINT))),
    )  # fmt: skip
    declare(
        "timestamp",
        *(o(f"{n}_to_timestamp", [x], TS, to_timestamp)
          for n, x in (("timestamp", TS), ("int64", INT), ("string", STR))),
    )  # fmt: skip
    declare(
        "uint",
        *(o(f"{n}_to_uint64", [x], UINT, to_uint)
          for n, x in (("uint64", UINT), ("double", DBL), ("int64", INT), ("string", STR))),
    )  # fmt: skip
    declare(
        "contains",
        m("contains_string", [STR, STR], BOOL, _strings(lambda s, x: x in s)),
        guards=False,
    )
    declare(
        "endsWith",
        m("ends_with_string", [STR, STR], BOOL, _strings(str.endswith)),
        guards=False,
    )
    declare(
        "startsWith",
        m("starts_with_string", [STR, STR], BOOL, _strings(str.startswith)),
        guards=False,
    )

    def matches(s: Any, pattern: Any) -> bool:
        if type(s) is not str:
            raise CelEvalError("no such overload: matches")
        if type(pattern) is not str:
            raise _nso()
        return _matches(s, pattern)

    declare(
        "matches",
        o("matches", [STR, STR], BOOL),
        m("matches_string", [STR, STR], BOOL),
        singleton=matches,
    )
    for part, oid in (
        ("getFullYear", "timestamp_to_year"),
        ("getMonth", "timestamp_to_month"),
        ("getDayOfYear", "timestamp_to_day_of_year"),
        ("getDayOfMonth", "timestamp_to_day_of_month"),
        ("getDate", "timestamp_to_day_of_month_1_based"),
        ("getDayOfWeek", "timestamp_to_day_of_week"),
        ("getHours", "timestamp_to_hours"),
        ("getMinutes", "timestamp_to_minutes"),
        ("getSeconds", "timestamp_to_seconds"),
        ("getMilliseconds", "timestamp_to_milliseconds"),
    ):
        overloads = [
            m(oid, [TS], INT, lambda ts, p=part: timelib.timestamp_part(ts, p)),
            m(f"{oid}_with_tz", [TS, STR], INT,
              lambda ts, tz, p=part: timelib.timestamp_part(ts, p, tz)),
        ]  # fmt: skip
        if part in ("getHours", "getMinutes", "getSeconds", "getMilliseconds"):
            overloads.append(
                m(f"duration_to_{part[3:].lower()}", [DUR], INT,
                  lambda d, p=part: timelib.duration_part(d, p))
            )  # fmt: skip
        declare(part, *overloads)


def _declare_optional() -> None:
    opt_v = t.optional_of(V)
    declare("optional.of", o("optional_of", [V], opt_v, Optional))
    declare("optional.ofNonZeroValue", o("optional_ofNonZeroValue", [V], opt_v, _of_non_zero))
    declare("optional.none", o("optional_none", [], opt_v, lambda: NONE))
    declare("value", m("optional_value", [opt_v], V, _opt_value))
    declare("hasValue", m("optional_hasValue", [opt_v], BOOL, lambda x: x.present))
    declare("or", m("optional_or_optional", [opt_v, opt_v], opt_v))
    declare("orValue", m("optional_orValue_value", [opt_v, V], V))
    declare("_?._", o("select_optional_field", [t.DYN, STR], opt_v))
    declare(
        "_[?_]",
        o("list_optindex_optional_int", [t.list_of(V), INT], opt_v),
        o("optional_list_optindex_optional_int", [t.optional_of(t.list_of(V)), INT], opt_v),
        o("map_optindex_optional_value", [t.map_of(K, V), K], opt_v),
        o("optional_map_optindex_optional_value", [t.optional_of(t.map_of(K, V)), K], opt_v),
    )
    declare("last", m("list_last", [t.list_of(V)], opt_v,
                      lambda x: Optional(x[-1]) if x else NONE))  # fmt: skip
    declare("first", m("list_first", [t.list_of(V)], opt_v,
                       lambda x: Optional(x[0]) if x else NONE))  # fmt: skip
    declare("optional.unwrap", o("optional_unwrap", [t.list_of(opt_v)], t.list_of(V), _unwrap))
    declare("unwrapOpt", m("optional_unwrapOpt", [t.list_of(opt_v)], t.list_of(V), _unwrap))


def _declare_kubernetes_1_0() -> None:
    url = t.URL
    declare("url", o("string_to_url", [STR], url, _url))
    for part, oid in (
        ("getScheme", "url_get_scheme"),
        ("getHost", "url_get_host"),
        ("getHostname", "url_get_hostname"),
        ("getPort", "url_get_port"),
        ("getEscapedPath", "url_get_escaped_path"),
    ):
        declare(part, m(oid, [url], STR, _url_part(part)))
    declare(
        "getQuery",
        m("url_get_query", [url], t.map_of(STR, t.list_of(STR)), _url_part("getQuery")),
    )
    declare("isURL", o("is_url_string", [STR], BOOL, _is_url))
    declare("find", m("string_find_string", [STR, STR], STR, _find))
    declare(
        "findAll",
        m("string_find_all_string", [STR, STR], t.list_of(STR), _find_all),
        m("string_find_all_string_int", [STR, STR, INT], t.list_of(STR), _find_all),
    )
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
    # library.Authz (1.27) and AuthzSelectors (1.31): no value of these types can exist in a
    # device selector, but the declarations decide what compiles.
    names = ("Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision")
    az, path, group, res, dec = (t.struct(f"kubernetes.authorization.{n}") for n in names)
    declare("path", m("authorizer_path", [az, STR], path))
    declare("group", m("authorizer_group", [az, STR], group))
    declare("serviceAccount", m("authorizer_serviceaccount", [az, STR, STR], az))
    declare("resource", m("groupcheck_resource", [group, STR], res))
    declare("subresource", m("resourcecheck_subresource", [res, STR], res))
    declare("namespace", m("resourcecheck_namespace", [res, STR], res))
    declare("name", m("resourcecheck_name", [res, STR], res))
    declare(
        "check",
        m("pathcheck_check", [path, STR], dec),
        m("resourcecheck_check", [res, STR], dec),
    )
    declare("errored", m("decision_errored", [dec], BOOL))
    declare("error", m("decision_error", [dec], STR))
    declare("allowed", m("decision_allowed", [dec], BOOL))
    declare("reason", m("decision_reason", [dec], STR))
    declare("fieldSelector", m("authorizer_fieldselector", [res, STR], res))
    declare("labelSelector", m("authorizer_labelselector", [res, STR], res))


def _declare_kubernetes_1_28() -> None:
    declare("quantity", o("string_to_quantity", [STR], QTY, _quantity))
    declare("isQuantity", o("is_quantity_string", [STR], BOOL, _is_quantity))
    declare("sign", o("quantity_sign", [QTY], INT, lambda q: q.sign()))
    declare(
        "isGreaterThan",
        m("quantity_is_greater_than", [QTY, QTY], BOOL, lambda a, b: a.compare(b) == 1),
    )
    declare(
        "isLessThan", m("quantity_is_less_than", [QTY, QTY], BOOL, lambda a, b: a.compare(b) == -1)
    )
    declare("compareTo", m("quantity_compare_to", [QTY, QTY], INT, lambda a, b: a.compare(b)))
    declare(
        "asApproximateFloat",
        m("quantity_get_float", [QTY], DBL, lambda q: q.as_approximate_float()),
    )
    declare("asInteger", m("quantity_get_int", [QTY], INT, _as_integer))
    declare("isInteger", m("quantity_is_integer", [QTY], BOOL, lambda q: q.is_integer()))
    declare(
        "add",
        m("quantity_add", [QTY, QTY], QTY, _qty_arith("add")),
        m("quantity_add_int", [QTY, INT], QTY, _qty_arith("add")),
    )
    declare(
        "sub",
        m("quantity_sub", [QTY, QTY], QTY, _qty_arith("sub")),
        m("quantity_sub_int", [QTY, INT], QTY, _qty_arith("sub")),
    )


MAX_ATTRIBUTE_VALUES = 48  # resourceapi.ResourceSliceMaxAttributeValuesPerDevice


def _includes(target: Any, arg: Any) -> bool:
    """compile.go includesFunc: ``<arg> in <target>`` for a list attribute, ``==`` for a
    scalar one; refuses lists longer than a device may publish."""
    if isinstance(target, list):
        for i, item in enumerate(target):
            if i >= MAX_ATTRIBUTE_VALUES:
                raise CelEvalError(
                    "'includes' function cannot be applied to lists longer than "
                    f"{MAX_ATTRIBUTE_VALUES} values"
                )
            if equals(item, arg):
                return True
        return False
    return equals(target, arg)


def _declare_dra() -> None:
    # 1.36 (KEP-5491): declared in the stored environment whatever DRAListTypeAttributes says;
    # the checker hides it where the environment does not have it (cel.dialect).
    declare("includes", m("dra_includes_dyn_dyn", [t.DYN, t.DYN], BOOL, _includes))


def _declare_strings_v2() -> None:
    declare("charAt", m("string_char_at_int", [STR, INT], STR, _char_at))
    declare(
        "indexOf",
        m("string_index_of_string", [STR, STR], INT, _index_of),
        m("string_index_of_string_int", [STR, STR, INT], INT, _index_of),
    )
    declare(
        "lastIndexOf",
        m("string_last_index_of_string", [STR, STR], INT, _last_index_of),
        m("string_last_index_of_string_int", [STR, STR, INT], INT, _last_index_of_offset),
    )
    declare("lowerAscii", m("string_lower_ascii", [STR], STR, lambda s: _ascii(s, False)))
    declare(
        "replace",
        m("string_replace_string_string", [STR, STR, STR], STR, _replace),
        m("string_replace_string_string_int", [STR, STR, STR, INT], STR, _replace),
    )
    declare(
        "split",
        m("string_split_string", [STR, STR], t.list_of(STR), _split),
        m("string_split_string_int", [STR, STR, INT], t.list_of(STR), _split),
    )
    declare(
        "substring",
        m("string_substring_int", [STR, INT], STR, _substring),
        m("string_substring_int_int", [STR, INT, INT], STR, _substring),
    )
    declare("trim", m("string_trim", [STR], STR, _trim))
    declare("upperAscii", m("string_upper_ascii", [STR], STR, lambda s: _ascii(s, True)))
    declare("format", m("string_format", [STR, t.list_of(t.DYN)], STR, _format))
    declare("strings.quote", o("strings_quote", [STR], STR, _quote))
    declare(
        "join",
        m("list_join", [t.list_of(STR)], STR, _join),
        m("list_join_string", [t.list_of(STR), STR], STR, _join),
    )


def _declare_sets() -> None:
    lt = t.list_of(t.param("T"))
    declare("sets.contains", o("list_sets_contains_list", [lt, lt], BOOL, _sets_contains))
    declare(
        "sets.equivalent",
        o("list_sets_equivalent_list", [lt, lt], BOOL,
          lambda a, b: _sets_contains(a, b) and _sets_contains(b, a)),
    )  # fmt: skip
    declare("sets.intersects", o("list_sets_intersects_list", [lt, lt], BOOL, _sets_intersects))


def _declare_net() -> None:
    ip, cidr = t.IP, t.CIDR
    declare("ip", o("string_to_ip", [STR], ip, _ip))
    declare("family", m("ip_family", [ip], INT, lambda x: x.value.version))
    declare("ip.isCanonical", o("ip_is_canonical", [STR], BOOL, _ip_is_canonical))
    for name, oid, test in (
        ("isUnspecified", "ip_is_unspecified", lambda a: a.is_unspecified),
        ("isLoopback", "ip_is_loopback", lambda a: a.is_loopback),
        ("isLinkLocalMulticast", "ip_is_link_local_multicast",
         lambda a: a in ipaddress.ip_network("224.0.0.0/24" if a.version == 4 else "ff02::/16")),
        ("isLinkLocalUnicast", "ip_is_link_local_unicast", lambda a: a.is_link_local),
        ("isGlobalUnicast", "ip_is_global_unicast",
         lambda a: not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local
                        or (a.version == 4 and a == ipaddress.ip_address("255.255.255.255")))),
    ):  # fmt: skip
        declare(name, m(oid, [ip], BOOL, lambda x, f=test: f(x.value)))
    declare("isIP", o("is_ip", [STR], BOOL, _is_ip))
    declare("string", o("ip_to_string", [ip], STR, to_string))
    declare("cidr", o("string_to_cidr", [STR], cidr, _cidr))
    declare(
        "containsIP",
        m("cidr_contains_ip_string", [cidr, STR], BOOL, _contains_ip),
        m("cidr_contains_ip_ip", [cidr, ip], BOOL, _contains_ip),
    )
    declare(
        "containsCIDR",
        m("cidr_contains_cidr_string", [cidr, STR], BOOL, _contains_cidr),
        m("cidr_contains_cidr", [cidr, cidr], BOOL, _contains_cidr),
    )
    declare("ip", m("cidr_ip", [cidr], ip, lambda c: Opaque("ip", c.value[0], str(c.value[0]))))
    declare("prefixLength", m("cidr_prefix_length", [cidr], INT, lambda c: c.value[1]))
    declare("masked", m("cidr_masked", [cidr], cidr, _masked))
    declare("isCIDR", o("is_cidr", [STR], BOOL, _is_cidr))
    declare("string", o("cidr_to_string", [cidr], STR, to_string))


def _declare_format() -> None:
    fmt = t.FORMAT
    declare(
        "validate",
        m("format-validate", [fmt, STR], t.optional_of(t.list_of(STR)), _validate),
    )
    declare("format.named", o("format-named", [STR], t.optional_of(fmt), _format_named))
    for name in _NAMED_FORMATS:
        declare(
            f"format.{name}",
            o(f"format.{name}", [], fmt, lambda n=name: Opaque("format", n, n)),
        )


def _declare_comprehensions_and_lists() -> None:
    kv = t.map_of(K, V)
    declare(
        "cel.@mapInsert",
        o("@mapInsert_map_key_value", [kv, K, V], kv, _map_insert),
        o("@mapInsert_map_map", [kv, kv], kv, _map_insert),
    )
    semver = VER
    declare("semver", o("string_to_semver", [STR], semver, _semver),
            o("string_bool_to_semver", [STR, BOOL], semver, _semver))  # fmt: skip
    declare("isSemver", o("is_semver_string", [STR], BOOL, _is_semver),
            o("is_semver_string_bool", [STR, BOOL], BOOL, _is_semver))  # fmt: skip
    declare("isGreaterThan", m("semver_is_greater_than", [semver, semver], BOOL,
                               lambda a, b: a.compare(b) == 1))  # fmt: skip
    declare("isLessThan", m("semver_is_less_than", [semver, semver], BOOL,
                            lambda a, b: a.compare(b) == -1))  # fmt: skip
    declare("compareTo", m("semver_compare_to", [semver, semver], INT,
                           lambda a, b: a.compare(b)))  # fmt: skip
    declare("major", m("semver_major", [semver], INT, lambda v: v.major()))
    declare("minor", m("semver_minor", [semver], INT, lambda v: v.minor()))
    declare("patch", m("semver_patch", [semver], INT, lambda v: v.patch()))
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


# Declaration order matters for runtime dispatch: it is the order in which the apiserver's base
# environment adds the libraries (base.go), the standard library first.
_declare_stdlib()
_declare_kubernetes_1_0()
_declare_kubernetes_1_28()
_declare_optional()
_declare_strings_v2()
_declare_sets()
_declare_net()
_declare_format()
_declare_comprehensions_and_lists()
_declare_dra()

# Identifiers that name types (the standard library's type variables, and the types the
# libraries register): `type(x) == int`.
TYPE_IDENTS: dict[str, T] = {
    "bool": BOOL, "bytes": BYTES, "double": DBL, "google.protobuf.Duration": DUR, "int": INT,
    "list": t.list_of(A), "map": MAP_AB, "null_type": t.NULL, "string": STR,
    "google.protobuf.Timestamp": TS, "type": t.TYPE, "uint": UINT,
    "optional_type": t.optional_of(A), "kubernetes.Quantity": QTY, "kubernetes.Semver": VER,
    "kubernetes.URL": t.URL, "net.IP": t.IP, "net.CIDR": t.CIDR,
    "kubernetes.NamedFormat": t.FORMAT,
}  # fmt: skip


# --- runtime cost -------------------------------------------------------------------------------
#
# CostTracker.costCall: the ext libraries' overload trackers (ext/lists.go, ext/sets.go), then
# the apiserver's library.CostEstimator.CallCost (library/cost.go), then cel-go's defaults
# (interpreter/runtimecost.go). cel-go computes a call's cost after the call from its arguments
# and its result; here ``call_cost`` resolves, when the program is planned, how a call site's
# cost follows from its arguments, and the planner charges it *before* the call runs. Where
# cel-go's cost depends on the result (lists.range, slice, reverse, join), ``result_size``
# predicts the result's size from the arguments, and a call that fails costs what cel-go
# charges for an error result (whose size is 1).

_STRING_FACTOR = 0.1
_REGEX_FACTOR = 0.25
_LIST_TRACKED = {"list_slice", "lists_range", "list_reverse"}
_SORT_TRACKED = {
    f"list_{c}_sort"
    for c in ("int", "uint", "double", "bool", "google.protobuf.Duration",
              "google.protobuf.Timestamp", "string", "bytes")
}  # fmt: skip
_FIXED_1 = {
    "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed",
    "reason", "error", "errored", "masked", "prefixLength", "family", "isUnspecified",
    "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
    "format.named", "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan",
    "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch", "getScheme",
    "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery",
}  # fmt: skip
_STRING_ORDER = {
    f"{op}_{kind}"
    for op in ("less", "greater", "less_equals", "greater_equals")
    for kind in ("string", "bytes")
}

# A call's cost: a constant, or a function of its arguments and its result's size.
Cost = int | Callable[[tuple[Any, ...], int], int]


def _ceil(x: float) -> int:
    return int(math.ceil(x))


def _strcost(v: Any, factor: float = _STRING_FACTOR) -> int:
    return _ceil(size_of(v) * factor)


def call_cost(function: str, overload: str, arity: int) -> Cost:
    """How the cost of a call of ``function`` (resolved to ``overload``, or "" when it is
    dispatched at runtime) with ``arity`` arguments follows from its arguments."""
    if overload in _LIST_TRACKED:
        return lambda args, size: size + 1 + 10
    if overload in ("list_flatten", "list_flatten_int"):
        return _flatten_cost
    if overload == "list_distinct" or overload in _SORT_TRACKED:
        return lambda args, size: _self_compare(args[0]) if isinstance(args[0], list) else 12
    if overload.startswith("list_") and overload.endswith("_sortByAssociatedKeys"):
        return lambda args, size: _self_compare(args[1]) if isinstance(args[1], list) else 12
    if overload in ("list_sets_contains_list", "list_sets_intersects_list"):
        return lambda args, size: 1 + size_of(args[0]) * size_of(args[1])
    if overload == "list_sets_equivalent_list":
        return lambda args, size: 1 + size_of(args[0]) * size_of(args[1]) * 2
    k8s = _kubernetes_cost(function, overload, arity)
    if k8s is not None:
        return k8s
    if overload in ("starts_with_string", "ends_with_string", "string_to_bytes",
                    "bytes_to_string", "strings_quote", "string_format"):  # fmt: skip
        return lambda args, size: _strcost(args[0])
    if overload == "in_list":
        return lambda args, size: size_of(args[1])
    if overload in ("equals", "not_equals") or overload in _STRING_ORDER:
        return lambda args, size: equality_cost(args[0], args[1])
    if overload in ("add_string", "add_bytes"):
        return lambda args, size: _ceil((size_of(args[0]) + size_of(args[1])) * _STRING_FACTOR)
    if overload in ("matches", "matches_string"):
        return _regex_cost
    if overload == "contains_string":
        return lambda args, size: _strcost(args[0]) * _strcost(args[1])
    return 1


def equality_cost(a: Any, b: Any) -> int:
    """``==`` and ``!=``: O(min(m, n)) (the apiserver's Kubernetes types: 1)."""
    if isinstance(a, Quantity | Semver | Opaque):
        return 1
    return _ceil(min(size_of(a), size_of(b)) * _STRING_FACTOR)


def _flatten_cost(args: tuple[Any, ...], size: int) -> int:
    depth = args[1] if len(args) == 2 and type(args[1]) is int else 1
    return int(size_of(args[0]) * depth) + 1 + 10


def _regex_cost(args: tuple[Any, ...], size: int) -> int:
    return _ceil((1 + size_of(args[0])) * _STRING_FACTOR) * _strcost(args[1], _REGEX_FACTOR)


def _self_compare(items: list[Any]) -> int:
    n = len(items)
    factor = 2.0
    if n and type(items[0]) in (str, bytes):
        factor += _STRING_FACTOR
    return int(n * n * factor) + 1 + 10


def _kubernetes_cost(function: str, overload: str, arity: int) -> Cost | None:
    if function == "check":
        return 350000
    if function in _FIXED_1:
        return 1
    if function in ("fieldSelector", "labelSelector") and arity >= 2:
        return lambda args, size: int(
            10 + size_of(args[1]) * _STRING_FACTOR + size_of(args[1]) * 0.5 * 50
        )
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        return (lambda args, size: traversal_cost(args[0])) if arity else 0
    if function in ("url", "lowerAscii", "upperAscii", "substring", "trim") and arity:
        return lambda args, size: _strcost(args[0])
    if function in ("replace", "split") and arity:
        return lambda args, size: _strcost(args[0], 2 * _STRING_FACTOR)
    if function == "join" and arity:
        return lambda args, size: _ceil(size * 2 * _STRING_FACTOR)
    if function in ("find", "findAll") and arity >= 2:
        return _regex_cost
    if function in ("cidr", "isIP", "isCIDR") and arity:
        return lambda args, size: _strcost(args[0])
    if function == "ip" and arity:
        return 1 if overload == "cidr_ip" else lambda args, size: _strcost(args[0])
    if function == "ip.isCanonical" and arity:
        return lambda args, size: _strcost(args[0], 2 * _STRING_FACTOR)
    if function == "containsIP" and arity >= 2:
        string = overload == "cidr_contains_ip_string"
        return lambda args, size: (
            _ceil(2 * size_of(args[0]) * _STRING_FACTOR) + (_strcost(args[1]) if string else 0)
        )
    if function == "containsCIDR" and arity >= 2:
        string = overload == "cidr_contains_cidr_string"
        return lambda args, size: (
            _ceil(2 * size_of(args[0]) * _STRING_FACTOR)
            + _strcost(args[0])
            + 1
            + (_strcost(args[1]) if string else 0)
        )
    if function in ("quantity", "isQuantity", "semver", "isSemver") and arity:
        return lambda args, size: _strcost(args[0])
    if function == "validate" and arity >= 2:
        return lambda args, size: (
            _ceil((1 + size_of(args[1])) * _STRING_FACTOR) * _ceil(60 * _REGEX_FACTOR)
        )
    return None


def traversal_cost(value: Any) -> int:
    """library/cost.go traversalCost: a string or bytes costs a tenth of its length in bytes,
    a list or map the sum over its elements (keys and values), anything else 1. It stops as soon
    as the sum is more than the evaluation may still spend: a list that holds the same list
    many times over (cheap to build) would otherwise take a lifetime to walk."""
    room = budget.remaining_cost()
    total = 0
    stack = [value]
    for v in budget.each(_drain(stack)):
        if isinstance(v, str):
            total += int((len(v) if v.isascii() else len(v.encode("utf-8", "surrogatepass")))
                         * _STRING_FACTOR)  # fmt: skip
        elif isinstance(v, bytes):
            total += int(len(v) * _STRING_FACTOR)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                stack.append(k)
                stack.append(x)
        else:
            total += 1
        if total > room:
            raise CostLimitExceeded()
    return total


def _drain(stack: list[Any]) -> Any:
    while stack:
        yield stack.pop()


def result_size(function: str, overload: str, args: tuple[Any, ...]) -> int:
    """cel-go's actualSize of the result of a call whose cost depends on it, predicted from the
    arguments: 1 when the call will fail (its result is an error)."""
    if overload == "lists_range":
        return max(args[0], 0) if type(args[0]) is int else 1
    if overload == "list_reverse":
        return size_of(args[0]) if isinstance(args[0], list) else 1
    if overload == "list_slice":
        items, start, end = args
        ok = isinstance(items, list) and type(start) is int and type(end) is int
        return end - start if ok and 0 <= start <= end <= len(items) else 1
    if function == "join":
        items = args[0]
        sep = args[1] if len(args) == 2 else ""
        if not isinstance(items, list) or type(sep) is not str:
            return 1
        total = 0
        for item in budget.each(items):
            if type(item) is not str:
                return 1
            total += len(item)
        return total + len(sep) * max(len(items) - 1, 0)
    return 1


def sized_by_result(function: str, overload: str) -> bool:
    """Whether a call's cost depends on its result (see result_size)."""
    return overload in _LIST_TRACKED or function == "join"


# --- memory -----------------------------------------------------------------------------------
#
# What a call adds to its evaluation's memory (approximate bytes, see budget.py), known from its
# arguments before it runs: the size of the value it builds, or an upper bound where the exact
# size would take the work itself. The planner counts it before the call; format and findAll
# count their pieces as they make them.

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


__all__ = ["ENV", "TYPE_IDENTS", "Function", "Overload", "call_cost", "go_g", "is_number"]
