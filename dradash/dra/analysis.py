"""Everything dradash shows about one snapshot, computed once from its ClusterState.

``analyse(state)`` is the one owner of derived results: the diagnosis of every Pod and claim
(with the keys of the objects each one's page shows), the explanation of every unallocated
claim, findings, the checklist, capacity, the device inventory and pools, per-class pages and
the headline counts. The Django side stores the result when a snapshot is stored (the analyse
task) and pages and the API read it back; everything here is typed, and the ``*_dict`` helpers
give the JSON the API serves (DESIGN "REST API"), which is also what is stored.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from dradash.dra import (
    capacity,
    checklist,
    concerns,
    diagnosis,
    findings,
    gangs,
    health,
    inventory,
    matching,
)
from dradash.dra.allocator import STEPS, Explanation, RequestExplanation, SearchBudget
from dradash.dra.allocator.consumable import quantity_of
from dradash.dra.allocator.explain import ALLOCATED_TO, held_by, skipped_pool_text
from dradash.dra.chain import claim_chain_keys, pod_chain_keys
from dradash.dra.diagnosis import STAGE_TITLES, STAGES, Diagnosis, Evidence
from dradash.dra.fields import mapping, mappings, strings, text, timestamp
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import ObjectKey
from dradash.dra.objects import Device, Node, Pod, ResourceClaim
from dradash.dra.state import ClusterState
from dradash.dra.words import without_device

# How bad a verdict is, for lists sorted worst first and for alerts.
WAITING_REASONS = frozenset({"waiting", "binding-conditions-pending", "stale-extended-claim"})


SEVERITIES = ("ok", "warning", "error", "unknown")


def severity(d: Diagnosis) -> str:
    """ "ok" for a healthy object, "unknown" where the snapshot lacks the kinds that would say
    whether it is stuck at all (Diagnosis.unknown), "warning" while something is merely in
    progress, else "error"."""
    if d.stage == "healthy":
        return "ok"
    if d.unknown:
        return "unknown"
    return "warning" if d.reason in WAITING_REASONS else "error"


def stage_order(stage: str) -> int:
    """The stage's place in the troubleshooting order (0 = stuck earliest, worst first)."""
    return STAGES.index(stage) if stage in STAGES else len(STAGES)


# --- records: one per Pod, claim, device, pool ---------------------------------------------


@dataclass
class PodRecord:
    pod: Pod
    diagnosis: Diagnosis | None  # None for a Pod that does not use DRA
    chain: list[ObjectKey]  # what its page reads (dradash.dra.chain.pod_chain_keys)
    # Positions in Analysis.findings of the findings that concern it (dradash.dra.concerns)
    findings: list[int] = field(default_factory=list)

    @property
    def owner(self) -> str:
        """ "Job train" for the Pod's controller, or ""."""
        for ref in self.pod.owner_references:
            if ref.get("controller") is True:
                return f"{ref.get('kind') or ''} {ref.get('name') or ''}".strip()
        return ""

    @property
    def claim_names(self) -> list[str]:
        """Names of the claims its references resolve to (in its namespace): not the claim the
        scheduler keeps in memory for its extended resources, which has no name yet."""
        return list(
            dict.fromkeys(
                r.claim.name for r in self.pod.claim_refs if r.claim and not r.claim.implicit
            )
        )

    @property
    def group(self) -> str:
        """The PodGroup it is scheduled with (spec.schedulingGroup), or ""."""
        return self.pod.group_name

    @property
    def unresolved(self) -> int:
        """Claim references that do not resolve (the in-memory claim of a Pod not yet bound is
        what the scheduler works with, not a problem)."""
        return sum(1 for r in self.pod.claim_refs if r.status not in ("ok", "implicit"))

    @property
    def extended(self) -> dict[str, int]:
        """What its containers ask that a DeviceClass maps: {resource name: devices}."""
        resources = self.pod.extended
        if resources is None:
            return {}
        return {
            name: n
            for name, n in sorted(resources.totals.items())
            if n and name in resources.mapping
        }


@dataclass
class GroupRecord:
    """A PodGroup: its gang's state, and the API's JSON (podgroup_dict)."""

    gang: gangs.Gang
    data: dict[str, Any]
    chain: list[ObjectKey]  # the PodGroup and its Workload


@dataclass
class ClaimRecord:
    claim: ResourceClaim
    diagnosis: Diagnosis
    # What the allocator would do with it now; None for an allocated claim (its allocation).
    explanation: Explanation | None
    chain: list[ObjectKey]
    classes: list[str]
    drivers: list[str]
    nodes: list[str]
    findings: list[int] = field(default_factory=list)  # as PodRecord.findings

    @property
    def pods(self) -> list[str]:
        """Names of the Pods using it (in its namespace)."""
        return [p.name for p in self.claim.pods]


