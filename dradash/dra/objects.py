"""Typed views over the raw objects of one snapshot.

Each class wraps the raw (v1-normalised) dict and exposes the fields dradash reads; the relations
between objects (``pod.claim_refs``, ``claim.results[i].device``, ``device.slice.pool`` …) are
filled in by ``ClusterState``. Nothing here raises on a missing or mistyped field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from dradash.dra.fields import dig, items, mapping, mappings, number, strings, text

POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
# Pod phases after which a Pod never runs again (its containers will not be restarted).
TERMINAL_PHASES = ("Succeeded", "Failed")


class Resource:
    kind: ClassVar[str] = ""
    namespaced: ClassVar[bool] = True

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        self.raw = raw
        self.api_version = api_version or text(raw.get("apiVersion"))
        self.events: list[Event] = []

    @cached_property
    def metadata(self) -> dict[str, Any]:
        return mapping(self.raw.get("metadata"))

    @cached_property
    def spec(self) -> dict[str, Any]:
        return mapping(self.raw.get("spec"))

    @cached_property
    def status(self) -> dict[str, Any]:
        return mapping(self.raw.get("status"))

    @cached_property
    def name(self) -> str:
        return text(self.metadata.get("name"))

    @cached_property
    def namespace(self) -> str:
        return (text(self.metadata.get("namespace")) or "default") if self.namespaced else ""

    @cached_property
    def uid(self) -> str:
        return text(self.metadata.get("uid"))

    @cached_property
    def labels(self) -> dict[str, str]:
        return {k: v for k, v in mapping(self.metadata.get("labels")).items() if isinstance(v, str)}

    @property
    def annotations(self) -> dict[str, str]:
        return {
            k: v for k, v in mapping(self.metadata.get("annotations")).items() if isinstance(v, str)
        }

    @property
    def created(self) -> str:
        return text(self.metadata.get("creationTimestamp"))

    @property
    def deleting(self) -> bool:
        return bool(self.metadata.get("deletionTimestamp"))

    @property
    def finalizers(self) -> list[str]:
        return strings(self.metadata.get("finalizers"))

    @property
    def owner_references(self) -> list[dict[str, Any]]:
        return mappings(self.metadata.get("ownerReferences"))

    def controller_owner(self, kind: str) -> dict[str, Any] | None:
        for ref in self.owner_references:
            if ref.get("controller") is True and ref.get("kind") == kind:
                return ref
        return None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    @property
    def ref(self) -> str:
        """``namespace/name`` or ``name``, as kubectl prints it."""
        return f"{self.namespace}/{self.name}" if self.namespaced else self.name

    def __repr__(self) -> str:
        return f"<{self.kind} {self.ref}>"


# --- core objects ------------------------------------------------------------------------


class Namespace(Resource):
    kind = "Namespace"
    namespaced = False


class PriorityClass(Resource):
    kind = "PriorityClass"
    namespaced = False

    @property
    def value(self) -> int:
        return number(self.raw.get("value"))


class Node(Resource):
    kind = "Node"
    namespaced = False

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.slices: list[ResourceSlice] = []  # slices whose devices this node can reach
        self.pods: list[Pod] = []

    @property
    def taints(self) -> list[dict[str, Any]]:
        return mappings(self.spec.get("taints"))

    @property
    def unschedulable(self) -> bool:
        return self.spec.get("unschedulable") is True

    @property
    def conditions(self) -> list[dict[str, Any]]:
        return mappings(self.status.get("conditions"))

    @property
    def ready(self) -> bool | None:
        for c in self.conditions:
            if c.get("type") == "Ready":
                return c.get("status") == "True"
        return None

    @property
    def local_devices(self) -> list[Device]:
        return [d for s in self.slices if s.node_name == self.name for d in s.devices]


@dataclass
class Container:
    name: str
    init: bool
    image: str
    claims: list[tuple[str, str]]  # (pod claim name, request name or "")
    status: dict[str, Any]
    sidecar: bool = False

    @property
    def state(self) -> tuple[str, dict[str, Any]]:
        """("running" | "waiting" | "terminated" | "", details) of the current state."""
        for name, details in mapping(self.status.get("state")).items():
            if isinstance(details, dict):
                return name, details
        return "", {}

    @property
    def last_state(self) -> tuple[str, dict[str, Any]]:
        for name, details in mapping(self.status.get("lastState")).items():
            if isinstance(details, dict):
                return name, details
        return "", {}

    @property
    def ready(self) -> bool:
        return self.status.get("ready") is True

    @property
    def restart_count(self) -> int:
        return number(self.status.get("restartCount"))


@dataclass
class PodClaimRef:
    """One entry of a Pod's spec.resourceClaims (or its extended-resource claim), resolved.

    ``status`` says how the reference resolved:
    ``ok`` · ``claim-missing`` (the named claim does not exist) · ``template-missing`` ·
    ``not-created`` (template exists, no claim generated yet) · ``not-owned`` (the generated claim
    belongs to another Pod) · ``not-needed`` (the controller decided no claim is needed) ·
    ``invalid`` (neither resourceClaimName nor resourceClaimTemplateName) ·
    ``implicit`` (extended resources of a Pod not yet bound: the scheduler creates their claim
    when it binds the Pod; ``claim`` is the one it allocates, in memory until then).
    """

    pod: Pod
    name: str
    source: str  # "claim" | "template" | "extended-resource"
    claim_name: str = ""  # the claim the Pod uses, once known
    template_name: str = ""
    status: str = "ok"
    claim: ResourceClaim | None = None
    template: ResourceClaimTemplate | None = None
    containers: list[tuple[str, str]] = field(default_factory=list)  # (container, request)
    group_ref: GroupClaimRef | None = None  # the PodGroup's claim this entry matches (KEP-5729)


class Pod(Resource):
    kind = "Pod"

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.claim_refs: list[PodClaimRef] = []
        self.node: Node | None = None
        self.job: Job | None = None
        self.group: PodGroup | None = None  # the PodGroup of spec.schedulingGroup, when it exists
        # Its extended resources that a DeviceClass maps (dradash.dra.extended.PodResources),
        # set by ClusterState where the DRAExtendedResource feature is on.
        self.extended: Any = None
        # Its containers' allocatedResourcesStatus entries for claims, resolved by ClusterState.
        self.health: list[HealthReport] = []

    @property
    def phase(self) -> str:
        return text(self.status.get("phase")) or "Unknown"

    @property
    def finished(self) -> bool:
        """Succeeded or Failed: the Pod never runs again."""
        return self.phase in TERMINAL_PHASES

    @property
    def node_name(self) -> str:
        return text(self.spec.get("nodeName"))

    @property
    def conditions(self) -> list[dict[str, Any]]:
        return mappings(self.status.get("conditions"))

    def condition(self, type_: str) -> dict[str, Any] | None:
        for c in self.conditions:
            if c.get("type") == type_:
                return c
        return None

    @property
    def scheduling_gates(self) -> list[str]:
        return [text(g.get("name")) for g in mappings(self.spec.get("schedulingGates"))]

    @property
    def priority_class_name(self) -> str:
        return text(self.spec.get("priorityClassName"))

    @property
    def priority(self) -> int:
        return number(self.spec.get("priority"))

    @property
    def resource_claims(self) -> list[dict[str, Any]]:
        return mappings(self.spec.get("resourceClaims"))

    @property
    def group_name(self) -> str:
        """spec.schedulingGroup.podGroupName (1.36 on): the PodGroup it is scheduled with."""
        return text(dig(self.spec, "schedulingGroup", "podGroupName"))

    @property
    def extended_resource_claim(self) -> dict[str, Any]:
        return mapping(self.status.get("extendedResourceClaimStatus"))

    @property
    def uses_dra(self) -> bool:
        """spec.resourceClaims, a claim for its extended resources, or extended resources a
        DeviceClass maps: a DRA Pod from its creation (DESIGN "Kubernetes 1.37 workloads")."""
        return bool(self.resource_claims or self.extended_resource_claim or self.extended)

    @cached_property
    def containers(self) -> list[Container]:
        statuses: dict[tuple[bool, str], dict[str, Any]] = {}
        for init, field_name in ((True, "initContainerStatuses"), (False, "containerStatuses")):
            for s in mappings(self.status.get(field_name)):
                statuses[(init, text(s.get("name")))] = s
        out = []
        for init, field_name in ((True, "initContainers"), (False, "containers")):
            for c in mappings(self.spec.get(field_name)):
                name = text(c.get("name"))
                claims = [
                    (text(r.get("name")), text(r.get("request")))
                    for r in mappings(dig(c, "resources", "claims"))
                ]
                out.append(
                    Container(
                        name=name,
                        init=init,
                        image=text(c.get("image")),
                        claims=claims,
                        status=statuses.get((init, name), {}),
                        sidecar=init and c.get("restartPolicy") == "Always",
                    )
                )
        return out

    @property
    def claims(self) -> list[ResourceClaim]:
        return [r.claim for r in self.claim_refs if r.claim is not None]

    def raw_health(self) -> list[HealthReport]:
        """Its containers' (init ones too) allocatedResourcesStatus entries of claims
        (``claim:<name>`` or ``claim:<name>/<request>``), unresolved."""
        out = []
        for init, field_name in ((True, "initContainerStatuses"), (False, "containerStatuses")):
            for status in mappings(self.status.get(field_name)):
                for entry in mappings(status.get("allocatedResourcesStatus")):
                    resource = text(entry.get("name"))
                    if not resource.startswith("claim:"):
                        continue  # a device plugin's resource
                    pod_claim, _, req = resource.removeprefix("claim:").partition("/")
                    for r in mappings(entry.get("resources")):
                        health = text(r.get("health"))
                        out.append(
                            HealthReport(
                                pod=self,
                                container=text(status.get("name")),
                                init=init,
                                resource=resource,
                                resource_id=text(r.get("resourceID")),
                                health=health if health in HEALTH_STATES else "Unknown",
                                message=text(r.get("message")),
                                pod_claim=pod_claim,
                                request=req,
                            )
                        )
        return out


class Job(Resource):
    kind = "Job"

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.pods: list[Pod] = []

    @property
    def parallelism(self) -> int:
        return number(self.spec.get("parallelism"), 1)

    @property
    def completions(self) -> int | None:
        value = self.spec.get("completions")
        return number(value) if value is not None else None


class Event(Resource):
    """A core/v1 or events.k8s.io/v1 Event, read the same way."""

    kind = "Event"

    @property
    def involved(self) -> dict[str, Any]:
        return mapping(self.raw.get("involvedObject") or self.raw.get("regarding"))

    @property
    def involved_key(self) -> tuple[str, str, str]:
        obj = self.involved
        kind = text(obj.get("kind"))
        namespace = text(obj.get("namespace"))
        if kind in ("Node", "ResourceSlice", "DeviceClass", "Namespace"):
            namespace = ""
        return (kind, namespace, text(obj.get("name")))

    @property
    def involved_uid(self) -> str:
        return text(self.involved.get("uid"))

    @property
    def type(self) -> str:
        return text(self.raw.get("type"))

    @property
    def reason(self) -> str:
        return text(self.raw.get("reason"))

    @property
    def message(self) -> str:
        return text(self.raw.get("message") or self.raw.get("note"))

    @property
    def count(self) -> int:
        series = mapping(self.raw.get("series"))
        return number(
            self.raw.get("count") or series.get("count") or self.raw.get("deprecatedCount"), 1
        )

    @property
    def last_seen(self) -> str:
        series = mapping(self.raw.get("series"))
        return text(
            series.get("lastObservedTime")
            or self.raw.get("lastTimestamp")
            or self.raw.get("eventTime")
            or self.raw.get("firstTimestamp")
            or self.created
        )

    @property
    def source(self) -> str:
        return text(
            dig(self.raw, "source", "component")
            or self.raw.get("reportingController")
            or self.raw.get("reportingComponent")
        )


# --- resource.k8s.io ---------------------------------------------------------------------


@dataclass
class DeviceRequestSpec:
    """What one request (or firstAvailable subrequest) asks for."""

    device_class_name: str
    selectors: list[str | None]  # CEL expressions; None for a selector without one
    allocation_mode: str
    count: int
    admin_access: bool
    tolerations: list[dict[str, Any]]
    capacity: dict[str, Any]

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> DeviceRequestSpec:
        mode = text(raw.get("allocationMode")) or "ExactCount"
        return cls(
            device_class_name=text(raw.get("deviceClassName")),
            selectors=[
                expr if isinstance(expr := dig(s, "cel", "expression"), str) else None
                for s in items(raw.get("selectors"))
            ],
            allocation_mode=mode,
            count=number(raw.get("count"), 1) if mode == "ExactCount" else 0,
            admin_access=raw.get("adminAccess") is True,
            tolerations=mappings(raw.get("tolerations")),
            capacity=mapping(dig(raw, "capacity", "requests")),
        )


@dataclass
class Request:
    name: str
    exactly: DeviceRequestSpec | None
    first_available: list[tuple[str, DeviceRequestSpec]]  # (subrequest name, spec)

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> Request:
        exactly = raw.get("exactly")
        return cls(
            name=text(raw.get("name")),
            exactly=DeviceRequestSpec.parse(exactly) if isinstance(exactly, dict) else None,
            first_available=[
                (text(sub.get("name")), DeviceRequestSpec.parse(sub))
                for sub in mappings(raw.get("firstAvailable"))
            ],
        )

    @property
    def alternatives(self) -> list[tuple[str, DeviceRequestSpec]]:
        """(request name as allocation results spell it, spec), in the allocator's order."""
        if self.exactly is not None:
            return [(self.name, self.exactly)]
        return [(f"{self.name}/{sub}", spec) for sub, spec in self.first_available]

    @property
    def class_names(self) -> list[str]:
        return [spec.device_class_name for _, spec in self.alternatives if spec.device_class_name]


