"""Capacity: how many devices requests can get, per node, as the allocator would see them.

The machinery the findings ``no-preemption`` and ``parallelism-exceeds-capacity`` use
(``Capacity``, ``Alternative``, ``job_demands``…; devices matched by ``matching.Matcher``) and the
two views built on it for the device inventory (issue 7, "Capacity that tells the truth"):

- ``class_capacity(state)``: per DeviceClass, devices free against allocated and tainted, and how
  many of the requests waiting for the class the free devices could serve at once, by the number
  of devices each request asks for (8 free GPUs spread one per node serve no 2-GPU request).
- ``job_capacity(state)``: per active Job, devices per Pod times the Pods it runs at once against
  the devices matching its requests, and how many of its Pods fit now.
- ``extended_capacity(state)``: per extended resource name a DeviceClass maps (KEP-5004), the
  class that serves it, its free devices where DRA serves the name, what device plugins have
  left where nodes advertise it, and the largest request one node can serve ("could a Pod
  asking ``example.com/gpu: 4`` run anywhere?").

The allocator's rules as the findings encode them: pools that are invalid are skipped, and from
Kubernetes 1.35 on incomplete ones too (dra-reference §5.2); an allocation blocks its device for
other claims unless it has admin access or the device allows multiple allocations (§5.4); devices
with a NoSchedule or NoExecute taint go only to requests that tolerate it. In the counts a set of
devices for one request comes from one node, and devices tied to no node (slices for all nodes
or a node selector) count as one more "node" of their own: conservative, a set mixing both is
not counted. Both views are computed once per snapshot (``state.derived``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dradash.dra import extended as extended_resources
from dradash.dra.allocator import (
    Features,
    blocking_taints,
    skipped_pool,
    untolerated,
)
from dradash.dra.fields import dig, mapping, mappings, number, text
from dradash.dra.matching import Matcher, Want, snapshot_matcher, want_of
from dradash.dra.objects import (
    TERMINAL_PHASES,
    Device,
    Job,
    Pod,
    Request,
    Resource,
    ResourceClaim,
)
from dradash.dra.state import ClusterState
from dradash.dra.words import plural

# --- helpers ---------------------------------------------------------------------------------


def pod_priority(state: ClusterState, pod: Pod) -> int:
    """spec.priority as admission set it, else its PriorityClass's value (or the global default)."""
    if "priority" in pod.spec:
        return pod.priority
    if (pc := state.priority_classes.get(pod.priority_class_name)) is not None:
        return pc.value
    defaults = [p.value for p in state.priority_classes.values() if p.raw.get("globalDefault")]
    return max(defaults, default=0)


# --- capacity: the devices a request can get, per node ---------------------------------------


@dataclass
class Alternative:
    """One way to satisfy a request: ``count`` devices matching ``want`` (``count`` 0: All)."""

    label: str  # "request gpu" or "request gpu/h100"
    want: Want
    count: int
    tolerations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def class_name(self) -> str:
        return self.want[0]


def alternatives(request: Request) -> list[Alternative] | None:
    """The request's alternatives, or None when they cannot be counted (admin access)."""
    out = []
    for name, spec in request.alternatives:
        if spec.admin_access:
            return None  # admin access does not need free devices
        count = max(spec.count, 1) if spec.allocation_mode == "ExactCount" else 0
        out.append(Alternative(f"request {name}", want_of(spec), count, spec.tolerations))
    return out or None


@dataclass
class Usable:
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


