"""A device's life after allocation (issue 25): health reports (KEP-4680), taints and eviction
(KEP-5055), binding conditions (KEP-5007, KEP-4817), in verdicts, findings, the claim chain and
the stored JSON.

Shapes follow upstream: core/v1 ResourceStatus / ResourceHealth (name ``claim:<pod claim
name>[/<request>]``, resourceID ``<driver>/<pool>/<device>`` or a CDI device ID), resource/v1
DeviceTaint, DeviceTaintRule status, DeviceRequestAllocationResult binding fields, and the
dra-example-driver binding-conditions README's claim status.
"""

from __future__ import annotations

import copy
from typing import Any

from dradash.dra import health
from dradash.dra.analysis import analyse, diagnosis_dict
from dradash.dra.chain import claim_chain
from dradash.dra.diagnosis import diagnose_pod
from dradash.dra.fields import timestamp
from dradash.dra.findings import NEEDS, find
from dradash.dra.state import ClusterState, SnapshotMeta
from tests.dra.builders import (
    DRIVER,
    claim,
    consumer,
    device,
    fixture_objects,
    node,
    pod,
    resource_slice,
    result,
    taint_rule,
)

CAPTURED = "2026-08-10T12:00:00Z"
XID = {"key": "gpu.example.com/xid", "value": "79", "effect": "NoExecute"}


def state_of(*objects: dict[str, Any], captured: str = CAPTURED) -> ClusterState:
    return ClusterState.build(list(objects), SnapshotMeta(captured_at=captured))


def running_pod(
    name: str = "train",
    *,
    health_entries: list[dict[str, Any]] | None = None,
    init_health: list[dict[str, Any]] | None = None,
    state: dict[str, Any] | None = None,
    phase: str = "Running",
) -> dict[str, Any]:
    obj = pod(
        name,
        claims=[{"name": "gpu", "resourceClaimName": f"{name}-gpu"}],
        node_name="node-1",
        phase=phase,
    )
    status: dict[str, Any] = {
        "name": "ctr0",
        "ready": True,
        "restartCount": 0,
        "state": state or {"running": {"startedAt": "2026-08-10T10:00:00Z"}},
    }
    if health_entries is not None:
        status["allocatedResourcesStatus"] = health_entries
    obj["status"]["containerStatuses"] = [status]
    if init_health is not None:
        obj["spec"]["initContainers"] = [
            {"name": "setup", "resources": {"claims": [{"name": "gpu"}]}}
        ]
        obj["status"]["initContainerStatuses"] = [
            {
                "name": "setup",
                "ready": True,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                "allocatedResourcesStatus": init_health,
            }
        ]
    return obj


def entry(health_state: str, resource_id: str = f"{DRIVER}/node-1/gpu-0", **extra: Any) -> dict:
    return {
        "name": "claim:gpu",
        "resources": [{"resourceID": resource_id, "health": health_state, **extra}],
    }