def parse_requests(claim_spec: dict[str, Any]) -> list[Request]:
    return [Request.parse(r) for r in mappings(dig(claim_spec, "devices", "requests"))]


@dataclass
class AllocationResult:
    claim: ResourceClaim
    request: str
    driver: str
    pool: str
    device_name: str
    raw: dict[str, Any]
    device: Device | None = None  # resolved against the snapshot's current pools
    device_status: dict[str, Any] | None = None  # the matching entry of claim.status.devices

    @property
    def admin_access(self) -> bool:
        return self.raw.get("adminAccess") is True

    @property
    def share_id(self) -> str:
        return text(self.raw.get("shareID"))

    @property
    def binding_conditions(self) -> list[str]:
        return strings(self.raw.get("bindingConditions"))

    @property
    def binding_failure_conditions(self) -> list[str]:
        return strings(self.raw.get("bindingFailureConditions"))

    @property
    def tolerations(self) -> list[dict[str, Any]]:
        """The request's tolerations as copied into the result at allocation: what the device
        taint eviction controller reads."""
        return mappings(self.raw.get("tolerations"))

    @property
    def status_conditions(self) -> dict[str, dict[str, Any]]:
        """The conditions of the matching status.devices entry, by type."""
        return {
            text(c.get("type")): c
            for c in mappings((self.device_status or {}).get("conditions"))
            if text(c.get("type"))
        }

    @property
    def device_key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool, self.device_name)


