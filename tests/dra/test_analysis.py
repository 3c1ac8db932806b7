"""dradash.dra.analysis and the chain keys: what the analyse task stores, computed once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.synthetic import generate
from dradash.demo import cluster as demo
from dradash.dra import analysis, chain, diagnosis, inventory, matching
from dradash.dra.inventory import AttributeFilter
from dradash.dra.kinds import kind_of, object_key
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import device, resource_slice

CLUSTERS = {
    "demo": demo.build(),
    "demo-later": demo.build(later=True),
    "synthetic": generate(nodes=12, devices_per_node=4, pods=40, claims=40, events=60, seed=3),
}


def _state(objects: list[dict[str, Any]]) -> ClusterState:
    return ClusterState.build(objects, SnapshotMeta(server_version=demo.SERVER_VERSION))


def _only(objects: list[dict[str, Any]], keys: list[tuple[str, str, str]]) -> ClusterState:
    """The state of only the objects with these keys, as a page builds it from its chain."""
    wanted = set(keys)
    return _state([o for o in objects if _key(o) in wanted])


def _key(o: dict[str, Any]) -> tuple[str, str, str]:
    """The key the database stores the object under (dradash.dra.kinds.object_key)."""
    kind = kind_of(o)
    assert kind is not None
    return object_key(kind, o)


@pytest.mark.parametrize("name", CLUSTERS)
def test_every_pod_chain_needs_only_its_chain_keys(name: str) -> None:
    objects = CLUSTERS[name]
    full = _state(objects)
    assert full.pods
    for pod in full.pods.values():
        keys = chain.pod_chain_keys(full, pod)
        part = _only(objects, keys)
        assert len(keys) < len(objects)
        assert chain.pod_chain(part, part.pods[pod.key[1:]]) == chain.pod_chain(full, pod), pod


@pytest.mark.parametrize("name", CLUSTERS)
def test_every_claim_chain_needs_only_its_chain_keys(name: str) -> None:
    objects = CLUSTERS[name]
    full = _state(objects)
    assert full.claims
    for claim in full.claims.values():
        part = _only(objects, chain.claim_chain_keys(full, claim))
        assert chain.claim_chain(part, part.claims[claim.key[1:]]) == chain.claim_chain(
            full, claim
        ), claim


def test_analysis_covers_every_pod_claim_device_and_pool() -> None:
    state = _state(CLUSTERS["demo"])
    result = analysis.analyse(state)
    assert {(r.pod.namespace, r.pod.name) for r in result.pods} == set(state.pods)
    assert {(r.claim.namespace, r.claim.name) for r in result.claims} == set(state.claims)
    assert len(result.devices) == len(state.devices)
    assert {(p["driver"], p["pool"]) for p in result.pools} == set(state.pools)
    # Pods that use DRA have a verdict, the others none.
    for r in result.pods:
        assert (r.diagnosis is not None) == r.pod.uses_dra
    # Every unallocated claim has the allocator's answer (shared by claims that ask the same);
    # an allocated claim's answer is the allocation it has, made from the claim when shown.
    assert all((r.explanation is None) == r.claim.allocated for r in result.claims)
    assert any(r.claim.allocated for r in result.claims)
    assert result.summary["dra_pods"] == sum(1 for r in result.pods if r.diagnosis)
    assert result.summary["stuck"] == sum(
        1 for r in result.pods if r.diagnosis and r.diagnosis.stage != "healthy"
    )
    assert set(result.classes) == set(state.classes)
    # Pools that need attention come first.
    flags = [p["attention"] for p in result.pools]
    assert flags == sorted(flags, reverse=True)


def test_severity_and_stage_order() -> None:
    result = analysis.analyse(_state(CLUSTERS["demo"]))
    for r in result.pods:
        if r.diagnosis is None:
            continue
        expected = "ok" if r.diagnosis.stage == "healthy" else ("warning", "error")
        assert analysis.severity(r.diagnosis) in expected
    assert analysis.stage_order("pod-pending") < analysis.stage_order("healthy")


@pytest.mark.parametrize(
    ("attributes", "wanted", "matches"),
    [
        ({"productName": {"string": "H100"}}, "productName=H100", True),
        ({"productName": {"string": "H100"}}, "gpu.example.com/productName=H100", True),
        ({"productName": {"string": "H100"}}, "productName=h100", False),
        ({"productName": {"string": "H100"}}, "productName", True),
        ({"productName": {"string": "H100"}}, "model", False),
        ({"index": {"int": 8}}, "index=08", True),  # ints compare as numbers
        ({"index": {"string": "8"}}, "index=08", False),  # strings as written
        ({"index": {"string": "08"}}, "index=08", True),
        ({"mig": {"bool": True}}, "mig=TRUE", True),
        ({"mig": {"bool": True}}, "mig=1", False),
        ({"driverVersion": {"version": "1.2.3"}}, "driverVersion=1.2.3", True),
        ({"other.io/x": {"string": "a"}}, "x=a", False),  # another domain is never bare
        ({"other.io/x": {"string": "a"}}, "other.io/x=a", True),
        ({"gpu.example.com/x": {"string": "a"}}, "x=a", True),  # the driver's own domain
        ({"gpu.example.com/x": {"string": "a"}}, "gpu.example.com/x=a", True),
        ({"gpu.example.com/x": {"string": "a"}}, "gpu.example.com/x", True),
        ({"x": {"string": "a"}}, "other.io/x=a", False),
        ({"other.io/x": {"string": "a"}}, "other.io/x", True),
        ({"other.io/x": {"string": "a"}}, "gpu.example.com/x", False),
        ({"x": {"string": 'a"\nb'}}, 'x=a"', False),  # a value cannot forge a separator
    ],
)
def test_attribute_tokens_match_like_the_attribute_filter(attributes, wanted, matches) -> None:
    """The stored devices are filtered by their tokens (DeviceRecord.tokens); that must give
    what inventory.AttributeFilter.matches gives on the device itself."""
    s = resource_slice(
        "s",
        driver="gpu.example.com",
        pool="p",
        node_name="n",
        devices=[device("gpu-0", attributes=attributes)],
    )
    state = _state([s])
    (dev,) = state.devices.values()
    wanted_filter = AttributeFilter.parse(wanted)
    assert wanted_filter.matches(dev) is matches
    record = analysis.DeviceRecord(dev, "free", False, [])
    tokens = record.tokens()
    assert (
        any(
            token in tokens and driver in ("", dev.driver)
            for driver, token in analysis.attribute_filter_tokens(wanted_filter)
        )
        is matches
    )


EXPRESSIONS = [
    "device.driver == 'gpu.nvidia.com'",
    "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')",
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
    "device.attributes['gpu.example.com'].index == 0",  # no such key on most devices
    "'gpu.nvidia.com' in device.attributes",
    "'productName' in device.attributes['gpu.nvidia.com']",  # a whole domain's map
    "device.attributes['other.example.com'].model == 'x'",  # a name nobody publishes
    "device.attributes['gpu.example.com'].?model.orValue('') != ''"
    " || device.allowMultipleAllocations",
]


@pytest.mark.parametrize("name", ["demo", "demo-later", "synthetic"])
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_the_stored_device_index_gives_the_verdicts_of_the_snapshot(name, expression) -> None:
    """The playground evaluates over the DeviceIndex the analysis stores, not the slices."""
    state = _state(CLUSTERS[name])
    index = matching.DeviceIndex.from_bytes(matching.DeviceIndex.of(state).to_bytes())
    assert set(index.classes) == set(state.classes)
    for device_class in [None, *state.classes]:
        full = matching.evaluate(state, expression, device_class=device_class)
        stored = matching.evaluate(index, expression, device_class=device_class)
        assert stored.compile_error == full.compile_error
        assert [
            (r.device.key, r.device.node_name, r.state, r.verdict.error) for r in stored.rows
        ] == [(r.device.key, r.device.node_name, r.state, r.verdict.error) for r in full.rows]


@pytest.mark.parametrize("name", ["demo", "demo-later"])
def test_a_stored_device_row_shows_what_the_device_itself_does(name) -> None:
    """The devices page renders device_display of the stored API row; it must say what the
    inventory's helpers say of the device."""
    state = _state(CLUSTERS[name])
    result = analysis.analyse(state)
    assert any(r.holders for r in result.devices)
    for record in result.devices:
        d = record.device
        shown = analysis.device_display(json.loads(json.dumps(record.as_dict())))
        assert shown["key_attributes"] == matching.key_attributes(d, limit=3, capacity=True)
        assert shown["attribute_list"] == inventory.device_attributes(d)
        assert shown["capacity_list"] == inventory.device_capacity(d)
        assert shown["counter_list"] == inventory.consumed_counters(d)
        assert shown["holders"] == record.holders
        assert shown["pod_refs"] == (inventory.device_pods(d) if record.holders else [])