def allocated(pod_obj: dict[str, Any], *results: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return claim(
        f"{pod_obj['metadata']['name']}-gpu",
        results=list(results) or [result()],
        reserved_for=[consumer(pod_obj)],
        **kwargs,
    )


def cluster(
    pod_obj: dict[str, Any], *extra: dict[str, Any], devices: list | None = None, **claim_kw: Any
) -> ClusterState:
    return state_of(
        node("node-1"),
        resource_slice("node-1-gpus", node_name="node-1", devices=devices),
        pod_obj,
        allocated(pod_obj, *claim_kw.pop("results", ()), **claim_kw),
        *extra,
    )


def verdict(state: ClusterState, name: str = "train"):
    return diagnose_pod(state, state.pods[("default", name)])


# --- health --------------------------------------------------------------------------------


def test_an_unhealthy_device_fails_a_running_pod_naming_the_device_and_the_claim() -> None:
    state = cluster(running_pod(health_entries=[entry("Unhealthy", message="XID 79")]))

    d = verdict(state)

    assert (d.stage, d.reason) == ("workload-failing", "device-unhealthy")
    assert f"{DRIVER}/node-1/gpu-0" in d.summary
    assert "ResourceClaim default/train-gpu" in d.summary
    assert "container ctr0" in d.summary
    assert any(
        e.field == "status.containerStatuses[ctr0].allocatedResourcesStatus"
        and "Unhealthy" in e.detail
        and "XID 79" in e.detail
        for e in d.evidence
    )


def test_health_reports_resolve_to_the_device_and_its_reports() -> None:
    state = cluster(running_pod(health_entries=[entry("Unhealthy")]))
    gpu0 = state.devices[(DRIVER, "node-1", "gpu-0")]
    pod_obj = state.pods[("default", "train")]

    (report,) = pod_obj.health
    assert report.device is gpu0
    assert report.claim is state.claims[("default", "train-gpu")]
    assert gpu0.health == [report]
    assert report.as_dict() == {
        "health": "Unhealthy",
        "message": "",
        "pod": "default/train",
        "container": "ctr0",
        "init": False,
        "resource": "claim:gpu",
        "resource_id": f"{DRIVER}/node-1/gpu-0",
        "claim": "default/train-gpu",
    }


def test_a_cdi_resource_id_is_resolved_through_the_claims_only_device() -> None:
    # The kubelet reports the device's first CDI device ID when the driver gave one.
    state = cluster(
        running_pod(health_entries=[entry("Unhealthy", "k8s.gpu.example.com/gpu=gpu-0")])
    )

    d = verdict(state)

    assert d.reason == "device-unhealthy"
    assert f"{DRIVER}/node-1/gpu-0" in d.summary


def test_a_pool_name_with_slashes_is_parsed_like_the_kubelet_joins_it() -> None:
    from dradash.dra.objects import parse_resource_id

    assert parse_resource_id("gpu.example.com/a/b/gpu-0") == ("gpu.example.com", "a/b", "gpu-0")
    assert parse_resource_id("vendor.com/class=name") is None
    assert parse_resource_id("gpu-0") is None


def test_unhealthy_wins_over_the_crash_it_causes_and_names_it() -> None:
    crashing = running_pod(
        health_entries=[entry("Unhealthy")],
        state={"waiting": {"reason": "CrashLoopBackOff"}},
    )
    crashing["status"]["containerStatuses"][0]["lastState"] = {
        "terminated": {"exitCode": 1, "reason": "Error"}
    }
    crashing["status"]["containerStatuses"][0]["restartCount"] = 4

    d = verdict(cluster(crashing))

    assert d.reason == "device-unhealthy"
    assert "crash-loop" in d.summary


def test_an_unhealthy_device_of_an_init_container_counts() -> None:
    state = cluster(running_pod(health_entries=[], init_health=[entry("Unhealthy")]))

    d = verdict(state)

    assert d.reason == "device-unhealthy"
    assert "container setup" in d.summary
    assert any("initContainerStatuses[setup]" in e.field for e in d.evidence)


def test_unknown_health_is_said_but_is_no_verdict() -> None:
    d = verdict(cluster(running_pod(health_entries=[entry("Unknown")])))

    assert (d.stage, d.reason) == ("healthy", "running")
    assert "as Unknown" in d.summary
    assert any("Unknown" in e.detail for e in d.evidence)


def test_healthy_reports_change_nothing() -> None:
    d = verdict(cluster(running_pod(health_entries=[entry("Healthy")])))

    assert (d.reason, d.summary) == (
        "running",
        "Pod default/train is running on node-1 with its devices.",
    )


def test_a_succeeded_pod_is_completed_whatever_its_device_health() -> None:
    done = running_pod(
        health_entries=[entry("Unhealthy")],
        state={"terminated": {"exitCode": 0, "reason": "Completed"}},
        phase="Succeeded",
    )
    assert verdict(cluster(done)).reason == "completed"


def test_the_pods_devices_with_health_and_taints_are_in_the_stored_verdict() -> None:
    tainted = device(
        "gpu-0", taints=[{**XID, "effect": "None", "timeAdded": "2026-08-10T11:00:00Z"}]
    )
    state = cluster(
        running_pod(health_entries=[entry("Unhealthy")]), devices=[tainted, device("gpu-1")]
    )

    stored = diagnosis_dict(verdict(state))

    (row,) = stored["devices"]
    assert row["device"] == "gpu-0" and row["claim"] == "default/train-gpu"
    assert row["health"][0]["health"] == "Unhealthy"
    assert row["taints"] == [
        {
            "key": "gpu.example.com/xid",
            "value": "79",
            "effect": "None",
            "time_added": "2026-08-10T11:00:00Z",
            "source_kind": "ResourceSlice",
            "source_name": "node-1-gpus",
        }
    ]


def test_a_verdict_without_health_or_taints_stores_no_devices_key() -> None:
    assert "devices" not in diagnosis_dict(verdict(cluster(running_pod())))


# --- eviction ------------------------------------------------------------------------------


def evicted_pod(at: str = "2026-08-10T11:05:00Z") -> dict[str, Any]:
    obj = running_pod()
    obj["metadata"]["deletionTimestamp"] = at
    obj["status"]["conditions"] = [
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "DeletionByDeviceTaintManager",
            "message": "Device Taint manager: deleting due to NoExecute taint",
            "lastTransitionTime": at,
        }
    ]
    return obj


