"""Compile a parsed CEL selector into Python closures, checking it the way Kubernetes' compiler
does, and learn which parts of the device it reads.

Kubernetes' semantics need control of every step (errors absorbed by ``&&``/``||`` and by
``all``/``exists``, optional values, ``cel.bind``, "no such key" for a missing attribute but an
empty map for a missing domain, a cost limit), so evaluation is compiled here rather than left to
cel-python's tree interpreter; cel-python supplies the grammar (parser.py) and the decoding of
string and bytes literals. Closures are also an order of magnitude faster than walking the tree.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import lark
from celpy.evaluation import celbytes, celstr

from dradash.dra.cel import library
from dradash.dra.cel.values import (
    NONE,
    CelEvalError,
    CostLimitExceeded,
    Interrupted,
    Optional,
    UInt,
    check_int,
    check_uint,
    equals,
    go_type_name,
    is_number,
    no_overload,
    type_name,
)

COST_LIMIT = 1_000_000  # resourceapi.CELSelectorExpressionMaxCost
KEYS = "<keys>"  # a path step meaning "the set of keys of this map"
DEVICE_FIELDS = {
    "driver": "string",
    "attributes": "map",
    "capacity": "map",
    "allowMultipleAllocations": "bool",
}
MACROS = {"all", "exists", "exists_one", "existsOne", "map", "filter"}
TWO_VAR_MACROS = {"all", "exists", "existsOne", "transformList", "transformMap"}
NAMESPACES = {"optional", "lists", "sets", "strings"}
_FATAL = (CostLimitExceeded, Interrupted)
_CONCRETE = {"int", "uint", "double", "string", "bytes", "bool", "list", "map", "null_type"}


class CelCompileError(ValueError):
    """An expression Kubernetes would refuse to compile."""


class DomainMap(dict):  # type: ignore[type-arg]
    """device.attributes and device.capacity: an unknown domain is an empty map, not an error."""

    def __missing__(self, key: Any) -> dict[str, Any]:
        return {}


@dataclass
class Context:
    """Per-evaluation budget: cost units and an optional wall-clock deadline."""

    limit: int = COST_LIMIT
    deadline: float | None = None
    cost: int = 0

    def spend(self, units: int = 1) -> None:
        self.cost += units
        if self.cost > self.limit:
            raise CostLimitExceeded()
        if self.deadline is not None and not self.cost & 1023 and time.monotonic() > self.deadline:
            raise Interrupted()


Eval = Callable[[Context, dict[str, Any]], Any]


@dataclass
class Node:
    fn: Eval
    type: str = "dyn"  # static CEL type when known
    path: tuple[str, ...] | None = None  # set when the node is a part of `device`


@dataclass
class Program:
    expression: str
    fn: Eval
    reads: frozenset[tuple[str, ...]]  # the device paths the expression reads
    clauses: list[tuple[str, Eval]] = field(default_factory=list)  # top-level && operands

    def matches(self, device: dict[str, Any], ctx: Context | None = None) -> bool:
        """Whether the device matches; CelEvalError when the selector fails on it."""
        result = self.fn(ctx or Context(), {"device": device})
        if not isinstance(result, bool):
            raise CelEvalError(
                f"CEL result of type {type_name(result)} could not be converted to bool"
            )
        return result

    def failed_clauses(self, device: dict[str, Any], ctx: Context | None = None) -> list[str]:
        """The top-level ``&&`` operands that are not true for this device."""
        failed = []
        for source, fn in self.clauses:
            try:
                ok = fn(ctx or Context(), {"device": device}) is True
            except _FATAL:
                raise
            except CelEvalError:
                ok = False
            if not ok:
                failed.append(source)
        return failed


def compile_expression(
    expression: str, tree: lark.Tree, *, allow_multiple_allocations: bool = True
) -> Program:
    compiler = _Compiler(expression, allow_multiple_allocations)
    root = compiler.compile(tree)
    if root.type not in ("bool", "dyn"):
        raise CelCompileError(f"must evaluate to bool or the unknown type, not {root.type}")
    compiler.use(root)
    clauses = [
        (_source(expression, part), compiler.compile(part).fn) for part in _and_operands(tree)
    ]
    return Program(
        expression, root.fn, frozenset(compiler.reads), clauses if len(clauses) > 1 else []
    )


def _and_operands(tree: lark.Tree) -> list[lark.Tree]:
    """The operands of a top-level ``a && b && c`` chain (the expression itself if none)."""
    node = tree
    while node.data in ("expr", "conditionalor") and len(node.children) == 1:
        node = node.children[0]
    if node.data != "conditionaland":
        return [tree]
    parts: list[lark.Tree] = []
    while node.data == "conditionaland" and len(node.children) == 2:
        parts.append(node.children[1])
        node = node.children[0]
    parts.append(node)
    return parts[::-1]


def _source(expression: str, tree: lark.Tree) -> str:
    meta = tree.meta
    if getattr(meta, "empty", True):
        return expression
    return expression[meta.start_pos : meta.end_pos].strip()


class _Compiler:
    def __init__(self, expression: str, allow_multiple_allocations: bool) -> None:
        self.expression = expression
        self.allow_multiple = allow_multiple_allocations
        self.scopes: list[dict[str, tuple[str, ...] | None]] = []  # variable -> device alias
        self.reads: set[tuple[str, ...]] = set()

    # --- helpers ----------------------------------------------------------------------------

    def use(self, node: Node) -> Node:
        """The node's value is consumed as a whole: record the device path it reads."""
        if node.path is not None:
            self.reads.add(node.path)
        return node

    def compile(self, tree: lark.Tree) -> Node:
        method = getattr(self, f"c_{tree.data}", None)
        if method is None:
            raise CelCompileError(f"unsupported syntax: {tree.data}")
        return method(tree)

    def value(self, tree: lark.Tree) -> Node:
        return self.use(self.compile(tree))

    def lookup(self, name: str) -> tuple[bool, tuple[str, ...] | None]:
        for scope in reversed(self.scopes):
            if name in scope:
                return True, scope[name]
        return False, None

    # --- the grammar ------------------------------------------------------------------------

    def c_expr(self, tree: lark.Tree) -> Node:
        if len(tree.children) == 1:
            return self.compile(tree.children[0])
        cond, yes, no = (self.value(c) for c in tree.children)

        def ternary(ctx: Context, v: dict[str, Any]) -> Any:
            c = cond.fn(ctx, v)
            if c is True:
                return yes.fn(ctx, v)
            if c is False:
                return no.fn(ctx, v)
            raise no_overload("_?_:_", c)

        return Node(ternary, yes.type if yes.type == no.type else "dyn")

    def c_conditionalor(self, tree: lark.Tree) -> Node:
        if len(tree.children) == 1:
            return self.compile(tree.children[0])
        return self._logical(tree, absorbing=True, name="_||_")

    def c_conditionaland(self, tree: lark.Tree) -> Node:
        if len(tree.children) == 1:
            return self.compile(tree.children[0])
        return self._logical(tree, absorbing=False, name="_&&_")

    def _logical(self, tree: lark.Tree, *, absorbing: bool, name: str) -> Node:
        """``||`` (true absorbs) and ``&&`` (false absorbs); errors lose to the absorbing value."""
        left, right = (self.value(c).fn for c in tree.children)

        def logical(ctx: Context, v: dict[str, Any]) -> Any:
            ctx.spend()
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
            if a is (not absorbing) and b is (not absorbing):
                return not absorbing
            raise no_overload(name, a, b)

        return Node(logical, "bool")

    def c_relation(self, tree: lark.Tree) -> Node:
        if len(tree.children) == 1:
            return self.compile(tree.children[0])
        op_tree, right_tree = tree.children
        op = op_tree.data.removeprefix("relation_")
        left = self.value(op_tree.children[0])
        right_node = self.compile(right_tree)
        if op == "in" and right_node.path is not None:
            self.reads.add((*right_node.path, KEYS))  # only the key set matters
        else:
            self.use(right_node)
        a_fn, b_fn = left.fn, right_node.fn
        compare = _RELATIONS[op]

        def relation(ctx: Context, v: dict[str, Any]) -> bool:
            ctx.spend()
            return compare(a_fn(ctx, v), b_fn(ctx, v))

        return Node(relation, "bool")

    def c_addition(self, tree: lark.Tree) -> Node:
        return self._arithmetic(tree)

    def c_multiplication(self, tree: lark.Tree) -> Node:
        return self._arithmetic(tree)

    def _arithmetic(self, tree: lark.Tree) -> Node:
        if len(tree.children) == 1:
            return self.compile(tree.children[0])
        op_tree, right_tree = tree.children
        op = op_tree.data.split("_")[-1]
        left, right = self.value(op_tree.children[0]), self.value(right_tree)
        a_fn, b_fn, apply = left.fn, right.fn, _ARITHMETIC[op]
        if left.type in _CONCRETE and right.type in _CONCRETE and left.type != right.type:
            symbol = {"add": "+", "sub": "-", "mul": "*", "div": "/", "mod": "%"}[op]
            raise CelCompileError(
                f"found no matching overload for '_{symbol}_' applied to "
                f"'({left.type}, {right.type})'"
            )

        def arithmetic(ctx: Context, v: dict[str, Any]) -> Any:
            ctx.spend()
            return apply(a_fn(ctx, v), b_fn(ctx, v))

        same = left.type if left.type == right.type and left.type != "dyn" else "dyn"
        return Node(arithmetic, same)

    def c_unary(self, tree: lark.Tree) -> Node:
        if len(tree.children) == 1:
            return self.compile(tree.children[0])
        op, operand = tree.children[0].data, self.value(tree.children[1])
        fn = operand.fn
        if op == "unary_not":

            def negate(ctx: Context, v: dict[str, Any]) -> bool:
                x = fn(ctx, v)
                if isinstance(x, bool):
                    return not x
                raise no_overload("!_", x)

            return Node(negate, "bool")

        def minus(ctx: Context, v: dict[str, Any]) -> Any:
            x = fn(ctx, v)
            if isinstance(x, float):
                return -x
            if isinstance(x, int) and not isinstance(x, bool | UInt):
                return check_int(-x)
            raise no_overload("-_", x)

        return Node(minus, operand.type)

    def c_member(self, tree: lark.Tree) -> Node:
        return self.compile(tree.children[0])

    def c_primary(self, tree: lark.Tree) -> Node:
        return self.compile(tree.children[0])

    def c_paren_expr(self, tree: lark.Tree) -> Node:
        return self.compile(tree.children[0])

    def c_literal(self, tree: lark.Tree) -> Node:
        token = tree.children[0]
        kind, text = token.type, token.value
        try:
            if kind == "INT_LIT":
                value: Any = check_int(int(text, 0) if "x" in text.lower() else int(text))
            elif kind == "UINT_LIT":
                value = check_uint(int(text[:-1], 0) if "x" in text.lower() else int(text[:-1]))
            elif kind == "FLOAT_LIT":
                value = float(text)
            elif kind in ("STRING_LIT", "MLSTRING_LIT"):
                value = str(celstr(token))
            elif kind == "BYTES_LIT":
                value = bytes(celbytes(token))
            elif kind == "BOOL_LIT":
                value = text == "true"
            else:
                value = None
        except CelEvalError as exc:
            raise CelCompileError(f"invalid literal {text}: {exc}") from None
        return Node(lambda ctx, v: value, type_name(value))

    def c_ident(self, tree: lark.Tree) -> Node:
        name = tree.children[0].value
        bound, alias = self.lookup(name)
        if bound:
            return Node(lambda ctx, v: v[name], "dyn", alias)
        if name == "device":
            return Node(lambda ctx, v: v["device"], "map", ())
        raise CelCompileError(f"undeclared reference to '{name}'")

    def c_dot_ident(self, tree: lark.Tree) -> Node:  # ".name": a name from the root scope
        name = tree.children[0].value
        if name == "device":
            return Node(lambda ctx, v: v["device"], "map", ())
        raise CelCompileError(f"undeclared reference to '{name}'")

    def c_list_lit(self, tree: lark.Tree) -> Node:
        items = [self.value(c).fn for c in tree.children[0].children] if tree.children else []
        return Node(lambda ctx, v: [f(ctx, v) for f in items], "list")

    def c_map_lit(self, tree: lark.Tree) -> Node:
        parts = [self.value(c).fn for c in tree.children[0].children] if tree.children else []
        pairs = list(zip(parts[::2], parts[1::2], strict=True))

        def build(ctx: Context, v: dict[str, Any]) -> dict[Any, Any]:
            out: dict[Any, Any] = {}
            for kf, vf in pairs:
                key = kf(ctx, v)
                if not isinstance(key, str | int):
                    raise CelEvalError(f"unsupported key type: {type_name(key)}")
                if key in out:
                    raise CelEvalError(f"Failed with repeated key: {key!r}")
                out[key] = vf(ctx, v)
            return out

        return Node(build, "map")

    # --- selection and indexing -----------------------------------------------------------

    def c_member_dot(self, tree: lark.Tree) -> Node:
        inner_tree, field_token = tree.children
        name = field_token.value
        if (ns := _namespace(inner_tree)) is not None:
            raise CelCompileError(f"undeclared reference to '{ns}.{name}'")
        inner = self.compile(inner_tree)
        path, kind = self._extend(inner, name)
        fn = inner.fn

        def select(ctx: Context, v: dict[str, Any]) -> Any:
            ctx.spend()
            return _select(fn(ctx, v), name)

        return Node(select, kind, path)

    def c_member_dot_opt(self, tree: lark.Tree) -> Node:
        inner_tree, field_token = tree.children
        name = field_token.value
        inner = self.compile(inner_tree)
        path, _ = self._extend(inner, name)
        fn = inner.fn

        def select(ctx: Context, v: dict[str, Any]) -> Optional:
            ctx.spend()
            return _optional_select(fn(ctx, v), name)

        return Node(select, "optional_type", path)

    def c_member_index(self, tree: lark.Tree) -> Node:
        return self._index(tree, optional=False)

    def c_member_index_opt(self, tree: lark.Tree) -> Node:
        return self._index(tree, optional=True)

    def _index(self, tree: lark.Tree, *, optional: bool) -> Node:
        inner = self.compile(tree.children[0])
        key_node = self.value(tree.children[1])
        constant = _string_constant(tree.children[1])
        if constant is not None and inner.path is not None and inner.path != ():
            path, kind = self._extend(inner, constant)
        else:
            self.use(inner)
            path, kind = None, "dyn"
        obj_fn, key_fn = inner.fn, key_node.fn

        if optional:

            def index_opt(ctx: Context, v: dict[str, Any]) -> Optional:
                ctx.spend()
                return _optional_index(obj_fn(ctx, v), key_fn(ctx, v))

            return Node(index_opt, "optional_type", path)

        def index(ctx: Context, v: dict[str, Any]) -> Any:
            ctx.spend()
            return _index(obj_fn(ctx, v), key_fn(ctx, v))

        return Node(index, kind, path)

    def _extend(self, inner: Node, name: str) -> tuple[tuple[str, ...] | None, str]:
        """The device path and static type of ``inner.name`` (or ``inner["name"]``)."""
        if inner.path is None:
            return None, "dyn"
        path = inner.path
        if path == ():
            if name not in DEVICE_FIELDS or (
                name == "allowMultipleAllocations" and not self.allow_multiple
            ):
                raise CelCompileError(f"undefined field '{name}'")
            return (name,), DEVICE_FIELDS[name]
        if path[0] in ("attributes", "capacity") and len(path) < 3:
            leaf = "kubernetes.Quantity" if path[0] == "capacity" else "dyn"
            return (*path, name), ("map" if len(path) == 1 else leaf)
        self.use(inner)
        return None, "dyn"

    # --- calls and macros -----------------------------------------------------------------

    def c_ident_arg(self, tree: lark.Tree) -> Node:
        name = tree.children[0].value
        args = list(tree.children[1].children) if len(tree.children) > 1 else []
        if name == "has":
            return self._has(args)
        function = library.GLOBAL.get(name)
        if function is None:
            raise CelCompileError(f"undeclared reference to '{name}'")
        nodes = [self.compile(a) for a in args]
        if name == "size" and len(nodes) == 1 and nodes[0].path is not None:
            self.reads.add((*nodes[0].path, KEYS))
        else:
            for n in nodes:
                self.use(n)
        return self._call(name, function, [n.fn for n in nodes], library.RETURNS.get(name, "dyn"))

    def c_member_dot_arg(self, tree: lark.Tree) -> Node:
        target_tree, name_token = tree.children[:2]
        name = name_token.value
        args = list(tree.children[2].children) if len(tree.children) > 2 else []
        ns = _namespace(target_tree)
        if ns == "cel" and name == "bind":
            return self._bind(args)
        if ns is not None and f"{ns}.{name}" in library.NAMESPACED:
            qualified = f"{ns}.{name}"
            fns = [self.value(a).fn for a in args]
            return self._call(
                qualified, library.NAMESPACED[qualified], fns, library.RETURNS.get(qualified, "dyn")
            )
        if name in MACROS | TWO_VAR_MACROS and args and _variable(args[0]) is not None:
            return self._comprehension(target_tree, name, args)
        function = library.MEMBER.get(name)
        if function is None:
            raise CelCompileError(f"undeclared reference to '{name}'")
        target = self.value(target_tree)
        fns = [target.fn, *(self.value(a).fn for a in args)]
        return self._call(name, function, fns, library.RETURNS.get(name, "dyn"))

    def _call(self, name: str, function: Callable[..., Any], fns: list[Eval], kind: str) -> Node:
        def call(ctx: Context, v: dict[str, Any]) -> Any:
            ctx.spend()
            args = [f(ctx, v) for f in fns]
            try:
                return function(*args)
            except CelEvalError:
                raise
            except (ValueError, TypeError, ArithmeticError) as exc:
                raise CelEvalError(f"{name}: {exc}") from None

        return Node(call, kind)

    def _has(self, args: list[lark.Tree]) -> Node:
        select = _unwrap(args[0]) if len(args) == 1 else None
        if select is None or select.data != "member_dot":
            raise CelCompileError("invalid argument to has() macro")
        inner_tree, field_token = select.children
        name = field_token.value
        inner = self.compile(inner_tree)
        path, _ = self._extend(inner, name)
        if path is not None:
            self.reads.add(path)
        fn = inner.fn

        def has(ctx: Context, v: dict[str, Any]) -> bool:
            ctx.spend()
            obj = fn(ctx, v)
            if isinstance(obj, dict):
                return name in obj
            raise CelEvalError(f"invalid type for field selection: {type_name(obj)}")

        return Node(has, "bool")

    def _bind(self, args: list[lark.Tree]) -> Node:
        var = _variable(args[0]) if len(args) == 3 else None
        if var is None:
            raise CelCompileError("cel.bind() expects a variable name, a value and an expression")
        init = self.compile(args[1])
        self.scopes.append({var: init.path})
        try:
            body = self.value(args[2])
        finally:
            self.scopes.pop()
        init_fn, body_fn = init.fn, body.fn

        def bind(ctx: Context, v: dict[str, Any]) -> Any:
            saved = v.get(var, _UNSET)
            v[var] = init_fn(ctx, v)
            try:
                return body_fn(ctx, v)
            finally:
                _restore(v, var, saved)

        return Node(bind, body.type)

    def _comprehension(self, target_tree: lark.Tree, name: str, args: list[lark.Tree]) -> Node:
        target = self.compile(target_tree)
        if target.path is not None:
            self.reads.add((*target.path, KEYS) if len(target.path) < 3 else target.path)
        two = len(args) >= 3 and _variable(args[1]) is not None and name in TWO_VAR_MACROS
        if name in ("transformList", "transformMap") and not two:
            raise CelCompileError(f"{name}() expects two variable names")
        names = [_variable(a) for a in args[: 2 if two else 1]]
        if any(n is None for n in names):
            raise CelCompileError(f"{name}() expects a variable name")
        body_trees = args[2 if two else 1 :]
        if (
            not 1
            <= len(body_trees)
            <= (2 if name in ("map", "transformList", "transformMap") else 1)
        ):
            raise CelCompileError(f"wrong number of arguments to {name}()")
        self.scopes.append(dict.fromkeys(names))
        try:
            bodies = [self.value(t).fn for t in body_trees]
        finally:
            self.scopes.pop()
        loop = _LOOPS[name]
        target_fn = target.fn
        kind = (
            "bool"
            if name in ("all", "exists", "exists_one", "existsOne")
            else ("map" if name == "transformMap" else "list")
        )

        def comprehension(ctx: Context, v: dict[str, Any]) -> Any:
            ctx.spend()
            collection = target_fn(ctx, v)
            if not isinstance(collection, list | dict):
                raise CelEvalError(f"got '{go_type_name(collection)}', expected iterable type")
            saved = [v.get(n, _UNSET) for n in names]
            try:
                return loop(ctx, v, collection, names, bodies)
            finally:
                for n, s in zip(names, saved, strict=True):
                    _restore(v, n, s)

        return Node(comprehension, kind)