@dataclass
class Consumer:
    """An entry of a claim's status.reservedFor."""

    resource: str
    name: str
    uid: str
    pod: Pod | None = None
    group: PodGroup | None = None  # a PodGroup the claim is reserved for (KEP-5729)

    @property
    def for_group(self) -> bool:
        return self.resource == "podgroups"


class ResourceClaim(Resource):
    kind = "ResourceClaim"

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.requests = parse_requests(self.spec)
        self.results: list[AllocationResult] = [
            AllocationResult(
                claim=self,
                request=text(r.get("request")),
                driver=text(r.get("driver")),
                pool=text(r.get("pool")),
                device_name=text(r.get("device")),
                raw=r,
            )
            for r in mappings(dig(self.status, "allocation", "devices", "results"))
        ]
        self.consumers = [
            Consumer(
                resource=text(c.get("resource")), name=text(c.get("name")), uid=text(c.get("uid"))
            )
            for c in mappings(self.status.get("reservedFor"))
        ]
        self.owner_pod: Pod | None = None  # the Pod whose template generated this claim
        self.owner_group: PodGroup | None = None  # the PodGroup whose template generated it
        # The claim the scheduler keeps in memory for a Pod's extended resources until it
        # binds the Pod (dradash.dra.extended.in_memory_claim): no such object exists yet.
        self.implicit = False
        self.template: ResourceClaimTemplate | None = None
        self.pods: list[Pod] = []  # Pods whose spec references this claim

    @property
    def allocation(self) -> dict[str, Any] | None:
        allocation = self.status.get("allocation")
        return allocation if isinstance(allocation, dict) else None

    @property
    def allocated(self) -> bool:
        return self.allocation is not None

    @property
    def reserved(self) -> bool:
        return bool(self.consumers)

    def reserved_for(self, pod: Pod) -> bool:
        """Whether status.reservedFor lets this Pod use the claim: it names the Pod, or the
        PodGroup the Pod is scheduled with (KEP-5729: the name alone must match)."""
        return any(
            c.pod is pod or (c.for_group and pod.group_name and c.name == pod.group_name)
            for c in self.consumers
        )

    @property
    def allocation_timestamp(self) -> str:
        """status.allocation.allocationTimestamp (binding conditions' clock); "" if unset."""
        return text((self.allocation or {}).get("allocationTimestamp"))

    @property
    def allocation_node_selector(self) -> dict[str, Any] | None:
        selector = (self.allocation or {}).get("nodeSelector")
        return selector if isinstance(selector, dict) else None

    @property
    def state(self) -> str:
        """``deleting`` · ``reserved`` (allocated and in use) · ``allocated`` · ``pending``."""
        if self.deleting:
            return "deleting"
        if self.allocated:
            return "reserved" if self.reserved else "allocated"
        return "pending"

    @property
    def pod_claim_name(self) -> str:
        return self.annotations.get(POD_CLAIM_NAME_ANNOTATION, "")

    @property
    def constraints(self) -> list[dict[str, Any]]:
        return mappings(dig(self.spec, "devices", "constraints"))

    @property
    def config(self) -> list[dict[str, Any]]:
        return mappings(dig(self.spec, "devices", "config"))

    @property
    def device_statuses(self) -> list[dict[str, Any]]:
        return mappings(self.status.get("devices"))

    @property
    def class_names(self) -> list[str]:
        return list(dict.fromkeys(c for r in self.requests for c in r.class_names))


