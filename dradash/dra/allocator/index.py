"""What every allocation on one snapshot needs, computed once: slices by node and by pool, each
device as a CEL input with its taints (its own and DeviceTaintRules'), the devices claims hold
(the scheduler's ``allocateddevices.go`` and ``allocatedstate.go``: AllocatedState without the
claims being allocated), and the verdict of a class's and a request's selectors on every device
(``selectorsMatch``, evaluated for all devices in one batch and cached per snapshot)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dradash.dra.allocator.consumable import quantity_of
from dradash.dra.allocator.features import NEWEST
from dradash.dra.cel import CelCompileError, Selector, compile_selector, evaluate_devices
from dradash.dra.cel.device import DeviceInput, conversion_error
from dradash.dra.cel.dialect import Dialect
from dradash.dra.cel.quantity import Quantity
from dradash.dra.fields import items, mapping, mappings, text
from dradash.dra.gc import gc_paused
from dradash.dra.matching import cel_dialect, device_input, device_table
from dradash.dra.objects import Device, DeviceClass, ResourceSlice
from dradash.dra.state import ClusterState


class SnapshotIndex:
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
        self.lists = cel_dialect(state).list_values  # how device_table converted devices
        for d in self.devices:
            pair = known.get(id(d))
            if pair is None:
                value = device_input(d)
                pair = (value, conversion_error(value, self.lists))
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
        # Where each current device is in ``current`` (what the explainer's per-device steps
        # are indexed by), by id(device).
        self.current_at = {id(entry[0]): i for i, entry in enumerate(self.current)}
        self.pool_problems: dict[tuple[bool, bool, bool], dict[Any, tuple[str, str] | None]] = {}
        # The explainer's DeviceChecks, each distinct one once (explain.py).
        self.device_checks: dict[Any, Any] = {}

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
        self.verdicts: dict[tuple[Dialect, str, tuple[str | None, ...]], list[Any]] = {}
        self.capacities: dict[int, dict[str, tuple[Quantity, Any]]] = {}
        self._other_errors: list[str | None] | None = None

    def errors_for(self, dialect: Dialect) -> list[str | None]:
        """The devices' conversion errors where this environment converts them."""
        if dialect.list_values == self.lists:
            return self.errors
        if self._other_errors is None:
            self._other_errors = [conversion_error(i, dialect.list_values) for i in self.inputs]
        return self._other_errors


def snapshot_index(state: ClusterState) -> SnapshotIndex:
    return state.derived("allocator-index", SnapshotIndex)  # type: ignore[no-any-return]


@dataclass
class Held:
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


def held_devices(index: SnapshotIndex, exclude: set[tuple[str, str]], consumable: bool) -> Held:
    """GatherAllocatedState over every claim but those being allocated."""
    held = Held()
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


# --- selectors: one verdict per device and request -----------------------------------------

CLAIM = "\x00claim\x00"  # stands for the claim in cached verdicts' error messages


_RUNTIME_ERROR = re.compile(r"(.*?: selector #\d+): CEL runtime error: ")
# cel.EnhanceRuntimeError (1.37): appended to runtime errors that contain "no such key:".
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
    "with has() for optional fields"
)


def named(
    error: str, claim: str, device: tuple[str, str, str] | None = None, release: int = NEWEST
) -> str:
    """A cached verdict's error for one claim, worded as the release's allocator words it:
    from 1.37, selectorsMatch names the device ("selector #0 on device D/P/N: CEL runtime
    error: …") and suggests optional chaining for "no such key" (cel.EnhanceRuntimeError)."""
    out = error.replace(CLAIM, claim)
    if release >= 37 and device is not None and (match := _RUNTIME_ERROR.match(out)):
        rest = out[match.end() :]
        if "no such key:" in rest:
            rest += NO_SUCH_KEY_HINT
        out = f"{match.group(1)} on device {'/'.join(device)}: CEL runtime error: {rest}"
    return out


# Verdict codes besides True and an error message (sentinels: 1 == True in Python).
CLASS_NO, REQUEST_NO = object(), object()


class Unknown(str):
    """The verdict on a device dradash stopped evaluating the selectors on (its own time safety
    net, cel/budget.py; not Kubernetes'), worded so: neither a match nor an error the allocator
    would stop with. A search that reaches such a device stops as dradash's clock stops it
    (search.py): the outcome there is unknown."""


def selector_verdicts(
    index: SnapshotIndex,
    device_class: DeviceClass | None,
    selectors: Sequence[str | None],
    claim: str,
    dialect: Dialect,
) -> list[Any]:
    """selectorsMatch for every device of the snapshot: True, CLASS_NO, REQUEST_NO, the error
    the allocator would stop with (worded as upstream), or Unknown. Class selectors come first; a
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
                compiled.append(Selector(compile_selector(expression, dialect), label))
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
            compiled, index.inputs, errors=index.errors_for(dialect), columns=index.columns
        ):
            if v.unknown:
                out.append(Unknown(v.error if v.decided_by else compiled[0].label + str(v.error)))
            elif v.error is not None:
                out.append(
                    v.error if v.decided_by else f"{compiled[0].label}CEL runtime error: {v.error}"
                )
            elif v.matches:
                out.append(problem or True)
            else:
                out.append(CLASS_NO if v.decided_by.startswith("class ") else REQUEST_NO)
    return out
