"""Findings: every code from a scenario that produces it, and look-alikes that must not.

Scenarios use the shapes of the real manifests in ``tests/fixtures/upstream`` (dra-example-driver
demos and README slice list, the NVIDIA bats Job specs, Kubernetes' round-trip test data, DraNet's
test manifests), completed with the status the scheduler, kubelet and controllers would write.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dradash.demo import cluster as demo
from dradash.dra.findings import Finding, find, pod_priority
from dradash.dra.kinds import KINDS
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    DRIVER,
    claim,
    consumer,
    device,
    device_class,
    fixture_objects,
    generated_claim,
    node,
    owner,
    pod,
    pod_claim,
    request,
    resource_slice,
    result,
    taint_rule,
    template,
)

EXAMPLE_CLASS = "device.driver == 'gpu.example.com'"
WORKER = "dra-example-driver-cluster-worker"
README_SLICES = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
BASIC_TEMPLATE = "dra-example-driver__basic-resourceclaimtemplate__basic-resourceclaimtemplate.yaml"
SHARED_ACROSS_PODS = (
    "dra-example-driver__basic-shared-claim-across-pods__basic-shared-claim-across-pods.yaml"
)


def build(*objects: dict[str, Any], meta: SnapshotMeta | None = None) -> ClusterState:
    return ClusterState.build(objects, meta)


def imported(*objects: dict[str, Any]) -> ClusterState:
    """The state of a bundle imported as it is: kinds it has none of are unproven."""
    kinds = {
        k: {"status": "ok" if any(o["kind"] == k for o in objects) else "absent"} for k in KINDS
    }
    return ClusterState.build(objects, SnapshotMeta(kinds=kinds, source="import"))


def of(state: ClusterState, code: str) -> list[Finding]:
    return [f for f in find(state) if f.code == code]


def the(state: ClusterState, code: str) -> Finding:
    (finding,) = of(state, code)
    return finding


def names(finding: Finding, kind: str) -> list[str]:
    return [o["name"] for o in finding.objects if o["kind"] == kind]


def example_cluster() -> list[dict[str, Any]]:
    """The README's node with its 8 mock GPUs, and the example driver's DeviceClass."""
    return [node(WORKER), device_class(DRIVER, EXAMPLE_CLASS), *fixture_objects(README_SLICES)]


def scheduled(
    obj: dict[str, Any], node_name: str = WORKER, phase: str = "Running"
) -> dict[str, Any]:
    """A Pod as it looks once the scheduler bound it (binding sets PodScheduled=True)."""
    obj = copy.deepcopy(obj)
    obj["spec"]["nodeName"] = node_name
    obj["status"] = {
        "phase": phase,
        "conditions": [{"type": "PodScheduled", "status": "True"}],
    }
    return obj


def with_uid(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj["metadata"]
    m.setdefault("uid", f"uid-{obj['kind']}-{m.get('namespace', '')}-{m['name']}")
    return obj


def fixture_pod(name: str, fixture: str) -> dict[str, Any]:
    (obj,) = [
        o for o in fixture_objects(fixture) if o["kind"] == "Pod" and o["metadata"]["name"] == name
    ]
    return with_uid(obj)


def test_an_empty_snapshot_has_no_findings() -> None:
    assert find(build()) == []


def test_a_healthy_cluster_has_no_findings() -> None:
    """basic-resourceclaimtemplate after scheduling: two Pods, one generated claim each."""
    objects = example_cluster()
    for i, name in enumerate(("pod0", "pod1")):
        p = scheduled(fixture_pod(name, BASIC_TEMPLATE))
        p["status"]["resourceClaimStatuses"] = [
            {"name": "gpu", "resourceClaimName": f"{name}-gpu-x"}
        ]
        objects += [
            p,
            generated_claim(
                p,
                "gpu",
                f"{name}-gpu-x",
                results=[result("gpu", f"gpu-{i}", pool=WORKER)],
                reserved_for=[consumer(p)],
            ),
        ]
    objects += [o for o in fixture_objects(BASIC_TEMPLATE) if o["kind"] != "Pod"]

    assert find(build(*objects)) == []


# --- nodename-bypass -------------------------------------------------------------------------


def test_nodename_set_by_hand_leaves_the_claim_unallocated() -> None:
    """The kubelet adds PodScheduled=True itself, so the unallocated claim is the evidence."""
    p = scheduled(fixture_pod("pod0", BASIC_TEMPLATE), phase="Pending")
    p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "pod0-gpu-x"}]
    state = build(*example_cluster(), p, generated_claim(p, "gpu", "pod0-gpu-x"))

    finding = the(state, "nodename-bypass")

    assert finding.severity == "error"
    assert names(finding, "Pod") == ["pod0"]
    assert names(finding, "ResourceClaim") == ["pod0-gpu-x"]
    assert "is not allocated" in finding.message
    assert "kubectl delete pod -n basic-resourceclaimtemplate pod0" in finding.next_step


def test_nodename_bypass_when_the_claim_is_allocated_for_another_pod_only() -> None:
    p0, p1 = (scheduled(fixture_pod(n, SHARED_ACROSS_PODS)) for n in ("pod0", "pod1"))
    p1["status"] = {"phase": "Pending"}  # nodeName by hand: no PodScheduled condition at all
    shared = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p0)],
    )

    finding = the(build(*example_cluster(), p0, p1, shared), "nodename-bypass")

    assert names(finding, "Pod") == ["pod1"]
    assert "not reserved for it" in finding.message
    assert "no PodScheduled=True condition" in finding.message


def test_nodename_bypass_before_the_claim_is_generated() -> None:
    p = fixture_pod("pod0", BASIC_TEMPLATE)
    p["spec"]["nodeName"] = WORKER
    tmpl = [o for o in fixture_objects(BASIC_TEMPLATE) if o["kind"] == "ResourceClaimTemplate"]

    finding = the(build(*example_cluster(), *tmpl, p), "nodename-bypass")

    assert names(finding, "ResourceClaimTemplate") == ["single-gpu"]
    assert "no claim was generated" in finding.message


def test_nodename_by_hand_with_claims_in_place_is_only_a_warning() -> None:
    p = fixture_pod("pod0", SHARED_ACROSS_PODS)
    p["spec"]["nodeName"] = WORKER
    p["status"] = {"phase": "Running"}
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p)],
    )

    finding = the(build(*example_cluster(), p, c), "nodename-bypass")

    assert finding.severity == "warning"


def test_no_nodename_bypass_for_scheduled_finished_or_non_dra_pods() -> None:
    bound = scheduled(fixture_pod("pod0", SHARED_ACROSS_PODS))
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(bound)],
    )
    finished = scheduled(fixture_pod("pod1", SHARED_ACROSS_PODS), phase="Succeeded")
    plain = pod("web", node_name=WORKER, phase="Running")
    pending = fixture_pod("pod0", BASIC_TEMPLATE)  # not bound: the scheduler's job

    assert (
        of(build(*example_cluster(), bound, c, finished, plain, pending), "nodename-bypass") == []
    )


# --- claim-not-used-by-container -------------------------------------------------------------


def test_claim_no_container_uses() -> None:
    p = fixture_pod("pod0", BASIC_TEMPLATE)
    p["spec"]["containers"][0]["resources"] = {}
    p["spec"]["resourceClaims"].append({"name": "extra", "resourceClaimName": "spare"})
    p["spec"]["containers"][0]["resources"] = {"claims": [{"name": "extra"}]}
    tmpl = [o for o in fixture_objects(BASIC_TEMPLATE) if o["kind"] == "ResourceClaimTemplate"]

    finding = the(
        build(*tmpl, p, claim("spare", "basic-resourceclaimtemplate")),
        "claim-not-used-by-container",
    )

    assert finding.severity == "warning"
    assert "'gpu'" in finding.message and "'extra'" not in finding.message
    assert names(finding, "ResourceClaimTemplate") == ["single-gpu"]


def test_claims_used_by_init_containers_or_by_the_pod_network_are_used() -> None:
    """initcontainer-shared-gpu, and DraNet's interfaces, which belong to the Pod itself."""
    init = fixture_objects(
        "dra-example-driver__initcontainer-shared-gpu__initcontainer-shared-gpu.yaml"
    )
    init[-1]["spec"]["containers"][0]["resources"] = {}  # only the init container uses it
    dranet = fixture_objects("dranet__tests__manifests__resourceclaim.yaml")
    dranet_class = fixture_objects("dranet__tests__manifests__deviceclass.yaml")

    state = build(*init, *dranet, *dranet_class)

    assert of(state, "claim-not-used-by-container") == []


