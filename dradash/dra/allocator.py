"""Kubernetes' structured allocator, simulated on one snapshot, and why it decides as it does.

``Allocator.allocate(node, claims)`` is a port of the per-node ``Allocate`` of
``k8s.io/dynamic-resource-allocation/structured``: the ``incubating`` implementation of v0.36.x
(what 1.35+ schedulers run; ``experimental`` differs only for list-typed attributes), with the
1.34 pool rules of ``experimental``/``incubating`` v0.34.x when ``Features.skip_incomplete_pools``
is off. Function names in comments are upstream's. Candidates are tried in the 1.36 order
(pools by driver and pool name, slices by name, devices as listed); 1.34 and 1.35 iterate a Go
map, so their order is unspecified and ours is one of the orders they may use.

``explain(state, claims, pod=…)`` runs it the way the scheduler's DynamicResources plugin does:
PreFilter (device classes, the prioritized-list gate), then Filter on every node the Pod may use,
where any allocator error aborts scheduling of the Pod. It adds a funnel per request: how many
devices are left after each of ``STEPS`` and, per device, the first step it fails.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_UP
from functools import cached_property
from typing import Any

from dradash.dra.cel import CelCompileError, Selector, compile_selector, evaluate_devices
from dradash.dra.cel.device import DeviceInput, conversion_error
from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.fields import dig, items, mapping, mappings, number, strings, text
from dradash.dra.gc import gc_paused
from dradash.dra.matching import device_input, device_table
from dradash.dra.nodes import node_selector_matches
from dradash.dra.objects import Device, DeviceClass, Node, Pod, ResourceClaim, ResourceSlice
from dradash.dra.state import ClusterState

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize

STEPS = (
    "class",
    "driver",
    "class-selectors",
    "request-selectors",
    "pools",
    "nodes",
    "free",
    "taints",
    "constraints",
    "count",
)

STEP_REASONS = {
    "class": "class-missing",
    "driver": "no-slices",
    "class-selectors": "no-matching-devices",
    "request-selectors": "no-matching-devices",
    "pools": "pool-incomplete",
    "nodes": "devices-unreachable",
    "free": "devices-exhausted",
    "taints": "devices-tainted",
    "constraints": "constraint-unsatisfiable",
    "count": "insufficient-count",
}


# --- features ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Features:
    """What the cluster's version enables (dra-reference §4.6); defaults are Kubernetes 1.36's."""

    prioritized_list: bool = True
    admin_access: bool = True
    device_taints: bool = True  # also decides whether DeviceTaintRules apply
    partitionable_devices: bool = True
    consumable_capacity: bool = True
    binding_conditions: bool = True  # DRADeviceBindingConditions + DRAResourceClaimDeviceStatus
    list_type_attributes: bool = False  # DRAListTypeAttributes (alpha): the experimental allocator
    # 1.35+: incomplete and invalid pools are skipped for ExactCount; 1.34 uses incomplete pools
    # and stops with an error at an invalid one. Off, it selects the v0.34 allocator as a whole:
    # its GatherPools, and results without the request's tolerations.
    skip_incomplete_pools: bool = True

    @property
    def implementation(self) -> str:
        """Which of upstream's allocators NewAllocator picks (v0.36): the first whose supported
        features cover the enabled ones. ``stable`` knows neither consumable capacity nor
        binding conditions: it ignores capacity requests and refuses distinctAttribute."""
        if not self.skip_incomplete_pools:
            return "incubating"  # the v0.34 rules (experimental/incubating of 1.34)
        if self.list_type_attributes:
            return "experimental"
        if self.consumable_capacity or self.binding_conditions:
            return "incubating"
        return "stable"

    @classmethod
    def for_version(cls, server_version: str) -> Features:
        """The default feature gates of a Kubernetes version ("v1.34.2"); "" means 1.36."""
        match = re.match(r"\s*v?(\d+)\.(\d+)", server_version or "")
        if not match or int(match.group(1)) != 1 or int(match.group(2)) >= 36:
            return cls()
        minor = int(match.group(2))
        return cls(
            prioritized_list=minor >= 34,  # beta (on) in 1.34, alpha before
            admin_access=minor >= 34,
            device_taints=False,  # alpha until 1.36
            partitionable_devices=False,
            consumable_capacity=False,
            binding_conditions=False,
            skip_incomplete_pools=minor >= 35,
        )


# --- public results ------------------------------------------------------------------------


@dataclass(slots=True)
class DeviceCheck:
    driver: str
    pool: str
    device: str
    failed_step: str | None  # the first STEPS entry the device fails, None if it passes all
    detail: str = ""


@dataclass
class RequestExplanation:
    name: str  # "req", or "req/sub" for a firstAvailable subrequest
    funnel: list[tuple[str, int]]  # (step, devices remaining after it), in STEPS order
    devices: list[DeviceCheck]
    empty_step: str | None  # first step where remaining hit 0
    error: str | None = None  # an allocator error raised for this request
    node: str | None = None  # the node whose numbers the per-node steps show


@dataclass
class Explanation:
    allocatable: bool | None  # None exactly when the allocator would stop with an error
    error: str | None
    node: str | None  # a node where the claims allocate now (the first by name)
    requests: list[RequestExplanation]
    results: list[tuple[str, str, str, str]] = field(default_factory=list)
    reason: str | None = None
    # One AllocationResult (as status.allocation would hold it) per claim allocated.
    allocations: list[dict[str, Any]] = field(default_factory=list)
    # The scheduler's per-node status when nothing fits ("cannot allocate all claims", …).
    message: str | None = None
    searched_nodes: int = 0  # nodes the allocator ran on

    @cached_property
    def first_detail(self) -> str:
        """The detail of the first device check that failed with one (for summaries)."""
        return next(
            (d.detail for r in self.requests for d in r.devices if d.failed_step and d.detail), ""
        )


@dataclass
class Allocation:
    """What ``Allocate`` returns for one node."""

    allocations: list[dict[str, Any]] | None  # one per claim; None when they do not fit
    error: str | None = None
    # True for errors wrapping ErrFailedAllocationOnNode: only this node is unusable.
    node_error: bool = False
    calls: int = 0  # allocateOne invocations (upstream's Stats.NumAllocateOneInvocations)
    failed_request: tuple[int, int, int] | None = None  # (claim, request, subrequest) of error


# --- Pods and nodes ------------------------------------------------------------------------

NO_SCHEDULE, NO_EXECUTE = "NoSchedule", "NoExecute"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": NO_SCHEDULE}


def tolerates(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Toleration.ToleratesTaint (core/v1) and resourceclaim.ToleratesTaint (devices): empty
    effect matches every effect, empty key (with Exists) every key, Exists every value."""
    effect = text(toleration.get("effect"))
    if effect and effect != text(taint.get("effect")):
        return False
    key = text(toleration.get("key"))
    if key and key != text(taint.get("key")):
        return False
    operator = text(toleration.get("operator"))
    if operator in ("", "Equal"):
        return text(toleration.get("value")) == text(taint.get("value"))
    return operator == "Exists"


def _tolerated(tolerations: Iterable[dict[str, Any]], taint: dict[str, Any]) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def pod_node_problem(pod: Pod, node: Node) -> str | None:
    """Why the scheduler's node filters reject the node for the Pod, or None.

    In the order of the default profile: NodeUnschedulable, NodeName, TaintToleration,
    NodeAffinity (nodeSelector and required node affinity).
    """
    spec = pod.spec
    tolerations = mappings(spec.get("tolerations"))
    if node.unschedulable and not _tolerated(tolerations, UNSCHEDULABLE_TAINT):
        return "node(s) were unschedulable"
    if pod.node_name and pod.node_name != node.name:
        return "node(s) didn't match the requested node name"
    for taint in node.taints:
        if text(taint.get("effect")) in (NO_SCHEDULE, NO_EXECUTE) and not _tolerated(
            tolerations, taint
        ):
            return (
                f"node(s) had untolerated taint {{{text(taint.get('key'))}: "
                f"{text(taint.get('value'))}}}"
            )
    labels = node.labels
    selector = mapping(spec.get("nodeSelector"))
    required = dig(
        spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if any(labels.get(k) != v for k, v in selector.items()) or (
        isinstance(required, dict) and not node_selector_matches(required, node.name, labels)
    ):
        return "node(s) didn't match Pod's node affinity/selector"
    return None


def _slice_reaches(node: Node, s: ResourceSlice) -> bool | None:
    """Whether the slice's devices are available on the node (its nodeName, allNodes or
    nodeSelector, or each device's under perDeviceNodeSelection); None for a slice that says
    none of these (a future extension the allocator skips)."""
    spec = s.spec
    if (
        text(spec.get("nodeName"))
        or spec.get("allNodes") is True
        or spec.get("nodeSelector") is not None
    ):
        return _node_matches(
            node, text(spec.get("nodeName")), spec.get("allNodes") is True, spec.get("nodeSelector")
        )
    if spec.get("perDeviceNodeSelection") is True:
        return any(
            _node_matches(
                node,
                text(d.raw.get("nodeName")),
                d.raw.get("allNodes") is True,
                d.raw.get("nodeSelector"),
            )
            for d in s.devices
        )
    return None


def _node_matches(node: Node, node_name: str, all_nodes: bool, selector: Any) -> bool:
    """NodeMatches in pools_incubating.go."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node.name, node.labels)
    return False


def _allocation_allows(claim: ResourceClaim, node: Node) -> bool:
    """An allocated claim's status.allocation.nodeSelector (unset: every node)."""
    selector = claim.allocation_node_selector
    return selector is None or node_selector_matches(selector, node.name, node.labels)


# --- small helpers -------------------------------------------------------------------------


def _kobj(claim: ResourceClaim) -> str:
    """klog.KObj: namespace/name, or the bare name for an object without namespace."""
    namespace = text(claim.metadata.get("namespace"))
    return f"{namespace}/{claim.name}" if namespace else claim.name


def quantity_of(value: Any) -> Quantity | None:
    """A quantity field as published ({"value": "80Gi"}, "80Gi" or 4), or None if it is not one."""
    raw = value.get("value") if isinstance(value, dict) else value
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str):
        return None
    try:
        return Quantity.parse(raw)
    except QuantityError:
        return None


def _int_value(q: Quantity) -> int:
    """Quantity.Value(): the value rounded up (away from zero) to an integer."""
    return int(q._value.to_integral_value(rounding=ROUND_UP))  # the exact decimal value


_SCALAR_KINDS = ("string", "int", "bool", "version")


def _typed(attribute: dict[str, Any], kind: str) -> Any:
    """The attribute's value of one type, as the Go struct's pointer field would hold it."""
    value = attribute.get(kind)
    if kind == "int":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def _kind(attribute: dict[str, Any]) -> str | None:
    for kind in _SCALAR_KINDS:
        if _typed(attribute, kind) is not None:
            return kind
    return None


