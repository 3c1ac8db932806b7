"""Defensive accessors: snapshots come from anywhere, so a field may be missing or mistyped."""

from __future__ import annotations

from datetime import UTC, datetime
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


def timestamp(value: str) -> datetime | None:
    """An RFC 3339 timestamp (``2025-01-01T00:00:00Z``) as an aware datetime; None if it is not
    one."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