def test_tokens_keep_true_and_1_apart() -> None:
    s = resource_slice(
        "s",
        driver="gpu.example.com",
        pool="p",
        node_name="n",
        devices=[
            device("gpu-0", attributes={"one": {"int": 1}, "yes": {"bool": True}}),
            device("gpu-1", attributes={"yes": {"bool": True}, "one": {"int": 1}}),
        ],
    )
    for dev in _state([s]).devices.values():
        tokens = analysis.DeviceRecord(dev, "free", False, []).tokens()
        assert '"one"=1' in tokens and '"yes"=true' in tokens
        assert '"one"=true' not in tokens and '"yes"=1' not in tokens


@pytest.mark.parametrize("name", CLUSTERS)
def test_the_analysis_gives_the_diagnosis_of_the_pods_and_claims(name) -> None:
    """The analysis explains every claim first and lets the diagnoses reuse those answers: the
    verdicts must be those the diagnosis gives alone (a claim that Pods run with: in use,
    analysis.claim_in_use)."""
    state = _state(CLUSTERS[name])
    alone = diagnosis.diagnose_all(state)
    for key, claim in state.claims.items():
        alone.claims[key] = analysis.claim_in_use(claim, alone.claims[key], alone.pods)
    result = analysis.analyse(_state(CLUSTERS[name]))
    for r in result.pods:
        if r.diagnosis is not None:
            want = alone.pods[(r.pod.namespace, r.pod.name)]
            assert (r.diagnosis.stage, r.diagnosis.reason, r.diagnosis.summary) == (
                want.stage,
                want.reason,
                want.summary,
            )
    for c in result.claims:
        want = alone.claims[(c.claim.namespace, c.claim.name)]
        assert (c.diagnosis.stage, c.diagnosis.reason, c.diagnosis.summary) == (
            want.stage,
            want.reason,
            want.summary,
        )
