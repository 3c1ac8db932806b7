"""The explainer: why the allocator would (not) allocate a Pod's claims, device by device.

``explain(state, claims, pod=…)`` runs the allocator the way kube-scheduler's DynamicResources
plugin does (``dynamicresources.go``): PreFilter (device classes, the prioritized-list gate),
then Filter — Allocate — on every node the Pod may use, where any allocator error aborts the
scheduling attempt. Beside it, a funnel per request: how many devices are left after each of
``STEPS``, counted over every node the Pod may use, and per device the first step it fails.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dradash.dra.allocator.budget import TIMED_OUT, SearchBudget, timeout_status
from dradash.dra.allocator.constraints import (
    attribute_set,
    intersects,
    lookup_attribute,
    typed,
    value_kind,
)
from dradash.dra.allocator.consumable import fits_capacity
from dradash.dra.allocator.features import Features
from dradash.dra.allocator.index import CLASS_NO, REQUEST_NO, named
from dradash.dra.allocator.pools import (
    consumes,
    consumption_problem,
    counter_sets,
    duplicate_device,
)
from dradash.dra.allocator.scheduler import (
    allocation_allows,
    pod_node_problem,
    untolerated,
)
from dradash.dra.allocator.search import (
    MAX_RESULTS,
    Allocation,
    Allocator,
    ClaimPlan,
    RequestPlan,
    Spec,
    constraint_applies,
)
from dradash.dra.extended import in_memory_claim, requests_and_mappings
from dradash.dra.fields import items, strings, text
from dradash.dra.gc import gc_paused
from dradash.dra.nodes import node_selector_matches
from dradash.dra.objects import Device, DeviceClass, Node, Pod, Pool, ResourceClaim, ResourceSlice
from dradash.dra.state import ClusterState
from dradash.dra.words import listing, plural

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


@dataclass(slots=True, frozen=True)
class DeviceCheck:
    driver: str
    pool: str
    device: str
    failed_step: str | None  # the first STEPS entry the device fails, None if it passes all
    detail: str = ""
    # The device fails no other step from the request's selectors on: it would serve the
    # request but for this one (what a summary names as lost on the way).
    sole: bool = False


@dataclass
class RequestExplanation:
    name: str  # "req", or "req/sub" for a firstAvailable subrequest
    funnel: list[tuple[str, int]]  # (step, devices remaining after it), in STEPS order
    devices: list[DeviceCheck]
    empty_step: str | None  # first step where remaining hit 0
    error: str | None = None  # an allocator error raised for this request
    node: str | None = None  # the node whose devices the "count" step counts
    need: int = 1  # devices the request needs: its count (1 for allocationMode All)
    short_step: str | None = None  # first step where fewer than ``need`` remain
    claim: str = ""  # the claim the request belongs to, namespace/name

    @cached_property
    def tally(self) -> Tally:
        """The failed devices counted once, for summaries (many Pods share one explanation)."""
        tally = Tally()
        candidates = tally.candidate_pools
        for d in self.devices:
            step = d.failed_step
            if step is None:
                candidates.add((d.driver, d.pool))
                continue
            if step in CANDIDATE_STEPS:
                candidates.add((d.driver, d.pool))
            if d.detail:
                tally.details.setdefault(step, Counter())[d.detail] += 1
                if step == "free" and d.detail.startswith(ALLOCATED_TO):
                    tally.holders[d.detail.removeprefix(ALLOCATED_TO)] += 1
            if step == "pools":
                tally.pools.setdefault(d.pool, d.detail)
            if d.sole:
                where = (f"{d.driver}/{d.pool}", d.detail) if step == "pools" else ("", d.detail)
                tally.sole[(step, *where)] += 1
                if step == "pools":
                    tally.sole_pools[(d.driver, d.pool, d.detail)] += 1
        return tally


# The steps a device that passes the request's selectors can fail at: it is one the request
# could use, but for its pool, node, holder, taints or constraints.
CANDIDATE_STEPS = frozenset(("pools", "nodes", "free", "taints", "constraints", "count"))
ALLOCATED_TO = "allocated to "  # the detail of a device failing the "free" step, then its holder


@dataclass
class Tally:
    details: dict[str, Counter[str]] = field(default_factory=dict)  # step → detail → devices
    pools: dict[str, str] = field(default_factory=dict)  # pool → detail of its devices
    # (step, driver/pool, detail) → devices that fail only that step (pool only for "pools")
    sole: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    lost: dict[str, list[str]] = field(default_factory=dict)  # diagnosis._lost, by step
    # (driver, pool, detail) → devices that fail only the "pools" step: free, reachable and
    # untainted, in a pool the allocator skips (what completing the pool would give)
    sole_pools: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    holders: Counter[str] = field(default_factory=Counter)  # "ns/claim" → devices it holds
    # (driver, pool) of every device passing the request's selectors (the findings about
    # those pools concern the request: dradash.dra.concerns)
    candidate_pools: set[tuple[str, str]] = field(default_factory=set)


def held_by(holders: Counter[str], limit: int = 3) -> str:
    """ "16 devices held by 10 claims: ns/a (2), ns/b (2), ns/c (2) and 7 more" (the claims
    holding the most first); "2 devices held by ns/a" for one claim."""
    total = sum(holders.values())
    ranked = sorted(holders.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(ranked) == 1:
        return f"{total} device{'' if total == 1 else 's'} held by {ranked[0][0]}"
    shown = [f"{claim} ({n})" for claim, n in ranked]
    listed = listing(shown, limit)
    devices = f"{total} device{'' if total == 1 else 's'}"
    if any(" " in claim for claim in holders):  # "earlier members of gang …" stands for several
        return f"{devices} held by {listed}"
    return f"{devices} held by {len(ranked)} claims: {listed}"


@dataclass(frozen=True)
class NodeOutcome:
    """The allocator's answer on one node: fit, nofit, node-error (an error that makes only
    this node unusable), error (the scheduler aborts the attempt) or timeout (the search ran
    out of its budget: the scheduler's "timed out trying to allocate devices")."""

    node: str
    outcome: str
    error: str = ""
    # The Pod's extended resources that the node's device plugin serves instead of DRA.
    device_plugin: tuple[str, ...] = ()
    # Why the claims do not fit on a "nofit" node, for people (_Explainer.node_why): "no device
    # of class X on this node", "0 free of 2 needed: …"; and the funnel step it is about.
    why: str = ""
    why_step: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node": self.node, "outcome": self.outcome, "error": self.error}
        if self.device_plugin:
            out["device_plugin"] = list(self.device_plugin)
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class Explanation:
    allocatable: bool | None  # None exactly when the allocator would stop with an error
    error: str | None
    node: str | None  # a node where the claims allocate now (the first by name)
    requests: list[RequestExplanation]
    results: list[tuple[str, str, str, str]] = field(default_factory=list)
    reason: str | None = None
    # One AllocationResult (as status.allocation would hold it on ``node``) per claim allocated.
    allocations: list[dict[str, Any]] = field(default_factory=list)
    # The scheduler's per-node status when nothing fits ("cannot allocate all claims", …).
    message: str | None = None
    searched_nodes: int = 0  # nodes the allocator ran on
    # The allocator's answer on the nodes the Pod may use, in name order: every one of them
    # when ``nodes_complete`` (``explain(every_node=True)``), else those the search decided.
    nodes: list[NodeOutcome] = field(default_factory=list)
    nodes_complete: bool = True
    eligible_nodes: int = 0  # how many nodes the Pod may use
    claims: list[str] = field(default_factory=list)  # the claims explained together
    request: str | None = None  # the request whose funnel gives the reason, if one does
    # Searches that ran out of their budget (budget.py): how many nodes timed out, the calls
    # each got, whether the wall-clock safety net stopped one, and how many nodes were left
    # unsearched because enough had timed out already.
    timed_out_nodes: int = 0
    budget_calls: int = 0
    by_clock: bool = False
    not_searched: int = 0

    @cached_property
    def first_detail(self) -> str:
        """The detail of the first device check that failed with one (for summaries)."""
        return next(
            (d.detail for r in self.requests for d in r.devices if d.failed_step and d.detail), ""
        )

    @property
    def deciding(self) -> RequestExplanation | None:
        """The request explanation the reason comes from (the first one short of devices)."""
        named_ = [r for r in self.requests if r.name == self.request]  # of several claims
        if named_:
            return next((r for r in named_ if r.short_step), named_[0])
        return next((r for r in self.requests if r.short_step), None)

    def as_dict(self) -> dict[str, Any]:
        """The explain API's JSON (DESIGN "REST API": GET …/claims/{ns}/{name}/explain)."""
        return {
            "allocatable": self.allocatable,
            "error": self.error,
            "node": self.node,
            "reason": self.reason,
            "requests": [
                {
                    "name": r.name,
                    "funnel": [{"step": step, "remaining": n} for step, n in r.funnel],
                    "devices": [
                        {
                            "driver": d.driver,
                            "pool": d.pool,
                            "device": d.device,
                            "failed_step": d.failed_step,
                            "detail": d.detail,
                        }
                        for d in r.devices
                    ],
                }
                for r in self.requests
            ],
            "nodes": [n.as_dict() for n in self.nodes],
            "allocation": self.allocations,
        }


def taint_text(taint: dict[str, Any]) -> str:
    value = text(taint.get("value"))
    return f"{text(taint.get('key'))}{'=' + value if value else ''}:{text(taint.get('effect'))}"


_DRIVER_STEP = ("driver", "", False)

_ALL = object()  # a device every eligible node reaches


def prefilter(plans: list[ClaimPlan], state: ClusterState, features: Features) -> str | None:
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
    if error.endswith(TIMED_OUT):
        return "allocation-timeout"
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


_LEVELS = ("pools", "nodes", "free", "taints", "constraints")  # the device-level steps
# How far a device that fails a step got, as _Explainer._short_on_node counts a node's devices.
_RANK = {
    "class": 0,
    "driver": 0,
    "class-selectors": 1,
    "request-selectors": 2,
    "pools": 3,
    "nodes": 3,
    "free": 4,
    "taints": 5,
    "constraints": 6,
}


def skipped_pool_text(pool: str, detail: str) -> str:
    """Devices dropped at the "pools" step: "in pool P, which the allocator skips (pool
    incomplete: 1 of 2 slices)", or "in pool P: <the feature it needs>"."""
    if detail.startswith("pool "):
        return f"in pool {pool}, which the allocator skips ({detail})"
    return f"in pool {pool}: {detail}"


def _constraint_text(constraints: list[dict[str, Any]]) -> str:
    """ "constraint matchAttribute gpu.example.com/numa" (and the others)."""
    out = []
    for c in constraints:
        for field_name in ("matchAttribute", "distinctAttribute"):
            if c.get(field_name) is not None:
                out.append(f"{field_name} {text(c.get(field_name))}")
    return ("constraint " if len(out) == 1 else "constraints ") + ", ".join(out)


@dataclass
class _Alternative:
    """Everything the funnel of one request (or subrequest) needs."""

    claim_index: int
    request_index: int
    sub_index: int
    plan: ClaimPlan
    spec: Spec
    device_class: DeviceClass | None
    verdicts: list[Any] | None
    constraints: list[dict[str, Any]]
    # Per index.current: None when the device passes every device-level step, else
    # (first failing step, detail, whether it is the only failing step).
    steps: list[tuple[str, str, bool] | None] = field(default_factory=list)
    reaches: dict[int, Any] = field(default_factory=dict)  # by position, for devices passing
    # per node: devices that pass every device-level step
    passing: dict[str, list[Device]] = field(default_factory=dict)
    passing_all: list[Device] = field(default_factory=list)  # those every node reaches
    # per node: devices past the "nodes" step (matching, in usable pools, reaching it)
    reached: dict[str, int] = field(default_factory=dict)
    reached_all: int = 0
    # devices left after class, driver, class-selectors, request-selectors, pools, nodes,
    # free, taints, constraints: over every node the Pod may use
    global_counts: list[int] = field(default_factory=lambda: [0] * 9)
    satisfiable: dict[str | None, bool] = field(default_factory=dict)
    error: str | None = None

    @property
    def name(self) -> str:
        return self.spec.full_name

    @property
    def need(self) -> int:
        return self.spec.count if self.spec.mode == "ExactCount" else 1


def _calls_bound(candidates: int, need: int, combinations: bool, repeats: bool) -> int:
    """At most how many allocateOne calls a search for ``need`` devices among ``candidates``
    makes: one per set of up to ``need`` of them (combinations, 1.36+), per ordered choice
    (permutations, before), or per sequence with repeats (devices shared by allocations)."""
    if repeats and not combinations:
        return sum(candidates**k for k in range(need + 1))
    pick = math.comb if combinations else math.perm
    return sum(pick(candidates, k) for k in range(min(need, candidates) + 1))


class _Explainer:
    def __init__(
        self,
        state: ClusterState,
        allocator: Allocator,
        plans: list[ClaimPlan],
        eligible: list[Node],
        features: Features,
        pod: Pod | None = None,
    ) -> None:
        self.state = state
        self.allocator = allocator
        self.index = allocator.index
        self.plans = plans
        self.eligible = eligible
        self.eligible_names = {n.name for n in eligible}
        self.features = features
        self.pod = pod
        self.alternatives: list[_Alternative] = []
        self._reach_cache: dict[int, Any] = {}
        self._slice_node_cache: dict[int, frozenset[str]] = {}
        self._bad_pool_nodes: frozenset[str] | None = None
        self._invalid_nodes: frozenset[str] | None = None
        self._selector_cache: dict[str, frozenset[str]] = {}
        self._by_request: list[list[_Alternative]] | None = None
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
                            [c for c in plan.constraints if constraint_applies(c, spec)],
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
        duplicate = duplicate_device(device_slices)
        if duplicate:
            problem = ("invalid", f"pool invalid: {duplicate}")
        elif self.features.partitionable_devices:
            sets, detail = counter_sets(
                s for s in pool.slices if items(s.spec.get("sharedCounters"))
            )
            detail = detail or consumption_problem(sets, pool.slices)
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
            if consumes(device):
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

    def unreachable(self, device: Device) -> str:
        """Why no node the Pod may use reaches the device (its slice's node selection)."""
        s = device.slice
        raw = device.raw if s.spec.get("perDeviceNodeSelection") is True else s.spec
        node_name = text(raw.get("nodeName"))
        if not node_name:
            return "its node selection matches no node the Pod may use"
        node = self.state.nodes.get(node_name)
        if node is None:
            return f"on node {node_name}, which is not in the snapshot"
        problem = pod_node_problem(self.pod, node) if self.pod is not None else None
        if problem:
            return f"on node {node_name}, which the Pod may not use: {problem}"
        return f"on node {node_name}, which the allocation of the Pod's other claims excludes"

    def device_steps(self, alt: _Alternative) -> None:
        """The first failing step of every current device (None for those passing), whether it
        is the only one, and how many devices are left after each step over every node the Pod
        may use; devices passing every device-level step, by the nodes that reach them."""
        state, held, features = self.state, self.allocator.held, self.features
        spec = alt.spec
        current = self.index.current
        if alt.device_class is None:
            missing = ("class", f"device class {spec.class_name} does not exist", False)
            alt.steps = [missing] * len(current)
            return
        wanted = set(state.class_drivers(alt.device_class))
        verdicts = alt.verdicts
        taints = self.index.taints if features.device_taints else {}
        dedicated = held.dedicated if not spec.admin else frozenset()
        consumable = features.consumable_capacity
        steps: list[tuple[str, str, bool] | None] = []
        alt.steps = steps
        append = steps.append
        reaches = alt.reaches
        pools = self.pool_problems(spec.mode)
        by_reach: dict[Any, list[Any]] = {}
        class_no = ("class-selectors", "", False)
        request_no, request_no_sole = (
            ("request-selectors", "", False),
            ("request-selectors", "", True),
        )
        check_gates = not (features.partitionable_devices and features.binding_conditions)
        drivers = in_class = in_request = 0
        left = [0] * len(_LEVELS)  # devices passing the request's selectors left after each
        slice_of: ResourceSlice | None = None
        slice_problem: str | None = None
        slice_reach: Any = None
        for device, key, position, pool_key in current:
            if wanted and key[0] not in wanted:
                append(_DRIVER_STEP)
                continue
            drivers += 1
            verdict = verdicts[position] if verdicts is not None else True
            if verdict is not True and verdict is not REQUEST_NO:
                if verdict is CLASS_NO:
                    append(class_no)
                else:  # an error the allocator would stop with
                    step = (
                        "class-selectors" if verdict.startswith("class ") else "request-selectors"
                    )
                    in_class += step == "request-selectors"
                    error = named(verdict, alt.plan.label, key, features.release)
                    append((step, error, False))
                continue
            in_class += 1
            selected = verdict is True
            s = device.slice
            if s is not slice_of:  # devices come slice by slice: what a slice decides, once
                slice_of = s
                problem = (
                    pools[pool_key] if pool_key in pools else self.pool_problem(pool_key, spec.mode)
                )
                slice_problem = problem[1] if problem else None
                per_device = s.spec.get("perDeviceNodeSelection") is True
                slice_reach = None if per_device else self.reach(device)
            if not selected:  # only whether it fails nothing else: it would serve otherwise
                sole = not (
                    slice_problem
                    or (check_gates and self.gate_problem(device))
                    or not (slice_reach if slice_reach is not None else self.reach(device))
                    or (
                        key in dedicated
                        and not (consumable and device.raw.get("allowMultipleAllocations") is True)
                    )
                    or (
                        taints
                        and id(device) in taints
                        and untolerated(taints[id(device)], spec.tolerations) is not None
                    )
                    or (alt.constraints and self.missing_attribute(alt, device))
                )
                append(request_no_sole if sole else request_no)
                continue
            failures = 0
            first: tuple[str, str] | None = None
            level = len(_LEVELS)
            detail = slice_problem or (check_gates and self.gate_problem(device))
            if detail:
                failures, first, level = 1, ("pools", detail), 0
            reach = slice_reach if slice_reach is not None else self.reach(device)
            if not reach:
                failures += 1
                if first is None:
                    first, level = ("nodes", self.unreachable(device)), 1
            if key in dedicated and not (
                consumable and device.raw.get("allowMultipleAllocations") is True
            ):
                failures += 1
                if first is None:
                    first, level = ("free", f"{ALLOCATED_TO}{held.owners(key)}"), 2
            if taints:
                taint = untolerated(taints.get(id(device), ()), spec.tolerations)
                if taint is not None:
                    failures += 1
                    if first is None:
                        first, level = ("taints", f"taint {taint_text(taint)} not tolerated"), 3
            if alt.constraints:
                missing = self.missing_attribute(alt, device)
                if missing:
                    failures += 1
                    if first is None:
                        first, level = ("constraints", missing), 4
            in_request += 1
            for i in range(level):
                left[i] += 1
            if level >= 2:  # past the "nodes" step: counted for the nodes that reach it
                group = by_reach.get(reach)
                if group is None:
                    group = by_reach[reach] = [0, []]
                group[0] += 1
                if first is None:
                    group[1].append(device)
                    reaches[position] = reach
            append(None if first is None else (*first, failures == 1))
        alt.global_counts = [len(current), drivers, in_class, in_request, *left]
        for reach, (reached, passing) in by_reach.items():
            if reach is _ALL:
                alt.reached_all += reached
                alt.passing_all.extend(passing)
                continue
            for name in reach:
                alt.reached[name] = alt.reached.get(name, 0) + reached
                if passing:
                    alt.passing.setdefault(name, []).extend(passing)

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
        # Nodes that only reach devices every node reaches answer alike.
        shared = (
            node.name not in alt.passing
            and node.name not in alt.reached
            and node.name not in self.bad_pool_nodes()
        )
        key = None if shared else node.name
        if key in alt.satisfiable:
            return alt.satisfiable[key]
        devices = alt.passing.get(node.name, []) + alt.passing_all
        spec = alt.spec
        capacity = spec.capacity if self.features.implementation != "stable" else None
        simple = not any(consumes(d) for d in devices) and not (
            self.features.consumable_capacity and any(d.allow_multiple_allocations for d in devices)
        )
        if simple and capacity is not None and spec.mode == "ExactCount":
            # Dedicated devices: whether the requested capacity fits is up to each device.
            held = self.allocator.held
            devices = [
                d
                for d in devices
                if fits_capacity(
                    held.capacity.get(d.key, {}),
                    spec.wanted,
                    self.allocator.capacities(d),
                    {},
                    self.features.fractional_capacity_range,
                )
            ]
        elif capacity is not None:
            simple = False
        if not devices or spec.mode == "ExactCount" and len(devices) < spec.count:
            ok = False
        elif spec.mode == "All" and simple:
            # Every matching device the node reaches must be usable, and none of its pools
            # incomplete or invalid (validateDeviceRequest errors out then).
            reached = alt.reached.get(node.name, 0) + alt.reached_all
            ok = (
                reached == len(devices) <= MAX_RESULTS
                and node.name not in self.bad_pool_nodes()
                and self._count_fits(alt, devices, len(devices))
            )
        elif simple and spec.mode == "ExactCount":
            ok = self._count_fits(alt, devices, spec.count)
        else:
            ok = self._alone(alt, node)
        alt.satisfiable[key] = ok
        return ok

    def no_fit(self, node: Node) -> NodeOutcome:
        """Allocate's answer on a node where some request has no candidate: nofit, or (1.35+)
        a node error when the node's pools include an invalid one."""
        if (
            self.features.skip_incomplete_pools
            and node.name in self._maybe_invalid_nodes()
            and any(p.invalid for p in self.allocator.pools_for(node))
        ):
            return NodeOutcome(node.name, "node-error", "invalid resource pools were encountered")
        return NodeOutcome(node.name, "nofit")

    def bad_pool_nodes(self) -> frozenset[str]:
        """Nodes whose gathered pools include an incomplete or invalid one (duplicate device
        names): an All-mode request stops with an error there."""
        if self._bad_pool_nodes is None:
            self._bad_pool_nodes = self._gathering("bad", _bad_pool)
        return self._bad_pool_nodes

    def _maybe_invalid_nodes(self) -> frozenset[str]:
        """A superset of the nodes where GatherPools builds an invalid pool: those gathering a
        pool that is incomplete, has duplicate device names, or uses counters (whose
        references are checked per node). Allocate's answer there is decided by the pools
        gathered for the node, as the allocator gathers them."""
        if self._invalid_nodes is None:
            self._invalid_nodes = self._gathering("maybe-invalid", _maybe_invalid_pool)
        return self._invalid_nodes

    def _gathering(self, name: str, suspect: Callable[[Pool], bool]) -> frozenset[str]:
        """The eligible nodes for which GatherPools takes a slice of a pool ``suspect`` picks
        (where those slices reach is computed once per snapshot: _gathered_by)."""
        everywhere, names, selectors = self.state.derived(
            f"gathering-{name}-{self.features.release < 37}",
            lambda state: _gathered_by(state, suspect, self.features.release),
        )
        if everywhere:
            return frozenset(self.eligible_names)
        found = set(names) & self.eligible_names
        for selector in selectors:
            reach = self._reach("", False, selector)
            found |= self.eligible_names if reach is _ALL else reach
        return frozenset(found)

    def _count_fits(self, alt: _Alternative, devices: list[Device], need: int) -> bool:
        """Whether ``need`` of the devices satisfy the request's own constraints (for
        list-typed attributes: a value ``need`` of them share, and ``need`` pairwise disjoint
        sets picked greedily — an estimate; the search decides)."""
        lists = self.features.list_type_attributes
        for constraint in alt.constraints:
            if constraint.get("matchAttribute") is not None:
                name = text(constraint.get("matchAttribute"))
                groups: Counter[Any] = Counter()
                for d in devices:
                    attribute = lookup_attribute(d, d.driver, name) or {}
                    if lists:
                        found = attribute_set(attribute)
                        for value in found[1] if found else ():
                            groups[(found[0], value)] += 1  # type: ignore[index]
                        continue
                    kind = value_kind(attribute)
                    groups[(kind, typed(attribute, kind) if kind else None)] += 1
                if max(groups.values(), default=0) < need:
                    return False
            elif constraint.get("distinctAttribute") is not None:
                name = text(constraint.get("distinctAttribute"))
                if lists:
                    picked: list[Any] = []
                    for d in devices:
                        found = attribute_set(lookup_attribute(d, d.driver, name))
                        if found is not None and not any(intersects(found, p) for p in picked):
                            picked.append(found)
                    if len(picked) < need:
                        return False
                    continue
                values = set()
                for d in devices:
                    attribute = lookup_attribute(d, d.driver, name) or {}
                    kind = value_kind(attribute)
                    if kind is not None:
                        values.add((kind, typed(attribute, kind)))
                if len(values) < need:
                    return False
        return True

    def _alone(self, alt: _Alternative, node: Node) -> bool:
        spec = alt.spec
        alone = ClaimPlan(
            claim=None,
            label=alt.plan.label,
            name=alt.plan.name,
            requests=[RequestPlan(spec.full_name, spec, [])],
            constraints=[{**c, "requests": []} for c in alt.constraints],
            config=[],
        )
        budget = self.allocator.budget
        leftover = budget.spent  # then a search that runs out is left unfinished: not known
        outcome = self.allocator.allocate(node, [alone])
        budget.timed_out += outcome.timed_out and not leftover
        return outcome.allocations is not None

    # the funnel ----------------------------------------------------------------------------

    def on_one_node(self, alt: _Alternative, chosen: Node | None) -> tuple[Node | None, int]:
        """The "count" step: the node with the most of the request's usable devices where it
        can get them (``chosen`` when given), and how many there are; where it can get them
        nowhere, the most devices a node has, at most one fewer than the request needs."""
        if chosen is not None:
            n = len(alt.passing.get(chosen.name, ())) + len(alt.passing_all)
            return chosen, n if n and self.satisfiable(alt, chosen) else 0
        best: Node | None = None
        best_value = -1
        need = alt.need
        names = None if alt.passing_all else set(alt.passing)
        for node in self.eligible:
            if names is not None and node.name not in names:
                continue
            n = len(alt.passing.get(node.name, ())) + len(alt.passing_all)
            value = n if self.satisfiable(alt, node) else min(n, need - 1)
            if value > best_value:
                best, best_value = node, value
                if alt.spec.mode == "ExactCount" and value >= need and not names:
                    break  # every node offers the same devices
        if best is None:
            return self._furthest(alt), 0
        return best, max(best_value, 0)

    def _furthest(self, alt: _Alternative) -> Node | None:
        """Where no node has a usable device for the request: the node reaching most of its
        matching devices in usable pools (all of them held, tainted or lacking an attribute),
        the first by name of those; None when no node reaches one (then no node got further
        than another, and the "count" step names none)."""
        if alt.reached_all and self.eligible:
            return self.eligible[0]
        most = max(alt.reached.values(), default=0)
        if not most:
            return None
        name = min(n for n, count in alt.reached.items() if count == most)
        return self.state.nodes.get(name)

    def explanation(self, alt: _Alternative, chosen: Node | None) -> RequestExplanation:
        node, on_node = self.on_one_node(alt, chosen)
        numbers = [*alt.global_counts, on_node]
        funnel = list(zip(STEPS, numbers, strict=True))
        empty = next((step for step, n in funnel if n == 0), None)
        need = alt.need
        # The class step counts the snapshot's devices: it is short only of a missing class;
        # the driver step only when the driver publishes no device at all (fewer than needed
        # show at the selectors: "only 4 devices match").
        short = next(
            (
                step
                for step, n in funnel
                if n < need
                and (step != "class" or alt.device_class is None)
                and (step != "driver" or n == 0)
            ),
            None,
        )
        drivers = set(self.state.class_drivers(alt.device_class)) if alt.device_class else set()
        enough: dict[Any, bool] = {}  # reach → does some node there have enough?
        lacking = (
            f"fewer than {alt.spec.count} usable devices on any node"
            if alt.spec.mode == "ExactCount"
            else "not every matching device on its node is usable"
        )
        checks = []
        # Most devices fail the same step for every pending claim: one object for each.
        shared = self.index.device_checks
        for (_, key, position, _), failed in zip(self.index.current, alt.steps, strict=True):
            if drivers and key[0] not in drivers:
                continue
            if failed is None:
                reach = alt.reaches[position]
                ok = enough.get(reach)
                if ok is None:
                    names = self.eligible_names if reach is _ALL else reach
                    ok = enough[reach] = any(self._satisfiable_name(alt, n) for n in sorted(names))
                failed = None if ok else ("count", lacking, True)
            step, detail, sole = failed or (None, "", False)
            check = DeviceCheck(key[0], key[1], key[2], step, detail, sole)
            checks.append(shared.setdefault(check, check))
        return RequestExplanation(
            name=alt.name,
            funnel=funnel,
            devices=checks,
            empty_step=empty,
            error=alt.error,
            node=node.name if node is not None else None,
            need=need,
            short_step=short,
            claim=alt.plan.label,
        )

    def _satisfiable_name(self, alt: _Alternative, name: str) -> bool:
        node = self.state.nodes.get(name)
        return node is not None and self.satisfiable(alt, node)

    # why a node does not fit ---------------------------------------------------------------

    def with_why(self, outcome: NodeOutcome, served: tuple[str, ...] = ()) -> NodeOutcome:
        """A "nofit" outcome with why the claims do not fit on its node (node_why); ``served``:
        the extended resources the node's device plugin serves instead of DRA."""
        node = self.state.nodes.get(outcome.node)
        if outcome.outcome != "nofit" or node is None:
            return outcome
        if served:
            why = (
                f"its device plugin serves {', '.join(served)}; what is left to DRA does not "
                "fit here"
            )
            step = "count"
        else:
            why, step = self.node_why(node)
        return NodeOutcome(
            outcome.node, outcome.outcome, outcome.error, outcome.device_plugin, why, step
        )

    def _requests(self) -> list[list[_Alternative]]:
        """The alternatives, by request (one each, but for firstAvailable)."""
        if self._by_request is None:
            grouped: dict[tuple[int, int], list[_Alternative]] = {}
            for alt in self.alternatives:
                grouped.setdefault((alt.claim_index, alt.request_index), []).append(alt)
            self._by_request = list(grouped.values())
        return self._by_request

    def node_why(self, node: Node) -> tuple[str, str]:
        """Why the claims do not fit on a node where the allocator's answer is "nofit", and the
        funnel step it is about: the first request without enough usable devices there (of a
        firstAvailable request, the alternative that gets furthest), counted as the funnel
        counts, on this node: devices of its class, matching its selectors, in usable pools,
        free, with tolerated taints, with the constrained attributes, a set satisfying its
        constraints. Only what the funnel computed is read: no search runs for it."""
        devices = self._node_devices(node)
        requests = self._requests()
        several = len(requests) > 1
        claims = len(self.plans) > 1
        for alts in requests:
            found = [self._short_on_node(alt, node, devices) for alt in alts]
            if any(f is None for f in found):
                continue  # an alternative has enough here on its own
            rank, why, step = max((f for f in found if f is not None), key=lambda f: f[0])
            if several:
                alt = alts[0]
                name = alt.spec.parent or alt.spec.name
                of = f" of {alt.plan.label}" if claims else ""
                why = f"request {name}{of}: {why}"
            return why, step
        return self._together_why(), "count"

    def _node_devices(self, node: Node) -> list[Device]:
        """The current devices on the node's slices and those the node reaches otherwise."""
        out = []
        for s in self._visible_slices(node):
            for d in s.devices:
                reach = self.reach(d)
                if reach is _ALL or node.name in reach:
                    out.append(d)
        return out

    def _short_on_node(
        self, alt: _Alternative, node: Node, devices: list[Device]
    ) -> tuple[int, str, str] | None:
        """Where the request (one alternative) runs short on the node: (how far it got, why,
        the funnel step); None when it has enough there on its own."""
        at = self.index.current_at
        steps = alt.steps
        # reached[r]: devices whose first failing check is the r-th (_RANK; 7: none fails)
        reached = [0] * 8
        pools: Counter[tuple[str, str]] = Counter()
        holders: Counter[str] = Counter()
        taints: Counter[str] = Counter()
        attributes: Counter[str] = Counter()
        usable: list[Device] = []
        for d in devices:
            i = at.get(id(d))
            if i is None:
                continue  # a stale slice's: the allocator does not see it
            failed = steps[i]
            if failed is None:
                reached[7] += 1
                usable.append(d)
                continue
            step, detail = failed[0], failed[1]
            rank = _RANK[step]
            reached[rank] += 1
            if rank < 3:
                continue
            if step in ("pools", "nodes"):
                pools[(d.pool_name, detail)] += 1
            elif step == "free" and detail.startswith(ALLOCATED_TO):
                holders[detail.removeprefix(ALLOCATED_TO)] += 1
            elif step == "taints":
                taints[detail] += 1
            elif step == "constraints":
                attributes[detail] += 1
        # counts[k]: devices past the k-th check: 0 driver, 1 class selectors, 2 request
        # selectors, 3 pools (and nodes), 4 free, 5 taints, 6 constraints.
        counts = [sum(reached[k + 1 :]) for k in range(7)]
        spec = alt.spec
        cls = spec.class_name
        all_mode = spec.mode != "ExactCount"
        need = counts[2] if all_mode else spec.count

        def dropped(k: int) -> str:
            """What the devices lost at check ``k`` are."""
            if k == 3:
                return "; ".join(
                    f"{plural(n, 'device')} {skipped_pool_text(pool, detail)}"
                    for (pool, detail), n in pools.most_common(3)
                )
            if k == 4:
                return held_by(holders)
            counter = taints if k == 5 else attributes
            return "; ".join(f"{plural(n, 'device')}: {d}" for d, n in counter.most_common(3))

        words = {
            3: ("", " in usable pools"),
            4: ("free ", ""),
            5: ("", " with taints it tolerates"),
        }
        of_class = plural(counts[1], "device")
        if counts[1] == 0:
            return 1, f"no device of class {cls} on this node", "class-selectors"
        if not all_mode and counts[1] < need:
            why = f"only {of_class} of class {cls} on this node, {need} needed"
            return 1, why, "class-selectors"
        if counts[2] == 0:
            why = f"none of its {of_class} of class {cls} matches the request's selectors"
            return 2, why, "request-selectors"
        if not all_mode and counts[2] < need:
            why = (
                f"{counts[2]} of its {of_class} of class {cls} match the request's selectors, "
                f"{need} needed"
            )
            return 2, why, "request-selectors"
        for k, step in ((3, "pools"), (4, "free"), (5, "taints"), (6, "constraints")):
            if counts[k] >= need:
                continue
            if all_mode:
                why = (
                    f"allocationMode All needs all {counts[2]} matching devices here, "
                    f"{counts[2] - counts[k]} of them not usable: {dropped(k)}"
                )
            elif k == 6:
                why = f"{counts[k]} of {need} needed have the attributes its constraints name: "
                why += dropped(k)
            else:
                before, after = words[k]
                why = f"{counts[k]} {before}of {need} needed{after}: {dropped(k)}"
            return k, why, step
        if alt.constraints and not self._count_fits(alt, usable, len(usable) if all_mode else need):
            return (
                6,
                f"no {need} of its {plural(counts[6], 'usable device')} satisfy "
                f"{_constraint_text(alt.constraints)}",
                "constraints",
            )
        ok = alt.satisfiable.get(node.name)
        if ok is None and node.name not in alt.passing and node.name not in alt.reached:
            ok = alt.satisfiable.get(None)
        if ok is False:
            return (
                7,
                f"no set of {need} of its {plural(counts[6], 'usable device')} fits (the "
                "capacity or shared counters they draw on)",
                "count",
            )
        return None

    def _together_why(self) -> str:
        """Why claims whose every request has enough on a node alone do not fit there."""
        for plan in self.plans:
            for constraint in plan.constraints:
                names = strings(constraint.get("requests"))
                if len(names) > 1 or (not names and len(plan.requests) > 1):
                    spanned = listing(names or [r.name for r in plan.requests], 4)
                    return (
                        f"each request has enough devices here on its own, but no set of them "
                        f"satisfies {_constraint_text([constraint])} across requests {spanned}"
                    )
        if len(self.alternatives) > 1 or len(self.plans) > 1:
            return (
                "each request has enough devices here on its own, but not all of them "
                "together (they compete for the same devices)"
            )
        return "no set of its usable devices here satisfies the request (capacity, counters)"

    # where the search has to run -----------------------------------------------------------

    def node_plan(self, calls: int) -> tuple[set[str], Callable[[Node], bool]]:
        """Nodes where Allocate could stop with an error, and a test for nodes where it has to
        run: it could succeed (every request has a usable candidate the node reaches), or its
        search could take more than ``calls`` allocateOne calls and so time out (asking for
        more devices than there are does not stop the search early: it tries every set)."""
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

        def fits(alt: _Alternative, visible: list[Device]) -> tuple[bool, Callable[[], int]]:
            """Whether the node has as many candidates for the alternative as it needs (a
            device serves a request at most once; "All" needs every candidate free), and how
            to tell at most how many allocateOne calls looking for them takes."""
            if alt.verdicts is None:
                return False, lambda: 1
            free = busy = 0
            shared = False
            verdicts, admin = alt.verdicts, alt.spec.admin
            for device in visible:
                i = position[id(device)]
                verdict = verdicts[i]
                if verdict is not True and not isinstance(verdict, str):
                    continue
                multi = features.consumable_capacity and device.allow_multiple_allocations
                if admin or keys[i] not in held.dedicated or multi:
                    free += 1
                    shared = shared or multi
                else:
                    busy += 1
            if alt.spec.mode == "ExactCount":
                need = alt.spec.count
                return free >= need, lambda: _calls_bound(free, need, features.combinations, shared)
            return free > 0 and not busy, lambda: free + 2

        def may_succeed(node: Node) -> bool:
            visible = [d for s in self._visible_slices(node) for d in s.devices]
            answers = [[fits(alt, visible) for alt in alts] for alts in requests]
            if all(any(fit for fit, _ in request) for request in answers):
                return True
            bound = len(requests) + 1
            for request in answers:
                bound *= sum(calls_at_most() for _, calls_at_most in request)
            return bound > calls

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


def _bad_pool(pool: Pool) -> bool:
    return not pool.complete or not pool.valid


def _maybe_invalid_pool(pool: Pool) -> bool:
    """Incomplete, duplicate device names, or counters (whose references are checked per
    node): GatherPools may build it invalid for some node."""
    return _bad_pool(pool) or any(
        items(s.spec.get("sharedCounters")) or any(consumes(d) for d in s.devices)
        for s in pool.slices
    )


def _gathered_by(
    state: ClusterState, suspect: Callable[[Pool], bool], release: int
) -> tuple[bool, frozenset[str], list[Any]]:
    """Where the slices of the pools ``suspect`` picks reach, for GatherPools: every node (a
    slice for all nodes, with per-device node selection, or before 1.37 with shared counters,
    is taken for every node whatever its devices reach), else the nodes named and the node
    selectors to match."""
    names: set[str] = set()
    selectors: list[Any] = []
    for pool in state.pools.values():
        if not suspect(pool):
            continue
        for s in (*pool.slices, *pool.stale_slices):
            spec = s.spec
            if (
                spec.get("perDeviceNodeSelection") is True
                or spec.get("allNodes") is True
                or (items(spec.get("sharedCounters")) and release < 37)
            ):
                return True, frozenset(), []
            if text(spec.get("nodeName")):
                names.add(text(spec.get("nodeName")))
            elif isinstance(spec.get("nodeSelector"), dict):
                selectors.append(spec.get("nodeSelector"))
    return False, frozenset(names), selectors


def explain(
    state: ClusterState,
    claims: list[ResourceClaim],
    *,
    pod: Pod | None = None,
    features: Features = Features(),  # noqa: B008 - frozen dataclass
    max_nodes: int | None = None,
    every_node: bool = False,
    budget: SearchBudget | None = None,
    assumed: Sequence[tuple[str, dict[str, Any]]] = (),
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
    node, which surfaces errors that do not depend on the node; on the others the outcome is
    "nofit" without running it), and stops once it has an answer: ``nodes`` then holds the
    nodes decided so far. With ``every_node`` it answers for every node the Pod may use, past
    the first fit and the first error. With ``max_nodes``, it runs on at most that many nodes.
    (On clusters of more than 100 nodes the scheduler stops filtering once it has enough
    feasible nodes, so an error on a node it never reaches would not stop it.)

    Each node's search gets ``budget.calls`` allocateOne calls, the scheduler's filter timeout
    (budget.py); a node that runs out has the outcome "timeout". Since 1.36 that fails the
    scheduling attempt like an error; before, it is one node that does not fit. Once
    ``budget.nodes`` searches (over every explanation sharing the budget) have run out, each
    search gets a few calls; where those run out, that node and the rest are not searched and
    are left out of ``nodes``.

    ``assumed`` holds devices of allocations not in the snapshot, ``(claim, result)``: those a
    gang's earlier members were given in the same scheduling cycle (gangs.py).
    """
    budget = budget or SearchBudget()
    with gc_paused():  # tens of thousands of small objects, none cyclic
        return _explain(state, list(claims), pod, features, max_nodes, every_node, budget, assumed)


_NOWHERE = Node({"metadata": {"name": ""}})  # a node no slice reaches


def _timeout(node: Node, allocation: Allocation, features: Features) -> Allocation:
    """A search that ran out, as the scheduler reports the node: its status as ``error``."""
    if features.filter_timeout:
        status = timeout_status(node.name, features.timeout_is_error)
    else:
        status = (
            f"{TIMED_OUT} after {allocation.calls - 1:,} allocateOne calls: dradash stopped "
            "here, but this release's scheduler has no filter timeout (it came in 1.34) and "
            "keeps searching"
        )
    allocation.error = status
    return allocation


def _outcome(node: Node, allocation: Allocation, plugin: tuple[str, ...] = ()) -> NodeOutcome:
    if allocation.timed_out:
        return NodeOutcome(node.name, "timeout", allocation.error or TIMED_OUT, plugin)
    if allocation.error is not None:
        kind = "node-error" if allocation.node_error else "error"
        return NodeOutcome(node.name, kind, allocation.error, plugin)
    outcome = "nofit" if allocation.allocations is None else "fit"
    return NodeOutcome(node.name, outcome, "", plugin)


def _explain(
    state: ClusterState,
    claims: list[ResourceClaim],
    pod: Pod | None,
    features: Features,
    max_nodes: int | None,
    every_node: bool,
    budget: SearchBudget,
    assumed: Sequence[tuple[str, dict[str, Any]]] = (),
) -> Explanation:
    pending = [c for c in claims if not c.allocated]
    to_allocate = pending if pending or not claims else claims
    held_claims = [c for c in claims if c.allocated and c not in to_allocate]
    allocator = Allocator(state, features, exclude=to_allocate, budget=budget, assumed=assumed)
    plans = [allocator.plan(c) for c in to_allocate]
    eligible = [
        n
        for n in sorted(state.nodes.values(), key=lambda n: n.name)
        if (pod is None or pod_node_problem(pod, n) is None)
        and all(allocation_allows(c, n) for c in held_claims)
    ]
    plans_on = _extended_variants(state, allocator, to_allocate, plans, pod)
    extended = pod.extended if pod is not None and any(c.implicit for c in to_allocate) else None

    def plugin_served(node: Node) -> tuple[str, ...]:
        return tuple(sorted(extended.split(node).plugin)) if extended is not None else ()

    explainer = _Explainer(state, allocator, plans, eligible, features, pod)
    for alt in explainer.alternatives:
        explainer.device_steps(alt)
    outcomes: dict[str, NodeOutcome] = {}

    timeouts: list[Allocation] = []
    not_searched = 0
    gave_up = False

    def finish(chosen: Node | None, **kwargs: Any) -> Explanation:
        requests = [explainer.explanation(alt, chosen) for alt in explainer.alternatives]
        nodes = [
            explainer.with_why(o, plugin_served(n) if plans_on(n) is not plans else ())
            if o.outcome == "nofit"
            else o
            for n in eligible
            if (o := outcomes.get(n.name)) is not None
        ]
        return Explanation(
            requests=requests,
            nodes=nodes,
            nodes_complete=len(nodes) == len(eligible),
            eligible_nodes=len(eligible),
            claims=[plan.label for plan in plans],
            timed_out_nodes=len(timeouts),
            budget_calls=budget.calls,
            by_clock=any(t.by_clock for t in timeouts),
            not_searched=not_searched,
            **kwargs,
        )

    error = prefilter(plans, state, features)
    if error is not None:
        for alt in explainer.alternatives:
            if f"request {alt.name}:" in error or (
                alt.spec.parent and f"request {alt.spec.parent}:" in error
            ):
                alt.error = error
        outcomes.update((n.name, NodeOutcome(n.name, "error", error)) for n in eligible)
        return finish(None, allocatable=None, error=error, node=None, reason=error_reason(error))
    if not eligible:
        # No node to run on: Allocate's checks that need none (requests, constraints, the
        # 32-device limit) still stop the scheduler, whatever the nodes.
        checked = allocator.allocate(_NOWHERE, plans) if plans else None
        if checked is not None and checked.error is not None and not checked.node_error:
            return finish(
                None,
                allocatable=None,
                error=checked.error,
                node=None,
                reason=error_reason(checked.error),
            )
        explanation = finish(None, allocatable=False, error=None, node=None)
        if plans:
            explanation.reason, explanation.request = _funnel_reason(explainer, explanation)
        if held_claims:
            explanation.message = "resourceclaim not available on the node"
        return explanation
    if not plans:
        outcomes.update((n.name, NodeOutcome(n.name, "fit")) for n in eligible)
        return finish(eligible[0], allocatable=True, error=None, node=eligible[0].name)

    risky, may_succeed = explainer.node_plan(budget.calls)
    last_risky = max(risky) if risky else ""
    success: tuple[Node, Allocation] | None = None
    failure: Allocation | None = None
    searched = 0
    node_errors: list[str] = []
    run_all = False  # the first node stopped with an error: it may stop every node
    for i, node in enumerate(eligible):
        if not every_node and (success is not None and node.name > last_risky):
            break
        node_plans = plans_on(node)
        maybe = (
            i == 0 or run_all or node.name in risky or node_plans is not plans or may_succeed(node)
        )
        if not maybe:  # no candidate for some request, and nothing to raise an error
            outcomes[node.name] = explainer.no_fit(node)
            continue
        if not every_node and success is not None and node.name not in risky:
            continue  # it may fit too; only an error elsewhere would change the answer
        if max_nodes is not None and searched >= max_nodes:
            break
        if gave_up:  # a search with the leftover calls ran out: not searched either
            not_searched += 1
            continue
        leftover = budget.spent  # enough searches ran out: this one gets a few calls
        outcome = allocator.allocate(node, node_plans)
        if outcome.timed_out and leftover:
            not_searched += 1
            gave_up = True
            continue
        searched += 1
        if outcome.timed_out:
            budget.timed_out += 1
            timeouts.append(_timeout(node, outcome, features))
            outcomes[node.name] = _outcome(node, outcome)
            if features.filter_timeout and features.timeout_is_error:
                failure = failure or outcome  # an Error status: the attempt fails
                if not every_node:
                    break
            continue
        outcomes[node.name] = _outcome(node, outcome, plugin_served(node))
        if outcome.error is not None and not outcome.node_error:
            failure = failure or outcome
            run_all = run_all or i == 0
            if not every_node:
                break
        elif outcome.node_error and outcome.error:
            node_errors.append(outcome.error)
        elif outcome.allocations is not None and success is None:
            success = (node, outcome)
    if failure is not None and failure.error is not None:
        if failure.failed_request is not None:
            for alt in explainer.alternatives:
                if (alt.claim_index, alt.request_index, alt.sub_index) == failure.failed_request:
                    alt.error = failure.error
        return finish(
            None,
            allocatable=None,
            error=failure.error,
            node=None,
            reason=error_reason(failure.error),
            searched_nodes=searched,
        )
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
        message=TIMED_OUT
        if timeouts
        else node_errors[0]
        if node_errors
        else "cannot allocate all claims",
    )
    explanation.reason, explanation.request = _funnel_reason(explainer, explanation)
    if timeouts or not_searched:  # where the search ran out, whether the claims fit is unknown
        explanation.reason = "allocation-timeout"
    if node_errors and explanation.reason == "insufficient-count":
        explanation.reason = "pool-invalid"  # the devices of invalid pools were not counted
    return explanation


def _extended_variants(
    state: ClusterState,
    allocator: Allocator,
    claims: list[ResourceClaim],
    plans: list[Any],
    pod: Pod | None,
) -> Callable[[Node], list[Any]]:
    """The plans on one node. A Pod's claim for its extended resources asks, on each node, for
    those the node's device plugin does not serve (filterExtendedResources): where a plugin
    serves some, the claim there has fewer requests, or none."""
    implicit = next((i for i, c in enumerate(claims) if c.implicit), None)
    if implicit is None or pod is None or pod.extended is None:
        return lambda node: plans
    resources = pod.extended
    main = frozenset(
        name for name, n in resources.totals.items() if n and name in resources.mapping
    )
    variants: dict[frozenset[str], list[Any]] = {main: plans}

    def plans_on(node: Node) -> list[Any]:
        dra = resources.split(node).dra
        key = frozenset(dra)
        if key not in variants:
            requests, _ = requests_and_mappings(pod, dra, resources.mapping)
            claim = ResourceClaim(in_memory_claim(pod, requests))
            claim.implicit = True
            variants[key] = [
                allocator.plan(claim) if i == implicit else plan for i, plan in enumerate(plans)
            ]
        return variants[key]

    return plans_on


def _funnel_reason(explainer: _Explainer, explanation: Explanation) -> tuple[str, str | None]:
    """The reason of claims that do not fit, and the request it is about (DESIGN "Diagnosis"):
    the first step of the first request's funnel where fewer devices remain than it needs (for
    a firstAvailable request, of its alternative that got furthest). When every request alone
    has enough, the requests compete for the same devices or a constraint across them fails."""
    by_request: dict[tuple[int, int], list[tuple[_Alternative, RequestExplanation]]] = {}
    for alt, request in zip(explainer.alternatives, explanation.requests, strict=True):
        by_request.setdefault((alt.claim_index, alt.request_index), []).append((alt, request))
    for pairs in by_request.values():
        if any(r.short_step is None for _, r in pairs):
            continue
        alt, request = max(pairs, key=lambda p: STEPS.index(p[1].short_step or "count"))
        step = request.short_step or "count"
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
            reason = {"invalid": "pool-invalid", "feature": "feature-disabled"}.get(
                kind, "pool-incomplete"
            )
            return reason, request.name
        if step in ("class-selectors", "request-selectors") and any(
            d.failed_step == step and "CEL " in d.detail for d in request.devices
        ):
            return "selector-error", request.name  # devices the Pod cannot reach raise it
        if step == "count" and _constraints_block(explainer, alt):
            return "constraint-unsatisfiable", request.name
        return STEP_REASONS[step], request.name
    for plan in explainer.plans:
        for constraint in plan.constraints:
            names = strings(constraint.get("requests"))
            if len(names) > 1 or (not names and len(plan.requests) > 1):
                return "constraint-unsatisfiable", None
    return "insufficient-count", None


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
