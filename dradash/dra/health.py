"""A device's life after allocation: health reports, taints and eviction, binding conditions.

Pure functions over a ClusterState (DESIGN "Kubernetes 1.37 workloads" → "A device's health and
life"); diagnosis, findings, chain and analysis read them. Upstream shapes and rules, with their
sources, are in /work/notes/health-research.md:

* health (KEP-4680): ``Pod.health`` / ``Device.health`` hold the kubelet's reports, resolved by
  ClusterState;
* taints and eviction (KEP-5055): a device's NoExecute taint evicts the Pods whose claims hold
  it, unless the allocation result's tolerations (those with effect NoExecute) tolerate it;
  tolerationSeconds delays the eviction from the taint's timeAdded; effect None only previews;
* binding (KEP-5007): a device's bindingConditions must all be True in the claim's
  status.devices conditions, a True bindingFailureCondition fails the binding, and the
  scheduler gives up ``BINDING_TIMEOUT`` seconds after status.allocation.allocationTimestamp.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dradash.dra.allocator.scheduler import BLOCKING_EFFECTS, NO_EXECUTE, tolerates
from dradash.dra.fields import text, timestamp
from dradash.dra.objects import (
    AllocationResult,
    Device,
    HealthReport,
    Pod,
    ResourceClaim,
    TaintSource,
)
from dradash.dra.state import ClusterState

# The scheduler's DynamicResources bindingTimeout default (1.34: BindingTimeoutDefaultSeconds;
# 1.35 on: the plugin argument, DynamicResourcesBindingTimeoutDefault). A snapshot does not show
# the scheduler's configuration, so dradash assumes the default.
BINDING_TIMEOUT = 600
NONE_EFFECT = "None"
# The DisruptionTarget condition's reason the device taint eviction controller sets.
TAINT_EVICTION = "DeletionByDeviceTaintManager"

# --- health ---------------------------------------------------------------------------------


def unhealthy(pod: Pod) -> list[HealthReport]:
    return [r for r in pod.health if r.health == "Unhealthy"]


def unknown(pod: Pod) -> list[HealthReport]:
    return [r for r in pod.health if r.health == "Unknown"]


# --- taints and eviction --------------------------------------------------------------------


def eviction_delay(result: AllocationResult, taint: dict[str, Any]) -> int | None:
    """Seconds after the taint's timeAdded at which the device taint eviction controller evicts
    the users of ``result`` for this taint (as if its effect were NoExecute); None when a
    toleration without tolerationSeconds tolerates it for ever. Only tolerations with effect
    NoExecute count (devicetainteviction evictionTime); negative seconds are 0."""
    taint = {**taint, "effect": NO_EXECUTE}
    seconds: int | None = None
    for toleration in result.tolerations:
        if text(toleration.get("effect")) != NO_EXECUTE or not tolerates(toleration, taint):
            continue
        value = toleration.get("tolerationSeconds")
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        seconds = max(0, value) if seconds is None else min(seconds, max(0, value))
    return seconds or 0


@dataclass
class Eviction:
    """A Pod that a device's NoExecute taint evicts (or, for effect None, would evict)."""

    pod: Pod
    claim: ResourceClaim
    result: AllocationResult
    device: Device
    source: TaintSource
    delay: int  # seconds after the taint's timeAdded (tolerationSeconds; 0 without toleration)

    @property
    def preview(self) -> bool:
        """Effect None: nothing happens; the rule shows what NoExecute would do."""
        return self.source.effect != NO_EXECUTE

    @property
    def at(self) -> datetime | None:
        added = timestamp(self.source.time_added)
        return added + timedelta(seconds=self.delay) if added is not None else None

    @property
    def evicted(self) -> bool:
        """The controller marked the Pod (DisruptionTarget, DeletionByDeviceTaintManager)."""
        condition = self.pod.condition("DisruptionTarget")
        return condition is not None and condition.get("reason") == TAINT_EVICTION

    def state(self, now: datetime | None) -> str:
        """``evicted`` · ``would-evict`` (effect None) · ``due`` (the time has come, or is
        unknown) · ``tolerated`` (tolerationSeconds not over yet at ``now``)."""
        if self.evicted:
            return "evicted"
        if self.preview:
            return "would-evict"
        at = self.at
        if self.delay and at is not None and now is not None and now < at:
            return "tolerated"
        return "due"

    def as_dict(self, now: datetime | None) -> dict[str, Any]:
        """{"pod", "claim", "device": "driver/pool/device", "taint": TaintSource.as_dict(),
        "toleration_seconds", "evict_at", "state"}."""
        at = self.at
        return {
            "pod": self.pod.ref,
            "claim": self.claim.ref,
            "device": "/".join(self.device.key),
            "taint": self.source.as_dict(),
            "toleration_seconds": self.delay,
            "evict_at": at.strftime("%Y-%m-%dT%H:%M:%SZ") if at is not None else "",
            "state": self.state(now),
        }


