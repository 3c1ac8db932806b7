"""Which devices of a snapshot (or of some ResourceSlices) a CEL selector matches.

Devices are those of current-generation pools, as the allocator sees them. With a DeviceClass,
the class's selectors apply first, as in the allocator; the expression then decides for the
devices the class lets through. ``Matcher`` answers the same for many (class, request selectors)
at once, for the findings, capacity and inventory.
"""

from __future__ import annotations

import difflib
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from dradash.dra.cel import (
    CelCompileError,
    CelEvalError,
    DeviceInput,
    DeviceVerdict,
    Program,
    Selector,
    cel_device,
    compile_selector,
    evaluate_devices,
)
from dradash.dra.cel.compiler import KEYS, Context, run
from dradash.dra.cel.device import ABSENT, conversion_error, freeze, projection
from dradash.dra.cel.dialect import Dialect
from dradash.dra.gc import gc_paused
from dradash.dra.objects import Device, DeviceRequestSpec
from dradash.dra.state import LIST_ATTRIBUTE_KINDS, ClusterState, SnapshotMeta

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
        """ "matches" · "no-match" · "not-in-class" · "error" · "unknown" (dradash stopped
        before the verdict: its own time limits, not Kubernetes')."""
        if self.verdict.unknown:
            return "unknown"
        if self.verdict.error is not None:
            return "error"
        if self.verdict.matches:
            return "matches"
        return "not-in-class" if self.excluded_by_class else "no-match"


@dataclass
class Clause:
    """A top-level ``&&`` clause of the expression on a device that does not match: false, or
    an error (a clause that raises does not "fail": ``false && error`` is false, but the error
    is there all the same and aborts scheduling as soon as the other clauses are true), or not
    evaluated at all: ``&&`` stops at the first false clause, so what follows it never runs on
    this device and cannot fail on it."""

    source: str
    error: str | None = None
    skipped: bool = False  # after the first false clause: never evaluated


@dataclass
class ErrorHint:
    """What a runtime error on a group of devices (or a name the expression reads) means, when
    dradash can tell."""

    # "capacity": the key is a capacity of the devices; "missing": they lack it; "list": it is
    # a list-typed attribute, which this release's CEL does not convert; "domain": no device
    # publishes the domain; "name": no device publishes the key in that domain
    kind: str
    key: str
    domain: str = ""
    under: str = "attributes"  # where the expression looks the key up: attributes or capacity
    suggestions: list[str] = field(default_factory=list)  # did you mean …? (closest first)
    published: list[str] = field(default_factory=list)  # what there is instead, sorted
    elsewhere: bool = False  # "domain": devices publish it, but under the other field


@dataclass(frozen=True)
class Published:
    """The names the devices publish, as CEL reads them: per field ("attributes", "capacity"),
    domain → identifiers (a bare name is in its device's driver's domain)."""

    attributes: dict[str, frozenset[str]]
    capacity: dict[str, frozenset[str]]

    def of(self, field_name: str) -> dict[str, frozenset[str]]:
        return self.capacity if field_name == "capacity" else self.attributes


@dataclass
class OtherDrivers:
    """Errors on devices of drivers the expression does not target: in a claim, the request's
    DeviceClass would select devices first (as the allocator does), and most of those devices
    would never reach the expression."""

    drivers: list[str]  # the drivers of the devices that raise the errors
    targets: list[str]  # the drivers the expression names
    classes: list[str]  # the snapshot's classes that name a targeted driver
    devices: int = 0  # devices of those drivers that raise an error
    errors: int = 0  # devices that raise an error, of any driver
    untargeted: bool = True  # False: the expression names them all (no class is chosen)


HINT_ROWS = 50  # devices of an error group looked at for a hint (their maps are built lazily)
NO_SUCH_KEY = re.compile(r"no such key: (?P<key>[^\s,;)]+)")
UNSUPPORTED = re.compile(r"attribute (?P<key>\S+): unsupported attribute value")
DRIVER_NAMED = re.compile(r"""device\.driver\s*==\s*["']([^"']+)["']""")


