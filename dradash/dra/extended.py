"""Extended resources backed by DRA (KEP-5004): a container asks for ``example.com/gpu: 2`` in
its resources, a DeviceClass maps that name, and the scheduler allocates devices for it through
a claim it creates at binding.

Ported from kube-scheduler 1.37: ``schedutil.IsDRAExtendedResourceName``, the
``extendedresourcecache`` (which class serves a name: every class its implicit
``deviceclass.resource.kubernetes.io/<class>``; an explicit ``spec.extendedResourceName`` shared
by several classes goes to the newest, the alphabetically first on a tie),
``resourcehelper.PodRequests`` and the DynamicResources plugin's
``extendeddynamicresources.go`` (preFilterExtendedResources, filterExtendedResources,
createRequestsAndMappings): per node, a resource the node advertises in
``status.allocatable`` is the device plugin's; one it does not, that a class maps, is DRA's;
one neither serves does not fit ("cannot fit resource").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dradash.dra.cel.quantity import Quantity, QuantityError
from dradash.dra.fields import dig, mapping, mappings, text
from dradash.dra.objects import DeviceClass, Node, Pod

CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"  # resourceapi.ResourceDeviceClassPrefix
CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
IN_MEMORY_NAME = "<extended-resources>"  # specialClaimInMemName: never a valid claim name

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _qualified(name: str) -> bool:
    """validation.IsQualifiedName: [prefix/]name, a DNS subdomain prefix."""
    prefix, _, local = name.rpartition("/")
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(local) <= 63 and bool(_NAME.match(local))


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-prefixed name outside *kubernetes.io/, not
    starting with "requests.", that is a valid quota name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return _qualified("requests." + name)


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName."""
    return is_extended_resource_name(name) or name.startswith(CLASS_PREFIX)


# --- which DeviceClass serves a name --------------------------------------------------------


def _created(device_class: DeviceClass) -> datetime:
    try:
        parsed = datetime.fromisoformat(device_class.created)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)  # metav1.Time zero: older than any real one
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _rank(device_class: DeviceClass) -> tuple[float, str]:
    """betterDeviceClass as a sort key: the newer class first, then the lower name."""
    return (-_created(device_class).timestamp(), device_class.name)


def explicit_candidates(classes: Iterable[DeviceClass]) -> dict[str, list[DeviceClass]]:
    """The classes declaring each explicit extended resource name, the winner first."""
    out: dict[str, list[DeviceClass]] = defaultdict(list)
    for c in classes:
        if c.extended_resource_name:
            out[c.extended_resource_name].append(c)
    return {name: sorted(found, key=_rank) for name, found in out.items()}


