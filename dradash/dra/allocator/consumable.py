"""Consumable capacity: ``consumable_capacity.go`` (CmpRequestOverCapacity,
calculateConsumedCapacity, violatesPolicy, GetConsumedCapacityFromRequest), and how quantities
are read from a slice or claim.

Request policy ranges are computed in whole units (``Quantity.Value()``, rounded up); with
DRAFractionalCapacityRange (beta in 1.37, ``fractional``) in milli-units when min, max and step
all are whole milli-values and the step is at least 1m (useMilli), so a range of 0.1 steps
works."""

from __future__ import annotations

from decimal import ROUND_UP
from typing import Any

from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.fields import items, mapping
from dradash.dra.objects import Device


def quantity_of(value: Any) -> Quantity | None:
    """A quantity field as published ({"value": "80Gi"}, "80Gi" or 4), or None if it is not one."""
    raw = value.get("value") if isinstance(value, dict) else value
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str):
        return None
    try:
        return Quantity.parse(raw)
    except QuantityError:
        return None


def int_value(q: Quantity) -> int:
    """Quantity.Value(): the value rounded up (away from zero) to an integer."""
    return int(q._value.to_integral_value(rounding=ROUND_UP))  # the exact decimal value


def milli_value(q: Quantity) -> int:
    """Quantity.MilliValue(): the value in milli-units, rounded up."""
    return int((q._value * 1000).to_integral_value(rounding=ROUND_UP))


_INT64_MAX = 2**63 - 1


def _exact_milli(q: Quantity) -> bool:
    """safeMilliValue: whether the quantity is a whole number of milli-units that an int64
    holds."""
    scaled = q._value * 1000
    return scaled == scaled.to_integral_value() and abs(scaled) <= _INT64_MAX


def _scale(valid_range: dict[str, Any], fractional: bool) -> int:
    """useMilli: 1000 when ranges are computed in milli-units, else 1."""
    if not fractional:
        return 1
    for name in ("min", "max", "step"):
        if valid_range.get(name) is None:
            continue
        q = quantity_of(valid_range.get(name))
        if q is None or not _exact_milli(q) or (name == "step" and milli_value(q) < 1):
            return 1
    return 1000


def _units(q: Quantity, scale: int) -> int:
    return milli_value(q) if scale == 1000 else int_value(q)


def consumed_capacity(
    requested: Quantity | None, value: Quantity, policy: Any, fractional: bool = False
) -> Quantity:
    """calculateConsumedCapacity (consumable_capacity.go)."""
    policy = mapping(policy)
    if requested is None:  # fillEmptyRequest
        default = quantity_of(policy.get("default")) if policy.get("default") is not None else None
        return default if default is not None else value
    if not policy:
        return requested
    valid_range = policy.get("validRange")
    if isinstance(valid_range, dict) and valid_range.get("min") is not None:
        minimum = quantity_of(valid_range.get("min"))
        if minimum is None or requested.compare(minimum) < 0:
            return minimum or requested
        step = quantity_of(valid_range.get("step")) if valid_range.get("step") else None
        scale = _scale(valid_range, fractional)
        if step is None or _units(step, scale) == 0:
            return requested
        if scale == 1000 and not _exact_milli(requested):
            return requested  # not representable in milli-units: the policy check refuses it
        added = _units(requested, scale) - _units(minimum, scale)
        steps = added // _units(step, scale) + (1 if added % _units(step, scale) else 0)
        units = _units(minimum, scale) + _units(step, scale) * steps
        if scale == 1000:
            return Quantity.parse(str(units // 1000) if units % 1000 == 0 else f"{units}m")
        return Quantity.parse(str(units))
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for candidate in items(valid_values):
            q = quantity_of(candidate)
            if q is not None and requested.compare(q) <= 0:
                return q
    return requested


def violates_policy(requested: Quantity, policy: Any, fractional: bool = False) -> bool:
    """violatesPolicy."""
    if not isinstance(policy, dict):
        return False
    default = quantity_of(policy.get("default")) if policy.get("default") is not None else None
    if default is not None and requested == default:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        valid_range = mapping(valid_range)
        maximum = quantity_of(valid_range.get("max")) if valid_range.get("max") else None
        if maximum is not None and requested.compare(maximum) > 0:
            return True
        step = quantity_of(valid_range.get("step")) if valid_range.get("step") else None
        scale = _scale(valid_range, fractional)
        if step is not None and _units(step, scale):
            if scale == 1000 and not _exact_milli(requested):
                return True
            minimum = quantity_of(valid_range.get("min"))
            base = _units(minimum, scale) if minimum is not None else 0
            return (_units(requested, scale) - base) % _units(step, scale) != 0
        return False
    values = items(policy.get("validValues"))
    if values:
        return not any(requested == quantity_of(v) for v in values)
    return False


def device_capacities(device: Device) -> dict[str, tuple[Quantity, Any]]:
    out = {}
    for name, capacity in mapping(device.raw.get("capacity")).items():
        q = quantity_of(capacity)
        if q is not None:
            out[name] = (q, capacity.get("requestPolicy") if isinstance(capacity, dict) else None)
    return out


def fits_capacity(
    current: dict[str, Quantity],
    wanted: dict[str, Quantity | None],
    capacity: dict[str, tuple[Quantity, Any]],
    allocating: dict[str, Quantity],
    fractional: bool = False,
) -> bool | None:
    """CmpRequestOverCapacity, given the request's parsed capacity requests and the device's
    capacities; None for its error (a requested capacity the device lacks)."""
    if not wanted and not current and not allocating:
        # Nothing requested or consumed yet: each capacity's default (or whole value) fits
        # unless a policy forbids it.
        return all(
            not violates_policy(
                used := consumed_capacity(None, value, policy, fractional), policy, fractional
            )
            and used.compare(value) <= 0
            for value, policy in capacity.values()
        )
    if any(name not in capacity for name in wanted):
        return None
    for name, (value, policy) in capacity.items():
        consumed = consumed_capacity(wanted.get(name), value, policy, fractional)
        if violates_policy(consumed, policy, fractional):
            return False
        total = current[name].add(consumed) if name in current else consumed
        if name in allocating:
            total = total.add(allocating[name])
        if total.compare(value) > 0:
            return False
    return True


def consumed_from_request(
    wanted: dict[str, Quantity | None],
    capacity: dict[str, tuple[Quantity, Any]],
    fractional: bool = False,
) -> dict[str, Quantity]:
    """GetConsumedCapacityFromRequest."""
    return {
        name: consumed_capacity(wanted.get(name), value, policy, fractional)
        for name, (value, policy) in capacity.items()
    }
