"""A synthetic GPU cluster of any size, in the shapes real clusters serve, for benchmarks.

``generate(nodes=…, devices_per_node=…, pods=…, claims=…, events=…, seed=…)`` returns plain
Kubernetes objects, built with the demo cluster's helpers (``dradash.demo.cluster``) so they have
the same shapes: NVIDIA ``gpu.nvidia.com`` ResourceSlices with the driver's real attribute set
(``NVIDIA_ATTRIBUTES.md``), the NVIDIA DeviceClasses, ResourceClaimTemplates with selectors as
published upstream (``selectors.txt``), Pods with generated claims, and the scheduler's, kubelet's
and resourceclaim controller's exact event messages.

The fleet: H100, H200, A100 40GB and A100 80GB nodes with ``devices_per_node`` full GPUs each, and
H100 nodes in static MIG mode (``all-balanced``: 1g.10gb ×2, 2g.20gb, 3g.40gb per GPU) with as many
MIG devices. One slice per node (pool = node name), except for three special cases: one pool that
says it has 2 slices but only 1 is present (incomplete), one node whose pool also has a stale
slice of the previous generation (written by the older driver), and a few devices tainted by the
driver's health checks. ``nodes`` counts the GPU nodes; the control-plane node (NoSchedule taint)
comes on top.

Pods (``pods`` of them, each with one claim reference) are mostly Running with their claim
allocated on their node and reserved for them; the rest are Pending (no device matches, a CEL
runtime error, or devices exhausted: ``FailedScheduling``), CrashLoopBackOff, ContainerCreating
on nodes whose NVIDIA kubelet plugin fails (``FailedPrepareDynamicResources``), Succeeded Job Pods
(their generated claims deleted, as the resourceclaim controller does), and a few groups sharing
one explicit claim. A few Pods are deliberately unresolved: ones whose template does not exist and
gated ones whose claim is not created yet (``UNRESOLVED_STATUSES``). No device is allocated twice
and a claim only gets devices its selectors match. Standalone, not yet allocated claims make up
the difference to ``claims``. Events (exactly ``events``) are on Pods: kube-apiserver keeps events
for an hour, so recurring warnings stay and only recently started Pods keep their start-up events.

``python -m benchmarks.synthetic --profile large --output /tmp/large.json`` writes a bundle for
``manage.py import_bundle``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dradash.demo.cluster import (
    CONTROL_PLANE_TAINT,
    MIG_1G,
    MIG_3G,
    NVIDIA,
    PREPARE_FAILED,
    SERVER_VERSION,
    T0,
    UNTOLERATED,
    Demo,
    conds,
    exact,
    meta,
    nvidia_common,
    nvidia_full_gpus,
    running,
    ts,
    uid,
)
from dradash.dra.bundle import write_bundle
from dradash.dra.gc import gc_paused

PROFILES: dict[str, dict[str, int]] = {
    "small": {"nodes": 50, "devices_per_node": 8, "pods": 200, "claims": 200, "events": 400},
    "medium": {
        "nodes": 500,
        "devices_per_node": 8,
        "pods": 2_000,
        "claims": 2_000,
        "events": 4_000,
    },
    "large": {
        "nodes": 5_000,
        "devices_per_node": 8,
        "pods": 20_000,
        "claims": 20_000,
        "events": 40_000,
    },
}

NOW = 3 * 24 * 60.0  # the snapshot is taken 3 days after T0 (minutes, as ts() takes them)
CAPTURED_AT = ts(NOW)
API_VERSIONS = ["resource.k8s.io/v1"]
EVENT_TTL = 60.0  # kube-apiserver --event-ttl (default 1h)
EPOCH_T0 = int((T0 - datetime(1970, 1, 1)).total_seconds())
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
CONTROL_PLANE = "control-plane-0"
MIG_CLASS = "mig.nvidia.com"
CLASS_SELECTOR = (
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '{}'"
)
# Pod claim statuses generate() produces on purpose: Succeeded Pods' generated claims are
# deleted ("claim-missing"), plus Pods with a missing template or a claim not created yet.
UNRESOLVED_STATUSES = {
    "succeeded": "claim-missing",
    "no-template": "template-missing",
    "gated": "not-created",
}
KIND_ORDER = [
    "Namespace",
    "Node",
    "DeviceClass",
    "ResourceSlice",
    "ResourceClaimTemplate",
    "Job",
    "Pod",
    "ResourceClaim",
    "Event",
]


# --- the fleet --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Product:
    key: str  # node name prefix
    name: str  # productName
    label: str  # nvidia.com/gpu.product (GPU feature discovery)
    memory: str
    arch: str
    cc: str
    share: float  # of the GPU nodes
    mig: bool = False


H100_NAME = "NVIDIA H100 80GB HBM3"
FLEET = (
    Product("h100", H100_NAME, "NVIDIA-H100-80GB-HBM3", "81559Mi", "Hopper", "9.0.0", 0.4),
    Product("h200", "NVIDIA H200", "NVIDIA-H200", "143771Mi", "Hopper", "9.0.0", 0.2),
    Product("a100-40g", "NVIDIA A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB", "40Gi", "Ampere",
            "8.0.0", 0.15),
    Product("a100-80g", "NVIDIA A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", "80Gi", "Ampere",
            "8.0.0", 0.15),
    Product("h100-mig", H100_NAME, "NVIDIA-H100-80GB-HBM3", "81559Mi", "Hopper", "9.0.0", 0.1,
            mig=True),
)  # fmt: skip
FULL = ("h100", "h200", "a100-40g", "a100-80g")
# (driverVersion, cudaDriverVersion, share of the nodes): a fleet half-way through an upgrade.
DRIVERS = (("580.95.5", "13.0.0", 0.6), ("570.158.1", "12.8.0", 0.3), ("575.57.8", "12.9.0", 0.1))
OLD_DRIVER = ("570.158.1", "12.8.0")
MIG_2G = ("2g.20gb", 14, "20096Mi", 32, 2, 2, 0, 2, 0)
# nvidia-mig-parted "all-balanced" for an 80GB H100: (profile, placement start, size), by start.
ALL_BALANCED = [(MIG_2G, 0, 2), (MIG_1G, 2, 1), (MIG_1G, 3, 1), (MIG_3G, 4, 4)]
# Device taints the NVIDIA driver's health checks set (device_health.go): fatal XIDs NoSchedule,
# ignored (application) XIDs and unmonitored GPUs None.
TAINTS = [
    {"key": "gpu.nvidia.com/xid", "value": "48", "effect": "NoSchedule"},
    {"key": "gpu.nvidia.com/xid", "value": "43", "effect": "None"},
    {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"},
    {"key": "gpu.nvidia.com/unmonitored", "effect": "None"},
]
TEAMS = [
    "vision", "speech", "nlp", "recsys", "search", "ads", "fraud", "robotics", "genai", "llm",
    "multimodal", "forecast", "maps", "translate", "safety", "ranking", "agents", "bio", "chem",
    "weather", "video", "audio", "code", "eval", "platform",
]  # fmt: skip
SERVICE_APPS = [
    ("vllm", "vllm/vllm-openai:v0.11.0"),
    ("triton", "nvcr.io/nvidia/tritonserver:25.08-py3"),
    ("tgi", "ghcr.io/huggingface/text-generation-inference:3.3.4"),
    ("embedder", "ghcr.io/huggingface/text-embeddings-inference:1.8"),
    ("reranker", "ghcr.io/huggingface/text-embeddings-inference:1.8"),
    ("asr", "nvcr.io/nvidia/riva/riva-speech:2.19.0"),
    ("notebook", "quay.io/jupyter/pytorch-notebook:cuda12-2025-08-18"),
]
BATCH_APPS = [
    ("finetune", "nvcr.io/nvidia/pytorch:25.08-py3"),
    ("pretrain", "nvcr.io/nvidia/nemo:25.07"),
    ("eval", "ghcr.io/example/eval-harness:0.4"),
    ("batch-infer", "vllm/vllm-openai:v0.11.0"),
    ("render", "blender/render:4.2"),
    ("sweep", "nvcr.io/nvidia/pytorch:25.08-py3"),
]
WORKLOAD_SIZES = [1, 1, 1, 1, 2, 2, 2, 3, 4, 4, 6, 8, 12, 16]
PREEMPTION = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
PREPARE_ERRORS = [
    "NodePrepareResources: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
    f"DRA driver {NVIDIA} is not registered",
]


@dataclass(frozen=True)
class Template:
    """A ResourceClaimTemplate of the catalog, with the nodes whose devices its selector matches."""

    name: str
    request: str
    selector: str | None
    weight: int
    products: tuple[str, ...] = FULL  # node products with matching devices; () = none match
    count: int = 1
    numa: bool = False  # constraint: matchAttribute resource.kubernetes.io/numaNode
    mig_profile: str = ""
    min_driver: int = 0
    cel_error: bool = False  # the selector fails at runtime on some devices

    @property
    def device_class(self) -> str:
        return MIG_CLASS if self.mig_profile else NVIDIA

    def requests(self) -> list[dict[str, Any]]:
        selectors = [self.selector] if self.selector else []
        return [exact(self.request, self.device_class, *selectors, count=self.count)]

    def constraints(self) -> dict[str, Any]:
        if not self.numa:
            return {}
        return {
            "constraints": [
                {"requests": [self.request], "matchAttribute": "resource.kubernetes.io/numaNode"}
            ]
        }


def _attr(name: str) -> str:
    return f"device.attributes['gpu.nvidia.com'].{name}"


H100_SEL = f"{_attr('productName')} == 'NVIDIA H100 80GB HBM3'"
H200_SEL = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'
A100_SEL = f"{_attr('productName')}.lowerAscii().matches('^.*a100.*$')"
MEMORY = "device.capacity['gpu.nvidia.com'].memory"
# Templates whose claims can be allocated (weights: how often a workload uses them) ...
RUNNABLE = [
    Template("gpu", "gpu", None, 18),
    Template("h100", "gpu", H100_SEL, 14, ("h100",)),
    Template("h200", "gpu", H200_SEL, 7, ("h200",)),
    Template("a100", "gpu", A100_SEL, 8, ("a100-40g", "a100-80g")),
    Template(
        "a100-80gb",
        "gpu",
        f"{A100_SEL} && {MEMORY}.compareTo(quantity('80Gi')) >= 0",
        4,
        ("a100-80g",),
    ),
    # H100 80GB HBM3 reports 81559Mi, less than 80Gi: only the H200 matches.
    Template(
        "hopper-80g",
        "gpu",
        f"{_attr('architecture')} == 'Hopper' && {MEMORY}.isGreaterThan(quantity(\"80Gi\"))",
        3,
        ("h200",),
    ),
    Template("gpu-40gi", "gpu", f"{MEMORY}.compareTo(quantity('40Gi')) >= 0", 5),
    Template(
        "driver-580",
        "gpu",
        'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("580.0.0")) >= 0',
        4,
        min_driver=580,
    ),
    Template("h100-pair", "gpus", H100_SEL, 5, ("h100",), count=2, numa=True),
    Template("h100-x8", "gpus", H100_SEL, 2, ("h100",), count=8),
    Template("h200-x8", "gpus", H200_SEL, 1, ("h200",), count=8),
    Template(
        "mig-1g", "mig", f"{_attr('profile')} == '1g.10gb'", 6, ("h100-mig",), mig_profile="1g.10gb"
    ),
    Template(
        "mig-2g", "mig", f"{_attr('profile')} == '2g.20gb'", 2, ("h100-mig",), mig_profile="2g.20gb"
    ),
    Template(
        "mig-3g", "mig", f"{_attr('profile')} == '3g.40gb'", 2, ("h100-mig",), mig_profile="3g.40gb"
    ),
]
# ... and ones that cannot be: no device matches, or (gpu-test6) a CEL runtime error on A100s.
UNSATISFIABLE = [
    Template("b200", "gpu", f"{_attr('productName')} == 'NVIDIA B200'", 3, ()),
    Template(
        "driver-590",
        "gpu",
        'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("590.0.0")) >= 0',
        2,
        (),
    ),
    Template("mig-7g", "mig", f"{_attr('profile')} == '7g.80gb'", 2, (), mig_profile="7g.80gb"),
    Template(
        "a100-even",
        "gpu",
        f"{A100_SEL} && ({_attr('index')} == 0 || {_attr('index')} == 2 || "
        f"{_attr('index')} == 4 || {_attr('index')} == 6)",
        1,
        (),
        cel_error=True,
    ),
]
MISSING_TEMPLATE = "gpu-notebook"


def _weighted(rng: random.Random, templates: list[Template]) -> Template:
    return rng.choices(templates, weights=[t.weight for t in templates])[0]


def _shares(total: int, shares: list[float]) -> list[int]:
    """Split total by shares (largest remainder), each at least 1 when total allows."""
    exact_ = [total * s / sum(shares) for s in shares]
    counts = [int(x) for x in exact_]
    for i in sorted(range(len(shares)), key=lambda i: counts[i] - exact_[i])[: total - sum(counts)]:
        counts[i] += 1
    for i, c in enumerate(counts):
        if c == 0 and total >= len(shares):
            donor = counts.index(max(counts))
            counts[donor] -= 1
            counts[i] = 1
    return counts


def mig_devices(node: str, count: int, driver: str, cuda: str) -> list[dict[str, Any]]:
    """Static MIG devices (all-balanced) on as many H100s as ``count`` devices need."""
    devices = []
    for gpu in range(math.ceil(count / len(ALL_BALANCED))):
        parent = f"GPU-{uid(node, 'gpu', str(gpu))}"
        for (profile, gi, mem, sm, ce, dec, enc, jpeg, ofa), start, size in ALL_BALANCED:
            name = f"gpu-{gpu}-mig-{profile.replace('.', '')}-{gi}-{start}"
            common = nvidia_common(node, H100_NAME, "Hopper", "9.0.0", driver, cuda, gpu)
            devices.append(
                {
                    "name": name,
                    "attributes": {
                        "addressingMode": {"string": "HMM"},
                        **common,
                        "parentUUID": {"string": parent},
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
            )
    return devices[:count]


@dataclass(eq=False)
class GpuNode:
    name: str
    product: Product
    driver: str
    cuda: str
    devices: list[dict[str, Any]]
    # Free devices, reversed so pop() takes the lowest: full GPUs per NUMA node, MIG by profile.
    gpu_free: list[list[str]] = field(default_factory=lambda: [[], []])
    mig_free: dict[str, list[str]] = field(default_factory=dict)
    broken: bool = False  # its NVIDIA kubelet plugin fails: Pods there stay ContainerCreating
    prepare_error: str = ""
    allocatable: bool = True

    def __post_init__(self) -> None:
        self.driver_major = int(self.driver.split(".")[0])
        for device in reversed(self.devices):
            attrs = device["attributes"]
            if self.product.mig:
                self.mig_free.setdefault(attrs["profile"]["string"], []).append(device["name"])
            else:
                self.gpu_free[attrs["resource.kubernetes.io/numaNode"]["int"]].append(
                    device["name"]
                )

    def fits(self, t: Template) -> bool:
        return self.product.key in t.products and self.driver_major >= t.min_driver

    def take(self, t: Template) -> list[str] | None:
        """Devices for one claim of the template, or None (then nothing is taken)."""
        if t.mig_profile:
            free = self.mig_free.get(t.mig_profile)
            return [free.pop()] if free else None
        if t.numa:
            for half in self.gpu_free:
                if len(half) >= t.count:
                    return [half.pop() for _ in range(t.count)]
            return None
        if sum(len(h) for h in self.gpu_free) < t.count:
            return None
        out: list[str] = []
        for half in self.gpu_free:
            while half and len(out) < t.count:
                out.append(half.pop())
        return out

    def remove(self, device: str) -> None:
        for free in [*self.gpu_free, *self.mig_free.values()]:
            if device in free:
                free.remove(device)


@dataclass(eq=False)
class PodPlan:
    namespace: str
    name: str
    state: str  # running crash creating pending succeeded shared gated no-template
    template: Template | None
    image: str
    owner: tuple[str, str] | None
    labels: dict[str, str]
    node: GpuNode | None = None
    devices: list[str] = field(default_factory=list)
    shared: SharedClaim | None = None
    created: float = 0.0
    startup_events: int = 0  # of its start-up events that are still kept
    pulled: bool = False  # the image was pulled (else already present)


@dataclass(eq=False)
class SharedClaim:
    namespace: str
    name: str
    template: Template
    pods: list[PodPlan]
    node: GpuNode | None = None
    devices: list[str] = field(default_factory=list)


@dataclass(eq=False)
class JobPlan:
    namespace: str
    name: str
    template: Template
    pods: list[PodPlan]


class _Generator:
    def __init__(
        self,
        rng: random.Random,
        *,
        nodes: int,
        devices_per_node: int,
        pods: int,
        claims: int,
        events: int,
    ) -> None:
        if not 1 <= devices_per_node <= 8:
            raise ValueError("devices_per_node must be 1 to 8 (NVIDIA nodes have up to 8 GPUs)")
        if nodes < len(FLEET) or pods < 0 or claims < 0 or events < 0:
            raise ValueError(f"need at least {len(FLEET)} nodes and no negative counts")
        self.rng = rng
        self.n_nodes, self.per_node = nodes, devices_per_node
        self.n_pods, self.n_claims, self.n_events = pods, claims, events
        self.d = Demo(later=False)
        self.gpu_nodes: list[GpuNode] = []
        self.namespaces: list[str] = []
        self.templates: set[tuple[str, str]] = set()
        self.names: set[tuple[str, str, str]] = set()  # (kind, namespace, name)
        self.plans: list[PodPlan] = []
        self.shared: list[SharedClaim] = []
        self.jobs: list[JobPlan] = []
        self._candidates: dict[tuple[str, bool], list[GpuNode]] = {}
        self._exhausted: set[tuple[str, bool]] = set()
        self._apps: Counter[tuple[str, str]] = Counter()
        self._event_count = 0

    # --- helpers -------------------------------------------------------------------------

    def rand(self, n: int = 5) -> str:
        r = self.rng.random
        return "".join([ALPHANUMS[int(r() * len(ALPHANUMS))] for _ in range(n)])

    def unique(self, kind: str, namespace: str, make: Any) -> str:
        while (kind, namespace, name := make()) in self.names:
            pass
        self.names.add((kind, namespace, name))
        return name

    def uniform(self, low: float, high: float) -> float:
        return self.rng.uniform(low, max(low, high))

    # --- infrastructure ------------------------------------------------------------------

    def infrastructure(self) -> None:
        d, rng = self.d, self.rng
        d.node(CONTROL_PLANE, {"node-role.kubernetes.io/control-plane": ""}, [CONTROL_PLANE_TAINT])
        counts = _shares(self.n_nodes, [p.share for p in FLEET])
        drivers = [(v, c) for v, c, _ in DRIVERS]
        for product, count in zip(FLEET, counts, strict=True):
            width = max(4, len(str(count)))
            for i in range(1, count + 1):
                name = f"gpu-{product.key}-{i:0{width}d}"
                driver, cuda = rng.choices(drivers, weights=[s for _, _, s in DRIVERS])[0]
                if product.mig:
                    devices = mig_devices(name, self.per_node, driver, cuda)
                    gpus = math.ceil(self.per_node / len(ALL_BALANCED))
                else:
                    devices = nvidia_full_gpus(
                        name, self.per_node, product.name, product.memory, product.arch,
                        product.cc, driver, cuda,
                    )  # fmt: skip
                    gpus = self.per_node
                labels = {
                    "nvidia.com/gpu.present": "true",
                    "nvidia.com/gpu.product": product.label,
                    "nvidia.com/gpu.count": str(gpus),
                    "topology.kubernetes.io/zone": f"us-central1-{'abc'[i % 3]}",
                }
                if product.mig:
                    labels["nvidia.com/mig.config"] = "all-balanced"
                    labels["nvidia.com/mig.strategy"] = "mixed"
                d.node(name, labels)
                self.gpu_nodes.append(GpuNode(name, product, driver, cuda, devices))

        full = [n for n in self.gpu_nodes if not n.product.mig]
        incomplete, stale = rng.sample(full, 2)
        incomplete.allocatable = False  # the allocator skips pools it cannot see whole
        normal = [n for n in full if n not in (incomplete, stale)]
        n_broken = min(len(normal) // 4, math.ceil(self.n_pods * 0.005 / 5))
        for node in rng.sample(normal, n_broken):
            node.broken = True
            node.prepare_error = rng.choice(PREPARE_ERRORS)
        for node in self.gpu_nodes:
            slice_name = f"00000-{NVIDIA}-{node.name}-{self.rand()}"
            d.slice_(
                node.name, NVIDIA, slice_name, node.devices, generation=2 if node is stale else 1
            )
            if node is incomplete:
                d.objects[-1]["spec"]["pool"]["resourceSliceCount"] = 2
            if node is stale:  # the slice the driver wrote before its upgrade
                old = nvidia_full_gpus(
                    node.name, self.per_node, node.product.name, node.product.memory,
                    node.product.arch, node.product.cc, *OLD_DRIVER,
                )  # fmt: skip
                d.slice_(node.name, NVIDIA, f"{node.name}-{NVIDIA}-{self.rand()}", old, 1)
        healthy = [n for n in normal if not n.broken]
        n_tainted = max(3, self.n_nodes // 1000)
        for i, node in enumerate(rng.sample(healthy, min(n_tainted, len(healthy)))):
            device = rng.choice(node.devices)
            taint = {**TAINTS[i % len(TAINTS)], "timeAdded": ts(self.uniform(NOW - 2880, NOW))}
            device["taints"] = [taint]
            if taint["effect"] == "NoSchedule":
                node.remove(device["name"])
        d.device_class(NVIDIA, CLASS_SELECTOR.format("gpu"), "nvidia.com/gpu")
        d.device_class(MIG_CLASS, CLASS_SELECTOR.format("mig"))

    def ensure_namespaces(self) -> None:
        wanted = max(1, min(50, self.n_pods // 10))
        names = [f"{t}-{env}" for env in ("prod", "dev") for t in TEAMS]
        names += [f"team-{i}" for i in range(len(names), wanted)]
        self.namespaces = names[:wanted]
        for ns in self.namespaces:
            self.d.namespace(ns)

    def template(self, namespace: str, t: Template) -> None:
        if (namespace, t.name) not in self.templates:
            self.templates.add((namespace, t.name))
            self.d.template(namespace, t.name, t.requests(), **t.constraints())

    # --- planning Pods -------------------------------------------------------------------

    def workload(
        self,
        state: str,
        size: int,
        template: Template | None,
        kind: str | None,
        apps: list[tuple[str, str]],
        namespace: str | None = None,
    ) -> list[PodPlan]:
        """Plan the Pods of one workload: a ReplicaSet's, a StatefulSet's, a Job's or a bare Pod."""
        ns = namespace or self.rng.choice(self.namespaces)
        base, image = self.rng.choice(apps)
        self._apps[(ns, base)] += 1
        app = f"{base}-{self._apps[(ns, base)]}"
        plans = []
        pod_hash = self.rand(10)
        for i in range(size):
            labels = {"app": app}
            owner: tuple[str, str] | None
            if kind == "ReplicaSet":
                owner = ("ReplicaSet", f"{app}-{pod_hash}")
                labels["pod-template-hash"] = pod_hash
                name = self.unique("Pod", ns, lambda o=owner: f"{o[1]}-{self.rand()}")
            elif kind == "StatefulSet":
                owner = ("StatefulSet", app)
                name = self.unique("Pod", ns, lambda i=i: f"{app}-{i}")
                labels["apps.kubernetes.io/pod-index"] = str(i)
                labels["statefulset.kubernetes.io/pod-name"] = name
            elif kind == "Job":
                owner = ("Job", app)
                labels["batch.kubernetes.io/job-name"] = app
                labels["job-name"] = app
                name = self.unique("Pod", ns, lambda: f"{app}-{self.rand()}")
            else:
                owner = None
                name = self.unique("Pod", ns, lambda i=i: f"{app}-{i}" if size > 1 else app)
            plans.append(PodPlan(ns, name, state, template, image, owner, labels))
        if kind == "Job" and template is not None:
            self.jobs.append(JobPlan(ns, app, template, plans))
        self.plans += plans
        return plans

    def plan_pods(self) -> None:
        rng, total = self.rng, self.n_pods
        n_missing = n_gated = min(2, total // 50)
        quota = {
            "pending": round(total * 0.04),
            "succeeded": round(total * 0.03),
            "creating": round(total * 0.005) if any(n.broken for n in self.gpu_nodes) else 0,
            "shared": round(total * 0.02),
        }
        n_run = total - sum(quota.values()) - n_missing - n_gated
        if n_run < 0:
            raise ValueError(f"pods={total} is too few")

        def fill(state: str, count: int, make: Any, sizes: list[int] = WORKLOAD_SIZES) -> None:
            while count > 0:
                count -= len(make(min(count, rng.choice(sizes)), state))

        def runnable(size: int, state: str) -> list[PodPlan]:
            t = _weighted(rng, RUNNABLE)
            if t.count == 8:
                kind = rng.choice(["Job", "StatefulSet"])
            else:
                kind = rng.choices(["ReplicaSet", "StatefulSet", "Job"], [55, 20, 25])[0]
            apps = BATCH_APPS if kind == "Job" else SERVICE_APPS
            return self.workload(state, size, t, kind, apps)

        def succeeded(size: int, state: str) -> list[PodPlan]:
            return self.workload(state, size, _weighted(rng, RUNNABLE), "Job", BATCH_APPS)

        def pending(size: int, state: str) -> list[PodPlan]:
            kind = rng.choice(["ReplicaSet", "Job"])
            apps = SERVICE_APPS if kind == "ReplicaSet" else BATCH_APPS
            return self.workload(state, min(size, 4), _weighted(rng, UNSATISFIABLE), kind, apps)

        def creating(size: int, state: str) -> list[PodPlan]:
            t = rng.choice([t for t in RUNNABLE if t.name in ("gpu", "gpu-40gi")])
            return self.workload(state, min(size, 2), t, "ReplicaSet", SERVICE_APPS)

        def shared(size: int, state: str) -> list[PodPlan]:
            t = rng.choice([t for t in RUNNABLE if t.name in ("gpu", "h100", "a100")])
            plans = self.workload(state, size, t, "ReplicaSet", SERVICE_APPS)
            ns = plans[0].namespace
            app = plans[0].labels["app"]
            name = self.unique("ResourceClaim", ns, lambda: f"{app}-shared-gpu")
            claim = SharedClaim(ns, name, t, plans)
            for p in plans:
                p.shared = claim
            self.shared.append(claim)
            return plans

        fill("running", n_run, runnable)
        fill("succeeded", quota["succeeded"], succeeded)
        fill("pending", quota["pending"], pending)
        fill("creating", quota["creating"], creating)
        fill("shared", quota["shared"], shared, [2, 2, 3])
        if n_missing:
            self.workload(
                "no-template", n_missing, None, None, [("notebook", "jupyter/base-notebook")]
            )
        if n_gated:  # plain Pods that Kueue holds until their queue admits them
            gated = next(t for t in RUNNABLE if t.name == "h100")
            for p in self.workload("gated", n_gated, gated, None, BATCH_APPS):
                p.labels["kueue.x-k8s.io/managed"] = "true"
                p.labels["kueue.x-k8s.io/queue-name"] = "gpu-queue"
        # CrashLoopBackOff needs restartPolicy Always: ReplicaSet and StatefulSet Pods.
        services = [
            p for p in self.plans if p.state == "running" and p.owner and p.owner[0] != "Job"
        ]
        for p in rng.sample(services, min(len(services), round(total * 0.03))):
            p.state = "crash"

    # --- allocating ----------------------------------------------------------------------

    def allocate(self, t: Template, broken: bool) -> tuple[GpuNode, list[str]] | None:
        """First fit from random nodes whose devices the template's selector matches."""
        key = (t.name, broken)
        if key in self._exhausted:
            return None
        if key not in self._candidates:
            self._candidates[key] = [
                n for n in self.gpu_nodes if n.allocatable and n.broken == broken and n.fits(t)
            ]
        nodes = self._candidates[key]
        if nodes:
            for _ in range(min(16, len(nodes))):
                node = self.rng.choice(nodes)
                if devices := node.take(t):
                    return node, devices
            start = self.rng.randrange(len(nodes))
            for node in nodes[start:] + nodes[:start]:
                if devices := node.take(t):
                    return node, devices
        self._exhausted.add(key)  # nodes only ever lose free devices
        return None

    def allocate_all(self) -> None:
        units: list[PodPlan | SharedClaim] = [
            p for p in self.plans if p.state in ("running", "crash", "creating")
        ]
        units += self.shared
        units.sort(key=lambda u: -u.template.count if u.template else 0)  # big claims first
        for unit in units:
            assert unit.template is not None
            broken = isinstance(unit, PodPlan) and unit.state == "creating"
            got = self.allocate(unit.template, broken)
            if got is None:
                for p in unit.pods if isinstance(unit, SharedClaim) else [unit]:
                    p.state = "pending"  # devices exhausted: cannot allocate all claims
                continue
            unit.node, unit.devices = got
            if isinstance(unit, SharedClaim):
                for p in unit.pods:
                    p.node = unit.node
        ran_on: dict[str, list[GpuNode]] = {}  # where Succeeded Pods ran, their devices freed
        for p in self.plans:
            if p.state == "succeeded" and p.template is not None:
                if p.template.name not in ran_on:
                    ran_on[p.template.name] = [
                        n for n in self.gpu_nodes if n.allocatable and n.fits(p.template)
                    ]
                nodes = ran_on[p.template.name]
                p.node = self.rng.choice(nodes) if nodes else None

    # --- times and the event budget ------------------------------------------------------

    def plan_times(self) -> None:
        rng = self.rng
        ages = {  # minutes before NOW a Pod may have been created
            "running": (70, NOW),
            "shared": (70, NOW),
            "succeeded": (70, 2880),
            "crash": (30, 2880),
            "creating": (20, 1440),
            "pending": (5, 4320),
            "gated": (1, 1440),
            "no-template": (10, 1440),
        }
        for p in self.plans:
            low, high = ages[p.state]
            p.created = NOW - self.uniform(low, high)
            p.pulled = rng.random() < 0.5
        # Warnings that recur stay; the rest of the budget goes to Pods started within the hour.
        warnings = sum(
            {"pending": 1, "no-template": 1, "crash": 4, "creating": 1}.get(p.state, 0)
            for p in self.plans
        )
        left = self.n_events - warnings
        healthy = [p for p in self.plans if p.state in ("running", "shared", "succeeded")]
        rng.shuffle(healthy)
        for p in healthy:
            if left <= 0:
                break
            n = 5 if p.pulled else 4
            if left >= n:
                p.created = NOW - self.uniform(2, EVENT_TTL - 2)
                p.startup_events = n
            else:  # started just over an hour ago: its first events have expired
                p.created = NOW - EVENT_TTL - 0.6
                p.startup_events = left
            left -= p.startup_events

    # --- building objects ----------------------------------------------------------------

    def build_pods(self) -> None:
        d = self.d
        nodes_total = len(self.gpu_nodes) + 1
        unschedulable = (
            f"0/{nodes_total} nodes are available: {UNTOLERATED}, "
            f"{len(self.gpu_nodes)} cannot allocate all claims. " + PREEMPTION.format(n=nodes_total)
        )
        objects: dict[int, dict[str, Any]] = {}
        for p in self.plans:
            c = p.created
            t = p.template
            if p.state == "no-template":
                claims = {"gpu": ("template", MISSING_TEMPLATE)}
            elif p.shared is not None:
                claims = {"gpu": ("claim", p.shared.name)}
            else:
                assert t is not None
                self.template(p.namespace, t)
                claims = {t.request: ("template", t.name)}
            kwargs: dict[str, Any] = {"created": c, "owner": p.owner, "image": p.image}
            node = p.node.name if p.node else None
            match p.state:
                case "running" | "shared":
                    kwargs.update(
                        node=node,
                        phase="Running",
                        containers=[running(minute=c + 0.7)],
                        conditions=conds(scheduled=True, ready=True, minute=c),
                    )
                case "crash":
                    restarts = max(1, int((NOW - c) / 5.5))
                    kwargs.update(
                        node=node,
                        phase="Running",
                        containers=[_crashing(p, restarts)],
                        conditions=conds(scheduled=True, minute=c),
                    )
                case "creating":
                    kwargs.update(
                        node=node,
                        containers=[
                            {"name": "ctr0", "state": {"waiting": {"reason": "ContainerCreating"}}}
                        ],
                        conditions=conds(scheduled=True, minute=c),
                    )
                case "succeeded":
                    end = min(NOW - 0.5, c + self.uniform(5, 60))
                    kwargs.update(
                        node=node,
                        phase="Succeeded",
                        containers=[
                            {
                                "name": "ctr0",
                                "state": {
                                    "terminated": {
                                        "exitCode": 0,
                                        "reason": "Completed",
                                        "startedAt": ts(c + 0.7),
                                        "finishedAt": ts(end),
                                    }
                                },
                            }
                        ],
                        conditions=_completed(conds(scheduled=True, minute=c)),
                    )
                case "pending":
                    assert t is not None
                    message = unschedulable
                    reason = "Unschedulable"
                    if t.cel_error:
                        reason = "SchedulerError"
                        message = ""  # needs the claim's name: set below
                    kwargs["conditions"] = conds(
                        scheduled=False, reason=reason, message=message, minute=c
                    )
                case "gated":
                    kwargs.update(
                        schedulingGates=[{"name": "kueue.x-k8s.io/admission"}],
                        conditions=conds(
                            scheduled=False,
                            reason="SchedulingGated",
                            message="Scheduling is blocked due to non-empty scheduling gates",
                            minute=c,
                        ),
                    )
            pod = d.pod(p.namespace, p.name, claims, **kwargs)
            pod["metadata"]["labels"] = p.labels
            objects[id(p)] = pod
            if p.state in ("running", "crash", "creating", "pending"):
                assert t is not None
                results = [(t.request, NVIDIA, node, dev) for dev in p.devices] or None
                claim = d.generated_claim(
                    pod, t.request, self.rand(), t.requests(), results, **t.constraints()
                )
                self.names.add(("ResourceClaim", p.namespace, claim))
                if p.state == "pending" and t.cel_error:
                    message = (
                        f'running "DynamicResources" filter plugin: claim {p.namespace}/{claim}: '
                        "selector #0: CEL runtime error: no such key: index"
                    )
                    pod["status"]["conditions"][0]["message"] = message
            elif p.state == "succeeded":
                assert t is not None  # its generated claim was deleted when it finished
                pod["status"]["resourceClaimStatuses"] = [
                    {"name": t.request, "resourceClaimName": f"{p.name}-{t.request}-{self.rand()}"}
                ]
        for sc in self.shared:
            results = (
                [(sc.template.request, NVIDIA, sc.node.name, dev) for dev in sc.devices]
                if sc.node
                else None
            )
            pods = [objects[id(p)] for p in sc.pods]
            d.claim(
                sc.namespace,
                sc.name,
                sc.template.requests(),
                results,
                consumers=pods if results else [],
                created=ts(min(p.created for p in sc.pods) - 0.5),
            )
        self.pod_objects = objects

    def build_jobs(self) -> None:
        for job in self.jobs:
            pods = job.pods
            start = min(p.created for p in pods)
            done = sum(1 for p in pods if p.state == "succeeded")
            active = len(pods) - done
            status: dict[str, Any] = {"startTime": ts(start)}
            if active:
                status["active"] = active
            else:
                end = max(p.created for p in pods) + 30
                status.update(
                    succeeded=done,
                    completionTime=ts(min(end, NOW - 0.5)),
                    conditions=[
                        {
                            "type": "SuccessCriteriaMet",
                            "status": "True",
                            "reason": "CompletionsReached",
                            "message": "Reached expected number of succeeded pods",
                            "lastTransitionTime": ts(min(end, NOW - 0.5)),
                        },
                        {
                            "type": "Complete",
                            "status": "True",
                            "reason": "CompletionsReached",
                            "message": "Reached expected number of succeeded pods",
                            "lastTransitionTime": ts(min(end, NOW - 0.5)),
                        },
                    ],
                )
            spec: dict[str, Any] = {
                "parallelism": len(pods),
                "completions": len(pods),
                "backoffLimit": 6,
                "completionMode": "NonIndexed",
                "template": {
                    "metadata": {"labels": {"app": pods[0].labels["app"]}},
                    "spec": {
                        "resourceClaims": [
                            {
                                "name": job.template.request,
                                "resourceClaimTemplateName": job.template.name,
                            }
                        ],
                        "restartPolicy": "Never",
                    },
                },
            }
            self.d.add(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": meta("Job", job.name, job.namespace, created=ts(start - 0.1)),
                    "spec": spec,
                    "status": status,
                }
            )

    def pad_claims(self) -> None:
        have = sum(1 for o in self.d.objects if o["kind"] == "ResourceClaim")
        missing = self.n_claims - have
        if missing < 0:
            raise ValueError(f"claims={self.n_claims} is fewer than the {have} the Pods need")
        singles = [t for t in RUNNABLE if t.count == 1]
        for _ in range(missing):  # created ahead of the Pods that will use them
            ns = self.rng.choice(self.namespaces)
            t = _weighted(self.rng, singles)
            name = self.unique("ResourceClaim", ns, lambda t=t: f"standby-{t.name}-{self.rand()}")
            created = ts(NOW - self.uniform(1, 4320))
            self.d.claim(ns, name, t.requests(), created=created, **t.constraints())

    # --- events --------------------------------------------------------------------------

    def event(
        self,
        obj: dict[str, Any],
        reason: str,
        message: str,
        *,
        first: float,
        last: float | None = None,
        count: int = 1,
        type_: str = "Normal",
        source: str = "default-scheduler",
        host: str | None = None,
    ) -> None:
        """Like Demo.event, named as the API server names events: <object>.<hex UnixNano>."""
        if self._event_count >= self.n_events:
            return
        m = obj["metadata"]
        ns = m.get("namespace", "default")
        nanos = (EPOCH_T0 + round(first * 60)) * 1_000_000_000 + self.rng.randrange(10**9)
        name = self.unique("Event", ns, lambda: f"{m['name']}.{nanos + self.rng.randrange(99):x}")
        self._event_count += 1
        self.d.add(
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
                    **({"fieldPath": "spec.containers{ctr0}"} if source == "kubelet" else {}),
                },
                "reason": reason,
                "message": message,
                "type": type_,
                "source": {"component": source, **({"host": host} if host else {})},
                "firstTimestamp": ts(first),
                "lastTimestamp": ts(last if last is not None else first),
                "count": count,
                "reportingComponent": source,
                **({"reportingInstance": host} if host else {}),
            }
        )

    def build_events(self) -> None:
        rng = self.rng
        for p in self.plans:  # warnings first: they are never dropped for start-up events
            pod, c = self.pod_objects[id(p)], p.created
            host = p.node.name if p.node else None
            recent = NOW - self.uniform(0.1, 5)
            match p.state:
                case "pending":
                    conditions = pod["status"]["conditions"]
                    self.event(
                        pod,
                        "FailedScheduling",
                        conditions[0]["message"],
                        type_="Warning",
                        first=c,
                        last=recent,
                        count=max(1, int((NOW - c) / 5)),
                    )
                case "no-template":
                    self.event(
                        pod,
                        "FailedResourceClaimCreation",
                        f'PodResourceClaim gpu: resource claim template "{MISSING_TEMPLATE}": '
                        f'resourceclaimtemplate.resource.k8s.io "{MISSING_TEMPLATE}" not found',
                        type_="Warning",
                        source="resource_claim",
                        first=c,
                        last=recent,
                        count=max(1, int((NOW - c) / 2)),
                    )
                case "creating":
                    assert p.node is not None
                    self.event(
                        pod,
                        "FailedPrepareDynamicResources",
                        f"{PREPARE_FAILED}{p.node.prepare_error}",
                        type_="Warning",
                        source="kubelet",
                        host=host,
                        first=c + 0.1,
                        last=recent,
                        count=max(1, int((NOW - c) / 2.2)),
                    )
                case "crash":
                    name, ns, pod_uid = p.name, p.namespace, pod["metadata"]["uid"]
                    restarts = pod["status"]["containerStatuses"][0]["restartCount"]
                    self.event(
                        pod,
                        "BackOff",
                        f"Back-off restarting failed container ctr0 in pod {name}_{ns}({pod_uid})",
                        type_="Warning",
                        source="kubelet",
                        host=host,
                        first=c + 2,
                        last=recent,
                        count=restarts * 4,
                    )
        for p in self.plans:
            if p.state != "crash":
                continue
            pod, c = self.pod_objects[id(p)], p.created
            host = p.node.name if p.node else None
            restarts = pod["status"]["containerStatuses"][0]["restartCount"]
            last = NOW - self.uniform(3, 6)
            for reason, message in (
                ("Pulled", f'Container image "{p.image}" already present on machine'),
                ("Created", "Created container ctr0"),
                ("Started", "Started container ctr0"),
            ):
                self.event(
                    pod,
                    reason,
                    message,
                    source="kubelet",
                    host=host,
                    first=c + 0.5,
                    last=last,
                    count=restarts + 1,
                )
        for p in self.plans:
            if not p.startup_events:
                continue
            pod, c = self.pod_objects[id(p)], p.created
            host = p.node.name if p.node else ""
            startup = [(c, "Scheduled", f"Successfully assigned {p.namespace}/{p.name} to {host}")]
            if p.pulled:
                took = self.uniform(8, 90)
                size = rng.randrange(2_000_000_000, 12_000_000_000)
                startup += [
                    (c + 0.05, "Pulling", f'Pulling image "{p.image}"'),
                    (
                        c + 0.05 + took / 60,
                        "Pulled",
                        f'Successfully pulled image "{p.image}" in {took:.3f}s '
                        f"({took + 0.2:.3f}s including waiting). Image size: {size} bytes.",
                    ),
                ]
            else:
                startup.append(
                    (c + 0.1, "Pulled", f'Container image "{p.image}" already present on machine')
                )
            done = startup[-1][0]
            startup += [
                (done + 0.01, "Created", "Created container ctr0"),
                (done + 0.02, "Started", "Started container ctr0"),
            ]
            for minute, reason, message in startup[len(startup) - p.startup_events :]:
                kubelet = reason != "Scheduled"
                self.event(
                    pod,
                    reason,
                    message,
                    first=minute,
                    source="kubelet" if kubelet else "default-scheduler",
                    host=host if kubelet else None,
                )
        # More events than the Pods make (an unusual profile): readiness probes failing.
        probed = [p for p in self.plans if p.state in ("running", "shared")] or self.plans
        i = 0
        while self._event_count < self.n_events and probed:
            p = probed[i % len(probed)]
            i += 1
            self.event(
                self.pod_objects[id(p)],
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503",
                type_="Warning",
                source="kubelet",
                host=p.node.name if p.node else None,
                first=NOW - self.uniform(1, EVENT_TTL - 1),
                count=rng.randrange(1, 20),
            )

    def run(self) -> list[dict[str, Any]]:
        self.infrastructure()
        self.ensure_namespaces()
        self.plan_pods()
        self.allocate_all()
        self.plan_times()
        self.build_pods()
        self.build_jobs()
        self.pad_claims()
        self.build_events()
        order = {kind: i for i, kind in enumerate(KIND_ORDER)}
        return sorted(self.d.objects, key=lambda o: order.get(o["kind"], len(order)))


def _crashing(p: PodPlan, restarts: int) -> dict[str, Any]:
    return {
        "name": "ctr0",
        "restarts": restarts,
        "state": {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off 5m0s restarting failed container=ctr0 "
                f"pod={p.name}_{p.namespace}",
            }
        },
        "last": {
            "terminated": {
                "exitCode": 1,
                "reason": "Error",
                "startedAt": ts(NOW - 6),
                "finishedAt": ts(NOW - 5.5),
            }
        },
    }


def _completed(conditions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A finished Pod's conditions: not ready because it completed."""
    for c in conditions:
        if c["type"] in ("Ready", "ContainersReady"):
            c["reason"] = "PodCompleted"
            c.pop("message", None)
    return conditions


def generate(
    *,
    nodes: int,
    devices_per_node: int,
    pods: int,
    claims: int,
    events: int,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """The objects of a synthetic cluster (see the module docstring); the same for the same seed."""
    generator = _Generator(
        random.Random(seed),
        nodes=nodes,
        devices_per_node=devices_per_node,
        pods=pods,
        claims=claims,
        events=events,
    )
    with gc_paused():  # a large profile is millions of containers, none of them cyclic
        return generator.run()


def scaled(profile: str, nodes: int) -> dict[str, int]:
    """The profile's sizes for ``nodes`` GPU nodes: Pods, claims and events per node kept (the
    large profile at 20,000 nodes: 80,000 Pods and claims, 160,000 events)."""
    sizes = PROFILES[profile]
    per_node = nodes / sizes["nodes"]
    return {
        "nodes": nodes,
        "devices_per_node": sizes["devices_per_node"],
        **{k: round(sizes[k] * per_node) for k in ("pods", "claims", "events")},
    }


def generate_profile(profile: str, seed: int = 0) -> list[dict[str, Any]]:
    return generate(**PROFILES[profile], seed=seed)


def bundle_info(profile: str) -> dict[str, Any]:
    """SnapshotInfo.spec for a profile's bundle."""
    return {
        "cluster": f"synthetic-{profile}",
        "capturedAt": CAPTURED_AT,
        "serverVersion": SERVER_VERSION,
        "apiVersions": list(API_VERSIONS),
    }


def bundle_chunks(profile: str, objects: list[dict[str, Any]]) -> Iterator[str]:
    """The bundle text: a kubectl-style List, SnapshotInfo first."""
    return write_bundle(bundle_info(profile), objects)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.synthetic",
        description="Write a synthetic cluster as a bundle for manage.py import_bundle.",
    )
    parser.add_argument("--profile", choices=sorted(PROFILES), default="small")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", required=True, metavar="FILE")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    objects = generate_profile(args.profile, args.seed)
    generated = time.perf_counter() - started
    path = Path(args.output)
    with path.open("w", encoding="utf-8") as fh, gc_paused():
        for chunk in bundle_chunks(args.profile, objects):
            fh.write(chunk)
    written = time.perf_counter() - started - generated

    counts = Counter(o["kind"] for o in objects)
    devices = current_devices(objects)
    width = max(len(k) for k in counts)
    print(f"profile {args.profile}, seed {args.seed}: {len(objects):,} objects")
    for kind in KIND_ORDER:
        print(f"  {kind:<{width}}  {counts[kind]:>8,}")
    print(f"  {'devices':<{width}}  {devices:>8,}  (in current slices)")
    size = path.stat().st_size
    print(f"generated in {generated:.2f} s, written in {written:.2f} s")
    print(f"{path}: {size:,} bytes ({size / 2**20:.1f} MiB)")
    return 0


def current_devices(objects: list[dict[str, Any]]) -> int:
    """Devices in the slices of each pool's newest generation (the ones the allocator sees)."""
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    newest: dict[tuple[str, str], int] = defaultdict(int)
    for s in slices:
        key = (s["spec"]["driver"], s["spec"]["pool"]["name"])
        newest[key] = max(newest[key], s["spec"]["pool"]["generation"])
    return sum(
        len(s["spec"]["devices"])
        for s in slices
        if s["spec"]["pool"]["generation"]
        == newest[(s["spec"]["driver"], s["spec"]["pool"]["name"])]
    )


if __name__ == "__main__":
    sys.exit(main())