# --- orphaned-claim --------------------------------------------------------------------------


def test_generated_claim_whose_pod_is_gone() -> None:
    gone = with_uid(fixture_pod("pod0", BASIC_TEMPLATE))
    still = with_uid(fixture_pod("pod1", BASIC_TEMPLATE))
    orphan = generated_claim(gone, "gpu", results=[result("gpu", "gpu-0", pool=WORKER)])

    finding = the(build(*example_cluster(), still, orphan), "orphaned-claim")

    assert finding.objects == [
        {
            "kind": "ResourceClaim",
            "namespace": "basic-resourceclaimtemplate",
            "name": "pod0-gpu-abcde",
        },
        {"kind": "Pod", "namespace": "basic-resourceclaimtemplate", "name": "pod0"},
    ]
    assert "still allocated" in finding.message


def test_generated_claim_of_a_recreated_pod_is_orphaned() -> None:
    old = fixture_pod("pod0", BASIC_TEMPLATE)
    new = copy.deepcopy(old)
    new["metadata"]["uid"] = "uid-the-new-pod0"

    finding = the(build(new, generated_claim(old, "gpu")), "orphaned-claim")

    assert "another uid" in finding.message


def test_no_orphan_when_the_owner_exists_the_claim_is_not_generated_or_pods_were_not_captured() -> (
    None
):
    p = fixture_pod("pod0", BASIC_TEMPLATE)
    mine = generated_claim(p, "gpu")
    # Owned by a Pod but without the pod-claim-name annotation: not generated from a template.
    hand_made = claim("handmade", owners=[owner("Pod", "gone", "uid-gone")])

    assert of(build(p, mine, hand_made), "orphaned-claim") == []
    gone = generated_claim(pod("gone", uid="uid-gone"), "gpu")
    assert of(imported(gone), "orphaned-claim") == []  # Pods not in the bundle


