"""The diff of two snapshots: objects, fields, and DRA changes in words.

Scenarios start from the demo cluster's earlier snapshot and change it the way a cluster would
change between two captures.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from dradash.demo import cluster as demo
from dradash.dra.diagnosis import diagnose_all
from dradash.dra.diff import ABSENT, SnapshotDiff, diff, field_diff, value_text
from dradash.dra.state import ClusterState, SnapshotMeta
from tests.dra import builders as b

BASE = demo.build()
LATER = demo.build(later=True)
NVIDIA = "gpu.nvidia.com"


def state_of(objects: list[dict[str, Any]]) -> ClusterState:
    return ClusterState.build(objects, SnapshotMeta(server_version=demo.SERVER_VERSION))


def find(objects: list[dict[str, Any]], kind: str, name: str, namespace: str = "") -> dict:
    for obj in objects:
        m = obj["metadata"]
        if obj["kind"] == kind and m["name"] == name and m.get("namespace", "") == namespace:
            return obj
    raise LookupError(f"{kind} {namespace}/{name}")


def remove(objects: list[dict[str, Any]], kind: str, name: str, namespace: str = "") -> None:
    objects.remove(find(objects, kind, name, namespace))


def changed(edit: Callable[[list[dict[str, Any]]], None], *, diagnoses: bool = False):
    """The diff from the demo's earlier snapshot to a copy of it that ``edit`` changed."""
    after = copy.deepcopy(BASE)
    edit(after)
    old, new = state_of(copy.deepcopy(BASE)), state_of(after)
    if diagnoses:
        return diff(old, new, before_diagnosis=diagnose_all(old), after_diagnosis=diagnose_all(new))
    return diff(old, new)


def sentences(result: SnapshotDiff, code: str) -> list[str]:
    return [c.sentence for c in result.changes if c.code == code]


def codes(result: SnapshotDiff) -> set[str]:
    return {c.code for c in result.changes}


# --- objects and fields ------------------------------------------------------------------


def test_identical_snapshots_have_no_changes() -> None:
    result = diff(state_of(copy.deepcopy(BASE)), state_of(copy.deepcopy(BASE)))
    assert result.empty
    assert result.changes == []
    assert (result.added, result.removed, result.changed, result.recurred) == (0, 0, 0, 0)
    pods = result.kind("Pod")
    assert pods is not None and pods.unchanged == pods.before == pods.after == 36


def test_unchanged_objects_are_not_listed() -> None:
    def edit(objects):
        find(objects, "Pod", "trainer-crashy", "ml-team")["status"]["phase"] = "Failed"

    result = changed(edit)
    assert result.changed == 1
    pods = result.kind("Pod")
    assert [c.ref for c in pods.changed] == ["ml-team/trainer-crashy"]
    assert pods.unchanged == 35
    assert not pods.added and not pods.removed
    assert all(not k.any for k in result.kinds if k.kind != "Pod")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("resourceVersion", "987654"),
        ("managedFields", [{"manager": "kube-scheduler", "operation": "Update"}]),
        ("generation", 7),
    ],
)
def test_bookkeeping_fields_alone_do_not_make_an_object_changed(field, value) -> None:
    def edit(objects):
        find(objects, "ResourceClaim", "vllm-0-gpus-q8z4m", "inference")["metadata"][field] = value

    result = changed(edit)
    assert result.empty


def test_generation_is_listed_beside_the_change_it_goes_with() -> None:
    def edit(objects):
        claim = find(objects, "ResourceClaim", "h200-eval", "llm-eval")
        claim["metadata"]["generation"] = 2
        claim["metadata"]["resourceVersion"] = "2"
        claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2

    result = changed(edit)
    (claim,) = result.kind("ResourceClaim").changed
    paths = [f.path for f in claim.fields]
    assert "metadata.generation" in paths
    assert "spec.devices.requests[name=gpu].exactly.count" in paths
    assert "metadata.resourceVersion" not in paths


