"""Evaluating a selector against a stored snapshot or inline ResourceSlices."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from dradash.dra import matching
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import DEVICE_KINDS, snapshot_state


def selector_evaluate(
    *,
    expression: str,
    snapshot: Snapshot | None = None,
    device_class: str | None = None,
    resource_slices: list[dict[str, Any]] | None = None,
) -> matching.Evaluation:
    """Raises matching.UnknownDeviceClass for a class the snapshot does not have."""
    limit = settings.DRADASH_SELECTOR_TIME_LIMIT
    if snapshot is not None:
        return matching.evaluate(
            snapshot_state(snapshot, DEVICE_KINDS),
            expression,
            device_class=device_class,
            time_limit=limit,
        )
    return matching.evaluate_slices(resource_slices or [], expression, time_limit=limit)
