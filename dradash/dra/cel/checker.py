"""cel-go's type checker (``checker/checker.go``) for the DRA environment, and the AST
validators Kubernetes' base environment adds (``cel/validator.go``: regex, duration and
timestamp literals, homogeneous aggregate literals; ``ext/formatting.go``: literal format
strings). Errors carry cel-go's wording."""

from __future__ import annotations

from dataclasses import dataclass, field

from dradash.dra.cel import functions as fn
from dradash.dra.cel import types as t
from dradash.dra.cel.dialect import Dialect
from dradash.dra.cel.library.format import STRING_CLAUSE_TYPES, FormatError, parse_format
from dradash.dra.cel.library.regex import regex_error
from dradash.dra.cel.library.stdlib import to_duration, to_timestamp
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
    walk,
)
from dradash.dra.cel.types import T
from dradash.dra.cel.values import UInt

CAPACITY = t.map_of(t.STRING, t.map_of(t.STRING, t.QUANTITY))


def _device_fields(dialect: Dialect) -> dict[str, T]:
    """The fields of ``kubernetes.DRADevice`` in this environment."""
    value = t.DYN if dialect.dyn_attributes else t.ANY
    fields = {
        "driver": t.STRING,
        "attributes": t.map_of(t.STRING, t.map_of(t.STRING, value)),
        "capacity": CAPACITY,
    }
    if dialect.allow_multiple_allocations:
        fields["allowMultipleAllocations"] = t.BOOL
    return fields


class CheckError(ValueError):
    def __init__(self, errors: list[tuple[int, str]]) -> None:
        super().__init__(errors[0][1])
        self.errors = errors


@dataclass
class Checked:
    root: Expr
    types: dict[int, T]
    overloads: dict[int, list[str]] = field(default_factory=dict)  # call id -> overload ids
    functions: dict[int, str] = field(default_factory=dict)  # call id -> resolved function name
    idents: dict[int, str] = field(default_factory=dict)  # ident/select id -> resolved name

    @property
    def output_type(self) -> T:
        return self.types[self.root.id]


def _literal_type(v: object) -> T:
    if v is None:
        return t.NULL
    if isinstance(v, bool):
        return t.BOOL
    if isinstance(v, UInt):
        return t.UINT
    if isinstance(v, int):
        return t.INT
    if isinstance(v, float):
        return t.DOUBLE
    if isinstance(v, str):
        return t.STRING
    return t.BYTES


def _qualified_name(e: Expr) -> str | None:
    if isinstance(e, Ident):
        return e.name
    if isinstance(e, Select) and not e.test_only:
        inner = _qualified_name(e.operand)
        return None if inner is None else f"{inner}.{e.field}"
    return None


