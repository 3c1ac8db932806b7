"""The demo cluster: six nodes, two DRA drivers, and Pods at every troubleshooting stage.

Shapes follow real manifests (``tests/fixtures/upstream``): the dra-example-driver README's
``kubectl get resourceslice`` output and demo examples, the NVIDIA driver's attribute set
(``NVIDIA_ATTRIBUTES.md``, the H100 and static-MIG slices), its DeviceClasses and quickstart specs
(gpu-test6's ``index`` selector, the bats ``gpu-cel-nomatch`` spec, the extended-resources
demo's Pod and the claim the scheduler generates for it), and the exact scheduler and
kubelet messages of dra-reference §3. A gang (a PodGroup of 1.36's scheduling.k8s.io/v1alpha2, as
in the dra-example-driver's podgroup example) has four members that each fit alone, but only
three fit together. ``build(later=False)`` is the first snapshot,
``build(later=True)`` the same cluster 30 minutes on (with a stale slice and an incomplete pool).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

CLUSTER = "demo"
SERVER_VERSION = "v1.36.1"
API_VERSIONS = ["resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"]
T0 = datetime(2026, 11, 28, 9, 0, 0)
CAPTURED = {False: T0 + timedelta(hours=1), True: T0 + timedelta(hours=1, minutes=30)}

EXAMPLE = "gpu.example.com"
NVIDIA = "gpu.nvidia.com"
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
PREEMPTION = "preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling."
UNTOLERATED = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
NO_ALLOCATION = "5 cannot allocate all claims"
PREPARE_FAILED = "Failed to prepare dynamic resources: prepare dynamic resources: "
MISSING_IMAGE = "vllm/vllm-openai:v0.99.0-does-not-exist"
# A GPU that went bad: the NVIDIA driver's health taint, when GPU 1 of the MIG node threw XID 79
# and when the operator's NoExecute DeviceTaintRules followed (minutes after T0).
XID_TAINT = "gpu.nvidia.com/xid"
XID_79, RULES_ADDED = 81, 89.5
XID_79_MESSAGE = "critical XID 79 reported by NVML"


def uid(*parts: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "dradash-demo/" + "/".join(parts)))


def ts(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(kind: str, name: str, namespace: str | None = None, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "uid": uid(kind, namespace or "", name)}
    if namespace:
        m["namespace"] = namespace
    m["creationTimestamp"] = extra.pop("created", ts(0))
    m.update(extra)
    return m


class Demo:
    def __init__(self, later: bool) -> None:
        self.later = later
        self.now = (CAPTURED[later] - T0).total_seconds() / 60
        self.objects: list[dict[str, Any]] = []
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.objects.append(obj)
        return obj

    # --- infrastructure -------------------------------------------------------------------

    def node(self, name: str, labels: dict[str, str], taints: list[dict[str, Any]] = ()) -> None:
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": meta(
                    "Node",
                    name,
                    labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **labels},
                ),
                "spec": {"taints": list(taints)} if taints else {},
                "status": {
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "KubeletReady",
                            "message": "kubelet is posting ready status",
                            "lastTransitionTime": ts(1),
                        }
                    ],
                    "nodeInfo": {"kubeletVersion": SERVER_VERSION},
                },
            }
        )

    def slice_(
        self,
        node: str,
        driver: str,
        name: str,
        devices: list[dict[str, Any]],
        generation: int = 0,
        count: int = 1,
        created: str | None = None,
    ) -> None:
        self.add(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": meta(
                    "ResourceSlice",
                    name,
                    created=created or ts(0),
                    generateName=name[: name.rfind("-") + 1],
                    generation=1,
                    ownerReferences=[
                        {
                            "apiVersion": "v1",
                            "controller": True,
                            "kind": "Node",
                            "name": node,
                            "uid": uid("Node", "", node),
                        }
                    ],
                ),
                "spec": {
                    "driver": driver,
                    "nodeName": node,
                    "pool": {"generation": generation, "name": node, "resourceSliceCount": count},
                    "devices": devices,
                },
            }
        )

    def device_class(self, name: str, expression: str, extended: str | None = None) -> None:
        spec: dict[str, Any] = {"selectors": [{"cel": {"expression": expression}}]}
        if extended:
            spec["extendedResourceName"] = extended
        self.add(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": meta("DeviceClass", name),
                "spec": spec,
            }
        )

    # --- workloads ------------------------------------------------------------------------

    def namespace(self, name: str) -> None:
        self.add({"apiVersion": "v1", "kind": "Namespace", "metadata": meta("Namespace", name)})

    def template(
        self, namespace: str, name: str, requests: list[dict[str, Any]], **spec: Any
    ) -> None:
        self.add(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaimTemplate",
                "metadata": meta("ResourceClaimTemplate", name, namespace),
                "spec": {"spec": {"devices": {"requests": requests, **spec}}},
            }
        )

    def pod(
        self,
        namespace: str,
        name: str,
        claims: dict[str, tuple[str, str]],  # pod claim name -> ("template" | "claim", name)
        *,
        created: float = 2,
        node: str | None = None,
        phase: str = "Pending",
        containers: list[dict[str, Any]] | None = None,
        conditions: list[dict[str, Any]] | None = None,
        owner: tuple[str, str] | None = None,
        image: str = "ubuntu:24.04",
        limits: dict[str, int] | None = None,
        **spec: Any,
    ) -> dict[str, Any]:
        """A Pod using ``claims``; one with ``limits`` instead asks for extended resources
        (KEP-5004) and has no spec.resourceClaims."""
        ctrs = containers or [{"name": "ctr0", "state": {}}]
        resources: dict[str, Any] = (
            {"limits": dict(limits)} if limits else {"claims": [{"name": n} for n in claims]}
        )
        pod_spec: dict[str, Any] = {
            "containers": [
                {
                    "name": c["name"],
                    "image": c.get("image", image),
                    "command": ["bash", "-c"],
                    "args": ["nvidia-smi -L; trap 'exit 0' TERM; sleep 9999 & wait"],
                    "resources": resources,
                }
                for c in ctrs
            ],
            **(
                {
                    "resourceClaims": [
                        {
                            "name": n,
                            (
                                "resourceClaimTemplateName"
                                if src == "template"
                                else "resourceClaimName"
                            ): ref,
                        }
                        for n, (src, ref) in claims.items()
                    ]
                }
                if claims or not limits
                else {}
            ),
            "restartPolicy": "Never" if owner and owner[0] == "Job" else "Always",
            "schedulerName": "default-scheduler",
            **spec,
        }
        if node:
            pod_spec["nodeName"] = node
        extra: dict[str, Any] = {"created": ts(created), "labels": {"app": name.rsplit("-", 1)[0]}}
        if owner:
            extra["ownerReferences"] = [
                {
                    "apiVersion": "batch/v1" if owner[0] == "Job" else "apps/v1",
                    "kind": owner[0],
                    "name": owner[1],
                    "uid": uid(owner[0], namespace, owner[1]),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ]
        status: dict[str, Any] = {"phase": phase, "qosClass": "BestEffort"}
        if conditions is not None:
            status["conditions"] = conditions
        if node and phase != "Pending" or any(c.get("state") for c in ctrs):
            status["startTime"] = ts(created + 0.2)
            status["containerStatuses"] = [
                {
                    "name": c["name"],
                    "image": c.get("image", image),
                    "imageID": "",
                    "ready": c.get("ready", False),
                    "restartCount": c.get("restarts", 0),
                    "started": c.get("ready", False),
                    "state": c.get("state") or {"waiting": {"reason": "ContainerCreating"}},
                    **({"lastState": c["last"]} if c.get("last") else {}),
                    **({"allocatedResourcesStatus": c["health"]} if c.get("health") else {}),
                }
                for c in ctrs
            ]
        obj = self.add(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": meta("Pod", name, namespace, **extra),
                "spec": pod_spec,
                "status": status,
            }
        )
        self.pods[(namespace, name)] = obj
        return obj

    def generated_claim(
        self,
        pod: dict[str, Any],
        pod_claim: str,
        suffix: str,
        requests: list[dict[str, Any]],
        results: list[tuple[str, str, str, str]] | None = None,  # (request, driver, pool, device)
        reserved: bool = True,
        **spec: Any,
    ) -> str:
        """The claim the resourceclaim controller makes from a template, recorded in the Pod."""
        ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        name = f"{pod_name}-{pod_claim}-{suffix}"
        pod["status"].setdefault("resourceClaimStatuses", []).append(
            {"name": pod_claim, "resourceClaimName": name}
        )
        self.claim(
            ns,
            name,
            requests,
            results,
            consumers=[pod] if reserved and results else [],
            owner=pod,
            annotations={"resource.kubernetes.io/pod-claim-name": pod_claim},
            created=pod["metadata"]["creationTimestamp"],
            **spec,
        )
        return name

    def extended_claim(
        self,
        pod: dict[str, Any],
        suffix: str,
        resource: str,
        device_class: str,
        result: tuple[str, str, str],  # (driver, pool, device)
    ) -> str:
        """The claim kube-scheduler creates for a Pod's extended resources when it binds it
        (one container, one resource, in the shape of the NVIDIA driver's extended-resources
        demo), recorded in the Pod's status.extendedResourceClaimStatus."""
        ns, pod_name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        name = f"{pod_name}-extended-resources-{suffix}"
        (container,) = pod["spec"]["containers"]
        count = container["resources"]["limits"][resource]
        request = "container-0-request-0"
        pod["status"]["extendedResourceClaimStatus"] = {
            "resourceClaimName": name,
            "requestMappings": [
                {
                    "containerName": container["name"],
                    "resourceName": resource,
                    "requestName": request,
                }
            ],
        }
        self.claim(
            ns,
            name,
            [exact(request, device_class, count=count)],
            [(request, *result)],
            consumers=[pod],
            owner=pod,
            annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
            created=pod["metadata"]["creationTimestamp"],
            generate_name=f"{pod_name}-extended-resources-",
        )
        return name

    def claim(
        self,
        namespace: str,
        name: str,
        requests: list[dict[str, Any]],
        results: list[tuple[str, str, str, str]] | None = None,
        *,
        consumers: list[dict[str, Any]] = (),
        owner: dict[str, Any] | None = None,
        annotations: dict[str, str] | None = None,
        created: str | None = None,
        generate_name: str | None = None,
        **spec: Any,
    ) -> None:
        extra: dict[str, Any] = {"created": created or ts(1)}
        if generate_name:
            extra["generateName"] = generate_name
        if annotations:
            extra["annotations"] = annotations
        if owner:
            extra["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ]
        status: dict[str, Any] = {}
        if results:
            extra["finalizers"] = ["resource.kubernetes.io/delete-protection"]
            nodes = sorted({pool for _, _, pool, _ in results})
            # The allocator copies a request's tolerations into each of its results.
            tolerations = {
                req["name"]: req["exactly"]["tolerations"]
                for req in requests
                if (req.get("exactly") or {}).get("tolerations")
            }
            status["allocation"] = {
                "devices": {
                    "results": [
                        {"request": r, "driver": d, "pool": p, "device": dev}
                        | ({"tolerations": tolerations[r]} if r in tolerations else {})
                        for r, d, p, dev in results
                    ]
                },
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": nodes}
                            ]
                        }
                    ]
                },
            }
            if consumers:
                status["reservedFor"] = [
                    {"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]}
                    for p in consumers
                ]
        obj: dict[str, Any] = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": meta("ResourceClaim", name, namespace, **extra),
            "spec": {"devices": {"requests": requests, **spec}},
        }
        if status:
            obj["status"] = status
        self.add(obj)

    def event(
        self,
        obj: dict[str, Any],
        reason: str,
        message: str,
        *,
        type_: str = "Normal",
        source: str = "default-scheduler",
        first: float = 2,
        last: float | None = None,
        count: int = 1,
        host: str | None = None,
    ) -> None:
        m = obj["metadata"]
        ns = m.get("namespace", "default")
        name = f"{m['name']}.{uid('Event', ns, m['name'], reason, message)[:16].replace('-', '')}"
        self.add(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": meta("Event", name, ns, created=ts(first)),
                "involvedObject": {
                    "apiVersion": obj["apiVersion"],
                    "kind": obj["kind"],
                    "name": m["name"],
                    "namespace": ns,
                    "uid": m["uid"],
                },
                "reason": reason,
                "message": message,
                "type": type_,
                "source": {"component": source, **({"host": host} if host else {})},
                "firstTimestamp": ts(first),
                "lastTimestamp": ts(last if last is not None else first),
                "count": count,
                "reportingComponent": source,
            }
        )

    def scheduled(self, pod: dict[str, Any], node: str, minute: float) -> None:
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        self.event(pod, "Scheduled", f"Successfully assigned {ns}/{name} to {node}", first=minute)