def test_an_eviction_names_the_device_taint_rule_and_the_times() -> None:
    rule = taint_rule(
        "gpu-0-broken",
        {"driver": DRIVER, "pool": "node-1", "device": "gpu-0"},
        {**XID, "timeAdded": "2026-08-10T11:00:00Z"},
    )

    d = verdict(cluster(evicted_pod(), rule))

    assert (d.stage, d.reason) == ("workload-failing", "evicted-by-device-taint")
    assert "DeviceTaintRule gpu-0-broken" in d.summary
    assert f"{DRIVER}/node-1/gpu-0" in d.summary
    assert "2026-08-10T11:00:00Z" in d.summary and "2026-08-10T11:05:00Z" in d.summary
    assert any(e.kind == "DeviceTaintRule" and e.name == "gpu-0-broken" for e in d.evidence)
    assert "kubectl get devicetaintrule gpu-0-broken -o yaml" in d.next_steps


def test_an_eviction_by_the_drivers_own_taint_names_the_slice() -> None:
    tainted = device("gpu-0", taints=[{**XID, "timeAdded": "2026-08-10T11:00:00Z"}])

    d = verdict(cluster(evicted_pod(), devices=[tainted, device("gpu-1")]))

    assert "ResourceSlice node-1-gpus" in d.summary
    assert any(
        e.kind == "ResourceSlice" and e.field == "spec.devices[gpu-0].taints" for e in d.evidence
    )


def test_an_eviction_whose_taint_is_gone_says_so() -> None:
    d = verdict(cluster(evicted_pod()))

    assert d.reason == "evicted-by-device-taint"
    assert "no longer shows" in d.summary


def tolerating(seconds: int | None, effect: str = "NoExecute") -> dict[str, Any]:
    toleration: dict[str, Any] = {"key": XID["key"], "operator": "Exists", "effect": effect}
    if seconds is not None:
        toleration["tolerationSeconds"] = seconds
    return result(tolerations=[toleration])


def eviction_state(res: dict[str, Any], effect: str = "NoExecute", captured: str = CAPTURED):
    rule = taint_rule(
        "xid", {"driver": DRIVER}, {**XID, "effect": effect, "timeAdded": "2026-08-10T11:58:00Z"}
    )
    obj = running_pod()
    return state_of(
        node("node-1"),
        resource_slice("node-1-gpus", node_name="node-1"),
        obj,
        allocated(obj, res),
        rule,
        captured=captured,
    )


def test_a_pod_without_toleration_is_due_for_eviction() -> None:
    state = eviction_state(result())

    (e,) = health.evictions(state)

    assert (e.pod.name, e.delay, e.state(None)) == ("train", 0, "due")


def test_toleration_seconds_delay_the_eviction_from_the_taints_time() -> None:
    state = eviction_state(tolerating(300))
    (e,) = health.evictions(state)
    now = state.meta.captured_at

    assert e.delay == 300
    assert e.as_dict(timestamp(now))["evict_at"] == "2026-08-10T12:03:00Z"
    assert e.state(timestamp(now)) == "tolerated"
    assert e.state(timestamp("2026-08-10T12:04:00Z")) == "due"


