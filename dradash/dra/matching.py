"""Which devices of a snapshot (or of some ResourceSlices) a CEL selector matches.

Devices are those of current-generation pools, as the allocator sees them. With a DeviceClass,
the class's selectors apply first, as in the allocator; the expression then decides for the
devices the class lets through. ``Matcher`` answers the same for many (class, request selectors)
at once, for the findings, capacity and inventory.
"""

from __future__ import annotations

import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from dradash.dra.cel import (
    CelCompileError,
    DeviceInput,
    DeviceVerdict,
    Program,
    Selector,
    compile_selector,
    evaluate_devices,
)
from dradash.dra.cel.device import conversion_error, projection
from dradash.dra.gc import gc_paused
from dradash.dra.objects import Device, DeviceRequestSpec
from dradash.dra.state import ClusterState

# Attributes worth a column in a table of devices, in order of preference.
KEY_ATTRIBUTES = (
    "productName",
    "model",
    "type",
    "profile",
    "architecture",
    "driverVersion",
    "resource.kubernetes.io/numaNode",
)


class UnknownDeviceClass(LookupError):
    pass


@dataclass
class DeviceRow:
    device: Device
    verdict: DeviceVerdict
    excluded_by_class: bool = False  # a class selector, not the expression, said no

    @property
    def state(self) -> str:
        """ "matches" · "no-match" · "not-in-class" · "error"."""
        if self.verdict.error is not None:
            return "error"
        if self.verdict.matches:
            return "matches"
        return "not-in-class" if self.excluded_by_class else "no-match"


@dataclass
class Evaluation:
    expression: str
    device_class: str | None = None
    compile_error: str | None = None
    rows: list[DeviceRow] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, int]:
        counts = Counter(r.state for r in self.rows)
        return {
            "matched": counts["matches"],
            "unmatched": counts["no-match"] + counts["not-in-class"],
            "errors": counts["error"],
        }

    def by_state(self, state: str) -> list[DeviceRow]:
        return [r for r in self.rows if r.state == state]

    @property
    def matching(self) -> list[DeviceRow]:
        return self.by_state("matches")

    @property
    def excluded(self) -> list[DeviceRow]:
        """Devices the device class's own selectors turned away."""
        return self.by_state("not-in-class")

    @property
    def nearest_misses(self) -> list[DeviceRow]:
        """Devices the expression rejected, those that failed the fewest clauses first."""
        misses = self.by_state("no-match")
        return sorted(misses, key=lambda r: (len(r.verdict.failed_clauses) or 99, r.device.key))

    @property
    def error_groups(self) -> list[tuple[str, list[DeviceRow]]]:
        """Devices by error message, the most common first."""
        groups: dict[str, list[DeviceRow]] = {}
        for row in self.by_state("error"):
            groups.setdefault(row.verdict.error or "", []).append(row)
        return sorted(groups.items(), key=lambda item: -len(item[1]))


def device_input(device: Device) -> DeviceInput:
    return DeviceInput(
        driver=device.driver,
        attributes=device.attributes,
        capacity=device.capacity,
        allow_multiple_allocations=device.allow_multiple_allocations,
    )


@dataclass(slots=True)
class IndexedDevice:
    """A device of a DeviceIndex: what selectors read of it (the fields of a DeviceInput, so
    it serves as one), and where it is."""

    driver: str
    pool_name: str
    name: str
    node_name: str
    attributes: dict[str, Any]
    capacity: dict[str, Any]
    allow_multiple_allocations: bool

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool_name, self.name)


@dataclass(slots=True)
class IndexedClass:
    name: str
    selectors: list[str | None]


