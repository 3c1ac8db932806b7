"""The search: ``allocator_incubating.go`` — NewAllocator and Allocate for one node
(validateDeviceRequest, allocateOne's depth-first search with backtracking, allocateDevice,
checkAvailableCounters, the AllocationResult with its config and node selector), reading the
claims through requestAccessor (``Spec``) as upstream does.

Where the implementations differ (``Features.implementation``), the differences are marked:
``stable`` ignores capacity requests and knows no distinctAttribute; the v0.34 rules
(``skip_incomplete_pools`` off) stop at an invalid pool and do not copy tolerations into results.
Candidates are tried in the 1.36+ order (pools by driver and name, slices by name, devices as
listed); 1.34 and 1.35 iterate a Go map, so their order is unspecified and ours is one of the
orders they may use.
"""

from __future__ import annotations

import bisect
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from dradash.dra.allocator.budget import Cancelled, Interrupted, SearchBudget
from dradash.dra.allocator.constraints import DistinctAttribute, MatchAttribute
from dradash.dra.allocator.consumable import (
    consumed_from_request,
    device_capacities,
    fits_capacity,
    quantity_of,
)
from dradash.dra.allocator.features import Features
from dradash.dra.allocator.index import (
    CLAIM,
    Unknown,
    held_devices,
    named,
    selector_verdicts,
    snapshot_index,
)
from dradash.dra.allocator.pools import GatheredPool, consumes, gather_pools, node_matches
from dradash.dra.allocator.scheduler import untolerated
from dradash.dra.cel.quantity import Quantity
from dradash.dra.fields import dig, items, mapping, mappings, number, strings, text
from dradash.dra.objects import Device, DeviceClass, Node, ResourceClaim, ResourceSlice
from dradash.dra.state import ClusterState

MAX_RESULTS = 32  # resourceapi.AllocationResultsMaxSize


@dataclass
class Allocation:
    """What ``Allocate`` returns for one node."""

    allocations: list[dict[str, Any]] | None  # one per claim; None when they do not fit
    error: str | None = None
    # True for errors wrapping ErrFailedAllocationOnNode: only this node is unusable.
    node_error: bool = False
    calls: int = 0  # allocateOne invocations (upstream's Stats.NumAllocateOneInvocations)
    failed_request: tuple[int, int, int] | None = None  # (claim, request, subrequest) of error
    # The search ran out of its budget (budget.py): the scheduler's filter timeout. ``by_clock``
    # when the wall-clock safety net stopped it first.
    timed_out: bool = False
    by_clock: bool = False


def kobj(claim: ResourceClaim) -> str:
    """klog.KObj: namespace/name, or the bare name for an object without namespace."""
    namespace = text(claim.metadata.get("namespace"))
    return f"{namespace}/{claim.name}" if namespace else claim.name


def device_id(key: tuple[str, str, str]) -> str:
    return "/".join(key)


# --- claims, parsed ------------------------------------------------------------------------


@dataclass
class Spec:
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
    def parse(cls, raw: dict[str, Any], name: str, parent: str = "") -> Spec:
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
class RequestPlan:
    name: str
    exactly: Spec | None
    first_available: list[Spec]

    @property
    def alternatives(self) -> list[Spec]:
        return [self.exactly] if self.exactly is not None else self.first_available


@dataclass
class ClaimPlan:
    claim: ResourceClaim | None
    label: str  # klog.KObj
    name: str
    requests: list[RequestPlan]
    constraints: list[dict[str, Any]]
    config: list[dict[str, Any]]


def plan_claim(claim: ResourceClaim) -> ClaimPlan:
    requests = []
    for raw in mappings(dig(claim.spec, "devices", "requests")):
        name = text(raw.get("name"))
        exactly = raw.get("exactly")
        requests.append(
            RequestPlan(
                name=name,
                exactly=Spec.parse(exactly, name) if isinstance(exactly, dict) else None,
                first_available=[
                    Spec.parse(sub, text(sub.get("name")), name)
                    for sub in mappings(raw.get("firstAvailable"))
                ],
            )
        )
    return ClaimPlan(
        claim=claim,
        label=kobj(claim),
        name=claim.name,
        requests=requests,
        constraints=mappings(dig(claim.spec, "devices", "constraints")),
        config=mappings(dig(claim.spec, "devices", "config")),
    )


