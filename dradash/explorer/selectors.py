"""Lists of claims, Pods and devices over one snapshot's ClusterState, filtered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dradash.dra import diagnosis, findings, inventory, matching
from dradash.dra.objects import Device, DeviceClass, Pod, ResourceClaim
from dradash.dra.state import ClusterState


@dataclass
class ClaimRow:
    claim: ResourceClaim
    classes: list[str]
    drivers: list[str]
    nodes: list[str]
    diagnosis: diagnosis.Diagnosis

    @property
    def devices(self) -> int:
        return len(self.claim.results)


@dataclass
class PodRow:
    pod: Pod
    claims: int
    unresolved: int  # claim references that do not resolve to an existing claim
    diagnosis: diagnosis.Diagnosis


def _all_claim_rows(state: ClusterState) -> list[ClaimRow]:
    diagnoses = snapshot_diagnosis(state).claims
    return [
        ClaimRow(
            claim=claim,
            classes=claim.class_names,
            drivers=state.claim_drivers(claim),
            nodes=state.claim_nodes(claim),
            diagnosis=diagnoses[(claim.namespace, claim.name)],
        )
        for claim in sorted(state.claims.values(), key=lambda c: (c.namespace, c.name))
    ]


def claim_rows(state: ClusterState, filters: dict[str, Any]) -> list[ClaimRow]:
    """Claims matching the filters (computed once per snapshot, filtered per request)."""
    rows = state.derived("claim-rows", _all_claim_rows)
    q = (filters.get("q") or "").lower()
    checks = [
        (filters.get("namespace"), lambda r, v: r.claim.namespace == v),
        (filters.get("state"), lambda r, v: r.claim.state == v),
        (q, lambda r, v: v in r.claim.name.lower()),
        (filters.get("device_class"), lambda r, v: v in r.classes),
        (filters.get("driver"), lambda r, v: v in r.drivers),
        (filters.get("node"), lambda r, v: v in r.nodes),
        (filters.get("stage"), lambda r, v: r.diagnosis.stage == v),
        (filters.get("reason"), lambda r, v: r.diagnosis.reason == v),
    ]
    for value, check in checks:
        if value:
            rows = [r for r in rows if check(r, value)]
    return rows


@dataclass(slots=True)
class DeviceRow:
    device: Device
    node: str
    holders: Sequence[tuple[str, str]]  # (namespace, name) of each claim holding it
    status: str = "free"  # inventory status: allocated · unusable · tainted · free
    tainted: bool = False  # has a NoSchedule/NoExecute taint (allocated or not)
    classes: list[str] = field(default_factory=list)  # DeviceClasses whose selectors admit it

    @property
    def allocated_to(self) -> list[str]:
        return [f"{namespace}/{name}" for namespace, name in self.holders]

    @property
    def taints(self) -> list[dict[str, Any]]:
        return self.device.taints

    @property
    def pods(self) -> list[tuple[str, str]]:
        return inventory.device_pods(self.device)

    @property
    def attributes(self) -> list[tuple[str, str]]:
        return inventory.device_attributes(self.device)

    @property
    def capacity(self) -> list[tuple[str, str, str]]:
        return inventory.device_capacity(self.device)

    @property
    def counters(self) -> list[tuple[str, str, str]]:
        return inventory.consumed_counters(self.device)

    @property
    def key_attributes(self) -> list[tuple[str, Any]]:
        return matching.key_attributes(self.device, limit=3)

    def as_dict(self) -> dict[str, Any]:
        """The API's row (DESIGN "REST API": GET snapshots/{id}/devices, plus fields since)."""
        return {
            "driver": self.device.driver,
            "pool": self.device.pool_name,
            "device": self.device.name,
            "node": self.node or None,
            "allocated_to": self.allocated_to[0] if self.allocated_to else None,
            "taints": self.taints,
            "status": self.status,
            "classes": self.classes,
            "claims": self.allocated_to,
            "pods": [f"{namespace}/{name}" for namespace, name in self.pods],
            "attributes": self.device.attributes,
            "capacity": self.device.capacity,
            "consumes_counters": self.device.consumes_counters,
            "consumed_capacity": inventory.consumed_capacity(self.device),
        }


