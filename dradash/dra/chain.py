"""The object chain as plain data: Pod → claims (template → generated claim) → requests →
allocation results → device → ResourceSlice and pool → Node.

Pages render it and the API returns it, so everything here is JSON-serialisable.
"""

from __future__ import annotations

from typing import Any

from dradash.dra import health
from dradash.dra.allocator.features import kubernetes_minor
from dradash.dra.extended import CLASS_PREFIX, is_extended_claim, requested_names
from dradash.dra.fields import dig, mapping, mappings, text
from dradash.dra.kinds import ObjectKey
from dradash.dra.objects import (
    AllocationResult,
    Device,
    DeviceRequestSpec,
    Event,
    Node,
    Pod,
    PodClaimRef,
    PodGroup,
    Resource,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
)
from dradash.dra.state import ClusterState


def pod_chain(state: ClusterState, pod: Pod) -> dict[str, Any]:
    return {
        "pod": pod_summary(pod),
        "node": node_summary(pod.node) if pod.node else None,
        "claims": [claim_ref_chain(state, ref) for ref in pod.claim_refs],
        "extended_resources": extended_resources(state, pod),
        "podgroup": {"namespace": pod.namespace, "name": pod.group_name, "exists": True}
        if pod.group is not None
        else {"namespace": pod.namespace, "name": pod.group_name, "exists": False}
        if pod.group_name
        else None,
        "events": events(pod.events),
    }


def extended_resources(state: ClusterState, pod: Pod) -> list[dict[str, Any]]:
    """Each container's extended resources that DRA may serve (DESIGN "Kubernetes 1.37
    workloads"): the class that serves the name, and who serves it: on the Pod's node, DRA
    where the node does not advertise it, its device plugin where it does; before the Pod is
    bound, DRA wherever a class maps it (the explanation tells where a device plugin serves it
    instead), the device plugin where no class does. ``request`` is the request of the Pod's
    claim that stands for it, once the scheduler recorded it."""
    if pod.extended is None:
        return []
    split = pod.extended.split(pod.node) if pod.node is not None else None
    recorded = {
        (text(m.get("containerName")), text(m.get("resourceName"))): text(m.get("requestName"))
        for m in mappings(pod.extended_resource_claim.get("requestMappings"))
    }
    out = []
    for r in pod.extended.requests:
        if split is not None:
            served = (
                "dra"
                if r.resource in split.dra
                else "device-plugin"
                if r.resource in split.plugin
                else "none"
            )
        elif pod.node_name:
            served = "unknown"  # its node is not in the snapshot
        else:
            served = "dra" if r.device_class else "device-plugin"
        out.append(
            {
                "container": r.container,
                "init": r.init,
                "resource": r.resource,
                "quantity": r.quantity,
                "device_class": r.device_class or None,
                "served_by": served,
                "request": recorded.get((r.container, r.resource)),
            }
        )
    return out


def claim_ref_chain(state: ClusterState, ref: PodClaimRef) -> dict[str, Any]:
    return {
        "name": ref.name,
        "source": ref.source,
        "status": ref.status,
        "podgroup": ref.group_ref is not None,  # the PodGroup's claim, shared by its Pods
        "claim_name": ref.claim_name,
        "template_name": ref.template_name,
        "template_exists": ref.template is not None,
        "template": template_summary(state, ref.template) if ref.template else None,
        "containers": [{"container": c, "request": r} for c, r in ref.containers],
        "message": claim_ref_message(ref),
        "claim": claim_chain(state, ref.claim) if ref.claim else None,
    }