class ResourceClaimTemplate(Resource):
    kind = "ResourceClaimTemplate"

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.requests = parse_requests(self.claim_spec)
        self.claims: list[ResourceClaim] = []  # claims generated from it
        self.pods: list[Pod] = []

    @property
    def claim_spec(self) -> dict[str, Any]:
        return mapping(self.spec.get("spec"))

    @property
    def constraints(self) -> list[dict[str, Any]]:
        return mappings(dig(self.claim_spec, "devices", "constraints"))

    @property
    def class_names(self) -> list[str]:
        return list(dict.fromkeys(c for r in self.requests for c in r.class_names))


class DeviceClass(Resource):
    kind = "DeviceClass"
    namespaced = False

    @property
    def selectors(self) -> list[str | None]:
        return [
            expr if isinstance(expr := dig(s, "cel", "expression"), str) else None
            for s in items(self.spec.get("selectors"))
        ]

    @property
    def extended_resource_name(self) -> str:
        return text(self.spec.get("extendedResourceName"))


class DeviceTaintRule(Resource):
    kind = "DeviceTaintRule"
    namespaced = False

    @property
    def selector(self) -> dict[str, Any]:
        return mapping(self.spec.get("deviceSelector"))

    @property
    def taint(self) -> dict[str, Any]:
        return mapping(self.spec.get("taint"))

    @property
    def effect(self) -> str:
        """NoSchedule · NoExecute · None (a preview: no effect on scheduling or eviction)."""
        return text(self.taint.get("effect"))

    @property
    def conditions(self) -> list[dict[str, Any]]:
        return mappings(self.status.get("conditions"))

    @property
    def eviction_condition(self) -> dict[str, Any] | None:
        """status.conditions[EvictionInProgress] (KEP-5055): True while Pods must be evicted;
        for effect None set once per spec change with what NoExecute would do."""
        for c in self.conditions:
            if c.get("type") == "EvictionInProgress":
                return c
        return None

    def selects(self, device: Device) -> bool:
        sel = self.selector
        for field_name, value in (
            ("driver", device.driver),
            ("pool", device.pool_name),
            ("device", device.name),
        ):
            wanted = text(sel.get(field_name))
            if wanted and wanted != value:
                return False
        return True


