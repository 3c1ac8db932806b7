"""The production acceptance checklist: each item passing and failing, and the demo cluster.

Scenarios use the shapes of the real manifests in ``tests/fixtures/upstream`` (dra-example-driver
README slices and demos, the CPU driver's slice and DeviceClass, the Kubernetes docs' allNodes and
counter-set slices, the NVIDIA bats parallel Job spec), completed with the status the scheduler,
kubelet and controllers would write.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from dradash.demo import cluster as demo
from dradash.dra.checklist import CheckItem, evaluate
from dradash.dra.findings import find
from dradash.dra.kinds import KINDS
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    DRIVER,
    V1,
    consumer,
    container,
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
    template,
)

EXAMPLE_CLASS = "device.driver == 'gpu.example.com'"
WORKER = "dra-example-driver-cluster-worker"
README_SLICES = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
BASIC_TEMPLATE = "dra-example-driver__basic-resourceclaimtemplate__basic-resourceclaimtemplate.yaml"
SHARED_ACROSS_PODS = (
    "dra-example-driver__basic-shared-claim-across-pods__basic-shared-claim-across-pods.yaml"
)
CPU_SLICE = "cpu__docs-device-attributes__block84.yaml"
CPU_CLASS = "cpu__deployment__helm__dra-driver-cpu__templates__deviceclass.yaml"
PARALLEL_JOB = "nvidia-gpu__tests__bats__specs__gpu-job-rct-parallel.yaml"
CAPTURED = "2026-11-28T10:00:00Z"
SERVED = SnapshotMeta(api_versions=[V1, "resource.k8s.io/v1beta2"], captured_at=CAPTURED)
CODES = [
    "dra-v1-served",
    "device-classes-cover-drivers",
    "slices-report-nodes-and-attributes",
    "claims-name-existing-classes",
    "claim-references-match",
    "no-nodename-bypass",
    "no-leaked-claims",
    "capacity-covers-job-parallelism",
]
Kinds = dict[str, dict[str, Any]]


def build(*objects: dict[str, Any], meta: SnapshotMeta | None = SERVED) -> ClusterState:
    return ClusterState.build(objects, meta)


def checklist(state: ClusterState, kinds: Kinds | None = None) -> list[CheckItem]:
    if kinds is not None:  # as snapshot_state() sets them from the stored snapshot
        state.meta = dataclasses.replace(state.meta, kinds=kinds)
    return evaluate(state, find(state))


def item(state: ClusterState, code: str, kinds: Kinds | None = None) -> CheckItem:
    (found,) = [i for i in checklist(state, kinds) if i.code == code]
    return found


def evidence(check: CheckItem) -> list[tuple[str, str, str]]:
    return [(o["kind"], o["namespace"], o["name"]) for o in check.evidence]


def forbidden(*kinds: str) -> Kinds:
    return {k: {"status": "forbidden", "message": f"{k.lower()}s is forbidden"} for k in kinds}


def with_uid(obj: dict[str, Any]) -> dict[str, Any]:
    m = obj["metadata"]
    m.setdefault("uid", f"uid-{obj['kind']}-{m.get('namespace', '')}-{m['name']}")
    return obj


def fixture_kind(fixture: str, kind: str) -> list[dict[str, Any]]:
    return [with_uid(o) for o in fixture_objects(fixture) if o["kind"] == kind]


def fixture_pod(name: str, fixture: str) -> dict[str, Any]:
    (obj,) = [o for o in fixture_kind(fixture, "Pod") if o["metadata"]["name"] == name]
    return obj


def example_cluster() -> list[dict[str, Any]]:
    """The README's node with its 8 mock GPUs, and the example driver's DeviceClass."""
    return [node(WORKER), device_class(DRIVER, EXAMPLE_CLASS), *fixture_objects(README_SLICES)]


def scheduled(
    obj: dict[str, Any], node_name: str = WORKER, phase: str = "Running"
) -> dict[str, Any]:
    """A Pod as it looks once the scheduler bound it (binding sets PodScheduled=True)."""
    obj = copy.deepcopy(obj)
    obj["spec"]["nodeName"] = node_name
    obj["status"] = {"phase": phase, "conditions": [{"type": "PodScheduled", "status": "True"}]}
    return obj


def healthy_cluster() -> list[dict[str, Any]]:
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
    return objects + [o for o in fixture_objects(BASIC_TEMPLATE) if o["kind"] != "Pod"]


def finished(obj: dict[str, Any], at: str, phase: str = "Failed") -> dict[str, Any]:
    """A Pod whose only container terminated at ``at``."""
    obj = scheduled(obj, phase=phase)
    obj["status"]["containerStatuses"] = [
        {
            "name": obj["spec"]["containers"][0]["name"],
            "state": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": at}},
        }
    ]
    return obj


def gpu_job(parallelism: int) -> list[dict[str, Any]]:
    """The NVIDIA bats gpu-job-rct-parallel shape (template rct-deploy-gpu, one GPU per Pod) as a
    Job, on the example driver's class."""
    (tmpl,) = fixture_kind(PARALLEL_JOB, "ResourceClaimTemplate")
    tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = DRIVER
    (deploy,) = fixture_kind(PARALLEL_JOB, "Deployment")
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "gpu-job-parallel", "namespace": "default", "uid": "uid-job"},
        "spec": {"parallelism": parallelism, "template": deploy["spec"]["template"]},
        "status": {},
    }
    return [tmpl, job]


