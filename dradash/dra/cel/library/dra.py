"""DRA's own CEL function: ``includes`` (KEP-5491, 1.36), as
``k8s.io/dynamic-resource-allocation/cel/compile.go`` at v0.36.2 declares and implements it.
"""

from __future__ import annotations

from typing import Any

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, declare, m
from dradash.dra.cel.values import CelEvalError, equals

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


def register() -> None:
    # 1.36 (KEP-5491): declared in the stored environment whatever DRAListTypeAttributes says;
    # the checker hides it where the environment does not have it (cel.dialect).
    declare("includes", m("dra_includes_dyn_dyn", [t.DYN, t.DYN], BOOL, _includes))
