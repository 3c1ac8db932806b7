"""The explain API's data (DESIGN "REST API": GET …/claims/{ns}/{name}/explain), built in the core:
the allocator's answer on every node the Pod may use, the allocation the scheduler would write,
and a claim explained together with its Pod's other unallocated claims."""

from __future__ import annotations

from typing import Any

from dradash.dra.allocator import Features, explain
from dradash.dra.diagnosis import explain_claim
from dradash.dra.objects import ResourceClaim
from dradash.dra.state import ClusterState

from .builders import (
    claim,
    device,
    device_class,
    node,
    pod,
    pod_claim,
    request,
    resource_slice,
    result,
)

GPU = "gpu.example.com"
NIC = "nic.example.com"


def cluster(*extra: dict[str, Any]) -> ClusterState:
    """n1: 2 GPUs and a NIC; n2: 1 GPU (its pool is being republished: 1 of 2 slices); n3: 1
    GPU with a duplicate name in its pool (invalid); n4: no devices."""
    return ClusterState.build(
        [
            node("n1"),
            node("n2"),
            node("n3"),
            node("n4"),
            device_class(GPU, f'device.driver == "{GPU}"'),
            device_class(NIC, f'device.driver == "{NIC}"'),
            resource_slice(
                "n1-gpus", pool="n1", node_name="n1", devices=[device("gpu-0"), device("gpu-1")]
            ),
            resource_slice(
                "n1-nics", driver=NIC, pool="n1", node_name="n1", devices=[device("nic-0")]
            ),
            resource_slice(
                "n2-gpus", pool="n2", node_name="n2", count=2, devices=[device("gpu-0")]
            ),
            resource_slice("n3-a", pool="n3", node_name="n3", count=2, devices=[device("gpu-0")]),
            resource_slice("n3-b", pool="n3", node_name="n3", count=2, devices=[device("gpu-0")]),
            *extra,
        ]
    )


def test_every_node_gets_the_allocators_answer_in_name_order() -> None:
    state = cluster()
    c = ResourceClaim(claim("c", requests=[request("gpu", GPU, count=2)]))
    e = explain(state, [c], every_node=True)
    assert e.allocatable is True and e.node == "n1"
    assert [(n.node, n.outcome, n.error) for n in e.nodes] == [
        ("n1", "fit", ""),
        ("n2", "nofit", ""),  # its pool is incomplete: skipped
        ("n3", "node-error", "invalid resource pools were encountered"),
        ("n4", "nofit", ""),  # nothing there: decided without running the search
    ]
    assert e.nodes_complete and e.eligible_nodes == 4


def test_without_every_node_the_search_stops_at_the_answer() -> None:
    state = cluster()
    c = ResourceClaim(claim("c", requests=[request("gpu", GPU, count=2)]))
    e = explain(state, [c])
    assert e.allocatable is True and e.node == "n1"
    # n1 fits, and no other node could stop the scheduler with an error: the rest undecided.
    assert [(n.node, n.outcome) for n in e.nodes] == [("n1", "fit")]
    assert not e.nodes_complete and e.searched_nodes == 1


def test_an_error_on_one_node_is_that_nodes_outcome_and_the_answer() -> None:
    broken = device("gpu-9", attributes={})  # no "index": the selector raises on it
    state = cluster(resource_slice("n4-gpus", pool="n4", node_name="n4", devices=[broken]))
    selector = {"cel": {"expression": f'device.attributes["{GPU}"].index >= 0'}}
    c = ResourceClaim(claim("c", requests=[request("gpu", GPU, selectors=[selector])]))
    e = explain(state, [c], every_node=True)
    assert e.allocatable is None and e.reason == "selector-error"
    outcomes = {n.node: n.outcome for n in e.nodes}
    assert outcomes == {"n1": "fit", "n2": "nofit", "n3": "node-error", "n4": "error"}
    assert e.nodes[3].error.startswith("claim default/c: selector #0")
    assert "no such key: index" in e.nodes[3].error


