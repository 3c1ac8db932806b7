"""Parsing CEL with cel-python's grammar, extended with the optional syntax Kubernetes enables.

cel-python's Lark grammar (``celpy/cel.lark``) covers standard CEL. Kubernetes' base environment
adds ``cel.OptionalTypes()`` (since 1.28), whose syntax is optional field selection ``a.?b`` and
optional indexing ``a[?k]``. The grammar is read from cel-python at import and extended here with
those two rules; the resulting tree has cel-python's node names plus ``member_dot_opt`` and
``member_index_opt``.
"""

from __future__ import annotations

import re
from pathlib import Path

import celpy
import lark
from celpy.celparser import CELParser

_BASE = (Path(celpy.__file__).parent / "cel.lark").read_text()
_MEMBER = "member         : member_dot | member_dot_arg | member_index | member_object | primary"
if _MEMBER not in _BASE:  # pragma: no cover - guards an upgrade of cel-python
    raise ImportError("cel-python's grammar changed; dradash.dra.cel.parser needs updating")
GRAMMAR = _BASE.replace(
    _MEMBER,
    "member         : member_dot | member_dot_opt | member_dot_arg | member_index"
    " | member_index_opt | member_object | primary\n"
    'member_dot_opt : member ".?" IDENT\n'
    'member_index_opt : member "[?" expr "]"',
)

_PARSER = lark.Lark(
    GRAMMAR,
    parser="lalr",
    start="expr",
    g_regex_flags=re.M,
    lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
    propagate_positions=True,
    maybe_placeholders=False,
    priority="invert",
    cache=True,  # building the LALR tables takes seconds; Lark keeps them in a temp file
)


class CelSyntaxError(ValueError):
    """A CEL expression that does not parse; the message carries "Syntax error"."""


def parse(expression: str) -> lark.Tree:
    try:
        return _PARSER.parse(expression)
    except lark.exceptions.UnexpectedInput as exc:
        line, column = getattr(exc, "line", "?"), getattr(exc, "column", "?")
        if isinstance(exc, lark.exceptions.UnexpectedCharacters):
            char = expression[exc.pos_in_stream : exc.pos_in_stream + 1]
            what = f"token recognition error at: {char!r}"
        elif isinstance(exc, lark.exceptions.UnexpectedEOF) or not getattr(exc, "token", ""):
            what = "unexpected end of input"
        else:
            what = f"mismatched input {str(exc.token)!r}"
        raise CelSyntaxError(f"ERROR: <input>:{line}:{column}: Syntax error: {what}") from None
    except lark.exceptions.LarkError as exc:  # pragma: no cover - other parser failures
        raise CelSyntaxError(f"ERROR: <input>: Syntax error: {exc}") from None
