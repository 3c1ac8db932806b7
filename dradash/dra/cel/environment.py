"""Compiling selectors: length limit, parse, check, compile; compiled programs are cached."""

from __future__ import annotations

from functools import lru_cache

from dradash.dra.cel.compiler import CelCompileError, Program, compile_expression
from dradash.dra.cel.parser import CelSyntaxError, parse

MAX_EXPRESSION_LENGTH = 10 * 1024  # resourceapi.CELSelectorExpressionMaxLength


@lru_cache(maxsize=512)
def compile_selector(expression: str, *, consumable_capacity: bool = True) -> Program:
    """A checked, compiled selector, or CelCompileError with Kubernetes' wording.

    ``consumable_capacity=False`` checks a new expression as an apiserver with the
    DRAConsumableCapacity gate off would (no ``device.allowMultipleAllocations``); the scheduler
    evaluates stored expressions, which always know the field.
    """
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CelCompileError(
            f"Too long: may not be more than {MAX_EXPRESSION_LENGTH} bytes "
            f"(this expression has {len(expression)})"
        )
    try:
        tree = parse(expression)
    except CelSyntaxError as exc:
        raise CelCompileError(f"compilation failed: {exc}") from None
    try:
        return compile_expression(expression, tree, allow_multiple_allocations=consumable_capacity)
    except CelCompileError as exc:
        message = str(exc)
        if message.startswith("must evaluate"):
            raise
        raise CelCompileError(f"compilation failed: ERROR: <input>: {message}") from None
    except RecursionError:
        raise CelCompileError("compilation failed: the expression is nested too deeply") from None
