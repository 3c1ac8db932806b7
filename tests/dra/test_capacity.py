"""Capacity per DeviceClass and per Job (dradash.dra.capacity), on clusters in the fixtures' shapes.

The example driver's ``gpu.example.com`` slices (README ``kubectl get resourceslice`` output) and
the NVIDIA driver's H100 slice with its real attributes, the DeviceClasses as the drivers' Helm
charts install them, and claims, templates and Jobs from the drivers' demos.
"""

from __future__ import annotations

import copy
from typing import Any

from dradash.dra.capacity import (
    ClassCapacity,
    JobCapacity,
    class_capacity,
    extended_capacity,
    job_capacity,
)
from dradash.dra.findings import find
from dradash.dra.kinds import KINDS
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import (
    DRIVER,
    claim,
    consumer,
    device_class,
    fixture_objects,
    generated_claim,
    node,
    owner,
    pod,
    pod_claim,
    request,
    result,
    taint_rule,
)

EXAMPLE_CLASS = "device.driver == 'gpu.example.com'"
NVIDIA = "gpu.nvidia.com"
# deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml
NVIDIA_CLASS = (
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"
)
H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
H200 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H200'"
README_SLICES = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
H100_SLICE = "nvidia-gpu__SYNTH__h100-8gpu-full-resourceslice.yaml"
TOLERATION = "dra-example-driver__device-taints-tolerations__device-taint-pod-toleration__"
WORKER = "dra-example-driver-cluster-worker"


def build(*objects: dict[str, Any], meta: SnapshotMeta | None = None) -> ClusterState:
    return ClusterState.build(objects, meta)


def of(state: ClusterState, name: str = DRIVER) -> ClassCapacity:
    (found,) = [c for c in class_capacity(state) if c.name == name]
    return found


def example_node(name: str = WORKER, gpus: int = 8, **pool: Any) -> list[dict[str, Any]]:
    """A kind worker with the example driver's README slice, keeping its first ``gpus`` GPUs."""
    (slice_,) = copy.deepcopy(fixture_objects(README_SLICES))
    slice_["metadata"]["name"] = f"{name}-gpu.example.com-rf2f7"
    spec = slice_["spec"]
    spec["nodeName"] = spec["pool"]["name"] = name
    spec["devices"] = spec["devices"][:gpus]
    spec["pool"].update(pool)
    return [node(name), slice_]