class ResourceSlice(Resource):
    kind = "ResourceSlice"
    namespaced = False

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.devices = [Device(self, d) for d in mappings(self.spec.get("devices"))]
        self.pool: Pool | None = None

    @cached_property
    def driver(self) -> str:
        return text(self.spec.get("driver"))

    @cached_property
    def pool_name(self) -> str:
        return text(dig(self.spec, "pool", "name"))

    @cached_property
    def generation(self) -> int:
        return number(dig(self.spec, "pool", "generation"))

    @cached_property
    def resource_slice_count(self) -> int:
        return number(dig(self.spec, "pool", "resourceSliceCount"), 1)

    @cached_property
    def node_name(self) -> str:
        return text(self.spec.get("nodeName"))

    @property
    def node_selector(self) -> dict[str, Any] | None:
        selector = self.spec.get("nodeSelector")
        return selector if isinstance(selector, dict) else None

    @property
    def all_nodes(self) -> bool:
        return self.spec.get("allNodes") is True

    @property
    def per_device_node_selection(self) -> bool:
        return self.spec.get("perDeviceNodeSelection") is True

    @property
    def node_access(self) -> str:
        """How the slice says which nodes reach its devices."""
        if self.node_name:
            return "node"
        if self.all_nodes:
            return "all-nodes"
        if self.node_selector is not None:
            return "node-selector"
        if self.per_device_node_selection:
            return "per-device"
        return "none"

    @property
    def shared_counters(self) -> list[dict[str, Any]]:
        return mappings(self.spec.get("sharedCounters"))

    @property
    def current(self) -> bool:
        """False for a slice of an older pool generation, which the allocator ignores."""
        return self.pool is not None and self.generation == self.pool.generation


