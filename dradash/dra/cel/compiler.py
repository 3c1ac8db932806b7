"""Plan a checked CEL expression into Python closures, the way cel-go's planner and interpreter
evaluate it (``interpreter/planner.go``, ``interpretable.go``, ``attributes.go``), with
Kubernetes' program options: ``OptOptimize`` (type conversions of literals and all-literal list
and map literals are computed when the program is prepared: an error there is "program
instantiation failed"; literal regexes are compiled then), runtime cost tracking with the
costs of ``interpreter/runtimecost.go`` and the apiserver's ``library/cost.go``, and the DRA
cost limit.

Not upstream, and never a different answer for an expression that stays within the cost
limit (budget.py): every call is charged its cel-go cost *before* it runs, so a call the budget
cannot pay for never runs; the values an evaluation creates are counted against a memory budget
before they are built; and each evaluation has a time safety net (CPU time that grows with the
cost spent, budget.py), checked in every loop. A comprehension appends to its own result list (or
map) in place, as cel-go's mutable accumulators do, instead of copying it at every step.

The planner also learns which parts of ``device`` the expression reads (so that devices alike
in those parts are evaluated once) and the top-level ``&&`` clauses (for diagnostics).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dradash.dra.cel import budget
from dradash.dra.cel import functions as fn
from dradash.dra.cel import types as t
from dradash.dra.cel.budget import COST_LIMIT, LIST_SLOT, MAP_ENTRY, Context
from dradash.dra.cel.checker import Checked
from dradash.dra.cel.library import comprehensions, memory, regex, stdlib
from dradash.dra.cel.library import cost as costs
from dradash.dra.cel.quantity import Quantity
from dradash.dra.cel.semver import Semver
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
from dradash.dra.cel.values import (
    NONE,
    CelEvalError,
    CostLimitExceeded,
    Interrupted,
    MemoryBudgetExceeded,
    Opaque,
    Optional,
    UInt,
    equals,
    go_type_name,
    map_get,
    type_name,
)

__all__ = ["COST_LIMIT", "CelCompileError", "Context", "Program", "plan", "run"]

KEYS = "<keys>"  # a path step meaning "the set of keys of this map"
_FATAL = (CostLimitExceeded, Interrupted, MemoryBudgetExceeded)
_UNSET = object()


class CelCompileError(ValueError):
    """An expression Kubernetes would refuse to compile."""


class DomainMap(dict):  # type: ignore[type-arg]
    """device.attributes and device.capacity: an unknown domain is an empty map, not an error."""

    def __missing__(self, key: Any) -> dict[str, Any]:
        return {}


Eval = Callable[[Context, dict[str, Any]], Any]


@dataclass
class Node:
    fn: Eval
    const: Any = _UNSET  # the value, when known at plan time
    attr: bool = False  # an attribute (identifier or field/index chain): cel-go's base cost 1
    path: tuple[str, ...] | None = None  # set when the node is a part of `device`
    lazy_vars: frozenset[str] = frozenset()

    @property
    def is_const(self) -> bool:
        return self.const is not _UNSET


@dataclass
class Program:
    expression: str
    fn: Eval
    reads: frozenset[tuple[str, ...]]  # the device paths the expression reads
    clauses: list[tuple[str, Eval]] = field(default_factory=list)  # top-level && operands
    list_values: bool = False  # whether a device's list-typed attributes are CEL lists

    def evaluate(self, device: dict[str, Any], ctx: Context | None = None) -> Any:
        return run(self.fn, device, ctx or Context())

    def matches(self, device: dict[str, Any], ctx: Context | None = None) -> bool:
        """Whether the device matches; CelEvalError when the selector fails on it."""
        result = self.evaluate(device, ctx)
        if not isinstance(result, bool):
            raise CelEvalError(
                f"CEL result of type {type_name(result)} could not be converted to bool: "
                + _native_bool_error(result)
            )
        return result

    def failed_clauses(self, device: dict[str, Any], ctx: Context | None = None) -> list[str]:
        """The top-level ``&&`` operands that are not true for this device. Diagnostics only:
        each clause runs under its own cost budget, all of them under one time safety net
        (``ctx``'s), and nothing they raise is the verdict."""
        failed = []
        ctx = ctx or Context()
        started = ctx.started
        for source, clause in self.clauses:
            budget_ = Context(net=ctx.net, per_unit=ctx.per_unit, started=started)
            try:
                ok = run(clause, device, budget_) is True
            except CelEvalError:
                ok = False
            started = budget_.started  # set at the first clause's first look at the clock
            if not ok:
                failed.append(source)
        return failed


def run(fn: Eval, device: dict[str, Any], ctx: Context) -> Any:
    """Evaluate with ``ctx`` as the thread's current budget (the functions' loops see it)."""
    previous = budget.activate(ctx)
    try:
        return fn(ctx, {"device": device})
    finally:
        budget.restore(previous)


def _native_bool_error(value: Any) -> str:
    name = type_name(value)
    if name in ("int", "uint", "double", "null_type"):
        return f"unsupported type conversion from '{name}' to bool"
    if name == "string":
        return "unsupported native conversion from string to 'bool'"
    return f"type conversion error from '{name}' to 'bool'"


# --- the planner ------------------------------------------------------------------------------


class _Planner:
    def __init__(self, checked: Checked, optimize: bool = True) -> None:
        self.c = checked
        self.optimize = optimize  # cel.OptOptimize (Kubernetes always sets it)
        self.reads: set[tuple[str, ...]] = set()
        self.scopes: list[dict[str, tuple[str, ...] | None]] = []
        self.mutable: set[int] = set()  # the scopes of accumulators that grow in place

    def use(self, node: Node) -> Node:
        if node.path is not None:
            self.reads.add(node.path)
        return node

    def own_accumulator(self, e: Expr) -> bool:
        """Whether ``e`` is the accumulator of the comprehension being planned, one that starts
        as an empty list or map (cel-go's mutable accumulator: see comprehension)."""
        if not isinstance(e, Ident):
            return False
        name = self.c.idents.get(e.id, e.name)
        scope = next((s for s in reversed(self.scopes) if name in s), None)
        return scope is not None and id(scope) in self.mutable

    def lookup(self, name: str) -> tuple[bool, tuple[str, ...] | None]:
        for scope in reversed(self.scopes):
            if name in scope:
                return True, scope[name]
        return False, None

    def plan(self, e: Expr) -> Node:
        if isinstance(e, Literal):
            return _const(e.value)
        if isinstance(e, Ident):
            return self.ident(e)
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, ListExpr):
            return self.list_(e)
        if isinstance(e, MapExpr):
            return self.map_(e)
        if isinstance(e, Comprehension):
            return self.comprehension(e)
        if isinstance(e, StructExpr):  # pragma: no cover - the checker refuses these
            raise CelCompileError(f"unknown type: {e.type_name}")
        raise CelCompileError(f"unsupported expression: {e}")  # pragma: no cover

    def value(self, e: Expr) -> Node:
        return self.use(self.plan(e))

    # identifiers and selection ---------------------------------------------------------------

    def ident(self, e: Expr) -> Node:
        name = self.c.idents.get(e.id, getattr(e, "name", ""))
        bound, alias = self.lookup(name)
        if bound:

            def var(ctx: Context, v: dict[str, Any]) -> Any:
                ctx.spend()
                x = v[name]
                if x.__class__ is _Lazy:
                    x = x.force(ctx, v, name)
                elif x.__class__ is _Error:
                    raise x.error
                return x

            return Node(var, attr=True, path=alias)
        if name == "device":

            def device(ctx: Context, v: dict[str, Any]) -> Any:
                ctx.spend()
                return v["device"]

            return Node(device, attr=True, path=())
        if name in fn.TYPE_IDENTS:
            return _const(_type_value(fn.TYPE_IDENTS[name]))
        raise CelCompileError(f"undeclared reference to '{name}'")  # pragma: no cover

    def select(self, e: Select) -> Node:
        if e.id in self.c.idents:
            return self.ident(e)
        operand = self.plan(e.operand)
        path = self.extend(operand, e.field)
        name = e.field
        inner = operand.fn
        base = 0 if operand.attr else 1  # a relative attribute costs 1 itself
        if e.test_only:
            if path is not None:
                self.reads.add(path)
            extra = 0 if operand.attr else 1

            def has(ctx: Context, v: dict[str, Any]) -> bool:
                obj = inner(ctx, v)
                ctx.spend(extra)
                return _has(obj, name)

            return Node(has)

        def select(ctx: Context, v: dict[str, Any]) -> Any:
            obj = inner(ctx, v)
            ctx.spend(base + 1)
            return _select(obj, name)

        return Node(select, attr=True, path=path)

    def extend(self, inner: Node, name: str) -> tuple[str, ...] | None:
        """The device path of ``inner.name`` (or ``inner["name"]``)."""
        if inner.path is None:
            return None
        path = inner.path
        if path == ():
            return (name,)
        if path[0] in ("attributes", "capacity") and len(path) < 3:
            return (*path, name)
        self.use(inner)
        return None

    # calls ---------------------------------------------------------------------------------

    def call(self, e: Call) -> Node:
        name = self.c.functions.get(e.id, e.function)
        ids = self.c.overloads.get(e.id, [])
        if name in ("_&&_", "_||_"):
            return self.logical(e, name == "_||_")
        if name == "_?_:_":
            return self.conditional(e)
        if name in ("_[_]", "_[?_]", "_?._"):
            return self.index(e, name)
        if name in ("or", "orValue") and e.target is not None:
            return self.optional_or(e, name)
        if name == "@not_strictly_false":
            return self.not_strictly_false(e)
        args = ([e.target] if e.target is not None else []) + list(e.args)
        if name in ("size", "@in") and args:
            nodes = [self.plan(a) for a in args]
            container = nodes[0] if name == "size" else nodes[1]
            if container.path is not None:
                self.reads.add(
                    (*container.path, KEYS) if len(container.path) < 3 else container.path
                )
            for n in nodes:
                if n is not container:
                    self.use(n)
        else:
            nodes = [self.value(a) for a in args]
        if name in ("_==_", "_!=_"):
            return self.equality(nodes, name == "_!=_")
        func = fn.ENV[name]
        overload = func.overload(ids[0]) if len(ids) == 1 else None
        impl = _dispatcher(func, overload)
        oid = ids[0] if len(ids) == 1 else ""
        if name in ("_+_", "cel.@mapInsert") and self.own_accumulator(args[0]):
            in_place = _in_place(impl, list if name == "_+_" else dict)
            return self.strict_call(name, oid, in_place, nodes, memory.accumulator_growth)
        node = self.strict_call(name, oid, impl, nodes)
        # OptOptimize: type conversions of literals are computed now.
        if not self.optimize:
            return node
        if name in _CONVERSIONS and len(nodes) == 1 and nodes[0].is_const:
            try:
                return _const(impl(nodes[0].const))
            except CelEvalError as exc:
                raise CelCompileError(f"program instantiation failed: {exc}") from None
        # OptOptimize: `x in [literals]` becomes a set lookup (which has no call cost).
        if name == "@in" and nodes[1].is_const and isinstance(nodes[1].const, list):
            return self.set_membership(nodes, node)
        # Literal regexes are compiled now.
        if name in ("matches", "find", "findAll") and len(nodes) >= 2 and nodes[1].is_const:
            pattern = nodes[1].const
            if isinstance(pattern, str):
                error = regex.regex_error(pattern)
                if error is not None:
                    raise CelCompileError(f"program instantiation failed: {error}")
        return node

    def strict_call(
        self,
        name: str,
        oid: str,
        impl: Callable[..., Any],
        nodes: list[Node],
        grow: memory.Growth | None = None,
    ) -> Node:
        """A call of a strict function: its arguments first (the first error among them is the
        call's), then its cost and the memory its result takes are charged, then it runs."""
        fns = [n.fn for n in nodes]
        cost = costs.call_cost(name, oid, len(nodes))
        sized = costs.sized_by_result(name, oid)
        grow = grow or memory.growth(name)
        what = "a concatenation" if name == "_+_" else f"the result of {name}()"

        if not nodes:

            def call0(ctx: Context, v: dict[str, Any]) -> Any:
                ctx.spend(cost if type(cost) is int else cost((), 1))
                return impl()

            return Node(call0)

        def call(ctx: Context, v: dict[str, Any]) -> Any:
            args = []
            error = None
            for f in fns:
                try:
                    args.append(f(ctx, v))
                except _FATAL:
                    raise
                except CelEvalError as exc:
                    error = error or exc
                    args.append(None)
            if error is not None:
                ctx.spend(1)
                raise error
            args_t = tuple(args)
            if type(cost) is int:
                charged = cost
                size = 1
            else:
                size = costs.result_size(name, oid, args_t) if sized else 1
                charged = cost(args_t, size)
            ctx.spend(charged)
            if grow is not None and (more := grow(args_t, size)):
                ctx.allocate(more, what)
            try:
                return impl(*args_t)
            except CelEvalError:
                if sized and type(cost) is not int:
                    ctx.cost += cost(args_t, 1) - charged  # cel-go: an error result's size is 1
                raise
            except (ValueError, TypeError, ArithmeticError, AttributeError, IndexError) as exc:
                raise CelEvalError(f"{name}: {exc}") from None

        return Node(call)

    def equality(self, nodes: list[Node], negate: bool) -> Node:
        a_fn, b_fn = nodes[0].fn, nodes[1].fn

        def eq(ctx: Context, v: dict[str, Any]) -> bool:
            error = None
            try:
                a = a_fn(ctx, v)
            except _FATAL:
                raise
            except CelEvalError as exc:
                error, a = exc, None
            try:
                b = b_fn(ctx, v)
            except _FATAL:
                raise
            except CelEvalError as exc:
                error, b = error or exc, None
            if error is not None:
                ctx.spend(1)
                raise error
            ctx.spend(costs.equality_cost(a, b))
            if not negate and _kubernetes_type_against_another(a, b):
                raise CelEvalError("no such overload")
            return equals(a, b) is not negate

        return Node(eq)

    def set_membership(self, nodes: list[Node], call: Node) -> Node:
        items = nodes[1].const
        if not items:
            value_fn = nodes[0].fn

            def never(ctx: Context, v: dict[str, Any]) -> bool:
                value_fn(ctx, v)
                return False

            return Node(never)
        if not all(type(x) in (int, UInt, float, str, bool) for x in items):
            return call
        value_fn = nodes[0].fn

        def member(ctx: Context, v: dict[str, Any]) -> bool:
            x = value_fn(ctx, v)
            return any(equals(x, y) and (type(x) is bool) == (type(y) is bool) for y in items)

        return Node(member)

    def logical(self, e: Call, absorbing: bool) -> Node:
        left, right = (self.value(a).fn for a in e.args)
        name = "_||_" if absorbing else "_&&_"

        def logical(ctx: Context, v: dict[str, Any]) -> Any:
            try:
                a = left(ctx, v)
            except _FATAL:
                raise
            except CelEvalError as exc:
                a = exc
            if a is absorbing:
                return absorbing
            try:
                b = right(ctx, v)
            except _FATAL:
                raise
            except CelEvalError as exc:
                b = exc
            if b is absorbing:
                return absorbing
            for x in (a, b):
                if isinstance(x, CelEvalError):
                    raise x
                if not isinstance(x, bool):
                    raise CelEvalError("no such overload")
            return not absorbing

        del name
        return Node(logical)

    def conditional(self, e: Call) -> Node:
        cond, yes, no = (self.value(a) for a in e.args)
        c_fn, y_fn, n_fn = cond.fn, yes.fn, no.fn
        y_refund = 1 if yes.attr else 0  # cel-go does not observe a branch attribute's base
        n_refund = 1 if no.attr else 0

        def ternary(ctx: Context, v: dict[str, Any]) -> Any:
            c = c_fn(ctx, v)
            if c is True:
                ctx.cost -= y_refund
                return y_fn(ctx, v)
            if c is False:
                ctx.cost -= n_refund
                return n_fn(ctx, v)
            raise CelEvalError("no such overload")

        return Node(ternary)

    def index(self, e: Call, name: str) -> Node:
        obj_tree, key_tree = e.args
        obj = self.plan(obj_tree)
        key = self.plan(key_tree)
        optional = name != "_[_]"
        if key.is_const and isinstance(key.const, str) and obj.path is not None and obj.path != ():
            path = self.extend(obj, key.const)
        else:
            self.use(obj)
            self.use(key)
            path = None
        obj_fn, key_fn = obj.fn, key.fn
        base = 0 if obj.attr else 1
        key_refund = 1 if key.attr else 0
        if key.is_const:
            key_value = key.const

            if optional:

                def index_opt_const(ctx: Context, v: dict[str, Any]) -> Any:
                    o = obj_fn(ctx, v)
                    ctx.spend(base + 1)
                    return _optional_index(o, key_value)

                return Node(index_opt_const, attr=True, path=path)

            def index_const(ctx: Context, v: dict[str, Any]) -> Any:
                o = obj_fn(ctx, v)
                ctx.spend(base + 1)
                return _index(o, key_value)

            return Node(index_const, attr=True, path=path)

        def index(ctx: Context, v: dict[str, Any]) -> Any:
            o = obj_fn(ctx, v)
            k = key_fn(ctx, v)
            ctx.spend(base + 1 - key_refund)
            return _optional_index(o, k) if optional else _index(o, k)

        return Node(index, attr=True, path=path)

    def not_strictly_false(self, e: Call) -> Node:
        arg = self.value(e.args[0]).fn

        def nsf(ctx: Context, v: dict[str, Any]) -> bool:
            try:
                x = arg(ctx, v)
            except _FATAL:
                raise
            except CelEvalError:
                x = True
            ctx.spend(1)
            return x if isinstance(x, bool) else True

        return Node(nsf)

    def optional_or(self, e: Call, name: str) -> Node:
        assert e.target is not None
        target, other = self.value(e.target).fn, self.value(e.args[0]).fn

        def opt_or(ctx: Context, v: dict[str, Any]) -> Any:
            o = target(ctx, v)
            if not isinstance(o, Optional):
                raise CelEvalError(f"no such overload: {name}")
            if o.present:
                return o if name == "or" else o.value
            alt = other(ctx, v)
            if name == "or" and not isinstance(alt, Optional):
                raise CelEvalError(f"no such overload: {name}")
            return alt

        return Node(opt_or)

    # aggregates --------------------------------------------------------------------------

    def list_(self, e: ListExpr) -> Node:
        nodes = [self.value(x) for x in e.elements]
        optional = set(e.optional_indices)
        if self.optimize and all(n.is_const for n in nodes):
            return _const(_build_list([n.const for n in nodes], optional))
        fns = [n.fn for n in nodes]

        def build(ctx: Context, v: dict[str, Any]) -> list[Any]:
            out = [f(ctx, v) for f in fns]
            ctx.spend(10)
            ctx.allocate(LIST_SLOT * len(out), "a list")
            return _build_list(out, optional) if optional else out

        return Node(build)

    def map_(self, e: MapExpr) -> Node:
        keys = [self.value(k) for k, _, _ in e.entries]
        vals = [self.value(x) for _, x, _ in e.entries]
        optional = [o for _, _, o in e.entries]
        if self.optimize and all(n.is_const for n in keys + vals):
            return _const(_build_map([k.const for k in keys], [x.const for x in vals], optional))
        pairs = [(k.fn, x.fn) for k, x in zip(keys, vals, strict=True)]

        def build(ctx: Context, v: dict[str, Any]) -> dict[Any, Any]:
            ks, xs = [], []
            for kf, xf in pairs:
                ks.append(kf(ctx, v))
                xs.append(xf(ctx, v))
            ctx.spend(30)
            ctx.allocate(MAP_ENTRY * len(ks), "a map")
            return _build_map(ks, xs, optional)

        return Node(build)

    # comprehensions ------------------------------------------------------------------------

    def comprehension(self, e: Comprehension) -> Node:
        if e.macro == "bind":
            return self.bind(e)
        target = self.plan(e.iter_range)
        if target.path is not None:
            self.reads.add((*target.path, KEYS) if len(target.path) < 3 else target.path)
        accu_init = self.value(e.accu_init)
        self.scopes.append({e.accu_var: None})
        # cel-go's folder: an accumulator that starts as an empty list or map is a mutable one,
        # which `accumulator + [x]` and cel.@mapInsert change in place (map, filter,
        # transformList, transformMap, transformMapEntry).
        mutable = (isinstance(e.accu_init, ListExpr) and not e.accu_init.elements) or (
            isinstance(e.accu_init, MapExpr) and not e.accu_init.entries
        )
        if mutable:
            self.mutable.add(id(self.scopes[-1]))
        names = [e.iter_var] + ([e.iter_var2] if e.iter_var2 else [])
        self.scopes.append(dict.fromkeys(names))
        try:
            cond = self.value(e.loop_condition)
            step = self.value(e.loop_step)
        finally:
            self.scopes.pop()
        try:
            result = self.value(e.result)
        finally:
            self.mutable.discard(id(self.scopes.pop()))
        range_fn, init_fn = target.fn, accu_init.fn
        cond_fn, step_fn, result_fn = cond.fn, step.fn, result.fn
        accu, var1, var2 = e.accu_var, e.iter_var, e.iter_var2
        cond_const = cond.const if cond.is_const else _UNSET

        def fold(ctx: Context, v: dict[str, Any]) -> Any:
            coll = range_fn(ctx, v)
            if var2:
                if not isinstance(coll, list | dict):
                    raise CelEvalError(
                        f"unsupported comprehension range type: {go_type_name(coll)}"
                    )
            elif not isinstance(coll, list | dict):
                raise CelEvalError(f"got '{go_type_name(coll)}', expected iterable type")
            saved = [v.get(n, _UNSET) for n in (accu, var1, var2)]
            v[accu] = _Lazy(init_fn, mutable)
            try:
                if isinstance(coll, dict):
                    items = coll.items() if var2 else ((k,) for k in coll)
                else:
                    items = enumerate(coll) if var2 else ((x,) for x in coll)
                for item in items:
                    ctx.tick()
                    v[var1] = item[0]
                    if var2:
                        v[var2] = item[1]
                    if cond_const is _UNSET:
                        try:
                            c = cond_fn(ctx, v)
                        except _FATAL:
                            raise
                        except CelEvalError:
                            c = None
                        if c is False:
                            break
                    elif cond_const is False:
                        break
                    try:
                        acc = step_fn(ctx, v)
                    except _FATAL:
                        raise
                    except CelEvalError as exc:
                        acc = _Error(exc)
                    v[accu] = acc
                _restore(v, var1, saved[1])
                if var2:
                    _restore(v, var2, saved[2])
                return result_fn(ctx, v)
            finally:
                for n, s in zip((accu, var1, var2), saved, strict=True):
                    if n:
                        _restore(v, n, s)

        return Node(fold)

    def bind(self, e: Comprehension) -> Node:
        init = self.plan(e.accu_init)
        self.scopes.append({e.accu_var: init.path})
        try:
            body = self.value(e.result)
        finally:
            self.scopes.pop()
        init_fn, body_fn, var = init.fn, body.fn, e.accu_var

        def bind(ctx: Context, v: dict[str, Any]) -> Any:
            saved = v.get(var, _UNSET)
            v[var] = _Lazy(init_fn)
            try:
                return body_fn(ctx, v)
            finally:
                _restore(v, var, saved)

        return Node(bind)