def example_cluster(*nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    objects = [device_class(DRIVER, EXAMPLE_CLASS)]
    for n in nodes or (example_node(),):
        objects += n
    return objects


def h100_node() -> list[dict[str, Any]]:
    """The NVIDIA driver's slice of an 8-GPU H100 node and the driver's gpu.nvidia.com class."""
    (slice_,) = copy.deepcopy(fixture_objects(H100_SLICE))
    return [node("h100-node-01"), slice_, device_class(NVIDIA, NVIDIA_CLASS)]


def waiting(
    name: str,
    count: int = 1,
    *,
    device_class_name: str = DRIVER,
    selector: str = "",
    namespace: str = "default",
    **exactly: Any,
) -> list[dict[str, Any]]:
    """A Pending Pod and its unallocated claim asking for ``count`` devices of the class."""
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    p = pod(name, namespace, claims=[pod_claim("gpu", claim=f"{name}-gpu")])
    req = request("gpu", device_class_name, count=count, **exactly)
    return [p, claim(f"{name}-gpu", namespace, requests=[req])]


def holder(name: str, device: str, pool: str = WORKER, **extra: Any) -> list[dict[str, Any]]:
    """A running Pod whose generated claim is allocated ``device`` and reserved for it."""
    p = pod(name, "batch", claims=[pod_claim("gpu", template="single-gpu")], node_name=pool)
    p["status"]["phase"] = "Running"
    driver = NVIDIA if pool == "h100-node-01" else DRIVER
    allocated = result("gpu", device, pool=pool, driver=driver, **extra)
    c = generated_claim(p, "gpu", results=[allocated], reserved_for=[consumer(p)])
    return [p, c]


# --- free against allocated ------------------------------------------------------------------


def test_gpus_spread_one_per_node_serve_no_two_gpu_request() -> None:
    nodes = [example_node(f"worker-{i}", gpus=1) for i in range(8)]
    state = build(*example_cluster(*nodes), *[o for i in range(3) for o in waiting(f"t{i}", 2)])

    gpus = of(state)

    assert (gpus.total, gpus.allocated, gpus.free, gpus.largest_free_set) == (8, 0, 8, 1)
    assert gpus.free_by_node == {f"worker-{i}": 1 for i in range(8)}
    pairs = gpus.waiting[2]
    assert (pairs.requests, pairs.servable, pairs.unusable) == (3, 0, 8)
    assert pairs.claims == [("default", "t0-gpu"), ("default", "t1-gpu"), ("default", "t2-gpu")]
    assert gpus.summary == (
        "8 of 8 free devices are unusable for the 3 waiting 2-device requests: no node has 2 free."
    )


def test_a_node_with_enough_free_gpus_serves_the_waiting_requests() -> None:
    three = [o for i in range(3) for o in waiting(f"t{i}", 2)]
    five = [o for i in range(5) for o in waiting(f"t{i}", 2)]

    served = of(build(*example_cluster(), *three))
    short = of(build(*example_cluster(), *five))

    assert (served.waiting[2].servable, served.waiting[2].unusable) == (3, 0)
    assert served.largest_free_set == 8
    assert (
        served.summary
        == "8 of 8 devices are free (0 allocated), enough for all 3 waiting requests."
    )
    assert short.waiting[2].servable == 4  # 8 GPUs on one node: four pairs
    assert short.summary == (
        "Only 4 of the 5 waiting 2-device requests can be served now from the 8 free devices."
    )


def test_only_the_node_with_enough_free_gpus_counts() -> None:
    nodes = [example_node(f"worker-{i}", gpus=1) for i in range(8)] + [example_node("big", 2)]
    state = build(*example_cluster(*nodes), *[o for i in range(3) for o in waiting(f"t{i}", 2)])

    pairs = of(state).waiting[2]

    assert (pairs.servable, pairs.unusable) == (1, 8)
    assert pairs.summary == (
        "Only 1 of the 3 waiting 2-device requests can be served now; 8 of 10 free devices "
        "are unusable for them: 8 are on nodes with fewer than 2 free."
    )


def test_request_selectors_decide_which_free_gpus_count() -> None:
    """NVIDIA H100 node: an H100 request gets them, an H200 request gets none of them."""
    h100 = of(
        build(*h100_node(), *waiting("h100", 4, device_class_name=NVIDIA, selector=H100)), NVIDIA
    )
    h200 = of(
        build(*h100_node(), *waiting("h200", 1, device_class_name=NVIDIA, selector=H200)), NVIDIA
    )
    both = of(
        build(
            *h100_node(),
            *waiting("h100", 1, device_class_name=NVIDIA, selector=H100),
            *waiting("h200", 1, device_class_name=NVIDIA, selector=H200),
        ),
        NVIDIA,
    )

    assert (h100.total, h100.free, h100.waiting[4].servable) == (8, 8, 1)
    assert (h200.waiting[1].servable, h200.waiting[1].unusable) == (0, 8)
    assert h200.summary == (
        "8 of 8 free devices are unusable for the waiting 1-device request: "
        "their selectors exclude them."
    )
    assert (both.waiting[1].servable, both.waiting[1].unusable) == (1, 0)
    assert both.summary == (
        "Only 1 of the 2 waiting 1-device requests can be served now; "
        "1 of them matches no free device."
    )


def test_allocated_devices_are_not_free() -> None:
    objects = example_cluster()
    for i in range(7):
        objects += holder(f"job-{i}", f"gpu-{i}")
    objects += waiting("trainer", 2)

    gpus = of(build(*objects))

    assert (gpus.total, gpus.allocated, gpus.free) == (8, 7, 1)
    assert gpus.free_by_node == {WORKER: 1}
    assert gpus.summary == (
        "The only free device is unusable for the waiting 2-device request: no node has 2 free."
    )


def test_admin_access_allocations_and_shared_devices_stay_free() -> None:
    """An admin-access allocation does not block the device; neither does one of a device that
    allows multiple allocations (NVIDIA consumable shares)."""
    nvidia = h100_node()
    nvidia[1]["spec"]["devices"][0]["allowMultipleAllocations"] = True
    objects = [
        *example_cluster(),
        *holder("monitor", "gpu-0", adminAccess=True),
        *holder("job", "gpu-1"),
        *nvidia,
        *holder("share-a", "gpu-0", pool="h100-node-01"),
        *holder("share-b", "gpu-0", pool="h100-node-01"),
        *holder("whole", "gpu-1", pool="h100-node-01"),
    ]

    state = build(*objects)

    assert (of(state).allocated, of(state).free) == (1, 7)
    assert (of(state, NVIDIA).allocated, of(state, NVIDIA).free) == (1, 7)


def test_only_claims_a_pod_still_waits_for_count() -> None:
    nobody = claim("spare", requests=[request("gpu", DRIVER, count=2)])
    done_pod, done_claim = waiting("finished", 2)
    done_pod["status"]["phase"] = "Succeeded"
    gone_pod, gone_claim = waiting("deleted", 2)
    gone_claim["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    generated = pod("gen", claims=[pod_claim("gpu", template="pair")])
    gen_claim = generated_claim(generated, "gpu", requests=[request("gpu", DRIVER, count=2)])

    state = build(
        *example_cluster(), nobody, done_pod, done_claim, gone_pod, gone_claim, generated, gen_claim
    )

    assert of(state).waiting[2].claims == [("default", gen_claim["metadata"]["name"])]


def test_all_mode_and_admin_access_requests_are_reported_not_counted() -> None:
    admin = {
        o["kind"]: o for o in fixture_objects("dra-example-driver__admin-access__admin-access.yaml")
    }
    admin_pod, admin_template = admin["Pod"], admin["ResourceClaimTemplate"]
    admin_pod["metadata"]["uid"] = "uid-admin"
    admin_claim = generated_claim(
        admin_pod, "admin-gpus", requests=admin_template["spec"]["spec"]["devices"]["requests"]
    )
    everything = waiting("all", allocationMode="All")

    gpus = of(build(*example_cluster(), admin_pod, admin_claim, *everything))

    assert gpus.waiting == {}
    assert (gpus.all_mode_requests, gpus.admin_access_requests) == (1, 1)
    assert gpus.summary == (
        "8 of 8 devices are free (0 allocated); no request is waiting for them. "
        "Not counted: 1 All-mode request and 1 admin-access request."
    )


def test_first_available_request_counts_under_each_class_it_names() -> None:
    req = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "h100", "deviceClassName": NVIDIA, "count": 2},
            {"name": "example", "deviceClassName": DRIVER, "count": 1},
        ],
    }
    p = pod("either", claims=[pod_claim("gpu", claim="either-gpu")])

    state = build(*example_cluster(), *h100_node(), p, claim("either-gpu", requests=[req]))

    assert of(state, NVIDIA).waiting[2].servable == 1
    assert of(state).waiting[1].servable == 1
    assert [c.name for c in class_capacity(state)] == [DRIVER, NVIDIA]