def lookup_attribute(device: Device, driver: str, name: str) -> dict[str, Any] | None:
    """lookupAttribute: a fully qualified ``D/id`` matches the attribute ``D/id``, or ``id``
    only when D is the device's driver."""
    attributes = mapping(device.raw.get("attributes"))
    found = attributes.get(name)
    if isinstance(found, dict):
        return found
    domain, slash, ident = name.partition("/")
    if not slash or domain != driver:
        return None
    found = attributes.get(ident)
    return found if isinstance(found, dict) else None


def _device_id(key: tuple[str, str, str]) -> str:
    return "/".join(key)


def _taint_text(taint: dict[str, Any]) -> str:
    value = text(taint.get("value"))
    return f"{text(taint.get('key'))}{'=' + value if value else ''}:{text(taint.get('effect'))}"


# --- the snapshot, indexed once ------------------------------------------------------------


class _Index:
    """What every allocation on a snapshot needs, built once per snapshot: slices by node,
    devices as CEL inputs, taints, and the devices claims hold."""

    def __init__(self, state: ClusterState) -> None:
        self.slices = sorted(state.slices.values(), key=lambda s: s.name)
        self.on_node: dict[str, list[ResourceSlice]] = defaultdict(list)
        self.shared: list[ResourceSlice] = []  # NewAllocator's slicesShared
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = defaultdict(list)
        for s in self.slices:
            node_name = text(s.spec.get("nodeName"))
            if not node_name or items(s.spec.get("sharedCounters")):
                self.shared.append(s)
            else:
                self.on_node[node_name].append(s)
            self.by_pool[(s.driver, s.pool_name)].append(s)
        self.devices = [d for s in self.slices for d in s.devices]
        self.keys = [(s.driver, s.pool_name, d.name) for s in self.slices for d in s.devices]
        self.position = {id(d): i for i, d in enumerate(self.devices)}
        # CEL inputs: those of current devices come from the selector playground's table.
        known_devices, known_inputs, known_errors = device_table(state)
        known = {
            id(d): (i, e) for d, i, e in zip(known_devices, known_inputs, known_errors, strict=True)
        }
        self.inputs: list[DeviceInput] = []
        self.errors: list[str | None] = []
        for d in self.devices:
            pair = known.get(id(d))
            if pair is None:
                value = device_input(d)
                pair = (value, conversion_error(value))
            self.inputs.append(pair[0])
            self.errors.append(pair[1])
        self.columns: dict[tuple[str, ...], list[Any]] = {}  # evaluate_devices' cache
        # Current-generation devices, in the 1.36 candidate order, with what the funnel reads.
        self.current: list[tuple[Device, tuple[str, str, str], int, tuple[str, str]]] = [
            (d, (s.driver, s.pool_name, d.name), self.position[id(d)], key)
            for key, pool in sorted(state.pools.items())
            for s in sorted(pool.slices, key=lambda s: s.name)
            for d in s.devices
        ]
        self.pool_problems: dict[tuple[bool, bool, bool], dict[Any, tuple[str, str] | None]] = {}

        rules = [r for r in state.taint_rules.values() if r.taint]
        self.taints: dict[int, list[dict[str, Any]]] = {}
        for d in self.devices:
            own = mappings(d.raw.get("taints"))
            added = [r.taint for r in rules if r.selects(d)] if rules else []
            if own or added:
                self.taints[id(d)] = own + added
        # The devices claims hold (foreachAllocatedDevice in the scheduler's
        # allocateddevices.go): admin-access results hold nothing; results with a shareID
        # only consume capacity when DRAConsumableCapacity is on.
        self.holders: dict[tuple[str, str, str], list[tuple[tuple[str, str], bool]]] = defaultdict(
            list
        )
        self.claim_devices: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
        self.shared_results: list[tuple[tuple[str, str], Any]] = []
        for c in state.claims.values():
            claim_key = (c.namespace, c.name)
            for r in c.results:
                if r.admin_access:
                    continue
                shared = r.raw.get("shareID") is not None
                self.holders[r.device_key].append((claim_key, shared))
                self.claim_devices[claim_key].append(r.device_key)
                if shared:
                    self.shared_results.append((claim_key, r))
        self.first_holder = {key: holders[0][0] for key, holders in self.holders.items()}
        self.dedicated_all = frozenset(self.holders)
        self.dedicated_unshared = frozenset(
            key for key, holders in self.holders.items() if any(not sh for _, sh in holders)
        )
        self.verdicts: dict[tuple[str, tuple[str | None, ...]], list[Any]] = {}
        self.capacities: dict[int, dict[str, tuple[Quantity, Any]]] = {}


def _index(state: ClusterState) -> _Index:
    return state.derived("allocator-index", _Index)  # type: ignore[no-any-return]


@dataclass
class _Held:
    """AllocatedState: devices in use by other claims."""

    dedicated: frozenset[tuple[str, str, str]] | set[tuple[str, str, str]] = frozenset()
    shared: set[tuple[tuple[str, str, str], str]] = field(default_factory=set)
    capacity: dict[tuple[str, str, str], dict[str, Quantity]] = field(default_factory=dict)
    owners: Callable[[tuple[str, str, str]], str] = lambda key: ""

    def allocated(self, key: tuple[str, str, str]) -> bool:
        """IsDeviceAllocated (allocatedstate.go)."""
        return (
            key in self.dedicated or key in self.capacity or any(k == key for k, _ in self.shared)
        )


def _held(index: _Index, exclude: set[tuple[str, str]], consumable: bool) -> _Held:
    """GatherAllocatedState over every claim but those being allocated."""
    held = _Held()
    for claim_key, r in index.shared_results:
        if claim_key in exclude or not consumable:
            continue
        key = r.device_key
        held.shared.add((key, text(r.raw.get("shareID"))))
        consumed = mapping(r.raw.get("consumedCapacity"))
        if consumed:
            total = held.capacity.setdefault(key, {})
            for name, value in consumed.items():
                q = quantity_of(value)
                if q is not None:
                    total[name] = total[name].add(q) if name in total else q
    dedicated: frozenset[tuple[str, str, str]] | set[tuple[str, str, str]] = (
        index.dedicated_unshared if consumable else index.dedicated_all
    )
    touched = {key for c in exclude for key in index.claim_devices.get(c, ())}
    if touched:  # what only the excluded claims hold is free for them
        dedicated = set(dedicated)
        for key in touched:
            if any(c not in exclude and not (sh and consumable) for c, sh in index.holders[key]):
                dedicated.add(key)
            else:
                dedicated.discard(key)
    held.dedicated = dedicated

    def owner(key: tuple[str, str, str]) -> str:
        first = index.first_holder.get(key)
        if first is not None and first not in exclude:
            return f"{first[0]}/{first[1]}"
        return next(("/".join(c) for c, _ in index.holders.get(key, ()) if c not in exclude), "")

    held.owners = owner
    return held


# --- claims, parsed ------------------------------------------------------------------------


@dataclass
class _Spec:
    """requestAccessor: an ExactDeviceRequest or a DeviceSubRequest."""

    name: str
    parent: str  # "" for a request, the request's name for a subrequest
    raw: dict[str, Any]
    class_name: str
    selectors: list[str | None]
    mode: str
    count: int
    admin: bool
    has_admin: bool
    tolerations: list[dict[str, Any]]
    capacity: dict[str, Any] | None  # capacity.requests, None when capacity is unset
    wanted: dict[str, Quantity | None] = field(default_factory=dict)  # the same, parsed

    @classmethod
    def parse(cls, raw: dict[str, Any], name: str, parent: str = "") -> _Spec:
        capacity = raw.get("capacity")
        return cls(
            name=name,
            parent=parent,
            raw=raw,
            class_name=text(raw.get("deviceClassName")),
            selectors=[
                expr if isinstance(expr := dig(s, "cel", "expression"), str) else None
                for s in items(raw.get("selectors"))
            ],
            mode=text(raw.get("allocationMode")) or "ExactCount",
            count=number(raw.get("count"), 1),
            admin=raw.get("adminAccess") is True and not parent,
            has_admin=raw.get("adminAccess") is not None and not parent,
            tolerations=mappings(raw.get("tolerations")),
            capacity=mapping(capacity.get("requests")) if isinstance(capacity, dict) else None,
            wanted={
                name: quantity_of(value)
                for name, value in mapping(mapping(capacity).get("requests")).items()
            },
        )

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name


@dataclass
class _RequestPlan:
    name: str
    exactly: _Spec | None
    first_available: list[_Spec]

    @property
    def alternatives(self) -> list[_Spec]:
        return [self.exactly] if self.exactly is not None else self.first_available


@dataclass
class _ClaimPlan:
    claim: ResourceClaim | None
    label: str  # klog.KObj
    name: str
    requests: list[_RequestPlan]
    constraints: list[dict[str, Any]]
    config: list[dict[str, Any]]


def plan_claim(claim: ResourceClaim) -> _ClaimPlan:
    requests = []
    for raw in mappings(dig(claim.spec, "devices", "requests")):
        name = text(raw.get("name"))
        exactly = raw.get("exactly")
        requests.append(
            _RequestPlan(
                name=name,
                exactly=_Spec.parse(exactly, name) if isinstance(exactly, dict) else None,
                first_available=[
                    _Spec.parse(sub, text(sub.get("name")), name)
                    for sub in mappings(raw.get("firstAvailable"))
                ],
            )
        )
    return _ClaimPlan(
        claim=claim,
        label=_kobj(claim),
        name=claim.name,
        requests=requests,
        constraints=mappings(dig(claim.spec, "devices", "constraints")),
        config=mappings(dig(claim.spec, "devices", "config")),
    )


def _constraint_applies(constraint: dict[str, Any], spec: _Spec) -> bool:
    names = strings(constraint.get("requests"))
    if not names:
        return True
    base = spec.parent or spec.name
    return base in names or (bool(spec.parent) and spec.full_name in names)


# --- selectors: one verdict per device and request -----------------------------------------

_CLAIM = "\x00claim\x00"  # stands for the claim in cached verdicts' error messages


def _named(error: str, claim: str) -> str:
    return error.replace(_CLAIM, claim)


_DRIVER_STEP = ("driver", "")
_NO_NODE_STEP = ("nodes", "reaches no node the Pod may use")

# Verdict codes besides True and an error message (sentinels: 1 == True in Python).
_CLASS_NO, _REQUEST_NO = object(), object()