class Device:
    __slots__ = ("slice", "raw", "allocations", "rule_taints", "health")

    def __init__(self, slice_: ResourceSlice, raw: dict[str, Any]) -> None:
        self.slice = slice_
        self.raw = raw
        self.allocations: list[AllocationResult] = []
        self.rule_taints: list[tuple[DeviceTaintRule, dict[str, Any]]] = []
        # What the kubelet reports of it in the Pods using it (allocatedResourcesStatus).
        self.health: list[HealthReport] = []

    @property
    def name(self) -> str:
        return text(self.raw.get("name"))

    @property
    def driver(self) -> str:
        return self.slice.driver

    @property
    def pool_name(self) -> str:
        return self.slice.pool_name

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool_name, self.name)

    @property
    def attributes(self) -> dict[str, dict[str, Any]]:
        """Attributes as published: {name: {"int"|"bool"|"string"|"version"|…: value}}. The
        published map itself where every value is a map (as always from the API server):
        read it, do not change it."""
        return _maps(self.raw.get("attributes"))

    @property
    def capacity(self) -> dict[str, dict[str, Any]]:
        return _maps(self.raw.get("capacity"))

    @property
    def taints(self) -> list[dict[str, Any]]:
        """Taints on the device itself plus those DeviceTaintRules add."""
        return mappings(self.raw.get("taints")) + [t for _, t in self.rule_taints]

    @property
    def taint_sources(self) -> list[TaintSource]:
        """Its taints with the object that put each there: the ResourceSlice (the driver) or
        a DeviceTaintRule."""
        return [
            TaintSource(t, "ResourceSlice", self.slice.name, None)
            for t in mappings(self.raw.get("taints"))
        ] + [TaintSource(t, "DeviceTaintRule", rule.name, rule) for rule, t in self.rule_taints]

    @property
    def node_name(self) -> str:
        return text(self.raw.get("nodeName")) or self.slice.node_name

    @property
    def allow_multiple_allocations(self) -> bool:
        return self.raw.get("allowMultipleAllocations") is True

    @property
    def binding_conditions(self) -> list[str]:
        return strings(self.raw.get("bindingConditions"))

    @property
    def consumes_counters(self) -> list[dict[str, Any]]:
        return mappings(self.raw.get("consumesCounters"))

    @property
    def allocated(self) -> bool:
        """Allocated to a claim in a way that blocks other claims (admin access does not)."""
        return any(not a.admin_access for a in self.allocations)

    def __repr__(self) -> str:
        return f"<Device {'/'.join(self.key)}>"