# --- the whole list --------------------------------------------------------------------------


def test_a_healthy_cluster_passes_every_item_in_checklist_order() -> None:
    items = checklist(build(*healthy_cluster()))

    assert [i.code for i in items] == CODES
    assert [i.status for i in items] == ["pass"] * len(CODES)
    assert all(i.evidence == [] and i.evidence_total == 0 and i.next_step for i in items)
    assert items[0].title == "DRA v1 API served"
    assert items[-1].title == "Capacity covers the Job parallelism in flight"


def test_items_serialise_with_their_evidence_and_total() -> None:
    state = build(*example_cluster(), *gpu_job(10))
    as_dict = item(state, "capacity-covers-job-parallelism").as_dict()

    assert set(as_dict) == {
        "code",
        "title",
        "status",
        "summary",
        "evidence",
        "evidence_total",
        "next_step",
    }
    assert as_dict["status"] == "fail"
    assert as_dict["evidence_total"] == 2
    assert as_dict["evidence"][0] == {
        "kind": "Job",
        "namespace": "default",
        "name": "gpu-job-parallel",
    }


def test_evidence_is_capped_but_the_total_counts_every_object() -> None:
    objects = example_cluster()
    for i in range(25):
        objects.append(
            with_uid(pod(f"p{i}", claims=[pod_claim("gpu", claim=f"missing-{i}")], node_name=""))
        )
    check = item(build(*objects), "claim-references-match")

    assert check.status == "fail"
    assert len(check.evidence) == 20 and check.evidence_total == 25
    assert "25 Pods" in check.summary


# --- 1. DRA v1 API served --------------------------------------------------------------------


def test_v1_served_passes() -> None:
    check = item(build(), "dra-v1-served")

    assert check.status == "pass"
    assert "v1 and v1beta2" in check.summary


def test_only_beta_versions_fail() -> None:
    meta = SnapshotMeta(api_versions=["resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"])
    check = item(build(meta=meta), "dra-v1-served")

    assert check.status == "fail"
    assert "only as v1beta2 and v1beta1, not v1" in check.summary
    assert "kubectl api-versions" in check.next_step


def test_a_capture_that_found_no_dra_api_fails() -> None:
    kinds = {"ResourceSlice": {"status": "not-found", "message": "the server does not serve"}}
    check = item(build(meta=SnapshotMeta()), "dra-v1-served", kinds)

    assert check.status == "fail"
    assert "no resource.k8s.io version" in check.summary


def test_without_versions_objects_served_as_v1_decide_else_it_is_unknown() -> None:
    legacy = fixture_objects(
        "dra-example-driver__legacy-v1beta1__README__resourceslice-list-8gpu.yaml"
    )
    unknown = item(build(*legacy, meta=SnapshotMeta()), "dra-v1-served")
    served = item(build(*fixture_objects(README_SLICES), meta=SnapshotMeta()), "dra-v1-served")

    assert unknown.status == "unknown"
    assert "does not say" in unknown.summary
    assert served.status == "pass"
    assert "1 object in it came as resource.k8s.io/v1" in served.summary


