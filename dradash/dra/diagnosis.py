"""Where a Pod (or a ResourceClaim) is stuck, why, what proves it, and what to do next.

The stages follow the troubleshooting order of DESIGN "Diagnosis": a Pod is pending before
allocation can start (``pod-pending``), its claim exists but is not allocated
(``claim-unallocated``), the claim is allocated but the Pod is not bound to a node
(``allocated-not-bound``), the Pod is on a node but its containers cannot see the device
(``device-not-prepared``), the workload fails (``workload-failing``), or all is well
(``healthy``). The verdict comes from the snapshot itself — claim references, allocations, the
allocator's simulation, node constraints, container states; scheduler and kubelet events are
supporting evidence and only break ties that the objects cannot (which kubelet error it was).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dradash.dra import allocator, gangs, health
from dradash.dra.extended import class_mapping, is_extended_claim, requested_names
from dradash.dra.fields import mappings, text
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import KINDS
from dradash.dra.objects import Event, HealthReport, Pod, PodClaimRef, ResourceClaim
from dradash.dra.state import ClusterState
from dradash.dra.words import listing, plural

STAGES = (
    "pod-pending",
    "claim-unallocated",
    "allocated-not-bound",
    "device-not-prepared",
    "workload-failing",
    "healthy",
)
STAGE_TITLES = {
    "pod-pending": "Pod pending",
    "claim-unallocated": "Claim unallocated",
    "allocated-not-bound": "Allocated, not bound",
    "device-not-prepared": "Device not prepared",
    "workload-failing": "Workload failing",
    "healthy": "Healthy",
}
IMAGE_PULL = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
TAINT_EVICTION = health.TAINT_EVICTION


@dataclass
class Evidence:
    kind: str
    namespace: str
    name: str
    field: str  # where on the object, e.g. "status.allocation" or "event FailedScheduling"
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "detail": self.detail,
        }


@dataclass
class Diagnosis:
    stage: str
    reason: str
    summary: str
    evidence: list[Evidence] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    explanation: allocator.Explanation | None = None  # the allocator's funnel, when it decided
    # A gang member's verdict judged alone, where the gang's verdict (gang-waiting,
    # gang-does-not-fit) replaces it: the page shows both.
    alone: Diagnosis | None = None
    # The Pod's allocated devices that have health reports or taints (pod_devices), for pages.
    devices: list[dict[str, Any]] = field(default_factory=list)
    # The kinds the snapshot lacks without which whether the object is stuck at all is unknown
    # (a claim of a bundle without Pods: whether a Pod uses it). Not empty: the verdict is
    # *unknown* (severity "unknown", not stuck), its stage only how far the object itself got
    # (DESIGN "Unknown is an answer").
    unknown: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # One sentence, even when it ends with an error message quoted from Kubernetes.
        if not self.summary.endswith((".", "!", "?")):
            self.summary += "."

    @property
    def stage_index(self) -> int:
        return STAGES.index(self.stage)

    @property
    def stuck(self) -> bool:
        """Known to be stuck: not healthy, and not unknown."""
        return self.stage != "healthy" and not self.unknown


# --- evidence helpers --------------------------------------------------------------------


def _of(obj: Any, field_name: str, detail: str) -> Evidence:
    if isinstance(obj, ResourceClaim) and obj.implicit and obj.owner_pod is not None:
        # No such claim yet: what it asks for is the Pod's, which has a page to point at.
        pod = obj.owner_pod
        return Evidence("Pod", pod.namespace, pod.name, f"extended resources: {field_name}", detail)
    return Evidence(obj.kind, obj.namespace, obj.name, field_name, detail)


def _sentence(text: str) -> str:
    """A summary that starts with the claim_label of an in-memory claim, capitalised (object
    names are not: "default/train would allocate …")."""
    return "The" + text[3:] if text.startswith(_IMPLICIT_LABEL) else text


def _events(obj: Any, *reasons: str) -> list[Event]:
    return [e for e in obj.events if not reasons or e.reason in reasons]


def _event_evidence(obj: Any, *reasons: str) -> list[Evidence]:
    return [
        Evidence(
            obj.kind, obj.namespace, obj.name, f"event {e.reason}", f"{e.message} (×{e.count})"
        )
        for e in _events(obj, *reasons)[-3:]
    ]


def _describe(obj: Any) -> str:
    if isinstance(obj, ResourceClaim) and obj.implicit and obj.owner_pod is not None:
        obj = obj.owner_pod  # no such claim yet: the Pod's events say what the scheduler tried
    kind = {"ResourceClaim": "resourceclaim", "Pod": "pod", "Node": "node"}.get(obj.kind, obj.kind)
    namespace = f" -n {obj.namespace}" if obj.namespace else ""
    return f"kubectl describe {kind.lower()} {obj.name}{namespace}"


# --- what the snapshot cannot prove ------------------------------------------------------

# How to add a kind to a bundle with kubectl alone (DESIGN "Bundle format").
_KUBECTL = {
    "Node": "kubectl get nodes -o json",
    "Pod": "kubectl get pods -A -o json",
    "Event": "kubectl get events -A -o json",
    "ResourceSlice": "kubectl get resourceslices -o json",
    "ResourceClaim": "kubectl get resourceclaims -A -o json",
    "ResourceClaimTemplate": "kubectl get resourceclaimtemplates -A -o json",
    "DeviceClass": "kubectl get deviceclasses -o json",
}


def _unproven(state: ClusterState, *kinds: str) -> list[str]:
    return state.meta.unproven(*kinds)


def _capture_step(state: ClusterState, kind: str) -> str:
    """How to get the kind into a snapshot, given why it is missing."""
    plural_name = KINDS[kind].plural
    entry = state.meta.kinds.get(kind)
    status = entry.get("status") if isinstance(entry, dict) else None
    message = text(entry.get("message")) if isinstance(entry, dict) else ""
    if status == "forbidden":
        return (
            f"Grant dradash's ClusterRole get, list and watch on {plural_name} "
            f"(kubectl auth can-i list {plural_name} --as <dradash's service account>), "
            "then capture again."
        )
    if status in ("not-found", "error"):
        return f"Capture again: listing {plural_name} failed ({message or status})."
    return (
        f"Add the {plural_name} to the bundle and import both files together: "
        f"{_KUBECTL.get(kind, f'kubectl get {plural_name} -A -o json')} > {plural_name}.json"
    )


def _why_missing(state: ClusterState, kind: str) -> str:
    plural_name = KINDS[kind].plural
    entry = state.meta.kinds.get(kind)
    status = entry.get("status") if isinstance(entry, dict) else None
    if status == "forbidden":
        return f"reading {plural_name} was forbidden"
    if status in ("not-found", "error"):
        return f"{plural_name} could not be read"
    return f"the snapshot has no {plural_name}"


def _incomplete(
    state: ClusterState,
    stage: str,
    kinds: list[str],
    what: str,
    evidence: list[Evidence],
    steps: list[str] | None = None,
    explanation: allocator.Explanation | None = None,
) -> Diagnosis:
    """snapshot-incomplete: ``what`` cannot be known without ``kinds``; how to capture them."""
    why = " and ".join(_why_missing(state, k) for k in kinds)
    evidence = evidence + [
        Evidence("Snapshot", "", "", "kinds", f"{k}: {_why_missing(state, k)}") for k in kinds
    ]
    return Diagnosis(
        stage,
        "snapshot-incomplete",
        f"{what}: {why}.",
        evidence,
        [_capture_step(state, k) for k in kinds] + (steps or []),
        explanation,
    )


# --- Pods --------------------------------------------------------------------------------


def diagnose_pod(
    state: ClusterState, pod: Pod, explain_cache: dict[Any, allocator.Explanation] | None = None
) -> Diagnosis:
    """The Pod's verdict: alone, and for a member of a gang, with its gang (gang_verdict)."""
    alone = diagnose_alone(state, pod, explain_cache)
    if not pod.group_name or pod.node_name or pod.finished:
        verdict = alone
    else:
        verdict = gang_verdict(state, pod, alone, explain_cache)
    verdict.devices = pod_devices(pod)
    return verdict


def pod_devices(pod: Pod) -> list[dict[str, Any]]:
    """The devices of the Pod's claims that carry taints or health reports:
    ``[{"driver", "pool", "device", "claim": "ns/name", "request", "taints":
    [TaintSource.as_dict()], "health": [HealthReport.as_dict()]}]``; the Pod's reports that
    name no device of the snapshot come last with driver, pool and device ``""`` and the
    resource ID in their report."""
    out = []
    seen: set[int] = set()
    for claim in pod.claims:
        for result in claim.results:
            device = result.device
            reports = [r for r in pod.health if r.result is result]
            seen.update(id(r) for r in reports)
            taints = device.taint_sources if device is not None else []
            if not taints and not reports:
                continue
            out.append(
                {
                    "driver": result.driver,
                    "pool": result.pool,
                    "device": result.device_name,
                    "claim": claim.ref,
                    "request": result.request,
                    "taints": [t.as_dict() for t in taints],
                    "health": [r.as_dict() for r in reports],
                }
            )
    rest = [r for r in pod.health if id(r) not in seen]
    if rest:
        out.append(
            {
                "driver": "",
                "pool": "",
                "device": "",
                "claim": None,
                "request": "",
                "taints": [],
                "health": [r.as_dict() for r in rest],
            }
        )
    return out


