"""Findings: problems in a snapshot that do not block one Pod's diagnosis but matter.

``find(state)`` checks the whole snapshot and returns ``Finding``s (DESIGN "Diagnosis: stages and
reasons"), each from the snapshot's own objects: Pods, claims and their reservations, pools and
devices, and dradash's own CEL evaluation of class and request selectors. Event text is never
the evidence.

Selectors are evaluated once per distinct (device class, request selectors) for the whole
snapshot, and only for the Pods and Jobs that need them: devices are grouped by what any of
those selectors reads, so one CEL run serves every device with the same projection. The
capacity machinery (``Capacity``) lives in ``capacity.py``, the batch selector evaluation
(``Matcher``) in ``matching.py``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from dradash.dra import extended as extended_resources
from dradash.dra import gangs, health
from dradash.dra.capacity import (
    Alternative,
    Capacity,
    alternatives,
    job_demands,
    job_fit,
    pod_priority,
    wanted_pods,
)
from dradash.dra.fields import dig, mapping, mappings, text, timestamp
from dradash.dra.kinds import KINDS
from dradash.dra.matching import snapshot_matcher
from dradash.dra.objects import (
    TERMINAL_PHASES,
    AllocationResult,
    Device,
    DeviceClass,
    HealthReport,
    Job,
    Node,
    Pod,
    Pool,
    Resource,
    ResourceClaim,
    ResourceClaimTemplate,
)
from dradash.dra.state import ClusterState
from dradash.dra.words import kinds_plural, listing, plural

SEVERITIES = ("error", "warning", "info")
V1 = "resource.k8s.io/v1"
# Drivers whose devices belong to the Pod, not to a container: DraNet moves network interfaces
# into the Pod's network namespace, so its claims are never listed in resources.claims.
POD_LEVEL_DRIVERS = frozenset({"dra.net"})
# The resourceclaim controller drops the reservation of a Pod that will not run anymore within
# seconds; one that still holds it this long after the Pod finished was left behind.
FINISHED_GRACE = timedelta(minutes=5)
LISTED = 5  # names spelled out in a message before "and N more"

ObjectRef = dict[str, str]


@dataclass
class Finding:
    code: str  # a DESIGN finding code
    severity: str  # "error" | "warning" | "info"
    message: str  # one sentence a person reads, naming the objects
    objects: list[ObjectRef]  # [{"kind", "namespace", "name"}]; namespace "" for cluster objects
    next_step: str = ""  # a concrete action, e.g. the kubectl command to inspect or clean up
    # The devices (driver, pool, name) a finding about some devices of a pool is about, where
    # ``objects`` can only name their slices: which Pods it concerns (dradash.dra.concerns).
    devices: list[tuple[str, str, str]] = field(default_factory=list)

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


# The kinds each finding rests on: when the snapshot cannot prove what it holds of one of them
# (the kind was not read, or an imported bundle has none: SnapshotMeta.unproven), the check is
# skipped, never guessed, and the kinds-missing finding names it. A kind is listed when the
# check reads it to reach its conclusion either way: a claim's reservation names a Pod, so
# reserved-for-missing-pod needs the Pods; a finding that rests on the object's own fields alone
# (allocated-unreserved: the claim's empty status.reservedFor) needs only that kind.
# DeviceTaintRules are optional (not served by default) and only ever add taints, so no check
# rests on them: without them device-tainted lists the taints the slices carry.
NEEDS: dict[str, tuple[str, ...]] = {
    "dra-api-not-served": (),
    "nodename-bypass": ("Pod", "ResourceClaim"),
    "claim-not-used-by-container": ("Pod",),
    "orphaned-claim": ("ResourceClaim", "Pod"),
    "allocated-unreserved": ("ResourceClaim",),
    "reserved-for-missing-pod": ("ResourceClaim", "Pod"),
    "reserved-for-finished-pod": ("ResourceClaim", "Pod"),
    "claim-stuck-deleting": ("ResourceClaim",),
    "shared-claim": ("ResourceClaim",),
    "class-missing": ("DeviceClass",),
    "pool-incomplete": ("ResourceSlice",),
    "pool-stale-generation": ("ResourceSlice",),
    "pool-duplicate-device": ("ResourceSlice",),
    "pool-empty": ("ResourceSlice",),
    "device-tainted": ("ResourceSlice",),
    # Pods on a node whose claims hold a device with a NoExecute (or None: preview) taint.
    "taint-eviction": ("ResourceSlice", "ResourceClaim", "Pod"),
    # The kubelet's reports in the Pods' allocatedResourcesStatus.
    "device-unhealthy": ("Pod",),
    # Devices drawing on one counter set with a tainted or unhealthy one (reports are Pods').
    "unhealthy-parent-allocatable": ("ResourceSlice",),
    "dangling-allocation": ("ResourceClaim", "ResourceSlice"),
    "no-preemption": ("Pod", "ResourceClaim", "ResourceSlice", "DeviceClass"),
    "parallelism-exceeds-capacity": ("Job", "ResourceClaim", "ResourceSlice", "DeviceClass"),
    "extended-resource-conflict": ("DeviceClass",),
    "extended-resource-device-plugin": ("DeviceClass", "Node"),
    "gang-never-fits": ("PodGroup", "Pod", "ResourceClaim", "ResourceSlice", "DeviceClass"),
    "gang-partial-reservation": ("PodGroup", "Pod", "ResourceClaim"),
    "gang-allocation-loop": ("PodGroup", "Pod", "Event"),
}


def _explicit_names_asked(state: ClusterState) -> bool:
    """Whether a class may map a name a device plugin serves: the feature is on and a class
    declares an explicit extendedResourceName (or the classes are unknown). The implicit
    ``deviceclass.resource.kubernetes.io/<class>`` names are never a device plugin's: the kubelet
    registers only names v1helper.IsExtendedResourceName accepts, which excludes the
    kubernetes.io domains (only a hand-patched Node status could advertise one)."""
    if state.meta.unproven("DeviceClass"):
        return True
    return bool(state.extended_mapping) and any(
        c.extended_resource_name for c in state.classes.values()
    )


# Checks whose question only some snapshots raise: where it does not arise, the kinds the check
# rests on are not needed and their absence is not reported (a cluster that maps no extended
# resource name to a class needs no Nodes to know that no device plugin serves one).
def _gangs_asked(state: ClusterState) -> bool:
    """Whether the snapshot has gangs, or Pods that name a PodGroup it may lack."""
    return bool(state.podgroups) or any(p.group_name for p in state.pods.values())


ASKED: dict[str, Callable[[ClusterState], bool]] = {
    "extended-resource-device-plugin": _explicit_names_asked,
    "gang-never-fits": _gangs_asked,
    "gang-partial-reservation": _gangs_asked,
    "gang-allocation-loop": _gangs_asked,
}


def find(state: ClusterState) -> list[Finding]:
    """Every finding of the snapshot, by severity (error, warning, info), code, then objects."""
    return list(state.derived("findings.find", _find))


def skipped(state: ClusterState) -> dict[str, list[str]]:
    """{finding code: the unproven kinds it rests on} of the checks this snapshot cannot make."""
    out = {}
    for code, kinds in NEEDS.items():
        if (asked := ASKED.get(code)) is not None and not asked(state):
            continue
        if missing := state.meta.unproven(*kinds):
            out[code] = missing
    return out


def _find(state: ClusterState) -> list[Finding]:
    skip = skipped(state)
    enabled = frozenset(NEEDS).difference(skip)
    checks: list[Callable[[ClusterState, frozenset[str]], Iterable[Finding]]] = [
        _api_not_served,
        _pod_findings,
        _claim_findings,
        _class_missing,
        _pool_findings,
        _device_tainted,
        _taint_evictions,
        _device_unhealthy,
        _shared_counters,
        _dangling_allocations,
        _capacity_findings,
        _extended_conflicts,
        _extended_device_plugin,
        _gang_findings,
    ]
    found = [f for check in checks for f in check(state, enabled) if f.code in enabled]
    if skip:
        found.append(_kinds_missing(state, skip))
    return sorted(found, key=lambda f: f.sort_key)


# --- helpers ---------------------------------------------------------------------------------


def ref(obj: Resource) -> ObjectRef:
    return {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name}


def named(kind: str, namespace: str, name: str) -> ObjectRef:
    return {"kind": kind, "namespace": namespace, "name": name}


def _age(state: ClusterState, since: str) -> str:
    """How long before the snapshot ``since`` was, as " (for 42 minutes)"; "" if unknown."""
    start, now = timestamp(since), timestamp(state.meta.captured_at)
    if start is None or now is None or now < start:
        return ""
    minutes = int((now - start).total_seconds() // 60)
    if minutes >= 2 * 24 * 60:
        return f" (for {minutes // (24 * 60)} days)"
    if minutes >= 120:
        return f" (for {minutes // 60} hours)"
    return f" (for {plural(minutes, 'minute')})"


def _scheduled(pod: Pod) -> bool:
    condition = pod.condition("PodScheduled")
    return condition is not None and condition.get("status") == "True"


def _reserved_for(claim: ResourceClaim, pod: Pod) -> bool:
    return claim.reserved_for(pod)


# --- the API ---------------------------------------------------------------------------------


def _api_not_served(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    versions = state.meta.api_versions
    if not versions or V1 in versions:
        return
    older = sorted(v.partition("/")[2] for v in versions if v.startswith("resource.k8s.io/"))
    if older:
        yield Finding(
            "dra-api-not-served",
            "warning",
            f"The API server serves resource.k8s.io only as {listing(older, LISTED)}, not v1: it "
            "runs a Kubernetes release before 1.34, where DRA is not GA yet (dradash reads these "
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


def _pod_findings(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    bypass, unused = "nodename-bypass" in enabled, "claim-not-used-by-container" in enabled
    for pod in state.pods.values():
        if not pod.resource_claims:
            continue
        if bypass and (finding := _nodename_bypass(state, pod)):
            yield finding
        if unused and (finding := _claims_not_used(state, pod)):
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
            f"{listing(problems, LISTED)}: spec.nodeName was set by hand (or by a scheduler "
            "without DRA support), bypassing the scheduler that allocates and reserves claims, "
            "so the kubelet cannot prepare the Pod's devices."
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
        if source is None and state.meta.unproven(
            "ResourceClaimTemplate" if r.template_name else "ResourceClaim"
        ):
            continue  # its claim may be for network devices, which no container lists
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
        f"Pod {pod.ref} lists {listing(names, LISTED)} in spec.resourceClaims but no container or "
        f"init container names {these} in resources.claims: the Pod holds the devices, but "
        "no container can use them.",
        objects,
        f"Add `resources.claims: [{{name: {unused[0].name}}}]` to the container that needs the "
        f"device, or drop the entry from spec.resourceClaims "
        f"(kubectl get pod -n {pod.namespace} {pod.name} -o yaml).",
    )


# --- claims ----------------------------------------------------------------------------------


def _claim_findings(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    captured = timestamp(state.meta.captured_at)
    on = enabled.__contains__
    for claim in state.claims.values():
        if on("orphaned-claim") and (finding := _orphaned(state, claim)):
            yield finding
        unreserved = claim.allocated and not claim.reserved and not claim.deleting
        if on("allocated-unreserved") and unreserved:
            yield _allocated_unreserved(state, claim)
        if on("reserved-for-missing-pod") and (finding := _reserved_for_missing(state, claim)):
            yield finding
        if on("reserved-for-finished-pod") and (
            finding := _reserved_for_finished(state, claim, captured)
        ):
            yield finding
        if on("claim-stuck-deleting") and claim.deleting and claim.finalizers:
            yield _stuck_deleting(state, claim)
        if on("shared-claim") and (finding := _shared(claim)):
            yield finding


def _holding(claim: ResourceClaim) -> str:
    if not claim.results:
        return ""
    devices = [f"{r.pool}/{r.device_name}" for r in claim.results]
    return f"holding {plural(len(devices), 'device')} ({listing(devices, 3)})"


def _orphaned(state: ClusterState, claim: ResourceClaim) -> Finding | None:
    """A claim generated for one Pod whose Pod is gone: from a ResourceClaimTemplate by the
    resourceclaim controller (annotation pod-claim-name), or for the Pod's extended resources by
    the scheduler (annotation extended-resource-claim). Both carry a controller owner reference
    to the Pod, through which the garbage collector deletes them with it."""
    if claim.owner_pod is not None:
        return None
    extended = extended_resources.is_extended_claim(claim.metadata)
    owner = claim.controller_owner("Pod")
    if owner is None:
        return _extended_claim_without_owner(claim) if extended else None
    if not (claim.pod_claim_name or extended):
        return None
    owner_name = text(owner.get("name"))
    same_name = state.pods.get((claim.namespace, owner_name))
    holding = _holding(claim)
    still = f"; it is still allocated, {holding}" if holding else ""
    objects = [ref(claim), named("Pod", claim.namespace, owner_name)]
    if not extended:
        why = (
            f"a Pod {owner_name} exists, but with another uid (the owner was deleted and recreated)"
            if same_name is not None
            else f"its owner Pod {owner_name} is not in the snapshot"
        )
        return Finding(
            "orphaned-claim",
            "warning",
            f"ResourceClaim {claim.ref} was generated for Pod {owner_name} (pod claim "
            f"{claim.pod_claim_name!r}), but {why}{still}.",
            objects,
            "The garbage collector normally deletes it with its Pod; check "
            f"`kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` and, if the "
            f"Pod is gone, `kubectl delete resourceclaim -n {claim.namespace} {claim.name}`.",
        )
    # The scheduler deletes the claim it created only in its own cleanup (Unreserve, when the
    # Pod fails to bind after PreBind created it; PostFilter, for a stale one of an earlier
    # cycle); once the Pod is bound, the claim goes with the Pod through its owner reference
    # (the garbage collector). The resourceclaim controller also deletes an unreserved claim
    # whose controlling Pod is done or was replaced by one with another uid (owningPod reads the
    # owner reference alone, as far as we read upstream), but leaves a Pod it cannot find to the
    # garbage collector.
    uid = text(owner.get("uid"))
    why = (
        f"the Pod {owner_name} there is now has another uid (it was deleted and recreated, and "
        "the new Pod gets a claim of its own)"
        if same_name is not None
        else f"Pod {owner_name} no longer exists"
    )
    return Finding(
        "orphaned-claim",
        "warning",
        f"ResourceClaim {claim.ref} is the claim of a deleted Pod's extended resources: the "
        f"scheduler created it for Pod {owner_name} ({_asks(claim)}), but {why}{still}; the "
        "scheduler deletes such a claim only in its own cleanup of a failed binding, and the "
        "garbage collector removes it through its owner reference, so one left behind means the "
        "garbage collector has not got to it yet or cannot delete it.",
        objects,
        f"Check `kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` "
        f"(metadata.ownerReferences names Pod {owner_name}{', uid ' + uid if uid else ''}) and "
        "the kube-controller-manager's garbage collector logs; the Pod is gone, so "
        f"`kubectl delete resourceclaim -n {claim.namespace} {claim.name}` is safe.",
    )


def _asks(claim: ResourceClaim) -> str:
    """What a claim's requests ask for: "2 gpu.example.com devices"."""
    asks: dict[str, int] = defaultdict(int)
    for r in mappings(dig(claim.spec, "devices", "requests")):
        exactly = mapping(r.get("exactly"))
        count = exactly.get("count")
        asks[text(exactly.get("deviceClassName"))] += count if isinstance(count, int) else 1
    if not asks:
        return "no device requests"
    return listing(
        [f"{n} {name} device{'' if n == 1 else 's'}" for name, n in asks.items()], LISTED
    )


