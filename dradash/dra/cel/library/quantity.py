"""Kubernetes' ``library.Quantity`` (``k8s.io/apiserver/pkg/cel/library/quantity.go`` at
v0.36.2): ``quantity``, ``isQuantity`` and the methods of ``kubernetes.Quantity``. The value
type, exact as resource.Quantity, is ``dradash.dra.cel.quantity``'s.
"""

from __future__ import annotations

from typing import Any

from dradash.dra.cel.functions import BOOL, DBL, INT, QTY, STR, Impl, declare, m, o
from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.cel.values import CelEvalError


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


def register() -> None:
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
