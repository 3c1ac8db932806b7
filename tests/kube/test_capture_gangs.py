"""Capture of Workloads and PodGroups (scheduling.k8s.io, KEP-4671/KEP-5729): read at the newest
version the cluster serves, with every member Pod of a PodGroup; a cluster without the
GenericWorkload gate does not serve them, which leaves the snapshot whole."""

from __future__ import annotations

from pathlib import Path

from dradash.dra.bundle import PROBLEM_STATUSES
from dradash.dra.state import ClusterState, SnapshotMeta
from dradash.kube import capture as capture_module
from tests.kube.test_capture import kube_for, run
from tests.kubeapi import GANG_NAMESPACE, KubeAPIServer, fixture_objects, gang_objects

NS = GANG_NAMESPACE


def listed_paths(api: KubeAPIServer, plural: str) -> list[str]:
    return [p for m, p, _ in api.requests if m == "GET" and p.endswith(f"/{plural}")]


def test_a_136_cluster_is_captured_at_v1alpha2_with_every_member_pod(tmp_path: Path) -> None:
    objects = fixture_objects() + gang_objects("v1alpha2")
    with KubeAPIServer(objects, version="v1.36.1", workload_versions=("v1alpha2",)) as api:
        result = run(api, tmp_path)
        podgroup_lists = listed_paths(api, "podgroups")

    assert podgroup_lists == ["/apis/scheduling.k8s.io/v1alpha2/podgroups"]
    assert result.kind_status["PodGroup"] == {"status": "ok", "message": ""}
    assert result.kind_status["Workload"] == {"status": "ok", "message": ""}
    group = result.objects[("PodGroup", NS, "group-1")]
    assert group["apiVersion"] == "scheduling.k8s.io/v1alpha2"
    assert group["spec"]["podGroupTemplateRef"]["workload"]["workloadName"] == "training"
    assert ("PodGroup", NS, "group-2") in result.objects  # no Pods yet: captured all the same
    assert result.objects[("Workload", NS, "training")]["apiVersion"] == (
        "scheduling.k8s.io/v1alpha2"
    )
    # Both members, the one without any DRA too (its gang counts it); not a Pod of no group.
    assert ("Pod", NS, "group-1-a") in result.objects
    assert ("Pod", NS, "group-1-b") in result.objects
    assert ("Pod", NS, "stray") not in result.objects

    state = ClusterState.build(result.objects.values(), SnapshotMeta(source="capture"))
    podgroup = state.podgroups[(NS, "group-1")]
    assert podgroup.min_count == 2
    assert podgroup.workload is state.workloads[(NS, "training")]
    assert sorted(p.name for p in podgroup.pods) == ["group-1-a", "group-1-b"]
    assert [r.status for r in podgroup.claim_refs] == ["ok"]
    assert podgroup.claims[0].name == "group-1-gpu-x7k2p"
    assert podgroup.scheduled


def test_a_137_cluster_is_captured_at_v1beta1(tmp_path: Path) -> None:
    objects = fixture_objects() + gang_objects("v1beta1")
    with KubeAPIServer(
        objects, version="v1.37.1", workload_versions=("v1beta1", "v1alpha3")
    ) as api:
        result = run(api, tmp_path)
        listed = listed_paths(api, "podgroups") + listed_paths(api, "workloads")

    assert sorted(listed) == [
        "/apis/scheduling.k8s.io/v1beta1/podgroups",
        "/apis/scheduling.k8s.io/v1beta1/workloads",
    ]
    group = result.objects[("PodGroup", NS, "group-1")]
    assert group["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert group["spec"]["workloadRef"] == {"workloadName": "training", "templateName": "workers"}
    assert {("Pod", NS, "group-1-a"), ("Pod", NS, "group-1-b")} <= set(result.objects)
    state = ClusterState.build(result.objects.values(), SnapshotMeta(source="capture"))
    podgroup = state.podgroups[(NS, "group-1")]
    assert podgroup.template_ref == ("training", "workers")
    assert podgroup.scheduled_condition is not None
    assert podgroup.scheduled_condition["type"] == "PodGroupInitiallyScheduled"
    assert state.pods[(NS, "group-1-b")].group is podgroup


def test_a_cluster_without_generic_workload_leaves_them_not_served_and_the_snapshot_whole(
    tmp_path: Path,
) -> None:
    with KubeAPIServer(fixture_objects(), version="v1.37.1") as api:
        result = run(api, tmp_path)
        listed = listed_paths(api, "podgroups") + listed_paths(api, "workloads")

    assert listed == []  # discovery says they are not served: no list is tried
    workload, podgroup = result.kind_status["Workload"], result.kind_status["PodGroup"]
    assert workload["status"] == podgroup["status"] == "not-served"
    assert "GenericWorkload" in workload["message"]
    assert "GenericWorkload" in podgroup["message"]
    assert "DRAWorkloadResourceClaims" in podgroup["message"]
    assert "scheduling.k8s.io is served at v1;" in podgroup["message"]
    assert not {k for k, s in result.kind_status.items() if s["status"] in PROBLEM_STATUSES}


def test_a_135_cluster_serves_workloads_only(tmp_path: Path) -> None:
    with KubeAPIServer(
        fixture_objects(), version="v1.35.2", workload_versions=("v1alpha1",)
    ) as api:
        result = run(api, tmp_path)
        listed = listed_paths(api, "workloads")

    assert listed == ["/apis/scheduling.k8s.io/v1alpha1/workloads"]
    assert result.kind_status["Workload"]["status"] == "absent"
    assert result.kind_status["PodGroup"]["status"] == "not-served"


def test_podgroups_gone_between_discovery_and_list_are_not_served(tmp_path: Path) -> None:
    objects = fixture_objects() + gang_objects("v1alpha2")
    with KubeAPIServer(objects, workload_versions=("v1alpha2",)) as api:
        api.fail("/apis/scheduling.k8s.io/v1alpha2/podgroups", 404)
        result = run(api, tmp_path)

    assert result.kind_status["PodGroup"]["status"] == "not-served"
    assert "GenericWorkload" in result.kind_status["PodGroup"]["message"]
    assert ("PodGroup", NS, "group-1") not in result.objects
    assert ("Pod", NS, "group-1-b") not in result.objects  # no group read: only DRA Pods


def test_forbidden_podgroups_make_the_snapshot_partial(tmp_path: Path) -> None:
    objects = fixture_objects() + gang_objects("v1alpha2")
    with KubeAPIServer(objects, workload_versions=("v1alpha2",)) as api:
        api.forbid("podgroups", "scheduling.k8s.io")
        result = run(api, tmp_path)

    assert result.kind_status["PodGroup"]["status"] == "forbidden"
    assert "podgroups" in result.kind_status["PodGroup"]["message"]
    assert result.kind_status["Workload"]["status"] == "ok"


def test_connection_checks_podgroups_and_workloads_in_their_group(tmp_path: Path) -> None:
    with KubeAPIServer(fixture_objects(), workload_versions=("v1alpha2",)) as api:
        api.forbid("workloads", "scheduling.k8s.io")
        with kube_for(api, tmp_path) as kube:
            report = capture_module.test_connection(kube)

    assert report.error is None
    assert report.can_list["PodGroup"] is True
    assert report.can_list["Workload"] is False
