"""Small builders for hand-made Kubernetes objects in the shapes of the real fixtures.

Each returns a plain dict, as kubectl prints it; keyword arguments fill in only what a test needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

V1 = "resource.k8s.io/v1"
DRIVER = "gpu.example.com"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "upstream"
NOT_MANIFESTS = {"INDEX.md", "selectors.txt", "NVIDIA_ATTRIBUTES.md"}


def load_fixture(name: str) -> list[dict[str, Any]]:
    """The documents of one fixture file (its first line is a ``# SOURCE:`` comment)."""
    with (FIXTURES / name).open(encoding="utf-8") as fh:
        return [doc for doc in yaml.safe_load_all(fh) if doc is not None]


def fixture_objects(name: str) -> list[dict[str, Any]]:
    """Objects of a fixture with ``List`` documents expanded."""
    out = []
    for doc in load_fixture(name):
        out.extend(doc["items"] if doc.get("kind") == "List" else [doc])
    return out


def meta(name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if namespace is not None:
        out["namespace"] = namespace
    out.update(extra)
    return out


def owner(kind: str, name: str, uid: str = "", *, controller: bool = True) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "name": name, "controller": controller}
    if uid:
        ref["uid"] = uid
    return ref


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(name, labels=labels or {"kubernetes.io/hostname": name}),
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def pod_claim(name: str, *, claim: str = "", template: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if claim:
        entry["resourceClaimName"] = claim
    if template:
        entry["resourceClaimTemplateName"] = template
    return entry


def container(name: str, *claims: str | tuple[str, str], **extra: Any) -> dict[str, Any]:
    """A container using claims: "gpu" (whole claim) or ("gpu", "request")."""
    refs = []
    for c in claims:
        if isinstance(c, tuple):
            refs.append({"name": c[0], "request": c[1]})
        else:
            refs.append({"name": c})
    out: dict[str, Any] = {"name": name, "image": "registry.k8s.io/e2e-test-images/busybox:1.36"}
    if refs:
        out["resources"] = {"claims": refs}
    out.update(extra)
    return out


def pod(
    name: str,
    namespace: str = "default",
    *,
    uid: str = "",
    claims: Iterable[dict[str, Any]] = (),
    containers: Iterable[dict[str, Any]] | None = None,
    init_containers: Iterable[dict[str, Any]] = (),
    node_name: str = "",
    claim_statuses: Iterable[dict[str, Any]] | None = None,
    extended: dict[str, Any] | None = None,
    owners: Iterable[dict[str, Any]] = (),
    phase: str = "Pending",
) -> dict[str, Any]:
    claims = list(claims)
    spec: dict[str, Any] = {
        "containers": list(containers)
        if containers is not None
        else [container("ctr0", *(c["name"] for c in claims))]
    }
    if claims:
        spec["resourceClaims"] = claims
    if init_containers:
        spec["initContainers"] = list(init_containers)
    if node_name:
        spec["nodeName"] = node_name
    status: dict[str, Any] = {"phase": phase}
    if claim_statuses is not None:
        status["resourceClaimStatuses"] = list(claim_statuses)
    if extended is not None:
        status["extendedResourceClaimStatus"] = extended
    metadata = meta(name, namespace, uid=uid or f"uid-pod-{name}")
    if owners:
        metadata["ownerReferences"] = list(owners)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def request(
    name: str = "gpu", device_class: str = "gpu.example.com", **fields: Any
) -> dict[str, Any]:
    """A v1 request: ``{name, exactly: {deviceClassName, …}}``."""
    return {"name": name, "exactly": {"deviceClassName": device_class, **fields}}


def result(
    request_name: str = "gpu",
    device_name: str = "gpu-0",
    *,
    pool: str = "node-1",
    driver: str = DRIVER,
    **extra: Any,
) -> dict[str, Any]:
    return {"request": request_name, "driver": driver, "pool": pool, "device": device_name, **extra}


def claim(
    name: str,
    namespace: str = "default",
    *,
    uid: str = "",
    requests: Iterable[dict[str, Any]] | None = None,
    results: Iterable[dict[str, Any]] | None = None,
    node_selector: dict[str, Any] | None = None,
    reserved_for: Iterable[dict[str, Any]] = (),
    device_statuses: Iterable[dict[str, Any]] = (),
    owners: Iterable[dict[str, Any]] = (),
    annotations: dict[str, str] | None = None,
    deleting: bool = False,
    api_version: str = V1,
) -> dict[str, Any]:
    metadata = meta(name, namespace, uid=uid or f"uid-claim-{name}")
    if owners:
        metadata["ownerReferences"] = list(owners)
    if annotations:
        metadata["annotations"] = annotations
    if deleting:
        metadata["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    status: dict[str, Any] = {}
    if results is not None:
        allocation: dict[str, Any] = {"devices": {"results": list(results)}}
        if node_selector is not None:
            allocation["nodeSelector"] = node_selector
        status["allocation"] = allocation
    if reserved_for:
        status["reservedFor"] = list(reserved_for)
    if device_statuses:
        status["devices"] = list(device_statuses)
    return {
        "apiVersion": api_version,
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": {"devices": {"requests": list(requests if requests is not None else [request()])}},
        "status": status,
    }


def generated_claim(
    pod_obj: dict[str, Any], pod_claim_name: str, name: str = "", **kwargs: Any
) -> dict[str, Any]:
    """A claim as the resourceclaim controller generates it for a Pod's template entry."""
    pod_meta = pod_obj["metadata"]
    return claim(
        name or f"{pod_meta['name']}-{pod_claim_name}-abcde",
        pod_meta.get("namespace", "default"),
        owners=[owner("Pod", pod_meta["name"], pod_meta.get("uid", ""))],
        annotations={"resource.kubernetes.io/pod-claim-name": pod_claim_name},
        **kwargs,
    )


def consumer(pod_obj: dict[str, Any], *, with_uid: bool = True) -> dict[str, Any]:
    entry = {"resource": "pods", "name": pod_obj["metadata"]["name"]}
    if with_uid:
        entry["uid"] = pod_obj["metadata"]["uid"]
    return entry


def template(
    name: str, namespace: str = "default", *, requests: Iterable[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "ResourceClaimTemplate",
        "metadata": meta(name, namespace),
        "spec": {
            "spec": {
                "devices": {"requests": list(requests if requests is not None else [request()])}
            }
        },
    }


def device(name: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "attributes": {"index": {"int": int(name.rsplit("-", 1)[-1]) if name[-1].isdigit() else 0}},
        "capacity": {"memory": {"value": "80Gi"}},
    }
    out.update(fields)
    return out


def resource_slice(
    name: str,
    *,
    driver: str = DRIVER,
    pool: str = "node-1",
    devices: Iterable[dict[str, Any]] | None = None,
    generation: int = 1,
    count: int = 1,
    node_name: str | None = None,
    all_nodes: bool = False,
    node_selector: dict[str, Any] | None = None,
    per_device: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": list(devices if devices is not None else [device("gpu-0"), device("gpu-1")]),
    }
    if node_name is not None:
        spec["nodeName"] = node_name
    if all_nodes:
        spec["allNodes"] = True
    if node_selector is not None:
        spec["nodeSelector"] = node_selector
    if per_device:
        spec["perDeviceNodeSelection"] = True
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": meta(name), "spec": spec}


def device_class(name: str, *expressions: str) -> dict[str, Any]:
    return {
        "apiVersion": V1,
        "kind": "DeviceClass",
        "metadata": meta(name),
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def taint_rule(
    name: str, selector: dict[str, Any] | None, taint: dict[str, Any] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["deviceSelector"] = selector
    spec["taint"] = (
        taint if taint is not None else {"key": "example.com/unhealthy", "effect": "NoSchedule"}
    )
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": meta(name),
        "spec": spec,
    }


SCHEDULING = {36: "scheduling.k8s.io/v1alpha2", 37: "scheduling.k8s.io/v1beta1"}


def podgroup(
    name: str,
    namespace: str = "default",
    *,
    min_count: int | None = 2,
    claims: Iterable[dict[str, Any]] = (),
    workload: tuple[str, str] | None = None,
    scheduled: bool | None = None,
    release: int = 37,
) -> dict[str, Any]:
    """A PodGroup as 1.36 (v1alpha2) or 1.37 (v1beta1) serves it: a gang of ``min_count``
    (None: the basic policy), claims for the group (pod_claim entries), the Workload template
    it comes from, and its scheduled condition (PodGroupScheduled, renamed in 1.37)."""
    spec: dict[str, Any] = {
        "schedulingPolicy": {"basic": {}}
        if min_count is None
        else {"gang": {"minCount": min_count}}
    }
    if workload is not None:
        if release >= 37:
            spec["workloadRef"] = {"workloadName": workload[0], "templateName": workload[1]}
        else:
            spec["podGroupTemplateRef"] = {
                "workload": {"workloadName": workload[0], "podGroupTemplateName": workload[1]}
            }
    if claims:
        spec["resourceClaims"] = list(claims)
    status: dict[str, Any] = {}
    if scheduled is not None:
        status["conditions"] = [
            {
                "type": "PodGroupInitiallyScheduled" if release >= 37 else "PodGroupScheduled",
                "status": "True" if scheduled else "False",
                "reason": "Scheduled" if scheduled else "Unschedulable",
                "message": "" if scheduled else "pod group is unschedulable",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    return {
        "apiVersion": SCHEDULING[release],
        "kind": "PodGroup",
        "metadata": meta(name, namespace, uid=f"uid-podgroup-{name}"),
        "spec": spec,
        "status": status,
    }


def workload(
    name: str, namespace: str = "default", *, templates: Iterable[str] = ("workers",), release=37
) -> dict[str, Any]:
    return {
        "apiVersion": SCHEDULING[release],
        "kind": "Workload",
        "metadata": meta(name, namespace),
        "spec": {
            "controllerRef": {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": name},
            "podGroupTemplates": [
                {"name": t, "schedulingPolicy": {"gang": {"minCount": 2}}} for t in templates
            ],
        },
    }


def member(pod_obj: dict[str, Any], group: str, created: str = "") -> dict[str, Any]:
    """The Pod, scheduled with PodGroup ``group`` (spec.schedulingGroup, 1.36 on)."""
    pod_obj["spec"]["schedulingGroup"] = {"podGroupName": group}
    if created:
        pod_obj["metadata"]["creationTimestamp"] = created
    return pod_obj


def group_claim(
    group_obj: dict[str, Any], pod_claim_name: str, name: str = "", **kwargs: Any
) -> dict[str, Any]:
    """A claim the resourceclaim controller generated for a PodGroup's template entry."""
    gmeta = group_obj["metadata"]
    ref = owner("PodGroup", gmeta["name"], gmeta["uid"])
    ref["apiVersion"] = group_obj["apiVersion"]
    return claim(
        name or f"{gmeta['name']}-{pod_claim_name}-xyz12",
        gmeta.get("namespace", "default"),
        owners=[ref],
        annotations={"resource.kubernetes.io/pod-claim-name": pod_claim_name},
        **kwargs,
    )


def group_consumer(group_obj: dict[str, Any]) -> dict[str, Any]:
    """A reservedFor entry for a PodGroup (KEP-5729)."""
    return {
        "apiGroup": "scheduling.k8s.io",
        "resource": "podgroups",
        "name": group_obj["metadata"]["name"],
        "uid": group_obj["metadata"]["uid"],
    }


def job(name: str, namespace: str = "default", *, uid: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta(name, namespace, uid=uid or f"uid-job-{name}"),
        "spec": {"parallelism": 2},
    }


def selector_in(key: str, *values: str) -> dict[str, Any]:
    """A NodeSelector with one term: ``key In values``."""
    return {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
        ]
    }


def selector_name(*names: str) -> dict[str, Any]:
    """A NodeSelector pinning node names, as the scheduler writes allocation.nodeSelector."""
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": list(names)}]}
        ]
    }


def core_event(
    kind: str, name: str, namespace: str, reason: str, last: str, message: str = ""
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta(f"{name}.{reason}.{last}", namespace or "default"),
        "involvedObject": {"kind": kind, "name": name, "namespace": namespace},
        "reason": reason,
        "message": message or reason,
        "type": "Warning",
        "lastTimestamp": last,
        "count": 1,
        "source": {"component": "default-scheduler"},
    }


def new_event(
    kind: str, name: str, namespace: str, reason: str, time: str, note: str = ""
) -> dict[str, Any]:
    """An events.k8s.io/v1 Event: ``regarding``, ``note``, ``eventTime``."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": meta(f"{name}.{reason}.{time}", namespace or "default"),
        "regarding": {"kind": kind, "name": name, "namespace": namespace},
        "reason": reason,
        "note": note or reason,
        "type": "Normal",
        "eventTime": time,
        "reportingController": "kubelet",
    }