def _verdicts(
    index: _Index, device_class: DeviceClass | None, selectors: Sequence[str | None], claim: str
) -> list[Any]:
    """selectorsMatch for every device of the snapshot: True, _CLASS_NO, _REQUEST_NO, or the
    error the allocator would stop with (worded as upstream). Class selectors come first; a
    selector that does not compile fails the devices that reach it."""
    compiled: list[Selector] = []
    problem: str | None = None
    groups: list[tuple[str, Sequence[str | None]]] = []
    if device_class is not None:
        groups.append((f"class {device_class.name}", device_class.selectors))
    groups.append((f"claim {claim}", selectors))
    for owner, expressions in groups:
        for i, expression in enumerate(expressions):
            label = f"{owner}: selector #{i}: "
            if expression is None:
                problem = f"{label[:-2]}: CEL expression empty (unsupported selector type?)"
                break
            try:
                compiled.append(Selector(compile_selector(expression), label))
            except CelCompileError as exc:
                problem = f"{label}CEL compile error: {exc}"
                break
        if problem:
            break
    if not compiled:
        return [problem or True] * len(index.devices)
    out: list[Any] = []
    with gc_paused():
        for v in evaluate_devices(
            compiled, index.inputs, errors=index.errors, columns=index.columns
        ):
            if v.error is not None:
                out.append(
                    v.error if v.decided_by else f"{compiled[0].label}CEL runtime error: {v.error}"
                )
            elif v.matches:
                out.append(problem or True)
            else:
                out.append(_CLASS_NO if v.decided_by.startswith("class ") else _REQUEST_NO)
    return out


# --- pools ---------------------------------------------------------------------------------


@dataclass
class _Pool:
    driver: str
    name: str
    incomplete: bool = False
    invalid: bool = False
    reason: str = ""
    slices: list[ResourceSlice] = field(default_factory=list)  # DeviceSlicesTargetingNode
    other_slices: list[ResourceSlice] = field(default_factory=list)  # …NotTargetingNode
    counter_sets: dict[str, dict[str, Quantity]] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.driver, self.name)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def _counter_sets(slices: Iterable[ResourceSlice]) -> tuple[dict[str, dict[str, Quantity]], str]:
    """getAndValidateCounterSets."""
    sets: dict[str, dict[str, Quantity]] = {}
    for s in slices:
        for counter_set in mappings(s.spec.get("sharedCounters")):
            name = text(counter_set.get("name"))
            if name in sets:
                return {}, f"duplicate counter set name {name}"
            sets[name] = {
                counter: q
                for counter, value in mapping(counter_set.get("counters")).items()
                if (q := quantity_of(value)) is not None
            }
    return sets, ""


def _consumption_problem(
    sets: dict[str, dict[str, Quantity]], slices: Iterable[ResourceSlice]
) -> str:
    """validateDeviceCounterConsumption."""
    for s in slices:
        for device in s.devices:
            for use in mappings(device.raw.get("consumesCounters")):
                name = text(use.get("counterSet"))
                if name not in sets:
                    return f"counter set {name} not found"
                for counter in mapping(use.get("counters")):
                    if counter not in sets[name]:
                        return f"counter {counter} not found in counter set {name}"
    return ""


def _duplicate_device(slices: Iterable[ResourceSlice]) -> str:
    """validateDeviceNames / poolIsInvalid."""
    seen: set[str] = set()
    for s in slices:
        for device in s.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def _has_binding_conditions(slices: Iterable[ResourceSlice]) -> bool:
    return any(d.raw.get("bindingConditions") is not None for s in slices for d in s.devices)


def _consumes(device: Device) -> list[dict[str, Any]]:
    return mappings(device.raw.get("consumesCounters"))


# --- one Allocate call ---------------------------------------------------------------------


class _Fatal(Exception):
    """An error Allocate returns."""

    def __init__(
        self, message: str, request: tuple[int, int, int] | None = None, node: bool = False
    ) -> None:
        super().__init__(message)
        self.request = request
        self.node = node


_EXCEEDED = object()  # errAllocationResultMaxSizeExceeded


@dataclass
class _RequestData:
    spec: _Spec
    parent: str | None  # the request's name for a subrequest
    device_class: DeviceClass | None
    verdicts: list[Any]
    num_devices: int = 0
    selected: int = 0
    all_devices: list[_Candidate] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.spec.full_name


@dataclass
class _Candidate:
    device: Device
    key: tuple[str, str, str]
    slice: ResourceSlice
    pool: _Pool


@dataclass
class _Result:
    spec: _Spec
    candidate: _Candidate
    admin: bool
    share_id: str | None = None
    consumed: dict[str, Quantity] | None = None


