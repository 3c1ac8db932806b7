"""Normalise resource.k8s.io objects of older API versions to the v1 shape.

The differences (dra-reference §4, and the v1alpha3/v1beta1/v1beta2 round-trip fixtures):

* v1alpha3 and v1beta1 requests are flat: ``deviceClassName``, ``selectors``, ``allocationMode``,
  ``count``, ``adminAccess``, ``tolerations`` and ``capacity`` sit on the request itself, unless it
  has ``firstAvailable``. v1beta2 and v1 put them under ``exactly``.
* v1alpha3 and v1beta1 devices wrap their fields in ``basic``; v1beta2 and v1 do not.
* v1alpha3 (Kubernetes 1.31) capacities are bare quantities; later versions use ``{value: q}``.

The input is never modified: normalised objects are copies where they differ.
"""

from __future__ import annotations

from typing import Any

from dradash.dra.kinds import RESOURCE_GROUP, split_api_version

V1 = f"{RESOURCE_GROUP}/v1"

_EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)


def normalize(obj: dict[str, Any]) -> dict[str, Any]:
    """Return obj in the resource.k8s.io/v1 shape (obj itself when nothing changes)."""
    group, _version = split_api_version(str(obj.get("apiVersion", "")))
    if group != RESOURCE_GROUP:
        return obj
    kind = obj.get("kind")
    spec = obj.get("spec")
    if kind == "ResourceClaim":
        spec = _claim_spec(spec)
    elif kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        inner = _claim_spec(spec.get("spec"))
        if inner is not spec.get("spec"):
            spec = {**spec, "spec": inner}
    elif kind == "ResourceSlice":
        spec = _slice_spec(spec)
    if spec is obj.get("spec") and obj.get("apiVersion") == V1:
        return obj
    out = {**obj, "apiVersion": V1}
    if spec is not None:
        out["spec"] = spec
    return out


def _same_or_new(old: list[Any], new: list[Any]) -> list[Any]:
    return old if all(a is b for a, b in zip(old, new, strict=True)) else new


def _claim_spec(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return spec
    old = devices["requests"]
    requests = _same_or_new(old, [_request(r) for r in old])
    if requests is old:
        return spec
    return {**spec, "devices": {**devices, "requests": requests}}


def _request(request: Any) -> Any:
    if not isinstance(request, dict) or "exactly" in request:
        return request
    flat = {k: request[k] for k in _EXACT_FIELDS if k in request}
    if "firstAvailable" in request and not flat:
        return request
    # Like Kubernetes' conversion: flat fields move under "exactly", even beside
    # firstAvailable (which validation then rejects).
    rest = {k: v for k, v in request.items() if k not in _EXACT_FIELDS}
    return {**rest, "exactly": flat}


def _slice_spec(spec: Any) -> Any:
    if not isinstance(spec, dict) or not isinstance(spec.get("devices"), list):
        return spec
    old = spec["devices"]
    devices = _same_or_new(old, [_device(d) for d in old])
    return spec if devices is old else {**spec, "devices": devices}


def _device(device: Any) -> Any:
    if not isinstance(device, dict):
        return device
    basic = device.get("basic")
    if isinstance(basic, dict):
        device = {**{k: v for k, v in device.items() if k != "basic"}, **basic}
    capacity = device.get("capacity")
    if isinstance(capacity, dict) and any(not isinstance(v, dict) for v in capacity.values()):
        capacity = {k: v if isinstance(v, dict) else {"value": v} for k, v in capacity.items()}
        device = {**device, "capacity": capacity}
    return device
