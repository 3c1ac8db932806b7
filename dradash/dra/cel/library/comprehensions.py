"""cel-go's ``ext.TwoVarComprehensions``: ``cel.@mapInsert``, which ``transformMap`` and
``transformMapEntry`` expand to (``ext/comprehensions.go`` in the cel-go that
``k8s.io/apiserver`` v0.36.2 requires). The macros themselves are syntax.py's.
"""

from __future__ import annotations

from typing import Any

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import K, V, declare, o
from dradash.dra.cel.library.stdlib import format_key
from dradash.dra.cel.values import CelEvalError, map_get


def _map_insert(m: dict[Any, Any], *rest: Any) -> dict[Any, Any]:
    return insert_into(dict(m), *rest)


def insert_into(out: dict[Any, Any], *rest: Any) -> dict[Any, Any]:
    """cel.@mapInsert into ``out`` itself (a comprehension's own accumulator: see compiler.py)."""
    pairs = list(rest[0].items()) if len(rest) == 1 else [(rest[0], rest[1])]
    for k, _ in pairs:
        if map_get(out, k)[0]:
            raise CelEvalError(f"insert failed: key {format_key(k)} already exists")
    for k, v in pairs:
        out[k] = v
    return out


def register() -> None:
    kv = t.map_of(K, V)
    declare(
        "cel.@mapInsert",
        o("@mapInsert_map_key_value", [kv, K, V], kv, _map_insert),
        o("@mapInsert_map_map", [kv, kv], kv, _map_insert),
    )
