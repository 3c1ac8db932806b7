"""Findings: problems in a snapshot that do not block one Pod's diagnosis but matter.

``find(state)`` checks the whole snapshot and returns ``Finding``s (DESIGN "Diagnosis: stages and
reasons"), each from the snapshot's own objects: Pods, claims and their reservations, pools and
devices, and dradash's own CEL evaluation of class and request selectors. Event text is never
the evidence.

Selectors are evaluated once per distinct (device class, request selectors) for the whole
snapshot, and only for the Pods and Jobs that need them: devices are grouped by what any of
those selectors reads, so one CEL run serves every device with the same projection.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dradash.dra.cel import (
    CelCompileError,
    DeviceInput,
    Program,
    Selector,
    compile_selector,
    evaluate_devices,
)
from dradash.dra.cel.device import projection
from dradash.dra.fields import dig, mapping, mappings, number, text
from dradash.dra.matching import device_table
from dradash.dra.objects import (
    AllocationResult,
    Device,
    DeviceRequestSpec,
    Job,
    Pod,
    Request,
    Resource,
    ResourceClaim,
    ResourceClaimTemplate,
)
from dradash.dra.state import ClusterState

SEVERITIES = ("error", "warning", "info")
V1 = "resource.k8s.io/v1"
# Drivers whose devices belong to the Pod, not to a container: DraNet moves network interfaces
# into the Pod's network namespace, so its claims are never listed in resources.claims.
POD_LEVEL_DRIVERS = frozenset({"dra.net"})
TERMINAL_PHASES = ("Succeeded", "Failed")
LISTED = 5  # names spelled out in a message before "and N more"

ObjectRef = dict[str, str]


@dataclass
class Finding:
    code: str  # a DESIGN finding code
    severity: str  # "error" | "warning" | "info"
    message: str  # one sentence a person reads, naming the objects
    objects: list[ObjectRef]  # [{"kind", "namespace", "name"}]; namespace "" for cluster objects
    next_step: str = ""  # a concrete action, e.g. the kubectl command to inspect or clean up

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "objects": [dict(o) for o in self.objects],
            "next_step": self.next_step,
        }

    @property
    def sort_key(self) -> tuple[int, str, tuple[tuple[str, str, str], ...], str]:
        return (
            SEVERITIES.index(self.severity) if self.severity in SEVERITIES else len(SEVERITIES),
            self.code,
            tuple((o["kind"], o["namespace"], o["name"]) for o in self.objects),
            self.message,
        )


def find(state: ClusterState) -> list[Finding]:
    """Every finding of the snapshot, by severity (error, warning, info), code, then objects."""
    return list(state.derived("findings.find", _find))


def _find(state: ClusterState) -> list[Finding]:
    checks: list[Callable[[ClusterState], Iterable[Finding]]] = [
        _api_not_served,
        _pod_findings,
        _claim_findings,
        _class_missing,
        _pool_findings,
        _device_tainted,
        _dangling_allocations,
        _capacity_findings,
    ]
    found = [f for check in checks for f in check(state)]
    return sorted(found, key=lambda f: f.sort_key)


# --- helpers ---------------------------------------------------------------------------------


def ref(obj: Resource) -> ObjectRef:
    return {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name}


def named(kind: str, namespace: str, name: str) -> ObjectRef:
    return {"kind": kind, "namespace": namespace, "name": name}


def _listing(names: Iterable[str], limit: int = LISTED) -> str:
    """Names joined as "a, b and c"; past ``limit`` of them, as "a, b, … and 3 more"."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    if len(items) <= limit:
        return ", ".join(items[:-1]) + " and " + items[-1]
    return ", ".join(items[:limit]) + f" and {len(items) - limit} more"


def _plural(n: int, word: str, plural: str = "") -> str:
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def _server_minor(state: ClusterState) -> int | None:
    """The Kubernetes minor version the snapshot says the server runs (``v1.36.1`` → 36)."""
    match = re.match(r"v?1\.(\d+)", state.meta.server_version or "")
    return int(match.group(1)) if match else None


