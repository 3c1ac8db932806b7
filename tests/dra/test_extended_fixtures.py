"""Extended resources backed by DRA (KEP-5004) on the drivers' and docs' own manifests.

* Every DeviceClass in the fixtures that declares ``extendedResourceName`` (the Helm charts
  rendered as ``helm template --set …`` would, the Go template with its ``.Index``) is accepted
  as the API server would accept it, and a Pod asking for its name, or for the class's implicit
  ``deviceclass.resource.kubernetes.io/<class>``, is a DRA Pod.
* The NVIDIA driver's extended-resource demos (``demo/specs/extended-resources``): their Pods
  are DRA Pods from their creation; the claim the scheduler generates, written out in the
  fixtures' comments (annotation, Pod owner, request ``container-0-request-0`` ExactCount 1,
  the Pod's ``status.extendedResourceClaimStatus.requestMappings``), is what dradash predicts
  for the pending Pod, and once bound is the Pod's claim in its chain; a bound Pod with that
  claim allocated is not ``claim-unallocated``.
"""

from __future__ import annotations

import copy
import json
import textwrap
from typing import Any

import pytest
import yaml

from dradash.dra import extended, validation, why
from dradash.dra.bundle import parse_bundle
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import FIXTURES, fixture_objects, node
from .helm import render

NVIDIA = "gpu.nvidia.com"
GPU_FULL = "nvidia-gpu__demo__specs__extended-resources__gpu-full.yaml"
MIG = "nvidia-gpu__demo__specs__extended-resources__mig-1g-12gb.yaml"
EXAMPLE_PODS = "dra-example-driver__extended-resource-request__extended-resource-request.yaml"
H100_SLICE = "nvidia-gpu__SYNTH__h100-8gpu-full-resourceslice.yaml"
# Where the scheduler allocated the GPU in gpu-full.yaml's comments.
GPU_FULL_NODE = "worker-node-1"
META = SnapshotMeta(server_version="v1.37.0")
INTEL_VALUES = {
    "openshift": {"enabled": False, "version": "4.21"},
    "enableDRAExtendedResources": True,
    "kubeletPlugin": {"manageBinding": {"enabled": True}},
}


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def rendered(name: str) -> str:
    """The fixture, rendered where it is a template (values as the tests would --set them)."""
    match name:
        case "dra-example-driver__helm__deviceclass.yaml":
            # The chart installed with --set deviceClass.extendedResourceName=example.com/gpu,
            # as the example driver's extended-resource-request demo asks for.
            return render(
                text(name),
                {"deviceClass": {"extendedResourceName": "example.com/gpu"}},
                helpers={
                    "dra-example-driver.resourceApiVersion": "resource.k8s.io/v1",
                    "dra-example-driver.driverName": "gpu.example.com",
                },
            )
        case "nvidia-gpu__helm__deviceclass-gpu.yaml":
            return render(
                text(name),
                {"resources": {"gpus": {"enabled": True}}},
                helpers={"dra-driver-nvidia-gpu.resourceApiVersion": "resource.k8s.io/v1\n"},
            )
        case "k8s__schedperf-dra__deviceclass-extended-resource.yaml.tmpl":
            return render(text(name), Index=3)
    if name.startswith("intel__charts__"):
        # intel.com/gpu is the chart's default; the base deployments name the other two.
        device = name.split("intel-")[1].split("-resource-driver")[0]
        return render(text(name), {**INTEL_VALUES, "extendedResourceName": f"intel.com/{device}"})
    return text(name)


def classes_of(name: str) -> list[dict[str, Any]]:
    """The DeviceClasses of a (rendered) fixture, read as an import reads them."""
    bundle = parse_bundle([(name, rendered(name).encode())], max_bytes=10**7)
    return [o for k, o in bundle.objects.items() if k[0] == "DeviceClass"]