# --- taints ----------------------------------------------------------------------------------


def test_tainted_devices_are_neither_free_nor_allocated() -> None:
    rule = fixture_objects(f"{TOLERATION}1-device-taint-rule.yaml")  # NoExecute
    templates = {
        o["metadata"]["name"]: o["spec"]["spec"]["devices"]["requests"]
        for o in fixture_objects(f"{TOLERATION}2-basic-resourceclaimtemplate.yaml")
        if o["kind"] == "ResourceClaimTemplate"
    }
    without = pod("without", claims=[pod_claim("gpu", claim="without-gpu")])
    with_ = pod("with", claims=[pod_claim("gpu", claim="with-gpu")])
    objects = [*example_cluster(), *holder("job", "gpu-0"), *rule]

    plain = of(
        build(
            *objects,
            without,
            claim("without-gpu", requests=templates["single-gpu-without-toleration"]),
        )
    )
    tolerant = of(
        build(*objects, with_, claim("with-gpu", requests=templates["single-gpu-with-toleration"]))
    )

    assert (plain.total, plain.allocated, plain.tainted, plain.free) == (8, 1, 7, 0)
    assert plain.summary == "No free device can serve the waiting 1-device request."
    assert tolerant.waiting[1].servable == 1  # it tolerates gpu.example.com/unhealthy


