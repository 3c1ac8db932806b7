"""The device inventory: what the allocator would use, counted per class, node, driver and pool."""

from __future__ import annotations

from typing import Any

import pytest

from dradash.dra.inventory import (
    AttributeFilter,
    AttributeFilterError,
    Tally,
    attribute_matches,
    attribute_names,
    attribute_text,
    device_capacity,
    device_pods,
    inventory,
)
from dradash.dra.state import ClusterState, SnapshotMeta
from tests.dra.builders import (
    claim,
    consumer,
    device,
    device_class,
    fixture_objects,
    node,
    pod,
    resource_slice,
    result,
    taint_rule,
)

EXAMPLE_CLASS = device_class("gpu.example.com", "device.driver == 'gpu.example.com'")


def build(*objects: dict[str, Any], version: str = "") -> ClusterState:
    return ClusterState.build(list(objects), SnapshotMeta(server_version=version))


def example_gpu(index: int, **fields: Any) -> dict[str, Any]:
    """A device as dra-example-driver publishes it (README resourceslice-list-8gpu)."""
    return device(
        f"gpu-{index}",
        attributes={
            "driverVersion": {"version": "1.0.0"},
            "index": {"int": index},
            "model": {"string": "LATEST-GPU-MODEL"},
            "uuid": {"string": f"gpu-{index:08d}"},
        },
        **fields,
    )


def statuses(state: ClusterState) -> dict[str, str]:
    inv = inventory(state)
    return {"/".join(d.key[1:]): inv.status(d) for d in state.devices.values()}


def counts(tally: Tally) -> tuple[int, int, int, int, int]:
    return (tally.allocated, tally.unusable, tally.tainted, tally.free, tally.tainted_any)


# --- pools: stale, incomplete, invalid -----------------------------------------------------------


def test_stale_slices_hold_no_devices_and_are_listed_with_their_generation() -> None:
    state = build(
        node("worker-1"),
        EXAMPLE_CLASS,
        resource_slice(
            "worker-1-gpu.example.com-new",
            pool="worker-1",
            node_name="worker-1",
            generation=2,
            devices=[example_gpu(0), example_gpu(1)],
        ),
        resource_slice(
            "worker-1-gpu.example.com-old",
            pool="worker-1",
            node_name="worker-1",
            generation=1,
            devices=[example_gpu(i) for i in range(4)],
        ),
    )
    inv = inventory(state)
    pool = inv.pools[("gpu.example.com", "worker-1")]
    assert pool.stale == [("worker-1-gpu.example.com-old", 1, 4)]
    assert pool.usable and pool.attention
    assert pool.tally.total == 2
    assert inv.total.total == 2 and inv.by_node["worker-1"].free == 2
    assert inv.classes[0].tally.total == 2


def test_an_incomplete_pool_is_skipped_from_1_35_on_and_used_by_1_34() -> None:
    objects = (
        node("worker-2"),
        EXAMPLE_CLASS,
        resource_slice(
            "worker-2-gpu.example.com-a",
            pool="worker-2",
            node_name="worker-2",
            count=2,  # resourceSliceCount 2, one slice seen
            devices=[example_gpu(0), example_gpu(1)],
        ),
    )
    for version in ("v1.36.1", ""):  # no version: dradash assumes 1.36
        inv = inventory(build(*objects, version=version))
        pool = inv.pools[("gpu.example.com", "worker-2")]
        assert pool.problem == "incomplete" and not pool.usable
        assert counts(inv.classes[0].tally) == (0, 2, 0, 0, 0)
        assert inv.by_node["worker-2"].free == 0
    old = inventory(build(*objects, version="v1.34.3"))
    assert old.pools[("gpu.example.com", "worker-2")].problem == ""
    assert counts(old.classes[0].tally) == (0, 0, 0, 2, 0)


def test_a_pool_with_a_duplicate_device_name_is_invalid_on_every_version() -> None:
    objects = (
        node("worker-3"),
        EXAMPLE_CLASS,
        resource_slice(
            "worker-3-a",
            pool="worker-3",
            node_name="worker-3",
            count=2,
            devices=[example_gpu(0), example_gpu(1)],
        ),
        resource_slice(
            "worker-3-b", pool="worker-3", node_name="worker-3", count=2, devices=[example_gpu(1)]
        ),
    )
    for version in ("v1.34.0", "v1.36.0"):
        state = build(*objects, version=version)
        pool = inventory(state).pools[("gpu.example.com", "worker-3")]
        assert pool.problem == "invalid"
        assert pool.duplicates == ["gpu-1"]
        assert statuses(state) == {"worker-3/gpu-0": "unusable", "worker-3/gpu-1": "unusable"}