# (fixture, {class: extendedResourceName it declares})
MAPPING_CLASSES = [
    ("k8s-website__docs__dra-features__deviceclass-extendedresource.yaml",
     {"gpu.example.com": "example.com/gpu"}),
    ("kueue__docs-setup_dra__block143.yaml", {"gpu.example.com": "example.com/gpu"}),
    ("kep-5004-dra-extended-resource__block143.yaml", {"gpu.example.com": "example.com/gpu"}),
    ("kep-5004-dra-extended-resource__block548.yaml", {"mygpusclass": "example.com/gpu"}),
    (MIG, {"mig-1g-12gb.gpu.nvidia.com": "nvidia.com/mig-1g.12gb"}),
    ("sriov__demo__extended-resource__deviceclass.yaml",
     {"sriov-port1": "example.com/sriov-port1", "sriov-port2": "example.com/sriov-port2"}),
    ("dra-example-driver__helm__deviceclass.yaml", {"gpu.example.com": "example.com/gpu"}),
    ("nvidia-gpu__helm__deviceclass-gpu.yaml", {NVIDIA: "nvidia.com/gpu"}),
    ("intel__charts__intel-gpu-resource-driver__templates__device-class.yaml",
     {"gpu.intel.com": "intel.com/gpu", "gpu-vfio.intel.com": ""}),
    ("intel__charts__intel-gaudi-resource-driver__templates__device-class.yaml",
     {"gaudi.intel.com": "intel.com/gaudi"}),
    ("intel__charts__intel-qat-resource-driver__templates__device-class.yaml",
     {"qat.intel.com": "intel.com/qat"}),
    ("k8s__schedperf-dra__deviceclass-extended-resource.yaml.tmpl",
     {"test-class-3": "example.com/gpu-3"}),
    # The kustomize bases leave extendedResourceName commented out: the implicit name only.
    ("intel__deployments__gpu__base__device-class.yaml",
     {"gpu.intel.com": "", "gpu-vfio.intel.com": ""}),
    ("intel__deployments__gaudi__base__device-class.yaml", {"gaudi.intel.com": ""}),
    ("intel__deployments__qat__base__device-class.yaml", {"qat.intel.com": ""}),
]  # fmt: skip


def asking(resource: str, quantity: int = 1, name: str = "asks") -> dict[str, Any]:
    """A pending Pod whose one container asks for ``resource`` in its limits, as the demos do."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {
            "containers": [
                {
                    "name": "ctr0",
                    "image": "ubuntu:24.04",
                    "resources": {"limits": {resource: quantity}},
                }
            ]
        },
        "status": {"phase": "Pending"},
    }


@pytest.mark.parametrize(("name", "declared"), MAPPING_CLASSES, ids=[n for n, _ in MAPPING_CLASSES])
def test_each_class_maps_its_names_and_the_api_server_would_accept_it(
    name: str, declared: dict[str, str]
) -> None:
    classes = classes_of(name)

    assert {c["metadata"]["name"]: c["spec"].get("extendedResourceName", "") for c in classes} == (
        declared
    )
    assert [validation.problems(c) for c in classes] == [[] for _ in classes]
    state = ClusterState.build(classes, META)
    for class_name, resource in declared.items():
        for asked in filter(None, (resource, extended.CLASS_PREFIX + class_name)):
            pod = ClusterState.build([*classes, asking(asked)], META).pods[("default", "asks")]
            assert pod.uses_dra, asked
            assert pod.extended.requests[0].device_class == class_name
            assert state.extended_mapping[asked].name == class_name


def test_a_name_the_kustomize_base_leaves_commented_out_is_a_device_plugins() -> None:
    classes = classes_of("intel__deployments__gpu__base__device-class.yaml")

    state = ClusterState.build([*classes, asking("intel.com/gpu")], META)

    assert not state.pods[("default", "asks")].uses_dra  # Intel's GPU device plugin serves it
    with pytest.raises(why.UsageError, match="does not use DRA"):
        why.verdict(state, "pod", "default", "asks")


def test_a_chart_without_extended_resources_maps_only_the_implicit_name() -> None:
    name = "intel__charts__intel-gpu-resource-driver__templates__device-class.yaml"
    off = render(text(name), {**INTEL_VALUES, "enableDRAExtendedResources": False})
    classes = [
        o
        for o in parse_bundle([(name, off.encode())], max_bytes=10**7).objects.values()
        if o["kind"] == "DeviceClass"
    ]

    state = ClusterState.build([*classes, asking("intel.com/gpu")], META)

    assert not state.pods[("default", "asks")].uses_dra
    assert set(state.extended_mapping) == {
        extended.CLASS_PREFIX + "gpu.intel.com",
        extended.CLASS_PREFIX + "gpu-vfio.intel.com",
    }


def test_an_openshift_release_before_4_21_gets_the_class_in_v1beta1_and_keeps_the_name() -> None:
    name = "intel__charts__intel-gaudi-resource-driver__templates__device-class.yaml"
    values = {
        **INTEL_VALUES,
        "openshift": {"enabled": True, "version": "4.20"},
        "extendedResourceName": "intel.com/gaudi",
    }
    bundle = parse_bundle([(name, render(text(name), values).encode())], max_bytes=10**7)
    (cls,) = bundle.objects.values()

    assert cls["apiVersion"] == "resource.k8s.io/v1beta1"
    assert validation.problems(cls) == []
    state = ClusterState.build([cls, asking("intel.com/gaudi")], META)
    assert state.pods[("default", "asks")].uses_dra


# --- the NVIDIA driver's extended-resource demos ---------------------------------------------


def demo(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The demo's Pod and its other objects (Namespace, the MIG demo's DeviceClass)."""
    objects = fixture_objects(name)
    (pod,) = [o for o in objects if o["kind"] == "Pod"]
    return pod, [o for o in objects if o["kind"] != "Pod"]


