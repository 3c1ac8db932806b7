"""Parsed objects made compact: one copy of each repeated string and of each repeated flat dict.

A snapshot repeats itself: every Pod says ``"kind": "Pod"`` and ``"status": "True"``, thousands
of devices publish ``{"string": "NVIDIA H100 80GB HBM3"}``, claims name the same drivers, pools
and nodes as the slices. A JSON parser gives each occurrence its own object; at 20,000 nodes
that is gigabytes (issue 28). Nothing changes a parsed object once it is read (ClusterState and
everything after it only read), so equal strings and equal dicts of plain values can be one
object: the data read is the same, only smaller.
"""

from __future__ import annotations

from typing import Any

# Deeper than any Kubernetes object dradash reads; below it an object is left as it is, so
# that a hostile bundle's nesting costs no recursion.
MAX_DEPTH = 32

_PLAIN = (str, int, float, bool)


class Compactor:
    """Call it on each parsed object, in place; keep one per snapshot while building, then drop
    it (it holds every distinct string and flat dict it saw)."""

    __slots__ = ("_dicts", "_strings")

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        # (keys, values, the values' types) → the first dict seen with them (True == 1 == 1.0
        # in a tuple, so the types are part of the key).
        self._dicts: dict[tuple[tuple[Any, ...], ...], dict[str, Any]] = {}

    def __call__(self, obj: Any) -> Any:
        """``obj`` compacted (a dict of plain values may come back as an equal, earlier one)."""
        if type(obj) is dict:
            return self._dict(obj, 0)
        if type(obj) is list:
            self._list(obj, 0)
        return obj

    def _dict(self, obj: dict[str, Any], depth: int) -> dict[str, Any]:
        strings = self._strings
        flat = True
        for key, value in obj.items():
            kind = type(value)
            if kind is str:
                # Same key, so the dict does not resize while it is walked.
                obj[key] = strings.setdefault(value, value)
            elif kind is dict:
                flat = False
                if depth < MAX_DEPTH:
                    obj[key] = self._dict(value, depth + 1)
            elif kind is list:
                flat = False
                if depth < MAX_DEPTH:
                    self._list(value, depth + 1)
            elif value is not None and kind not in _PLAIN:
                flat = False
        if not flat:
            return obj
        values = tuple(obj.values())
        return self._dicts.setdefault((tuple(obj), values, tuple(map(type, values))), obj)

    def _list(self, obj: list[Any], depth: int) -> None:
        strings = self._strings
        for i, value in enumerate(obj):
            kind = type(value)
            if kind is str:
                obj[i] = strings.setdefault(value, value)
            elif depth < MAX_DEPTH:
                if kind is dict:
                    obj[i] = self._dict(value, depth + 1)
                elif kind is list:
                    self._list(value, depth + 1)