# --- runtime pieces ------------------------------------------------------------------------

_UNSET = object()


def _restore(v: dict[str, Any], name: str, saved: Any) -> None:
    if saved is _UNSET:
        v.pop(name, None)
    else:
        v[name] = saved


def _iterate(collection: list[Any] | dict[Any, Any], names: list[str]) -> Any:
    """(values to bind) per element: (elem,) or (index, elem) for lists, (key, value) for maps."""
    if len(names) == 1:
        return ((x,) for x in collection)
    if isinstance(collection, list):
        return enumerate(collection)
    return collection.items()


def _bind_all(v: dict[str, Any], names: list[str], values: tuple[Any, ...]) -> None:
    for n, x in zip(names, values, strict=True):
        v[n] = x


def _quantifier(want: bool) -> Callable[..., bool]:
    """all (want=False stops it) and exists (want=True stops it), absorbing errors like &&/||."""

    def loop(
        ctx: Context, v: dict[str, Any], coll: Any, names: list[str], bodies: list[Eval]
    ) -> bool:
        error: CelEvalError | None = None
        for values in _iterate(coll, names):
            ctx.spend()
            _bind_all(v, names, values)
            try:
                r = bodies[0](ctx, v)
            except _FATAL:
                raise
            except CelEvalError as exc:
                error = error or exc
                continue
            if r is want:
                return want
            if not isinstance(r, bool):
                error = error or no_overload("_&&_" if not want else "_||_", r)
        if error is not None:
            raise error
        return not want

    return loop


