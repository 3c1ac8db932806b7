"""Render the Helm and Go templates among the fixtures, as ``helm template --set …`` would.

Only the part of Go's text/template (and Sprig) that the fixtures use: ``{{ }}`` actions with
``{{-``/``-}}`` trimming; ``if``/``else``/``with``/``end``; ``$var := …``; pipelines; field
paths (``.Values.a.b``, ``.Index``); and the functions include (the chart's helpers, given by
name), quote, trim, eq, not, and, semverCompare (``<X.Y`` and ``>=X.Y``). Anything else raises
ValueError, so a fixture using more fails loudly instead of rendering wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\(|\)|\||:=|[^\s()|]+')


@dataclass
class _Node:
    kind: str  # "text" | "output" | "assign" | "if" | "with"
    text: str = ""
    body: list[_Node] = field(default_factory=list)
    orelse: list[_Node] = field(default_factory=list)


def render(
    text: str,
    values: dict[str, Any] | None = None,
    *,
    helpers: dict[str, str] | None = None,
    **top: Any,
) -> str:
    """The template ``text`` rendered with ``.Values`` = ``values``, the named templates
    ``include`` returns (``helpers``), and other top-level fields (``Index=3``)."""
    nodes, rest = _parse(_tokens(text), 0)
    if rest is not None:
        raise ValueError(f"unexpected {{{{ {rest} }}}}")
    ctx = _Context({"Values": values or {}, **top}, helpers or {})
    return ctx.run(nodes, ctx.root)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, trim_next = 0, False
    for m in _ACTION.finditer(text):
        before = text[pos : m.start()]
        if trim_next:
            before = before.lstrip()
        if m.group(1):
            before = before.rstrip()
        out += [("text", before), ("action", m.group(2).strip())]
        pos, trim_next = m.end(), bool(m.group(3))
    after = text[pos:]
    out.append(("text", after.lstrip() if trim_next else after))
    return out


def _parse(tokens: list[tuple[str, str]], i: int, *, inside: bool = False) -> Any:
    """(nodes, what ended them: "end", "else" or None at the end of the text), and the index
    after, when ``inside`` a block."""
    nodes: list[_Node] = []
    while i < len(tokens):
        kind, value = tokens[i]
        i += 1
        if kind == "text":
            nodes.append(_Node("text", value))
            continue
        word = value.split(maxsplit=1)[0] if value else ""
        if word in ("end", "else"):
            if not inside:
                raise ValueError(f"{{{{ {value} }}}} outside a block")
            return nodes, word, i
        if word in ("if", "with"):
            node = _Node(word, value[len(word) :].strip())
            node.body, ended, i = _parse(tokens, i, inside=True)
            if ended == "else":
                node.orelse, ended, i = _parse(tokens, i, inside=True)
            if ended != "end":
                raise ValueError(f"{{{{ {value} }}}} has no end")
            nodes.append(node)
        elif ":=" in value:
            nodes.append(_Node("assign", value))
        else:
            nodes.append(_Node("output", value))
    if inside:
        raise ValueError("a block has no end")
    return nodes, None


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value != [] and value != {}


def _semver_compare(constraint: str, version: str) -> bool:
    match = re.fullmatch(r"(<|>=)\s*(\d+)\.(\d+)", constraint.strip())
    found = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", str(version).strip())
    if match is None or found is None:
        raise ValueError(f"semverCompare {constraint!r} {version!r} is not supported here")
    want = (int(match[2]), int(match[3]))
    have = (int(found[1]), int(found[2]))
    return have < want if match[1] == "<" else have >= want


class _Context:
    def __init__(self, root: dict[str, Any], helpers: dict[str, str]) -> None:
        self.root = root
        self.vars: dict[str, Any] = {}
        self.functions: dict[str, Callable[..., Any]] = {
            "include": lambda name, _dot: helpers[name],
            "quote": lambda value: '"' + str(value).replace('"', '\\"') + '"',
            "trim": lambda value: str(value).strip(),
            "eq": lambda a, b: a == b,
            "not": lambda a: not _truthy(a),
            "and": lambda *args: next((a for a in args if not _truthy(a)), args[-1]),
            "semverCompare": _semver_compare,
        }

    def run(self, nodes: list[_Node], dot: Any) -> str:
        out = []
        for node in nodes:
            if node.kind == "text":
                out.append(node.text)
            elif node.kind == "output":
                value = self.pipeline(_TOKEN.findall(node.text), dot)
                out.append("" if value is None else str(value))
            elif node.kind == "assign":
                name, _, expression = node.text.partition(":=")
                self.vars[name.strip()] = self.pipeline(_TOKEN.findall(expression), dot)
            else:
                value = self.pipeline(_TOKEN.findall(node.text), dot)
                if _truthy(value):
                    out.append(self.run(node.body, value if node.kind == "with" else dot))
                else:
                    out.append(self.run(node.orelse, dot))
        return "".join(out)

    def pipeline(self, tokens: list[str], dot: Any) -> Any:
        commands: list[list[str]] = [[]]
        depth = 0
        for token in tokens:
            depth += (token == "(") - (token == ")")
            if token == "|" and depth == 0:
                commands.append([])
            else:
                commands[-1].append(token)
        value: Any = None
        for i, command in enumerate(commands):
            value = self.command(command, dot, piped=(value,) if i else ())
        return value

    def command(self, tokens: list[str], dot: Any, piped: tuple[Any, ...]) -> Any:
        if tokens and tokens[0] in self.functions:
            args = []
            i = 1
            while i < len(tokens):
                arg, i = self.operand(tokens, i, dot)
                args.append(arg)
            return self.functions[tokens[0]](*args, *piped)
        value, i = self.operand(tokens, 0, dot)
        if i != len(tokens) or piped:
            raise ValueError(f"cannot evaluate {' '.join(tokens)!r} here")
        return value

    def operand(self, tokens: list[str], i: int, dot: Any) -> tuple[Any, int]:
        token = tokens[i]
        if token == "(":
            depth, j = 1, i + 1
            while depth:
                depth += (tokens[j] == "(") - (tokens[j] == ")")
                j += 1
            return self.pipeline(tokens[i + 1 : j - 1], dot), j
        if token.startswith('"'):
            return token[1:-1].replace('\\"', '"'), i + 1
        if token == ".":
            return dot, i + 1
        if token.startswith("."):
            value = dot
            for part in token[1:].split("."):
                value = value.get(part) if isinstance(value, dict) else None
            return value, i + 1
        if token.startswith("$"):
            return self.vars[token], i + 1
        if token in ("true", "false"):
            return token == "true", i + 1
        raise ValueError(f"cannot evaluate {token!r} here")
