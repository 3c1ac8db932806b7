"""Typed htmx requests and the one rule views follow for partial rendering."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def template_for(request: HtmxHttpRequest, name: str, partial: str) -> str:
    """The page template, or only its ``partial`` for an htmx request that is not boosted."""
    if request.htmx and not request.htmx.boosted:
        return f"{name}#{partial}"
    return name