def commented(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The generated ResourceClaim and the Pod status the fixture writes out in its comments
    ("Auto-generated by the scheduler (not user-created)")."""
    lines = text(name).splitlines()
    start = lines.index("# --- Auto-generated by the scheduler (not user-created) ---")
    paragraphs: list[list[str]] = [[]]
    for line in lines[start + 1 :]:
        body = line[1:] if line.startswith("#") else ""
        if body.strip():
            paragraphs[-1].append(body)
        elif paragraphs[-1]:
            paragraphs.append([])
    documents = []
    for paragraph in paragraphs:
        try:
            doc = yaml.safe_load(textwrap.dedent("\n".join(paragraph)))
        except yaml.YAMLError:
            continue  # prose
        if isinstance(doc, dict):
            documents.append(doc)
    (claim,) = [d for d in documents if d.get("kind") == "ResourceClaim"]
    (status,) = [d["status"] for d in documents if set(d) == {"status"}]
    return claim, status


def nvidia_gpu_class() -> list[dict[str, Any]]:
    return classes_of("nvidia-gpu__helm__deviceclass-gpu.yaml")


def gpu_node(name: str = GPU_FULL_NODE) -> list[dict[str, Any]]:
    """A Node with the NVIDIA driver's 8-GPU H100 slice, renamed to ``name``."""
    (slice_,) = copy.deepcopy(fixture_objects(H100_SLICE))
    slice_["metadata"]["name"] = f"00000-{NVIDIA}-{name}-gdnk7"
    slice_["spec"]["nodeName"] = slice_["spec"]["pool"]["name"] = name
    return [node(name), slice_]


def running(pod: dict[str, Any], node_name: str, status: dict[str, Any]) -> dict[str, Any]:
    """The Pod bound to the node and running, with the status the fixture's comments show."""
    pod = copy.deepcopy(pod)
    pod["spec"]["nodeName"] = node_name
    (ctr,) = pod["spec"]["containers"]
    pod["status"] = {
        "phase": "Running",
        "conditions": [{"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [
            {
                "name": ctr["name"],
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": "2026-11-28T09:01:00Z"}},
            }
        ],
        **status,
    }
    return pod


def allocated(claim: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    """The generated claim as the scheduler leaves it at binding: reserved for its Pod (the MIG
    demo's comment shows reservedFor; gpu-full's leaves it out)."""
    claim = copy.deepcopy(claim)
    claim["status"].setdefault(
        "reservedFor", [{"resource": "pods", "name": pod["metadata"]["name"]}]
    )
    return claim


@pytest.mark.parametrize(
    ("name", "resource", "device_class"),
    [
        (GPU_FULL, "nvidia.com/gpu", NVIDIA),
        (MIG, "nvidia.com/mig-1g.12gb", "mig-1g-12gb.gpu.nvidia.com"),
    ],
    ids=["gpu-full", "mig-1g-12gb"],
)
def test_the_pending_demo_pod_uses_dra_and_would_get_the_claim_the_comments_show(
    name: str, resource: str, device_class: str
) -> None:
    pod, others = demo(name)
    claim, status = commented(name)

    state = ClusterState.build([*nvidia_gpu_class(), *others, pod], META)
    found = state.pods[(pod["metadata"]["namespace"], pod["metadata"]["name"])]

    assert found.uses_dra and not found.resource_claims  # no spec.resourceClaims at all
    (ref,) = found.claim_refs
    assert ref.status == "implicit"
    # The claim the scheduler keeps in memory is the one it creates at binding.
    predicted = ref.claim.raw
    assert predicted["spec"] == claim["spec"]
    assert predicted["metadata"]["annotations"] == claim["metadata"]["annotations"]
    assert predicted["metadata"]["generateName"] == claim["metadata"]["generateName"]
    owners = [predicted["metadata"]["ownerReferences"], claim["metadata"]["ownerReferences"]]
    assert [[(o["kind"], o["name"], o["controller"]) for o in refs] for refs in owners] == [
        [("Pod", pod["metadata"]["name"], True)]
    ] * 2
    mappings = [
        {"containerName": c, "requestName": r, "resourceName": resource} for c, r in ref.containers
    ]
    assert mappings == status["extendedResourceClaimStatus"]["requestMappings"]
    verdict = why.as_json(why.verdict(state, "pod", found.namespace, found.name))
    assert verdict["stage"] == "claim-unallocated"
    assert verdict["chain"]["extended_resources"] == [
        {
            "container": "cuda-container",
            "init": False,
            "resource": resource,
            "quantity": 1,
            "device_class": device_class,
            "served_by": "dra",
            "request": None,
        }
    ]


def test_the_pending_gpu_full_pod_would_get_a_gpu_of_an_h100_node() -> None:
    pod, others = demo(GPU_FULL)

    state = ClusterState.build([*nvidia_gpu_class(), *others, *gpu_node("h100-node-01"), pod], META)
    verdict = why.verdict(state, "pod", "extended-resource-gpu-full", "gpu-full-pod")

    assert verdict.diagnosis.stage == "claim-unallocated"
    assert verdict.diagnosis.reason == "schedulable-now"
    assert "would allocate now on node h100-node-01" in verdict.diagnosis.summary
    assert "extended resources of Pod extended-resource-gpu-full/gpu-full-pod" in (
        verdict.diagnosis.summary
    )
    assert "nvidia.com/gpu: 1" in verdict.diagnosis.summary


@pytest.mark.parametrize("recorded", [True, False], ids=["status-names-it", "annotation-only"])
def test_the_bound_gpu_full_pod_has_the_generated_claim_in_its_chain(recorded: bool) -> None:
    pod, others = demo(GPU_FULL)
    claim, status = commented(GPU_FULL)
    bound = running(pod, GPU_FULL_NODE, status if recorded else {})
    objects = [*nvidia_gpu_class(), *others, *gpu_node(), bound, allocated(claim, bound)]

    state = ClusterState.build(objects, META)
    verdict = why.verdict(state, "pod", "extended-resource-gpu-full", "gpu-full-pod")
    data = why.as_json(verdict)

    # Found by the Pod's status, or before the scheduler recorded it there by its annotation
    # and controller owner (findExtendedResourceClaim).
    (ref,) = data["chain"]["claims"]
    assert ref["source"] == "extended-resource"
    assert ref["status"] == "ok"
    assert ref["claim"]["claim"]["name"] == "gpu-full-pod-extended-resources-x7k9m"
    assert ref["claim"]["claim"]["owner_pod"] == "gpu-full-pod"
    (resource,) = data["chain"]["extended_resources"]
    assert resource["served_by"] == "dra"  # worker-node-1 advertises no nvidia.com/gpu
    assert resource["request"] == ("container-0-request-0" if recorded else None)
    assert data["stage"] != "claim-unallocated"
    assert (data["stage"], data["reason"]) == ("healthy", "running")
    state_pod = state.pods[("extended-resource-gpu-full", "gpu-full-pod")]
    assert state_pod.uses_dra


def test_the_bound_mig_pod_has_its_claim_from_the_comments() -> None:
    pod, others = demo(MIG)
    claim, status = commented(MIG)
    worker = "kind-dra-1-worker"  # where the comments' allocation put it
    bound = running(pod, worker, status)
    bound["metadata"]["uid"] = claim["status"]["reservedFor"][0]["uid"]

    state = ClusterState.build([*others, node(worker), bound, claim], META)
    data = why.as_json(why.verdict(state, "pod", "extended-resource-mig-1g12gb", "mig-1g12gb-pod"))

    (ref,) = data["chain"]["claims"]
    assert ref["claim"]["claim"]["name"] == "mig-1g12gb-pod-extended-resources-8r9k5"
    assert ref["containers"] == [
        {"container": "cuda-container", "request": "container-0-request-0"}
    ]
    assert data["stage"] != "claim-unallocated"


def test_a_node_advertising_the_name_serves_it_by_its_device_plugin() -> None:
    pod, others = demo(GPU_FULL)
    (plugin_node, slice_) = gpu_node("plugin-node")
    plugin_node["status"]["allocatable"] = {"nvidia.com/gpu": "8"}
    bound = running(pod, "plugin-node", {})

    state = ClusterState.build([*nvidia_gpu_class(), *others, plugin_node, slice_, bound], META)
    data = why.as_json(why.verdict(state, "pod", "extended-resource-gpu-full", "gpu-full-pod"))

    (resource,) = data["chain"]["extended_resources"]
    assert resource["served_by"] == "device-plugin"
    assert data["chain"]["claims"] == []  # no claim: the device plugin gave it the GPU


def test_the_example_drivers_pods_use_dra_with_the_chart_installed_as_its_demo_says() -> None:
    classes = classes_of("dra-example-driver__helm__deviceclass.yaml")
    pods = fixture_objects(EXAMPLE_PODS)

    state = ClusterState.build([*classes, *pods], META)

    assert {p.name: p.uses_dra for p in state.pods.values()} == {"pod0": True, "pod1": True}
    # Installed without --set deviceClass.extendedResourceName, pod1 stays Pending on a name
    # nothing serves (its comment says so), and is no DRA Pod.
    plain = json.loads(json.dumps(classes))
    del plain[0]["spec"]["extendedResourceName"]
    state = ClusterState.build([*plain, *pods], META)
    assert {p.name: p.uses_dra for p in state.pods.values()} == {"pod0": True, "pod1": False}
