"""The registry of Kubernetes' DRA CEL environment: every function's cel-go declaration
(overload ids, argument and result types, receiver style) for the checker, and the bindings the
runtime dispatches to. The libraries declare themselves into it, each from its own module under
``dradash.dra.cel.library`` (as cel-go and the apiserver keep one file per library), in the
order below.

The environment is ``k8s.io/apiserver/pkg/cel/environment/base.go`` at v0.36.2 for stored
expressions plus DRA's ``device`` variable and ``cel.bind``: cel-go's standard library with
cross-type numeric comparisons and optional types, ``library.URLs``, ``Regex``, ``Lists``,
``Authz`` (+ selectors), ``Quantity``, ``IP``, ``CIDR``, ``Format``, ``SemverLib`` v1, and
cel-go's ``ext.Strings`` v2, ``ext.Sets``, ``ext.TwoVarComprehensions`` and ``ext.Lists`` v3.

At runtime a call goes to the overload the checker resolved when it resolved exactly one
(behind cel-go's runtime type guard), else to the first overload whose guard accepts the
arguments; functions cel-go binds once for all overloads (operators, ``size``) are one Python
function. Costs follow ``interpreter/runtimecost.go``, the apiserver's ``library/cost.go`` and
the trackers of ``ext/lists.go`` and ``ext/sets.go`` (library/cost.py); what a call adds to the
memory budget is library/memory.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dradash.dra.cel import types as t
from dradash.dra.cel.types import T
from dradash.dra.cel.values import NO_SUCH_OVERLOAD, CelEvalError, UInt, is_number, type_name

Impl = Callable[..., Any]


@dataclass
class Overload:
    id: str
    args: tuple[T, ...]  # the receiver first for member overloads
    result: T
    member: bool = False
    impl: Impl | None = None
    non_strict: bool = False

    def matches(self, values: tuple[Any, ...]) -> bool:
        """cel-go's runtime type guard (matchesRuntimeSignature)."""
        if len(values) != len(self.args):
            return False
        return all(runtime_assignable(a, v) for a, v in zip(self.args, values, strict=True))


@dataclass
class Function:
    name: str
    overloads: list[Overload] = field(default_factory=list)
    singleton: Impl | None = None  # one implementation for every overload (no type guards)
    guards: bool = True

    def overload(self, oid: str) -> Overload | None:
        return next((o for o in self.overloads if o.id == oid), None)


def runtime_assignable(ty: T, value: Any) -> bool:
    """Type.IsAssignableRuntimeType: the value's type name, and for lists and maps the type of
    the first element (or entry)."""
    if ty.kind in ("dyn", "any", "param"):
        return True
    if ty.kind == "null":
        return value is None
    name = type_name(value)
    if ty.kind == "type":
        return name == "type"
    if name != ty.name:
        return False
    if ty.kind == "list" and value:
        return runtime_assignable(ty.params[0], value[0])
    if ty.kind == "map" and value:
        k = next(iter(value))
        return runtime_assignable(ty.params[0], k) and runtime_assignable(ty.params[1], value[k])
    return True


ENV: dict[str, Function] = {}


def declare(
    name: str,
    *overloads: Overload,
    singleton: Impl | None = None,
    guards: bool = True,
) -> None:
    fn = ENV.setdefault(name, Function(name))
    fn.overloads.extend(overloads)
    if singleton is not None:
        fn.singleton = singleton
    fn.guards = fn.guards and guards


def o(oid: str, args: list[T], result: T, impl: Impl | None = None, **kw: Any) -> Overload:
    return Overload(oid, tuple(args), result, False, impl, **kw)


def m(oid: str, args: list[T], result: T, impl: Impl | None = None, **kw: Any) -> Overload:
    return Overload(oid, tuple(args), result, True, impl, **kw)


