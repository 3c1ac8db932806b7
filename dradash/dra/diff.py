"""What changed between two snapshots of one cluster: per object, per field, and for DRA in words.

``diff(before, after)`` matches objects by (kind, namespace, name) and reports, per kind, the
objects added, removed and changed; each changed object carries a field-level diff, a list of
``FieldChange(path, old, new)`` with paths such as
``status.allocation.devices.results[0].device``. Lists of objects that have a unique ``name``,
``type`` or ``key`` (containers, conditions, devices, reservedFor, taints) are matched by that
field, and the path says so (``spec.devices[name=gpu-5].taints``), so one inserted device does not
show up as a change of every device after it; other lists are compared position by position.

What counts as a change:

* ``metadata.resourceVersion`` and ``metadata.managedFields`` are bookkeeping of the API server:
  never listed, and an object that differs only there is unchanged.
* ``metadata.generation`` and conditions' ``lastHeartbeatTime`` follow other changes (a spec
  edit, a kubelet's status report): listed beside the changes they go with, but on their own they
  do not make an object changed.
* An Event that only recurred (``count``, ``lastTimestamp``, ``series`` and their deprecated
  spellings) is a real change, but one of many of the same sort: such Events are kept apart in
  ``KindDiff.recurred`` instead of ``KindDiff.changed``.

On top of that, ``DraChange``s say what the differences mean for DRA, one sentence each: claims
created, deleted, allocated (devices, node), released or moved; consumers added to or dropped from
``reservedFor``; pools that appeared or went away, gained or lost devices, or moved to a new
generation; device taints added or removed in ResourceSlices, and DeviceTaintRules added, removed
or changed; Pods using DRA created or deleted; Nodes added or removed; and, when both snapshots'
diagnoses are given, Pods whose diagnosis stage changed.

Speed: most objects of two snapshots are the same, so raw dicts are compared whole first (by
identity, then by equality, both in C) and only the fields of the objects that differ are walked.
The DRA sentences are derived from the changed objects only; what they read beyond them (the
node of a device, how many devices a DeviceTaintRule taints) comes from ``Devices``, and Pods'
stages from ``PodFacts``.

Snapshots too large to compare whole are compared a part at a time: ``kind_diff`` and
``dra_changes`` on the objects of one part, ``pod_changes`` on the Pods' facts, gathered by a
``DiffTally``, which keeps the first ``limit`` entries of every list and counts the rest.
``diff`` is the same for two whole states.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from dradash.dra.fields import mapping, mappings, number, text
from dradash.dra.gc import gc_paused
from dradash.dra.nodes import selector_node_names
from dradash.dra.objects import Device, DeviceTaintRule, Pool, ResourceClaim
from dradash.dra.state import ClusterState
from dradash.dra.words import plural

# Kinds in the order the page lists them: where devices come from, then who uses them.
KIND_ORDER = (
    "Node",
    "ResourceSlice",
    "DeviceClass",
    "DeviceTaintRule",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "Pod",
    "PodGroup",
    "Workload",
    "Job",
    "Namespace",
    "PriorityClass",
    "Event",
)

# DRA change codes, in the order the page shows their groups, with a title for each group.
CHANGE_TITLES = {
    "pod-stage": "Pods whose diagnosis stage changed",
    "claim-allocated": "Claims allocated",
    "claim-released": "Claims released",
    "claim-reallocated": "Claims allocated other devices",
    "claim-reserved": "Claims reserved for new consumers",
    "claim-unreserved": "Claims no longer reserved for a consumer",
    "claim-created": "Claims created, not allocated",
    "claim-deleted": "Claims deleted, not allocated",
    "pod-created": "Pods using DRA created",
    "pod-deleted": "Pods using DRA deleted",
    "device-tainted": "Device taints added",
    "device-untainted": "Device taints removed",
    "taint-rule-added": "DeviceTaintRules added",
    "taint-rule-removed": "DeviceTaintRules removed",
    "taint-rule-changed": "DeviceTaintRules changed",
    "pool-generation": "Pool generation changes",
    "pool-stale": "Slices left behind by a new pool generation",
    "devices-added": "Devices added to pools",
    "devices-removed": "Devices removed from pools",
    "pool-added": "Pools added",
    "pool-removed": "Pools removed",
    "node-added": "Nodes added",
    "node-removed": "Nodes removed",
}
CHANGE_ORDER = {code: i for i, code in enumerate(CHANGE_TITLES)}
# The kind of the objects each code's changes are about.
CHANGE_KINDS = {
    **dict.fromkeys(["pod-stage", "pod-created", "pod-deleted"], "Pod"),
    **{code: "ResourceClaim" for code in CHANGE_TITLES if code.startswith("claim-")},
    **{code: "DeviceTaintRule" for code in CHANGE_TITLES if code.startswith("taint-rule-")},
    **dict.fromkeys(["node-added", "node-removed"], "Node"),
}
CHANGE_KINDS.update({code: "ResourceSlice" for code in CHANGE_TITLES if code not in CHANGE_KINDS})

NOISE = frozenset({"metadata.resourceVersion", "metadata.managedFields"})
FOLLOWERS = frozenset({"metadata.generation"})  # listed, but never a change on their own
FOLLOWER_LEAVES = frozenset({"lastHeartbeatTime"})
EVENT_RECURRENCE = frozenset(
    {"count", "lastTimestamp", "series", "deprecatedCount", "deprecatedLastTimestamp"}
)
LIST_KEYS = ("name", "type", "key")
NAMES_SHOWN = 8  # devices or consumers named in one sentence
VALUE_CHARS = 300  # of a field value as text

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_FIRST_STEP = re.compile(r"[^.\[]*")


class _Absent:
    """The value of a field on the side that does not have it."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


