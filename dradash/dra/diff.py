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
The DRA sentences are derived from the changed objects only, except for the diagnosis stages,
which are a dictionary lookup per Pod.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dradash.dra.fields import mapping, mappings, number, text
from dradash.dra.gc import gc_paused
from dradash.dra.objects import Device, DeviceTaintRule, Pool, Resource, ResourceClaim
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
    "devices-added": "Devices added to pools",
    "devices-removed": "Devices removed from pools",
    "pool-added": "Pools added",
    "pool-removed": "Pools removed",
    "node-added": "Nodes added",
    "node-removed": "Nodes removed",
}
CHANGE_ORDER = {code: i for i, code in enumerate(CHANGE_TITLES)}

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

    @property
    def unchanged(self) -> int:
        return self.before - len(self.removed) - len(self.changed) - len(self.recurred)

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.recurred)


@dataclass(frozen=True)
class DraChange:
    code: str  # a key of CHANGE_TITLES
    sentence: str
    kind: str  # the object the change is about
    namespace: str
    name: str
    side: str = "after"  # the snapshot that has the object: "after", or "before" once it is gone

    @property
    def title(self) -> str:
        return CHANGE_TITLES[self.code]


@dataclass
class SnapshotDiff:
    kinds: list[KindDiff]  # in KIND_ORDER, every kind either snapshot has
    changes: list[DraChange]  # sorted by CHANGE_TITLES order, then object

    def kind(self, name: str) -> KindDiff | None:
        return next((k for k in self.kinds if k.kind == name), None)

    @property
    def added(self) -> int:
        return sum(len(k.added) for k in self.kinds)

    @property
    def removed(self) -> int:
        return sum(len(k.removed) for k in self.kinds)

    @property
    def changed(self) -> int:
        return sum(len(k.changed) for k in self.kinds)

    @property
    def recurred(self) -> int:
        return sum(len(k.recurred) for k in self.kinds)

    @property
    def empty(self) -> bool:
        return not any(k.any for k in self.kinds)

    @cached_property
    def _by_code(self) -> dict[str, list[DraChange]]:
        out: dict[str, list[DraChange]] = {}
        for c in self.changes:
            out.setdefault(c.code, []).append(c)
        return out

    def groups(self, kind: str | None = None) -> list[tuple[str, str, list[DraChange]]]:
        """(code, title, changes) per code that has any, optionally about one kind only."""
        out = []
        for code, changes in self._by_code.items():
            if kind is not None and changes[0].kind != kind:
                changes = [c for c in changes if c.kind == kind]
            if changes:
                out.append((code, CHANGE_TITLES[code], changes))
        return out


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
    if _PLAIN_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


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
    return re.split(r"[.\[]", change.path, maxsplit=1)[0] in EVENT_RECURRENCE


# --- objects per kind ---------------------------------------------------------------------


def _by_key(state: ClusterState) -> dict[str, dict[tuple[str, str], Resource]]:
    def cluster_scoped(objs: dict[str, Any]) -> dict[tuple[str, str], Resource]:
        return {("", name): obj for name, obj in objs.items()}

    return {
        "Node": cluster_scoped(state.nodes),
        "ResourceSlice": cluster_scoped(state.slices),
        "DeviceClass": cluster_scoped(state.classes),
        "DeviceTaintRule": cluster_scoped(state.taint_rules),
        "ResourceClaim": dict(state.claims),
        "ResourceClaimTemplate": dict(state.templates),
        "Pod": dict(state.pods),
        "Job": dict(state.jobs),
        "Namespace": cluster_scoped(state.namespaces),
        "PriorityClass": cluster_scoped(state.priority_classes),
        "Event": {(e.namespace, e.name): e for e in state.events},
    }


def _detail(obj: Resource) -> str:
    if obj.kind != "Event":
        return ""
    involved = mapping(obj.raw.get("involvedObject") or obj.raw.get("regarding"))
    target = "/".join(p for p in (text(involved.get("namespace")), text(involved.get("name"))) if p)
    reason = text(obj.raw.get("reason"))
    return f"{reason} on {text(involved.get('kind'))} {target}".strip()