def _exists_one(
    ctx: Context, v: dict[str, Any], coll: Any, names: list[str], bodies: list[Eval]
) -> bool:
    count = 0
    for values in _iterate(coll, names):
        ctx.spend()
        _bind_all(v, names, values)
        r = bodies[0](ctx, v)
        if not isinstance(r, bool):
            raise no_overload("exists_one", r)
        count += r
    return count == 1


def _map(ctx: Context, v: dict[str, Any], coll: Any, names: list[str], bodies: list[Eval]) -> Any:
    out = []
    for values in _iterate(coll, names):
        ctx.spend()
        _bind_all(v, names, values)
        if len(bodies) == 2:
            keep = bodies[0](ctx, v)
            if not isinstance(keep, bool):
                raise no_overload("map", keep)
            if not keep:
                continue
        out.append(bodies[-1](ctx, v))
    return out


def _filter(
    ctx: Context, v: dict[str, Any], coll: Any, names: list[str], bodies: list[Eval]
) -> Any:
    out = []
    for values in _iterate(coll, names):
        ctx.spend()
        _bind_all(v, names, values)
        keep = bodies[0](ctx, v)
        if not isinstance(keep, bool):
            raise no_overload("filter", keep)
        if keep:
            out.append(values[0])
    return out


def _transform_map(
    ctx: Context, v: dict[str, Any], coll: Any, names: list[str], bodies: list[Eval]
) -> Any:
    out = {}
    for key, value in _iterate(coll, names):
        ctx.spend()
        _bind_all(v, names, (key, value))
        if len(bodies) == 2 and bodies[0](ctx, v) is not True:
            continue
        out[key] = bodies[-1](ctx, v)
    return out


