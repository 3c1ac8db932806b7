"""Every stage and reason of DESIGN "Diagnosis", each reached by a scenario.

Scenarios start from the demo cluster (built from the shapes of dra-example-driver and NVIDIA
manifests) and change what each case needs, the way a cluster would get into that state.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from dradash.demo import cluster as demo
from dradash.dra.diagnosis import STAGES, Diagnosis, diagnose_all, diagnose_claim, diagnose_pod
from dradash.dra.state import ClusterState, SnapshotMeta

H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
BASE = demo.build()


def find(objects: list[dict[str, Any]], kind: str, name: str, namespace: str = "") -> dict:
    for obj in objects:
        m = obj["metadata"]
        if obj["kind"] == kind and m["name"] == name and m.get("namespace", "") == namespace:
            return obj
    raise LookupError(f"{kind} {namespace}/{name}")


def claim_of(objects: list[dict[str, Any]], pod: dict[str, Any]) -> dict[str, Any]:
    name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    return find(objects, "ResourceClaim", name, pod["metadata"]["namespace"])


def state_of(objects: list[dict[str, Any]], version: str = demo.SERVER_VERSION) -> ClusterState:
    return ClusterState.build(objects, SnapshotMeta(server_version=version))


def pending_pod(
    objects: list[dict[str, Any]],
    name: str,
    requests: list[dict[str, Any]],
    *,
    namespace: str = "llm-eval",
    constraints: list[dict[str, Any]] | None = None,
    **pod_spec: Any,
) -> None:
    """A Pod waiting for an explicit claim of its own, as a user would create them."""
    spec: dict[str, Any] = {"requests": requests}
    if constraints:
        spec["constraints"] = constraints
    objects.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": f"{name}-claim", "namespace": namespace, "uid": f"{name}-c"},
            "spec": {"devices": spec},
        }
    )
    objects.append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-p"},
            "spec": {
                "containers": [
                    {"name": "ctr0", "image": "x", "resources": {"claims": [{"name": "gpu"}]}}
                ],
                "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-claim"}],
                **pod_spec,
            },
            "status": {"phase": "Pending"},
        }
    )


def exact(device_class: str, *selectors: str, count: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "name": "gpu",
        "exactly": {
            "deviceClassName": device_class,
            "selectors": [{"cel": {"expression": s}} for s in selectors],
            "allocationMode": "ExactCount",
            "count": count,
            **extra,
        },
    }


# --- scenario modifiers: each takes a copy of the demo objects and changes them -------------


def claim_not_owned(o: list[dict[str, Any]]) -> tuple[str, str]:
    pod = find(o, "Pod", "render-farm-6-05b2e", "render")
    other = claim_of(o, find(o, "Pod", "render-farm-5-f941b", "render"))
    pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"] = other["metadata"]["name"]
    return "render", "render-farm-6-05b2e"


def claim_being_deleted(o: list[dict[str, Any]]) -> tuple[str, str]:
    pod = find(o, "Pod", "render-farm-6-05b2e", "render")
    claim_of(o, pod)["metadata"]["deletionTimestamp"] = "2026-11-28T09:55:00Z"
    return "render", "render-farm-6-05b2e"


def no_slices(o: list[dict[str, Any]]) -> tuple[str, str]:
    o.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "fpga.example.com"},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'fpga.example.com'"}}]},
        }
    )
    pending_pod(o, "fpga-job", [exact("fpga.example.com")])
    return "llm-eval", "fpga-job"


def a100_pool(o: list[dict[str, Any]]) -> dict[str, Any]:
    return next(
        s for s in o if s["kind"] == "ResourceSlice" and s["spec"]["nodeName"] == "a100-node-01"
    )


def pool_incomplete(o: list[dict[str, Any]]) -> tuple[str, str]:
    a100_pool(o)["spec"]["pool"]["resourceSliceCount"] = 2  # the second slice is not there yet
    pending_pod(
        o,
        "ampere",
        [exact("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].architecture == 'Ampere'")],
    )
    return "llm-eval", "ampere"


def pool_invalid(o: list[dict[str, Any]]) -> tuple[str, str]:
    devices = a100_pool(o)["spec"]["devices"]
    devices[2]["name"] = devices[1]["name"]  # a driver bug: two devices named gpu-1
    pending_pod(
        o,
        "ampere",
        [exact("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].architecture == 'Ampere'")],
    )
    return "llm-eval", "ampere"


def devices_unreachable(o: list[dict[str, Any]]) -> tuple[str, str]:
    pending_pod(
        o,
        "pinned-h100",
        [exact("gpu.nvidia.com", H100)],
        nodeSelector={"kubernetes.io/hostname": "gpu-example-worker-1"},
    )
    return "llm-eval", "pinned-h100"


def devices_tainted(o: list[dict[str, Any]]) -> tuple[str, str]:
    mig = next(
        s for s in o if s["kind"] == "ResourceSlice" and s["spec"]["nodeName"] == "h100-mig-node-01"
    )
    for device in mig["spec"]["devices"]:
        device["taints"] = [{"key": "gpu.nvidia.com/xid", "value": "43", "effect": "NoSchedule"}]
    pending_pod(
        o,
        "mig-job",
        [exact("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")],
    )
    return "llm-eval", "mig-job"


def constraint_unsatisfiable(o: list[dict[str, Any]]) -> tuple[str, str]:
    pending_pod(
        o,
        "pair",
        [exact("gpu.nvidia.com", H100, count=2)],
        constraints=[{"requests": ["gpu"], "matchAttribute": "gpu.nvidia.com/uuid"}],
    )
    return "llm-eval", "pair"


def insufficient_count(o: list[dict[str, Any]]) -> tuple[str, str]:
    # 6 whole GPUs are free, 3 A100s on one node and 3 H100s on another: no node has 4.
    pending_pod(o, "four", [exact("gpu.nvidia.com", count=4)])
    return "llm-eval", "four"


def too_many_devices(o: list[dict[str, Any]]) -> tuple[str, str]:
    pending_pod(o, "greedy", [exact("gpu.example.com", count=33)])
    return "llm-eval", "greedy"


def allocation_timeout(o: list[dict[str, Any]]) -> tuple[str, str]:
    pending_pod(o, "slow", [exact("gpu.nvidia.com", H100)])
    o.append(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "slow.1", "namespace": "llm-eval"},
            "involvedObject": {
                "kind": "Pod",
                "name": "slow",
                "namespace": "llm-eval",
                "uid": "slow-p",
            },
            "reason": "FailedScheduling",
            "type": "Warning",
            "message": "0/6 nodes are available: 1 timed out trying to allocate devices.",
            "lastTimestamp": "2026-11-28T09:59:00Z",
        }
    )
    return "llm-eval", "slow"


def schedulable_now(o: list[dict[str, Any]]) -> tuple[str, str]:
    pending_pod(o, "fresh", [exact("gpu.nvidia.com", H100)])
    return "llm-eval", "fresh"


def feature_disabled(o: list[dict[str, Any]]) -> tuple[str, str]:
    pending_pod(
        o,
        "either",
        [
            {
                "name": "gpu",
                "firstAvailable": [
                    {
                        "name": "big",
                        "deviceClassName": "gpu.nvidia.com",
                        "selectors": [{"cel": {"expression": H100}}],
                    },
                    {"name": "any", "deviceClassName": "gpu.example.com"},
                ],
            }
        ],
    )
    return "llm-eval", "either"


def node_resources(o: list[dict[str, Any]]) -> tuple[str, str]:
    pod = find(o, "Pod", "pod2", "gpu-test2")
    del pod["spec"]["nodeSelector"]  # the claim's node is fine now; something else blocks
    return "gpu-test2", "pod2"


def binding_conditions_pending(o: list[dict[str, Any]]) -> tuple[str, str]:
    pod = find(o, "Pod", "pod2", "gpu-test2")
    del pod["spec"]["nodeSelector"]
    claim = find(o, "ResourceClaim", "single-gpu", "gpu-test2")
    result = claim["status"]["allocation"]["devices"]["results"][0]
    result["bindingConditions"] = ["dra.example.com/is-prepared"]
    result["bindingFailureConditions"] = ["dra.example.com/preparing-failed"]
    return "gpu-test2", "pod2"


def prepare_failed(o: list[dict[str, Any]]) -> tuple[str, str]:
    event = find(o, "Pod", "cuda-smoke", "smoke")
    for e in o:
        if e["kind"] == "Event" and e["involvedObject"]["name"] == event["metadata"]["name"]:
            e["message"] = (
                "Failed to prepare dynamic resources: prepare dynamic resources: "
                "NodePrepareResources: rpc error: code = DeadlineExceeded "
                "desc = context deadline exceeded"
            )
    return "smoke", "cuda-smoke"


def device_not_ready(o: list[dict[str, Any]]) -> tuple[str, str]:
    o[:] = [
        e for e in o if not (e["kind"] == "Event" and e["involvedObject"]["name"] == "cuda-smoke")
    ]
    claim = claim_of(o, find(o, "Pod", "cuda-smoke", "smoke"))
    claim["status"]["devices"] = [
        {
            "driver": "gpu.nvidia.com",
            "pool": "a100-node-01",
            "device": "gpu-0",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "Resetting",
                    "message": "GPU reset in progress",
                    "lastTransitionTime": "2026-11-28T09:40:00Z",
                }
            ],
        }
    ]
    return "smoke", "cuda-smoke"


def waiting(o: list[dict[str, Any]]) -> tuple[str, str]:
    o[:] = [
        e for e in o if not (e["kind"] == "Event" and e["involvedObject"]["name"] == "cuda-smoke")
    ]
    return "smoke", "cuda-smoke"


def exited_error(o: list[dict[str, Any]]) -> tuple[str, str]:
    pod = find(o, "Pod", "batch-ocr", "ml-team")
    pod["status"]["containerStatuses"][0]["state"]["terminated"].update(exitCode=2, reason="Error")
    return "ml-team", "batch-ocr"


def evicted_by_device_taint(o: list[dict[str, Any]]) -> tuple[str, str]:
    # dra-example-driver's device-taint-pod-noexecute demo: a DeviceTaintRule with NoExecute.
    pod = find(o, "Pod", "vllm-0", "inference")
    pod["metadata"]["deletionTimestamp"] = "2026-11-28T09:58:00Z"
    pod["status"]["conditions"].append(
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByDeviceTaintManager",
            "message": "Device Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": "2026-11-28T09:58:00Z",
        }
    )
    return "inference", "vllm-0"


def gate_only(o: list[dict[str, Any]]) -> tuple[str, str]:
    return "queued", "sweep-3"


SCENARIOS: list[
    tuple[str, str, Callable[[list[dict[str, Any]]], tuple[str, str]] | tuple[str, str], str]
] = [
    # stage, reason, scenario (or a demo Pod as it is), server version
    ("pod-pending", "claim-missing", ("team-b", "shared-consumer"), ""),
    ("pod-pending", "template-missing", ("notebooks", "notebook-0"), ""),
    ("pod-pending", "claim-not-created", ("batch", "etl-worker-7"), ""),
    ("pod-pending", "claim-not-owned", claim_not_owned, ""),
    ("pod-pending", "claim-being-deleted", claim_being_deleted, ""),
    ("pod-pending", "scheduling-gated", gate_only, ""),
    ("claim-unallocated", "class-missing", ("team-amd", "rocm-smoke"), ""),
    ("claim-unallocated", "no-slices", no_slices, ""),
    ("claim-unallocated", "selector-error", ("gpu-test6", "pod-5c8d7b9f4-qx2lm"), ""),
    ("claim-unallocated", "no-matching-devices", ("llm-eval", "eval-h200"), ""),
    ("claim-unallocated", "pool-incomplete", pool_incomplete, ""),
    ("claim-unallocated", "pool-invalid", pool_invalid, ""),
    ("claim-unallocated", "devices-unreachable", devices_unreachable, ""),
    ("claim-unallocated", "devices-exhausted", ("render", "render-farm-6-05b2e"), ""),
    ("claim-unallocated", "devices-tainted", devices_tainted, ""),
    ("claim-unallocated", "constraint-unsatisfiable", constraint_unsatisfiable, ""),
    ("claim-unallocated", "insufficient-count", insufficient_count, ""),
    ("claim-unallocated", "too-many-devices", too_many_devices, ""),
    ("claim-unallocated", "allocation-timeout", allocation_timeout, ""),
    ("claim-unallocated", "schedulable-now", schedulable_now, ""),
    ("claim-unallocated", "feature-disabled", feature_disabled, "v1.33.4"),
    ("allocated-not-bound", "node-conflict", ("gpu-test2", "pod2"), ""),
    ("allocated-not-bound", "node-resources", node_resources, ""),
    ("allocated-not-bound", "binding-conditions-pending", binding_conditions_pending, ""),
    ("device-not-prepared", "driver-not-registered", ("smoke", "cuda-smoke"), ""),
    ("device-not-prepared", "prepare-failed", prepare_failed, ""),
    ("device-not-prepared", "device-not-ready", device_not_ready, ""),
    ("device-not-prepared", "nodename-bypass", ("manual", "pinned-job"), ""),
    ("device-not-prepared", "waiting", waiting, ""),
    ("workload-failing", "crash-loop", ("ml-team", "trainer-crashy"), ""),
    ("workload-failing", "oom-killed", ("ml-team", "batch-ocr"), ""),
    ("workload-failing", "exited-error", exited_error, ""),
    ("workload-failing", "image-pull", ("ml-team", "vllm-canary"), ""),
    ("workload-failing", "evicted-by-device-taint", evicted_by_device_taint, ""),
    ("healthy", "running", ("inference", "vllm-0"), ""),
    ("healthy", "completed", ("training", "mnist-8kq2w"), ""),
]


def run(scenario: Any, version: str) -> Diagnosis:
    objects = copy.deepcopy(BASE)
    namespace, name = scenario(objects) if callable(scenario) else scenario
    state = state_of(objects, version or demo.SERVER_VERSION)
    return diagnose_pod(state, state.pods[(namespace, name)])


@pytest.mark.parametrize(
    ("stage", "reason", "scenario", "version"),
    SCENARIOS,
    ids=[f"{s}/{r}" for s, r, _, _ in SCENARIOS],
)
def test_each_reason_is_reached_with_evidence_and_next_steps(
    stage: str, reason: str, scenario: Any, version: str
) -> None:
    diagnosis = run(scenario, version)
    assert (diagnosis.stage, diagnosis.reason) == (stage, reason), diagnosis.summary
    assert diagnosis.summary.endswith((".", ")")) and len(diagnosis.summary) > 20
    assert diagnosis.evidence, "a verdict without evidence"
    if stage != "healthy":
        assert diagnosis.next_steps, "a stuck Pod without next steps"


def test_every_stage_and_design_reason_has_a_scenario() -> None:
    design = {
        "pod-pending": {
            "claim-missing",
            "template-missing",
            "claim-not-created",
            "claim-not-owned",
            "claim-being-deleted",
            "scheduling-gated",
        },
        "claim-unallocated": {
            "class-missing",
            "no-slices",
            "selector-error",
            "no-matching-devices",
            "pool-incomplete",
            "pool-invalid",
            "devices-unreachable",
            "devices-exhausted",
            "devices-tainted",
            "constraint-unsatisfiable",
            "insufficient-count",
            "too-many-devices",
            "allocation-timeout",
            "feature-disabled",
        },
        "allocated-not-bound": {"node-conflict", "node-resources", "binding-conditions-pending"},
        "device-not-prepared": {
            "prepare-failed",
            "driver-not-registered",
            "device-not-ready",
            "nodename-bypass",
            "waiting",
        },
        "workload-failing": {
            "crash-loop",
            "exited-error",
            "oom-killed",
            "image-pull",
            "evicted-by-device-taint",
        },
        "healthy": {"running", "completed"},
    }
    covered: dict[str, set[str]] = {s: set() for s in STAGES}
    for stage, reason, _, _ in SCENARIOS:
        covered[stage].add(reason)
    for stage, reasons in design.items():
        assert reasons <= covered[stage], f"{stage}: {reasons - covered[stage]} not reached"


def test_evidence_names_the_objects_and_events_that_decided() -> None:
    diagnosis = run(("gpu-test6", "pod-5c8d7b9f4-qx2lm"), "")
    assert "no such key: index" in diagnosis.summary
    kinds = {(e.kind, e.field) for e in diagnosis.evidence}
    assert ("ResourceClaim", "status.allocation") in kinds
    assert ("Pod", "event FailedScheduling") in kinds
    assert any("has()" in step or ".?index" in step for step in diagnosis.next_steps)


def test_the_verdict_does_not_depend_on_event_text() -> None:
    """Without any events the objects alone give the same stage and reason."""
    for scenario in (
        ("render", "render-farm-6-05b2e"),
        ("gpu-test6", "pod-5c8d7b9f4-qx2lm"),
        ("gpu-test2", "pod2"),
    ):
        objects = [o for o in copy.deepcopy(BASE) if o["kind"] != "Event"]
        state = state_of(objects)
        pod = state.pods[scenario]
        with_events = run(scenario, "")
        without = diagnose_pod(state, pod)
        assert (without.stage, without.reason) == (with_events.stage, with_events.reason)


def test_the_allocator_explanation_travels_with_a_claim_unallocated_verdict() -> None:
    diagnosis = run(("render", "render-farm-6-05b2e"), "")
    explanation = diagnosis.explanation
    assert explanation is not None and explanation.allocatable is False
    funnel = dict(explanation.requests[0].funnel)
    assert funnel["free"] == 0
    assert funnel["request-selectors"] == 16


def test_a_claim_takes_the_stage_of_its_most_stuck_pod() -> None:
    state = state_of(copy.deepcopy(BASE))
    shared = state.claims[("gpu-test2", "single-gpu")]
    diagnosis = diagnose_claim(state, shared)
    assert (diagnosis.stage, diagnosis.reason) == ("allocated-not-bound", "node-conflict")
    running = state.claims[("inference", "vllm-0-gpus-q8z4m")]
    assert diagnose_claim(state, running).stage == "healthy"


def test_a_claim_no_pod_uses_is_waiting_for_a_consumer() -> None:
    objects = copy.deepcopy(BASE)
    pending_pod(objects, "unused", [exact("gpu.nvidia.com", H100)])
    objects[:] = [
        o for o in objects if not (o["kind"] == "Pod" and o["metadata"]["name"] == "unused")
    ]
    state = state_of(objects)
    diagnosis = diagnose_claim(state, state.claims[("llm-eval", "unused-claim")])
    assert (diagnosis.stage, diagnosis.reason) == ("claim-unallocated", "no-consumer")
    assert "would allocate on h100-node-01" in diagnosis.summary


def test_pods_using_extended_resources_backed_by_dra_are_diagnosed() -> None:
    objects = copy.deepcopy(BASE)
    pod = find(objects, "Pod", "pod0", "gpu-test1")
    claim = claim_of(objects, pod)
    pod["spec"].pop("resourceClaims")
    pod["spec"]["containers"][0]["resources"] = {
        "limits": {"deviceclass.resource.kubernetes.io/gpu.example.com": "1"}
    }
    pod["status"].pop("resourceClaimStatuses")
    pod["status"]["extendedResourceClaimStatus"] = {
        "resourceClaimName": claim["metadata"]["name"],
        "requestMappings": [
            {
                "containerName": "ctr0",
                "resourceName": "deviceclass.resource.kubernetes.io/gpu.example.com",
                "requestName": "container-0-request-0",
            }
        ],
    }
    state = state_of(objects)
    assert state.pods[("gpu-test1", "pod0")] in state.dra_pods
    assert diagnose_pod(state, state.pods[("gpu-test1", "pod0")]).reason == "running"


def test_diagnose_all_counts_pods_per_stage() -> None:
    result = diagnose_all(state_of(copy.deepcopy(BASE)))
    assert result.stage_counts() == {
        "pod-pending": 4,
        # extended-resources/cuda-train-4gpu and the four gang members of llm-train among them
        "claim-unallocated": 9,
        "allocated-not-bound": 1,
        "device-not-prepared": 2,
        "workload-failing": 3,
        # extended-resources/gpu-full-pod and finetune's two Pods on the MIG node's GPU 1
        "healthy": 17,
    }
    # the claim kube-scheduler created for gpu-full-pod, and finetune's two
    assert len(result.claims) == 28


# --- verdicts that lead to the fix (issue 27 item 3): render-farm-6 half an hour on ----------
# The later demo snapshot: the 16 example GPUs are held by 10 claims, and the 4 GPUs of
# gpu-example-worker-3 are free but in a pool that has published 1 of its 2 slices.

LATER = demo.build(later=True)
RENDER_FARM_6 = ("render", "render-farm-6-05b2e")


def render_farm_6() -> Diagnosis:
    state = state_of(copy.deepcopy(LATER))
    return diagnose_pod(state, state.pods[RENDER_FARM_6])


def test_devices_exhausted_names_every_holder_and_the_pool_that_would_serve() -> None:
    d = render_farm_6()
    assert (d.stage, d.reason) == ("claim-unallocated", "devices-exhausted")
    assert d.summary == (
        "Every device matching request gpus of render/render-farm-6-05b2e-gpus-9927f is already "
        "allocated to other claims (16 devices held by 10 claims: "
        "render/render-farm-0-d1ce0-gpus-29c90 (2), render/render-farm-1-fe6f8-gpus-b01ed (2), "
        "render/render-farm-2-ffbbf-gpus-a29e3 (2) and 7 more); 4 more are free, enough for it, "
        "but in pool gpu.example.com/gpu-example-worker-3, which has 1 of 2 slices (incomplete "
        "pools are skipped until the driver has published all of them)."
    )


def test_the_first_next_step_completes_the_pool_that_would_serve() -> None:
    steps = render_farm_6().next_steps
    assert steps[0] == (
        "Complete pool gpu.example.com/gpu-example-worker-3: 4 free devices there match request "
        "gpus (2 needed), but driver gpu.example.com has published 1 of the pool's 2 "
        "ResourceSlices, and the allocator skips incomplete pools. Once the driver publishes the "
        "rest, the claim can be allocated there: check its kubelet plugin on node "
        "gpu-example-worker-3 and `kubectl get resourceslices --field-selector "
        "spec.driver=gpu.example.com,spec.nodeName=gpu-example-worker-3 -o wide`."
    )
    assert steps[1].startswith("kubectl describe resourceclaim render-farm-6-05b2e-gpus-9927f")


def test_without_a_pool_that_would_serve_the_next_steps_start_as_before() -> None:
    """The first snapshot has no incomplete pool: no pool step, and the holders are counted."""
    state = state_of(copy.deepcopy(BASE))
    d = diagnose_pod(state, state.pods[RENDER_FARM_6])
    assert d.reason == "devices-exhausted"
    assert "(16 devices held by 10 claims: " in d.summary and "pool" not in d.summary
    assert d.next_steps[0].startswith("kubectl describe resourceclaim")


def test_dropped_devices_are_grouped_by_check_and_holder_each_with_a_why() -> None:
    from dradash.dra.analysis import dropped_groups, explanation_head

    x = render_farm_6().explanation
    assert x is not None
    (request,) = x.requests
    groups = dropped_groups(request)
    assert [(g["step"], g["devices"]) for g in groups] == [("pools", 4), ("free", 16)]
    pools, held = groups
    assert pools["why"] == (
        "in pool gpu-example-worker-3, which the allocator skips (pool incomplete: 1 of 2 slices)"
    )
    assert held["why"].startswith("16 devices held by 10 claims: ")
    assert held["holders_total"] == 10 and len(held["holders"]) == 10
    assert held["holders"][0] == {"claim": "render/render-farm-0-d1ce0-gpus-29c90", "devices": 2}
    assert sum(h["devices"] for h in held["holders"]) == 16
    # every device that dropped out is in a group that says why
    (head,) = explanation_head(x)["requests"]
    assert sum(g["devices"] for g in head["dropped"]) == head["failed_total"] == 20
    assert all(g["why"] for g in head["dropped"])


def test_every_nofit_node_says_why() -> None:
    x = render_farm_6().explanation
    assert x is not None
    whys = {n.node: (n.outcome, n.why) for n in x.nodes}
    assert whys["a100-node-01"] == ("nofit", "no device of class gpu.example.com on this node")
    assert whys["gpu-example-worker-1"] == (
        "nofit",
        "0 free of 2 needed: 8 devices held by 6 claims: render/render-farm-0-d1ce0-gpus-29c90 "
        "(2), render/render-farm-1-fe6f8-gpus-b01ed (2), cel-selector/pod0-gpu-b8w2d (1) and 3 "
        "more",
    )
    assert whys["gpu-example-worker-3"] == (
        "nofit",
        "0 of 2 needed in usable pools: 4 devices in pool gpu-example-worker-3, which the "
        "allocator skips (pool incomplete: 1 of 2 slices)",
    )
    assert all(outcome == "nofit" and why for outcome, why in whys.values())
    assert x.nodes[0].as_dict()["why"] == whys[x.nodes[0].node][1]  # the explain API's "why"


def test_enough_on_one_node_never_names_a_node_without_a_device_of_the_class() -> None:
    """No node has a free GPU: the "count" step names the node that reached most of them
    (it used to name a100-node-01, the first by name, which has none of the class)."""
    x = render_farm_6().explanation
    assert x is not None
    assert x.requests[0].node == "gpu-example-worker-1"
    assert dict(x.requests[0].funnel)["count"] == 0


def test_the_nodes_table_puts_the_nodes_that_got_furthest_first() -> None:
    from dradash.dra.analysis import explanation_head

    x = render_farm_6().explanation
    assert x is not None
    nodes = explanation_head(x)["nodes"]
    assert [n["node"] for n in nodes["not_fit"]][:3] == [
        "gpu-example-worker-1",
        "gpu-example-worker-2",
        "gpu-example-worker-3",
    ]
    assert nodes["nofit_why"] == [
        ["devices held by other claims", 2],
        ["pool skipped", 1],
        ["no device of the class", 3],
    ]