def test_as_dict_is_the_explain_apis_json() -> None:
    state = cluster()
    c = ResourceClaim(claim("c", requests=[request("gpu", GPU)]))
    body = explain(state, [c], every_node=True).as_dict()
    assert list(body) == [
        "allocatable",
        "error",
        "node",
        "reason",
        "requests",
        "nodes",
        "allocation",
    ]
    assert body["allocatable"] is True and body["error"] is None and body["node"] == "n1"
    (req,) = body["requests"]
    assert list(req) == ["name", "funnel", "devices"]
    assert req["funnel"][0] == {"step": "class", "remaining": 6}
    assert list(req["devices"][0]) == ["driver", "pool", "device", "failed_step", "detail"]
    assert body["nodes"][0] == {"node": "n1", "outcome": "fit", "error": ""}
    assert body["allocation"] == [
        {
            "devices": {
                "results": [{"request": "gpu", "driver": GPU, "pool": "n1", "device": "gpu-0"}]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            },
        }
    ]


def test_an_unallocatable_explanation_has_no_allocation() -> None:
    state = cluster()
    c = ResourceClaim(claim("c", requests=[request("gpu", GPU, count=3)]))
    body = explain(state, [c], every_node=True).as_dict()
    assert body["allocatable"] is False and body["allocation"] == []
    # 2 devices in usable pools, 3 needed: the rest are in n2's incomplete and n3's invalid pool
    assert body["reason"] == "pool-invalid"
    assert {n["outcome"] for n in body["nodes"]} == {"nofit", "node-error"}


def test_a_claim_is_explained_with_its_pods_other_unallocated_claims() -> None:
    """The scheduler allocates a Pod's claims together: the GPU claim fits n1 alone and n2
    alone, but with the Pod's NIC claim only n1 has both."""
    gpu = claim("gpu", requests=[request("gpu", GPU)])
    nic = claim("nic", requests=[request("nic", NIC)])
    p = pod("p", claims=[pod_claim("gpu", claim="gpu"), pod_claim("nic", claim="nic")])
    state = cluster(gpu, nic, p)
    e = explain_claim(state, state.claims[("default", "gpu")])
    assert e.claims == ["default/gpu", "default/nic"]
    assert [r.name for r in e.requests] == ["gpu", "nic"]
    assert e.node == "n1" and len(e.allocations) == 2
    assert e.allocations[1]["devices"]["results"][0]["device"] == "nic-0"
    # n3 has no NIC, but its invalid pool still makes it a node error (decided without search)
    assert [n.outcome for n in e.nodes] == ["fit", "nofit", "node-error", "nofit"]
    assert e.searched_nodes == 1


def test_an_allocated_claim_of_a_pod_restricts_the_nodes_of_the_others() -> None:
    held = claim(
        "nic",
        requests=[request("nic", NIC)],
        results=[result("nic", "nic-0", pool="n1", driver=NIC)],
        node_selector={
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}
            ]
        },
    )
    gpu = claim("gpu", requests=[request("gpu", GPU)])
    p = pod("p", claims=[pod_claim("gpu", claim="gpu"), pod_claim("nic", claim="nic")])
    state = cluster(gpu, held, p)
    e = explain_claim(state, state.claims[("default", "gpu")])
    assert e.claims == ["default/gpu"]
    assert [n.node for n in e.nodes] == ["n2"]  # the NIC claim's allocation allows n2 only
    # n2's pool is incomplete, and n1's devices are on a node the NIC claim excludes
    assert e.allocatable is False and e.reason == "devices-unreachable"
    gpu_0 = e.requests[0].devices[0]
    assert (gpu_0.pool, gpu_0.failed_step) == ("n1", "nodes")
    assert gpu_0.detail == "on node n1, which the allocation of the Pod's other claims excludes"


def test_a_claim_without_pods_is_explained_alone_on_every_node() -> None:
    state = cluster(claim("c", requests=[request("gpu", GPU)]))
    e = explain_claim(state, state.claims[("default", "c")])
    assert e.claims == ["default/c"] and e.nodes_complete and len(e.nodes) == 4


def test_stable_ignores_capacity_requests_in_the_funnel_too() -> None:
    """Where the stable allocator runs, a capacity request neither errors nor filters."""
    capacity = {"requests": {"memory": "100Gi"}}  # more than any device has
    c = ResourceClaim(claim("c", requests=[request("gpu", GPU, capacity=capacity)]))
    stable = Features(consumable_capacity=False, binding_conditions=False)
    assert stable.implementation == "stable"
    e = explain(cluster(), [c], features=stable)
    assert e.allocatable is True and e.node == "n1"