@dataclass
class Evaluation:
    expression: str
    device_class: str | None = None
    compile_error: str | None = None
    rows: list[DeviceRow] = field(default_factory=list)
    program: Program | None = None  # the expression's, for diagnostics
    dialect: Dialect = field(default_factory=Dialect)  # the environment it was compiled in
    # Why the apiserver of that release would refuse the expression in a new or changed
    # selector (NewExpressions honours the gates) although the scheduler evaluates it.
    new_selector_error: str | None = None
    # What it was evaluated over: the published names and classes behind the hints.
    state: ClusterState | DeviceIndex | None = field(default=None, repr=False, compare=False)

    @cached_property
    def _states(self) -> dict[str, list[DeviceRow]]:
        """The rows by state, in one pass (a page asks for each state, some more than once)."""
        out: dict[str, list[DeviceRow]] = {}
        for r in self.rows:
            out.setdefault(r.state, []).append(r)
        return out

    @property
    def summary(self) -> dict[str, int]:
        counts = {state: len(rows) for state, rows in self._states.items()}
        return {
            "matched": counts.get("matches", 0),
            "unmatched": counts.get("no-match", 0) + counts.get("not-in-class", 0),
            "errors": counts.get("error", 0),
            "unknown": counts.get("unknown", 0),
        }

    def by_state(self, state: str) -> list[DeviceRow]:
        return self._states.get(state, [])

    @property
    def matching(self) -> list[DeviceRow]:
        return self.by_state("matches")

    @property
    def excluded(self) -> list[DeviceRow]:
        """Devices the device class's own selectors turned away."""
        return self.by_state("not-in-class")

    @cached_property
    def nearest_misses(self) -> list[DeviceRow]:
        """Devices the expression rejected, those that failed the fewest clauses first."""
        misses = self.by_state("no-match")  # in device order already: a stable sort keeps it
        return sorted(misses, key=lambda r: len(r.verdict.failed_clauses) or 99)

    @cached_property
    def error_groups(self) -> list[tuple[str, list[DeviceRow]]]:
        """Devices by error message, the most common first."""
        return self._groups("error")

    @cached_property
    def unknown_groups(self) -> list[tuple[str, list[DeviceRow]]]:
        """Devices dradash stopped evaluating, by what stopped it, the most common first."""
        return self._groups("unknown")

    def _groups(self, state: str) -> list[tuple[str, list[DeviceRow]]]:
        groups: dict[str, list[DeviceRow]] = {}
        for row in self.by_state(state):
            groups.setdefault(row.verdict.error or "", []).append(row)
        return sorted(groups.items(), key=lambda item: -len(item[1]))

    def clauses(self, row: DeviceRow) -> list[Clause]:
        """The top-level clauses that are not true on a device the expression rejects, each
        with the error it raises, if any (diagnostics only: each runs on its own budget)."""
        if self.program is None or not row.verdict.failed_clauses:
            return [Clause(c) for c in row.verdict.failed_clauses]
        failing = set(row.verdict.failed_clauses)
        source = row.device
        try:
            # A device of a DeviceIndex serves as its own CEL input; a snapshot's is converted.
            device = cel_device(
                device_input(source) if isinstance(source, Device) else source,
                self.program.list_values,
            )
        except CelEvalError:
            return [Clause(c) for c in row.verdict.failed_clauses]
        out = []
        started = None  # the clauses share one time safety net (budget.py)
        decided = False  # a clause was false: && evaluates nothing after it, left to right
        for source, clause in self.program.clauses:
            if source not in failing:
                continue
            if decided:
                out.append(Clause(source, skipped=True))
                continue
            ctx = Context(started=started)
            try:
                run(clause, device, ctx)
                out.append(Clause(source))
                decided = True
            except CelEvalError as exc:
                out.append(Clause(source, str(exc)))
            started = ctx.started
        return out

    @property
    def published(self) -> Published:
        if self.state is None:
            return Published({}, {})
        return published_names(self.state)

    def _read_paths(self) -> list[tuple[str, str, str]]:
        """The (field, domain, name) the expression reads, in the order it names them."""
        if self.program is None:
            return []
        paths = [
            (p[0], p[1], p[2])
            for p in self.program.reads
            if len(p) == 3 and p[0] in ("attributes", "capacity") and KEYS not in p
        ]
        return sorted(paths, key=lambda p: (_position(self.expression, p[1], p[2]), p))

    def error_hint(self, message: str, rows: list[DeviceRow]) -> ErrorHint | None:
        """error_hint, knowing the names the expression reads and what the devices publish."""
        return error_hint(message, rows, self.expression, paths=self._read_paths(), evaluation=self)

    def misspelt(self, known: list[ErrorHint] | tuple[ErrorHint, ...] = ()) -> list[ErrorHint]:
        """Names the expression reads that no device publishes, where a published one is close
        (a typo: a guarded lookup of it silently matches nothing), except those in ``known``."""
        seen = {_typo(h) for h in known}
        out = []
        for path in self._read_paths():
            hint = _unpublished(path, self.published)
            if hint is not None and hint.suggestions and _typo(hint) not in seen:
                seen.add(_typo(hint))
                out.append(hint)
        return out

    def other_drivers(self, hints: Sequence[ErrorHint | None] = ()) -> OtherDrivers | None:
        """When the errors come from devices of drivers the expression does not name, or, with
        no class chosen, from devices of several drivers: which, and the classes to choose.
        None when the error groups' ``hints`` all say the domain is misspelt: that explains the
        errors on every device, and no class would help."""
        if hints and all(h is not None and h.kind == "domain" for h in hints):
            return None
        errors = self.by_state("error")
        failing = sorted({row.device.driver for row in errors})
        if not failing or self.state is None:
            return None
        drivers = {device.driver for device in device_table(self.state)[0]}
        named = set(DRIVER_NAMED.findall(self.expression))
        named |= {domain for _, domain, _ in self._read_paths() if domain in drivers}
        targets = sorted(named & drivers)
        others = [d for d in failing if d not in targets]
        if not others and (self.device_class or len(failing) < 2):
            return None
        classes = [
            name
            for name, device_class in sorted(self.state.classes.items())
            if name != self.device_class
            and any(
                t == name or t in DRIVER_NAMED.findall(s or "")
                for t in targets
                for s in device_class.selectors
            )
        ]
        drivers = set(others or failing)
        return OtherDrivers(
            sorted(drivers),
            targets,
            classes,
            devices=sum(row.device.driver in drivers for row in errors),
            errors=len(errors),
            untargeted=bool(others),
        )


