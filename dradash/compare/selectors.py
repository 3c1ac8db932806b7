"""Reads for the diff page: the snapshot before another, and the diff of two, ready to show."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from django.db import connection
from django.db.models import Q
from django.urls import NoReverseMatch, reverse

from dradash.analysis.models import PodVerdict, PoolRow, SnapshotAnalysis
from dradash.dra.diff import KIND_ORDER, KindDiff, SnapshotDiff, diff
from dradash.dra.nodes import selector_node_names
from dradash.dra.state import ClusterState
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import (
    blob_ids_by_key,
    objects_by_ids,
    partial_state,
    snapshot_members,
)

LIST_LIMIT = 200  # items shown per list (DRA change group, added/removed/changed of a kind)
OVERVIEW_LIMIT = 50  # the same without a kind filter, when every kind is on one page
FIELD_LIMIT = 100  # field changes shown per changed object

DETAIL_URLS = {"Pod": "pod-detail", "ResourceClaim": "claim-detail"}


def previous_snapshot_id(snapshot: Snapshot) -> int | None:
    """The id of the snapshot of the same cluster taken just before this one, if any."""
    return (
        Snapshot.objects.filter(cluster_id=snapshot.cluster_id)
        .filter(
            Q(captured_at__lt=snapshot.captured_at)
            | Q(captured_at=snapshot.captured_at, pk__lt=snapshot.pk)
        )
        .order_by("-captured_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )


class _Diffs:
    """The diffs of the few pairs of snapshots compared last, per process (snapshots never
    change, so neither does their diff; a diff page is opened again with other filters)."""

    SIZE = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._diffs: OrderedDict[tuple[int, int], SnapshotDiff] = OrderedDict()

    def get(self, before: Snapshot, after: Snapshot) -> SnapshotDiff:
        key = (before.pk, after.pk)
        with self._lock:
            if (found := self._diffs.get(key)) is not None:
                self._diffs.move_to_end(key)
                return found
        found = _snapshot_diff(before, after)
        with self._lock:
            self._diffs[key] = found
            while len(self._diffs) > self.SIZE:
                self._diffs.popitem(last=False)
        return found

    def clear(self) -> None:
        with self._lock:
            self._diffs.clear()


snapshot_diffs = _Diffs()


def snapshot_diff(before: Snapshot, after: Snapshot) -> SnapshotDiff:
    return snapshot_diffs.get(before, after)


def _snapshot_diff(before: Snapshot, after: Snapshot) -> SnapshotDiff:
    """The diff of two snapshots of one cluster, loading only the stored objects that differ
    (a snapshot lists its objects' blob ids, and equal objects share a blob) and those the DRA
    sentences about them read; Pod stages come from the stored analyses."""
    mine, theirs = snapshot_members.get(before), snapshot_members.get(after)
    old_objects = objects_by_ids(mine - theirs)
    new_objects = objects_by_ids(theirs - mine)
    old = partial_state(before, old_objects)
    new = partial_state(after, new_objects)
    context = _context(before, old) | _context(after, new)
    if context:  # unchanged objects the sentences read: the same on both sides
        old = partial_state(before, [*old_objects, *objects_by_ids(context & mine)])
        new = partial_state(after, [*new_objects, *objects_by_ids(context & theirs)])
    return diff(
        old,
        new,
        before_diagnosis=_verdicts(before, after),
        after_diagnosis=_verdicts(after, before),
        totals=(_totals(before), _totals(after)),
    )


def _context(snapshot: Snapshot, changed: ClusterState) -> set[int]:
    """Blob ids of what the sentences about the changed objects read: every slice of a pool a
    changed slice or a changed claim's device is in (all of them when a DeviceTaintRule
    changed: it may select any device), and the nodes changed claims are pinned to."""
    if changed.taint_rules:
        analysis = SnapshotAnalysis.objects.filter(pk=snapshot.pk).first()
        return set(analysis.device_objects) if analysis else set()
    pools = {(s.driver, s.pool_name) for s in changed.slices.values()}
    pools |= {(r.driver, r.pool) for c in changed.claims.values() for r in c.results}
    ids: set[int] = set()
    if pools:
        rows = PoolRow.objects.filter(snapshot=snapshot).filter(
            Q(*[Q(driver=d, pool=p) for d, p in pools], _connector=Q.OR)
        )
        for slices in rows.values_list("slices", flat=True):
            ids.update(slices)
    nodes = set()
    for claim in changed.claims.values():
        if claim.allocation_node_selector is not None:
            nodes |= set(selector_node_names(claim.allocation_node_selector) or ())
    if nodes:
        ids |= set(blob_ids_by_key(snapshot, [("Node", "", n) for n in nodes]).values())
    return ids


def _verdicts(snapshot: Snapshot, other: Snapshot) -> Any:
    """The stored verdicts of the snapshot's Pods that the diff speaks of: those the other
    snapshot lacks (added or removed) and those whose stage differs there (one join)."""
    table = PodVerdict._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.namespace, a.name, a.stage, a.reason, a.summary FROM {table} a "
            f"LEFT JOIN {table} b ON b.snapshot_id = %s AND b.namespace = a.namespace "
            "AND b.name = a.name "
            "WHERE a.snapshot_id = %s AND a.uses_dra AND (b.id IS NULL OR b.stage <> a.stage)",
            [other.pk, snapshot.pk],
        )
        pods = {
            (namespace, name): SimpleNamespace(stage=stage, reason=reason, summary=summary)
            for namespace, name, stage, reason, summary in cursor.fetchall()
        }
    return SimpleNamespace(pods=pods)


def _totals(snapshot: Snapshot) -> dict[str, int]:
    return {
        kind: int(info.get("count") or 0)
        for kind, info in (snapshot.kinds or {}).items()
        if isinstance(info, dict)
    }


@dataclass
class Row:
    obj: Any  # a DraChange, ObjectRef or ObjectChange
    url: str | None = None  # its page in the snapshot that has it, when dradash has one
    snapshot_id: int | None = None  # the snapshot that has it (its sentence links into it)

    @property
    def refs(self) -> list[dict[str, str]]:
        """The object it is about, for the links in its sentence."""
        o = self.obj
        return [{"kind": o.kind, "namespace": o.namespace, "name": o.name}]

    @property
    def fields(self) -> list[Any]:
        return self.obj.fields[:FIELD_LIMIT]

    @property
    def more_fields(self) -> int:
        return max(len(self.obj.fields) - FIELD_LIMIT, 0)


@dataclass
class Listing:
    rows: list[Row]
    total: int
    kind: str = ""  # of the objects listed: the filter that shows more of them

    @property
    def more(self) -> int:
        return self.total - len(self.rows)


@dataclass
class KindView:
    diff: KindDiff
    added: Listing
    removed: Listing
    changed: Listing
    recurred: Listing


@dataclass
class DiffView:
    limit: int  # items shown per list on this page
    list_limit: int  # items shown per list once filtered by kind
    groups: list[tuple[str, str, Listing]] = field(default_factory=list)  # (code, title, rows)
    kinds: list[KindView] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.groups and not any(k.diff.any for k in self.kinds)


def _url(kind: str, namespace: str, name: str, snapshot_id: int) -> str | None:
    url_name = DETAIL_URLS.get(kind)
    if url_name is None:
        return None
    try:
        return reverse(url_name, args=[snapshot_id, namespace, name])
    except NoReverseMatch:  # a name the URL pattern cannot carry (it has a slash)
        return None


def _listing(items: list[Any], snapshot_id: int | None, kind: str, limit: int) -> Listing:
    return Listing(
        rows=[
            Row(o, _url(o.kind, o.namespace, o.name, snapshot_id) if snapshot_id else None)
            for o in items[:limit]
        ],
        total=len(items),
        kind=kind,
    )


def diff_view(
    result: SnapshotDiff, before: Snapshot, after: Snapshot, kind: str | None = None
) -> DiffView:
    """What the page shows, with links: LIST_LIMIT items per list for one kind, or
    OVERVIEW_LIMIT per list when all kinds are shown."""
    limit = LIST_LIMIT if kind else OVERVIEW_LIMIT
    view = DiffView(limit=limit, list_limit=LIST_LIMIT)
    for code, title, changes in result.groups(kind or None):
        rows = [
            Row(c, _url(c.kind, c.namespace, c.name, side.pk), side.pk)
            for c in changes[:limit]
            for side in [before if c.side == "before" else after]
        ]
        view.groups.append((code, title, Listing(rows, len(changes), changes[0].kind)))
    for k in result.kinds:
        if kind and k.kind != kind:
            continue
        view.kinds.append(
            KindView(
                diff=k,
                added=_listing(k.added, after.pk, k.kind, limit),
                removed=_listing(k.removed, before.pk, k.kind, limit),
                changed=_listing(k.changed, after.pk, k.kind, limit),
                recurred=_listing(k.recurred, None, k.kind, limit),
            )
        )
    return view


def kind_choices() -> list[tuple[str, str]]:
    return [("", "all kinds"), *((k, k) for k in KIND_ORDER)]
