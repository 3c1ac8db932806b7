"""A device as a CEL selector sees it, and the part of it one selector reads.

``device.attributes`` and ``device.capacity`` are maps of domain → id → value. A published name
``dra.example.com/model`` lands under domain ``dra.example.com``; an unqualified ``model`` under
the device's driver (dra-reference §1.4). Attribute values become int, bool, string or Semver,
and list-typed ones (``ints``, ``bools``, ``strings``, ``versions``; KEP-5491) lists of them where
the environment converts lists (``Dialect.list_values``); capacities become Quantity. Like
Kubernetes' compile.go, every attribute is converted before the expression runs, so one bad
version string, or a list where lists are not converted, makes every selector fail on that
device.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dradash.dra.cel.compiler import KEYS, DomainMap
from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.cel.semver import Semver, SemverError
from dradash.dra.cel.values import CelEvalError

ABSENT = object()  # the projection of a path the device does not have


@dataclass(frozen=True)
class DeviceInput:
    """The fields of a ResourceSlice device that selectors can read."""

    driver: str
    attributes: dict[str, Any]  # as published: {"model": {"string": "LATEST-GPU-MODEL"}}
    capacity: dict[str, Any]  # as published: {"memory": {"value": "80Gi"}}
    allow_multiple_allocations: bool = False


def qualify(name: str, driver: str) -> tuple[str, str]:
    """(domain, id): split at the first "/"; no domain means the driver's."""
    domain, slash, ident = name.partition("/")
    return (domain, ident) if slash else (driver, name)


@lru_cache(maxsize=4096)
def _semver(text: str) -> Semver:
    return Semver.parse(text)


@lru_cache(maxsize=4096)
def _quantity(text: str) -> Quantity:
    return Quantity.parse(text)


_LISTS = {"ints": int, "bools": bool, "strings": str}


def _list_value(name: str, raw: dict[str, Any]) -> list[Any] | None:
    """The list of a list-typed attribute, or None when it has none."""
    for kind, of in _LISTS.items():
        values = raw.get(kind)
        if isinstance(values, list) and all(
            type(v) is of or (of is int and isinstance(v, int) and not isinstance(v, bool))
            for v in values
        ):
            return list(values)
    versions = raw.get("versions")
    if isinstance(versions, list) and all(isinstance(v, str) for v in versions):
        try:
            return [_semver(v) for v in versions]
        except SemverError as exc:
            raise CelEvalError(f"attribute {name}: parse semantic version: {exc}") from None
    return None


def attribute_value(name: str, raw: Any, lists: bool = False) -> Any:
    """getAttributeValue(): the CEL value of one attribute, or CelEvalError. List values are
    looked at first, and only with ``lists``."""
    if isinstance(raw, dict):
        if lists and (values := _list_value(name, raw)) is not None:
            return values
        if isinstance(raw.get("int"), int) and not isinstance(raw.get("int"), bool):
            return raw["int"]
        if isinstance(raw.get("bool"), bool):
            return raw["bool"]
        if isinstance(raw.get("string"), str):
            return raw["string"]
        if isinstance(raw.get("version"), str):
            try:
                return _semver(raw["version"])
            except SemverError as exc:
                raise CelEvalError(f"attribute {name}: parse semantic version: {exc}") from None
    raise CelEvalError(f"attribute {name}: unsupported attribute value")


def cel_device(device: DeviceInput, lists: bool = False) -> dict[str, Any]:
    """The value of the ``device`` variable. Raises CelEvalError for an unusable attribute."""
    attributes: DomainMap = DomainMap()
    for name, raw in device.attributes.items():
        domain, ident = qualify(name, device.driver)
        attributes.setdefault(domain, {})[ident] = attribute_value(ident, raw, lists)
    capacity: DomainMap = DomainMap()
    for name, raw in device.capacity.items():
        domain, ident = qualify(name, device.driver)
        value = raw.get("value") if isinstance(raw, dict) else raw
        try:
            q = _quantity(str(value))
            if q._int64 is None:  # held as an inf.Dec, which add/sub may change in place
                q = q.unshared()
            capacity.setdefault(domain, {})[ident] = q
        except QuantityError as exc:
            raise CelEvalError(f"capacity {ident}: {exc}") from None
    return {
        "driver": device.driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": device.allow_multiple_allocations,
    }