def claim_ref_message(ref: PodClaimRef) -> str:
    """One sentence on how a Pod's claim reference resolved (empty when it did)."""
    ns = ref.pod.namespace
    match ref.status:
        case "claim-missing":
            return f"ResourceClaim {ns}/{ref.claim_name} does not exist."
        case "template-missing":
            return (
                f"ResourceClaimTemplate {ns}/{ref.template_name} does not exist, "
                "so no claim can be generated for this Pod."
            )
        case "not-created":
            return (
                f"No claim has been generated from template {ref.template_name} yet: "
                f"the Pod's status.resourceClaimStatuses has no entry for {ref.name!r}."
            )
        case "not-owned":
            owner = _owner_ref_name(ref.claim) if ref.claim else None
            return (
                f"ResourceClaim {ns}/{ref.claim_name} was not created for this Pod "
                f"(its owner is {owner or 'not a Pod'})."
            )
        case "not-needed":
            return "The resourceclaim controller recorded that no claim is needed."
        case "invalid":
            return "Neither resourceClaimName nor resourceClaimTemplateName is set."
        case "implicit":
            return (
                "The scheduler allocates this claim for the Pod's extended resources in memory "
                f"and creates it as {ref.pod.name}-extended-resources-… when it binds the Pod: "
                "until then no such ResourceClaim exists."
            )
    return ""


def claim_chain(state: ClusterState, claim: ResourceClaim) -> dict[str, Any]:
    allocation = claim.allocation
    return {
        "claim": {
            "namespace": claim.namespace,
            "name": claim.name,
            "uid": claim.uid,
            "api_version": claim.api_version,
            "created": claim.created,
            "state": claim.state,
            "deleting": claim.deleting,
            "finalizers": claim.finalizers,
            "pod_claim_name": claim.pod_claim_name,
            "owner_pod": claim.owner_pod.name if claim.owner_pod else None,
            "owner_pod_ref": _owner_ref_name(claim),
            # The PodGroup whose template generated it (KEP-5729), when it is in the snapshot.
            "owner_group": claim.owner_group.name if claim.owner_group else None,
            "template": claim.template.name if claim.template else None,
            # The claim the scheduler keeps in memory for a Pod's extended resources until it
            # binds the Pod (no object, no page); and one it created for them (its annotation).
            "implicit": claim.implicit,
            "extended_resources_of": claim.owner_pod.name
            if claim.owner_pod is not None and is_extended_claim(claim.metadata)
            else None,
        },
        "requests": requests(state, claim.requests),
        "constraints": claim.constraints,
        "config": claim.config,
        "allocation": None
        if allocation is None
        else {
            "node_selector": claim.allocation_node_selector,
            "nodes": state.allocation_nodes(claim),
            "timestamp": text(allocation.get("allocationTimestamp")),
            # The scheduler's binding timeout and the time left at capture
            # (health.ClaimBinding), null when no device has binding conditions.
            "binding": b.as_dict()
            if (b := health.claim_binding(state, claim)) is not None
            else None,
            "results": [result_chain(state, r) for r in claim.results],
            "config": mappings(dig(allocation, "devices", "config")),
        },
        "reserved_for": [
            {
                "resource": c.resource,
                "name": c.name,
                "uid": c.uid,
                "pod_exists": c.pod is not None,
                "group_exists": c.group is not None,  # resource "podgroups": the PodGroup
                "phase": c.pod.phase if c.pod else None,
                "node": c.pod.node_name if c.pod else None,
            }
            for c in claim.consumers
        ],
        "pods": [{"namespace": p.namespace, "name": p.name, "phase": p.phase} for p in claim.pods],
        "events": events(claim.events),
    }


def template_summary(state: ClusterState, template: ResourceClaimTemplate) -> dict[str, Any]:
    return {
        "namespace": template.namespace,
        "name": template.name,
        "requests": requests(state, template.requests),
        "constraints": template.constraints,
    }


def requests(state: ClusterState, reqs: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": r.name,
            "type": "exactly" if r.exactly is not None else "firstAvailable",
            "alternatives": [_request_spec(state, name, spec) for name, spec in r.alternatives],
        }
        for r in reqs
    ]


