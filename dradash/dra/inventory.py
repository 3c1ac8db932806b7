"""The device inventory of one snapshot, as the allocator sees it.

Devices are those of the current generation of each pool (``ClusterState.devices``): slices of
an older generation are stale and hold no devices the allocator would use. Each device gets one
**status**, in this order of precedence:

* ``allocated`` — a claim holds it (admin access does not count, as in the allocator);
* ``unusable`` — free, but its pool is one the allocator takes no device from for a request of
  ``ExactCount`` devices: an invalid pool (a device name published twice) always, an incomplete
  pool (fewer or more slices than ``resourceSliceCount``) from Kubernetes 1.35 on — or when the
  snapshot does not say its version (dradash then assumes 1.36, DESIGN "Kubernetes fidelity");
* ``tainted`` — free, in a usable pool, but with a ``NoSchedule`` or ``NoExecute`` taint (on the
  device or from a DeviceTaintRule): only a request that tolerates it gets the device;
* ``free`` — any request whose selectors it matches could get it now.

Counts (``Tally``) hold the four statuses, which add up to the total, and ``tainted_any``: every
device with such a taint, allocated or not (a taint added after allocation does not free it).

Also here: which devices each DeviceClass admits (its selectors, through ``Matcher``), pool
details (stale slices, duplicate device names, shared counters against what allocated devices
consume), and the attribute filter of the devices page.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from dradash.dra.allocator import (
    Features,
    blocking_taints,
    kubernetes_minor,
    quantity_of,
    skipped_pool,
)
from dradash.dra.cel.quantity import Quantity
from dradash.dra.fields import mapping, mappings, text
from dradash.dra.matching import snapshot_matcher
from dradash.dra.objects import Device, Pool
from dradash.dra.state import ClusterState

STATUSES = ("allocated", "unusable", "tainted", "free")


@dataclass
class Tally:
    """Devices by status; ``tainted_any`` also counts allocated and unusable tainted ones."""

    allocated: int = 0
    unusable: int = 0
    tainted: int = 0
    free: int = 0
    tainted_any: int = 0

    def add(self, status: str, tainted: bool, n: int = 1) -> None:
        setattr(self, status, getattr(self, status) + n)
        if tainted:
            self.tainted_any += n

    @property
    def total(self) -> int:
        return self.allocated + self.unusable + self.tainted + self.free

    @property
    def segments(self) -> list[tuple[str, int]]:
        """(status, count) in the order of precedence, for a stacked bar."""
        return [(status, getattr(self, status)) for status in STATUSES]

    @property
    def used(self) -> float:
        """The share of devices allocated (0 when there are none)."""
        return self.allocated / self.total if self.total else 0.0


@dataclass
class ClassInventory:
    name: str
    tally: Tally
    error: str = ""  # why membership is unknown (a selector does not compile)


@dataclass
class SharedCounter:
    name: str
    total: str  # the quantity as published
    consumed: str  # summed over the allocated devices of the pool
    fraction: float  # consumed / total (1.0 when the total is zero and something consumes it)


@dataclass
class CounterSet:
    name: str
    counters: list[SharedCounter]

    @property
    def busiest(self) -> SharedCounter | None:
        return max(self.counters, key=lambda c: c.fraction, default=None)


@dataclass
class PoolInfo:
    pool: Pool
    problem: str  # "" · "incomplete" · "invalid" (see allocator.skipped_pool)
    tally: Tally
    stale: list[tuple[str, int, int]]  # (slice name, generation, devices) of older generations
    duplicates: list[str]  # device names published more than once, sorted
    counter_sets: list[CounterSet]

    @property
    def usable(self) -> bool:
        return not self.problem

    @property
    def other_nodes(self) -> list[str]:
        """The nodes of the pool's slices, unless the pool is named after its one node."""
        names = self.pool.node_names
        return [] if names == [self.pool.name] else names

    @property
    def attention(self) -> bool:
        """Something about the pool an administrator should look at."""
        return bool(self.problem or self.stale or self.duplicates or not self.pool.complete)


