"""CEL's syntax as cel-go parses it: a lexer and a recursive-descent parser for cel-go's ANTLR
grammar (``parser/gen/CEL.g4``), macro expansion (``parser/macro.go``, ``ext/bindings.go``,
``ext/comprehensions.go``, the optional macros), and the AST the checker and planner work on.

What cel-go refuses, this refuses: the same tokens (string escapes included), reserved
identifiers, the parser's recursion limits (250), balanced ``&&``/``||`` trees (a chain of
hundreds of clauses is fine), ``-5`` as a literal but ``-x`` as a negation.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

MAX_RECURSION = 250  # cel-go parser.maxRecursionDepth's default
ACCUMULATOR = "@result"  # cel-go's hidden accumulator name (EnableHiddenAccumulatorName)
RESERVED = {
    "as", "break", "const", "continue", "else", "false", "for", "function", "if", "import",
    "in", "let", "loop", "package", "namespace", "null", "return", "true", "var", "void", "while",
}  # fmt: skip


class CelSyntaxError(ValueError):
    """A CEL expression cel-go's parser refuses: ``errors`` holds (offset, message) pairs."""

    def __init__(self, errors: list[tuple[int, str]]) -> None:
        super().__init__(errors[0][1] if errors else "Syntax error")
        self.errors = errors


# --- the AST --------------------------------------------------------------------------------


@dataclass(eq=False)
class Expr:
    id: int
    pos: int  # offset of the expression's first character (cel-go's start location)


@dataclass(eq=False)
class Literal(Expr):
    value: Any  # None, bool, int, UInt, float, str, bytes


@dataclass(eq=False)
class Ident(Expr):
    name: str


@dataclass(eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False  # has(operand.field)


@dataclass(eq=False)
class Call(Expr):
    function: str
    args: list[Expr]
    target: Expr | None = None  # receiver of a member call


@dataclass(eq=False)
class ListExpr(Expr):
    elements: list[Expr]
    optional_indices: list[int] = field(default_factory=list)


@dataclass(eq=False)
class MapExpr(Expr):
    entries: list[tuple[Expr, Expr, bool]]  # key, value, optional; entry ids are not kept


@dataclass(eq=False)
class StructExpr(Expr):
    type_name: str
    fields: list[tuple[str, Expr, bool]]


@dataclass(eq=False)
class Comprehension(Expr):
    iter_range: Expr
    iter_var: str
    iter_var2: str
    accu_var: str
    accu_init: Expr
    loop_condition: Expr
    loop_step: Expr
    result: Expr
    macro: str = ""  # the macro it came from: "all", "exists", "map", …


def children(e: Expr) -> list[Expr]:
    if isinstance(e, Select):
        return [e.operand]
    if isinstance(e, Call):
        return ([e.target] if e.target is not None else []) + e.args
    if isinstance(e, ListExpr):
        return list(e.elements)
    if isinstance(e, MapExpr):
        return [x for k, v, _ in e.entries for x in (k, v)]
    if isinstance(e, StructExpr):
        return [v for _, v, _ in e.fields]
    if isinstance(e, Comprehension):
        return [e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result]
    return []


def walk(e: Expr) -> list[Expr]:
    """Every node, parents before children (iterative: trees can be deep)."""
    out, stack = [], [e]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(children(node)))
    return out


# --- the lexer ------------------------------------------------------------------------------

_PUNCT = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "[", "]", "{", "}", "(", ")", ".", ",",
    "-", "!", "?", ":", "+", "*", "/", "%",
]  # fmt: skip
_KEYWORDS = {"true": "TRUE", "false": "FALSE", "null": "NULL", "in": "in"}
_SIMPLE_ESC = {
    "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
    "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?",
}  # fmt: skip
_HEX = set("0123456789abcdefABCDEF")


@dataclass
class Token:
    kind: str  # INT UINT FLOAT STRING BYTES IDENT ESC_IDENT, keywords, punctuation, EOF
    text: str
    pos: int