_LOOPS: dict[str, Callable[..., Any]] = {
    "all": _quantifier(False),
    "exists": _quantifier(True),
    "exists_one": _exists_one,
    "existsOne": _exists_one,
    "map": _map,
    "transformList": _map,
    "filter": _filter,
    "transformMap": _transform_map,
}


def _select(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        if name in obj or isinstance(obj, DomainMap):
            return obj[name]
        raise CelEvalError(f"no such key: {name}")
    if isinstance(obj, Optional):
        return _optional_select(obj.value, name) if obj.present else NONE
    raise CelEvalError(f"type '{type_name(obj)}' does not support field selection")


def _optional_select(obj: Any, name: str) -> Optional:
    if isinstance(obj, Optional):
        return _optional_select(obj.value, name) if obj.present else NONE
    if isinstance(obj, dict):
        if isinstance(obj, DomainMap) or name in obj:
            return Optional(obj[name])
        return NONE
    raise CelEvalError(f"type '{type_name(obj)}' does not support field selection")


def _hashable(key: Any) -> bool:
    """Lists and maps are no map keys in CEL (a lookup with one finds nothing)."""
    try:
        hash(key)
    except TypeError:
        return False
    return True


def _index(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict):
        if not _hashable(key):
            raise CelEvalError(f"unsupported key type: {type_name(key)}")
        if isinstance(obj, DomainMap) or key in obj and type(key) is not bool:
            return obj[key]
        raise CelEvalError(f"no such key: {key}")
    if isinstance(obj, list):
        if isinstance(key, float) and key == int(key):
            key = int(key)
        if not isinstance(key, int) or isinstance(key, bool):
            raise no_overload("_[_]", obj, key)
        if not 0 <= key < len(obj):
            raise CelEvalError(f"index out of range: {key}")
        return obj[key]
    if isinstance(obj, Optional):
        return _optional_index(obj.value, key) if obj.present else NONE
    raise no_overload("_[_]", obj, key)


def _optional_index(obj: Any, key: Any) -> Optional:
    if isinstance(obj, Optional):
        return _optional_index(obj.value, key) if obj.present else NONE
    if isinstance(obj, dict):
        if not _hashable(key):
            return NONE
        return Optional(obj[key]) if isinstance(obj, DomainMap) or key in obj else NONE
    if isinstance(obj, list):
        return Optional(obj[key]) if isinstance(key, int) and 0 <= key < len(obj) else NONE
    raise no_overload("_[?_]", obj, key)


def _compare(op: str) -> Callable[[Any, Any], bool]:
    check = {
        "lt": lambda c: c < 0,
        "le": lambda c: c <= 0,
        "gt": lambda c: c > 0,
        "ge": lambda c: c >= 0,
    }[op]

    def compare(a: Any, b: Any) -> bool:
        if is_number(a) and is_number(b):
            if a != a or b != b:  # NaN
                return False
            return check((a > b) - (a < b))
        if type(a) is type(b) and isinstance(a, str | bytes | bool):
            return check((a > b) - (a < b))
        raise no_overload(f"_{_SYMBOLS[op]}_", a, b)

    return compare


def _in(a: Any, b: Any) -> bool:
    if isinstance(b, list):
        return any(equals(a, x) for x in b)
    if isinstance(b, dict):
        if isinstance(a, bool):
            return any(k is a for k in b)
        return _hashable(a) and a in b
    raise no_overload("@in", a, b)


_SYMBOLS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_RELATIONS: dict[str, Callable[[Any, Any], bool]] = {
    "lt": _compare("lt"),
    "le": _compare("le"),
    "gt": _compare("gt"),
    "ge": _compare("ge"),
    "eq": equals,
    "ne": lambda a, b: not equals(a, b),
    "in": _in,
}


def _same_numbers(a: Any, b: Any) -> str | None:
    """ "int", "uint" or "double" when both operands are of that one numeric type."""
    for kind, test in (
        ("uint", lambda x: isinstance(x, UInt)),
        ("int", lambda x: isinstance(x, int) and not isinstance(x, bool | UInt)),
        ("double", lambda x: isinstance(x, float)),
    ):
        if test(a) and test(b):
            return kind
    return None


def _add(a: Any, b: Any) -> Any:
    kind = _same_numbers(a, b)
    if kind == "int":
        return check_int(a + b)
    if kind == "uint":
        return check_uint(a + b)
    if kind == "double":
        return a + b
    if type(a) is type(b) and isinstance(a, str | bytes | list):
        return a + b
    raise no_overload("_+_", a, b)


def _sub(a: Any, b: Any) -> Any:
    kind = _same_numbers(a, b)
    if kind == "int":
        return check_int(a - b)
    if kind == "uint":
        return check_uint(a - b)
    if kind == "double":
        return a - b
    raise no_overload("_-_", a, b)


def _mul(a: Any, b: Any) -> Any:
    kind = _same_numbers(a, b)
    if kind == "int":
        return check_int(a * b)
    if kind == "uint":
        return check_uint(a * b)
    if kind == "double":
        return a * b
    raise no_overload("_*_", a, b)


def _div(a: Any, b: Any) -> Any:
    kind = _same_numbers(a, b)
    if kind in ("int", "uint"):
        if b == 0:
            raise CelEvalError("division by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # truncates, as in Go
        return check_int(q) if kind == "int" else UInt(q)
    if kind == "double":
        if b == 0:
            return float("nan") if a == 0 or a != a else float("inf") * (1 if a > 0 else -1)
        return a / b
    raise no_overload("_/_", a, b)


def _mod(a: Any, b: Any) -> Any:
    kind = _same_numbers(a, b)
    if kind in ("int", "uint"):
        if b == 0:
            raise CelEvalError("modulus by zero")
        r = abs(a) % abs(b) * (1 if a >= 0 else -1)  # the sign of the dividend, as in Go
        return r if kind == "int" else UInt(r)
    raise no_overload("_%_", a, b)


_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "div": _div,
    "mod": _mod,
}


# --- tree helpers ----------------------------------------------------------------------------


def _unwrap(tree: lark.Tree) -> lark.Tree:
    """Skip the single-child wrapper nodes (expr → … → member) down to the interesting node."""
    while (
        isinstance(tree, lark.Tree)
        and len(tree.children) == 1
        and tree.data
        in (
            "expr",
            "conditionalor",
            "conditionaland",
            "relation",
            "addition",
            "multiplication",
            "unary",
            "member",
            "primary",
            "paren_expr",
        )
        and isinstance(tree.children[0], lark.Tree)
    ):
        tree = tree.children[0]
    return tree


def _variable(tree: lark.Tree) -> str | None:
    node = _unwrap(tree)
    if node.data == "ident":
        return str(node.children[0].value)
    return None


def _namespace(tree: lark.Tree) -> str | None:
    """ "optional" for the receiver of optional.of(…), when it is such a namespace name."""
    name = _variable(tree)
    return name if name in NAMESPACES | {"cel"} else None


def _string_constant(tree: lark.Tree) -> str | None:
    node = _unwrap(tree)
    if node.data == "literal" and node.children[0].type in ("STRING_LIT", "MLSTRING_LIT"):
        return str(celstr(node.children[0]))
    return None