def pod_taints(pod: Pod, *, reserved: bool = False) -> list[Eviction]:
    """The NoExecute (and effect None) taints of the devices the Pod's claims hold that their
    tolerations do not tolerate for ever; ``reserved``: only claims reserved for the Pod, as the
    eviction controller counts them (an evicted Pod's claim may have been released since)."""
    out = []
    for claim in pod.claims:
        if reserved and not claim.reserved_for(pod):
            continue
        for result in claim.results:
            device = result.device
            if device is None or result.admin_access:
                continue
            for source in device.taint_sources:
                if source.effect not in (NO_EXECUTE, NONE_EFFECT):
                    continue
                delay = eviction_delay(result, source.taint)
                if delay is not None:
                    out.append(Eviction(pod, claim, result, device, source, delay))
    return out


def evictions(state: ClusterState) -> list[Eviction]:
    """Every Pod on a node that a device taint evicts, would evict (effect None) or did."""
    return state.derived(
        "health.evictions",
        lambda s: [
            e
            for pod in sorted(s.pods.values(), key=lambda p: (p.namespace, p.name))
            if pod.node_name
            for e in pod_taints(pod, reserved=True)
        ],
    )


def _evictions_by_device(state: ClusterState) -> dict[int, list[Eviction]]:
    out: dict[int, list[Eviction]] = {}
    for e in evictions(state):
        out.setdefault(id(e.device), []).append(e)
    return out


def device_rules(state: ClusterState, device: Device) -> list[dict[str, Any]]:
    """The DeviceTaintRules that taint ``device``, for its page: [{"name", "effect" (NoSchedule ·
    NoExecute · None, a preview), "taint": TaintSource.as_dict(), "selector" (spec.deviceSelector),
    "conditions": [{"type", "status", "reason", "message", "lastTransitionTime"}] (status, with
    EvictionInProgress), "evictions": [Eviction.as_dict()] (the Pods using this device that the
    rule evicts, will evict, would evict or did, at capture)}]."""
    by_device: dict[int, list[Eviction]] = state.derived(
        "health.evictions-by-device", _evictions_by_device
    )
    now = timestamp(state.meta.captured_at)
    out = []
    for source in device.taint_sources:
        rule = source.rule
        if rule is None:
            continue
        out.append(
            {
                "name": rule.name,
                "effect": rule.effect,
                "taint": source.as_dict(),
                "selector": {k: text(v) for k, v in rule.selector.items() if text(v)},
                "conditions": [
                    {
                        k: text(c.get(k))
                        for k in ("type", "status", "reason", "message", "lastTransitionTime")
                    }
                    for c in rule.conditions
                ],
                "evictions": [
                    e.as_dict(now)
                    for e in by_device.get(id(device), [])
                    if (e.source.kind, e.source.name, e.source.taint)
                    == (source.kind, source.name, source.taint)
                ],
            }
        )
    return out


def blocking(device: Device) -> list[TaintSource]:
    """Its NoSchedule and NoExecute taints: no new claim gets it unless it tolerates them."""
    return [s for s in device.taint_sources if s.effect in BLOCKING_EFFECTS]


@dataclass
class SharedCounters:
    """A device that is unhealthy or tainted, and the devices drawing on the same counter set
    that are not tainted: still allocatable (MIG partitions of a broken GPU)."""

    device: Device
    why: str  # "reported Unhealthy" or "tainted key=value:effect by …"
    counter_set: str
    free: list[Device]  # untainted and unallocated
    allocated: list[Device]  # untainted, allocated to claims


def shared_counter_risks(state: ClusterState) -> list[SharedCounters]:
    by_set: dict[tuple[str, str, str], list[Device]] = {}
    for device in state.devices.values():
        for entry in device.consumes_counters:
            name = text(entry.get("counterSet"))
            if name:
                by_set.setdefault((device.driver, device.pool_name, name), []).append(device)
    out = []
    for (_, _, counter_set), devices in sorted(by_set.items()):
        for bad in sorted(devices, key=lambda d: d.name):
            why = _bad(bad)
            if not why:
                continue
            others = [
                d
                for d in sorted(devices, key=lambda d: d.name)
                if d is not bad and not blocking(d) and not _unhealthy(d)
            ]
            if others:
                out.append(
                    SharedCounters(
                        bad,
                        why,
                        counter_set,
                        [d for d in others if not d.allocated],
                        [d for d in others if d.allocated],
                    )
                )
    return out