def constraint_applies(constraint: dict[str, Any], spec: Spec) -> bool:
    names = strings(constraint.get("requests"))
    if not names:
        return True
    base = spec.parent or spec.name
    return base in names or (bool(spec.parent) and spec.full_name in names)


# --- one Allocate call ---------------------------------------------------------------------


class Fatal(Exception):
    """An error Allocate returns."""

    def __init__(
        self, message: str, request: tuple[int, int, int] | None = None, node: bool = False
    ) -> None:
        super().__init__(message)
        self.request = request
        self.node = node


EXCEEDED = object()  # errAllocationResultMaxSizeExceeded


@dataclass
class _RequestData:
    spec: Spec
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
    pool: GatheredPool


@dataclass(slots=True)
class _Entry:
    """A device allocateOne tries for a request (``_candidates``); without a candidate, the
    error that stops the search where it is met."""

    candidate: _Candidate | None
    error: str = ""  # the CEL error its selectors raise
    multi: bool = False  # allowMultipleAllocations: its capacity depends on the search
    counters: bool = False  # consumes counters


class _Candidates:
    """A request's candidates (Search._candidates), listed as far as the search gets: most
    searches take one of the first."""

    def __init__(self, entries: Iterator[_Entry]) -> None:
        self.entries: list[_Entry] = []
        self._more: Iterator[_Entry] | None = entries
        self._indexable: bool | None = None
        self._by_value: dict[int, dict[Any, list[int]]] = {}

    def start_at(self, start: int) -> Iterator[tuple[int, _Entry]]:
        i = start
        entries = self.entries
        while True:
            if i >= len(entries):
                if self._more is None:
                    return
                entry = next(self._more, None)
                if entry is None:
                    self._more = None
                    return
                entries.append(entry)
            yield i, entries[i]
            i += 1

    @property
    def indexable(self) -> bool:
        """Whether skipping refused devices by their value is safe: trying them has no effect
        and stops nothing (no errors, no counters)."""
        if self._indexable is None:
            for _ in self.start_at(len(self.entries)):
                pass
            self._indexable = all(
                e.candidate is not None and not e.error and not e.counters for e in self.entries
            )
        return self._indexable

    def matching(self, constraint: MatchAttribute, start: int) -> Iterator[tuple[int, _Entry]]:
        """The candidates from ``start`` on whose value the constraint accepts now: the
        others would be tried and refused one by one, for nothing (all listed: indexable)."""
        by_value = self._by_value.get(id(constraint))
        if by_value is None:
            by_value = self._by_value[id(constraint)] = {}
            for i, entry in enumerate(self.entries):
                assert entry.candidate is not None
                signature = constraint.signature(entry.candidate.device, entry.candidate.key[0])
                by_value.setdefault(signature, []).append(i)
        wanted = constraint.wanted()
        if len(wanted) == 1:
            found = by_value.get(wanted[0], [])
            positions = found[bisect.bisect_left(found, start) :]
        else:
            positions = sorted(i for w in wanted for i in by_value.get(w, []) if i >= start)
        return ((i, self.entries[i]) for i in positions)


@dataclass
class _Result:
    spec: Spec
    candidate: _Candidate
    admin: bool
    share_id: str | None = None
    consumed: dict[str, Quantity] | None = None