def diagnose_alone(
    state: ClusterState, pod: Pod, explain_cache: dict[Any, allocator.Explanation] | None = None
) -> Diagnosis:
    if pod.phase == "Succeeded":
        return Diagnosis(
            "healthy",
            "completed",
            f"Pod {pod.ref} ran to completion.",
            [_of(pod, "status.phase", "Succeeded")],
        )
    if evicted := _taint_eviction(state, pod):
        return evicted
    if pod.phase == "Pending" and (problem := _pending_before_allocation(state, pod)):
        return problem
    if not pod.node_name:
        unallocated = [r.claim for r in pod.claim_refs if r.claim and not r.claim.allocated]
        if unallocated:
            return _claim_unallocated(state, pod, unallocated, explain_cache)
        return _allocated_not_bound(state, pod)
    if bypass := _nodename_bypass(pod):
        return bypass
    started = _workload_started(pod)
    if not started:
        return _device_not_prepared(state, pod)
    failing = _workload_failing(pod)
    if sick := _device_unhealthy(pod, failing):
        return sick
    if failing:
        return _with_unknown_health(pod, failing)
    if pod.phase == "Running":
        ready = all(c.ready for c in pod.containers if not c.init)
        detail = "all containers ready" if ready else "running, not every container ready yet"
        return _with_unknown_health(
            pod,
            Diagnosis(
                "healthy",
                "running",
                f"Pod {pod.ref} is running on {pod.node_name} with its devices.",
                [_of(pod, "status.phase", f"Running: {detail}")]
                + [
                    _of(r.claim, "status.reservedFor", f"reserved for {pod.name}")
                    for r in pod.claim_refs
                    if r.claim
                ],
            ),
        )
    return _device_not_prepared(state, pod)


# --- gangs --------------------------------------------------------------------------------


def gang_verdict(
    state: ClusterState,
    pod: Pod,
    alone: Diagnosis,
    explain_cache: dict[Any, allocator.Explanation] | None = None,
) -> Diagnosis:
    """A Pod not yet on a node, of a PodGroup: judged with its gang (DESIGN "Kubernetes 1.37
    workloads"). A problem of its own before allocation (a claim missing, a gate) comes first:
    it would hold the Pod whatever the gang. Otherwise, where the gang waits for members or
    cannot be placed, that is the verdict, and ``alone`` keeps the Pod's own."""
    group = pod.group
    if group is None:
        if missing := _unproven(state, "PodGroup"):
            alone.summary = (
                f"{alone.summary[:-1]}; whether its gang (PodGroup {pod.group_name}) lets it "
                f"schedule is unknown: {_why_missing(state, missing[0])}."
            )
            alone.next_steps.append(_capture_step(state, "PodGroup"))
            return alone
        if alone.stage == "pod-pending":
            return alone
        return Diagnosis(
            "pod-pending",
            "podgroup-missing",
            f"Pod {pod.ref} is scheduled with PodGroup {pod.group_name}, which does not exist: "
            "the scheduler does not try a Pod before its group exists.",
            [_of(pod, "spec.schedulingGroup.podGroupName", pod.group_name)],
            [
                f"kubectl get podgroups -n {pod.namespace}",
                "The controller that creates the Pods (a Job or JobSet with gang scheduling, "
                "or your own) creates the PodGroup too; check its events, or create it.",
            ],
            alone=alone,
        )
    gang = gangs.judge(state, group)
    if gang.state == "waiting" and alone.stage != "pod-pending":
        return _gang_waiting(state, pod, gang, alone)
    if gang.state == "does-not-fit" and alone.stage in ("claim-unallocated", "allocated-not-bound"):
        return _gang_does_not_fit(state, pod, gang, alone, explain_cache)
    return alone


def _group_evidence(gang: gangs.Gang) -> list[Evidence]:
    group = gang.group
    out = [
        _of(
            group,
            "spec.schedulingPolicy.gang.minCount",
            f"{gang.min_count}; {plural(len(gang.members), 'member Pod')} exist",
        )
    ]
    if condition := gangs.condition_text(group):
        out.append(_of(group, "status.conditions", condition))
    out += _event_evidence(group)
    return out


def gang_summary(gang: gangs.Gang) -> str:
    """What the gang's state is, in one sentence (the PodGroup page and API)."""
    group, need, n = gang.group, gang.min_count, len(gang.members)
    if gang.state == "basic":
        return (
            f"PodGroup {group.ref} has the basic policy: each of its {plural(n, 'Pod')} is "
            "scheduled on its own."
        )
    if gang.state == "scheduled":
        return (
            f"Gang {group.ref} is placed: {gang.bound} of its {plural(n, 'member Pod')} run "
            f"on nodes (minCount {need})."
        )
    if gang.state == "waiting":
        return (
            f"Gang {group.ref} waits for member Pods: it needs at least {need} before the "
            f"scheduler tries any of them, and {_exist(gang)}."
        )
    breaking = gang.breaking
    if gang.state == "unknown":
        return (
            f"Whether gang {group.ref} fits is unknown: {gang.fit} of its "
            f"{plural(n, 'member')} fit together, and dradash placed only the first "
            f"{gangs.MEMBER_LIMIT} of those waiting (minCount {need})."
        )
    head = (
        f"Gang {group.ref} needs {need} of its {plural(n, 'member Pod')} placed together"
        if need < n
        else f"Gang {group.ref} needs all {plural(n, 'member Pod')} placed together"
    )
    if gang.state == "fits":
        return f"{head}, and {gang.fit} fit at once: the scheduler can place it."
    where = f"only {gang.fit} fit at once" if gang.fit else "none of them fits"
    first = f"; the first that does not is Pod {breaking.pod.name}" if breaking else ""
    return f"{head}, but {where}{first}."


def _exist(gang: gangs.Gang) -> str:
    """How many members the scheduler may try: "only 2 exist", "only 2 of the 3 are in its
    queue (1 waits for scheduling gates)"."""
    n, queued = len(gang.members), gang.queued
    if queued == n:
        return "none exists" if not n else f"only {n} {'exists' if n == 1 else 'exist'}"
    return (
        f"only {queued} of the {n} {'is' if queued == 1 else 'are'} in its queue "
        f"({gang.gated} {'waits' if gang.gated == 1 else 'wait'} for scheduling gates)"
    )


def _gang_waiting(state: ClusterState, pod: Pod, gang: gangs.Gang, alone: Diagnosis) -> Diagnosis:
    group = gang.group
    return Diagnosis(
        "pod-pending",
        "gang-waiting",
        f"Pod {pod.ref} is a member of gang {group.ref}, which needs at least {gang.min_count} "
        f"member Pods before the scheduler tries any of them, and {_exist(gang)}.",
        _group_evidence(gang) + _event_evidence(pod, "FailedScheduling"),
        [
            f"kubectl get pods -n {pod.namespace} -o wide | grep -w -e {group.name} "
            "(or list the Pods whose spec.schedulingGroup.podGroupName names it)",
            "Check the controller that creates the members (its replicas or parallelism and "
            "its events: quota, admission, a failed create); if fewer members are intended, "
            f"lower the group's minCount (kubectl edit podgroup -n {group.namespace} "
            f"{group.name}; mutable from Kubernetes 1.37).",
        ],
        alone=alone,
    )


def _gang_does_not_fit(
    state: ClusterState,
    pod: Pod,
    gang: gangs.Gang,
    alone: Diagnosis,
    explain_cache: dict[Any, allocator.Explanation] | None,
) -> Diagnosis:
    breaking = gang.breaking
    evidence = _group_evidence(gang)
    evidence += [
        _of(
            p.pod,
            "placement",
            f"runs on {p.node}"
            if p.bound
            else f"would go to {p.node}"
            if p.node
            else "does not fit with the members before it",
        )
        for p in gang.placements[:8]
    ]
    summary, steps, explanation = gang_account(state, gang, explain_cache)
    if breaking is not None and explanation is not None and breaking.pod.claims:
        evidence += _funnel_evidence(breaking.pod.claims[0], explanation)
    return Diagnosis(
        "claim-unallocated",
        "gang-does-not-fit",
        summary,
        evidence + _event_evidence(pod, "FailedScheduling"),
        steps,
        explanation,
        alone=alone,
    )


def gang_account(
    state: ClusterState,
    gang: gangs.Gang,
    explain_cache: dict[Any, allocator.Explanation] | None = None,
) -> tuple[str, list[str], allocator.Explanation | None]:
    """The gang's summary, what to do, and the breaking member's funnel (once per gang)."""
    group = gang.group
    key = f"gang-account:{group.namespace}/{group.name}"
    if (found := state.peek(key)) is not None:
        return found  # type: ignore[no-any-return]
    summary = gang_summary(gang)
    steps = [f"kubectl describe podgroup -n {group.namespace} {group.name}"]
    if gang.unproven:  # its members are unknown
        why = " and ".join(_why_missing(state, k) for k in gang.unproven)
        summary = f"Whether gang {group.ref} can be placed is unknown: {why}."
        steps += [_capture_step(state, k) for k in gang.unproven]
    explanation = None
    breaking = gang.breaking
    if gang.state == "does-not-fit" and breaking is not None:
        why, advice, explanation = _breaking_why(state, breaking, explain_cache)
        summary = f"{summary[:-1]}: {why}."
        steps += advice
        steps.append(
            "The scheduler places members one by one and never revisits an earlier member's "
            "devices (kubernetes #138765): free devices, add nodes, or lower minCount."
        )
    account = (summary, list(dict.fromkeys(steps)), explanation)
    return state.derived(key, lambda _: account)  # type: ignore[no-any-return]


def _breaking_why(
    state: ClusterState,
    breaking: gangs.Placement,
    explain_cache: dict[Any, allocator.Explanation] | None,
) -> tuple[str, list[str], allocator.Explanation | None]:
    """Why the first member that does not fit does not: its funnel with the devices earlier
    members were given held, or its own problem (a claim that does not resolve)."""
    x = breaking.explanation
    if x is None:
        own = diagnose_alone(state, breaking.pod, explain_cache)
        return _clause(own.summary), own.next_steps[:2], own.explanation
    names = ", ".join(claim_label(c) for c in dict.fromkeys(breaking.pod.claims))
    why, advice = _unallocatable(x, names)
    return _clause(_sentence(why)), advice, x


def _clause(sentence: str) -> str:
    """A sentence as the clause after a colon: no final period, and a first word that is not
    a name ("Every device …", not "ResourceClaim …") in lower case."""
    first = sentence.split(" ", 1)[0]
    if first[1:].islower():
        sentence = sentence[0].lower() + sentence[1:]
    return sentence.rstrip(".")