def _is_letter(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_digit(c: str) -> bool:
    return "0" <= c <= "9"


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.errors: list[tuple[int, str]] = []

    def tokens(self) -> list[Token]:
        s, i, out = self.s, 0, []
        n = len(s)
        while i < n:
            c = s[i]
            if c in " \t\r\n\f":
                i += 1
                continue
            if s.startswith("//", i):
                j = s.find("\n", i)
                i = n if j < 0 else j
                continue
            start = i
            string_end = self._string(i)
            if string_end is not None:
                kind = "BYTES" if s[i] in "bB" else "STRING"
                if string_end < 0:  # an unterminated or badly escaped string
                    bad = -string_end
                    self.errors.append((start, f"token recognition error at: '{s[start:bad]}'"))
                    i = bad
                    continue
                out.append(Token(kind, s[start:string_end], start))
                i = string_end
                continue
            if _is_digit(c) or (c == "." and i + 1 < n and _is_digit(s[i + 1])):
                i, kind = self._number(i)
                out.append(Token(kind, s[start:i], start))
                continue
            if _is_letter(c) or c == "_":
                while i < n and (_is_letter(s[i]) or _is_digit(s[i]) or s[i] == "_"):
                    i += 1
                word = s[start:i]
                out.append(Token(_KEYWORDS.get(word, "IDENT"), word, start))
                continue
            if c == "`":
                j = i + 1
                while j < n and (_is_letter(s[j]) or _is_digit(s[j]) or s[j] in "_.-/ "):
                    j += 1
                if j < n and s[j] == "`" and j > i + 1:
                    out.append(Token("ESC_IDENT", s[i : j + 1], start))
                    i = j + 1
                    continue
                self.errors.append((start, f"token recognition error at: '{s[i : j + 1]}'"))
                i = j + 1 if j < n and s[j] == "`" else j
                continue
            for p in _PUNCT:
                if s.startswith(p, i):
                    out.append(Token(p, p, start))
                    i += len(p)
                    break
            else:
                self.errors.append((start, f"token recognition error at: '{c}'"))
                i += 1
        out.append(Token("EOF", "<EOF>", n))
        return out

    def _number(self, i: int) -> tuple[int, str]:
        s, n = self.s, len(self.s)
        if s.startswith(("0x", "0X"), i) and i + 2 < n and s[i + 2] in _HEX and s[i + 1] == "x":
            j = i + 2
            while j < n and s[j] in _HEX:
                j += 1
            if j < n and s[j] in "uU":
                return j + 1, "UINT"
            return j, "INT"
        j = i
        while j < n and _is_digit(s[j]):
            j += 1
        kind = "INT"
        if j < n - 1 and s[j] == "." and _is_digit(s[j + 1]) or j == i:
            j += 1
            while j < n and _is_digit(s[j]):
                j += 1
            kind = "FLOAT"
        if j < n and s[j] in "eE":
            k = j + 1
            if k < n and s[k] in "+-":
                k += 1
            if k < n and _is_digit(s[k]):
                while k < n and _is_digit(s[k]):
                    k += 1
                return k, "FLOAT"
        if kind == "INT" and j < n and s[j] in "uU":
            return j + 1, "UINT"
        return j, kind

    def _string(self, i: int) -> int | None:
        """The end of a string or bytes literal starting at i, -(where lexing failed) when the
        literal does not lex, None when no literal starts here."""
        s, n = self.s, len(self.s)
        j = i
        if j < n and s[j] in "bB":
            j += 1
        raw = False
        if j < n and s[j] in "rR":
            raw = True
            j += 1
        if j >= n or s[j] not in "\"'":
            return None
        if j > i and not (j - i == 1 or (j - i == 2 and s[i] in "bB")):
            return None
        q = s[j]
        triple = s.startswith(q * 3, j)
        j += 3 if triple else 1
        while j < n:
            c = s[j]
            if triple and s.startswith(q * 3, j):
                return j + 3
            if not triple and c == q:
                return j + 1
            if not triple and c in "\r\n":
                return -j
            if c == "\\" and not raw:
                k = self._escape(j)
                if k is None:
                    return -(j + 2 if j + 1 < n else j + 1)
                j = k
                continue
            j += 1
        return -n

    def _escape(self, j: int) -> int | None:
        """The end of the escape sequence at j (a backslash), None if it is not one CEL has."""
        s, n = self.s, len(self.s)
        if j + 1 >= n:
            return None
        c = s[j + 1]
        if c in _SIMPLE_ESC:
            return j + 2
        if c in "xX":
            return j + 4 if j + 4 <= n and all(x in _HEX for x in s[j + 2 : j + 4]) else None
        if c == "u":
            return j + 6 if j + 6 <= n and all(x in _HEX for x in s[j + 2 : j + 6]) else None
        if c == "U":
            return j + 10 if j + 10 <= n and all(x in _HEX for x in s[j + 2 : j + 10]) else None
        if c in "0123":
            ok = j + 4 <= n and all("0" <= x <= "7" for x in s[j + 2 : j + 4])
            return j + 4 if ok else None
        return None


def unescape(text: str, is_bytes: bool) -> str | bytes:
    """cel-go's parser/unescape.go: the value of a string or bytes token (prefix b removed)."""
    raw = text[0] in "rR"
    if raw:
        text = text[1:]
    body = text[3:-3] if text.startswith(('"""', "'''")) and len(text) >= 6 else text[1:-1]
    if raw or "\\" not in body:
        return body.encode() if is_bytes else body
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in _SIMPLE_ESC:
            out += _SIMPLE_ESC[e].encode()
        elif e in "xXuU":
            width = {"x": 2, "X": 2, "u": 4, "U": 8}[e]
            if e in "uU" and is_bytes:
                raise ValueError("unable to unescape string")
            v = int(body[i : i + width], 16)
            i += width
            if is_bytes and e in "xX":
                out.append(v)
            else:
                if v > 0x10FFFF or 0xD800 <= v <= 0xDFFF:
                    raise ValueError("invalid unicode code point")
                out += chr(v).encode()
        else:  # octal
            v = int(body[i - 1 : i + 2], 8)
            i += 2
            if is_bytes:
                out.append(v)
            else:
                out += chr(v).encode()
    return bytes(out) if is_bytes else out.decode("utf-8", "replace")


# --- the parser -----------------------------------------------------------------------------

_RELATIONS = {
    "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in",
}  # fmt: skip
_MUL = {"*": "_*_", "/": "_/_", "%": "_%_"}
_ADD = {"+": "_+_", "-": "_-_"}
# Nodes whose visit cel-go's parser counts against its recursion depth (parser.go Visit).
_COUNTED = "counted"


class _Bail(Exception):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        lexer = _Lexer(text)
        self.toks = lexer.tokens()
        self.errors: list[tuple[int, str]] = list(lexer.errors)
        self.i = 0
        self.ids = itertools.count(1)
        self.rule_depth: dict[str, int] = {}
        self.counted: set[int] = set()  # ids of nodes the visitor's depth counter counts

    # helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "EOF":
            self.i += 1
        return t

    def expect(self, kind: str) -> Token:
        t = self.tok
        if t.kind != kind:
            self.fail(t, f"mismatched input '{t.text}' expecting '{kind}'")
        return self.advance()

    def fail(self, t: Token, message: str) -> None:
        self.errors.append((t.pos, f"Syntax error: {message}"))
        raise _Bail()

    def enter(self, rule: str, by: int = 1) -> None:
        depth = self.rule_depth.get(rule, 0) + by
        self.rule_depth[rule] = depth
        if depth > MAX_RECURSION:
            self.errors.append((-1, f"expression recursion limit exceeded: {MAX_RECURSION}"))
            raise _Bail()

    def leave(self, rule: str, by: int = 1) -> None:
        self.rule_depth[rule] -= by

    def nid(self) -> int:
        return next(self.ids)

    # grammar
    def parse(self) -> Expr:
        e = self.expr()
        if self.tok.kind != "EOF":
            t = self.tok
            self.fail(t, f"extraneous input '{t.text}' expecting <EOF>")
        return e

    def expr(self) -> Expr:
        self.enter("expr")
        cond = self.logical("||", "_||_")
        if self.tok.kind == "?":
            q = self.advance()
            yes = self.logical("||", "_||_")
            self.expect(":")
            no = self.expr()
            cond = self.call(q.pos, "_?_:_", [cond, yes, no], counted=True)
        self.leave("expr")
        return cond

    def logical(self, op: str, function: str) -> Expr:
        rule = "or" if op == "||" else "and"
        self.enter(rule)
        terms = [self.logical("&&", "_&&_") if op == "||" else self.relation()]
        ops: list[Token] = []
        while self.tok.kind == op:
            ops.append(self.advance())
            terms.append(self.logical("&&", "_&&_") if op == "||" else self.relation())
        self.leave(rule)
        if len(terms) == 1:
            return terms[0]
        return self._balanced(function, terms, ops, 0, len(ops) - 1)

    def _balanced(
        self, function: str, terms: list[Expr], ops: list[Token], lo: int, hi: int
    ) -> Expr:
        mid = (lo + hi + 1) // 2
        left = terms[mid] if mid == lo else self._balanced(function, terms, ops, lo, mid - 1)
        right = terms[mid + 1] if mid == hi else self._balanced(function, terms, ops, mid + 1, hi)
        return Call(self.nid(), ops[mid].pos, function, [left, right])

    def relation(self) -> Expr:
        self.enter("relation")
        left = self.calc()
        pushed = 0
        while self.tok.kind in _RELATIONS:
            op = self.advance()
            self.enter("relation")
            pushed += 1
            self.enter("relation")
            right = self.calc()
            self.leave("relation")
            left = self.call(op.pos, _RELATIONS[op.kind], [left, right], counted=True)
        self.leave("relation", pushed + 1)
        return left

    def calc(self) -> Expr:
        self.enter("calc")
        pushed = [0]
        left = self._calc_level(pushed, additive=True)
        self.leave("calc", pushed[0] + 1)
        return left

    def _calc_level(self, pushed: list[int], additive: bool) -> Expr:
        table = _ADD if additive else _MUL
        left = self._calc_level(pushed, additive=False) if additive else self.unary()
        while self.tok.kind in table:
            op = self.advance()
            self.enter("calc")
            pushed[0] += 1
            self.enter("calc")
            right = self._calc_level(pushed, additive=False) if additive else self.unary()
            self.leave("calc")
            left = self.call(op.pos, table[op.kind], [left, right], counted=True)
        return left

    def unary(self) -> Expr:
        t = self.tok
        if t.kind == "!":
            ops = []
            while self.tok.kind == "!":
                ops.append(self.advance())
            inner = self.member()
            if len(ops) % 2 == 0:
                return inner
            return self.call(ops[0].pos, "!_", [inner])
        if t.kind == "-" and not (
            self.peek().kind in ("INT", "FLOAT") and self.peek(2).kind != "-"
        ):
            ops = []
            while self.tok.kind == "-":
                if self.peek().kind in ("INT", "FLOAT") and len(ops) == 0:
                    break
                ops.append(self.advance())
            inner = self.member()
            if len(ops) % 2 == 0:
                return inner
            return self.call(ops[0].pos, "-_", [inner])
        return self.member()

    def member(self) -> Expr:
        self.enter("member")
        e = self.primary()
        pushed = 0
        while True:
            t = self.tok
            if t.kind == ".":
                self.advance()
                self.enter("member")
                pushed += 1
                optional = False
                if self.tok.kind == "?":
                    self.advance()
                    optional = True
                name_tok = self.tok
                if name_tok.kind == "ESC_IDENT":
                    self.advance()
                    self.errors.append((name_tok.pos, "unsupported syntax: '`'"))
                    name = name_tok.text[1:-1]
                elif name_tok.kind == "IDENT":
                    self.advance()
                    name = name_tok.text
                else:
                    self.fail(name_tok, f"no viable alternative at input '.{name_tok.text}'")
                if not optional and self.tok.kind == "(" and name_tok.kind == "IDENT":
                    open_tok = self.advance()
                    args = self.expr_list(")")
                    self.expect(")")
                    e = self.receiver_call(open_tok.pos, name, e, args)
                elif optional:
                    field_lit = Literal(self.nid(), name_tok.pos, name)
                    e = Call(self.nid(), t.pos, "_?._", [e, field_lit])
                    self.counted.add(e.id)
                else:
                    e = Select(self.nid(), t.pos, e, name)
                    self.counted.add(e.id)
            elif t.kind == "[":
                self.advance()
                self.enter("member")
                pushed += 1
                function = "_[_]"
                if self.tok.kind == "?":
                    self.advance()
                    function = "_[?_]"
                index = self.expr()
                self.expect("]")
                e = self.call(t.pos, function, [e, index], counted=True)
            else:
                break
        self.leave("member", pushed + 1)
        return e

    def primary(self) -> Expr:
        self.enter("primary")
        try:
            return self._primary()
        finally:
            self.leave("primary")

    def _primary(self) -> Expr:
        t = self.tok
        leading_dot = False
        if t.kind == "." and self.peek().kind == "IDENT":
            leading_dot = True
            self.advance()
            t = self.tok
        if t.kind == "IDENT":
            # A message construction: IDENT ('.' IDENT)* '{'
            k = 1
            while self.peek(k).kind == "." and self.peek(k + 1).kind == "IDENT":
                k += 2
            if self.peek(k).kind == "{":
                names = []
                for _ in range(0, k, 2):
                    names.append(self.advance().text)
                    if self.tok.kind == ".":
                        self.advance()
                brace = self.advance()
                fields = self.field_inits()
                self.expect("}")
                name = ("." if leading_dot else "") + ".".join(names)
                return StructExpr(self.nid(), brace.pos, name, fields)
            self.advance()
            name = ("." if leading_dot else "") + t.text
            if self.tok.kind == "(":
                open_tok = self.advance()
                args = self.expr_list(")")
                self.expect(")")
                if t.text in RESERVED:
                    self.errors.append((t.pos, f"reserved identifier: {t.text}"))
                return self.global_call(open_tok.pos, name, args)
            if t.text in RESERVED:
                self.errors.append((t.pos, f"reserved identifier: {t.text}"))
            return Ident(self.nid(), t.pos, name)
        if leading_dot:
            self.fail(t, f"no viable alternative at input '.{t.text}'")
        if t.kind == "(":
            self.advance()
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "[":
            self.advance()
            elements: list[Expr] = []
            optionals: list[int] = []
            while self.tok.kind != "]":
                if self.tok.kind == "?":
                    self.advance()
                    optionals.append(len(elements))
                elements.append(self.expr())
                if self.tok.kind == ",":
                    self.advance()
                    continue
                break
            self.expect("]")
            return ListExpr(self.nid(), t.pos, elements, optionals)
        if t.kind == "{":
            self.advance()
            entries: list[tuple[Expr, Expr, bool]] = []
            while self.tok.kind != "}":
                optional = False
                if self.tok.kind == "?":
                    self.advance()
                    optional = True
                key = self.expr()
                self.expect(":")
                entries.append((key, self.expr(), optional))
                if self.tok.kind == ",":
                    self.advance()
                    continue
                break
            self.expect("}")
            return MapExpr(self.nid(), t.pos, entries)
        return self.literal()

    def field_inits(self) -> list[tuple[str, Expr, bool]]:
        fields: list[tuple[str, Expr, bool]] = []
        while self.tok.kind != "}":
            optional = False
            if self.tok.kind == "?":
                self.advance()
                optional = True
            name_tok = self.tok
            if name_tok.kind not in ("IDENT", "ESC_IDENT"):
                self.fail(name_tok, f"mismatched input '{name_tok.text}' expecting IDENTIFIER")
            self.advance()
            if name_tok.kind == "ESC_IDENT":
                self.errors.append((name_tok.pos, "unsupported syntax: '`'"))
            self.expect(":")
            fields.append((name_tok.text.strip("`"), self.expr(), optional))
            if self.tok.kind == ",":
                self.advance()
                continue
            break
        return fields

    def literal(self) -> Expr:
        from dradash.dra.cel.values import UInt

        t = self.tok
        sign = ""
        if t.kind == "-" and self.peek().kind in ("INT", "FLOAT"):
            sign = "-"
            self.advance()
            t = self.tok
        kind = t.kind
        pos = t.pos if not sign else t.pos - 1
        if kind == "INT":
            self.advance()
            text = t.text
            value = int(text[2:], 16) if text[:2] in ("0x", "0X") else int(text)
            value = -value if sign else value
            if not -(2**63) <= value < 2**63:
                self.errors.append((pos, "invalid int literal"))
            return Literal(self.nid(), pos, value)
        if kind == "UINT":
            self.advance()
            text = t.text[:-1]
            value = int(text[2:], 16) if text[:2] in ("0x", "0X") else int(text)
            if value >= 2**64:
                self.errors.append((pos, "invalid uint literal"))
            return Literal(self.nid(), pos, UInt(value))
        if kind == "FLOAT":
            self.advance()
            f = float(sign + t.text)
            if math.isinf(f):
                self.errors.append((pos, "invalid double literal"))
            return Literal(self.nid(), pos, f)
        if kind in ("STRING", "BYTES"):
            self.advance()
            text = t.text[1:] if kind == "BYTES" else t.text
            try:
                value: Any = unescape(text, kind == "BYTES")
            except ValueError as exc:
                self.errors.append((pos, str(exc)))
                value = "" if kind == "STRING" else b""
            return Literal(self.nid(), pos, value)
        if kind in ("TRUE", "FALSE"):
            self.advance()
            return Literal(self.nid(), pos, kind == "TRUE")
        if kind == "NULL":
            self.advance()
            return Literal(self.nid(), pos, None)
        if kind == "EOF":
            self.fail(t, "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
                      "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
                      "IDENTIFIER}")  # fmt: skip
        self.fail(t, f"extraneous input '{t.text}' expecting {{'[', '{{', '(', '.', '-', '!', "
                  "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
                  "IDENTIFIER}")  # fmt: skip
        raise AssertionError("unreachable")

    def expr_list(self, close: str) -> list[Expr]:
        args: list[Expr] = []
        if self.tok.kind == close:
            return args
        args.append(self.expr())
        while self.tok.kind == ",":
            self.advance()
            args.append(self.expr())
        return args

    def call(self, pos: int, function: str, args: list[Expr], counted: bool = False) -> Expr:
        e = Call(self.nid(), pos, function, args)
        if counted:
            self.counted.add(e.id)
        return e

    # macros
    def global_call(self, pos: int, name: str, args: list[Expr]) -> Expr:
        if name == "has" and len(args) == 1:
            arg = args[0]
            if isinstance(arg, Select) and not arg.test_only:
                return Select(self.nid(), pos, arg.operand, arg.field, test_only=True)
            self.errors.append((arg.pos, "invalid argument to has() macro"))
            return Literal(self.nid(), pos, None)
        return Call(self.nid(), pos, name, args)

    def receiver_call(self, pos: int, name: str, target: Expr, args: list[Expr]) -> Expr:
        expanded = _expand_receiver_macro(self, pos, name, target, args)
        if expanded is not None:
            self.counted.add(expanded.id)
            return expanded
        e = Call(self.nid(), pos, name, args, target)
        self.counted.add(e.id)
        return e


def _expand_receiver_macro(
    p: _Parser, pos: int, name: str, target: Expr, args: list[Expr]
) -> Expr | None:
    n = len(args)
    if name == "bind" and n == 3 and isinstance(target, Ident) and target.name == "cel":
        if not isinstance(args[0], Ident):
            p.errors.append((args[0].pos, "cel.bind() variable names must be simple identifiers"))
            return Literal(p.nid(), pos, None)
        var = args[0].name
        return Comprehension(
            p.nid(), pos, ListExpr(p.nid(), pos, []), "#unused", "", var, args[1],
            Literal(p.nid(), pos, False), Ident(p.nid(), pos, var), args[2], macro="bind",
        )  # fmt: skip
    if name in ("all", "exists", "exists_one", "existsOne") and n == 2:
        return _quantifier(p, pos, name, target, args[0], "", args[1])
    if name in ("all", "exists", "existsOne", "exists_one") and n == 3:
        return _quantifier(p, pos, name, target, args[0], args[1], args[2])
    if name == "map" and n in (2, 3):
        return _map(p, pos, target, args)
    if name == "filter" and n == 2:
        return _filter(p, pos, target, args)
    if name in ("transformList", "transformMap") and n in (3, 4):
        return _transform(p, pos, name, target, args)
    if name in ("transformMapEntry",) and n in (3, 4):
        return _transform(p, pos, name, target, args)
    if name in ("optMap", "optFlatMap") and n == 2:
        return _opt_map(p, pos, name, target, args)
    return None


def _iter_name(
    p: _Parser, arg: Expr, message: str = "argument must be a simple name"
) -> str | None:
    if isinstance(arg, Ident):
        if arg.name in (ACCUMULATOR, "__result__"):
            p.errors.append((arg.pos, "iteration variable overwrites accumulator variable"))
            return None
        return arg.name
    p.errors.append((arg.pos, message))
    return None


def _accu(p: _Parser, pos: int) -> Ident:
    return Ident(p.nid(), pos, ACCUMULATOR)


def _quantifier(
    p: _Parser, pos: int, name: str, target: Expr, v1: Expr, v2: Expr | str, pred: Expr
) -> Expr:
    two = isinstance(v2, Expr)
    var = _iter_name(p, v1)
    var2 = _iter_name(p, v2) if isinstance(v2, Expr) else ""
    if var is None or var2 is None:
        return Literal(p.nid(), pos, None)
    if two and var == var2:
        p.errors.append((v2.pos, "duplicate variable name: " + var))  # type: ignore[union-attr]
        return Literal(p.nid(), pos, None)
    if name == "all":
        init: Expr = Literal(p.nid(), pos, True)
        cond: Expr = Call(p.nid(), pos, "@not_strictly_false", [_accu(p, pos)])
        step: Expr = Call(p.nid(), pos, "_&&_", [_accu(p, pos), pred])
        result: Expr = _accu(p, pos)
    elif name == "exists":
        init = Literal(p.nid(), pos, False)
        cond = Call(
            p.nid(), pos, "@not_strictly_false", [Call(p.nid(), pos, "!_", [_accu(p, pos)])]
        )
        step = Call(p.nid(), pos, "_||_", [_accu(p, pos), pred])
        result = _accu(p, pos)
    else:  # exists_one / existsOne
        init = Literal(p.nid(), pos, 0)
        cond = Literal(p.nid(), pos, True)
        plus_one = Call(p.nid(), pos, "_+_", [_accu(p, pos), Literal(p.nid(), pos, 1)])
        step = Call(p.nid(), pos, "_?_:_", [pred, plus_one, _accu(p, pos)])
        result = Call(p.nid(), pos, "_==_", [_accu(p, pos), Literal(p.nid(), pos, 1)])
    return Comprehension(
        p.nid(), pos, target, var, var2, ACCUMULATOR, init, cond, step, result, macro=name
    )


def _map(p: _Parser, pos: int, target: Expr, args: list[Expr]) -> Expr:
    var = _iter_name(p, args[0], "argument is not an identifier")
    if var is None:
        return Literal(p.nid(), pos, None)
    fn = args[-1]
    step: Expr = Call(p.nid(), pos, "_+_", [_accu(p, pos), ListExpr(p.nid(), pos, [fn])])
    if len(args) == 3:
        step = Call(p.nid(), pos, "_?_:_", [args[1], step, _accu(p, pos)])
    return Comprehension(
        p.nid(), pos, target, var, "", ACCUMULATOR, ListExpr(p.nid(), pos, []),
        Literal(p.nid(), pos, True), step, _accu(p, pos), macro="map",
    )  # fmt: skip


def _filter(p: _Parser, pos: int, target: Expr, args: list[Expr]) -> Expr:
    var = _iter_name(p, args[0], "argument is not an identifier")
    if var is None:
        return Literal(p.nid(), pos, None)
    add = Call(
        p.nid(), pos, "_+_", [_accu(p, pos), ListExpr(p.nid(), pos, [Ident(p.nid(), pos, var)])]
    )
    step = Call(p.nid(), pos, "_?_:_", [args[1], add, _accu(p, pos)])
    return Comprehension(
        p.nid(), pos, target, var, "", ACCUMULATOR, ListExpr(p.nid(), pos, []),
        Literal(p.nid(), pos, True), step, _accu(p, pos), macro="filter",
    )  # fmt: skip


def _transform(p: _Parser, pos: int, name: str, target: Expr, args: list[Expr]) -> Expr:
    """ext.TwoVarComprehensions: transformList, transformMap, transformMapEntry."""
    var = _iter_name(p, args[0])
    var2 = _iter_name(p, args[1])
    if var is None or var2 is None:
        return Literal(p.nid(), pos, None)
    if var == var2:
        p.errors.append((args[1].pos, "duplicate variable name: " + var))
        return Literal(p.nid(), pos, None)
    fn = args[-1]
    if name == "transformList":
        init: Expr = ListExpr(p.nid(), pos, [])
        step: Expr = Call(p.nid(), pos, "_+_", [_accu(p, pos), ListExpr(p.nid(), pos, [fn])])
    elif name == "transformMap":
        init = MapExpr(p.nid(), pos, [])
        step = Call(p.nid(), pos, "cel.@mapInsert", [_accu(p, pos), Ident(p.nid(), pos, var), fn])
    else:
        init = MapExpr(p.nid(), pos, [])
        step = Call(p.nid(), pos, "cel.@mapInsert", [_accu(p, pos), fn])
    if len(args) == 4:
        step = Call(p.nid(), pos, "_?_:_", [args[2], step, _accu(p, pos)])
    return Comprehension(
        p.nid(), pos, target, var, var2, ACCUMULATOR, init, Literal(p.nid(), pos, True), step,
        _accu(p, pos), macro=name,
    )  # fmt: skip


def _opt_map(p: _Parser, pos: int, name: str, target: Expr, args: list[Expr]) -> Expr:
    """cel.OptionalTypes' optMap / optFlatMap (cel/library.go)."""
    if not isinstance(args[0], Ident):
        p.errors.append((args[0].pos, f"{name}() variable name must be a simple identifier"))
        return Literal(p.nid(), pos, None)
    var = args[0].name
    has_value = Call(p.nid(), pos, "hasValue", [], target)
    value = Call(p.nid(), pos, "value", [], _copy(p, target))
    bound: Expr = Comprehension(
        p.nid(), pos, ListExpr(p.nid(), pos, []), "#unused", "", var, value,
        Literal(p.nid(), pos, False), Ident(p.nid(), pos, var), args[1], macro="bind",
    )  # fmt: skip
    if name == "optMap":
        bound = Call(p.nid(), pos, "optional.of", [bound])
    none = Call(p.nid(), pos, "optional.none", [])
    return Call(p.nid(), pos, "_?_:_", [has_value, bound, none])


def _copy(p: _Parser, e: Expr) -> Expr:
    """A copy of an expression with fresh ids (a macro uses its target twice)."""
    import copy

    clone = copy.deepcopy(e)
    for node in walk(clone):
        node.id = p.nid()
    return clone


def _visitor_depth(root: Expr, counted: set[int]) -> int:
    """The deepest nesting of the nodes cel-go's parser visitor counts (parser.go Visit)."""
    best = 0
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if node.id in counted:
            depth += 1
            best = max(best, depth)
        stack.extend((c, depth) for c in children(node))
    return best


def parse(text: str) -> Expr:
    """The AST of a CEL expression, or CelSyntaxError with cel-go's messages."""
    p = _Parser(text)
    try:
        root = p.parse()
    except _Bail:
        root = None
    if root is not None and not p.errors and _visitor_depth(root, p.counted) > MAX_RECURSION:
        p.errors.append((-1, "max recursion depth exceeded"))
    if p.errors or root is None:
        raise CelSyntaxError(p.errors)
    return root