# --- allocated-unreserved --------------------------------------------------------------------


def test_allocated_claim_reserved_for_nobody() -> None:
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-3", pool=WORKER)],
    )

    finding = the(build(*example_cluster(), c), "allocated-unreserved")

    assert finding.objects[0]["name"] == "single-gpu"
    assert "gpu-3" in finding.message


def test_reserved_unallocated_or_deleting_claims_are_not_allocated_unreserved() -> None:
    p = scheduled(fixture_pod("pod0", SHARED_ACROSS_PODS))
    reserved = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p)],
    )
    pending = claim("waiting")
    deleting = claim("going", results=[result("gpu", "gpu-1", pool=WORKER)], deleting=True)

    state = build(*example_cluster(), p, reserved, pending, deleting)

    assert of(state, "allocated-unreserved") == []


# --- reserved-for-missing-pod ----------------------------------------------------------------


def test_reservation_for_a_pod_that_is_gone() -> None:
    p0, p1 = (scheduled(fixture_pod(n, SHARED_ACROSS_PODS)) for n in ("pod0", "pod1"))
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p0), consumer(p1)],
    )

    finding = the(build(*example_cluster(), p0, c), "reserved-for-missing-pod")

    assert names(finding, "Pod") == ["pod1"]
    assert finding.severity == "warning"


def test_reservation_for_a_recreated_pod_names_both_uids() -> None:
    old = scheduled(fixture_pod("pod0", SHARED_ACROSS_PODS))
    new = copy.deepcopy(old)
    new["metadata"]["uid"] = "uid-new"
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result(pool=WORKER)],
        reserved_for=[consumer(old)],
    )

    finding = the(build(*example_cluster(), new, c), "reserved-for-missing-pod")

    assert "uid-new" in finding.message


def test_reservations_found_by_uid_or_by_name_are_fine() -> None:
    p0, p1 = (scheduled(fixture_pod(n, SHARED_ACROSS_PODS)) for n in ("pod0", "pod1"))
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p0), consumer(p1, with_uid=False)],
    )
    lonely = claim("elsewhere", results=[result(pool=WORKER)], reserved_for=[consumer(p0)])

    assert of(build(*example_cluster(), p0, p1, c), "reserved-for-missing-pod") == []
    no_pods = imported(*example_cluster(), lonely)
    assert of(no_pods, "reserved-for-missing-pod") == []  # Pods not in the bundle


# --- reserved-for-finished-pod ---------------------------------------------------------------


def finished(obj: dict[str, Any], phase: str, at: str) -> dict[str, Any]:
    """The Pod once its only container terminated at ``at``."""
    obj = scheduled(obj, phase=phase)
    obj["status"]["containerStatuses"] = [
        {"name": "ctr0", "state": {"terminated": {"exitCode": 1, "finishedAt": at}}}
    ]
    return obj


CAPTURED = SnapshotMeta(captured_at="2026-11-28T10:30:00+00:00")


def test_reservation_only_for_pods_that_finished_long_ago() -> None:
    p0 = finished(fixture_pod("pod0", SHARED_ACROSS_PODS), "Failed", "2026-11-28T10:03:00Z")
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p0)],
    )

    finding = the(build(*example_cluster(), p0, c, meta=CAPTURED), "reserved-for-finished-pod")

    assert names(finding, "Pod") == ["pod0"]
    assert "pod0 (Failed)" in finding.message
    assert "kubectl delete pod -n basic-shared-claim-across-pods pod0" in finding.next_step


def test_no_finished_pod_finding_while_the_controller_has_time_or_a_pod_still_runs() -> None:
    just = finished(fixture_pod("pod0", SHARED_ACROSS_PODS), "Succeeded", "2026-11-28T10:28:00Z")
    running = scheduled(fixture_pod("pod1", SHARED_ACROSS_PODS))
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(just), consumer(running)],
    )
    recent = claim(
        "recent",
        "basic-shared-claim-across-pods",
        results=[result(pool=WORKER)],
        reserved_for=[consumer(just)],
    )

    state = build(*example_cluster(), just, running, c, recent, meta=CAPTURED)

    assert of(state, "reserved-for-finished-pod") == []