class DeviceIndex:
    """What selectors need of a snapshot — the devices of current pools, as the allocator sees
    them, and the DeviceClasses — compact enough to keep with the snapshot's stored analysis and
    to load in a fraction of the time its ResourceSlices take (the playground evaluates over
    it). ``matching.evaluate`` takes it where it takes a ClusterState."""

    VERSION = 1

    def __init__(
        self,
        devices: list[IndexedDevice],
        classes: dict[str, IndexedClass],
        errors: list[str | None],
    ) -> None:
        self.devices = devices  # sorted by key
        self.classes = classes
        self.errors = errors  # conversion_error of each device
        self._derived: dict[str, Any] = {}

    @classmethod
    def of(cls, state: ClusterState) -> DeviceIndex:
        devices, inputs, errors = device_table(state)
        return cls(
            [
                IndexedDevice(
                    d.driver,
                    d.pool_name,
                    d.name,
                    d.node_name,
                    i.attributes,
                    i.capacity,
                    i.allow_multiple_allocations,
                )
                for d, i in zip(devices, inputs, strict=True)
            ],
            {
                name: IndexedClass(name, list(c.selectors))
                for name, c in sorted(state.classes.items())
            },
            list(errors),
        )

    def to_bytes(self) -> bytes:
        rows = [
            [
                d.driver,
                d.pool_name,
                d.name,
                d.node_name,
                d.attributes,
                d.capacity,
                d.allow_multiple_allocations,
                e,
            ]
            for d, e in zip(self.devices, self.errors, strict=True)
        ]
        classes = {name: c.selectors for name, c in self.classes.items()}
        body = orjson.dumps({"version": self.VERSION, "devices": rows, "classes": classes})
        return zlib.compress(body, 6)

    @classmethod
    def from_bytes(cls, data: bytes, *, freeze: bool = False) -> DeviceIndex:
        """The index again; ``freeze`` for one that will be kept (see gc.gc_paused)."""
        with gc_paused(freeze=freeze):
            loaded = orjson.loads(zlib.decompress(data))
            if loaded.get("version") != cls.VERSION:
                raise ValueError(f"device index version {loaded.get('version')}")
            devices, errors = [], []
            for driver, pool, name, node, attributes, capacity, multiple, error in loaded[
                "devices"
            ]:
                devices.append(
                    IndexedDevice(driver, pool, name, node, attributes, capacity, multiple)
                )
                errors.append(error)
            classes = {
                name: IndexedClass(name, selectors) for name, selectors in loaded["classes"].items()
            }
        return cls(devices, classes, errors)

    def derived(self, key: str, compute: Callable[[DeviceIndex], Any]) -> Any:
        """compute(self), once, as ClusterState.derived."""
        if key not in self._derived:
            self._derived[key] = compute(self)
        return self._derived[key]


DeviceTable = tuple[list[Any], list[DeviceInput], list[str | None]]


def device_table(state: ClusterState | DeviceIndex) -> DeviceTable:
    """The devices of current pools, their CEL inputs and conversion errors (built once)."""
    return state.derived("cel-device-table", _build_device_table)  # type: ignore[arg-type]


def _build_device_table(state: ClusterState | DeviceIndex) -> DeviceTable:
    if isinstance(state, DeviceIndex):  # an IndexedDevice has every field of a DeviceInput
        return state.devices, state.devices, state.errors  # type: ignore[return-value]
    devices = sorted(state.devices.values(), key=lambda d: d.key)
    inputs = [device_input(d) for d in devices]
    return devices, inputs, [conversion_error(i) for i in inputs]


def evaluate(
    state: ClusterState | DeviceIndex,
    expression: str,
    *,
    device_class: str | None = None,
    time_limit: float | None = None,
) -> Evaluation:
    """The verdict of the expression on every device of the state. Raises UnknownDeviceClass."""
    result = Evaluation(expression=expression, device_class=device_class)
    selectors: list[Selector] = []
    if device_class:
        cls = state.classes.get(device_class)
        if cls is None:
            raise UnknownDeviceClass(f"device class {device_class} does not exist")
        for i, class_expression in enumerate(cls.selectors):
            label = f"class {device_class}: selector #{i}: "
            try:
                program = compile_selector(class_expression or "")
            except CelCompileError as exc:
                result.compile_error = f"{label}CEL compile error: {exc}"
                return result
            selectors.append(Selector(program, label))
    try:
        selectors.append(Selector(compile_selector(expression)))
    except CelCompileError as exc:
        result.compile_error = str(exc)
        return result
    devices, inputs, errors = device_table(state)
    with gc_paused():  # tens of thousands of small objects, none cyclic
        verdicts = evaluate_devices(
            selectors,
            inputs,
            errors=errors,
            time_limit=time_limit,
            columns=state.derived("cel-device-columns", lambda _: {}),
        )
        result.rows = [
            DeviceRow(d, v, excluded_by_class=v.matches is False and bool(v.decided_by))
            for d, v in zip(devices, verdicts, strict=True)
        ]
    return result


def evaluate_slices(
    slices: list[dict[str, Any]], expression: str, *, time_limit: float | None = None
) -> Evaluation:
    """The same for ResourceSlices given inline (any API version dradash reads)."""
    return evaluate(ClusterState.build(slices), expression, time_limit=time_limit)