def _request_spec(state: ClusterState, name: str, spec: DeviceRequestSpec) -> dict[str, Any]:
    device_class = state.classes.get(spec.device_class_name)
    return {
        "name": name,
        "device_class": spec.device_class_name,
        "class_exists": device_class is not None,
        # no class in a bundle that has none proves nothing: unknown, not missing
        "class_unknown": device_class is None and bool(state.meta.unproven("DeviceClass")),
        "class_selectors": device_class.selectors if device_class else [],
        "selectors": spec.selectors,
        "allocation_mode": spec.allocation_mode,
        "count": spec.count,
        "admin_access": spec.admin_access,
        "tolerations": spec.tolerations,
        "capacity": spec.capacity,
    }


def result_chain(state: ClusterState, result: AllocationResult) -> dict[str, Any]:
    device = result.device
    status = result.device_status or {}
    return {
        "request": result.request,
        "driver": result.driver,
        "pool": result.pool,
        "device": result.device_name,
        "admin_access": result.admin_access,
        "share_id": result.share_id,
        "binding_conditions": result.binding_conditions,
        "binding_failure_conditions": result.binding_failure_conditions,
        # Per binding (and failure) condition its state in status.devices (health.Binding),
        # null for a device without binding conditions.
        "binding": b.as_dict() if (b := health.binding(result)) is not None else None,
        "found": device is not None,
        "details": device_summary(state, device, exclude=result) if device else None,
        "status": {
            "conditions": mappings(status.get("conditions")),
            "network_data": mapping(status.get("networkData")),
            # The driver's opaque data for the device (status.devices[].data), null when unset.
            "data": status.get("data"),
        }
        if status
        else None,
    }


def device_summary(
    state: ClusterState, device: Device, exclude: AllocationResult | None = None
) -> dict[str, Any]:
    slice_ = device.slice
    pool = slice_.pool
    node = state.nodes.get(device.node_name) if device.node_name else None
    return {
        "driver": device.driver,
        "pool": device.pool_name,
        "name": device.name,
        "attributes": {
            name: {"type": t, "value": v}
            for name, value in sorted(device.attributes.items())
            for t, v in list(value.items())[:1]
        },
        "capacity": {name: value.get("value") for name, value in sorted(device.capacity.items())},
        "taints": device.taints,
        "allow_multiple_allocations": device.allow_multiple_allocations,
        "binding_conditions": device.binding_conditions,
        "node": device.node_name or None,
        "node_exists": node is not None,
        "node_summary": node_summary(node) if node else None,
        "slice": {
            "name": slice_.name,
            "generation": slice_.generation,
            "node_access": slice_.node_access,
            "current": slice_.current,
        },
        "pool_info": {
            "driver": pool.driver,
            "name": pool.name,
            "generation": pool.generation,
            "slices": len(pool.slices),
            "resource_slice_count": pool.resource_slice_count,
            "complete": pool.complete,
            "valid": pool.valid,
            "stale_slices": len(pool.stale_slices),
            "devices": len(pool.devices),
        }
        if pool
        else None,
        "other_allocations": [
            {"namespace": a.claim.namespace, "claim": a.claim.name, "request": a.request}
            for a in device.allocations
            if a is not exclude
        ],
    }


def pod_summary(pod: Pod) -> dict[str, Any]:
    spec = pod.spec
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "phase": pod.phase,
        "created": pod.created,
        "deleting": pod.deleting,
        "node_name": pod.node_name or None,
        "nominated_node": text(pod.status.get("nominatedNodeName")) or None,
        "reason": text(pod.status.get("reason")),
        "message": text(pod.status.get("message")),
        "conditions": pod.conditions,
        "scheduling_gates": pod.scheduling_gates,
        "priority_class": pod.priority_class_name,
        "priority": pod.priority,
        "scheduler": text(spec.get("schedulerName")) or "default-scheduler",
        "node_selector": mapping(spec.get("nodeSelector")),
        "affinity": mapping(spec.get("affinity")),
        "tolerations": mappings(spec.get("tolerations")),
        "owner": _owner(pod),
        "containers": [
            {
                "name": c.name,
                "init": c.init,
                "sidecar": c.sidecar,
                "image": c.image,
                "claims": [{"name": n, "request": r} for n, r in c.claims],
                "state": c.state[0],
                "state_details": c.state[1],
                "last_state": c.last_state[0],
                "last_state_details": c.last_state[1],
                "ready": c.ready,
                "restart_count": c.restart_count,
            }
            for c in pod.containers
        ],
        "extended_resource_claim": pod.extended_resource_claim or None,
    }