# --- claim-stuck-deleting --------------------------------------------------------------------


def test_round_trip_claim_with_deletion_timestamp_and_finalizer() -> None:
    """Kubernetes' round-trip data: deletionTimestamp 2009, finalizer finalizersValue."""
    (raw,) = fixture_objects("k8s-api__roundtrip-testdata__resource.k8s.io.v1.ResourceClaim.yaml")
    meta = SnapshotMeta(captured_at="2009-01-01T03:01:01Z")

    finding = the(build(raw, meta=meta), "claim-stuck-deleting")

    assert finding.objects == [
        {"kind": "ResourceClaim", "namespace": "namespaceValue", "name": "nameValue"}
    ]
    assert "finalizersValue" in finding.message
    assert "(for 2 hours)" in finding.message
    assert "resourceValue nameValue" in finding.message  # a consumer that is not a Pod


def test_deleting_claim_held_by_its_pods() -> None:
    p = scheduled(fixture_pod("pod0", SHARED_ACROSS_PODS))
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result(pool=WORKER)],
        reserved_for=[consumer(p)],
        deleting=True,
    )
    c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]

    finding = the(build(*example_cluster(), p, c), "claim-stuck-deleting")

    assert names(finding, "Pod") == ["pod0"]
    assert "resource.kubernetes.io/delete-protection" in finding.message


def test_claims_with_only_a_finalizer_or_only_a_deletion_timestamp_are_not_stuck() -> None:
    allocated = claim("in-use", results=[result(pool=WORKER)])
    allocated["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
    vanishing = claim("vanishing", deleting=True)  # no finalizer: gone with the next watch event

    assert of(build(*example_cluster(), allocated, vanishing), "claim-stuck-deleting") == []


# --- pools -----------------------------------------------------------------------------------


def test_pool_missing_a_slice() -> None:
    s = resource_slice("node-1-a", pool="node-1", count=2, node_name="node-1")

    finding = the(build(node("node-1"), s), "pool-incomplete")

    assert finding.objects == [{"kind": "ResourceSlice", "namespace": "", "name": "node-1-a"}]
    assert "1 of the 2" in finding.message


def test_complete_pools_are_not_incomplete() -> None:
    a = resource_slice("node-1-a", pool="node-1", count=2, node_name="node-1")
    b = resource_slice(
        "node-1-b", pool="node-1", count=2, node_name="node-1", devices=[device("gpu-2")]
    )

    assert of(build(a, b, *fixture_objects(README_SLICES)), "pool-incomplete") == []


def test_slices_of_an_older_generation() -> None:
    old = resource_slice("node-1-old", generation=1, node_name="node-1")
    new = resource_slice("node-1-new", generation=2, node_name="node-1")

    finding = the(build(old, new), "pool-stale-generation")

    assert finding.objects == [{"kind": "ResourceSlice", "namespace": "", "name": "node-1-old"}]
    assert "kubectl delete resourceslice node-1-old" in finding.next_step


def test_slices_of_one_generation_are_not_stale() -> None:
    a = resource_slice("node-1-a", count=2, node_name="node-1")
    b = resource_slice("node-1-b", count=2, node_name="node-1", devices=[device("gpu-2")])

    assert of(build(a, b), "pool-stale-generation") == []


def test_device_name_published_twice_in_a_pool() -> None:
    a = resource_slice("node-1-a", count=2, node_name="node-1")
    b = resource_slice("node-1-b", count=2, node_name="node-1", devices=[device("gpu-1")])

    finding = the(build(a, b), "pool-duplicate-device")

    assert finding.severity == "error"
    assert "gpu-1" in finding.message
    assert sorted(names(finding, "ResourceSlice")) == ["node-1-a", "node-1-b"]


def test_the_same_device_name_in_different_pools_is_fine() -> None:
    other = copy.deepcopy(fixture_objects(README_SLICES)[0])
    other["metadata"]["name"] += "-2"
    other["spec"]["pool"]["name"] = other["spec"]["nodeName"] = "worker-2"

    assert of(build(*fixture_objects(README_SLICES), other), "pool-duplicate-device") == []


# --- device-tainted --------------------------------------------------------------------------


def test_taints_in_the_slice_are_grouped_per_pool_and_taint() -> None:
    taint = {"key": "gpu.example.com/unhealthy", "value": "true", "effect": "NoExecute"}
    s = resource_slice(
        "node-1-a",
        node_name="node-1",
        devices=[device("gpu-0", taints=[taint]), device("gpu-1", taints=[taint]), device("gpu-2")],
    )
    c = claim("busy", results=[result("gpu", "gpu-1")])

    finding = the(build(s, c), "device-tainted")

    assert finding.severity == "warning"
    assert "2 devices of pool gpu.example.com/node-1 (gpu-0 and gpu-1)" in finding.message
    assert "NoExecute" in finding.message and "default/busy" in finding.message


def test_taints_from_a_device_taint_rule() -> None:
    """The example driver's device-taint-pod-noschedule rule taints every gpu.example.com GPU."""
    rule = fixture_objects(
        "dra-example-driver__device-taints-tolerations__device-taint-pod-noschedule__3-device-taint-rule.yaml"
    )

    finding = the(build(*rule, *fixture_objects(README_SLICES)), "device-tainted")

    assert names(finding, "DeviceTaintRule") == ["example"]
    assert (
        "8 devices" in finding.message
        and "gpu.example.com/unhealthy=true:NoSchedule" in finding.message
    )


def test_untainted_devices_and_rules_for_other_drivers_are_quiet() -> None:
    rule = taint_rule("other", {"driver": "gpu.nvidia.com"})

    assert of(build(rule, *fixture_objects(README_SLICES)), "device-tainted") == []


# --- class-missing ---------------------------------------------------------------------------


def test_template_and_unallocated_claim_of_a_missing_class() -> None:
    tmpl = template("amd", "team-amd", requests=[request("gpu", "gpu.amd.com")])
    c = claim("rocm", "team-amd", requests=[request("gpu", "gpu.amd.com")])

    finding = the(build(tmpl, c), "class-missing")

    assert finding.severity == "error"
    assert finding.objects == [
        {"kind": "DeviceClass", "namespace": "", "name": "gpu.amd.com"},
        {"kind": "ResourceClaim", "namespace": "team-amd", "name": "rocm"},
        {"kind": "ResourceClaimTemplate", "namespace": "team-amd", "name": "amd"},
    ]


def test_a_missing_class_in_a_first_available_subrequest_counts() -> None:
    tmpl = template(
        "either",
        requests=[
            {
                "name": "gpu",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "big.example.com"},
                    {"name": "small", "deviceClassName": DRIVER},
                ],
            }
        ],
    )

    finding = the(build(device_class(DRIVER, EXAMPLE_CLASS), tmpl), "class-missing")

    assert names(finding, "DeviceClass") == ["big.example.com"]


