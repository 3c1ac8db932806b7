"""ClusterState: one snapshot's objects, normalised to v1, with every relation resolved."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dradash.dra import extended as extended_resources
from dradash.dra.compact import Compactor
from dradash.dra.fields import mappings, text
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import UnsupportedVersion, kind_of
from dradash.dra.nodes import node_selector_matches, selector_node_names
from dradash.dra.normalize import normalize
from dradash.dra.objects import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceTaintRule,
    Event,
    GroupClaimRef,
    Job,
    Namespace,
    Node,
    Pod,
    PodClaimRef,
    PodGroup,
    Pool,
    PriorityClass,
    Resource,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    Workload,
    parse_resource_id,
)

WRAPPERS: dict[str, type[Resource]] = {
    cls.kind: cls
    for cls in (
        Namespace,
        Node,
        Pod,
        Event,
        Job,
        PriorityClass,
        DeviceClass,
        ResourceSlice,
        ResourceClaim,
        ResourceClaimTemplate,
        DeviceTaintRule,
        Workload,
        PodGroup,
    )
}


def _by_uid_or_name(
    by_uid: dict[str, Any], by_key: dict[tuple[str, str], Any], namespace: str, name: str, uid: str
) -> Any:
    """The object a reference names: by uid, else by name when either side has no uid."""
    found = by_uid.get(uid) if uid else None
    if found is None:
        candidate = by_key.get((namespace, name))
        if candidate is not None and (not uid or not candidate.uid):
            found = candidate
    return found


def _claim_entry(entry: dict[str, Any]) -> tuple[str, str, str]:
    """What must be equal for a Pod's claim to be its PodGroup's (PodResourceClaim docs)."""
    return (
        text(entry.get("name")),
        text(entry.get("resourceClaimName")),
        text(entry.get("resourceClaimTemplateName")),
    )


def _not_last(items: list[Any], item: Any) -> bool:
    """Pods are linked one at a time, so a repeat can only be the last item added."""
    return not items or items[-1] is not item


def _time(value: str) -> datetime:
    """An RFC 3339 timestamp as a datetime, for ordering; unparsable ones sort first."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return _EARLIEST
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


_EARLIEST = datetime.min.replace(tzinfo=UTC)
_DRIVER_IN_SELECTOR = re.compile(r"""device\.driver\s*==\s*["']([^"']+)["']""")


@dataclass
class SnapshotMeta:
    cluster: str = ""
    captured_at: str = ""
    server_version: str = ""
    api_versions: list[str] = field(default_factory=list)
    # Per-kind capture status as stored with the snapshot: {kind: {"status", "count", "message"}}.
    kinds: dict[str, dict[str, Any]] = field(default_factory=dict)
    # How the snapshot was made: "capture", "import", "upload", "demo"; "" when not known.
    source: str = ""
    # Feature gates stated for the cluster (SnapshotInfo featureGates): {"DRADeviceTaints": True}.
    feature_gates: dict[str, bool] = field(default_factory=dict)

    def unproven(self, *kinds: str) -> list[str]:
        """Those of ``kinds`` whose absence from the snapshot proves nothing about the cluster.

        A kind that could not be read (forbidden, not found, error) is unproven; so is one of
        which a bundle holds no object (people export ``kubectl get resourceclaims,
        resourceslices``: the cluster may well have Pods). A live capture that listed a kind
        and found none proves there are none, and so does a bundle whose SnapshotInfo says the
        kind was listed (``"listed": true`` in the stored status, as a capture's export has).
        Without per-kind statuses (a ClusterState built from plain objects, as in unit tests)
        nothing is unproven.
        """
        out = []
        for kind in kinds:
            entry = self.kinds.get(kind)
            status = entry.get("status") if isinstance(entry, dict) else None
            listed = isinstance(entry, dict) and entry.get("listed") is True
            if status in ("forbidden", "not-found", "error") or (
                status == "absent" and not listed and self.source not in ("capture", "demo")
            ):
                out.append(kind)
        return out