def node_summary(node: Node) -> dict[str, Any]:
    return {
        "name": node.name,
        "ready": node.ready,
        "unschedulable": node.unschedulable,
        "taints": node.taints,
        "labels": node.labels,
        "slices": [s.name for s in node.slices],
    }


def events(items: list[Event]) -> list[dict[str, Any]]:
    return [
        {
            "type": e.type,
            "reason": e.reason,
            "message": e.message,
            "count": e.count,
            "last_seen": e.last_seen,
            "source": e.source,
        }
        for e in items
    ]


def _owner(pod: Pod) -> dict[str, str] | None:
    for ref in pod.owner_references:
        if ref.get("controller") is True:
            return {"kind": text(ref.get("kind")), "name": text(ref.get("name"))}
    return None


def _owner_ref_name(claim: ResourceClaim) -> str | None:
    owner = claim.controller_owner("Pod")
    return text(owner.get("name")) if owner else None


# --- what a chain reads ----------------------------------------------------------------------


def pod_chain_keys(state: ClusterState, pod: Pod) -> list[ObjectKey]:
    """The keys of every object ``pod_chain`` reads: a ClusterState built from only these
    objects gives the Pod the same chain as the whole snapshot (see ChainKeys)."""
    keys = _ChainKeys(state)
    keys.pod(pod)
    return keys.sorted()


def claim_chain_keys(state: ClusterState, claim: ResourceClaim) -> list[ObjectKey]:
    """The same for ``claim_chain`` of a claim (its page also lists the Pods using it)."""
    keys = _ChainKeys(state)
    keys.claim(claim)
    return keys.sorted()


def _slices_by_pool(state: ClusterState) -> dict[tuple[str, str], list[ResourceSlice]]:
    """Every slice (stale ones too) by (driver, pool)."""
    out: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in state.slices.values():
        out.setdefault((s.driver, s.pool_name), []).append(s)
    return out


def _extended_gate_pod(state: ClusterState) -> Pod | None:
    return next((p for _, p in sorted(state.pods.items()) if p.extended_resource_claim), None)