def test_an_allocated_device_in_a_skipped_pool_stays_allocated() -> None:
    state = build(
        EXAMPLE_CLASS,
        resource_slice("s", pool="node-1", node_name="node-1", count=3),
        claim("held", results=[result("gpu", "gpu-0")]),
    )
    assert statuses(state) == {"node-1/gpu-0": "allocated", "node-1/gpu-1": "unusable"}


# --- taints ---------------------------------------------------------------------------------------


def test_taints_from_the_slice_and_from_device_taint_rules() -> None:
    rule = fixture_objects(
        "dra-example-driver__device-taints-tolerations__device-taint-pod-noschedule__"
        "3-device-taint-rule.yaml"
    )[0]
    rule["spec"]["deviceSelector"] = {"driver": "gpu.example.com", "device": "gpu-2"}
    state = build(
        node("worker-4"),
        EXAMPLE_CLASS,
        resource_slice(
            "worker-4-slice",
            pool="worker-4",
            node_name="worker-4",
            devices=[
                example_gpu(0, taints=[{"key": "gpu.example.com/xid", "effect": "NoSchedule"}]),
                example_gpu(1, taints=[{"key": "gpu.example.com/xid", "effect": "NoExecute"}]),
                example_gpu(2),
                example_gpu(3, taints=[{"key": "example.com/info", "effect": "None"}]),
                example_gpu(4),
            ],
        ),
        rule,
        claim("trainer", results=[result("gpu", "gpu-0", pool="worker-4")]),
    )
    assert statuses(state) == {
        "worker-4/gpu-0": "allocated",  # tainted after allocation: still held
        "worker-4/gpu-1": "tainted",
        "worker-4/gpu-2": "tainted",  # by the DeviceTaintRule
        "worker-4/gpu-3": "free",  # an effect that does not keep claims away
        "worker-4/gpu-4": "free",
    }
    inv = inventory(state)
    assert counts(inv.by_node["worker-4"]) == (1, 0, 2, 2, 3)
    assert counts(inv.classes[0].tally) == (1, 0, 2, 2, 3)


def test_a_device_taint_rule_for_the_whole_driver_taints_every_device() -> None:
    rule = taint_rule(
        "example", {"driver": "gpu.example.com"}, {"key": "k", "value": "v", "effect": "NoSchedule"}
    )
    state = build(EXAMPLE_CLASS, resource_slice("s", node_name="node-1"), rule)
    assert set(statuses(state).values()) == {"tainted"}


# --- classes, nodes, drivers ----------------------------------------------------------------------


def test_class_membership_follows_the_class_selectors() -> None:
    h100 = {"productName": {"string": "NVIDIA H100 80GB HBM3"}, "type": {"string": "gpu"}}
    mig = {"productName": {"string": "NVIDIA H100 80GB HBM3"}, "type": {"string": "mig"}}
    state = build(
        node("h100-node-01"),
        device_class(
            "gpu.nvidia.com",
            "device.driver == 'gpu.nvidia.com' && "
            "device.attributes['gpu.nvidia.com'].type == 'gpu'",
        ),
        device_class(
            "mig.nvidia.com",
            "device.driver == 'gpu.nvidia.com' && "
            "device.attributes['gpu.nvidia.com'].type == 'mig'",
        ),
        device_class("broken.example.com", "device.driver =="),  # does not compile
        device_class("any"),  # no selectors: every device
        resource_slice(
            "00000-gpu.nvidia.com-h100-node-01-gdnk7",
            driver="gpu.nvidia.com",
            pool="h100-node-01",
            node_name="h100-node-01",
            devices=[
                device("gpu-0", attributes=h100),
                device("gpu-1", attributes=h100),
                device("gpu-2-mig-1g10gb-19-0", attributes=mig),
                device("gpu-3", attributes={}),  # no type: a runtime error, so not admitted
            ],
        ),
        claim(
            "vllm",
            results=[result("gpu", "gpu-0", driver="gpu.nvidia.com", pool="h100-node-01")],
        ),
    )
    inv = inventory(state)
    by_name = {c.name: c for c in inv.classes}
    assert list(by_name) == ["any", "broken.example.com", "gpu.nvidia.com", "mig.nvidia.com"]
    assert counts(by_name["gpu.nvidia.com"].tally) == (1, 0, 0, 1, 0)
    assert counts(by_name["mig.nvidia.com"].tally) == (0, 0, 0, 1, 0)
    assert by_name["any"].tally.total == 4
    assert by_name["broken.example.com"].error and by_name["broken.example.com"].tally.total == 0
    gpu0 = state.devices[("gpu.nvidia.com", "h100-node-01", "gpu-0")]
    assert inv.classes_of(gpu0) == ["any", "gpu.nvidia.com"]