class _Lazy:
    """A comprehension accumulator (or cel.bind variable), evaluated on first use as cel-go's
    folder does; an error is kept and raised on every use. A mutable accumulator starts as a
    list or map of its own (the empty literal it is planned from is a constant)."""

    __slots__ = ("init", "mutable")

    def __init__(self, init: Eval, mutable: bool = False) -> None:
        self.init = init
        self.mutable = mutable

    def force(self, ctx: Context, v: dict[str, Any], name: str) -> Any:
        try:
            value = self.init(ctx, v)
        except _FATAL:
            raise
        except CelEvalError as exc:
            value = _Error(exc)
        if self.mutable and (value == [] or value == {}):
            value = type(value)()
        v[name] = value
        if value.__class__ is _Error:
            raise value.error
        return value


class _Error:
    """An error held as a value (a comprehension step that failed: && and || may absorb it)."""

    __slots__ = ("error",)

    def __init__(self, error: CelEvalError) -> None:
        self.error = error


_CONVERSIONS = {"bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp",
                "type", "uint"}  # fmt: skip


def _kubernetes_type_against_another(a: Any, b: Any) -> bool:
    """``==`` is ``a.Equal(b)``: the apiserver's types (Quantity, Semver, IP, CIDR, URL,
    Format) answer "no such overload" for a value of another type, but null (``!=`` is never an
    error: it is ``Equal(a, b) != true``)."""
    if isinstance(a, Opaque):
        return b is not None and not (isinstance(b, Opaque) and b.kind == a.kind)
    return isinstance(a, Quantity | Semver) and b is not None and type(b) is not type(a)


