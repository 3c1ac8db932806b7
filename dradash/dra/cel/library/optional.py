"""cel-go's optional types (``cel.OptionalTypes``: ``optional.of``, ``optional.none``,
``value``, ``hasValue``, ``or``, ``orValue``, ``?.`` and ``[?_]``, and version 2's ``first``,
``last``, ``optional.unwrap`` and ``unwrapOpt``: ``cel/library.go``'s optionalLib in the
cel-go that ``k8s.io/apiserver`` v0.36.2 requires). ``or`` and ``orValue`` short-circuit: the
planner evaluates them (compiler.py).
"""

from __future__ import annotations

from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, INT, STR, K, V, declare, m, o
from dradash.dra.cel.timelib import Duration, Timestamp
from dradash.dra.cel.values import NONE, CelEvalError, Optional, UInt


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


def register() -> None:
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