def test_a_taint_in_the_slice_and_one_that_does_not_keep_claims_away() -> None:
    objects = example_cluster()
    devices = objects[2]["spec"]["devices"]
    devices[0]["taints"] = [{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule"}]
    rule = taint_rule(
        "maintenance",
        {"driver": DRIVER, "device": "gpu-1"},
        {"key": "example.com/maintenance", "effect": "None"},
    )

    gpus = of(build(*objects, rule))

    assert (gpus.tainted, gpus.free) == (1, 7)


def test_a_toleration_with_no_key_tolerates_as_the_allocator_does() -> None:
    """ToleratesTaint: an empty key matches every key, with Equal as with Exists (the value
    must then be equal). Capacity once required the key for Equal; it now uses the allocator's
    rule, so both say the same."""
    from dradash.dra.allocator import explain

    objects = example_cluster()
    for d in objects[2]["spec"]["devices"]:
        d["taints"] = [{"key": "gpu.example.com/unhealthy", "effect": "NoSchedule"}]
    toleration = {"operator": "Equal", "value": "", "effect": "NoSchedule"}
    state = build(*objects, *waiting("tolerant", tolerations=[toleration]))

    assert of(state).waiting[1].servable == 1
    e = explain(state, [state.claims[("default", "tolerant-gpu")]])
    assert e.allocatable is True


# --- pools the allocator skips ---------------------------------------------------------------


def test_an_incomplete_pool_is_skipped_from_1_35_on_but_counted_by_1_34() -> None:
    """resourceSliceCount 2 with only one slice published."""
    objects = example_cluster(example_node(resourceSliceCount=2))

    def total(version: str) -> int:
        return of(build(*objects, meta=SnapshotMeta(server_version=version))).total

    assert total("v1.34.2") == 8
    assert total("v1.35.0") == 0
    assert total("") == 0  # no version: the defaults of the newest release, 1.37
    assert of(build(*objects)).summary == (
        "No device of the pools the allocator uses matches DeviceClass gpu.example.com."
    )


def test_an_invalid_pool_is_skipped_by_every_version() -> None:
    objects = example_cluster()
    devices = objects[2]["spec"]["devices"]
    devices[1]["name"] = devices[0]["name"]  # gpu-0 published twice

    for version in ("v1.34.2", "v1.36.0"):
        assert of(build(*objects, meta=SnapshotMeta(server_version=version))).total == 0


def test_a_class_without_devices_says_so_with_who_waits() -> None:
    state = build(
        *example_cluster(),
        device_class(NVIDIA, NVIDIA_CLASS),
        *waiting("t", device_class_name=NVIDIA),
    )

    empty = of(state, NVIDIA)

    assert (empty.known, empty.total, empty.waiting[1].servable) == (True, 0, 0)
    assert empty.summary == (
        "No device of the pools the allocator uses matches DeviceClass gpu.nvidia.com. "
        "1 request waits for it."
    )


# --- selectors that do not compile -----------------------------------------------------------


def test_a_class_selector_that_does_not_compile_is_unknown() -> None:
    state = build(
        *example_cluster(),
        device_class("broken", "device.driver =="),
        *waiting("t", device_class_name="broken"),
    )

    broken = of(state, "broken")

    assert broken.known is False
    assert broken.summary.startswith("Unknown: a selector of DeviceClass broken does not compile")
    assert of(state).total == 8


def test_a_request_selector_that_does_not_compile_is_unknown() -> None:
    state = build(
        *example_cluster(), *waiting("t", selector="device.attributes["), *waiting("u", 1)
    )

    gpus = of(state)

    assert gpus.unknown_requests == 1
    assert gpus.waiting[1].requests == 1
    assert gpus.summary.endswith(
        "1 waiting request with selectors that do not compile could not be counted (unknown)."
    )


# --- Jobs ------------------------------------------------------------------------------------


def gpu_job(parallelism: int, *, count: int = 1, selector: str = "") -> list[dict[str, Any]]:
    """The NVIDIA bats gpu-job-rct-parallel shape (template rct-deploy-gpu, one GPU per Pod) as a
    Job, on the example driver's class."""
    parallel = fixture_objects("nvidia-gpu__tests__bats__specs__gpu-job-rct-parallel.yaml")
    (tmpl,) = [o for o in parallel if o["kind"] == "ResourceClaimTemplate"]
    (deploy,) = [o for o in parallel if o["kind"] == "Deployment"]
    exactly = tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["deviceClassName"] = DRIVER
    exactly["count"] = count
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "gpu-job-parallel", "namespace": "default", "uid": "uid-job"},
        "spec": {"parallelism": parallelism, "template": deploy["spec"]["template"]},
        "status": {},
    }
    return [tmpl, job]


def the_job(state: ClusterState) -> JobCapacity:
    (found,) = job_capacity(state)
    return found