def _position(expression: str, domain: str, name: str) -> int:
    at = expression.find(domain)
    at = expression.find(name, max(at, 0))
    return at if at >= 0 else len(expression)


def _typo(hint: ErrorHint) -> tuple[str, ...]:
    """What a hint says is misspelt: a domain (whatever is read in it), or a name in one."""
    if hint.kind == "domain":
        return (hint.under, hint.domain)
    return (hint.under, hint.domain, hint.key)


def _unpublished(path: tuple[str, str, str], published: Published) -> ErrorHint | None:
    """A "domain" hint when no device publishes the path's domain under its field, a "name"
    hint when none publishes the name in that domain; None when some device does."""
    field_name, domain, key = path
    domains = published.of(field_name)
    if domain not in domains:
        # Close domains of either field: a misspelt domain is misspelt wherever it is looked up.
        known = sorted((set(domains) | set(published.of(_other(field_name)))) - {domain})
        return ErrorHint(
            "domain",
            key,
            domain,
            field_name,
            difflib.get_close_matches(domain, known, n=3),
            known,
            elsewhere=domain in published.of(_other(field_name)),
        )
    names = domains[domain]
    if key not in names:
        return ErrorHint(
            "name",
            key,
            domain,
            field_name,
            _close(key, sorted(names)),
            sorted(names),
        )
    return None


def _other(field_name: str) -> str:
    return "attributes" if field_name == "capacity" else "capacity"


def _close(word: str, words: list[str]) -> list[str]:
    """difflib's close matches, ignoring case (productname is productName misspelt)."""
    lowered = {w.lower(): w for w in reversed(words)}
    return [lowered[m] for m in difflib.get_close_matches(word.lower(), list(lowered), n=3)]