# --- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any  # ABSENT when the field was added
    new: Any  # ABSENT when the field was removed

    @property
    def op(self) -> str:
        """``added`` · ``removed`` · ``changed``."""
        if self.old is ABSENT:
            return "added"
        if self.new is ABSENT:
            return "removed"
        return "changed"

    @property
    def old_text(self) -> str:
        return value_text(self.old)

    @property
    def new_text(self) -> str:
        return value_text(self.new)


@dataclass
class ObjectRef:
    kind: str
    namespace: str
    name: str
    detail: str = ""  # what the name does not say (for an Event: its reason and object)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass
class ObjectChange(ObjectRef):
    fields: list[FieldChange] = field(default_factory=list)


@dataclass
class KindDiff:
    kind: str
    before: int  # objects of this kind in each snapshot
    after: int
    added: list[ObjectRef] = field(default_factory=list)
    removed: list[ObjectRef] = field(default_factory=list)
    changed: list[ObjectChange] = field(default_factory=list)
    recurred: list[ObjectChange] = field(default_factory=list)  # Events that only repeated
    # How many there are in each list, when it holds only the first few (DiffTally's limit).
    totals: dict[str, int] = field(default_factory=dict)
    # Objects that differ in their stored JSON but were not read (a budget ran out): what
    # they mean for DRA is not known; ``uncompared`` of them are in both snapshots.
    unread: int = 0
    uncompared: int = 0

    def total(self, which: str) -> int:
        """How many objects were ``added``, ``removed``, ``changed`` or ``recurred``."""
        return self.totals.get(which, len(getattr(self, which)))

    @property
    def added_total(self) -> int:
        return self.total("added")

    @property
    def removed_total(self) -> int:
        return self.total("removed")

    @property
    def changed_total(self) -> int:
        return self.total("changed")

    @property
    def recurred_total(self) -> int:
        return self.total("recurred")

    @property
    def unchanged(self) -> int:
        return (
            self.before
            - self.removed_total
            - self.changed_total
            - self.recurred_total
            - self.uncompared
        )

    @property
    def any(self) -> bool:
        return bool(
            self.added_total
            or self.removed_total
            or self.changed_total
            or self.recurred_total
            or self.uncompared
        )


@dataclass(frozen=True)
class DraChange:
    code: str  # a key of CHANGE_TITLES
    sentence: str
    kind: str  # the object the change is about
    namespace: str
    name: str
    side: str = "after"  # the snapshot that has the object: "after", or "before" once it is gone
    nodes: tuple[str, ...] = ()  # nodes the sentence names as bare words ("is running on n1")

    @property
    def title(self) -> str:
        return CHANGE_TITLES[self.code]