def _extended_claim_without_owner(claim: ResourceClaim) -> Finding | None:
    """A claim the scheduler created for extended resources that lost its owner reference (the
    Pod was deleted with --cascade=orphan, or the reference was edited away), and that no Pod
    of the snapshot uses: nothing will ever delete it."""
    if claim.pods or any(c.pod is not None for c in claim.consumers):
        return None
    holding = _holding(claim)
    reserved = [c.name for c in claim.consumers if c.resource in ("pods", "")]
    notes = []
    if holding:
        notes.append(f"it is still allocated, {holding}")
    if reserved:
        notes.append(
            f"status.reservedFor names {'Pod' if len(reserved) == 1 else 'Pods'} "
            f"{listing(reserved, LISTED)}, which the snapshot does not have"
        )
    return Finding(
        "orphaned-claim",
        "warning",
        f"ResourceClaim {claim.ref} is a claim the scheduler created for a Pod's extended "
        f"resources ({_asks(claim)}; annotation {extended_resources.CLAIM_ANNOTATION}), but it "
        "has no owner reference to a Pod anymore (deleting the Pod with --cascade=orphan removes "
        "it) and no Pod uses it: the garbage collector, which deletes such claims with their "
        f"Pod, will never delete it{'; ' + '; '.join(notes) if notes else ''}.",
        [ref(claim)] + [named("Pod", claim.namespace, name) for name in reserved],
        f"Check `kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` and delete "
        f"it: `kubectl delete resourceclaim -n {claim.namespace} {claim.name}`.",
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
        f"ResourceClaim {claim.ref} is reserved for {ones} {listing(names, LISTED)}, which the "
        "snapshot does not have: the reservation keeps the claim, and its devices, in use.",
        [ref(claim)] + [named("Pod", claim.namespace, c.name) for c in missing],
        "The resourceclaim controller removes reservations of deleted Pods; check "
        f"`kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml` and the "
        "kube-controller-manager logs.",
    )


