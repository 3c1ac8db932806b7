"""ClusterState: every relation between the objects of one snapshot, resolved."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from dradash.dra import chain
from dradash.dra.objects import ResourceClaim
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    DRIVER,
    claim,
    consumer,
    container,
    core_event,
    device,
    device_class,
    fixture_objects,
    generated_claim,
    job,
    new_event,
    node,
    owner,
    pod,
    pod_claim,
    request,
    resource_slice,
    result,
    selector_in,
    selector_name,
    taint_rule,
    template,
)


def build(*objects: dict[str, Any]) -> ClusterState:
    return ClusterState.build(objects)


def only_ref(state: ClusterState, name: str = "p", namespace: str = "default") -> Any:
    (ref,) = state.pods[(namespace, name)].claim_refs
    return ref


# --- Pod -> ResourceClaim (resourceClaimName) -----------------------------------------------


def test_pod_finds_the_claim_it_names() -> None:
    p = pod("p", "ns", claims=[pod_claim("gpu", claim="shared")])

    state = build(p, claim("shared", "ns"))

    ref = only_ref(state, namespace="ns")
    assert ref.status == "ok"
    assert ref.source == "claim"
    assert ref.claim is state.claims[("ns", "shared")]
    assert ref.claim_name == "shared"
    assert state.claims[("ns", "shared")].pods == [state.pods[("ns", "p")]]
    assert state.pods[("ns", "p")].claims == [ref.claim]


def test_pod_claim_lookup_stays_in_the_pods_namespace() -> None:
    p = pod("p", "ns", claims=[pod_claim("gpu", claim="shared")])

    state = build(p, claim("shared", "other"))

    ref = only_ref(state, namespace="ns")
    assert ref.status == "claim-missing"
    assert ref.claim is None
    assert chain.claim_ref_message(ref) == "ResourceClaim ns/shared does not exist."


def test_a_shared_claim_lists_every_pod_using_it() -> None:
    pods = [pod(f"pod{i}", claims=[pod_claim("gpu", claim="shared")]) for i in (1, 2)]

    state = build(*pods, claim("shared"))

    assert [p.name for p in state.claims[("default", "shared")].pods] == ["pod1", "pod2"]


# --- Pod -> ResourceClaimTemplate -> generated claim ------------------------------------------


def test_generated_claim_found_through_status_and_owned_by_the_pod_is_ok() -> None:
    p = pod(
        "p",
        claims=[pod_claim("gpu", template="single-gpu")],
        claim_statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-x7k2q"}],
    )
    generated = generated_claim(p, "gpu", name="p-gpu-x7k2q")

    state = build(p, generated, template("single-gpu"))

    ref = only_ref(state)
    claim_obj = state.claims[("default", "p-gpu-x7k2q")]
    tmpl = state.templates[("default", "single-gpu")]
    assert ref.status == "ok"
    assert ref.source == "template"
    assert ref.template_name == "single-gpu"
    assert ref.claim is claim_obj
    assert ref.template is tmpl
    assert claim_obj.owner_pod is state.pods[("default", "p")]
    assert claim_obj.template is tmpl
    assert tmpl.claims == [claim_obj]
    assert tmpl.pods == [state.pods[("default", "p")]]
    assert claim_obj.pods == [state.pods[("default", "p")]]
    assert chain.claim_ref_message(ref) == ""


def test_generated_claim_owned_by_another_pod_is_not_owned() -> None:
    p = pod(
        "p",
        claims=[pod_claim("gpu", template="t")],
        claim_statuses=[{"name": "gpu", "resourceClaimName": "q-gpu-abcde"}],
    )
    q = pod("q")
    foreign = generated_claim(q, "gpu", name="q-gpu-abcde")

    state = build(p, q, foreign, template("t"))

    ref = only_ref(state)
    assert ref.status == "not-owned"
    assert ref.claim is state.claims[("default", "q-gpu-abcde")]
    assert state.claims[("default", "q-gpu-abcde")].template is None
    assert state.templates[("default", "t")].claims == []
    assert chain.claim_ref_message(ref) == (
        "ResourceClaim default/q-gpu-abcde was not created for this Pod (its owner is q)."
    )


def test_a_claim_without_a_pod_owner_named_by_the_status_is_not_owned() -> None:
    p = pod(
        "p",
        claims=[pod_claim("gpu", template="t")],
        claim_statuses=[{"name": "gpu", "resourceClaimName": "hand-made"}],
    )

    state = build(p, claim("hand-made"), template("t"))

    ref = only_ref(state)
    assert ref.status == "not-owned"
    assert "its owner is not a Pod" in chain.claim_ref_message(ref)


def test_a_claim_owned_by_a_pod_of_the_same_name_but_another_uid_is_not_owned() -> None:
    # The Pod was deleted and re-created; the claim belongs to the old incarnation.
    p = pod(
        "p",
        uid="new-uid",
        claims=[pod_claim("gpu", template="t")],
        claim_statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-old"}],
    )
    stale = claim("p-gpu-old", owners=[owner("Pod", "p", "old-uid")])

    state = build(p, stale, template("t"))

    assert only_ref(state).status == "not-owned"
    assert state.claims[("default", "p-gpu-old")].owner_pod is None


def test_status_names_a_claim_that_does_not_exist() -> None:
    p = pod(
        "p",
        claims=[pod_claim("gpu", template="t")],
        claim_statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-gone"}],
    )

    state = build(p, template("t"))

    ref = only_ref(state)
    assert ref.status == "claim-missing"
    assert ref.claim_name == "p-gpu-gone"


def test_no_status_entry_yet_with_the_template_present_is_not_created() -> None:
    p = pod("p", claims=[pod_claim("gpu", template="t")], claim_statuses=[])

    state = build(p, template("t"))

    ref = only_ref(state)
    assert ref.status == "not-created"
    assert ref.template is state.templates[("default", "t")]
    assert "No claim has been generated from template t yet" in chain.claim_ref_message(ref)


def test_no_status_entry_and_no_template_is_template_missing() -> None:
    p = pod("p", claims=[pod_claim("gpu", template="t")])

    state = build(p, template("t", "elsewhere"))

    ref = only_ref(state)
    assert ref.status == "template-missing"
    assert ref.template is None
    assert chain.claim_ref_message(ref) == (
        "ResourceClaimTemplate default/t does not exist, so no claim can be generated for this Pod."
    )


def test_status_entry_without_a_claim_name_means_no_claim_is_needed() -> None:
    p = pod(
        "p",
        claims=[pod_claim("gpu", template="t")],
        claim_statuses=[{"name": "gpu"}],
    )

    state = build(p, template("t"))

    ref = only_ref(state)
    assert ref.status == "not-needed"
    assert ref.claim is None
    assert chain.claim_ref_message(ref) == (
        "The resourceclaim controller recorded that no claim is needed."
    )


def test_generated_claim_is_found_by_annotation_and_owner_before_the_status_is_written() -> None:
    p = pod("p", claims=[pod_claim("gpu", template="t")])
    generated = generated_claim(p, "gpu", name="p-gpu-zz9")

    state = build(p, generated, template("t"))

    ref = only_ref(state)
    assert ref.status == "ok"
    assert ref.claim is state.claims[("default", "p-gpu-zz9")]
    assert ref.claim_name == "p-gpu-zz9"
    assert state.templates[("default", "t")].claims == [ref.claim]


def test_annotation_for_another_pod_claim_name_is_not_used() -> None:
    p = pod("p", claims=[pod_claim("gpu", template="t")])
    other = generated_claim(p, "nic", name="p-nic-1")

    state = build(p, other, template("t"))

    assert only_ref(state).status == "not-created"


def test_annotated_claim_owned_by_another_pod_is_not_taken() -> None:
    p = pod("p", claims=[pod_claim("gpu", template="t")])
    q = pod("q")
    lookalike = generated_claim(q, "gpu", name="q-gpu-1")

    state = build(p, q, lookalike, template("t"))

    assert only_ref(state).status == "not-created"


@pytest.mark.parametrize(
    "entry",
    [{"name": "gpu"}, {"name": "gpu", "resourceClaimName": ""}, {"name": "gpu", "x": 1}],
)
def test_entry_with_neither_claim_nor_template_is_invalid(entry: dict[str, Any]) -> None:
    state = build(pod("p", claims=[entry]))

    ref = only_ref(state)
    assert ref.status == "invalid"
    assert chain.claim_ref_message(ref) == (
        "Neither resourceClaimName nor resourceClaimTemplateName is set."
    )


def test_two_claims_from_one_template_get_their_own_generated_claims() -> None:
    # k8s e2e pod-inline-multiple: one Pod, two entries, the same template
    p = pod(
        "p",
        claims=[pod_claim("a", template="t"), pod_claim("b", template="t")],
        claim_statuses=[
            {"name": "a", "resourceClaimName": "p-a-1"},
            {"name": "b", "resourceClaimName": "p-b-1"},
        ],
    )

    state = build(
        p, generated_claim(p, "a", "p-a-1"), generated_claim(p, "b", "p-b-1"), template("t")
    )

    refs = state.pods[("default", "p")].claim_refs
    assert [(r.name, r.claim_name, r.status) for r in refs] == [
        ("a", "p-a-1", "ok"),
        ("b", "p-b-1", "ok"),
    ]
    assert [c.name for c in state.templates[("default", "t")].claims] == ["p-a-1", "p-b-1"]


def test_a_pod_using_one_template_twice_is_listed_once_by_the_template() -> None:
    p = pod("p", claims=[pod_claim("a", template="t"), pod_claim("b", template="t")])

    state = build(p, template("t"))

    assert [x.name for x in state.templates[("default", "t")].pods] == ["p"]


# --- containers and extended resources ------------------------------------------------------


def test_container_usage_includes_init_containers_and_requests() -> None:
    p = pod(
        "p",
        claims=[pod_claim("gpus", claim="c"), pod_claim("unused", claim="c2")],
        init_containers=[
            container("init", "gpus"),
            container("sidecar", ("gpus", "small"), restartPolicy="Always"),
        ],
        containers=[container("main", ("gpus", "big")), container("other")],
    )

    state = build(p, claim("c"), claim("c2"))

    refs = {r.name: r for r in state.pods[("default", "p")].claim_refs}
    assert refs["gpus"].containers == [("init", ""), ("sidecar", "small"), ("main", "big")]
    assert refs["unused"].containers == []
    containers = {c.name: c for c in state.pods[("default", "p")].containers}
    assert containers["init"].init and not containers["init"].sidecar
    assert containers["sidecar"].sidecar
    assert not containers["main"].init
    assert containers["main"].claims == [("gpus", "big")]


def test_extended_resource_claim_makes_a_pod_use_dra_without_resource_claims() -> None:
    p = pod(
        "p",
        containers=[container("ctr0")],
        extended={
            "resourceClaimName": "p-extended-resources-4k9",
            "requestMappings": [
                {
                    "containerName": "ctr0",
                    "resourceName": "example.com/gpu",
                    "requestName": "container-0-request-0",
                }
            ],
        },
    )
    extended = claim("p-extended-resources-4k9", owners=[owner("Pod", "p", "uid-pod-p")])

    state = build(p, extended, pod("plain", containers=[container("c")]))

    pod_obj = state.pods[("default", "p")]
    ref = only_ref(state)
    assert pod_obj.uses_dra
    assert state.dra_pods == [pod_obj]
    assert ref.source == "extended-resource"
    assert ref.status == "ok"
    assert ref.claim is state.claims[("default", "p-extended-resources-4k9")]
    assert ref.containers == [("ctr0", "container-0-request-0")]
    assert ref.claim.pods == [pod_obj]


def test_extended_resource_claim_that_is_gone_is_claim_missing() -> None:
    p = pod("p", extended={"resourceClaimName": "p-ext"})

    ref = only_ref(build(p))

    assert ref.status == "claim-missing"
    assert ref.claim_name == "p-ext"


def test_pod_with_both_kinds_of_claims_lists_spec_claims_first() -> None:
    p = pod("p", claims=[pod_claim("gpu", claim="c")], extended={"resourceClaimName": "p-ext"})

    state = build(p, claim("c"), claim("p-ext"))

    assert [r.source for r in state.pods[("default", "p")].claim_refs] == [
        "claim",
        "extended-resource",
    ]


def test_pods_without_claims_do_not_use_dra() -> None:
    state = build(pod("p"), pod("q", extended={}))

    assert state.dra_pods == []
    assert all(p.claim_refs == [] for p in state.pods.values())


# --- reservedFor and owners ------------------------------------------------------------------


def test_reserved_for_finds_pods_by_uid() -> None:
    p = pod("p", uid="u-1")
    c = claim("c", results=[], reserved_for=[{"resource": "pods", "name": "renamed", "uid": "u-1"}])

    (entry,) = build(p, c).claims[("default", "c")].consumers

    assert entry.pod is not None and entry.pod.name == "p"


def test_reserved_for_falls_back_to_the_name_when_there_is_no_uid() -> None:
    p = pod("p")
    c = claim("c", results=[], reserved_for=[consumer(p, with_uid=False)])

    (entry,) = build(p, c).claims[("default", "c")].consumers

    assert entry.pod is not None and entry.pod.name == "p"


def test_reserved_for_a_pod_that_was_recreated_finds_no_pod() -> None:
    p = pod("p", uid="new")
    c = claim("c", results=[], reserved_for=[{"resource": "pods", "name": "p", "uid": "old"}])

    (entry,) = build(p, c).claims[("default", "c")].consumers

    assert entry.pod is None


def test_reserved_for_does_not_look_in_other_namespaces() -> None:
    p = pod("p", "other")
    c = claim("c", results=[], reserved_for=[consumer(p, with_uid=False)])

    (entry,) = build(p, c).claims[("default", "c")].consumers

    assert entry.pod is None


def test_reserved_for_non_pod_consumers_are_kept_without_a_pod() -> None:
    p = pod("p")
    c = claim(
        "c",
        results=[],
        reserved_for=[{"apiGroup": "x.io", "resource": "workloads", "name": "p", "uid": "w1"}],
    )

    (entry,) = build(p, c).claims[("default", "c")].consumers

    assert (entry.resource, entry.name, entry.uid, entry.pod) == ("workloads", "p", "w1", None)


def test_owner_pod_is_found_by_uid_even_when_the_name_differs() -> None:
    p = pod("p", uid="u-1")
    c = claim("c", owners=[owner("Pod", "old-name", "u-1")])

    assert build(p, c).claims[("default", "c")].owner_pod is not None


def test_owner_pod_is_found_by_name_when_the_reference_has_no_uid() -> None:
    p = pod("p", uid="u-1")
    c = claim("c", owners=[owner("Pod", "p")])

    assert build(p, c).claims[("default", "c")].owner_pod is not None


def test_non_controller_owner_references_are_not_owners() -> None:
    p = pod("p", uid="u-1")
    c = claim("c", owners=[owner("Pod", "p", "u-1", controller=False)])

    assert build(p, c).claims[("default", "c")].owner_pod is None


# --- allocation results and devices -----------------------------------------------------------


def _allocated_world() -> list[dict[str, Any]]:
    return [
        node("node-1"),
        resource_slice(
            "node-1-gpus", node_name="node-1", devices=[device("gpu-0"), device("gpu-1")]
        ),
        claim("a", results=[result("gpu", "gpu-0")]),
        claim("watcher", results=[result("gpu", "gpu-1", adminAccess=True)]),
        claim("gone", results=[result("gpu", "gpu-7")]),
    ]


def test_allocation_results_resolve_to_devices() -> None:
    state = build(*_allocated_world())

    (res,) = state.claims[("default", "a")].results
    gpu0 = state.devices[(DRIVER, "node-1", "gpu-0")]
    assert res.device is gpu0
    assert gpu0.allocations == [res]
    assert gpu0.allocated


def test_admin_access_does_not_make_a_device_allocated() -> None:
    state = build(*_allocated_world())

    gpu1 = state.devices[(DRIVER, "node-1", "gpu-1")]
    assert [a.claim.name for a in gpu1.allocations] == ["watcher"]
    assert gpu1.allocations[0].admin_access
    assert not gpu1.allocated


def test_results_naming_missing_devices_are_dangling() -> None:
    state = build(*_allocated_world())

    assert [(r.claim.name, r.device_name) for r in state.dangling_results] == [("gone", "gpu-7")]
    assert state.claims[("default", "gone")].results[0].device is None


def test_results_name_the_device_by_driver_pool_and_name() -> None:
    world = _allocated_world() + [
        claim("other-pool", results=[result("gpu", "gpu-0", pool="node-2")])
    ]

    state = build(*world)

    assert state.claims[("default", "other-pool")].results[0].device is None


def test_device_status_entries_are_matched_by_driver_pool_device_and_share_id() -> None:
    statuses = [
        {
            "driver": DRIVER,
            "pool": "node-1",
            "device": "gpu-0",
            "shareID": "s-1",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
        {
            "driver": DRIVER,
            "pool": "node-1",
            "device": "gpu-0",
            "shareID": "s-2",
            "networkData": {"interfaceName": "eth1"},
        },
        {"driver": DRIVER, "pool": "node-1", "device": "gpu-1"},
    ]
    c = claim(
        "c",
        results=[
            result("a", "gpu-0", shareID="s-2"),
            result("b", "gpu-0", shareID="s-1"),
            result("c", "gpu-0"),
            result("d", "gpu-1"),
        ],
        device_statuses=statuses,
    )

    state = build(*_allocated_world()[:2], c)

    by_request = {r.request: r.device_status for r in state.claims[("default", "c")].results}
    assert by_request["a"] is statuses[1]
    assert by_request["b"] is statuses[0]
    assert by_request["c"] is None
    assert by_request["d"] is statuses[2]


def test_claim_chain_shows_results_with_their_devices_and_status() -> None:
    c = claim(
        "a",
        results=[result("gpu", "gpu-0")],
        node_selector=selector_name("node-1"),
        device_statuses=[
            {
                "driver": DRIVER,
                "pool": "node-1",
                "device": "gpu-0",
                "conditions": [{"type": "Ready"}],
            }
        ],
    )
    state = build(*_allocated_world()[:2], c, claim("b", results=[result("gpu", "gpu-0")]))

    data = chain.claim_chain(state, state.claims[("default", "a")])

    (res,) = data["allocation"]["results"]
    assert data["allocation"]["nodes"] == ["node-1"]
    assert res["found"] is True
    assert res["details"]["node"] == "node-1"
    assert res["details"]["other_allocations"] == [
        {"namespace": "default", "claim": "b", "request": "gpu"}
    ]
    assert res["status"]["conditions"] == [{"type": "Ready"}]
    json.dumps(data)


# --- pools -----------------------------------------------------------------------------------


def test_the_newest_pool_generation_wins_and_stale_slices_are_kept_apart() -> None:
    old = resource_slice(
        "old", node_name="node-1", generation=1, devices=[device("gpu-0"), device("gpu-9")]
    )
    new = resource_slice("new", node_name="node-1", generation=2, devices=[device("gpu-0")])

    state = build(node("node-1"), old, new)

    pool = state.pools[(DRIVER, "node-1")]
    assert pool.generation == 2
    assert [s.name for s in pool.slices] == ["new"]
    assert [s.name for s in pool.stale_slices] == ["old"]
    assert state.slices["new"].current
    assert not state.slices["old"].current
    assert state.slices["old"].pool is pool
    assert state.devices[(DRIVER, "node-1", "gpu-0")].slice is state.slices["new"]
    assert (DRIVER, "node-1", "gpu-9") not in state.devices
    assert [s.name for s in state.nodes["node-1"].slices] == ["new"]


def test_a_result_naming_a_device_only_in_a_stale_slice_is_dangling() -> None:
    old = resource_slice("old", generation=1, devices=[device("gpu-9")], node_name="node-1")
    new = resource_slice("new", generation=2, devices=[device("gpu-0")], node_name="node-1")

    state = build(old, new, claim("c", results=[result("gpu", "gpu-9")]))

    assert [r.device_name for r in state.dangling_results] == ["gpu-9"]


def test_pool_completeness_compares_slices_with_resource_slice_count() -> None:
    half = resource_slice("part-1", pool="big", count=2, node_name="n", devices=[device("gpu-0")])
    other_half = resource_slice(
        "part-2", pool="big", count=2, node_name="n", devices=[device("gpu-1")]
    )

    incomplete = build(half).pools[(DRIVER, "big")]
    complete = build(half, other_half).pools[(DRIVER, "big")]

    assert (incomplete.complete, len(incomplete.slices), incomplete.resource_slice_count) == (
        False,
        1,
        2,
    )
    assert complete.complete
    assert [d.name for d in complete.devices] == ["gpu-0", "gpu-1"]
    assert complete.node_names == ["n"]


def test_duplicate_device_names_make_a_pool_invalid() -> None:
    one = resource_slice("s1", pool="p", count=2, node_name="n", devices=[device("gpu-0")])
    two = resource_slice(
        "s2", pool="p", count=2, node_name="n", devices=[device("gpu-0"), device("gpu-1")]
    )

    pool = build(one, two).pools[(DRIVER, "p")]

    assert pool.duplicate_devices == ["gpu-0"]
    assert not pool.valid
    assert build(one).pools[(DRIVER, "p")].valid


def test_pools_of_different_drivers_with_the_same_name_are_separate() -> None:
    state = build(
        resource_slice("gpu", driver="gpu.example.com", pool="node-1", node_name="node-1"),
        resource_slice("nic", driver="dra.net", pool="node-1", node_name="node-1"),
    )

    assert set(state.pools) == {("gpu.example.com", "node-1"), ("dra.net", "node-1")}
    assert len(state.devices) == 4


# --- slices and nodes ----------------------------------------------------------------------------


def _nodes() -> list[dict[str, Any]]:
    return [
        node("node-1", {"zone": "a", "clique": "1"}),
        node("node-2", {"zone": "b", "clique": "1"}),
        node("node-3", {"zone": "b"}),
    ]


def _slices_by_node(state: ClusterState) -> dict[str, list[str]]:
    return {n.name: sorted(s.name for s in n.slices) for n in state.nodes.values()}


def test_slice_with_node_name_belongs_to_that_node_only() -> None:
    state = build(
        *_nodes(),
        resource_slice("local", node_name="node-2"),
        resource_slice("orphan", node_name="node-9"),
    )

    assert _slices_by_node(state) == {"node-1": [], "node-2": ["local"], "node-3": []}
    assert state.slices["local"].node_access == "node"
    assert [d.name for d in state.nodes["node-2"].local_devices] == ["gpu-0", "gpu-1"]


def test_all_nodes_slice_reaches_every_node() -> None:
    state = build(*_nodes(), resource_slice("everywhere", all_nodes=True))

    assert _slices_by_node(state) == {n: ["everywhere"] for n in ("node-1", "node-2", "node-3")}
    assert state.slices["everywhere"].node_access == "all-nodes"
    assert state.nodes["node-1"].local_devices == []


def test_node_selector_slice_reaches_matching_nodes() -> None:
    state = build(*_nodes(), resource_slice("zone-b", node_selector=selector_in("zone", "b")))

    assert _slices_by_node(state) == {"node-1": [], "node-2": ["zone-b"], "node-3": ["zone-b"]}
    assert state.slices["zone-b"].node_access == "node-selector"


def test_node_selector_with_match_fields_reaches_named_nodes() -> None:
    state = build(
        *_nodes(), resource_slice("pinned", node_selector=selector_name("node-1", "node-3"))
    )

    assert _slices_by_node(state) == {"node-1": ["pinned"], "node-2": [], "node-3": ["pinned"]}


def test_v1alpha3_imex_slices_reach_the_nodes_of_their_clique() -> None:
    slices = fixture_objects("nvidia-gpu__legacy-v1alpha3__imex-resourceslice.yaml")
    labels = {"nvidia.com/gpu.clusteruuid": "0f884867-ba2f-4294-9155-b495ff367eea"}
    nodes = [
        node("gb200-a", {**labels, "nvidia.com/gpu.cliqueid": "1"}),
        node("gb200-b", {**labels, "nvidia.com/gpu.cliqueid": "2"}),
        node("other", {"nvidia.com/gpu.cliqueid": "1"}),
    ]

    state = build(*nodes, *slices)

    assert _slices_by_node(state) == {
        "gb200-a": ["imex-domain-0f884867-ba2f-4294-9155-b495ff367eea-1"],
        "gb200-b": ["imex-domain-0f884867-ba2f-4294-9155-b495ff367eea-2"],
        "other": [],
    }
    assert len(state.devices) == 20


def test_per_device_node_selection_reaches_the_nodes_of_its_devices() -> None:
    s = resource_slice(
        "per-device",
        per_device=True,
        devices=[
            device("gpu-0", nodeName="node-1"),
            device("gpu-1", nodeSelector=selector_in("zone", "b")),
        ],
    )

    state = build(*_nodes(), s)

    assert _slices_by_node(state) == {n: ["per-device"] for n in ("node-1", "node-2", "node-3")}
    gpu0, gpu1 = state.slices["per-device"].devices
    assert state.device_reaches(gpu0, state.nodes["node-1"])
    assert not state.device_reaches(gpu0, state.nodes["node-2"])
    assert not state.device_reaches(gpu1, state.nodes["node-1"])
    assert state.device_reaches(gpu1, state.nodes["node-3"])
    assert gpu0.node_name == "node-1"
    assert state.slices["per-device"].node_access == "per-device"


def test_per_device_slice_whose_devices_reach_no_node_is_attached_nowhere() -> None:
    s = resource_slice("per-device", per_device=True, devices=[device("gpu-0", nodeName="node-9")])

    assert _slices_by_node(build(*_nodes(), s)) == {"node-1": [], "node-2": [], "node-3": []}


def test_slice_with_no_node_access_reaches_no_node() -> None:
    state = build(*_nodes(), resource_slice("nowhere"))

    assert state.slices["nowhere"].node_access == "none"
    assert all(not n.slices for n in state.nodes.values())
    assert not state.device_reaches(state.slices["nowhere"].devices[0], state.nodes["node-1"])


def test_pods_are_attached_to_their_nodes() -> None:
    state = build(*_nodes(), pod("p", node_name="node-2"), pod("q", node_name="node-9"), pod("r"))

    assert state.pods[("default", "p")].node is state.nodes["node-2"]
    assert state.nodes["node-2"].pods == [state.pods[("default", "p")]]
    assert state.pods[("default", "q")].node is None
    assert state.pods[("default", "r")].node is None


# --- device taints --------------------------------------------------------------------------


def test_device_taint_rules_taint_the_devices_they_select() -> None:
    slices = [
        resource_slice("n1", pool="node-1", node_name="node-1"),
        resource_slice("n2", pool="node-2", node_name="node-2"),
        resource_slice("nic", driver="dra.net", pool="node-1", node_name="node-1"),
    ]
    whole_driver = taint_rule("driver", {"driver": DRIVER})
    one_device = taint_rule(
        "one",
        {"driver": DRIVER, "pool": "node-2", "device": "gpu-1"},
        {"key": "k", "effect": "NoExecute"},
    )

    state = build(*slices, whole_driver, one_device)

    tainted = {k: [t["key"] for t in d.taints] for k, d in state.devices.items() if d.taints}
    assert tainted == {
        (DRIVER, "node-1", "gpu-0"): ["example.com/unhealthy"],
        (DRIVER, "node-1", "gpu-1"): ["example.com/unhealthy"],
        (DRIVER, "node-2", "gpu-0"): ["example.com/unhealthy"],
        (DRIVER, "node-2", "gpu-1"): ["example.com/unhealthy", "k"],
    }
    (rule, _taint) = state.devices[(DRIVER, "node-2", "gpu-0")].rule_taints[0]
    assert rule is state.taint_rules["driver"]


def test_rule_taints_come_after_the_devices_own_taints() -> None:
    own = {"key": "own", "effect": "NoSchedule"}
    s = resource_slice("s", node_name="n", devices=[device("gpu-0", taints=[own])])

    state = build(s, taint_rule("r", {"device": "gpu-0"}))

    assert [t["key"] for t in state.devices[(DRIVER, "node-1", "gpu-0")].taints] == [
        "own",
        "example.com/unhealthy",
    ]


def test_real_device_taint_rule_for_the_example_driver_taints_all_its_gpus() -> None:
    (rule,) = fixture_objects(
        "dra-example-driver__device-taints-tolerations__device-taint-pod-noschedule__3-device-taint-rule.yaml"
    )

    state = build(resource_slice("s", node_name="n"), rule)

    assert [t["key"] for d in state.devices.values() for t in d.taints] == [
        "gpu.example.com/unhealthy"
    ] * 2


def test_taint_rule_without_a_taint_taints_nothing_and_stale_devices_are_untouched() -> None:
    old = resource_slice("old", generation=1, node_name="n", devices=[device("gpu-5")])
    new = resource_slice("new", generation=2, node_name="n", devices=[device("gpu-0")])
    rule = taint_rule("r", {"driver": DRIVER})
    empty = taint_rule("e", {"driver": DRIVER}, {})

    state = build(old, new, rule, empty)

    assert [len(d.rule_taints) for d in state.slices["new"].devices] == [1]
    assert state.slices["old"].devices[0].taints == []


# --- events ----------------------------------------------------------------------------------


def test_core_and_events_k8s_io_events_attach_to_pods_claims_and_nodes_in_time_order() -> None:
    objects = [
        pod("p", "ns"),
        claim("c", "ns"),
        node("n"),
        core_event(
            "Pod", "p", "ns", "FailedScheduling", "2025-01-01T00:00:09Z", "0/3 nodes are available"
        ),
        new_event("Pod", "p", "ns", "Scheduled", "2025-01-01T00:00:30.000000Z", "assigned to n"),
        core_event("Pod", "p", "ns", "FailedPrepareDynamicResources", "2025-01-01T00:00:20Z"),
        core_event("ResourceClaim", "c", "ns", "Allocated", "2025-01-01T00:00:10Z"),
        core_event("Node", "n", "", "NodeReady", "2025-01-01T00:00:01Z"),
        core_event("Pod", "p", "other", "Elsewhere", "2025-01-01T00:00:01Z"),
        core_event("Pod", "gone", "ns", "Orphan", "2025-01-01T00:00:01Z"),
    ]

    state = build(*objects)

    p = state.pods[("ns", "p")]
    assert [e.reason for e in p.events] == [
        "FailedScheduling",
        "FailedPrepareDynamicResources",
        "Scheduled",
    ]
    assert p.events[2].message == "assigned to n"
    assert p.events[2].source == "kubelet"
    assert p.events[0].source == "default-scheduler"
    assert [e.reason for e in state.claims[("ns", "c")].events] == ["Allocated"]
    assert [e.reason for e in state.nodes["n"].events] == ["NodeReady"]
    assert len(state.events) == 7
    assert [e["reason"] for e in chain.pod_chain(state, p)["events"]] == [
        e.reason for e in p.events
    ]


def test_node_events_recorded_in_a_namespace_still_reach_the_node() -> None:
    event = core_event("Node", "n", "default", "Rebooted", "2025-01-01T00:00:01Z")

    state = build(node("n"), event)

    assert [e.reason for e in state.nodes["n"].events] == ["Rebooted"]


def test_events_of_both_apis_within_one_second_are_in_time_order() -> None:
    first = core_event("Pod", "p", "default", "First", "2025-01-01T00:00:05Z")
    second = new_event("Pod", "p", "default", "Second", "2025-01-01T00:00:05.500000Z")

    state = build(pod("p"), second, first)

    assert [e.reason for e in state.pods[("default", "p")].events] == ["First", "Second"]


def test_events_of_an_earlier_pod_with_the_same_name_are_not_attached() -> None:
    old = core_event(
        "Pod", "web-0", "default", "FailedPrepareDynamicResources", "2025-01-01T00:00:01Z"
    )
    old["involvedObject"]["uid"] = "uid-of-the-deleted-pod"
    current = core_event("Pod", "web-0", "default", "Started", "2025-01-01T00:05:00Z")
    current["involvedObject"]["uid"] = "uid-pod-web-0"

    state = build(pod("web-0"), old, current)

    assert [e.reason for e in state.pods[("default", "web-0")].events] == ["Started"]


def test_event_count_and_last_seen_read_both_apis() -> None:
    series = new_event("Pod", "p", "default", "Retry", "2025-01-01T00:00:00.000000Z")
    series["series"] = {"count": 7, "lastObservedTime": "2025-01-01T00:09:00.000000Z"}
    old = core_event("Pod", "p", "default", "Old", "2025-01-01T00:01:00Z")
    old["count"] = 3

    events = {e.reason: e for e in build(pod("p"), series, old).pods[("default", "p")].events}

    assert (events["Retry"].count, events["Retry"].last_seen) == (7, "2025-01-01T00:09:00.000000Z")
    assert (events["Old"].count, events["Old"].last_seen) == (3, "2025-01-01T00:01:00Z")


# --- jobs -------------------------------------------------------------------------------------


def test_jobs_and_their_pods_are_linked_by_owner_reference() -> None:
    j = job("train", uid="job-uid")
    by_uid = pod("train-a", owners=[owner("Job", "renamed", "job-uid")])
    by_name = pod("train-b", owners=[owner("Job", "train")])
    not_controller = pod("train-c", owners=[owner("Job", "train", "job-uid", controller=False)])

    state = build(j, by_uid, by_name, not_controller, pod("solo"))

    assert [p.name for p in state.jobs[("default", "train")].pods] == ["train-a", "train-b"]
    assert state.pods[("default", "train-a")].job is state.jobs[("default", "train")]
    assert state.pods[("default", "train-c")].job is None
    assert state.pods[("default", "solo")].job is None
    assert chain.pod_summary(state.pods[("default", "train-a")])["owner"] == {
        "kind": "Job",
        "name": "renamed",
    }


# --- claims: state, nodes, drivers --------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (claim("c"), "pending"),
        (claim("c", results=[result()]), "allocated"),
        (
            claim(
                "c",
                results=[result()],
                reserved_for=[{"resource": "pods", "name": "p", "uid": "u"}],
            ),
            "reserved",
        ),
        (claim("c", results=[result()], deleting=True), "deleting"),
        (claim("c", deleting=True), "deleting"),
    ],
)
def test_claim_state_values(raw: dict[str, Any], expected: str) -> None:
    assert build(raw).claims[("default", "c")].state == expected


def test_allocation_nodes_is_none_without_a_node_selector() -> None:
    state = build(*_nodes(), claim("c", results=[result()]), claim("pending"))

    assert state.allocation_nodes(state.claims[("default", "c")]) is None
    assert state.allocation_nodes(state.claims[("default", "pending")]) is None


def test_allocation_nodes_lists_the_nodes_the_selector_matches() -> None:
    pinned = claim("pinned", results=[result()], node_selector=selector_name("node-2"))
    zoned = claim("zoned", results=[result()], node_selector=selector_in("zone", "b"))
    nowhere = claim("nowhere", results=[result()], node_selector=selector_name("node-9"))

    state = build(*_nodes(), pinned, zoned, nowhere)

    assert state.allocation_nodes(state.claims[("default", "pinned")]) == ["node-2"]
    assert state.allocation_nodes(state.claims[("default", "zoned")]) == ["node-2", "node-3"]
    assert state.allocation_nodes(state.claims[("default", "nowhere")]) == []


def test_claim_nodes_come_from_devices_and_consumers() -> None:
    p = pod("p", node_name="node-3")
    c = claim("c", results=[result("gpu", "gpu-0")], reserved_for=[consumer(p)])

    state = build(*_nodes(), resource_slice("s", node_name="node-1"), p, c)

    assert state.claim_nodes(state.claims[("default", "c")]) == ["node-1", "node-3"]


def test_claim_drivers_come_from_results_first() -> None:
    c = claim(
        "c",
        results=[
            result(driver="a.example.com"),
            result(driver="b.example.com"),
            result(driver="a.example.com"),
        ],
    )

    state = build(c, device_class("gpu.example.com", 'device.driver == "gpu.example.com"'))

    assert state.claim_drivers(state.claims[("default", "c")]) == ["a.example.com", "b.example.com"]


def test_claim_drivers_fall_back_to_the_class_selectors() -> None:
    classes = [
        device_class("gpu.example.com", "device.driver == 'gpu.example.com'"),
        device_class(
            "mixed",
            'device.driver == "dra.net" && device.attributes["dra.net"].rdma',
            'device.driver=="gpu.nvidia.com"',
        ),
        device_class("no-driver", "device.attributes['x'].y == 1"),
    ]
    c = claim(
        "c",
        requests=[
            request("a", "gpu.example.com"),
            {
                "name": "b",
                "firstAvailable": [
                    {"name": "s1", "deviceClassName": "mixed"},
                    {"name": "s2", "deviceClassName": "missing"},
                ],
            },
            request("c", "no-driver"),
        ],
    )
    t = template("t", requests=[request("x", "mixed")])

    state = build(c, t, *classes)

    assert state.claim_drivers(state.claims[("default", "c")]) == [
        "gpu.example.com",
        "dra.net",
        "gpu.nvidia.com",
    ]
    assert state.claim_drivers(state.templates[("default", "t")]) == ["dra.net", "gpu.nvidia.com"]


def test_requests_of_legacy_claims_are_read_after_normalisation() -> None:
    objects = fixture_objects("nvidia-gpu__demo__specs__quickstart__v1beta1__gpu-test3.yaml")

    state = build(*objects)

    (c,) = state.claims.values()
    assert c.api_version == "resource.k8s.io/v1beta1"
    assert c.raw["apiVersion"] == "resource.k8s.io/v1"
    assert [(r.name, r.exactly.device_class_name if r.exactly else None) for r in c.requests] == [
        ("gpu", "gpu.nvidia.com")
    ]


def test_first_available_requests_are_listed_as_alternatives() -> None:
    c = claim(
        "c",
        requests=[
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "large", "count": 1},
                    {"name": "small", "deviceClassName": "small", "allocationMode": "All"},
                ],
            }
        ],
    )

    (req,) = build(c).claims[("default", "c")].requests

    assert [(n, s.device_class_name, s.count, s.allocation_mode) for n, s in req.alternatives] == [
        ("gpu/big", "large", 1, "ExactCount"),
        ("gpu/small", "small", 0, "All"),
    ]


def test_state_keeps_its_meta_and_counts_objects_by_kind() -> None:
    meta = SnapshotMeta(cluster="c", server_version="v1.34.0")

    state = ClusterState.build([pod("p"), node("n"), claim("c")], meta)

    assert state.meta is meta
    assert state.counts()["Pod"] == 1
    assert state.counts()["ResourceClaim"] == 1
    assert sum(state.counts().values()) == 3


def test_get_finds_objects_by_kind_namespace_and_name() -> None:
    state = build(*_allocated_world(), pod("p", "ns"), template("t", "ns"), job("j"))

    assert state.get("Pod", "ns", "p") is state.pods[("ns", "p")]
    assert state.get("Node", "", "node-1") is state.nodes["node-1"]
    assert state.get("ResourceSlice", "", "node-1-gpus") is state.slices["node-1-gpus"]
    assert state.get("ResourceClaimTemplate", "ns", "t") is state.templates[("ns", "t")]
    assert state.get("Job", "default", "j") is state.jobs[("default", "j")]
    assert state.get("Deployment", "ns", "p") is None
    assert state.get("Pod", "default", "p") is None


def test_objects_without_names_and_of_unread_kinds_are_skipped() -> None:
    nameless = {"apiVersion": "v1", "kind": "Pod", "metadata": {}}
    classic = {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
    }
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}

    state = build(nameless, classic, other)

    assert sum(state.counts().values()) == 0


# --- malformed objects never raise ----------------------------------------------------------


def _world() -> list[dict[str, Any]]:
    """A small cluster touching every relation: the base for the malformed-field test."""
    p = pod(
        "p",
        claims=[pod_claim("gpu", template="t"), pod_claim("shared", claim="s")],
        init_containers=[container("init", "shared")],
        containers=[container("main", ("gpu", "gpu"))],
        claim_statuses=[{"name": "gpu", "resourceClaimName": "p-gpu-1"}],
        extended={
            "resourceClaimName": "s",
            "requestMappings": [{"containerName": "main", "requestName": "r"}],
        },
        node_name="node-1",
        owners=[owner("Job", "j", "uid-job-j")],
    )
    return [
        node("node-1", {"zone": "a"}),
        p,
        job("j"),
        template("t"),
        generated_claim(
            p,
            "gpu",
            "p-gpu-1",
            results=[result("gpu", "gpu-0")],
            node_selector=selector_name("node-1"),
            reserved_for=[consumer(p)],
            device_statuses=[{"driver": DRIVER, "pool": "node-1", "device": "gpu-0"}],
        ),
        claim("s", results=[result("gpu", "gpu-1", adminAccess=True)]),
        resource_slice("node-1-gpus", node_name="node-1"),
        resource_slice("shared", pool="shared", node_selector=selector_in("zone", "a")),
        resource_slice(
            "per-device",
            pool="pd",
            per_device=True,
            devices=[device("d-0", nodeSelector=selector_in("zone", "a"))],
        ),
        device_class("gpu.example.com", "device.driver == 'gpu.example.com'"),
        taint_rule("r", {"driver": DRIVER}),
        core_event("Pod", "p", "default", "Scheduled", "2025-01-01T00:00:00Z"),
        new_event("ResourceClaim", "s", "default", "Allocated", "2025-01-01T00:00:00.000000Z"),
    ]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, sub in value.items():
            yield (*prefix, key)
            yield from _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield (*prefix, index)
            yield from _paths(sub, (*prefix, index))


def _exercise(state: ClusterState) -> None:
    """Everything the pages read: must work whatever the objects hold."""
    for p in state.pods.values():
        json.dumps(chain.pod_chain(state, p))
    for c in state.claims.values():
        json.dumps(chain.claim_chain(state, c))
        state.claim_drivers(c)
        state.claim_nodes(c)
    for t in state.templates.values():
        json.dumps(chain.template_summary(state, t))
        state.claim_drivers(t)
    for d in state.devices.values():
        json.dumps(chain.device_summary(state, d))
    for n in state.nodes.values():
        json.dumps(chain.node_summary(n))
    for pool in state.pools.values():
        assert isinstance(pool.complete, bool)
        assert isinstance(pool.node_names, list)
    for j in state.jobs.values():
        assert isinstance(j.parallelism, int)
        assert j.completions is None or isinstance(j.completions, int)
    state.counts()


BAD_VALUES = [None, "text", 7, True, [], ["x"], {}, {"unexpected": 1}, [{"a": 1}]]


def _mutations() -> list[tuple[int, tuple[Any, ...]]]:
    world = _world()
    return [(i, path) for i, obj in enumerate(world) for path in _paths(obj) if path[0] != "kind"]


def test_a_small_cluster_resolves_every_relation() -> None:
    state = build(*_world())

    refs = {r.name: r for r in state.pods[("default", "p")].claim_refs}
    assert {n: r.status for n, r in refs.items()} == {"gpu": "ok", "shared": "ok", "s": "ok"}
    assert state.pods[("default", "p")].job is state.jobs[("default", "j")]
    assert {n: sorted(s.name for s in node_.slices) for n, node_ in state.nodes.items()} == {
        "node-1": ["node-1-gpus", "per-device", "shared"]
    }
    assert state.dangling_results == []
    assert len(state.claims[("default", "p-gpu-1")].events) == 0
    assert len(state.claims[("default", "s")].events) == 1
    _exercise(state)


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_malformed_fields_anywhere_never_raise(bad: Any) -> None:
    for index, path in _mutations():
        world = _world()
        target: Any = world[index]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = copy.deepcopy(bad)

        _exercise(build(*world))


@pytest.mark.parametrize("bad", BAD_VALUES, ids=repr)
def test_malformed_fields_in_the_real_round_trip_fixtures_never_raise(bad: Any) -> None:
    names = [
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaim.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1beta1.ResourceSlice.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.DeviceTaintRule.yaml",
        "k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaimTemplate.yaml",
    ]
    base = [obj for name in names for obj in fixture_objects(name)]
    for index, obj in enumerate(base):
        for path in _paths(obj):
            if path[0] in ("kind", "apiVersion"):
                continue
            world = copy.deepcopy(base)
            target: Any = world[index]
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = copy.deepcopy(bad)

            _exercise(build(*world))


@pytest.mark.parametrize("api_version", [None, 7, ["v1"], "", "///"])
def test_mistyped_api_versions_never_raise(api_version: Any) -> None:
    world = _world()
    for obj in world:
        obj["apiVersion"] = api_version

    _exercise(build(*world))


@pytest.mark.parametrize("kind", [["Pod"], {"name": "Pod"}])
def test_a_mistyped_kind_never_raises(kind: Any) -> None:
    world = _world()
    world[1]["kind"] = kind

    state = build(*world)

    assert ("default", "p") not in state.pods


def test_a_claim_reading_its_own_fields_never_raises_on_junk() -> None:
    junk = ResourceClaim(
        {
            "metadata": "x",
            "spec": {"devices": {"requests": [1, {"exactly": "x"}, {"firstAvailable": "y"}]}},
            "status": {"allocation": [], "reservedFor": "p"},
        }
    )

    assert junk.name == ""
    assert junk.namespace == "default"
    assert [r.alternatives for r in junk.requests] == [[], []]
    assert junk.results == []
    assert junk.state == "pending"


@pytest.mark.parametrize(
    ("source", "status", "unproven"),
    [
        ("capture", "absent", []),  # listed, none found: there are none
        ("demo", "absent", []),
        ("import", "absent", ["Pod"]),  # the bundle had none: nothing follows about the cluster
        ("upload", "absent", ["Pod"]),
        ("capture", "forbidden", ["Pod"]),
        ("capture", "not-found", ["Pod"]),
        ("import", "ok", []),
    ],
)
def test_unproven_kinds_follow_how_the_snapshot_was_made(source, status, unproven):
    meta = SnapshotMeta(source=source, kinds={"Pod": {"status": status, "count": 0}})
    assert meta.unproven("Pod", "Node") == unproven  # Node: no status recorded, so not unproven