class _ChainKeys:
    """Collects the objects a chain reads, and what those need to relate to each other as they
    do in the whole snapshot: every slice of a pool (its generation and completeness), every
    slice that reaches a node shown, the Pods and claims a claim or device names, events."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.keys: set[ObjectKey] = {("DeviceTaintRule", "", name) for name in state.taint_rules}
        self._pools: set[tuple[str, str]] = set()
        self._nodes: set[str] = set()
        self._claims: set[tuple[str, str]] = set()
        self._slices_by_pool: dict[tuple[str, str], list[ResourceSlice]] = state.derived(
            "chain-slices-by-pool", _slices_by_pool
        )

    def sorted(self) -> list[ObjectKey]:
        return sorted(self.keys)

    def add(self, obj: Resource) -> None:
        self.keys.add(obj.key)
        for event in obj.events:
            self.keys.add(event.key)

    def pod(self, pod: Pod) -> None:
        self.add(pod)
        if pod.group is not None:
            self.group(pod.group)
        if pod.node is not None:
            self.node(pod.node)
        if names := requested_names(pod.raw):
            # Every class that may serve its extended resources (one wins), whether or not
            # they make it a DRA Pod (its page says why not), and one class with an explicit
            # name, which in 1.34 and 1.35 is what shows the feature on (extended.enabled).
            proof = None
            for c in self.state.classes.values():
                if c.extended_resource_name in names or f"{CLASS_PREFIX}{c.name}" in names:
                    self.keys.add(c.key)
                elif c.extended_resource_name and (proof is None or c.name < proof.name):
                    proof = c
            if proof is not None:
                self.keys.add(proof.key)
            elif pod.extended is not None and not pod.extended_resource_claim:
                self._extended_gate_proof()
        for ref in pod.claim_refs:
            if ref.template is not None:
                self.template(ref.template)
            if ref.claim is not None:
                self.claim(ref.claim)

    def _extended_gate_proof(self) -> None:
        """In Kubernetes 1.34 and 1.35, where no class declares an explicit name, the feature
        is on only where some Pod's extendedResourceClaimStatus proves it (extended.enabled):
        keep one such Pod, so that the chain's state has the feature on as the snapshot's."""
        if kubernetes_minor(self.state.meta.server_version) not in (34, 35):
            return
        proof = self.state.derived("extended-gate-pod", _extended_gate_pod)
        if proof is not None:
            self.keys.add(proof.key)

    def group(self, group: PodGroup) -> None:
        """A PodGroup, so that its Pods' references to its claims resolve as they do."""
        if group.key in self.keys:
            return
        self.add(group)
        if group.workload is not None:
            self.add(group.workload)
        for ref in group.claim_refs:
            if ref.template is not None:
                self.template(ref.template)
            if ref.claim is not None:
                self.claim(ref.claim)

    def template(self, template: ResourceClaimTemplate) -> None:
        self.add(template)
        self.classes(template.requests)

    def claim(self, claim: ResourceClaim) -> None:
        if claim.key[1:] in self._claims:
            return
        self._claims.add(claim.key[1:])
        self.add(claim)
        self.classes(claim.requests)
        if claim.template is not None:
            self.template(claim.template)
        # Pods that use it, own it or hold a reservation: with their claim references, so that
        # those resolve (and link to this claim) as in the whole snapshot.
        related = [*claim.pods, *(c.pod for c in claim.consumers if c.pod is not None)]
        if claim.owner_pod is not None:
            related.append(claim.owner_pod)
        groups = [claim.owner_group, *(c.group for c in claim.consumers)]
        for pod in related:
            self.keys.add(pod.key)
            groups.append(pod.group)
            for ref in pod.claim_refs:
                if ref.template is not None:
                    self.keys.add(ref.template.key)
                if ref.claim is not None:
                    self.keys.add(ref.claim.key)
                    if ref.claim.owner_pod is not None:
                        self.keys.add(ref.claim.owner_pod.key)
        for group in groups:  # its generated claims resolve only with their PodGroup
            if group is not None:
                self.keys.add(group.key)
        for name in self.state.allocation_nodes(claim) or []:
            self.keys.add(("Node", "", name))
        for result in claim.results:
            if result.device is not None:
                self.device(result.device)

    def device(self, device: Device) -> None:
        self.pool(device.slice.driver, device.slice.pool_name)
        for allocation in device.allocations:  # "other allocations" of the device
            self.keys.add(allocation.claim.key)
        if device.node_name and (node := self.state.nodes.get(device.node_name)):
            self.node(node)

    def node(self, node: Node) -> None:
        if node.name in self._nodes:
            return
        self._nodes.add(node.name)
        self.keys.add(node.key)
        for s in node.slices:
            self.pool(s.driver, s.pool_name)

    def pool(self, driver: str, name: str) -> None:
        if (driver, name) in self._pools:
            return
        self._pools.add((driver, name))
        for s in self._slices_by_pool.get((driver, name), []):
            self.keys.add(s.key)

    def classes(self, reqs: list[Any]) -> None:
        for r in reqs:
            for _, spec in r.alternatives:
                if spec.device_class_name in self.state.classes:
                    self.keys.add(("DeviceClass", "", spec.device_class_name))