def _reserved_for_finished(
    state: ClusterState, claim: ResourceClaim, captured: datetime | None
) -> Finding | None:
    """Reserved only for Pods that finished: the resourceclaim controller removes such
    reservations ("pod will not run anymore") and deletes the Pods' generated claims.

    The claims the scheduler creates for extended resources are judged alike. Unclear: the
    1.34 controller's enqueuePod returned early for a Pod without spec.resourceClaims, so it
    saw such a claim only on the claim's own updates; upstream's later
    TestEnqueuePodExtendedResourceClaims enqueues the extended claim of a finished or deleted
    Pod. In which release that changed is not established here, so no release is excused."""
    if not claim.consumers or claim.deleting:
        return None  # a claim being deleted is claim-stuck-deleting's business
    pods = [c.pod for c in claim.consumers]
    if not all(
        p is not None and p.phase in TERMINAL_PHASES and _finished_long_ago(p, captured)
        for p in pods
    ):
        return None
    done = [p for p in pods if p is not None]
    names = [f"{p.name} ({p.phase})" for p in done]
    return Finding(
        "reserved-for-finished-pod",
        "warning",
        f"ResourceClaim {claim.ref} is still reserved only for "
        f"{'Pod' if len(done) == 1 else 'Pods'} {listing(names, LISTED)}, which finished at "
        f"least {FINISHED_GRACE.seconds // 60} minutes before the snapshot: the resourceclaim "
        "controller removes the reservations of Pods that will not run anymore within seconds, "
        "so its devices stay in use while it lags.",
        [ref(claim)] + [ref(p) for p in done],
        f"kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml — the resourceclaim "
        "controller (kube-controller-manager) should have released it; check its logs, and "
        f"delete the finished Pod (kubectl delete pod -n {done[0].namespace} {done[0].name}) so "
        "that its generated claim goes with it.",
    )


