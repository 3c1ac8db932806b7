"""The cluster admin: list columns, Test connection and Capture now actions, kubeconfig checks."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from dradash.clusters.models import Cluster
from dradash.snapshots.models import SnapshotRun
from tests.kubeapi import KubeAPIServer

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:clusters_cluster_changelist")


@pytest.fixture
def admin_client_(db: None) -> Client:
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(admin)
    return client


def act(client: Client, action: str, *clusters: Cluster) -> str:
    response = client.post(
        CHANGELIST,
        {"action": action, "_selected_action": [c.pk for c in clusters]},
        follow=True,
    )
    assert response.status_code == 200
    return response.content.decode()


def test_the_list_shows_source_interval_keep_and_last_snapshot(
    admin_client_: Client, cluster: Cluster, kubeconfig
) -> None:
    Cluster.objects.create(name="here", in_cluster=True, capture_enabled=True)
    html = admin_client_.get(CHANGELIST).content.decode()
    assert f"{kubeconfig.resolve()} (test)" in html
    assert "in-cluster service account" in html
    assert "capture every (minutes)" in html.lower() or "Capture every (minutes)" in html
    assert "Keep last" in html
    assert "Last snapshot" in html


def test_test_connection_shows_version_dra_versions_and_listable_kinds(
    admin_client_: Client, cluster: Cluster, kube_api: KubeAPIServer
) -> None:
    kube_api.forbid("events")
    html = act(admin_client_, "test_connection", cluster)
    assert "Cluster prod: Kubernetes v1.36.1; resource.k8s.io served: v1, v1beta2, v1beta1" in html
    assert "may list: " in html and "ResourceSlice" in html
    assert "may not list: Event" in html


def test_test_connection_reports_bad_credentials(
    admin_client_: Client, cluster: Cluster, kube_api: KubeAPIServer
) -> None:
    kube_api.token = "revoked"
    html = act(admin_client_, "test_connection", cluster)
    assert "Cluster prod: " in html
    assert "Unauthorized" in html
    assert "test-token" not in html


def test_capture_now_action_queues_a_run(
    admin_client_: Client, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dradash.clusters import tasks

    monkeypatch.setattr(tasks.capture_run, "delay", lambda run_id: None)
    imported = Cluster.objects.create(name="imported")
    html = act(admin_client_, "capture_now", cluster, imported)
    run = SnapshotRun.objects.get()
    assert f"Cluster prod: capture run #{run.pk} is queued." in html
    assert "Cluster imported cannot be captured: it has no kubeconfig" in html


def test_the_form_checks_the_kubeconfig_and_its_context(
    admin_client_: Client, kubeconfig, tmp_path
) -> None:
    add = reverse("admin:clusters_cluster_add")
    base = {
        "name": "prod",
        "capture_enabled": "on",
        "capture_interval": 60,
        "keep_last": 48,
        "keep_analysed": 12,
    }
    response = admin_client_.post(
        add, {**base, "kubeconfig_path": str(tmp_path / "nope"), "context": ""}
    )
    assert b"no such file" in response.content
    response = admin_client_.post(
        add, {**base, "kubeconfig_path": str(kubeconfig), "context": "staging"}
    )
    assert b"no context" in response.content
    assert not Cluster.objects.exists()
    response = admin_client_.post(
        add, {**base, "kubeconfig_path": str(kubeconfig), "context": "test"}
    )
    assert response.status_code == 302
    assert Cluster.objects.get().capturable
