"""Claim constraints: ``constraint.go`` (matchAttributeConstraint, distinctAttributeConstraint)
and ``lookupAttribute``; with list-typed attributes (DRAListTypeAttributes, the experimental
allocator: ``allocator_experimental.go``'s attributeAsSet), matchAttribute needs a value every
device has (the intersection of their sets is not empty) and distinctAttribute pairwise
disjoint sets; a scalar is a set of one."""

from __future__ import annotations

from typing import Any

from dradash.dra.fields import mapping
from dradash.dra.objects import Device

SCALAR_KINDS = ("string", "int", "bool", "version")


def typed(attribute: dict[str, Any], kind: str) -> Any:
    """The attribute's value of one type, as the Go struct's pointer field would hold it."""
    value = attribute.get(kind)
    if kind == "int":
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def value_kind(attribute: dict[str, Any]) -> str | None:
    for kind in SCALAR_KINDS:
        if typed(attribute, kind) is not None:
            return kind
    return None


# DeviceAttribute's list fields (1.36+), in the order attributeAsSet tries them, each with the
# scalar kind of its elements.
LIST_KINDS = (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version"))
_SET_SCALARS = ("int", "bool", "string", "version")  # attributeAsSet's order for scalars

AttributeSet = tuple[str, frozenset[Any]]  # (element kind, elements)


def attribute_set(attribute: dict[str, Any] | None) -> AttributeSet | None:
    """attributeAsSet: a non-empty list, else a scalar as a set of one; None for neither."""
    if attribute is None:
        return None
    for list_kind, kind in LIST_KINDS:
        values = attribute.get(list_kind)
        if isinstance(values, list) and values:
            return kind, frozenset(v for v in values if typed({kind: v}, kind) is not None)
    for kind in _SET_SCALARS:
        value = typed(attribute, kind)
        if value is not None:
            return kind, frozenset([value])
    return None


def intersects(a: AttributeSet | None, b: AttributeSet | None) -> bool:
    """hasIntersection: values in common, of the same type."""
    return a is not None and b is not None and a[0] == b[0] and bool(a[1] & b[1])


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


class MatchAttribute:
    """matchAttributeConstraint."""

    def __init__(self, requests: list[str], name: str, lists: bool = False) -> None:
        self.requests = set(requests)
        self.name = name
        self.lists = lists  # ListTypeAttributes: compare as sets
        self.first: dict[str, Any] | None = None
        self.intersection: AttributeSet | None = None
        self.count = 0
        self._seen: dict[int, Any] = {}
        self._signatures: dict[int, Any] = {}
        self._want: dict[str, Any] = {}

    def _skips(self, base: str, sub: str) -> bool:
        if not self.requests:
            return False
        if not sub:
            return base not in self.requests
        return base not in self.requests and f"{base}/{sub}" not in self.requests

    def _attribute(self, device: Device, driver: str) -> dict[str, Any] | None:
        """lookupAttribute, once per device (searches ask again and again)."""
        found = self._seen.get(id(device), self)
        if found is self:
            found = self._seen[id(device)] = lookup_attribute(device, driver, self.name)
        return found  # type: ignore[return-value]

    def signature(self, device: Device, driver: str) -> tuple[str | None, Any] | None:
        """The device's (kind, value) as add compares it (kind None: no scalar value), or None
        when it lacks the attribute."""
        found = self._signatures.get(id(device), self)
        if found is self:
            attribute = self._attribute(device, driver)
            kind = value_kind(attribute) if attribute is not None else None
            found = self._signatures[id(device)] = (
                None if attribute is None else (kind, typed(attribute, kind) if kind else None)
            )
        return found  # type: ignore[return-value]

    def wanted(self) -> list[tuple[str, Any]]:
        """The signatures add accepts now that a first device is in (scalar values)."""
        return [(kind, value) for kind, value in self._want.items() if value is not None]

    def refuses(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> bool:
        """Whether ``add`` would refuse the device now (scalar values), changing nothing."""
        if self._skips(base, sub):
            return False
        signature = self.signature(device, key[0])
        if signature is None:
            return True
        if self.count == 0:
            return False
        kind, value = signature
        return kind is None or self._want[kind] != value

    def add(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> bool:
        if self._skips(base, sub):
            return True
        attribute = self._attribute(device, key[0])
        if attribute is None:
            return False
        if self.count == 0:
            if self.lists:
                self.intersection = attribute_set(attribute)
                if self.intersection is None:
                    return False
            else:
                self.first = attribute
                self._want = {kind: typed(attribute, kind) for kind in SCALAR_KINDS}
            self.count = 1
            return True
        if self.lists:
            mine = attribute_set(attribute)
            if mine is None or not intersects(self.intersection, mine):
                return False
            # As upstream: the set only narrows; remove() does not widen it again.
            assert self.intersection is not None
            self.intersection = (mine[0], self.intersection[1] & mine[1])
        else:
            kind = value_kind(attribute)
            assert self.first is not None
            if kind is None or typed(self.first, kind) != typed(attribute, kind):
                return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> None:
        if not self._skips(base, sub):
            self.count -= 1


class DistinctAttribute(MatchAttribute):
    """distinctAttributeConstraint (values are remembered per base request name, as upstream
    does, so a request's later device replaces its earlier one)."""

    def __init__(self, requests: list[str], name: str, lists: bool = False) -> None:
        super().__init__(requests, name, lists)
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
        """matchesAttribute: an unknown type only fails against a remembered value; with
        list-typed attributes, the sets must be pairwise disjoint."""
        if self.lists:
            mine = attribute_set(attribute)
            return mine is not None and not any(
                intersects(mine, attribute_set(other)) for other in self.values.values()
            )
        kind = value_kind(attribute)
        mine_value = typed(attribute, kind) if kind else None
        return all(
            kind is not None and typed(other, kind) != mine_value for other in self.values.values()
        )

    def remove(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> None:
        if not self._skips(base, sub):
            self.values.pop(base, None)
            self.count -= 1