@dataclass
class SnapshotDiff:
    kinds: list[KindDiff]  # in KIND_ORDER, every kind either snapshot has
    changes: list[DraChange]  # sorted by CHANGE_TITLES order, then object
    # How many changes there are of each code, when ``changes`` holds only the first few.
    change_totals: dict[str, int] = field(default_factory=dict)

    def kind(self, name: str) -> KindDiff | None:
        return next((k for k in self.kinds if k.kind == name), None)

    @property
    def added(self) -> int:
        return sum(k.added_total for k in self.kinds)

    @property
    def removed(self) -> int:
        return sum(k.removed_total for k in self.kinds)

    @property
    def changed(self) -> int:
        return sum(k.changed_total for k in self.kinds)

    @property
    def recurred(self) -> int:
        return sum(k.recurred_total for k in self.kinds)

    @property
    def unread(self) -> int:
        return sum(k.unread for k in self.kinds)

    @property
    def change_count(self) -> int:
        return sum(self.change_totals.values())

    def change_total(self, code: str) -> int:
        return self.change_totals.get(code, 0)

    @property
    def empty(self) -> bool:
        return not any(k.any for k in self.kinds)

    def groups(self, kind: str | None = None) -> list[tuple[str, str, list[DraChange]]]:
        """(code, title, changes) per code that has any, optionally about one kind only."""
        out: dict[str, list[DraChange]] = {}
        for c in self.changes:
            if kind is None or CHANGE_KINDS[c.code] == kind:
                out.setdefault(c.code, []).append(c)
        return [(code, CHANGE_TITLES[code], changes) for code, changes in out.items()]


def value_text(value: Any) -> str:
    """A field value as compact JSON, cut at VALUE_CHARS; empty for ABSENT."""
    if value is ABSENT:
        return ""
    if isinstance(value, str):
        out = value
    else:
        out = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return out if len(out) <= VALUE_CHARS else out[: VALUE_CHARS - 1] + "…"


# --- field-level diff ---------------------------------------------------------------------


def field_diff(old: Any, new: Any) -> list[FieldChange]:
    """Every field that differs between two raw objects, noise (NOISE) left out."""
    out: list[FieldChange] = []
    _walk(old, new, "", out)
    return out