class Search:
    """The allocator struct of allocator_incubating.go: one Allocate call on one node."""

    def __init__(self, owner: Allocator, node: Node, claims: list[ClaimPlan]) -> None:
        self.owner = owner
        self.features = owner.features
        self.node = node
        self.claims = claims
        self.pools = owner.pools_for(node)
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[MatchAttribute]] = [[] for _ in claims]
        self.consumed_counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self.allocating: dict[tuple[str, str, str], set[int]] = {}
        self.allocating_capacity: dict[tuple[str, str, str], dict[str, Quantity]] = {}
        self.results: list[list[_Result]] = [[] for _ in claims]
        self.calls = 0
        self.limit = owner.budget.node_calls
        self.deadline = time.monotonic() + owner.budget.seconds
        self.combinations = owner.features.combinations
        self.candidates: dict[tuple[int, int, int], _Candidates] = {}
        self.quick: list[bool] = []  # per claim: only matchAttribute on scalar values
        self._per_device_nodes: dict[int, bool] = {}

    # Allocate ------------------------------------------------------------------------------

    def run(self) -> list[dict[str, Any]] | None:
        features = self.features
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.requests):
                subs = request.first_available
                if not features.prioritized_list and subs:
                    raise Fatal(
                        f"claim {claim.label}, request {request.name}: has subrequests, but the "
                        "DRAPrioritizedList feature is disabled",
                        (ci, ri, 0),
                    )
                if not features.consumable_capacity and features.implementation != "stable":
                    if request.exactly is not None and request.exactly.capacity is not None:
                        raise Fatal(
                            f"claim {claim.label}, request {request.name}: has capacity "
                            "requests, but the DRAConsumableCapacity feature is disabled",
                            (ci, ri, 0),
                        )
                    for si, sub in enumerate(subs):
                        if sub.capacity is not None:
                            raise Fatal(
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
                    raise Fatal(
                        f"resource claim {claim.label}, request {request.name}: unknown request "
                        "type",
                        (ci, ri, 0),
                    )
            if minimum > MAX_RESULTS:
                raise Fatal(
                    f"claim {claim.label}: number of requested devices {minimum} exceeds the "
                    f"claim limit of {MAX_RESULTS}"
                )
            for i, constraint in enumerate(claim.constraints):
                requests = strings(constraint.get("requests"))
                if constraint.get("matchAttribute") is not None:
                    name = text(constraint.get("matchAttribute"))
                    self.constraints[ci].append(
                        MatchAttribute(requests, name, features.list_type_attributes)
                    )
                elif (
                    constraint.get("distinctAttribute") is not None
                    and features.implementation != "stable"
                ):
                    name = text(constraint.get("distinctAttribute"))
                    self.constraints[ci].append(
                        DistinctAttribute(requests, name, features.list_type_attributes)
                    )
                else:
                    raise Fatal(
                        f"claim {claim.label}, constraint #{i}: empty constraint (unsupported "
                        "constraint type?)"
                    )
        self.quick = [
            all(type(c) is MatchAttribute and not c.lists for c in constraints)
            for constraints in self.constraints
        ]
        done = self.allocate_one((0, 0, 0, 0), False, 0)
        if done is EXCEEDED:  # as upstream returns the sentinel error at the top
            raise Fatal("allocation max size exceeded")
        if done is not True:
            if any(p.invalid for p in self.pools) and self.features.skip_incomplete_pools:
                raise Fatal("invalid resource pools were encountered", node=True)
            return None
        return [self._allocation(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, spec: Spec, key: tuple[int, int, int]) -> _RequestData:
        """validateDeviceRequest."""
        claim = self.claims[key[0]]
        for i, selector in enumerate(spec.selectors):
            if selector is None:
                raise Fatal(
                    f"claim {claim.label}, request {spec.name}, selector #{i}: CEL expression "
                    "empty (unsupported selector type?)",
                    key,
                )
        if not self.features.admin_access and spec.has_admin:
            raise Fatal(
                f"claim {claim.label}, request {spec.name}: admin access is requested, but the "
                "feature is disabled",
                key,
            )
        if not spec.class_name:
            raise Fatal(
                f"claim {claim.label}, request {spec.name}: missing device class name "
                "(unsupported request type?)",
                key,
            )
        device_class = self.owner.state.classes.get(spec.class_name)
        if device_class is None:
            raise Fatal(
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
                    raise Fatal(
                        f"claim {claim.label}, request {spec.name}: asks for all devices, but "
                        f"resource pool {pool.id} is currently being updated",
                        key,
                    )
                if pool.invalid:
                    raise Fatal(
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
            raise Fatal(
                f"claim {claim.label}, request {spec.name}: unsupported count mode {spec.mode}",
                key,
            )
        return data

    # allocateOne ---------------------------------------------------------------------------

    def allocate_one(self, r: tuple[int, int, int, int], subrequest: bool, start: int) -> Any:
        """allocateOne: True when everything got allocated, False, or EXCEEDED. Each call
        counts, and then, as upstream checks its context, the budget (Interrupted). ``start``
        is upstream's startLocation, as a position in the request's candidates."""
        self.calls += 1
        if self.calls > self.limit:
            raise Interrupted(self.calls, False)
        if not self.calls & 0xFFF:
            if self.owner.budget.cancelled:
                raise Cancelled
            if time.monotonic() > self.deadline:
                raise Interrupted(self.calls, True)
        ci, ri, si, di = r
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.requests):
            done = self.allocate_one((ci + 1, 0, 0, 0), False, 0)
            return False if done is EXCEEDED else done
        key = (ci, ri, si)
        data = self.request_data[key]
        if not subrequest and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                done = self.allocate_one((ci, ri, sub, di), True, 0)
                if done is EXCEEDED:
                    sub += 1
                    continue
                all_exceeded = False
                if done:
                    data.selected = sub
                    return True
                sub += 1
            return EXCEEDED if all_exceeded else False
        spec = data.spec
        all_devices = spec.mode == "All"
        if all_devices and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.allocate_one((ci, ri + 1, 0, 0), False, 0)
        if len(self.results[ci]) + data.num_devices - di > MAX_RESULTS:
            return EXCEEDED
        if all_devices:
            ok, undo = self._allocate_device(r, data.all_devices[di], True)
            if not ok:
                return False
            done = self.allocate_one((ci, ri, si, di + 1), subrequest, 0)
            if done is not True:
                undo()
            return done
        candidates = self.candidates.get(key)
        if candidates is None:
            candidates = self.candidates[key] = _Candidates(self._candidates(key, data))
        constraints = self.constraints[ci]
        quick = self.quick[ci]
        base, sub = (spec.parent, spec.name) if spec.parent else (spec.name, "")
        tries = candidates.start_at(start)
        if quick:
            for constraint in constraints:
                if constraint.count and not constraint._skips(base, sub):
                    if candidates.indexable:
                        tries = candidates.matching(constraint, start)
                    break
        for i, entry in tries:
            candidate = entry.candidate
            if candidate is None:  # 1.34 (experimental, incubating): an invalid pool stops it
                raise Fatal(entry.error, key)
            dkey = candidate.key
            if spec.admin:
                if ci in self.allocating.get(dkey, ()):
                    continue
            elif self.allocating.get(dkey):
                continue
            if entry.error:
                raise Fatal(entry.error, key)
            if entry.multi and not self._capacity_ok(data, candidate):
                continue
            if quick and not entry.counters:
                # What allocateDevice's constraints would refuse, refused without its work
                # (matchAttribute only: its add and remove leave nothing behind).
                device = candidate.device
                if any(c.refuses(base, sub, device, dkey) for c in constraints):
                    continue
            ok, undo = self._allocate_device(r, candidate, False, entry)
            if not ok:
                continue
            # 1.36+ looks for the next device after this one; before, from the start.
            done = self.allocate_one(
                (ci, ri, si, di + 1), subrequest, i + 1 if self.combinations else 0
            )
            if done is True:
                return True
            undo()
            if done is EXCEEDED:
                return EXCEEDED
        return False

    def _candidates(self, key: tuple[int, int, int], data: _RequestData) -> Iterator[_Entry]:
        """The devices allocateOne tries for a request, in its order (pools by driver and
        name, slices by name, devices as listed), without those that every try refuses the
        same way and for nothing: held by other claims, not selected, not on this node,
        short of capacity, tainted. What depends on the search so far is checked per try."""
        spec = data.spec
        features = self.features
        held = self.owner.held.dedicated
        for pool in self.pools:
            if pool.invalid and not features.skip_incomplete_pools:
                yield _Entry(None, error=f"pool {pool.name} is invalid: {pool.reason}")
                return
            if (pool.incomplete and features.skip_incomplete_pools) or pool.invalid:
                continue
            for s in pool.slices:
                for device in s.devices:
                    dkey = (pool.driver, pool.name, device.name)
                    if not spec.admin and dkey in held:
                        continue
                    candidate = _Candidate(device, dkey, s, pool)
                    try:
                        if not self._selectable(key, data, s, device):
                            continue
                    except Fatal as exc:  # a CEL error stops the search where it is met
                        yield _Entry(candidate, error=str(exc))
                        continue
                    multi = (
                        features.consumable_capacity
                        and device.raw.get("allowMultipleAllocations") is True
                    )
                    if (
                        features.consumable_capacity
                        and not multi
                        and not self._capacity_ok(data, candidate)
                    ):
                        continue
                    counters = bool(consumes(device))
                    if counters and not features.partitionable_devices:
                        continue
                    # Taints are checked after counters are taken (and, as upstream, not given
                    # back): only a device without counters can be left out for them.
                    if (
                        not counters
                        and features.device_taints
                        and self._untolerated(device, spec) is not None
                    ):
                        continue
                    yield _Entry(candidate, multi=multi, counters=counters)

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
            if isinstance(verdict, Unknown):  # dradash's own limit: the outcome is unknown
                raise Interrupted(self.calls, True)
            if isinstance(verdict, str):
                raise Fatal(
                    named(
                        verdict,
                        self.claims[key[0]].label,
                        (s.driver, s.pool_name, device.name),
                        self.features.release,
                    ),
                    key,
                )
            return False
        if s.spec.get("perDeviceNodeSelection") is True:
            cached = self._per_device_nodes.get(id(device))
            if cached is None:
                raw = device.raw
                cached = node_matches(
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
        return bool(
            fits_capacity(
                current,
                data.spec.wanted,
                capacity,
                allocating,
                self.features.fractional_capacity_range,
            )
        )

    # allocateDevice ------------------------------------------------------------------------

    def _allocate_device(
        self,
        r: tuple[int, int, int, int],
        candidate: _Candidate,
        must: bool,
        entry: _Entry | None = None,
    ) -> tuple[bool, Callable[[], None]]:
        """allocateDevice, with its rollback function. With the candidate's ``entry`` (see
        ``_candidates``), what that found for it already is not checked again."""
        ci, ri, si, _ = r
        data = self.request_data[(ci, ri, si)]
        spec = data.spec
        features = self.features
        device, key = candidate.device, candidate.key
        if entry is None:
            multi = (
                features.consumable_capacity and device.raw.get("allowMultipleAllocations") is True
            )
        else:
            multi = entry.multi
        if not multi and spec.admin and ci in self.allocating.get(key, ()):
            return False, _nothing
        if not spec.admin and self._in_use(key):
            return False, _nothing
        uses = consumes(device) if entry is None or entry.counters else []
        if not features.partitionable_devices and uses:
            return False, _nothing
        skip_counters = multi and (
            key in self.owner.held.capacity or key in self.allocating_capacity
        )
        if not skip_counters and uses and not self._counters_available(candidate):
            return False, _nothing
        if (
            features.device_taints
            and (entry is None or entry.counters)
            and self._untolerated(device, spec) is not None
        ):
            return False, _nothing
        base, sub = (spec.parent, spec.name) if spec.parent else (spec.name, "")
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device, key):
                if must:
                    raise Fatal(
                        f"claim {self.claims[ci].label}, request {spec.name}: cannot add device "
                        f"{device_id(key)} because a claim constraint would not be satisfied",
                        (ci, ri, si),
                    )
                for earlier in constraints[:i]:
                    earlier.remove(base, sub, device, key)
                return False, _nothing
        holders = self.allocating.setdefault(key, set())
        if not multi:
            holders.add(ci)
        result = _Result(spec=spec, candidate=candidate, admin=spec.admin)
        if features.consumable_capacity and (entry is None or multi):
            if not fits_capacity(
                self.owner.held.capacity.get(key, {}),
                spec.wanted,
                self.owner.capacities(device),
                self.allocating_capacity.get(key, {}),
                features.fractional_capacity_range,
            ):
                return False, _nothing  # as upstream: nothing rolled back here
            if multi:
                consumed = consumed_from_request(
                    spec.wanted,
                    self.owner.capacities(device),
                    features.fractional_capacity_range,
                )
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
            elif features.partitionable_devices and uses:
                self._release_counters(candidate)
            del results[count:]

        return True, undo

    def _untolerated(self, device: Device, spec: Spec) -> dict[str, Any] | None:
        """taintPreventsAllocation: the first NoSchedule/NoExecute taint not tolerated."""
        return untolerated(self.owner.index.taints.get(id(device), ()), spec.tolerations)

    # counters ------------------------------------------------------------------------------

    def _counters_available(self, candidate: _Candidate) -> bool:
        """checkAvailableCounters."""
        pool = candidate.pool
        available = self.owner.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.key, {})
        for use in consumes(candidate.device):
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
        for use in consumes(candidate.device):
            counters = consumed.get(text(use.get("counterSet")), {})
            for name, value in mapping(use.get("counters")).items():
                q = quantity_of(value)
                if q is not None and name in counters:
                    counters[name] = counters[name].sub(q)

    # results -------------------------------------------------------------------------------

    def _allocation(self, ci: int, claim: ClaimPlan) -> dict[str, Any]:
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

    def _config(self, ci: int, claim: ClaimPlan) -> list[dict[str, Any]]:
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
        once = self.features.release >= 37  # 1.36 added a config once per request it names
        for entry in claim.config:
            requests = strings(entry.get("requests"))
            body = {k: v for k, v in entry.items() if k != "requests"}
            if not requests:
                config.append({"source": "FromClaim", **body})
                continue
            for ri, request in enumerate(claim.requests):
                if request.name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **body})
                    if once:
                        break
                    continue
                data = selected[ri]
                if data.parent is not None and data.spec.full_name in requests:
                    config.append({"source": "FromClaim", "requests": requests, **body})
                    if once:
                        break
        if once:
            # A config that applies to every request loses its list: empty means all.
            for entry in config:
                names = entry.get("requests")
                if names and all(
                    request.name in names or selected[ri].spec.full_name in names
                    for ri, request in enumerate(claim.requests)
                ):
                    del entry["requests"]
        return config

    def _node_selector(self, ci: int, claim: ClaimPlan) -> dict[str, Any] | None:
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
                    raise Fatal(
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
        budget: SearchBudget | None = None,
        assumed: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> None:
        self.state = state
        self.features = features
        self.budget = budget or SearchBudget()
        self.index = snapshot_index(state)
        self.held = held_devices(
            self.index, {(c.namespace, c.name) for c in exclude}, features.consumable_capacity
        )
        self._pools: dict[str, list[GatheredPool]] = {}
        self._counters: dict[tuple[str, str], dict[str, dict[str, Quantity]]] = {}
        self._plans: dict[int, ClaimPlan] = {}
        self._shares = 0
        self._assumed: dict[tuple[str, str, str], str] | None = None  # device → claim
        if assumed:
            self.assume(assumed)

    def assume(self, assumed: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """Hold the devices of allocations made in this scheduling cycle but not written yet
        (the scheduler's assumed claims: a gang's earlier members), as ``(claim, result)``."""
        self._counters.clear()  # what the pools' counters have left changes with them
        held = self.held
        if self._assumed is None:  # first time: our own copy of what the snapshot holds
            self._assumed = {}
            held.dedicated = set(held.dedicated)
            earlier, owners = held.owners, self._assumed
            held.owners = lambda key: owners.get(key) or earlier(key)
        dedicated = held.dedicated
        assert isinstance(dedicated, set)
        for claim, r in assumed:
            key = (text(r.get("driver")), text(r.get("pool")), text(r.get("device")))
            self._assumed.setdefault(key, claim)
            share = r.get("shareID")
            if share is None or not self.features.consumable_capacity:
                dedicated.add(key)
                continue
            held.shared.add((key, text(share)))
            total = held.capacity.setdefault(key, {})
            for name, value in mapping(r.get("consumedCapacity")).items():
                q = quantity_of(value)
                if q is not None:
                    total[name] = total[name].add(q) if name in total else q

    def plan(self, claim: ResourceClaim) -> ClaimPlan:
        if id(claim) not in self._plans:
            self._plans[id(claim)] = plan_claim(claim)
        return self._plans[id(claim)]

    def allocate(self, node: Node, claims: Sequence[ResourceClaim | ClaimPlan]) -> Allocation:
        """Allocate on one node, within the budget's calls (its leftover ones once the
        searches that may run out are spent: see SearchBudget)."""
        plans = [c if isinstance(c, ClaimPlan) else self.plan(c) for c in claims]
        search = Search(self, node, plans)
        try:
            allocations = search.run()
        except Fatal as exc:
            return Allocation(
                None, str(exc), node_error=exc.node, calls=search.calls, failed_request=exc.request
            )
        except Interrupted as exc:
            return Allocation(None, calls=exc.calls, timed_out=True, by_clock=exc.by_clock)
        return Allocation(allocations, calls=search.calls)

    def verdicts(self, device_class: DeviceClass | None, spec: Spec) -> list[Any]:
        """The verdicts of a class and a request's selectors, cached on the snapshot; errors
        name the claim as CLAIM (see named)."""
        dialect = self.features.cel
        key = (dialect, device_class.name if device_class else "", tuple(spec.selectors))
        cache = self.index.verdicts
        if key not in cache:
            if len(cache) >= 64:
                cache.pop(next(iter(cache)))
            cache[key] = selector_verdicts(self.index, device_class, spec.selectors, CLAIM, dialect)
        return cache[key]

    def capacities(self, device: Device) -> dict[str, tuple[Quantity, Any]]:
        """A device's capacities, parsed once per snapshot."""
        cache = self.index.capacities
        found = cache.get(id(device))
        if found is None:
            found = cache[id(device)] = device_capacities(device)
        return found

    def new_share_id(self) -> str:
        self._shares += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"dradash/share/{self._shares}"))

    def pools_for(self, node: Node) -> list[GatheredPool]:
        """GatherPools for the node, once per Allocator."""
        if node.name not in self._pools:
            self._pools[node.name] = gather_pools(self.index, node, self.features)
        return self._pools[node.name]

    def available_counters(self, pool: GatheredPool) -> dict[str, dict[str, Quantity]]:
        """The counters of a pool minus those allocated devices consume (cached, as upstream
        caches it on the Allocator; keyed by driver and pool, where upstream uses the pool
        name alone)."""
        if pool.key not in self._counters:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in [*pool.slices, *pool.other_slices]:
                for device in s.devices:
                    if not self.held.allocated((s.driver, s.pool_name, device.name)):
                        continue
                    for use in consumes(device):
                        counters = available.get(text(use.get("counterSet")))
                        if counters is None:
                            continue
                        for name, value in mapping(use.get("counters")).items():
                            q = quantity_of(value)
                            if q is not None and name in counters:
                                counters[name] = counters[name].sub(q)
            self._counters[pool.key] = available
        return self._counters[pool.key]