@dataclass
class Inventory:
    statuses: dict[int, str]  # id(device) -> status
    tainted: set[int]  # id(device) of devices with a blocking taint
    members: dict[str, set[int]]  # class name -> id(device) of the devices it admits
    device_classes: dict[int, list[str]]  # id(device) -> names of the classes admitting it
    classes: list[ClassInventory]  # sorted by name
    by_node: dict[str, Tally]  # "" for devices that are not node-local
    by_driver: dict[str, Tally]
    pools: dict[tuple[str, str], PoolInfo]  # by (driver, pool), sorted
    total: Tally
    minor: int | None = None

    def status(self, device: Device) -> str:
        return self.statuses.get(id(device), "free")

    def classes_of(self, device: Device) -> list[str]:
        return self.device_classes.get(id(device), [])


def inventory(state: ClusterState) -> Inventory:
    """The snapshot's inventory (computed once per parsed snapshot)."""
    return state.derived("inventory", _inventory)


def _inventory(state: ClusterState) -> Inventory:
    features = Features.of(state)
    problems = {key: skipped_pool(pool, features) for key, pool in state.pools.items()}
    statuses: dict[int, str] = {}
    tainted: set[int] = set()
    counted: Counter[tuple[str, str, str, str, bool]] = Counter()
    slices: dict[int, tuple[str, str, bool]] = {}  # id(slice) -> (driver, pool, skipped)
    for device in state.devices.values():
        slice_ = device.slice
        if (of_slice := slices.get(id(slice_))) is None:
            pool_key = (slice_.driver, slice_.pool_name)
            of_slice = slices[id(slice_)] = (*pool_key, bool(problems.get(pool_key)))
        driver, pool, skipped = of_slice
        is_tainted = (device.rule_taints or "taints" in device.raw) and bool(
            blocking_taints(device)
        )
        if device.allocations and device.allocated:
            status = "allocated"
        elif skipped:
            status = "unusable"
        elif is_tainted:
            status = "tainted"
        else:
            status = "free"
        key = id(device)
        statuses[key] = status
        if is_tainted:
            tainted.add(key)
        counted[(driver, pool, device.node_name, status, bool(is_tainted))] += 1
    by_node: dict[str, Tally] = defaultdict(Tally)
    by_driver: dict[str, Tally] = defaultdict(Tally)
    by_pool: dict[tuple[str, str], Tally] = defaultdict(Tally)
    total = Tally()
    for (driver, pool, node_name, status, is_tainted), n in counted.items():
        for tally in (total, by_node[node_name], by_driver[driver], by_pool[(driver, pool)]):
            tally.add(status, is_tainted, n)
    members, device_classes, classes = _class_membership(state, statuses, tainted)
    pools = {
        key: _pool_info(pool, problems[key], by_pool.get(key, Tally()))
        for key, pool in sorted(state.pools.items())
    }
    return Inventory(
        statuses=statuses,
        tainted=tainted,
        members=members,
        device_classes=device_classes,
        classes=classes,
        by_node=dict(by_node),
        by_driver=dict(sorted(by_driver.items())),
        pools=pools,
        total=total,
        minor=kubernetes_minor(state.meta.server_version),
    )


def _class_membership(
    state: ClusterState, statuses: dict[int, str], tainted: set[int]
) -> tuple[dict[str, set[int]], dict[int, list[str]], list[ClassInventory]]:
    """Devices each class's own selectors admit, all classes evaluated in one batch. A device on
    which a selector fails at runtime is not admitted (the class page shows those errors)."""
    matcher = snapshot_matcher(state)
    names = sorted(state.classes)
    for name in names:
        matcher.add((name, ()))
    matcher.run()
    members: dict[str, set[int]] = {}
    device_classes: dict[int, list[str]] = defaultdict(list)
    classes = []
    for name in names:
        devices = matcher.devices((name, ()))
        tally = Tally()
        if devices is None:
            members[name] = set()
            classes.append(ClassInventory(name, tally, "a selector of the class does not compile"))
            continue
        ids = members[name] = {id(device) for device in devices}
        for key in ids:
            device_classes[key].append(name)
        for (status, is_tainted), n in Counter((statuses[k], k in tainted) for k in ids).items():
            tally.add(status, is_tainted, n)
        classes.append(ClassInventory(name, tally))
    return members, dict(device_classes), classes


def _pool_info(pool: Pool, problem: str, tally: Tally) -> PoolInfo:
    stale = sorted(
        ((s.name, s.generation, len(s.devices)) for s in pool.stale_slices),
        key=lambda item: (-item[1], item[0]),
    )
    return PoolInfo(
        pool=pool,
        problem=problem,
        tally=tally,
        stale=stale,
        duplicates=sorted(set(pool.duplicate_devices)),
        counter_sets=counter_sets(pool),
    )


