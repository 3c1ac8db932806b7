"""``string.format``, which cel-go's ``ext.Strings`` declares (strings.py) and
``ext/formatting.go`` implements, in the cel-go that ``k8s.io/apiserver`` v0.36.2 requires:
the formatting of version 1 that Kubernetes' strings v2 has (``%s %d %f %e %b %x %X %o``,
golang.org/x/text's en_US printer for the numbers). The checker validates a literal format
string with ``parse_format`` too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel.budget import NEW_STRING
from dradash.dra.cel.library.stdlib import to_double, to_string
from dradash.dra.cel.timelib import Duration, Timestamp
from dradash.dra.cel.values import INT64_MAX, CelEvalError, TypeValue, UInt, size_of, type_name

# strconv.Quote (Go's %q): the escapes of strings.quote, and control characters as \x escapes.
_GO_ESCAPES = {
    "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
    "\v": "\\v", "\\": "\\\\", '"': '\\"',
}  # fmt: skip
_GO_QUOTE_TABLE = str.maketrans({chr(c): f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | _GO_ESCAPES)


class FormatError(Exception):
    def __init__(self, message: str, arg: int = -1) -> None:
        super().__init__(message)
        self.arg = arg


STRING_CLAUSE_TYPES = (
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
        f"string clause can only be used on {STRING_CLAUSE_TYPES}, was given {type_name(arg)}"
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


def string_format(fmt: str, args: list[Any]) -> str:
    """``fmt.format(args)``."""

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