# --- devices in the shapes the drivers publish -----------------------------------------------


def example_gpus(node: str) -> list[dict[str, Any]]:
    """dra-example-driver mock GPUs, as in its README's `kubectl get resourceslice -o yaml`."""
    return [
        {
            "name": f"gpu-{i}",
            "attributes": {
                "driverVersion": {"version": "1.0.0"},
                "index": {"int": i},
                "model": {"string": "LATEST-GPU-MODEL"},
                "uuid": {"string": f"gpu-{uid(node, str(i))[:23]}"},
            },
            "capacity": {"memory": {"value": "80Gi"}},
        }
        for i in range(8)
    ]


def nvidia_common(
    node: str, product: str, arch: str, cc: str, driver: str, cuda: str, i: int
) -> dict[str, Any]:
    bus = f"0000:{0x1B + 0x20 * i:02x}:00.0"
    return {
        "architecture": {"string": arch},
        "brand": {"string": "Nvidia"},
        "cudaComputeCapability": {"version": cc},
        "cudaDriverVersion": {"version": cuda},
        "driverVersion": {"version": driver},
        "productName": {"string": product},
        "resource.kubernetes.io/numaNode": {"int": 0 if i < 4 else 1},
        "resource.kubernetes.io/pciBusID": {"string": bus},
        "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{0x1A + 0x20 * i:02x}"},
    }