def _unhealthy(device: Device) -> bool:
    return any(r.health == "Unhealthy" for r in device.health)


def _bad(device: Device) -> str:
    taints = blocking(device)
    if taints:
        source = taints[0]
        return f"carries taint {source.spelled} ({source.kind} {source.name})"
    if _unhealthy(device):
        return "is reported Unhealthy"
    return ""


# --- binding conditions ---------------------------------------------------------------------


@dataclass
class Binding:
    """The binding conditions of one allocated device and their state."""

    result: AllocationResult
    pending: list[str]  # binding conditions not True yet
    failed: list[str]  # binding failure conditions that are True

    def as_dict(self) -> dict[str, Any]:
        """{"conditions": [{"type", "role": "binding"|"failure", "status", "reason", "message",
        "time"}], "pending": [type], "failed": [type]}; status "" where the driver has not
        set the condition."""
        conditions = self.result.status_conditions
        rows = []
        for role, names in (
            ("binding", self.result.binding_conditions),
            ("failure", self.result.binding_failure_conditions),
        ):
            for name in names:
                c = conditions.get(name, {})
                rows.append(
                    {
                        "type": name,
                        "role": role,
                        "status": text(c.get("status")),
                        "reason": text(c.get("reason")),
                        "message": text(c.get("message")),
                        "time": text(c.get("lastTransitionTime")),
                    }
                )
        return {"conditions": rows, "pending": self.pending, "failed": self.failed}


def binding(result: AllocationResult) -> Binding | None:
    """None for a device without binding conditions."""
    if not result.binding_conditions and not result.binding_failure_conditions:
        return None
    conditions = result.status_conditions
    return Binding(
        result,
        [
            c
            for c in result.binding_conditions
            if text(conditions.get(c, {}).get("status")) != "True"
        ],
        [
            c
            for c in result.binding_failure_conditions
            if text(conditions.get(c, {}).get("status")) == "True"
        ],
    )


@dataclass
class ClaimBinding:
    """A claim's binding conditions: per device, and the scheduler's timeout at capture."""

    claim: ResourceClaim
    devices: list[Binding]
    allocated_at: datetime | None
    now: datetime | None  # the capture time

    @property
    def deadline(self) -> datetime | None:
        if self.allocated_at is None:
            return None
        return self.allocated_at + timedelta(seconds=BINDING_TIMEOUT)

    @property
    def seconds_left(self) -> int | None:
        """Seconds until the timeout at capture (negative: past it); None when unknown."""
        if self.deadline is None or self.now is None:
            return None
        return int((self.deadline - self.now).total_seconds())

    @property
    def pending(self) -> list[str]:
        return [c for b in self.devices for c in b.pending]

    @property
    def failed(self) -> list[tuple[AllocationResult, str]]:
        return [(b.result, c) for b in self.devices for c in b.failed]

    @property
    def timed_out(self) -> bool:
        """isClaimTimeout: a device waits on binding conditions past the deadline."""
        left = self.seconds_left
        return bool(self.pending) and left is not None and left < 0

    def as_dict(self) -> dict[str, Any]:
        """{"timeout_seconds", "allocated_at", "deadline", "seconds_left", "timed_out",
        "failed": bool, "pending": [type]}; times RFC 3339, "" and null where unknown."""
        deadline = self.deadline
        return {
            "timeout_seconds": BINDING_TIMEOUT,
            "allocated_at": self.claim.allocation_timestamp,
            "deadline": deadline.strftime("%Y-%m-%dT%H:%M:%SZ") if deadline else "",
            "seconds_left": self.seconds_left,
            "timed_out": self.timed_out,
            "failed": bool(self.failed),
            "pending": self.pending,
        }


def claim_binding(state: ClusterState, claim: ResourceClaim) -> ClaimBinding | None:
    """None for a claim none of whose devices has binding conditions."""
    devices = [b for r in claim.results if (b := binding(r)) is not None]
    if not devices:
        return None
    return ClaimBinding(
        claim,
        devices,
        timestamp(claim.allocation_timestamp),
        timestamp(state.meta.captured_at),
    )


def duration(seconds: int) -> str:
    """``42 s``, ``9 min 5 s``, ``2 h 3 min``."""
    seconds = abs(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"