def _time(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _age(state: ClusterState, since: str) -> str:
    """How long before the snapshot ``since`` was, as " (for 42 minutes)"; "" if unknown."""
    start, now = _time(since), _time(state.meta.captured_at)
    if start is None or now is None or now < start:
        return ""
    minutes = int((now - start).total_seconds() // 60)
    if minutes >= 2 * 24 * 60:
        return f" (for {minutes // (24 * 60)} days)"
    if minutes >= 120:
        return f" (for {minutes // 60} hours)"
    return f" (for {_plural(minutes, 'minute')})"


def pod_priority(state: ClusterState, pod: Pod) -> int:
    """spec.priority as admission set it, else its PriorityClass's value (or the global default)."""
    if "priority" in pod.spec:
        return pod.priority
    if (pc := state.priority_classes.get(pod.priority_class_name)) is not None:
        return pc.value
    defaults = [p.value for p in state.priority_classes.values() if p.raw.get("globalDefault")]
    return max(defaults, default=0)


def _scheduled(pod: Pod) -> bool:
    condition = pod.condition("PodScheduled")
    return condition is not None and condition.get("status") == "True"


def _reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    return any(c.pod is pod for c in claim.consumers)


def _tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """resource.k8s.io DeviceToleration.ToleratesTaint."""
    effect = text(toleration.get("effect"))
    if effect and effect != text(taint.get("effect")):
        return False
    key = text(toleration.get("key"))
    if text(toleration.get("operator")) == "Exists":
        return not key or key == text(taint.get("key"))
    return key == text(taint.get("key")) and text(toleration.get("value")) == text(
        taint.get("value")
    )


def _untolerated(device: Device, tolerations: list[dict[str, Any]]) -> bool:
    return any(
        text(t.get("effect")) in ("NoSchedule", "NoExecute")
        and not any(_tolerates(tol, t) for tol in tolerations)
        for t in device.taints
    )


# --- the API ---------------------------------------------------------------------------------


def _api_not_served(state: ClusterState) -> Iterable[Finding]:
    versions = state.meta.api_versions
    if not versions or V1 in versions:
        return
    older = sorted(v.partition("/")[2] for v in versions if v.startswith("resource.k8s.io/"))
    if older:
        yield Finding(
            "dra-api-not-served",
            "warning",
            f"The API server serves resource.k8s.io only as {_listing(older)}, not v1: it runs "
            "a Kubernetes release before 1.34, where DRA is not GA yet (dradash reads these "
            "versions as v1, but the cluster may behave unlike 1.34 and later).",
            [],
            "Check `kubectl api-versions | grep resource.k8s.io` and upgrade to Kubernetes 1.34 "
            "or later, where resource.k8s.io/v1 is GA.",
        )
    else:
        yield Finding(
            "dra-api-not-served",
            "error",
            "The API server does not serve resource.k8s.io/v1 (nor any other resource.k8s.io "
            "version): Dynamic Resource Allocation is not available in this cluster.",
            [],
            "Check `kubectl api-versions | grep resource.k8s.io`; on Kubernetes before 1.34 "
            "enable the DynamicResourceAllocation feature gate and the resource.k8s.io API "
            "with --runtime-config.",
        )


# --- Pods ------------------------------------------------------------------------------------


def _pod_findings(state: ClusterState) -> Iterable[Finding]:
    for pod in state.pods.values():
        if not pod.resource_claims:
            continue
        if finding := _nodename_bypass(state, pod):
            yield finding
        if finding := _claims_not_used(state, pod):
            yield finding


def _nodename_bypass(state: ClusterState, pod: Pod) -> Finding | None:
    """spec.nodeName set by hand: the scheduler never ran, so nobody allocated or reserved."""
    if not pod.node_name or pod.phase in TERMINAL_PHASES or pod.deleting:
        return None
    problems: list[str] = []
    objects = [ref(pod)]
    for r in pod.claim_refs:
        if r.source == "extended-resource":
            continue
        if r.status == "not-created":
            problems.append(f"no claim was generated from template {r.template_name} yet")
            if r.template is not None:
                objects.append(ref(r.template))
        elif r.status == "ok" and r.claim is not None:
            claim = r.claim
            if not claim.allocated:
                problems.append(f"ResourceClaim {claim.ref} is not allocated")
            elif not _reserved_for(claim, pod):
                problems.append(f"ResourceClaim {claim.ref} is allocated but not reserved for it")
            else:
                continue
            objects.append(ref(claim))
    unscheduled = not _scheduled(pod)
    if not problems and not unscheduled:
        return None
    if problems:
        message = (
            f"Pod {pod.ref} is bound to node {pod.node_name} (spec.nodeName"
            f"{', and no PodScheduled=True condition' if unscheduled else ''}), but "
            f"{_listing(problems)}: spec.nodeName was set by hand (or by a scheduler without "
            "DRA support), bypassing the scheduler that allocates and reserves claims, so the "
            "kubelet cannot prepare the Pod's devices."
        )
        severity = "error"
    else:
        message = (
            f"Pod {pod.ref} has spec.nodeName {pod.node_name} set by hand (it has no "
            "PodScheduled=True condition): it bypassed the scheduler and works only because "
            "its claims were already allocated and reserved for it."
        )
        severity = "warning"
    return Finding(
        "nodename-bypass",
        severity,
        message,
        objects,
        f"Recreate the Pod without spec.nodeName (pin it with a nodeSelector on "
        f"kubernetes.io/hostname: {pod.node_name} instead): "
        f"kubectl get pod -n {pod.namespace} {pod.name} -o yaml > pod.yaml; "
        f"kubectl delete pod -n {pod.namespace} {pod.name}",
    )


def _claims_not_used(state: ClusterState, pod: Pod) -> Finding | None:
    """spec.resourceClaims entries no container or init container lists in resources.claims."""
    used = {claim_name for c in pod.containers for claim_name, _ in c.claims}
    unused = []
    for r in pod.claim_refs:
        if r.source == "extended-resource" or r.status == "not-needed" or r.name in used:
            continue
        source: ResourceClaim | ResourceClaimTemplate | None = r.claim or r.template
        if source is not None and POD_LEVEL_DRIVERS.intersection(state.claim_drivers(source)):
            continue  # network devices are attached to the Pod, not to a container
        unused.append(r)
    if not unused:
        return None
    objects = [ref(pod)]
    for r in unused:
        if r.claim is not None:
            objects.append(ref(r.claim))
        elif r.template is not None:
            objects.append(ref(r.template))
    names = [repr(r.name) for r in unused]
    these = "it" if len(unused) == 1 else "them"
    return Finding(
        "claim-not-used-by-container",
        "warning",
        f"Pod {pod.ref} lists {_listing(names)} in spec.resourceClaims but no container or "
        f"init container names {these} in resources.claims: the Pod holds the devices, but "
        "no container can use them.",
        objects,
        f"Add `resources.claims: [{{name: {unused[0].name}}}]` to the container that needs the "
        f"device, or drop the entry from spec.resourceClaims "
        f"(kubectl get pod -n {pod.namespace} {pod.name} -o yaml).",
    )


# --- claims ----------------------------------------------------------------------------------


def _claim_findings(state: ClusterState) -> Iterable[Finding]:
    have_pods = bool(state.pods)  # a snapshot without Pods cannot tell whose Pods are gone
    for claim in state.claims.values():
        if have_pods and (finding := _orphaned(state, claim)):
            yield finding
        if claim.allocated and not claim.reserved and not claim.deleting:
            yield _allocated_unreserved(state, claim)
        if have_pods and (finding := _reserved_for_missing(state, claim)):
            yield finding
        if claim.deleting and claim.finalizers:
            yield _stuck_deleting(state, claim)
        if finding := _shared(claim):
            yield finding


def _holding(claim: ResourceClaim) -> str:
    if not claim.results:
        return ""
    devices = [f"{r.pool}/{r.device_name}" for r in claim.results]
    return f"holding {_plural(len(devices), 'device')} ({_listing(devices, 3)})"


def _orphaned(state: ClusterState, claim: ResourceClaim) -> Finding | None:
    if claim.owner_pod is not None:
        return None
    owner = claim.controller_owner("Pod")
    if owner is None or not claim.pod_claim_name:
        return None
    owner_name = text(owner.get("name"))
    same_name = state.pods.get((claim.namespace, owner_name))
    why = (
        f"a Pod {owner_name} exists, but with another uid (the owner was deleted and recreated)"
        if same_name is not None
        else f"its owner Pod {owner_name} is not in the snapshot"
    )
    holding = _holding(claim)
    return Finding(
        "orphaned-claim",
        "warning",
        f"ResourceClaim {claim.ref} was generated for Pod {owner_name} (pod claim "
        f"{claim.pod_claim_name!r}), but {why}"
        f"{'; it is still allocated, ' + holding if holding else ''}.",
        [ref(claim), named("Pod", claim.namespace, owner_name)],
        "The garbage collector normally deletes it with its Pod; check "
        f"`kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` and, if the Pod "
        f"is gone, `kubectl delete resourceclaim -n {claim.namespace} {claim.name}`.",
    )


def _allocated_unreserved(state: ClusterState, claim: ResourceClaim) -> Finding:
    since = text((claim.allocation or {}).get("allocationTimestamp"))
    return Finding(
        "allocated-unreserved",
        "warning",
        f"ResourceClaim {claim.ref} is allocated ({_holding(claim) or 'no devices'}) but "
        f"reserved for nobody{_age(state, since) if since else ''}: the devices are held by no "
        "Pod, and the resourceclaim controller normally deallocates such a claim.",
        [ref(claim)],
        f"Check `kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` and the "
        "kube-controller-manager logs (resourceclaim controller); deleting the claim frees the "
        "devices.",
    )


def _reserved_for_missing(state: ClusterState, claim: ResourceClaim) -> Finding | None:
    missing = [c for c in claim.consumers if c.pod is None and c.resource in ("pods", "")]
    if not missing:
        return None
    names = []
    for c in missing:
        other = state.pods.get((claim.namespace, c.name))
        names.append(
            f"{c.name} (uid {c.uid}; a Pod of that name has uid {other.uid})" if other else c.name
        )
    ones = "Pod" if len(missing) == 1 else "Pods"
    return Finding(
        "reserved-for-missing-pod",
        "warning",
        f"ResourceClaim {claim.ref} is reserved for {ones} {_listing(names)}, which the "
        "snapshot does not have: the reservation keeps the claim, and its devices, in use.",
        [ref(claim)] + [named("Pod", claim.namespace, c.name) for c in missing],
        "The resourceclaim controller removes reservations of deleted Pods; check "
        f"`kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` and the "
        "kube-controller-manager logs.",
    )


def _stuck_deleting(state: ClusterState, claim: ResourceClaim) -> Finding:
    since = text(claim.metadata.get("deletionTimestamp"))
    pods = [c.name for c in claim.consumers if c.resource in ("pods", "")]
    holders = [
        c.name if c.resource in ("pods", "") else f"{c.resource} {c.name}" for c in claim.consumers
    ]
    if holders:
        why = f"it is still reserved for {_listing(holders)}, which must stop first"
    elif claim.allocated:
        why = "it is still allocated, reserved by nobody; the resourceclaim controller should "
        why += "deallocate it and remove the finalizer"
    else:
        why = "nothing holds it, so whoever owns the finalizer should have removed it"
    finalizers = _listing(claim.finalizers)
    return Finding(
        "claim-stuck-deleting",
        "warning",
        f"ResourceClaim {claim.ref} has been marked for deletion since {since}"
        f"{_age(state, since)} but finalizer {finalizers} keeps it: {why}.",
        [ref(claim)] + [named("Pod", claim.namespace, name) for name in pods],
        f"Check `kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml`; "
        "once no Pod uses it, a finalizer left behind can be removed with "
        f"`kubectl patch resourceclaim -n {claim.namespace} {claim.name} --type=merge "
        '-p \'{"metadata":{"finalizers":null}}\'`.',
    )


def _shared(claim: ResourceClaim) -> Finding | None:
    if len(claim.consumers) + len(claim.pods) < 2:
        return None
    pods: dict[str, ObjectRef] = {}
    for c in claim.consumers:
        if c.resource in ("pods", ""):
            pods.setdefault(c.name, named("Pod", claim.namespace, c.name))
    for p in claim.pods:
        if p.phase not in TERMINAL_PHASES:
            pods.setdefault(p.name, ref(p))
    if len(pods) < 2:
        return None
    return Finding(
        "shared-claim",
        "info",
        f"ResourceClaim {claim.ref} is shared by {len(pods)} Pods ({_listing(sorted(pods))}): "
        "they all get the same devices, and the devices stay allocated until the last of them "
        "is gone.",
        [ref(claim)] + [pods[name] for name in sorted(pods)],
        f"kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml "
        "(status.reservedFor lists the Pods using it).",
    )


# --- device classes --------------------------------------------------------------------------


def _class_missing(state: ClusterState) -> Iterable[Finding]:
    """Templates, and claims still to be allocated, naming a DeviceClass that does not exist.

    An allocated claim no longer needs its class, so only unallocated ones count.
    """
    users: dict[str, list[ResourceClaim | ResourceClaimTemplate]] = defaultdict(list)
    for template in state.templates.values():
        for name in template.class_names:
            if name not in state.classes:
                users[name].append(template)
    for claim in state.claims.values():
        if claim.allocated or claim.deleting:
            continue
        for name in claim.class_names:
            if name not in state.classes:
                users[name].append(claim)
    for name, objs in sorted(users.items()):
        objs.sort(key=lambda o: o.key)
        listed = [f"{o.kind} {o.ref}" for o in objs]
        yield Finding(
            "class-missing",
            "error",
            f"DeviceClass {name} does not exist, but {_listing(listed)} "
            f"{'asks' if len(objs) == 1 else 'ask'} for it: the scheduler cannot allocate "
            f'such claims ("device class {name} does not exist").',
            [named("DeviceClass", "", name)] + [ref(o) for o in objs],
            f"kubectl get deviceclasses — install the driver that provides {name}, or change "
            "the requests' deviceClassName to an existing class.",
        )


# --- pools and devices -----------------------------------------------------------------------


def _pool_findings(state: ClusterState) -> Iterable[Finding]:
    for pool in state.pools.values():
        label = f"{pool.driver}/{pool.name}"
        selector = f"kubectl get resourceslices --field-selector spec.driver={pool.driver} -o wide"
        if not pool.complete:
            have, want = len(pool.slices), pool.resource_slice_count
            count = (
                f"has {have} of the {want} ResourceSlices"
                if have < want
                else f"has {have} ResourceSlices, more than the {want}"
            )
            yield Finding(
                "pool-incomplete",
                "warning",
                f"Pool {label} (generation {pool.generation}) {count} its resourceSliceCount "
                "announces: Kubernetes 1.35 and later allocate nothing from it (1.34 uses the "
                "devices that are there), and requests for all of its devices fail until the "
                "driver has published the whole pool.",
                [ref(s) for s in pool.slices],
                f"{selector}; check the {pool.driver} driver's logs.",
            )
        if pool.stale_slices:
            old = sorted({s.generation for s in pool.stale_slices})
            yield Finding(
                "pool-stale-generation",
                "warning",
                f"Pool {label} still has {_plural(len(pool.stale_slices), 'ResourceSlice')} of "
                f"generation {_listing([str(g) for g in old])} "
                f"({_listing([s.name for s in pool.stale_slices])}) beside the current "
                f"generation {pool.generation}: the allocator ignores them, and the driver "
                "should have deleted them.",
                [ref(s) for s in pool.stale_slices],
                f"{selector}; if the driver does not clean up, delete them: kubectl delete "
                f"resourceslice {' '.join(s.name for s in pool.stale_slices)}",
            )
        if pool.duplicate_devices:
            dups = sorted(set(pool.duplicate_devices))
            slices = [s for s in pool.slices if any(d.name in dups for d in s.devices)]
            yield Finding(
                "pool-duplicate-device",
                "error",
                f"Pool {label} publishes device {_listing(dups)} more than once, so the "
                "allocator treats the pool as invalid (Kubernetes 1.34 fails allocations that "
                f'reach it with "pool {pool.name} is invalid: duplicate device name {dups[0]}"; '
                "1.35 and later skip it).",
                [ref(s) for s in slices],
                f"{selector}; the {pool.driver} driver must publish unique device names per pool.",
            )


def _device_tainted(state: ClusterState) -> Iterable[Finding]:
    """Tainted devices, one finding per pool and taint (and the object that put it there)."""
    groups: dict[tuple[str, str, str, str, str, str], list[Device]] = defaultdict(list)
    for device in state.devices.values():
        for taint in mappings(device.raw.get("taints")):
            groups[_taint_key(device, taint, "")].append(device)
        for taint_rule, rule_taint in device.rule_taints:
            groups[_taint_key(device, rule_taint, taint_rule.name)].append(device)
    for (driver, pool, key, value, effect, rule), devices in sorted(groups.items()):
        devices.sort(key=lambda d: d.name)
        spelled = f"{key}={value}:{effect}" if value else f"{key}:{effect}"
        source = f"DeviceTaintRule {rule}" if rule else "the ResourceSlice"
        allocated = sorted({a.claim.ref for d in devices for a in d.allocations})
        it = "it" if len(devices) == 1 else "them"
        consequence = {
            "NoSchedule": f"no new claim gets {it} unless it tolerates the taint",
            "NoExecute": f"no new claim gets {it}, and Pods using {it} are evicted unless they "
            "tolerate the taint",
        }.get(effect, f"the allocator still hands {it} out")
        in_use = f"; allocated to {_listing(allocated)}" if allocated else ""
        objects = [ref(s) for s in dict.fromkeys(d.slice for d in devices)]
        if rule:
            objects.append(named("DeviceTaintRule", "", rule))
        names = [d.name for d in devices]
        yield Finding(
            "device-tainted",
            "warning" if effect in ("NoSchedule", "NoExecute") else "info",
            f"{_plural(len(devices), 'device')} of pool {driver}/{pool} "
            f"({_listing(names)}) {'carries' if len(devices) == 1 else 'carry'} taint {spelled} "
            f"from {source}: {consequence}{in_use}.",
            objects,
            (
                f"kubectl get devicetaintrule {rule} -o yaml"
                if rule
                else f"kubectl get resourceslice {objects[0]['name']} -o yaml"
            )
            + f" — check the device's health with the {driver} driver; the taint goes away "
            "when the driver (or the rule) removes it.",
        )


def _taint_key(
    device: Device, taint: dict[str, Any], rule: str
) -> tuple[str, str, str, str, str, str]:
    return (
        device.driver,
        device.pool_name,
        text(taint.get("key")),
        text(taint.get("value")),
        text(taint.get("effect")),
        rule,
    )


def _dangling_allocations(state: ClusterState) -> Iterable[Finding]:
    by_claim: dict[tuple[str, str], list[AllocationResult]] = defaultdict(list)
    for result in state.dangling_results:
        by_claim[(result.claim.namespace, result.claim.name)].append(result)
    for results in by_claim.values():
        claim = results[0].claim
        names = [f"{r.driver}/{r.pool}/{r.device_name}" for r in results]
        notes = []
        for r in results:
            pool = state.pools.get((r.driver, r.pool))
            if pool is None:
                notes.append(f"no ResourceSlice of pool {r.driver}/{r.pool} exists")
            elif any(d.name == r.device_name for s in pool.stale_slices for d in s.devices):
                notes.append(
                    f"{r.device_name} is only in a stale slice; the current generation "
                    f"{pool.generation} of pool {r.pool} no longer has it"
                )
            else:
                notes.append(f"pool {r.driver}/{r.pool} has no device {r.device_name}")
        users = [c.pod for c in claim.consumers if c.pod is not None]
        yield Finding(
            "dangling-allocation",
            "warning",
            f"ResourceClaim {claim.ref} is allocated {_listing(names)}, which no current "
            f"ResourceSlice publishes ({_listing(list(dict.fromkeys(notes)))}): the driver "
            "removed or renamed the device, and the claim's Pods cannot be prepared on it again.",
            [ref(claim)] + [ref(p) for p in users],
            f"kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml; "
            f"kubectl get resourceslices --field-selector spec.driver={results[0].driver}; "
            "recreate the claim's Pods (and the claim) so it is allocated again.",
        )


# --- selectors: which devices a request can get ----------------------------------------------

# What a request (or a firstAvailable subrequest) asks for: (device class, request selectors).
Want = tuple[str, tuple[str | None, ...]]


def want_of(spec: DeviceRequestSpec) -> Want:
    return (spec.device_class_name, tuple(spec.selectors))


class Matcher:
    """The devices matching class + request selectors, for many requests at once.

    ``add`` every (class, selectors) first, then ``run`` evaluates them together: the devices
    are grouped once by everything any of the selectors reads, those groups again by what each
    selector set reads, and each selector set runs once per group. ``devices(want)`` is None
    when the class is missing or a selector does not compile (the allocator would fail, not find
    devices); a device on which a selector fails at runtime does not match.
    """

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self._pending: set[Want] = set()
        self._results: dict[Want, list[Device] | None] = {}
        self._programs: dict[str, Program | None] = {}

    def add(self, want: Want) -> None:
        if want not in self._results:
            self._pending.add(want)

    def devices(self, want: Want) -> list[Device] | None:
        if want not in self._results:
            self.add(want)
            self.run()
        return self._results[want]

    def _program(self, expression: str | None) -> Program | None:
        if expression is None:
            return None
        if expression not in self._programs:
            try:
                self._programs[expression] = compile_selector(expression)
            except CelCompileError:
                self._programs[expression] = None
        return self._programs[expression]

    def _selectors(self, want: Want) -> list[Selector] | None:
        class_name, expressions = want
        device_class = self.state.classes.get(class_name)
        if device_class is None:
            return None
        selectors = []
        for i, expression in enumerate(device_class.selectors):
            program = self._program(expression)
            if program is None:
                return None
            selectors.append(Selector(program, f"class {class_name}: selector #{i}: "))
        for expression in expressions:
            program = self._program(expression)
            if program is None:
                return None
            selectors.append(Selector(program))
        return selectors

    def run(self) -> None:
        wants = sorted(self._pending, key=lambda w: (w[0], tuple(e or "" for e in w[1])))
        self._pending.clear()
        compiled: dict[Want, list[Selector]] = {}
        for want in wants:
            selectors = self._selectors(want)
            if selectors is None:
                self._results[want] = None
            else:
                compiled[want] = selectors
        if not compiled:
            return
        devices, inputs, errors = device_table(self.state)
        # Devices alike in everything any of the selectors reads: one evaluation serves each.
        by_reads: dict[frozenset[tuple[str, ...]], list[Want]] = defaultdict(list)
        for want, selectors in compiled.items():
            by_reads[frozenset().union(*(s.program.reads for s in selectors))].append(want)
        reads = frozenset().union(*by_reads)
        groups: dict[tuple[object, ...], list[int]] = {}
        for i, device_input in enumerate(inputs):
            if errors[i] is None:  # a device CEL cannot read matches nothing
                groups.setdefault(projection(reads, device_input), []).append(i)
        members = list(groups.values())
        representatives: list[DeviceInput] = [inputs[m[0]] for m in members]
        # Then per set of reads, so that one selector reading something every device has its
        # own of (a uuid) does not make every other selector run once per device.
        for own_reads, same in by_reads.items():
            subgroups: dict[tuple[object, ...], list[int]] = {}
            for g, rep in enumerate(representatives):
                subgroups.setdefault(projection(own_reads, rep), []).append(g)
            sub = list(subgroups.values())
            reps = [representatives[g[0]] for g in sub]
            no_errors: list[str | None] = [None] * len(reps)
            for want in same:
                verdicts = evaluate_devices(compiled[want], reps, errors=no_errors)
                self._results[want] = [
                    devices[i]
                    for gs, v in zip(sub, verdicts, strict=True)
                    if v.matches
                    for g in gs
                    for i in members[g]
                ]


# --- capacity: no-preemption and parallelism-exceeds-capacity ---------------------------------


@dataclass
class _Alternative:
    """One way to satisfy a request: ``count`` devices matching ``want`` (``count`` 0: All)."""

    label: str  # "request gpu" or "request gpu/h100"
    want: Want
    count: int
    tolerations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def class_name(self) -> str:
        return self.want[0]


def _alternatives(request: Request) -> list[_Alternative] | None:
    """The request's alternatives, or None when they cannot be counted (admin access)."""
    out = []
    for name, spec in request.alternatives:
        if spec.admin_access:
            return None  # admin access does not need free devices
        count = max(spec.count, 1) if spec.allocation_mode == "ExactCount" else 0
        out.append(_Alternative(f"request {name}", want_of(spec), count, spec.tolerations))
    return out or None


@dataclass
class _Usable:
    """The devices one alternative can get, as the allocator would consider them."""

    devices: list[Device]
    ids: set[int]
    free_by_node: dict[str, int]  # free devices per node ("" for those every node reaches)
    free: int = 0
    _fit: dict[int, int] = field(default_factory=dict)

    def fit(self, count: int) -> int:
        """How many sets of ``count`` free devices there are, each from one node."""
        if count not in self._fit:
            self._fit[count] = sum(n // count for n in self.free_by_node.values())
        return self._fit[count]


class _Capacity:
    """Devices per (class, selectors, tolerations), by node, with who holds them."""

    def __init__(self, state: ClusterState, matcher: Matcher) -> None:
        self.state = state
        self.matcher = matcher
        self._usable: dict[tuple[Want, str], _Usable | None] = {}
        self._holder: dict[int, float] = {}
        self._outlook: dict[tuple[Any, ...], tuple[bool, bool, list[Device]] | None] = {}
        minor = _server_minor(state)
        # Pools the allocator takes ExactCount devices from (dra-reference §5.2): never an
        # invalid one; from 1.35 on not an incomplete one either.
        self._pools = {
            id(p)
            for p in state.pools.values()
            if p.valid and (p.complete or (minor is not None and minor < 35))
        }
        # Devices an allocation blocks for other claims (admin access and devices that allow
        # multiple allocations do not).
        self._taken = {
            id(r.device)
            for claim in state.claims.values()
            for r in claim.results
            if r.device is not None
            and not r.admin_access
            and not r.device.allow_multiple_allocations
        }

    def free(self, device: Device) -> bool:
        return id(device) not in self._taken

    def usable(self, alt: _Alternative) -> _Usable | None:
        """Matching devices in usable pools whose taints the request tolerates; None when the
        class is missing or a selector does not compile."""
        key = (alt.want, json.dumps(alt.tolerations, sort_keys=True))
        if key not in self._usable:
            matched = self.matcher.devices(alt.want)
            if matched is None:
                self._usable[key] = None
                return None
            pools, taken = self._pools, self._taken
            devices = [
                d
                for d in matched
                if id(d.slice.pool) in pools
                and not ((d.rule_taints or "taints" in d.raw) and _untolerated(d, alt.tolerations))
            ]
            free: dict[str, int] = defaultdict(int)
            for d in devices:
                if id(d) not in taken:
                    free[d.node_name] += 1
            self._usable[key] = _Usable(
                devices, {id(d) for d in devices}, dict(free), sum(free.values())
            )
        return self._usable[key]

    def outlook(self, alt: _Alternative, priority: int) -> tuple[bool, bool, list[Device]] | None:
        """(fits now, would fit if Pods below ``priority`` went away, the devices those Pods
        hold) for one alternative; None when its devices cannot be known."""
        key = (alt.want, json.dumps(alt.tolerations, sort_keys=True), alt.count, priority)
        if key not in self._outlook:
            usable = self.usable(alt)
            if usable is None:
                self._outlook[key] = None
                return None
            total: dict[str, int] = defaultdict(int)
            free: dict[str, int] = defaultdict(int)
            freeable: dict[str, int] = defaultdict(int)
            lower: list[Device] = []
            for d in usable.devices:
                node = d.node_name
                total[node] += 1
                if self.free(d):
                    free[node] += 1
                    freeable[node] += 1
                elif self.holder_priority(d) < priority:
                    freeable[node] += 1
                    lower.append(d)
            now = _fits(total, free, alt.count)
            self._outlook[key] = (now, not now and _fits(total, freeable, alt.count), lower)
        return self._outlook[key]

    def holder_priority(self, device: Device) -> float:
        """The highest priority of the Pods holding the device (-inf if free, +inf when a
        holder is not a Pod of the snapshot, so preemption could not free it)."""
        key = id(device)
        if key not in self._holder:
            priority = float("-inf")
            for a in device.allocations:
                if a.admin_access:
                    continue
                pods = [c.pod for c in a.claim.consumers]
                if not pods or any(p is None for p in pods):
                    priority = float("inf")
                    break
                priority = max([priority] + [pod_priority(self.state, p) for p in pods if p])
            self._holder[key] = priority
        return self._holder[key]


def _fits(total: dict[str, int], usable: dict[str, int], count: int) -> bool:
    """Whether one node has ``count`` usable devices (0: allocation mode All — every matching
    device the node reaches, at least one, is usable). Node "" holds the devices every node
    reaches."""
    nodes = [n for n in total if n] or [""]
    for node in nodes:
        have = usable.get(node, 0) + (usable.get("", 0) if node else 0)
        if count:
            if have >= count:
                return True
        elif have and have == total.get(node, 0) + (total.get("", 0) if node else 0):
            return True
    return False


def _capacity_findings(state: ClusterState) -> Iterable[Finding]:
    matcher = Matcher(state)
    capacity = _Capacity(state, matcher)
    waiting = list(_waiting_pods(state))
    jobs = list(_job_demands(state))
    for _, _, requests in waiting:
        for alternatives in requests:
            for alt in alternatives:
                matcher.add(alt.want)
    for _, _, requirements in jobs:
        for alternatives in requirements:
            for alt in alternatives:
                matcher.add(alt.want)
    matcher.run()
    for pod, claims, requests in waiting:
        if finding := _no_preemption(state, capacity, pod, claims, requests):
            yield finding
    for job, sources, requirements in jobs:
        if finding := _parallelism(state, capacity, job, sources, requirements):
            yield finding


def _waiting_pods(
    state: ClusterState,
) -> Iterable[tuple[Pod, list[ResourceClaim], list[list[_Alternative]]]]:
    """Pending Pods whose claims wait for devices that only lower-priority Pods hold.

    Cheap checks first: selectors are only evaluated for Pods that outrank some holder.
    """
    lowest: float | None = None
    for claim in state.claims.values():
        if claim.results and claim.consumers:
            pods = [c.pod for c in claim.consumers]
            if all(p is not None for p in pods):
                top = max(pod_priority(state, p) for p in pods if p)
                lowest = top if lowest is None else min(lowest, top)
    if lowest is None:
        return
    for pod in state.pods.values():
        if (
            not pod.resource_claims
            or pod.node_name
            or pod.phase != "Pending"
            or pod.deleting
            or pod.scheduling_gates
            or pod.spec.get("preemptionPolicy") == "Never"
            or pod_priority(state, pod) <= lowest
        ):
            continue
        if any(r.status not in ("ok", "not-needed") for r in pod.claim_refs):
            continue  # blocked before allocation: the diagnosis says why
        claims = [r.claim for r in pod.claim_refs if r.claim is not None and not r.claim.allocated]
        if not claims or any(c.deleting for c in claims):
            continue
        requests = []
        for claim in claims:
            for request in claim.requests:
                alternatives = _alternatives(request)
                if alternatives is None:
                    continue
                requests.append(alternatives)
        if requests:
            yield pod, claims, requests


def _no_preemption(
    state: ClusterState,
    capacity: _Capacity,
    pod: Pod,
    claims: list[ResourceClaim],
    requests: list[list[_Alternative]],
) -> Finding | None:
    """The Pod's requests cannot be met now, but could be if lower-priority Pods went away."""
    priority = pod_priority(state, pod)
    blocked: list[_Alternative] = []
    holders: dict[tuple[str, str], ResourceClaim] = {}
    for alternatives in requests:
        fits_now = False
        preemptible: tuple[_Alternative, list[Device]] | None = None
        for alt in alternatives:
            outlook = capacity.outlook(alt, priority)
            if outlook is None:
                return None  # class missing or selector error: another finding says so
            now, later, lower = outlook
            if now:
                fits_now = True
                break
            if preemptible is None and later:
                preemptible = (alt, lower)
        if fits_now:
            continue
        if preemptible is None:
            return None  # even preemption would not help: not this finding
        blocked.append(preemptible[0])
        for d in preemptible[1]:
            for a in d.allocations:
                if not a.admin_access:
                    holders[(a.claim.namespace, a.claim.name)] = a.claim
    if not blocked:
        return None
    holder_pods = sorted(
        {id(c.pod): c.pod for h in holders.values() for c in h.consumers if c.pod}.values(),
        key=lambda p: (pod_priority(state, p), p.namespace, p.name),
    )
    shown = LISTED * 4  # objects beyond these are only counted in the message
    asks = [
        f"{alt.count or 'all'} {alt.class_name} device{'' if alt.count == 1 else 's'} ({alt.label})"
        for alt in blocked
    ]
    listed = [f"{p.ref} (priority {pod_priority(state, p)})" for p in holder_pods]
    victim = holder_pods[0]
    return Finding(
        "no-preemption",
        "warning",
        f"Pod {pod.ref} (priority {priority}) waits for {_listing(asks)}: the matching devices "
        f"it could use are allocated to lower-priority Pods {_listing(listed)}, and Kubernetes "
        "does not preempt Pods to free devices, so it waits until they finish.",
        [ref(pod)]
        + [ref(c) for c in claims]
        + [ref(h) for _, h in sorted(holders.items())[:shown]]
        + [ref(p) for p in holder_pods[:shown]],
        "Free the devices by stopping a lower-priority workload, e.g. "
        f"kubectl delete pod -n {victim.namespace} {victim.name}, or add devices.",
    )


def _job_demands(
    state: ClusterState,
) -> Iterable[tuple[Job, list[Resource], list[list[_Alternative]]]]:
    """Active Jobs with the per-Pod device demand of their pod template.

    Each Pod gets its own claim from a template entry; an entry naming a ResourceClaim is shared
    by all Pods and does not grow with parallelism, so it is left out.
    """
    for job in state.jobs.values():
        if _wanted_pods(job) < 2:
            continue
        pod_spec = mapping(dig(job.spec, "template", "spec"))
        entries = mappings(pod_spec.get("resourceClaims"))
        sources: list[Resource] = []
        requests: list[Request] = []
        if entries:
            for entry in entries:
                template_name = text(entry.get("resourceClaimTemplateName"))
                if not template_name:
                    continue
                template = state.templates.get((job.namespace, template_name))
                if template is not None:
                    sources.append(template)
                    requests += template.requests
                elif claim := _generated_for(job, text(entry.get("name"))):
                    sources.append(claim)
                    requests += claim.requests
        else:  # the snapshot has no pod template: read the Pods' generated claims
            for pod in job.pods[:1]:
                for r in pod.claim_refs:
                    if r.source == "template" and r.claim is not None:
                        sources.append(r.template or r.claim)
                        requests += r.claim.requests
        requirements = _requirements(requests)
        if requirements:
            yield job, sources, requirements


def _generated_for(job: Job, entry: str) -> ResourceClaim | None:
    for pod in job.pods:
        for r in pod.claim_refs:
            if r.name == entry and r.claim is not None:
                return r.claim
    return None


def _wanted_pods(job: Job) -> int:
    """How many Pods the Job wants running at once (0 when it is suspended or finished)."""
    if job.spec.get("suspend") is True:
        return 0
    for c in mappings(job.status.get("conditions")):
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return 0
    wanted = job.parallelism
    if job.completions is not None:
        wanted = min(wanted, job.completions - number(job.status.get("succeeded")))
    return wanted


def _requirements(requests: list[Request]) -> list[list[_Alternative]]:
    """Per-Pod requirements: ExactCount requests for the same devices are added up."""
    merged: dict[tuple[Want, str], _Alternative] = {}
    out: list[list[_Alternative]] = []
    for request in requests:
        alternatives = _alternatives(request)
        if alternatives is None or any(a.count == 0 for a in alternatives):
            continue  # admin access or All: not a fixed number of devices per Pod
        if len(alternatives) == 1:
            alt = alternatives[0]
            key = (alt.want, json.dumps(alt.tolerations, sort_keys=True))
            if key in merged:
                merged[key].count += alt.count
                merged[key].label += f" + {alt.label.removeprefix('request ')}"
                continue
            merged[key] = _Alternative(alt.label, alt.want, alt.count, alt.tolerations)
            out.append([merged[key]])
        else:
            out.append(alternatives)
    return out


def _parallelism(
    state: ClusterState,
    capacity: _Capacity,
    job: Job,
    sources: list[Resource],
    requirements: list[list[_Alternative]],
) -> Finding | None:
    """Fewer of the Job's Pods fit on the matching devices than it runs at once.

    Devices count when they are free or held by the Job's own Pods' claims; per node, as each
    Pod's devices come from one node (devices every node reaches are pooled).
    """
    wanted = _wanted_pods(job)
    own = {id(c) for p in job.pods for c in p.claims}
    # Devices only the Job's own claims hold: its running Pods keep them, so they count.
    own_devices = {
        id(r.device): r.device
        for p in job.pods
        for c in p.claims
        for r in c.results
        if r.device is not None
        and not capacity.free(r.device)
        and all(id(a.claim) in own for a in r.device.allocations if not a.admin_access)
    }.values()
    worst: tuple[int, _Alternative, int, int] | None = None  # (Pods that fit, alt, total, usable)
    for alternatives in requirements:
        best: tuple[int, _Alternative, int, int] | None = None
        for alt in alternatives:
            usable = capacity.usable(alt)
            if usable is None:
                return None  # class missing or selector error: another finding says so
            mine: dict[str, int] = defaultdict(int)
            for d in own_devices:
                if id(d) in usable.ids:
                    mine[d.node_name] += 1
            free, count = usable.free_by_node, alt.count
            fit = usable.fit(count) + sum(
                (free.get(node, 0) + n) // count - free.get(node, 0) // count
                for node, n in mine.items()
            )
            available = usable.free + sum(mine.values())
            if best is None or fit > best[0]:
                best = (fit, alt, len(usable.devices), available)
        if best is not None and (worst is None or best[0] < worst[0]):
            worst = best
    if worst is None or worst[0] >= wanted or worst[2] == 0:
        return None  # it fits, or nothing matches at all (the Pods' diagnosis says so)
    fit, alt, total, available = worst
    match = f"{total} {'device matches' if total == 1 else 'devices match'}"
    if available < total:
        match += f" and {total - available} of them are allocated to other claims"
    return Finding(
        "parallelism-exceeds-capacity",
        "warning",
        f"Job {job.ref} wants {wanted} Pods running at once (spec.parallelism), each needing "
        f"{alt.count} "
        f"{alt.class_name} device{'' if alt.count == 1 else 's'} ({alt.label}), "
        f"{wanted * alt.count} in all, but {match}, leaving room for {_plural(fit, 'Pod')}: "
        "the others stay Pending until devices free up.",
        [ref(job)] + [ref(s) for s in dict.fromkeys(sources)],
        f"Lower the Job's parallelism to what fits (kubectl patch job -n {job.namespace} "
        f'{job.name} -p \'{{"spec":{{"parallelism":{max(fit, 1)}}}}}\'), or add devices.',
    )