class _Checker:
    def __init__(self, dialect: Dialect) -> None:
        self.types: dict[int, T] = {}
        self.overloads: dict[int, list[str]] = {}
        self.functions: dict[int, str] = {}
        self.idents: dict[int, str] = {}
        self.errors: list[tuple[int, str]] = []
        self.mapping = t.Mapping()
        self.counter = 0
        self.scopes: list[dict[str, T]] = []
        self.device_fields = _device_fields(dialect)
        self.includes = dialect.includes

    def error(self, e: Expr, message: str) -> None:
        self.errors.append((e.pos, message))

    def fresh(self) -> T:
        name = f"_var{self.counter}"
        self.counter += 1
        return t.param(name)

    def assignable(self, t1: T, t2: T) -> bool:
        subs = t.is_assignable(self.mapping, t1, t2)
        if subs is not None:
            self.mapping = subs
            return True
        return False

    def lookup_ident(self, name: str) -> T | None:
        name = name.removeprefix(".")
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name == "device":
            return t.DEVICE
        if name in fn.TYPE_IDENTS:
            return t.type_of(fn.TYPE_IDENTS[name])
        return None

    def lookup_function(self, name: str) -> fn.Function | None:
        name = name.removeprefix(".")
        if name == "includes" and not self.includes:
            return None
        return fn.ENV.get(name)

    def check(self, e: Expr) -> None:
        if isinstance(e, Literal):
            self.types[e.id] = _literal_type(e.value)
        elif isinstance(e, Ident):
            ty = self.lookup_ident(e.name)
            if ty is None:
                self.types[e.id] = t.ERROR
                self.error(e, f"undeclared reference to '{e.name}' (in container '')")
            else:
                self.types[e.id] = ty
                self.idents[e.id] = e.name.removeprefix(".")
        elif isinstance(e, Select):
            self.check_select(e)
        elif isinstance(e, Call):
            self.check_call(e)
        elif isinstance(e, ListExpr):
            self.check_list(e)
        elif isinstance(e, MapExpr):
            self.check_map(e)
        elif isinstance(e, StructExpr):
            self.types[e.id] = t.ERROR
            self.error(e, f"undeclared reference to '{e.type_name}' (in container '')")
            for _, value, _ in e.fields:
                self.check(value)
        elif isinstance(e, Comprehension):
            self.check_comprehension(e)

    def check_select(self, e: Select) -> None:
        qname = _qualified_name(e)
        if qname is not None:
            ty = self.lookup_ident(qname)
            if ty is not None:
                self.types[e.id] = ty
                self.idents[e.id] = qname.removeprefix(".")
                return
        result = self.check_select_field(e, e.operand, e.field, optional=False)
        if e.test_only:
            result = t.BOOL
        self.types[e.id] = t.substitute(self.mapping, result, False)

    def check_select_field(self, e: Expr, operand: Expr, name: str, optional: bool) -> T:
        self.check(operand)
        operand_type = t.substitute(self.mapping, self.types[operand.id], False)
        target, is_opt = operand_type, False
        if t.is_optional(operand_type):
            target, is_opt = operand_type.params[0], True
        result = t.ERROR
        if target.kind == "map":
            result = target.params[1]
        elif target.kind == "struct":
            if target == t.DEVICE and name in self.device_fields:
                result = self.device_fields[name]
            else:
                self.error(e, f"undefined field '{name}'")
        elif target.kind == "param":
            self.assignable(t.DYN, target)
            result = t.DYN
        else:
            if not t.is_dyn_or_error(target):
                self.error(e, f"type '{t.format_type(target)}' does not support field selection")
            result = t.DYN
        if is_opt or optional:
            return t.optional_of(result)
        return result

    def check_call(self, e: Call) -> None:
        name = e.function
        if name == "_?._":
            operand, field_lit = e.args
            field_name = field_lit.value if isinstance(field_lit, Literal) else None
            if not isinstance(field_name, str):
                self.error(field_lit, "unsupported optional field selection")
                self.types[e.id] = t.ERROR
                return
            result = self.check_select_field(e, operand, field_name, optional=True)
            self.types[e.id] = t.substitute(self.mapping, result, False)
            self.overloads[e.id] = ["select_optional_field"]
            self.functions[e.id] = name
            return
        for arg in e.args:
            self.check(arg)
        if e.target is None:
            func = self.lookup_function(name)
            if func is None:
                self.error(e, f"undeclared reference to '{name}' (in container '')")
                self.types[e.id] = t.ERROR
                return
            self.resolve(e, func, None)
            return
        qualified = _qualified_name(e.target)
        if qualified is not None:
            func = self.lookup_function(f"{qualified}.{name}")
            if func is not None:
                e.function = func.name
                e.target = None
                self.resolve(e, func, None)
                return
        self.check(e.target)
        func = self.lookup_function(name)
        if func is not None:
            self.resolve(e, func, e.target)
            return
        self.types[e.id] = t.ERROR
        self.error(e, f"undeclared reference to '{name}' (in container '')")

    def resolve(self, e: Call, func: fn.Function, target: Expr | None) -> None:
        arg_types = ([self.types[target.id]] if target is not None else []) + [
            self.types[a.id] for a in e.args
        ]
        self.functions[e.id] = func.name
        if func.name in ("_&&_", "_||_"):
            bad = False
            for arg, ty in zip(e.args, arg_types, strict=True):
                if not self.assignable(ty, t.BOOL):
                    self.error(arg, f"expected type 'bool' but found '{t.format_type(ty)}'")
                    bad = True
            self.types[e.id] = t.ERROR if bad else t.BOOL
            self.overloads[e.id] = [func.overloads[0].id]
            return
        result: T | None = None
        ids: list[str] = []
        for ov in func.overloads:
            if (target is None) == ov.member:
                continue
            params = set()
            for a in ov.args:
                t.params_of(a, params)
            t.params_of(ov.result, params)
            args, res = list(ov.args), ov.result
            if params:
                renames = {p: self.fresh() for p in sorted(params)}
                args = [t.rename_params(a, renames) for a in args]
                res = t.rename_params(res, renames)
            subs = t.is_assignable_list(self.mapping, arg_types, args)
            if subs is None:
                continue
            self.mapping = subs
            ids.append(ov.id)
            fn_result = t.substitute(self.mapping, res, False)
            if result is None:
                result = fn_result
            elif not t.is_dyn(result) and fn_result != result:
                result = t.DYN
        if result is None:
            shown = [t.format_type(t.substitute(self.mapping, a, True)) for a in arg_types]
            if target is not None:
                signature = f"{shown[0]}.({', '.join(shown[1:])})"
            else:
                signature = f"({', '.join(shown)})"
            self.error(e, f"found no matching overload for '{func.name}' applied to '{signature}'")
            self.types[e.id] = t.ERROR
            return
        self.types[e.id] = result
        self.overloads[e.id] = ids

    def join(self, e: Expr, previous: T | None, current: T) -> T:
        if previous is None:
            return current
        if self.assignable(previous, current):
            return t.most_general(previous, current)
        return t.DYN

    def check_list(self, e: ListExpr) -> None:
        elem: T | None = None
        optionals = set(e.optional_indices)
        for i, item in enumerate(e.elements):
            self.check(item)
            ty = self.types[item.id]
            if i in optionals:
                if t.is_optional(ty):
                    ty = ty.params[0]
                elif not t.is_dyn(ty):
                    self.error(
                        item,
                        f"expected type '{t.format_type(t.optional_of(ty))}' but found "
                        f"'{t.format_type(ty)}'",
                    )
            elem = self.join(item, elem, ty)
        self.types[e.id] = t.list_of(elem if elem is not None else self.fresh())

    def check_map(self, e: MapExpr) -> None:
        key_t: T | None = None
        val_t: T | None = None
        for key, value, optional in e.entries:
            self.check(key)
            key_t = self.join(key, key_t, self.types[key.id])
            self.check(value)
            vt = self.types[value.id]
            if optional:
                if t.is_optional(vt):
                    vt = vt.params[0]
                elif not t.is_dyn(vt):
                    self.error(
                        value,
                        f"expected type '{t.format_type(t.optional_of(vt))}' but found "
                        f"'{t.format_type(vt)}'",
                    )
            val_t = self.join(value, val_t, vt)
        if key_t is None or val_t is None:
            key_t, val_t = self.fresh(), self.fresh()
        self.types[e.id] = t.map_of(key_t, val_t)

    def check_comprehension(self, e: Comprehension) -> None:
        self.check(e.iter_range)
        self.check(e.accu_init)
        range_t = t.substitute(self.mapping, self.types[e.iter_range.id], False)
        accu_t = self.types[e.accu_init.id]
        self.scopes.append({e.accu_var: accu_t})
        var2_t: T | None = None
        if range_t.kind == "list":
            var_t = range_t.params[0]
            if e.iter_var2:
                var2_t, var_t = var_t, t.INT
        elif range_t.kind == "map":
            var_t = range_t.params[0]
            if e.iter_var2:
                var2_t = range_t.params[1]
        elif range_t.kind in ("dyn", "error", "param"):
            self.assignable(t.DYN, range_t)
            var_t = t.DYN
            var2_t = t.DYN if e.iter_var2 else None
        else:
            self.error(
                e.iter_range,
                f"expression of type '{t.format_type(range_t)}' cannot be range of a "
                "comprehension (must be list, map, or dynamic)",
            )
            var_t = t.ERROR
            var2_t = t.ERROR if e.iter_var2 else None
        inner = {e.iter_var: var_t}
        if e.iter_var2 and var2_t is not None:
            inner[e.iter_var2] = var2_t
        self.scopes.append(inner)
        self.check(e.loop_condition)
        self.assert_type(e.loop_condition, t.BOOL)
        self.check(e.loop_step)
        self.assert_type(e.loop_step, accu_t)
        self.scopes.pop()
        self.check(e.result)
        self.scopes.pop()
        self.types[e.id] = t.substitute(self.mapping, self.types[e.result.id], False)

    def assert_type(self, e: Expr, expected: T) -> None:
        actual = self.types[e.id]
        if not self.assignable(expected, actual):
            self.error(
                e,
                f"expected type '{t.format_type(expected)}' but found '{t.format_type(actual)}'",
            )


