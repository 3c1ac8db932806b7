"""cel-go's static cost estimate (``checker/cost.go`` at v0.27.0): the worst-case and best-case
cost of a checked expression, before it runs, as ``env.EstimateCost`` computes it, plus the
overload estimators cel-go's extension libraries register (``ext/lists.go`` v3, ``ext/sets.go``).

It walks the checked AST once. Sizes (of strings, bytes, lists and maps) flow from literals,
from the estimator's answers for input data (``CostEstimator.estimate_size``, reached by a
field path such as ``device.attributes.@values.@values``) and through calls, comprehensions and
``cel.bind``; calls cost what the estimator, the overload estimators or cel-go's own table say.

Faithful to the letter, quirks included:

* uint64 arithmetic saturates where cel-go saturates (``Add``, ``Multiply``, the cost factors,
  through float64 as in Go) and wraps where Go wraps (``bytes(s)``'s and ``strings.quote``'s
  result sizes);
* field paths are Go slices: ``append`` writes into a shared backing array while it has room,
  so two paths appended to one parent path can see each other's last element (``GoPath``). The
  estimate of e.g. ``m.all(k, v, …)`` over ``device.attributes[d]`` depends on it.

The estimator for Kubernetes' libraries and DRA's sizes is ``cel.kube_estimate``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from dradash.dra.cel import types as t
from dradash.dra.cel.checker import Checked
from dradash.dra.cel.syntax import (
    Call,
    Comprehension,
    Expr,
    Ident,
    ListExpr,
    Literal,
    MapExpr,
    Select,
    StructExpr,
)
from dradash.dra.cel.types import T
from dradash.dra.cel.values import UInt

U64 = (1 << 64) - 1
_MAX_F = float(U64)  # math.MaxUint64 as a float64 (2^64)
_TWO64 = math.ldexp(1.0, 64)

# common/cost.go
SELECT_AND_IDENT_COST = 1
CONST_COST = 0
LIST_CREATE_BASE_COST = 10
MAP_CREATE_BASE_COST = 30
STRUCT_CREATE_BASE_COST = 40
STRING_TRAVERSAL_COST_FACTOR = 0.1
REGEX_STRING_LENGTH_COST_FACTOR = 0.25

ACCUMULATOR = "__result__"  # parser.AccumulatorName
HIDDEN_ACCUMULATOR = "@result"  # parser.HiddenAccumulatorName

Range = tuple[int, int]  # a SizeEstimate or a CostEstimate: (min, max), uint64s
UNKNOWN: Range = (0, U64)
ZERO: Range = (0, 0)
ONE: Range = (1, 1)


# --- uint64 arithmetic (cost.go) ----------------------------------------------------------


def add_u64(x: int, y: int) -> int:
    """addUint64NoOverflow."""
    s = x + y
    return U64 if s > U64 else s


def mul_u64(x: int, y: int) -> int:
    """multiplyUint64NoOverflow."""
    p = x * y
    return U64 if p > U64 else p


def by_factor_u64(x: int, factor: float) -> int:
    """multiplyByCostFactor: through float64, rounded up, saturating."""
    xf = float(x)
    if xf > 0 and factor > 0 and xf > _MAX_F / factor:
        return U64
    ceil = math.ceil(xf * factor)
    if ceil >= _TWO64:
        return U64
    return int(ceil)


def add(a: Range, b: Range) -> Range:
    return add_u64(a[0], b[0]), add_u64(a[1], b[1])


def multiply(a: Range, b: Range) -> Range:
    return mul_u64(a[0], b[0]), mul_u64(a[1], b[1])


def by_factor(a: Range, factor: float) -> Range:
    return by_factor_u64(a[0], factor), by_factor_u64(a[1], factor)


def union(a: Range, b: Range) -> Range:
    return min(a[0], b[0]), max(a[1], b[1])


def fixed(n: int) -> Range:
    return n, n


@dataclass(frozen=True)
class CallEstimate:
    cost: Range
    result_size: Range | None = None


@dataclass(frozen=True)
class EntrySize:
    """entrySizeEstimate: the container kind and its keys' (or indices') and values' sizes."""

    container: str  # "list" or "map"
    key: Range
    val: Range

    def union(self, other: EntrySize | None) -> EntrySize | None:
        if other is None:
            return None
        return EntrySize(self.container, union(self.key, other.key), union(self.val, other.val))


