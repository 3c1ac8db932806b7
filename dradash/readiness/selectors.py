"""Reads for the cluster administrator: the acceptance checklist and the capacity outlook."""

from __future__ import annotations

from collections import Counter
from typing import Any

from dradash.dra import capacity, checklist, inventory
from dradash.dra.state import ClusterState
from dradash.explorer.selectors import snapshot_findings


def snapshot_checklist(state: ClusterState) -> list[checklist.CheckItem]:
    """The production acceptance checklist of the snapshot (computed once per snapshot)."""
    return state.derived("checklist", lambda s: checklist.evaluate(s, snapshot_findings(s)))


def checklist_tally(items: list[checklist.CheckItem]) -> dict[str, int]:
    return {status: sum(1 for i in items if i.status == status) for status in checklist.STATUSES}


def snapshot_capacity(state: ClusterState) -> dict[str, Any]:
    """Per DeviceClass free against allocated and what the waiting requests could get; per Job
    its demand against the matching devices; both computed once per snapshot."""
    return state.derived(
        "capacity-page",
        lambda s: {
            "classes": _classes(s),
            "jobs": sorted(capacity.job_capacity(s), key=_job_order),
        },
    )


def _classes(state: ClusterState) -> list[tuple[capacity.ClassCapacity, list, int]]:
    """Per class: its capacity, how its free devices are spread, and how many of its devices
    sit in pools the allocator skips (incomplete or invalid: not counted as capacity)."""
    skipped = {c.name: c.tally.unusable for c in inventory.inventory(state).classes}
    return [(c, _free_set_sizes(c), skipped.get(c.name, 0)) for c in capacity.class_capacity(state)]


def _job_order(j: capacity.JobCapacity) -> int:
    """Jobs that do not fit first, then those that cannot be judged, then those that fit."""
    return {False: 0, None: 1, True: 2}[j.fits]


def _free_set_sizes(c: capacity.ClassCapacity) -> list[tuple[int, int]]:
    """(free devices on a node, how many nodes have that many), most first: how the free
    devices are spread, which decides which request sizes they can serve."""
    sizes = Counter(n for n in c.free_by_node.values() if n > 0)
    return sorted(sizes.items(), reverse=True)