def _recurred_detail(before: Resource, after: Resource) -> str:
    def count(obj: Resource) -> int:
        raw = obj.raw
        series = mapping(raw.get("series"))
        return number(raw.get("count") or series.get("count") or raw.get("deprecatedCount"), 1)

    return f"{_detail(after)}: ×{count(before)} → ×{count(after)}"


def _kind_diff(
    kind: str,
    before: dict[tuple[str, str], Resource],
    after: dict[tuple[str, str], Resource],
    totals: tuple[int, int] | None = None,
) -> KindDiff:
    counts = totals or (len(before), len(after))
    result = KindDiff(kind=kind, before=counts[0], after=counts[1])
    for key, old in before.items():
        new = after.get(key)
        if new is None:
            result.removed.append(ObjectRef(kind, key[0], key[1], _detail(old)))
            continue
        if old.raw is new.raw or old.raw == new.raw:
            continue
        fields = field_diff(old.raw, new.raw)
        significant = [f for f in fields if not _follower(f.path)]
        if not significant:
            continue
        if kind == "Event" and all(_recurrence(f) for f in significant):
            detail = _recurred_detail(old, new)
            result.recurred.append(ObjectChange(kind, key[0], key[1], detail, fields))
        else:
            result.changed.append(ObjectChange(kind, key[0], key[1], _detail(new), fields))
    for key, new in after.items():
        if key not in before:
            result.added.append(ObjectRef(kind, key[0], key[1], _detail(new)))
    for items in (result.added, result.removed, result.changed, result.recurred):
        items.sort(key=lambda o: (o.namespace, o.name))
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


