"""Capture a live cluster: discovery, paginated lists, the DRA-related subset, redaction.

``capture(kube)`` reads, in this order, Namespaces, Nodes, PriorityClasses, DeviceClasses,
ResourceSlices, DeviceTaintRules (where served), ResourceClaimTemplates, ResourceClaims,
Workloads and PodGroups (scheduling.k8s.io, where served: gangs, KEP-4671), then only the Pods
that use DRA (``spec.resourceClaims``, ``status.extendedResourceClaimStatus``, extended
resources a DeviceClass maps or ``deviceclass.resource.kubernetes.io/…``; any extended resource
when the DeviceClasses could not be read), that a claim names (``status.reservedFor``, the owner
of a generated claim) or that belong to a captured PodGroup (``spec.schedulingGroup``: a gang is
judged with all its members), the Jobs that own those Pods, and the core/v1 Events about those
Pods and claims, the captured ResourceSlices and DeviceTaintRules, and the Nodes that publish
slices or run a captured Pod (the device taint eviction controller's events are about Pods, the
kubelet's about Pods and Nodes). Objects keep their status: a Pod's ``allocatedResourcesStatus``
(device health) and DisruptionTarget condition, a DeviceTaintRule's EvictionInProgress. Secrets
and ConfigMaps are never requested. Objects come back as the raw JSON the server sent, with
``kind`` and ``apiVersion`` filled in and redacted by ``dradash.dra.redact.redact``, the
redaction every path in applies: env values and ``last-applied-configuration`` annotations
replaced by ``<redacted>``, ``metadata.managedFields`` dropped.

``on_objects``, if given, receives the objects page by page as they are kept (a page may come
again when its list restarts), so that they can be stored while later lists are still read.
With ``hold_objects=False`` the result then holds only the kept objects' keys, not the objects:
the filters read what they need of each object (``_NOTES``) as its page goes by, so the capture
of a large cluster does not hold it all in memory (issue 28).

An object whose JSON is larger than ``max_object_bytes`` is not kept: its kind's status is
``error``, with a message naming the object and its size, and the snapshot is partial (no
object the API server accepted comes near the default limit; a bloated annotation could).

Per-kind problems do not fail the capture; they are reported in ``kind_status`` with the words of
dradash.dra.bundle: ``forbidden`` (403) and ``not-found`` (a kind dradash needs that the server
does not serve) make a snapshot partial; ``not-served`` is for optional kinds (DeviceTaintRule,
Workload, PodGroup), which older clusters or disabled feature gates lack, and does not.
Successful lists are ``ok`` or ``absent`` (no objects). Anything else (401, timeouts, 5xx after
retries, connection errors, continue tokens that keep expiring) raises CaptureError: the
capture failed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from dradash.dra.extended import may_use_dra
from dradash.dra.gc import gc_paused
from dradash.dra.kinds import KINDS, RESOURCE_GROUP, RESOURCE_VERSIONS, Kind, ObjectKey, object_key
from dradash.dra.redact import redact
from dradash.kube.client import Kube, KubeError

# Kinds a cluster may legitimately not serve: their absence does not make a snapshot partial.
OPTIONAL_KINDS = frozenset({"DeviceTaintRule", "Workload", "PodGroup"})
# Why a cluster may not serve an optional kind, added to its "not-served" message.
NOT_SERVED_WHY = {
    "DeviceTaintRule": "the DRADeviceTaintRules feature is off or the cluster is older",
    "Workload": "the GenericWorkload feature gate is off or the cluster is older than 1.35",
    "PodGroup": "the GenericWorkload feature gate is off or the cluster is older than 1.36 "
    "(claims shared by a PodGroup also need DRAWorkloadResourceClaims)",
}
# The order of the lists: Pods need the claims and PodGroups first, Jobs and Events the Pods.
CAPTURE_ORDER = (
    "Namespace",
    "Node",
    "PriorityClass",
    "DeviceClass",
    "ResourceSlice",
    "DeviceTaintRule",
    "ResourceClaimTemplate",
    "ResourceClaim",
    "Workload",
    "PodGroup",
    "Pod",
    "Job",
    "Event",
)
assert set(CAPTURE_ORDER) == set(KINDS), "every kind dradash reads is captured"
# The kinds whose Events are kept (see _capture), and those of them that are namespaced.
EVENT_SUBJECTS = frozenset({"Pod", "ResourceClaim", "ResourceSlice", "DeviceTaintRule", "Node"})
EVENT_NAMESPACED = frozenset({"Pod", "ResourceClaim"})
MAX_LIST_RESTARTS = 3  # a list whose continue token expires is restarted this many times
# The API server refuses request bodies over 3 MiB and etcd stores at most 1.5 MiB per object,
# so no real object's JSON comes near this (settings: DRADASH_CAPTURE_MAX_OBJECT_BYTES).
DEFAULT_MAX_OBJECT_BYTES = 4 * 1024 * 1024
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


class CaptureError(KubeError):
    """The capture as a whole failed; the message says why, for a person."""


@dataclass
class CaptureResult:
    objects: dict[ObjectKey, dict[str, Any]]  # redacted, with kind and apiVersion filled in
    keys: set[ObjectKey]  # of the objects kept (objects is empty unless they were held)
    kind_status: dict[str, dict[str, Any]]  # {"Pod": {"status": "ok", "message": ""}, ...}
    server_version: str  # gitVersion
    api_versions: list[str]  # served resource.k8s.io versions, e.g. ["resource.k8s.io/v1"]
    captured_at: datetime  # UTC, when the capture started
    requests: int  # HTTP requests made, retries included


@dataclass
class ConnectionReport:
    server_version: str
    api_versions: list[str]
    can_list: dict[str, bool] = field(default_factory=dict)  # kind -> served and allowed
    error: str | None = None


@dataclass
class Discovery:
    server_version: str
    api_versions: list[str]  # served resource.k8s.io versions, server's order
    served: dict[str, str]  # kind -> apiVersion to list it at, e.g. "resource.k8s.io/v1"
    missing: dict[str, dict[str, str]]  # kind -> {"status": "not-served"|"not-found", "message"}


def discover(kube: Kube) -> Discovery:
    """Server version, served resource.k8s.io versions, and where each kind is listed.

    resource.k8s.io kinds are read at the newest version that serves them (v1, then v1beta2,
    v1beta1, v1alpha3); the core normalises older shapes later. Other kinds likewise, in the
    order of their Kind.versions (PodGroups: v1beta1, v1alpha3, v1alpha2). Raises KubeError.
    """
    version = kube.get("/version")
    server_version = str(version.get("gitVersion") or "")
    groups: dict[str, list[str]] = {}
    for group in kube.get("/apis").get("groups") or []:
        if isinstance(group, dict) and group.get("name"):
            groups[group["name"]] = [
                str(v.get("version")) for v in group.get("versions") or [] if isinstance(v, dict)
            ]
    groups[""] = ["v1"]
    api_versions = [f"{RESOURCE_GROUP}/{v}" for v in groups.get(RESOURCE_GROUP, [])]

    resource_lists: dict[str, set[str]] = {}

    def plurals(api_version: str) -> set[str]:
        if api_version not in resource_lists:
            try:
                listed = kube.get(_base(api_version)).get("resources") or []
            except KubeError as e:
                if e.status != 404:
                    raise
                listed = []
            resource_lists[api_version] = {
                r["name"] for r in listed if isinstance(r, dict) and isinstance(r.get("name"), str)
            }
        return resource_lists[api_version]

    served: dict[str, str] = {}
    missing: dict[str, dict[str, str]] = {}
    for name in CAPTURE_ORDER:
        kind = KINDS[name]
        group = kind.groups[0]
        order = RESOURCE_VERSIONS if group == RESOURCE_GROUP else kind.versions
        candidates = [v for v in order if v in groups.get(group, [])]
        for v in candidates:
            api_version = f"{group}/{v}" if group else v
            if kind.plural in plurals(api_version):
                served[name] = api_version
                break
        else:
            if candidates:
                tried = ", ".join(f"{group}/{v}" if group else v for v in candidates)
                message = f"the server does not serve {kind.plural} (looked in {tried})"
            elif groups.get(group):
                message = (
                    f"the server does not serve {kind.plural} ({group} is served at "
                    f"{', '.join(groups[group])}; {kind.plural} are read at {', '.join(order)})"
                )
            else:
                message = f"the server does not serve the API group {group or 'core'}"
            if name in NOT_SERVED_WHY:
                message += f"; {NOT_SERVED_WHY[name]}"
            status = "not-served" if name in OPTIONAL_KINDS else "not-found"
            missing[name] = {"status": status, "message": message}
    return Discovery(server_version, api_versions, served, missing)


def _base(api_version: str) -> str:
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


ObjectsCallback = Callable[[dict[ObjectKey, dict[str, Any]]], None]


def capture(
    kube: Kube,
    *,
    page_size: int = 500,
    now: datetime | None = None,
    on_objects: ObjectsCallback | None = None,
    max_object_bytes: int = DEFAULT_MAX_OBJECT_BYTES,
    hold_objects: bool = True,
) -> CaptureResult:
    """Read the DRA-related state of the cluster. Raises CaptureError (a KubeError).

    With ``hold_objects=False`` the objects go to ``on_objects`` alone (the result's ``objects``
    is empty, its ``keys`` say which were kept).
    """
    captured_at = now or datetime.now(UTC)
    first_request = kube.requests
    try:
        # Everything read stays alive until stored: millions of dicts the cyclic collector
        # would otherwise scan again and again (it tripled the time spent parsing).
        with gc_paused():
            return _capture(
                kube,
                page_size,
                captured_at,
                first_request,
                on_objects,
                max_object_bytes,
                hold_objects,
            )
    except CaptureError:
        raise
    except KubeError as e:
        raise CaptureError(e.status, e.reason, e.message) from e


def _capture(
    kube: Kube,
    page_size: int,
    captured_at: datetime,
    first: int,
    on_objects: ObjectsCallback | None,
    max_object_bytes: int,
    hold_objects: bool,
) -> CaptureResult:
    found = discover(kube)
    objects: dict[ObjectKey, dict[str, Any]] = {}
    keys: set[ObjectKey] = set()
    kind_status: dict[str, dict[str, Any]] = {}

    def read(name: str, keep: Callable[[dict[str, Any]], bool] | None = None) -> list[Any]:
        """The notes (_NOTES) of the kind's kept objects; the objects go to ``objects`` when
        held."""
        if name not in found.served:
            kind_status[name] = dict(found.missing[name])
            return []
        kind = KINDS[name]
        refused: list[str] = []
        try:
            listed = _list_all(
                kube,
                kind,
                found.served[name],
                page_size,
                keep,
                on_objects,
                max_object_bytes=max_object_bytes,
                refused=refused,
                note=_NOTES.get(name),
                hold=hold_objects,
            )
        except KubeError as e:
            if e.status == 403:
                kind_status[name] = {"status": "forbidden", "message": e.message}
                return []
            if e.status == 404:
                status = "not-served" if name in OPTIONAL_KINDS else "not-found"
                why = f"; {NOT_SERVED_WHY[name]}" if name in NOT_SERVED_WHY else ""
                kind_status[name] = {"status": status, "message": e.message + why}
                return []
            raise
        if refused:
            kind_status[name] = {
                "status": "error",
                "message": _refused_message(refused, max_object_bytes),
            }
        else:
            kind_status[name] = {"status": "ok" if listed else "absent", "message": ""}
        keys.update(listed)
        if hold_objects:
            objects.update((key, obj) for key, (obj, _) in listed.items())
        return [note for _, note in listed.values()]

    # Events: about the captured Pods and claims, the captured ResourceSlices and
    # DeviceTaintRules, and the Nodes that publish slices or run a captured Pod (a node's own
    # events: NotReady, reboots; not those of every node of a large cluster).
    subjects: set[tuple[str, ...]] = set()
    dra_nodes: set[str] = set()
    classes: list[str] = []  # the extended resource names DeviceClasses map ("" for none)
    for name in CAPTURE_ORDER[: CAPTURE_ORDER.index("ResourceClaim")]:
        notes = read(name)
        if name == "DeviceClass":
            classes = notes
        elif name == "ResourceSlice":
            for node, about in notes:
                dra_nodes.add(node)
                subjects.update(about)
        elif name == "DeviceTaintRule":
            for about in notes:
                subjects.update(about)
    # Pods: those using DRA, and those claims name as consumers or owners.
    claim_pods: set[tuple[str, str]] = set()  # ("uid", uid) or ("name", "ns/name")
    for refs, about in read("ResourceClaim"):
        claim_pods.update(refs)
        subjects.update(about)
    read("Workload")
    # Every PodGroup: a gang's verdict counts its members, whether they use DRA or not.
    groups = set(read("PodGroup"))
    # Extended resources a DeviceClass maps (unknown when the classes could not be read; none
    # when the server does not serve resource.k8s.io at all, so that a cluster of device
    # plugins only does not have all its GPU Pods kept).
    explicit: set[str] | None = None
    if kind_status.get("DeviceClass", {}).get("status") in ("ok", "absent") or (
        not found.api_versions
    ):
        explicit = set(classes)

    def wanted_pod(pod: dict[str, Any]) -> bool:
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if spec.get("resourceClaims") or status.get("extendedResourceClaimStatus"):
            return True
        if may_use_dra(pod, explicit):
            return True
        meta = pod.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        scheduling_group = spec.get("schedulingGroup")
        if isinstance(scheduling_group, dict):
            group = scheduling_group.get("podGroupName")
            if isinstance(group, str) and (ns, group) in groups:
                return True
        return ("uid", meta.get("uid")) in claim_pods or ("name", f"{ns}/{meta.get('name')}") in (
            claim_pods
        )

    job_refs: set[tuple[str, str]] = set()
    for owners, node, about in read("Pod", wanted_pod):
        job_refs.update(owners)
        dra_nodes.add(node)
        subjects.update(about)

    def wanted_job(job: dict[str, Any]) -> bool:
        meta = job.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        return ("uid", meta.get("uid")) in job_refs or ("name", f"{ns}/{meta.get('name')}") in (
            job_refs
        )

    read("Job", wanted_job)

    dra_nodes.discard("")
    subjects |= {("Node", "", name) for name in dra_nodes}

    def wanted_event(event: dict[str, Any]) -> bool:
        involved = event.get("involvedObject")
        if not isinstance(involved, dict) or involved.get("kind") not in EVENT_SUBJECTS:
            return False
        kind, name = involved["kind"], str(involved.get("name") or "")
        if kind == "Node":  # the kubelet names its node with the node's name as uid
            return ("Node", "", name) in subjects
        if involved.get("uid"):
            return ("uid", involved["uid"]) in subjects
        ns = ""
        if kind in EVENT_NAMESPACED:
            ns = involved.get("namespace") or (event.get("metadata") or {}).get("namespace")
            ns = ns or "default"
        return (kind, ns, name) in subjects

    read("Event", wanted_event)

    return CaptureResult(
        objects=objects,
        keys=keys,
        kind_status={name: kind_status[name] for name in KINDS},
        server_version=found.server_version,
        api_versions=found.api_versions,
        captured_at=captured_at,
        requests=kube.requests - first,
    )


# What the filters of later lists need of a kept object, taken as its page goes by: the
# objects themselves need not be held.


def _event_subjects(obj: dict[str, Any]) -> list[tuple[str, ...]]:
    """How an Event may name this object: by uid, and by kind, namespace and name."""
    meta = obj.get("metadata") or {}
    subjects: list[tuple[str, ...]] = []
    if meta.get("uid"):
        subjects.append(("uid", meta["uid"]))
    ns = (meta.get("namespace") or "default") if obj["kind"] in EVENT_NAMESPACED else ""
    subjects.append((obj["kind"], ns, meta.get("name", "")))
    return subjects


def _class_note(device_class: dict[str, Any]) -> str:
    return str((device_class.get("spec") or {}).get("extendedResourceName") or "")


def _slice_note(resource_slice: dict[str, Any]) -> tuple[str, list[tuple[str, ...]]]:
    node = str((resource_slice.get("spec") or {}).get("nodeName") or "")
    return node, _event_subjects(resource_slice)


def _claim_note(claim: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, ...]]]:
    """The Pods a claim names (consumers and owner), and how Events name the claim."""
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    refs = [r for r in (claim.get("status") or {}).get("reservedFor") or [] if _is_pod_ref(r)]
    refs += [o for o in meta.get("ownerReferences") or [] if _is_pod_ref(o)]
    return [_ref_key(ns, ref) for ref in refs], _event_subjects(claim)


def _group_note(group: dict[str, Any]) -> tuple[str, str]:
    meta = group.get("metadata") or {}
    return (meta.get("namespace") or "default", str(meta.get("name") or ""))


def _pod_note(pod: dict[str, Any]) -> tuple[list[tuple[str, str]], str, list[tuple[str, ...]]]:
    """The Jobs that own a Pod, its node, and how Events name it."""
    meta = pod.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    jobs = [
        _ref_key(ns, owner)
        for owner in meta.get("ownerReferences") or []
        if isinstance(owner, dict)
        and owner.get("kind") == "Job"
        and str(owner.get("apiVersion", "")).startswith("batch/")
    ]
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    return jobs, node, _event_subjects(pod)


_NOTES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "DeviceClass": _class_note,
    "ResourceSlice": _slice_note,
    "DeviceTaintRule": _event_subjects,
    "ResourceClaim": _claim_note,
    "PodGroup": _group_note,
    "Pod": _pod_note,
}


def _is_pod_ref(ref: Any) -> bool:
    if not isinstance(ref, dict):
        return False
    if ref.get("kind") == "Pod" and ref.get("apiVersion", "v1") == "v1":  # ownerReference
        return True
    return ref.get("resource") == "pods" and not ref.get("apiGroup")  # reservedFor entry


def _ref_key(namespace: str, ref: dict[str, Any]) -> tuple[str, str]:
    if ref.get("uid"):
        return ("uid", str(ref["uid"]))
    return ("name", f"{namespace}/{ref.get('name')}")


def _list_all(
    kube: Kube,
    kind: Kind,
    api_version: str,
    page_size: int,
    keep: Callable[[dict[str, Any]], bool] | None,
    on_objects: ObjectsCallback | None = None,
    *,
    max_object_bytes: int = DEFAULT_MAX_OBJECT_BYTES,
    refused: list[str] | None = None,
    note: Callable[[dict[str, Any]], Any] | None = None,
    hold: bool = True,
) -> dict[ObjectKey, tuple[dict[str, Any] | None, Any]]:
    """Every object of a kind (that ``keep`` accepts), page by page, redacted, with its ``note``
    (or None); the object itself only if ``hold``, else None.

    A 410 Expired on a continue token restarts the list from scratch, MAX_LIST_RESTARTS times.
    Pages are dropped as soon as their objects are sorted out, and their kept objects handed to
    ``on_objects``. Objects whose JSON exceeds ``max_object_bytes`` are left out and described
    in ``refused``. Raises KubeError.
    """
    path = f"{_base(api_version)}/{kind.plural}"
    for _attempt in range(MAX_LIST_RESTARTS + 1):
        listed: dict[ObjectKey, tuple[dict[str, Any] | None, Any]] = {}
        if refused is not None:
            refused.clear()
        token = ""
        try:
            while True:
                page = kube.get(path, {"limit": page_size, "continue": token})
                served_as = str(page.get("apiVersion") or api_version)
                items = page.get("items") or []
                token = str((page.get("metadata") or {}).get("continue") or "")
                del page
                kept: dict[ObjectKey, dict[str, Any]] = {}
                for item in items:
                    if not isinstance(item, dict):
                        continue
                    obj = {"apiVersion": served_as, "kind": kind.name, **item}
                    if keep is None or keep(obj):
                        obj = redact(obj)
                        size = _json_size(obj)
                        if size > max_object_bytes:
                            if refused is not None:
                                refused.append(_describe_refused(kind, obj, size))
                            continue
                        kept[object_key(kind, obj)] = obj
                del items
                listed.update(
                    (key, (obj if hold else None, None if note is None else note(obj)))
                    for key, obj in kept.items()
                )
                if on_objects is not None and kept:
                    on_objects(kept)
                if not token:
                    return listed
        except KubeError as e:
            if e.status == 410 and token:
                continue  # the continue token expired: start this kind again
            raise
    raise CaptureError(
        410,
        "Expired",
        f"the list of {kind.plural} kept expiring ({MAX_LIST_RESTARTS + 1} tries): the "
        "cluster changes faster than it can be paged through; try again or with a larger page",
    )


def _json_size(obj: dict[str, Any]) -> int:
    try:
        return len(orjson.dumps(obj))
    except (orjson.JSONEncodeError, TypeError):  # e.g. integers beyond 64 bits
        return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _describe_refused(kind: Kind, obj: dict[str, Any], size: int) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = str(meta.get("name") or "(unnamed)")
    where = f"{meta['namespace']}/{name}" if meta.get("namespace") else name
    return f"{kind.name} {where} ({_mib(size)})"


def _refused_message(refused: list[str], limit: int, *, shown: int = 5) -> str:
    more = len(refused) - shown
    listed = ", ".join(refused[:shown]) + (f" and {more} more" if more > 0 else "")
    return (
        f"not stored, larger than the limit of {_mib(limit)} per object "
        f"(DRADASH_CAPTURE_MAX_OBJECT_BYTES): {listed}"
    )


def test_connection(kube: Kube) -> ConnectionReport:
    """Can these credentials reach the server, and list each kind dradash captures?

    ``can_list[kind]`` is False for kinds the server does not serve, else the answer of a
    SelfSubjectAccessReview (verb list, cluster-wide). Never raises: problems go in ``error``.
    """
    try:
        found = discover(kube)
    except KubeError as e:
        return ConnectionReport("", [], {}, str(e))
    can_list: dict[str, bool] = {}
    try:
        for name in KINDS:
            if name not in found.served:
                can_list[name] = False
                continue
            group = found.served[name].rpartition("/")[0]
            review = kube.post(
                SSAR_PATH,
                {
                    "apiVersion": "authorization.k8s.io/v1",
                    "kind": "SelfSubjectAccessReview",
                    "spec": {
                        "resourceAttributes": {
                            "verb": "list",
                            "group": group,
                            "resource": KINDS[name].plural,
                        }
                    },
                },
            )
            can_list[name] = bool((review.get("status") or {}).get("allowed"))
    except KubeError as e:
        return ConnectionReport(
            found.server_version, found.api_versions, can_list, f"cannot check permissions: {e}"
        )
    return ConnectionReport(found.server_version, found.api_versions, can_list)


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