def _entry_union(a: EntrySize | None, b: EntrySize | None) -> EntrySize | None:
    return None if a is None else a.union(b)


# --- field paths as Go slices -------------------------------------------------------------


class GoPath:
    """A ``[]string`` field path: a view of the first ``n`` elements of a backing array whose
    length is the slice's capacity. ``append`` writes in place while there is room, like Go."""

    __slots__ = ("arr", "n")

    def __init__(self, arr: list[str], n: int) -> None:
        self.arr = arr
        self.n = n

    def items(self) -> list[str]:
        return self.arr[: self.n]


def go_append(path: GoPath | None, name: str) -> GoPath:
    if path is None:
        return GoPath([name], 1)
    arr, n = path.arr, path.n
    if n < len(arr):
        arr[n] = name
        return GoPath(arr, n + 1)
    # runtime.growslice for 16-byte elements: double while small, then grow by ~1.25x
    # (the size classes below 4 KiB are the doubling itself; paths are far shorter).
    cap = len(arr)
    new_cap = cap * 2 if cap < 256 else cap + (cap + 3 * 256) // 4
    new_cap = max(new_cap, n + 1)
    grown = arr[:n] + [name] + [""] * (new_cap - n - 1)
    return GoPath(grown, n + 1)


class AstNode:
    """checker.AstNode: what an estimator sees of an argument or a target."""

    __slots__ = ("_path", "type", "expr", "computed_size")

    def __init__(
        self, path: GoPath | list[str] | None, ty: T, expr: Expr | None, size: Range | None
    ) -> None:
        self._path = path
        self.type = ty
        self.expr = expr
        self.computed_size = size

    @property
    def path(self) -> list[str] | None:
        p = self._path
        if p is None:
            return None
        return p.items() if isinstance(p, GoPath) else p


class CostEstimator(Protocol):
    def estimate_size(self, node: AstNode) -> Range | None: ...

    def estimate_call_cost(
        self, function: str, overload: str, target: AstNode | None, args: list[AstNode]
    ) -> CallEstimate | None: ...


FunctionEstimator = Callable[[CostEstimator, AstNode | None, list[AstNode]], CallEstimate | None]


@dataclass
class _LocalVar:
    path: GoPath | None
    size: Range | None
    entry: EntrySize | None


def _literal_size(e: Expr) -> Range | None:
    """computeExprSize."""
    if isinstance(e, Literal):
        v = e.value
        if isinstance(v, str):
            return fixed(len(v))
        if isinstance(v, bytes):
            return fixed(len(v))
        return fixed(1)  # null, bool, int, uint, double
    if isinstance(e, ListExpr):
        return fixed(len(e.elements))
    if isinstance(e, MapExpr):
        return fixed(len(e.entries))
    return None


def is_scalar(ty: T) -> bool:
    if ty.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    if t.is_optional(ty):
        return is_scalar(ty.params[0])
    return False


def _type_size(ty: T) -> Range | None:
    return fixed(1) if is_scalar(ty) else None


def is_accumulator(name: str) -> bool:
    return name in (ACCUMULATOR, HIDDEN_ACCUMULATOR)


