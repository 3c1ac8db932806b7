"""Kubernetes' DRA CEL environment: cel-go's parser, checker and interpreter, ported.

``compile_selector(expression)`` checks and compiles a device selector the way
``k8s.io/dynamic-resource-allocation/cel`` does (a ``CelCompileError`` otherwise);
``Program.matches(device)`` answers as the scheduler's allocator would, or raises
``CelEvalError``; ``evaluate_devices`` answers for a whole fleet at once.
"""

from __future__ import annotations

from dradash.dra.cel.batch import DeviceVerdict, Selector, evaluate_devices
from dradash.dra.cel.compiler import COST_LIMIT, CelCompileError, Program
from dradash.dra.cel.device import DeviceInput, cel_device
from dradash.dra.cel.environment import MAX_EXPRESSION_LENGTH, compile_selector
from dradash.dra.cel.values import CelEvalError

__all__ = [
    "COST_LIMIT",
    "MAX_EXPRESSION_LENGTH",
    "CelCompileError",
    "CelEvalError",
    "DeviceInput",
    "DeviceVerdict",
    "Program",
    "Selector",
    "cel_device",
    "compile_selector",
    "evaluate_devices",
]