def _join(path: str, key: str) -> str:
    if _plain_key(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


@lru_cache(maxsize=4096)
def _plain_key(key: str) -> bool:  # the same few hundred keys, in every object
    return _PLAIN_KEY.match(key) is not None


def _list_key(old: list[Any], new: list[Any]) -> str | None:
    """The field that names every item of both lists uniquely, if there is one."""
    if not old and not new:
        return None
    for key in LIST_KEYS:
        ok = True
        for items in (old, new):
            seen = set()
            for item in items:
                if type(item) is not dict or type(value := item.get(key)) is not str:
                    ok = False
                    break
                if value in seen:
                    ok = False
                    break
                seen.add(value)
            if not ok:
                break
        if ok:
            return key
    return None


def _walk(old: Any, new: Any, path: str, out: list[FieldChange]) -> None:
    if path in NOISE:
        return
    if type(old) is dict and type(new) is dict:
        for key, value in old.items():
            sub = _join(path, str(key))
            if key not in new:
                if sub not in NOISE:
                    out.append(FieldChange(sub, value, ABSENT))
            elif value is not new[key] and value != new[key]:
                _walk(value, new[key], sub, out)
        for key, value in new.items():
            if key not in old and (sub := _join(path, str(key))) not in NOISE:
                out.append(FieldChange(sub, ABSENT, value))
    elif type(old) is list and type(new) is list:
        key = _list_key(old, new)
        if key is None:
            for i in range(max(len(old), len(new))):
                sub = f"{path}[{i}]"
                if i >= len(new):
                    out.append(FieldChange(sub, old[i], ABSENT))
                elif i >= len(old):
                    out.append(FieldChange(sub, ABSENT, new[i]))
                elif old[i] != new[i]:
                    _walk(old[i], new[i], sub, out)
            return
        olds = {item[key]: item for item in old}
        news = {item[key]: item for item in new}
        for name, item in olds.items():
            sub = f"{path}[{key}={name}]"
            if name not in news:
                out.append(FieldChange(sub, item, ABSENT))
            elif item != news[name]:
                _walk(item, news[name], sub, out)
        for name, item in news.items():
            if name not in olds:
                out.append(FieldChange(f"{path}[{key}={name}]", ABSENT, item))
    else:
        out.append(FieldChange(path, old, new))


def _follower(path: str) -> bool:
    return path in FOLLOWERS or path.rsplit(".", 1)[-1] in FOLLOWER_LEAVES


def _recurrence(change: FieldChange) -> bool:
    return _FIRST_STEP.match(change.path).group() in EVENT_RECURRENCE  # type: ignore[union-attr]


# --- objects per kind ---------------------------------------------------------------------

Key = tuple[str, str]  # (namespace, name); "" for cluster-scoped objects
Raw = dict[str, Any]


def _by_key(state: ClusterState) -> dict[str, dict[Key, Raw]]:
    def cluster_scoped(objs: dict[str, Any]) -> dict[Key, Raw]:
        return {("", name): obj.raw for name, obj in objs.items()}

    def namespaced(objs: dict[Key, Any]) -> dict[Key, Raw]:
        return {key: obj.raw for key, obj in objs.items()}

    return {
        "Node": cluster_scoped(state.nodes),
        "ResourceSlice": cluster_scoped(state.slices),
        "DeviceClass": cluster_scoped(state.classes),
        "DeviceTaintRule": cluster_scoped(state.taint_rules),
        "ResourceClaim": namespaced(state.claims),
        "ResourceClaimTemplate": namespaced(state.templates),
        "Pod": namespaced(state.pods),
        "PodGroup": namespaced(state.podgroups),
        "Workload": namespaced(state.workloads),
        "Job": namespaced(state.jobs),
        "Namespace": cluster_scoped(state.namespaces),
        "PriorityClass": cluster_scoped(state.priority_classes),
        "Event": {(e.namespace, e.name): e.raw for e in state.events},
    }


def _detail(kind: str, raw: Raw | None) -> str:
    if kind != "Event" or raw is None:
        return ""
    involved = mapping(raw.get("involvedObject") or raw.get("regarding"))
    target = "/".join(p for p in (text(involved.get("namespace")), text(involved.get("name"))) if p)
    reason = text(raw.get("reason"))
    return f"{reason} on {text(involved.get('kind'))} {target}".strip()


def _recurred_detail(before: Raw, after: Raw) -> str:
    def count(raw: Raw) -> int:
        series = mapping(raw.get("series"))
        return number(raw.get("count") or series.get("count") or raw.get("deprecatedCount"), 1)

    return f"{_detail('Event', after)}: ×{count(before)} → ×{count(after)}"


def kind_diff(
    kind: str,
    before: Mapping[Key, Raw | None],
    after: Mapping[Key, Raw | None],
    totals: tuple[int, int] | None = None,
    limit: int | None = None,
) -> KindDiff:
    """The objects of one kind that two snapshots (or the same part of each) hold, by key:
    added (only ``after`` has it), removed, changed or recurred (both have it, and they
    differ). An object that only one side has may be given as None, when it was not read (its
    detail is then unknown); objects both have must be given. ``totals``: the number of
    objects of the kind in each snapshot, when the mappings hold only part of them. ``limit``:
    each list keeps the first so many (by key), and counts the rest."""
    counts = totals or (len(before), len(after))
    result = KindDiff(kind=kind, before=counts[0], after=counts[1])
    found: Counter[str] = Counter()

    def keep(which: str) -> bool:
        found[which] += 1
        return limit is None or found[which] <= limit

    for key in sorted(before):
        old = before[key]
        if key not in after:
            if keep("removed"):
                result.removed.append(ObjectRef(kind, key[0], key[1], _detail(kind, old)))
            continue
        new = after[key]
        if old is None or new is None:
            raise ValueError(f"{kind} {key} is in both snapshots: give both, read")
        if old is new or old == new:
            continue
        fields = field_diff(old, new)
        significant = [f for f in fields if not _follower(f.path)]
        if not significant:
            continue
        if kind == "Event" and all(_recurrence(f) for f in significant):
            if keep("recurred"):
                detail = _recurred_detail(old, new)
                result.recurred.append(ObjectChange(kind, key[0], key[1], detail, fields))
        elif keep("changed"):
            result.changed.append(ObjectChange(kind, key[0], key[1], _detail(kind, new), fields))
    for key in sorted(after.keys() - before.keys()):
        if keep("added"):
            result.added.append(ObjectRef(kind, key[0], key[1], _detail(kind, after[key])))
    result.totals = dict(found)
    return result


# --- DRA in words -------------------------------------------------------------------------


def _names(values: Iterable[str]) -> str:
    values = list(values)
    shown = ", ".join(values[:NAMES_SHOWN])
    if len(values) > NAMES_SHOWN:
        shown += f" and {len(values) - NAMES_SHOWN} more"
    return shown


def _result_keys(claim: ResourceClaim) -> list[str]:
    return ["/".join(r.device_key) for r in claim.results]


class Devices(Protocol):
    """What the sentences read about one snapshot's devices beyond the changed objects."""

    def node(self, key: tuple[str, str, str]) -> str:
        """The node of the device (driver, pool, device) of a current pool; "" if none."""

    def tainted_by(self, rule: DeviceTaintRule) -> int:
        """How many devices of current pools the rule selects."""


class StateDevices:
    """The devices of a whole ClusterState."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state

    def node(self, key: tuple[str, str, str]) -> str:
        device = self.state.devices.get(key)
        return device.node_name if device is not None else ""

    def tainted_by(self, rule: DeviceTaintRule) -> int:
        return sum(1 for d in self.state.devices.values() if rule.selects(d))


def _where(state: ClusterState, claim: ResourceClaim, devices: Devices) -> str:
    nodes = sorted({n for r in claim.results if (n := devices.node(r.device_key))})
    if not nodes:
        selector = claim.allocation_node_selector
        if selector is None:
            return " (usable from any node)"
        pinned = selector_node_names(selector)  # the usual `metadata.name In [node]`
        nodes = sorted(pinned) if pinned is not None else state.allocation_nodes(claim) or []
    if not nodes:
        return ""
    return f" on node{'s' if len(nodes) > 1 else ''} {_names(nodes)}"


def _consumers(claim: ResourceClaim) -> dict[str, str]:
    """reservedFor entries by uid (or name), as "Pod name" text."""
    out = {}
    for c in claim.consumers:
        resource = "Pod" if c.resource == "pods" else (c.resource or "consumer")
        out[c.uid or f"{c.resource}/{c.name}"] = f"{resource} {c.name}"
    return out


def _claim_changes(
    before: ClusterState, after: ClusterState, claims: KindDiff, sides: tuple[Devices, Devices]
) -> list[DraChange]:
    out = []

    def where(state: ClusterState, claim: ResourceClaim) -> str:
        return _where(state, claim, sides[0] if state is before else sides[1])

    def change(code: str, sentence: str, claim: ResourceClaim, side: str = "after") -> None:
        out.append(DraChange(code, sentence, claim.kind, claim.namespace, claim.name, side))

    for ref in claims.added:
        claim = after.claims[(ref.namespace, ref.name)]
        reserved = _consumers(claim)
        also = f", reserved for {_names(reserved.values())}" if reserved else ""
        if claim.allocated:
            devices = _result_keys(claim)
            change(
                "claim-allocated",
                f"ResourceClaim {claim.ref} was created and allocated "
                f"{_names(devices) or 'no device'}{where(after, claim)}{also}.",
                claim,
            )
        else:
            change("claim-created", f"ResourceClaim {claim.ref} was created{also}.", claim)
    for ref in claims.removed:
        claim = before.claims[(ref.namespace, ref.name)]
        if claim.allocated:
            devices = _result_keys(claim)
            change(
                "claim-released",
                f"ResourceClaim {claim.ref} was deleted, releasing "
                f"{_names(devices) or 'its allocation'}{where(before, claim)}.",
                claim,
                "before",
            )
        else:
            change("claim-deleted", f"ResourceClaim {claim.ref} was deleted.", claim, "before")
    for ref in claims.changed:
        old = before.claims[(ref.namespace, ref.name)]
        new = after.claims[(ref.namespace, ref.name)]
        if new.allocated and not old.allocated:
            change(
                "claim-allocated",
                f"ResourceClaim {new.ref} was allocated "
                f"{_names(_result_keys(new)) or 'no device'}{where(after, new)}.",
                new,
            )
        elif old.allocated and not new.allocated:
            change(
                "claim-released",
                f"ResourceClaim {new.ref} was deallocated, releasing "
                f"{_names(_result_keys(old)) or 'its allocation'}{where(before, old)}.",
                new,
            )
        elif old.allocated and sorted(_result_keys(old)) != sorted(_result_keys(new)):
            change(
                "claim-reallocated",
                f"ResourceClaim {new.ref} was allocated {_names(_result_keys(new))}"
                f"{where(after, new)} instead of {_names(_result_keys(old))}"
                f"{where(before, old)}.",
                new,
            )
        was, now = _consumers(old), _consumers(new)
        if gained := [v for k, v in now.items() if k not in was]:
            change(
                "claim-reserved",
                f"ResourceClaim {new.ref} is now reserved for {_names(gained)}.",
                new,
            )
        if lost := [v for k, v in was.items() if k not in now]:
            change(
                "claim-unreserved",
                f"ResourceClaim {new.ref} is no longer reserved for {_names(lost)}.",
                new,
            )
    return out


@dataclass(frozen=True)
class PodFacts:
    """What the sentences about a Pod that uses DRA say: its node, and its diagnosis (None
    when the diagnoses are not given)."""

    node: str = ""
    stage: str | None = None
    reason: str = ""
    summary: str = ""


def pod_facts(state: ClusterState, diagnosis: Any = None) -> dict[Key, PodFacts]:
    """The facts of the state's Pods that use DRA (``diagnosis``: a SnapshotDiagnosis, or
    anything with a ``pods`` dict of verdicts by key)."""
    verdicts = diagnosis.pods if diagnosis is not None else {}
    out = {}
    for key, pod in state.pods.items():
        if pod.uses_dra:
            v = verdicts.get(key)
            out[key] = PodFacts(
                pod.node_name, v.stage if v else None, v.reason if v else "", v.summary if v else ""
            )
    return out


def pod_changes(before: Mapping[Key, PodFacts], after: Mapping[Key, PodFacts]) -> list[DraChange]:
    """Pods that use DRA created, deleted, or whose stage changed (when both have one). The
    mappings may hold only such Pods (those the other one lacks, or has at another stage)."""
    out = []
    for (namespace, name), now in after.items():
        was = before.get((namespace, name))
        if was is None:
            where = f" on node {now.node}" if now.node else ""
            stage = f"; it is {now.stage} ({now.reason})" if now.stage else ""
            sentence = f"Pod {namespace}/{name} was created{where}{stage}."
            nodes = (now.node,) if now.node else ()
            out.append(DraChange("pod-created", sentence, "Pod", namespace, name, nodes=nodes))
        elif was.stage and now.stage and was.stage != now.stage:
            out.append(
                DraChange(
                    "pod-stage",
                    f"Pod {namespace}/{name}: {was.stage} ({was.reason}) → {now.stage} "
                    f"({now.reason}). {now.summary}",
                    "Pod",
                    namespace,
                    name,
                    nodes=tuple(sorted({n for n in (was.node, now.node) if n})),
                )
            )
    for (namespace, name), was in before.items():
        if (namespace, name) not in after:
            stage = f"; it was {was.stage} ({was.reason})" if was.stage else ""
            sentence = f"Pod {namespace}/{name} was deleted{stage}."
            nodes = (was.node,) if was.node else ()
            out.append(DraChange("pod-deleted", sentence, "Pod", namespace, name, "before", nodes))
    return out


def _pool_devices(pool: Pool) -> dict[str, Device]:
    """The devices of a pool's current generation by name, the first of duplicates winning."""
    out: dict[str, Device] = {}
    for s in pool.slices:
        for d in s.devices:
            out.setdefault(d.name, d)
    return out