@dataclass
class DeviceRecord:
    """A device of the pools the allocator would use, as the inventory and its API show it."""

    device: Device
    status: str  # inventory status: allocated · unusable · tainted · free
    tainted: bool  # has a NoSchedule/NoExecute taint (allocated or not)
    classes: list[str]
    # The Pods its NoExecute (or effect None) taints evict, did or would (health.Eviction
    # as_dict at the capture time, with "marked_at": when the controller marked the Pod).
    evictions: list[dict[str, Any]] = field(default_factory=list)
    # The DeviceTaintRules tainting it, their status and evictions (health.device_rules).
    rules: list[dict[str, Any]] = field(default_factory=list)

    @property
    def holders(self) -> list[tuple[str, str]]:
        return [(a.claim.namespace, a.claim.name) for a in self.device.allocations]

    def as_dict(self) -> dict[str, Any]:
        """The API's row (DESIGN "REST API": GET snapshots/{id}/devices, plus fields since)."""
        d = self.device
        claims = [f"{namespace}/{name}" for namespace, name in self.holders]
        return {
            "driver": d.driver,
            "pool": d.pool_name,
            "device": d.name,
            "node": d.node_name or None,
            "allocated_to": claims[0] if claims else None,
            "taints": d.taints,
            # Each taint with "effect", "time_added" and where it comes from:
            # "source_kind" ResourceSlice | DeviceTaintRule and "source_name" (TaintSource).
            "taint_sources": [t.as_dict() for t in d.taint_sources],
            # The kubelet's reports of it in the Pods using it (HealthReport.as_dict: "health"
            # Healthy | Unhealthy | Unknown, "pod", "container", "claim", …).
            "health": [r.as_dict() for r in d.health],
            "evictions": self.evictions,
            # The DeviceTaintRules among them (health.device_rules): "name", "effect",
            # "taint", "selector", "conditions" (EvictionInProgress …) and "evictions", the
            # Pods it evicts, will evict, would evict (effect None) or did (Eviction.as_dict).
            "rules": self.rules,
            "status": self.status,
            "classes": self.classes,
            "claims": claims,
            "pods": [f"{namespace}/{name}" for namespace, name in inventory.device_pods(d)],
            "attributes": d.attributes,
            "capacity": d.capacity,
            "consumes_counters": d.consumes_counters,
            "consumed_capacity": inventory.consumed_capacity(d),
            # Its page's (the device page): where each taint comes from, binding, holders.
            "slice": d.slice.name,
            "node_access": d.slice.node_access,
            "binding_conditions": d.binding_conditions,
            "binding_failure_conditions": strings(d.raw.get("bindingFailureConditions")),
            "binds_to_node": d.raw.get("bindsToNode") is True,
            "allocations": [
                {
                    "claim": a.claim.ref,
                    "request": a.request,
                    "admin_access": a.admin_access,
                    "conditions": [
                        {k: text(c.get(k)) for k in CONDITION_FIELDS}
                        for c in mappings((a.device_status or {}).get("conditions"))
                    ],
                }
                for a in d.allocations
            ],
        }

    def tokens(self) -> list[str]:
        """What the class and attribute filters look for: ``class:NAME`` per class admitting
        the device, and per attribute ``"name"`` and ``"name"=value`` per value (JSON, so that
        strings, numbers and booleans stay apart and no value can forge a token). The name is
        bare for an attribute of the device's driver's domain (``productName`` means the
        driver's), qualified for another domain's (attribute_filter_tokens)."""
        out = [f"class:{name}" for name in self.classes]
        for name, value in sorted(mapping(self.device.raw.get("attributes")).items()):
            if not isinstance(value, dict):
                continue
            domain, _, ident = name.rpartition("/")
            key = _json(ident if not domain or domain == self.device.driver else name)
            out.append(key)
            out += [f"{key}={_json(v)}" for v in _attribute_values(value)]
        return out


@functools.lru_cache(maxsize=65536, typed=True)  # typed: True is not 1
def _json(value: str | int | bool) -> str:
    """``value`` as JSON text (names and values repeat over thousands of devices)."""
    return json.dumps(value, ensure_ascii=False)


CONDITION_FIELDS = ("type", "status", "reason", "message", "lastTransitionTime")
# The labels of a node its page shows: which node it is and where.
NODE_LABELS = (
    "kubernetes.io/hostname",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
)
NODE_EVENTS = 50  # the latest events of a node its page and API show


@dataclass
class NodeRecord:
    """A node: its page's and API's JSON (node_dict)."""

    name: str
    data: dict[str, Any]


def node_dict(
    state: ClusterState, node: Node, verdicts: dict[tuple[str, str], Diagnosis]
) -> dict[str, Any]:
    """The node API's JSON (DESIGN "Kubernetes 1.37 workloads"): the labels that say which node
    it is, its Ready condition and taints, the DRA drivers whose slices reach it (its own and
    shared ones), the DRA Pods on it with their verdicts, its latest events. Its devices are
    the device rows of the node (the devices API)."""
    ready = next((c for c in node.conditions if c.get("type") == "Ready"), None)
    drivers: dict[str, list[dict[str, Any]]] = {}
    for s in sorted(node.slices, key=lambda s: (s.driver, s.pool_name, s.name)):
        drivers.setdefault(s.driver, []).append(
            {
                "name": s.name,
                "pool": s.pool_name,
                "node_access": s.node_access,
                "generation": s.generation,
                # the devices that reach this node (all of a node-local slice's)
                "devices": sum(1 for d in s.devices if state.device_reaches(d, node)),
            }
        )
    pods = []
    for pod in sorted(node.pods, key=lambda p: (p.namespace, p.name)):
        if not pod.uses_dra:
            continue
        d = verdicts.get((pod.namespace, pod.name))
        pods.append(
            {
                "namespace": pod.namespace,
                "name": pod.name,
                "phase": pod.phase,
                "stage": d.stage if d else "",
                "reason": d.reason if d else "",
            }
        )
    return {
        "name": node.name,
        "labels": {k: node.labels[k] for k in NODE_LABELS if k in node.labels},
        "ready": {k: text(ready.get(k)) for k in CONDITION_FIELDS} if ready else None,
        "unschedulable": node.unschedulable,
        "taints": node.taints,
        "drivers": [
            {
                "driver": driver,
                "slices": slices,
                "local": any(s["node_access"] == "node" for s in slices),
                "devices": sum(s["devices"] for s in slices),
            }
            for driver, slices in drivers.items()
        ],
        "pods": pods,
        "pods_total": len(node.pods),
        "events": [
            {
                "type": e.type,
                "reason": e.reason,
                "message": e.message,
                "count": e.count,
                "last_seen": e.last_seen,
                "source": e.source,
            }
            for e in node.events[-NODE_EVENTS:][::-1]
        ],
    }