def error_hint(
    message: str,
    rows: list[DeviceRow],
    expression: str = "",
    *,
    paths: list[tuple[str, str, str]] | None = None,
    evaluation: Evaluation | None = None,
) -> ErrorHint | None:
    """For "no such key: X": whether X is a capacity of these devices (looked up under
    ``device.attributes`` by mistake; its domain the one the expression names, if it is one of
    theirs); else, knowing the ``paths`` the expression reads and what the ``evaluation``'s
    devices publish, that no device publishes the domain it reads X in, or X in that domain
    (with the published names closest to it); else that these devices lack the attribute (in
    the domain the expression reads it in). For "unsupported attribute value": that the
    attribute is list-typed."""
    if (unsupported := UNSUPPORTED.search(message)) is not None:
        key = unsupported["key"]
        for row in rows[:HINT_ROWS]:
            for name, value in row.device.attributes.items():
                if (
                    name.rpartition("/")[2] == key
                    and isinstance(value, dict)
                    and not LIST_ATTRIBUTE_KINDS.isdisjoint(value)
                ):
                    return ErrorHint("list", key)
        return None
    match = NO_SUCH_KEY.search(message)
    if match is None:
        return None
    key = match["key"].strip("'\"")
    reading = [p for p in paths or [] if p[2] == key]
    published = evaluation.published if evaluation is not None else None
    if published is not None:
        for path in reading:  # a misspelt domain first: nothing in it can be found
            hint = _unpublished(path, published)
            if hint is not None and hint.kind == "domain":
                return hint
    domains = []
    for row in rows[:HINT_ROWS]:
        device = row.device
        for name in device.capacity:
            domain, _, ident = name.rpartition("/")
            if ident == key and (domain or device.driver) not in domains:
                domains.append(domain or device.driver)
    if domains:
        named = [d for d in domains if d in expression]
        return ErrorHint("capacity", key, (named or domains)[0])
    if published is not None:
        for path in reading:
            hint = _unpublished(path, published)
            if hint is not None:
                return hint
    if reading:
        return ErrorHint("missing", key, reading[0][1], reading[0][0])
    return ErrorHint("missing", key)


def published_names(state: ClusterState | DeviceIndex) -> Published:
    """What the state's devices publish (built once per state)."""
    return state.derived("published-names", _published_names)  # type: ignore[arg-type]


def _published_names(state: ClusterState | DeviceIndex) -> Published:
    found: dict[str, dict[str, set[str]]] = {"attributes": {}, "capacity": {}}

    def add(field_name: str, name: str, driver: str) -> None:
        domain, _, ident = name.rpartition("/")
        found[field_name].setdefault(domain or driver, set()).add(ident)

    if isinstance(state, DeviceIndex):  # by columns: no device's maps are made
        for field_name in found:
            for name, (_, codes) in state._payload[field_name].items():
                if "/" in name:
                    add(field_name, name, "")
                    continue
                drivers = {state.devices[i].driver for i, c in enumerate(codes) if c >= 0}
                for driver in drivers:
                    add(field_name, name, driver)
    else:
        for device in device_table(state)[1]:
            for field_name in found:
                for name in getattr(device, field_name):
                    add(field_name, name, device.driver)
    return Published(
        **{f: {d: frozenset(n) for d, n in domains.items()} for f, domains in found.items()}
    )


def device_input(device: Device) -> DeviceInput:
    return DeviceInput(
        driver=device.driver,
        attributes=device.attributes,
        capacity=device.capacity,
        allow_multiple_allocations=device.allow_multiple_allocations,
    )


class IndexedDevice:
    """A device of a DeviceIndex: what selectors read of it (the fields of a DeviceInput, so
    it serves as one), and where it is. Its attribute and capacity maps are made from the
    index's columns the first time something asks (an evaluation reads the columns instead)."""

    __slots__ = (
        "driver",
        "pool_name",
        "name",
        "node_name",
        "allow_multiple_allocations",
        "_index",
        "_row",
        "_attributes",
        "_capacity",
    )

    def __init__(
        self,
        index: DeviceIndex,
        row: int,
        driver: str,
        pool_name: str,
        name: str,
        node_name: str,
        allow_multiple_allocations: bool,
    ) -> None:
        self.driver = driver
        self.pool_name = pool_name
        self.name = name
        self.node_name = node_name
        self.allow_multiple_allocations = allow_multiple_allocations
        self._index = index
        self._row = row
        self._attributes: dict[str, Any] | None = None
        self._capacity: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.driver, self.pool_name, self.name)

    @property
    def attributes(self) -> dict[str, Any]:
        if self._attributes is None:
            self._attributes = self._index.published("attributes", self._row)
        return self._attributes

    @property
    def capacity(self) -> dict[str, Any]:
        if self._capacity is None:
            self._capacity = self._index.published("capacity", self._row)
        return self._capacity


@dataclass(slots=True)
class IndexedClass:
    name: str
    selectors: list[str | None]


