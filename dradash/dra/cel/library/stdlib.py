"""cel-go's standard library: the operators, ``size``, ``in``, the type conversions and the
string predicates, as ``common/stdlib/standard.go`` declares them and ``common/types`` (the
values' ``Add``, ``Compare``, ``ConvertToType`` …) implements them, in the cel-go that
``k8s.io/apiserver`` v0.36.2 requires; with ``cel.CrossTypeNumericComparisons`` (the ordering
operators across int, uint and double). The timestamp accessors are timestamps.py's.

Functions cel-go binds once for all overloads (the operators, ``size``, ``in``, ``type``,
``matches``) have a singleton binding and no runtime type guard: the binding itself refuses
what it cannot take ("no such overload").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import re2

from dradash.dra.cel import budget, timelib
from dradash.dra.cel import types as t
from dradash.dra.cel.functions import (
    BOOL,
    BYTES,
    DBL,
    DUR,
    INT,
    LIST_A,
    MAP_AB,
    STR,
    TS,
    UINT,
    A,
    B,
    Impl,
    K,
    V,
    declare,
    m,
    nso,
    o,
)
from dradash.dra.cel.library import regex
from dradash.dra.cel.timelib import Duration, Timestamp
from dradash.dra.cel.values import (
    INT64_MAX,
    INT64_MIN,
    NO_SUCH_OVERLOAD,
    CelEvalError,
    Opaque,
    TypeValue,
    UInt,
    check_int,
    check_uint,
    equals,
    map_get,
    no_overload,
    python_equality,
    type_name,
)

# --- arithmetic and comparison (the singleton bindings of common/stdlib) --------------------


def add(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int:
        if type(b) is not int:
            raise nso()
        return check_int(a + b)
    if ta is UInt:
        if type(b) is not UInt:
            raise nso()
        return check_uint(a + b)
    if ta is float:
        if type(b) is not float:
            raise nso()
        return a + b
    if ta is str:
        if type(b) is not str:
            raise nso()
        return a + b
    if ta is bytes:
        if type(b) is not bytes:
            raise nso()
        return a + b
    if ta is list:
        if type(b) is not list:
            raise nso()
        return a + b
    if ta is Duration:
        if isinstance(b, Duration):
            return Duration(check_int(a.ns + b.ns))
        if isinstance(b, Timestamp):
            return _ts(b.ns + a.ns)
        raise nso()
    if ta is Timestamp:
        if isinstance(b, Duration):
            return _ts(a.ns + b.ns)
        raise nso()
    raise CelEvalError("no such overload: _+_")


def _ts(ns: int) -> Timestamp:
    if not timelib.MIN_UNIX <= ns // timelib.NS <= timelib.MAX_UNIX:
        raise CelEvalError("timestamp overflow")
    return Timestamp(ns)


def _sub(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int:
        if type(b) is not int:
            raise nso()
        return check_int(a - b)
    if ta is UInt:
        if type(b) is not UInt:
            raise nso()
        return check_uint(a - b)
    if ta is float:
        if type(b) is not float:
            raise nso()
        return a - b
    if ta is Duration:
        if isinstance(b, Duration):
            return Duration(check_int(a.ns - b.ns))
        raise nso()
    if ta is Timestamp:
        if isinstance(b, Duration):
            return _ts(a.ns - b.ns)
        if isinstance(b, Timestamp):
            return Duration(check_int(a.ns - b.ns))
        raise nso()
    raise CelEvalError("no such overload: _-_")


def _mul(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int:
        if type(b) is not int:
            raise nso()
        return check_int(a * b)
    if ta is UInt:
        if type(b) is not UInt:
            raise nso()
        return check_uint(a * b)
    if ta is float:
        if type(b) is not float:
            raise nso()
        return a * b
    raise CelEvalError("no such overload: _*_")


def _div(a: Any, b: Any) -> Any:
    ta = type(a)
    if ta is int or ta is UInt:
        if type(b) is not ta:
            raise nso()
        if b == 0:
            raise CelEvalError("division by zero")
        if ta is int and a == INT64_MIN and b == -1:
            raise CelEvalError("integer overflow")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if ta is int else UInt(q)
    if ta is float:
        if type(b) is not float:
            raise nso()
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
            raise nso()
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
        raise nso()
    raise CelEvalError("no such overload: -_")


def compare(a: Any, b: Any) -> int:
    """traits.Comparer.Compare: -1, 0 or 1, or CelEvalError."""
    ta = type(a)
    if ta in (int, UInt, float):
        if type(b) not in (int, UInt, float):
            raise nso()
        if a != a or b != b:
            raise CelEvalError("NaN values cannot be ordered")
        return (a > b) - (a < b)
    if ta in (str, bytes, bool):
        if type(b) is not ta:
            raise nso()
        if ta is str:
            x, y = a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
            return (x > y) - (x < y)
        return (a > b) - (a < b)
    if ta in (Timestamp, Duration):
        if type(b) is not ta:
            raise nso()
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


def index(obj: Any, key: Any) -> Any:
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

_INT_RE = re.compile(r"[+-]?[0-9]+")
_UINT_RE = re.compile(r"\+?[0-9]+")
# RE2, not re: Python's backtracking took quadratic time over a long run of digits (seconds
# for 8,000 digits that double() refuses).
_FLOAT_RE = re2.compile(
    r"(?i)[+-]?(?:(?:[0-9](?:_?[0-9])*)?\.?[0-9](?:_?[0-9])*(?:[eE][+-]?[0-9]+)?|[0-9]+\.|"
    r"inf|infinity|nan)",
    options=regex.re2_options(8 << 20),
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


def _strings(test: Callable[[str, str], bool]) -> Impl:
    """A string function cel-go binds without a type guard: its binding refuses anything else
    (a list-typed attribute's ``contains``) with "no such overload"."""

    def binding(s: Any, x: Any) -> bool:
        if type(s) is not str or type(x) is not str:
            raise nso()
        return test(s, x)

    return binding


def register() -> None:
    """Declare the standard library (the timestamp accessors are timestamps.py's)."""
    declare("_?_:_", o("conditional", [BOOL, A, A], A, non_strict=True))
    declare("_&&_", o("logical_and", [BOOL, BOOL], BOOL, non_strict=True))
    declare("_||_", o("logical_or", [BOOL, BOOL], BOOL, non_strict=True))

    def negate(v: Any) -> bool:
        if type(v) is not bool:
            raise nso()
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
        singleton=add,
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
            raise nso()
        return regex.matches(s, pattern)

    declare(
        "matches",
        o("matches", [STR, STR], BOOL),
        m("matches_string", [STR, STR], BOOL),
        singleton=matches,
    )