# --- 2. DeviceClasses exist for the drivers that publish slices ------------------------------


def test_a_driver_without_a_device_class_fails_with_its_slices() -> None:
    check = item(
        build(*example_cluster(), *fixture_objects(CPU_SLICE)), "device-classes-cover-drivers"
    )

    assert check.status == "fail"
    assert evidence(check) == [("ResourceSlice", "", "00000-dra.cpu-dra-driver-cpu-worker-tp869")]
    assert "(dra.cpu) publishes 1 ResourceSlice with 2 devices" in check.summary
    assert 'device.driver == "dra.cpu"' in check.next_step


def test_the_drivers_own_device_class_covers_it() -> None:
    objects = [*example_cluster(), *fixture_objects(CPU_SLICE), *fixture_objects(CPU_CLASS)]
    check = item(build(*objects), "device-classes-cover-drivers")

    assert check.status == "pass"
    assert "(dra.cpu and gpu.example.com)" in check.summary


def test_a_class_without_a_driver_selector_covers_every_driver() -> None:
    objects = [node(WORKER), device_class("everything"), *fixture_objects(README_SLICES)]

    assert item(build(*objects), "device-classes-cover-drivers").status == "pass"


def test_unreadable_device_classes_make_driver_coverage_unknown() -> None:
    state = build(*fixture_objects(README_SLICES))
    check = item(state, "device-classes-cover-drivers", forbidden("DeviceClass"))

    assert check.status == "unknown"
    assert "DeviceClasses could not be read" in check.summary


# --- 3. Slices report nodes and attributes ---------------------------------------------------


def test_slices_with_nodes_and_attributes_pass() -> None:
    objects = [
        *example_cluster(),
        *fixture_objects("k8s-website__docs__dra-api__resourceslice-allnodes-cat.yaml"),
    ]
    check = item(build(*objects), "slices-report-nodes-and-attributes")

    assert check.status == "pass"
    assert "All 2 current ResourceSlices" in check.summary and "9 devices" in check.summary


def test_devices_without_attributes_fail() -> None:
    """The Kubernetes docs' partitionable-devices example publishes no attributes."""
    objects = fixture_objects("k8s-website__docs__dra-features__resourceslices-countersets.yaml")
    check = item(build(*objects), "slices-report-nodes-and-attributes")

    assert check.status == "fail"
    assert evidence(check) == [("ResourceSlice", "", "resourceslice-with-devices")]
    assert "2 devices in 1 ResourceSlice (resourceslice-with-devices)" in check.summary


def test_a_slice_that_names_no_nodes_fails() -> None:
    (readme,) = fixture_objects(README_SLICES)
    del readme["spec"]["nodeName"]
    check = item(build(readme), "slices-report-nodes-and-attributes")

    assert check.status == "fail"
    assert evidence(check) == [("ResourceSlice", "", readme["metadata"]["name"])]
    assert "set none of nodeName, nodeSelector, allNodes or perDeviceNodeSelection" in check.summary
    assert f"kubectl get resourceslice {readme['metadata']['name']} -o yaml" in check.next_step


def test_per_device_node_selection_needs_nodes_on_each_device() -> None:
    devices = [device("gpu-0", nodeName=WORKER), device("gpu-1")]
    check = item(
        build(resource_slice("partitioned", devices=devices, per_device=True)),
        "slices-report-nodes-and-attributes",
    )

    assert check.status == "fail"
    assert evidence(check) == [("ResourceSlice", "", "partitioned")]
    assert "1 device in 1 ResourceSlice" in check.summary


def test_slices_of_an_older_generation_are_not_checked() -> None:
    stale = resource_slice("old", generation=1)  # says no nodes, but the allocator ignores it
    current = resource_slice("new", generation=2, node_name=WORKER)

    assert item(build(stale, current), "slices-report-nodes-and-attributes").status == "pass"


# --- 4. Claims and templates name existing classes -------------------------------------------


