"""Claim constraints: ``constraint.go`` (matchAttributeConstraint, distinctAttributeConstraint)
and ``lookupAttribute``."""

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
        kind = value_kind(attribute)
        mine = typed(attribute, kind) if kind else None
        return all(
            kind is not None and typed(other, kind) != mine for other in self.values.values()
        )

    def remove(self, base: str, sub: str, device: Device, key: tuple[str, str, str]) -> None:
        if not self._skips(base, sub):
            self.values.pop(base, None)
            self.count -= 1