def test_existing_classes_and_allocated_claims_are_not_class_missing() -> None:
    """An allocated claim no longer needs its class."""
    tmpl = template("ok")
    allocated = claim(
        "done", requests=[request("gpu", "retired.example.com")], results=[result(pool=WORKER)]
    )

    assert of(build(*example_cluster(), tmpl, allocated), "class-missing") == []


# --- no-preemption ---------------------------------------------------------------------------


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def holder(name: str, device_name: str, priority: int) -> list[dict[str, Any]]:
    """A running Pod and its generated claim holding one of the README node's GPUs."""
    p = scheduled(pod(name, "batch", claims=[pod_claim("gpu", template="single-gpu")]))
    p["spec"]["priority"] = priority
    c = generated_claim(
        p, "gpu", results=[result("gpu", device_name, pool=WORKER)], reserved_for=[consumer(p)]
    )
    return [p, c]


def waiting(selector: str = "", priority_class_name: str = "research-high") -> list[dict[str, Any]]:
    req = request(
        "gpu", DRIVER, **({"selectors": [{"cel": {"expression": selector}}]} if selector else {})
    )
    p = pod("trainer", "research", claims=[pod_claim("gpu", claim="trainer-gpu")])
    p["spec"]["priorityClassName"] = priority_class_name
    p["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    ]
    return [p, claim("trainer-gpu", "research", requests=[req])]


def gpus_held_by(priorities: dict[int, int]) -> list[dict[str, Any]]:
    """Each of the README node's 8 GPUs held by a Pod of the given priority (index: priority)."""
    objects = [*example_cluster(), priority_class("research-high", 1000)]
    for i in range(8):
        objects += holder(f"job-{i}", f"gpu-{i}", priorities.get(i, 0))
    return objects


def test_pending_pod_outranks_the_pods_holding_every_matching_device() -> None:
    state = build(*gpus_held_by({}), *waiting())

    finding = the(state, "no-preemption")

    assert finding.severity == "warning"
    assert finding.objects[:2] == [
        {"kind": "Pod", "namespace": "research", "name": "trainer"},
        {"kind": "ResourceClaim", "namespace": "research", "name": "trainer-gpu"},
    ]
    assert "priority 1000" in finding.message and "does not preempt" in finding.message
    assert len(names(finding, "Pod")) == 1 + 8
    assert pod_priority(state, state.pods[("research", "trainer")]) == 1000


def test_request_selectors_decide_which_holders_count() -> None:
    """gpu-1 is held by a higher-priority Pod, gpu-0 by a lower one (index via CEL)."""
    objects = gpus_held_by({1: 5000})
    index = "device.attributes['gpu.example.com'].index == {}"

    blocked_low = build(*objects, *waiting(index.format(0)))
    blocked_high = build(*objects, *waiting(index.format(1)))

    assert names(the(blocked_low, "no-preemption"), "ResourceClaim") == [
        "trainer-gpu",
        "job-0-gpu-abcde",
    ]
    assert of(blocked_high, "no-preemption") == []


def test_all_mode_needs_every_matching_device_freeable() -> None:
    """allocationMode All: every matching device on the node must be free (dra-reference §5.5)."""
    everything = waiting()
    everything[1]["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All"
    one_above = gpus_held_by({5: 5000})

    assert (
        "all gpu.example.com devices"
        in the(build(*gpus_held_by({}), *everything), "no-preemption").message
    )
    assert of(build(*one_above, *copy.deepcopy(everything)), "no-preemption") == []


def test_no_preemption_finding_when_a_device_is_free_or_preemption_is_off() -> None:
    free = [
        o for o in gpus_held_by({}) if o["metadata"]["name"] not in ("job-7", "job-7-gpu-abcde")
    ]
    never = waiting()
    never[0]["spec"]["preemptionPolicy"] = "Never"
    equal = waiting(priority_class_name="")

    assert of(build(*free, *waiting()), "no-preemption") == []
    assert of(build(*gpus_held_by({}), *never), "no-preemption") == []
    assert of(build(*gpus_held_by({}), *equal), "no-preemption") == []


# --- parallelism-exceeds-capacity ------------------------------------------------------------


def gpu_job(
    parallelism: int, *, completions: int | None = None, selector: str = ""
) -> list[dict[str, Any]]:
    """The NVIDIA bats gpu-job-rct-parallel shape (template rct-deploy-gpu, one GPU per Pod) as a
    Job, on the example driver's class."""
    (tmpl,) = [
        o
        for o in fixture_objects("nvidia-gpu__tests__bats__specs__gpu-job-rct-parallel.yaml")
        if o["kind"] == "ResourceClaimTemplate"
    ]
    exactly = tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["deviceClassName"] = DRIVER
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    (deploy,) = [
        o
        for o in fixture_objects("nvidia-gpu__tests__bats__specs__gpu-job-rct-parallel.yaml")
        if o["kind"] == "Deployment"
    ]
    spec: dict[str, Any] = {"parallelism": parallelism, "template": deploy["spec"]["template"]}
    if completions is not None:
        spec["completions"] = completions
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "gpu-job-parallel", "namespace": "default", "uid": "uid-job"},
        "spec": spec,
        "status": {},
    }
    return [tmpl, job]