def _finished_long_ago(pod: Pod, captured: datetime | None) -> bool:
    """Whether the Pod finished at least FINISHED_GRACE before the snapshot (True when the
    times are unknown)."""
    finished = [
        t
        for c in mappings(pod.status.get("containerStatuses"))
        + mappings(pod.status.get("initContainerStatuses"))
        if (t := timestamp(text(dig(c, "state", "terminated", "finishedAt"))))
    ]
    if captured is None or not finished:
        return True
    return captured - max(finished) >= FINISHED_GRACE


def _stuck_deleting(state: ClusterState, claim: ResourceClaim) -> Finding:
    since = text(claim.metadata.get("deletionTimestamp"))
    pods = [c.name for c in claim.consumers if c.resource in ("pods", "")]
    holders = [
        c.name if c.resource in ("pods", "") else f"{c.resource} {c.name}" for c in claim.consumers
    ]
    if holders:
        why = f"it is still reserved for {listing(holders, LISTED)}, which must stop first"
    elif claim.allocated:
        why = "it is still allocated, reserved by nobody; the resourceclaim controller should "
        why += "deallocate it and remove the finalizer"
    else:
        why = "nothing holds it, so whoever owns the finalizer should have removed it"
    finalizers = listing(claim.finalizers, LISTED)
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
        f"ResourceClaim {claim.ref} is shared by {len(pods)} Pods "
        f"({listing(sorted(pods), LISTED)}): "
        "they all get the same devices, and the devices stay allocated until the last of them "
        "is gone.",
        [ref(claim)] + [pods[name] for name in sorted(pods)],
        f"kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml "
        "(status.reservedFor lists the Pods using it).",
    )


# --- device classes --------------------------------------------------------------------------


def _class_missing(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
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
            f"DeviceClass {name} does not exist, but {listing(listed, LISTED)} "
            f"{'asks' if len(objs) == 1 else 'ask'} for it: the scheduler cannot allocate "
            f'such claims ("device class {name} does not exist").',
            [named("DeviceClass", "", name)] + [ref(o) for o in objs],
            f"kubectl get deviceclasses — install the driver that provides {name}, or change "
            "the requests' deviceClassName to an existing class.",
        )


# --- pools and devices -----------------------------------------------------------------------


def _pool_findings(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
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
                f"Pool {label} still has {plural(len(pool.stale_slices), 'ResourceSlice')} of "
                f"generation {listing([str(g) for g in old], LISTED)} "
                f"({listing([s.name for s in pool.stale_slices], LISTED)}) beside the current "
                f"generation {pool.generation}: the allocator ignores them, and the driver "
                "should have deleted them.",
                [ref(s) for s in pool.stale_slices],
                f"{selector}; if the driver does not clean up, delete them: kubectl delete "
                f"resourceslice {' '.join(s.name for s in pool.stale_slices)}",
            )
        if pool.complete and not pool.devices and (finding := _pool_empty(pool)):
            yield finding
        if pool.duplicate_devices:
            dups = sorted(set(pool.duplicate_devices))
            slices = [s for s in pool.slices if any(d.name in dups for d in s.devices)]
            yield Finding(
                "pool-duplicate-device",
                "error",
                f"Pool {label} publishes device {listing(dups, LISTED)} more than once, so the "
                "allocator treats the pool as invalid (Kubernetes 1.34 fails allocations that "
                f'reach it with "pool {pool.name} is invalid: duplicate device name {dups[0]}"; '
                "1.35 and later skip it).",
                [ref(s) for s in slices],
                f"{selector}; the {pool.driver} driver must publish unique device names per pool.",
            )


def _pool_empty(pool: Pool) -> Finding | None:
    """A complete pool whose current generation publishes no device (``devices: null``): the
    driver runs, but found nothing to offer (NVIDIA dra-driver issue #149: no GPU visible)."""
    if any(s.shared_counters for s in pool.slices):
        return None  # a pool of counters only: its devices are published by another driver run
    nodes = pool.node_names
    where = (
        f"node {listing(nodes, LISTED)}"
        if nodes
        else "the nodes its ResourceSlice selects"
        if any(s.node_selector is not None for s in pool.slices)
        else "all nodes"
        if any(s.all_nodes for s in pool.slices)
        else "no node"
    )
    slices = [s.name for s in pool.slices]
    driver = pool.driver
    on_node = f" on node {nodes[0]}" if nodes else ""
    gpu = any(word in driver for word in ("gpu", "nvidia"))
    check = (
        f"; for GPUs, run nvidia-smi{on_node} (or in the driver's Pod there) to see whether the "
        "GPU driver and the GPUs are visible"
        if gpu
        else ""
    )
    return Finding(
        "pool-empty",
        "warning",
        f"Pool {driver}/{pool.name} (generation {pool.generation}, for {where}) publishes no "
        f"devices: its {plural(len(slices), 'ResourceSlice')} ({listing(slices, LISTED)}) "
        f"{'lists' if len(slices) == 1 else 'list'} none, so the {driver} driver found nothing "
        "to offer there and no claim can get a device from this pool.",
        [ref(s) for s in pool.slices],
        f"Check the {driver} driver's logs{on_node} (kubectl logs -n <driver namespace> "
        f"<its kubelet-plugin Pod{on_node}>) for why it found no devices{check}.",
    )