def test_job_running_more_pods_than_there_are_devices() -> None:
    state = build(*example_cluster(), *gpu_job(10))

    job = the_job(state)

    assert (job.pods_wanted, job.per_pod, job.demand) == (10, {DRIVER: 1}, 10)
    assert (job.matching, job.available, job.pods_fit, job.fits) == (8, 8, 8, False)
    assert job.summary == (
        "Job default/gpu-job-parallel wants 10 Pods at once with 1 gpu.example.com device each "
        "(10 in all), but 8 devices match: room for 8 Pods, the others stay Pending."
    )
    (finding,) = [f for f in find(state) if f.code == "parallelism-exceeds-capacity"]
    assert "room for 8 Pods" in finding.message  # the same arithmetic


def test_a_job_that_fits() -> None:
    job = the_job(build(*example_cluster(), *gpu_job(4, count=2)))

    assert (job.demand, job.pods_fit, job.fits) == (8, 4, True)
    assert job.limit == "2 gpu.example.com devices (request gpu)"


def test_job_pods_needing_two_gpus_do_not_fit_on_gpus_spread_one_per_node() -> None:
    nodes = [example_node(f"worker-{i}", gpus=1) for i in range(8)]

    job = the_job(build(*example_cluster(*nodes), *gpu_job(2, count=2)))

    assert (job.matching, job.available, job.pods_fit, job.fits) == (8, 8, 0, False)


def test_devices_held_by_other_claims_do_not_count_but_the_jobs_own_do() -> None:
    objects = [*example_cluster(), *gpu_job(5)]
    for i in range(3):
        objects += holder(f"other-{i}", f"gpu-{i}")
    job_pod = pod(
        "gpu-job-parallel-a",
        claims=[pod_claim("gpu", template="rct-deploy-gpu")],
        owners=[owner("Job", "gpu-job-parallel", "uid-job")],
        node_name=WORKER,
        phase="Running",
    )
    own = generated_claim(
        job_pod,
        "gpu",
        results=[result("gpu", "gpu-7", pool=WORKER)],
        reserved_for=[consumer(job_pod)],
    )
    objects += [job_pod, own]

    fits = the_job(build(*objects))
    objects += holder("other-3", "gpu-3")
    short = the_job(build(*objects))

    assert (fits.available, fits.pods_fit, fits.fits) == (5, 5, True)  # 4 free + its own gpu-7
    assert (short.available, short.pods_fit, short.fits) == (4, 4, False)
    assert "8 devices match and 4 of them are allocated to other claims" in short.summary


def test_a_job_whose_selector_does_not_compile_is_unknown() -> None:
    job = the_job(build(*example_cluster(), *gpu_job(4, selector="device.attributes[")))

    assert (job.pods_fit, job.fits, job.matching) == (None, None, None)
    assert job.summary.endswith(
        "how many fit is unknown: a request names a missing DeviceClass or a selector that does "
        "not compile."
    )


# --- extended resources backed by DRA: the largest request one node can serve ----------------

ERN = "example.com/gpu"
IMPLICIT = "deviceclass.resource.kubernetes.io/gpu.example.com"