def _all_device_rows(state: ClusterState) -> list[DeviceRow]:
    """One row per device, ordered driver → pool → node → name (the page groups them so)."""
    inv = inventory.inventory(state)
    statuses, tainted, classes = inv.statuses, inv.tainted, inv.device_classes
    rows = []
    for d in state.devices.values():
        key = id(d)
        holders = (
            [(a.claim.namespace, a.claim.name) for a in d.allocations] if d.allocations else ()
        )
        rows.append(
            DeviceRow(d, d.node_name, holders, statuses[key], key in tainted, classes.get(key, []))
        )
    rows.sort(
        key=lambda r: (r.device.slice.driver, r.device.slice.pool_name, r.node, r.device.name)
    )
    return rows


def device_rows(state: ClusterState, filters: dict[str, Any]) -> list[DeviceRow]:
    """Devices of the pools the allocator would use, filtered (rows built once per snapshot).

    ``state``: ``tainted`` is every device with a NoSchedule/NoExecute taint; ``free``,
    ``allocated`` and ``unusable`` are inventory statuses (dradash.dra.inventory).
    ``device_class``: devices the class's selectors admit (none for a class that does not exist).
    ``attribute``: ``name`` or ``name=value`` (inventory.AttributeFilter; raises
    AttributeFilterError when it is not one).
    """
    rows = state.derived("device-rows", _all_device_rows)
    if node := filters.get("node"):
        rows = [r for r in rows if r.node == node]
    if driver := filters.get("driver"):
        rows = [r for r in rows if r.device.slice.driver == driver]
    if pool := filters.get("pool"):
        rows = [r for r in rows if r.device.slice.pool_name == pool]
    if device_class := filters.get("device_class"):
        members = inventory.inventory(state).members.get(device_class, set())
        rows = [r for r in rows if id(r.device) in members]
    if (status := filters.get("state")) == "tainted":
        rows = [r for r in rows if r.tainted]
    elif status:
        rows = [r for r in rows if r.status == status]
    if attribute := filters.get("attribute"):
        wanted = inventory.attribute_matches(state, inventory.AttributeFilter.parse(attribute))
        rows = [r for r in rows if id(r.device) in wanted]
    if q := (filters.get("q") or "").lower():
        rows = [
            r for r in rows if q in r.device.name.lower() or any(q in c for c in r.allocated_to)
        ]
    return rows


@dataclass
class DeviceEntry:
    """A device row of one page, with the group headers that start before it."""

    row: DeviceRow
    driver: str | None = None  # a new driver starts here
    pool: inventory.PoolInfo | None = None  # a new pool starts here
    node: str | None = None  # a new node starts here ("" for devices that are not node-local)
    node_tally: inventory.Tally | None = None


def device_entries(state: ClusterState, rows: Iterable[DeviceRow]) -> list[DeviceEntry]:
    """Rows of one page grouped driver → pool → node: each entry says which groups start."""
    inv = inventory.inventory(state)
    out = []
    last: tuple[str, str, str] | None = None
    for row in rows:
        driver, pool, node = row.device.driver, row.device.pool_name, row.node
        entry = DeviceEntry(row)
        if last is None or last[0] != driver:
            entry.driver = driver
        if entry.driver is not None or last is None or last[1] != pool:
            entry.pool = inv.pools.get((driver, pool))
        if entry.pool is not None or last is None or last[2] != node:
            entry.node = node
            entry.node_tally = inv.by_node.get(node)
        last = (driver, pool, node)
        out.append(entry)
    return out


def device_filter_options(state: ClusterState) -> dict[str, list[str]]:
    return state.derived(
        "device-filter-options",
        lambda s: {
            "drivers": list(inventory.inventory(s).by_driver),
            "classes": sorted(s.classes),
            "attributes": inventory.attribute_names(s),
        },
    )


def device_inventory(state: ClusterState) -> inventory.Inventory:
    """Per class, node, driver and pool: devices free, allocated, tainted, in unusable pools."""
    return inventory.inventory(state)


NODES_SHOWN = 10  # the busiest and the most free nodes each; the node filter finds the others


def node_utilisation(state: ClusterState) -> dict[str, Any]:
    """Nodes for the utilisation chart: all of them when few, else the NODES_SHOWN busiest
    (largest share allocated) and the NODES_SHOWN with the most free devices."""
    return state.derived("node-utilisation", _node_utilisation)


