"""CEL values as plain Python: bool, int, UInt, float, str, bytes, list, dict, None, plus
Optional, Quantity and Semver; and the errors evaluation raises, worded as cel-go words them."""

from __future__ import annotations

from typing import Any

from dradash.dra.cel.quantity import Quantity
from dradash.dra.cel.semver import Semver

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1


class CelEvalError(Exception):
    """A CEL runtime error. Kubernetes aborts allocation when a selector raises one."""


class CostLimitExceeded(CelEvalError):
    def __init__(self) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")


class Interrupted(CelEvalError):
    def __init__(self) -> None:
        super().__init__("operation interrupted")


class UInt(int):
    """CEL's uint (literals like ``1u``)."""

    def __repr__(self) -> str:
        return f"{int(self)}u"


class Optional:
    """CEL's optional_type: ``optional.of(x)``, ``optional.none()``, results of ``a.?b``."""

    __slots__ = ("value",)
    _EMPTY = object()

    def __init__(self, value: Any = _EMPTY) -> None:
        self.value = value

    @property
    def present(self) -> bool:
        return self.value is not Optional._EMPTY

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Optional):
            return NotImplemented
        if self.present != other.present:
            return False
        return not self.present or equals(self.value, other.value)

    def __hash__(self) -> int:  # pragma: no cover - optionals are not map keys
        return hash(("optional", self.present))

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


NONE = Optional()


def type_name(value: Any) -> str:
    """The CEL type name of a value, as error messages print it."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, UInt):
        return "uint"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes):
        return "bytes"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    if value is None:
        return "null_type"
    if isinstance(value, Optional):
        return "optional_type"
    if isinstance(value, Quantity):
        return "kubernetes.Quantity"
    if isinstance(value, Semver):
        return "kubernetes.Semver"
    return type(value).__name__  # pragma: no cover


def go_type_name(value: Any) -> str:
    """cel-go's Go type name, as in "got 'types.Int', expected iterable type"."""
    if isinstance(value, Semver):
        return "cel.Semver"
    if isinstance(value, Quantity):
        return "cel.Quantity"
    name = {"double": "Double", "null_type": "Null", "optional_type": "Optional"}.get(
        type_name(value), type_name(value).capitalize()
    )
    return f"types.{name}"


def no_overload(function: str, *args: Any) -> CelEvalError:
    types = ", ".join(type_name(a) for a in args)
    return CelEvalError(f"found no matching overload for '{function}' applied to '({types})'")


def check_int(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise CelEvalError("integer overflow")
    return value


def check_uint(value: int) -> UInt:
    if not 0 <= value <= UINT64_MAX:
        raise CelEvalError("unsigned integer overflow")
    return UInt(value)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def equals(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: numbers compare by value across int, uint and double;
    values of different types are unequal (not an error)."""
    if is_number(a) and is_number(b):
        return a == b
    if type(a) is not type(b) and not (
        isinstance(a, Optional | Quantity | Semver) and type(a) is type(b)
    ):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(equals(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and equals(v, b[k]) for k, v in a.items())
    return bool(a == b)