def test_a_toleration_without_seconds_tolerates_for_ever() -> None:
    assert health.evictions(eviction_state(tolerating(None))) == []


def test_only_tolerations_of_effect_no_execute_keep_a_pod() -> None:
    # devicetainteviction.evictionTime counts tolerations with effect NoExecute only.
    (e,) = health.evictions(eviction_state(tolerating(None, effect="")))
    assert e.delay == 0


def test_effect_none_only_previews_the_eviction() -> None:
    state = eviction_state(result(), effect="None")

    (e,) = health.evictions(state)

    assert e.preview and e.state(None) == "would-evict"
    assert verdict(state).reason == "running"


def test_a_devices_rules_carry_their_effect_status_and_the_pods_they_evict() -> None:
    state = eviction_state(tolerating(300))
    state.taint_rules["xid"].raw["status"] = {
        "conditions": [{"type": "EvictionInProgress", "status": "True", "reason": "Pending"}]
    }
    device = state.devices[(DRIVER, "node-1", "gpu-0")]

    (rule,) = health.device_rules(state, device)

    assert (rule["name"], rule["effect"], rule["selector"]) == (
        "xid",
        "NoExecute",
        {"driver": DRIVER},
    )
    assert rule["taint"]["source_kind"] == "DeviceTaintRule"
    assert rule["conditions"][0]["type"] == "EvictionInProgress"
    assert rule["conditions"][0]["reason"] == "Pending"
    (e,) = rule["evictions"]
    assert (e["pod"], e["claim"], e["state"]) == ("default/train", "default/train-gpu", "tolerated")
    assert e["evict_at"] == "2026-08-10T12:03:00Z"
    # the other device the rule selects is held by nobody
    (other,) = health.device_rules(state, state.devices[(DRIVER, "node-1", "gpu-1")])
    assert other["evictions"] == []


def test_a_preview_rules_pods_would_be_evicted_and_the_device_record_stores_it() -> None:
    state = eviction_state(result(), effect="None")
    record = next(r for r in analyse(state).devices if r.device.key == (DRIVER, "node-1", "gpu-0"))

    (rule,) = record.as_dict()["rules"]

    assert rule["effect"] == "None"
    assert [e["state"] for e in rule["evictions"]] == ["would-evict"]


def test_a_drivers_own_taint_is_no_rule() -> None:
    tainted = device("gpu-0", taints=[XID])
    state = cluster(running_pod(), devices=[tainted, device("gpu-1")])

    assert health.device_rules(state, state.devices[(DRIVER, "node-1", "gpu-0")]) == []


# --- binding -------------------------------------------------------------------------------


def binding_result(**extra: Any) -> dict[str, Any]:
    # dra-example-driver demo/examples/binding-conditions README: the claim's status.
    return result(
        pool="node-1",
        bindingConditions=["BindingConditions"],
        bindingFailureConditions=["BindingFailureConditions"],
        **extra,
    )


def waiting_pod() -> dict[str, Any]:
    return pod("attach", claims=[{"name": "gpu", "resourceClaimName": "attach-gpu"}])


def binding_state(
    conditions: list[dict[str, Any]], allocated_at: str = "2026-08-10T11:58:00Z"
) -> ClusterState:
    obj = waiting_pod()
    c = claim(
        "attach-gpu",
        results=[binding_result()],
        reserved_for=[consumer(obj)],
        device_statuses=[
            {"driver": DRIVER, "pool": "node-1", "device": "gpu-0", "conditions": conditions}
        ]
        if conditions
        else (),
    )
    if allocated_at:
        c["status"]["allocation"]["allocationTimestamp"] = allocated_at
    return state_of(node("node-1"), resource_slice("s", node_name="node-1"), obj, c)


def condition(type_: str, status: str, **extra: str) -> dict[str, str]:
    return {"type": type_, "status": status, "lastTransitionTime": "2026-08-10T11:59:00Z", **extra}


def test_pending_binding_conditions_say_the_time_left() -> None:
    d = verdict(binding_state([]), "attach")

    assert (d.stage, d.reason) == ("allocated-not-bound", "binding-conditions-pending")
    assert "BindingConditions" in d.summary
    assert "gives up in 8 min" in d.summary