def node_rules(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The DeviceTaintRules tainting a node's devices, from their stored rows (DeviceRecord.as_dict
    "rules"), by name: the rule's "name", "effect", "conditions", the "devices" it taints there
    ({"driver", "pool", "device", "taint"}) and their "evictions"."""
    by_name: dict[str, dict[str, Any]] = {}
    for row in rows:
        for rule in row.get("rules") or []:
            entry = by_name.setdefault(
                rule["name"],
                {
                    "name": rule["name"],
                    "effect": rule["effect"],
                    "conditions": rule["conditions"],
                    "devices": [],
                    "evictions": [],
                },
            )
            entry["devices"].append(
                {
                    "driver": row["driver"],
                    "pool": row["pool"],
                    "device": row["device"],
                    "taint": rule["taint"],
                }
            )
            entry["evictions"] += rule["evictions"]
    return [by_name[name] for name in sorted(by_name)]


def device_display(row: dict[str, Any]) -> dict[str, Any]:
    """What the devices page shows of a stored device beyond its API row (DeviceRecord.as_dict),
    made from that row: a few key attributes, every attribute and capacity as text, the
    counters it consumes, the claims and Pods holding it as (namespace, name)."""
    consumed = row.get("consumed_capacity") or {}
    holders = [tuple(c.split("/", 1)) for c in row.get("claims") or []]
    device = SimpleNamespace(
        driver=row["driver"], attributes=row["attributes"], capacity=row["capacity"]
    )
    return {
        "key_attributes": matching.key_attributes(device, limit=3, capacity=True),  # type: ignore[arg-type]
        "attribute_list": [
            (name, inventory.attribute_text(value))
            for name, value in sorted(row["attributes"].items())
            if isinstance(value, dict)
        ],
        # every attribute with its type ("string", "int", "version", "bools", …)
        "attribute_rows": [
            (name, ", ".join(value) or "?", inventory.attribute_text(value))
            for name, value in sorted(row["attributes"].items())
            if isinstance(value, dict)
        ],
        "capacity_list": [
            (name, text(value.get("value")) or str(value.get("value", "")), consumed.get(name, ""))
            for name, value in sorted(row["capacity"].items())
            if isinstance(value, dict)
        ],
        "counter_list": [
            (text(use.get("counterSet")), counter, text(mapping(value).get("value")))
            for use in row.get("consumes_counters") or []
            if isinstance(use, dict)
            for counter, value in mapping(use.get("counters")).items()
        ],
        "holders": holders,
        "pod_refs": [tuple(p.split("/", 1)) for p in row.get("pods") or []] if holders else [],
    }


def device_counters(row: dict[str, Any], pool: dict[str, Any] | None) -> list[dict[str, Any]]:
    """What a stored device (DeviceRecord.as_dict) consumes of its pool's shared counters
    (pool_dict): per counter, its use, the set's total, what the pool's allocated devices
    consume in all and what is left (None where the pool does not declare the counter)."""
    declared = {
        (s["name"], c["name"]): c
        for s in (pool or {}).get("counter_sets") or []
        for c in s["counters"]
    }
    out = []
    for use in row.get("consumes_counters") or []:
        if not isinstance(use, dict):
            continue
        name = text(use.get("counterSet"))
        for counter, value in sorted(mapping(use.get("counters")).items()):
            total = declared.get((name, counter))
            left = None
            if total is not None:
                whole, used = quantity_of(total["total"]), quantity_of(total["consumed"])
                if whole is not None and used is not None:
                    left = str(whole.sub(used))
            out.append(
                {
                    "counter_set": name,
                    "counter": counter,
                    "consumes": text(mapping(value).get("value")) or None,
                    "total": total["total"] if total else None,
                    "consumed": total["consumed"] if total else None,
                    "left": left,
                }
            )
    return out


def _attribute_values(attribute: dict[str, Any]) -> list[Any]:
    """The values an attribute filter compares with: bools, ints, strings and versions as
    written, each element of a list."""
    values: list[Any] = []
    for kind, value in attribute.items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, int) or (
                isinstance(v, str) and kind.rstrip("s") in ("string", "version")
            ):
                values.append(v)  # bool is an int: kept as true/false
    return values


def attribute_filter_tokens(wanted: inventory.AttributeFilter) -> list[tuple[str, str]]:
    """(driver, token) pairs (DeviceRecord.tokens), one of which a device the filter matches
    has: the token on a device of that driver ("": of any driver). See
    inventory.AttributeFilter.matches: ``domain/name`` is the attribute of another domain, or
    the bare one of a device of that domain's driver."""
    names = [("", wanted.id)]
    if wanted.domain:
        names = [("", f"{wanted.domain}/{wanted.id}"), (wanted.domain, wanted.id)]
    values: list[Any] = []
    if wanted.value is not None:
        values.append(wanted.value)
        with contextlib.suppress(ValueError):
            values.append(int(wanted.value))
        if wanted.value.lower() in ("true", "false"):
            values.append(wanted.value.lower() == "true")
    out = []
    for driver, name in names:
        key = json.dumps(name, ensure_ascii=False)
        if not values:
            out.append((driver, key))
        out += [(driver, f"{key}={json.dumps(v, ensure_ascii=False)}") for v in values]
    return out


# --- the analysis --------------------------------------------------------------------------


@dataclass
class Analysis:
    pods: list[PodRecord]  # every Pod of the snapshot, DRA or not
    claims: list[ClaimRecord]
    findings: list[findings.Finding]
    checklist: list[checklist.CheckItem]
    devices: list[DeviceRecord]  # ordered driver → pool → node → name
    pools: list[dict[str, Any]]  # pool_dict of each, those that need attention first
    groups: list[GroupRecord]  # every PodGroup, by namespace and name
    capacity: dict[str, Any]  # capacity_dict
    inventory: dict[str, Any]  # inventory_dict
    classes: dict[str, dict[str, Any]]  # class_dict per DeviceClass
    summary: dict[str, Any]  # summary_dict
    options: dict[str, dict[str, list[str]]]  # filter choices of the pod, claim, device lists
    pool_slices: dict[tuple[str, str], list[ObjectKey]] = field(default_factory=dict)
    nodes: list[NodeRecord] = field(default_factory=list)  # every Node, by name
    device_index: matching.DeviceIndex | None = None  # what the playground evaluates over