def test_a_template_for_a_missing_class_fails() -> None:
    amd = template("mi300x", "team-amd", requests=[request(device_class="gpu.amd.com")])
    check = item(build(*example_cluster(), amd), "claims-name-existing-classes")

    assert check.status == "fail"
    assert evidence(check) == [("ResourceClaimTemplate", "team-amd", "mi300x")]
    assert "1 DeviceClass (gpu.amd.com) does not exist" in check.summary
    assert "kubectl get deviceclasses" in check.next_step


def test_templates_and_claims_of_existing_classes_pass() -> None:
    objects = [*example_cluster(), *fixture_objects(BASIC_TEMPLATE)]
    check = item(build(*objects), "claims-name-existing-classes")

    assert check.status == "pass"
    assert "1 template" in check.summary


def test_unreadable_device_classes_make_class_names_unknown() -> None:
    amd = template("mi300x", "team-amd", requests=[request(device_class="gpu.amd.com")])
    check = item(build(amd), "claims-name-existing-classes", forbidden("DeviceClass"))

    assert check.status == "unknown"


# --- 5. Pod and container claim references match --------------------------------------------


def test_pods_naming_a_claim_that_does_not_exist_fail() -> None:
    """basic-shared-claim-across-pods without its ResourceClaim."""
    pods = [scheduled(p) for p in fixture_kind(SHARED_ACROSS_PODS, "Pod")]
    check = item(build(*example_cluster(), *pods), "claim-references-match")

    assert check.status == "fail"
    assert evidence(check) == [
        ("Pod", "basic-shared-claim-across-pods", "pod0"),
        ("Pod", "basic-shared-claim-across-pods", "pod1"),
    ]
    assert "names a ResourceClaim (single-gpu) that does not exist" in check.summary
    assert "kubectl describe pod -n basic-shared-claim-across-pods pod0" in check.next_step


@pytest.mark.parametrize(
    ("containers", "problem"),
    [
        ([container("ctr0", "gpu", "other")], "uses claim 'other', which spec.resourceClaims"),
        ([container("ctr0", ("gpu", "h100"))], "uses request 'h100' of claim 'gpu'"),
        ([container("ctr0")], "no container uses"),
    ],
)
def test_container_claims_that_do_not_match_the_pod_fail(
    containers: list[dict[str, Any]], problem: str
) -> None:
    objects = [*example_cluster(), *fixture_objects(BASIC_TEMPLATE)]
    p = with_uid(
        pod(
            "mismatch",
            "basic-resourceclaimtemplate",
            claims=[pod_claim("gpu", template="single-gpu")],
            containers=containers,
        )
    )
    objects += [p, generated_claim(p, "gpu")]
    p["status"]["resourceClaimStatuses"] = [
        {"name": "gpu", "resourceClaimName": "mismatch-gpu-abcde"}
    ]
    check = item(build(*objects), "claim-references-match")

    assert check.status == "fail"
    assert evidence(check) == [("Pod", "basic-resourceclaimtemplate", "mismatch")]
    assert problem in check.summary


def test_finished_pods_and_claims_still_being_generated_match() -> None:
    done = finished(fixture_pod("pod0", BASIC_TEMPLATE), "2026-11-28T09:00:00Z", "Succeeded")
    done["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "gone"}]
    waiting = fixture_pod("pod1", BASIC_TEMPLATE)  # its claim is not generated yet
    objects = [*example_cluster(), *fixture_objects(BASIC_TEMPLATE)[:2], done, waiting]

    assert item(build(*objects), "claim-references-match").status == "pass"


def test_unreadable_claims_make_claim_references_unknown() -> None:
    pods = [scheduled(p) for p in fixture_kind(SHARED_ACROSS_PODS, "Pod")]
    state = build(*example_cluster(), *pods)

    check = item(state, "claim-references-match", forbidden("ResourceClaim"))
    assert check.status == "unknown"
    assert "ResourceClaims could not be read" in check.summary


# --- 6. No Pod bypasses the scheduler with nodeName ------------------------------------------


def test_a_pod_bound_by_hand_fails() -> None:
    """The basic-resourceclaimtemplate Pod with spec.nodeName written into the manifest."""
    p = fixture_pod("pod0", BASIC_TEMPLATE)
    p["spec"]["nodeName"] = WORKER
    p["status"] = {
        "phase": "Pending",
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "pod0-gpu-x"}],
    }
    objects = [*example_cluster(), p, generated_claim(p, "gpu", "pod0-gpu-x")]
    check = item(build(*objects), "no-nodename-bypass")

    assert check.status == "fail"
    assert evidence(check) == [
        ("Pod", "basic-resourceclaimtemplate", "pod0"),
        ("ResourceClaim", "basic-resourceclaimtemplate", "pod0-gpu-x"),
    ]
    assert "1 Pod using DRA (basic-resourceclaimtemplate/pod0) was bound" in check.summary
    assert "kubectl delete pod -n basic-resourceclaimtemplate pod0" in check.next_step


