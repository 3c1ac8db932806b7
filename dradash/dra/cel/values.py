"""CEL values as plain Python: bool, int, UInt, float, str, bytes, list, dict, None, plus
Optional, TypeValue, Timestamp, Duration, Quantity, Semver, IP, CIDR, URL and NamedFormat; and
the errors evaluation raises, worded as cel-go words them."""

from __future__ import annotations

import itertools
from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel.errors import (  # noqa: F401 (re-exported)
    CelEvalError,
    CostLimitExceeded,
    Interrupted,
    MemoryBudgetExceeded,
)
from dradash.dra.cel.quantity import Quantity
from dradash.dra.cel.semver import Semver

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1


class UInt(int):
    """CEL's uint (literals like ``1u``)."""

    __slots__ = ()

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


class TypeValue:
    """A CEL type as a value: ``type(1) == int``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return self.name


class Opaque:
    """Values of Kubernetes' opaque and object types (IP, CIDR, URL, NamedFormat)."""

    __slots__ = ("kind", "value", "text")
    TYPE_NAMES = {
        "ip": "net.IP",
        "cidr": "net.CIDR",
        "url": "kubernetes.URL",
        "format": "kubernetes.NamedFormat",
    }

    def __init__(self, kind: str, value: Any, text: str) -> None:
        self.kind = kind
        self.value = value
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.kind == self.kind and other.value == self.value

    def __hash__(self) -> int:
        return hash((self.kind, self.text))

    def __repr__(self) -> str:
        return f"{self.kind}({self.text!r})"


def type_name(value: Any) -> str:
    """The runtime type name of a value (cel-go's ``Type().TypeName()``)."""
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
    if isinstance(value, TypeValue):
        return "type"
    if isinstance(value, Opaque):
        return Opaque.TYPE_NAMES[value.kind]
    from dradash.dra.cel.timelib import Duration, Timestamp

    if isinstance(value, Timestamp):
        return "google.protobuf.Timestamp"
    if isinstance(value, Duration):
        return "google.protobuf.Duration"
    return type(value).__name__  # pragma: no cover


def go_type_name(value: Any) -> str:
    """cel-go's Go type name (``%T``), as in "got 'types.Int', expected iterable type"."""
    if isinstance(value, Semver):
        return "cel.Semver"
    if isinstance(value, Quantity):
        return "cel.Quantity"
    if isinstance(value, Optional):
        return "*types.Optional"
    if isinstance(value, Opaque):
        return {"ip": "cel.IP", "cidr": "cel.CIDR", "url": "cel.URL", "format": "cel.Format"}[
            value.kind
        ]
    if isinstance(value, TypeValue):
        return "*types.Type"
    name = {
        "double": "Double",
        "null_type": "Null",
        "google.protobuf.Timestamp": "Timestamp",
        "google.protobuf.Duration": "Duration",
    }.get(type_name(value), type_name(value).capitalize())
    return f"types.{name}"


def no_overload(function: str, *args: Any) -> CelEvalError:
    """decls.MaybeNoSuchOverload: "no such overload: f(int, string)"."""
    types = ", ".join(type_name(a) for a in args)
    return CelEvalError(f"no such overload: {function}({types})")


NO_SUCH_OVERLOAD = "no such overload"


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
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and _lists_equal(a, b)
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        for k, v in budget.each(a.items()):
            found, other = map_get(b, k)
            if not found or not equals(v, other):
                return False
        return True
    return bool(a == b)


# Element types whose Python equality is CEL's, list against list, when there is no NaN (a NaN
# is equal to itself in a Python list) and no bool beside numbers (True == 1 in Python).
_PLAIN = frozenset((str, bytes, int, UInt, float, bool))
_NUMBERS = frozenset((int, UInt, float))


def _lists_equal(a: list[Any], b: list[Any]) -> bool:
    if python_equality(a, b, nested=True):
        return a == b
    return all(equals(x, y) for x, y in budget.each(zip(a, b, strict=True)))


def python_equality(*lists: list[Any], nested: bool = False) -> bool:
    """Whether Python's equality (and, unless ``nested``, hashing) of these lists' elements is
    CEL's: strings, bytes, bools or numbers (and, if ``nested``, lists of them, each distinct
    list looked at once), with no NaN (Python takes a NaN in a list as equal to itself) and no
    bool beside numbers (True == 1 in Python)."""
    kinds: set[type] = set()
    todo = {id(items): items for items in lists}
    seen: dict[int, list[Any]] = {}
    while todo:
        key, items = todo.popitem()
        seen[key] = items
        found = set(map(type, items))
        if nested and list in found:
            found.discard(list)
            for x in budget.each(items):
                if type(x) is list and id(x) not in seen:
                    todo[id(x)] = x
        kinds |= found
        if not kinds <= _PLAIN:
            return False
    return not (bool in kinds and kinds & _NUMBERS) and not (
        float in kinds
        and any(x != x for x in budget.each(itertools.chain.from_iterable(seen.values())))
    )


def map_key_ok(key: Any) -> bool:
    return isinstance(key, str | int) or key is None


def map_get(m: dict[Any, Any], key: Any) -> tuple[bool, Any]:
    """A map lookup as cel-go's baseMap.Find: keys of different types never match, except that
    numeric keys match across int, uint and double when the values are equal."""
    if isinstance(key, bool):
        for k, v in budget.each(m.items()):
            if k is key:
                return True, v
        return False, None
    if isinstance(key, float):
        if key != key or key in (float("inf"), float("-inf")) or key != int(key):
            return False, None
        key = int(key)
    if isinstance(key, int):
        if key not in m:  # no key equal to it at all
            return False, None
        if key not in (0, 1):  # the one key equal to it is an int or a uint, never a bool
            return True, m[key]
        for k, v in budget.each(m.items()):
            if isinstance(k, int) and not isinstance(k, bool) and k == key:
                return True, v
        return False, None
    if isinstance(key, str):
        if key in m:
            v = m[key]
            return True, v
        return False, None
    return False, None


def size_of(value: Any) -> int:
    """cel-go's actualSize: the size of strings (code points), bytes, lists and maps; 1 else."""
    if isinstance(value, str | bytes | list | dict):
        return len(value)
    if isinstance(value, Optional) and value.present:
        return size_of(value.value)
    return 1
