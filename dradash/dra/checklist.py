"""The production acceptance checklist of the DRA rollout guide, judged on one snapshot.

``evaluate(state, found)`` returns one ``CheckItem`` per checklist line, in the checklist's
order, each ``pass``, ``fail`` or ``unknown`` with a one-sentence summary, the objects at fault
and a next step. ``found`` is ``findings.find(state)``, passed in so callers reuse the cached
findings; several items are those findings seen as a checklist, the others are judged here from
the state's objects.

``unknown`` means the snapshot cannot tell: it lacks the served API versions, or a kind the item
rests on is unproven (``SnapshotMeta.unproven``: it could not be read, or an imported bundle has
none of it). ``state.meta.kinds`` is the per-kind capture status as stored with a snapshot
(``{"Job": {"status": "forbidden", …}}``, see dradash.dra.bundle.KIND_STATUSES); without it, only
what the objects themselves show counts (a Pod owned by a Job the snapshot lacks means Jobs were
not captured). A failure the snapshot does show is reported even when other kinds are missing.
Items made of findings rest on the kinds those findings rest on (``findings.NEEDS``).

Decisions:

* DeviceClasses cover a driver when one of their selectors says ``device.driver == "<driver>"``;
  a class with no such selector (none at all, or ``device.driver in [...]``) may select any
  driver's devices, so it counts as covering every driver.
* Slices and devices are those of current pool generations: the allocator ignores stale ones.
  A pool whose current generation publishes no device (finding pool-empty) fails the slices item.
* Claim references: a template-generated claim not created yet is still being made, and
  finished Pods lose their generated claims by design; neither counts as a mismatch.
* Leaked claims: the findings orphaned-claim, reserved-for-missing-pod, claim-stuck-deleting,
  allocated-unreserved and reserved-for-finished-pod.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dradash.dra.fields import dig, mapping, mappings, number, text
from dradash.dra.findings import NEEDS, Finding, ObjectRef, ref
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import KINDS
from dradash.dra.objects import TERMINAL_PHASES, Job, Pod, ResourceSlice
from dradash.dra.state import ClusterState
from dradash.dra.words import kinds_plural, listing, plural

STATUSES = ("pass", "fail", "unknown")
V1 = "resource.k8s.io/v1"
RESOURCE_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
EVIDENCE_SHOWN = 20  # objects listed per item; evidence_total counts them all
NAMED = 3  # names spelled out in a summary before "and N more"
# PodClaimRef statuses that mean the reference does not resolve (see objects.PodClaimRef).
BROKEN_REFS = {
    "claim-missing": "names a ResourceClaim ({claim}) that does not exist",
    "template-missing": "names a ResourceClaimTemplate ({template}) that does not exist",
    "not-owned": "resolves to a generated claim that belongs to another Pod",
    "invalid": "names neither a claim nor a template",
}
LEAK_FINDINGS = (
    "orphaned-claim",
    "reserved-for-missing-pod",
    "claim-stuck-deleting",
    "allocated-unreserved",
    "reserved-for-finished-pod",
)


@dataclass
class CheckItem:
    code: str  # stable slug
    title: str  # the checklist line
    status: str  # "pass" | "fail" | "unknown"
    summary: str  # one sentence saying what was found, with counts
    evidence: list[ObjectRef] = field(default_factory=list)  # at most EVIDENCE_SHOWN
    evidence_total: int = 0  # how many objects are at fault in all
    next_step: str = ""  # a concrete command or action

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "title": self.title,
            "status": self.status,
            "summary": self.summary,
            "evidence": [dict(o) for o in self.evidence],
            "evidence_total": self.evidence_total,
            "next_step": self.next_step,
        }


@dataclass
class _Snapshot:
    """What every rule reads: the state, its findings by code, and how each kind was read."""

    state: ClusterState
    found: dict[str, list[Finding]]
    kind_status: dict[str, str]  # {"Job": "forbidden", …}; empty when the snapshot does not say

    def missing(self, *kinds: str) -> list[str]:
        """Those of ``kinds`` whose absence proves nothing: not read, or not in the bundle."""
        return self.state.meta.unproven(*kinds)

    def unknown(self, code: str, title: str, what: str, missing: list[str]) -> CheckItem:
        """The item when ``missing`` (unproven kinds) keep the snapshot from telling ``what``."""
        absent = [k for k in missing if self.kind_status.get(k) == "absent"]
        unread = [k for k in missing if k not in absent]
        reasons, steps = [], []
        if absent:
            reasons.append(f"{kinds_plural(absent)} are not in the imported bundle")
            steps.append(
                f"export them too (kubectl get {','.join(KINDS[k].plural for k in absent)} -A "
                "-o yaml) and import that file together with the others, or capture the cluster "
                "with dradash"
            )
        if unread:
            reasons.append(f"{kinds_plural(unread)} could not be read when it was taken")
            steps.append(
                "make sure dradash can list them (kubectl auth can-i list "
                f"{','.join(KINDS[k].plural for k in unread)} --as=<dradash's service account>), "
                "then capture again"
            )
        return _item(
            code,
            title,
            "unknown",
            f"The snapshot cannot tell {what}: {' and '.join(reasons)}.",
            next_step=_sentence("; or ".join(steps)),
        )


def evaluate(state: ClusterState, found: list[Finding]) -> list[CheckItem]:
    """The checklist, in its order. ``found`` is ``findings.find(state)``."""
    by_code: dict[str, list[Finding]] = {}
    for finding in found:
        by_code.setdefault(finding.code, []).append(finding)
    kind_status = {
        name: text(status.get("status"))
        for name, status in state.meta.kinds.items()
        if isinstance(status, Mapping)
    }
    snap = _Snapshot(state, by_code, kind_status)
    with gc_paused():
        return [rule(snap) for rule in RULES]


# --- helpers ---------------------------------------------------------------------------------


def _item(
    code: str,
    title: str,
    status: str,
    summary: str,
    objects: Iterable[ObjectRef] = (),
    next_step: str = "",
) -> CheckItem:
    unique = list({(o["kind"], o["namespace"], o["name"]): o for o in objects}.values())
    return CheckItem(code, title, status, summary, unique[:EVIDENCE_SHOWN], len(unique), next_step)


def _unknown(
    code: str, title: str, what: str, missing: list[str], why: str = "could not be read"
) -> CheckItem:
    kinds = listing(missing, len(missing))
    return _item(
        code,
        title,
        "unknown",
        f"The snapshot cannot tell {what}: {kinds} {why} when it was taken.",
        next_step=f"Make sure dradash can list {kinds} (kubectl auth can-i list <resource> "
        "--as=<dradash's service account>; a bundle made with kubectl get must include them), "
        "then capture or import again.",
    )


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def _from_findings(snap: _Snapshot, codes: Iterable[str]) -> list[Finding]:
    found = [f for code in codes for f in snap.found.get(code, [])]
    return sorted(found, key=lambda f: f.sort_key)


def _live(pod: Pod) -> bool:
    return pod.phase not in TERMINAL_PHASES and not pod.deleting


# --- 1. DRA v1 API served --------------------------------------------------------------------


def _dra_v1_served(snap: _Snapshot) -> CheckItem:
    code, title = "dra-v1-served", "DRA v1 API served"
    state = snap.state
    versions = [v for v in state.meta.api_versions if v.startswith("resource.k8s.io/")]
    listed = listing([v.partition("/")[2] for v in versions], len(versions))
    check = "kubectl api-versions | grep resource.k8s.io"
    if V1 in versions:
        return _item(
            code, title, "pass", f"The API server serves resource.k8s.io {listed}.", (), check
        )
    if versions:
        return _item(
            code,
            title,
            "fail",
            f"The API server serves resource.k8s.io only as {listed}, not v1: it runs a "
            "Kubernetes release before 1.34, where DRA is not GA.",
            (),
            f"{check}; upgrade the cluster to Kubernetes 1.34 or later.",
        )
    if any(snap.kind_status.get(k) == "not-found" for k in RESOURCE_KINDS):
        return _item(
            code,
            title,
            "fail",
            "The API server serves no resource.k8s.io version (the capture found no "
            "DeviceClass, ResourceSlice or ResourceClaim API): DRA is not available.",
            (),
            f"{check}; on Kubernetes before 1.34 enable the DynamicResourceAllocation feature "
            "gate and the resource.k8s.io API with --runtime-config, or upgrade.",
        )
    v1_objects = [
        o
        for group in (state.classes, state.slices, state.claims, state.templates)
        for o in group.values()
        if o.api_version == V1
    ]
    if v1_objects:
        return _item(
            code,
            title,
            "pass",
            f"The snapshot lists no served API versions, but {plural(len(v1_objects), 'object')} "
            "in it came as resource.k8s.io/v1, which only a server serving v1 returns.",
            (),
            check,
        )
    return _item(
        code,
        title,
        "unknown",
        "The snapshot does not say which resource.k8s.io versions the API server serves "
        "(it was imported without a SnapshotInfo listing apiVersions).",
        (),
        f"Run `{check}` against the cluster, or capture it with dradash, which records them.",
    )


# --- 2. DeviceClasses exist for the drivers that publish slices ------------------------------


def _classes_cover_drivers(snap: _Snapshot) -> CheckItem:
    code, title = (
        "device-classes-cover-drivers",
        "DeviceClasses exist for the drivers that publish slices",
    )
    state = snap.state
    slices: dict[str, list[ResourceSlice]] = {}
    for s in sorted(state.slices.values(), key=lambda s: s.name):
        if s.current and s.driver:
            slices.setdefault(s.driver, []).append(s)
    if missing := snap.missing("DeviceClass", "ResourceSlice"):
        return snap.unknown(code, title, "which drivers lack a DeviceClass", missing)
    named: set[str] = set()
    for device_class in state.classes.values():
        drivers = state.class_drivers(device_class)
        if not drivers:  # no driver selector: it may select every driver's devices
            named.update(slices)
        named.update(drivers)
    uncovered = sorted(d for d in slices if d not in named)
    if not uncovered:
        drivers_listed = listing(sorted(slices), NAMED)
        return _item(
            code,
            title,
            "pass",
            f"Every driver that publishes ResourceSlices ({drivers_listed}) has a DeviceClass "
            f"that selects it ({plural(len(state.classes), 'DeviceClass', 'DeviceClasses')} "
            "in all)."
            if slices
            else "No driver publishes ResourceSlices, so no DeviceClass is needed yet.",
            (),
            "kubectl get deviceclasses -o yaml",
        )
    objects = [ref(s) for d in uncovered for s in slices[d]]
    devices = sum(len(s.devices) for d in uncovered for s in slices[d])
    return _item(
        code,
        title,
        "fail",
        f"{plural(len(uncovered), 'driver')} ({listing(uncovered, NAMED)}) "
        f"{'publishes' if len(uncovered) == 1 else 'publish'} "
        f"{plural(len(objects), 'ResourceSlice')} with {plural(devices, 'device')}, but no "
        "DeviceClass selects "
        f"{'its' if len(uncovered) == 1 else 'their'} devices, so no claim can ask for them.",
        objects,
        f"Install the DeviceClass the {uncovered[0]} driver ships (its Helm chart or manifests), "
        f'or create one with the selector device.driver == "{uncovered[0]}"; '
        "check with kubectl get deviceclasses -o yaml.",
    )


# --- 3. Slices report nodes and attributes ---------------------------------------------------


def _device_reaches_nodes(raw: dict[str, Any]) -> bool:
    """With perDeviceNodeSelection, whether the device says which nodes reach it."""
    return bool(
        text(raw.get("nodeName"))
        or raw.get("allNodes") is True
        or type(raw.get("nodeSelector")) is dict
    )


def _slice_problems(s: ResourceSlice) -> tuple[bool, int]:
    """(no node access at all, devices without attributes or, per device, without nodes)."""
    per_device = s.node_access == "per-device"
    bare = 0
    for d in s.devices:
        raw = d.raw
        attributes = any(type(v) is dict for v in mapping(raw.get("attributes")).values())
        if not attributes or per_device and not _device_reaches_nodes(raw):
            bare += 1
    return s.node_access == "none", bare


def _pool_label(state: ClusterState, finding: Finding) -> str:
    """``driver/pool`` of a pool finding (its objects are the pool's slices)."""
    pool = state.slices[finding.objects[0]["name"]].pool
    return f"{pool.driver}/{pool.name}" if pool is not None else finding.objects[0]["name"]


def _slices_report(snap: _Snapshot) -> CheckItem:
    code, title = "slices-report-nodes-and-attributes", "Slices report nodes and attributes"
    if missing := snap.missing("ResourceSlice"):
        return snap.unknown(code, title, "what the ResourceSlices report", missing)
    current = sorted((s for s in snap.state.slices.values() if s.current), key=lambda s: s.name)
    no_nodes: list[ResourceSlice] = []
    bare: list[tuple[ResourceSlice, int]] = []
    for s in current:
        nodeless, count = _slice_problems(s)
        if nodeless:
            no_nodes.append(s)
        if count:
            bare.append((s, count))
    empty = _from_findings(snap, ["pool-empty"])
    if not no_nodes and not bare and not empty:
        devices = sum(len(s.devices) for s in current)
        return _item(
            code,
            title,
            "pass",
            f"All {plural(len(current), 'current ResourceSlice')} say which nodes reach them, "
            f"and all {plural(devices, 'device')} publish attributes."
            if current
            else "The snapshot has no ResourceSlices to check.",
            (),
            "kubectl get resourceslices -o wide",
        )
    parts = []
    if no_nodes:
        parts.append(
            f"{plural(len(no_nodes), 'ResourceSlice')} "
            f"({listing([s.name for s in no_nodes], NAMED)}) "
            "set none of nodeName, nodeSelector, allNodes or perDeviceNodeSelection"
        )
    if bare:
        devices = sum(n for _, n in bare)
        parts.append(
            f"{plural(devices, 'device')} in {plural(len(bare), 'ResourceSlice')} "
            f"({listing([s.name for s, _ in bare], NAMED)}) publish no attributes (or, with "
            "perDeviceNodeSelection, no nodes)"
        )
    if empty:
        pools = [_pool_label(snap.state, f) for f in empty]
        parts.append(
            f"{plural(len(empty), 'pool')} ({listing(pools, NAMED)}) "
            f"{'publishes' if len(empty) == 1 else 'publish'} no devices at all"
        )
    if not no_nodes and not bare:
        return _item(
            code,
            title,
            "fail",
            f"Of {plural(len(current), 'current ResourceSlice')}, {' and '.join(parts)}: "
            "the driver found nothing to offer there.",
            [o for f in empty for o in f.objects],
            empty[0].next_step,
        )
    offending = sorted(
        {s.name: s for s in no_nodes + [s for s, _ in bare]}.values(), key=lambda s: s.name
    )
    first = offending[0]
    return _item(
        code,
        title,
        "fail",
        f"Of {plural(len(current), 'current ResourceSlice')}, {' and '.join(parts)}: the "
        "allocator cannot place such devices on a node or select them by attribute.",
        [ref(s) for s in offending] + [o for f in empty for o in f.objects],
        f"kubectl get resourceslice {first.name} -o yaml — the {first.driver} driver must "
        "publish node access and device attributes; check its version and logs.",
    )


# --- 4. Claims and templates name existing classes -------------------------------------------


def _claims_name_classes(snap: _Snapshot) -> CheckItem:
    code, title = "claims-name-existing-classes", "Claims and templates name existing classes"
    if missing := snap.missing("DeviceClass"):
        return snap.unknown(code, title, "which DeviceClasses exist", missing)
    found = _from_findings(snap, ["class-missing"])
    if not found:
        if missing := snap.missing("ResourceClaim", "ResourceClaimTemplate"):
            return snap.unknown(code, title, "which classes the claims ask for", missing)
        state = snap.state
        pending = sum(1 for c in state.claims.values() if not c.allocated and not c.deleting)
        asking = len(state.templates) + pending
        summary = (
            f"Every DeviceClass asked for by the {plural(len(state.templates), 'template')} and "
            f"{plural(pending, 'unallocated claim')} exists (allocated claims no longer need "
            "theirs)."
            if asking
            else "No template or unallocated claim asks for a DeviceClass."
        )
        return _item(
            code,
            title,
            "pass",
            summary,
            (),
            "kubectl get deviceclasses",
        )
    classes = [o["name"] for f in found for o in f.objects if o["kind"] == "DeviceClass"]
    objects = [o for f in found for o in f.objects if o["kind"] != "DeviceClass"]
    users = listing([f"{o['kind']} {o['namespace']}/{o['name']}" for o in objects], NAMED)
    one = len(classes) == 1
    return _item(
        code,
        title,
        "fail",
        f"{plural(len(classes), 'DeviceClass', 'DeviceClasses')} ({listing(classes, NAMED)}) "
        f"{'does' if one else 'do'} not exist, but {users} "
        f"{'asks' if len(objects) == 1 else 'ask'} for {'it' if one else 'them'}: the "
        "scheduler cannot allocate such claims.",
        objects,
        found[0].next_step,
    )


# --- 5. Pod and container claim references match --------------------------------------------


# The kind whose absence from the snapshot makes a broken reference of this status unprovable.
BROKEN_REF_KINDS = {
    "claim-missing": "ResourceClaim",
    "template-missing": "ResourceClaimTemplate",
    "not-owned": "ResourceClaim",
}


def _reference_problems(pod: Pod, unsure: set[str], snap: _Snapshot) -> list[str]:
    """What does not match in the Pod's spec.resourceClaims and its containers' claims.

    References that would be broken but point into an unproven kind go in ``unsure`` instead.
    """
    problems = []
    entries = {r.name: r for r in pod.claim_refs if r.source != "extended-resource"}
    for r in entries.values():
        if r.status in BROKEN_REFS:
            kind = BROKEN_REF_KINDS.get(r.status)
            if kind and snap.missing(kind):
                unsure.add(kind)
                continue
            broken = BROKEN_REFS[r.status].format(claim=r.claim_name, template=r.template_name)
            problems.append(f"spec.resourceClaims entry {r.name!r} {broken}")
    for c in pod.containers:
        for claim_name, request in c.claims:
            entry = entries.get(claim_name)
            if entry is None:
                problems.append(
                    f"container {c.name} uses claim {claim_name!r}, which spec.resourceClaims "
                    "does not list"
                )
                continue
            source = entry.claim or entry.template
            if not request or source is None:
                continue
            names = {r.name for r in source.requests} | {
                alt for r in source.requests for alt, _ in r.alternatives
            }
            if request not in names:
                problems.append(
                    f"container {c.name} uses request {request!r} of claim {claim_name!r}, "
                    f"which {source.kind} {source.name} does not have"
                )
    return problems


def _container_claims(pod: Pod) -> bool:
    return any(c.claims for c in pod.containers)


def _claim_references(snap: _Snapshot) -> CheckItem:
    code, title = "claim-references-match", "Pod and container claim references match"
    if missing := snap.missing("Pod"):
        return snap.unknown(code, title, "how Pods reference their claims", missing)
    unsure: set[str] = set()
    state = snap.state
    pods = [p for p in state.pods.values() if _live(p) and (p.uses_dra or _container_claims(p))]
    problems = {p.key: _reference_problems(p, unsure, snap) for p in pods}
    unreadable = sorted(unsure, key=list(KINDS).index)
    for finding in snap.found.get("claim-not-used-by-container", []):
        pod_ref = finding.objects[0]
        key = (pod_ref["kind"], pod_ref["namespace"], pod_ref["name"])
        if key in problems:
            problems[key].append("lists claims in spec.resourceClaims that no container uses")
    bad = sorted((p for p in pods if problems[p.key]), key=lambda p: p.key)
    if not bad:
        if unreadable:
            return snap.unknown(code, title, "whether the Pods' claims exist", unreadable)
        return _item(
            code,
            title,
            "pass",
            f"All claim references of the {plural(len(pods), 'Pod')} using DRA resolve, and "
            "every container uses claims its Pod lists.",
            (),
            "kubectl get pods -A -o wide",
        )
    total = sum(len(problems[p.key]) for p in bad)
    first = bad[0]
    return _item(
        code,
        title,
        "fail",
        f"{plural(len(bad), 'Pod')} ({listing([p.ref for p in bad], NAMED)}) "
        f"{'has' if len(bad) == 1 else 'have'} {plural(total, 'claim reference')} that "
        f"{'does' if total == 1 else 'do'} not match, e.g. {first.ref}: "
        f"{problems[first.key][0]}.",
        [ref(p) for p in bad],
        f"kubectl describe pod -n {first.namespace} {first.name} — create the missing "
        "ResourceClaim or ResourceClaimTemplate, or fix spec.resourceClaims and the "
        "containers' resources.claims (the Pod must be recreated to change them).",
    )


# --- 6. No Pod bypasses the scheduler with nodeName ------------------------------------------


def _no_nodename_bypass(snap: _Snapshot) -> CheckItem:
    code, title = "no-nodename-bypass", "No Pod bypasses the scheduler with nodeName"
    found = _from_findings(snap, ["nodename-bypass"])
    if not found:
        if missing := snap.missing("Pod", "ResourceClaim"):
            return snap.unknown(code, title, "whether Pods bypassed the scheduler", missing)
        bound = [p for p in snap.state.pods.values() if p.uses_dra and _live(p) and p.node_name]
        return _item(
            code,
            title,
            "pass",
            f"All {plural(len(bound), 'Pod')} using DRA that are bound to a node went through "
            "the scheduler.",
            (),
            "kubectl get pods -A -o wide",
        )
    pods = [f"{o['namespace']}/{o['name']}" for f in found for o in f.objects if o["kind"] == "Pod"]
    one = len(pods) == 1
    return _item(
        code,
        title,
        "fail",
        f"{plural(len(pods), 'Pod')} using DRA ({listing(pods, NAMED)}) "
        f"{'was' if one else 'were'} bound to a node through spec.nodeName, bypassing the "
        f"scheduler, which is what allocates and reserves {'its' if one else 'their'} claims.",
        [o for f in found for o in f.objects],
        found[0].next_step,
    )


# --- 7. No leaked or orphaned claims ---------------------------------------------------------


LEAK_LABELS = {
    "orphaned-claim": "orphaned by their Pod",
    "reserved-for-missing-pod": "reserved for Pods that are gone",
    "claim-stuck-deleting": "stuck in deletion",
    "allocated-unreserved": "allocated but reserved by nobody",
    "reserved-for-finished-pod": "still reserved only for finished Pods",
}


def _no_leaked_claims(snap: _Snapshot) -> CheckItem:
    code, title = "no-leaked-claims", "No leaked or orphaned claims"
    state = snap.state
    found = _from_findings(snap, LEAK_FINDINGS)
    if not found:
        needs = {k for leak in LEAK_FINDINGS for k in NEEDS[leak]}
        if missing := snap.missing(*sorted(needs, key=list(KINDS).index)):
            return snap.unknown(code, title, "whether claims were left behind", missing)
        return _item(
            code,
            title,
            "pass",
            f"None of the {plural(len(state.claims), 'ResourceClaim')} is orphaned, stuck in "
            "deletion, or held for Pods that are gone or finished."
            if state.claims
            else "There are no ResourceClaims to leak.",
            (),
            "kubectl get resourceclaims -A",
        )
    parts = []
    for finding_code, label in LEAK_LABELS.items():
        if n := sum(1 for f in found if f.code == finding_code):
            parts.append(f"{n} {label}")
    objects = [o for f in found for o in f.objects]
    claims = list(
        dict.fromkeys(
            f"{o['namespace']}/{o['name']}" for o in objects if o["kind"] == "ResourceClaim"
        )
    )
    return _item(
        code,
        title,
        "fail",
        f"{plural(len(claims), 'ResourceClaim')} ({listing(claims, NAMED)}) "
        f"{'is' if len(claims) == 1 else 'are'} left behind: {', '.join(parts)}.",
        objects,
        found[0].next_step,
    )


# --- 8. Capacity covers the Job parallelism in flight ----------------------------------------


def _in_flight(job: Job) -> bool:
    """An active Job that wants more than one Pod running at once."""
    if job.spec.get("suspend") is True:
        return False
    for c in mappings(job.status.get("conditions")):
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return False
    wanted = job.parallelism
    if job.completions is not None:
        wanted = min(wanted, job.completions - number(job.status.get("succeeded")))
    return wanted > 1


def _capacity_covers_jobs(snap: _Snapshot) -> CheckItem:
    code, title = "capacity-covers-job-parallelism", "Capacity covers the Job parallelism in flight"
    state = snap.state
    found = _from_findings(snap, ["parallelism-exceeds-capacity"])
    if found:
        jobs = [
            f"{o['namespace']}/{o['name']}" for f in found for o in f.objects if o["kind"] == "Job"
        ]
        summary = (
            found[0].message
            if len(found) == 1
            else f"{plural(len(jobs), 'Job')} ({listing(jobs, NAMED)}) want more Pods running at "
            "once than the matching devices can serve: the others stay Pending until devices free "
            "up."
        )
        return _item(
            code,
            title,
            "fail",
            summary,
            [o for f in found for o in f.objects],
            found[0].next_step,
        )
    if missing := snap.missing("Job"):
        return snap.unknown(code, title, "which Jobs are running", missing)
    orphans = sorted(
        {
            f"{p.namespace}/{text(owner.get('name'))}"
            for p in state.pods.values()
            if _live(p) and p.job is None and (owner := p.controller_owner("Job")) is not None
        }
    )
    if orphans:
        return _unknown(
            code,
            title,
            f"how many Pods Jobs want at once (Pods of {plural(len(orphans), 'Job')} "
            f"{listing(orphans, NAMED)} are in it, their Jobs are not)",
            ["Jobs"],
            "were not captured",
        )
    wide = [j for j in state.jobs.values() if _in_flight(j)]
    needs = list(NEEDS["parallelism-exceeds-capacity"])
    if any(
        name and (j.namespace, name) not in state.templates
        for j in wide
        for entry in mappings(dig(j.spec, "template", "spec", "resourceClaims"))
        if (name := text(entry.get("resourceClaimTemplateName")))
    ):
        needs.append("ResourceClaimTemplate")  # a Job's Pods get claims from one it lacks
    if missing := snap.missing(*needs):
        return snap.unknown(code, title, "how many devices the Jobs can get", missing)
    return _item(
        code,
        title,
        "pass",
        f"The matching devices cover all {plural(len(wide), 'active Job')} that run several "
        "Pods at once."
        if wide
        else "No active Job wants more than one Pod at once.",
        (),
        "kubectl get jobs -A",
    )


RULES: list[Callable[[_Snapshot], CheckItem]] = [
    _dra_v1_served,
    _classes_cover_drivers,
    _slices_report,
    _claims_name_classes,
    _claim_references,
    _no_nodename_bypass,
    _no_leaked_claims,
    _capacity_covers_jobs,
]