class ClusterState:
    """Build with ``ClusterState.build(objects)``; read through its dicts and helpers."""

    def __init__(self, meta: SnapshotMeta | None = None) -> None:
        self.meta = meta or SnapshotMeta()
        self.namespaces: dict[str, Namespace] = {}
        self.nodes: dict[str, Node] = {}
        self.priority_classes: dict[str, PriorityClass] = {}
        self.classes: dict[str, DeviceClass] = {}
        self.slices: dict[str, ResourceSlice] = {}
        self.taint_rules: dict[str, DeviceTaintRule] = {}
        self.pods: dict[tuple[str, str], Pod] = {}
        self.claims: dict[tuple[str, str], ResourceClaim] = {}
        self.templates: dict[tuple[str, str], ResourceClaimTemplate] = {}
        self.jobs: dict[tuple[str, str], Job] = {}
        self.workloads: dict[tuple[str, str], Workload] = {}
        self.podgroups: dict[tuple[str, str], PodGroup] = {}
        self.events: list[Event] = []
        self.pools: dict[tuple[str, str], Pool] = {}
        # Devices of current-generation slices, by (driver, pool, device).
        self.devices: dict[tuple[str, str, str], Device] = {}
        # Allocation results that name a device the snapshot does not have.
        self.dangling_results: list[AllocationResult] = []
        self._events_by_key: dict[tuple[str, str, str], list[Event]] = defaultdict(list)
        self._derived: dict[str, Any] = {}
        # Extended resource name → the DeviceClass serving it (empty with the feature off).
        self.extended_mapping: dict[str, DeviceClass] = {}

    # --- building --------------------------------------------------------------------------

    @classmethod
    def build(
        cls, objects: Iterable[dict[str, Any]], meta: SnapshotMeta | None = None
    ) -> ClusterState:
        state = cls(meta)
        compact = Compactor()
        with gc_paused():
            for raw in objects:
                state._add(compact(raw))
            del compact
            state._gather_pools()
            state._attach_slices_to_nodes()
            state._apply_taint_rules()
            state._link_claims()
            state._link_groups()
            state._link_pods()
            state._link_health()
            state._link_events()
        return state

    def _add(self, raw: dict[str, Any]) -> None:
        try:
            kind = kind_of(raw)
        except UnsupportedVersion:
            return
        if kind is None:
            return
        wrapper = WRAPPERS[kind.name]
        obj = wrapper(normalize(raw), api_version=text(raw.get("apiVersion")))
        if not obj.name:
            return
        match obj:
            case Namespace():
                self.namespaces[obj.name] = obj
            case Node():
                self.nodes[obj.name] = obj
            case PriorityClass():
                self.priority_classes[obj.name] = obj
            case DeviceClass():
                self.classes[obj.name] = obj
            case ResourceSlice():
                self.slices[obj.name] = obj
            case DeviceTaintRule():
                self.taint_rules[obj.name] = obj
            case Pod():
                self.pods[(obj.namespace, obj.name)] = obj
            case ResourceClaim():
                self.claims[(obj.namespace, obj.name)] = obj
            case ResourceClaimTemplate():
                self.templates[(obj.namespace, obj.name)] = obj
            case Job():
                self.jobs[(obj.namespace, obj.name)] = obj
            case Workload():
                self.workloads[(obj.namespace, obj.name)] = obj
            case PodGroup():
                self.podgroups[(obj.namespace, obj.name)] = obj
            case Event():
                self.events.append(obj)

    def _gather_pools(self) -> None:
        """Group slices into pools as the allocator does: the newest generation wins."""
        by_pool: dict[tuple[str, str], list[ResourceSlice]] = defaultdict(list)
        for s in sorted(self.slices.values(), key=lambda s: s.name):
            by_pool[(s.driver, s.pool_name)].append(s)
        for (driver, name), slices in sorted(by_pool.items()):
            generation = max(s.generation for s in slices)
            current = [s for s in slices if s.generation == generation]
            pool = Pool(
                driver=driver,
                name=name,
                generation=generation,
                resource_slice_count=current[0].resource_slice_count,
                slices=current,
                stale_slices=[s for s in slices if s.generation != generation],
            )
            seen: set[str] = set()
            for s in slices:
                s.pool = pool
            for s in current:
                for device in s.devices:
                    if device.name in seen:
                        pool.duplicate_devices.append(device.name)
                    else:
                        seen.add(device.name)
                        self.devices[device.key] = device
            self.pools[(driver, name)] = pool

    def _attach_slices_to_nodes(self) -> None:
        shared = []
        for s in self.slices.values():
            if not s.current:
                continue
            if s.node_name:
                if node := self.nodes.get(s.node_name):
                    node.slices.append(s)
            elif s.all_nodes or s.node_selector is not None or s.per_device_node_selection:
                shared.append(s)
        for node in self.nodes.values():
            labels = node.labels
            for s in shared:
                if (
                    s.all_nodes
                    or (
                        s.node_selector is not None
                        and node_selector_matches(s.node_selector, node.name, labels)
                    )
                    or s.per_device_node_selection
                    and any(self.device_reaches(d, node) for d in s.devices)
                ):
                    node.slices.append(s)

    def _apply_taint_rules(self) -> None:
        for rule in self.taint_rules.values():
            if not rule.taint:
                continue
            for device in self.devices.values():
                if rule.selects(device):
                    device.rule_taints.append((rule, rule.taint))

    def _link_claims(self) -> None:
        pods_by_uid = {p.uid: p for p in self.pods.values() if p.uid}
        groups_by_uid = {g.uid: g for g in self.podgroups.values() if g.uid}
        for claim in self.claims.values():
            statuses = {
                (
                    text(s.get("driver")),
                    text(s.get("pool")),
                    text(s.get("device")),
                    text(s.get("shareID")),
                ): s
                for s in claim.device_statuses
            }
            for result in claim.results:
                result.device = self.devices.get(result.device_key)
                result.device_status = statuses.get((*result.device_key, result.share_id))
                if result.device is None:
                    self.dangling_results.append(result)
                else:
                    result.device.allocations.append(result)
            for consumer in claim.consumers:
                pod = pods_by_uid.get(consumer.uid) if consumer.uid else None
                if pod is None and consumer.resource == "pods":
                    candidate = self.pods.get((claim.namespace, consumer.name))
                    if candidate is not None and (not consumer.uid or not candidate.uid):
                        pod = candidate
                consumer.pod = pod
                if consumer.for_group:
                    consumer.group = _by_uid_or_name(
                        groups_by_uid, self.podgroups, claim.namespace, consumer.name, consumer.uid
                    )
            if (owner := claim.controller_owner("PodGroup")) is not None:
                claim.owner_group = _by_uid_or_name(
                    groups_by_uid,
                    self.podgroups,
                    claim.namespace,
                    text(owner.get("name")),
                    text(owner.get("uid")),
                )
            owner = claim.controller_owner("Pod")
            if owner is not None:
                pod = pods_by_uid.get(text(owner.get("uid")))
                if pod is None:
                    candidate = self.pods.get((claim.namespace, text(owner.get("name"))))
                    if candidate is not None and (not owner.get("uid") or not candidate.uid):
                        pod = candidate
                claim.owner_pod = pod

    def _link_groups(self) -> None:
        """PodGroups: their Workload, and the claims of their spec.resourceClaims, resolved as
        the resourceclaim controller generates them for a PodGroup (KEP-5729)."""
        generated = {
            (id(c.owner_group), c.pod_claim_name): c
            for c in self.claims.values()
            if c.owner_group is not None and c.pod_claim_name
        }
        for group in self.podgroups.values():
            workload, _ = group.template_ref
            group.workload = self.workloads.get((group.namespace, workload)) if workload else None
            statuses = {
                text(s.get("name")): s for s in mappings(group.status.get("resourceClaimStatuses"))
            }
            for entry in group.resource_claims:
                ref = GroupClaimRef(name=text(entry.get("name")), source="claim", raw=entry)
                if claim_name := text(entry.get("resourceClaimName")):
                    ref.claim_name = claim_name
                    ref.claim = self.claims.get((group.namespace, claim_name))
                    ref.status = "ok" if ref.claim else "claim-missing"
                elif template_name := text(entry.get("resourceClaimTemplateName")):
                    ref.source, ref.template_name = "template", template_name
                    ref.template = self.templates.get((group.namespace, template_name))
                    status = statuses.get(ref.name)
                    if status is not None:
                        ref.claim_name = text(status.get("resourceClaimName"))
                        if not ref.claim_name:
                            ref.status = "not-needed"
                        ref.claim = self.claims.get((group.namespace, ref.claim_name))
                    else:
                        ref.claim = generated.get((id(group), ref.name))
                        ref.claim_name = ref.claim.name if ref.claim else ""
                    if ref.status == "not-needed":
                        pass
                    elif ref.claim is None:
                        ref.status = (
                            "claim-missing"
                            if ref.claim_name
                            else "template-missing"
                            if ref.template is None
                            else "not-created"
                        )
                    elif ref.claim.owner_group is not group:
                        ref.status = "not-owned"
                    else:
                        ref.claim.template = ref.template
                        if ref.template is not None and ref.claim not in ref.template.claims:
                            ref.template.claims.append(ref.claim)
                else:
                    ref.status = "invalid"
                group.claim_refs.append(ref)

    def _link_pods(self) -> None:
        jobs_by_uid = {j.uid: j for j in self.jobs.values() if j.uid}
        # Claims generated for a Pod, by (owner pod, pod claim name): found before the
        # controller records them in the Pod's status.
        self._generated = {
            (id(c.owner_pod), c.pod_claim_name): c
            for c in self.claims.values()
            if c.owner_pod is not None and c.pod_claim_name
        }
        from dradash.dra.allocator.features import kubernetes_minor  # the allocator reads us

        minor = kubernetes_minor(self.meta.server_version)
        self.extended_mapping = (
            extended_resources.class_mapping(self.classes.values())
            if extended_resources.enabled(minor, self.classes.values(), self.pods.values())
            else {}
        )
        # Claims the scheduler created for a Pod's extended resources, by Pod.
        self._extended_claims = {
            id(c.owner_pod): c
            for c in self.claims.values()
            if c.owner_pod is not None and extended_resources.is_extended_claim(c.metadata)
        }
        for pod in self.pods.values():
            if pod.node_name and (node := self.nodes.get(pod.node_name)):
                pod.node = node
                node.pods.append(pod)
            if pod.group_name:
                pod.group = self.podgroups.get((pod.namespace, pod.group_name))
                if pod.group is not None:
                    pod.group.pods.append(pod)
            owner = pod.controller_owner("Job")
            if owner is not None:
                job = jobs_by_uid.get(text(owner.get("uid")))
                if job is None:
                    candidate = self.jobs.get((pod.namespace, text(owner.get("name"))))
                    if candidate is not None and (not owner.get("uid") or not candidate.uid):
                        job = candidate
                if job is not None:
                    pod.job = job
                    job.pods.append(pod)
            self._resolve_claim_refs(pod)

    def _link_health(self) -> None:
        """The kubelet's device health reports (KEP-4680) to their claims and devices.

        An entry ``claim:<name>[/<request>]`` names the Pod's claim reference (for extended
        resources, the claim itself); the kubelet lists every device of the claim under it,
        each by ``<driver>/<pool>/<device>`` or by its first CDI device ID. A report names a
        device where the ID is one of the claim's allocated devices, or where the claim holds
        exactly one device.
        """
        for pod in self.pods.values():
            reports = pod.raw_health()
            if not reports:
                continue
            for report in reports:
                ref = next((r for r in pod.claim_refs if r.name == report.pod_claim), None)
                if ref is None:
                    ref = next(
                        (
                            r
                            for r in pod.claim_refs
                            if r.claim is not None and r.claim.name == report.pod_claim
                        ),
                        None,
                    )
                claim = ref.claim if ref is not None else None
                report.claim = claim
                if claim is not None:
                    key = parse_resource_id(report.resource_id)
                    results = claim.results
                    report.result = next((r for r in results if r.device_key == key), None) or (
                        results[0] if len(results) == 1 else None
                    )
                key = report.device_key
                report.device = (
                    report.result.device
                    if report.result is not None
                    else self.devices.get(key)
                    if key
                    else None
                )
                if report.device is not None:
                    report.device.health.append(report)
            pod.health = reports

    def _resolve_claim_refs(self, pod: Pod) -> None:
        """Resolve spec.resourceClaims the way the scheduler's resourceclaim.Name() does."""
        statuses = {
            text(s.get("name")): s for s in mappings(pod.status.get("resourceClaimStatuses"))
        }
        containers: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for c in pod.containers:
            for claim_name, request in c.claims:
                containers[claim_name].append((c.name, request))
        shared = {
            _claim_entry(g.raw): g for g in (pod.group.claim_refs if pod.group is not None else ())
        }
        for entry in pod.resource_claims:
            name = text(entry.get("name"))
            ref = PodClaimRef(pod=pod, name=name, source="claim", containers=containers[name])
            if group_ref := shared.get(_claim_entry(entry)):
                # The PodGroup's claim, shared by its Pods and reserved for the group.
                ref.group_ref = group_ref
                ref.source = group_ref.source
                ref.claim_name, ref.template_name = group_ref.claim_name, group_ref.template_name
                ref.claim, ref.template, ref.status = (
                    group_ref.claim,
                    group_ref.template,
                    group_ref.status,
                )
                if ref.template is not None and _not_last(ref.template.pods, pod):
                    ref.template.pods.append(pod)
            elif claim_name := text(entry.get("resourceClaimName")):
                ref.claim_name = claim_name
                ref.claim = self.claims.get((pod.namespace, claim_name))
                ref.status = "ok" if ref.claim else "claim-missing"
            elif template_name := text(entry.get("resourceClaimTemplateName")):
                ref.source = "template"
                ref.template_name = template_name
                ref.template = self.templates.get((pod.namespace, template_name))
                if ref.template is not None and _not_last(ref.template.pods, pod):
                    ref.template.pods.append(pod)
                self._resolve_generated(pod, ref, statuses.get(name))
            else:
                ref.status = "invalid"
            if ref.claim is not None and _not_last(ref.claim.pods, pod):
                ref.claim.pods.append(pod)
            pod.claim_refs.append(ref)
        self._resolve_extended(pod)

    def _resolve_extended(self, pod: Pod) -> None:
        """The claim for the Pod's extended resources: the one its status names, else the one
        the scheduler created for it (its annotation and owner: findExtendedResourceClaim),
        else, for a Pod not yet bound, the claim the scheduler allocates in memory."""
        if self.extended_mapping:
            resources = extended_resources.pod_resources(pod, self.extended_mapping)
            if resources.backed:
                pod.extended = resources
        extended = pod.extended_resource_claim
        claim_name = text(extended.get("resourceClaimName"))
        if not claim_name and pod.extended is not None:
            claim = self._extended_claims.get(id(pod))
            if claim is not None:
                claim_name = claim.name
            elif not pod.node_name and not pod.finished:
                self._implicit_claim(pod, pod.extended)
                return
        if claim_name:
            claim = self.claims.get((pod.namespace, claim_name))
            ref = PodClaimRef(
                pod=pod,
                name=claim_name,
                source="extended-resource",
                claim_name=claim_name,
                claim=claim,
                status="ok" if claim else "claim-missing",
                containers=[
                    (text(m.get("containerName")), text(m.get("requestName")))
                    for m in mappings(extended.get("requestMappings"))
                ],
            )
            if claim is not None and _not_last(claim.pods, pod):
                claim.pods.append(pod)
            pod.claim_refs.append(ref)

    def _implicit_claim(self, pod: Pod, resources: extended_resources.PodResources) -> None:
        """The claim on nodes where DRA serves every resource a class maps (where a node's
        device plugin serves some, the scheduler asks for fewer there: the allocator's
        explanation varies it per node)."""
        dra = {name: n for name, n in resources.totals.items() if n and name in resources.mapping}
        requests, found = extended_resources.requests_and_mappings(pod, dra, resources.mapping)
        claim = ResourceClaim(extended_resources.in_memory_claim(pod, requests))
        claim.implicit = True
        claim.owner_pod = pod
        claim.pods.append(pod)
        pod.claim_refs.append(
            PodClaimRef(
                pod=pod,
                name=extended_resources.IN_MEMORY_NAME,
                source="extended-resource",
                status="implicit",
                claim=claim,
                containers=[(m["containerName"], m["requestName"]) for m in found],
            )
        )

    def _resolve_generated(self, pod: Pod, ref: PodClaimRef, status: dict[str, Any] | None) -> None:
        if status is None:
            # The controller has not recorded a claim yet. It may have created one already:
            # look for a claim this Pod controls with the matching pod-claim-name annotation.
            if claim := self._generated.get((id(pod), ref.name)):
                ref.claim, ref.claim_name = claim, claim.name
            if ref.claim is None:
                ref.status = "template-missing" if ref.template is None else "not-created"
                return
        elif not (claim_name := text(status.get("resourceClaimName"))):
            ref.status = "not-needed"
            return
        else:
            ref.claim_name = claim_name
            ref.claim = self.claims.get((pod.namespace, claim_name))
        if ref.claim is None:
            ref.status = "claim-missing"
        elif ref.claim.owner_pod is not pod:
            ref.status = "not-owned"
        else:
            ref.claim.template = ref.template
            if ref.template is not None and _not_last(ref.template.claims, ref.claim):
                ref.template.claims.append(ref.claim)

    def _link_events(self) -> None:
        for event in self.events:
            self._events_by_key[event.involved_key].append(event)
        for key, events in self._events_by_key.items():
            obj = self.get(*key)
            if obj is None:
                continue
            # Like kubectl describe: events of an earlier object with the same name stay out.
            mine = [
                e for e in events if not (e.involved_uid and obj.uid) or e.involved_uid == obj.uid
            ]
            obj.events = sorted(mine, key=lambda e: _time(e.last_seen))

    # --- reading ---------------------------------------------------------------------------

    def peek(self, key: str) -> Any:
        """A derived value if it has been computed already, else None."""
        return self._derived.get(key)

    @property
    def has_list_attributes(self) -> bool:
        """Whether a device publishes a list-typed attribute (``ints``, ``strings``, …)."""
        return self.derived("has-list-attributes", _has_list_attributes)

    def derived(self, key: str, compute: Callable[[ClusterState], Any]) -> Any:
        """compute(self), once: a state never changes after build, so neither does this."""
        if key not in self._derived:
            with gc_paused():
                self._derived[key] = compute(self)
        return self._derived[key]

    def get(self, kind: str, namespace: str, name: str) -> Resource | None:
        match kind:
            case "Pod":
                return self.pods.get((namespace, name))
            case "ResourceClaim":
                return self.claims.get((namespace, name))
            case "ResourceClaimTemplate":
                return self.templates.get((namespace, name))
            case "Job":
                return self.jobs.get((namespace, name))
            case "PodGroup":
                return self.podgroups.get((namespace, name))
            case "Workload":
                return self.workloads.get((namespace, name))
            case "Node":
                return self.nodes.get(name)
            case "ResourceSlice":
                return self.slices.get(name)
            case "DeviceClass":
                return self.classes.get(name)
            case "Namespace":
                return self.namespaces.get(name)
            case "DeviceTaintRule":
                return self.taint_rules.get(name)
            case "PriorityClass":
                return self.priority_classes.get(name)
        return None

    @property
    def dra_pods(self) -> list[Pod]:
        return [p for p in self.pods.values() if p.uses_dra]

    def device_reaches(self, device: Device, node: Node) -> bool:
        """Whether a Pod on this node can use the device (slice or per-device node selection)."""
        raw, slice_ = device.raw, device.slice
        if slice_.per_device_node_selection:
            if text(raw.get("nodeName")):
                return raw["nodeName"] == node.name
            if raw.get("allNodes") is True:
                return True
            selector = raw.get("nodeSelector")
            return isinstance(selector, dict) and node_selector_matches(
                selector, node.name, node.labels
            )
        if slice_.node_name:
            return slice_.node_name == node.name
        if slice_.all_nodes:
            return True
        if slice_.node_selector is not None:
            return node_selector_matches(slice_.node_selector, node.name, node.labels)
        return False

    def allocation_nodes(self, claim: ResourceClaim) -> list[str] | None:
        """Nodes the claim's allocation restricts Pods to; None when it allows every node."""
        selector = claim.allocation_node_selector
        if selector is None:
            return None
        pinned = selector_node_names(selector)  # the usual `metadata.name In [node]`
        if pinned is not None:
            return sorted(n for n in pinned if n in self.nodes)
        return sorted(
            n.name for n in self.nodes.values() if node_selector_matches(selector, n.name, n.labels)
        )

    def class_drivers(self, device_class: DeviceClass) -> list[str]:
        """Drivers a class names in ``device.driver == "…"`` selectors."""
        found = []
        for expr in device_class.selectors:
            found += _DRIVER_IN_SELECTOR.findall(expr or "")
        return list(dict.fromkeys(found))

    def claim_drivers(self, claim: ResourceClaim | ResourceClaimTemplate) -> list[str]:
        if isinstance(claim, ResourceClaim) and claim.results:
            return list(dict.fromkeys(r.driver for r in claim.results))
        drivers: list[str] = []
        for name in claim.class_names:
            if device_class := self.classes.get(name):
                drivers += self.class_drivers(device_class)
        return list(dict.fromkeys(drivers))

    def claim_nodes(self, claim: ResourceClaim) -> list[str]:
        """Nodes the claim is tied to: its allocation's node(s) and its consumers' nodes."""
        nodes = set()
        for r in claim.results:
            if r.device is not None and r.device.node_name:
                nodes.add(r.device.node_name)
        for c in claim.consumers:
            if c.pod is not None and c.pod.node_name:
                nodes.add(c.pod.node_name)
            if c.group is not None:
                nodes.update(p.node_name for p in c.group.pods if p.node_name)
        return sorted(nodes)

    def counts(self) -> dict[str, int]:
        return {
            "Namespace": len(self.namespaces),
            "Node": len(self.nodes),
            "Pod": len(self.pods),
            "Event": len(self.events),
            "Job": len(self.jobs),
            "PriorityClass": len(self.priority_classes),
            "DeviceClass": len(self.classes),
            "ResourceSlice": len(self.slices),
            "ResourceClaim": len(self.claims),
            "ResourceClaimTemplate": len(self.templates),
            "DeviceTaintRule": len(self.taint_rules),
            "Workload": len(self.workloads),
            "PodGroup": len(self.podgroups),
        }


LIST_ATTRIBUTE_KINDS = frozenset(("ints", "bools", "strings", "versions"))


def _has_list_attributes(state: ClusterState) -> bool:
    return any(
        isinstance(value, dict) and not LIST_ATTRIBUTE_KINDS.isdisjoint(value)
        for device in state.devices.values()
        for value in device.attributes.values()
    )