def _maps(value: Any) -> dict[str, dict[str, Any]]:
    """The entries of a map whose values are maps: the map itself where all are (a device's
    attributes are kept once per snapshot, not copied per reader: issue 28)."""
    found = mapping(value)
    if all(type(v) is dict for v in found.values()):
        return found
    return {k: v for k, v in found.items() if isinstance(v, dict)}


@dataclass
class TaintSource:
    """One taint of a device and where it comes from."""

    taint: dict[str, Any]
    kind: str  # "ResourceSlice" (the driver's own) | "DeviceTaintRule"
    name: str  # the slice's or the rule's name
    rule: DeviceTaintRule | None = None

    @property
    def effect(self) -> str:
        return text(self.taint.get("effect"))

    @property
    def time_added(self) -> str:
        return text(self.taint.get("timeAdded"))

    @property
    def spelled(self) -> str:
        """key=value:effect, as kubectl prints a node taint."""
        key, value = text(self.taint.get("key")), text(self.taint.get("value"))
        return f"{key}={value}:{self.effect}" if value else f"{key}:{self.effect}"

    def as_dict(self) -> dict[str, Any]:
        """{"key", "value", "effect", "time_added", "source_kind", "source_name"}."""
        return {
            "key": text(self.taint.get("key")),
            "value": text(self.taint.get("value")),
            "effect": self.effect,
            "time_added": self.time_added,
            "source_kind": self.kind,
            "source_name": self.name,
        }


@dataclass
class HealthReport:
    """One entry of a container's status.allocatedResourcesStatus[].resources (KEP-4680).

    ``resource`` is the entry's name, ``claim:<pod claim name>[/<request>]``; ``resource_id``
    is ``<driver>/<pool>/<device>`` or, where the driver gave CDI device IDs, the first of
    them (kubelet buildResourceHealth). ``device`` and ``claim`` are resolved by ClusterState:
    by the resource ID where it names a device of the claim, else by the request where the
    claim holds exactly one device for it; None where neither tells.
    """

    pod: Pod
    container: str
    init: bool
    resource: str
    resource_id: str
    health: str  # Healthy | Unhealthy | Unknown (anything else is read as Unknown)
    message: str = ""
    pod_claim: str = ""  # the spec.resourceClaims name of the entry
    request: str = ""
    claim: ResourceClaim | None = None
    result: AllocationResult | None = None
    device: Device | None = None

    @property
    def device_key(self) -> tuple[str, str, str] | None:
        if self.result is not None:
            return self.result.device_key
        return parse_resource_id(self.resource_id)

    @property
    def device_name(self) -> str:
        """driver/pool/device where known, else the resource ID as reported."""
        key = self.device_key
        return "/".join(key) if key else self.resource_id

    def as_dict(self) -> dict[str, Any]:
        """{"health", "message", "pod": "ns/name", "container", "init", "resource",
        "resource_id", "claim": "ns/name" | None}."""
        return {
            "health": self.health,
            "message": self.message,
            "pod": self.pod.ref,
            "container": self.container,
            "init": self.init,
            "resource": self.resource,
            "resource_id": self.resource_id,
            "claim": self.claim.ref if self.claim is not None else None,
        }


HEALTH_STATES = ("Healthy", "Unhealthy", "Unknown")


def parse_resource_id(resource_id: str) -> tuple[str, str, str] | None:
    """``<driver>/<pool>/<device>`` split as the kubelet joins it (a pool name may hold "/");
    None for anything else (a CDI device ID such as ``vendor.com/class=name``)."""
    driver, _, rest = resource_id.partition("/")
    pool, _, device = rest.rpartition("/")
    if not driver or not pool or not device or "=" in resource_id:
        return None
    return (driver, pool, device)