def mapped_cluster(*nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """example_cluster with the class mapping example.com/gpu (the Kubernetes docs' class)."""
    objects = example_cluster(*nodes)
    objects[0]["spec"]["extendedResourceName"] = ERN
    return objects


def plugin_node(name: str, count: int) -> dict[str, Any]:
    obj = node(name)
    obj["status"]["allocatable"] = {"cpu": "8", ERN: str(count)}
    return obj


def asking(name: str, count: int, node_name: str = "", phase: str = "Pending") -> dict[str, Any]:
    """dra-example-driver's extended-resource-request pod1, asking for ``count`` GPUs."""
    ctr = {"name": "ctr0", "resources": {"limits": {ERN: str(count)}}}
    return pod(name, "extended-resource-request", containers=[ctr], node_name=node_name,
               phase=phase)  # fmt: skip


def extended_row(state: ClusterState, resource: str = ERN) -> Any:
    (row,) = [e for e in extended_capacity(state) if e.resource == resource]
    return row


def test_gpus_one_per_node_serve_no_four_gpu_pod_but_a_device_plugin_node_does() -> None:
    """The issue's question, "could a Pod asking example.com/gpu: 4 run anywhere?": 8 free GPUs
    one per node cannot, a node whose device plugin has 4 left can."""
    spread = [example_node(f"worker-{i}", gpus=1) for i in range(8)]
    objects = [*mapped_cluster(*spread), asking("four", 4)]

    alone = extended_row(build(*objects))
    with_plugin = extended_row(build(*objects, plugin_node("dp-1", 6), asking("run", 2, "dp-1")))

    assert (alone.largest, alone.dra_free, alone.dra_largest) == (1, 8, 1)
    assert (alone.pods_waiting, alone.pods_too_big) == (1, 1)
    assert alone.summary == (
        "A Pod can get up to 1 example.com/gpu on one node now (node worker-0, 1 free "
        "gpu.example.com device through DRA). DeviceClass gpu.example.com has 8 free devices "
        "where DRA serves it on 8 nodes. 1 Pod not on a node yet asks for it; 1 of them asks "
        "for more than any one node can serve."
    )
    assert (with_plugin.largest, with_plugin.largest_on) == (4, "dp-1")  # 6 minus run's 2
    assert (with_plugin.plugin_nodes, with_plugin.plugin_free) == (1, 4)
    assert with_plugin.pods_too_big == 0
    assert "node dp-1, whose device plugin has 4 left" in with_plugin.summary
    assert (
        "1 node advertises it in status.allocatable (a device plugin serves it there, 4 left)"
        in with_plugin.summary
    )


def test_dra_devices_on_a_device_plugin_node_do_not_serve_the_name() -> None:
    """filterExtendedResources: where a node advertises the name, its device plugin serves it,
    even if the node also has free devices of the class."""
    objects = [*mapped_cluster(example_node("worker", 8), example_node("small", 2))]
    objects[1] = plugin_node("worker", 1)  # worker's device plugin: 1 GPU

    gpu = extended_row(build(*objects))
    implicit = extended_row(build(*objects), IMPLICIT)

    assert (gpu.dra_nodes, gpu.dra_free, gpu.largest, gpu.largest_on) == (1, 2, 2, "small")
    assert gpu.explicit and not implicit.explicit
    # No device plugin serves the implicit name: all 10 GPUs are DRA's.
    assert (implicit.dra_nodes, implicit.dra_free, implicit.largest) == (2, 10, 8)
    assert implicit.plugin_nodes == 0


def test_allocated_gpus_and_finished_pods() -> None:
    objects = mapped_cluster(example_node(gpus=8))
    for i in range(5):
        objects += holder(f"job-{i}", f"gpu-{i}")
    objects += [plugin_node("dp-1", 4), asking("done", 4, "dp-1", phase="Succeeded")]

    gpu = extended_row(build(*objects))

    assert (gpu.dra_free, gpu.dra_largest) == (3, 3)  # 5 of 8 allocated
    assert (gpu.plugin_free, gpu.largest, gpu.largest_on) == (4, 4, "dp-1")  # done: not counted


def test_unknown_without_nodes_or_without_pods_for_a_device_plugin() -> None:
    objects = [*mapped_cluster(), plugin_node("dp-1", 4), asking("run", 1, "dp-1")]
    kinds = {k: {"status": "ok"} for k in KINDS}

    no_nodes = extended_row(
        build(*[o for o in objects if o["kind"] != "Node"], meta=meta_without(kinds, "Node"))
    )
    no_pods = extended_row(
        build(*[o for o in objects if o["kind"] != "Pod"], meta=meta_without(kinds, "Pod"))
    )

    assert no_nodes.largest is None and no_nodes.plugin_nodes is None
    assert no_nodes.summary.startswith(
        "The largest request of example.com/gpu one node can serve is unknown: the snapshot has "
        "no Nodes to tell where a device plugin serves it."
    )
    assert no_pods.largest is None and no_pods.plugin_free is None
    assert "no Pods to tell what the device plugins have left" in no_pods.summary
    # Without Pods but without device-plugin nodes, the DRA devices answer alone.
    assert extended_row(build(*mapped_cluster(), meta=meta_without(kinds, "Pod"))).largest == 8


def test_no_rows_with_the_feature_off() -> None:
    """DRAExtendedResource: alpha (off) in 1.34 and 1.35 unless a class's extendedResourceName
    proves it on; before 1.34 it does not exist."""
    v135 = SnapshotMeta(server_version="v1.35.0")
    assert [e.resource for e in extended_capacity(build(*mapped_cluster(), meta=v135))] == [
        ERN,
        IMPLICIT,
    ]
    assert extended_capacity(build(*example_cluster(), meta=v135)) == []
    v133 = SnapshotMeta(server_version="v1.33.2")
    assert extended_capacity(build(*mapped_cluster(), meta=v133)) == []


def meta_without(kinds: dict[str, dict[str, str]], kind: str) -> SnapshotMeta:
    """A bundle imported without ``kind``: absent, unproven."""
    return SnapshotMeta(kinds={**kinds, kind: {"status": "absent"}}, source="import")
