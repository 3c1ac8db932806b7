"""cel-go's ``ext.Strings`` at version 2, as Kubernetes' base environment adds it
(``ext/strings.go`` in the cel-go that ``k8s.io/apiserver`` v0.36.2 requires): ``charAt``,
``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``replace``, ``split``, ``substring``, ``trim``,
``upperAscii``, ``format`` (format.py), ``strings.quote`` and ``join``.

Indexes count code points, as cel-go's do.
"""

from __future__ import annotations

from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel import types as t
from dradash.dra.cel.functions import INT, STR, declare, m, o
from dradash.dra.cel.library.format import string_format
from dradash.dra.cel.values import CelEvalError


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
    """The length of the string _replace would build (computed first: see compiler.py)."""
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


def register() -> None:
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
    declare("format", m("string_format", [STR, t.list_of(t.DYN)], STR, string_format))
    declare("strings.quote", o("strings_quote", [STR], STR, _quote))
    declare(
        "join",
        m("list_join", [t.list_of(STR)], STR, _join),
        m("list_join_string", [t.list_of(STR), STR], STR, _join),
    )
