"""Workloads and PodGroups in bundles (scheduling.k8s.io: v1alpha2 in 1.36, v1beta1 in 1.37):
they import from what kubectl prints, and those the API server would refuse are refused, as
other kinds' are (dradash.dra.validation)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest

from dradash.dra import validation
from dradash.dra.bundle import BundleError, kind_statuses, parse_bundle
from dradash.dra.state import ClusterState, SnapshotMeta

from .builders import fixture_objects

EXAMPLE = "dra-example-driver__podgroup-resourceclaimtemplate__podgroup-resourceclaimtemplate.yaml"
NS = "podgroup-resourceclaimtemplate"
SCHEDULING = "scheduling.k8s.io"


def parse(*objects: dict[str, Any]) -> Any:
    data = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
    return parse_bundle([("bundle.json", json.dumps(data).encode())], max_bytes=10**7)


def refused(obj: dict[str, Any]) -> str:
    with pytest.raises(BundleError) as caught:
        parse(obj)
    return str(caught.value)


def podgroup(version: str = "v1beta1", **spec: Any) -> dict[str, Any]:
    """A PodGroup as ``kubectl get podgroups -o json`` prints it, of a Workload's template."""
    ref: dict[str, Any] = (
        {"workload": {"workloadName": "training", "podGroupTemplateName": "workers"}}
        if version == "v1alpha2"
        else {"workloadName": "training", "templateName": "workers"}
    )
    return {
        "apiVersion": f"{SCHEDULING}/{version}",
        "kind": "PodGroup",
        "metadata": {
            "name": "training-workers-0",
            "namespace": NS,
            "uid": "5b1f0c1e-1111-4a4a-9b9b-000000000001",
            "resourceVersion": "4711",
            "generation": 1,
            "creationTimestamp": "2026-11-28T09:00:00Z",
        },
        "spec": {
            ("podGroupTemplateRef" if version == "v1alpha2" else "workloadRef"): ref,
            "schedulingPolicy": {"gang": {"minCount": 2}},
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            **(
                {"disruptionMode": "Pod"}
                if version == "v1alpha2"
                else {"disruptionMode": {"single": {}}}
            ),
            **spec,
        },
        "status": {
            "conditions": [
                {
                    "type": "PodGroupScheduled"
                    if version == "v1alpha2"
                    else "PodGroupInitiallyScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/2 nodes are available",
                    "lastTransitionTime": "2026-11-28T09:00:05Z",
                    "observedGeneration": 1,
                }
            ],
            "resourceClaimStatuses": [
                {"name": "gpu", "resourceClaimName": "training-workers-0-gpu-x7k2p"}
            ],
        },
    }


def workload(version: str = "v1beta1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{SCHEDULING}/{version}",
        "kind": "Workload",
        "metadata": {"name": "training", "namespace": NS, "uid": "5b1f0c1e-2222"},
        "spec": {
            "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "training"},
            "podGroupTemplates": [
                {
                    "name": "workers",
                    "schedulingPolicy": {"gang": {"minCount": 2}},
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
                }
            ],
            **spec,
        },
    }


# --- what imports ----------------------------------------------------------------------------


def test_dra_example_drivers_136_podgroups_import_and_their_deployments_are_counted() -> None:
    bundle = parse(*fixture_objects(EXAMPLE))

    assert {k for k in bundle.objects if k[0] == "PodGroup"} == {
        ("PodGroup", NS, "group-1"),
        ("PodGroup", NS, "group-2"),
    }
    assert bundle.ignored == Counter({"apps/v1 Deployment": 2})
    state = ClusterState.build(bundle.objects.values(), SnapshotMeta(source="upload"))
    group = state.podgroups[(NS, "group-1")]
    assert (group.policy, group.min_count) == ("gang", 2)
    assert [(r.source, r.template_name, r.status) for r in group.claim_refs] == [
        ("template", "one-gpu", "not-created")
    ]