def diagnose(
    state: ClusterState, cache: dict[Any, Explanation] | None = None
) -> diagnosis.SnapshotDiagnosis:
    """Every DRA Pod's and every claim's verdict, as the pages show them."""
    verdicts = diagnosis.diagnose_all(state, cache)
    for key, claim in state.claims.items():
        verdicts.claims[key] = claim_in_use(claim, verdicts.claims[key], verdicts.pods)
    return verdicts


def claim_in_use(
    claim: ResourceClaim, verdict: Diagnosis, pods: dict[tuple[str, str], Diagnosis]
) -> Diagnosis:
    """A claim's verdict is that of its most stuck Pod (diagnosis.diagnose_claim), except when
    the claim is allocated and Pods run with it: then the claim itself is healthy, in use, and
    the Pods that cannot join it are stuck on their own account (a shared claim whose devices
    sit on one node, and a Pod that cannot go there). Its summary names them."""
    if verdict.stage == "healthy" or not claim.allocated or claim.deleting:
        return verdict
    users = [(p, pods.get((p.namespace, p.name))) for p in claim.pods]
    running = [(p, d) for p, d in users if d is not None and d.reason == "running"]
    if not running:
        return verdict
    stuck = [(p, d) for p, d in users if d is not None and d.stuck]
    names = ", ".join(p.name for p, _ in running)
    summary = (
        f"ResourceClaim {claim.ref} is allocated and in use by "
        f"{'Pods' if len(running) > 1 else 'Pod'} {names}"
    )
    if stuck:
        summary += "; " + "; ".join(
            f"Pod {p.name} cannot use it yet: {d.stage} ({d.reason})" for p, d in stuck
        )
    evidence = [
        Evidence(
            "ResourceClaim",
            claim.namespace,
            claim.name,
            "status.reservedFor",
            ", ".join(c.name for c in claim.consumers) or "empty",
        ),
        *(Evidence("Pod", p.namespace, p.name, "status.phase", "Running") for p, _ in running),
        *(Evidence("Pod", p.namespace, p.name, "diagnosis", d.summary) for p, d in stuck),
    ]
    steps = [step for _, d in stuck for step in d.next_steps[:1]]
    return Diagnosis("healthy", "running", summary + ".", evidence, steps)


def analyse(state: ClusterState, budget: SearchBudget | None = None) -> Analysis:
    """Everything about the snapshot; ``budget`` bounds the allocator's searches (the default
    SearchBudget: kube-scheduler's filter timeout, and 16 searches that run out in all)."""
    if budget is not None:
        state.derived("search-budget", lambda _: budget)
    with gc_paused():  # hundreds of thousands of small results, nothing cyclic
        # The allocator's answer for each claim on every node first: the diagnoses of the
        # Pods that wait for those claims then read the same answers instead of searching again.
        cache: dict[Any, Explanation] = {}
        # (An allocated claim's answer is its allocation: pages make it from the claim.)
        explanations = {
            claim.key: explain(state, claim, cache)
            for claim in state.claims.values()
            if not claim.allocated
        }
        verdicts = diagnose(state, cache)
        pods = [
            PodRecord(
                pod,
                verdicts.pods.get((pod.namespace, pod.name)) if pod.uses_dra else None,
                pod_chain_keys(state, pod),
            )
            for pod in sorted(state.pods.values(), key=lambda p: (p.namespace, p.name))
        ]
        claims = [
            ClaimRecord(
                claim,
                verdict,
                explanations.get(claim.key),
                claim_chain_keys(state, claim),
                claim.class_names,
                state.claim_drivers(claim),
                state.claim_nodes(claim),
            )
            for claim in sorted(state.claims.values(), key=lambda c: (c.namespace, c.name))
            for verdict in [verdicts.claims[(claim.namespace, claim.name)]]
        ]
        groups = [
            GroupRecord(
                gang,
                podgroup_dict(state, gang, verdicts.pods, cache),
                [k for k in (gang.group.key, gang.group.workload and gang.group.workload.key) if k],
            )
            for gang in gangs.gangs(state)
        ]
        found = findings.find(state)
        attach_findings(state, found, pods, claims)
        items = checklist.evaluate(state, found)
        inv = inventory.inventory(state)
        devices = _devices(state, inv)
        return Analysis(
            pods=pods,
            claims=claims,
            findings=found,
            checklist=items,
            devices=devices,
            pools=[
                pool_dict(info)
                for info in sorted(inv.pools.values(), key=lambda p: (not p.attention, p.pool.key))
            ],
            groups=groups,
            capacity=capacity_dict(state, inv),
            inventory=inventory_dict(inv),
            classes={name: class_dict(state, cls) for name, cls in sorted(state.classes.items())},
            summary=summary_dict(state, verdicts, items, found),
            options=_options(state, verdicts),
            pool_slices={
                key: [s.key for s in (*pool.slices, *pool.stale_slices)]
                for key, pool in state.pools.items()
            },
            device_index=matching.DeviceIndex.of(state),
            nodes=[
                NodeRecord(name, node_dict(state, node, verdicts.pods))
                for name, node in sorted(state.nodes.items())
            ],
        )


def attach_findings(
    state: ClusterState,
    found: list[findings.Finding],
    pods: list[PodRecord],
    claims: list[ClaimRecord],
) -> None:
    """Each DRA Pod's and each claim's findings: those naming what it rests on
    (dradash.dra.concerns), looked up in an index of the findings by the objects they name."""
    if not found:
        return
    index = concerns.FindingIndex(state, found)
    # The pools an explanation's requests could use (as many as nodes, for a waiting claim)
    # are looked up once per explanation, not once per Pod or claim sharing it (issue 28).
    pools: dict[int, frozenset[concerns.ObjectKey]] = {}
    for p in pods:
        if p.diagnosis is not None:
            p.findings = index.about(
                concerns.pod_own_objects(p.pod),
                concerns.explained_pools(p.diagnosis.explanation, pools),
            )
    for c in claims:
        c.findings = index.about(  # (an allocated claim has no explanation: no pools)
            concerns.claim_own_objects(c.claim), concerns.explained_pools(c.explanation, pools)
        )