def test_tallies_per_node_and_driver_and_devices_every_node_reaches() -> None:
    state = build(
        node("worker-1"),
        node("worker-2"),
        resource_slice("w1", pool="worker-1", node_name="worker-1"),
        resource_slice("w2", pool="worker-2", node_name="worker-2"),
        resource_slice(
            "nics", driver="dra.net", pool="fabric", all_nodes=True, devices=[device("nic-0")]
        ),
        claim("one", results=[result("gpu", "gpu-1", pool="worker-2")]),
    )
    inv = inventory(state)
    assert {n: (t.allocated, t.free) for n, t in inv.by_node.items()} == {
        "worker-1": (0, 2),
        "worker-2": (1, 1),
        "": (0, 1),  # not tied to one node
    }
    assert list(inv.by_driver) == ["dra.net", "gpu.example.com"]
    assert inv.by_driver["gpu.example.com"].total == 4
    assert inv.by_node["worker-2"].used == 0.5


def test_admin_access_does_not_allocate_a_device() -> None:
    state = build(
        resource_slice("s", node_name="node-1"),
        claim("monitor", results=[result("gpu", "gpu-0", adminAccess=True)]),
    )
    assert statuses(state)["node-1/gpu-0"] == "free"


# --- shared counters ------------------------------------------------------------------------------


def test_counters_of_the_docs_example_pool_with_one_device_allocated() -> None:
    slices = fixture_objects("k8s-website__docs__dra-features__resourceslices-countersets.yaml")
    state = build(
        *slices,
        claim("part", results=[result("gpu", "device-1", driver="dra.example.com", pool="pool")]),
    )
    info = inventory(state).pools[("dra.example.com", "pool")]
    assert info.pool.complete and info.usable
    [counter_set] = info.counter_sets
    assert counter_set.name == "gpu-1-counters"
    [memory] = counter_set.counters
    assert (memory.name, memory.consumed, memory.total, memory.fraction) == (
        "memory",
        "6Gi",
        "8Gi",
        0.75,
    )


def test_counters_of_nvidia_dynamic_mig_summed_over_allocated_devices() -> None:
    slices = fixture_objects(
        "nvidia-gpu__SYNTH__h100-dynamic-mig-partitionable-resourceslices.yaml"
    )
    pool = "h100-dynmig-node-01"
    state = build(
        *slices,
        claim(
            "mig",
            results=[
                result("a", "gpu-0-mig-1g10gb-19-0", driver="gpu.nvidia.com", pool=pool),
                result("b", "gpu-0-mig-1g10gb-19-1", driver="gpu.nvidia.com", pool=pool),
                result("c", "gpu-1", driver="gpu.nvidia.com", pool=pool),
            ],
        ),
        claim(  # admin access consumes nothing
            "monitor",
            results=[result("m", "gpu-2", driver="gpu.nvidia.com", pool=pool, adminAccess=True)],
        ),
    )
    info = inventory(state).pools[("gpu.nvidia.com", pool)]
    assert info.pool.complete and len(info.pool.slices) == 9
    sets = {s.name: {c.name: c for c in s.counters} for s in info.counter_sets}
    assert len(sets) == 8
    gpu0 = sets["gpu-0-counter-set"]
    assert (gpu0["memory"].consumed, gpu0["memory"].total) == ("19968Mi", "81152Mi")
    assert gpu0["multiprocessors"].consumed == "32"
    assert gpu0["memory-slice-1"].fraction == 1.0 and gpu0["memory-slice-2"].consumed == "0"
    gpu1 = sets["gpu-1-counter-set"]
    assert gpu1["memory"].consumed == gpu1["memory"].total  # the full GPU takes everything
    assert sets["gpu-2-counter-set"]["memory"].consumed == "0"
    assert max(s.busiest.fraction for s in info.counter_sets if s.busiest) == 1.0