class Capacity:
    """Devices per (class, selectors, tolerations), by node, with who holds them."""

    def __init__(self, state: ClusterState, matcher: Matcher) -> None:
        self.state = state
        self.matcher = matcher
        self._usable: dict[tuple[Want, str], Usable | None] = {}
        self._holder: dict[int, float] = {}
        self._outlook: dict[tuple[Any, ...], tuple[bool, bool, list[Device]] | None] = {}
        features = Features.of(state)
        # Pools the allocator takes ExactCount devices from (dra-reference §5.2).
        self._pools = {id(p) for p in state.pools.values() if not skipped_pool(p, features)}
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

    def pooled(self, device: Device) -> bool:
        """Whether the device's pool is one the allocator takes ExactCount devices from."""
        return id(device.slice.pool) in self._pools

    def usable(self, alt: Alternative) -> Usable | None:
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
                and not (
                    (d.rule_taints or "taints" in d.raw) and untolerated(d.taints, alt.tolerations)
                )
            ]
            free: dict[str, int] = defaultdict(int)
            for d in devices:
                if id(d) not in taken:
                    free[d.node_name] += 1
            self._usable[key] = Usable(
                devices, {id(d) for d in devices}, dict(free), sum(free.values())
            )
        return self._usable[key]

    def outlook(self, alt: Alternative, priority: int) -> tuple[bool, bool, list[Device]] | None:
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
            now = fits(total, free, alt.count)
            self._outlook[key] = (now, not now and fits(total, freeable, alt.count), lower)
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


def fits(total: dict[str, int], usable: dict[str, int], count: int) -> bool:
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


# --- Jobs: devices per Pod times the Pods running at once -------------------------------------


def job_demands(
    state: ClusterState,
) -> Iterable[tuple[Job, list[Resource], list[list[Alternative]]]]:
    """Active Jobs with the per-Pod device demand of their pod template.

    Each Pod gets its own claim from a template entry; an entry naming a ResourceClaim is shared
    by all Pods and does not grow with parallelism, so it is left out.
    """
    for job in state.jobs.values():
        if wanted_pods(job) < 2:
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
        needs = requirements(requests)
        if needs:
            yield job, sources, needs


def _generated_for(job: Job, entry: str) -> ResourceClaim | None:
    for pod in job.pods:
        for r in pod.claim_refs:
            if r.name == entry and r.claim is not None:
                return r.claim
    return None


def wanted_pods(job: Job) -> int:
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


def requirements(requests: list[Request]) -> list[list[Alternative]]:
    """Per-Pod requirements: ExactCount requests for the same devices are added up."""
    merged: dict[tuple[Want, str], Alternative] = {}
    out: list[list[Alternative]] = []
    for request in requests:
        options = alternatives(request)
        if options is None or any(a.count == 0 for a in options):
            continue  # admin access or All: not a fixed number of devices per Pod
        if len(options) == 1:
            alt = options[0]
            key = (alt.want, json.dumps(alt.tolerations, sort_keys=True))
            if key in merged:
                merged[key].count += alt.count
                merged[key].label += f" + {alt.label.removeprefix('request ')}"
                continue
            merged[key] = Alternative(alt.label, alt.want, alt.count, alt.tolerations)
            out.append([merged[key]])
        else:
            out.append(options)
    return out


@dataclass
class RequirementFit:
    """How many of a Job's Pods one per-Pod requirement leaves room for."""

    alternative: Alternative  # of the requirement's alternatives, the one most Pods fit with
    pods: int  # Pods whose devices for it fit at once
    matching: int  # devices matching it in usable pools, whose taints it tolerates
    available: int  # of those, free or held only by the Job's own Pods


def job_fit(
    capacity: Capacity, job: Job, needs: list[list[Alternative]]
) -> list[RequirementFit] | None:
    """For each per-Pod requirement of the Job (``requirements``), how many of its Pods the
    devices leave room for at once; None when some devices cannot be known (class missing or a
    selector that does not compile).

    Devices count when they are free or held by the Job's own Pods' claims; per node, as each
    Pod's devices come from one node (devices every node reaches are pooled).
    """
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
    out: list[RequirementFit] = []
    for options in needs:
        best: RequirementFit | None = None
        for alt in options:
            usable = capacity.usable(alt)
            if usable is None:
                return None
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
            if best is None or fit > best.pods:
                best = RequirementFit(alt, fit, len(usable.devices), available)
        if best is not None:
            out.append(best)
    return out