@pytest.mark.parametrize("version", ["v1beta1", "v1alpha3", "v1alpha2"])
def test_kubectl_get_podgroups_workloads_output_imports(version: str) -> None:
    """``kubectl get podgroups,workloads -A -o json``: a List of both, null where Go has nil."""
    group = podgroup(version)
    if version == "v1alpha2":
        group["spec"]["priorityClassName"] = None
    bundle = parse(group, workload(version))

    assert set(bundle.objects) == {
        ("PodGroup", NS, "training-workers-0"),
        ("Workload", NS, "training"),
    }
    state = ClusterState.build(bundle.objects.values(), SnapshotMeta(source="upload"))
    found = state.podgroups[(NS, "training-workers-0")]
    assert found.template_ref == ("training", "workers")
    assert found.workload is state.workloads[(NS, "training")]
    assert found.scheduled_condition is not None and not found.scheduled
    statuses = kind_statuses(Counter(k[0] for k in bundle.objects), None)
    assert statuses["PodGroup"]["count"] == statuses["Workload"]["count"] == 1


def test_a_podgroup_without_a_template_ref_and_a_basic_policy_imports() -> None:
    group = podgroup("v1alpha2", schedulingPolicy={"basic": {}}, resourceClaims=None)
    group["spec"]["podGroupTemplateRef"] = None  # no omitempty in v1alpha2: null when unset

    assert validation.problems(group) == []
    assert ("PodGroup", NS, "training-workers-0") in parse(group).objects


def test_a_v1beta1_workload_of_composite_groups_imports() -> None:
    obj = workload(compositePodGroupTemplates=[{"name": "root"}])
    del obj["spec"]["podGroupTemplates"]

    assert validation.problems(obj) == []


def test_a_v1alpha1_workload_of_135_imports_and_a_podgroup_of_no_served_version_is_ignored() -> (
    None
):
    old = workload("v1alpha1")
    old["spec"] = {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}
    bundle = parse(old, podgroup("v1alpha1"))

    assert set(bundle.objects) == {("Workload", NS, "training")}
    assert bundle.ignored == Counter({f"{SCHEDULING}/v1alpha1 PodGroup": 1})


def test_a_podgroup_without_an_api_version_is_refused() -> None:
    group = podgroup()
    del group["apiVersion"]

    assert "PodGroup has no apiVersion" in refused(group)


# --- what the API server would refuse ----------------------------------------------------------