def _node_utilisation(state: ClusterState) -> dict[str, Any]:
    inv = inventory.inventory(state)
    nodes = sorted((name, t) for name, t in inv.by_node.items() if name)
    shared = inv.by_node.get("")
    if len(nodes) <= 2 * NODES_SHOWN:
        return {
            "nodes": len(nodes),
            "all": nodes,
            "busiest": [],
            "most_free": [],
            "hidden": 0,
            "shared": shared,
        }
    busiest = sorted(nodes, key=lambda nt: (-nt[1].used, -nt[1].allocated, nt[0]))[:NODES_SHOWN]
    shown = {name for name, _ in busiest}
    most_free = [
        nt
        for nt in sorted(nodes, key=lambda nt: (-nt[1].free, nt[1].used, nt[0]))
        if nt[0] not in shown
    ][:NODES_SHOWN]
    return {
        "nodes": len(nodes),
        "all": [],
        "busiest": busiest,
        "most_free": most_free,
        "hidden": len(nodes) - len(busiest) - len(most_free),
        "shared": shared,
    }


POOLS_SHOWN = 200  # on the page; the API lists them all


def pool_table(state: ClusterState) -> list[inventory.PoolInfo]:
    """Pools for the page: those that need attention (skipped by the allocator, incomplete,
    with stale slices or duplicate device names) first, then by driver and name."""
    return state.derived(
        "pool-table",
        lambda s: sorted(
            inventory.inventory(s).pools.values(), key=lambda p: (not p.attention, p.pool.key)
        ),
    )


def pool_rows(state: ClusterState) -> list[dict[str, Any]]:
    """Pools as the allocator gathers them (DESIGN "REST API": GET snapshots/{id}/pools, plus
    fields since), computed once per parsed snapshot."""
    return state.derived(
        "pool-rows", lambda s: [_pool_dict(info) for info in inventory.inventory(s).pools.values()]
    )


def _pool_dict(info: inventory.PoolInfo) -> dict[str, Any]:
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
                    {"name": c.name, "total": c.total, "consumed": c.consumed}
                    for c in counter_set.counters
                ],
            }
            for counter_set in info.counter_sets
        ],
    }


def claim_filter_options(state: ClusterState) -> dict[str, list[str]]:
    return state.derived("claim-filter-options", _claim_filter_options)


def _claim_filter_options(state: ClusterState) -> dict[str, list[str]]:
    classes = set(state.classes)
    drivers = {s.driver for s in state.slices.values() if s.driver}
    for claim in state.claims.values():
        classes.update(claim.class_names)
        drivers.update(r.driver for r in claim.results)
    return {
        "namespaces": sorted({ns for ns, _ in state.claims}),
        "classes": sorted(c for c in classes if c),
        "drivers": sorted(drivers),
        "reasons": sorted({d.reason for d in snapshot_diagnosis(state).claims.values()}),
    }


def _all_pod_rows(state: ClusterState) -> list[PodRow]:
    diagnoses = snapshot_diagnosis(state).pods
    return [
        PodRow(
            pod=pod,
            claims=len(pod.claim_refs),
            unresolved=sum(1 for r in pod.claim_refs if r.status != "ok"),
            diagnosis=diagnoses[(pod.namespace, pod.name)],
        )
        for pod in sorted(state.dra_pods, key=lambda p: (p.namespace, p.name))
    ]


def pod_rows(state: ClusterState, filters: dict[str, Any]) -> list[PodRow]:
    """Pods using DRA that match the filters."""
    rows = state.derived("pod-rows", _all_pod_rows)
    q = (filters.get("q") or "").lower()
    checks = [
        (filters.get("namespace"), lambda r, v: r.pod.namespace == v),
        (filters.get("phase"), lambda r, v: r.pod.phase == v),
        (filters.get("node"), lambda r, v: r.pod.node_name == v),
        (q, lambda r, v: v in r.pod.name.lower()),
        (filters.get("stage"), lambda r, v: r.diagnosis.stage == v),
        (filters.get("reason"), lambda r, v: r.diagnosis.reason == v),
    ]
    for value, check in checks:
        if value:
            rows = [r for r in rows if check(r, value)]
    return rows


def pod_filter_options(state: ClusterState) -> dict[str, list[str]]:
    return state.derived("pod-filter-options", _pod_filter_options)


def _pod_filter_options(state: ClusterState) -> dict[str, list[str]]:
    pods = state.dra_pods
    return {
        "namespaces": sorted({p.namespace for p in pods}),
        "phases": sorted({p.phase for p in pods}),
        "reasons": sorted({d.reason for d in snapshot_diagnosis(state).pods.values()}),
    }


def snapshot_summary(state: ClusterState) -> dict[str, Any]:
    """Headline figures for the overview page."""
    return state.derived("summary", _snapshot_summary)