def _in_place(impl: Callable[..., Any], kind: type) -> Callable[..., Any]:
    """``impl`` on a comprehension's own accumulator: ``_+_`` extends a list in place,
    ``cel.@mapInsert`` inserts into a map in place; other operands go to ``impl``."""

    def extend(acc: Any, other: Any) -> Any:
        if type(acc) is list and type(other) is list:
            acc.extend(other)
            return acc
        return impl(acc, other)

    def insert(acc: Any, *rest: Any) -> Any:
        if type(acc) is dict and (len(rest) == 2 or type(rest[0]) is dict):
            return comprehensions.insert_into(acc, *rest)
        return impl(acc, *rest)

    return extend if kind is list else insert


def _dispatcher(func: fn.Function, overload: fn.Overload | None) -> Callable[..., Any]:
    if func.singleton is not None:
        return func.singleton
    if overload is not None and overload.impl is not None:
        impl, guarded = overload.impl, func.guards
        name = func.name

        def one(*args: Any) -> Any:
            if guarded and not overload.matches(args):
                raise _no_such_overload(name, args)
            return impl(*args)

        return one
    overloads = [o for o in func.overloads if o.impl is not None]
    name = func.name

    def dispatch(*args: Any) -> Any:
        for o in overloads:
            if o.matches(args) if func.guards else len(o.args) == len(args):
                return o.impl(*args)  # type: ignore[misc]
        raise _no_such_overload(name, args)

    return dispatch


