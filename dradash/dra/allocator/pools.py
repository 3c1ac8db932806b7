"""Pools as the allocator gathers them for one node: ``pools_incubating.go`` (GatherPools,
addSlice, checkSlicesInPool, buildPool, NodeMatches and the pool validation), with the v0.34
rules (``pools_experimental.go`` of 1.34) beside it.

A pool is skipped for ExactCount requests when it is incomplete (fewer slices of its newest
generation than ``resourceSliceCount``) or invalid (duplicate device names, counter sets that
are defined twice or referenced but missing); from 1.35 on, not before (dra-reference §5.2).
``skipped_pool`` says so for the snapshot's current pools, for every page that counts devices.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dradash.dra.allocator.consumable import quantity_of
from dradash.dra.allocator.features import Features
from dradash.dra.cel.quantity import Quantity
from dradash.dra.fields import items, mapping, mappings, text
from dradash.dra.nodes import node_selector_matches
from dradash.dra.objects import Device, Node, Pool, ResourceSlice

if TYPE_CHECKING:
    from dradash.dra.allocator.index import SnapshotIndex


def slice_reaches(node: Node, s: ResourceSlice) -> bool | None:
    """Whether the slice's devices are available on the node (its nodeName, allNodes or
    nodeSelector, or each device's under perDeviceNodeSelection); None for a slice that says
    none of these (a future extension the allocator skips)."""
    spec = s.spec
    if (
        text(spec.get("nodeName"))
        or spec.get("allNodes") is True
        or spec.get("nodeSelector") is not None
    ):
        return node_matches(
            node, text(spec.get("nodeName")), spec.get("allNodes") is True, spec.get("nodeSelector")
        )
    if spec.get("perDeviceNodeSelection") is True:
        return any(
            node_matches(
                node,
                text(d.raw.get("nodeName")),
                d.raw.get("allNodes") is True,
                d.raw.get("nodeSelector"),
            )
            for d in s.devices
        )
    return None


def node_matches(node: Node, node_name: str, all_nodes: bool, selector: Any) -> bool:
    """NodeMatches in pools_incubating.go."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node_selector_matches(selector, node.name, node.labels)
    return False


@dataclass
class GatheredPool:
    """Pool of pools_incubating.go: one (driver, pool name) as GatherPools returns it."""

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


def counter_sets(slices: Iterable[ResourceSlice]) -> tuple[dict[str, dict[str, Quantity]], str]:
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