def edited(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["spec"].update(spec)
    return obj


def claims(n: int) -> list[dict[str, Any]]:
    return [{"name": f"c{i}", "resourceClaimName": f"claim-{i}"} for i in range(n)]


@pytest.mark.parametrize(
    ("obj", "path", "words"),
    [
        (
            podgroup(schedulingPolicy={}),
            "spec.schedulingPolicy",
            "exactly one of `basic` or `gang` is required",
        ),
        (
            podgroup(schedulingPolicy={"basic": {}, "gang": {"minCount": 2}}),
            "spec.schedulingPolicy",
            "multiple fields are set",
        ),
        (podgroup(schedulingPolicy=None), "spec.schedulingPolicy", "Required value"),
        (
            podgroup(schedulingPolicy={"gang": {"minCount": 0}}),
            "spec.schedulingPolicy.gang.minCount",
            "Invalid value: 0: must be greater than or equal to 1",
        ),
        (
            podgroup(schedulingPolicy={"gang": {}}),
            "spec.schedulingPolicy.gang.minCount",
            "Required value",
        ),
        (
            podgroup(schedulingPolicy={"gang": {"minCount": "2"}}),
            "spec.schedulingPolicy.gang.minCount",
            "Invalid value: '2'",
        ),
        (
            podgroup(resourceClaims=claims(5)),
            "spec.resourceClaims",
            "Too many: 5: must have at most 4 items",
        ),
        (
            podgroup(resourceClaims=[{"name": "gpu"}]),
            "spec.resourceClaims[0]",
            "exactly one of `resourceClaimName` or `resourceClaimTemplateName` is required",
        ),
        (
            podgroup(
                resourceClaims=[
                    {"name": "gpu", "resourceClaimName": "a", "resourceClaimTemplateName": "b"}
                ]
            ),
            "spec.resourceClaims[0]",
            "multiple fields are set",
        ),
        (
            podgroup(resourceClaims=[*claims(1), *claims(1)]),
            "spec.resourceClaims[1].name",
            "Duplicate value: 'c0'",
        ),
        (
            podgroup(resourceClaims=[{"resourceClaimName": "a"}]),
            "spec.resourceClaims[0].name",
            "Required value",
        ),
        (
            podgroup(resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "One_GPU"}]),
            "spec.resourceClaims[0].resourceClaimTemplateName",
            "RFC 1123 subdomain",
        ),
        (
            edited(podgroup(), podGroupTemplateRef={"workload": {"workloadName": "training"}}),
            "spec.podGroupTemplateRef",
            f"in {SCHEDULING}/v1beta1 it is spec.workloadRef",
        ),
        (
            edited(
                podgroup("v1alpha2"), workloadRef={"workloadName": "training", "templateName": "w"}
            ),
            "spec.workloadRef",
            f"in {SCHEDULING}/v1alpha2 it is spec.podGroupTemplateRef",
        ),
        (
            podgroup(workloadRef={"workloadName": "training", "podGroupTemplateName": "workers"}),
            "spec.workloadRef.podGroupTemplateName",
            "did you mean templateName?",
        ),
        (
            podgroup(
                "v1alpha2",
                podGroupTemplateRef={"workload": {"workloadName": "t", "templateName": "w"}},
            ),
            "spec.podGroupTemplateRef.workload.templateName",
            "did you mean podGroupTemplateName?",
        ),
        (
            podgroup(workloadRef={"workloadName": "Training", "templateName": "workers"}),
            "spec.workloadRef.workloadName",
            "RFC 1123 subdomain",
        ),
        (
            workload(
                podGroupTemplates=[
                    {"name": f"t{i}", "schedulingPolicy": {"basic": {}}} for i in range(9)
                ]
            ),
            "spec.podGroupTemplates",
            "Too many: 9: must have at most 8 items",
        ),
        (
            workload(
                podGroupTemplates=[{"name": "w", "schedulingPolicy": {"gang": {"minCount": -1}}}]
            ),
            "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount",
            "must be greater than or equal to 1",
        ),
        (
            workload(
                podGroupTemplates=[
                    {
                        "name": "w",
                        "schedulingPolicy": {"basic": {}},
                        "resourceClaims": [{"name": "g"}],
                    }
                ]
            ),
            "spec.podGroupTemplates[0].resourceClaims[0]",
            "exactly one of",
        ),
        (
            workload(podGroupTemplates=[{"name": "w", "schedulingPolicy": {"basic": {}}}] * 2),
            "spec.podGroupTemplates[1].name",
            "Duplicate value: 'w'",
        ),
        (workload("v1alpha2", podGroupTemplates=[]), "spec.podGroupTemplates", "Required value"),
        (
            workload(podGroupTemplates=None),
            "spec",
            "exactly one of `podGroupTemplates` or `compositePodGroupTemplates`",
        ),
    ],
)
def test_podgroups_and_workloads_the_api_server_refuses_are_refused(
    obj: dict[str, Any], path: str, words: str
) -> None:
    message = refused(obj)
    assert f"would refuse it: {path}: " in message
    assert words in message
    assert f"{obj['apiVersion']} {obj['kind']} {NS}/" in message


def test_a_malformed_podgroup_stops_the_whole_bundle() -> None:
    good = json.dumps(workload()).encode()
    bad = json.dumps(podgroup(schedulingPolicy={"gang": {"minCount": 0}})).encode()
    with pytest.raises(BundleError) as caught:
        parse_bundle([("a.json", good), ("b.json", bad)], max_bytes=10**7)

    assert caught.value.filename == "b.json"