def key_attributes(device: Device, limit: int = 4) -> list[tuple[str, Any]]:
    """A few attributes that tell devices apart at a glance (name, value)."""
    attributes = device.attributes
    picked = []
    for name in KEY_ATTRIBUTES:
        for candidate in (name, f"{device.driver}/{name}"):
            value = attributes.get(candidate)
            if isinstance(value, dict) and value:
                picked.append((name.rsplit("/", 1)[-1], next(iter(value.values()))))
                break
        if len(picked) == limit:
            break
    memory = device.capacity.get("memory") or device.capacity.get(f"{device.driver}/memory")
    if isinstance(memory, dict) and len(picked) < limit:
        picked.append(("memory", memory.get("value")))
    return picked


# What a request (or a firstAvailable subrequest) asks for: (device class, request selectors).
Want = tuple[str, tuple[str | None, ...]]


def want_of(spec: DeviceRequestSpec) -> Want:
    return (spec.device_class_name, tuple(spec.selectors))


class Matcher:
    """The devices matching class + request selectors, for many requests at once.

    ``add`` every (class, selectors) first, then ``run`` evaluates them together: the devices
    are grouped once by everything any of the selectors reads, those groups again by what each
    selector set reads, and each selector set runs once per group. ``devices(want)`` is None
    when the class is missing or a selector does not compile (the allocator would fail, not find
    devices); a device on which a selector fails at runtime does not match.
    """

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self._pending: set[Want] = set()
        self._results: dict[Want, list[Device] | None] = {}
        self._programs: dict[str, Program | None] = {}

    def add(self, want: Want) -> None:
        if want not in self._results:
            self._pending.add(want)

    def devices(self, want: Want) -> list[Device] | None:
        if want not in self._results:
            self.add(want)
            self.run()
        return self._results[want]

    def _program(self, expression: str | None) -> Program | None:
        if expression is None:
            return None
        if expression not in self._programs:
            try:
                self._programs[expression] = compile_selector(expression)
            except CelCompileError:
                self._programs[expression] = None
        return self._programs[expression]

    def _selectors(self, want: Want) -> list[Selector] | None:
        class_name, expressions = want
        device_class = self.state.classes.get(class_name)
        if device_class is None:
            return None
        selectors = []
        for i, expression in enumerate(device_class.selectors):
            program = self._program(expression)
            if program is None:
                return None
            selectors.append(Selector(program, f"class {class_name}: selector #{i}: "))
        for expression in expressions:
            program = self._program(expression)
            if program is None:
                return None
            selectors.append(Selector(program))
        return selectors

    def run(self) -> None:
        wants = sorted(self._pending, key=lambda w: (w[0], tuple(e or "" for e in w[1])))
        self._pending.clear()
        compiled: dict[Want, list[Selector]] = {}
        for want in wants:
            selectors = self._selectors(want)
            if selectors is None:
                self._results[want] = None
            else:
                compiled[want] = selectors
        if not compiled:
            return
        devices, inputs, errors = device_table(self.state)
        # Devices alike in everything any of the selectors reads: one evaluation serves each.
        by_reads: dict[frozenset[tuple[str, ...]], list[Want]] = defaultdict(list)
        for want, selectors in compiled.items():
            by_reads[frozenset().union(*(s.program.reads for s in selectors))].append(want)
        reads = frozenset().union(*by_reads)
        groups: dict[tuple[object, ...], list[int]] = {}
        for i, device_input in enumerate(inputs):
            if errors[i] is None:  # a device CEL cannot read matches nothing
                groups.setdefault(projection(reads, device_input), []).append(i)
        members = list(groups.values())
        representatives: list[DeviceInput] = [inputs[m[0]] for m in members]
        # Then per set of reads, so that one selector reading something every device has its
        # own of (a uuid) does not make every other selector run once per device.
        for own_reads, same in by_reads.items():
            subgroups: dict[tuple[object, ...], list[int]] = {}
            for g, rep in enumerate(representatives):
                subgroups.setdefault(projection(own_reads, rep), []).append(g)
            sub = list(subgroups.values())
            reps = [representatives[g[0]] for g in sub]
            no_errors: list[str | None] = [None] * len(reps)
            for want in same:
                verdicts = evaluate_devices(compiled[want], reps, errors=no_errors)
                self._results[want] = [
                    devices[i]
                    for gs, v in zip(sub, verdicts, strict=True)
                    if v.matches
                    for g in gs
                    for i in members[g]
                ]


def snapshot_matcher(state: ClusterState) -> Matcher:
    """The snapshot's one Matcher: findings, capacity and the inventory ask for many of the same
    (class, selectors), each then evaluated once per snapshot."""
    return state.derived("matcher", Matcher)