def test_node_heartbeats_alone_are_not_changes() -> None:
    def edit(objects):
        node = find(objects, "Node", "h100-node-01")
        node["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-11-28T10:30:00Z"

    assert changed(edit).empty


def test_field_diff_names_the_changed_paths() -> None:
    old = {
        "metadata": {"name": "c", "annotations": {"example.com/owner": "a"}, "labels": {}},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "gpu", "device": "gpu-0", "pool": "p"}]}
            },
            "conditions": [{"type": "Ready", "status": "False"}],
        },
    }
    new = copy.deepcopy(old)
    new["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-1"
    new["status"]["conditions"][0]["status"] = "True"
    new["metadata"]["annotations"]["example.com/owner"] = "b"
    new["metadata"]["labels"]["team"] = "ml"
    del new["metadata"]["name"]

    changes = {f.path: (f.op, f.old, f.new) for f in field_diff(old, new)}

    assert changes == {
        "status.allocation.devices.results[0].device": ("changed", "gpu-0", "gpu-1"),
        "status.conditions[type=Ready].status": ("changed", "False", "True"),
        'metadata.annotations["example.com/owner"]': ("changed", "a", "b"),
        "metadata.labels.team": ("added", ABSENT, "ml"),
        "metadata.name": ("removed", "c", ABSENT),
    }


def test_field_diff_matches_named_list_items_by_name() -> None:
    old = {"spec": {"devices": [{"name": "gpu-0"}, {"name": "gpu-1", "taints": []}]}}
    new = {"spec": {"devices": [{"name": "gpu-new"}, {"name": "gpu-0"}, {"name": "gpu-1"}]}}

    changes = [(f.path, f.op) for f in field_diff(old, new)]

    assert changes == [
        ("spec.devices[name=gpu-1].taints", "removed"),
        ("spec.devices[name=gpu-new]", "added"),
    ]


def test_field_diff_compares_unnamed_lists_by_position() -> None:
    changes = [(f.path, f.op) for f in field_diff({"a": [1, 2, 3]}, {"a": [1, 5]})]
    assert changes == [("a[1]", "changed"), ("a[2]", "removed")]


def test_values_are_shown_as_short_json() -> None:
    assert value_text({"b": 1, "a": [True, None]}) == '{"a":[true,null],"b":1}'
    assert value_text("plain") == "plain"
    assert value_text(ABSENT) == ""
    assert len(value_text("x" * 5000)) == 300


def test_events_that_only_recurred_are_grouped_apart() -> None:
    result = diff(state_of(copy.deepcopy(BASE)), state_of(copy.deepcopy(LATER)))
    events = result.kind("Event")
    assert len(events.recurred) == 15  # the four gang members' FailedScheduling among them
    assert not events.changed
    backoff = next(e for e in events.recurred if e.name.startswith("trainer-crashy."))
    assert backoff.detail == "BackOff on Pod ml-team/trainer-crashy: ×48 → ×72"
    assert {f.path for f in backoff.fields} == {"count", "lastTimestamp"}


def test_an_event_with_a_new_message_is_changed() -> None:
    def edit(objects):
        event = next(o for o in objects if o["kind"] == "Event")
        event["message"] = "something else"
        event["count"] = event.get("count", 1) + 1

    events = changed(edit).kind("Event")
    assert len(events.changed) == 1 and not events.recurred


# --- DRA changes in words ----------------------------------------------------------------


def test_demo_later_snapshot_changes() -> None:
    old, new = state_of(copy.deepcopy(BASE)), state_of(copy.deepcopy(LATER))
    result = diff(old, new, before_diagnosis=diagnose_all(old), after_diagnosis=diagnose_all(new))

    assert [c.code for c in result.changes] == [
        "pod-stage",
        "pod-stage",
        "pod-stage",
        "claim-allocated",
        "device-tainted",
        "device-tainted",
        "device-tainted",
        "taint-rule-added",
        "taint-rule-added",
        "pool-generation",
        "pool-stale",
        "pool-added",
        "node-added",
    ]
    stage, evicted, unhealthy, allocated, tainted, xid_0, xid_4, rule_0, rule_4 = result.changes[:9]
    generation, stale, pool, node = result.changes[9:]
    # The GPU that went bad: XID 79 on GPU 1 of the MIG node, the driver's NoSchedule taint on
    # both its devices, a NoExecute DeviceTaintRule on each, the evaluation Pod evicted.
    assert evicted.sentence.startswith(
        "Pod finetune/llama-eval-p3m7d: healthy (running) → workload-failing "
        "(evicted-by-device-taint)."
    )
    assert unhealthy.sentence.startswith(
        "Pod finetune/llama-ft-x8k2q: healthy (running) → workload-failing (device-unhealthy)."
    )
    assert [xid_0.sentence, xid_4.sentence] == [
        f"Device gpu.nvidia.com/h100-mig-node-01/gpu-1-mig-3g40gb-9-{i} got taint "
        "gpu.nvidia.com/xid=79:NoSchedule "
        "(ResourceSlice 00000-gpu.nvidia.com-h100-mig-node-01-ftq9x)."
        for i in (0, 4)
    ]
    assert [rule_0.sentence, rule_4.sentence] == [
        f"DeviceTaintRule xid-79-gpu-1-mig-3g40gb-9-{i} was added: taint "
        "gpu.nvidia.com/xid=79:NoExecute on 1 device."
        for i in (0, 4)
    ]
    assert stage.sentence.startswith(
        "Pod batch/etl-worker-7: pod-pending (claim-not-created) → healthy (running)."
    )
    assert (stage.kind, stage.namespace, stage.name, stage.side) == (
        "Pod",
        "batch",
        "etl-worker-7",
        "after",
    )
    assert allocated.sentence == (
        "ResourceClaim batch/etl-worker-7-gpu-k3f7w was created and allocated "
        "gpu.nvidia.com/h100-node-01/gpu-5 on node h100-node-01, reserved for Pod etl-worker-7."
    )
    assert tainted.sentence == (
        "Device gpu.nvidia.com/h100-mig-node-01/gpu-0-mig-1g10gb-19-6 got taint "
        "gpu.nvidia.com/xid=43:NoSchedule "
        "(ResourceSlice 00000-gpu.nvidia.com-h100-mig-node-01-ftq9x)."
    )
    assert generation.sentence == "Pool gpu.nvidia.com/h100-mig-node-01 generation 1 → 2."
    # The MIG reconfiguration's new slice is added; the old one is left behind, unchanged.
    assert stale.sentence == (
        "Pool gpu.nvidia.com/h100-mig-node-01 moved to generation 2, but its generation-1 "
        "ResourceSlice 00000-gpu.nvidia.com-h100-mig-node-01-8kq2d was not deleted: the "
        "allocator ignores it, and the driver should have deleted it."
    )
    assert (stale.kind, stale.name) == (
        "ResourceSlice",
        "00000-gpu.nvidia.com-h100-mig-node-01-8kq2d",
    )
    slices = result.kind("ResourceSlice")
    assert [s.ref for s in slices.added] == [
        "00000-gpu.nvidia.com-h100-mig-node-01-ftq9x",
        "gpu-example-worker-3-gpu.example.com-e396e",
    ]
    assert slices.changed == [] and slices.removed == []
    assert pool.sentence.startswith("Pool gpu.example.com/gpu-example-worker-3 appeared with 4")
    assert node.sentence == "Node gpu-example-worker-3 was added."
    assert [c.ref for c in result.kind("ResourceClaim").added] == ["batch/etl-worker-7-gpu-k3f7w"]
    assert {c.ref for c in result.kind("Pod").changed} == {
        "batch/etl-worker-7",
        "ml-team/trainer-crashy",
        "finetune/llama-eval-p3m7d",  # evicted
        "finetune/llama-ft-x8k2q",  # its GPU reported Unhealthy
    }
    assert [r.ref for r in result.kind("DeviceTaintRule").added] == [
        f"xid-79-gpu-1-mig-3g40gb-9-{i}" for i in (0, 4)
    ]


def test_without_diagnoses_no_stage_changes_are_reported() -> None:
    result = diff(state_of(copy.deepcopy(BASE)), state_of(copy.deepcopy(LATER)))
    assert "pod-stage" not in codes(result)
    assert "claim-allocated" in codes(result)


def test_claim_released() -> None:
    def edit(objects):
        claim = find(objects, "ResourceClaim", "batch-ocr-gpu-w9p2v", "ml-team")
        del claim["status"]["allocation"]
        del claim["status"]["reservedFor"]

    result = changed(edit)
    assert sentences(result, "claim-released") == [
        "ResourceClaim ml-team/batch-ocr-gpu-w9p2v was deallocated, releasing "
        "gpu.nvidia.com/h100-node-01/gpu-3 on node h100-node-01."
    ]
    assert sentences(result, "claim-unreserved") == [
        "ResourceClaim ml-team/batch-ocr-gpu-w9p2v is no longer reserved for Pod batch-ocr."
    ]
    fields = {f.path for f in result.kind("ResourceClaim").changed[0].fields}
    assert {"status.allocation", "status.reservedFor"} <= fields


def test_claim_allocated_in_place() -> None:
    def edit(objects):
        claim = find(objects, "ResourceClaim", "h200-eval", "llm-eval")
        source = find(objects, "ResourceClaim", "batch-ocr-gpu-w9p2v", "ml-team")
        claim["status"] = copy.deepcopy(source["status"])
        claim["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-7"
        claim["status"]["reservedFor"] = [{"resource": "pods", "name": "eval-h200", "uid": "u-e"}]

    result = changed(edit)
    assert sentences(result, "claim-allocated") == [
        "ResourceClaim llm-eval/h200-eval was allocated gpu.nvidia.com/h100-node-01/gpu-7 "
        "on node h100-node-01."
    ]
    assert sentences(result, "claim-reserved") == [
        "ResourceClaim llm-eval/h200-eval is now reserved for Pod eval-h200."
    ]


def test_claim_reallocated_and_shared_claim_consumers() -> None:
    def edit(objects):
        claim = find(objects, "ResourceClaim", "single-gpu", "gpu-test2")
        claim["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-7"
        claim["status"]["reservedFor"] = claim["status"]["reservedFor"][:1]

    result = changed(edit)
    assert sentences(result, "claim-reallocated") == [
        "ResourceClaim gpu-test2/single-gpu was allocated "
        "gpu.example.com/gpu-example-worker-1/gpu-7 on node gpu-example-worker-1 instead of "
        "gpu.example.com/gpu-example-worker-1/gpu-2 on node gpu-example-worker-1."
    ]
    assert sentences(result, "claim-unreserved") == [
        "ResourceClaim gpu-test2/single-gpu is no longer reserved for Pod pod1."
    ]
    (claim,) = result.kind("ResourceClaim").changed
    assert "status.allocation.devices.results[0].device" in [f.path for f in claim.fields]


def test_claims_created_and_deleted() -> None:
    def edit(objects):
        remove(objects, "ResourceClaim", "vllm-canary-gpu-n6b1y", "ml-team")
        remove(objects, "ResourceClaim", "h200-eval", "llm-eval")
        objects.append(b.claim("fresh", "llm-eval", requests=[b.request("gpu", NVIDIA)]))

    result = changed(edit)
    released = [c for c in result.changes if c.code == "claim-released"]
    assert [c.sentence for c in released] == [
        "ResourceClaim ml-team/vllm-canary-gpu-n6b1y was deleted, releasing "
        "gpu.nvidia.com/h100-node-01/gpu-4 on node h100-node-01."
    ]
    assert released[0].side == "before"
    assert sentences(result, "claim-deleted") == ["ResourceClaim llm-eval/h200-eval was deleted."]
    assert sentences(result, "claim-created") == ["ResourceClaim llm-eval/fresh was created."]
    claims = result.kind("ResourceClaim")
    assert [c.ref for c in claims.added] == ["llm-eval/fresh"]
    assert [c.ref for c in claims.removed] == [
        "llm-eval/h200-eval",
        "ml-team/vllm-canary-gpu-n6b1y",
    ]


def test_devices_added_to_and_removed_from_a_pool() -> None:
    def edit(objects):
        s = find(objects, "ResourceSlice", "00000-gpu.nvidia.com-a100-node-01-p4x7q")
        devices = s["spec"]["devices"]
        gone = devices.pop()  # gpu-3
        extra = copy.deepcopy(devices[0])
        extra["name"] = "gpu-9"
        devices.append(extra)
        assert gone["name"] == "gpu-3"

    result = changed(edit)
    assert sentences(result, "devices-added") == [
        "Pool gpu.nvidia.com/a100-node-01 gained 1 device: gpu-9."
    ]
    assert sentences(result, "devices-removed") == [
        "Pool gpu.nvidia.com/a100-node-01 lost 1 device: gpu-3."
    ]
    (s,) = result.kind("ResourceSlice").changed
    assert {(f.path, f.op) for f in s.fields} == {
        ("spec.devices[name=gpu-3]", "removed"),
        ("spec.devices[name=gpu-9]", "added"),
    }


def test_nodes_and_pools_added_and_removed() -> None:
    def edit(objects):
        remove(objects, "Node", "a100-node-01")
        remove(objects, "ResourceSlice", "00000-gpu.nvidia.com-a100-node-01-p4x7q")
        objects.append(b.node("b200-node-01"))
        objects.append(
            b.resource_slice(
                "b200-node-01-slice",
                devices=[b.device("gpu-0"), b.device("gpu-1")],
                driver=NVIDIA,
                pool="b200-node-01",
                node_name="b200-node-01",
            )
        )

    result = changed(edit)
    assert sentences(result, "node-added") == ["Node b200-node-01 was added."]
    assert sentences(result, "node-removed") == ["Node a100-node-01 was removed."]
    assert sentences(result, "pool-added") == [
        "Pool gpu.nvidia.com/b200-node-01 appeared with 2 devices "
        "(generation 1, node b200-node-01)."
    ]
    assert sentences(result, "pool-removed") == [
        "Pool gpu.nvidia.com/a100-node-01 went away with its 4 devices, node a100-node-01."
    ]
    removed = next(c for c in result.changes if c.code == "node-removed")
    assert removed.side == "before"


def test_device_taint_removed_from_a_slice() -> None:
    before = copy.deepcopy(LATER)
    after = copy.deepcopy(LATER)
    s = find(after, "ResourceSlice", "00000-gpu.nvidia.com-h100-mig-node-01-ftq9x")
    for device in s["spec"]["devices"]:
        device.pop("taints", None)
    result = diff(state_of(before), state_of(after))
    assert sentences(result, "device-untainted") == [
        "Device gpu.nvidia.com/h100-mig-node-01/gpu-0-mig-1g10gb-19-6 lost taint "
        "gpu.nvidia.com/xid=43:NoSchedule "
        "(ResourceSlice 00000-gpu.nvidia.com-h100-mig-node-01-ftq9x).",
        *(
            f"Device gpu.nvidia.com/h100-mig-node-01/gpu-1-mig-3g40gb-9-{i} lost taint "
            "gpu.nvidia.com/xid=79:NoSchedule "
            "(ResourceSlice 00000-gpu.nvidia.com-h100-mig-node-01-ftq9x)."
            for i in (0, 4)
        ),
    ]


def _rule(name: str, effect: str, **selector: str) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector,
            "taint": {"key": "maintenance.example.com/drain", "value": "true", "effect": effect},
        },
    }


def test_device_taint_rules_added_changed_and_removed() -> None:
    pool = {"driver": NVIDIA, "pool": "h100-node-01"}
    before = copy.deepcopy(BASE) + [_rule("drain-h100", "NoSchedule", **pool)]
    before += [_rule("old-rule", "NoSchedule", driver=NVIDIA, pool="a100-node-01")]
    after = copy.deepcopy(BASE) + [_rule("drain-h100", "NoExecute", **pool)]
    after += [_rule("one-gpu", "NoExecute", driver=NVIDIA, pool="a100-node-01", device="gpu-0")]

    result = diff(state_of(before), state_of(after))

    taint = "maintenance.example.com/drain=true"
    assert sentences(result, "taint-rule-added") == [
        f"DeviceTaintRule one-gpu was added: taint {taint}:NoExecute on 1 device."
    ]
    assert sentences(result, "taint-rule-removed") == [
        f"DeviceTaintRule old-rule was removed: taint {taint}:NoSchedule lifted from 4 devices."
    ]
    assert sentences(result, "taint-rule-changed") == [
        f"DeviceTaintRule drain-h100 changed: taint {taint}:NoSchedule on 8 devices → "
        f"{taint}:NoExecute on 8 devices."
    ]


def test_pods_using_dra_created_and_deleted_with_their_stage() -> None:
    def edit(objects):
        remove(objects, "Pod", "vllm-canary", "ml-team")
        objects.append(b.pod("plain-web", "llm-eval"))  # no claims: not a DRA change
        objects.append(b.pod("eval-2", "llm-eval", claims=[b.pod_claim("gpu", claim="h200-eval")]))

    result = changed(edit, diagnoses=True)
    (created,) = sentences(result, "pod-created")
    assert created.startswith("Pod llm-eval/eval-2 was created; it is claim-unallocated (")
    (deleted,) = [c for c in result.changes if c.code == "pod-deleted"]
    assert deleted.sentence.startswith("Pod ml-team/vllm-canary was deleted; it was ")
    assert (deleted.kind, deleted.side) == ("Pod", "before")
    pods = result.kind("Pod")
    assert [p.ref for p in pods.added] == ["llm-eval/eval-2", "llm-eval/plain-web"]
    assert "plain-web" not in " ".join(c.sentence for c in result.changes)


def test_groups_follow_the_change_order_and_filter_by_kind() -> None:
    old, new = state_of(copy.deepcopy(BASE)), state_of(copy.deepcopy(LATER))
    result = diff(old, new, before_diagnosis=diagnose_all(old), after_diagnosis=diagnose_all(new))
    assert [code for code, _, _ in result.groups()] == [
        "pod-stage",
        "claim-allocated",
        "device-tainted",
        "taint-rule-added",
        "pool-generation",
        "pool-stale",
        "pool-added",
        "node-added",
    ]
    assert [code for code, _, _ in result.groups("ResourceSlice")] == [
        "device-tainted",
        "pool-generation",
        "pool-stale",
        "pool-added",
    ]
    assert [code for code, _, _ in result.groups("Node")] == ["node-added"]


def _podgroup(name: str, min_count: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ml-team"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
    }


def test_podgroups_and_workloads_added_removed_and_changed_are_listed() -> None:
    workload = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"name": "training", "namespace": "ml-team"},
        "spec": {"podGroupTemplates": [{"name": "w", "schedulingPolicy": {"basic": {}}}]},
    }
    before = [*copy.deepcopy(BASE), _podgroup("kept", 2), _podgroup("gone", 2)]
    after = [*copy.deepcopy(BASE), _podgroup("kept", 3), _podgroup("new", 2), workload]

    result = diff(state_of(before), state_of(after))

    groups = result.kind("PodGroup")
    assert groups is not None
    assert [o.ref for o in groups.added] == ["ml-team/new"]
    assert [o.ref for o in groups.removed] == ["ml-team/gone"]
    assert [o.ref for o in groups.changed] == ["ml-team/kept"]
    base = sum(1 for o in BASE if o["kind"] == "PodGroup")  # the demo's gang
    assert (groups.before, groups.after) == (base + 2, base + 2)
    workloads = result.kind("Workload")
    assert workloads is not None and [o.ref for o in workloads.added] == ["ml-team/training"]
    kinds = [k.kind for k in result.kinds]
    assert kinds.index("Pod") < kinds.index("PodGroup") < kinds.index("Workload")