def _snapshot_summary(state: ClusterState) -> dict[str, Any]:
    pods = state.dra_pods
    diagnoses = snapshot_diagnosis(state)
    claim_states: dict[str, int] = {}
    for c in state.claims.values():
        claim_states[c.state] = claim_states.get(c.state, 0) + 1
    stuck = sorted(
        ((p, diagnoses.pods[(p.namespace, p.name)]) for p in pods),
        key=lambda pd: (pd[1].stage_index, pd[0].namespace, pd[0].name),
    )
    devices = list(state.devices.values())
    pools = list(state.pools.values())
    return {
        "dra_pods": len(pods),
        "stages": [
            (stage, diagnosis.STAGE_TITLES[stage], n)
            for stage, n in diagnoses.stage_counts().items()
        ],
        "reasons": [(stage, reason, n) for (stage, reason), n in diagnoses.reason_counts().items()],
        "attention": [(p, d) for p, d in stuck if d.stuck],
        "claims": len(state.claims),
        "claim_states": claim_states,
        "devices": len(devices),
        "devices_allocated": sum(1 for d in devices if d.allocated),
        "devices_tainted": sum(1 for d in devices if d.taints),
        "pools": len(pools),
        "pools_incomplete": sum(1 for p in pools if not p.complete),
        "pools_invalid": sum(1 for p in pools if not p.valid),
        "drivers": sorted({p.driver for p in pools}),
        "classes": sorted(state.classes),
        "nodes": len(state.nodes),
    }


CLASS_CLAIMS_SHOWN = 50  # the claims list, filtered by class, has them all


def class_info(state: ClusterState, device_class: DeviceClass) -> dict[str, Any]:
    """A DeviceClass with the devices its selectors admit and the claims that ask for it
    (computed once per parsed snapshot and class)."""
    return state.derived(f"class-info:{device_class.name}", lambda s: _class_info(s, device_class))


def _class_info(state: ClusterState, device_class: DeviceClass) -> dict[str, Any]:
    claims = [c for c in state.claims.values() if device_class.name in c.class_names]
    evaluation = matching.evaluate(state, "true", device_class=device_class.name)
    admitted = evaluation.matching
    return {
        "cls": device_class,
        "drivers": state.class_drivers(device_class),
        "compile_error": evaluation.compile_error,
        "devices": len(admitted),
        "allocated": sum(1 for r in admitted if r.device.allocated),
        "errors": evaluation.error_groups,
        "claims": claims[:CLASS_CLAIMS_SHOWN],
        "claim_count": len(claims),
        "claim_states": dict(Counter(c.state for c in claims).most_common()),
        "templates": [t for t in state.templates.values() if device_class.name in t.class_names],
    }


# --- diagnosis -----------------------------------------------------------------------------


def snapshot_diagnosis(state: ClusterState) -> diagnosis.SnapshotDiagnosis:
    """Every DRA Pod's and every claim's diagnosis (computed once per parsed snapshot)."""
    return state.derived("diagnosis", lambda s: diagnosis.diagnose_all(s))


def _explain_cache(state: ClusterState) -> dict[Any, Any]:
    return state.derived("explain-cache", lambda s: {})


def pod_diagnosis(state: ClusterState, pod: Pod) -> diagnosis.Diagnosis:
    """One Pod's diagnosis, without diagnosing the whole snapshot when that is not done yet."""
    whole = state.peek("diagnosis")
    if whole is not None and (pod.namespace, pod.name) in whole.pods:
        return whole.pods[(pod.namespace, pod.name)]
    return diagnosis.diagnose_pod(state, pod, _explain_cache(state))


def claim_diagnosis(state: ClusterState, claim: ResourceClaim) -> diagnosis.Diagnosis:
    whole = state.peek("diagnosis")
    if whole is not None:
        return whole.claims[(claim.namespace, claim.name)]
    return diagnosis.diagnose_claim(state, claim, None, _explain_cache(state))


def claim_explanation(state: ClusterState, claim: ResourceClaim) -> Any:
    """What the allocator would do with this claim now (for its first Pod, if any)."""
    pod = next((p for p in claim.pods if not p.node_name), claim.pods[0] if claim.pods else None)
    return diagnosis.explain_claims(state, [claim], pod, _explain_cache(state))


def snapshot_findings(state: ClusterState) -> list[findings.Finding]:
    return findings.find(state)  # cached on the state


def object_findings(state: ClusterState, kind: str, namespace: str, name: str) -> list[Any]:
    return [
        f
        for f in snapshot_findings(state)
        if any(
            o.get("kind") == kind and o.get("namespace", "") == namespace and o.get("name") == name
            for o in f.objects
        )
    ]
