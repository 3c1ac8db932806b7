"""Lists of claims and Pods over one snapshot's ClusterState, filtered."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from dradash.dra import diagnosis, findings, matching
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


@dataclass
class DeviceRow:
    device: Device
    node: str
    holders: list[tuple[str, str]]  # (namespace, name) of each claim holding it

    @property
    def allocated_to(self) -> list[str]:
        return [f"{namespace}/{name}" for namespace, name in self.holders]

    @property
    def taints(self) -> list[dict[str, Any]]:
        return self.device.taints

    def as_dict(self) -> dict[str, Any]:
        """The API's row (DESIGN "REST API": GET snapshots/{id}/devices)."""
        return {
            "driver": self.device.driver,
            "pool": self.device.pool_name,
            "device": self.device.name,
            "node": self.node or None,
            "allocated_to": self.allocated_to[0] if self.allocated_to else None,
            "taints": self.taints,
        }


def _all_device_rows(state: ClusterState) -> list[DeviceRow]:
    return [
        DeviceRow(
            device=d,
            node=d.node_name,
            holders=[(a.claim.namespace, a.claim.name) for a in d.allocations],
        )
        for d in sorted(state.devices.values(), key=lambda d: d.key)
    ]


def device_rows(state: ClusterState, filters: dict[str, Any]) -> list[DeviceRow]:
    """Devices of the pools the allocator would use, filtered (rows built once per snapshot)."""
    rows = state.derived("device-rows", _all_device_rows)
    q = (filters.get("q") or "").lower()
    states = {
        "free": lambda r: not r.device.allocated,
        "allocated": lambda r: r.device.allocated,
        "tainted": lambda r: bool(r.device.taints),
    }
    checks = [
        (filters.get("driver"), lambda r, v: r.device.driver == v),
        (filters.get("pool"), lambda r, v: r.device.pool_name == v),
        (filters.get("node"), lambda r, v: r.node == v),
        (filters.get("state"), lambda r, v: states[v](r)),
        (q, lambda r, v: v in r.device.name.lower() or any(v in c for c in r.allocated_to)),
    ]
    for value, check in checks:
        if value:
            rows = [r for r in rows if check(r, value)]
    return rows


def device_filter_options(state: ClusterState) -> dict[str, list[str]]:
    return state.derived(
        "device-filter-options",
        lambda s: {
            "drivers": sorted({d.driver for d in s.devices.values()}),
            "pools": sorted({d.pool_name for d in s.devices.values()}),
        },
    )


def pool_rows(state: ClusterState) -> list[dict[str, Any]]:
    """Pools as the allocator gathers them (DESIGN "REST API": GET snapshots/{id}/pools)."""
    return [
        {
            "driver": pool.driver,
            "pool": pool.name,
            "generation": pool.generation,
            "slices": len(pool.slices),
            "resource_slice_count": pool.resource_slice_count,
            "complete": pool.complete,
            "devices": len(pool.devices),
            "allocated": sum(1 for d in pool.devices if d.allocated),
        }
        for _, pool in sorted(state.pools.items())
    ]


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