class _MatchAttribute:
    """matchAttributeConstraint."""

    def __init__(self, requests: list[str], name: str) -> None:
        self.requests = set(requests)
        self.name = name
        self.first: dict[str, Any] | None = None
        self.count = 0

    def _skips(self, base: str, sub: str) -> bool:
        if not self.requests:
            return False
        if not sub:
            return base not in self.requests
        return base not in self.requests and f"{base}/{sub}" not in self.requests

    def add(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> bool:
        if self._skips(base, sub):
            return True
        attribute = lookup_attribute(device, key[0], self.name)
        if attribute is None:
            return False
        if self.count == 0:
            self.first, self.count = attribute, 1
            return True
        kind = _kind(attribute)
        assert self.first is not None
        if kind is None or _typed(self.first, kind) != _typed(attribute, kind):
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> None:
        if not self._skips(base, sub):
            self.count -= 1


class _DistinctAttribute(_MatchAttribute):
    """distinctAttributeConstraint (values are remembered per base request name, as upstream
    does, so a request's later device replaces its earlier one)."""

    def __init__(self, requests: list[str], name: str) -> None:
        super().__init__(requests, name)
        self.values: dict[str, dict[str, Any]] = {}

    def add(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> bool:
        if self._skips(base, sub):
            return True
        attribute = lookup_attribute(device, key[0], self.name)
        if attribute is None:
            return False
        if self.count and not self._distinct(attribute):
            return False
        self.values[base] = attribute
        self.count += 1
        return True

    def _distinct(self, attribute: dict[str, Any]) -> bool:
        """matchesAttribute: an unknown type only fails against a remembered value."""
        kind = _kind(attribute)
        mine = _typed(attribute, kind) if kind else None
        return all(
            kind is not None and _typed(other, kind) != mine for other in self.values.values()
        )

    def remove(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> None:
        if not self._skips(base, sub):
            self.values.pop(base, None)
            self.count -= 1


def _consumed_capacity(requested: Quantity | None, value: Quantity, policy: Any) -> Quantity:
    """calculateConsumedCapacity (consumable_capacity.go)."""
    policy = mapping(policy)
    if requested is None:  # fillEmptyRequest
        default = quantity_of(policy.get("default")) if policy.get("default") is not None else None
        return default if default is not None else value
    if not policy:
        return requested
    valid_range = policy.get("validRange")
    if isinstance(valid_range, dict) and valid_range.get("min") is not None:
        minimum = quantity_of(valid_range.get("min"))
        if minimum is None or requested.compare(minimum) < 0:
            return minimum or requested
        step = quantity_of(valid_range.get("step")) if valid_range.get("step") else None
        if step is None or _int_value(step) == 0:
            return requested
        added = _int_value(requested) - _int_value(minimum)
        steps = added // _int_value(step) + (1 if added % _int_value(step) else 0)
        return Quantity.parse(str(_int_value(minimum) + _int_value(step) * steps))
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for candidate in items(valid_values):
            q = quantity_of(candidate)
            if q is not None and requested.compare(q) <= 0:
                return q
    return requested


def _violates_policy(requested: Quantity, policy: Any) -> bool:
    """violatesPolicy."""
    if not isinstance(policy, dict):
        return False
    default = quantity_of(policy.get("default")) if policy.get("default") is not None else None
    if default is not None and requested == default:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        valid_range = mapping(valid_range)
        maximum = quantity_of(valid_range.get("max")) if valid_range.get("max") else None
        if maximum is not None and requested.compare(maximum) > 0:
            return True
        step = quantity_of(valid_range.get("step")) if valid_range.get("step") else None
        if step is not None and _int_value(step):
            minimum = quantity_of(valid_range.get("min"))
            base = _int_value(minimum) if minimum is not None else 0
            return (_int_value(requested) - base) % _int_value(step) != 0
        return False
    values = items(policy.get("validValues"))
    if values:
        return not any(requested == quantity_of(v) for v in values)
    return False


def _capacities(device: Device) -> dict[str, tuple[Quantity, Any]]:
    out = {}
    for name, capacity in mapping(device.raw.get("capacity")).items():
        q = quantity_of(capacity)
        if q is not None:
            out[name] = (q, capacity.get("requestPolicy") if isinstance(capacity, dict) else None)
    return out


def _fits_capacity(
    current: dict[str, Quantity],
    wanted: dict[str, Quantity | None],
    capacity: dict[str, tuple[Quantity, Any]],
    allocating: dict[str, Quantity],
) -> bool | None:
    """CmpRequestOverCapacity, given the request's parsed capacity requests and the device's
    capacities; None for its error (a requested capacity the device lacks)."""
    if not wanted and not current and not allocating:
        # Nothing requested or consumed yet: each capacity's default (or whole value) fits
        # unless a policy forbids it.
        return all(
            not _violates_policy(used := _consumed_capacity(None, value, policy), policy)
            and used.compare(value) <= 0
            for value, policy in capacity.values()
        )
    if any(name not in capacity for name in wanted):
        return None
    for name, (value, policy) in capacity.items():
        consumed = _consumed_capacity(wanted.get(name), value, policy)
        if _violates_policy(consumed, policy):
            return False
        total = current[name].add(consumed) if name in current else consumed
        if name in allocating:
            total = total.add(allocating[name])
        if total.compare(value) > 0:
            return False
    return True


def _consumed_from_request(
    wanted: dict[str, Quantity | None], capacity: dict[str, tuple[Quantity, Any]]
) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest."""
    return {
        name: _consumed_capacity(wanted.get(name), value, policy)
        for name, (value, policy) in capacity.items()
    }


class _Search:
    """The allocator struct of allocator_incubating.go: one Allocate call on one node."""

    def __init__(self, owner: Allocator, node: Node, claims: list[_ClaimPlan]) -> None:
        self.owner = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.pools = owner.pools_for(node)
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = [[] for _ in claims]
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.allocating: dict[tuple[str, str, str], set[int]] = {}
        self.allocating_capacity: dict[tuple[str, str, str], dict[str, Quantity]] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.calls = 0
        self._per_device_nodes: dict[int, bool] = {}

    # Allocate ------------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]] | None:
        features = self.features
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.requests):
                subs = request.first_available
                if not features.prioritized_list and subs:
                    raise _Fatal(
                        f"claim {claim.label}, request {request.name}: has subrequests, but the "
                        "DRAPrioritizedList feature is disabled",
                        (ci, ri, 0),
                    )
                if not features.consumable_capacity and features.implementation != "stable":
                    if request.exactly is not None and request.exactly.capacity is not None:
                        raise _Fatal(
                            f"claim {claim.label}, request {request.name}: has capacity "
                            "requests, but the DRAConsumableCapacity feature is disabled",
                            (ci, ri, 0),
                        )
                    for si, sub in enumerate(subs):
                        if sub.capacity is not None:
                            raise _Fatal(
                                f"claim {claim.label}, subrequest {sub.name}: has capacity "
                                "requests, but the DRAConsumableCapacity feature is disabled",
                                (ci, ri, si),
                            )
                if subs:
                    least = None
                    for si, sub in enumerate(subs):
                        data = self._validate(sub, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    minimum += least or 0
                elif request.exactly is not None:
                    data = self._validate(request.exactly, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    minimum += data.num_devices
                else:
                    raise _Fatal(
                        f"resource claim {claim.label}, request {request.name}: unknown request "
                        "type",
                        (ci, ri, 0),
                    )
            if minimum > MAX_RESULTS:
                raise _Fatal(
                    f"claim {claim.label}: number of requested devices {minimum} exceeds the "
                    f"claim limit of {MAX_RESULTS}"
                )
            for i, constraint in enumerate(claim.constraints):
                requests = strings(constraint.get("requests"))
                if constraint.get("matchAttribute") is not None:
                    name = text(constraint.get("matchAttribute"))
                    self.constraints[ci].append(_MatchAttribute(requests, name))
                elif (
                    constraint.get("distinctAttribute") is not None
                    and features.implementation != "stable"
                ):
                    name = text(constraint.get("distinctAttribute"))
                    self.constraints[ci].append(_DistinctAttribute(requests, name))
                else:
                    raise _Fatal(
                        f"claim {claim.label}, constraint #{i}: empty constraint (unsupported "
                        "constraint type?)"
                    )
        done = self.allocate_one((0, 0, 0, 0), False, (0, 0, 0))
        if done is _EXCEEDED:  # as upstream returns the sentinel error at the top
            raise _Fatal("allocation max size exceeded")
        if done is not True:
            if any(p.invalid for p in self.pools) and self.features.skip_incomplete_pools:
                raise _Fatal("invalid resource pools were encountered", node=True)
            return None
        return [self._allocation(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, spec: _Spec, key: tuple[int, int, int]) -> _RequestData:
        """validateDeviceRequest."""
        claim = self.claims[key[0]]
        for i, selector in enumerate(spec.selectors):
            if selector is None:
                raise _Fatal(
                    f"claim {claim.label}, request {spec.name}, selector #{i}: CEL expression "
                    "empty (unsupported selector type?)",
                    key,
                )
        if not self.features.admin_access and spec.has_admin:
            raise _Fatal(
                f"claim {claim.label}, request {spec.name}: admin access is requested, but the "
                "feature is disabled",
                key,
            )
        if not spec.class_name:
            raise _Fatal(
                f"claim {claim.label}, request {spec.name}: missing device class name "
                "(unsupported request type?)",
                key,
            )
        device_class = self.owner.state.classes.get(spec.class_name)
        if device_class is None:
            raise _Fatal(
                f"claim {claim.label}, request {spec.name}: could not retrieve device class "
                f'{spec.class_name}: deviceclass.resource.k8s.io "{spec.class_name}" not found',
                key,
            )
        data = _RequestData(
            spec=spec,
            parent=spec.parent or None,
            device_class=device_class,
            verdicts=self.owner.verdicts(device_class, spec),
        )
        if spec.mode == "ExactCount":
            data.num_devices = spec.count
        elif spec.mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise _Fatal(
                        f"claim {claim.label}, request {spec.name}: asks for all devices, but "
                        f"resource pool {pool.id} is currently being updated",
                        key,
                    )
                if pool.invalid:
                    raise _Fatal(
                        f"claim {claim.label}, request {spec.name}: asks for all devices, but "
                        f"resource pool {pool.id} is currently invalid",
                        key,
                    )
                for s in pool.slices:
                    for device in s.devices:
                        if not self._selectable(key, data, s, device):
                            continue
                        candidate = _Candidate(
                            device, (s.driver, s.pool_name, device.name), s, pool
                        )
                        if self.features.consumable_capacity and not self._capacity_ok(
                            data, candidate
                        ):
                            continue
                        data.all_devices.append(candidate)
            data.num_devices = len(data.all_devices)
        else:
            raise _Fatal(
                f"claim {claim.label}, request {spec.name}: unsupported count mode {spec.mode}",
                key,
            )
        return data

    # allocateOne ---------------------------------------------------------------------------

    def allocate_one(
        self, r: tuple[int, int, int, int], subrequest: bool, start: tuple[int, int, int]
    ) -> Any:
        """allocateOne: True when everything got allocated, False, or _EXCEEDED."""
        self.calls += 1
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            done = self.allocate_one((ci + 1, 0, 0, 0), False, (0, 0, 0))
            return False if done is _EXCEEDED else done
        key = (ci, ri, si)
        data = self.request_data[key]
        if not subrequest and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                done = self.allocate_one((ci, ri, sub, di), True, (0, 0, 0))
                if done is _EXCEEDED:
                    sub += 1
                    continue
                all_exceeded = False
                if done:
                    data.selected = sub
                    return True
                sub += 1
            return _EXCEEDED if all_exceeded else False
        spec = data.spec
        all_devices = spec.mode == "All"
        if all_devices and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.allocate_one((ci, ri + 1, 0, 0), False, (0, 0, 0))
        if len(self.results[ci]) + data.num_devices - di > MAX_RESULTS:
            return _EXCEEDED
        if all_devices:
            ok, undo = self._allocate_device(r, data.all_devices[di], True)
            if not ok:
                return False
            done = self.allocate_one((ci, ri, si, di + 1), subrequest, (0, 0, 0))
            if done is not True:
                undo()
            return done
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.invalid and not self.features.skip_incomplete_pools:
                # 1.34 (experimental, incubating): an invalid pool stops the search.
                raise _Fatal(f"pool {pool.name} is invalid: {pool.reason}", key)
            if (pool.incomplete and self.features.skip_incomplete_pools) or pool.invalid:
                continue
            first_slice = start[1] if pi == start[0] else 0
            for sli in range(first_slice, len(pool.slices)):
                s = pool.slices[sli]
                first = start[2] if pi == start[0] and sli == start[1] else 0
                devices = s.devices
                for dvi in range(first, len(devices)):
                    device = devices[dvi]
                    dkey = (pool.driver, pool.name, device.name)
                    if spec.admin and ci in self.allocating.get(dkey, ()):
                        continue
                    if not spec.admin and self._in_use(dkey):
                        continue
                    if not self._selectable(key, data, s, device):
                        continue
                    candidate = _Candidate(device, dkey, s, pool)
                    if self.features.consumable_capacity and not self._capacity_ok(data, candidate):
                        continue
                    ok, undo = self._allocate_device(r, candidate, False)
                    if not ok:
                        continue
                    done = self.allocate_one((ci, ri, si, di + 1), subrequest, (pi, sli, dvi + 1))
                    if done is True:
                        return True
                    undo()
                    if done is _EXCEEDED:
                        return _EXCEEDED
        return False

    def _in_use(self, key: tuple[str, str, str]) -> bool:
        """deviceInUse."""
        return key in self.owner.held.dedicated or bool(self.allocating.get(key))

    def _selectable(
        self, key: tuple[int, int, int], data: _RequestData, s: ResourceSlice, device: Device
    ) -> bool:
        """isSelectable."""
        if not self.features.binding_conditions and items(device.raw.get("bindingConditions")):
            return False
        verdict = data.verdicts[self.owner.index.position[id(device)]]
        if verdict is not True:
            if isinstance(verdict, str):
                raise _Fatal(_named(verdict, self.claims[key[0]].label), key)
            return False
        if s.spec.get("perDeviceNodeSelection") is True:
            cached = self._per_device_nodes.get(id(device))
            if cached is None:
                raw = device.raw
                cached = _node_matches(
                    self.node,
                    text(raw.get("nodeName")),
                    raw.get("allNodes") is True,
                    raw.get("nodeSelector"),
                )
                self._per_device_nodes[id(device)] = cached
            return cached
        return True

    def _capacity_ok(self, data: _RequestData, candidate: _Candidate) -> bool:
        """CmpRequestOverCapacity as allocateOne calls it (its error skips the device)."""
        current = self.owner.held.capacity.get(candidate.key, {})
        allocating = self.allocating_capacity.get(candidate.key, {})
        capacity = self.owner.capacities(candidate.device)
        return bool(_fits_capacity(current, data.spec.wanted, capacity, allocating))

    # allocateDevice ------------------------------------------------------------------------

    def _allocate_device(
        self, r: tuple[int, int, int, int], candidate: _Candidate, must: bool
    ) -> tuple[bool, Callable[[], None]]:
        """allocateDevice, with its rollback function."""
        ci, ri, si, _ = r
        data = self.request_data[(ci, ri, si)]
        spec = data.spec
        features = self.features
        device, key = candidate.device, candidate.key
        multi = features.consumable_capacity and device.raw.get("allowMultipleAllocations") is True
        if not multi and spec.admin and ci in self.allocating.get(key, ()):
            return False, _nothing
        if not spec.admin and self._in_use(key):
            return False, _nothing
        consumes = _consumes(device)
        if not features.partitionable_devices and consumes:
            return False, _nothing
        skip_counters = multi and (
            key in self.owner.held.capacity or key in self.allocating_capacity
        )
        if not skip_counters and consumes and not self._counters_available(candidate):
            return False, _nothing
        if features.device_taints and self._untolerated(device, spec) is not None:
            return False, _nothing
        base, sub = (spec.parent, spec.name) if spec.parent else (spec.name, "")
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device, key):
                if must:
                    raise _Fatal(
                        f"claim {self.claims[ci].label}, request {spec.name}: cannot add device "
                        f"{_device_id(key)} because a claim constraint would not be satisfied",
                        (ci, ri, si),
                    )
                for earlier in constraints[:i]:
                    earlier.remove(base, sub, device, key)
                return False, _nothing
        holders = self.allocating.setdefault(key, set())
        if not multi:
            holders.add(ci)
        result = _Result(spec=spec, candidate=candidate, admin=spec.admin)
        if features.consumable_capacity:
            if not _fits_capacity(
                self.owner.held.capacity.get(key, {}),
                spec.wanted,
                self.owner.capacities(device),
                self.allocating_capacity.get(key, {}),
            ):
                return False, _nothing  # as upstream: nothing rolled back here
            if multi:
                consumed = _consumed_from_request(spec.wanted, self.owner.capacities(device))
                result.share_id = self.owner.new_share_id()
                total = self.allocating_capacity.setdefault(key, {})
                for name, q in consumed.items():
                    total[name] = total[name].add(q) if name in total else q
                result.consumed = consumed or None
        results = self.results[ci]
        results.append(result)
        count = len(results) - 1

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub, device, key)
            self.allocating.get(key, set()).discard(ci)
            if multi:
                if result.consumed:
                    total = self.allocating_capacity.get(key, {})
                    for name, q in result.consumed.items():
                        if name in total:
                            total[name] = total[name].sub(q)
                    if all(q.sign() == 0 for q in total.values()):
                        self.allocating_capacity.pop(key, None)
            elif features.partitionable_devices and consumes:
                self._release_counters(candidate)
            del results[count:]

        return True, undo

    def _untolerated(self, device: Device, spec: _Spec) -> dict[str, Any] | None:
        """taintPreventsAllocation: the first NoSchedule/NoExecute taint not tolerated."""
        for taint in self.owner.index.taints.get(id(device), ()):
            if text(taint.get("effect")) in (NO_SCHEDULE, NO_EXECUTE) and not _tolerated(
                spec.tolerations, taint
            ):
                return taint
        return None

    # counters ------------------------------------------------------------------------------

    def _counters_available(self, candidate: _Candidate) -> bool:
        """checkAvailableCounters."""
        pool = candidate.pool
        available = self.owner.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.key, {})
        for use in _consumes(candidate.device):
            counters = consumed.setdefault(text(use.get("counterSet")), {})
            for name, value in mapping(use.get("counters")).items():
                q = quantity_of(value)
                if q is not None:
                    counters[name] = counters[name].add(q) if name in counters else q
        # Every counter of every set: one already over-consumed by allocated devices (a whole
        # device and its partition both held) rejects every counter-consuming device.
        for set_name, counters in available.items():
            used = consumed.get(set_name, {})
            for name, q in counters.items():
                if (q.compare(used[name]) < 0) if name in used else q.sign() < 0:
                    self._release_counters(candidate)
                    return False
        return True

    def _release_counters(self, candidate: _Candidate) -> None:
        """deallocateCountersForDevice."""
        consumed = self.consumed_counters.get(candidate.pool.key, {})
        for use in _consumes(candidate.device):
            counters = consumed.get(text(use.get("counterSet")), {})
            for name, value in mapping(use.get("counters")).items():
                q = quantity_of(value)
                if q is not None and name in counters:
                    counters[name] = counters[name].sub(q)

    # results -------------------------------------------------------------------------------

    def _allocation(self, ci: int, claim: _ClaimPlan) -> dict[str, Any]:
        """The AllocationResult Allocate builds for one claim (results, config, nodeSelector)."""
        results = []
        for r in self.results[ci]:
            c = r.candidate
            out: dict[str, Any] = {
                "request": r.spec.full_name,
                "driver": c.key[0],
                "pool": c.key[1],
                "device": c.key[2],
            }
            if r.admin:
                out["adminAccess"] = True
            if r.spec.tolerations and self.features.skip_incomplete_pools:
                out["tolerations"] = r.spec.tolerations  # 1.35+ copies them into results
            if self.features.binding_conditions:
                for name in ("bindingConditions", "bindingFailureConditions"):
                    if c.device.raw.get(name) is not None:
                        out[name] = strings(c.device.raw.get(name))
            if r.share_id is not None:
                out["shareID"] = r.share_id
            if r.consumed:
                out["consumedCapacity"] = {name: str(q) for name, q in r.consumed.items()}
            results.append(out)
        devices: dict[str, Any] = {"results": results}
        config = self._config(ci, claim)
        if config:
            devices["config"] = config
        allocation: dict[str, Any] = {"devices": devices}
        selector = self._node_selector(ci, claim)
        if selector is not None:
            allocation["nodeSelector"] = selector
        return allocation

    def _config(self, ci: int, claim: _ClaimPlan) -> list[dict[str, Any]]:
        config: list[dict[str, Any]] = []
        by_class: dict[str, tuple[int, int]] = {}
        selected: dict[int, _RequestData] = {}
        for ri in range(len(claim.requests)):
            data = self.request_data[(ci, ri, 0)]
            if data.parent is not None:
                data = self.request_data[(ci, ri, data.selected)]
            selected[ri] = data
            device_class = data.device_class
            if device_class is None:
                continue
            if device_class.name in by_class:
                first, end = by_class[device_class.name]
                for i in range(first, end):
                    config[i]["requests"].append(data.name)
                continue
            first = len(config)
            for entry in mappings(device_class.spec.get("config")):
                config.append(
                    {
                        "source": "FromClass",
                        "requests": [data.name],
                        **{k: v for k, v in entry.items() if k != "requests"},
                    }
                )
            by_class[device_class.name] = (first, len(config))
        for entry in claim.config:
            requests = strings(entry.get("requests"))
            body = {k: v for k, v in entry.items() if k != "requests"}
            if not requests:
                config.append({"source": "FromClaim", **body})
                continue
            for ri, request in enumerate(claim.requests):
                if request.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **body})
                    continue
                data = selected[ri]
                if data.parent is not None and data.spec.full_name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **body})
        return config

    def _node_selector(self, ci: int, claim: _ClaimPlan) -> dict[str, Any] | None:
        """createNodeSelector."""
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for r in self.results[ci]:
            s, raw = r.candidate.slice, r.candidate.device.raw
            source = raw if s.spec.get("perDeviceNodeSelection") is True else s.spec
            if source.get("nodeName") is not None or raw.get("bindsToNode") is True:
                return {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {
                                    "key": "metadata.name",
                                    "operator": "In",
                                    "values": [self.node.name],
                                }
                            ]
                        }
                    ]
                }
            selector = source.get("nodeSelector")
            if isinstance(selector, dict):
                terms = mappings(selector.get("nodeSelectorTerms"))
                if len(terms) > 1:
                    raise _Fatal(
                        f"create NodeSelector for claim {claim.name}: unsupported "
                        f"ResourceSlice.NodeSelector with {len(terms)} terms"
                    )
                if terms:
                    _merge_requirements(mappings(terms[0].get("matchFields")), fields)
                    _merge_requirements(mappings(terms[0].get("matchExpressions")), expressions)
        if not fields and not expressions:
            return None
        term: dict[str, Any] = {}
        if expressions:
            term["matchExpressions"] = expressions
        if fields:
            term["matchFields"] = fields
        return {"nodeSelectorTerms": [term]}


def _nothing() -> None:
    return None


def _merge_requirements(source: list[dict[str, Any]], into: list[dict[str, Any]]) -> None:
    """addNewNodeSelectorRequirements."""
    for requirement in source:
        values = set(strings(requirement.get("values")))
        if not any(
            r.get("key") == requirement.get("key")
            and r.get("operator") == requirement.get("operator")
            and set(strings(r.get("values"))) == values
            for r in into
        ):
            into.append(requirement)


# --- the allocator -------------------------------------------------------------------------


class Allocator:
    """structured.NewAllocator over a snapshot: every claim except ``exclude`` holds its
    devices; ``allocate`` is Allocate for one node."""

    def __init__(
        self,
        state: ClusterState,
        features: Features = Features(),  # noqa: B008 - frozen dataclass
        *,
        exclude: Iterable[ResourceClaim] = (),
    ) -> None:
        self.state = state
        self.features = features
        self.index = _index(state)
        self.held = _held(
            self.index, {(c.namespace, c.name) for c in exclude}, features.consumable_capacity
        )
        self._pools: dict[str, list[_Pool]] = {}
        self._counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self._plans: dict[int, _ClaimPlan] = {}
        self._shares = 0

    def plan(self, claim: ResourceClaim) -> _ClaimPlan:
        if id(claim) not in self._plans:
            self._plans[id(claim)] = plan_claim(claim)
        return self._plans[id(claim)]

    def allocate(self, node: Node, claims: Sequence[ResourceClaim | _ClaimPlan]) -> Allocation:
        plans = [c if isinstance(c, _ClaimPlan) else self.plan(c) for c in claims]
        search = _Search(self, node, plans)
        try:
            allocations = search.run()
        except _Fatal as exc:
            return Allocation(
                None, str(exc), node_error=exc.node, calls=search.calls, failed_request=exc.request
            )
        return Allocation(allocations, calls=search.calls)

    def verdicts(self, device_class: DeviceClass | None, spec: _Spec) -> list[Any]:
        """The verdicts of a class and a request's selectors, cached on the snapshot; errors
        name the claim as _CLAIM (see _named)."""
        key = (device_class.name if device_class else "", tuple(spec.selectors))
        cache = self.index.verdicts
        if key not in cache:
            if len(cache) >= 64:
                cache.pop(next(iter(cache)))
            cache[key] = _verdicts(self.index, device_class, spec.selectors, _CLAIM)
        return cache[key]

    def capacities(self, device: Device) -> dict[str, tuple[Quantity, Any]]:
        """A device's capacities, parsed once per snapshot."""
        cache = self.index.capacities
        found = cache.get(id(device))
        if found is None:
            found = cache[id(device)] = _capacities(device)
        return found

    def new_share_id(self) -> str:
        self._shares += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"dradash/share/{self._shares}"))

    # GatherPools ---------------------------------------------------------------------------

    def pools_for(self, node: Node) -> list[_Pool]:
        if node.name not in self._pools:
            gather = self._gather if self.features.skip_incomplete_pools else self._gather_134
            self._pools[node.name] = gather(node)
        return self._pools[node.name]

    def _relevant(self, node: Node) -> Iterable[ResourceSlice]:
        return [*self.index.on_node.get(node.name, ()), *self.index.shared]

    def _gather(self, node: Node) -> list[_Pool]:
        """GatherPools in pools_incubating.go (v0.35+)."""
        partitionable = self.features.partitionable_devices
        by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in self._relevant(node):
            spec = s.spec
            counters = items(spec.get("sharedCounters"))
            if not partitionable and (spec.get("perDeviceNodeSelection") is not None or counters):
                continue
            relevant = True if counters else _slice_reaches(node, s)
            if relevant is None:
                continue  # some future, unknown extension
            if relevant:
                _add_slice(by_pool, s)
        result, with_binding = [], []
        for key, slices in by_pool.items():
            count = slices[0].resource_slice_count
            if len(slices) == count:
                pool = self._build_pool(key, slices, None)
            else:
                obsolete, all_slices = self._slices_in_pool(key, slices[0].generation)
                if obsolete:
                    continue
                if len(all_slices) != count:
                    result.append(_Pool(*key, incomplete=True))
                    continue
                pool = self._build_pool(key, slices, all_slices)
            (with_binding if _has_binding_conditions(pool.slices) else result).append(pool)
        result.sort(key=lambda p: p.key)
        with_binding.sort(key=lambda p: p.key)
        return result + with_binding

    def _slices_in_pool(
        self, key: tuple[str, str], generation: int
    ) -> tuple[bool, list[ResourceSlice]]:
        """checkSlicesInPool."""
        found = []
        for s in self.index.by_pool.get(key, ()):
            if s.generation == generation:
                found.append(s)
            elif s.generation > generation:
                return True, []
        return False, found

    def _build_pool(
        self,
        key: tuple[str, str],
        slices: list[ResourceSlice],
        all_slices: list[ResourceSlice] | None,
    ) -> _Pool:
        """buildPool."""
        slices = sorted(slices, key=lambda s: s.name)
        if not self.features.partitionable_devices:
            problem = _duplicate_device(slices)
            if problem:
                return _Pool(*key, invalid=True, reason=problem)
            return _Pool(*key, slices=slices)
        with_counters = [s for s in slices if items(s.spec.get("sharedCounters"))]
        device_slices = [s for s in slices if not items(s.spec.get("sharedCounters"))]
        problem = _duplicate_device(device_slices)
        if problem:
            return _Pool(*key, invalid=True, reason=problem)
        counter_sets, problem = _counter_sets(with_counters)
        problem = problem or _consumption_problem(counter_sets, slices)
        if problem:
            return _Pool(*key, invalid=True, reason=problem)
        if all_slices is None or len(slices) == len(all_slices):
            return _Pool(*key, slices=device_slices, counter_sets=counter_sets)
        names = {s.name for s in slices}
        others = [s for s in all_slices if s.name not in names]
        problem = _consumption_problem(counter_sets, others)
        if problem:
            return _Pool(*key, invalid=True, reason=problem)
        return _Pool(*key, slices=device_slices, other_slices=others, counter_sets=counter_sets)

    def _gather_134(self, node: Node) -> list[_Pool]:
        """GatherPools in pools_experimental.go v0.34: incomplete pools are kept (the search
        uses them for ExactCount); no check against slices that do not reach the node."""
        by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        deferred = []
        for s in self._relevant(node):
            spec = s.spec
            if not self.features.partitionable_devices and (
                spec.get("perDeviceNodeSelection") is not None
            ):
                continue
            relevant = _slice_reaches(node, s)
            if relevant is None:
                continue
            if relevant:
                if _has_binding_conditions([s]):
                    deferred.append(s)
                else:
                    _add_slice(by_pool, s)
        for s in deferred:
            _add_slice(by_pool, s)
        result, with_binding = [], []
        for key, slices in by_pool.items():
            slices = sorted(slices, key=lambda s: s.name)
            pool = _Pool(*key, slices=slices)
            pool.incomplete = len(slices) != slices[0].resource_slice_count
            pool.reason = _duplicate_device(slices)
            pool.invalid = bool(pool.reason)
            if self.features.partitionable_devices:
                pool.counter_sets, _ = _counter_sets(slices)
            (with_binding if _has_binding_conditions(slices) else result).append(pool)
        result.sort(key=lambda p: p.key)
        with_binding.sort(key=lambda p: p.key)
        return result + with_binding

    def available_counters(self, pool: _Pool) -> dict[str, dict[str, Quantity]]:
        """The counters of a pool minus those allocated devices consume (cached, as upstream
        caches it on the Allocator; keyed by driver and pool, where upstream uses the pool
        name alone)."""
        if pool.key not in self._counters:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in [*pool.slices, *pool.other_slices]:
                for device in s.devices:
                    if not self.held.allocated((s.driver, s.pool_name, device.name)):
                        continue
                    for use in _consumes(device):
                        counters = available.get(text(use.get("counterSet")))
                        if counters is None:
                            continue
                        for name, value in mapping(use.get("counters")).items():
                            q = quantity_of(value)
                            if q is not None and name in counters:
                                counters[name] = counters[name].sub(q)
            self._counters[pool.key] = available
        return self._counters[pool.key]


def _add_slice(pools: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    """addSlice: a newer generation replaces what was collected, an older one is ignored."""
    key = (s.driver, s.pool_name)
    collected = pools.get(key)
    if collected is None or s.generation > collected[0].generation:
        pools[key] = [s]
    elif s.generation == collected[0].generation:
        collected.append(s)


# --- explain -------------------------------------------------------------------------------

_ALL = object()  # a device every eligible node reaches


def _prefilter(plans: list[_ClaimPlan], state: ClusterState, features: Features) -> str | None:
    """The DynamicResources PreFilter checks of the claims to allocate."""
    for plan in plans:
        for request in plan.requests:
            if request.exactly is not None:
                checks = [(request.exactly.class_name, request.name)]
            elif request.first_available:
                if not features.prioritized_list:
                    return (
                        f"resource claim {plan.label}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled"
                    )
                checks = [(s.class_name, s.full_name) for s in request.first_available]
            else:
                return f"resource claim {plan.label}, request {request.name}: unknown request type"
            for class_name, name in checks:
                if not class_name:
                    return f"request {name}: unsupported request type"
                if class_name not in state.classes:
                    return f"request {name}: device class {class_name} does not exist"
    return None


def error_reason(error: str) -> str:
    """The DESIGN reason code for an error the scheduler stops with."""
    if " does not exist" in error or "could not retrieve device class" in error:
        return "class-missing"
    if "CEL runtime error" in error or "CEL compile error" in error:
        return "selector-error"
    if "exceeds the claim limit" in error:
        return "too-many-devices"
    if "is currently being updated" in error:
        return "pool-incomplete"
    if (
        "is currently invalid" in error
        or " is invalid: " in error
        or "invalid resource pools" in error
    ):
        return "pool-invalid"
    if "claim constraint would not be satisfied" in error:
        return "constraint-unsatisfiable"
    return "feature-disabled"  # gates off, or fields this scheduler does not support


@dataclass
class _Alternative:
    """Everything the funnel of one request (or subrequest) needs."""

    claim_index: int
    request_index: int
    sub_index: int
    plan: _ClaimPlan
    spec: _Spec
    device_class: DeviceClass | None
    verdicts: list[Any] | None
    constraints: list[dict[str, Any]]
    steps: list[tuple[str, str] | None] = field(default_factory=list)  # per index.current
    reaches: dict[int, Any] = field(default_factory=dict)  # by position, for devices passing
    # per node: devices that pass every device-level step
    passing: dict[str, list[Device]] = field(default_factory=dict)
    passing_all: list[Device] = field(default_factory=list)  # those every node reaches
    # per node: [nodes, free, taints, constraints] counts
    counts: dict[str, list[int]] = field(default_factory=dict)
    counts_all: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    global_counts: list[int] = field(default_factory=lambda: [0] * 5)
    satisfiable: dict[str, bool] = field(default_factory=dict)
    error: str | None = None

    @property
    def name(self) -> str:
        return self.spec.full_name


class _Explainer:
    def __init__(
        self,
        state: ClusterState,
        allocator: Allocator,
        plans: list[_ClaimPlan],
        eligible: list[Node],
        features: Features,
    ) -> None:
        self.state = state
        self.allocator = allocator
        self.index = allocator.index
        self.plans = plans
        self.eligible = eligible
        self.eligible_names = {n.name for n in eligible}
        self.features = features
        self.alternatives: list[_Alternative] = []
        self._reach_cache: dict[int, Any] = {}
        self._slice_node_cache: dict[int, frozenset[str]] = {}
        self._bad_pool_nodes: frozenset[str] | None = None
        self._selector_cache: dict[str, frozenset[str]] = {}
        for ci, plan in enumerate(plans):
            for ri, request in enumerate(plan.requests):
                for si, spec in enumerate(request.alternatives):
                    device_class = state.classes.get(spec.class_name)
                    self.alternatives.append(
                        _Alternative(
                            ci,
                            ri,
                            si,
                            plan,
                            spec,
                            device_class,
                            allocator.verdicts(device_class, spec)
                            if device_class is not None and None not in spec.selectors
                            else None,
                            [c for c in plan.constraints if _constraint_applies(c, spec)],
                        )
                    )

    # device-level steps --------------------------------------------------------------------

    def pool_problems(self, mode: str) -> dict[Any, tuple[str, str] | None]:
        """The problems of current pools for one allocation mode (cached on the snapshot)."""
        features = self.features
        gates = (
            features.partitionable_devices,
            features.skip_incomplete_pools or mode == "All",
            mode == "All",
        )
        cache = self.index.pool_problems.get(gates)
        if cache is None:
            cache = self.index.pool_problems[gates] = {}
        return cache

    def pool_problem(self, key: tuple[str, str], mode: str) -> tuple[str, str] | None:
        """Why a current-generation pool is unusable: ("incomplete"|"invalid", detail)."""
        cache = self.pool_problems(mode)
        if key in cache:
            return cache[key]
        pool = self.state.pools[key]
        problem: tuple[str, str] | None = None
        device_slices = pool.slices
        if self.features.partitionable_devices:
            device_slices = [s for s in pool.slices if not items(s.spec.get("sharedCounters"))]
        duplicate = _duplicate_device(device_slices)
        if duplicate:
            problem = ("invalid", f"pool invalid: {duplicate}")
        elif self.features.partitionable_devices:
            sets, detail = _counter_sets(
                s for s in pool.slices if items(s.spec.get("sharedCounters"))
            )
            detail = detail or _consumption_problem(sets, pool.slices)
            if detail:
                problem = ("invalid", f"pool invalid: {detail}")
        if (
            problem is None
            and not pool.complete
            and (self.features.skip_incomplete_pools or mode == "All")
        ):
            problem = (
                "incomplete",
                f"pool incomplete: {len(pool.slices)} of {pool.resource_slice_count} slices",
            )
        cache[key] = problem
        return problem

    def gate_problem(self, device: Device) -> str | None:
        s = device.slice
        features = self.features
        if not features.partitionable_devices:
            if s.spec.get("perDeviceNodeSelection") is not None:
                return "per-device node selection needs DRAPartitionableDevices"
            if _consumes(device):
                return "consumes counters; needs DRAPartitionableDevices"
        if not features.binding_conditions and items(device.raw.get("bindingConditions")):
            return "has binding conditions; needs DRADeviceBindingConditions"
        return None

    def reach(self, device: Device) -> Any:
        """The eligible nodes that reach the device: a frozenset, or _ALL."""
        s = device.slice
        if s.spec.get("perDeviceNodeSelection") is True:
            raw = device.raw
            return self._reach(
                text(raw.get("nodeName")), raw.get("allNodes") is True, raw.get("nodeSelector")
            )
        cached = self._reach_cache.get(id(s))
        if cached is None:
            spec = s.spec
            cached = self._reach(
                text(spec.get("nodeName")), spec.get("allNodes") is True, spec.get("nodeSelector")
            )
            self._reach_cache[id(s)] = cached
        return cached

    def _reach(self, node_name: str, all_nodes: bool, selector: Any) -> Any:
        if node_name:
            return frozenset([node_name]) & self.eligible_names
        if all_nodes:
            return _ALL if self.eligible_names else frozenset()
        if isinstance(selector, dict):
            key = repr(selector)
            if key not in self._selector_cache:
                self._selector_cache[key] = frozenset(
                    n.name
                    for n in self.eligible
                    if node_selector_matches(selector, n.name, n.labels)
                )
            found = self._selector_cache[key]
            return _ALL if found and len(found) == len(self.eligible_names) else found
        return frozenset()

    def device_steps(self, alt: _Alternative) -> None:
        """The first failing step of every current device (None for those passing), with the
        global counts of the steps up to "pools" and the per-node counts after it."""
        state, held, features = self.state, self.allocator.held, self.features
        spec = alt.spec
        current = self.index.current
        if alt.device_class is None:
            missing = ("class", f"device class {spec.class_name} does not exist")
            alt.steps = [missing] * len(current)
            return
        wanted = set(state.class_drivers(alt.device_class))
        verdicts = alt.verdicts
        taints = self.index.taints if features.device_taints else {}
        dedicated = held.dedicated if not spec.admin else frozenset()
        consumable = features.consumable_capacity
        steps: list[tuple[str, str] | None] = []
        alt.steps = steps
        append = steps.append
        reaches = alt.reaches
        pools = self.pool_problems(spec.mode)
        by_reach: dict[Any, list[Any]] = {}
        class_no, request_no = ("class-selectors", ""), ("request-selectors", "")
        in_class = in_request = in_pools = 0
        slice_of: ResourceSlice | None = None
        slice_problem: str | None = None
        slice_reach: Any = None
        for device, key, position, pool_key in current:
            if wanted and key[0] not in wanted:
                append(_DRIVER_STEP)
                continue
            verdict = verdicts[position] if verdicts is not None else True
            if verdict is not True:
                if verdict is _CLASS_NO:
                    append(class_no)
                elif verdict is _REQUEST_NO:
                    in_class += 1
                    append(request_no)
                else:
                    step = (
                        "class-selectors" if verdict.startswith("class ") else "request-selectors"
                    )
                    in_class += step == "request-selectors"
                    append((step, _named(verdict, alt.plan.label)))
                continue
            in_class += 1
            in_request += 1
            s = device.slice
            if s is not slice_of:  # devices come slice by slice: what a slice decides, once
                slice_of = s
                problem = (
                    pools[pool_key] if pool_key in pools else self.pool_problem(pool_key, spec.mode)
                )
                slice_problem = problem[1] if problem else None
                per_device = s.spec.get("perDeviceNodeSelection") is True
                slice_reach = None if per_device else self.reach(device)
            detail = slice_problem or self.gate_problem(device)
            if detail:
                append(("pools", detail))
                continue
            in_pools += 1
            reach = slice_reach if slice_reach is not None else self.reach(device)
            if not reach:
                append(_NO_NODE_STEP)
                continue
            level, failed = 1, None
            if key in dedicated and not (consumable and device.allow_multiple_allocations):
                failed = ("free", f"allocated to {held.owners(key)}")
            else:
                level = 2
                taint = None
                for t in taints.get(id(device), ()):
                    if text(t.get("effect")) in (NO_SCHEDULE, NO_EXECUTE) and not _tolerated(
                        spec.tolerations, t
                    ):
                        taint = t
                        break
                if taint is not None:
                    failed = ("taints", f"taint {_taint_text(taint)} not tolerated")
                else:
                    level = 3
                    missing = self.missing_attribute(alt, device) if alt.constraints else ""
                    if missing:
                        failed = ("constraints", missing)
                    else:
                        level = 4
            append(failed)
            # Counted per set of nodes first (devices of one slice share it), per node below.
            levels = by_reach.get(reach)
            if levels is None:
                levels = by_reach[reach] = [0, 0, 0, 0, []]
            levels[level - 1] += 1
            if failed is None:
                reaches[position] = reach
                levels[4].append(device)
        drivers = len(current) - sum(1 for step in steps if step is _DRIVER_STEP)
        alt.global_counts = [len(current), drivers, in_class, in_request, in_pools]
        for reach, (one, two, three, four, passing) in by_reach.items():
            vector = (one + two + three + four, two + three + four, three + four, four)
            targets = [alt.counts_all] if reach is _ALL else []
            for name in () if reach is _ALL else reach:
                node_counts = alt.counts.get(name)
                if node_counts is None:
                    node_counts = alt.counts[name] = [0, 0, 0, 0]
                targets.append(node_counts)
                if passing:
                    alt.passing.setdefault(name, []).extend(passing)
            if reach is _ALL:
                alt.passing_all.extend(passing)
            for node_counts in targets:
                for i in range(4):
                    node_counts[i] += vector[i]

    def missing_attribute(self, alt: _Alternative, device: Device) -> str:
        for constraint in alt.constraints:
            for field_name in ("matchAttribute", "distinctAttribute"):
                name = constraint.get(field_name)
                if name is None:
                    continue
                if lookup_attribute(device, device.driver, text(name)) is None:
                    return f"no attribute {text(name)} ({field_name})"
        return ""

    # enough on one node --------------------------------------------------------------------

    def satisfiable(self, alt: _Alternative, node: Node) -> bool:
        """Whether this request alone could get its devices on the node."""
        if node.name in alt.satisfiable:
            return alt.satisfiable[node.name]
        devices = alt.passing.get(node.name, []) + alt.passing_all
        spec = alt.spec
        simple = not any(_consumes(d) for d in devices) and not (
            self.features.consumable_capacity and any(d.allow_multiple_allocations for d in devices)
        )
        if simple and spec.capacity is not None and spec.mode == "ExactCount":
            # Dedicated devices: whether the requested capacity fits is up to each device.
            held = self.allocator.held
            devices = [
                d
                for d in devices
                if _fits_capacity(
                    held.capacity.get(d.key, {}), spec.wanted, self.allocator.capacities(d), {}
                )
            ]
        elif spec.capacity is not None:
            simple = False
        if not devices or spec.mode == "ExactCount" and len(devices) < spec.count:
            ok = False
        elif spec.mode == "All" and simple:
            # Every matching device the node reaches must be usable, and none of its pools
            # incomplete or invalid (validateDeviceRequest errors out then).
            reached = alt.counts.get(node.name, [0])[0] + alt.counts_all[0]
            ok = (
                reached == len(devices) <= MAX_RESULTS
                and node.name not in self.bad_pool_nodes()
                and self._count_fits(alt, devices, len(devices))
            )
        elif simple and spec.mode == "ExactCount":
            ok = self._count_fits(alt, devices, spec.count)
        else:
            ok = self._alone(alt, node)
        alt.satisfiable[node.name] = ok
        return ok

    def bad_pool_nodes(self) -> frozenset[str]:
        """Nodes that see a pool that is incomplete or invalid."""
        if self._bad_pool_nodes is None:
            found: set[str] = set()
            for key, pool in self.state.pools.items():
                if not pool.complete or not pool.valid:
                    for s in self.index.by_pool.get(key, ()):
                        found |= self._slice_nodes(s)
            self._bad_pool_nodes = frozenset(found)
        return self._bad_pool_nodes

    def _count_fits(self, alt: _Alternative, devices: list[Device], need: int) -> bool:
        """Whether ``need`` of the devices satisfy the request's own constraints."""
        for constraint in alt.constraints:
            if constraint.get("matchAttribute") is not None:
                name = text(constraint.get("matchAttribute"))
                groups: Counter[Any] = Counter()
                for d in devices:
                    attribute = lookup_attribute(d, d.driver, name) or {}
                    kind = _kind(attribute)
                    groups[(kind, _typed(attribute, kind) if kind else None)] += 1
                if max(groups.values(), default=0) < need:
                    return False
            elif constraint.get("distinctAttribute") is not None:
                name = text(constraint.get("distinctAttribute"))
                values = set()
                for d in devices:
                    attribute = lookup_attribute(d, d.driver, name) or {}
                    kind = _kind(attribute)
                    if kind is not None:
                        values.add((kind, _typed(attribute, kind)))
                if len(values) < need:
                    return False
        return True

    def _alone(self, alt: _Alternative, node: Node) -> bool:
        spec = alt.spec
        alone = _ClaimPlan(
            claim=None,
            label=alt.plan.label,
            name=alt.plan.name,
            requests=[_RequestPlan(spec.full_name, spec, [])],
            constraints=[{**c, "requests": []} for c in alt.constraints],
            config=[],
        )
        outcome = self.allocator.allocate(node, [alone])
        return outcome.allocations is not None

    # the funnel ----------------------------------------------------------------------------

    def vector(self, alt: _Alternative, node: Node) -> list[int]:
        counts = alt.counts.get(node.name, [0, 0, 0, 0])
        v = [a + b for a, b in zip(counts, alt.counts_all, strict=True)]
        v.append(v[3] if v[3] and self.satisfiable(alt, node) else 0)
        return v

    def best_node(self, alt: _Alternative, chosen: Node | None) -> tuple[Node | None, list[int]]:
        if chosen is not None:
            return chosen, self.vector(alt, chosen)
        best, best_key, best_vector = None, None, [0] * 5
        candidates = {*alt.counts} if not alt.counts_all[0] else None
        for node in self.eligible:
            if candidates is not None and node.name not in candidates:
                continue
            v = self.vector(alt, node)
            reached = next((i for i, x in enumerate(v) if x == 0), len(v))
            key = (reached, *reversed(v))
            if best_key is None or key > best_key:
                best, best_key, best_vector = node, key, v
        if best is None and self.eligible:
            best = self.eligible[0]
        return best, best_vector

    def explanation(self, alt: _Alternative, chosen: Node | None) -> RequestExplanation:
        node, vector = self.best_node(alt, chosen)
        numbers = alt.global_counts + vector
        funnel = list(zip(STEPS, numbers, strict=True))
        empty = next((step for step, n in funnel if n == 0), None)
        drivers = set(self.state.class_drivers(alt.device_class)) if alt.device_class else set()
        enough: dict[Any, bool] = {}  # reach → does some node there have enough?
        short = (
            f"fewer than {alt.spec.count} usable devices on any node"
            if alt.spec.mode == "ExactCount"
            else "not every matching device on its node is usable"
        )
        checks = []
        for (_, key, position, _), failed in zip(self.index.current, alt.steps, strict=True):
            if drivers and key[0] not in drivers:
                continue
            if failed is None:
                reach = alt.reaches[position]
                ok = enough.get(reach)
                if ok is None:
                    names = self.eligible_names if reach is _ALL else reach
                    ok = enough[reach] = any(self._satisfiable_name(alt, n) for n in sorted(names))
                failed = None if ok else ("count", short)
            step, detail = failed or (None, "")
            checks.append(DeviceCheck(key[0], key[1], key[2], step, detail))
        return RequestExplanation(
            name=alt.name,
            funnel=funnel,
            devices=checks,
            empty_step=empty,
            error=alt.error,
            node=node.name if node is not None else None,
        )

    def _satisfiable_name(self, alt: _Alternative, name: str) -> bool:
        node = self.state.nodes.get(name)
        return node is not None and self.satisfiable(alt, node)

    # where the search has to run -----------------------------------------------------------

    def node_plan(self) -> tuple[set[str], Callable[[Node], bool]]:
        """Nodes where Allocate could stop with an error, and a test for nodes where it could
        succeed (every request has a usable candidate the node reaches)."""
        held, features = self.allocator.held, self.features
        position, keys = self.index.position, self.index.keys
        risky: set[str] = set()
        any_all = False
        for alt in self.alternatives:
            if alt.verdicts is None:
                continue
            all_mode = alt.spec.mode != "ExactCount"
            any_all = any_all or all_mode
            for i, verdict in enumerate(alt.verdicts):
                device = self.index.devices[i]
                if isinstance(verdict, str):
                    if all_mode or alt.spec.admin or device.key not in held.dedicated:
                        risky |= self._nodes_reaching_slice(device)
                elif verdict is True and all_mode and alt.constraints:
                    risky |= self._nodes_reaching_slice(device)
        problem_pools = [
            key
            for key, pool in self.state.pools.items()
            if (not pool.complete or not pool.valid)
            and (any_all or (not pool.valid and not features.skip_incomplete_pools))
        ]
        for key in problem_pools:
            for s in self.index.by_pool.get(key, ()):
                if s.devices:
                    risky |= self._nodes_reaching_slice(s.devices[0], whole_slice=True)
                else:
                    risky |= self._slice_nodes(s)
        requests = [
            [alt for alt in self.alternatives if (alt.claim_index, alt.request_index) == key]
            for key in dict.fromkeys((a.claim_index, a.request_index) for a in self.alternatives)
        ]

        def fits(alt: _Alternative, visible: list[Device]) -> bool:
            """Whether the node has as many candidates for the alternative as it needs (a
            device serves a request at most once; "All" needs every candidate free)."""
            if alt.verdicts is None:
                return False
            free = busy = 0
            verdicts, admin = alt.verdicts, alt.spec.admin
            for device in visible:
                i = position[id(device)]
                verdict = verdicts[i]
                if verdict is not True and not isinstance(verdict, str):
                    continue
                if (
                    admin
                    or keys[i] not in held.dedicated
                    or (features.consumable_capacity and device.allow_multiple_allocations)
                ):
                    free += 1
                else:
                    busy += 1
            if alt.spec.mode == "ExactCount":
                return free >= alt.spec.count
            return free > 0 and not busy

        def may_succeed(node: Node) -> bool:
            visible = [d for s in self._visible_slices(node) for d in s.devices]
            return all(any(fits(alt, visible) for alt in alts) for alts in requests)

        return risky, may_succeed

    def _visible_slices(self, node: Node) -> list[ResourceSlice]:
        out = list(self.index.on_node.get(node.name, ()))
        for s in self.index.shared:
            if node.name in self._slice_nodes(s):
                out.append(s)
        return out

    def _slice_nodes(self, s: ResourceSlice) -> frozenset[str]:
        """Eligible nodes a slice may be relevant for (any device's node selection)."""
        cached = self._slice_node_cache.get(id(s))
        if cached is None:
            cached = self._slice_node_cache[id(s)] = self._compute_slice_nodes(s)
        return cached

    def _compute_slice_nodes(self, s: ResourceSlice) -> frozenset[str]:
        spec = s.spec
        if items(spec.get("sharedCounters")) or (
            spec.get("perDeviceNodeSelection") is True
            and any(self._device_reach(d) is _ALL for d in s.devices)
        ):
            return frozenset(self.eligible_names)
        if spec.get("perDeviceNodeSelection") is True:
            found: set[str] = set()
            for d in s.devices:
                found |= self._device_reach(d)  # type: ignore[arg-type]
            return frozenset(found)
        reach = self._reach(
            text(spec.get("nodeName")), spec.get("allNodes") is True, spec.get("nodeSelector")
        )
        return frozenset(self.eligible_names) if reach is _ALL else reach

    def _device_reach(self, device: Device) -> Any:
        raw = device.raw
        return self._reach(
            text(raw.get("nodeName")), raw.get("allNodes") is True, raw.get("nodeSelector")
        )

    def _nodes_reaching_slice(self, device: Device, whole_slice: bool = False) -> set[str]:
        if whole_slice or device.slice.spec.get("perDeviceNodeSelection") is not True:
            return set(self._slice_nodes(device.slice))
        reach = self._device_reach(device)
        return set(self.eligible_names) if reach is _ALL else set(reach)


def explain(
    state: ClusterState,
    claims: list[ResourceClaim],
    *,
    pod: Pod | None = None,
    features: Features = Features(),  # noqa: B008 - frozen dataclass
    max_nodes: int | None = None,
) -> Explanation:
    """Would the structured allocator allocate these claims (a Pod's, allocated together) now,
    on which node, and if not, where does it stop?

    Claims that are already allocated are not allocated again; their allocation's node
    selector restricts the nodes. When every claim given is allocated, they are explained as
    if they were not (their own devices count as free). Devices held by every other claim are
    in use.

    The nodes are those the Pod may use (``pod_node_problem``), in name order. Like the
    scheduler, which filters every node and gives up on the first allocator error, an error on
    any node makes the result an error; ``node`` is the first node where the claims fit. The
    allocator runs only on nodes where it could succeed or fail with an error (plus the first
    node, which surfaces errors that do not depend on the node); with ``max_nodes``, on at most
    that many. (On clusters of more than 100 nodes the scheduler stops filtering once it has
    enough feasible nodes, so an error on a node it never reaches would not stop it.)
    """
    with gc_paused():  # tens of thousands of small objects, none cyclic
        return _explain(state, list(claims), pod, features, max_nodes)


def _explain(
    state: ClusterState,
    claims: list[ResourceClaim],
    pod: Pod | None,
    features: Features,
    max_nodes: int | None,
) -> Explanation:
    pending = [c for c in claims if not c.allocated]
    to_allocate = pending if pending or not claims else claims
    held_claims = [c for c in claims if c.allocated and c not in to_allocate]
    allocator = Allocator(state, features, exclude=to_allocate)
    plans = [allocator.plan(c) for c in to_allocate]
    eligible = [
        n
        for n in sorted(state.nodes.values(), key=lambda n: n.name)
        if (pod is None or pod_node_problem(pod, n) is None)
        and all(_allocation_allows(c, n) for c in held_claims)
    ]
    explainer = _Explainer(state, allocator, plans, eligible, features)
    for alt in explainer.alternatives:
        explainer.device_steps(alt)

    def finish(chosen: Node | None, **kwargs: Any) -> Explanation:
        requests = [explainer.explanation(alt, chosen) for alt in explainer.alternatives]
        return Explanation(requests=requests, **kwargs)

    error = _prefilter(plans, state, features)
    if error is not None:
        for alt in explainer.alternatives:
            if f"request {alt.name}:" in error or (
                alt.spec.parent and f"request {alt.spec.parent}:" in error
            ):
                alt.error = error
        return finish(None, allocatable=None, error=error, node=None, reason=error_reason(error))
    if not eligible:
        explanation = finish(None, allocatable=False, error=None, node=None)
        explanation.reason = _funnel_reason(explainer, explanation) if plans else None
        if held_claims:
            explanation.message = "resourceclaim not available on the node"
        return explanation
    if not plans:
        return finish(eligible[0], allocatable=True, error=None, node=eligible[0].name)

    risky, may_succeed = explainer.node_plan()
    last_risky = max(risky) if risky else ""
    success: tuple[Node, Allocation] | None = None
    searched = 0
    node_errors: list[str] = []
    for i, node in enumerate(eligible):
        if success is not None and node.name > last_risky:
            break
        if not (i == 0 or node.name in risky or (success is None and may_succeed(node))):
            continue
        if max_nodes is not None and searched >= max_nodes:
            break
        outcome = allocator.allocate(node, plans)
        searched += 1
        if outcome.error is not None and not outcome.node_error:
            if outcome.failed_request is not None:
                for alt in explainer.alternatives:
                    if (
                        alt.claim_index,
                        alt.request_index,
                        alt.sub_index,
                    ) == outcome.failed_request:
                        alt.error = outcome.error
            return finish(
                None,
                allocatable=None,
                error=outcome.error,
                node=None,
                reason=error_reason(outcome.error),
                searched_nodes=searched,
            )
        if outcome.node_error and outcome.error:
            node_errors.append(outcome.error)
        if outcome.allocations is not None and success is None:
            success = (node, outcome)
    if success is not None:
        node, outcome = success
        allocations = outcome.allocations or []
        results = [
            (r["request"], r["driver"], r["pool"], r["device"])
            for a in allocations
            for r in a["devices"]["results"]
        ]
        return finish(
            node,
            allocatable=True,
            error=None,
            node=node.name,
            results=results,
            allocations=allocations,
            searched_nodes=searched,
        )
    explanation = finish(
        None,
        allocatable=False,
        error=None,
        node=None,
        searched_nodes=searched,
        message=node_errors[0] if node_errors else "cannot allocate all claims",
    )
    explanation.reason = _funnel_reason(explainer, explanation)
    if node_errors and explanation.reason == "insufficient-count":
        explanation.reason = "pool-invalid"  # the devices of invalid pools were not counted
    return explanation


def _funnel_reason(explainer: _Explainer, explanation: Explanation) -> str:
    """The reason of a claim that does not fit: the step where the funnel of the first
    failing request empties (for a firstAvailable request, its alternative that got furthest)."""
    by_request: dict[tuple[int, int], list[tuple[_Alternative, RequestExplanation]]] = {}
    for alt, request in zip(explainer.alternatives, explanation.requests, strict=True):
        by_request.setdefault((alt.claim_index, alt.request_index), []).append((alt, request))
    for pairs in by_request.values():
        if any(r.empty_step is None for _, r in pairs):
            continue
        alt, request = max(pairs, key=lambda p: STEPS.index(p[1].empty_step or "count"))
        step = request.empty_step or "count"
        if step == "pools":
            kinds = Counter(
                "invalid"
                if d.detail.startswith("pool invalid")
                else "incomplete"
                if d.detail.startswith("pool incomplete")
                else "feature"
                for d in request.devices
                if d.failed_step == "pools"
            )
            kind = kinds.most_common(1)[0][0] if kinds else "incomplete"
            return {"invalid": "pool-invalid", "feature": "feature-disabled"}.get(
                kind, "pool-incomplete"
            )
        if step == "count" and _constraints_block(explainer, alt):
            return "constraint-unsatisfiable"
        return STEP_REASONS[step]
    for plan in explainer.plans:
        for constraint in plan.constraints:
            names = strings(constraint.get("requests"))
            if len(names) > 1 or (not names and len(plan.requests) > 1):
                return "constraint-unsatisfiable"
    return "insufficient-count"


def _constraints_block(explainer: _Explainer, alt: _Alternative) -> bool:
    """Whether some node has enough usable devices for the request, but never a set of them
    that satisfies the request's own matchAttribute/distinctAttribute constraints."""
    if not alt.constraints or alt.spec.mode != "ExactCount":
        return False
    need = alt.spec.count
    enough = [
        d + alt.passing_all for d in alt.passing.values() if len(d) + len(alt.passing_all) >= need
    ]
    if not alt.passing and len(alt.passing_all) >= need:
        enough.append(alt.passing_all)
    return bool(enough) and not any(explainer._count_fits(alt, d, need) for d in enough)