def counter_sets(pool: Pool) -> list[CounterSet]:
    """The pool's shared counters (from its current slices), each counter with what the pool's
    allocated devices consume of it through ``consumesCounters``."""
    declared: dict[str, dict[str, Quantity]] = {}
    for s in pool.slices:
        for counter_set in s.shared_counters:
            counters = declared.setdefault(text(counter_set.get("name")), {})
            for counter, value in mapping(counter_set.get("counters")).items():
                if (q := quantity_of(value)) is not None:
                    counters[counter] = q
    if not declared:
        return []
    consumed: dict[tuple[str, str], Quantity] = {}
    for device in pool.devices:
        if not device.allocated:
            continue
        for use in device.consumes_counters:
            name = text(use.get("counterSet"))
            for counter, value in mapping(use.get("counters")).items():
                q = quantity_of(value)
                if q is None or counter not in declared.get(name, {}):
                    continue
                key = (name, counter)
                consumed[key] = consumed[key].add(q) if key in consumed else q
    out = []
    for name, counters in sorted(declared.items()):
        rows = []
        for counter, total in counters.items():
            used = consumed.get((name, counter))
            rows.append(
                SharedCounter(
                    name=counter,
                    total=str(total),
                    consumed=str(used) if used is not None else "0",
                    fraction=_fraction(used, total),
                )
            )
        out.append(CounterSet(name, rows))
    return out


def _fraction(used: Quantity | None, total: Quantity) -> float:
    if used is None or used.sign() <= 0:
        return 0.0
    whole = total.as_approximate_float()
    if whole <= 0:
        return 1.0
    return min(used.as_approximate_float() / whole, 1.0)


# --- the attribute filter --------------------------------------------------------------------

_DOMAIN = r"[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?"
_NAME = re.compile(rf"^(?:(?P<domain>{_DOMAIN})/)?(?P<id>[A-Za-z_][A-Za-z0-9_]*)$")


class AttributeFilterError(ValueError):
    pass


@dataclass(frozen=True)
class AttributeFilter:
    """``name`` or ``name=value``, the name qualified (``gpu.nvidia.com/productName``) or bare
    (``productName``: the device's driver's domain), as CEL's ``device.attributes[domain][id]``
    sees attributes. Without a value it matches devices that have the attribute; with one, those
    whose value equals it (ints as numbers, bools as true/false, strings and versions as written,
    list attributes when one element does)."""

    domain: str  # "" for the device's driver's domain
    id: str
    value: str | None = None

    @classmethod
    def parse(cls, raw: str) -> AttributeFilter:
        name, sep, value = raw.strip().partition("=")
        name = name.strip()
        match = _NAME.match(name)
        if match is None:
            raise AttributeFilterError(
                f"{name or 'an empty name'!r} is not an attribute name: use name, domain/name, "
                "name=value or domain/name=value"
            )
        return cls(match.group("domain") or "", match.group("id"), value.strip() if sep else None)

    def lookup(self, device: Device) -> dict[str, Any] | None:
        """The device's attribute this filter names, as published ({"string": …} and so on)."""
        domain = self.domain or device.driver
        attributes = mapping(device.raw.get("attributes"))
        found = attributes.get(f"{domain}/{self.id}")
        if found is None and domain == device.driver:
            found = attributes.get(self.id)
        return found if isinstance(found, dict) else None

    def matches(self, device: Device) -> bool:
        attribute = self.lookup(device)
        if attribute is None:
            return False
        return self.value is None or value_matches(attribute, self.value)


def value_matches(attribute: dict[str, Any], wanted: str) -> bool:
    for kind, value in attribute.items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, bool):
                if wanted.lower() == ("true" if v else "false"):
                    return True
            elif isinstance(v, int):
                try:
                    if int(wanted) == v:
                        return True
                except ValueError:
                    continue
            elif isinstance(v, str) and kind.rstrip("s") in ("string", "version") and v == wanted:
                return True
    return False


def attribute_matches(state: ClusterState, wanted: AttributeFilter) -> set[int]:
    """id(device) of the devices the filter matches. The devices are grouped by the value of
    the named attribute once per name (only for names some device publishes), so a repeated
    filter costs one check per distinct value, not one per device."""
    qualified, ids = state.derived("attribute-names-known", _known_names)
    if not (f"{wanted.domain}/{wanted.id}" in qualified if wanted.domain else wanted.id in ids):
        return set()
    groups = state.derived(
        f"attribute-values:{wanted.domain}/{wanted.id}", lambda s: _attribute_values(s, wanted)
    )
    matched: set[int] = set()
    for attribute, members in groups.values():
        if wanted.value is None or value_matches(attribute, wanted.value):
            matched |= members
    return matched