def _pending_before_allocation(state: ClusterState, pod: Pod) -> Diagnosis | None:
    """pod-pending: a claim reference that does not resolve, a claim being deleted, a gate.

    A gated Pod whose claims are merely not generated yet is waiting for its gate first.
    """
    order = ["claim-missing", "invalid", "template-missing", "not-owned", "not-created"]
    if pod.scheduling_gates and all(
        r.status in ("ok", "not-created", "not-needed") for r in pod.claim_refs
    ):
        order.remove("not-created")
    refs = sorted(
        (r for r in pod.claim_refs if r.status in order), key=lambda r: order.index(r.status)
    )
    for ref in refs:
        return _unresolved_ref(state, pod, ref)
    for ref in pod.claim_refs:
        if ref.claim is not None and ref.claim.deleting:
            claim = ref.claim
            return Diagnosis(
                "pod-pending",
                "claim-being-deleted",
                f"ResourceClaim {claim.ref} is being deleted, so Pod {pod.ref} cannot use it.",
                [
                    _of(
                        claim,
                        "metadata.deletionTimestamp",
                        text(claim.metadata.get("deletionTimestamp")),
                    ),
                    _of(claim, "metadata.finalizers", ", ".join(claim.finalizers) or "none"),
                ],
                [
                    _describe(claim),
                    "Wait for the deletion to finish (the resourceclaim controller removes the "
                    "finalizer once no Pod uses the claim), then recreate the Pod.",
                ],
            )
    if gates := pod.scheduling_gates:
        return Diagnosis(
            "pod-pending",
            "scheduling-gated",
            f"Pod {pod.ref} waits for its scheduling gates to be removed: {', '.join(gates)}.",
            [_of(pod, "spec.schedulingGates", ", ".join(gates))],
            [
                _describe(pod),
                "The controller that added the gate removes it (for kueue.x-k8s.io/admission: "
                "check the Workload's admission with kubectl get workloads -n "
                f"{pod.namespace}).",
            ],
        )
    return None


def _unresolved_ref(state: ClusterState, pod: Pod, ref: PodClaimRef) -> Diagnosis:
    ns = pod.namespace
    evidence = [_of(pod, f"spec.resourceClaims[{ref.name}]", _ref_text(ref))]
    evidence += _event_evidence(pod, "FailedResourceClaimCreation")
    # A claim or template the snapshot does not hold may well exist in the cluster.
    if ref.status in ("claim-missing", "not-created") and (
        missing := _unproven(state, "ResourceClaim")
    ):
        name = f"ResourceClaim {ns}/{ref.claim_name}" if ref.claim_name else "the claim"
        if ref.status == "not-created":
            name = f"the claim generated from template {ref.template_name}"
        return _incomplete(
            state,
            "pod-pending",
            missing,
            f"Whether {name} that Pod {pod.ref} uses exists is unknown",
            evidence,
            [f"kubectl get resourceclaims -n {ns}"],
        )
    if ref.status == "template-missing" and (
        missing := _unproven(state, "ResourceClaimTemplate", "ResourceClaim")
    ):
        return _incomplete(
            state,
            "pod-pending",
            missing,
            f"Whether ResourceClaimTemplate {ns}/{ref.template_name} (or the claim generated "
            f"from it) that Pod {pod.ref} uses exists is unknown",
            evidence,
            [f"kubectl get resourceclaimtemplate {ref.template_name} -n {ns}"],
        )
    if ref.status in ("claim-missing", "invalid"):
        if ref.status == "invalid":
            return Diagnosis(
                "pod-pending",
                "claim-missing",
                f"Pod {pod.ref} claim {ref.name!r} names neither a claim nor a template.",
                evidence,
                ["Fix the Pod spec: set resourceClaimName or resourceClaimTemplateName."],
            )
        generated = ref.source == "template"
        return Diagnosis(
            "pod-pending",
            "claim-missing",
            f"ResourceClaim {ns}/{ref.claim_name} that Pod {pod.ref} uses does not exist"
            + (" (it was generated for the Pod and has been deleted)." if generated else "."),
            evidence,
            [
                f"kubectl get resourceclaim {ref.claim_name} -n {ns}",
                "Create the ResourceClaim, or point the Pod at an existing one."
                if not generated
                else "Delete and recreate the Pod so that the claim is generated again.",
            ],
        )
    if ref.status == "template-missing":
        return Diagnosis(
            "pod-pending",
            "template-missing",
            f"ResourceClaimTemplate {ns}/{ref.template_name} does not exist, so no claim can be "
            f"generated for Pod {pod.ref}.",
            evidence,
            [
                f"kubectl get resourceclaimtemplate {ref.template_name} -n {ns}",
                f"Create ResourceClaimTemplate {ref.template_name} in namespace {ns}, or fix the "
                "name in the Pod spec.",
            ],
        )
    if ref.status == "not-created" and ref.group_ref is not None and pod.group is not None:
        group = pod.group
        return Diagnosis(
            "pod-pending",
            "claim-not-created",
            f"The resourceclaim controller has not yet generated the claim {ref.name!r} of "
            f"PodGroup {group.ref} from template {ref.template_name}: Pod {pod.ref} shares it "
            "with the group's other members (KEP-5729).",
            evidence + [_of(group, "status.resourceClaimStatuses", f"no entry for {ref.name!r}")],
            [
                f"kubectl describe podgroup -n {group.namespace} {group.name}",
                "If this lasts more than a few seconds, check kube-controller-manager's logs for "
                "the resourceclaim controller; claims for a PodGroup need the "
                "DRAWorkloadResourceClaims feature gate on in kube-controller-manager too.",
            ],
        )
    if ref.status == "not-created":
        return Diagnosis(
            "pod-pending",
            "claim-not-created",
            f"The resourceclaim controller has not yet generated a claim from template "
            f"{ref.template_name} for Pod {pod.ref}.",
            evidence + [_of(pod, "status.resourceClaimStatuses", f"no entry for {ref.name!r}")],
            [
                _describe(pod),
                "If this lasts more than a few seconds, check kube-controller-manager's logs for "
                "the resourceclaim controller (it may be unable to create the claim: quota, "
                "admission).",
            ],
        )
    # not-owned
    if ref.group_ref is not None and pod.group is not None:
        owner = ref.claim.controller_owner("PodGroup") if ref.claim else None
        return Diagnosis(
            "pod-pending",
            "claim-not-owned",
            f"ResourceClaim {ns}/{ref.claim_name} was not generated for PodGroup "
            f"{pod.group.ref} (its owner is {text((owner or {}).get('name')) or 'not a PodGroup'}"
            f"), so Pod {pod.ref} cannot share it with its gang.",
            evidence
            + (
                [_of(ref.claim, "metadata.ownerReferences", json.dumps(owner))] if ref.claim else []
            ),
            [f"kubectl get resourceclaim {ref.claim_name} -n {ns} -o yaml"],
        )
    owner = ref.claim.controller_owner("Pod") if ref.claim else None
    return Diagnosis(
        "pod-pending",
        "claim-not-owned",
        f"ResourceClaim {ns}/{ref.claim_name} was not created for Pod {pod.ref} "
        f"(its owner is {text((owner or {}).get('name')) or 'not a Pod'}).",
        evidence
        + ([_of(ref.claim, "metadata.ownerReferences", json.dumps(owner))] if ref.claim else []),
        [
            f"kubectl get resourceclaim {ref.claim_name} -n {ns} -o yaml",
            "Delete the Pod and let the controller generate a claim of its own.",
        ],
    )


def _ref_text(ref: PodClaimRef) -> str:
    if ref.source == "template":
        return f"resourceClaimTemplateName: {ref.template_name}"
    return f"resourceClaimName: {ref.claim_name}"


def _claim_unallocated(
    state: ClusterState,
    pod: Pod,
    claims: list[ResourceClaim],
    explain_cache: dict[Any, allocator.Explanation] | None,
) -> Diagnosis:
    implicit = any(c.implicit for c in claims)
    # Where a device plugin serves the extended resources instead is told node by node.
    explanation = explain_claims(state, _pod_claims(pod), pod, explain_cache, every_node=implicit)
    names = ", ".join(claim_label(c) for c in claims)
    evidence = [
        _of(pod, "resources", extended_text(pod))
        if c.implicit
        else _of(c, "status.allocation", "not set")
        for c in claims
    ]
    evidence += _event_evidence(pod, "FailedScheduling")
    steps = list(dict.fromkeys([_describe(claims[0]), _describe(pod)]))
    reason = explanation.reason
    if explanation.allocatable:
        if missing := _unproven(state, "Event"):
            return _incomplete(
                state,
                "claim-unallocated",
                missing,
                _sentence(
                    f"{names} would allocate now on node {explanation.node}; why the Pod still "
                    "waits (a scheduler timeout, or something besides DRA) would be in its "
                    "events, which are unknown"
                ),
                evidence,
                steps,
                explanation,
            )
        timed_out = any("timed out trying to allocate devices" in e.message for e in _events(pod))
        if timed_out:
            reason = "allocation-timeout"
            summary = (
                f"Devices for {names} exist (on {explanation.node}), but the scheduler timed out "
                "searching for them."
            )
            steps.append(
                "Simplify the claim's constraints or selectors, or raise the scheduler's "
                "DynamicResources filterTimeout."
            )
        else:
            reason = "schedulable-now"
            summary = _sentence(
                f"{names} would allocate now on node {explanation.node}; the scheduler has not "
                "tried since the devices freed up, or the Pod waits for something else."
            )
            steps.append("Check the Pod's latest FailedScheduling event for non-DRA reasons.")
            if implicit and (plugin := _plugin_served(state, pod, explanation.node)):
                summary = summary[:-1] + f" (there the node's device plugin serves {plugin})."
        return Diagnosis("claim-unallocated", reason, summary, evidence, steps, explanation)
    evidence += _funnel_evidence(claims[0], explanation)
    if missing := _kinds_the_verdict_lacks(state, explanation):
        return _incomplete(
            state,
            "claim-unallocated",
            missing,
            _sentence(_unknown_what(explanation, names, missing)),
            evidence,
            steps,
            explanation,
        )
    summary, advice = _unallocatable(explanation, names)
    # The best single action first: a pool the allocator skips only because the driver has not
    # published all of it yet, whose free devices would serve the request.
    first = _complete_pool_steps(state, explanation)
    return Diagnosis(
        "claim-unallocated",
        reason or "no-matching-devices",
        _sentence(summary),
        evidence,
        list(dict.fromkeys(first + steps + advice)),
        explanation,
    )