def nvidia_full_gpus(
    node: str,
    count: int,
    product: str,
    memory: str,
    arch: str,
    cc: str,
    driver: str = "570.158.1",
    cuda: str = "12.8.0",
) -> list[dict[str, Any]]:
    return [
        {
            "name": f"gpu-{i}",
            "attributes": {
                "addressingMode": {"string": "HMM"},
                **nvidia_common(node, product, arch, cc, driver, cuda, i),
                "type": {"string": "gpu"},
                "uuid": {"string": f"GPU-{uid(node, 'gpu', str(i))}"},
            },
            "capacity": {"memory": {"value": memory}},
        }
        for i in range(count)
    ]


# Real H100 80GB HBM3 MIG profiles: (profile, GI id, memory, SMs, CE, DEC, ENC, JPEG, OFA).
MIG_1G = ("1g.10gb", 19, "9984Mi", 16, 1, 1, 0, 1, 0)
MIG_3G = ("3g.40gb", 9, "40448Mi", 60, 3, 3, 0, 3, 0)


def nvidia_mig_devices(node: str, taint_gpu0_slice: bool) -> list[dict[str, Any]]:
    """Static MIG on GPU 0 (7 × 1g.10gb) and GPU 1 (2 × 3g.40gb), as in the SYNTH slice.

    ``taint_gpu0_slice``: the driver's health taints half an hour on (its NVML monitor,
    dra-driver-nvidia-gpu's GPU health checking guide): XID 43 on one of GPU 0's slices, and
    XID 79 (fatal: the GPU fell off the bus) on both devices of GPU 1, NoSchedule."""
    devices = []
    layout = [(0, MIG_1G, p, 1) for p in range(7)] + [(1, MIG_3G, p, 4) for p in (0, 4)]
    for gpu, (profile, gi, mem, sm, ce, dec, enc, jpeg, ofa), start, size in layout:
        name = f"gpu-{gpu}-mig-{profile.replace('.', '')}-{gi}-{start}"
        device: dict[str, Any] = {
            "name": name,
            "attributes": {
                "addressingMode": {"string": "HMM"},
                **nvidia_common(
                    node, "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "570.158.1", "12.8.0", gpu
                ),
                "parentUUID": {"string": f"GPU-{uid(node, 'gpu', str(gpu))}"},
                "profile": {"string": profile},
                "type": {"string": "mig"},
                "uuid": {"string": f"MIG-{uid(node, name)}"},
            },
            "capacity": {
                "copyEngines": {"value": str(ce)},
                "decoders": {"value": str(dec)},
                "encoders": {"value": str(enc)},
                "jpegEngines": {"value": str(jpeg)},
                "memory": {"value": mem},
                **{f"memorySlice{s}": {"value": "1"} for s in range(start, start + size)},
                "multiprocessors": {"value": str(sm)},
                "ofaEngines": {"value": str(ofa)},
            },
        }
        if taint_gpu0_slice and name == "gpu-0-mig-1g10gb-19-6":
            device["taints"] = [
                {
                    "key": XID_TAINT,
                    "value": "43",
                    "effect": "NoSchedule",
                    "timeAdded": ts(75),
                }
            ]
        if taint_gpu0_slice and gpu == 1:
            device["taints"] = [
                {
                    "key": XID_TAINT,
                    "value": "79",
                    "effect": "NoSchedule",
                    "timeAdded": ts(XID_79),
                }
            ]
        devices.append(device)
    return devices


def exact(
    name: str, device_class: str, *selectors: str, count: int | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"deviceClassName": device_class}
    if selectors:
        spec["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if count is not None:
        spec["allocationMode"] = "ExactCount"
        spec["count"] = count
    return {"name": name, "exactly": spec}


def health(
    namespace: str, claim: str, pod_claim: str, device: str, unhealthy: bool
) -> list[dict[str, Any]]:
    """A container's allocatedResourcesStatus for one NVIDIA device (KEP-4680, as the kubelet
    reports what the driver's health service says): named after the Pod's claim, the device by
    the CDI id the driver gave it, and the driver's message once a fatal XID tainted it."""
    cdi = f"k8s.gpu.nvidia.com/claim={uid('ResourceClaim', namespace, claim)}-{device}"
    resource: dict[str, Any] = {"resourceID": cdi, "health": "Healthy"}
    if unhealthy:
        resource.update(health="Unhealthy", message=XID_79_MESSAGE)
    return [{"name": f"claim:{pod_claim}", "resources": [resource]}]


def taint_rule(device: str, pending: bool) -> dict[str, Any]:
    """A NoExecute DeviceTaintRule on one device of the MIG node, at resource.k8s.io/v1beta2
    (where 1.36 serves DeviceTaintRules; v1 from 1.37), with the status the device taint
    eviction controller writes: EvictionInProgress while a Pod waits out its toleration."""
    name = f"xid-79-{device}"
    condition = (
        ("True", "PodsPendingEviction", "1 pod needs to be evicted in 1 namespace.")
        if pending
        else ("False", "Completed", "1 pod evicted since starting the controller.")
    )
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": meta(
            "DeviceTaintRule",
            name,
            created=ts(RULES_ADDED),
            generation=1,
            labels={"remediation.example.com/reason": "xid-79"},
        ),
        "spec": {
            "deviceSelector": {"driver": NVIDIA, "pool": "h100-mig-node-01", "device": device},
            "taint": {
                "key": XID_TAINT,
                "value": "79",
                "effect": "NoExecute",
                "timeAdded": ts(RULES_ADDED),
            },
        },
        "status": {
            "conditions": [
                {
                    "type": "EvictionInProgress",
                    "status": condition[0],
                    "reason": condition[1],
                    "message": condition[2],
                    "observedGeneration": 1,
                    "lastTransitionTime": ts(RULES_ADDED + (0 if pending else 0.25)),
                }
            ]
        },
    }