def class_mapping(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """ExtendedResourceCache.GetDeviceClass for every name: the implicit name of every class,
    and each explicit name's winner."""
    classes = list(classes)
    out = {CLASS_PREFIX + c.name: c for c in classes}
    for name, found in explicit_candidates(classes).items():
        out[name] = found[0]
    return out


# --- what a Pod asks for ---------------------------------------------------------------------


def _count(value: Any) -> int | None:
    """A quantity as an int64 (resource.Quantity.AsInt64), or None when it is not a whole
    number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if not isinstance(value, str):
        return None
    try:
        q = Quantity.parse(value)
    except QuantityError:
        return None
    exact = q._value
    if exact != exact.to_integral_value():
        return None
    return int(exact)


def container_requests(container: dict[str, Any]) -> dict[str, int]:
    """The container's requests of extended resources the scheduler could give through DRA.

    The API server copies limits into requests where a request is not set (and extended
    resources must have equal requests and limits), so a hand-written manifest with limits
    only asks for the same."""
    resources = mapping(container.get("resources"))
    merged = {**mapping(resources.get("limits")), **mapping(resources.get("requests"))}
    out = {}
    for name, value in merged.items():
        if isinstance(name, str) and is_dra_extended_resource_name(name):
            count = _count(value)
            if count is not None:
                out[name] = count
    return out


def _is_sidecar(container: dict[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def _add(into: dict[str, int], more: dict[str, int]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, 0) + value


def _max(into: dict[str, int], other: dict[str, int]) -> None:
    for name, value in other.items():
        into[name] = max(into.get(name, 0), value)


def pod_requests(pod: Pod) -> dict[str, int]:
    """resourcehelper.PodRequests for DRA-capable extended resources: the regular containers
    and sidecars together, or the largest init container (with the sidecars started before
    it) if that asks for more."""
    total: dict[str, int] = {}
    for c in mappings(pod.spec.get("containers")):
        _add(total, container_requests(c))
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in mappings(pod.spec.get("initContainers")):
        own = container_requests(c)
        if _is_sidecar(c):
            _add(total, own)
            _add(sidecars, own)
            current = dict(sidecars)
        else:
            current = dict(own)
            _add(current, sidecars)
        _max(init_max, current)
    _max(total, init_max)
    return total


def enabled(minor: int | None, classes: Iterable[DeviceClass], pods: Iterable[Pod]) -> bool:
    """DRAExtendedResource: GA in 1.37, beta (on) in 1.36, alpha (off) in 1.34 and 1.35, where
    a class's extendedResourceName or a Pod's extendedResourceClaimStatus proves it on (the API
    server drops both fields with the gate off)."""
    if minor is None or minor >= 36:
        return True
    if minor < 34:
        return False
    return any(c.extended_resource_name for c in classes) or any(
        p.extended_resource_claim for p in pods
    )


@dataclass
class Request:
    """One container's request of one extended resource."""

    container: str
    init: bool
    resource: str
    quantity: int
    device_class: str  # "" when no class maps the name


@dataclass
class PodResources:
    """A Pod's extended resources, as the DynamicResources plugin reads them."""

    requests: list[Request]  # per container, in the Pod's order
    totals: dict[str, int]  # PodRequests: what the Pod needs on one node
    mapping: dict[str, DeviceClass] = field(repr=False)

    @property
    def backed(self) -> bool:
        """hasDeviceClassMappedExtendedResource: some non-zero request a class maps."""
        return any(q and name in self.mapping for name, q in self.totals.items())

    def split(self, node: Node) -> NodeSplit:
        """filterExtendedResources on one node."""
        allocatable = allocatable_counts(node)
        split = NodeSplit()
        for name in sorted(self.totals):
            quantity = self.totals[name]
            if not quantity:
                continue
            have = allocatable.get(name)
            if name in self.mapping and not have:
                split.dra[name] = quantity
            elif have is None:
                split.unfit = split.unfit or name
            else:
                split.plugin[name] = quantity
        return split


@dataclass
class NodeSplit:
    dra: dict[str, int] = field(default_factory=dict)  # allocated through the Pod's claim
    plugin: dict[str, int] = field(default_factory=dict)  # the node's device plugin serves them
    unfit: str = ""  # a resource neither serves: "cannot fit resource"


def allocatable_counts(node: Node) -> dict[str, int]:
    """The node's status.allocatable of extended resources (device plugins advertise them);
    read once per node (every pending Pod's explanation asks of every node)."""
    cached: dict[str, int] | None = node.__dict__.get("_extended_allocatable")
    if cached is not None:
        return cached
    out = {}
    for name, value in mapping(dig(node.raw, "status", "allocatable")).items():
        if isinstance(name, str) and is_dra_extended_resource_name(name):
            count = _count(value)
            out[name] = count if count is not None else 0
    node.__dict__["_extended_allocatable"] = out
    return out


def pod_resources(pod: Pod, mapping_: dict[str, DeviceClass]) -> PodResources:
    requests = []
    for init, key in ((True, "initContainers"), (False, "containers")):
        for c in mappings(pod.spec.get(key)):
            for name, quantity in sorted(container_requests(c).items()):
                device_class = mapping_.get(name)
                requests.append(
                    Request(
                        text(c.get("name")),
                        init,
                        name,
                        quantity,
                        device_class.name if device_class else "",
                    )
                )
    return PodResources(requests, pod_requests(pod) if requests else {}, mapping_)


# --- the claim the scheduler creates ---------------------------------------------------------


def _sorted_request_keys(container: dict[str, Any]) -> list[str]:
    """The names of every request of the container (defaulting copies limits into requests),
    sorted: a resource's place among them names its request."""
    resources = mapping(container.get("resources"))
    names = set(mapping(resources.get("requests"))) | set(mapping(resources.get("limits")))
    return sorted(n for n in names if isinstance(n, str))


def _container_request(
    index: int,
    container: dict[str, Any],
    resource: str,
    class_name: str,
    reusable: list[dict[str, Any] | None],
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """createResourceRequestAndMappings."""
    quantity = container_requests(container).get(resource)
    if not quantity:
        return None, []
    name = text(container.get("name"))
    found: list[dict[str, str]] = []
    total = 0
    for r in reusable:
        if r is not None:
            total += r["exactly"]["count"]
            found.append(
                {"containerName": name, "resourceName": resource, "requestName": r["name"]}
            )
            if total >= quantity:
                return None, found
    keys = _sorted_request_keys(container)
    position = keys.index(resource) if resource in keys else 0
    request_name = f"container-{index}-request-{position}"
    request = {
        "name": request_name,
        "exactly": {
            "deviceClassName": class_name,
            "allocationMode": "ExactCount",
            "count": quantity - total,
        },
    }
    found.append({"containerName": name, "resourceName": resource, "requestName": request_name})
    return request, found


def requests_and_mappings(
    pod: Pod, resources: dict[str, int], mapping_: dict[str, DeviceClass]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """createRequestsAndMappings: the device requests of the Pod's claim for the resources
    DRA serves on a node, and which container's resource each request stands for. Init
    containers that are not sidecars reuse the requests of containers after them, and share
    the largest of their own requests."""
    containers = mappings(pod.spec.get("initContainers")) + mappings(pod.spec.get("containers"))
    n_init = len(mappings(pod.spec.get("initContainers")))
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or _is_sidecar(c)]
    short_lived = [i for i, c in enumerate(containers) if i < n_init and not _is_sidecar(c)]
    device_requests: list[dict[str, Any]] = []
    out_mappings: list[dict[str, str]] = []
    for resource in sorted(resources):
        device_class = mapping_.get(resource)
        if device_class is None:
            continue
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        long_mappings: list[dict[str, str]] = []
        for i in long_lived:
            request, found = _container_request(i, containers[i], resource, device_class.name, [])
            long_requests[i] = request
            long_mappings += found
        biggest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_mappings: list[dict[str, str]] = []
        for i in short_lived:
            request, found = _container_request(
                i, containers[i], resource, device_class.name, long_requests[i:]
            )
            if request is not None:
                short_names.add(request["name"])
                if biggest is None or biggest["exactly"]["count"] < request["exactly"]["count"]:
                    biggest = request
            short_mappings += found
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = biggest["name"]
        if biggest is not None:
            device_requests.append(biggest)
        device_requests += [r for r in long_requests if r is not None]
        out_mappings += long_mappings + short_mappings
    device_requests.sort(key=lambda r: r["name"])
    return device_requests, out_mappings


def in_memory_claim(pod: Pod, requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The claim preFilterExtendedResources keeps in memory until binding, with the requests
    filterExtendedResources gives it on a node."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": pod.namespace,
            "name": IN_MEMORY_NAME,
            "generateName": f"{pod.name}-extended-resources-",
            "annotations": {CLAIM_ANNOTATION: "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "uid": pod.uid,
                    "controller": True,
                }
            ],
        },
        "spec": {"devices": {"requests": requests}},
    }


def is_extended_claim(raw_metadata: dict[str, Any]) -> bool:
    """A claim the scheduler created for a Pod's extended resources (its annotation)."""
    return mapping(raw_metadata.get("annotations")).get(CLAIM_ANNOTATION) == "true"


def requested_names(pod: dict[str, Any]) -> set[str]:
    """The extended resource names a Pod's containers (init containers included) ask for."""
    spec = mapping(pod.get("spec"))
    names: set[str] = set()
    for c in mappings(spec.get("initContainers")) + mappings(spec.get("containers")):
        names |= set(container_requests(c))
    return names


def may_use_dra(pod: dict[str, Any], explicit_names: set[str] | None) -> bool:
    """Whether a Pod (raw) asks for an extended resource DRA may serve: an implicit
    ``deviceclass.resource.kubernetes.io/…`` name, or a name one of the cluster's DeviceClasses
    declares (``explicit_names``; None when the classes are unknown: then any extended
    resource may be DRA's)."""
    for name in requested_names(pod):
        if name.startswith(CLASS_PREFIX) or explicit_names is None or name in explicit_names:
            return True
    return False