def test_job_running_more_pods_than_there_are_devices() -> None:
    finding = the(build(*example_cluster(), *gpu_job(10)), "parallelism-exceeds-capacity")

    assert finding.objects == [
        {"kind": "Job", "namespace": "default", "name": "gpu-job-parallel"},
        {"kind": "ResourceClaimTemplate", "namespace": "default", "name": "rct-deploy-gpu"},
    ]
    assert "8 devices match" in finding.message and "room for 8 Pods" in finding.message


def test_request_selectors_narrow_the_capacity() -> None:
    state = build(
        *example_cluster(), *gpu_job(2, selector="device.attributes['gpu.example.com'].index < 1")
    )

    assert "1 device matches" in the(state, "parallelism-exceeds-capacity").message


def test_devices_held_by_other_claims_do_not_count_but_the_jobs_own_do() -> None:
    objects = [*example_cluster(), *gpu_job(5)]
    for i in range(3):  # three GPUs used elsewhere
        objects += holder(f"other-{i}", f"gpu-{i}", 0)
    job_pod = scheduled(
        pod(
            "gpu-job-parallel-a",
            claims=[pod_claim("gpu", template="rct-deploy-gpu")],
            owners=[owner("Job", "gpu-job-parallel", "uid-job")],
        )
    )
    objects += [
        job_pod,
        generated_claim(
            job_pod,
            "gpu",
            results=[result("gpu", "gpu-7", pool=WORKER)],
            reserved_for=[consumer(job_pod)],
        ),
    ]

    assert of(build(*objects), "parallelism-exceeds-capacity") == []  # 4 free + its own gpu-7
    objects += holder("other-3", "gpu-3", 0)
    finding = the(build(*objects), "parallelism-exceeds-capacity")
    assert "4 of them are allocated to other claims" in finding.message