def explain(
    state: ClusterState, claim: ResourceClaim, cache: dict[Any, Explanation] | None = None
) -> Explanation:
    """What the allocator would do with this claim now, on every node its Pod may use (the
    explain API): with the Pod's other unallocated claims, as the scheduler allocates them. An
    allocated claim is not allocated again: its answer is the allocation it has."""
    if claim.allocated:
        nodes = state.claim_nodes(claim)
        return Explanation(
            allocatable=True,
            error=None,
            node=nodes[0] if nodes else None,
            requests=[],
            allocations=[claim.allocation] if claim.allocation else [],
            claims=[claim.ref],
        )
    return diagnosis.explain_claim(state, claim, cache)


def _devices(state: ClusterState, inv: inventory.Inventory) -> list[DeviceRecord]:
    now = timestamp(state.meta.captured_at)
    evicting: dict[int, list[dict[str, Any]]] = {}
    for e in health.evictions(state):
        condition = e.pod.condition("DisruptionTarget") if e.evicted else None
        marked = text(condition.get("lastTransitionTime")) if condition else ""
        evicting.setdefault(id(e.device), []).append({**e.as_dict(now), "marked_at": marked})
    rows = [
        DeviceRecord(
            d,
            inv.statuses[id(d)],
            id(d) in inv.tainted,
            inv.device_classes.get(id(d), []),
            evicting.get(id(d), []),
            health.device_rules(state, d) if d.taint_sources else [],
        )
        for d in state.devices.values()
    ]
    rows.sort(
        key=lambda r: (r.device.driver, r.device.pool_name, r.device.node_name, r.device.name)
    )
    return rows


def _options(state: ClusterState, verdicts: diagnosis.SnapshotDiagnosis) -> dict[str, Any]:
    pods = state.dra_pods
    classes = set(state.classes)
    drivers = {s.driver for s in state.slices.values() if s.driver}
    for claim in state.claims.values():
        classes.update(claim.class_names)
        drivers.update(r.driver for r in claim.results)
    return {
        "pods": {
            "namespaces": sorted({p.namespace for p in pods}),
            "phases": sorted({p.phase for p in pods}),
            "reasons": sorted({d.reason for d in verdicts.pods.values()}),
            "podgroups": sorted({p.group_name for p in pods if p.group_name}),
        },
        "claims": {
            "namespaces": sorted({ns for ns, _ in state.claims}),
            "classes": sorted(c for c in classes if c),
            "drivers": sorted(drivers),
            "reasons": sorted({d.reason for d in verdicts.claims.values()}),
        },
        "podgroups": {"namespaces": sorted({ns for ns, _ in state.podgroups})},
        "devices": {
            "drivers": sorted({d.driver for d in state.devices.values()}),
            "classes": sorted(state.classes),
            "attributes": inventory.attribute_names(state),
        },
    }


# --- JSON: what the API serves and the database keeps ---------------------------------------


def diagnosis_dict(d: Diagnosis) -> dict[str, Any]:
    out = {
        "stage": d.stage,
        "reason": d.reason,
        "severity": severity(d),
        # The kinds the snapshot lacks that would say whether it is stuck at all: not empty
        # exactly when severity is "unknown".
        "unknown": list(d.unknown),
        "summary": d.summary,
        "evidence": [e.as_dict() for e in d.evidence],
        "next_steps": list(d.next_steps),
    }
    if d.alone is not None:
        out["alone"] = alone_dict(d.alone)
    if d.devices:
        # A Pod's devices with taints or health reports (diagnosis.pod_devices): absent
        # when none has any.
        out["devices"] = d.devices
    return out


def alone_dict(d: Diagnosis) -> dict[str, str]:
    """A gang member's own verdict, where its gang's replaces it."""
    return {"stage": d.stage, "reason": d.reason, "summary": d.summary}


def podgroup_dict(
    state: ClusterState,
    gang: gangs.Gang,
    verdicts: dict[tuple[str, str], Diagnosis],
    cache: dict[Any, Explanation] | None = None,
) -> dict[str, Any]:
    """The PodGroup API's JSON (DESIGN "Kubernetes 1.37 workloads"): its members in the
    scheduler's order with their verdicts and places, how many fit, the member that breaks it."""
    group = gang.group
    placed = {id(p.pod): p for p in gang.placements}
    members = []
    for pod in gang.members:
        d = verdicts.get((pod.namespace, pod.name))
        p = placed.get(id(pod))
        members.append(
            {
                "pod": pod.name,
                "stage": d.stage if d else "",
                "reason": d.reason if d else "",
                "phase": pod.phase,
                "node": pod.node_name or None,
                "placement": _placement(p),
                # where the replay placed it, for one not on a node yet (dradash's choice: the
                # first node by name where its claims fit; the scheduler scores them)
                "would_go_to": p.node if p is not None and not p.bound else None,
            }
        )
    summary, steps, _ = diagnosis.gang_account(state, gang, cache)
    breaking = gang.breaking if gang.state in ("does-not-fit", "unknown") else None
    workload, template = group.template_ref
    return {
        "namespace": group.namespace,
        "name": group.name,
        "policy": group.policy or None,
        "min_count": group.min_count,
        "state": gang.state,
        "members": members,
        "fit": None if gang.unproven else gang.fit,
        "breaking_member": breaking.pod.name if breaking else None,
        "summary": summary,
        "next_steps": steps,
        "workload": {"name": workload, "template": template, "exists": group.workload is not None}
        if workload
        else None,
        "claims": [
            {
                "name": r.name,
                "source": r.source,
                "claim": r.claim_name or None,
                "template": r.template_name or None,
                "status": r.status,
                "allocated": r.claim.allocated if r.claim else None,
            }
            for r in group.claim_refs
        ],
        "conditions": [
            {
                k: text(c.get(k))
                for k in ("type", "status", "reason", "message", "lastTransitionTime")
            }
            for c in group.conditions
        ],
        "events": [
            {
                "type": e.type,
                "reason": e.reason,
                "message": e.message,
                "count": e.count,
                "last_seen": e.last_seen,
            }
            for e in group.events
        ],
    }