def _where(state: ClusterState, claim: ResourceClaim) -> str:
    nodes = sorted({r.device.node_name for r in claim.results if r.device and r.device.node_name})
    if not nodes:
        allowed = state.allocation_nodes(claim)
        if allowed is None:
            return " (usable from any node)"
        nodes = allowed
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
    before: ClusterState, after: ClusterState, kinds: dict[str, KindDiff]
) -> list[DraChange]:
    out = []
    claims = kinds["ResourceClaim"]

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
                f"{_names(devices) or 'no device'}{_where(after, claim)}{also}.",
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
                f"{_names(devices) or 'its allocation'}{_where(before, claim)}.",
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
                f"{_names(_result_keys(new)) or 'no device'}{_where(after, new)}.",
                new,
            )
        elif old.allocated and not new.allocated:
            change(
                "claim-released",
                f"ResourceClaim {new.ref} was deallocated, releasing "
                f"{_names(_result_keys(old)) or 'its allocation'}{_where(before, old)}.",
                new,
            )
        elif old.allocated and sorted(_result_keys(old)) != sorted(_result_keys(new)):
            change(
                "claim-reallocated",
                f"ResourceClaim {new.ref} was allocated {_names(_result_keys(new))}"
                f"{_where(after, new)} instead of {_names(_result_keys(old))}"
                f"{_where(before, old)}.",
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


def _pod_changes(
    before: ClusterState,
    after: ClusterState,
    kinds: dict[str, KindDiff],
    before_diagnosis: Any,
    after_diagnosis: Any,
) -> list[DraChange]:
    out = []
    pods = kinds["Pod"]
    for ref in pods.added:
        pod = after.pods[(ref.namespace, ref.name)]
        if not pod.uses_dra:
            continue
        where = f" on node {pod.node_name}" if pod.node_name else ""
        verdict = after_diagnosis.pods.get((ref.namespace, ref.name)) if after_diagnosis else None
        stage = f"; it is {verdict.stage} ({verdict.reason})" if verdict else ""
        sentence = f"Pod {pod.ref} was created{where}{stage}."
        out.append(DraChange("pod-created", sentence, "Pod", pod.namespace, pod.name))
    for ref in pods.removed:
        pod = before.pods[(ref.namespace, ref.name)]
        if not pod.uses_dra:
            continue
        verdict = before_diagnosis.pods.get((ref.namespace, ref.name)) if before_diagnosis else None
        stage = f"; it was {verdict.stage} ({verdict.reason})" if verdict else ""
        sentence = f"Pod {pod.ref} was deleted{stage}."
        out.append(DraChange("pod-deleted", sentence, "Pod", pod.namespace, pod.name, "before"))
    if before_diagnosis is None or after_diagnosis is None:
        return out
    was_by_key = before_diagnosis.pods
    for key, now in after_diagnosis.pods.items():
        was = was_by_key.get(key)
        if was is None or was.stage == now.stage:
            continue
        namespace, name = key
        out.append(
            DraChange(
                "pod-stage",
                f"Pod {namespace}/{name}: {was.stage} ({was.reason}) → {now.stage} "
                f"({now.reason}). {now.summary}",
                "Pod",
                namespace,
                name,
            )
        )
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


def _pool_changes(
    before: ClusterState, after: ClusterState, kinds: dict[str, KindDiff]
) -> list[DraChange]:
    slices = kinds["ResourceSlice"]
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


def _rule_devices(state: ClusterState, rule: DeviceTaintRule) -> int:
    return sum(1 for d in state.devices.values() if any(r is rule for r, _ in d.rule_taints))


def _rule_changes(
    before: ClusterState, after: ClusterState, kinds: dict[str, KindDiff]
) -> list[DraChange]:
    rules = kinds["DeviceTaintRule"]
    out = []
    for ref in rules.added:
        rule = after.taint_rules[ref.name]
        n = _rule_devices(after, rule)
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
        n = _rule_devices(before, rule)
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
        was, now = _rule_devices(before, old), _rule_devices(after, new)
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


def _node_changes(kinds: dict[str, KindDiff]) -> list[DraChange]:
    nodes = kinds["Node"]
    return [
        DraChange("node-added", f"Node {r.name} was added.", "Node", "", r.name)
        for r in nodes.added
    ] + [
        DraChange("node-removed", f"Node {r.name} was removed.", "Node", "", r.name, "before")
        for r in nodes.removed
    ]


# --- everything ---------------------------------------------------------------------------


def diff(
    before: ClusterState,
    after: ClusterState,
    *,
    before_diagnosis: Any = None,
    after_diagnosis: Any = None,
    totals: tuple[dict[str, int], dict[str, int]] | None = None,
) -> SnapshotDiff:
    """What changed from ``before`` to ``after`` (two snapshots of one cluster).

    The diagnoses (``SnapshotDiagnosis`` of each state, or anything with a ``pods`` dict of
    verdicts by (namespace, name)) are optional; with both, Pods whose diagnosis stage changed
    are reported, and created and deleted Pods say their stage.

    The states may hold only part of each snapshot: the objects that differ, and what the
    sentences about them read (the whole pools of changed slices and of devices changed claims
    hold). Objects both hold unchanged are not reported; ``totals`` then gives the number of
    objects of each kind in each snapshot.
    """
    with gc_paused():  # nothing cyclic among the results, and the states are millions of objects
        old, new = _by_key(before), _by_key(after)
        kinds = {
            kind: _kind_diff(
                kind,
                old[kind],
                new[kind],
                (totals[0].get(kind, 0), totals[1].get(kind, 0)) if totals else None,
            )
            for kind in KIND_ORDER
        }
        changes = (
            _pod_changes(before, after, kinds, before_diagnosis, after_diagnosis)
            + _claim_changes(before, after, kinds)
            + _pool_changes(before, after, kinds)
            + _rule_changes(before, after, kinds)
            + _node_changes(kinds)
        )
    changes.sort(key=lambda c: (CHANGE_ORDER[c.code], c.namespace, c.name, c.sentence))
    return SnapshotDiff(
        kinds=[k for k in kinds.values() if k.before or k.after],
        changes=changes,
    )