def test_scheduled_pods_pass() -> None:
    check = item(build(*healthy_cluster()), "no-nodename-bypass")

    assert check.status == "pass"
    assert "All 2 Pods" in check.summary


# --- 7. No leaked or orphaned claims ---------------------------------------------------------


def test_a_generated_claim_whose_pod_is_gone_fails() -> None:
    """pod1 of basic-resourceclaimtemplate runs; pod0 is gone, its generated claim is not."""
    objects = [o for o in healthy_cluster() if o["metadata"]["name"] != "pod0"]
    check = item(build(*objects), "no-leaked-claims")

    assert check.status == "fail"
    assert evidence(check) == [
        ("ResourceClaim", "basic-resourceclaimtemplate", "pod0-gpu-x"),
        ("Pod", "basic-resourceclaimtemplate", "pod0"),
    ]
    assert "1 ResourceClaim (basic-resourceclaimtemplate/pod0-gpu-x)" in check.summary
    assert "1 orphaned by their Pod" in check.summary
    assert "kubectl delete resourceclaim -n basic-resourceclaimtemplate pod0-gpu-x" in (
        check.next_step
    )


@pytest.mark.parametrize(("finished_at", "status"), [("09:50", "fail"), ("09:59", "pass")])
def test_a_claim_still_reserved_for_a_finished_pod_leaks_after_a_grace(
    finished_at: str, status: str
) -> None:
    p = finished(fixture_pod("pod0", BASIC_TEMPLATE), f"2026-11-28T{finished_at}:00Z")
    p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "pod0-gpu-x"}]
    held = generated_claim(
        p,
        "gpu",
        "pod0-gpu-x",
        results=[result("gpu", "gpu-0", pool=WORKER)],
        reserved_for=[consumer(p)],
    )
    objects = [*example_cluster(), *fixture_objects(BASIC_TEMPLATE)[:2], p, held]
    check = item(build(*objects), "no-leaked-claims")

    assert check.status == status
    if status == "fail":
        assert evidence(check) == [
            ("ResourceClaim", "basic-resourceclaimtemplate", "pod0-gpu-x"),
            ("Pod", "basic-resourceclaimtemplate", "pod0"),
        ]
        assert "still reserved only for finished Pods" in check.summary
        assert "kubectl delete pod -n basic-resourceclaimtemplate pod0" in check.next_step


def test_claims_in_use_pass_and_unreadable_pods_make_leaks_unknown() -> None:
    state = build(*healthy_cluster())

    assert item(state, "no-leaked-claims").status == "pass"
    assert item(state, "no-leaked-claims", forbidden("Pod")).status == "unknown"
    objects = [o for o in healthy_cluster() if o["kind"] != "Pod"]
    imported = {
        k: {"status": "ok" if any(o["kind"] == k for o in objects) else "absent"} for k in KINDS
    }
    claims_only = build(*objects, meta=dataclasses.replace(SERVED, source="import"))
    check = item(claims_only, "no-leaked-claims", imported)
    assert check.status == "unknown"
    assert "Pods are not in the imported bundle" in check.summary
    assert "kubectl get pods -A -o yaml" in check.next_step


# --- 8. Capacity covers the Job parallelism in flight ----------------------------------------


