"""The Kubernetes kinds dradash reads, and how an object is named and keyed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RESOURCE_GROUP = "resource.k8s.io"
# API versions of resource.k8s.io whose shapes the core normalises to v1, newest first.
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1", "v1alpha3")
SCHEDULING_GROUP = "scheduling.k8s.io"
# Gangs (KEP-4671, KEP-5832): scheduling.k8s.io/v1alpha2 in 1.36, v1beta1 in 1.37 (v1alpha3
# while 1.37 was developed), newest first. v1alpha1 (1.35) had Workloads only, their groups
# inline (spec.podGroups), and Pods pointed at them with spec.workloadRef.
PODGROUP_VERSIONS = ("v1beta1", "v1alpha3", "v1alpha2")
WORKLOAD_VERSIONS = (*PODGROUP_VERSIONS, "v1alpha1")


@dataclass(frozen=True)
class Kind:
    name: str
    groups: tuple[str, ...]  # "" is the core group
    namespaced: bool
    plural: str
    versions: tuple[str, ...] = ("v1",)


KINDS: dict[str, Kind] = {
    k.name: k
    for k in [
        Kind("Namespace", ("",), False, "namespaces"),
        Kind("Node", ("",), False, "nodes"),
        Kind("Pod", ("",), True, "pods"),
        Kind("Event", ("", "events.k8s.io"), True, "events"),
        Kind("Job", ("batch",), True, "jobs"),
        Kind("PriorityClass", (SCHEDULING_GROUP,), False, "priorityclasses"),
        Kind("DeviceClass", (RESOURCE_GROUP,), False, "deviceclasses", RESOURCE_VERSIONS),
        Kind("ResourceSlice", (RESOURCE_GROUP,), False, "resourceslices", RESOURCE_VERSIONS),
        Kind("ResourceClaim", (RESOURCE_GROUP,), True, "resourceclaims", RESOURCE_VERSIONS),
        Kind(
            "ResourceClaimTemplate",
            (RESOURCE_GROUP,),
            True,
            "resourceclaimtemplates",
            RESOURCE_VERSIONS,
        ),
        Kind("DeviceTaintRule", (RESOURCE_GROUP,), False, "devicetaintrules", RESOURCE_VERSIONS),
        Kind("Workload", (SCHEDULING_GROUP,), True, "workloads", WORKLOAD_VERSIONS),
        Kind("PodGroup", (SCHEDULING_GROUP,), True, "podgroups", PODGROUP_VERSIONS),
    ]
}

# Kinds that never enter dradash, whatever their API version.
REFUSED_KINDS = frozenset({"Secret", "ConfigMap"})

ObjectKey = tuple[str, str, str]  # (kind, namespace, name); namespace is "" for cluster objects


def split_api_version(api_version: str) -> tuple[str, str]:
    """ "resource.k8s.io/v1" -> ("resource.k8s.io", "v1"); "v1" -> ("", "v1")."""
    group, _, version = api_version.rpartition("/")
    return group, version


class UnsupportedVersion(ValueError):
    """A kind dradash reads, at an API version whose shape it does not know."""


def kind_of(obj: dict[str, Any]) -> Kind | None:
    """The Kind of an object dradash reads, or None for objects it ignores.

    Raises UnsupportedVersion for a known kind at an unknown version of its group
    (for example resource.k8s.io/v1alpha2, the classic DRA API removed in Kubernetes 1.32).
    """
    name = obj.get("kind")
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        return None
    group, version = split_api_version(str(obj.get("apiVersion", "")))
    if group not in kind.groups:
        return None  # same kind name in another group, e.g. a CRD called "Event"
    if version not in kind.versions:
        supported = ", ".join(f"{group + '/' if group else ''}{v}" for v in kind.versions)
        classic = group == RESOURCE_GROUP and version == "v1alpha2"
        hint = " (classic DRA, removed in Kubernetes 1.32)" if classic else ""
        raise UnsupportedVersion(
            f"{kind.name} {obj.get('apiVersion')}{hint} is not supported; supported: {supported}"
        )
    return kind


def object_key(kind: Kind, obj: dict[str, Any]) -> ObjectKey:
    meta = obj.get("metadata") or {}
    namespace = (meta.get("namespace") or "default") if kind.namespaced else ""
    return (kind.name, namespace, meta.get("name", ""))
