"""The link to the diff with the previous snapshot, for the per-snapshot nav."""

from __future__ import annotations

from typing import Any

from django import template

from dradash.compare.selectors import previous_snapshot_id

register = template.Library()


@register.simple_tag
def previous_snapshot(snapshot: Any) -> int | None:
    """The id of the same cluster's snapshot taken just before ``snapshot``, or None."""
    return previous_snapshot_id(snapshot)
