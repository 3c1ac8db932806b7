"""The links to the previous snapshot's diff and to the newest snapshot, for the per-snapshot
nav."""

from __future__ import annotations

from typing import Any

from django import template

from dradash.compare.selectors import newest_snapshot_id, previous_snapshot_id

register = template.Library()


@register.simple_tag
def previous_snapshot(snapshot: Any) -> int | None:
    """The id of the same cluster's snapshot taken just before ``snapshot``, or None."""
    return previous_snapshot_id(snapshot)


@register.simple_tag
def newest_snapshot(snapshot: Any) -> int | None:
    """The id of the same cluster's newest snapshot when ``snapshot`` is not it, or None."""
    return newest_snapshot_id(snapshot)
