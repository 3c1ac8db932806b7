"""Validate resource.k8s.io objects as the Kubernetes API server does before storing them.

``problems(obj)`` returns the ways an object of a kind dradash reads from resource.k8s.io
(DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate) or scheduling.k8s.io
(Workload, PodGroup) is invalid, each as ``(field path, message)`` in the words of the API
server's field errors, first problem first.

* **Strict decoding** of ``resource.k8s.io/v1`` objects, as ``kubectl apply`` with strict field
  validation: a field the v1 types do not have is refused with its path. The usual case is a
  v1 object that kept a v1beta1 shape, such as the ``basic`` wrapper of a device or a request's
  flat ``deviceClassName``. The schema below is that of ``k8s.io/api/resource/v1`` (types.go,
  Kubernetes 1.37 development, and the apimachinery round-trip fixtures that set every field).
  Older versions (v1beta2, v1beta1, v1alpha3) are read as they are and checked after conversion
  to the v1 shape, with their own field paths.
* **Required fields and limits** of ``pkg/apis/resource/validation/validation.go``: a slice's
  driver, pool (name, generation, resourceSliceCount) and exactly one node selection; device
  names (DNS labels, unique), attribute and capacity names, values and counts, taints; requests
  (names, exactly one of ``exactly`` and ``firstAvailable``, a class, allocation mode and count,
  selectors with an expression of at most 10 Ki), constraints, config; allocation results and
  reservations. CEL expressions are not compiled: a claim stored under one release may use
  what another's CEL environment lacks, and the diagnosis reports such selectors itself.
* **Gangs** (``pkg/apis/scheduling/validation``, v1alpha2 of 1.36, v1alpha3 and v1beta1 of
  1.37), where a malformed object would mislead the gang verdicts: a scheduling policy with
  exactly one of ``basic`` and ``gang``, a gang's ``minCount`` of at least 1, at most 4
  ``resourceClaims`` each with a DNS-label name (unique) and exactly one of
  ``resourceClaimName`` and ``resourceClaimTemplateName``, at most 8 ``podGroupTemplates``
  (unique names), and the reference to a Workload's template in the shape of the object's
  version (v1alpha2 ``spec.podGroupTemplateRef.workload{workloadName, podGroupTemplateName}``,
  v1beta1 and v1alpha3 ``spec.workloadRef{workloadName, templateName}``). Other fields
  (disruption modes, priorities, constraints) are not read, and not checked; nor are v1alpha1
  (1.35) Workloads beyond their name.

Pure Python, no Django.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from dradash.dra.extended import is_extended_resource_name
from dradash.dra.kinds import PODGROUP_VERSIONS, RESOURCE_GROUP, SCHEDULING_GROUP, split_api_version
from dradash.dra.normalize import normalize

# --- the v1 schema: field name -> schema of its value --------------------------------------

LEAF = "leaf"  # a string, number or boolean
ANY = "any"  # free-form JSON (opaque parameters, raw extensions, managedFields entries)
Schema = Any  # LEAF | ANY | dict[str, Schema] | ("list", Schema) | ("map", Schema)


def _list(item: Schema) -> tuple[str, Schema]:
    return ("list", item)


def _map(value: Schema) -> tuple[str, Schema]:
    return ("map", value)


_REQUIREMENT = {"key": LEAF, "operator": LEAF, "values": _list(LEAF)}
NODE_SELECTOR = {
    "nodeSelectorTerms": _list(
        {"matchExpressions": _list(_REQUIREMENT), "matchFields": _list(_REQUIREMENT)}
    )
}
OWNER_REFERENCE = {
    "apiVersion": LEAF,
    "kind": LEAF,
    "name": LEAF,
    "uid": LEAF,
    "controller": LEAF,
    "blockOwnerDeletion": LEAF,
}
OBJECT_META = {
    "name": LEAF,
    "generateName": LEAF,
    "namespace": LEAF,
    "selfLink": LEAF,
    "uid": LEAF,
    "resourceVersion": LEAF,
    "generation": LEAF,
    "creationTimestamp": LEAF,
    "deletionTimestamp": LEAF,
    "deletionGracePeriodSeconds": LEAF,
    "labels": _map(LEAF),
    "annotations": _map(LEAF),
    "ownerReferences": _list(OWNER_REFERENCE),
    "finalizers": _list(LEAF),
    "managedFields": _list(ANY),
}
CONDITION = {
    "type": LEAF,
    "status": LEAF,
    "observedGeneration": LEAF,
    "lastTransitionTime": LEAF,
    "reason": LEAF,
    "message": LEAF,
}
QUANTITY = LEAF
TAINT = {"key": LEAF, "value": LEAF, "effect": LEAF, "timeAdded": LEAF}
TOLERATION = {
    "key": LEAF,
    "operator": LEAF,
    "value": LEAF,
    "effect": LEAF,
    "tolerationSeconds": LEAF,
}
ATTRIBUTE = {
    "int": LEAF,
    "bool": LEAF,
    "string": LEAF,
    "version": LEAF,
    "ints": _list(LEAF),
    "bools": _list(LEAF),
    "strings": _list(LEAF),
    "versions": _list(LEAF),
}
CAPACITY = {
    "value": QUANTITY,
    "requestPolicy": {
        "default": QUANTITY,
        "validValues": _list(QUANTITY),
        "validRange": {"min": QUANTITY, "max": QUANTITY, "step": QUANTITY},
    },
}
COUNTERS = _map({"value": QUANTITY})
DEVICE = {
    "name": LEAF,
    "attributes": _map(ATTRIBUTE),
    "capacity": _map(CAPACITY),
    "consumesCounters": _list(
        {"counterSet": LEAF, "counters": COUNTERS, "compatibilityGroups": _list(LEAF)}
    ),
    "nodeName": LEAF,
    "nodeSelector": NODE_SELECTOR,
    "allNodes": LEAF,
    "taints": _list(TAINT),
    "bindsToNode": LEAF,
    "bindingConditions": _list(LEAF),
    "bindingFailureConditions": _list(LEAF),
    "allowMultipleAllocations": LEAF,
    "nodeAllocatableResources": _map(
        {
            "mapping": {"capacityKey": LEAF, "capacityMultiplier": LEAF, "deviceMultiplier": LEAF},
            "overhead": {"perPod": LEAF, "perContainer": LEAF},
        }
    ),
}
SLICE_SPEC = {
    "driver": LEAF,
    "pool": {"name": LEAF, "generation": LEAF, "resourceSliceCount": LEAF},
    "nodeName": LEAF,
    "nodeSelector": NODE_SELECTOR,
    "allNodes": LEAF,
    "perDeviceNodeSelection": LEAF,
    "devices": _list(DEVICE),
    "sharedCounters": _list({"name": LEAF, "counters": COUNTERS}),
    "partitionTypeAttribute": LEAF,
    "skipNodeOperations": _list(LEAF),
}
SELECTOR = {"cel": {"expression": LEAF}}
DERIVED_ATTRIBUTE = {"name": LEAF, "expression": LEAF}
_REQUEST_FIELDS = {
    "deviceClassName": LEAF,
    "selectors": _list(SELECTOR),
    "allocationMode": LEAF,
    "count": LEAF,
    "tolerations": _list(TOLERATION),
    "capacity": {"requests": _map(QUANTITY)},
    "derivedAttributes": _list(DERIVED_ATTRIBUTE),
}
EXACT_REQUEST = {**_REQUEST_FIELDS, "adminAccess": LEAF}
SUB_REQUEST = {"name": LEAF, **_REQUEST_FIELDS}
OPAQUE = {"driver": LEAF, "parameters": ANY}
CLAIM_SPEC = {
    "devices": {
        "requests": _list(
            {"name": LEAF, "exactly": EXACT_REQUEST, "firstAvailable": _list(SUB_REQUEST)}
        ),
        "constraints": _list(
            {"requests": _list(LEAF), "matchAttribute": LEAF, "distinctAttribute": LEAF}
        ),
        "config": _list({"requests": _list(LEAF), "opaque": OPAQUE}),
    }
}
ALLOCATION_RESULT = {
    "request": LEAF,
    "driver": LEAF,
    "pool": LEAF,
    "device": LEAF,
    "adminAccess": LEAF,
    "tolerations": _list(TOLERATION),
    "bindingConditions": _list(LEAF),
    "bindingFailureConditions": _list(LEAF),
    "shareID": LEAF,
    "consumedCapacity": _map(QUANTITY),
    "skipNodeOperations": _list(LEAF),
}
CLAIM_STATUS = {
    "allocation": {
        "devices": {
            "results": _list(ALLOCATION_RESULT),
            "config": _list({"source": LEAF, "requests": _list(LEAF), "opaque": OPAQUE}),
        },
        "nodeSelector": NODE_SELECTOR,
        "allocationTimestamp": LEAF,
    },
    "reservedFor": _list({"apiGroup": LEAF, "resource": LEAF, "name": LEAF, "uid": LEAF}),
    "devices": _list(
        {
            "driver": LEAF,
            "pool": LEAF,
            "device": LEAF,
            "shareID": LEAF,
            "conditions": _list(CONDITION),
            "data": ANY,
            "networkData": {"interfaceName": LEAF, "ips": _list(LEAF), "hardwareAddress": LEAF},
        }
    ),
}
_TOP = {"apiVersion": LEAF, "kind": LEAF, "metadata": OBJECT_META}
SCHEMAS: dict[str, dict[str, Schema]] = {
    "ResourceSlice": {**_TOP, "spec": SLICE_SPEC},
    "ResourceClaim": {**_TOP, "spec": CLAIM_SPEC, "status": CLAIM_STATUS},
    "ResourceClaimTemplate": {**_TOP, "spec": {"metadata": OBJECT_META, "spec": CLAIM_SPEC}},
    "DeviceClass": {
        **_TOP,
        "spec": {
            "selectors": _list(SELECTOR),
            "config": _list({"opaque": OPAQUE}),
            "extendedResourceName": LEAF,
        },
    },
}

# Fields that v1 dropped from its shape, and what to write instead: the usual mistake is a
# v1beta1 manifest whose apiVersion was edited to v1.
OLDER_SHAPE_HINTS = {
    "basic": "it is the v1beta1 device wrapper; in resource.k8s.io/v1 the device's attributes "
    "and capacity sit on the device itself, or declare the object as resource.k8s.io/v1beta1",
    **dict.fromkeys(
        ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess"),
        "it is a v1beta1 request field; in resource.k8s.io/v1 it belongs under `exactly`, or "
        "declare the object as resource.k8s.io/v1beta1",
    ),
}

# --- limits (k8s.io/api/resource/v1 constants) ---------------------------------------------

SLICE_MAX_DEVICES = 128
SLICE_MAX_DEVICES_ADVANCED = 64  # with taints, counter consumption or list attributes
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
ATTRIBUTE_MAX_VALUE_LENGTH = 64
DEVICE_MAX_TAINTS = 16
MAX_COUNTER_SETS = 8
MAX_COUNTERS = 32
MAX_COUNTER_CONSUMPTIONS = 2
REQUESTS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
SELECTORS_MAX = 32
FIRST_AVAILABLE_MAX = 8
TOLERATIONS_MAX = 16
RESULTS_MAX = 32
RESERVED_FOR_MAX = 256
CEL_MAX_LENGTH = 10 * 1024
DRIVER_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
DOMAIN_MAX_LENGTH = 63
ID_MAX_LENGTH = 32

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DRIVER = re.compile(r"[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?")
_C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM = r"(0|[1-9]\d*)"
_PRE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(
    rf"{_NUM}\.{_NUM}\.{_NUM}(-{_PRE}(\.{_PRE})*)?(\+{_BUILD}(\.{_BUILD})*)?", re.ASCII
)
TAINT_EFFECTS = ("None", "NoSchedule", "NoExecute")
ALLOCATION_MODES = ("ExactCount", "All")

Problem = tuple[str, str]  # (field path, message)


def problems(obj: dict[str, Any]) -> list[Problem]:
    """What the API server would refuse in this object; [] when it is valid (or not checked)."""
    group, version = split_api_version(str(obj.get("apiVersion", "")))
    kind = obj.get("kind")
    if group == SCHEDULING_GROUP and kind in ("Workload", "PodGroup"):
        return list((_workload if kind == "Workload" else _podgroup)(obj, version))
    if group != RESOURCE_GROUP or kind not in SCHEMAS:
        return []
    found: list[Problem] = []
    if version == "v1":
        found += _unknown_fields(obj, SCHEMAS[kind], "")
    v1 = normalize(obj) if version in ("v1alpha3", "v1beta1") else obj  # v1beta2 is v1's shape
    checks = {
        "ResourceSlice": _slice,
        "ResourceClaim": _claim,
        "ResourceClaimTemplate": _template,
        "DeviceClass": _device_class,
    }
    found += [(_as_written(path, kind, version), message) for path, message in checks[kind](v1)]
    return found


def _as_written(path: str, kind: str, version: str) -> str:
    """A path in the v1 shape, as it is written in an object of an older version."""
    if version in ("v1alpha3", "v1beta1"):
        if kind == "ResourceSlice":
            return re.sub(r"^(spec\.devices\[\d+\])\.(?!name\b)", r"\1.basic.", path)
        return re.sub(r"(spec\.devices\.requests\[\d+\])\.exactly\b", r"\1", path)
    return path


# --- strict decoding -------------------------------------------------------------------------


def _unknown_fields(value: Any, schema: Schema, path: str) -> list[Problem]:
    out: list[Problem] = []
    stack = [(value, schema, path)]
    while stack:
        value, schema, path = stack.pop()
        if schema is ANY or value is None:
            continue
        if schema is LEAF:
            if isinstance(value, dict | list):
                out.append((path, f"must be a value, not a {_type(value)}"))
            continue
        if isinstance(schema, tuple):
            shape, item = schema
            if shape == "list":
                if not isinstance(value, list):
                    out.append((path, f"must be a list, not a {_type(value)}"))
                    continue
                stack.extend((v, item, f"{path}[{i}]") for i, v in enumerate(value))
            else:
                if not isinstance(value, dict):
                    out.append((path, f"must be a mapping, not a {_type(value)}"))
                    continue
                stack.extend((v, item, f"{path}[{_key(k)}]") for k, v in value.items())
            continue
        if not isinstance(value, dict):
            out.append((path, f"must be a mapping, not a {_type(value)}"))
            continue
        for key, item in value.items():
            at = f"{path}.{key}" if path else str(key)
            if key not in schema:
                hint = OLDER_SHAPE_HINTS.get(key, "")
                out.append((at, f'unknown field "{at}"' + (f": {hint}" if hint else "")))
            else:
                stack.append((item, schema[key], at))
    return sorted(out, key=lambda p: _order(p[0]))


def _order(path: str) -> list[Any]:
    """Paths in document order as far as indexes go (spec.devices[2] before [10]): the
    indexes (odd parts of the split) as numbers, names (even parts, even "5") as text."""
    return [int(p) if i % 2 else p for i, p in enumerate(re.split(r"\[(\d+)\]", path))]


def _key(key: Any) -> str:
    return f'"{key}"'


def _type(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


# --- field checks ----------------------------------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _required(value: Any) -> bool:
    return value is None or value == ""


def _name_problems(value: Any, path: str, pattern: re.Pattern[str], limit: int, what: str):
    if _required(value):
        yield path, "Required value"
    elif not isinstance(value, str):
        yield path, f"Invalid value: {value!r}: must be a string"
    elif len(value) > limit:
        yield path, f"Too long: may not be more than {limit} bytes"
    elif not pattern.fullmatch(value):
        yield path, f"Invalid value: {value!r}: {what}"


_LABEL = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
_LABEL += "and must start and end with an alphanumeric character"
_SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
_SUBDOMAIN += "'-' or '.', and must start and end with an alphanumeric character"
_DRIVER_WHAT = "a driver name must consist of alphanumeric characters, '-', '_' or '.', and must "
_DRIVER_WHAT += "start and end with an alphanumeric character"


def _dns_label(value: Any, path: str) -> Iterator[Problem]:
    yield from _name_problems(value, path, _DNS_LABEL, 63, _LABEL)


def _dns_subdomain(value: Any, path: str) -> Iterator[Problem]:
    yield from _name_problems(value, path, _DNS_SUBDOMAIN, 253, _SUBDOMAIN)


def _driver(value: Any, path: str) -> Iterator[Problem]:
    yield from _name_problems(value, path, _DRIVER, DRIVER_MAX_LENGTH, _DRIVER_WHAT)


def _pool_name(value: Any, path: str) -> Iterator[Problem]:
    if _required(value) or not isinstance(value, str):
        yield from _name_problems(value, path, _DNS_SUBDOMAIN, POOL_NAME_MAX_LENGTH, "")
        return
    if len(value) > POOL_NAME_MAX_LENGTH:
        yield path, f"Too long: may not be more than {POOL_NAME_MAX_LENGTH} bytes"
        return
    for part in value.split("/"):
        if not _DNS_SUBDOMAIN.fullmatch(part) or len(part) > 253:
            yield path, f"Invalid value: {value!r}: {_SUBDOMAIN} (in each part between slashes)"
            return


def _too_many(value: Any, limit: int, path: str) -> Iterator[Problem]:
    if isinstance(value, list) and len(value) > limit:
        yield path, f"Too many: {len(value)}: must have at most {limit} items"


def _qualified_name(name: str, path: str, *, fully: bool = False) -> Iterator[Problem]:
    parts = name.split("/")
    if len(parts) > 2:
        yield path, f"Invalid value: {name!r}: must not contain more than one slash"
        return
    if len(parts) == 2:
        domain, ident = parts
        if not domain:
            yield path, "Invalid value: '': the domain must not be empty"
        elif len(domain) > DOMAIN_MAX_LENGTH or not _DRIVER.fullmatch(domain):
            yield path, f"Invalid value: {domain!r}: {_DRIVER_WHAT} (at most 63 characters)"
    else:
        ident = parts[0]
        if fully:
            yield (
                path,
                f"Invalid value: {name!r}: a fully qualified name must be a domain and a name "
                "separated by a slash",
            )
    if not ident:
        yield path, "Invalid value: '': the name must not be empty"
    elif len(ident) > ID_MAX_LENGTH:
        yield path, f"Too long: may not be more than {ID_MAX_LENGTH} bytes"
    elif not _C_IDENTIFIER.fullmatch(ident):
        yield (
            path,
            f"Invalid value: {ident!r}: a valid C identifier must start with alphabetic "
            "character or '_', followed by a string of alphanumeric characters or '_'",
        )


def _node_selector(selector: Any, path: str) -> Iterator[Problem]:
    terms = _dict(selector).get("nodeSelectorTerms")
    if not isinstance(terms, list) or len(terms) != 1:
        yield f"{path}.nodeSelectorTerms", "Invalid value: must have exactly one node selector term"


# --- ResourceSlice ---------------------------------------------------------------------------


def _slice(obj: dict[str, Any]) -> Iterator[Problem]:
    yield from _dns_subdomain(_dict(obj.get("metadata")).get("name"), "metadata.name")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        yield "spec", "Required value"
        return
    yield from _driver(spec.get("driver"), "spec.driver")
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        yield "spec.pool", "Required value"
    else:
        yield from _pool_name(pool.get("name"), "spec.pool.name")
        count = pool.get("resourceSliceCount")
        if not _is_int(count) or count <= 0:
            shown = "0" if count is None else repr(count)
            yield (
                "spec.pool.resourceSliceCount",
                f"Invalid value: {shown}: must be greater than zero",
            )
        generation = pool.get("generation", 0)
        if not _is_int(generation) or generation < 0:
            yield (
                "spec.pool.generation",
                f"Invalid value: {generation!r}: must be greater than or equal to zero",
            )
    chosen = []
    node_name = spec.get("nodeName")
    if node_name is not None:
        if node_name == "" or not isinstance(node_name, str):
            yield (
                "spec.nodeName",
                "Invalid value: must be either unset or set to a non-empty string",
            )
        else:
            chosen.append("`nodeName`")
            yield from _dns_subdomain(node_name, "spec.nodeName")
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        yield from _node_selector(spec["nodeSelector"], "spec.nodeSelector")
    for flag in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(flag) is not None:
            if spec[flag] is True:
                chosen.append(f"`{flag}`")
            else:
                yield f"spec.{flag}", f"Invalid value: {spec[flag]!r}: must be either unset or true"
    if not chosen:
        yield (
            "spec",
            "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
            "`perDeviceNodeSelection` is required",
        )
    elif len(chosen) > 1:
        yield (
            "spec",
            f"Invalid value: {{{', '.join(chosen)}}}: exactly one of `nodeName`, `nodeSelector`, "
            "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set",
        )
    if spec.get("devices") is not None and spec.get("sharedCounters") is not None:
        yield "spec", "Invalid value: only one of `sharedCounters` or `devices` is allowed"
    devices = spec.get("devices")
    if devices is not None and not isinstance(devices, list):
        yield "spec.devices", "Invalid value: must be a list"
        devices = []
    devices = devices or []
    advanced = any(
        isinstance(d, dict)
        and (d.get("taints") or d.get("consumesCounters") or _list_attributes(d))
        for d in devices
    )
    limit = SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES
    if len(devices) > limit:
        yield "spec.devices", f"Too many: {len(devices)}: must have at most {limit} items"
        return
    seen: set[str] = set()
    per_device = spec.get("perDeviceNodeSelection") is True
    for i, device in enumerate(devices):
        at = f"spec.devices[{i}]"
        if not isinstance(device, dict):
            yield at, "Invalid value: must be a mapping"
            continue
        yield from _device(device, at, per_device)
        name = device.get("name")
        if isinstance(name, str) and name:
            if name in seen:
                yield at, f"Duplicate value: {name!r}"
            seen.add(name)
    counter_sets = _items(spec.get("sharedCounters"))
    yield from _too_many(counter_sets, MAX_COUNTER_SETS, "spec.sharedCounters")
    for i, counter_set in enumerate(counter_sets[:MAX_COUNTER_SETS]):
        at = f"spec.sharedCounters[{i}]"
        yield from _dns_label(_dict(counter_set).get("name"), f"{at}.name")
        counters = _dict(counter_set).get("counters")
        if not counters:
            yield f"{at}.counters", "Required value"
        elif isinstance(counters, dict) and len(counters) > MAX_COUNTERS:
            yield f"{at}.counters", f"Too many: {len(counters)}: must have at most {MAX_COUNTERS}"


def _list_attributes(device: dict[str, Any]) -> bool:
    return any(
        isinstance(a, dict) and any(k in a for k in ("ints", "bools", "strings", "versions"))
        for a in _dict(device.get("attributes")).values()
    )


def _device(device: dict[str, Any], at: str, per_device: bool) -> Iterator[Problem]:
    yield from _dns_label(device.get("name"), f"{at}.name")
    attributes = _dict(device.get("attributes"))
    capacity = _dict(device.get("capacity"))
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        yield (
            at,
            f"Invalid value: {len(attributes) + len(capacity)}: the total number of attributes "
            f"and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}",
        )
    values = sum(
        sum(len(_items(a.get(k))) for k in ("ints", "bools", "strings", "versions")) or 1
        for a in attributes.values()
        if isinstance(a, dict)
    )
    if values > MAX_ATTRIBUTE_VALUES:
        yield (
            at,
            f"Invalid value: {values}: the total number of attribute values must not exceed "
            f"{MAX_ATTRIBUTE_VALUES}",
        )
    for name, attribute in attributes.items():
        path = f"{at}.attributes[{_key(name)}]"
        yield from _qualified_name(str(name), path)
        yield from _attribute(attribute, path)
    for name, value in capacity.items():
        path = f"{at}.capacity[{_key(name)}]"
        yield from _qualified_name(str(name), path)
        if not isinstance(value, dict) or value.get("value") in (None, ""):
            yield f"{path}.value", "Required value"
        elif _dict(value).get("requestPolicy") is not None and not device.get(
            "allowMultipleAllocations"
        ):
            yield f"{path}.requestPolicy", "Forbidden: allowMultipleAllocations must be true"
    taints = _items(device.get("taints"))
    yield from _too_many(taints, DEVICE_MAX_TAINTS, f"{at}.taints")
    for i, taint in enumerate(taints[:DEVICE_MAX_TAINTS]):
        path = f"{at}.taints[{i}]"
        if _required(_dict(taint).get("key")):
            yield f"{path}.key", "Required value"
        effect = _dict(taint).get("effect")
        if _required(effect):
            yield f"{path}.effect", "Required value"
    consumes = _items(device.get("consumesCounters"))
    yield from _too_many(consumes, MAX_COUNTER_CONSUMPTIONS, f"{at}.consumesCounters")
    for i, consumption in enumerate(consumes[:MAX_COUNTER_CONSUMPTIONS]):
        path = f"{at}.consumesCounters[{i}]"
        yield from _dns_label(_dict(consumption).get("counterSet"), f"{path}.counterSet")
        if not _dict(consumption).get("counters"):
            yield f"{path}.counters", "Required value"
    placed = [f for f in ("nodeName", "nodeSelector", "allNodes") if device.get(f) is not None]
    if per_device:
        if len(placed) != 1:
            yield (
                at,
                "Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is "
                "required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
            )
    elif placed:
        yield (
            at,
            "Invalid value: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )


def _attribute(attribute: Any, path: str) -> Iterator[Problem]:
    if not isinstance(attribute, dict):
        yield path, "Invalid value: exactly one value must be specified"
        return
    kinds = [k for k in ATTRIBUTE if attribute.get(k) is not None]
    if len(kinds) != 1:
        yield path, "Invalid value: exactly one value must be specified"
        return
    (kind,) = kinds
    value = attribute[kind]
    scalars = value if kind.endswith("s") and isinstance(value, list) else [value]
    if kind.endswith("s") and not scalars:
        yield f"{path}.{kind}", "Invalid value: must not be empty if specified"
    for item in scalars:
        if kind.startswith(("string", "version")) and isinstance(item, str):
            if len(item) > ATTRIBUTE_MAX_VALUE_LENGTH:
                yield (
                    f"{path}.{kind}",
                    f"Too long: may not be more than {ATTRIBUTE_MAX_VALUE_LENGTH} bytes",
                )
            if kind.startswith("version") and not _SEMVER.fullmatch(item):
                yield (
                    f"{path}.{kind}",
                    f"Invalid value: {item!r}: must be a string compatible with semver.org spec "
                    "2.0.0",
                )


# --- ResourceClaim, ResourceClaimTemplate ----------------------------------------------------


def _claim(obj: dict[str, Any]) -> Iterator[Problem]:
    yield from _dns_subdomain(_dict(obj.get("metadata")).get("name"), "metadata.name")
    spec = _dict(obj.get("spec"))
    names = yield from _claim_spec(spec, "spec")
    status = _dict(obj.get("status"))
    allocation = status.get("allocation")
    results = _items(_dict(_dict(allocation).get("devices")).get("results"))
    yield from _too_many(results, RESULTS_MAX, "status.allocation.devices.results")
    for i, result in enumerate(results[:RESULTS_MAX]):
        at = f"status.allocation.devices.results[{i}]"
        result = _dict(result)
        request = result.get("request")
        if _required(request):
            yield f"{at}.request", "Required value"
        elif isinstance(request, str) and request not in names:
            yield (
                f"{at}.request",
                f"Invalid value: {request!r}: must be the name of a request in the claim or the "
                "name of a request and a subrequest separated by '/'",
            )
        yield from _driver(result.get("driver"), f"{at}.driver")
        yield from _pool_name(result.get("pool"), f"{at}.pool")
        yield from _dns_label(result.get("device"), f"{at}.device")
    reserved = _items(status.get("reservedFor"))
    yield from _too_many(reserved, RESERVED_FOR_MAX, "status.reservedFor")
    for i, ref in enumerate(reserved[:RESERVED_FOR_MAX]):
        for key in ("resource", "name", "uid"):
            if _required(_dict(ref).get(key)):
                yield f"status.reservedFor[{i}].{key}", "Required value"
    if reserved and allocation is None:
        yield "status.reservedFor", "Forbidden: may not be specified when `allocated` is not set"


def _template(obj: dict[str, Any]) -> Iterator[Problem]:
    yield from _dns_subdomain(_dict(obj.get("metadata")).get("name"), "metadata.name")
    yield from _claim_spec(_dict(_dict(obj.get("spec")).get("spec")), "spec.spec")


def _claim_spec(spec: dict[str, Any], at: str):  # -> Generator[Problem, None, set[str]]
    """The problems of a ResourceClaimSpec; returns the names results may refer to."""
    devices = _dict(spec.get("devices"))
    requests = _items(devices.get("requests"))
    names: set[str] = set()
    if len(requests) > REQUESTS_MAX:
        yield f"{at}.devices.requests", f"Too many: {len(requests)}: must have at most 32 items"
        return names
    for i, request in enumerate(requests):
        path = f"{at}.devices.requests[{i}]"
        request = _dict(request)
        name = request.get("name")
        yield from _dns_label(name, f"{path}.name")
        if isinstance(name, str) and name:
            if name in names:
                yield path, f"Duplicate value: {name!r}"
            names.add(name)
        exactly, first = request.get("exactly"), _items(request.get("firstAvailable"))
        if exactly is None and not first:
            yield path, "Required value: exactly one of `exactly` or `firstAvailable` is required"
        elif exactly is not None and first:
            yield (
                path,
                "Invalid value: exactly one of `exactly` or `firstAvailable` is required, but "
                "multiple fields are set",
            )
        elif first:
            yield from _too_many(first, FIRST_AVAILABLE_MAX, f"{path}.firstAvailable")
            subnames: set[str] = set()
            for j, sub in enumerate(first[:FIRST_AVAILABLE_MAX]):
                sub_path = f"{path}.firstAvailable[{j}]"
                sub = _dict(sub)
                yield from _dns_label(sub.get("name"), f"{sub_path}.name")
                if isinstance(sub.get("name"), str):
                    if sub["name"] in subnames:
                        yield sub_path, f"Duplicate value: {sub['name']!r}"
                    subnames.add(sub["name"])
                    names.add(f"{name}/{sub['name']}")
                yield from _request_fields(sub, sub_path)
        else:
            yield from _request_fields(_dict(exactly), f"{path}.exactly")
    constraints = _items(devices.get("constraints"))
    yield from _too_many(constraints, CONSTRAINTS_MAX, f"{at}.devices.constraints")
    for i, constraint in enumerate(constraints[:CONSTRAINTS_MAX]):
        path = f"{at}.devices.constraints[{i}]"
        constraint = _dict(constraint)
        yield from _request_refs(constraint.get("requests"), names, f"{path}.requests")
        for field in ("matchAttribute", "distinctAttribute"):
            if isinstance(constraint.get(field), str):
                yield from _qualified_name(constraint[field], f"{path}.{field}", fully=True)
                break
        else:
            yield f"{path}.matchAttribute", "Required value"
    configs = _items(devices.get("config"))
    yield from _too_many(configs, CONFIG_MAX, f"{at}.devices.config")
    for i, config in enumerate(configs[:CONFIG_MAX]):
        path = f"{at}.devices.config[{i}]"
        yield from _request_refs(_dict(config).get("requests"), names, f"{path}.requests")
        yield from _opaque(_dict(config).get("opaque"), f"{path}.opaque")
    return names


def _request_refs(refs: Any, names: set[str], path: str) -> Iterator[Problem]:
    for i, ref in enumerate(_items(refs)):
        if ref not in names:
            yield (
                f"{path}[{i}]",
                f"Invalid value: {ref!r}: must be the name of a request in the claim or the name "
                "of a request and a subrequest separated by '/'",
            )


def _request_fields(request: dict[str, Any], path: str) -> Iterator[Problem]:
    class_name = request.get("deviceClassName")
    yield from _dns_subdomain(class_name, f"{path}.deviceClassName")
    selectors = _items(request.get("selectors"))
    yield from _selectors(selectors, f"{path}.selectors")
    mode = request.get("allocationMode") or "ExactCount"
    count = request.get("count")
    if mode not in ALLOCATION_MODES:
        yield (
            f"{path}.allocationMode",
            f'Unsupported value: {mode!r}: supported values: "All", "ExactCount"',
        )
    elif mode == "All" and count not in (None, 0):
        yield (
            f"{path}.count",
            f"Invalid value: {count!r}: must not be specified when allocationMode is 'All'",
        )
    elif mode == "ExactCount" and count is not None and (not _is_int(count) or count <= 0):
        yield f"{path}.count", f"Invalid value: {count!r}: must be greater than zero"
    tolerations = _items(request.get("tolerations"))
    yield from _too_many(tolerations, TOLERATIONS_MAX, f"{path}.tolerations")


def _selectors(selectors: list[Any], path: str) -> Iterator[Problem]:
    if len(selectors) > SELECTORS_MAX:
        yield path, f"Too many: {len(selectors)}: must have at most {SELECTORS_MAX} items"
        return
    for i, selector in enumerate(selectors):
        cel = _dict(selector).get("cel")
        if not isinstance(cel, dict):
            yield f"{path}[{i}].cel", "Required value"
            continue
        expression = cel.get("expression")
        if _required(expression):
            yield f"{path}[{i}].cel.expression", "Required value: expression is required"
        elif isinstance(expression, str) and len(expression) > CEL_MAX_LENGTH:
            yield (
                f"{path}[{i}].cel.expression",
                f"Too long: may not be more than {CEL_MAX_LENGTH} bytes",
            )


def _opaque(opaque: Any, path: str) -> Iterator[Problem]:
    if not isinstance(opaque, dict):
        yield path, "Required value"
        return
    yield from _driver(opaque.get("driver"), f"{path}.driver")
    if opaque.get("parameters") is None:
        yield f"{path}.parameters", "Required value"


# --- DeviceClass -----------------------------------------------------------------------------


def _device_class(obj: dict[str, Any]) -> Iterator[Problem]:
    yield from _dns_subdomain(_dict(obj.get("metadata")).get("name"), "metadata.name")
    spec = _dict(obj.get("spec"))
    yield from _selectors(_items(spec.get("selectors")), "spec.selectors")
    configs = _items(spec.get("config"))
    yield from _too_many(configs, CONFIG_MAX, "spec.config")
    for i, config in enumerate(configs[:CONFIG_MAX]):
        yield from _opaque(_dict(config).get("opaque"), f"spec.config[{i}].opaque")
    name = spec.get("extendedResourceName")
    if name is not None and not (isinstance(name, str) and is_extended_resource_name(name)):
        yield (
            "spec.extendedResourceName",
            f"Invalid value: {name!r}: must be a valid extended resource name",
        )


# --- Workload, PodGroup (scheduling.k8s.io) --------------------------------------------------

WORKLOAD_MAX_TEMPLATES = 8
PODGROUP_MAX_CLAIMS = 4
# The reference to a Workload's template, by version: (field, its fields).
TEMPLATE_REFS = {
    "v1alpha2": ("podGroupTemplateRef", ("workloadName", "podGroupTemplateName")),
    "v1alpha3": ("workloadRef", ("workloadName", "templateName")),
    "v1beta1": ("workloadRef", ("workloadName", "templateName")),
}


def _one_of(value: dict[str, Any], fields: tuple[str, ...], path: str) -> Iterator[Problem]:
    """A union: exactly one of ``fields`` set (null counts as unset)."""
    given = [f for f in fields if value.get(f) is not None]
    names = " or ".join(f"`{f}`" for f in fields)
    if not given:
        yield path, f"Required value: exactly one of {names} is required"
    elif len(given) > 1:
        yield (
            path,
            f"Invalid value: exactly one of {names} is required, but multiple fields are set",
        )


def _workload(obj: dict[str, Any], version: str) -> Iterator[Problem]:
    yield from _dns_subdomain(_dict(obj.get("metadata")).get("name"), "metadata.name")
    if version not in PODGROUP_VERSIONS:
        return  # v1alpha1 (1.35): groups inline, in a shape of their own
    spec = _dict(obj.get("spec"))
    if version == "v1alpha2":
        if not _items(spec.get("podGroupTemplates")):
            yield "spec.podGroupTemplates", "Required value"
    else:  # CompositePodGroup (1.37) may stand in for the templates
        yield from _one_of(spec, ("podGroupTemplates", "compositePodGroupTemplates"), "spec")
    templates = _items(spec.get("podGroupTemplates"))
    yield from _too_many(templates, WORKLOAD_MAX_TEMPLATES, "spec.podGroupTemplates")
    names: set[str] = set()
    for i, template in enumerate(templates[:WORKLOAD_MAX_TEMPLATES]):
        at = f"spec.podGroupTemplates[{i}]"
        template = _dict(template)
        name = template.get("name")
        yield from _dns_label(name, f"{at}.name")
        if isinstance(name, str) and name:
            if name in names:
                yield f"{at}.name", f"Duplicate value: {name!r}"
            names.add(name)
        yield from _group_fields(template, at)


def _podgroup(obj: dict[str, Any], version: str) -> Iterator[Problem]:
    yield from _dns_subdomain(_dict(obj.get("metadata")).get("name"), "metadata.name")
    spec = _dict(obj.get("spec"))
    field, ref_fields = TEMPLATE_REFS.get(version, TEMPLATE_REFS["v1beta1"])
    for other, (other_field, _) in TEMPLATE_REFS.items():
        if other_field != field and spec.get(other_field) is not None:
            yield (
                f"spec.{other_field}",
                f'unknown field "spec.{other_field}": it is the {other} reference to a '
                f"Workload's template; in {SCHEDULING_GROUP}/{version} it is spec.{field}, or "
                f"declare the object as {SCHEDULING_GROUP}/{other}",
            )
            break
    ref, at = spec.get(field), f"spec.{field}"
    if version == "v1alpha2" and ref is not None:
        ref, at = _dict(ref).get("workload"), f"{at}.workload"
    if ref is not None:
        yield from _template_ref(ref, at, ref_fields)
    yield from _group_fields(spec, "spec")
    statuses = _items(_dict(obj.get("status")).get("resourceClaimStatuses"))
    yield from _too_many(statuses, PODGROUP_MAX_CLAIMS, "status.resourceClaimStatuses")
    for i, status in enumerate(statuses[:PODGROUP_MAX_CLAIMS]):
        yield from _dns_label(_dict(status).get("name"), f"status.resourceClaimStatuses[{i}].name")


def _template_ref(ref: Any, at: str, fields: tuple[str, str]) -> Iterator[Problem]:
    """A reference to a Workload's template: its fields named as the version names them (a
    v1alpha2 ``podGroupTemplateName`` in a v1beta1 ``workloadRef`` would read as no
    template at all), the names well formed where given."""
    if not isinstance(ref, dict):
        yield at, f"must be a mapping, not a {_type(ref)}"
        return
    for key in ref:
        if key not in fields:
            path = f"{at}.{key}"
            renamed = key in ("podGroupTemplateName", "templateName")  # the other version's
            hint = f": did you mean {fields[1]}?" if renamed else ""
            yield path, f'unknown field "{path}"{hint}'
    if ref.get(fields[0]) not in (None, ""):
        yield from _dns_subdomain(ref[fields[0]], f"{at}.{fields[0]}")
    if ref.get(fields[1]) not in (None, ""):
        yield from _dns_label(ref[fields[1]], f"{at}.{fields[1]}")


def _group_fields(spec: dict[str, Any], at: str) -> Iterator[Problem]:
    """What a PodGroup's spec and a Workload's PodGroupTemplate share: the scheduling policy
    and the claims the group's Pods share (KEP-5729)."""
    policy = spec.get("schedulingPolicy")
    if policy is None:
        yield f"{at}.schedulingPolicy", "Required value"
    else:
        policy = _dict(policy)
        yield from _one_of(policy, ("basic", "gang"), f"{at}.schedulingPolicy")
        gang = policy.get("gang")
        if gang is not None:
            path = f"{at}.schedulingPolicy.gang.minCount"
            count = _dict(gang).get("minCount")
            if count is None:
                yield path, "Required value"
            elif not _is_int(count) or count < 1:
                yield path, f"Invalid value: {count!r}: must be greater than or equal to 1"
    claims = _items(spec.get("resourceClaims"))
    yield from _too_many(claims, PODGROUP_MAX_CLAIMS, f"{at}.resourceClaims")
    names: set[str] = set()
    for i, claim in enumerate(claims[:PODGROUP_MAX_CLAIMS]):
        path = f"{at}.resourceClaims[{i}]"
        claim = _dict(claim)
        name = claim.get("name")
        yield from _dns_label(name, f"{path}.name")
        if isinstance(name, str) and name:
            if name in names:
                yield f"{path}.name", f"Duplicate value: {name!r}"
            names.add(name)
        sources = ("resourceClaimName", "resourceClaimTemplateName")
        yield from _one_of(claim, sources, path)
        for source in sources:
            if claim.get(source) is not None:
                yield from _dns_subdomain(claim[source], f"{path}.{source}")
