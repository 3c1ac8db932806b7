"""Regular expressions: Kubernetes' ``library.Regex`` (``find``, ``findAll``:
``k8s.io/apiserver/pkg/cel/library/regex.go`` at v0.36.2) and the engine behind cel-go's
standard ``matches`` (stdlib.py declares it) and ``library.Format``'s ``validate``.

Go's ``regexp`` is RE2; so is this (the ``google-re2`` binding): linear time, the same syntax.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import re2

from dradash.dra.cel import budget
from dradash.dra.cel import types as t
from dradash.dra.cel.budget import NEW_STRING
from dradash.dra.cel.functions import INT, STR, declare, m
from dradash.dra.cel.values import CelEvalError


def re2_options(max_mem: int) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return options


# RE2 bounds what a compiled regex may use, its program and the DFA states it caches as it
# matches (it falls back to its slower linear-time NFA when they run out), by max_mem. A regex
# compiles when its program fits RE2's default of 8 MiB (Go's regexp takes larger programs:
# a few regexes it accepts are "pattern too large" here). dradash keeps the REGEX_CACHE most
# recently used regexes, each compiled to use at most 1 MiB; a regex whose program needs more is
# compiled for the call and dropped after it (Go compiles a regex that is not a literal at every
# call, and Kubernetes keeps the programs of only 10 selectors).
REGEX_CACHE = 64
_CACHED = re2_options(1 << 20)
_UNCACHED = re2_options(8 << 20)
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


def matches(s: str, pattern: str) -> bool:
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


def register() -> None:
    declare("find", m("string_find_string", [STR, STR], STR, _find))
    declare(
        "findAll",
        m("string_find_all_string", [STR, STR], t.list_of(STR), _find_all),
        m("string_find_all_string_int", [STR, STR, INT], t.list_of(STR), _find_all),
    )