def _known_names(state: ClusterState) -> tuple[set[str], set[str]]:
    names = attribute_names(state)
    return set(names), {name.rsplit("/", 1)[-1] for name in names}


def _attribute_values(
    state: ClusterState, wanted: AttributeFilter
) -> dict[Any, tuple[dict[str, Any], set[int]]]:
    """The named attribute's distinct values, each with the devices that have it."""
    groups: dict[Any, tuple[dict[str, Any], set[int]]] = {}
    for device in state.devices.values():
        attribute = wanted.lookup(device)
        if attribute is None:
            continue
        try:
            key: Any = tuple(
                sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in attribute.items())
            )
            hash(key)
        except TypeError:  # a value no driver would publish (a map): keep it apart
            key = repr(attribute)
        groups.setdefault(key, (attribute, set()))[1].add(id(device))
    return groups


def attribute_text(attribute: Any) -> str:
    """An attribute's value as one would write it in a filter: ``8.0.0``, ``true``, ``[1, 2]``."""
    for value in mapping(attribute).values():
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return "[" + ", ".join(attribute_text({"v": v}) for v in value) + "]"
        return str(value)
    return ""


def attribute_names(state: ClusterState) -> list[str]:
    """Every attribute name the devices publish, qualified with its domain, sorted."""
    return state.derived("attribute-names", _attribute_names)


def _attribute_names(state: ClusterState) -> list[str]:
    by_driver: dict[str, set[str]] = defaultdict(set)
    seen: set[tuple[str, tuple[str, ...]]] = set()  # devices of a driver mostly share their names
    for device in state.devices.values():
        keys = (device.slice.driver, tuple(mapping(device.raw.get("attributes"))))
        if keys not in seen:
            seen.add(keys)
            by_driver[keys[0]].update(keys[1])
    names = set()
    for driver, keys in by_driver.items():
        for key in keys:
            names.add(key if "/" in key else f"{driver}/{key}")
    return sorted(names)


def device_pods(device: Device) -> list[tuple[str, str]]:
    """(namespace, name) of the Pods using the device: those its claims are reserved for, else
    those that reference the claims."""
    out: dict[tuple[str, str], None] = {}
    for allocation in device.allocations:
        claim = allocation.claim
        pods = [c.pod for c in claim.consumers if c.pod is not None] or claim.pods
        for pod in pods:
            out[(pod.namespace, pod.name)] = None
    return list(out)


def device_capacity(device: Device) -> list[tuple[str, str, str]]:
    """(name, quantity as published, quantity the device's allocations consume or "") of the
    device's capacities. Allocations consume capacity (``consumedCapacity``) when the device
    allows multiple allocations (consumable capacity)."""
    consumed = consumed_capacity(device)
    return [
        (name, text(value.get("value")) or str(value.get("value", "")), consumed.get(name, ""))
        for name, value in sorted(mapping(device.raw.get("capacity")).items())
        if isinstance(value, dict)
    ]


def consumed_capacity(device: Device) -> dict[str, str]:
    """What the device's allocations (without admin access) consume of each capacity."""
    sums: dict[str, Quantity] = {}
    for allocation in device.allocations:
        if allocation.admin_access:
            continue
        for name, value in mapping(allocation.raw.get("consumedCapacity")).items():
            q = quantity_of({"value": value})
            if q is not None:
                sums[name] = sums[name].add(q) if name in sums else q
    return {name: str(q) for name, q in sorted(sums.items())}


def device_attributes(device: Device) -> list[tuple[str, str]]:
    """(name, value) of the device's attributes, as published, sorted by name."""
    return [
        (name, attribute_text(value))
        for name, value in sorted(mapping(device.raw.get("attributes")).items())
        if isinstance(value, dict)
    ]


def consumed_counters(device: Device) -> list[tuple[str, str, str]]:
    """(counter set, counter, quantity) the device consumes when allocated."""
    return [
        (text(use.get("counterSet")), counter, text(mapping(value).get("value")))
        for use in mappings(device.raw.get("consumesCounters"))
        for counter, value in mapping(use.get("counters")).items()
    ]