def _device_tainted(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
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
        in_use = f"; allocated to {listing(allocated, LISTED)}" if allocated else ""
        objects = [ref(s) for s in dict.fromkeys(d.slice for d in devices)]
        if rule:
            objects.append(named("DeviceTaintRule", "", rule))
        names = [d.name for d in devices]
        yield Finding(
            "device-tainted",
            "warning" if effect in ("NoSchedule", "NoExecute") else "info",
            f"{plural(len(devices), 'device')} of pool {driver}/{pool} "
            f"({listing(names, LISTED)}) {'carries' if len(devices) == 1 else 'carry'} taint "
            f"{spelled} "
            f"from {source}: {consequence}{in_use}.",
            objects,
            (
                f"kubectl get devicetaintrule {rule} -o yaml"
                if rule
                else f"kubectl get resourceslice {objects[0]['name']} -o yaml"
            )
            + f" — check the device's health with the {driver} driver; the taint goes away "
            "when the driver (or the rule) removes it.",
            [d.key for d in devices],
        )


def _taint_evictions(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    """Per taint (a DeviceTaintRule's, or a slice's on one device), the Pods it evicts, has
    evicted or, with effect None, would evict; with the rule's EvictionInProgress condition."""
    if "taint-eviction" not in enabled:
        return
    now = timestamp(state.meta.captured_at)
    groups: dict[tuple[str, str, str], list[health.Eviction]] = defaultdict(list)
    for e in health.evictions(state):
        groups[(e.source.kind, e.source.name, e.source.spelled)].append(e)
    for (kind, name, spelled), found in sorted(groups.items()):
        first = found[0]
        preview = first.preview
        devices = sorted({"/".join(e.device.key) for e in found})
        by_state: dict[str, list[str]] = defaultdict(list)
        for e in found:
            label = e.pod.ref
            if e.state(now) == "tolerated":
                label += f" (tolerated until {e.as_dict(now)['evict_at']})"
            by_state[e.state(now)].append(label)
        parts = [
            f"{verb} {listing(sorted(set(pods)), LISTED)}"
            for state_name, verb in (
                ("evicted", "evicted"),
                ("due", "evicts"),
                ("tolerated", "will evict"),
                ("would-evict", "would evict, were its effect NoExecute,"),
            )
            if (pods := by_state.get(state_name))
        ]
        condition = first.source.rule.eviction_condition if first.source.rule else None
        progress = (
            f"; its EvictionInProgress condition is {text(condition.get('status'))}"
            + (f" ({text(condition.get('message'))})" if text(condition.get("message")) else "")
            if condition is not None
            else ""
        )
        added = f" (added {first.source.time_added})" if first.source.time_added else ""
        objects = [named(kind, "", name)]
        objects += [ref(p) for p in dict.fromkeys(e.pod for e in found)]
        objects += [ref(c) for c in dict.fromkeys(e.claim for e in found)]
        yield Finding(
            "taint-eviction",
            "info" if preview else "warning",
            f"{kind} {name}'s taint {spelled}{added} on {listing(devices, LISTED)} "
            f"{'; '.join(parts)}{progress}.",
            objects,
            (
                f"kubectl get devicetaintrule {name} -o yaml"
                if kind == "DeviceTaintRule"
                else f"kubectl get resourceslice {name} -o yaml"
            )
            + (
                " — set its effect to NoExecute to evict them, or add a toleration "
                "(effect NoExecute) to the requests that may keep the device."
                if preview
                else " — Pods that may keep running on the device need a toleration with effect "
                "NoExecute (tolerationSeconds to delay) in their claim's request; the others "
                "are recreated by their controllers once evicted."
            ),
            list(dict.fromkeys(e.device.key for e in found)),
        )


def _device_unhealthy(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    """Devices the kubelet reports Unhealthy, one finding per device, with the Pods using it."""
    if "device-unhealthy" not in enabled:
        return
    groups: dict[str, list[HealthReport]] = defaultdict(list)
    for pod in state.pods.values():
        for r in pod.health:
            if r.health == "Unhealthy":
                groups[r.device_name].append(r)
    for name, reports in sorted(groups.items()):
        device = reports[0].device
        pods = sorted({r.pod.ref for r in reports})
        claims = sorted({r.claim.ref for r in reports if r.claim is not None})
        messages = sorted({r.message for r in reports if r.message})
        objects = [ref(p) for p in dict.fromkeys(r.pod for r in reports)]
        objects += [ref(c) for c in dict.fromkeys(r.claim for r in reports if r.claim)]
        if device is not None:
            objects.insert(0, ref(device.slice))
        tainted = device is not None and health.blocking(device)
        driver = name.split("/", 1)[0] if device is not None else "its"
        yield Finding(
            "device-unhealthy",
            "error",
            f"Device {name} is reported Unhealthy"
            + (f" ({'; '.join(messages)})" if messages else "")
            + f" in {plural(len(pods), 'Pod')} using it: {listing(pods, LISTED)}"
            + (f" (ResourceClaim {listing(claims, LISTED)})" if claims else "")
            + (
                ""
                if tainted or device is None
                else "; the device carries no taint, so new claims can still get it"
            )
            + ".",
            objects,
            f"Check the device with the {driver} driver; kubectl describe pod "
            f"{reports[0].pod.name} -n {reports[0].pod.namespace} shows the report under its "
            "container's allocatedResourcesStatus.",
            [device.key] if device is not None else [],
        )


def _shared_counters(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    """Partitions sharing a counter set with a tainted or unhealthy device that are not
    tainted themselves: still allocatable (dra-driver-nvidia-gpu #1316, MIG on a GPU with a
    fatal XID)."""
    if "unhealthy-parent-allocatable" not in enabled:
        return
    for risk in health.shared_counter_risks(state):
        bad = risk.device
        key = "/".join(bad.key)
        free = [d.name for d in risk.free]
        used = [d.name for d in risk.allocated]
        parts = []
        if free:
            parts.append(
                f"{listing(free, LISTED)} {'is' if len(free) == 1 else 'are'} free and "
                "still allocatable"
            )
        if used:
            parts.append(f"{listing(used, LISTED)} {'is' if len(used) == 1 else 'are'} in use")
        objects = [
            ref(s)
            for s in dict.fromkeys([bad.slice, *(d.slice for d in risk.free + risk.allocated)])
        ]
        yield Finding(
            "unhealthy-parent-allocatable",
            "warning" if free else "info",
            f"Device {key} {risk.why}, but {plural(len(free) + len(used), 'device')} drawing on "
            f"the same counter set {risk.counter_set} carry no such taint: "
            f"{'; '.join(parts)}.",
            objects,
            f"Taint them too (a DeviceTaintRule with deviceSelector driver {bad.driver}, pool "
            f"{bad.pool_name} and each device), or have the {bad.driver} driver propagate the "
            "taint to the partitions of the same hardware.",
            [d.key for d in (bad, *risk.free, *risk.allocated)],
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


def _dangling_allocations(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    if "dangling-allocation" not in enabled:
        return
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
            f"ResourceClaim {claim.ref} is allocated {listing(names, LISTED)}, which no current "
            f"ResourceSlice publishes ({listing(list(dict.fromkeys(notes)), LISTED)}): the driver "
            "removed or renamed the device, and the claim's Pods cannot be prepared on it again.",
            [ref(claim)] + [ref(p) for p in users],
            f"kubectl get resourceclaim -n {claim.namespace} {claim.name} -o yaml; "
            f"kubectl get resourceslices --field-selector spec.driver={results[0].driver}; "
            "recreate the claim's Pods (and the claim) so it is allocated again.",
        )


# --- capacity: no-preemption and parallelism-exceeds-capacity ---------------------------------


def _capacity_findings(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    if not enabled.intersection(("no-preemption", "parallelism-exceeds-capacity")):
        return
    matcher = snapshot_matcher(state)
    capacity = Capacity(state, matcher)
    waiting = list(_waiting_pods(state)) if "no-preemption" in enabled else []
    jobs = list(job_demands(state)) if "parallelism-exceeds-capacity" in enabled else []
    for _, _, requests in waiting:
        for options in requests:
            for alt in options:
                matcher.add(alt.want)
    for _, _, requirements in jobs:
        for options in requirements:
            for alt in options:
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
) -> Iterable[tuple[Pod, list[ResourceClaim], list[list[Alternative]]]]:
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
                options = alternatives(request)
                if options is None:
                    continue
                requests.append(options)
        if requests:
            yield pod, claims, requests


def _no_preemption(
    state: ClusterState,
    capacity: Capacity,
    pod: Pod,
    claims: list[ResourceClaim],
    requests: list[list[Alternative]],
) -> Finding | None:
    """The Pod's requests cannot be met now, but could be if lower-priority Pods went away."""
    priority = pod_priority(state, pod)
    blocked: list[Alternative] = []
    holders: dict[tuple[str, str], ResourceClaim] = {}
    for options in requests:
        fits_now = False
        preemptible: tuple[Alternative, list[Device]] | None = None
        for alt in options:
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
        f"Pod {pod.ref} (priority {priority}) waits for {listing(asks, LISTED)}: the matching "
        "devices it could use are allocated to lower-priority Pods "
        f"{listing(listed, LISTED)}, and Kubernetes does not preempt Pods to free devices, so it "
        "waits until they finish.",
        [ref(pod)]
        + [ref(c) for c in claims]
        + [ref(h) for _, h in sorted(holders.items())[:shown]]
        + [ref(p) for p in holder_pods[:shown]],
        "Free the devices by stopping a lower-priority workload, e.g. "
        f"kubectl delete pod -n {victim.namespace} {victim.name}, or add devices.",
    )


def _parallelism(
    state: ClusterState,
    capacity: Capacity,
    job: Job,
    sources: list[Resource],
    requirements: list[list[Alternative]],
) -> Finding | None:
    """Fewer of the Job's Pods fit on the matching devices than it runs at once (``job_fit``
    counts them)."""
    wanted = wanted_pods(job)
    fitting = job_fit(capacity, job, requirements)
    if fitting is None:
        return None  # class missing or selector error: another finding says so
    worst = min(fitting, key=lambda r: r.pods, default=None)
    if worst is None or worst.pods >= wanted or worst.matching == 0:
        return None  # it fits, or nothing matches at all (the Pods' diagnosis says so)
    fit, alt, total, available = worst.pods, worst.alternative, worst.matching, worst.available
    match = f"{total} {'device matches' if total == 1 else 'devices match'}"
    if available < total:
        match += f" and {total - available} of them are allocated to other claims"
    step = (
        f"Lower the Job's parallelism to what fits (kubectl patch job -n {job.namespace} "
        f'{job.name} -p \'{{"spec":{{"parallelism":{max(fit, 1)}}}}}\'), or add devices.'
    )
    others = "the others stay Pending until devices free up"
    # A gang's Pods start all together or not at all: fewer Pods leave it waiting for good.
    group = next((p.group for p in job.pods if p.group is not None), None)
    if group is not None and group.policy == "gang" and (group.min_count or 1) > fit:
        others = f"and its Pods form gang {group.ref} (minCount {group.min_count}), so none starts"
        step = (
            "Add devices, or lower the gang's minCount together with the Job's parallelism "
            f"(kubectl edit podgroup -n {group.namespace} {group.name}): fewer Pods than minCount "
            "leave the gang waiting."
        )
    return Finding(
        "parallelism-exceeds-capacity",
        "warning",
        f"Job {job.ref} wants {wanted} Pods running at once (spec.parallelism), each needing "
        f"{alt.count} "
        f"{alt.class_name} device{'' if alt.count == 1 else 's'} ({alt.label}), "
        f"{wanted * alt.count} in all, but {match}, leaving room for {plural(fit, 'Pod')}: "
        f"{others}.",
        [ref(job)]
        + [ref(s) for s in dict.fromkeys(sources)]
        + ([ref(group)] if group is not None and group.policy == "gang" else []),
        step,
    )


# --- extended resources backed by DRA (KEP-5004) --------------------------------------------


def _extended_conflicts(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    """Several DeviceClasses declaring one extendedResourceName: the scheduler's
    extendedresourcecache gives the name to the newest class (creationTimestamp), the
    alphabetically first name on a tie (betterDeviceClass); the others keep only their implicit
    deviceclass.resource.kubernetes.io/<class> names."""
    if "extended-resource-conflict" not in enabled or not state.extended_mapping:
        return
    asking = _pods_asking(state)
    for name, found in sorted(
        extended_resources.explicit_candidates(state.classes.values()).items()
    ):
        if len(found) < 2:
            continue
        winner, losers = found[0], found[1:]
        won_at = timestamp(winner.created)
        ties = [c for c in losers if timestamp(c.created) == won_at]
        listed = [c.name for c in found]
        both = "both" if len(found) == 2 else "all"
        when = _created_at(winner)
        if len(ties) == len(losers):
            same = f"at the same time ({when})" if won_at else "without a creationTimestamp"
            why = (
                f"they were created {same}, so the scheduler gives it to {winner.name}, whose "
                "name sorts first"
            )
        elif ties:
            why = (
                f"the scheduler gives it to {winner.name}, the newest ({when}; of the classes "
                "created then, its name sorts first)"
            )
        else:
            why = f"the scheduler gives it to {winner.name}, the newest ({when})"
        lost = []
        for c in losers:
            if c in ties:
                lost.append(f"{c.name} (created at the same time, its name sorts after)")
            else:
                lost.append(f"{c.name} ({_created_at(c)})")
        implicit = [f"{extended_resources.CLASS_PREFIX}{c.name}" for c in losers]
        pods = asking.get(name, [])
        users = ""
        if pods:
            gets = "gets" if len(pods) == 1 else "get"
            users = (
                f"; {plural(len(pods), 'Pod')} asking for {name} "
                f"({listing([p.ref for p in pods], LISTED)}) {gets} {winner.name}'s devices "
                "wherever DRA serves it"
            )
        first_loser = losers[0].name
        yield Finding(
            "extended-resource-conflict",
            "warning",
            f"DeviceClasses {listing(listed, LISTED)} {both} declare extendedResourceName "
            f"{name}: {why}; {listing(lost, LISTED)} "
            f"{'loses' if len(losers) == 1 else 'lose'} it and "
            f"{'stays' if len(losers) == 1 else 'stay'} reachable only by "
            f"{'its implicit name' if len(losers) == 1 else 'their implicit names'} "
            f"{listing(implicit, LISTED)}{users}.",
            [ref(c) for c in found],
            "kubectl get deviceclasses -o custom-columns=NAME:.metadata.name,"
            "CREATED:.metadata.creationTimestamp,EXTENDED:.spec.extendedResourceName — keep "
            f"{name} on the one class that should serve it, e.g. kubectl patch deviceclass "
            f"{first_loser} --type=json "
            '-p \'[{"op":"remove","path":"/spec/extendedResourceName"}]\'',
        )


def _created_at(device_class: DeviceClass) -> str:
    created = device_class.created
    if timestamp(created) is None:
        return "no creationTimestamp, so it counts as the oldest"
    return f"created {created}"


def _pods_asking(state: ClusterState) -> dict[str, list[Pod]]:
    """Pods that have not finished, by the mapped extended resource names they ask for."""
    out: dict[str, list[Pod]] = defaultdict(list)
    for pod in sorted(state.pods.values(), key=lambda p: (p.namespace, p.name)):
        if pod.extended is None or pod.finished:
            continue
        for name, quantity in sorted(pod.extended.totals.items()):
            if quantity and name in state.extended_mapping:
                out[name].append(pod)
    return out


def _extended_device_plugin(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    """A name a class maps that some nodes advertise in status.allocatable: a device plugin
    serves it there. filterExtendedResources gives a Pod the name through DRA only on nodes
    that advertise none of it (0 counts as none); elsewhere the device plugin serves it, and
    NodeResourcesFit counts it against the node's allocatable."""
    if "extended-resource-device-plugin" not in enabled or not state.extended_mapping:
        return
    advertised: dict[str, list[tuple[Node, int]]] = defaultdict(list)
    for node in sorted(state.nodes.values(), key=lambda n: n.name):
        for name, count in extended_resources.allocatable_counts(node).items():
            if count > 0 and name in state.extended_mapping:
                advertised[name].append((node, count))
    asking = _pods_asking(state) if not state.meta.unproven("Pod") else {}
    for name, nodes in sorted(advertised.items()):
        device_class = state.extended_mapping[name]
        plugin = [f"{n.name}: {count}" for n, count in nodes]
        others = len(state.nodes) - len(nodes)
        dra = (
            f"on the other {'node' if others == 1 else f'{others} nodes'} it allocates "
            f"{device_class.name} devices "
            "through DRA"
            if others
            else "no node is left where DRA serves it"
        )
        pods = asking.get(name, [])
        plugin_served, dra_served, unbound, unknown = 0, 0, 0, 0
        for pod in pods:
            if pod.node is not None:
                if name in pod.extended.split(pod.node).plugin:
                    plugin_served += 1
                else:
                    dra_served += 1
            elif pod.node_name:
                unknown += 1
            else:
                unbound += 1
        users = ""
        if pods:
            how = [
                f"{n} {where}"
                for n, where in (
                    (plugin_served, "served by the device plugin"),
                    (dra_served, "through DRA"),
                    (unbound, "not on a node yet"),
                    (unknown, "on a node the snapshot does not have"),
                )
                if n
            ]
            users = (
                f"; {plural(len(pods), 'Pod')} {'asks' if len(pods) == 1 else 'ask'} for it "
                f"({listing([p.ref for p in pods], LISTED)}): {listing(how, LISTED)}"
            )
        objects = [ref(device_class)] + [ref(n) for n, _ in nodes[: LISTED * 4]]
        objects += [ref(p) for p in pods[: LISTED * 4]]
        node_word = "node advertises" if len(nodes) == 1 else "nodes advertise"
        escaped = name.replace(".", "\\.")  # a kubectl JSONPath key with dots
        yield Finding(
            "extended-resource-device-plugin",
            "info",
            f"DeviceClass {device_class.name} maps extended resource {name}, but "
            f"{len(nodes)} {node_word} it in status.allocatable ({listing(plugin, LISTED)}): "
            "a device plugin serves it there, and the scheduler gives it from the device plugin "
            f"instead of DRA; {dra}{users}.",
            objects,
            f"kubectl get nodes -o custom-columns='NAME:.metadata.name,ALLOCATABLE:"
            f".status.allocatable.{escaped}' — to serve "
            "it through DRA on a node, remove the device plugin there so the node stops "
            "advertising it; a Pod that must get DRA devices can ask for "
            f"{extended_resources.CLASS_PREFIX}{device_class.name} instead, which no device "
            "plugin serves.",
        )


# --- gangs ----------------------------------------------------------------------------------


def _gang_findings(state: ClusterState, enabled: frozenset[str]) -> Iterable[Finding]:
    for gang in gangs.gangs(state):
        group = gang.group
        if (
            "gang-never-fits" in enabled
            and gang.state == "does-not-fit"
            and (alone := gangs.never_fits(state, gang)) is not None
        ):
            yield Finding(
                "gang-never-fits",
                "error",
                f"Gang {group.ref} can never fit this cluster as built: even with every "
                f"device free, only {alone} of its {plural(len(gang.members), 'member')} "
                f"fit together, and it needs {gang.min_count}.",
                [ref(group)],
                "Ask for fewer devices per member, lower minCount, or add nodes with "
                f"devices; `kubectl describe podgroup -n {group.namespace} {group.name}`.",
            )
        if "gang-partial-reservation" in enabled and gang.stuck:
            yield from _partial_reservation(gang)
        if "gang-allocation-loop" in enabled:
            looping = [(p, n) for p in gang.members if (n := gangs.in_progress_events(p))]
            if looping:
                total = sum(n for _, n in looping)
                yield Finding(
                    "gang-allocation-loop",
                    "warning",
                    f"The scheduler keeps failing the members of gang {group.ref} with "
                    f'"resource claim … {gangs.IN_PROGRESS_MESSAGE}" ({total:,} times, on '
                    f"{listing([p.name for p, _ in looping], LISTED)}): one member's allocation "
                    "of a claim the members share is still in flight when the next member is "
                    "tried, so each retry fails the same way (kubernetes #137617, fixed by "
                    "#137647 in 1.37).",
                    [ref(group)] + [ref(p) for p, _ in looping],
                    "Upgrade kube-scheduler to a release with the fix; until then, restarting "
                    "kube-scheduler clears the in-flight allocation.",
                )


def _partial_reservation(gang: gangs.Gang) -> Iterable[Finding]:
    """Members not on a node that hold devices while their gang cannot start."""
    holding = [
        (p, c)
        for p in gang.members
        if not p.node_name
        for c in dict.fromkeys(p.claims)
        if c.allocated
        and c.results
        and not any(q.node_name for q in c.pods)
        and not any(u.pod is not None and u.pod.node_name for u in c.consumers)
    ]
    if not holding:
        return
    group = gang.group
    devices = sum(len(c.results) for c in dict.fromkeys(c for _, c in holding))
    pods = list(dict.fromkeys(p.name for p, _ in holding))
    yield Finding(
        "gang-partial-reservation",
        "warning",
        f"{'Member' if len(pods) == 1 else 'Members'} {listing(pods, LISTED)} of gang "
        f"{group.ref} {'holds' if len(pods) == 1 else 'hold'} {plural(devices, 'device')} "
        f"while the gang {'waits for members' if gang.state == 'waiting' else 'cannot be placed'}"
        ": no member runs until the whole gang does, and no other Pod can use them meanwhile.",
        [ref(group)] + [ref(c) for c in dict.fromkeys(c for _, c in holding)],
        "The scheduler releases a gang's allocations when its cycle fails (the DRA plugin's "
        "PostFilter for pod groups); allocations that stay point at an older scheduler or at "
        f"claims allocated outside it: `kubectl get resourceclaims -n {group.namespace} -o wide`.",
    )


# --- kinds-missing: what the snapshot cannot prove -------------------------------------------


def _kinds_missing(state: ClusterState, skip: dict[str, list[str]]) -> Finding:
    """One finding naming the unproven kinds and the checks skipped for want of them."""
    kinds = [k for k in KINDS if any(k in missing for missing in skip.values())]
    entries = {k: mapping(state.meta.kinds.get(k)) for k in kinds}
    statuses = {k: text(entries[k].get("status")) for k in kinds}
    absent = [k for k in kinds if statuses[k] == "absent"]
    unread = [k for k in kinds if statuses[k] != "absent"]
    reasons = []
    if absent:
        reasons.append(
            f"{kinds_plural(absent)} are not in the imported bundle (the cluster may well have "
            "some: a bundle holds only the kinds it was made of)"
        )
    if unread:
        why = []
        for k in unread:
            message = text(entries[k].get("message"))
            why.append(f"{statuses[k] or 'not read'}{': ' + message if message else ''}")
        reasons.append(
            f"{kinds_plural(unread)} could not be read when the snapshot was taken "
            f"({listing(why, LISTED)})"
        )
    codes = sorted(skip)
    steps = []
    if absent:
        steps.append(
            f"export them too (kubectl get {','.join(KINDS[k].plural for k in absent)} -A -o yaml "
            "> more.yaml) and import it together with the first file, or capture the cluster with "
            "dradash"
        )
    if unread:
        steps.append(
            "let dradash list them (kubectl auth can-i list "
            f"{','.join(KINDS[k].plural for k in unread)} --as=<dradash's service account>) "
            "and capture again"
        )
    return Finding(
        "kinds-missing",
        "info",
        f"{'; '.join(reasons)}, so {plural(len(codes), 'check')} that "
        f"{'rests' if len(codes) == 1 else 'rest'} on them "
        f"{'was' if len(codes) == 1 else 'were'} skipped rather than guessed: "
        f"{listing(codes, len(codes))}.",
        [],
        "To have them checked, " + "; or ".join(steps) + ".",
    )
