"""Reads: snapshots, and the stored objects of one: all of them (for the analyse task and exports),
by blob id (a page's chain) or by key."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from django.db import connection
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from dradash.analysis.models import SnapshotAnalysis
from dradash.clusters.models import Cluster, live
from dradash.dra.kinds import ObjectKey
from dradash.dra.state import ClusterState, SnapshotMeta
from dradash.snapshots import members
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun


def snapshot_list() -> QuerySet[Snapshot]:
    """Snapshots with their cluster and ``analysis_status``: pending (also while there is no
    analysis yet), done, failed or compacted (SnapshotAnalysis.Status)."""
    return Snapshot.objects.select_related("cluster").annotate(
        analysis_status=Coalesce(F("analysis__status"), Value("pending"))
    )


def state_snapshots() -> QuerySet[Snapshot]:
    """The snapshots that may stand for their cluster's state (its latest one is "the latest
    snapshot" of the home page and /metrics): a live cluster's captures, and every snapshot of
    a cluster without capture credentials. Nothing imported or uploaded into a live cluster,
    whatever its capture time, shadows what dradash captured."""
    return Snapshot.objects.filter(Q(source=Snapshot.Source.CAPTURE) | ~live("cluster__"))


def cluster_list_with_snapshots(*, per_cluster: int = 5) -> list[tuple[Cluster, list[Snapshot]]]:
    """Clusters with their latest state snapshots (state_snapshots), newest first: four
    queries whatever the size.

    Each cluster also gets ``capture_run``: its latest capture run, or None; and
    ``other_snapshots``, ``other_count``: the latest and the number of its snapshots that are
    not state snapshots (imported into a live cluster). Each snapshot gets ``analysis_status``
    (pending, done, failed, compacted) and ``health``: its Pods using DRA, how many are stuck and
    [stage, n] of the stuck ones (from its stored analysis, when done).
    """
    latest_run = SnapshotRun.objects.filter(
        kind=SnapshotRun.Kind.CAPTURE, cluster_name=OuterRef("name")
    ).order_by("-created_at", "-id")
    clusters = list(
        Cluster.objects.select_related("created_by")
        .annotate(
            snapshot_count=Count("snapshots"),
            capture_run_id=Subquery(latest_run.values("id")[:1]),
        )
        .order_by("name")
    )
    runs = SnapshotRun.objects.select_related("snapshot").in_bulk(
        [c.capture_run_id for c in clusters if c.capture_run_id]
    )
    for cluster in clusters:
        cluster.capture_run = runs.get(cluster.capture_run_id)
        cluster.other_snapshots, cluster.other_count = [], 0
    by_pk = {c.pk: c for c in clusters}
    latest: dict[int, list[Snapshot]] = {c.pk: [] for c in clusters}
    for snapshot in Snapshot.objects.select_related("cluster").order_by("-captured_at", "-id"):
        cluster = by_pk[snapshot.cluster_id]
        bucket = latest[cluster.pk]
        if cluster.is_live and snapshot.source != Snapshot.Source.CAPTURE:
            bucket = cluster.other_snapshots
            cluster.other_count += 1
        if len(bucket) < per_cluster:
            bucket.append(snapshot)
    shown = {
        s.pk: s
        for bucket in [*latest.values(), *(c.other_snapshots for c in clusters)]
        for s in bucket
    }
    analyses = {
        pk: (status, summary)
        for pk, status, summary in SnapshotAnalysis.objects.filter(pk__in=list(shown)).values_list(
            "snapshot_id", "status", "summary"
        )
    }
    for pk, snapshot in shown.items():
        status, summary = analyses.get(pk, ("pending", {}))
        snapshot.analysis_status = status
        # A compacted analysis kept its summary.
        snapshot.health = _health(summary) if status in ("done", "compacted") else None
    return [(c, latest[c.pk]) for c in clusters]


def _health(summary: dict[str, Any]) -> dict[str, Any]:
    stuck = [[stage, n] for stage, _, n in summary.get("stages") or [] if n and stage != "healthy"]
    return {
        "pods": summary.get("dra_pods", 0),
        "stuck": summary.get("stuck", 0),
        "stages": stuck,
        "pods_unknown": bool((summary.get("unknown") or {}).get("dra_pods")),
    }


def run_list(*, limit: int = 10) -> QuerySet[SnapshotRun]:
    return SnapshotRun.objects.select_related("snapshot__cluster")[:limit]


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


def snapshot_meta(snapshot: Snapshot) -> SnapshotMeta:
    """What the core needs to know about the snapshot besides its objects."""
    return SnapshotMeta(
        cluster=snapshot.cluster.name,
        captured_at=snapshot.captured_at.isoformat(),
        server_version=snapshot.server_version,
        api_versions=list(snapshot.api_versions),
        kinds=dict(snapshot.kinds or {}),
        source=snapshot.source,
        feature_gates=dict(snapshot.feature_gates or {}),
    )


def objects_by_ids(ids: Iterable[int]) -> list[dict[str, Any]]:
    """The stored objects with these blob ids (one query per MEMBERS_CHUNK ids)."""
    ordered = sorted(set(ids))
    out = []
    for start in range(0, len(ordered), MEMBERS_CHUNK):
        chunk = ordered[start : start + MEMBERS_CHUNK]
        out += [
            orjson.loads(text)
            for text in ObjectBlob.objects.filter(id__in=chunk).values_list("data", flat=True)
        ]
    return out


def blob_rows(ids: Iterable[int], fields: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
    """``fields`` of the stored objects (ObjectBlob) with these ids, in no particular order:
    on PostgreSQL one array parameter per MEMBERS_CHUNK ids (a query of ten thousand
    parameters costs more to build than to run), elsewhere ``id IN (…)``."""
    ordered = sorted(set(ids))
    table, columns = ObjectBlob._meta.db_table, ", ".join(fields)
    for start in range(0, len(ordered), MEMBERS_CHUNK):
        chunk = ordered[start : start + MEMBERS_CHUNK]
        if connection.vendor != "postgresql":
            yield from ObjectBlob.objects.filter(id__in=chunk).values_list(*fields)
            continue
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {columns} FROM {table} WHERE id = ANY(%s)", [chunk])
            yield from cursor.fetchall()


class _Members:
    """The blob ids of a few recently used snapshots, as sets (a snapshot never changes)."""

    SIZE = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sets: OrderedDict[int, frozenset[int]] = OrderedDict()

    def get(self, snapshot: Snapshot) -> frozenset[int]:
        with self._lock:
            found = self._sets.get(snapshot.pk)
            if found is not None:
                self._sets.move_to_end(snapshot.pk)
                return found
        found = frozenset(members.unpack(snapshot.members))
        with self._lock:
            self._sets[snapshot.pk] = found
            while len(self._sets) > self.SIZE:
                self._sets.popitem(last=False)
        return found

    def clear(self) -> None:
        with self._lock:
            self._sets.clear()


snapshot_members = _Members()


def blob_ids_by_key(snapshot: Snapshot, keys: Iterable[ObjectKey]) -> dict[ObjectKey, int]:
    """The blob ids of the snapshot's objects with these (kind, namespace, name) keys, those it
    has: every stored version of each key is found through the key's index, and the snapshot's
    own picked."""
    wanted: dict[tuple[str, str], set[str]] = {}
    for kind, namespace, name in keys:
        wanted.setdefault((kind, namespace), set()).add(name)
    if not wanted:
        return {}
    mine = snapshot_members.get(snapshot)
    query = Q()
    for (kind, namespace), names in wanted.items():
        query |= Q(kind=kind, namespace=namespace, name__in=sorted(names))
    return {
        (kind, namespace, name): blob_id
        for blob_id, kind, namespace, name in ObjectBlob.objects.filter(query).values_list(
            "id", "kind", "namespace", "name"
        )
        if blob_id in mine
    }


def partial_state(snapshot: Snapshot, objects: Iterable[dict[str, Any]]) -> ClusterState:
    """A ClusterState of some of the snapshot's objects (a page's chain, a diff's changes)."""
    return ClusterState.build(list(objects), snapshot_meta(snapshot))