def running(name: str = "ctr0", minute: float = 3, **extra: Any) -> dict[str, Any]:
    return {"name": name, "ready": True, "state": {"running": {"startedAt": ts(minute)}}, **extra}


def conds(
    *, scheduled: bool, ready: bool = False, reason: str = "", message: str = "", minute: float = 2
) -> list[dict[str, Any]]:
    if not scheduled:
        return [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": reason or "Unschedulable",
                "message": message,
                "lastTransitionTime": ts(minute),
            }
        ]
    r = "True" if ready else "False"
    out = [
        {"type": "PodReadyToStartContainers", "status": r, "lastTransitionTime": ts(minute + 0.5)},
        {"type": "Initialized", "status": "True", "lastTransitionTime": ts(minute)},
        {
            "type": "Ready",
            "status": r,
            "lastTransitionTime": ts(minute + 1),
            **(
                {}
                if ready
                else {
                    "reason": "ContainersNotReady",
                    "message": "containers with unready status: [ctr0]",
                }
            ),
        },
        {"type": "ContainersReady", "status": r, "lastTransitionTime": ts(minute + 1)},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(minute)},
    ]
    return out


# --- the cluster -----------------------------------------------------------------------------


def build(later: bool = False) -> list[dict[str, Any]]:
    d = Demo(later)
    w1, w2 = "gpu-example-worker-1", "gpu-example-worker-2"
    h100, mig, a100 = "h100-node-01", "h100-mig-node-01", "a100-node-01"

    # Nodes, slices and classes.
    d.node("control-plane", {"node-role.kubernetes.io/control-plane": ""}, [CONTROL_PLANE_TAINT])
    for n in (w1, w2):
        d.node(n, {"example.com/gpu.present": "true"})
        d.slice_(n, EXAMPLE, f"{n}-{EXAMPLE}-{uid(n)[:5]}", example_gpus(n))
    gpu_labels = {"nvidia.com/gpu.present": "true"}
    d.node(h100, {**gpu_labels, "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"})
    d.slice_(
        h100,
        NVIDIA,
        f"00000-{NVIDIA}-{h100}-gdnk7",
        nvidia_full_gpus(h100, 8, "NVIDIA H100 80GB HBM3", "81559Mi", "Hopper", "9.0.0"),
    )
    d.node(mig, {**gpu_labels, "nvidia.com/mig.config": "all-balanced"})
    # The MIG node's pool: one slice at generation 1. Half an hour on, a MIG reconfiguration
    # has published generation 2 in a new slice, and the old slice lingers at generation 1,
    # unchanged (the allocator ignores it; the driver should have deleted it).
    d.slice_(mig, NVIDIA, f"00000-{NVIDIA}-{mig}-8kq2d", nvidia_mig_devices(mig, False), 1)
    if later:
        d.slice_(
            mig,
            NVIDIA,
            f"00000-{NVIDIA}-{mig}-ftq9x",
            nvidia_mig_devices(mig, True),
            generation=2,
            created=ts(75),  # 10:15, between the two snapshots
        )
        # And a third example-driver node has joined, its pool published one slice of two so
        # far (incomplete: skipped by the allocator from 1.35 on).
        w3 = "gpu-example-worker-3"
        d.node(w3, {"example.com/gpu.present": "true"})
        d.slice_(w3, EXAMPLE, f"{w3}-{EXAMPLE}-{uid(w3)[:5]}", example_gpus(w3)[:4], count=2)
    d.node(a100, {**gpu_labels, "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"})
    d.slice_(
        a100,
        NVIDIA,
        f"00000-{NVIDIA}-{a100}-p4x7q",
        nvidia_full_gpus(
            a100,
            4,
            "NVIDIA A100-SXM4-40GB",
            "40Gi",
            "Ampere",
            "8.0.0",
            driver="580.95.5",
            cuda="13.0.0",
        ),
    )
    d.device_class(EXAMPLE, f"device.driver == '{EXAMPLE}'")
    d.device_class(
        NVIDIA,
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
        "nvidia.com/gpu",
    )
    d.device_class(
        "mig.nvidia.com",
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    )
    d.add(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": meta("PriorityClass", "research-high"),
            "value": 100000,
            "description": "Interactive research workloads",
        }
    )

    one_example = [exact("gpu", EXAMPLE)]

    # healthy: dra-example-driver basic-resourceclaimtemplate (two Pods, one GPU each).
    ns = "gpu-test1"
    d.namespace(ns)
    d.template(ns, "single-gpu", one_example)
    for i, suffix in ((0, "x7k2p"), (1, "m4q9s")):
        p = d.pod(
            ns,
            f"pod{i}",
            {"gpu": ("template", "single-gpu")},
            node=w1,
            phase="Running",
            containers=[running()],
            conditions=conds(scheduled=True, ready=True),
        )
        d.generated_claim(p, "gpu", suffix, one_example, [("gpu", EXAMPLE, w1, f"gpu-{i}")])
        d.scheduled(p, w1, 2)
        d.event(p, "Started", "Started container ctr0", source="kubelet", host=w1, first=3)

    # healthy: one claim shared by two Pods (basic-shared-claim-across-pods) ...
    ns = "gpu-test2"
    d.namespace(ns)
    shared = [
        d.pod(
            ns,
            f"pod{i}",
            {"gpu": ("claim", "single-gpu")},
            node=w1,
            phase="Running",
            containers=[running()],
            conditions=conds(scheduled=True, ready=True),
        )
        for i in (0, 1)
    ]
    d.claim(ns, "single-gpu", one_example, [("gpu", EXAMPLE, w1, "gpu-2")], consumers=shared)
    # ... and a third Pod that wants it on another node: allocated-not-bound (node-conflict).
    p = d.pod(
        ns,
        "pod2",
        {"gpu": ("claim", "single-gpu")},
        created=20,
        nodeSelector={"kubernetes.io/hostname": w2},
        conditions=conds(
            scheduled=False,
            minute=20,
            message=(
                f"0/6 nodes are available: {UNTOLERATED}, "
                "1 resourceclaim not available on the node, "
                f"4 node(s) didn't match Pod's node affinity/selector. {PREEMPTION}"
            ),
        ),
    )
    d.event(
        p,
        "FailedScheduling",
        p["status"]["conditions"][0]["message"],
        type_="Warning",
        first=20,
        last=d.now - 1,
        count=14 if later else 9,
    )

    # healthy: a CEL selector on attributes and capacity (dra-example-driver cel-selector).
    ns = "cel-selector"
    d.namespace(ns)
    cel_req = [
        exact(
            "gpu",
            EXAMPLE,
            "device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'",
            "device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0",
        )
    ]
    d.template(ns, "single-gpu-cel", cel_req)
    p = d.pod(
        ns,
        "pod0",
        {"gpu": ("template", "single-gpu-cel")},
        node=w1,
        phase="Running",
        containers=[running()],
        conditions=conds(scheduled=True, ready=True),
    )
    d.generated_claim(p, "gpu", "b8w2d", cel_req, [("gpu", EXAMPLE, w1, "gpu-3")])

    # claim-unallocated (devices-exhausted): a render Job wants 2 GPUs per Pod, 7 Pods at once;
    # the 16 example GPUs run out after the sixth.
    ns = "render"
    d.namespace(ns)
    two = [exact("gpus", EXAMPLE, count=2)]
    d.template(ns, "two-gpus", two)
    d.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta("Job", "render-farm", ns, created=ts(10)),
            "spec": {
                "parallelism": 7,
                "completions": 7,
                "backoffLimit": 2,
                "template": {
                    "spec": {
                        "resourceClaims": [
                            {"name": "gpus", "resourceClaimTemplateName": "two-gpus"}
                        ]
                    }
                },
            },
            "status": {"active": 7, "startTime": ts(10)},
        }
    )
    free = [(w1, i) for i in range(4, 8)] + [(w2, i) for i in range(8)]
    for i in range(7):
        name = f"render-farm-{i}-{uid('rf', str(i))[:5]}"
        if i < 6:
            (n1, g1), (n2, g2) = free[2 * i], free[2 * i + 1]
            p = d.pod(
                ns,
                name,
                {"gpus": ("template", "two-gpus")},
                created=10,
                node=n1,
                phase="Running",
                owner=("Job", "render-farm"),
                image="blender/render:4.2",
                containers=[running(minute=11)],
                conditions=conds(scheduled=True, ready=True, minute=10),
            )
            d.generated_claim(
                p,
                "gpus",
                uid("rfc", str(i))[:5],
                two,
                [("gpus", EXAMPLE, n1, f"gpu-{g1}"), ("gpus", EXAMPLE, n2, f"gpu-{g2}")],
            )
        else:
            msg = f"0/6 nodes are available: {UNTOLERATED}, {NO_ALLOCATION}. {PREEMPTION}"
            p = d.pod(
                ns,
                name,
                {"gpus": ("template", "two-gpus")},
                created=10,
                owner=("Job", "render-farm"),
                image="blender/render:4.2",
                conditions=conds(scheduled=False, message=msg, minute=10),
            )
            d.generated_claim(p, "gpus", uid("rfc", str(i))[:5], two)
            d.event(
                p,
                "FailedScheduling",
                msg,
                type_="Warning",
                first=10,
                last=d.now - 1,
                count=31 if later else 20,
            )

    # claim-unallocated (selector-error): gpu-test6 still selects on `index`, which the NVIDIA
    # driver stopped publishing in v25.8; on the A100 node that is a CEL runtime error.
    ns = "gpu-test6"
    d.namespace(ns)
    a100_sel = [
        exact(
            "gpu",
            NVIDIA,
            (
                "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')\n&&\n"
                "(device.attributes['gpu.nvidia.com'].index == 0 ||\n"
                "device.attributes['gpu.nvidia.com'].index == 2 ||\n"
                "device.attributes['gpu.nvidia.com'].index == 4 ||\n"
                "device.attributes['gpu.nvidia.com'].index == 6)\n"
            ),
        )
    ]
    d.template(ns, "a100", a100_sel)
    p = d.pod(
        ns,
        "pod-5c8d7b9f4-qx2lm",
        {"gpu": ("template", "a100")},
        created=15,
        owner=("ReplicaSet", "pod-5c8d7b9f4"),
    )
    claim = d.generated_claim(p, "gpu", "t9h6c", a100_sel)
    msg = (
        f'running "DynamicResources" filter plugin: claim {ns}/{claim}: selector #0: '
        "CEL runtime error: no such key: index"
    )
    p["status"]["conditions"] = conds(
        scheduled=False, reason="SchedulerError", message=msg, minute=15
    )
    d.event(
        p,
        "FailedScheduling",
        msg,
        type_="Warning",
        first=15,
        last=d.now - 1,
        count=12 if later else 8,
    )

    # claim-unallocated (no-matching-devices): a product no node has (bats gpu-cel-nomatch).
    ns = "llm-eval"
    d.namespace(ns)
    h200 = [
        exact("gpu", NVIDIA, 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"')
    ]
    d.claim(ns, "h200-eval", h200, created=ts(25))
    p = d.pod(
        ns,
        "eval-h200",
        {"gpu": ("claim", "h200-eval")},
        created=25,
        image="vllm/vllm-openai:v0.11.0",
    )
    msg = f"0/6 nodes are available: {UNTOLERATED}, {NO_ALLOCATION}. {PREEMPTION}"
    p["status"]["conditions"] = conds(scheduled=False, message=msg, minute=25)
    d.event(p, "FailedScheduling", msg, type_="Warning", first=25, last=d.now - 2, count=6)

    # claim-unallocated (class-missing): a template for an AMD class that does not exist here.
    ns = "team-amd"
    d.namespace(ns)
    amd = [exact("gpu", "gpu.amd.com")]
    d.template(ns, "mi300x", amd)
    p = d.pod(
        ns,
        "rocm-smoke",
        {"gpu": ("template", "mi300x")},
        created=30,
        image="rocm/rocm-terminal:6.4",
    )
    d.generated_claim(p, "gpu", "v2n8r", amd)
    msg = "0/6 nodes are available: request gpu: device class gpu.amd.com does not exist."
    p["status"]["conditions"] = conds(scheduled=False, message=msg, minute=30)
    d.event(p, "FailedScheduling", msg, type_="Warning", first=30, last=d.now - 3, count=5)

    # claim-unallocated (gang-does-not-fit): a JobSet's four training workers, one A100 each,
    # scheduled as one gang (minCount 4). Each would fit alone, but the A100 node has three
    # GPUs free (cuda-smoke holds the fourth): the scheduler places three, the fourth cannot
    # allocate its claim, and none binds. The demo runs 1.36 with the alpha gates
    # (GenericWorkload, GangScheduling): scheduling.k8s.io/v1alpha2, whose PodGroup names its
    # template in spec.podGroupTemplateRef and reports PodGroupScheduled (v1beta1, 1.37:
    # spec.workloadRef and PodGroupInitiallyScheduled).
    ns = "llm-train"
    d.namespace(ns)
    gang_api = "scheduling.k8s.io/v1alpha2"
    a100_gang = [
        exact(
            "gpu",
            NVIDIA,
            "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'",
        )
    ]
    d.template(ns, "a100-single", a100_gang)
    gang = {"gang": {"minCount": 4}}
    jobset = {"apiGroup": "jobset.x-k8s.io", "kind": "JobSet", "name": "llm-train"}
    d.add(
        {
            "apiVersion": gang_api,
            "kind": "Workload",
            "metadata": meta("Workload", "llm-train", ns, created=ts(42)),
            "spec": {
                "controllerRef": jobset,
                "podGroupTemplates": [{"name": "workers", "schedulingPolicy": gang}],
            },
        }
    )
    d.add(
        {
            "apiVersion": gang_api,
            "kind": "PodGroup",
            "metadata": meta("PodGroup", "llm-train", ns, created=ts(42), generation=1),
            "spec": {
                "podGroupTemplateRef": {
                    "workload": {"workloadName": "llm-train", "podGroupTemplateName": "workers"}
                },
                "schedulingPolicy": gang,
            },
            "status": {
                "conditions": [
                    {
                        "type": "PodGroupScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "pod group is unschedulable",
                        "observedGeneration": 1,
                        "lastTransitionTime": ts(42),
                    }
                ]
            },
        }
    )
    workers = "llm-train-workers-0"
    group_ref = {"podGroupName": "llm-train"}
    d.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta(
                "Job",
                workers,
                ns,
                created=ts(42),
                labels={
                    "jobset.sigs.k8s.io/jobset-name": "llm-train",
                    "jobset.sigs.k8s.io/replicatedjob-name": "workers",
                },
                ownerReferences=[
                    {
                        "apiVersion": "jobset.x-k8s.io/v1alpha2",
                        "kind": "JobSet",
                        "name": "llm-train",
                        "uid": uid("JobSet", ns, "llm-train"),
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            ),
            "spec": {
                "parallelism": 4,
                "completions": 4,
                "completionMode": "Indexed",
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        "schedulingGroup": group_ref,
                        "resourceClaims": [
                            {"name": "gpu", "resourceClaimTemplateName": "a100-single"}
                        ],
                    }
                },
            },
            "status": {"active": 4, "startTime": ts(42)},
        }
    )
    for i in range(4):
        p = d.pod(
            ns,
            f"{workers}-{i}-{uid('llm', str(i))[:5]}",
            {"gpu": ("template", "a100-single")},
            created=42,
            owner=("Job", workers),
            image="nvcr.io/nvidia/pytorch:25.09-py3",
            schedulingGroup=group_ref,
        )
        d.generated_claim(p, "gpu", uid("llmc", str(i))[:5], a100_gang)
        # The three the pod group cycle placed wait at Permit for the fourth; the fourth has
        # its own FitError. The scheduler retries the gang as a whole.
        msg = (
            f"0/6 nodes are available: {UNTOLERATED}, {NO_ALLOCATION}. {PREEMPTION}"
            if i == 3
            else "pod group is unschedulable, waiting for minCount pods from a gang to be scheduled"
        )
        p["status"]["conditions"] = conds(scheduled=False, message=msg, minute=42)
        d.event(
            p,
            "FailedScheduling",
            msg,
            type_="Warning",
            first=42,
            last=d.now - 1,
            count=16 if later else 10,
        )

    # pod-pending: template missing (resourceclaim controller event), claim not created yet,
    # explicit claim missing, scheduling gate.
    ns = "notebooks"
    d.namespace(ns)
    p = d.pod(
        ns,
        "notebook-0",
        {"gpu": ("template", "gpu-notebook")},
        created=40,
        image="jupyter/base-notebook",
    )
    d.event(
        p,
        "FailedResourceClaimCreation",
        'PodResourceClaim gpu: resource claim template "gpu-notebook": '
        'resourceclaimtemplate.resource.k8s.io "gpu-notebook" not found',
        type_="Warning",
        source="resource_claim",
        first=40,
        last=d.now - 1,
        count=11,
    )
    ns = "batch"
    d.namespace(ns)
    h100_one = [
        exact(
            "gpu",
            NVIDIA,
            "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",
        )
    ]
    d.template(ns, "h100-single", h100_one)
    if not later:
        d.pod(
            ns,
            "etl-worker-7",
            {"gpu": ("template", "h100-single")},
            created=59.9,
            image="python:3.12",
        )
    else:
        p = d.pod(
            ns,
            "etl-worker-7",
            {"gpu": ("template", "h100-single")},
            created=59.9,
            node=h100,
            phase="Running",
            image="python:3.12",
            containers=[running(minute=61)],
            conditions=conds(scheduled=True, ready=True, minute=60),
        )
        d.generated_claim(p, "gpu", "k3f7w", h100_one, [("gpu", NVIDIA, h100, "gpu-5")])
        d.scheduled(p, h100, 60)
    ns = "team-b"
    d.namespace(ns)
    d.pod(ns, "shared-consumer", {"gpu": ("claim", "shared-gpu")}, created=45)
    ns = "queued"
    d.namespace(ns)
    d.template(ns, "single-h100", [exact("gpu", NVIDIA)])
    d.pod(
        ns,
        "sweep-3",
        {"gpu": ("template", "single-h100")},
        created=50,
        schedulingGates=[{"name": "kueue.x-k8s.io/admission"}],
        conditions=conds(
            scheduled=False,
            reason="SchedulingGated",
            message="Scheduling is blocked due to non-empty scheduling gates",
            minute=50,
        ),
    )

    # healthy: two aligned H100s for inference (matchAttribute on the PCIe root), one MIG slice.
    ns = "inference"
    d.namespace(ns)
    pair = [exact("gpus", NVIDIA, count=2)]
    pair_constraints = {
        "constraints": [{"requests": ["gpus"], "matchAttribute": "resource.kubernetes.io/numaNode"}]
    }
    d.template(ns, "h100-pair", pair, **pair_constraints)
    p = d.pod(
        ns,
        "vllm-0",
        {"gpus": ("template", "h100-pair")},
        node=h100,
        phase="Running",
        image="vllm/vllm-openai:v0.11.0",
        owner=("StatefulSet", "vllm"),
        containers=[running()],
        conditions=conds(scheduled=True, ready=True),
    )
    d.generated_claim(
        p,
        "gpus",
        "q8z4m",
        pair,
        [("gpus", NVIDIA, h100, "gpu-0"), ("gpus", NVIDIA, h100, "gpu-1")],
        **pair_constraints,
    )
    mig_one = [
        exact("mig", "mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")
    ]
    d.template(ns, "mig-1g", mig_one)
    p = d.pod(
        ns,
        "embedder-0",
        {"mig": ("template", "mig-1g")},
        node=mig,
        phase="Running",
        image="ghcr.io/huggingface/text-embeddings-inference:1.8",
        containers=[running()],
        conditions=conds(scheduled=True, ready=True),
    )
    d.generated_claim(p, "mig", "f5s1t", mig_one, [("mig", NVIDIA, mig, "gpu-0-mig-1g10gb-19-0")])

    # A GPU that went bad: GPU 1 of the MIG node, split into two 3g.40gb devices. A fine-tuning
    # Pod runs on one (its claim tolerates the xid taint for an hour: time for a checkpoint), an
    # evaluation Pod on the other, both reported Healthy. Half an hour on (later), GPU 1 has
    # thrown XID 79: the driver has tainted both devices NoSchedule in its slice and reports
    # them Unhealthy, which the kubelet shows in each container's allocatedResourcesStatus (no
    # component records an event for that). The operator's remediation has added a NoExecute
    # DeviceTaintRule per device; the device taint eviction controller has evicted the
    # evaluation Pod (DisruptionTarget, Failed, terminating: its Job's finalizer still holds
    # it) and will evict the fine-tuning Pod when its toleration runs out.
    # workload-failing: device-unhealthy (llama-ft) and evicted-by-device-taint (llama-eval).
    ns = "finetune"
    d.namespace(ns)
    mig_3g = "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"
    ckpt = exact("gpu", "mig.nvidia.com", mig_3g)
    ckpt["exactly"]["tolerations"] = [
        {"key": XID_TAINT, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 3600}
    ]
    d.template(ns, "mig-3g-checkpointed", [ckpt])
    d.template(ns, "mig-3g", [exact("gpu", "mig.nvidia.com", mig_3g)])
    sick = later  # GPU 1 threw XID 79 between the snapshots
    for job, template, suffix, claim_suffix, device, created in (
        ("llama-ft", "mig-3g-checkpointed", "x8k2q", "c7t4n", "gpu-1-mig-3g40gb-9-0", 12),
        ("llama-eval", "mig-3g", "p3m7d", "j2w6r", "gpu-1-mig-3g40gb-9-4", 13),
    ):
        name = f"{job}-{suffix}"
        claim = f"{name}-gpu-{claim_suffix}"
        evicted = sick and job == "llama-eval"
        ctr = running(minute=created + 1, restarts=0)
        if evicted:
            ctr = {
                "name": "ctr0",
                "state": {
                    "terminated": {
                        "exitCode": 143,
                        "reason": "Error",
                        "startedAt": ts(created + 1),
                        "finishedAt": ts(RULES_ADDED + 0.1),
                    }
                },
            }
        ctr["health"] = health(ns, claim, "gpu", device, sick)
        conditions = conds(scheduled=True, ready=not evicted, minute=created)
        if evicted:
            conditions.append(
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "DeletionByDeviceTaintManager",
                    "message": "Device Taint manager: deleting due to NoExecute taint",
                    "lastTransitionTime": ts(RULES_ADDED),
                }
            )
        p = d.pod(
            ns,
            name,
            {"gpu": ("template", template)},
            created=created,
            node=mig,
            phase="Failed" if evicted else "Running",
            owner=("Job", job),
            image="nvcr.io/nvidia/pytorch:25.09-py3",
            containers=[ctr],
            conditions=conditions,
        )
        if evicted:
            p["metadata"].update(
                deletionTimestamp=ts(RULES_ADDED + 0.5),  # asked at 10:29:30, 30 s of grace
                deletionGracePeriodSeconds=30,
                finalizers=["batch.kubernetes.io/job-tracking"],
            )
        requests = [ckpt] if job == "llama-ft" else [exact("gpu", "mig.nvidia.com", mig_3g)]
        d.generated_claim(p, "gpu", claim_suffix, requests, [("gpu", NVIDIA, mig, device)])
        d.scheduled(p, mig, created)
        if evicted:
            d.event(
                p,
                "DeviceTaintManagerEviction",
                "Marking for deletion",
                source="device-taint-eviction-controller",
                first=RULES_ADDED,
            )
            d.event(
                p,
                "Killing",
                "Stopping container ctr0",
                source="kubelet",
                host=mig,
                first=RULES_ADDED,
            )
        if sick:
            d.add(taint_rule(device, pending=job == "llama-ft"))

    # Extended resources backed by DRA (KEP-5004), as the NVIDIA driver's extended-resources
    # demo (gpu-full.yaml) asks for them: no spec.resourceClaims, nvidia.com/gpu in the
    # container's limits, which the gpu.nvidia.com class maps. healthy: one GPU through the
    # claim the scheduler created when it bound the Pod, allocated and reserved for it.
    ns = "extended-resources"
    d.namespace(ns)
    cuda = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0"
    gpu_toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    p = d.pod(
        ns,
        "gpu-full-pod",
        {},
        created=6,
        node=h100,
        phase="Running",
        image=cuda,
        containers=[running("cuda-container", minute=7)],
        conditions=conds(scheduled=True, ready=True, minute=6),
        limits={"nvidia.com/gpu": 1},
        restartPolicy="Never",
        tolerations=gpu_toleration,
    )
    d.extended_claim(p, "x7k9m", "nvidia.com/gpu", NVIDIA, (NVIDIA, h100, "gpu-6"))
    d.scheduled(p, h100, 6)
    # claim-unallocated (insufficient-count): four GPUs on one node, where at most three are free
    # (the A100 node's; the H100 node's others are in use).
    p = d.pod(
        ns,
        "cuda-train-4gpu",
        {},
        created=55,
        image=cuda,
        containers=[{"name": "cuda-container", "state": {}}],
        limits={"nvidia.com/gpu": 4},
        restartPolicy="Never",
        tolerations=gpu_toleration,
    )
    msg = f"0/6 nodes are available: {UNTOLERATED}, {NO_ALLOCATION}. {PREEMPTION}"
    p["status"]["conditions"] = conds(scheduled=False, message=msg, minute=55)
    d.event(
        p,
        "FailedScheduling",
        msg,
        type_="Warning",
        first=55,
        last=d.now - 1,
        count=7 if later else 3,
    )

    # device-not-prepared: the NVIDIA kubelet plugin on the A100 node is not registered.
    ns = "smoke"
    d.namespace(ns)
    a100_one = [
        exact("gpu", NVIDIA, "device.attributes['gpu.nvidia.com'].architecture == 'Ampere'")
    ]
    d.template(ns, "ampere", a100_one)
    p = d.pod(
        ns,
        "cuda-smoke",
        {"gpu": ("template", "ampere")},
        created=35,
        node=a100,
        image="nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0",
        containers=[{"name": "ctr0", "state": {"waiting": {"reason": "ContainerCreating"}}}],
        conditions=conds(scheduled=True, minute=35),
    )
    d.generated_claim(p, "gpu", "z2c5k", a100_one, [("gpu", NVIDIA, a100, "gpu-0")])
    d.scheduled(p, a100, 35)
    d.event(
        p,
        "FailedPrepareDynamicResources",
        f"{PREPARE_FAILED}DRA driver gpu.nvidia.com is not registered",
        type_="Warning",
        source="kubelet",
        host=a100,
        first=35,
        last=d.now - 1,
        count=22 if later else 14,
    )

    # device-not-prepared: nodeName set by hand, so the scheduler never allocated the claim.
    ns = "manual"
    d.namespace(ns)
    d.template(ns, "any-h100", [exact("gpu", NVIDIA)])
    p = d.pod(
        ns,
        "pinned-job",
        {"gpu": ("template", "any-h100")},
        created=48,
        node=h100,
        containers=[{"name": "ctr0", "state": {"waiting": {"reason": "ContainerCreating"}}}],
        conditions=conds(scheduled=True, minute=48),
    )
    claim = d.generated_claim(p, "gpu", "h4j8n", [exact("gpu", NVIDIA)])
    d.event(
        p,
        "FailedPrepareDynamicResources",
        f"{PREPARE_FAILED}pod pinned-job "
        f"({p['metadata']['uid']}) is not allowed to use ResourceClaim {claim} "
        f"({uid('ResourceClaim', ns, claim)})",
        type_="Warning",
        source="kubelet",
        host=h100,
        first=48,
        last=d.now - 1,
        count=9,
    )

    # workload-failing: crash loop, OOM kill, image pull.
    ns = "ml-team"
    d.namespace(ns)
    d.template(ns, "h100", [exact("gpu", NVIDIA)])
    restarts = 18 if later else 12
    p = d.pod(
        ns,
        "trainer-crashy",
        {"gpu": ("template", "h100")},
        node=h100,
        phase="Running",
        image="ghcr.io/example/trainer:2.3",
        priorityClassName="research-high",
        priority=100000,
        containers=[
            {
                "name": "ctr0",
                "restarts": restarts,
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": "back-off 5m0s restarting failed container=ctr0 "
                        "pod=trainer-crashy_ml-team",
                    }
                },
                "last": {
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "startedAt": ts(d.now - 6),
                        "finishedAt": ts(d.now - 5),
                    }
                },
            }
        ],
        conditions=conds(scheduled=True),
    )
    d.generated_claim(p, "gpu", "r7d3x", [exact("gpu", NVIDIA)], [("gpu", NVIDIA, h100, "gpu-2")])
    d.event(
        p,
        "BackOff",
        "Back-off restarting failed container ctr0 in pod trainer-crashy_ml-team("
        + p["metadata"]["uid"]
        + ")",
        type_="Warning",
        source="kubelet",
        host=h100,
        first=8,
        last=d.now - 1,
        count=restarts * 4,
    )
    p = d.pod(
        ns,
        "batch-ocr",
        {"gpu": ("template", "h100")},
        node=h100,
        phase="Failed",
        image="ghcr.io/example/ocr:1.0",
        owner=("Job", "batch-ocr"),
        containers=[
            {
                "name": "ctr0",
                "state": {
                    "terminated": {
                        "exitCode": 137,
                        "reason": "OOMKilled",
                        "startedAt": ts(21),
                        "finishedAt": ts(33),
                    }
                },
            }
        ],
        conditions=conds(scheduled=True, minute=20),
    )
    d.generated_claim(p, "gpu", "w9p2v", [exact("gpu", NVIDIA)], [("gpu", NVIDIA, h100, "gpu-3")])
    p = d.pod(
        ns,
        "vllm-canary",
        {"gpu": ("template", "h100")},
        node=h100,
        phase="Pending",
        image=MISSING_IMAGE,
        containers=[
            {
                "name": "ctr0",
                "state": {
                    "waiting": {
                        "reason": "ImagePullBackOff",
                        "message": f'Back-off pulling image "{MISSING_IMAGE}"',
                    }
                },
            }
        ],
        conditions=conds(scheduled=True, minute=52),
    )
    d.generated_claim(p, "gpu", "n6b1y", [exact("gpu", NVIDIA)], [("gpu", NVIDIA, h100, "gpu-4")])
    d.event(
        p,
        "Failed",
        f'Failed to pull image "{MISSING_IMAGE}": manifest unknown',
        type_="Warning",
        source="kubelet",
        host=h100,
        first=53,
        last=d.now - 2,
        count=7,
    )

    # healthy: a finished Job Pod; its generated claim was deleted when the Pod finished.
    ns = "training"
    d.namespace(ns)
    d.template(ns, "h100", [exact("gpu", NVIDIA)])
    d.add(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta("Job", "mnist", ns, created=ts(5)),
            "spec": {"parallelism": 1, "completions": 1},
            "status": {"succeeded": 1, "completionTime": ts(18), "startTime": ts(5)},
        }
    )
    p = d.pod(
        ns,
        "mnist-8kq2w",
        {"gpu": ("template", "h100")},
        created=5,
        node=h100,
        phase="Succeeded",
        owner=("Job", "mnist"),
        image="ghcr.io/example/mnist:1.0",
        containers=[
            {
                "name": "ctr0",
                "state": {
                    "terminated": {
                        "exitCode": 0,
                        "reason": "Completed",
                        "startedAt": ts(6),
                        "finishedAt": ts(18),
                    }
                },
            }
        ],
        conditions=conds(scheduled=True, minute=5),
    )
    p["status"]["resourceClaimStatuses"] = [
        {"name": "gpu", "resourceClaimName": "mnist-8kq2w-gpu-c4v9e"}
    ]

    return d.objects
