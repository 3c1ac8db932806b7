"""CEL types as cel-go's checker sees them (``common/types/types.go``, ``checker/types.go``):
kinds, assignability with type parameters, the most general of two types, and the two ways
cel-go prints a type (``Type.String()`` for "must evaluate to", ``FormatCELType`` in checker
errors)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class T:
    kind: str  # dyn any bool int uint double string bytes null list map type param opaque struct
    # timestamp duration error
    name: str
    params: tuple[T, ...] = ()

    def __str__(self) -> str:  # Type.String()
        if self.kind == "param":
            return f"<{self.name}>"
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"


DYN = T("dyn", "dyn")
ANY = T("any", "google.protobuf.Any")
BOOL = T("bool", "bool")
INT = T("int", "int")
UINT = T("uint", "uint")
DOUBLE = T("double", "double")
STRING = T("string", "string")
BYTES = T("bytes", "bytes")
NULL = T("null", "null_type")
ERROR = T("error", "error")
TIMESTAMP = T("timestamp", "google.protobuf.Timestamp")
DURATION = T("duration", "google.protobuf.Duration")
TYPE = T("type", "type")


def list_of(elem: T) -> T:
    return T("list", "list", (elem,))


def map_of(key: T, value: T) -> T:
    return T("map", "map", (key, value))


def optional_of(elem: T) -> T:
    return T("opaque", "optional_type", (elem,))


def type_of(t: T) -> T:
    return T("type", "type", (t,))


def param(name: str) -> T:
    return T("param", name)


def struct(name: str) -> T:
    return T("struct", name)


def opaque(name: str) -> T:
    return T("opaque", name)


QUANTITY = struct("kubernetes.Quantity")
SEMVER = struct("kubernetes.Semver")
URL = struct("kubernetes.URL")
FORMAT = struct("kubernetes.NamedFormat")
IP = opaque("net.IP")
CIDR = opaque("net.CIDR")
DEVICE = struct("kubernetes.DRADevice")


def format_type(t: T) -> str:
    """checker.FormatCELType."""
    special = {"any": "any", "duration": "duration", "error": "!error!", "null": "null"}
    if t.kind in special:
        return special[t.kind]
    if t.kind == "timestamp":
        return "timestamp"
    if t.kind == "param":
        return t.name
    if not t.params:
        return t.name
    return f"{t.name}({', '.join(format_type(p) for p in t.params)})"


def is_dyn(t: T) -> bool:
    return t.kind in ("dyn", "any")


def is_dyn_or_error(t: T) -> bool:
    return t.kind in ("dyn", "any", "error")


def is_optional(t: T) -> bool:
    return t.kind == "opaque" and t.name == "optional_type"


def exact(a: T, b: T) -> bool:
    return a == b


def equivalent(a: T, b: T) -> bool:
    """IsEquivalentType: exact, except that type parameter names do not matter."""
    if a.kind != b.kind or len(a.params) != len(b.params):
        return False
    if a.kind != "param" and a.name != b.name:
        return False
    return all(equivalent(x, y) for x, y in zip(a.params, b.params, strict=True))


class Mapping:
    """Type parameter substitutions (checker/mapping.go)."""

    __slots__ = ("m",)

    def __init__(self, m: dict[str, T] | None = None) -> None:
        self.m: dict[str, T] = m or {}

    def copy(self) -> Mapping:
        return Mapping(dict(self.m))

    def find(self, t: T) -> T | None:
        return self.m.get(format_type(t)) if t.kind == "param" else self.m.get(format_type(t))

    def add(self, a: T, b: T) -> None:
        self.m[format_type(a)] = b


def _default_assignable(to: T, frm: T) -> bool:
    """Type.IsAssignableType (defaultIsAssignableType)."""
    if to == frm or to.kind in ("dyn", "any", "param"):
        return True
    if to.kind != frm.kind or to.name != frm.name or len(to.params) != len(frm.params):
        return False
    return all(_default_assignable(a, b) for a, b in zip(to.params, frm.params, strict=True))


def _is_equal_or_less_specific(t1: T, t2: T) -> bool:
    if is_dyn(t1) or t1.kind == "param":
        return True
    if is_dyn(t2) or t2.kind == "param":
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == "opaque":
        if t1.name != t2.name or len(t1.params) != len(t2.params):
            return False
        return all(
            _is_equal_or_less_specific(a, b) for a, b in zip(t1.params, t2.params, strict=True)
        )
    if t1.kind == "list":
        return _is_equal_or_less_specific(t1.params[0], t2.params[0])
    if t1.kind == "map":
        return _is_equal_or_less_specific(
            t1.params[0], t2.params[0]
        ) and _is_equal_or_less_specific(t1.params[1], t2.params[1])
    if t1.kind == "type":
        return True
    return t1 == t2


def most_general(t1: T, t2: T) -> T:
    return t1 if _is_equal_or_less_specific(t1, t2) else t2


def _not_referenced_in(m: Mapping, t: T, within: T) -> bool:
    if t == within:
        return False
    if within.kind == "param":
        sub = m.find(within)
        return True if sub is None else _not_referenced_in(m, t, sub)
    if within.kind in ("opaque", "list", "map", "type"):
        return all(_not_referenced_in(m, t, p) for p in within.params)
    return True


def _valid_substitution(m: Mapping, t1: T, t2: T) -> tuple[bool, bool]:
    if t1.kind == t2.kind and t1 == t2:
        return True, True
    sub = m.find(t2)
    if sub is not None:
        if t1.kind == sub.kind and t1 == sub:
            return True, True
        if _assignable(m, t1, sub):
            new = most_general(t1, sub)
            if _not_referenced_in(m, t2, new):
                m.add(t2, new)
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m.add(t2, t1)
        return True, False
    return False, False


def _nullable(t: T) -> bool:
    return t.kind in ("opaque", "struct", "any", "duration", "timestamp") or _default_assignable(
        t, NULL
    )


def _assignable(m: Mapping, t1: T, t2: T) -> bool:
    """internalIsAssignable: t1 is assignable to t2 (recording substitutions in m)."""
    if t2.kind == "param":
        valid, has_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if t1.kind == "param":
        valid, _ = _valid_substitution(m, t2, t1)
        return valid
    if is_dyn_or_error(t1) or is_dyn_or_error(t2):
        return True
    if t1.kind == "null":
        return _nullable(t2)
    if t2.kind == "null":
        return _nullable(t1)
    if t1.kind in (
        "bool", "bytes", "double", "int", "string", "uint", "any", "duration", "timestamp",
        "struct",
    ):  # fmt: skip
        return _default_assignable(t2, t1)
    if t1.kind == "type":
        return t2.kind == "type"
    if t1.kind in ("opaque", "list", "map"):
        return (
            t1.kind == t2.kind
            and t1.name == t2.name
            and len(t1.params) == len(t2.params)
            and all(_assignable(m, a, b) for a, b in zip(t1.params, t2.params, strict=True))
        )
    return False


def is_assignable(m: Mapping, t1: T, t2: T) -> Mapping | None:
    c = m.copy()
    return c if _assignable(c, t1, t2) else None


def is_assignable_list(m: Mapping, l1: list[T], l2: list[T]) -> Mapping | None:
    if len(l1) != len(l2):
        return None
    c = m.copy()
    for a, b in zip(l1, l2, strict=True):
        if not _assignable(c, a, b):
            return None
    return c


def substitute(m: Mapping, t: T, to_dyn: bool) -> T:
    sub = m.find(t)
    if sub is not None:
        return substitute(m, sub, to_dyn)
    if to_dyn and t.kind == "param":
        return DYN
    if t.kind in ("opaque", "list", "map") or (t.kind == "type" and t.params):
        return T(t.kind, t.name, tuple(substitute(m, p, to_dyn) for p in t.params))
    return t


def rename_params(t: T, renames: dict[str, T]) -> T:
    if t.kind == "param":
        return renames.get(t.name, t)
    if t.params:
        return T(t.kind, t.name, tuple(rename_params(p, renames) for p in t.params))
    return t


def params_of(t: T, out: set[str]) -> set[str]:
    if t.kind == "param":
        out.add(t.name)
    for p in t.params:
        params_of(p, out)
    return out