def _placement(p: gangs.Placement | None) -> str:
    """``running`` (on a node) · ``fits`` (would go to ``node`` in the replay) · ``does-not-fit``
    · ``not-tried`` (past the replay's limit) · ``waiting`` (the gang was not replayed)."""
    if p is None:
        return "waiting"
    if p.bound:
        return "running"
    if not p.tried:
        return "not-tried"
    return "fits" if p.node else "does-not-fit"


def explanation_dict(x: Explanation) -> dict[str, Any]:
    """The explain API's JSON (DESIGN "REST API")."""
    return x.as_dict()


FAILED_SHOWN = 50  # devices that dropped out, per request, on a page (the API has them all)
NOT_FIT_SHOWN = 20  # nodes a page names where the claims do not fit (the API has all)
GROUPS_SHOWN = 12  # groups of devices that dropped out, per request, on a page
HOLDERS_SHOWN = 10  # claims named per group of held devices (the others counted)

# Why a device dropped out where the allocator gives no detail (the check says it all).
_PLAIN_WHY = {
    "driver": "not a device of the class's driver",
    "class-selectors": "the class's selectors do not match it",
    "request-selectors": "the request's selectors do not match it",
}
_ON_NODE = re.compile(r"^on node (\S+), (.+)$")
# How far a node got, for the per-node table (furthest first) and its tally.
_WHY_ORDER = {step: i for i, step in enumerate(STEPS)}
NODE_WHY_LABELS = {
    "class-selectors": "no device of the class",
    "request-selectors": "no matching device",
    "pools": "pool skipped",
    "nodes": "devices out of reach",
    "free": "devices held by other claims",
    "taints": "taints not tolerated",
    "constraints": "constraints",
    "count": "not enough together",
}