def test_a_job_running_more_pods_than_there_are_devices_fails() -> None:
    check = item(build(*example_cluster(), *gpu_job(10)), "capacity-covers-job-parallelism")

    assert check.status == "fail"
    assert evidence(check) == [
        ("Job", "default", "gpu-job-parallel"),
        ("ResourceClaimTemplate", "default", "rct-deploy-gpu"),
    ]
    assert "wants 10 Pods" in check.summary and "room for 8 Pods" in check.summary
    assert "kubectl patch job -n default gpu-job-parallel" in check.next_step


def test_a_job_that_fits_passes() -> None:
    check = item(build(*example_cluster(), *gpu_job(8)), "capacity-covers-job-parallelism")

    assert check.status == "pass"
    assert "all 1 active Job" in check.summary


def test_jobs_that_were_not_captured_make_capacity_unknown() -> None:
    tmpl, _ = gpu_job(10)
    job_pod = with_uid(
        pod(
            "gpu-job-parallel-a",
            claims=[pod_claim("gpu", template="rct-deploy-gpu")],
            owners=[owner("Job", "gpu-job-parallel", "uid-job")],
        )
    )
    without_jobs = build(*example_cluster(), tmpl, job_pod)
    check = item(without_jobs, "capacity-covers-job-parallelism")

    assert check.status == "unknown"
    assert "default/gpu-job-parallel" in check.summary
    forbidden_jobs = build(*example_cluster())
    check = item(forbidden_jobs, "capacity-covers-job-parallelism", forbidden("Job"))
    assert check.status == "unknown"
    assert "Jobs could not be read" in check.summary


# --- the demo cluster ------------------------------------------------------------------------


def demo_state(later: bool) -> ClusterState:
    meta = SnapshotMeta(
        cluster=demo.CLUSTER,
        captured_at=demo.CAPTURED[later].strftime("%Y-%m-%dT%H:%M:%SZ"),
        server_version=demo.SERVER_VERSION,
        api_versions=demo.API_VERSIONS,
    )
    return ClusterState.build(demo.build(later=later), meta)


@pytest.mark.parametrize("later", [False, True])
def test_the_demo_cluster_fails_exactly_the_items_it_breaks(later: bool) -> None:
    items = {i.code: i for i in checklist(demo_state(later))}

    assert {code for code, i in items.items() if i.status == "fail"} == {
        "claims-name-existing-classes",
        "claim-references-match",
        "no-nodename-bypass",
        "no-leaked-claims",
        "capacity-covers-job-parallelism",
    }
    assert {code for code, i in items.items() if i.status == "pass"} == {
        "dra-v1-served",
        "device-classes-cover-drivers",
        "slices-report-nodes-and-attributes",
    }
    assert evidence(items["claims-name-existing-classes"]) == [
        ("ResourceClaim", "team-amd", "rocm-smoke-gpu-v2n8r"),
        ("ResourceClaimTemplate", "team-amd", "mi300x"),
    ]
    assert evidence(items["claim-references-match"]) == [
        ("Pod", "notebooks", "notebook-0"),
        ("Pod", "team-b", "shared-consumer"),
    ]
    assert evidence(items["no-nodename-bypass"]) == [
        ("Pod", "manual", "pinned-job"),
        ("ResourceClaim", "manual", "pinned-job-gpu-h4j8n"),
    ]
    assert evidence(items["no-leaked-claims"]) == [
        ("ResourceClaim", "ml-team", "batch-ocr-gpu-w9p2v"),
        ("Pod", "ml-team", "batch-ocr"),
    ]
    assert evidence(items["capacity-covers-job-parallelism"]) == [
        ("Job", "llm-train", "llm-train-workers-0"),
        ("ResourceClaimTemplate", "llm-train", "a100-single"),
        ("PodGroup", "llm-train", "llm-train"),
        ("Job", "render", "render-farm"),
        ("ResourceClaimTemplate", "render", "two-gpus"),
    ]
    assert "gpu.amd.com" in items["claims-name-existing-classes"].summary
    assert items["capacity-covers-job-parallelism"].summary.startswith(
        "2 Jobs (llm-train/llm-train-workers-0 and render/render-farm) want more Pods"
    )