class _Columns(dict[tuple[str, ...], list[Any]]):
    """The evaluator's cache of what each device has at a path (cel.device.projections), filled
    from the index: a path of one attribute or capacity is read from its column (no device's
    maps are made); a path nobody publishes is absent on every device."""

    def __init__(self, index: DeviceIndex) -> None:
        super().__init__()
        self._index = index

    def get(self, path: tuple[str, ...], default: Any = None) -> Any:  # type: ignore[override]
        found = super().get(path)
        if (
            found is None
            and len(path) == 3
            and path[0] in ("attributes", "capacity")
            and KEYS not in path
        ):
            found = self[path] = self._index.column(path[0], path[1], path[2])
        return found if found is not None else default


class DeviceIndex:
    """What selectors need of a snapshot — the devices of current pools, as the allocator sees
    them, and the DeviceClasses — compact enough to keep with the snapshot's stored analysis and
    to load in a fraction of the time its ResourceSlices take (the playground evaluates over
    it). ``matching.evaluate`` takes it where it takes a ClusterState.

    It is kept by columns: for each attribute and capacity name as published, its distinct
    values and each device's (-1: the device does not have it), so that loading it makes no map
    per device and an evaluation reads only the columns its expression reads.
    """

    VERSION = 3

    def __init__(self, payload: dict[str, Any]) -> None:
        self._payload = payload
        self.dialect = Dialect(**payload["dialect"])
        drivers, pools, nodes = payload["drivers"], payload["pools"], payload["nodes"]
        self.devices = [
            IndexedDevice(self, i, drivers[d], pools[p], name, nodes[n], bool(multiple))
            for i, (d, p, name, n, multiple) in enumerate(payload["devices"])
        ]
        self.errors: list[str | None] = payload["errors"]
        self.classes = {
            name: IndexedClass(name, selectors) for name, selectors in payload["classes"].items()
        }
        self._derived: dict[str, Any] = {"cel-device-columns": _Columns(self)}

    @classmethod
    def of(cls, state: ClusterState) -> DeviceIndex:
        devices, inputs, errors = device_table(state)
        tables: dict[str, list[Any]] = {"drivers": [], "pools": [], "nodes": []}
        ids: dict[str, dict[str, int]] = {key: {} for key in tables}

        def code(table: str, value: str) -> int:
            found = ids[table].get(value)
            if found is None:
                found = ids[table][value] = len(tables[table])
                tables[table].append(value)
            return found

        published: dict[str, dict[str, tuple[dict[str, int], list[Any], list[int]]]] = {
            "attributes": {},
            "capacity": {},
        }
        for i, device in enumerate(inputs):
            for field_name in ("attributes", "capacity"):
                for name, value in getattr(device, field_name).items():
                    key = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
                    column = published[field_name].get(name)
                    if column is None:
                        column = published[field_name][name] = ({}, [], [-1] * len(inputs))
                    known, values, codes = column
                    if key not in known:
                        known[key] = len(values)
                        values.append(value)
                    codes[i] = known[key]
        dialect = cel_dialect(state)
        payload = {
            "version": cls.VERSION,
            "dialect": {
                "release": dialect.release,
                "list_types": dialect.list_types,
                "consumable_capacity": dialect.consumable_capacity,
            },
            **tables,
            "devices": [
                [
                    code("drivers", d.driver),
                    code("pools", d.pool_name),
                    d.name,
                    code("nodes", d.node_name),
                    int(i.allow_multiple_allocations),
                ]
                for d, i in zip(devices, inputs, strict=True)
            ],
            "errors": list(errors),
            "attributes": {
                name: [values, codes]
                for name, (_, values, codes) in published["attributes"].items()
            },
            "capacity": {
                name: [values, codes] for name, (_, values, codes) in published["capacity"].items()
            },
            "classes": {name: list(c.selectors) for name, c in sorted(state.classes.items())},
        }
        return cls(payload)

    def to_bytes(self) -> bytes:
        return zlib.compress(orjson.dumps(self._payload), 6)

    @classmethod
    def from_bytes(cls, data: bytes, *, freeze: bool = False) -> DeviceIndex:
        """The index again; ``freeze`` for one that will be kept (see gc.gc_paused)."""
        with gc_paused(freeze=freeze):
            payload = orjson.loads(zlib.decompress(data))
            if payload.get("version") != cls.VERSION:
                raise ValueError(f"device index version {payload.get('version')}")
            return cls(payload)

    def published(self, field_name: str, row: int) -> dict[str, Any]:
        """One device's attributes or capacity as published."""
        out = {}
        for name, (values, codes) in self._payload[field_name].items():
            if (c := codes[row]) >= 0:
                out[name] = values[c]
        return out

    def column(self, field_name: str, domain: str, ident: str) -> list[Any]:
        """What each device has at ``device.<field>[domain][ident]`` as the evaluator's
        projection sees it (cel.device: the qualified name, else the bare one in the device's
        driver's domain; ABSENT when neither)."""
        columns = self._payload[field_name]
        qualified = columns.get(f"{domain}/{ident}")
        bare = columns.get(ident)
        frozen_q = [freeze(v) for v in qualified[0]] if qualified else []
        frozen_b = [freeze(v) for v in bare[0]] if bare else []
        out: list[Any] = []
        for i, device in enumerate(self.devices):
            if qualified and (c := qualified[1][i]) >= 0:
                out.append(frozen_q[c])
            elif bare and device.driver == domain and (c := bare[1][i]) >= 0:
                out.append(frozen_b[c])
            else:
                out.append(ABSENT)
        return out

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
    lists = cel_dialect(state).list_values
    return devices, inputs, [conversion_error(i, lists) for i in inputs]