def dropped_groups(request: RequestExplanation) -> list[dict[str, Any]]:
    """The devices that dropped out of a request's funnel, grouped by the check they fail and
    why, in funnel order, the largest group first within a check: ``{"step", "devices", "why",
    "nodes"?, "holders"?, "holders_total"?, "holders_more"?}``. Devices allocated to other
    claims are one group, with the claims holding them ("16 devices held by 10 claims: ns/a
    (2), …"); devices on nodes the Pod may not use one group per reason, with those nodes."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    holders: Counter[str] = Counter()
    # (step, detail, pool) → (why, node, holder): one device's group, worked out once per
    # distinct detail (tens of thousands of devices share a few)
    seen: dict[tuple[str, str, str], tuple[str, str, str]] = {}
    for d in request.devices:
        step = d.failed_step
        if step is None:
            continue
        key = (step, d.detail, d.pool if step == "pools" else "")
        where = seen.get(key)
        if where is None:
            where = seen[key] = _dropped_why(step, d.detail, d.pool)
        detail, node, holder = where
        if holder:
            holders[holder] += 1
            continue
        group = groups.get((step, detail))
        if group is None:
            group = groups[(step, detail)] = {"step": step, "devices": 0, "why": detail}
        group["devices"] += 1
        if node:
            nodes = group.setdefault("nodes", [])
            if node not in nodes:
                nodes.append(node)
    if holders:
        group = groups[("free", "")] = {"step": "free", "devices": sum(holders.values())}
        group["why"] = held_by(holders)
        ranked = sorted(holders.items(), key=lambda kv: (-kv[1], kv[0]))
        group["holders"] = [{"claim": c, "devices": n} for c, n in ranked[:HOLDERS_SHOWN]]
        group["holders_total"] = len(ranked)
        group["holders_more"] = max(len(ranked) - HOLDERS_SHOWN, 0)
    return sorted(groups.values(), key=lambda g: (_WHY_ORDER.get(g["step"], 99), -g["devices"]))


def _dropped_why(step: str, detail: str, pool: str) -> tuple[str, str, str]:
    """(why, the node it is about, the claim holding it) of a device that dropped out."""
    if step == "free" and detail.startswith(ALLOCATED_TO):
        return "", "", detail.removeprefix(ALLOCATED_TO) or "another claim"
    detail = without_device(detail) if detail else _PLAIN_WHY.get(step, "")
    if step == "nodes" and (m := _ON_NODE.match(detail)):
        return m.group(2), m.group(1), ""
    if step == "pools":
        return skipped_pool_text(pool, detail), "", ""
    return detail, "", ""


def _not_fit_order(n: Any) -> tuple[int, int, str]:
    """Errors first, then the nodes that got furthest, by name."""
    if n.outcome != "nofit":
        return (0, 0, n.node)
    return (1, -_WHY_ORDER.get(n.why_step, -1), n.node)


def explanation_head(x: Explanation) -> dict[str, Any]:
    """What a page shows of an explanation: per request its funnel, the step short of what it
    needs, the first FAILED_SHOWN devices that dropped out (``failed``, of ``failed_total``)
    and every one of them in groups by why (``dropped``: dropped_groups, the first
    GROUPS_SHOWN); the allocator's answer per node counted by outcome, the nofit nodes counted
    by what stops the claims there (``nofit_why``), and NOT_FIT_SHOWN nodes where it is not a
    fit, errors first, then the nodes that got furthest, each with its error or why."""
    outcomes = Counter(n.outcome for n in x.nodes)
    not_fit_nodes = sorted((n for n in x.nodes if n.outcome != "fit"), key=_not_fit_order)
    not_fit = [n.as_dict() for n in not_fit_nodes[:NOT_FIT_SHOWN]]
    why_counts = Counter(n.why_step for n in x.nodes if n.outcome == "nofit" and n.why_step)
    return {
        "allocatable": x.allocatable,
        "error": x.error,
        "node": x.node,
        "reason": x.reason,
        "claims": list(x.claims),
        "requests": [
            {
                "name": r.name,
                "claim": r.claim,
                "need": r.need,
                "funnel": [{"step": step, "remaining": n} for step, n in r.funnel],
                "short_step": r.short_step,
                "empty_step": r.empty_step,
                "error": r.error,
                "node": r.node,
                "failed": [
                    {
                        "driver": d.driver,
                        "pool": d.pool,
                        "device": d.device,
                        "failed_step": d.failed_step,
                        "detail": d.detail,
                    }
                    for d in failed[:FAILED_SHOWN]
                ],
                "failed_total": len(failed),
                "dropped": dropped[:GROUPS_SHOWN],
                "dropped_total": len(dropped),
            }
            for r in x.requests
            for failed in [[d for d in r.devices if d.failed_step]]
            for dropped in [dropped_groups(r)]
        ],
        "nodes": {
            "eligible": x.eligible_nodes,
            "complete": x.nodes_complete,
            "outcomes": dict(sorted(outcomes.items())),
            "not_fit": not_fit,
            "not_fit_total": len(not_fit_nodes),
            # nofit nodes by what stops the claims there, furthest first: [[label, nodes]]
            "nofit_why": [
                [NODE_WHY_LABELS.get(step, step), n]
                for step, n in sorted(
                    why_counts.items(), key=lambda kv: (-_WHY_ORDER.get(kv[0], -1), kv[0])
                )
            ],
        },
        "allocation": x.allocations,
    }


def pool_dict(info: inventory.PoolInfo) -> dict[str, Any]:
    """GET snapshots/{id}/pools (DESIGN "REST API", plus fields since)."""
    pool, tally = info.pool, info.tally
    return {
        "driver": pool.driver,
        "pool": pool.name,
        "generation": pool.generation,
        "slices": len(pool.slices),
        "resource_slice_count": pool.resource_slice_count,
        "complete": pool.complete,
        "devices": tally.total,
        "allocated": tally.allocated,
        "valid": pool.valid,
        "usable": info.usable,
        "problem": info.problem or None,
        "free": tally.free,
        "tainted": tally.tainted_any,
        "unusable": tally.unusable,
        "nodes": pool.node_names,
        "stale_slices": [
            {"name": name, "generation": generation, "devices": devices}
            for name, generation, devices in info.stale
        ],
        "duplicate_devices": info.duplicates,
        "counter_sets": [
            {
                "name": counter_set.name,
                "counters": [
                    {
                        "name": c.name,
                        "total": c.total,
                        "consumed": c.consumed,
                        "fraction": round(c.fraction, 4),
                    }
                    for c in counter_set.counters
                ],
            }
            for counter_set in info.counter_sets
        ],
        "attention": info.attention,
        "other_nodes": info.other_nodes,
    }


def tally_dict(t: inventory.Tally) -> dict[str, int]:
    return {
        "total": t.total,
        "allocated": t.allocated,
        "unusable": t.unusable,
        "tainted": t.tainted,
        "free": t.free,
        "tainted_any": t.tainted_any,
    }


NODES_SHOWN = 10  # the busiest and the most free nodes each; the node filter finds the others


def inventory_dict(inv: inventory.Inventory) -> dict[str, Any]:
    """The devices page's counts: in all, per class, per driver, and the nodes to chart (all of
    them when few, else the NODES_SHOWN busiest and the NODES_SHOWN with the most free)."""
    nodes = sorted((name, t) for name, t in inv.by_node.items() if name)
    chart: dict[str, Any] = {"nodes": len(nodes), "all": [], "busiest": [], "most_free": []}
    if len(nodes) <= 2 * NODES_SHOWN:
        chart["all"] = nodes
    else:
        chart["busiest"] = sorted(nodes, key=lambda nt: (-nt[1].used, -nt[1].allocated, nt[0]))[
            :NODES_SHOWN
        ]
        shown = {name for name, _ in chart["busiest"]}
        chart["most_free"] = [
            nt
            for nt in sorted(nodes, key=lambda nt: (-nt[1].free, nt[1].used, nt[0]))
            if nt[0] not in shown
        ][:NODES_SHOWN]
    for key in ("all", "busiest", "most_free"):
        chart[key] = [[name, tally_dict(t)] for name, t in chart[key]]
    chart["hidden"] = (
        len(nodes) - len(chart["all"]) - len(chart["busiest"]) - len(chart["most_free"])
    )
    shared = inv.by_node.get("")
    chart["shared"] = tally_dict(shared) if shared else None
    return {
        "total": tally_dict(inv.total),
        "minor": inv.minor,
        "classes": [
            {"name": c.name, "tally": tally_dict(c.tally), "error": c.error} for c in inv.classes
        ],
        "by_driver": [[driver, tally_dict(t)] for driver, t in inv.by_driver.items()],
        "node_chart": chart,
    }


def capacity_dict(state: ClusterState, inv: inventory.Inventory) -> dict[str, Any]:
    """GET snapshots/{id}/capacity: per class, per Job (those that do not fit first) and per
    extended resource name a class maps. Each class also has ``free_spread``: [free devices on
    a node, nodes with that many], most first."""
    skipped = {c.name: c.tally.unusable for c in inv.classes}
    jobs = sorted(capacity.job_capacity(state), key=lambda j: {False: 0, None: 1, True: 2}[j.fits])
    return {
        "classes": [
            _class_capacity(c, skipped.get(c.name, 0)) for c in capacity.class_capacity(state)
        ],
        "jobs": [_job_capacity(j) for j in jobs],
        "extended_resources": [_extended_capacity(e) for e in capacity.extended_capacity(state)],
    }


def _class_capacity(c: capacity.ClassCapacity, skipped: int) -> dict[str, Any]:
    spread = Counter(n for n in c.free_by_node.values() if n > 0)
    return {
        "device_class": c.name,
        "known": c.known,
        "devices": c.total,
        "in_skipped_pools": skipped,
        "allocated": c.allocated,
        "tainted": c.tainted,
        "free": c.free,
        "largest_free_set": c.largest_free_set,
        "waiting": [
            {
                "devices_per_request": w.count,
                "requests": w.requests,
                "servable": w.servable,
                "unusable_free_devices": w.unusable,
                "claims": [f"{namespace}/{name}" for namespace, name in w.claims],
                # Pods asking for them as extended resources: no claim exists before binding.
                "extended_resource_pods": [f"{namespace}/{name}" for namespace, name in w.pods],
                "summary": w.summary,
            }
            for _, w in sorted(c.waiting.items())
        ],
        "all_mode_requests": c.all_mode_requests,
        "admin_access_requests": c.admin_access_requests,
        "unknown_requests": c.unknown_requests,
        "summary": c.summary,
        "free_spread": [list(kv) for kv in sorted(spread.items(), reverse=True)],
    }


def _job_capacity(j: capacity.JobCapacity) -> dict[str, Any]:
    return {
        "job": f"{j.job.namespace}/{j.job.name}",
        "pods_wanted": j.pods_wanted,
        "devices_per_pod": j.per_pod,
        "demand": j.demand,
        "matching": j.matching,
        "available": j.available,
        "pods_fit": j.pods_fit,
        "fits": j.fits,
        "summary": j.summary,
    }


def _extended_capacity(e: capacity.ExtendedCapacity) -> dict[str, Any]:
    return {
        "resource": e.resource,
        "device_class": e.device_class,
        "explicit": e.explicit,
        "known": e.known,
        "dra_nodes": e.dra_nodes,
        "dra_free": e.dra_free,
        "dra_largest": e.dra_largest,
        "plugin_nodes": e.plugin_nodes,
        "plugin_free": e.plugin_free,
        "plugin_largest": e.plugin_largest,
        "largest_request": e.largest,
        "largest_on": e.largest_on,
        "pods_waiting": e.pods_waiting,
        "pods_too_big": e.pods_too_big,
        "summary": e.summary,
    }


def class_dict(state: ClusterState, device_class: Any) -> dict[str, Any]:
    """A DeviceClass's page: the devices its selectors admit, the claims and templates that ask
    for it (the claims themselves come from the claims list, filtered by class)."""
    claims = [c for c in state.claims.values() if device_class.name in c.class_names]
    evaluation = matching.evaluate(state, "true", device_class=device_class.name)
    admitted = evaluation.matching
    return {
        "name": device_class.name,
        "selectors": device_class.selectors,
        "extended_resource_name": device_class.extended_resource_name,
        "config": device_class.spec.get("config"),
        "drivers": state.class_drivers(device_class),
        "compile_error": evaluation.compile_error,
        "devices": len(admitted),
        "allocated": sum(1 for r in admitted if r.device.allocated),
        "errors": [[message, len(rows)] for message, rows in evaluation.error_groups],
        "claim_count": len(claims),
        "claim_states": dict(Counter(c.state for c in claims).most_common()),
        "templates": sorted(
            [t.namespace, t.name]
            for t in state.templates.values()
            if device_class.name in t.class_names
        ),
    }


def summary_dict(
    state: ClusterState,
    verdicts: diagnosis.SnapshotDiagnosis,
    items: list[checklist.CheckItem],
    found: list[findings.Finding],
) -> dict[str, Any]:
    """The overview's headline figures. ``unknown`` names, per figure, the kinds it rests on
    that the snapshot cannot prove absent (SnapshotMeta.unproven): such a figure is shown as
    unknown, never as the count of what the bundle happens to hold (DESIGN "Unknown is an
    answer")."""
    stage_counts = verdicts.stage_counts()
    devices = list(state.devices.values())
    pools = list(state.pools.values())
    unproven = state.meta.unproven
    unknown = {
        "dra_pods": unproven("Pod"),
        "claims": unproven("ResourceClaim"),
        "devices_allocated": unproven("ResourceClaim"),
        "devices": unproven("ResourceSlice"),
        "nodes": unproven("Node"),
        "classes": unproven("DeviceClass"),
    }
    return {
        "unknown": {figure: kinds for figure, kinds in unknown.items() if kinds},
        "dra_pods": len(verdicts.pods),
        "stages": [[stage, STAGE_TITLES[stage], n] for stage, n in stage_counts.items()],
        "stuck": sum(n for stage, n in stage_counts.items() if stage != "healthy"),
        "reasons": [[stage, reason, n] for (stage, reason), n in verdicts.reason_counts().items()],
        "claims": len(state.claims),
        "claim_states": dict(Counter(c.state for c in state.claims.values())),
        # Claims by stage, but for those whose verdict is unknown (the snapshot lacks the Pods
        # that would say whether they are stuck): those are counted apart.
        "claim_stages": dict(Counter(d.stage for d in verdicts.claims.values() if not d.unknown)),
        "claims_unknown": sum(1 for d in verdicts.claims.values() if d.unknown),
        "devices": len(devices),
        "devices_allocated": sum(1 for d in devices if d.allocated),
        "devices_tainted": sum(1 for d in devices if d.taints),
        "pools": len(pools),
        "pools_incomplete": sum(1 for p in pools if not p.complete),
        "pools_invalid": sum(1 for p in pools if not p.valid),
        "drivers": sorted({p.driver for p in pools}),
        "classes": sorted(state.classes),
        "nodes": len(state.nodes),
        "podgroups": len(state.podgroups),
        "podgroups_stuck": sum(1 for g in gangs.gangs(state) if g.stuck),
        "checklist": {s: sum(1 for i in items if i.status == s) for s in checklist.STATUSES},
        "findings": dict(Counter(f.severity for f in found)),
    }