def _no_such_overload(name: str, args: tuple[Any, ...]) -> CelEvalError:
    return CelEvalError(f"no such overload: {name}({', '.join(type_name(a) for a in args)})")


def _const(value: Any) -> Node:
    return Node(lambda ctx, v: value, const=value)


def _type_value(ty: t.T) -> Any:
    from dradash.dra.cel.values import TypeValue

    return TypeValue(ty.name)


def _restore(v: dict[str, Any], name: str, saved: Any) -> None:
    if saved is _UNSET:
        v.pop(name, None)
    else:
        v[name] = saved


def _build_list(items: list[Any], optional: set[int]) -> list[Any]:
    if not optional:
        return items
    out = []
    for i, x in enumerate(items):
        if i in optional:
            if not isinstance(x, Optional):
                raise CelEvalError(
                    f"cannot initialize optional list element from non-optional value {x}"
                )
            if x.present:
                out.append(x.value)
        else:
            out.append(x)
    return out


def _build_map(keys: list[Any], values: list[Any], optional: list[bool]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, x, opt in zip(keys, values, optional, strict=True):
        if not (isinstance(k, str | int) or k is None) or isinstance(k, float):
            raise CelEvalError(f"unsupported key type: {type_name(k)}")
        if opt:
            if not isinstance(x, Optional):
                raise CelEvalError(
                    f"cannot initialize optional entry '{k}' from non-optional value {x}"
                )
            if not x.present:
                out.pop(k, None)
                continue
            x = x.value
        out[k] = x
    return out


def _select(obj: Any, name: str) -> Any:
    if obj.__class__ is _Error:
        raise obj.error
    if isinstance(obj, dict):
        if name in obj or isinstance(obj, DomainMap):
            return obj[name]
        raise CelEvalError(f"no such key: {name}")
    if isinstance(obj, Optional):
        return _optional_select(obj.value, name) if obj.present else NONE
    raise CelEvalError(f"no such key: {name}")


def _has(obj: Any, name: str) -> bool:
    if isinstance(obj, dict):
        return name in obj
    if isinstance(obj, Optional):
        return obj.present and _has(obj.value, name)
    return False


def _optional_select(obj: Any, name: str) -> Optional:
    if isinstance(obj, Optional):
        return _optional_select(obj.value, name) if obj.present else NONE
    if isinstance(obj, dict):
        if isinstance(obj, DomainMap) or name in obj:
            return Optional(obj[name])
        return NONE
    return NONE


def _index(obj: Any, key: Any) -> Any:
    if isinstance(obj, DomainMap) and isinstance(key, str):
        return obj[key]
    if isinstance(obj, Optional):
        return _optional_index(obj.value, key) if obj.present else NONE
    if isinstance(obj, list | dict):
        return stdlib.index(obj, key)
    raise CelEvalError(f"no such key: {stdlib.format_key(key)}")


def _optional_index(obj: Any, key: Any) -> Optional:
    if isinstance(obj, Optional):
        return _optional_index(obj.value, key) if obj.present else NONE
    if isinstance(obj, DomainMap) and isinstance(key, str):
        return Optional(obj[key])
    if isinstance(obj, dict):
        found, value = map_get(obj, key)
        return Optional(value) if found else NONE
    if isinstance(obj, list):
        if type(key) in (int, UInt) and 0 <= key < len(obj):
            return Optional(obj[key])
        if type(key) is float and key == int(key) and 0 <= key < len(obj):
            return Optional(obj[int(key)])
        if type(key) not in (int, UInt, float):
            raise CelEvalError(f"unsupported index type '{type_name(key)}' in list")
        return NONE
    return NONE


def plan(
    expression: str, checked: Checked, *, optimize: bool = True, list_values: bool = False
) -> Program:
    planner = _Planner(checked, optimize)
    try:
        root = planner.plan(checked.root)
    except CelEvalError as exc:  # a literal list or map computed now
        raise CelCompileError(f"program instantiation failed: {exc}") from None
    planner.use(root)
    clauses: list[tuple[str, Eval]] = []
    top = _top_level(expression)
    parts = _and_operands(checked.root, top)
    if len(parts) > 1:
        cuts = sorted(e.pos for e in _and_nodes(checked.root, top))
        bounds = [0] + [c + 2 for c in cuts]
        ends = cuts + [len(expression)]
        for part, start, end in zip(parts, bounds, ends, strict=True):
            sub = _Planner(checked)
            clauses.append((expression[start:end].strip(), sub.plan(part).fn))
    return Program(expression, root.fn, frozenset(planner.reads), clauses, list_values)


def _top_level(expression: str) -> set[int]:
    """Offsets outside brackets and string literals."""
    out: set[int] = set()
    depth, i, quote = 0, 0, ""
    n = len(expression)
    while i < n:
        ch = expression[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if expression.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
        elif ch in "\"'":
            quote = ch * 3 if expression.startswith(ch * 3, i) else ch
            i += len(quote)
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            out.add(i)
        i += 1
    return out


def _and_nodes(e: Expr, top: set[int]) -> list[Call]:
    out: list[Call] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if _is_top_and(node, top):
            assert isinstance(node, Call)
            out.append(node)
            stack.extend(node.args)
    return out


def _is_top_and(e: Expr, top: set[int]) -> bool:
    return isinstance(e, Call) and e.function == "_&&_" and e.target is None and e.pos in top


def _and_operands(e: Expr, top: set[int]) -> list[Expr]:
    """The operands of a top-level ``a && b && c`` chain, left to right."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        node = stack.pop()
        if _is_top_and(node, top):
            assert isinstance(node, Call)
            stack.extend(reversed(node.args))
        else:
            out.append(node)
    return out
