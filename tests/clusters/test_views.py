"""Capture now on the home page: plain POST and htmx, with progress that stops polling."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dradash.clusters.models import Cluster
from dradash.snapshots.models import SnapshotRun

pytestmark = pytest.mark.django_db

POLL = 'hx-trigger="load delay:1s, every 2s"'


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from dradash.clusters import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.capture_run, "delay", sent.append)
    return sent


def test_home_offers_capture_now_for_capturable_clusters_only(
    client_logged_in, cluster: Cluster
) -> None:
    Cluster.objects.create(name="imported")
    html = client_logged_in.get(reverse("home")).content.decode()
    url = reverse("cluster-capture", args=[cluster.pk])
    assert f'action="{url}"' in html
    assert f'hx-post="{url}"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert html.count("Capture now") == 1
    assert "captured every 60 minutes" in html


def test_capture_now_without_js_queues_a_run_and_redirects_to_its_page(
    client_logged_in, cluster: Cluster, enqueued: list[int], user
) -> None:
    response = client_logged_in.post(reverse("cluster-capture", args=[cluster.pk]))

    run = SnapshotRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run-detail", args=[run.pk])
    assert (run.kind, run.status, run.cluster_name) == ("capture", "queued", "prod")
    assert run.requested_by == user
    page = client_logged_in.get(response["Location"]).content.decode()
    assert "Capture #" in page
    assert "Capturing cluster prod" in page
    assert POLL in page


def test_capture_now_needs_a_post(client_logged_in, cluster: Cluster) -> None:
    response = client_logged_in.get(reverse("cluster-capture", args=[cluster.pk]))
    assert response.status_code == 405
    assert not SnapshotRun.objects.exists()


def test_capture_now_checks_the_csrf_token(user, cluster: Cluster) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post(reverse("cluster-capture", args=[cluster.pk]))
    assert response.status_code == 403
    assert not SnapshotRun.objects.exists()


def test_capture_now_needs_login(client, cluster: Cluster) -> None:
    response = client.post(reverse("cluster-capture", args=[cluster.pk]))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
    assert not SnapshotRun.objects.exists()


def test_capture_now_of_an_unknown_cluster_is_404(client_logged_in) -> None:
    assert client_logged_in.post(reverse("cluster-capture", args=[999])).status_code == 404


def test_capture_now_of_a_cluster_without_credentials_says_why(client_logged_in) -> None:
    cluster = Cluster.objects.create(name="imported")
    response = client_logged_in.post(reverse("cluster-capture", args=[cluster.pk]), follow=True)
    assert "cluster imported cannot be captured" in response.content.decode()
    fragment = client_logged_in.post(
        reverse("cluster-capture", args=[cluster.pk]), headers={"HX-Request": "true"}
    )
    assert b"<html" not in fragment.content
    assert b"cannot be captured" in fragment.content
    assert not SnapshotRun.objects.exists()


def test_capture_now_with_htmx_returns_a_polling_fragment_until_the_snapshot_is_stored(
    client_logged_in, cluster: Cluster, enqueued: list[int], django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client_logged_in.post(
            reverse("cluster-capture", args=[cluster.pk]), headers={"HX-Request": "true"}
        )
    run = SnapshotRun.objects.get()
    assert enqueued == [run.pk]
    fragment = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in fragment
    assert POLL in fragment
    assert f'hx-get="{reverse("run-detail", args=[run.pk])}"' in fragment

    # The home page, reloaded meanwhile, shows the run under way, still polling.
    home = client_logged_in.get(reverse("home")).content.decode()
    assert f'id="run-{run.pk}"' in home
    assert POLL in home

    # The worker does its job; the next poll shows the snapshot and stops polling.
    from dradash.clusters.services import capture_run_execute

    finished = capture_run_execute(run.pk)
    assert finished is not None and finished.snapshot is not None
    poll = client_logged_in.get(
        reverse("run-detail", args=[run.pk]), headers={"HX-Request": "true"}
    ).content.decode()
    assert "<html" not in poll
    assert "hx-get" not in poll and "hx-trigger" not in poll
    assert reverse("snapshot-detail", args=[finished.snapshot.pk]) in poll
    assert f"snapshot #{finished.snapshot.pk}" in poll


def test_a_failed_capture_shows_its_reason_on_the_home_page_and_stops_polling(
    client_logged_in, cluster: Cluster, kube_api, enqueued
) -> None:
    from dradash.clusters.services import capture_run_create, capture_run_execute

    kube_api.token = "revoked"
    run = capture_run_create(cluster)
    capture_run_execute(run.pk)
    run.refresh_from_db()
    assert run.status == "failed"

    fragment = client_logged_in.get(
        reverse("run-detail", args=[run.pk]), headers={"HX-Request": "true"}
    ).content.decode()
    assert "hx-get" not in fragment
    assert run.error in fragment
    assert "Nothing was stored" in fragment
    home = client_logged_in.get(reverse("home")).content.decode()
    assert run.error in home
    assert "Capture now" in home


@pytest.mark.django_db(transaction=True)
def test_without_a_broker_capture_now_captures_during_the_request(
    client_logged_in, cluster: Cluster, kube_api
) -> None:
    """The embedded default (no CELERY_BROKER_URL): tasks run eagerly, in process."""
    from dradash.celery import app

    assert app.conf.task_always_eager
    response = client_logged_in.post(
        reverse("cluster-capture", args=[cluster.pk]), headers={"HX-Request": "true"}
    )
    run = SnapshotRun.objects.get()
    assert run.status == "succeeded"
    fragment = response.content.decode()
    assert reverse("snapshot-detail", args=[run.snapshot_id]) in fragment
    assert "hx-trigger" not in fragment