@dataclass
class JobCapacity:
    """An active Job's device demand against the devices that match it."""

    job: Job
    pods_wanted: int  # Pods it runs at once (``wanted_pods``)
    per_pod: dict[str, int]  # devices each Pod needs, by class
    demand: int  # pods_wanted × the devices each Pod needs
    # Of the Job's requirements, the one that leaves room for the fewest Pods ("" if unknown):
    limit: str  # e.g. "2 gpu.example.com devices (request gpu)"
    matching: int | None  # devices matching it (None: unknown, a class or selector is broken)
    available: int | None  # of those, free or held by the Job's own Pods
    pods_fit: int | None  # how many of its Pods fit now
    summary: str  # one sentence a person reads

    @property
    def fits(self) -> bool | None:
        return None if self.pods_fit is None else self.pods_fit >= self.pods_wanted


def job_capacity(state: ClusterState) -> list[JobCapacity]:
    """Per active Job that runs 2 or more Pods at once (``job_demands``), by namespace and name:
    its Pods times the devices each needs, against the devices matching its requests.

    Per Pod, ExactCount requests for the same devices add up; requests with allocation mode All
    or admin access are left out (no fixed number of devices per Pod), as are claims all its
    Pods share. Devices count when free or held by the Job's own Pods (its running Pods keep
    them), per node; for a firstAvailable request, the alternative most Pods fit with.
    """
    return list(state.derived("capacity.jobs", _job_capacity))


def _job_capacity(state: ClusterState) -> list[JobCapacity]:
    matcher = snapshot_matcher(state)
    capacity = Capacity(state, matcher)
    jobs = list(job_demands(state))
    for _, _, needs in jobs:
        for options in needs:
            for alt in options:
                matcher.add(alt.want)
    matcher.run()
    out = [_one_job(capacity, job, needs) for job, _, needs in jobs]
    return sorted(out, key=lambda j: (j.job.namespace, j.job.name))


def _devices(count: int, class_name: str) -> str:
    return f"{count} {class_name} device{'' if count == 1 else 's'}"


def _one_job(capacity: Capacity, job: Job, needs: list[list[Alternative]]) -> JobCapacity:
    wanted = wanted_pods(job)
    fitting = job_fit(capacity, job, needs)
    chosen = (
        [f.alternative for f in fitting]
        if fitting is not None
        else [options[0] for options in needs if options]
    )
    per_pod: dict[str, int] = defaultdict(int)
    for alt in chosen:
        per_pod[alt.class_name] += alt.count
    demand = wanted * sum(per_pod.values())
    each = " and ".join(_devices(n, name) for name, n in per_pod.items())
    wants = f"Job {job.ref} wants {plural(wanted, 'Pod')} at once with {each} each"
    wants += f" ({demand} in all)"
    worst = min(fitting or [], key=lambda r: r.pods, default=None)
    if worst is None:
        return JobCapacity(
            job,
            wanted,
            dict(per_pod),
            demand,
            "",
            None,
            None,
            None,
            f"{wants}; how many fit is unknown: a request names a missing DeviceClass or a "
            "selector that does not compile.",
        )
    alt = worst.alternative
    limit = f"{_devices(alt.count, alt.class_name)} ({alt.label})"
    if worst.matching == 0:
        match = f"no device matches {limit}"
    else:
        match = f"{worst.matching} {'device matches' if worst.matching == 1 else 'devices match'}"
        if worst.available < worst.matching:
            match += (
                f" and {worst.matching - worst.available} of them are allocated to other claims"
            )
        if len(needs) > 1:
            match += f" {limit}"
    room = f"room for {plural(worst.pods, 'Pod')}"
    if worst.pods >= wanted:
        summary = f"{wants}: {match}, {room}, so all of them fit."
    else:
        summary = f"{wants}, but {match}: {room}, the others stay Pending."
    return JobCapacity(
        job,
        wanted,
        dict(per_pod),
        demand,
        limit,
        worst.matching,
        worst.available,
        worst.pods,
        summary,
    )


# --- classes: free against allocated, and what the waiting requests can get -----------------