def test_capacity_consumed_by_the_shares_of_a_device_that_allows_multiple_allocations() -> None:
    slices = fixture_objects(
        "k8s-website__docs__dra-features__resourceslice-consumable-capacity.yaml"
    )
    shares = [
        claim(
            f"net-{i}",
            results=[
                result(
                    "nic",
                    "eth1",
                    driver="dra.example.com",
                    pool="pool",
                    shareID=f"a671734a-e8e5-11e4-8fde-42010af0932{i}",
                    consumedCapacity={"bandwidth": "1G"},
                )
            ],
        )
        for i in range(3)
    ]
    state = build(*slices, *shares)
    eth1 = state.devices[("dra.example.com", "pool", "eth1")]
    assert device_capacity(eth1) == [("bandwidth", "10G", "3G")]
    assert statuses(state) == {"pool/eth1": "allocated"}


def test_pools_name_their_nodes_unless_named_after_their_one_node() -> None:
    state = build(
        resource_slice("a", pool="worker-1", node_name="worker-1"),
        *fixture_objects("k8s-website__docs__dra-features__resourceslices-countersets.yaml"),
    )
    pools = inventory(state).pools
    assert pools[("gpu.example.com", "worker-1")].other_nodes == []
    assert pools[("dra.example.com", "pool")].other_nodes == ["worker-1"]


# --- the attribute filter -------------------------------------------------------------------------


def nvidia_state() -> ClusterState:
    return build(
        resource_slice(
            "00000-gpu.nvidia.com-a100-node-01-p4x7q",
            driver="gpu.nvidia.com",
            pool="a100-node-01",
            node_name="a100-node-01",
            devices=[
                device(
                    "gpu-0",
                    attributes={
                        "productName": {"string": "NVIDIA A100-SXM4-40GB"},
                        "cudaComputeCapability": {"version": "8.0.0"},
                        "index": {"int": 0},
                        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                        "gpu.nvidia.com/brand": {"string": "Nvidia"},
                    },
                ),
                device(
                    "gpu-1",
                    attributes={
                        "productName": {"string": "NVIDIA H100 80GB HBM3"},
                        "index": {"int": 1},
                        "mig": {"bool": True},
                        "cores": {"ints": [0, 1, 2]},
                    },
                ),
            ],
        ),
        resource_slice(
            "worker-1-gpu.example.com",
            pool="worker-1",
            node_name="worker-1",
            devices=[example_gpu(0)],
        ),
    )


def matching(state: ClusterState, text: str) -> list[str]:
    """The devices the filter matches, one by one and through the per-name value index."""
    wanted = AttributeFilter.parse(text)
    one_by_one = sorted("/".join(d.key[1:]) for d in state.devices.values() if wanted.matches(d))
    ids = attribute_matches(state, wanted)
    indexed = sorted("/".join(d.key[1:]) for d in state.devices.values() if id(d) in ids)
    assert indexed == one_by_one
    return one_by_one


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A bare name is the device's driver's domain, as in CEL.
        ("productName", ["a100-node-01/gpu-0", "a100-node-01/gpu-1"]),
        ("gpu.nvidia.com/productName", ["a100-node-01/gpu-0", "a100-node-01/gpu-1"]),
        ("productName=NVIDIA H100 80GB HBM3", ["a100-node-01/gpu-1"]),
        # Published qualified, found bare or qualified.
        ("brand=Nvidia", ["a100-node-01/gpu-0"]),
        ("gpu.nvidia.com/brand", ["a100-node-01/gpu-0"]),
        # Another domain must be named.
        ("pcieRoot", []),
        ("resource.kubernetes.io/pcieRoot=pci0000:00", ["a100-node-01/gpu-0"]),
        # ints as numbers, bools as true/false, versions as written, lists by element.
        ("index=0", ["a100-node-01/gpu-0", "worker-1/gpu-0"]),
        ("index=00", ["a100-node-01/gpu-0", "worker-1/gpu-0"]),
        ("gpu.example.com/index=0", ["worker-1/gpu-0"]),
        ("mig=true", ["a100-node-01/gpu-1"]),
        ("mig=TRUE", ["a100-node-01/gpu-1"]),
        ("mig=false", []),
        ("cudaComputeCapability=8.0.0", ["a100-node-01/gpu-0"]),
        ("driverVersion=1.0.0", ["worker-1/gpu-0"]),
        ("cores=2", ["a100-node-01/gpu-1"]),
        ("model=LATEST-GPU-MODEL", ["worker-1/gpu-0"]),
        ("model=latest-gpu-model", []),  # as written
        ("index=one", []),
        ("noSuchAttribute", []),
    ],
)
def test_attribute_filter(text: str, expected: list[str]) -> None:
    assert matching(nvidia_state(), text) == expected


