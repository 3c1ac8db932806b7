"""A device's life across a cluster's snapshots, in order: who held it, when it was reported
unhealthy, when it was tainted, and which Pods its taints evicted (issue 25).

The input is the device's stored record (analysis.DeviceRecord.as_dict) in each snapshot where
it exists, oldest first. A moment has an exact time where Kubernetes records one (a taint's
``timeAdded``, the eviction controller's DisruptionTarget condition, the time a toleration runs
out); otherwise it is first seen in a snapshot, and its time is that snapshot's capture: the
change happened before, after the snapshot before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dradash.dra.fields import mappings, text, timestamp


@dataclass(frozen=True)
class Moment:
    time: datetime
    exact: bool  # a time Kubernetes recorded; False: first seen in snapshot ``snapshot``
    kind: str  # allocated · released · health · tainted · untainted · evicted · eviction-due
    text: str
    snapshot: int
    pod: str = ""  # "namespace/name" of the Pod it concerns, if any

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time.isoformat(),
            "exact": self.exact,
            "kind": self.kind,
            "text": self.text,
            "snapshot": self.snapshot,
            "pod": self.pod or None,
        }


def device_timeline(history: list[tuple[int, datetime, dict[str, Any]]]) -> list[Moment]:
    """The moments of a device's life; ``history`` is ``(snapshot id, captured at, record)``
    per snapshot that has the device, oldest first. Ordered by time (first-seen moments at
    their snapshot's capture time)."""
    out: list[Moment] = []
    before: dict[str, Any] = {}
    for snapshot, captured, record in history:
        out += _changes(snapshot, captured, before, record)
        before = record
    return sorted(out, key=lambda m: (m.time, m.snapshot))


def _changes(
    snapshot: int, captured: datetime, before: dict[str, Any], now: dict[str, Any]
) -> list[Moment]:
    out = []

    def seen(kind: str, words: str, pod: str = "") -> None:
        out.append(Moment(captured, False, kind, words, snapshot, pod))

    held, was = set(now.get("claims") or []), set(before.get("claims") or [])
    pods = ", ".join(now.get("pods") or [])
    for claim in sorted(held - was):
        seen(
            "allocated", f"allocated to ResourceClaim {claim}" + (f" (Pod {pods})" if pods else "")
        )
    for claim in sorted(was - held):
        seen("released", f"released by ResourceClaim {claim}")

    reports = {_report_key(r): r for r in mappings(now.get("health"))}
    earlier = {_report_key(r): r for r in mappings(before.get("health"))}
    for key, r in sorted(reports.items()):
        if earlier.get(key, {}).get("health") == r.get("health"):
            continue
        message = text(r.get("message"))
        seen(
            "health",
            f"reported {text(r.get('health'))} by Pod {text(r.get('pod'))}, container "
            f"{text(r.get('container'))}" + (f": {message}" if message else ""),
            text(r.get("pod")),
        )

    taints = {_taint_key(t): t for t in mappings(now.get("taint_sources"))}
    had = {_taint_key(t): t for t in mappings(before.get("taint_sources"))}
    for key, t in sorted(taints.items()):
        if key in had:
            continue
        added = timestamp(text(t.get("time_added")))
        words = (
            f"tainted {_spelled(t)} by {text(t.get('source_kind'))} {text(t.get('source_name'))}"
        )
        out.append(Moment(added or captured, added is not None, "tainted", words, snapshot))
    for key in sorted(had.keys() - taints.keys()):
        seen("untainted", f"taint {_spelled(had[key])} gone")

    listed = {(text(e.get("pod")), text(e.get("state"))) for e in mappings(before.get("evictions"))}
    evicted_before = {pod for pod, state in listed if state == "evicted"}
    due_before = {pod for pod, state in listed if state in ("due", "tolerated")}
    for e in mappings(now.get("evictions")):
        pod = text(e.get("pod"))
        state = text(e.get("state"))
        taint = _spelled(e.get("taint") or {})
        if state == "evicted" and pod not in evicted_before:
            marked = timestamp(text(e.get("marked_at")))
            words = f"Pod {pod} evicted by the device taint eviction controller ({taint})"
            out.append(
                Moment(marked or captured, marked is not None, "evicted", words, snapshot, pod)
            )
        elif state in ("due", "tolerated") and pod not in due_before:
            at = timestamp(text(e.get("evict_at")))
            words = (
                f"Pod {pod} to be evicted ({taint}; tolerationSeconds "
                f"{e.get('toleration_seconds')})"
            )
            out.append(Moment(at or captured, at is not None, "eviction-due", words, snapshot, pod))
    return out


def _report_key(r: dict[str, Any]) -> tuple[str, str, str]:
    return (text(r.get("pod")), text(r.get("container")), text(r.get("resource")))


def _taint_key(t: dict[str, Any]) -> tuple[str, ...]:
    return tuple(text(t.get(k)) for k in ("key", "value", "effect", "source_kind", "source_name"))


def _spelled(t: dict[str, Any]) -> str:
    key, value, effect = text(t.get("key")), text(t.get("value")), text(t.get("effect"))
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"