def _taint_text(taint: dict[str, Any]) -> str:
    value = f"={text(taint.get('value'))}" if taint.get("value") else ""
    return f"{text(taint.get('key')) or '?'}{value}:{text(taint.get('effect')) or '?'}"


def _slice_taints(device: Device) -> set[str]:
    return {_taint_text(t) for t in mappings(device.raw.get("taints"))}


def _pool_changes(before: ClusterState, after: ClusterState, slices: KindDiff) -> list[DraChange]:
    touched: set[tuple[str, str]] = set()
    for state, refs in ((after, slices.added), (before, slices.removed)):
        for ref in refs:
            s = state.slices[ref.name]
            touched.add((s.driver, s.pool_name))
    for ref in slices.changed:
        for state in (before, after):
            s = state.slices[ref.name]
            touched.add((s.driver, s.pool_name))
    out = []

    def change(code: str, sentence: str, pool: Pool, side: str = "after") -> None:
        first = (pool.slices or pool.stale_slices)[0].name
        out.append(DraChange(code, sentence, "ResourceSlice", "", first, side))

    for key in sorted(touched):
        old, new = before.pools.get(key), after.pools.get(key)
        label = "/".join(key)
        if old is None and new is not None:
            n = len(_pool_devices(new))
            change(
                "pool-added",
                f"Pool {label} appeared with {plural(n, 'device')} "
                f"(generation {new.generation}{_nodes_text(new)}).",
                new,
            )
            continue
        if new is None and old is not None:
            n = len(_pool_devices(old))
            change(
                "pool-removed",
                f"Pool {label} went away with its {plural(n, 'device')}{_nodes_text(old)}.",
                old,
                "before",
            )
            continue
        assert old is not None and new is not None
        if old.generation != new.generation:
            change(
                "pool-generation",
                f"Pool {label} generation {old.generation} → {new.generation}.",
                new,
            )
        was_stale = {s.name for s in old.stale_slices}
        for s in new.stale_slices:
            if s.name in was_stale:
                continue
            out.append(
                DraChange(
                    "pool-stale",
                    f"Pool {label} moved to generation {new.generation}, but its generation-"
                    f"{s.generation} ResourceSlice {s.name} was not deleted: the allocator "
                    "ignores it, and the driver should have deleted it.",
                    "ResourceSlice",
                    "",
                    s.name,
                )
            )
        was, now = _pool_devices(old), _pool_devices(new)
        if gained := [n for n in now if n not in was]:
            change(
                "devices-added",
                f"Pool {label} gained {plural(len(gained), 'device')}: {_names(gained)}.",
                new,
            )
        if lost := [n for n in was if n not in now]:
            change(
                "devices-removed",
                f"Pool {label} lost {plural(len(lost), 'device')}: {_names(lost)}.",
                new,
            )
        for name, device in now.items():
            if name not in was:
                continue
            old_taints, new_taints = _slice_taints(was[name]), _slice_taints(device)
            if old_taints == new_taints:
                continue
            where = f"{label}/{name}"
            s = device.slice
            if added := sorted(new_taints - old_taints):
                out.append(
                    DraChange(
                        "device-tainted",
                        f"Device {where} got taint{'s' if len(added) > 1 else ''} "
                        f"{_names(added)} (ResourceSlice {s.name}).",
                        "ResourceSlice",
                        "",
                        s.name,
                    )
                )
            if removed := sorted(old_taints - new_taints):
                out.append(
                    DraChange(
                        "device-untainted",
                        f"Device {where} lost taint{'s' if len(removed) > 1 else ''} "
                        f"{_names(removed)} (ResourceSlice {s.name}).",
                        "ResourceSlice",
                        "",
                        s.name,
                    )
                )
    return out