class Coster:
    """checker.coster: one estimate of one checked expression."""

    def __init__(
        self,
        checked: Checked,
        estimator: CostEstimator,
        overload_estimators: dict[str, FunctionEstimator] | None = None,
        presence_test_cost: Range = ONE,
    ) -> None:
        self.checked = checked
        self.estimator = estimator
        self.overload_estimators = overload_estimators or {}
        self.presence_test_cost = presence_test_cost
        self.paths: dict[int, GoPath | None] = {}
        self.local_vars: dict[str, list[_LocalVar]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, EntrySize] = {}

    # --- helpers ---------------------------------------------------------------------------

    def type_of(self, e: Expr) -> T:
        return self.checked.types.get(e.id, t.DYN)

    def ident_name(self, e: Expr) -> str | None:
        """The name of an identifier, or of a select the checker resolved to a qualified
        identifier (cel-go rewrites those into identifiers)."""
        if isinstance(e, Ident):
            return self.checked.idents.get(e.id, e.name)
        if isinstance(e, Select) and not e.test_only and e.id in self.checked.idents:
            return self.checked.idents[e.id]
        return None

    def peek(self, name: str) -> _LocalVar | None:
        stack = self.local_vars.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, var: _LocalVar) -> None:
        self.local_vars.setdefault(name, []).append(var)

    def pop(self, name: str) -> None:
        stack = self.local_vars.get(name)
        if stack:
            stack.pop()

    def get_path(self, e: Expr) -> GoPath | None:
        name = self.ident_name(e)
        if name is not None:
            v = self.peek(name)
            if v is not None:
                return v.path
        return self.paths.get(e.id)

    def new_node(self, e: Expr) -> AstNode:
        path = self.get_path(e)
        if path is not None and path.n > 0 and is_accumulator(path.arr[0]):
            path = None  # only paths to root variables, not to accumulators
        return AstNode(path, self.type_of(e), e, self.compute_size(e))

    def set_size(self, e: Expr, size: Range | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def size_or_unknown(self, node: Expr | AstNode) -> Range:
        size = node.computed_size if isinstance(node, AstNode) else self.compute_size(node)
        return UNKNOWN if size is None else size

    def copy_size_estimates(self, dst: Expr, src: Expr) -> None:
        self.set_size(dst, self.compute_size(src))
        self.set_entry_size(dst, self.compute_entry_size(src))

    def compute_size(self, e: Expr) -> Range | None:
        size = self.sizes.get(e.id)
        if size is not None:
            return size
        size = _literal_size(e)
        if size is not None:
            return size
        # the estimator first: it may override what CEL would ascribe to the type
        size = self.estimator.estimate_size(AstNode(self.get_path(e), self.type_of(e), e, None))
        if size is not None:
            self.sizes[e.id] = size
            return size
        size = _type_size(self.type_of(e))
        if size is not None:
            return size
        if isinstance(e, Ident):
            v = self.peek(self.ident_name(e) or e.name)
            if v is not None and v.size is not None:
                return v.size
        return None

    def set_entry_size(self, e: Expr, size: EntrySize | None) -> None:
        if size is not None:
            self.entries[e.id] = size

    def compute_entry_size(self, e: Expr) -> EntrySize | None:
        size = self.entries.get(e.id)
        if size is not None:
            return size
        if isinstance(e, Ident):
            v = self.peek(self.ident_name(e) or e.name)
            if v is not None and v.entry is not None:
                return v.entry
        return None

    def _container(self, entry: EntrySize | None, range_expr: Expr) -> str:
        return entry.container if entry is not None else self.type_of(range_expr).kind

    def push_iter_key(self, name: str, range_expr: Expr) -> None:
        entry = self.compute_entry_size(range_expr)
        size = entry.key if entry is not None else None
        path = self.get_path(range_expr)
        sub = "@indices" if self._container(entry, range_expr) == "list" else "@keys"
        self.push(name, _LocalVar(go_append(path, sub), size, None))

    def push_iter_value(self, name: str, range_expr: Expr) -> None:
        entry = self.compute_entry_size(range_expr)
        size = entry.val if entry is not None else None
        path = self.get_path(range_expr)
        sub = "@items" if self._container(entry, range_expr) == "list" else "@values"
        self.push(name, _LocalVar(go_append(path, sub), size, None))

    def push_iter_single(self, name: str, range_expr: Expr) -> None:
        entry = self.compute_entry_size(range_expr)
        size = entry.key if entry is not None else None
        sub = "@keys"
        if self._container(entry, range_expr) == "list":
            size = entry.val if entry is not None else None
            sub = "@items"
        path = self.get_path(range_expr)
        self.push(name, _LocalVar(go_append(path, sub), size, None))

    def push_local_var(self, name: str, e: Expr) -> None:
        path = self.get_path(e)
        entry = self.compute_entry_size(e)
        self.push(name, _LocalVar(path, self.compute_size(e), entry))

    # --- the walk --------------------------------------------------------------------------

    def cost(self, e: Expr | None) -> Range:
        if e is None:
            return ZERO
        if isinstance(e, Literal):
            return fixed(CONST_COST)
        if isinstance(e, Ident):
            return self.cost_ident(e)
        if isinstance(e, Select):
            if self.ident_name(e) is not None:
                return self.cost_ident(e)
            return self.cost_select(e)
        if isinstance(e, Call):
            return self.cost_call(e)
        if isinstance(e, ListExpr):
            return self.cost_create_list(e)
        if isinstance(e, MapExpr):
            return self.cost_create_map(e)
        if isinstance(e, StructExpr):
            total = ZERO
            for _, value, _ in e.fields:
                total = add(total, self.cost(value))
            return add(total, fixed(STRUCT_CREATE_BASE_COST))
        if isinstance(e, Comprehension):
            if self.is_bind(e):
                return self.cost_bind(e)
            return self.cost_comprehension(e)
        return ZERO

    def cost_ident(self, e: Expr) -> Range:
        name = self.ident_name(e) or ""
        v = self.peek(name)
        self.paths[e.id] = v.path if v is not None else GoPath([name], 1)
        return fixed(SELECT_AND_IDENT_COST)

    def cost_select(self, e: Select) -> Range:
        if e.test_only:
            # like evalTestOnly: the qualifier adds nothing, the presence test its own cost
            return add(self.presence_test_cost, self.cost(e.operand))
        total = self.cost(e.operand)
        if self.type_of(e.operand).kind in ("map", "struct", "param"):
            total = add(total, fixed(SELECT_AND_IDENT_COST))
        self.paths[e.id] = go_append(self.get_path(e.operand), e.field)
        return total

    def cost_call(self, e: Call) -> Range:
        function = self.checked.functions.get(e.id, e.function)
        if e.function == "dyn" and e.args:  # dyn() only disables type checking
            arg_cost = self.cost(e.args[0])
            self.copy_size_estimates(e, e.args[0])
            return add(ONE, arg_cost)
        arg_costs: list[Range] = []
        arg_nodes: list[AstNode] = []
        for arg in e.args:
            arg_costs.append(self.cost(arg))
            arg_nodes.append(self.new_node(arg))
        overload_ids = self.checked.overloads.get(e.id) or []
        if not overload_ids:
            return ZERO
        total = ZERO
        target: AstNode | None = None
        if e.target is not None:
            total = add(total, self.cost(e.target))
            target = self.new_node(e.target)
        fn_cost: Range = (U64, 0)
        result_size: Range | None = None
        for overload in overload_ids:
            est = self.function_cost(e, function, overload, target, arg_nodes, arg_costs)
            fn_cost = union(fn_cost, est.cost)
            if est.result_size is not None:
                result_size = (
                    est.result_size if result_size is None else union(result_size, est.result_size)
                )
            if overload in ("index_list", "index_map") and e.args:
                entry = self.compute_entry_size(e.args[0])
                result_size = entry.val if entry is not None else None
                sub = "@items" if overload == "index_list" else "@values"
                self.paths[e.id] = go_append(self.get_path(e.args[0]), sub)
            if result_size is None:
                result_size = self.compute_size(e)
        self.set_size(e, result_size)
        return add(total, fn_cost)

    def cost_create_list(self, e: ListExpr) -> Range:
        total = ZERO
        item: Range = (U64, 0) if e.elements else ZERO
        for element in e.elements:
            total = add(total, self.cost(element))
            item = union(item, self.size_or_unknown(element))
        self.set_entry_size(e, EntrySize("list", fixed(1), item))
        return add(total, fixed(LIST_CREATE_BASE_COST))

    def cost_create_map(self, e: MapExpr) -> Range:
        total = ZERO
        key: Range = (U64, 0) if e.entries else ZERO
        val: Range = (U64, 0) if e.entries else ZERO
        for k, v, _ in e.entries:
            total = add(total, self.cost(k))
            total = add(total, self.cost(v))
            key = union(key, self.size_or_unknown(k))
            val = union(val, self.size_or_unknown(v))
        self.set_entry_size(e, EntrySize("map", key, val))
        return add(total, fixed(MAP_CREATE_BASE_COST))

    def cost_comprehension(self, e: Comprehension) -> Range:
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push_local_var(e.accu_var, e.accu_init)
        if e.iter_var2:
            self.push_iter_key(e.iter_var, e.iter_range)
            self.push_iter_value(e.iter_var2, e.iter_range)
        else:
            self.push_iter_single(e.iter_var, e.iter_range)
        loop_cost = self.cost(e.loop_condition)
        step_cost = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        range_count = self.size_or_unknown(e.iter_range)
        total = add(total, multiply(range_count, add(step_cost, loop_cost)))
        init = e.accu_init
        if isinstance(init, Literal):
            self.set_size(e, self.compute_size(init))
        elif isinstance(init, ListExpr | MapExpr):
            self.set_size(e, range_count)
            self.set_entry_size(e, self.compute_entry_size(e.loop_step))
        return total

    def is_bind(self, e: Comprehension) -> bool:
        r, cond = e.iter_range, e.loop_condition
        return (
            isinstance(r, ListExpr)
            and not r.elements
            and isinstance(cond, Literal)
            and cond.value is False
            and e.accu_var != ACCUMULATOR
        )

    def cost_bind(self, e: Comprehension) -> Range:
        # binds are lazy: the cost of the empty iteration range stays
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push_local_var(e.accu_var, e.accu_init)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.copy_size_estimates(e, e.result)
        return total

    def function_cost(
        self,
        e: Call,
        function: str,
        overload: str,
        target: AstNode | None,
        args: list[AstNode],
        arg_costs: list[Range],
    ) -> CallEstimate:
        def arg_sum() -> Range:
            total = ZERO
            for c in arg_costs:
                total = add(total, c)
            return total

        custom = self.overload_estimators.get(overload)
        if custom is not None:
            est = custom(self.estimator, target, args)
            if est is not None:
                return CallEstimate(add(est.cost, arg_sum()), est.result_size)
        est = self.estimator.estimate_call_cost(function, overload, target, args)
        if est is not None:
            return CallEstimate(add(est.cost, arg_sum()), est.result_size)
        size = self.size_or_unknown
        if overload == "string_format":
            if target is not None:  # no result size: it cannot be bounded
                return CallEstimate(add(by_factor(size(target), 0.1), arg_sum()))
        elif overload == "string_to_bytes":
            if len(args) == 1:
                sz = size(args[0])
                # each character may become 4 bytes (Go's uint64 product wraps)
                return CallEstimate(add(by_factor(sz, 0.1), arg_sum()), (sz[0], (sz[1] * 4) & U64))
        elif overload == "bytes_to_string":
            if len(args) == 1:
                sz = size(args[0])
                return CallEstimate(add(by_factor(sz, 0.1), arg_sum()), (sz[0] // 4, sz[1]))
        elif overload == "strings_quote":
            if len(args) == 1:
                sz = size(args[0])
                quoted = ((sz[0] + 2) & U64, (sz[1] * 2 + 2) & U64)
                return CallEstimate(add(by_factor(sz, 0.1), arg_sum()), quoted)
        elif overload in ("starts_with_string", "ends_with_string"):
            if len(args) == 1:
                return CallEstimate(add(by_factor(size(args[0]), 0.1), arg_sum()))
        elif overload == "in_list":
            # a list of constants would be O(1), but every containment check counts as O(n)
            if len(args) == 2:
                return CallEstimate(add(by_factor(size(args[1]), 1), arg_sum()))
        elif overload == "matches_string":
            if target is not None and len(args) == 1:
                str_cost = by_factor(add(size(target), ONE), STRING_TRAVERSAL_COST_FACTOR)
                regex_cost = by_factor(size(args[0]), REGEX_STRING_LENGTH_COST_FACTOR)
                return CallEstimate(add(multiply(str_cost, regex_cost), arg_sum()))
        elif overload == "contains_string":
            if target is not None and len(args) == 1:
                str_cost = by_factor(size(target), STRING_TRAVERSAL_COST_FACTOR)
                sub_cost = by_factor(size(args[0]), STRING_TRAVERSAL_COST_FACTOR)
                return CallEstimate(add(multiply(str_cost, sub_cost), arg_sum()))
        elif overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            # the minimum is the left side's alone: short-circuit
            return CallEstimate((lhs[0], add(lhs, rhs)[1]))
        elif overload == "conditional":
            result = union(size(args[1]), size(args[2]))
            entry = _entry_union(
                self.compute_entry_size(args[1].expr),  # type: ignore[arg-type]
                self.compute_entry_size(args[2].expr),  # type: ignore[arg-type]
            )
            self.set_entry_size(e, entry)
            cost = add(arg_costs[0], union(arg_costs[1], arg_costs[2]))
            return CallEstimate(cost, result)
        elif overload in ("add_string", "add_bytes", "add_list"):
            if len(args) == 2:
                result = add(size(args[0]), size(args[1]))
                entry = _entry_union(
                    self.compute_entry_size(args[0].expr),  # type: ignore[arg-type]
                    self.compute_entry_size(args[1].expr),  # type: ignore[arg-type]
                )
                self.set_entry_size(e, entry)
                if overload == "add_list":  # O(1), tracked for its size
                    return CallEstimate(add(ONE, arg_sum()), result)
                return CallEstimate(add(by_factor(result, 0.1), arg_sum()), result)
        elif overload in _SIZED_COMPARISONS:
            lhs_size, rhs_size = size(args[0]), size(args[1])
            smallest_max = min(lhs_size[1], rhs_size[1])
            low = 1 if smallest_max > 0 else 0
            # equality of two scalars costs 1
            return CallEstimate(add(by_factor((low, smallest_max), 0.1), arg_sum()))
        # O(1) functions
        return CallEstimate(add(ONE, arg_sum()))


_SIZED_COMPARISONS = frozenset(
    {
        "less_string", "greater_string", "less_equals_string", "greater_equals_string",
        "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes",
        "equals", "not_equals",
    }
)  # fmt: skip


def estimate(
    checked: Checked,
    estimator: CostEstimator,
    overload_estimators: dict[str, FunctionEstimator] | None = None,
    presence_test_cost: Range = ONE,
) -> Range:
    """checker.Cost: the (min, max) cost estimate of a checked expression."""
    return Coster(checked, estimator, overload_estimators, presence_test_cost).cost(checked.root)


# --- ext/lists.go (v3) and ext/sets.go overload estimators ---------------------------------


def estimate_size(estimator: CostEstimator, node: AstNode) -> Range:
    """ext's estimateSize: the node's computed size, else the estimator's, else unknown."""
    if node.computed_size is not None:
        return node.computed_size
    size = estimator.estimate_size(node)
    return UNKNOWN if size is None else size


def _node_as_int(node: AstNode, default: int) -> int:
    """nodeAsIntValue: a literal int (negative ones as 0), else the default."""
    e = node.expr
    if not isinstance(e, Literal):
        return default
    v = e.value
    if isinstance(v, bool | UInt | float) or not isinstance(v, int):
        return default
    return max(v, 0)


def _allocating_list_call(factor: float, list_size: Range) -> CallEstimate:
    cost = add(add(by_factor(list_size, factor), ONE), fixed(LIST_CREATE_BASE_COST))
    return CallEstimate(cost, list_size)


def _list_slice(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
    if target is None or len(args) != 2:
        return None
    size = estimate_size(est, target)
    start = _node_as_int(args[0], 0)
    end = _node_as_int(args[1], size[1])
    return _allocating_list_call(1, fixed((end - start) & U64))  # Go's uint64 difference


def _lists_range(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
    if target is not None or len(args) != 1:
        return None
    return _allocating_list_call(1, fixed(_node_as_int(args[0], U64)))


def _list_reverse(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
    if target is None or args:
        return None
    return _allocating_list_call(1, estimate_size(est, target))


def _list_flatten(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
    if target is None or len(args) > 1:
        return None
    depth = _node_as_int(args[0], U64) if args else 1
    return _allocating_list_call(float(depth), estimate_size(est, target))


def _list_distinct(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
    if target is None or args:
        return None
    size = estimate_size(est, target)
    return _allocating_list_call(2.0, multiply(size, size))


def _list_sort_cost(est: CostEstimator, node: AstNode, elem: T) -> CallEstimate:
    size = estimate_size(est, node)
    factor = 2.0
    if elem in (t.STRING, t.BYTES):
        factor += STRING_TRAVERSAL_COST_FACTOR
    return _allocating_list_call(factor, multiply(size, size))


def _list_sort(elem: T) -> FunctionEstimator:
    def estimator(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
        if target is None or args:
            return None
        return _list_sort_cost(est, target, elem)

    return estimator


def _list_sort_by(elem: T) -> FunctionEstimator:
    def estimator(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
        if target is None or len(args) != 1:
            return None
        return _list_sort_cost(est, args[0], elem)  # the size of the list of sort keys

    return estimator


def _sets(factor: float) -> FunctionEstimator:
    def estimator(est: CostEstimator, target: AstNode | None, args: list[AstNode]) -> Any:
        if len(args) != 2:
            return None
        product = multiply(estimate_size(est, args[0]), estimate_size(est, args[1]))
        return CallEstimate(add(by_factor(product, factor), ONE))

    return estimator


_COMPARABLE = [t.INT, t.UINT, t.DOUBLE, t.BOOL, t.DURATION, t.TIMESTAMP, t.STRING, t.BYTES]

EXT_OVERLOAD_ESTIMATORS: dict[str, FunctionEstimator] = {
    # ext.Lists(ext.ListsVersion(3))
    "list_slice": _list_slice,
    "list_flatten": _list_flatten,
    "list_flatten_int": _list_flatten,
    "lists_range": _lists_range,
    "list_reverse": _list_reverse,
    "list_distinct": _list_distinct,
    # ext.Sets(): equivalence is two containment checks
    "list_sets_contains_list": _sets(1),
    "list_sets_intersects_list": _sets(1),
    "list_sets_equivalent_list": _sets(2),
}
for _elem in _COMPARABLE:  # overload ids carry the type's name: list_google.protobuf.Duration_sort
    EXT_OVERLOAD_ESTIMATORS[f"list_{_elem.name}_sort"] = _list_sort(_elem)
    EXT_OVERLOAD_ESTIMATORS[f"list_{_elem.name}_sortByAssociatedKeys"] = _list_sort_by(_elem)