def conversion_error(device: DeviceInput, lists: bool = False) -> str | None:
    """Why the device cannot be turned into a CEL value (every selector then fails on it)."""
    for name, raw in device.attributes.items():
        if type(raw) is dict and len(raw) == 1:
            ((kind, value),) = raw.items()
            if type(value) is _PLAIN.get(kind):
                continue
            if kind == "version" and type(value) is str:
                try:
                    _semver(value)
                    continue
                except SemverError:
                    pass
        try:
            attribute_value(qualify(name, device.driver)[1], raw, lists)
        except CelEvalError as exc:
            return str(exc)
    for name, raw in device.capacity.items():
        value = raw.get("value") if isinstance(raw, dict) else raw
        try:
            _quantity(str(value))
        except QuantityError as exc:
            return f"capacity {qualify(name, device.driver)[1]}: {exc}"
    return None


_PLAIN = {"int": int, "bool": bool, "string": str}


def projection(reads: frozenset[tuple[str, ...]], device: DeviceInput) -> tuple[Any, ...]:
    """What of this device an expression reading ``reads`` can see: devices with equal
    projections get the same result, so one evaluation serves them all."""
    return tuple(read(device) for read in _readers(reads))


def projections(
    reads: frozenset[tuple[str, ...]],
    devices: Sequence[DeviceInput],
    columns: dict[tuple[str, ...], list[Any]] | None = None,
) -> Iterable[tuple[Any, ...]]:
    """``projection`` of every device. ``columns`` keeps, per path read, its value for every
    device, so the next expression reading the same path costs no second pass over the fleet;
    it belongs to this one list of devices."""
    if columns is None:
        return [projection(reads, device) for device in devices]
    values = []
    for path, read in zip(sorted(reads), _readers(reads), strict=True):
        column = columns.get(path)
        if column is None:
            column = columns[path] = [read(device) for device in devices]
        values.append(column)
    return zip(*values, strict=True) if values else [()] * len(devices)


@lru_cache(maxsize=512)
def _readers(reads: frozenset[tuple[str, ...]]) -> tuple[Any, ...]:
    return tuple(_reader(path) for path in sorted(reads))


def _reader(path: tuple[str, ...]) -> Any:
    """A function reading one path of a device (made once per path, used per device)."""
    if len(path) == 3 and path[0] in ("attributes", "capacity") and KEYS not in path:
        field, domain, ident = path
        qualified = f"{domain}/{ident}"

        def read_one(device: DeviceInput) -> Any:
            published = device.attributes if field == "attributes" else device.capacity
            value = published.get(qualified, ABSENT)
            if value is ABSENT and domain == device.driver:
                value = published.get(ident, ABSENT)
            return _freeze(value)

        return read_one
    return lambda device: _read(path, device)


def _read(path: tuple[str, ...], device: DeviceInput) -> Any:
    if not path:
        return (
            device.driver,
            _freeze(device.attributes),
            _freeze(device.capacity),
            device.allow_multiple_allocations,
        )
    head = path[0]
    if head == "driver":
        return device.driver
    if head == "allowMultipleAllocations":
        return device.allow_multiple_allocations
    published = device.attributes if head == "attributes" else device.capacity
    if len(path) == 1:
        return (device.driver, _freeze(published))
    domain = path[1]
    if domain == KEYS:
        return frozenset(qualify(n, device.driver)[0] for n in published)
    if len(path) == 2 or path[2] == KEYS:
        in_domain = {
            ident: raw
            for n, raw in published.items()
            for d, ident in [qualify(n, device.driver)]
            if d == domain
        }
        return frozenset(in_domain) if len(path) == 3 else _freeze(in_domain)
    ident = path[2]
    qualified = published.get(f"{domain}/{ident}", ABSENT)
    if qualified is not ABSENT:
        return _freeze(qualified)
    if domain == device.driver:
        return _freeze(published.get(ident, ABSENT))
    return ABSENT


def _freeze(value: Any) -> Any:
    if type(value) is dict and len(value) == 1:  # the usual {"string": "…"}
        ((key, inner),) = value.items()
        if type(inner) in (str, int, bool):
            return (key, inner)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


# What a projection holds for a published value (a DeviceIndex fills projection columns).
freeze = _freeze