def check(
    root: Expr,
    dialect: Dialect,
    *,
    variables: dict[str, T] | None = None,
    validators: bool = True,
) -> Checked:
    """``variables`` declares more variables beside ``device`` and ``validators=False`` skips
    the base environment's AST validators: for checking expressions in the test environments
    of upstream's cost tables."""
    c = _Checker(dialect)
    if variables:
        c.scopes.append(dict(variables))
    c.check(root)
    if c.errors:
        raise CheckError(sorted(c.errors, key=lambda x: x[0]))
    types = {i: t.substitute(c.mapping, ty, True) for i, ty in c.types.items()}
    checked = Checked(root, types, c.overloads, c.functions, c.idents)
    errors = validate(checked) if validators else []
    if errors:
        raise CheckError(sorted(errors, key=lambda x: x[0]))
    return checked


# --- AST validators ---------------------------------------------------------------------------


def validate(c: Checked) -> list[tuple[int, str]]:
    errors: list[tuple[int, str]] = []
    nodes = walk(c.root)
    exempt = _format_exempt(c.root)
    for e in nodes:
        if isinstance(e, Call):
            name = c.functions.get(e.id, e.function)
            # ValidateDurationLiterals, ValidateTimestampLiterals, ValidateRegexLiterals
            if name in ("duration", "timestamp", "matches") and e.args:
                arg = e.args[0]
                if isinstance(arg, Literal) and not _literal_ok(name, e, arg):
                    errors.append((arg.pos, f"invalid {name} argument"))
            if name == "format" and e.target is not None:
                errors.extend(_check_format(c, e))
        if isinstance(e, ListExpr) and e.id not in exempt:
            elem: T | None = None
            for i, item in enumerate(e.elements):
                ty = c.types[item.id]
                if i in e.optional_indices and ty.params:
                    ty = ty.params[0]
                if elem is None:
                    elem = ty
                    continue
                if not t.equivalent(elem, ty):
                    errors.append((item.pos, _mismatch(elem, ty)))
                    break
        if isinstance(e, MapExpr) and e.id not in exempt:
            key_t: T | None = None
            val_t: T | None = None
            for key, value, optional in e.entries:
                kt, vt = c.types[key.id], c.types[value.id]
                if optional and vt.params:
                    vt = vt.params[0]
                if key_t is None or val_t is None:
                    key_t, val_t = kt, vt
                    continue
                if not t.equivalent(key_t, kt):
                    errors.append((key.pos, _mismatch(key_t, kt)))
                if not t.equivalent(val_t, vt):
                    errors.append((value.pos, _mismatch(val_t, vt)))
    return errors


