"""The API's JSON parser (settings.REST_FRAMEWORK DEFAULT_PARSER_CLASSES).

In its own module: DRF imports the parser classes while it defines APIView, so this must not
import rest_framework.views (dradash.api does).
"""

from __future__ import annotations

from typing import Any

import orjson
from rest_framework import exceptions
from rest_framework.parsers import BaseParser

# Deeper JSON is refused (400): no Kubernetes object comes near it, and code that walks a
# structure recursively would run out of stack long before orjson's own limit of 1024.
MAX_JSON_DEPTH = 64
TOO_DEEP = f"JSON parse error - nested more than {MAX_JSON_DEPTH} levels deep"


class JSONParser(BaseParser):
    """JSON bodies, parsed by orjson; malformed, non-UTF-8 or too deeply nested JSON is a 400.

    (DRF's parser recursed in json.loads and answered a deeply nested body with a 500.)
    """

    media_type = "application/json"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        data = stream.read() if stream is not None else b""
        try:
            parsed = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            if "depth" in str(exc):  # orjson's own limit (1024 levels)
                raise exceptions.ParseError(TOO_DEEP) from None
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
        depth = json_depth(parsed, limit=MAX_JSON_DEPTH)
        if depth > MAX_JSON_DEPTH:
            raise exceptions.ParseError(TOO_DEEP)
        return parsed


def json_depth(value: Any, *, limit: int) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0), counted without
    recursion and only up to limit + 1."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children if isinstance(child, (dict, list)))
    return deepest