def test_jobs_that_fit_are_done_or_share_one_claim_are_fine() -> None:
    fits = gpu_job(8)
    nearly_done = gpu_job(10, completions=10)
    nearly_done[1]["status"] = {"succeeded": 5}
    done = gpu_job(10)
    done[1]["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    shared = gpu_job(10)
    shared[1]["spec"]["template"]["spec"]["resourceClaims"] = [
        {"name": "gpu", "resourceClaimName": "one"}
    ]

    for job_objects in (fits, nearly_done, done, shared):
        assert of(build(*example_cluster(), *job_objects), "parallelism-exceeds-capacity") == []


# --- shared-claim ----------------------------------------------------------------------------


def test_claim_shared_across_pods() -> None:
    """basic-shared-claim-across-pods once both Pods run."""
    objects = fixture_objects(SHARED_ACROSS_PODS)
    p0, p1 = (scheduled(with_uid(o)) for o in objects if o["kind"] == "Pod")
    (c,) = [o for o in objects if o["kind"] == "ResourceClaim"]
    c["status"] = {
        "allocation": {"devices": {"results": [result("gpu", "gpu-0", pool=WORKER)]}},
        "reservedFor": [consumer(p0), consumer(p1)],
    }

    finding = the(build(*example_cluster(), p0, p1, c), "shared-claim")

    assert finding.severity == "info"
    assert names(finding, "Pod") == ["pod0", "pod1"]


def test_a_claim_used_by_one_pod_or_by_finished_pods_is_not_shared() -> None:
    objects = fixture_objects(SHARED_ACROSS_PODS)
    p0, p1 = (scheduled(with_uid(o), phase="Succeeded") for o in objects if o["kind"] == "Pod")
    (c,) = [o for o in objects if o["kind"] == "ResourceClaim"]

    assert of(build(p0, p1, c), "shared-claim") == []
    assert of(build(p0, c), "shared-claim") == []


# --- dra-api-not-served ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("versions", "severity"),
    [
        (["v1", "apps/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"], "warning"),
        (["v1", "apps/v1", "batch/v1"], "error"),
    ],
)
def test_dra_api_not_served(versions: list[str], severity: str) -> None:
    finding = the(build(meta=SnapshotMeta(api_versions=versions)), "dra-api-not-served")

    assert finding.severity == severity
    assert finding.objects == []


@pytest.mark.parametrize("versions", [[], ["v1", "resource.k8s.io/v1", "resource.k8s.io/v1beta2"]])
def test_dra_api_served_or_unknown(versions: list[str]) -> None:
    assert of(build(meta=SnapshotMeta(api_versions=versions)), "dra-api-not-served") == []


# --- dangling-allocation ---------------------------------------------------------------------


def test_allocation_naming_a_device_no_slice_has() -> None:
    p = scheduled(fixture_pod("pod0", SHARED_ACROSS_PODS))
    c = claim(
        "single-gpu",
        "basic-shared-claim-across-pods",
        results=[result("gpu", "gpu-9", pool=WORKER)],
        reserved_for=[consumer(p)],
    )

    finding = the(build(*example_cluster(), p, c), "dangling-allocation")

    assert names(finding, "ResourceClaim") == ["single-gpu"]
    assert names(finding, "Pod") == ["pod0"]
    assert f"gpu.example.com/{WORKER}/gpu-9" in finding.message


def test_allocations_of_published_devices_are_not_dangling() -> None:
    c = claim("ok", results=[result("gpu", "gpu-7", pool=WORKER)])

    assert of(build(*example_cluster(), c), "dangling-allocation") == []


# --- ordering and shape ----------------------------------------------------------------------


def test_findings_are_sorted_by_severity_code_and_objects() -> None:
    tmpl = template("amd", requests=[request("gpu", "gpu.amd.com")])
    stale = resource_slice("node-1-old", generation=1, node_name="node-1")
    new = resource_slice("node-1-new", generation=2, node_name="node-1")
    orphan = claim("b-orphan", results=[result(pool="node-1", device_name="gpu-1")])
    other = claim("a-orphan", results=[result(pool="node-1", device_name="gpu-0")])

    found = find(build(tmpl, stale, new, orphan, other))

    assert [(f.severity, f.code) for f in found] == [
        ("error", "class-missing"),
        ("warning", "allocated-unreserved"),
        ("warning", "allocated-unreserved"),
        ("warning", "pool-stale-generation"),
    ]
    assert [f.objects[0]["name"] for f in found[1:3]] == ["a-orphan", "b-orphan"]
    assert set(found[0].as_dict()) == {"code", "severity", "message", "objects", "next_step"}


# --- the demo cluster ------------------------------------------------------------------------


def demo_state(later: bool) -> ClusterState:
    meta = SnapshotMeta(
        cluster=demo.CLUSTER, server_version=demo.SERVER_VERSION, api_versions=demo.API_VERSIONS
    )
    return ClusterState.build(demo.build(later=later), meta)


def test_demo_cluster_first_snapshot() -> None:
    state = demo_state(later=False)
    codes = {f.code for f in find(state)}

    assert {
        "nodename-bypass",
        "shared-claim",
        "parallelism-exceeds-capacity",
        "class-missing",
    } <= codes
    assert names(the(state, "nodename-bypass"), "Pod") == ["pinned-job"]
    assert names(the(state, "shared-claim"), "ResourceClaim") == ["single-gpu"]
    gang, parallelism = of(state, "parallelism-exceeds-capacity")
    assert names(parallelism, "Job") == ["render-farm"]
    assert "7 Pods" in parallelism.message and "16 devices match" in parallelism.message
    # The gang's Job: four A100s wanted, one held by smoke/cuda-smoke.
    assert names(gang, "Job") == ["llm-train-workers-0"]
    assert "room for 3 Pods" in gang.message
    assert "form gang llm-train/llm-train (minCount 4), so none starts" in gang.message
    assert "lower the gang's minCount together with the Job's parallelism" in gang.next_step
    assert names(gang, "PodGroup") == ["llm-train"]
    assert ("ResourceClaimTemplate", "team-amd", "mi300x") in {
        (o["kind"], o["namespace"], o["name"]) for o in the(state, "class-missing").objects
    }
    assert "device-tainted" not in codes
    assert "dra-api-not-served" not in codes