def _nodes_text(pool: Pool) -> str:
    nodes = pool.node_names
    return f", node {_names(nodes)}" if nodes else ""


def _rule_changes(
    before: ClusterState, after: ClusterState, rules: KindDiff, sides: tuple[Devices, Devices]
) -> list[DraChange]:
    out = []
    for ref in rules.added:
        rule = after.taint_rules[ref.name]
        n = sides[1].tainted_by(rule)
        out.append(
            DraChange(
                "taint-rule-added",
                f"DeviceTaintRule {rule.name} was added: taint {_taint_text(rule.taint)} "
                f"on {plural(n, 'device')}.",
                "DeviceTaintRule",
                "",
                rule.name,
            )
        )
    for ref in rules.removed:
        rule = before.taint_rules[ref.name]
        n = sides[0].tainted_by(rule)
        out.append(
            DraChange(
                "taint-rule-removed",
                f"DeviceTaintRule {rule.name} was removed: taint {_taint_text(rule.taint)} "
                f"lifted from {plural(n, 'device')}.",
                "DeviceTaintRule",
                "",
                rule.name,
                "before",
            )
        )
    for ref in rules.changed:
        old, new = before.taint_rules[ref.name], after.taint_rules[ref.name]
        if old.spec == new.spec:
            continue
        was, now = sides[0].tainted_by(old), sides[1].tainted_by(new)
        out.append(
            DraChange(
                "taint-rule-changed",
                f"DeviceTaintRule {new.name} changed: taint {_taint_text(old.taint)} on "
                f"{plural(was, 'device')} → {_taint_text(new.taint)} on "
                f"{plural(now, 'device')}.",
                "DeviceTaintRule",
                "",
                new.name,
            )
        )
    return out


