"""Lists of claims and Pods over one snapshot's ClusterState, filtered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dradash.dra.objects import Pod, ResourceClaim
from dradash.dra.state import ClusterState


@dataclass
class ClaimRow:
    claim: ResourceClaim
    classes: list[str]
    drivers: list[str]
    nodes: list[str]

    @property
    def devices(self) -> int:
        return len(self.claim.results)


@dataclass
class PodRow:
    pod: Pod
    claims: int
    unresolved: int  # claim references that do not resolve to an existing claim


def claim_rows(state: ClusterState, filters: dict[str, Any]) -> list[ClaimRow]:
    rows = []
    q = (filters.get("q") or "").lower()
    for claim in sorted(state.claims.values(), key=lambda c: (c.namespace, c.name)):
        if filters.get("namespace") and claim.namespace != filters["namespace"]:
            continue
        if filters.get("state") and claim.state != filters["state"]:
            continue
        if q and q not in claim.name.lower():
            continue
        classes = claim.class_names
        if filters.get("device_class") and filters["device_class"] not in classes:
            continue
        drivers = state.claim_drivers(claim)
        if filters.get("driver") and filters["driver"] not in drivers:
            continue
        nodes = state.claim_nodes(claim)
        if filters.get("node") and filters["node"] not in nodes:
            continue
        rows.append(ClaimRow(claim=claim, classes=classes, drivers=drivers, nodes=nodes))
    return rows


def claim_filter_options(state: ClusterState) -> dict[str, list[str]]:
    classes = set(state.classes)
    drivers = {s.driver for s in state.slices.values() if s.driver}
    for claim in state.claims.values():
        classes.update(claim.class_names)
        drivers.update(r.driver for r in claim.results)
    return {
        "namespaces": sorted({ns for ns, _ in state.claims}),
        "classes": sorted(c for c in classes if c),
        "drivers": sorted(drivers),
    }


def pod_rows(state: ClusterState, filters: dict[str, Any]) -> list[PodRow]:
    rows = []
    q = (filters.get("q") or "").lower()
    for pod in sorted(state.dra_pods, key=lambda p: (p.namespace, p.name)):
        if filters.get("namespace") and pod.namespace != filters["namespace"]:
            continue
        if filters.get("phase") and pod.phase != filters["phase"]:
            continue
        if filters.get("node") and pod.node_name != filters["node"]:
            continue
        if q and q not in pod.name.lower():
            continue
        unresolved = sum(1 for r in pod.claim_refs if r.status != "ok")
        rows.append(PodRow(pod=pod, claims=len(pod.claim_refs), unresolved=unresolved))
    return rows


def pod_filter_options(state: ClusterState) -> dict[str, list[str]]:
    pods = state.dra_pods
    return {
        "namespaces": sorted({p.namespace for p in pods}),
        "phases": sorted({p.phase for p in pods}),
    }


def snapshot_summary(state: ClusterState) -> dict[str, Any]:
    """Headline figures for the overview page."""
    pods = state.dra_pods
    phases: dict[str, int] = {}
    for p in pods:
        phases[p.phase] = phases.get(p.phase, 0) + 1
    claim_states: dict[str, int] = {}
    for c in state.claims.values():
        claim_states[c.state] = claim_states.get(c.state, 0) + 1
    attention = [
        p
        for p in sorted(pods, key=lambda p: (p.namespace, p.name))
        if p.phase in ("Pending", "Failed", "Unknown")
        or any(c.state[0] == "waiting" for c in p.containers if not c.init)
    ]
    devices = list(state.devices.values())
    pools = list(state.pools.values())
    return {
        "dra_pods": len(pods),
        "pod_phases": dict(sorted(phases.items())),
        "attention": attention,
        "claims": len(state.claims),
        "claim_states": claim_states,
        "devices": len(devices),
        "devices_allocated": sum(1 for d in devices if d.allocated),
        "devices_tainted": sum(1 for d in devices if d.taints),
        "pools": len(pools),
        "pools_incomplete": sum(1 for p in pools if not p.complete),
        "pools_invalid": sum(1 for p in pools if not p.valid),
        "drivers": sorted({p.driver for p in pools}),
        "classes": len(state.classes),
        "nodes": len(state.nodes),
    }
