"""Defensive accessors: snapshots come from anywhere, so a field may be missing or mistyped."""

from __future__ import annotations

from typing import Any


def mapping(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def items(value: Any) -> list[Any]:
    return value if type(value) is list else []


def mappings(value: Any) -> list[dict[str, Any]]:
    if type(value) is not list:
        return []
    return [v for v in value if type(v) is dict]


def text(value: Any) -> str:
    return value if type(value) is str else ""


def number(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def strings(value: Any) -> list[str]:
    return [v for v in items(value) if isinstance(v, str)]


def dig(obj: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj
