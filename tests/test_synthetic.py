"""The synthetic cluster generator the benchmarks use (benchmarks/synthetic.py), small profile.

It must be deterministic, hit the profile's totals exactly, parse as a bundle, and build a
ClusterState where every reference resolves (bar the deliberate cases), every allocation names an
existing device its claim's selectors match, no device is allocated twice, and the special cases
(incomplete pool, stale slice, tainted devices) are there. No database needed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.synthetic import (
    PROFILES,
    UNRESOLVED_STATUSES,
    bundle_chunks,
    current_devices,
    generate,
)
from dradash.dra.bundle import parse_bundle
from dradash.dra.objects import Device
from dradash.dra.state import ClusterState

SMALL = PROFILES["small"]
NVIDIA = "gpu.nvidia.com"
GPU_ATTRIBUTES = {
    "addressingMode",
    "architecture",
    "brand",
    "cudaComputeCapability",
    "cudaDriverVersion",
    "driverVersion",
    "productName",
    "resource.kubernetes.io/numaNode",
    "resource.kubernetes.io/pciBusID",
    "resource.kubernetes.io/pcieRoot",
    "type",
    "uuid",
}
MEMORY = {  # NVIDIA_ATTRIBUTES.md
    "NVIDIA H100 80GB HBM3": "81559Mi",
    "NVIDIA H200": "143771Mi",
    "NVIDIA A100-SXM4-40GB": "40Gi",
    "NVIDIA A100-SXM4-80GB": "80Gi",
}


def _mi(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", quantity).groups()  # type: ignore[union-attr]
    return int(number) * (1024 if unit == "Gi" else 1)


def _attr(device: Device, name: str) -> Any:
    return next(iter(device.attributes[name].values()))


def _version(device: Device) -> tuple[int, ...]:
    return tuple(int(x) for x in _attr(device, "driverVersion").split("."))


def _memory(device: Device) -> int:
    return _mi(device.capacity["memory"]["value"])


def _a100(device: Device) -> bool:
    return "a100" in _attr(device, "productName").lower()


# The selectors the claims use, read independently of the generator: expression -> predicate.
SELECTORS: dict[str, Callable[[Device], bool]] = {
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'": (
        lambda d: _attr(d, "productName") == "NVIDIA H100 80GB HBM3"
    ),
    'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"': (
        lambda d: _attr(d, "productName") == "NVIDIA H200"
    ),
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')": _a100,
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$') && "
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0": (
        lambda d: _a100(d) and _memory(d) >= 80 * 1024
    ),
    "device.attributes['gpu.nvidia.com'].architecture == 'Hopper' && "
    "device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity(\"80Gi\"))": (
        lambda d: _attr(d, "architecture") == "Hopper" and _memory(d) > 80 * 1024
    ),
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0": (
        lambda d: _memory(d) >= 40 * 1024
    ),
    'device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("580.0.0")) >= 0': (
        lambda d: _version(d) >= (580, 0, 0)
    ),
    "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'": (
        lambda d: _attr(d, "profile") == "1g.10gb"
    ),
    "device.attributes['gpu.nvidia.com'].profile == '2g.20gb'": (
        lambda d: _attr(d, "profile") == "2g.20gb"
    ),
    "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'": (
        lambda d: _attr(d, "profile") == "3g.40gb"
    ),
}
CLASSES = {NVIDIA: "gpu", "mig.nvidia.com": "mig"}


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return generate(**SMALL, seed=0)


@pytest.fixture(scope="module")
def bundle_bytes(objects: list[dict[str, Any]]) -> bytes:
    return "".join(bundle_chunks("small", objects)).encode()


@pytest.fixture(scope="module")
def state(bundle_bytes: bytes) -> ClusterState:
    bundle = parse_bundle([("small.json", bundle_bytes)], max_bytes=len(bundle_bytes))
    return ClusterState.build(bundle.objects.values())


def test_the_same_seed_gives_the_same_cluster_and_another_seed_another(
    objects: list[dict[str, Any]],
) -> None:
    assert generate(**SMALL, seed=0) == objects
    assert generate(**SMALL, seed=1) != objects


def test_the_totals_match_the_profile(objects: list[dict[str, Any]]) -> None:
    counts = Counter(o["kind"] for o in objects)

    assert counts["Node"] == SMALL["nodes"] + 1  # and the control plane
    assert current_devices(objects) == SMALL["nodes"] * SMALL["devices_per_node"]
    assert counts["Pod"] == SMALL["pods"]
    assert counts["ResourceClaim"] == SMALL["claims"]
    assert counts["Event"] == SMALL["events"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_totals_hold_for_other_seeds_and_sizes(seed: int) -> None:
    sizes = {"nodes": 20, "devices_per_node": 4, "pods": 150, "claims": 160, "events": 350}
    objects = generate(**sizes, seed=seed)
    counts = Counter(o["kind"] for o in objects)
    state = ClusterState.build(objects)

    assert counts["Node"] == sizes["nodes"] + 1
    assert current_devices(objects) == len(state.devices) == 20 * 4
    assert (counts["Pod"], counts["ResourceClaim"], counts["Event"]) == (150, 160, 350)
    assert state.dangling_results == []
    assert all(len(d.allocations) <= 1 for d in state.devices.values())


def test_the_bundle_parses_with_its_snapshot_info(
    objects: list[dict[str, Any]], bundle_bytes: bytes
) -> None:
    bundle = parse_bundle([("small.json", bundle_bytes)], max_bytes=len(bundle_bytes))

    assert len(bundle.objects) == len(objects)
    assert not bundle.ignored
    assert bundle.info["cluster"] == "synthetic-small"
    assert bundle.info["serverVersion"] == "v1.36.1"
    assert bundle.info["apiVersions"] == ["resource.k8s.io/v1"]


def test_every_pod_claim_resolves_except_the_deliberate_ones(state: ClusterState) -> None:
    assert len(state.pods) == SMALL["pods"]
    unresolved: Counter[str] = Counter()
    for pod in state.pods.values():
        assert len(pod.claim_refs) == 1
        ref = pod.claim_refs[0]
        if ref.status == "ok":
            continue
        unresolved[ref.status] += 1
        assert ref.status in UNRESOLVED_STATUSES.values(), (pod, ref.status)
        if ref.status == "claim-missing":  # the generated claim of a finished Pod is deleted
            assert pod.phase == "Succeeded"
            assert pod.job is not None
        elif ref.status == "not-created":
            assert pod.scheduling_gates == ["kueue.x-k8s.io/admission"]
        else:
            assert ref.template is None
            assert [e.reason for e in pod.events] == ["FailedResourceClaimCreation"]

    assert set(unresolved) == set(UNRESOLVED_STATUSES.values())
    assert unresolved["template-missing"] == unresolved["not-created"] == 2


def test_every_allocation_names_a_device_its_claim_may_have(state: ClusterState) -> None:
    assert state.dangling_results == []
    allocated = [c for c in state.claims.values() if c.allocated]
    assert len(allocated) > SMALL["claims"] // 2
    for claim in allocated:
        request = claim.requests[0].exactly
        assert request is not None
        devices = [r.device for r in claim.results]
        assert len(devices) == request.count
        for device in devices:
            assert device is not None
            assert device.driver == NVIDIA
            assert _attr(device, "type") == CLASSES[request.device_class_name]
            assert not any(t["effect"] == "NoSchedule" for t in device.taints)
            for expression in request.selectors:
                assert expression in SELECTORS, expression
                assert SELECTORS[expression](device), (claim, device, expression)
        if claim.constraints:  # matchAttribute numaNode
            assert len({_attr(d, "resource.kubernetes.io/numaNode") for d in devices}) == 1
        nodes = state.claim_nodes(claim)
        assert len(nodes) == 1
        assert state.allocation_nodes(claim) == nodes
        for consumer in claim.consumers:
            assert consumer.pod is not None
            assert consumer.pod.node_name == nodes[0]


def test_no_device_is_allocated_twice_and_shared_claims_are_shared(state: ClusterState) -> None:
    for device in state.devices.values():
        assert len(device.allocations) <= 1, device
    shared = [c for c in state.claims.values() if len(c.consumers) > 1]
    assert shared
    for claim in shared:
        assert claim.owner_pod is None
        assert sorted(p.name for p in claim.pods) == sorted(c.name for c in claim.consumers)


def test_pending_pods_say_why_as_the_scheduler_does(state: ClusterState) -> None:
    nodes = len(state.nodes)
    unschedulable = (
        f"0/{nodes} nodes are available: 1 node(s) had untolerated taint "
        f"{{node-role.kubernetes.io/control-plane: }}, {nodes - 1} cannot allocate all claims. "
        f"preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for "
        "scheduling."
    )
    pending = [p for p in state.pods.values() if p.phase == "Pending" and not p.node_name]
    failed = [p for p in pending if p.claim_refs[0].status == "ok"]
    assert failed
    for pod in failed:
        claim = pod.claims[0]
        assert not claim.allocated
        (event,) = pod.events
        assert (event.reason, event.type) == ("FailedScheduling", "Warning")
        condition = pod.condition("PodScheduled")
        assert condition is not None
        assert condition["message"] == event.message
        if condition["reason"] == "SchedulerError":
            assert event.message == (
                f'running "DynamicResources" filter plugin: claim {claim.ref}: selector #0: '
                "CEL runtime error: no such key: index"
            )
        else:
            assert event.message == unschedulable


def test_events_are_all_linked_to_their_pods(state: ClusterState) -> None:
    assert len(state.events) == SMALL["events"]
    assert sum(len(p.events) for p in state.pods.values()) == SMALL["events"]
    reasons = Counter(e.reason for e in state.events)
    for reason in ("Scheduled", "Pulled", "Started", "FailedScheduling", "BackOff"):
        assert reasons[reason], reason
    creating = [
        p
        for p in state.pods.values()
        if p.node_name and p.containers[0].state[1].get("reason") == "ContainerCreating"
    ]
    assert creating
    for pod in creating:
        assert [e.reason for e in pod.events] == ["FailedPrepareDynamicResources"]
        assert pod.claims[0].consumers[0].pod is pod


def test_devices_carry_the_nvidia_attribute_set(state: ClusterState) -> None:
    uuids = set()
    for device in state.devices.values():
        kind = _attr(device, "type")
        expected = GPU_ATTRIBUTES | ({"parentUUID", "profile"} if kind == "mig" else set())
        assert set(device.attributes) == expected
        uuids.add(_attr(device, "uuid"))
        if kind == "gpu":
            assert device.capacity["memory"]["value"] == MEMORY[_attr(device, "productName")]
        else:
            assert _attr(device, "uuid").startswith("MIG-")
    assert len(uuids) == len(state.devices)
    products = Counter(_attr(d, "productName") for d in state.devices.values())
    drivers = Counter(_attr(d, "driverVersion") for d in state.devices.values())
    assert set(products) == set(MEMORY)
    assert len(drivers) == 3


def test_the_special_cases_are_there(state: ClusterState) -> None:
    incomplete = [p for p in state.pools.values() if not p.complete]
    assert [(len(p.slices), p.resource_slice_count) for p in incomplete] == [(1, 2)]
    stale = [p for p in state.pools.values() if p.stale_slices]
    assert [(p.generation, [s.generation for s in p.stale_slices]) for p in stale] == [(2, [1])]
    assert len(state.slices) == SMALL["nodes"] + 1
    tainted = [d for d in state.devices.values() if d.taints]
    assert len(tainted) >= 3
    assert {t["key"] for d in tainted for t in d.taints} <= {
        "gpu.nvidia.com/xid",
        "gpu.nvidia.com/unmonitored",
    }
    control_plane = [n for n in state.nodes.values() if n.taints]
    assert [n.taints[0]["effect"] for n in control_plane] == ["NoSchedule"]
    assert sorted(state.classes) == ["gpu.nvidia.com", "mig.nvidia.com"]
