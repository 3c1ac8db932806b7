"""Reads: snapshots and the parsed ClusterState of one snapshot."""

from __future__ import annotations

import gc
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from django.conf import settings
from django.db.models import Count, OuterRef, QuerySet, Subquery

from dradash.clusters.models import Cluster
from dradash.dra.gc import gc_paused
from dradash.dra.state import ClusterState, SnapshotMeta
from dradash.snapshots import members
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun


def snapshot_list() -> QuerySet[Snapshot]:
    return Snapshot.objects.select_related("cluster")


def cluster_list_with_snapshots(*, per_cluster: int = 5) -> list[tuple[Cluster, list[Snapshot]]]:
    """Clusters with their latest snapshots, newest first: three queries whatever the size.

    Each cluster also gets ``capture_run``: its latest capture run, or None.
    """
    latest_run = SnapshotRun.objects.filter(
        kind=SnapshotRun.Kind.CAPTURE, cluster_name=OuterRef("name")
    ).order_by("-created_at", "-id")
    clusters = list(
        Cluster.objects.annotate(
            snapshot_count=Count("snapshots"),
            capture_run_id=Subquery(latest_run.values("id")[:1]),
        ).order_by("name")
    )
    runs = SnapshotRun.objects.select_related("snapshot").in_bulk(
        [c.capture_run_id for c in clusters if c.capture_run_id]
    )
    for cluster in clusters:
        cluster.capture_run = runs.get(cluster.capture_run_id)
    latest: dict[int, list[Snapshot]] = {c.pk: [] for c in clusters}
    for snapshot in Snapshot.objects.select_related("cluster").order_by("-captured_at", "-id"):
        bucket = latest[snapshot.cluster_id]
        if len(bucket) < per_cluster:
            bucket.append(snapshot)
    return [(c, latest[c.pk]) for c in clusters]


def run_list(*, limit: int = 10) -> QuerySet[SnapshotRun]:
    return SnapshotRun.objects.select_related("snapshot")[:limit]


# What the selector playground needs: the devices and the classes, not the Pods and events.
DEVICE_KINDS = ("ResourceSlice", "DeviceClass", "DeviceTaintRule")

StateKey = tuple[int, tuple[str, ...] | None]


class _StateCache:
    """Parsed snapshots per process. Snapshots never change, so entries never go stale.

    Entries are whole snapshots, or only some kinds of objects; a whole snapshot also serves
    requests for some of its kinds.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: OrderedDict[StateKey, ClusterState] = OrderedDict()

    def get(self, snapshot: Snapshot, kinds: tuple[str, ...] | None = None) -> ClusterState:
        with self._lock:
            for key in ((snapshot.pk, None), (snapshot.pk, kinds)):
                state = self._states.get(key)
                if state is not None:
                    self._states.move_to_end(key)
                    return state
        state = _load_state(snapshot, kinds)
        with self._lock:
            self._states[(snapshot.pk, kinds)] = state
            evicted = False
            while len(self._states) > max(settings.DRADASH_STATE_CACHE_SIZE, 1):
                self._states.popitem(last=False)
                evicted = True
        if evicted:  # collect what the evicted state leaves behind (its objects form cycles)
            gc.unfreeze()
            gc.collect()
        # A large snapshot is millions of objects: each full run of the cyclic collector would
        # scan them all (about 2 s on the large profile) in the middle of some request. Frozen,
        # they stay out of its scans until the state is evicted.
        gc.freeze()
        return state

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
        gc.unfreeze()  # the collector may reclaim them again


state_cache = _StateCache()


def snapshot_state(snapshot: Snapshot, kinds: tuple[str, ...] | None = None) -> ClusterState:
    """The snapshot's ClusterState; with ``kinds``, one holding only objects of those kinds."""
    return state_cache.get(snapshot, kinds)


MEMBERS_CHUNK = 10_000  # ids per query: SQLite takes at most 32,766 parameters


def snapshot_objects(
    snapshot: Snapshot,
    *,
    kinds: Iterable[str] | None = None,
    fields: tuple[str, ...] = ("data",),
) -> Iterator[tuple[Any, ...]]:
    """``fields`` of each stored object (ObjectBlob) of the snapshot, optionally of some kinds
    only, read a chunk at a time."""
    ids = members.unpack(snapshot.members)
    wanted = list(kinds) if kinds is not None else None
    for start in range(0, len(ids), MEMBERS_CHUNK):
        rows = ObjectBlob.objects.filter(id__in=ids[start : start + MEMBERS_CHUNK])
        if wanted is not None:
            rows = rows.filter(kind__in=wanted)
        yield from rows.values_list(*fields)


def _load_state(snapshot: Snapshot, kinds: tuple[str, ...] | None) -> ClusterState:
    meta = SnapshotMeta(
        cluster=snapshot.cluster.name,
        captured_at=snapshot.captured_at.isoformat(),
        server_version=snapshot.server_version,
        api_versions=list(snapshot.api_versions),
        kinds=dict(snapshot.kinds or {}),
        source=snapshot.source,
    )
    with gc_paused():
        rows = snapshot_objects(snapshot, kinds=kinds)
        return ClusterState.build([json.loads(text) for (text,) in rows], meta)