@pytest.mark.parametrize("text", ["", "=x", "gpu.nvidia.com/", "/name", "a/b/c", "9lives", "a b"])
def test_attribute_filter_refuses_what_is_not_a_name(text: str) -> None:
    with pytest.raises(AttributeFilterError):
        AttributeFilter.parse(text)


def test_attribute_names_are_qualified_with_the_driver_domain() -> None:
    names = attribute_names(nvidia_state())
    assert "gpu.nvidia.com/productName" in names
    assert "resource.kubernetes.io/pcieRoot" in names
    assert "gpu.example.com/model" in names
    assert "productName" not in names


def test_attribute_text_as_one_would_filter_for_it() -> None:
    assert attribute_text({"bool": False}) == "false"
    assert attribute_text({"version": "8.0.0"}) == "8.0.0"
    assert attribute_text({"ints": [0, 1]}) == "[0, 1]"
    assert attribute_text({}) == ""


def test_device_pods_are_those_the_claim_is_reserved_for() -> None:
    p = pod("trainer-0", node_name="node-1", claims=[{"name": "gpu", "resourceClaimName": "c"}])
    other = pod("waiting", claims=[{"name": "gpu", "resourceClaimName": "c"}])
    state = build(
        resource_slice("s", node_name="node-1"),
        p,
        other,
        claim("c", results=[result("gpu", "gpu-0")], reserved_for=[consumer(p)]),
    )
    held = state.devices[("gpu.example.com", "node-1", "gpu-0")]
    assert device_pods(held) == [("default", "trainer-0")]


# --- the inventory agrees with the allocator ------------------------------------------------------


def test_device_states_are_the_allocator_funnel_steps_devices_stop_at() -> None:
    """Each device's inventory state is where the allocator's funnel would drop it for a plain
    one-device request of the class: unusable at "pools", allocated at "free", tainted at
    "taints", free passing every step; stale slices hold no device the allocator looks at."""
    from dradash.dra.allocator import explain
    from dradash.dra.objects import ResourceClaim

    noschedule = [{"key": "gpu.example.com/xid", "effect": "NoSchedule"}]
    state = build(
        node("worker"),
        EXAMPLE_CLASS,
        resource_slice(
            "worker-gen2",
            pool="worker",
            node_name="worker",
            generation=2,
            devices=[
                example_gpu(0),
                example_gpu(1, taints=noschedule),
                example_gpu(2),
                example_gpu(3, taints=[{"key": "example.com/info", "effect": "None"}]),
            ],
        ),
        resource_slice("worker-gen1", pool="worker", node_name="worker", devices=[example_gpu(9)]),
        resource_slice(
            "worker-b-1-of-2",
            pool="worker-b",
            node_name="worker",
            count=2,
            devices=[example_gpu(0), example_gpu(1)],
        ),
        claim("held", results=[result("gpu", "gpu-0", pool="worker")]),
        claim("waiting"),
        version="v1.36.1",
    )
    explanation = explain(state, [ResourceClaim(state.claims[("default", "waiting")].raw)])
    assert explanation.allocatable is True
    step = {f"{d.pool}/{d.device}": d.failed_step for r in explanation.requests for d in r.devices}
    expected_step = {"unusable": "pools", "allocated": "free", "tainted": "taints", "free": None}
    inv = statuses(state)
    assert set(step) == set(inv)  # the stale slice's gpu-9 is in neither
    assert {key: expected_step[s] for key, s in inv.items()} == step
    assert sorted(inv.values()) == ["allocated", "free", "free", "tainted", "unusable", "unusable"]