def test_a_true_binding_failure_condition_fails_the_binding() -> None:
    state = binding_state(
        [condition("BindingFailureConditions", "True", reason="AttachFailed", message="no path")]
    )

    d = verdict(state, "attach")

    assert (d.stage, d.reason) == ("allocated-not-bound", "binding-failed")
    assert "BindingFailureConditions=True" in d.summary and "AttachFailed" in d.summary


def test_the_binding_timeout_passed_fails_the_binding() -> None:
    d = verdict(binding_state([], allocated_at="2026-08-10T11:40:00Z"), "attach")

    assert d.reason == "binding-failed"
    assert "10 min past the binding timeout" in d.summary


def test_without_allocation_timestamp_the_binding_never_times_out() -> None:
    d = verdict(binding_state([], allocated_at=""), "attach")

    assert d.reason == "binding-conditions-pending"
    assert "gives up in" not in d.summary


def test_the_claim_chain_carries_binding_state_and_device_status() -> None:
    state = binding_state(
        [condition("BindingConditions", "True", reason="Ready", message="Device is ready")]
    )
    c = state.claims[("default", "attach-gpu")]
    c.raw["status"]["devices"][0]["networkData"] = {"interfaceName": "eth1", "ips": ["10.0.0.5/24"]}

    chain = claim_chain(state, c)

    allocation = chain["allocation"]
    assert allocation["binding"] == {
        "timeout_seconds": 600,
        "allocated_at": "2026-08-10T11:58:00Z",
        "deadline": "2026-08-10T12:08:00Z",
        "seconds_left": 480,
        "timed_out": False,
        "failed": False,
        "pending": [],
    }
    (res,) = allocation["results"]
    assert res["binding_failure_conditions"] == ["BindingFailureConditions"]
    assert res["binding"]["conditions"][0] == {
        "type": "BindingConditions",
        "role": "binding",
        "status": "True",
        "reason": "Ready",
        "message": "Device is ready",
        "time": "2026-08-10T11:59:00Z",
    }
    assert res["binding"]["conditions"][1]["status"] == ""
    assert res["status"]["network_data"]["interfaceName"] == "eth1"


def test_the_upstream_claim_status_fragment_is_bound() -> None:
    (fragment,) = fixture_objects(
        "dra-example-driver__binding-conditions__README__claim-status.yaml"
    )
    obj = pod("pod0", claims=[{"name": "gpu", "resourceClaimName": "c"}])
    c = claim("c", requests=None)
    c["status"] = copy.deepcopy(fragment["status"])
    c["status"]["reservedFor"] = [consumer(obj)]
    state = state_of(obj, c)

    b = health.claim_binding(state, state.claims[("default", "c")])

    assert b is not None and b.pending == [] and b.failed == []


# --- findings ------------------------------------------------------------------------------


def codes(state: ClusterState, code: str) -> list:
    return [f for f in find(state) if f.code == code]


def test_the_new_findings_name_the_kinds_they_rest_on() -> None:
    assert NEEDS["taint-eviction"] == ("ResourceSlice", "ResourceClaim", "Pod")
    assert NEEDS["device-unhealthy"] == ("Pod",)
    assert NEEDS["unhealthy-parent-allocatable"] == ("ResourceSlice",)


def test_taint_eviction_names_the_rule_its_pods_and_its_condition() -> None:
    state = eviction_state(result())
    state.taint_rules["xid"].raw["status"] = {
        "conditions": [
            {
                "type": "EvictionInProgress",
                "status": "True",
                "reason": "PodsPendingEviction",
                "message": "1 pod needs to be evicted",
                "lastTransitionTime": "2026-08-10T11:58:01Z",
            }
        ]
    }

    (f,) = codes(state, "taint-eviction")

    assert f.severity == "warning"
    assert "DeviceTaintRule xid" in f.message and "evicts default/train" in f.message
    assert "EvictionInProgress condition is True (1 pod needs to be evicted)" in f.message
    assert {"kind": "DeviceTaintRule", "namespace": "", "name": "xid"} in f.objects
    assert {"kind": "Pod", "namespace": "default", "name": "train"} in f.objects
    assert f.next_step.startswith("kubectl get devicetaintrule xid -o yaml")