def consumption_problem(
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


def duplicate_device(slices: Iterable[ResourceSlice]) -> str:
    """validateDeviceNames / poolIsInvalid."""
    seen: set[str] = set()
    for s in slices:
        for device in s.devices:
            if device.name in seen:
                return f"duplicate device name {device.name}"
            seen.add(device.name)
    return ""


def has_binding_conditions(slices: Iterable[ResourceSlice]) -> bool:
    return any(d.raw.get("bindingConditions") is not None for s in slices for d in s.devices)


def consumes(device: Device) -> list[dict[str, Any]]:
    return mappings(device.raw.get("consumesCounters"))


# --- GatherPools ------------------------------------------------------------------------------


def gather_pools(index: SnapshotIndex, node: Node, features: Features) -> list[GatheredPool]:
    """GatherPools for one node: pools sorted by driver and name, those with binding
    conditions last; the v0.34 rules when ``features.skip_incomplete_pools`` is off."""
    if not features.skip_incomplete_pools:
        return _gather_134(index, node, features)
    return _gather(index, node, features)


def _relevant(index: SnapshotIndex, node: Node) -> list[ResourceSlice]:
    """NewAllocator's slicesOnNode[node] and slicesShared."""
    return [*index.on_node.get(node.name, ()), *index.shared]


def _gather(index: SnapshotIndex, node: Node, features: Features) -> list[GatheredPool]:
    """GatherPools in pools_incubating.go (v0.35+)."""
    partitionable = features.partitionable_devices
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in _relevant(index, node):
        spec = s.spec
        counters = items(spec.get("sharedCounters"))
        if not partitionable and (spec.get("perDeviceNodeSelection") is not None or counters):
            continue
        # Up to 1.36 a slice with shared counters was relevant for every node; from 1.37 its
        # node selection decides like any slice's (an incomplete pool finds it anyway).
        relevant = True if counters and features.release < 37 else slice_reaches(node, s)
        if relevant is None:
            continue  # some future, unknown extension
        if relevant:
            add_slice(by_pool, s)
    result, with_binding = [], []
    for key, slices in by_pool.items():
        count = slices[0].resource_slice_count
        if len(slices) == count:
            pool = _build_pool(key, slices, None, features)
        else:
            obsolete, all_slices = _slices_in_pool(index, key, slices[0].generation)
            if obsolete:
                continue
            if len(all_slices) != count:
                result.append(GatheredPool(*key, incomplete=True))
                continue
            pool = _build_pool(key, slices, all_slices, features)
        (with_binding if has_binding_conditions(pool.slices) else result).append(pool)
    result.sort(key=lambda p: p.key)
    with_binding.sort(key=lambda p: p.key)
    return result + with_binding


def _slices_in_pool(
    index: SnapshotIndex, key: tuple[str, str], generation: int
) -> tuple[bool, list[ResourceSlice]]:
    """checkSlicesInPool."""
    found = []
    for s in index.by_pool.get(key, ()):
        if s.generation == generation:
            found.append(s)
        elif s.generation > generation:
            return True, []
    return False, found


def _build_pool(
    key: tuple[str, str],
    slices: list[ResourceSlice],
    all_slices: list[ResourceSlice] | None,
    features: Features,
) -> GatheredPool:
    """buildPool: the slices reaching the node, and (when the pool is complete only with the
    others) the slices that do not, whose devices may consume the pool's counters; from 1.37
    the counter sets may come from those too."""
    slices = sorted(slices, key=lambda s: s.name)
    if not features.partitionable_devices:
        problem = duplicate_device(slices)
        if problem:
            return GatheredPool(*key, invalid=True, reason=problem)
        return GatheredPool(*key, slices=slices)
    with_counters = [s for s in slices if items(s.spec.get("sharedCounters"))]
    device_slices = [s for s in slices if not items(s.spec.get("sharedCounters"))]
    others: list[ResourceSlice] = []
    if all_slices is not None and len(slices) < len(all_slices):
        names = {s.name for s in slices}
        for s in all_slices:
            if s.name in names:
                continue
            if features.release >= 37 and items(s.spec.get("sharedCounters")):
                with_counters.append(s)
            else:
                others.append(s)
    problem = duplicate_device(device_slices)
    if problem:
        return GatheredPool(*key, invalid=True, reason=problem)
    sets, problem = counter_sets(with_counters)
    problem = problem or consumption_problem(
        sets, slices if features.release < 37 else device_slices
    )
    problem = problem or consumption_problem(sets, others)
    if problem:
        return GatheredPool(*key, invalid=True, reason=problem)
    return GatheredPool(*key, slices=device_slices, other_slices=others, counter_sets=sets)


def _gather_134(index: SnapshotIndex, node: Node, features: Features) -> list[GatheredPool]:
    """GatherPools in pools_experimental.go v0.34: incomplete pools are kept (the search uses
    them for ExactCount); no check against slices that do not reach the node."""
    by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
    deferred = []
    for s in _relevant(index, node):
        spec = s.spec
        if not features.partitionable_devices and (spec.get("perDeviceNodeSelection") is not None):
            continue
        relevant = slice_reaches(node, s)
        if relevant is None:
            continue
        if relevant:
            if has_binding_conditions([s]):
                deferred.append(s)
            else:
                add_slice(by_pool, s)
    for s in deferred:
        add_slice(by_pool, s)
    result, with_binding = [], []
    for key, slices in by_pool.items():
        slices = sorted(slices, key=lambda s: s.name)
        pool = GatheredPool(*key, slices=slices)
        pool.incomplete = len(slices) != slices[0].resource_slice_count
        pool.reason = duplicate_device(slices)
        pool.invalid = bool(pool.reason)
        if features.partitionable_devices:
            pool.counter_sets, _ = counter_sets(slices)
        (with_binding if has_binding_conditions(slices) else result).append(pool)
    result.sort(key=lambda p: p.key)
    with_binding.sort(key=lambda p: p.key)
    return result + with_binding


def add_slice(pools: dict[tuple[str, str], list[ResourceSlice]], s: ResourceSlice) -> None:
    """addSlice: a newer generation replaces what was collected, an older one is ignored."""
    key = (s.driver, s.pool_name)
    collected = pools.get(key)
    if collected is None or s.generation > collected[0].generation:
        pools[key] = [s]
    elif s.generation == collected[0].generation:
        collected.append(s)


def skipped_pool(pool: Pool, features: Features) -> str:
    """Why the allocator takes no ExactCount device from a snapshot's current pool:
    ``"invalid"`` (duplicate device names), ``"incomplete"`` (from 1.35 on: fewer slices than
    ``resourceSliceCount``) or ``""`` (it uses the pool)."""
    if not pool.valid:
        return "invalid"
    if not pool.complete and features.skip_incomplete_pools:
        return "incomplete"
    return ""