# The funnel steps whose count depends on the nodes the Pod may use.
_NODE_STEPS = ("nodes", "free", "taints", "constraints", "count")


def _plugin_served(state: ClusterState, pod: Pod, node_name: str | None) -> str:
    node = state.nodes.get(node_name or "")
    if node is None or pod.extended is None:
        return ""
    return ", ".join(f"{n}: {q}" for n, q in sorted(pod.extended.split(node).plugin.items()))


_IMPLICIT_LABEL = "the extended resources of Pod "


def claim_label(claim: ResourceClaim) -> str:
    """How a summary names a claim: ``namespace/name``, or for the claim the scheduler keeps in
    memory for a Pod's extended resources, what it is."""
    if claim.implicit and (pod := claim.owner_pod) is not None:
        return f"{_IMPLICIT_LABEL}{pod.ref} ({extended_text(pod)})"
    return claim.ref


def extended_text(pod: Pod) -> str:
    """ "example.com/gpu: 2, …": what the Pod's containers ask that a DeviceClass maps."""
    if pod.extended is None:
        return ""
    totals = pod.extended.totals
    return ", ".join(
        f"{name}: {n}" for name, n in sorted(totals.items()) if n and name in pod.extended.mapping
    )


def not_using_dra(state: ClusterState, pod: Pod) -> tuple[str, bool]:
    """Why a Pod is not judged as one that uses DRA, as a clause ("it has no …"); and whether
    that is unknown rather than known: a Pod asking for extended resources uses DRA when a
    DeviceClass maps them, which a snapshot without its DeviceClasses cannot tell."""
    names = sorted(requested_names(pod.raw))
    if not names:
        return "it has no spec.resourceClaims and asks for no extended resource", False
    asked = ", ".join(names)
    if _unproven(state, "DeviceClass"):
        return (
            f"whether it uses DRA is unknown: it asks for {asked}, which a DeviceClass may map "
            f"(then DRA serves it), and {_why_missing(state, 'DeviceClass')}",
            True,
        )
    mapped = class_mapping(state.classes.values())
    classes = sorted({mapped[n].name for n in names if n in mapped})
    if classes:
        version = state.meta.server_version or "this version"
        return (
            f"it asks for {asked}, which DeviceClass {', '.join(classes)} maps, but Kubernetes "
            f"{version} does not serve extended resources through DRA (the DRAExtendedResource "
            "feature is off), so only a device plugin can serve it",
            False,
        )
    return (
        f"it has no spec.resourceClaims, and no DeviceClass maps the extended resources it asks "
        f"for ({asked}) by its spec.extendedResourceName or as "
        "deviceclass.resource.kubernetes.io/<class>, so only a device plugin can serve them",
        False,
    )


def _kinds_the_verdict_lacks(state: ClusterState, explanation: allocator.Explanation) -> list[str]:
    """Kinds an unallocatable verdict rests on that the snapshot does not prove absent."""
    if explanation.reason == "class-missing":
        return _unproven(state, "DeviceClass")
    if explanation.error is not None:
        return []  # the allocator stops with an error whatever the kinds hold
    missing = _unproven(state, "ResourceSlice") if not state.slices else []
    request = explanation.deciding
    step = request.short_step if request is not None else "count"
    if not state.nodes and (step in _NODE_STEPS or explanation.reason in _NODE_REASONS):
        missing += _unproven(state, "Node")
    return missing


_NODE_REASONS = ("insufficient-count", "constraint-unsatisfiable")


def _unknown_what(explanation: allocator.Explanation, names: str, missing: list[str]) -> str:
    """What cannot be said about unallocated claims, with what the snapshot does show."""
    if "ResourceSlice" in missing:
        return f"Which devices could serve {names} is unknown"
    request = explanation.deciding
    if request is None:
        return f"Whether a node can take {names} is unknown"
    usable = [d for d in request.devices if d.failed_step == "nodes" and d.sole]
    if usable:
        known = (
            f"{plural(len(usable), 'free device')} in usable pools "
            f"{'matches' if len(usable) == 1 else 'match'} request {request.name} of {names} "
            f"(it needs {request.need}), but which nodes the Pod may use is unknown"
        )
    else:
        known = f"Whether a node the Pod may use has devices for {names} is unknown"
    return known


def explain_claims(
    state: ClusterState,
    claims: list[ResourceClaim],
    pod: Pod | None,
    cache: dict[Any, allocator.Explanation] | None = None,
    *,
    every_node: bool = False,
) -> allocator.Explanation:
    """The allocator's explanation, shared by Pods whose claims and constraints are the same.

    ``every_node`` asks for the allocator's answer on every node the Pod may use (the explain
    API); without it the search stops once the answer is known."""
    key = None
    if cache is not None:
        admin = any(s.admin_access for c in claims for r in c.requests for _, s in r.alternatives)
        key = (
            claims[0].namespace if admin else "",  # admin access depends on the namespace
            json.dumps([c.spec for c in claims], sort_keys=True),
            # an allocated claim is not allocated again; its allocation restricts the nodes
            json.dumps([c.allocation_node_selector if c.allocated else 0 for c in claims]),
            json.dumps(_constraints(pod), sort_keys=True),
            # a claim for extended resources asks for fewer where a device plugin serves some
            json.dumps(sorted(pod.extended.totals.items()))
            if pod is not None and pod.extended is not None and any(c.implicit for c in claims)
            else "",
            every_node,
        )
        if key in cache:
            return cache[key]
        if not every_node and (*key[:-1], True) in cache:  # the answer on every node will do
            return cache[(*key[:-1], True)]
    features = allocator.Features.of(state)
    explanation = allocator.explain(
        state,
        claims,
        pod=pod,
        features=features,
        every_node=every_node,
        budget=allocator.SearchBudget.of(state),
    )
    if cache is not None:
        cache[key] = explanation
    return explanation


def explain_claim(
    state: ClusterState,
    claim: ResourceClaim,
    cache: dict[Any, allocator.Explanation] | None = None,
    *,
    every_node: bool = True,
) -> allocator.Explanation:
    """What the allocator would do with this claim now: the explain API and the claim page.

    A claim that a Pod uses is explained for that Pod (the first not yet on a node, else the
    first), together with the Pod's other unallocated claims, as the scheduler allocates them:
    on the nodes that Pod may use. An allocated claim is explained alone, as if it were not
    allocated."""
    pods = [p for p in claim.pods if not p.finished] or claim.pods
    pod = next((p for p in pods if not p.node_name), pods[0] if pods else None)
    claims = [claim]
    if pod is not None and not claim.allocated:
        claims = _pod_claims(pod) or claims
    return explain_claims(state, claims, pod, cache, every_node=every_node)


def _pod_claims(pod: Pod) -> list[ResourceClaim]:
    """The Pod's claims in its order, once each: the unallocated ones are allocated together,
    the allocated ones restrict the nodes to those their allocations allow."""
    return list(dict.fromkeys(r.claim for r in pod.claim_refs if r.claim is not None))


