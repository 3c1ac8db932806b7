"""Compiling selectors as ``k8s.io/dynamic-resource-allocation/cel`` does (compile.go at
v0.36.2 and 1.37): the length limit, cel-go's parser, checker and AST validators, the
result-type rule, then the program (planner.py). Compiled programs are cached.

Which environment compiles depends on the release and the gates (``Dialect``): the scheduler
and unchanged stored selectors use ``StoredExpressions``, which ignores feature gates; the
apiserver checks a new or changed selector with ``NewExpressions``, which honours them.
"""

from __future__ import annotations

from functools import lru_cache

from dradash.dra.cel.checker import CheckError, check
from dradash.dra.cel.compiler import CelCompileError, Program, plan
from dradash.dra.cel.dialect import DEFAULT, Dialect
from dradash.dra.cel.kube_estimate import TOO_COMPLEX, too_complex
from dradash.dra.cel.syntax import CelSyntaxError, parse

MAX_EXPRESSION_LENGTH = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength


def display(expression: str, errors: list[tuple[int, str]]) -> str:
    """cel-go's Errors.ToDisplayString: "ERROR: <input>:line:col: message" and a snippet."""
    lines = expression.split("\n")
    out = []
    for offset, message in errors:
        if offset < 0:
            out.append(f"ERROR: <input>:-1:0: {message}")
            continue
        line = expression.count("\n", 0, offset)
        column = offset - (expression.rfind("\n", 0, offset) + 1)
        text = f"ERROR: <input>:{line + 1}:{column + 1}: {message}"
        snippet = lines[line].replace("\t", " ")
        marker = "".join("\uff0e" if len(c.encode()) > 1 else "." for c in snippet[:column])
        caret = "\uff3e" if column < len(snippet) and len(snippet[column].encode()) > 1 else "^"
        out.append(f"{text}\n | {snippet}\n | {marker}{caret}")
    return "\n".join(out)


@lru_cache(maxsize=512)
def compile_selector(expression: str, dialect: Dialect = DEFAULT) -> Program:
    """A checked, compiled selector, or CelCompileError with Kubernetes' wording."""
    size = len(expression.encode())
    if size > MAX_EXPRESSION_LENGTH:
        raise CelCompileError(
            f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes "
            f"(this expression has {size})"
        )
    try:
        tree = parse(expression)
        checked = check(tree, dialect)
    except (CelSyntaxError, CheckError) as exc:
        raise CelCompileError("compilation failed: " + display(expression, exc.errors)) from None
    except RecursionError:
        raise CelCompileError(
            "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"
        ) from None
    output = checked.output_type
    if output.kind not in ("bool", "any") and not (output.kind == "dyn" and dialect.dyn_attributes):
        raise CelCompileError(f"must evaluate to bool or the unknown type, not {output}")
    try:
        program = plan(expression, checked, list_values=dialect.list_values)
    except RecursionError:
        raise CelCompileError(
            "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"
        ) from None
    # The apiserver estimates a new selector's worst-case cost; the scheduler does not.
    if dialect.new_expressions:
        try:
            refused = too_complex(checked)
        except RecursionError:
            raise CelCompileError(
                "compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"
            ) from None
        if refused:
            raise CelCompileError(TOO_COMPLEX)
    return program