@dataclass
class WaitingRequests:
    """The requests waiting for one class that each ask for ``count`` devices."""

    count: int  # devices per request
    requests: int  # how many such requests wait
    servable: int  # how many of them the free devices could serve at once
    unusable: int  # free devices of the class that none of them can use
    claims: list[tuple[str, str]]  # (namespace, name) of the claims they are in, sorted
    summary: str  # one sentence a person reads
    # (namespace, name) of the Pods whose extended resources they are, sorted: the scheduler
    # creates their claim only when it binds the Pod.
    pods: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class ClassCapacity:
    """One DeviceClass's devices in the pools the allocator uses (see ``class_capacity``)."""

    name: str
    known: bool = True  # False: a selector of the class does not compile; nothing is counted
    total: int = 0  # = allocated + tainted + free
    allocated: int = 0  # held by a claim, so no other claim can get them
    tainted: int = 0  # not allocated, but a NoSchedule/NoExecute taint keeps claims away
    free: int = 0  # neither: any request of the class can get them
    free_by_node: dict[str, int] = field(default_factory=dict)  # "" every node reaches
    largest_free_set: int = 0  # the most free devices one request could get
    waiting: dict[int, WaitingRequests] = field(default_factory=dict)  # by devices per request
    unknown_requests: int = 0  # waiting requests whose own selectors do not compile
    all_mode_requests: int = 0  # waiting allocationMode All requests, not counted
    admin_access_requests: int = 0  # waiting admin-access requests, not counted
    summary: str = ""  # one or two sentences a person reads


def class_capacity(state: ClusterState) -> list[ClassCapacity]:
    """Per DeviceClass, by name: its devices free against allocated and tainted, and what the
    requests waiting for it could get now.

    Devices are those the class's own selectors match in the pools the allocator would use (for
    the snapshot's server version). They split into *allocated* (an allocation blocks them; not
    for admin access, nor for devices that allow multiple allocations, which stay free),
    *tainted* (not allocated, but a NoSchedule or NoExecute taint keeps every request without a
    matching toleration away: no toleration is assumed) and *free*. ``largest_free_set`` is the
    most free devices on one node, those every node reaches counting as one node of their own
    (as ``Usable.fit`` counts them).

    Waiting requests are the ExactCount requests of unallocated claims, not being deleted, that
    a Pod which has not finished (and is not being deleted) references: the allocator only
    allocates a claim for a Pod it schedules, so a claim no Pod uses waits for nobody. A
    firstAvailable request counts under each class its subrequests name, with the first
    subrequest naming that class. Requests with allocation mode All (they need every matching
    device of a node, not a number) and admin-access requests (they need no free device) are
    not counted, only reported. Per number of devices N a request asks for: how many wait; how
    many of them the free devices could serve at once, each from one node, with the request's
    own selectors and tolerations (``Capacity.usable``) — an upper bound when requests of one
    size differ in selectors or tolerations; and how many of the class's free devices none of
    them can use (on a node with fewer than N usable, or excluded by their selectors). A class
    whose selectors do not compile is reported as unknown.
    """
    return list(state.derived("capacity.classes", _class_capacity))


@dataclass
class _Waiting:
    """The waiting requests of one class."""

    entries: list[tuple[ResourceClaim, Alternative]] = field(default_factory=list)
    all_mode: int = 0
    admin_access: int = 0


def _waiting_requests(state: ClusterState) -> dict[str, _Waiting]:
    out: dict[str, _Waiting] = defaultdict(_Waiting)
    # With the claims the scheduler keeps in memory for the extended resources of Pods it has
    # not bound yet: they wait for devices as much as any claim.
    implicit = [
        r.claim
        for p in state.pods.values()
        for r in p.claim_refs
        if r.claim is not None and r.claim.implicit
    ]
    for claim in [*state.claims.values(), *implicit]:
        if claim.allocated or claim.deleting:
            continue
        if not any(p.phase not in TERMINAL_PHASES and not p.deleting for p in claim.pods):
            continue
        for request in claim.requests:
            options = alternatives(request)
            if options is None:  # admin access
                for name in dict.fromkeys(request.class_names):
                    out[name].admin_access += 1
                continue
            first: dict[str, Alternative] = {}
            for alt in options:
                first.setdefault(alt.class_name, alt)
            for name, alt in first.items():
                if alt.count == 0:
                    out[name].all_mode += 1
                else:
                    out[name].entries.append((claim, alt))
    return out