def test_demo_cluster_later_snapshot_has_the_tainted_mig_device() -> None:
    # XID 43 on one of GPU 0's slices; GPU 1's XID 79 (the driver's NoSchedule taint and a
    # NoExecute DeviceTaintRule per device) is a finding of its own per taint.
    xid_43, *xid_79 = sorted(
        of(demo_state(later=True), "device-tainted"), key=lambda f: "xid=43" not in f.message
    )
    xid_79.sort(key=lambda f: f.message)
    assert [f.message.split(" carr")[0] for f in xid_79] == [
        "1 device of pool gpu.nvidia.com/h100-mig-node-01 (gpu-1-mig-3g40gb-9-0)",
        "1 device of pool gpu.nvidia.com/h100-mig-node-01 (gpu-1-mig-3g40gb-9-4)",
        "2 devices of pool gpu.nvidia.com/h100-mig-node-01 "
        "(gpu-1-mig-3g40gb-9-0 and gpu-1-mig-3g40gb-9-4)",
    ]
    # The rules' NoExecute taints, then the driver's own NoSchedule one.
    from_rules = [("NoExecute" in f.message, "DeviceTaintRule" in f.message) for f in xid_79]
    assert from_rules == [(True, True), (True, True), (False, False)]
    finding = xid_43

    assert "gpu.nvidia.com/h100-mig-node-01" in finding.message
    assert "gpu-0-mig-1g10gb-19-6" in finding.message
    assert "gpu.nvidia.com/xid=43:NoSchedule" in finding.message


# --- the findings beside a verdict (dradash.dra.concerns, issue 27 item 3) -------------------


@pytest.fixture(scope="module")
def later_analysis() -> Any:
    from dradash.dra.analysis import analyse

    state = ClusterState.build(demo.build(later=True), SnapshotMeta(server_version="v1.37.0"))
    return analyse(state)


def attached(analysis: Any, kind: str, namespace: str, name: str) -> list[str]:
    records = analysis.pods if kind == "Pod" else analysis.claims
    record = next(
        r
        for r in records
        if (getattr(r, "pod", None) or getattr(r, "claim", None)).key == (kind, namespace, name)
    )
    return [analysis.findings[i].code for i in record.findings]


def test_a_pod_gets_the_findings_about_its_job_and_the_pools_it_could_use(
    later_analysis: Any,
) -> None:
    """render-farm-6 waits for 2 GPUs: its Job runs more Pods than there are GPUs, and 4 free
    GPUs sit in an incomplete pool. Neither finding names the Pod."""
    codes = attached(later_analysis, "Pod", "render", "render-farm-6-05b2e")
    assert codes == ["parallelism-exceeds-capacity", "pool-incomplete"]
    claim_codes = attached(
        later_analysis, "ResourceClaim", "render", "render-farm-6-05b2e-gpus-9927f"
    )
    assert claim_codes == codes


def test_a_running_pod_gets_findings_about_its_pool_not_about_other_devices_of_it(
    later_analysis: Any,
) -> None:
    """embedder-0 runs on a MIG device of h100-mig-node-01, whose pool keeps a stale slice and
    whose other devices are tainted or unhealthy: only the pool's finding concerns it."""
    assert attached(later_analysis, "Pod", "inference", "embedder-0") == ["pool-stale-generation"]
    codes = attached(later_analysis, "Pod", "finetune", "llama-ft-x8k2q")
    assert {"device-unhealthy", "device-tainted", "taint-eviction"} <= set(codes)


def test_the_findings_index_answers_in_order_once_each() -> None:
    from dradash.dra.concerns import FindingIndex

    state = ClusterState.build(demo.build(later=True), SnapshotMeta(server_version="v1.37.0"))
    found = find(state)
    index = FindingIndex(state, found)
    pool = next(i for i, f in enumerate(found) if f.code == "pool-incomplete")
    keys = [
        ("candidate", "gpu.example.com", "gpu-example-worker-3"),
        ("pool", "gpu.example.com", "gpu-example-worker-3"),
        ("Job", "render", "render-farm"),
    ]
    positions = index.about(keys)
    assert positions == sorted(set(positions)) and pool in positions
    assert {found[i].code for i in positions} == {"pool-incomplete", "parallelism-exceeds-capacity"}
    assert index.about([("Pod", "nowhere", "x")]) == []