def _node_changes(nodes: KindDiff) -> list[DraChange]:
    return [
        DraChange("node-added", f"Node {r.name} was added.", "Node", "", r.name)
        for r in nodes.added
    ] + [
        DraChange("node-removed", f"Node {r.name} was removed.", "Node", "", r.name, "before")
        for r in nodes.removed
    ]


# --- everything ---------------------------------------------------------------------------


def dra_changes(
    before: ClusterState,
    after: ClusterState,
    kinds: Mapping[str, KindDiff],
    devices: tuple[Devices, Devices] | None = None,
) -> list[DraChange]:
    """What the differences in ``kinds`` mean for DRA (Pods aside: see pod_changes), for the
    kinds given: claims, pools (their slices), DeviceTaintRules, Nodes. The states hold the
    objects the kind diffs name, and for slices every slice of their pools; ``devices`` (of
    each snapshot) what the sentences read beyond them, by default the states' own."""
    devices = devices or (StateDevices(before), StateDevices(after))
    out: list[DraChange] = []
    if claims := kinds.get("ResourceClaim"):
        out += _claim_changes(before, after, claims, devices)
    if slices := kinds.get("ResourceSlice"):
        out += _pool_changes(before, after, slices)
    if rules := kinds.get("DeviceTaintRule"):
        out += _rule_changes(before, after, rules, devices)
    if nodes := kinds.get("Node"):
        out += _node_changes(nodes)
    return out