def _constraints(pod: Pod | None) -> Any:
    if pod is None:
        return None
    spec = pod.spec
    return [spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations")]


def _funnel_evidence(claim: ResourceClaim, explanation: allocator.Explanation) -> list[Evidence]:
    out = []
    for request in explanation.requests:
        funnel = " → ".join(f"{step} {n}" for step, n in request.funnel)
        out.append(_of(claim, f"request {request.name}", f"allocator funnel: {funnel}"))
    return out


# How a device lost at a step before the reason's is described: "4 more are free, but …".
def _lost(request: allocator.RequestExplanation, before: str) -> list[str]:
    """Devices lost at steps before ``before`` that would otherwise have served the request,
    one phrase per step (and per pool or node where that is what decides). Many Pods share
    one explanation: computed once per request and step."""
    cache = request.tally.lost
    if before not in cache:
        cache[before] = _lost_phrases(request, before)
    return list(cache[before])


def _lost_phrases(request: allocator.RequestExplanation, before: str) -> list[str]:
    order = allocator.STEPS
    limit = order.index(before) if before in order else len(order)
    if before == "request-selectors":
        limit += 1  # "only 1 matches; 3 more are free but do not match its selectors"
    groups: dict[tuple[str, str, str], int] = {}
    for (step, pool, detail), n in request.tally.sole.items():
        if order.index(step) >= limit:
            continue
        key = (step, pool, detail) if step in ("pools", "nodes") else (step, "", "")
        groups[key] = groups.get(key, 0) + n
    phrases = []
    for (step, pool, detail), n in sorted(groups.items(), key=lambda kv: order.index(kv[0][0])):
        more = f"{n} more {'is' if n == 1 else 'are'}"
        if step == "request-selectors":
            devices = plural(n, "free device")
            phrases.append(
                f"{devices} of its class do{'es' if n == 1 else ''} not match its selectors"
            )
        elif step == "pools":
            enough = ", enough for it," if n >= request.need else ""
            phrases.append(f"{more} free{enough} but in pool {pool}, {_pool_clause(detail)}")
        elif step == "nodes":
            phrases.append(f"{more} free, but {detail}")
        elif step == "free":
            phrases.append(f"{n} more would serve but {'is' if n == 1 else 'are'} allocated")
        elif step == "taints":
            phrases.append(f"{more} free but tainted")
        elif step == "constraints":
            phrases.append(f"{more} free but lack{'s' if n == 1 else ''} the constrained attribute")
    return phrases


def _serving_pools(request: allocator.RequestExplanation) -> list[tuple[str, str, str, int]]:
    """Incomplete pools whose devices would serve the request but for that: (driver, pool,
    detail, devices) where as many of them as the request needs are free, on a node the Pod
    may use, with tolerated taints and the constrained attributes, most devices first."""
    return sorted(
        (
            (driver, pool, detail, n)
            for (driver, pool, detail), n in request.tally.sole_pools.items()
            if n >= request.need and detail.startswith("pool incomplete: ")
        ),
        key=lambda p: (-p[3], p[0], p[1]),
    )


def _complete_pool_steps(state: ClusterState, x: allocator.Explanation) -> list[str]:
    """The next step that most likely lets the claims allocate, where one pool the allocator
    skips as incomplete has enough free devices for the request that decides the verdict:
    which pool, how many devices, what completes it (its driver publishing the rest)."""
    request = x.deciding
    if request is None or x.allocatable is not False or x.reason == "allocation-timeout":
        return []
    steps = []
    for driver, name, _, n in _serving_pools(request)[:1]:
        pool = state.pools.get((driver, name))
        if pool is None:
            continue
        nodes = pool.node_names
        on = f" on node {nodes[0]}" if len(nodes) == 1 else ""
        selector = f"spec.driver={driver}" + (f",spec.nodeName={nodes[0]}" if on else "")
        steps.append(
            f"Complete pool {driver}/{name}: {plural(n, 'free device')} there match request "
            f"{request.name} ({request.need} needed), but driver {driver} has published "
            f"{len(pool.slices)} of the pool's {pool.resource_slice_count} ResourceSlices, and "
            "the allocator skips incomplete pools. Once the driver publishes the rest, the "
            f"claim can be allocated there: check its kubelet plugin{on} and "
            f"`kubectl get resourceslices --field-selector {selector} -o wide`."
        )
    return steps


def _pool_clause(detail: str) -> str:
    """ "pool incomplete: 1 of 2 slices" → "which has 1 of 2 slices (it is still being
    published, so the allocator skips it)"."""
    if detail.startswith("pool incomplete: "):
        return (
            f"which has {detail.removeprefix('pool incomplete: ')} (incomplete pools are "
            "skipped until the driver has published all of them)"
        )
    if detail.startswith("pool invalid: "):
        return f"which is invalid ({detail.removeprefix('pool invalid: ')})"
    return f"which the allocator cannot use ({detail})"


def _with_lost(sentence: str, lost: list[str]) -> str:
    sentence = sentence.rstrip(".")
    return f"{sentence}; {'; '.join(lost)}." if lost else f"{sentence}."


def _search_ran_out(x: allocator.Explanation, names: str) -> tuple[str, list[str]]:
    """Why the allocator's search was stopped (allocator/budget.py), what it tried, what the
    scheduler does in its place, and what to change."""
    timed_out = [n for n in x.nodes if n.outcome == "timeout"]
    budget = f"{x.budget_calls:,} allocateOne calls"
    if timed_out:
        where = timed_out[0].node + (
            f" and {len(timed_out) - 1} more" if len(timed_out) > 1 else ""
        )
        if x.by_clock:
            stopped = (
                f"on node {where} it did not finish before dradash's own time limit stopped it "
                f"(ahead of its budget of {budget}, which stands for kube-scheduler's 10 s "
                "filterTimeout: this machine searched slowly)"
            )
        else:
            stopped = (
                f"on node {where} it did not finish within {budget}, which stands for "
                "kube-scheduler's 10 s filterTimeout"
            )
        summary = f"The allocator's search for devices for {names} ran out of time: {stopped}"
    else:
        summary = (
            f"dradash did not finish searching for devices for {names}: this snapshot's "
            f"analysis had let {allocator.budget.PARALLELISM} searches run out of time already, "
            f"and this one needed more than the {allocator.budget.LEFTOVER_CALLS:,} calls each "
            "search gets after that"
        )
    tried = f"{plural(x.searched_nodes, 'node')} of the {x.eligible_nodes} the Pod may use searched"
    if timed_out:
        tried += f", {len(timed_out)} timed out"
    if x.not_searched:
        tried += (
            f", {x.not_searched} not searched (an analysis lets "
            f"{allocator.budget.PARALLELISM} searches run out, as many nodes as the scheduler "
            "filters at once)"
        )
    status = timed_out[0].error if timed_out else ""
    if status.startswith("node "):  # 1.36+: an Error status
        scheduler = (
            f'kube-scheduler stops too: its filter reports "{status}", an error that fails '
            "the scheduling attempt, and it tries the Pod again with backoff"
        )
    elif status == allocator.TIMED_OUT:
        scheduler = (
            f'kube-scheduler stops too, with "{status}" for those nodes, and no other node fits'
        )
    elif status:
        scheduler = (
            "this release's kube-scheduler has no filter timeout (it came in 1.34): it keeps "
            "searching, and schedules nothing else meanwhile"
        )
    else:
        scheduler = (
            f'where a search runs that long, kube-scheduler stops with "{allocator.TIMED_OUT}"'
        )
    advice = [
        "Simplify the claim's constraints (matchAttribute, distinctAttribute) and selectors: "
        "the search tries every set of devices that could satisfy them.",
        "Ask for fewer devices per request, or split the work over more Pods: the number of "
        "sets to try doubles with every device.",
        "Or raise filterTimeout in the DynamicResources plugin's args of the kube-scheduler "
        "configuration (10 s by default; 0 turns it off) — the search still takes that long.",
    ]
    return f"{summary} ({tried}); {scheduler}.", advice


def _unallocatable(explanation: allocator.Explanation, names: str) -> tuple[str, list[str]]:
    """A sentence and advice for the first step where fewer devices remain than needed."""
    reason = explanation.reason or ""
    if reason == "allocation-timeout":
        return _search_ran_out(explanation, names)
    error = explanation.error or ""
    request = explanation.deciding
    name = request.name if request else ""
    need = request.need if request else 1
    counts = dict(request.funnel) if request else {}
    step = request.short_step if request else None
    lost = _lost(request, step or "count") if request else []
    detail = _step_detail(request, step) if request else explanation.first_detail
    of = f"request {name} of {names}" if name else names
    needs = f"it needs {need}"

    def left(at: str) -> int:
        return counts.get(at, 0)

    texts: dict[str, tuple[str, list[str]]] = {
        "class-missing": (
            f"{names} asks for a DeviceClass that does not exist: {error}",
            [
                "kubectl get deviceclasses",
                "Create the DeviceClass (usually installed with the "
                "driver's Helm chart) or fix deviceClassName in the claim or template.",
            ],
        ),
        "no-slices": (
            f"No driver publishes devices that {of} could use: the class's driver has no "
            "ResourceSlices.",
            [
                "kubectl get resourceslices -o wide",
                "Check that the DRA driver's kubelet plugin "
                "runs on the GPU nodes (kubectl get pods -A | grep -i dra).",
            ],
        ),
        "selector-error": (
            f"A CEL selector of {names} raises an error, which aborts scheduling of the Pod on "
            f"every node: {error or detail}"
            if explanation.allocatable is None
            else f"No device the Pod can use matches {of}: its CEL selector raises an error on "
            "devices the scheduler does not evaluate for this Pod (on nodes it may not use, or "
            "left out before the selectors run), and matches none of the others. Where the "
            f"scheduler evaluates such a device, the error aborts scheduling: {detail}",
            [_selector_advice(error or detail or explanation.first_detail)],
        ),
        "no-matching-devices": (
            _with_lost(
                (
                    f"No device in the cluster matches {of}"
                    if not left(step or "request-selectors")
                    else f"Only {plural(left(step or 'request-selectors'), 'device')} "
                    f"{'matches' if left(step or 'request-selectors') == 1 else 'match'} {of}"
                )
                + (
                    " (the class's selectors)"
                    if step == "class-selectors"
                    else " (class and request selectors)"
                )
                + ("" if not left(step or "request-selectors") else f"; {needs}"),
                lost,
            ),
            [
                "Try the selectors in the playground against this snapshot to see the nearest "
                "misses.",
                "Relax the selector, or add devices with the requested attributes.",
            ],
        ),
        "pool-incomplete": (
            _with_lost(
                f"{_only(left('pools'), 'device')} matching {of} "
                f"{_are(left('pools'))} in complete pools ({needs}): the others are in pools "
                "still being published (fewer ResourceSlices than resourceSliceCount), which "
                f"the allocator skips{_pools_named(request, 'pool incomplete')}",
                lost,
            ),
            [
                "kubectl get resourceslices -o wide",
                "Wait for the driver to publish all slices of "
                "the pool, or check the driver's logs if it stays incomplete.",
            ],
        ),
        "pool-invalid": (
            _with_lost(
                f"{_only(left('pools'), 'device')} matching {of} {_are(left('pools'))} in "
                f"valid pools ({needs}): the others are in pools the allocator refuses"
                f"{_pools_named(request, 'pool invalid')}",
                lost,
            ),
            [
                "kubectl get resourceslices -o yaml",
                "Report the duplicate device names to the "
                "driver's maintainers; restarting the driver's kubelet plugin republishes slices.",
            ],
        ),
        "devices-unreachable": (
            _with_lost(
                f"{_only(left('nodes'), 'device')} matching {of} "
                f"{_are(left('nodes'))} on nodes this Pod may use ({needs}): the others are "
                f"{detail or 'on nodes its nodeSelector, affinity, taints or a cordon exclude'}",
                lost,
            ),
            [
                "Compare the Pod's nodeSelector, affinity and tolerations with the nodes that "
                "have the devices (kubectl get nodes --show-labels)."
            ],
        ),
        "devices-exhausted": (
            _with_lost(
                (
                    f"Every device matching {of} is already allocated to other claims"
                    if not left("free")
                    else f"Only {plural(left('free'), 'device')} matching {of} "
                    f"{_are(left('free'))} free ({needs}): the others are allocated to other "
                    "claims"
                )
                + (f" ({held})" if (held := _held(request, detail)) else ""),
                lost,
            ),
            [
                "Free devices (finish or delete the Pods holding them), or add capacity. "
                "DRA does not preempt: a higher priority does not help."
            ],
        ),
        "devices-tainted": (
            _with_lost(
                f"{_only(left('taints'), 'free device')} matching {of} "
                f"{'tolerates' if left('taints') <= 1 else 'tolerate'} the taints on it "
                f"({needs}): the others carry taints the request does not tolerate"
                + (f" ({detail})" if detail else ""),
                lost,
            ),
            [
                "kubectl get resourceslices -o yaml | grep -A3 taints",
                "Add a toleration for the "
                "taint to the request, or fix the device so that the driver removes the taint.",
            ],
        ),
        "constraint-unsatisfiable": (
            _with_lost(
                f"{_only(left('constraints'), 'free device')} matching {of} "
                f"{'publishes' if left('constraints') <= 1 else 'publish'} the attribute its "
                f"constraints need ({needs})" + (f": {detail}" if detail else "")
                if step == "constraints"
                else f"No set of free devices on one node satisfies the constraints of {names} "
                "(matchAttribute / distinctAttribute)",
                lost,
            ),
            [
                "Check that the devices publish the constrained attribute, and that enough of them "
                "share (or differ in) its value on one node."
            ],
        ),
        "insufficient-count": (
            _with_lost(
                (
                    f"{plural(left('constraints'), 'usable device')} {_are(left('constraints'))} "
                    f"free for {of}, but no node the Pod may use has {need} of them (at most "
                    f"{left('count')}, on {request.node})"
                    if request is not None and step == "count" and request.node
                    else f"There are free matching devices, but no single node has enough of "
                    f"them for {names}"
                ),
                lost,
            ),
            ["Lower the count, spread the work over more Pods, or free devices on one node."],
        ),
        "too-many-devices": (
            f"{names} asks for more than 32 devices, the limit per claim: {error}",
            ["Split the request over several claims."],
        ),
        "feature-disabled": (
            f"{names} uses a DRA feature this cluster's version does not enable: {error or detail}",
            ["Check the feature gates of kube-apiserver and kube-scheduler."],
        ),
    }
    return texts.get(reason, (f"{names} cannot be allocated: {error or reason}", []))


def _held(request: allocator.RequestExplanation | None, detail: str) -> str:
    """Who holds the devices a request lost as allocated: "16 devices held by 10 claims: ns/a
    (2), …", every holder counted, not just the most common one."""
    holders = request.tally.holders if request is not None else None
    return allocator.held_by(holders) if holders else detail


def _only(n: int, word: str) -> str:
    return f"No {word}" if n == 0 else f"Only {plural(n, word)}"


def _are(n: int) -> str:
    return "is" if n <= 1 else "are"  # "no device is", "1 device is", "2 devices are"


def _step_detail(request: allocator.RequestExplanation, step: str | None) -> str:
    """The detail of the devices that stop at ``step`` (the most common one)."""
    details = request.tally.details.get(step or "")
    return details.most_common(1)[0][0] if details else ""


def _pools_named(request: allocator.RequestExplanation | None, prefix: str) -> str:
    if request is None:
        return ""
    pools = {
        pool: detail.removeprefix(f"{prefix}: ")
        for pool, detail in request.tally.pools.items()
        if detail.startswith(prefix)
    }
    if not pools:
        return ""
    return ": " + listing((f"{p} ({detail})" for p, detail in sorted(pools.items())), 3)


def _selector_advice(error: str) -> str:
    if "no such key:" in error:
        name = error.rsplit("no such key:", 1)[1].split()[0].strip(". ")
        return (
            f"A device does not publish attribute {name!r}; guard the lookup with has() or "
            f'optional syntax: device.attributes["…"].?{name}.orValue(…), and check which '
            "drivers publish it (the playground lists the failing devices)."
        )
    return "Open the selector in the playground to see the error on each device."


def _allocated_not_bound(state: ClusterState, pod: Pod) -> Diagnosis:
    claims = pod.claims
    evidence = [_of(c, "status.allocation", _allocation_text(state, c)) for c in claims]
    evidence += _event_evidence(pod, "FailedScheduling", "BindingConditionsPending")
    # Binding conditions (KEP-5007): failed, timed out, or not confirmed yet.
    bindings = [b for c in claims if (b := health.claim_binding(state, c)) is not None]
    for b in bindings:
        if b.failed or b.timed_out:
            return _binding_failed(pod, b, evidence)
    for b in bindings:
        if b.pending:
            left = b.seconds_left
            timeout = (
                f"; the scheduler gives up in {health.duration(left)} "
                f"({health.BINDING_TIMEOUT} s after allocation at {b.claim.allocation_timestamp})"
                if left is not None
                else ""
            )
            return Diagnosis(
                "allocated-not-bound",
                "binding-conditions-pending",
                f"ResourceClaim {b.claim.ref} is allocated, and its devices wait for binding "
                f"conditions: {', '.join(b.pending)}{timeout}.",
                evidence + _binding_evidence(b),
                [
                    _describe(b.claim),
                    "The device's driver or controller sets these conditions "
                    "(status.devices[].conditions); check its logs. The scheduler gives up "
                    f"after the binding timeout ({health.BINDING_TIMEOUT} s by default).",
                ],
            )
    # The claim for the Pod's extended resources from an earlier attempt that did not bind:
    # filterExtendedResources answers "cannot schedule extended resource claim" on every node,
    # PostFilter deletes the claim, and the next attempt allocates anew.
    for claim in claims:
        if claim.owner_pod is pod and is_extended_claim(claim.metadata):
            return Diagnosis(
                "allocated-not-bound",
                "stale-extended-claim",
                f"ResourceClaim {claim.ref} for Pod {pod.ref}'s extended resources is left from "
                "a scheduling attempt that did not bind the Pod; the scheduler deletes it and "
                "allocates anew.",
                evidence,
                [
                    _describe(pod),
                    'If it stays, look for "cannot schedule extended resource claim" and '
                    '"deletion of ResourceClaim completed" in the Pod\'s FailedScheduling events, '
                    "and at kube-scheduler's logs for why it cannot delete the claim.",
                ],
            )
    # Allocations that tie the Pod to nodes it cannot use: only the Node objects tell.
    restricted = [c for c in claims if c.allocation_node_selector is not None]
    if restricted and not state.nodes and (missing := _unproven(state, "Node")):
        return _incomplete(
            state,
            "allocated-not-bound",
            missing,
            f"Pod {pod.ref}'s claims are allocated to devices on "
            f"{', '.join(_allocation_text(state, c) for c in restricted)}; whether the Pod can "
            "run there is unknown",
            evidence,
            [_describe(pod)],
        )
    for claim in claims:
        nodes = state.allocation_nodes(claim)
        if nodes is None:
            continue
        problems = {
            n: allocator.pod_node_problem(pod, state.nodes[n]) for n in nodes if n in state.nodes
        }
        if nodes and all(problems.values()):
            why = "; ".join(f"{n}: {p}" for n, p in problems.items())
            return Diagnosis(
                "allocated-not-bound",
                "node-conflict",
                f"ResourceClaim {claim.ref} is allocated on {', '.join(nodes)}, where Pod "
                f"{pod.ref} cannot run ({why}).",
                evidence + [_of(pod, "spec", _constraint_text(pod))],
                [
                    _describe(pod),
                    f"Run the Pod where the claim's devices are "
                    f"({', '.join(nodes)}), or use a claim of its own (a ResourceClaimTemplate) "
                    "instead of sharing this one.",
                ],
            )
    return Diagnosis(
        "allocated-not-bound",
        "node-resources",
        f"Pod {pod.ref}'s claims are allocated, but it is not yet bound to a node; the scheduler "
        "reports other reasons (CPU, memory, node affinity, taints) in its events.",
        evidence,
        [_describe(pod)],
    )


def _binding_evidence(b: health.ClaimBinding) -> list[Evidence]:
    out = []
    for device in b.devices:
        r = device.result
        rows = device.as_dict()["conditions"]
        detail = ", ".join(
            f"{c['type']}={c['status'] or 'unset'}"
            + (" (failure)" if c["role"] == "failure" else "")
            for c in rows
        )
        out.append(
            _of(b.claim, "status.devices[].conditions", f"{r.pool}/{r.device_name}: {detail}")
        )
    if b.claim.allocation_timestamp:
        out.append(
            _of(b.claim, "status.allocation.allocationTimestamp", b.claim.allocation_timestamp)
        )
    return out


def _binding_failed(pod: Pod, b: health.ClaimBinding, evidence: list[Evidence]) -> Diagnosis:
    """A binding failure condition holds, or the binding timeout passed (isClaimTimeout): the
    scheduler deallocates the claim and tries the Pod again."""
    if b.failed:
        result, name = b.failed[0]
        condition = result.status_conditions.get(name, {})
        why = ": ".join(
            v for v in (text(condition.get("reason")), text(condition.get("message"))) if v
        )
        what = (
            f"device {result.pool}/{result.device_name} reports binding failure condition "
            f"{name}=True" + (f" ({why})" if why else "")
        )
    else:
        left = b.seconds_left or 0
        what = (
            f"its devices still wait for {', '.join(b.pending)} "
            f"{health.duration(left)} past the binding timeout ({health.BINDING_TIMEOUT} s after "
            f"allocation at {b.claim.allocation_timestamp})"
        )
    return Diagnosis(
        "allocated-not-bound",
        "binding-failed",
        f"Binding Pod {pod.ref} failed: ResourceClaim {b.claim.ref} is allocated, but {what}; "
        "the scheduler deallocates the claim and tries again.",
        evidence + _binding_evidence(b),
        [
            _describe(b.claim),
            "The device's driver or controller sets these conditions "
            "(status.devices[].conditions): check its logs for why the device could not be "
            "attached.",
        ],
    )


def _allocation_text(state: ClusterState, claim: ResourceClaim) -> str:
    devices = ", ".join(f"{r.pool}/{r.device_name}" for r in claim.results) or "no devices"
    nodes = state.allocation_nodes(claim)
    where = "any node" if nodes is None else ", ".join(nodes) or "no node in the snapshot"
    return f"{devices} (usable from {where})"


def _constraint_text(pod: Pod) -> str:
    parts = []
    if selector := pod.spec.get("nodeSelector"):
        parts.append("nodeSelector " + ", ".join(f"{k}={v}" for k, v in selector.items()))
    if (pod.spec.get("affinity") or {}).get("nodeAffinity"):
        parts.append("node affinity")
    if tolerations := pod.spec.get("tolerations"):
        parts.append(f"{len(tolerations)} toleration(s)")
    return "; ".join(parts) or "no node constraints"


def _nodename_bypass(pod: Pod) -> Diagnosis | None:
    """nodeName set by hand: nobody allocated the claims, or reserved them for this Pod."""
    for ref in pod.claim_refs:
        claim = ref.claim
        if claim is None or (claim.allocated and claim.reserved_for(pod)):
            continue
        return Diagnosis(
            "device-not-prepared",
            "nodename-bypass",
            f"Pod {pod.ref} has spec.nodeName {pod.node_name} set directly, so the scheduler "
            f"never allocated ResourceClaim {claim.ref} or reserved it for the Pod, and the "
            "kubelet refuses to prepare the device.",
            [
                _of(pod, "spec.nodeName", pod.node_name),
                _of(claim, "status.allocation", "set" if claim.allocated else "not set"),
                _of(
                    claim,
                    "status.reservedFor",
                    ", ".join(c.name for c in claim.consumers) or "empty",
                ),
            ]
            + _event_evidence(pod, "FailedPrepareDynamicResources"),
            [
                "Remove spec.nodeName and use a nodeSelector such as "
                f"kubernetes.io/hostname: {pod.node_name}, so that the scheduler allocates the "
                "devices; then recreate the Pod.",
            ],
        )
    return None


def _workload_started(pod: Pod) -> bool:
    for c in pod.containers:
        state, details = c.state
        last, _ = c.last_state
        if state in ("running", "terminated") or last or c.restart_count:
            return True
        if state == "waiting" and details.get("reason") in IMAGE_PULL | {"CrashLoopBackOff"}:
            return True  # the sandbox exists, so the devices were prepared
    return False


def _device_not_prepared(state: ClusterState, pod: Pod) -> Diagnosis:
    prepare = _events(pod, "FailedPrepareDynamicResources")
    evidence = [_of(pod, "spec.nodeName", pod.node_name)]
    evidence += [_of(c, "status.reservedFor", f"reserved for {pod.name}") for c in pod.claims]
    evidence += _event_evidence(pod, "FailedPrepareDynamicResources")
    steps = [_describe(pod)]
    not_ready = [
        (claim, result)
        for claim in pod.claims
        for result in claim.results
        if any(
            c.get("type") == "Ready" and c.get("status") == "False"
            for c in mappings((result.device_status or {}).get("conditions"))
        )
    ]
    if prepare:
        message = prepare[-1].message
        driver = next((r.driver for c in pod.claims for r in c.results), "the driver")
        if "is not registered" in message:
            return Diagnosis(
                "device-not-prepared",
                "driver-not-registered",
                f"The kubelet on {pod.node_name} has no registered DRA plugin for {driver}, so it "
                f"cannot prepare the devices of Pod {pod.ref}.",
                evidence,
                steps
                + [
                    f"kubectl get pods -A -o wide --field-selector spec.nodeName={pod.node_name} "
                    "| grep -i dra",
                    f"Check that {driver}'s kubelet plugin runs on {pod.node_name} and registered "
                    "(its logs, and the kubelet's).",
                ],
            )
        return Diagnosis(
            "device-not-prepared",
            "prepare-failed",
            f"The kubelet on {pod.node_name} failed to prepare the devices of Pod {pod.ref}: "
            f"{message}",
            evidence,
            steps + [f"Check the logs of the DRA driver's kubelet plugin on {pod.node_name}."],
        )
    if not_ready:
        claim, result = not_ready[0]
        return Diagnosis(
            "device-not-prepared",
            "device-not-ready",
            f"Device {result.pool}/{result.device_name} of ResourceClaim {claim.ref} reports "
            "Ready=False.",
            evidence + [_of(claim, "status.devices", f"{result.device_name}: Ready=False")],
            steps + ["Check the driver's logs; the device's conditions say why it is not ready."],
        )
    if missing := _unproven(state, "Event"):
        return _incomplete(
            state,
            "device-not-prepared",
            missing,
            f"Pod {pod.ref} is on {pod.node_name} and its containers have not started; whether "
            "the kubelet failed to prepare its devices would be in the Pod's events, which are "
            "unknown",
            evidence,
            steps,
        )
    return Diagnosis(
        "device-not-prepared",
        "waiting",
        f"Pod {pod.ref} is on {pod.node_name} and its containers have not started yet; no "
        "preparation error has been reported.",
        evidence,
        steps,
    )


def _workload_failing(pod: Pod) -> Diagnosis | None:
    containers = [c for c in pod.containers if not (c.init and c.ready)]
    for c in containers:
        for state, details in (c.state, c.last_state):
            if state == "terminated" and details.get("reason") == "OOMKilled":
                return _failing(
                    pod,
                    c.name,
                    "oom-killed",
                    "was killed for running out of memory (OOMKilled)",
                    details,
                    ["Raise the container's memory limit, or lower its use."],
                )
    for c in containers:
        state, details = c.state
        if state == "waiting" and details.get("reason") == "CrashLoopBackOff":
            last = c.last_state[1]
            return _failing(
                pod,
                c.name,
                "crash-loop",
                f"keeps crashing ({c.restart_count} restarts; last exit code "
                f"{last.get('exitCode', '?')})",
                {**last, **details},
                [f"kubectl logs {pod.name} -n {pod.namespace} -c {c.name} --previous"],
            )
        if state == "waiting" and details.get("reason") in IMAGE_PULL:
            return _failing(
                pod,
                c.name,
                "image-pull",
                f"cannot pull its image {c.image} ({details.get('reason')})",
                details,
                ["Check the image name and tag, and the registry credentials (imagePullSecrets)."],
            )
    for c in containers:
        for state, details in (c.state, c.last_state):
            code = details.get("exitCode")
            if state == "terminated" and isinstance(code, int) and code != 0:
                return _failing(
                    pod,
                    c.name,
                    "exited-error",
                    f"exited with code {code} ({details.get('reason', 'Error')})",
                    details,
                    [f"kubectl logs {pod.name} -n {pod.namespace} -c {c.name}"],
                )
    if pod.phase == "Failed":
        return _failing(
            pod,
            "",
            "exited-error",
            f"failed ({pod.status.get('reason', 'Failed')})",
            {},
            [_describe(pod)],
        )
    return None


def _failing(
    pod: Pod, container: str, reason: str, what: str, details: dict[str, Any], steps: list[str]
) -> Diagnosis:
    who = f"container {container} of Pod {pod.ref}" if container else f"Pod {pod.ref}"
    message = text(details.get("message"))
    return Diagnosis(
        "workload-failing",
        reason,
        f"The devices are prepared, but {who} {what}.",
        [
            _of(
                pod,
                f"status.containerStatuses[{container}]" if container else "status.phase",
                " ".join(str(v) for v in (details.get("reason"), message) if v) or what,
            )
        ]
        + _event_evidence(pod, "BackOff", "Failed", "OOMKilling"),
        [_describe(pod), *steps],
    )


def _taint_eviction(state: ClusterState, pod: Pod) -> Diagnosis | None:
    """Evicted by the device taint eviction controller: the DisruptionTarget condition, linked
    to the NoExecute taint (the ResourceSlice's or a DeviceTaintRule's) of one of the Pod's
    devices that its claim does not tolerate."""
    condition = pod.condition("DisruptionTarget")
    if condition is None or condition.get("reason") != TAINT_EVICTION:
        return None
    marked = text(condition.get("lastTransitionTime"))
    evidence = [
        _of(
            pod,
            "status.conditions[DisruptionTarget]",
            f"{condition.get('reason')}: {text(condition.get('message'))}"
            + (f" (at {marked})" if marked else ""),
        )
    ]
    causes = [e for e in health.pod_taints(pod) if not e.preview]
    when = f" at {marked}" if marked else ""
    if causes:
        first = causes[0]
        device = "/".join(first.device.key)
        added = first.source.time_added
        tolerated = (
            f", tolerated for {health.duration(first.delay)} (tolerationSeconds)"
            if first.delay
            else ""
        )
        summary = (
            f"Pod {pod.ref} was evicted{when} because device {device} of ResourceClaim "
            f"{first.claim.ref} got NoExecute taint {first.source.spelled} from "
            f"{first.source.kind} {first.source.name}"
            + (f" (added {added})" if added else "")
            + tolerated
            + "."
        )
        for e in causes:
            field_name = (
                "spec.taint"
                if e.source.kind == "DeviceTaintRule"
                else f"spec.devices[{e.device.name}].taints"
            )
            detail = f"{e.source.spelled} on {'/'.join(e.device.key)}"
            if e.source.time_added:
                detail += f", added {e.source.time_added}"
            evidence.append(Evidence(e.source.kind, "", e.source.name, field_name, detail))
        evidence += [
            _of(e.claim, "status.allocation", f"{e.result.request}: {'/'.join(e.device.key)}")
            for e in causes[:1]
        ]
        steps = [
            _describe(pod),
            f"kubectl get devicetaintrule {first.source.name} -o yaml"
            if first.source.kind == "DeviceTaintRule"
            else f"kubectl get resourceslice {first.source.name} -o yaml",
            f"Check device {device} with the {first.device.driver} driver; the taint goes away "
            "when the driver (or the rule) removes it. If the Pod may keep running on a tainted "
            "device, add a toleration (effect NoExecute, with tolerationSeconds) to the request.",
        ]
    else:
        summary = (
            f"Pod {pod.ref} was evicted{when} because a device it uses got a NoExecute taint; "
            "the snapshot no longer shows a NoExecute taint on its devices (removed since, or "
            "its claim released)."
        )
        steps = [
            _describe(pod),
            "kubectl get devicetaintrules; kubectl get resourceslices -o yaml | "
            "grep -B2 -A4 taints",
            "Fix the device, or add a toleration with tolerationSeconds to "
            "the request if the Pod may keep running on a tainted device.",
        ]
    evidence += _event_evidence(pod, "DeviceTaintManagerEviction")
    return Diagnosis("workload-failing", "evicted-by-device-taint", summary, evidence, steps)


def _report_evidence(report: HealthReport) -> Evidence:
    detail = f"{report.resource}: {report.device_name} {report.health}"
    if report.message:
        detail += f" ({report.message})"
    kind = "initContainerStatuses" if report.init else "containerStatuses"
    return _of(report.pod, f"status.{kind}[{report.container}].allocatedResourcesStatus", detail)


def _device_unhealthy(pod: Pod, failing: Diagnosis | None) -> Diagnosis | None:
    """A device of a running or failing Pod that the kubelet reports Unhealthy (KEP-4680)."""
    reports = health.unhealthy(pod)
    if not reports or pod.phase == "Succeeded":
        return None
    first = reports[0]
    claim = f"ResourceClaim {first.claim.ref}" if first.claim else f"claim {first.pod_claim}"
    devices = list(dict.fromkeys(r.device_name for r in reports))
    others = f" (and {plural(len(devices) - 1, 'more device')})" if len(devices) > 1 else ""
    state = f"; the workload fails too ({failing.reason})" if failing else ""
    driver = first.device_key[0] if first.device_key else "the driver"
    return Diagnosis(
        "workload-failing",
        "device-unhealthy",
        f"The kubelet reports device {first.device_name} of {claim} Unhealthy in container "
        f"{first.container} of Pod {pod.ref}{others}{state}.",
        [_report_evidence(r) for r in reports]
        + (failing.evidence if failing else [])
        + _event_evidence(pod, "DeviceTaintManagerEviction"),
        [
            _describe(pod),
            f"Check the device with the {driver} driver (its kubelet plugin's logs on "
            f"{pod.node_name}); a driver taints an unhealthy device so that no new claim gets "
            "it: kubectl get resourceslices -o yaml | grep -B2 -A4 taints",
            "Recreate the Pod so that it gets a healthy device, once the bad one is tainted "
            "or removed.",
        ],
    )


def _with_unknown_health(pod: Pod, verdict: Diagnosis) -> Diagnosis:
    """Health the kubelet cannot determine is evidence, not a verdict: said in the summary."""
    reports = health.unknown(pod)
    if not reports:
        return verdict
    names = list(dict.fromkeys(r.device_name for r in reports))
    devices = ("devices " if len(names) > 1 else "device ") + listing(names, 3)
    verdict.summary = (
        verdict.summary.rstrip(".")
        + f"; the kubelet reports the health of {devices} as Unknown (the driver does not "
        "report it, or stopped reporting)."
    )
    verdict.evidence += [_report_evidence(r) for r in reports]
    return verdict


# --- claims ------------------------------------------------------------------------------


def diagnose_claim(
    state: ClusterState,
    claim: ResourceClaim,
    pod_diagnoses: dict[tuple[str, str], Diagnosis] | None = None,
    explain_cache: dict[Any, allocator.Explanation] | None = None,
    *,
    explain_unused: bool = True,
) -> Diagnosis:
    """A claim's stage is that of the most stuck Pod using it; without Pods, its own state.

    ``explain_unused=False`` skips asking the allocator where a claim no Pod uses would go.
    """
    if claim.deleting:
        return Diagnosis(
            "pod-pending",
            "claim-being-deleted",
            f"ResourceClaim {claim.ref} is being deleted.",
            [
                _of(
                    claim,
                    "metadata.deletionTimestamp",
                    text(claim.metadata.get("deletionTimestamp")),
                ),
                _of(claim, "metadata.finalizers", ", ".join(claim.finalizers) or "none"),
            ],
            [_describe(claim)],
        )
    pods = claim.pods or [c.pod for c in claim.consumers if c.pod is not None]
    if pods:
        diagnoses = [
            (pod_diagnoses or {}).get((p.namespace, p.name))
            or diagnose_pod(state, p, explain_cache)
            for p in pods
        ]
        return min(diagnoses, key=lambda d: d.stage_index)
    no_pods = _unproven(state, "Pod")
    if not claim.allocated:
        explanation = (
            explain_claims(state, [claim], None, explain_cache) if explain_unused else None
        )
        if no_pods:
            return _consumers_unknown(state, claim, no_pods, explanation)
        where = (
            f" (it would allocate on {explanation.node})"
            if explanation is not None and explanation.allocatable
            else ""
        )
        return Diagnosis(
            "claim-unallocated",
            "no-consumer",
            f"ResourceClaim {claim.ref} is not allocated because no Pod uses it yet; the "
            f"scheduler allocates claims for the first Pod that needs them{where}.",
            [_of(claim, "status.allocation", "not set")],
            [f"kubectl get pods -n {claim.namespace}", "Create a Pod that references the claim."],
            explanation,
        )
    if no_pods:
        return _consumers_unknown(state, claim, no_pods, None)
    return Diagnosis(
        "allocated-not-bound",
        "no-consumer",
        f"ResourceClaim {claim.ref} is allocated but no Pod in the snapshot uses it: its devices "
        "are held for nobody.",
        [
            _of(claim, "status.allocation", _allocation_text(state, claim)),
            _of(claim, "status.reservedFor", ", ".join(c.name for c in claim.consumers) or "empty"),
        ],
        [_describe(claim), "Delete the claim if it is no longer needed, to free its devices."],
    )


def _consumers_unknown(
    state: ClusterState,
    claim: ResourceClaim,
    missing: list[str],
    explanation: allocator.Explanation | None,
) -> Diagnosis:
    """consumers-unknown: a claim no Pod of the snapshot uses, in a snapshot that cannot prove
    there are none (a bundle of claims without Pods, Pods forbidden). Whether a Pod uses it,
    or waits for it, is unknown: not a stuck claim (its severity is "unknown"), whatever its
    reservedFor says. Its stage is how far the claim itself got; an unallocated claim keeps
    the allocator's answer for it alone (no Pod's node constraints)."""
    why = " and ".join(_why_missing(state, k) for k in missing)
    users = ", ".join(c.name for c in claim.consumers)
    evidence = []
    if claim.allocated:
        stage = "allocated-not-bound"
        state_text = "is allocated" + (f" and reserved for {users}" if users else "")
        question = "whether a Pod uses it"
        evidence += [
            _of(claim, "status.allocation", _allocation_text(state, claim)),
            _of(claim, "status.reservedFor", users or "empty"),
        ]
    else:
        stage = "claim-unallocated"
        state_text = "is not allocated" + _alone_answer(state, explanation)
        question = "whether a Pod waits for it"
        evidence.append(_of(claim, "status.allocation", "not set"))
        if explanation is not None and not explanation.allocatable:
            evidence += _funnel_evidence(claim, explanation)
    evidence += [
        Evidence("Snapshot", "", "", "kinds", f"{k}: {_why_missing(state, k)}") for k in missing
    ]
    return Diagnosis(
        stage,
        "consumers-unknown",
        f"ResourceClaim {claim.ref} {state_text}, but {why}, so {question} is unknown.",
        evidence,
        [_capture_step(state, k) for k in missing]
        + [f"kubectl get pods -n {claim.namespace}", _describe(claim)],
        explanation,
        unknown=list(missing),
    )


def _alone_answer(state: ClusterState, explanation: allocator.Explanation | None) -> str:
    """What the allocator would do with an unallocated claim alone, as a parenthesis: where it
    would allocate, or why it could not, where the snapshot has what that answer rests on."""
    if explanation is None:
        return ""
    if explanation.allocatable:
        return f" (it would allocate on {explanation.node})"
    if _kinds_the_verdict_lacks(state, explanation):
        return ""
    if explanation.allocatable is None:
        return f" (the allocator would stop with an error: {explanation.error})"
    return (
        f" (the allocator could not allocate it now: {explanation.reason or 'no-matching-devices'})"
    )


# --- everything at once ------------------------------------------------------------------


@dataclass
class SnapshotDiagnosis:
    pods: dict[tuple[str, str], Diagnosis]
    claims: dict[tuple[str, str], Diagnosis]

    def stage_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(STAGES, 0)
        for d in self.pods.values():
            counts[d.stage] += 1
        return counts

    def reason_counts(self) -> dict[tuple[str, str], int]:
        counts: dict[tuple[str, str], int] = {}
        for d in self.pods.values():
            counts[(d.stage, d.reason)] = counts.get((d.stage, d.reason), 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (STAGES.index(kv[0][0]), kv[0][1])))


def diagnose_all(
    state: ClusterState, cache: dict[Any, allocator.Explanation] | None = None
) -> SnapshotDiagnosis:
    """Every DRA Pod and every claim; Pods and claims that ask the same share one
    explanation (``cache``: explanations made already, see explain_claims)."""
    cache = {} if cache is None else cache
    with gc_paused():  # tens of thousands of verdicts, nothing cyclic
        pods = {(p.namespace, p.name): diagnose_pod(state, p, cache) for p in state.dra_pods}
        claims = {
            key: diagnose_claim(state, claim, pods, cache) for key, claim in state.claims.items()
        }
    return SnapshotDiagnosis(pods=pods, claims=claims)