A, B, K, V = t.param("A"), t.param("B"), t.param("K"), t.param("V")
LIST_A, MAP_AB = t.list_of(A), t.map_of(A, B)
STR, INT, UINT, DBL, BOOL, BYTES = t.STRING, t.INT, t.UINT, t.DOUBLE, t.BOOL, t.BYTES
TS, DUR, QTY, VER = t.TIMESTAMP, t.DURATION, t.QUANTITY, t.SEMVER


def nso() -> CelEvalError:
    """The error of a binding that refuses its arguments: "no such overload"."""
    return CelEvalError(NO_SUCH_OVERLOAD)


# Identifiers that name types (the standard library's type variables, and the types the
# libraries register): `type(x) == int`.
TYPE_IDENTS: dict[str, T] = {
    "bool": BOOL, "bytes": BYTES, "double": DBL, "google.protobuf.Duration": DUR, "int": INT,
    "list": t.list_of(A), "map": MAP_AB, "null_type": t.NULL, "string": STR,
    "google.protobuf.Timestamp": TS, "type": t.TYPE, "uint": UINT,
    "optional_type": t.optional_of(A), "kubernetes.Quantity": QTY, "kubernetes.Semver": VER,
    "kubernetes.URL": t.URL, "net.IP": t.IP, "net.CIDR": t.CIDR,
    "kubernetes.NamedFormat": t.FORMAT,
}  # fmt: skip


# --- the libraries ------------------------------------------------------------------------------
#
# Imported below the registry they declare into (each imports declare, o and m from here).
from dradash.dra.cel.library import (  # noqa: E402
    authz,
    cidr,
    comprehensions,
    cost,
    dra,
    ip,
    lists,
    memory,
    named_formats,
    optional,
    quantity,
    regex,
    semver,
    sets,
    stdlib,
    strings,
    timestamps,
    urls,
)
from dradash.dra.cel.library import format as string_format  # noqa: E402

# Declaration order matters for runtime dispatch (the first overload whose guard accepts the
# arguments wins, and a function's overloads accumulate across libraries: quantity's and
# semver's compareTo, ip's and cidr's ip): it is the order in which the apiserver's base
# environment adds the libraries (base.go), the standard library first.
stdlib.register()
timestamps.register()  # the standard library's timestamp and duration accessors
urls.register()  # 1.0: library.URLs, Regex, Lists
regex.register()
lists.register_kubernetes()
authz.register()  # 1.27: Authz (with 1.31's AuthzSelectors)
quantity.register()  # 1.28: Quantity, optional types
optional.register()
strings.register()  # 1.29: ext.Strings v2 (with string.format), ext.Sets
sets.register()
ip.register()  # 1.30: IP, CIDR
cidr.register()
named_formats.register()  # 1.31: Format
comprehensions.register()  # 1.32: ext.TwoVarComprehensions
semver.register()  # 1.33: SemverLib v1
lists.register_ext()  # ext.Lists v3
dra.register()  # 1.36: DRA's includes


# What the checker, the planner and the cost estimator use, by their former names here.
_index = stdlib.index
format_key = stdlib.format_key
go_g = stdlib.go_g
to_duration = stdlib.to_duration
to_timestamp = stdlib.to_timestamp
to_string = stdlib.to_string
regex_error = regex.regex_error
FormatError = string_format.FormatError
parse_format = string_format.parse_format
_STRING_CLAUSE_TYPES = string_format.STRING_CLAUSE_TYPES
insert_into = comprehensions.insert_into
Cost = cost.Cost
call_cost = cost.call_cost
equality_cost = cost.equality_cost
result_size = cost.result_size
sized_by_result = cost.sized_by_result
traversal_cost = cost.traversal_cost
Growth = memory.Growth
growth = memory.growth
accumulator_growth = memory.accumulator_growth

__all__ = [
    "ENV",
    "TYPE_IDENTS",
    "Function",
    "Overload",
    "UInt",
    "call_cost",
    "declare",
    "go_g",
    "is_number",
    "m",
    "nso",
    "o",
]