def _class_capacity(state: ClusterState) -> list[ClassCapacity]:
    matcher = snapshot_matcher(state)
    capacity = Capacity(state, matcher)
    waiting = _waiting_requests(state)
    for name in state.classes:
        matcher.add((name, ()))
        for _, alt in waiting[name].entries:
            matcher.add(alt.want)
    matcher.run()
    return [_one_class(capacity, name, waiting[name]) for name in sorted(state.classes)]


def _one_class(capacity: Capacity, name: str, waiting: _Waiting) -> ClassCapacity:
    out = ClassCapacity(
        name, all_mode_requests=waiting.all_mode, admin_access_requests=waiting.admin_access
    )
    matched = capacity.matcher.devices((name, ()))
    if matched is None:
        out.known = False
        out.summary = (
            f"Unknown: a selector of DeviceClass {name} does not compile, so which devices it "
            "admits cannot be said."
        )
        return out
    free: list[Device] = []
    for d in matched:
        if not capacity.pooled(d):
            continue
        out.total += 1
        if not capacity.free(d):
            out.allocated += 1
        elif blocking_taints(d):
            out.tainted += 1
        else:
            free.append(d)
    out.free = len(free)
    by_node: dict[str, int] = defaultdict(int)
    for d in free:
        by_node[d.node_name] += 1
    out.free_by_node = dict(sorted(by_node.items()))
    out.largest_free_set = max(by_node.values(), default=0)
    by_count: dict[int, dict[tuple[Want, str], list[tuple[ResourceClaim, Alternative]]]] = {}
    for claim, alt in waiting.entries:
        key = (alt.want, json.dumps(alt.tolerations, sort_keys=True))
        by_count.setdefault(alt.count, {}).setdefault(key, []).append((claim, alt))
    for count in sorted(by_count):
        group = _serve(capacity, count, list(by_count[count].values()), free)
        out.unknown_requests += sum(len(g) for g in by_count[count].values())
        if group is not None:
            out.unknown_requests -= group.requests
            out.waiting[count] = group
    out.summary = _class_summary(out)
    return out