def test_taint_eviction_says_until_when_a_pod_is_tolerated() -> None:
    (f,) = codes(eviction_state(tolerating(300)), "taint-eviction")

    assert "will evict default/train (tolerated until 2026-08-10T12:03:00Z)" in f.message


def test_taint_eviction_with_effect_none_is_a_preview() -> None:
    (f,) = codes(eviction_state(result(), effect="None"), "taint-eviction")

    assert f.severity == "info"
    assert "would evict, were its effect NoExecute, default/train" in f.message


def test_no_taint_eviction_for_a_pod_that_tolerates_for_ever() -> None:
    assert codes(eviction_state(tolerating(None)), "taint-eviction") == []


def test_device_unhealthy_lists_the_pods_and_says_the_device_is_untainted() -> None:
    state = cluster(running_pod(health_entries=[entry("Unhealthy", message="XID 79")]))

    (f,) = codes(state, "device-unhealthy")

    assert f.severity == "error"
    assert f"Device {DRIVER}/node-1/gpu-0 is reported Unhealthy (XID 79)" in f.message
    assert "default/train" in f.message and "default/train-gpu" in f.message
    assert "carries no taint" in f.message
    assert codes(cluster(running_pod(health_entries=[entry("Unknown")])), "device-unhealthy") == []


def mig_state(*extra: dict[str, Any]) -> ClusterState:
    objects = fixture_objects(
        "nvidia-gpu__SYNTH__h100-dynamic-mig-partitionable-resourceslices.yaml"
    )
    return state_of(*objects, *extra)


def test_mig_partitions_of_a_tainted_gpu_are_still_allocatable() -> None:
    # dra-driver-nvidia-gpu #1316: a fatal XID taints the full GPU only.
    rule = taint_rule(
        "gpu-0-xid",
        {"driver": "gpu.nvidia.com", "device": "gpu-0"},
        {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"},
    )
    state = mig_state(rule)

    found = codes(state, "unhealthy-parent-allocatable")

    (f,) = found
    assert f.severity == "warning"
    assert (
        "gpu.nvidia.com/h100-dynmig-node-01/gpu-0 carries taint gpu.nvidia.com/xid=79:NoSchedule"
        in f.message
    )
    assert "gpu-0-counter-set" in f.message
    assert "gpu-0-mig-1g10gb-19-0" in f.message and "gpu-1-mig" not in f.message
    assert "still allocatable" in f.message


def test_a_taint_with_effect_none_puts_no_partition_at_risk() -> None:
    rule = taint_rule(
        "gpu-0-xid",
        {"driver": "gpu.nvidia.com", "device": "gpu-0"},
        {"key": "gpu.nvidia.com/xid", "value": "43", "effect": "None"},
    )
    assert codes(mig_state(rule), "unhealthy-parent-allocatable") == []


def test_partitions_tainted_with_their_parent_are_no_risk() -> None:
    rule = taint_rule(
        "gpu-0-xid",
        {"driver": "gpu.nvidia.com", "pool": "h100-dynmig-node-01"},
        {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute"},
    )
    assert codes(mig_state(rule), "unhealthy-parent-allocatable") == []


def test_device_records_carry_health_and_taint_sources() -> None:
    tainted = device("gpu-0", taints=[{**XID, "timeAdded": "2026-08-10T11:00:00Z"}])
    rule = taint_rule("all", {"driver": DRIVER}, {"key": "maint", "effect": "None"})
    state = cluster(
        running_pod(health_entries=[entry("Unhealthy")]), rule, devices=[tainted, device("gpu-1")]
    )

    rows = {r.device.name: r.as_dict() for r in analyse(state).devices}

    assert [t["source_kind"] for t in rows["gpu-0"]["taint_sources"]] == [
        "ResourceSlice",
        "DeviceTaintRule",
    ]
    assert rows["gpu-0"]["taint_sources"][1]["source_name"] == "all"
    assert rows["gpu-0"]["health"][0]["pod"] == "default/train"
    assert rows["gpu-1"]["health"] == []