class DiffTally:
    """A SnapshotDiff gathered a part at a time, for snapshots too large to compare whole.

    Every list (objects added, removed, changed or recurred per kind, changes per DRA code)
    keeps its first ``limit`` entries in the page's order and counts the rest; ``limit=None``
    keeps everything. ``totals``: the number of objects of each kind in each snapshot.
    """

    def __init__(
        self,
        *,
        totals: tuple[Mapping[str, int], Mapping[str, int]] | None = None,
        limit: int | None = None,
    ) -> None:
        self.limit = limit
        self.totals = totals
        self.kinds: dict[str, KindDiff] = {}
        self.changes: dict[str, list[DraChange]] = {}
        self.change_totals: Counter[str] = Counter()

    def kind(self, kind: str) -> KindDiff:
        if kind not in self.kinds:
            before, after = (t.get(kind, 0) for t in self.totals) if self.totals else (0, 0)
            self.kinds[kind] = KindDiff(kind, before, after)
        return self.kinds[kind]

    def add(self, part: KindDiff, changes: Iterable[DraChange] = ()) -> None:
        """A part of one kind's objects (and what it means for DRA)."""
        kind = self.kind(part.kind)
        if not self.totals:
            kind.before += part.before
            kind.after += part.after
        for which in ("added", "removed", "changed", "recurred"):
            items = getattr(part, which)
            kind.totals[which] = kind.total(which) + part.total(which)
            setattr(kind, which, self._first(getattr(kind, which) + items, _object_order))
        kind.unread += part.unread
        kind.uncompared += part.uncompared
        self.add_changes(changes)

    def room(self, code: str) -> int:
        """How many more changes of the code the lists may still keep (parts come in key
        order: a later one can only be further down the list)."""
        if self.limit is None:
            return sys.maxsize
        return max(self.limit - len(self.changes.get(code, ())), 0)

    def count(self, code: str) -> None:
        """A change of the code that no list will keep: counted only."""
        self.change_totals[code] += 1

    def add_changes(self, changes: Iterable[DraChange]) -> None:
        for c in changes:
            self.change_totals[c.code] += 1
            self.changes.setdefault(c.code, []).append(c)
        for code, kept in self.changes.items():
            if self.limit is not None and len(kept) > 2 * self.limit:
                self.changes[code] = self._first(kept, _change_order)

    def _first(self, items: list[Any], order: Any) -> list[Any]:
        if self.limit is None or len(items) <= self.limit:
            return items
        return sorted(items, key=order)[: self.limit]

    def result(self) -> SnapshotDiff:
        kinds = [self.kind(k) for k in KIND_ORDER]
        for k in kinds:
            for which in ("added", "removed", "changed", "recurred"):
                getattr(k, which).sort(key=_object_order)
        changes = [c for kept in self.changes.values() for c in self._first(kept, _change_order)]
        changes.sort(key=_change_order)
        return SnapshotDiff(
            kinds=[k for k in kinds if k.before or k.after or k.any],
            changes=changes,
            change_totals=dict(self.change_totals),
        )


def _object_order(o: ObjectRef) -> tuple[str, str]:
    return (o.namespace, o.name)


def _change_order(c: DraChange) -> tuple[int, str, str, str]:
    return (CHANGE_ORDER[c.code], c.namespace, c.name, c.sentence)


def diff(
    before: ClusterState,
    after: ClusterState,
    *,
    before_diagnosis: Any = None,
    after_diagnosis: Any = None,
    totals: tuple[dict[str, int], dict[str, int]] | None = None,
) -> SnapshotDiff:
    """What changed from ``before`` to ``after`` (two snapshots of one cluster), whole.

    The diagnoses (``SnapshotDiagnosis`` of each state, or anything with a ``pods`` dict of
    verdicts by (namespace, name)) are optional; with both, Pods whose diagnosis stage changed
    are reported, and created and deleted Pods say their stage. ``totals``: the number of
    objects of each kind in each snapshot, when the states hold only part of them.
    """
    tally = DiffTally(totals=totals)
    with gc_paused():  # nothing cyclic among the results, and the states are millions of objects
        old, new = _by_key(before), _by_key(after)
        kinds = {kind: kind_diff(kind, old[kind], new[kind]) for kind in KIND_ORDER}
        for part in kinds.values():
            tally.add(part)
        tally.add_changes(
            pod_changes(pod_facts(before, before_diagnosis), pod_facts(after, after_diagnosis))
            + dra_changes(before, after, kinds)
        )
    return tally.result()