def _serve(
    capacity: Capacity,
    count: int,
    groups: list[list[tuple[ResourceClaim, Alternative]]],
    free: list[Device],
) -> WaitingRequests | None:
    """The waiting ``count``-device requests of a class (grouped by selectors and tolerations)
    against its free devices; None when no group's devices can be known."""
    requests = servable = unmatched = 0
    claims: set[tuple[str, str]] = set()
    pods: set[tuple[str, str]] = set()
    reachable: dict[int, Device] = {}  # free devices some of the requests can use
    for group in groups:
        usable = capacity.usable(group[0][1])
        if usable is None:
            continue  # a request selector does not compile
        requests += len(group)
        servable += min(usable.fit(count), len(group))
        if not usable.free:
            unmatched += len(group)  # their selectors (or taints) leave no free device
        for c, _ in group:
            if c.implicit and c.owner_pod is not None:
                pods.add((c.owner_pod.namespace, c.owner_pod.name))
            else:
                claims.add((c.namespace, c.name))
        for d in usable.devices:
            if capacity.free(d):
                reachable[id(d)] = d
    if not requests:
        return None
    per_node: dict[str, int] = defaultdict(int)
    for d in reachable.values():
        per_node[d.node_name] += 1
    servable = min(requests, servable, sum(n // count for n in per_node.values()))
    excluded = scattered = 0
    for d in free:
        if id(d) not in reachable:
            excluded += 1
        elif per_node[d.node_name] < count:
            scattered += 1
    unusable = excluded + scattered
    why = []
    if scattered:
        if max(per_node.values()) < count:
            why.append(f"no node has {count} free")
        else:
            why.append(f"{scattered} are on nodes with fewer than {count} free")
    if excluded:
        why.append(f"their selectors exclude {'them' if excluded == len(free) else excluded}")
    reason = " and ".join(why)
    noun = (
        f"the {requests} waiting {count}-device requests"
        if requests > 1
        else f"the waiting {count}-device request"
    )
    if len(free) == 1:
        lost = "the only free device is"
    else:
        lost = f"{unusable} of {len(free)} free devices {'is' if unusable == 1 else 'are'}"
    if servable == requests:
        summary = f"The free devices can serve {noun}" + (
            f"; {lost} unusable for them: {reason}." if unusable else "."
        )
    elif not free and not reachable:
        summary = f"No free device can serve {noun}."
    elif servable == 0 and free and unusable == len(free):
        summary = f"{lost[0].upper()}{lost[1:]} unusable for {noun}: {reason}."
    else:
        if servable:
            served = f"Only {servable} of {noun} can be served now"
        elif requests == 1:
            served = f"{noun[0].upper()}{noun[1:]} cannot be served now"
        else:
            served = f"None of {noun} can be served now"
        parts = []
        if unmatched:
            parts.append(
                f"{unmatched} of them {'matches' if unmatched == 1 else 'match'} no free device"
            )
        if unusable:
            parts.append(f"{lost} unusable for them: {reason}")
        if parts:
            summary = f"{served}; {'; '.join(parts)}."
        else:
            summary = f"{served} from the {len(free)} free devices." if free else f"{served}."
    return WaitingRequests(
        count, requests, servable, unusable, sorted(claims), summary, sorted(pods)
    )


def _class_summary(c: ClassCapacity) -> str:
    waiting = sum(w.requests for w in c.waiting.values())
    short = [w.summary for w in c.waiting.values() if w.servable < w.requests]
    if c.total == 0:
        sentences = [f"No device of the pools the allocator uses matches DeviceClass {c.name}."]
        if waiting:
            sentences.append(
                f"{plural(waiting, 'request')} {'waits' if waiting == 1 else 'wait'} for it."
            )
    else:
        held = f"{c.allocated} allocated" + (f", {c.tainted} tainted" if c.tainted else "")
        head = f"{c.free} of {c.total} devices are free ({held})"
        if short:
            sentences = short
        elif waiting:
            sentences = [f"{head}, enough for all {plural(waiting, 'waiting request')}."]
        else:
            sentences = [f"{head}; no request is waiting for them."]
    if c.unknown_requests:
        sentences.append(
            f"{plural(c.unknown_requests, 'waiting request')} with selectors that do not "
            "compile could not be counted (unknown)."
        )
    kinds = ((c.all_mode_requests, "All-mode"), (c.admin_access_requests, "admin-access"))
    uncounted = [plural(n, f"{kind} request") for n, kind in kinds if n]
    if uncounted:
        sentences.append(f"Not counted: {' and '.join(uncounted)}.")
    return " ".join(sentences)


# --- extended resources: what a Pod asking for a name could get on one node -------------------


@dataclass
class ExtendedCapacity:
    """One extended resource name a DeviceClass maps, as a Pod asking for it sees the cluster
    (see ``extended_capacity``). None: unknown, the snapshot cannot tell."""

    resource: str  # "example.com/gpu" or "deviceclass.resource.kubernetes.io/<class>"
    device_class: str  # the class serving it (the winner of an explicit name)
    explicit: bool  # the class's spec.extendedResourceName, not its implicit name
    known: bool  # False: a selector of the class does not compile (its devices are unknown)
    dra_nodes: int | None  # nodes that do not advertise it, where DRA serves it
    dra_free: int | None  # free devices of the class there (and those every node reaches)
    dra_largest: int | None  # the most of them on one node
    plugin_nodes: int | None  # nodes whose status.allocatable advertises it (a device plugin)
    plugin_free: int | None  # their allocatable minus what the Pods on them request, summed
    plugin_largest: int | None  # the most left on one of them
    largest: int | None  # the largest request one node can serve now
    largest_on: str  # where: a node's name, or "" for devices every node reaches
    pods_waiting: int | None  # Pods not on a node yet that ask for it
    pods_too_big: int | None  # of those, the ones asking for more than ``largest``
    summary: str  # one or two sentences a person reads


def extended_capacity(state: ClusterState) -> list[ExtendedCapacity]:
    """Per extended resource name the scheduler maps to a DeviceClass (``state.extended_mapping``:
    each explicit extendedResourceName's winner and every class's implicit name), explicit names
    first, then by name.

    filterExtendedResources decides per node: where the node's status.allocatable advertises
    the name (more than 0) a device plugin serves it, and NodeResourcesFit counts the requests of
    the Pods on the node (those not finished: the scheduler's cache drops them) against the
    allocatable; elsewhere the scheduler allocates devices of the class through DRA, counted as
    ``class_capacity`` counts the class's free devices (usable pools, not allocated, no
    NoSchedule/NoExecute taint: a claim the scheduler creates tolerates none), per node, those
    every node reaches as one more node of their own. Devices on a node the snapshot does not
    have serve nobody. Node taints, cordons, affinity and the Pod's other requests are not
    weighed.
    Without Nodes, which nodes advertise a name is unknown; without Pods, what device plugins
    have left is unknown.
    """
    return list(state.derived("capacity.extended", _extended_capacity))


def _extended_capacity(state: ClusterState) -> list[ExtendedCapacity]:
    if not state.extended_mapping:
        return []
    classes = {c.name: c for c in class_capacity(state)}
    nodes_known = not state.meta.unproven("Node")
    pods_known = not state.meta.unproven("Pod")
    allocatable = {
        n.name: extended_resources.allocatable_counts(n)
        for n in sorted(state.nodes.values(), key=lambda n: n.name)
    }
    requested: dict[str, dict[str, int]] = {}  # per node, what its Pods ask for
    for name, node in state.nodes.items():
        if any(v > 0 for v in allocatable[name].values()):
            used: dict[str, int] = defaultdict(int)
            for pod in node.pods:
                if not pod.finished:
                    for resource, n in extended_resources.pod_requests(pod).items():
                        used[resource] += n
            requested[name] = used
    waiting: dict[str, list[int]] = defaultdict(list)
    for pod in state.pods.values():
        if pod.extended is None or pod.node_name or pod.finished or pod.deleting:
            continue
        for resource, n in pod.extended.totals.items():
            if n:
                waiting[resource].append(n)
    order = sorted(
        state.extended_mapping.items(),
        key=lambda item: (item[0].startswith(extended_resources.CLASS_PREFIX), item[0]),
    )
    return [
        _one_name(
            resource,
            device_class.name,
            classes.get(device_class.name),
            allocatable,
            requested,
            waiting.get(resource, []),
            nodes_known=nodes_known,
            pods_known=pods_known,
        )
        for resource, device_class in order
    ]


def _one_name(
    resource: str,
    class_name: str,
    cc: ClassCapacity | None,
    allocatable: dict[str, dict[str, int]],
    requested: dict[str, dict[str, int]],
    waiting: list[int],
    *,
    nodes_known: bool,
    pods_known: bool,
) -> ExtendedCapacity:
    explicit = not resource.startswith(extended_resources.CLASS_PREFIX)
    known = cc is not None and cc.known
    plugin = {name: have[resource] for name, have in allocatable.items() if have.get(resource, 0)}
    candidates: list[tuple[int, str]] = []  # (how many one node can serve, where)
    # Device plugins: what the node advertises minus what its Pods request.
    plugin_left = {
        name: max(0, have - requested.get(name, {}).get(resource, 0))
        for name, have in plugin.items()
    }
    plugin_free = sum(plugin_left.values()) if pods_known else None
    plugin_largest = max(plugin_left.values(), default=0) if pods_known else None
    if pods_known:
        candidates += [(n, name) for name, n in plugin_left.items()]
    # DRA: the class's free devices on the other nodes, and those every node reaches.
    dra_names = [name for name in allocatable if name not in plugin]
    dra_free = dra_largest = None
    if known and cc is not None:
        if nodes_known:
            spread = {name: cc.free_by_node.get(name, 0) for name in dra_names}
            if dra_names:
                spread[""] = cc.free_by_node.get("", 0)
        else:  # which nodes advertise it is unknown: every device node may be DRA's
            spread = dict(cc.free_by_node)
        dra_free = sum(spread.values())
        dra_largest = max(spread.values(), default=0)
        candidates += [(n, name) for name, n in spread.items()]
    dra_nodes = len(dra_names) if nodes_known else None
    plugin_nodes = len(plugin) if nodes_known else None
    unknown_parts = []
    if not nodes_known:
        unknown_parts.append("the snapshot has no Nodes to tell where a device plugin serves it")
    if not known and (dra_names or not nodes_known):
        unknown_parts.append(
            f"a selector of DeviceClass {class_name} does not compile"
            if cc is not None
            else f"DeviceClass {class_name}'s devices are not known"
        )
    if plugin and not pods_known:
        unknown_parts.append("the snapshot has no Pods to tell what the device plugins have left")
    largest: int | None = None
    largest_on = ""
    if not unknown_parts:
        best = max(candidates, key=lambda c: (c[0], c[1] != ""), default=(0, ""))
        largest, largest_on = best
    too_big = None if largest is None else sum(1 for n in waiting if n > largest)
    out = ExtendedCapacity(
        resource=resource,
        device_class=class_name,
        explicit=explicit,
        known=known,
        dra_nodes=dra_nodes,
        dra_free=dra_free,
        dra_largest=dra_largest,
        plugin_nodes=plugin_nodes,
        plugin_free=plugin_free,
        plugin_largest=plugin_largest if plugin else (0 if nodes_known else None),
        largest=largest,
        largest_on=largest_on,
        pods_waiting=len(waiting) if pods_known else None,
        pods_too_big=too_big if pods_known else None,
        summary="",
    )
    out.summary = _extended_summary(out, plugin, unknown_parts)
    return out


def _extended_summary(e: ExtendedCapacity, plugin: dict[str, int], unknown: list[str]) -> str:
    sentences = []
    if e.largest is None:
        sentences.append(
            f"The largest request of {e.resource} one node can serve is unknown: "
            + "; ".join(unknown)
            + "."
        )
    elif e.largest == 0:
        sentences.append(f"No node can serve a request of {e.resource} now.")
    else:
        free = f"{e.largest} free {e.device_class} device{'' if e.largest == 1 else 's'}"
        if e.largest_on == "":
            where = f"{free} every node reaches, through DRA"
        elif e.largest_on in plugin:
            where = f"node {e.largest_on}, whose device plugin has {e.largest} left"
        else:
            where = f"node {e.largest_on}, {free} through DRA"
        sentences.append(f"A Pod can get up to {e.largest} {e.resource} on one node now ({where}).")
    parts = []
    if e.dra_nodes == 0:
        parts.append(
            "every node advertises it, so DRA serves it nowhere"
            if plugin
            else "the snapshot has no node for it"
        )
    elif e.dra_free is not None:
        on = f" on {plural(e.dra_nodes, 'node')}" if e.dra_nodes is not None else ""
        parts.append(
            f"DeviceClass {e.device_class} has {e.dra_free} free "
            f"{'device' if e.dra_free == 1 else 'devices'} where DRA serves it{on}"
        )
    if plugin:
        left = f", {e.plugin_free} left" if e.plugin_free is not None else ""
        parts.append(
            f"{plural(len(plugin), 'node')} {'advertises' if len(plugin) == 1 else 'advertise'} "
            f"it in status.allocatable (a device plugin serves it there{left})"
        )
    if parts:
        sentences.append(parts[0][0].upper() + "; ".join(parts)[1:] + ".")
    if e.pods_waiting:
        asks = "asks" if e.pods_waiting == 1 else "ask"
        wait = f"{plural(e.pods_waiting, 'Pod')} not on a node yet {asks} for it"
        if e.pods_too_big:
            asks = "asks" if e.pods_too_big == 1 else "ask"
            wait += f"; {e.pods_too_big} of them {asks} for more than any one node can serve"
        sentences.append(wait + ".")
    return " ".join(sentences)