@dataclass
class Pool:
    """A (driver, pool name) as the allocator gathers it from ResourceSlices."""

    driver: str
    name: str
    generation: int
    resource_slice_count: int = 1
    slices: list[ResourceSlice] = field(default_factory=list)  # of the current generation
    stale_slices: list[ResourceSlice] = field(default_factory=list)
    duplicate_devices: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return len(self.slices) == self.resource_slice_count

    @property
    def valid(self) -> bool:
        return not self.duplicate_devices

    @property
    def devices(self) -> list[Device]:
        return [d for s in self.slices for d in s.devices]

    @property
    def node_names(self) -> list[str]:
        return sorted({s.node_name for s in self.slices if s.node_name})

    @property
    def key(self) -> tuple[str, str]:
        return (self.driver, self.name)


class Workload(Resource):
    """scheduling.k8s.io Workload: the templates its PodGroups are made from."""

    kind = "Workload"

    @property
    def templates(self) -> list[dict[str, Any]]:
        """spec.podGroupTemplates (v1alpha2 on), or v1alpha1's inline spec.podGroups."""
        return mappings(self.spec.get("podGroupTemplates") or self.spec.get("podGroups"))

    @property
    def controller(self) -> str:
        """spec.controllerRef as "Kind name" ("" without one)."""
        ref = mapping(self.spec.get("controllerRef"))
        return f"{text(ref.get('kind'))} {text(ref.get('name'))}".strip()


@dataclass
class GroupClaimRef:
    """One entry of a PodGroup's spec.resourceClaims, resolved (statuses as PodClaimRef's)."""

    name: str
    source: str  # "claim" | "template"
    claim_name: str = ""
    template_name: str = ""
    status: str = "ok"
    claim: ResourceClaim | None = None
    template: ResourceClaimTemplate | None = None
    raw: dict[str, Any] = field(default_factory=dict)


# PodGroupScheduled (1.36, v1alpha2) became PodGroupInitiallyScheduled (1.37, v1beta1).
GROUP_SCHEDULED_CONDITIONS = ("PodGroupInitiallyScheduled", "PodGroupScheduled")


class PodGroup(Resource):
    """scheduling.k8s.io PodGroup: Pods scheduled together (a gang) and the claims they share."""

    kind = "PodGroup"

    def __init__(self, raw: dict[str, Any], api_version: str = "") -> None:
        super().__init__(raw, api_version)
        self.pods: list[Pod] = []  # Pods whose spec.schedulingGroup names it, by name
        self.claim_refs: list[GroupClaimRef] = []
        self.workload: Workload | None = None

    @property
    def policy(self) -> str:
        """``gang`` · ``basic`` · "" (neither: an invalid or unknown policy)."""
        policy = mapping(self.spec.get("schedulingPolicy"))
        return "gang" if "gang" in policy else "basic" if "basic" in policy else ""

    @property
    def min_count(self) -> int | None:
        """A gang's minCount; None for a basic group or one without it."""
        gang = mapping(dig(self.spec, "schedulingPolicy", "gang"))
        return number(gang.get("minCount"), 0) or None if "minCount" in gang else None

    @property
    def template_ref(self) -> tuple[str, str]:
        """(workload, template): v1beta1's spec.workloadRef, v1alpha2's podGroupTemplateRef."""
        ref = mapping(self.spec.get("workloadRef"))
        if ref:
            return text(ref.get("workloadName")), text(ref.get("templateName"))
        ref = mapping(dig(self.spec, "podGroupTemplateRef", "workload"))
        return text(ref.get("workloadName")), text(ref.get("podGroupTemplateName"))

    @property
    def resource_claims(self) -> list[dict[str, Any]]:
        return mappings(self.spec.get("resourceClaims"))

    @property
    def conditions(self) -> list[dict[str, Any]]:
        return mappings(self.status.get("conditions"))

    @property
    def scheduled_condition(self) -> dict[str, Any] | None:
        """PodGroupInitiallyScheduled (1.37) or PodGroupScheduled (1.36), whichever it has."""
        found = {text(c.get("type")): c for c in self.conditions}
        return next((found[t] for t in GROUP_SCHEDULED_CONDITIONS if t in found), None)

    @property
    def scheduled(self) -> bool:
        condition = self.scheduled_condition
        return condition is not None and condition.get("status") == "True"

    @property
    def claims(self) -> list[ResourceClaim]:
        return [r.claim for r in self.claim_refs if r.claim is not None]
