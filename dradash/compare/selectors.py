"""Reads for the diff page: the snapshot before another, and the diff of two, ready to show.

The diff reads only the stored objects that differ between two snapshots (a snapshot lists its
objects' blob ids, and equal objects share a blob), a part at a time, and what the analyses
stored about the rest: Pods' stages and nodes (verdict rows), devices' nodes and how many a
DeviceTaintRule selects (device rows), the slices of each pool (pool rows). Its lists keep their
first LIST_LIMIT entries and count the rest, and it reads at most READ_BUDGET of stored JSON:
objects that differ beyond that are counted, not compared. So its time and memory stay bounded
whatever the snapshots, two unrelated 5,000-node clusters included.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.db import connection
from django.db.models import Q
from django.urls import NoReverseMatch, reverse

from dradash.analysis.models import DeviceRow, PodVerdict, PoolRow
from dradash.dra.diff import (
    KIND_ORDER,
    DiffTally,
    DraChange,
    KindDiff,
    ObjectRef,
    PodFacts,
    SnapshotDiff,
    dra_changes,
    kind_diff,
    pod_changes,
)
from dradash.dra.gc import gc_paused
from dradash.dra.objects import DeviceTaintRule
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import blob_rows, partial_state, snapshot_members

LIST_LIMIT = 200  # items shown per list (DRA change group, added/removed/changed of a kind)
OVERVIEW_LIMIT = 50  # the same without a kind filter, when every kind is on one page
FIELD_LIMIT = 100  # field changes shown per changed object
# Characters of stored JSON one diff reads at most, both snapshots together (and one part
# more): what its time and memory grow with.
READ_BUDGET = 128 * 2**20
PART = 2_000  # objects of each snapshot read at a time
POOL_PART = 200  # slices of each snapshot read at a time (a slice holds a node's devices)
# Kinds in the order they are read: what matters for DRA first, so that a budget that runs out
# leaves Events (most of what changes in a large cluster) uncompared.
READ_ORDER = (
    "DeviceTaintRule",
    "ResourceSlice",
    "ResourceClaim",
    "Pod",
    "Node",
    "DeviceClass",
    "ResourceClaimTemplate",
    "PodGroup",
    "Workload",
    "Job",
    "Namespace",
    "PriorityClass",
    "Event",
)
# Kinds whose DRA sentences read the objects (and, for slices, their pools): all of them are
# read, those added and removed too; of other kinds only those both snapshots hold.
READ_WHOLE = frozenset({"DeviceTaintRule", "ResourceSlice", "ResourceClaim"})

DETAIL_URLS = {"Pod": "pod-detail", "ResourceClaim": "claim-detail", "Node": "node-detail"}

Key = tuple[str, str]
Raw = dict[str, Any]


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


def newest_snapshot_id(snapshot: Snapshot) -> int | None:
    """The id of the same cluster's newest snapshot when it is not this one, else None."""
    newest = (
        Snapshot.objects.filter(cluster_id=snapshot.cluster_id)
        .order_by("-captured_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return newest if newest != snapshot.pk else None


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
    """The diff of two analysed snapshots of one cluster (see the module docstring)."""
    return snapshot_diffs.get(before, after)


def _snapshot_diff(before: Snapshot, after: Snapshot) -> SnapshotDiff:
    mine, theirs = snapshot_members.get(before), snapshot_members.get(after)
    olds, news = _keys(mine - theirs), _keys(theirs - mine)
    diff = _Diff(before, after)
    for kind in READ_ORDER:
        old, new = olds.get(kind, {}), news.get(kind, {})
        if kind == "ResourceSlice":
            parts: Iterable[tuple[list[Key], Any]] = _pool_parts(before, after, old, new)
        else:
            ordered = sorted(old.keys() | new.keys())
            parts = [(ordered[i : i + PART], None) for i in range(0, len(ordered), PART)]
        for keys, ids in parts:
            # A part makes up to millions of objects, which the collector would scan again and
            # again; its states (slices and their devices) are cycles, collected once after.
            with gc_paused():
                diff.part(kind, keys, old, new, ids)
    diff.tally.add_changes(pod_changes(_pod_facts(before, after), _pod_facts(after, before)))
    return diff.tally.result()


def _keys(ids: frozenset[int]) -> dict[str, dict[Key, int]]:
    """The blob ids by kind and (namespace, name), read from the blobs' key columns only."""
    out: dict[str, dict[Key, int]] = {}
    for blob_id, kind, namespace, name in blob_rows(ids, ("id", "kind", "namespace", "name")):
        out.setdefault(kind, {})[(namespace, name)] = blob_id
    return out


class _Diff:
    """The diff of two snapshots, gathered a part (of one kind's objects) at a time."""

    def __init__(self, before: Snapshot, after: Snapshot) -> None:
        self.snapshots = (before, after)
        self.tally = DiffTally(totals=(_totals(before), _totals(after)), limit=LIST_LIMIT)
        self.devices = (_RowDevices(before), _RowDevices(after))
        self.read = 0  # characters of stored JSON read so far

    def part(
        self,
        kind: str,
        keys: list[Key],
        old: dict[Key, int],
        new: dict[Key, int],
        ids: tuple[list[int], list[int]] | None,
    ) -> None:
        """Compare the objects of one kind with these keys (``ids``: the blobs to read of each
        snapshot, when more than those objects: the rest of their pools)."""
        pairs = [k for k in keys if k in old and k in new]
        whole_pools = ids is not None
        if ids is None:
            wanted = keys if kind in READ_WHOLE else pairs
            ids = ([old[k] for k in wanted if k in old], [new[k] for k in wanted if k in new])
            if kind == "Event":  # the detail of the Events added and removed that are shown
                ids[0].extend(old[k] for k in self._listed(kind, "removed", keys, old, new))
                ids[1].extend(new[k] for k in self._listed(kind, "added", keys, new, old))
        if self.read >= READ_BUDGET and (ids[0] or ids[1]):
            unread = _unread(kind, keys, old, new, pairs, len(ids[0]) + len(ids[1]))
            self.tally.add(unread, self._node_changes(unread))
            return
        read = (self._read(ids[0]), self._read(ids[1]))
        if whole_pools:  # every slice of some pools: keyed by their names
            sides = [{("", r["metadata"]["name"]): r for r in side.values()} for side in read]
        else:
            sides = [
                {k: read[0].get(old[k]) for k in keys if k in old},
                {k: read[1].get(new[k]) for k in keys if k in new},
            ]
        # Sentences are made of the objects each list names: those lists are kept whole.
        whole = kind in READ_WHOLE or kind == "Node"
        found = kind_diff(kind, sides[0], sides[1], limit=None if whole else LIST_LIMIT)
        if kind in READ_WHOLE:
            changes = self._dra_changes(found, sides)
        else:
            changes = self._node_changes(found)
        self.tally.add(found, changes)

    def _dra_changes(self, found: KindDiff, sides: list[dict[Key, Raw | None]]) -> list[DraChange]:
        """What the part's differences mean for DRA, from states of the objects added, removed
        or changed where the sentences look: a claim's status, a slice's spec (with every slice
        of its pool). Other changes (labels, a slice's name) say nothing about allocations or
        devices, and cost no state."""
        look = "status" if found.kind == "ResourceClaim" else "spec"

        def moved(o: ObjectRef) -> bool:
            key = (o.namespace, o.name)
            return (sides[0][key] or {}).get(look) != (sides[1][key] or {}).get(look)

        kept = KindDiff(
            found.kind,
            0,
            0,
            added=found.added,
            removed=found.removed,
            changed=[o for o in found.changed if moved(o)],
        )
        if found.kind == "ResourceClaim":
            kept.added = self._shown(kept.added, sides[1], "claim-allocated", "claim-created")
            kept.removed = self._shown(kept.removed, sides[0], "claim-released", "claim-deleted")
        keys = {(o.namespace, o.name) for o in kept.added + kept.removed + kept.changed}
        if not keys:
            return []
        if found.kind == "ResourceSlice":
            pools = {_pool(side[k]) for side in sides for k in keys if k in side}
            states = [
                partial_state(snapshot, [r for r in side.values() if _pool(r) in pools])
                for snapshot, side in zip(self.snapshots, sides, strict=True)
            ]
        else:
            states = [
                partial_state(snapshot, [r for k, r in side.items() if k in keys])
                for snapshot, side in zip(self.snapshots, sides, strict=True)
            ]
        return dra_changes(states[0], states[1], {found.kind: kept}, self.devices)

    def _listed(
        self, kind: str, which: str, keys: list[Key], mine: dict[Key, int], theirs: dict[Key, int]
    ) -> list[Key]:
        """Of the keys only ``mine`` has, those the list ``which`` still has room for."""
        room = LIST_LIMIT - self.tally.kind(kind).total(which)
        return [k for k in keys if k in mine and k not in theirs][: max(room, 0)]

    def _shown(
        self, claims: list[ObjectRef], side: dict[Key, Raw | None], allocated: str, other: str
    ) -> list[ObjectRef]:
        """Of claims added (or removed), those whose sentences the lists have room for; each
        of the others only counts, under the code its status tells (a state of the 40,000
        claims of two unrelated clusters would cost seconds)."""
        shown, taken = [], Counter[str]()
        for o in claims:
            status = (side[(o.namespace, o.name)] or {}).get("status") or {}
            code = allocated if isinstance(status.get("allocation"), dict) else other
            if taken[code] < self.tally.room(code):
                taken[code] += 1
                shown.append(o)
            else:
                self.tally.count(code)
        return shown

    def _node_changes(self, found: KindDiff) -> list[DraChange]:
        """Nodes added and removed: known by their keys alone."""
        if found.kind != "Node":
            return []
        empty = partial_state(self.snapshots[0], [])
        return dra_changes(empty, empty, {"Node": found})

    def _read(self, ids: list[int]) -> dict[int, Raw]:
        """The stored objects with these blob ids, by id (counted against the budget)."""
        out = {}
        for blob_id, data in blob_rows(ids, ("id", "data")):
            self.read += len(data)
            out[blob_id] = orjson.loads(data)
        return out


def _pool(raw: Raw | None) -> tuple[str, str]:
    spec = (raw or {}).get("spec") or {}
    return (str(spec.get("driver") or ""), str((spec.get("pool") or {}).get("name") or ""))


def _unread(
    kind: str,
    keys: list[Key],
    old: dict[Key, int],
    new: dict[Key, int],
    pairs: list[Key],
    unread: int,
) -> KindDiff:
    """A part left unread (``unread`` objects it would have read): what was added and removed
    is known by the keys; the objects both snapshots hold differ, and are not compared."""
    return KindDiff(
        kind,
        0,
        0,
        added=[ObjectRef(kind, *k) for k in keys if k not in old],
        removed=[ObjectRef(kind, *k) for k in keys if k not in new],
        unread=unread,
        uncompared=len(pairs),
    )


def _pool_parts(
    before: Snapshot, after: Snapshot, old: dict[Key, int], new: dict[Key, int]
) -> Iterator[tuple[list[Key], tuple[list[int], list[int]]]]:
    """The slices that differ, in parts of whole pools: each part's keys, and the blob ids of
    every slice of its pools in each snapshot (a pool's sentences read all its slices). A slice
    that moved from one pool to another puts both in one part."""
    if not (old or new):
        return
    pools = (_pool_slices(before), _pool_slices(after))
    pool_of = [{sid: pool for pool, ids in side.items() for sid in ids} for side in pools]
    parent: dict[tuple[str, ...], tuple[str, ...]] = {}

    def root(node: tuple[str, ...]) -> tuple[str, ...]:
        while parent.setdefault(node, node) != node:
            node = parent[node]
        return node

    for key in old.keys() | new.keys():
        for side, mine in enumerate((old, new)):
            if key in mine and (pool := pool_of[side].get(mine[key])) is not None:
                parent[root(("pool", *pool))] = root(("slice", *key))
        root(("slice", *key))
    groups: dict[tuple[str, ...], tuple[list[Key], list[tuple[str, str]]]] = {}
    for node in list(parent):
        keys, group_pools = groups.setdefault(root(node), ([], []))
        (keys if node[0] == "slice" else group_pools).append((node[1], node[2]))
    part: tuple[list[Key], tuple[list[int], list[int]]] = ([], ([], []))
    for keys, group_pools in sorted(groups.values(), key=lambda g: min(g[0])):
        part[0].extend(sorted(keys))
        for side, mine in enumerate((old, new)):
            part[1][side].extend(sid for pool in group_pools for sid in pools[side].get(pool, ()))
            part[1][side].extend(
                mine[k] for k in keys if k in mine and mine[k] not in pool_of[side]
            )
        if max(len(part[1][0]), len(part[1][1])) >= POOL_PART:
            yield part
            part = ([], ([], []))
    if part[0]:
        yield part


def _pool_slices(snapshot: Snapshot) -> dict[tuple[str, str], list[int]]:
    """The blob ids of each pool's slices (stale ones too), from the snapshot's pool rows."""
    rows = PoolRow.objects.filter(snapshot=snapshot).values_list("driver", "pool", "slices")
    return {(driver, pool): list(slices) for driver, pool, slices in rows}


class _RowDevices:
    """A snapshot's devices as its device rows hold them (dradash.dra.diff.Devices)."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.nodes: dict[tuple[str, str, str], str] | None = None

    def node(self, key: tuple[str, str, str]) -> str:
        if self.nodes is None:  # every device's node, in one query (a few MB at 40,000)
            rows = DeviceRow.objects.filter(snapshot=self.snapshot).exclude(node="")
            self.nodes = {
                (driver, pool, device): node
                for driver, pool, device, node in rows.values_list(
                    "driver", "pool", "device", "node"
                )
            }
        return self.nodes.get(key, "")

    def tainted_by(self, rule: DeviceTaintRule) -> int:
        fields = {f: rule.selector[f] for f in ("driver", "pool", "device") if rule.selector.get(f)}
        return DeviceRow.objects.filter(snapshot=self.snapshot, **fields).count()


def _pod_facts(snapshot: Snapshot, other: Snapshot) -> dict[Key, PodFacts]:
    """The stored verdicts of the snapshot's Pods that use DRA and that the other snapshot
    lacks (added or removed) or has at another stage (one join)."""
    table = PodVerdict._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT a.namespace, a.name, a.node, a.stage, a.reason, a.summary FROM {table} a "
            f"LEFT JOIN {table} b ON b.snapshot_id = %s AND b.namespace = a.namespace "
            "AND b.name = a.name "
            "WHERE a.snapshot_id = %s AND a.uses_dra AND (b.id IS NULL OR b.stage <> a.stage)",
            [other.pk, snapshot.pk],
        )
        return {
            (namespace, name): PodFacts(node, stage or None, reason, summary)
            for namespace, name, node, stage, reason, summary in cursor.fetchall()
        }


def _totals(snapshot: Snapshot) -> dict[str, int]:
    return {
        kind: int(info.get("count") or 0)
        for kind, info in (snapshot.kinds or {}).items()
        if isinstance(info, dict)
    }


# --- what the page shows ------------------------------------------------------------------


@dataclass
class Row:
    obj: Any  # a DraChange, ObjectRef or ObjectChange
    url: str | None = None  # its page in the snapshot that has it, when dradash has one
    snapshot_id: int | None = None  # the snapshot that has it (its sentence links into it)

    @property
    def refs(self) -> list[dict[str, str]]:
        """The object it is about and the nodes its sentence names, for the links in it."""
        o = self.obj
        nodes = [{"kind": "Node", "namespace": "", "name": n} for n in getattr(o, "nodes", ())]
        return [{"kind": o.kind, "namespace": o.namespace, "name": o.name}, *nodes]

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
        return reverse(
            url_name, args=[snapshot_id, namespace, name] if namespace else [snapshot_id, name]
        )
    except NoReverseMatch:  # a name the URL pattern cannot carry (it has a slash)
        return None


def _listing(
    items: Iterable[Any], total: int, snapshot_id: int | None, kind: str, limit: int
) -> Listing:
    return Listing(
        rows=[
            Row(o, _url(o.kind, o.namespace, o.name, snapshot_id) if snapshot_id else None)
            for o in list(items)[:limit]
        ],
        total=total,
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
        total = result.change_total(code)
        view.groups.append((code, title, Listing(rows, total, changes[0].kind)))
    for k in result.kinds:
        if kind and k.kind != kind:
            continue
        view.kinds.append(
            KindView(
                diff=k,
                added=_listing(k.added, k.added_total, after.pk, k.kind, limit),
                removed=_listing(k.removed, k.removed_total, before.pk, k.kind, limit),
                changed=_listing(k.changed, k.changed_total, after.pk, k.kind, limit),
                recurred=_listing(k.recurred, k.recurred_total, None, k.kind, limit),
            )
        )
    return view


def kind_choices() -> list[tuple[str, str]]:
    return [("", "all kinds"), *((k, k) for k in KIND_ORDER)]
