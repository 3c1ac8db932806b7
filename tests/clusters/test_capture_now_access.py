"""Who may press "Capture now" (README "Who may see and do what"): any logged-in user, on the
home page and, for staff, in the admin; each cluster starts at most one new capture per
DRADASH_CAPTURE_NOW_INTERVAL, whoever asks; a press while a capture runs joins it."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from dradash.clusters.models import Cluster
from dradash.snapshots.models import SnapshotRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    from dradash.clusters import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.capture_run, "delay", sent.append)
    return sent


@pytest.fixture(params=["alice", "bob", "staff"])
def someone(request: pytest.FixtureRequest, user: Any, django_user_model: Any) -> Any:
    """Each kind of user: the one whose session this is (alice), another one, a staff user."""
    if request.param == "alice":
        return user
    return django_user_model.objects.create_user(
        request.param, password="pw-123-pw", is_staff=request.param == "staff"
    )


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def captured(cluster: Cluster, seconds_ago: int, status: str = "succeeded") -> SnapshotRun:
    started = timezone.now() - timedelta(seconds=seconds_ago)
    finished = None if status == "running" else started + timedelta(seconds=2)
    return SnapshotRun.objects.create(
        kind="capture",
        cluster_name=cluster.name,
        status=status,
        started_at=started,
        finished_at=finished,
    )


def refused_for(html: str, last: SnapshotRun) -> int:
    """The seconds since ``last`` started plus those to wait, as the refusal in ``html`` says
    them (the interval)."""
    said = re.search(
        rf"luster prod was captured (\d+) s ago \(run #{last.pk}\), and Capture now starts at "
        r"most one capture of a cluster every 60 s: try again in (\d+) s",
        html,
    )
    assert said is not None, html
    return int(said[1]) + int(said[2])


def test_any_logged_in_user_may_capture_now(
    someone: Any, cluster: Cluster, enqueued: list[int], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in(someone).post(reverse("cluster-capture", args=[cluster.pk]))

    run = SnapshotRun.objects.get()
    assert response["Location"] == reverse("run-detail", args=[run.pk])
    assert (run.status, run.requested_by) == ("queued", someone)
    assert enqueued == [run.pk]


def test_no_one_starts_a_second_capture_within_the_interval(
    someone: Any, cluster: Cluster, enqueued: list[int]
) -> None:
    last = captured(cluster, seconds_ago=10)
    client = logged_in(someone)

    page = client.post(reverse("cluster-capture", args=[cluster.pk]), follow=True)
    fragment = client.post(
        reverse("cluster-capture", args=[cluster.pk]), headers={"HX-Request": "true"}
    )

    for html in (page.content.decode(), fragment.content.decode()):
        assert refused_for(html, last) == 60
    assert b"<html" not in fragment.content
    assert list(SnapshotRun.objects.all()) == [last]
    assert enqueued == []


def test_after_the_interval_a_new_capture_starts(
    client_logged_in: Client, cluster: Cluster, enqueued: list[int], settings: Any
) -> None:
    settings.DRADASH_CAPTURE_NOW_INTERVAL = 300
    captured(cluster, seconds_ago=301)
    client_logged_in.post(reverse("cluster-capture", args=[cluster.pk]))
    assert SnapshotRun.objects.filter(status="queued").count() == 1


def test_a_press_while_a_capture_runs_joins_it(
    client_logged_in: Client, cluster: Cluster, enqueued: list[int]
) -> None:
    running = captured(cluster, seconds_ago=5, status="running")
    response = client_logged_in.post(reverse("cluster-capture", args=[cluster.pk]))
    assert response["Location"] == reverse("run-detail", args=[running.pk])
    assert SnapshotRun.objects.count() == 1


def test_the_admin_action_keeps_the_same_interval(
    cluster: Cluster, enqueued: list[int], django_user_model: Any
) -> None:
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw")
    last = captured(cluster, seconds_ago=20)
    response = logged_in(root).post(
        reverse("admin:clusters_cluster_changelist"),
        {"action": "capture_now", "_selected_action": [cluster.pk]},
        follow=True,
    )
    assert refused_for(response.content.decode(), last) == 60
    assert SnapshotRun.objects.count() == 1


def test_a_share_link_visitor_cannot_capture(
    client: Client, cluster: Cluster, enqueued: list[int], user: Any
) -> None:
    from dradash.sharing.services import share_link_create
    from dradash.snapshots.services import bundle_import
    from tests.sharing.conftest import tiny_bundle

    snapshot = bundle_import(files=[("tiny.json", tiny_bundle())])
    _, token = share_link_create(snapshot=snapshot, user=user, expires_in=timedelta(days=1))
    path = reverse("cluster-capture", args=[cluster.pk])
    response = client.post(f"/share/{token}{path}")
    assert response.status_code == 404
    assert not SnapshotRun.objects.exists()
