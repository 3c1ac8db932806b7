"""The runtime cost of a call, as cel-go's ``CostTracker.costCall`` charges it: the ext
libraries' overload trackers (``ext/lists.go``, ``ext/sets.go``), then the apiserver's
``library.CostEstimator.CallCost`` (``k8s.io/apiserver/pkg/cel/library/cost.go`` at v0.36.2),
then cel-go's defaults (``interpreter/runtimecost.go``), in the cel-go that ``k8s.io/apiserver``
v0.36.2 requires.

cel-go computes a call's cost after the call from its arguments and its result; here
``call_cost`` resolves, when the program is planned, how a call site's cost follows from its
arguments, and the planner charges it *before* the call runs. Where cel-go's cost depends on
the result (lists.range, slice, reverse, join), ``result_size`` predicts the result's size from
the arguments, and a call that fails costs what cel-go charges for an error result (whose size
is 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel.quantity import Quantity
from dradash.dra.cel.semver import Semver
from dradash.dra.cel.values import CostLimitExceeded, Opaque, size_of

STRING_FACTOR = 0.1
REGEX_FACTOR = 0.25
_LIST_TRACKED = {"list_slice", "lists_range", "list_reverse"}
_SORT_TRACKED = {
    f"list_{c}_sort"
    for c in ("int", "uint", "double", "bool", "google.protobuf.Duration",
              "google.protobuf.Timestamp", "string", "bytes")
}  # fmt: skip
_FIXED_1 = {
    "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed",
    "reason", "error", "errored", "masked", "prefixLength", "family", "isUnspecified",
    "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
    "format.named", "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan",
    "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch", "getScheme",
    "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery",
}  # fmt: skip
_STRING_ORDER = {
    f"{op}_{kind}"
    for op in ("less", "greater", "less_equals", "greater_equals")
    for kind in ("string", "bytes")
}

# A call's cost: a constant, or a function of its arguments and its result's size.
Cost = int | Callable[[tuple[Any, ...], int], int]


def _ceil(x: float) -> int:
    return int(math.ceil(x))


def _strcost(v: Any, factor: float = STRING_FACTOR) -> int:
    return _ceil(size_of(v) * factor)


def call_cost(function: str, overload: str, arity: int) -> Cost:
    """How the cost of a call of ``function`` (resolved to ``overload``, or "" when it is
    dispatched at runtime) with ``arity`` arguments follows from its arguments."""
    if overload in _LIST_TRACKED:
        return lambda args, size: size + 1 + 10
    if overload in ("list_flatten", "list_flatten_int"):
        return _flatten_cost
    if overload == "list_distinct" or overload in _SORT_TRACKED:
        return lambda args, size: _self_compare(args[0]) if isinstance(args[0], list) else 12
    if overload.startswith("list_") and overload.endswith("_sortByAssociatedKeys"):
        return lambda args, size: _self_compare(args[1]) if isinstance(args[1], list) else 12
    if overload in ("list_sets_contains_list", "list_sets_intersects_list"):
        return lambda args, size: 1 + size_of(args[0]) * size_of(args[1])
    if overload == "list_sets_equivalent_list":
        return lambda args, size: 1 + size_of(args[0]) * size_of(args[1]) * 2
    k8s = _kubernetes_cost(function, overload, arity)
    if k8s is not None:
        return k8s
    if overload in ("starts_with_string", "ends_with_string", "string_to_bytes",
                    "bytes_to_string", "strings_quote", "string_format"):  # fmt: skip
        return lambda args, size: _strcost(args[0])
    if overload == "in_list":
        return lambda args, size: size_of(args[1])
    if overload in ("equals", "not_equals") or overload in _STRING_ORDER:
        return lambda args, size: equality_cost(args[0], args[1])
    if overload in ("add_string", "add_bytes"):
        return lambda args, size: _ceil((size_of(args[0]) + size_of(args[1])) * STRING_FACTOR)
    if overload in ("matches", "matches_string"):
        return _regex_cost
    if overload == "contains_string":
        return lambda args, size: _strcost(args[0]) * _strcost(args[1])
    return 1


def equality_cost(a: Any, b: Any) -> int:
    """``==`` and ``!=``: O(min(m, n)) (the apiserver's Kubernetes types: 1)."""
    if isinstance(a, Quantity | Semver | Opaque):
        return 1
    return _ceil(min(size_of(a), size_of(b)) * STRING_FACTOR)


def _flatten_cost(args: tuple[Any, ...], size: int) -> int:
    depth = args[1] if len(args) == 2 and type(args[1]) is int else 1
    return int(size_of(args[0]) * depth) + 1 + 10


def _regex_cost(args: tuple[Any, ...], size: int) -> int:
    return _ceil((1 + size_of(args[0])) * STRING_FACTOR) * _strcost(args[1], REGEX_FACTOR)


def _self_compare(items: list[Any]) -> int:
    n = len(items)
    factor = 2.0
    if n and type(items[0]) in (str, bytes):
        factor += STRING_FACTOR
    return int(n * n * factor) + 1 + 10


def _kubernetes_cost(function: str, overload: str, arity: int) -> Cost | None:
    if function == "check":
        return 350000
    if function in _FIXED_1:
        return 1
    if function in ("fieldSelector", "labelSelector") and arity >= 2:
        return lambda args, size: int(
            10 + size_of(args[1]) * STRING_FACTOR + size_of(args[1]) * 0.5 * 50
        )
    if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        return (lambda args, size: traversal_cost(args[0])) if arity else 0
    if function in ("url", "lowerAscii", "upperAscii", "substring", "trim") and arity:
        return lambda args, size: _strcost(args[0])
    if function in ("replace", "split") and arity:
        return lambda args, size: _strcost(args[0], 2 * STRING_FACTOR)
    if function == "join" and arity:
        return lambda args, size: _ceil(size * 2 * STRING_FACTOR)
    if function in ("find", "findAll") and arity >= 2:
        return _regex_cost
    if function in ("cidr", "isIP", "isCIDR") and arity:
        return lambda args, size: _strcost(args[0])
    if function == "ip" and arity:
        return 1 if overload == "cidr_ip" else lambda args, size: _strcost(args[0])
    if function == "ip.isCanonical" and arity:
        return lambda args, size: _strcost(args[0], 2 * STRING_FACTOR)
    if function == "containsIP" and arity >= 2:
        string = overload == "cidr_contains_ip_string"
        return lambda args, size: (
            _ceil(2 * size_of(args[0]) * STRING_FACTOR) + (_strcost(args[1]) if string else 0)
        )
    if function == "containsCIDR" and arity >= 2:
        string = overload == "cidr_contains_cidr_string"
        return lambda args, size: (
            _ceil(2 * size_of(args[0]) * STRING_FACTOR)
            + _strcost(args[0])
            + 1
            + (_strcost(args[1]) if string else 0)
        )
    if function in ("quantity", "isQuantity", "semver", "isSemver") and arity:
        return lambda args, size: _strcost(args[0])
    if function == "validate" and arity >= 2:
        return lambda args, size: (
            _ceil((1 + size_of(args[1])) * STRING_FACTOR) * _ceil(60 * REGEX_FACTOR)
        )
    return None


def traversal_cost(value: Any) -> int:
    """library/cost.go traversalCost: a string or bytes costs a tenth of its length in bytes,
    a list or map the sum over its elements (keys and values), anything else 1. It stops as soon
    as the sum is more than the evaluation may still spend: a list that holds the same list
    many times over (cheap to build) would otherwise take a lifetime to walk."""
    room = budget.remaining_cost()
    total = 0
    stack = [value]
    for v in budget.each(_drain(stack)):
        if isinstance(v, str):
            total += int((len(v) if v.isascii() else len(v.encode("utf-8", "surrogatepass")))
                         * STRING_FACTOR)  # fmt: skip
        elif isinstance(v, bytes):
            total += int(len(v) * STRING_FACTOR)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                stack.append(k)
                stack.append(x)
        else:
            total += 1
        if total > room:
            raise CostLimitExceeded()
    return total


def _drain(stack: list[Any]) -> Any:
    while stack:
        yield stack.pop()


def result_size(function: str, overload: str, args: tuple[Any, ...]) -> int:
    """cel-go's actualSize of the result of a call whose cost depends on it, predicted from the
    arguments: 1 when the call will fail (its result is an error)."""
    if overload == "lists_range":
        return max(args[0], 0) if type(args[0]) is int else 1
    if overload == "list_reverse":
        return size_of(args[0]) if isinstance(args[0], list) else 1
    if overload == "list_slice":
        items, start, end = args
        ok = isinstance(items, list) and type(start) is int and type(end) is int
        return end - start if ok and 0 <= start <= end <= len(items) else 1
    if function == "join":
        items = args[0]
        sep = args[1] if len(args) == 2 else ""
        if not isinstance(items, list) or type(sep) is not str:
            return 1
        total = 0
        for item in budget.each(items):
            if type(item) is not str:
                return 1
            total += len(item)
        return total + len(sep) * max(len(items) - 1, 0)
    return 1


def sized_by_result(function: str, overload: str) -> bool:
    """Whether a call's cost depends on its result (see result_size)."""
    return overload in _LIST_TRACKED or function == "join"