def cel_dialect(state: ClusterState | DeviceIndex) -> Dialect:
    """The CEL environment the snapshot's scheduler compiles selectors in (its release, and
    whether its slices prove DRAListTypeAttributes on: allocator.Features.of)."""
    if isinstance(state, DeviceIndex):
        return state.dialect
    # Imported here: the allocator package builds on this module.
    from dradash.dra.allocator.features import Features

    return Features.of(state).cel


def evaluate(
    state: ClusterState | DeviceIndex,
    expression: str,
    *,
    device_class: str | None = None,
    time_limit: float | None = None,
) -> Evaluation:
    """The verdict of the expression on every device of the state. Raises UnknownDeviceClass."""
    dialect = cel_dialect(state)
    result = Evaluation(
        expression=expression, device_class=device_class, dialect=dialect, state=state
    )
    selectors: list[Selector] = []
    if device_class:
        cls = state.classes.get(device_class)
        if cls is None:
            raise UnknownDeviceClass(f"device class {device_class} does not exist")
        for i, class_expression in enumerate(cls.selectors):
            label = f"class {device_class}: selector #{i}: "
            try:
                program = compile_selector(class_expression or "", dialect)
            except CelCompileError as exc:
                result.compile_error = f"{label}CEL compile error: {exc}"
                return result
            selectors.append(Selector(program, label))
    try:
        result.program = compile_selector(expression, dialect)
    except CelCompileError as exc:
        result.compile_error = str(exc)
        return result
    try:
        compile_selector(expression, dialect.as_new_expression())
    except CelCompileError as exc:
        result.new_selector_error = str(exc)
    selectors.append(Selector(result.program))
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
    slices: list[dict[str, Any]],
    expression: str,
    *,
    time_limit: float | None = None,
    server_version: str = "",
    feature_gates: dict[str, bool] | None = None,
) -> Evaluation:
    """The same for ResourceSlices given inline (any API version dradash reads), in the CEL
    environment of ``server_version`` (default: the newest release) with ``feature_gates``."""
    meta = SnapshotMeta(server_version=server_version, feature_gates=dict(feature_gates or {}))
    return evaluate(ClusterState.build(slices, meta), expression, time_limit=time_limit)


def key_attributes(device: Device, limit: int = 4, capacity: bool = False) -> list[tuple[str, Any]]:
    """A few attributes that tell devices apart at a glance (name, value); with ``capacity``,
    its memory capacity too."""
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
    if capacity and isinstance(memory, dict) and len(picked) < limit:
        picked.append(("memory", memory.get("value")))
    return picked


def capacities(device: Device) -> list[tuple[str, Any]]:
    """The device's capacities (name as CEL reads it under its domain, value)."""
    out = []
    for name, value in sorted(device.capacity.items()):
        if isinstance(value, dict):
            out.append((name.rpartition("/")[2], value.get("value")))
    return out


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
        self._dialect = cel_dialect(state)

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
                self._programs[expression] = compile_selector(expression, self._dialect)
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