def _mismatch(expected: T, actual: T) -> str:
    return f"expected type '{t.format_type(expected)}' but found '{t.format_type(actual)}'"


def _format_exempt(root: Expr) -> set[int]:
    """Aggregate literals anywhere inside a call of ``format`` (the string library exempts its
    function from the homogeneous-literal validator)."""
    exempt: set[int] = set()
    for e in walk(root):
        if isinstance(e, Call) and e.function == "format":
            for inner in walk(e):
                if inner is not e:
                    exempt.add(inner.id)
    return exempt


def _literal_ok(name: str, call: Call, arg: Literal) -> bool:
    if name == "matches":
        return isinstance(arg.value, str) and regex_error(arg.value) is None
    convert = to_duration if name == "duration" else to_timestamp
    try:
        convert(arg.value)
    except Exception:  # noqa: BLE001 - any evaluation error makes the literal invalid
        return False
    return True


def _check_format(c: Checked, e: Call) -> list[tuple[int, str]]:
    """ext/formatting.go stringFormatValidator: a literal format string with a literal list of
    arguments is checked against the arguments' static types."""
    ids = c.overloads.get(e.id, [])
    if ids and "string_format" not in ids:
        return []
    target = e.target
    if not isinstance(target, Literal) or not isinstance(target.value, str):
        return []
    if len(e.args) != 1 or not isinstance(e.args[0], ListExpr):
        return []
    args = e.args[0].elements
    errors: list[tuple[int, str]] = []

    def type_ok(arg: Expr, kinds: tuple[str, ...]) -> bool:
        ty = c.types[arg.id]
        return ty == t.DYN or ty.kind in kinds

    def verify_string(arg: Expr) -> Expr | None:
        kinds = ("list", "map", "int", "uint", "double", "bool", "string", "timestamp", "bytes",
                 "duration", "type", "null")  # fmt: skip
        if not type_ok(arg, kinds):
            return arg
        if isinstance(arg, ListExpr):
            for item in arg.elements:
                bad = verify_string(item)
                if bad is not None:
                    return bad
        if isinstance(arg, MapExpr):
            for k, v, _ in arg.entries:
                for x in (k, v):
                    bad = verify_string(x)
                    if bad is not None:
                        return bad
        return None

    bad_pos = [e.pos]

    def clause(verb: str, precision: int | None, index: int) -> str:
        arg = args[index]
        name = c.types[arg.id].name
        if verb == "s":
            bad = verify_string(arg)
            if bad is not None:
                bad_pos[0] = bad.pos
                raise FormatError(
                    f"string clause can only be used on {STRING_CLAUSE_TYPES}, was given "
                    f"{c.types[bad.id].name}"
                )
            return ""
        checks = {
            "d": (("int", "uint"), "decimal clause can only be used on integers"),
            "f": (("double", "string"), "fixed-point clause can only be used on doubles"),
            "e": (("double", "string"), "scientific clause can only be used on doubles"),
            "b": (("int", "uint", "bool"), "only integers and bools can be formatted as binary"),
            "x": (("int", "uint", "string", "bytes"),
                  "only integers, byte buffers, and strings can be formatted as hex"),
            "X": (("int", "uint", "string", "bytes"),
                  "only integers, byte buffers, and strings can be formatted as hex"),
            "o": (("int", "uint"), "octal clause can only be used on integers"),
        }  # fmt: skip
        kinds, message = checks[verb]
        if not type_ok(arg, kinds):
            bad_pos[0] = arg.pos
            raise FormatError(f"{message}, was given {name}")
        return ""

    try:
        _, used = parse_format(target.value, len(args), clause)
    except FormatError as exc:
        errors.append((bad_pos[0], str(exc)))
        return errors
    if len(args) > used:
        errors.append(
            (
                e.pos,
                f"too many arguments supplied to string.format (expected {used}, got {len(args)})",
            )
        )
    return errors
