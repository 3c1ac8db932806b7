"""The analysis is computed once, when a snapshot is stored, and pages and the API read it."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from dradash.analysis.models import (
    ClaimVerdict,
    DeviceRow,
    Explanation,
    Finding,
    PodVerdict,
    PoolRow,
    SnapshotAnalysis,
)
from dradash.analysis.services import RETRIES, analyses_reap, analysis_run
from dradash.analysis.tasks import analyse_snapshot
from dradash.snapshots.services import demo_load

pytestmark = pytest.mark.django_db

PENDING_POD = ("render", "render-farm-6-05b2e")  # claim-unallocated in the demo


@contextmanager
def django_on_commit_now() -> Any:
    """Run on-commit callbacks (the queued analyse tasks) as they are registered."""
    real = transaction.on_commit
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(transaction, "on_commit", lambda fn, *a, **k: fn())
        yield
    assert transaction.on_commit is real


def _counts(snapshot: Any) -> dict[str, int]:
    return {
        model.__name__: model.objects.filter(snapshot=snapshot).count()
        for model in (PodVerdict, ClaimVerdict, Finding, DeviceRow, PoolRow, Explanation)
    }


def test_storing_a_snapshot_queues_its_analysis(api_client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        earlier, _ = demo_load()
    assert len(callbacks) == 2  # one analyse task per stored snapshot, queued on commit
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).status == "pending"
    assert api_client.get(f"/api/v1/snapshots/{earlier.pk}/").json()["analysis"] == "pending"
    for callback in callbacks:
        callback()
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).status == "done"
    assert api_client.get(f"/api/v1/snapshots/{earlier.pk}/").json()["analysis"] == "done"


def test_the_analysis_stores_a_row_per_pod_claim_device_and_pool(demo):
    earlier = demo[0]
    counts = _counts(earlier)
    kinds = earlier.kinds
    assert counts["PodVerdict"] == kinds["Pod"]["count"]
    assert counts["ClaimVerdict"] == kinds["ResourceClaim"]["count"]
    assert counts["DeviceRow"] > 0 and counts["PoolRow"] > 0 and counts["Finding"] > 0
    # Every unallocated claim has the allocator's answer stored; an allocated one's is the
    # allocation it has, which the explain API reads from the claim.
    assert not ClaimVerdict.objects.filter(
        snapshot=earlier, state="pending", explanation=None
    ).exists()
    allocated = ClaimVerdict.objects.filter(snapshot=earlier, state="reserved").first()
    assert allocated.explanation_id is None
    pod = PodVerdict.objects.get(snapshot=earlier, namespace="render", name="render-farm-6-05b2e")
    assert (pod.stage, pod.severity) == ("claim-unallocated", "error")
    assert pod.explanation_id is not None and pod.chain


def test_analysing_again_replaces_what_was_stored(demo):
    earlier = demo[0]
    before = _counts(earlier)
    analysis_run(earlier.pk)
    analyse_snapshot.apply(args=[earlier.pk])  # a second delivery of the task
    assert _counts(earlier) == before
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).attempts == 3


def test_pages_of_a_snapshot_being_analysed_say_so_and_refresh(client_logged_in, api_client):
    earlier, _ = demo_load()  # the analyse task is queued, not run (the test never commits)
    for url in (
        reverse("snapshot-detail", args=[earlier.pk]),
        reverse("pod-list", args=[earlier.pk]),
        reverse("pod-detail", args=[earlier.pk, *PENDING_POD]),
        reverse("device-list", args=[earlier.pk]),
        reverse("snapshot-capacity", args=[earlier.pk]),
    ):
        response = client_logged_in.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "Analysing this snapshot" in html
        assert 'hx-trigger="every 3s"' in html  # it refreshes by itself
    response = api_client.get(f"/api/v1/snapshots/{earlier.pk}/findings")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["analysis"] == "pending"


def test_a_failed_analysis_shows_its_error_never_a_500(client_logged_in, api_client, monkeypatch):
    earlier, _ = demo_load()

    def broken(state: Any, budget: Any = None) -> Any:
        raise RuntimeError("the allocator port tripped over <this>")

    monkeypatch.setattr("dradash.dra.analysis.analyse", broken)
    analyse_snapshot.apply(args=[earlier.pk])  # in-process: the error is recorded, not raised
    analysis = SnapshotAnalysis.objects.get(pk=earlier.pk)
    assert analysis.status == "failed"
    assert "RuntimeError: the allocator port tripped over <this>" in analysis.error
    html = client_logged_in.get(reverse("snapshot-detail", args=[earlier.pk])).content.decode()
    assert "The analysis of this snapshot failed" in html
    assert "tripped over &lt;this&gt;" in html
    response = api_client.get(f"/api/v1/snapshots/{earlier.pk}/checklist")
    assert response.status_code == 503
    assert response.json()["analysis"] == "failed"
    assert "tripped over <this>" in response.json()["detail"]
    monkeypatch.undo()
    call_command("analyse", str(earlier.pk))  # an administrator retries it now
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).status == "done"
    assert client_logged_in.get(reverse("snapshot-detail", args=[earlier.pk])).status_code == 200


def test_the_analyse_command_catches_up_on_snapshots_without_analysis(capsys):
    earlier, later = demo_load()
    SnapshotAnalysis.objects.filter(pk=later.pk).delete()  # stored before dradash analysed
    call_command("analyse", "--missing")
    assert set(SnapshotAnalysis.objects.values_list("status", flat=True)) == {"done"}
    assert f"snapshot {later.pk}: analysed" in capsys.readouterr().out


def test_no_page_reads_a_whole_snapshot(client_logged_in, api_client, demo, monkeypatch):
    """Pages read the stored analysis and, for a Pod or claim, only the objects of its chain."""

    def whole(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a page read the whole snapshot")

    monkeypatch.setattr("dradash.analysis.services.snapshot_objects", whole)
    earlier, later = demo
    pk = later.pk
    urls = [
        reverse("snapshot-detail", args=[pk]),
        reverse("pod-list", args=[pk]) + "?stage=claim-unallocated",
        reverse("claim-list", args=[pk]) + "?device_class=gpu.example.com",
        reverse("pod-detail", args=[pk, *PENDING_POD]),
        reverse("claim-detail", args=[pk, "render", "render-farm-6-05b2e-gpus-9927f"]),
        reverse("class-detail", args=[pk, "gpu.example.com"]),
        reverse("device-list", args=[pk]) + "?attribute=productName",
        reverse("snapshot-capacity", args=[pk]),
        reverse("snapshot-checklist", args=[pk]),
        reverse("snapshot-diff", args=[earlier.pk, pk]),
        reverse("playground") + f"?snapshot={pk}&expression=device.driver+%3D%3D+%22x%22",
        f"/api/v1/snapshots/{pk}/findings",
        f"/api/v1/snapshots/{pk}/pools",
    ]
    for url in urls:
        response = (api_client if url.startswith("/api/") else client_logged_in).get(url)
        assert response.status_code == 200, url
        assert b"Analysing this snapshot" not in response.content


def test_pod_page_and_api_show_the_same_findings(client_logged_in, api_client, demo):
    """The Pod's own findings and those of its claims, on the page and in the API alike."""
    earlier = demo[0]
    for pod in PodVerdict.objects.filter(snapshot=earlier, uses_dra=True):
        data = api_client.get(
            f"/api/v1/snapshots/{earlier.pk}/pods/{pod.namespace}/{pod.name}/diagnosis"
        ).json()
        html = client_logged_in.get(
            reverse("pod-detail", args=[earlier.pk, pod.namespace, pod.name])
        ).content.decode()
        for finding in data["findings"]:
            assert finding["code"] in html
        claim_findings = [
            f
            for f in data["findings"]
            if any(o["kind"] == "ResourceClaim" for o in f["objects"])
            and not any(o["kind"] == "Pod" for o in f["objects"])
        ]
        if claim_findings:
            return
    pytest.fail("no Pod of the demo has a finding about its claim")


def test_stage_history_across_the_clusters_snapshots(client_logged_in, api_client, demo):
    earlier, later = demo
    pod = PodVerdict.objects.get(snapshot=later, namespace="render", name="render-farm-6-05b2e")
    data = api_client.get(
        f"/api/v1/snapshots/{later.pk}/pods/render/render-farm-6-05b2e/diagnosis"
    ).json()
    assert [h["snapshot"] for h in data["history"]] == [later.pk, earlier.pk]  # newest first
    assert data["history"][0]["stage"] == pod.stage
    assert data["history"][0]["captured_at"].endswith("Z")
    html = client_logged_in.get(
        reverse("pod-detail", args=[later.pk, *PENDING_POD])
    ).content.decode()
    assert (
        "Across this cluster&#x27;s snapshots" in html or "Across this cluster's snapshots" in html
    )
    assert "2 snapshots" in html  # claim-unallocated in both


def test_history_tells_when_the_stage_changed(api_client, demo):
    earlier, later = demo
    changed = [
        p
        for p in PodVerdict.objects.filter(snapshot=later, uses_dra=True)
        if PodVerdict.objects.filter(snapshot=earlier, namespace=p.namespace, name=p.name).exclude(
            stage=p.stage
        )
    ]
    assert changed, "the demo's later snapshot has Pods whose stage changed"
    pod = changed[0]
    data = api_client.get(
        f"/api/v1/snapshots/{later.pk}/pods/{pod.namespace}/{pod.name}/diagnosis"
    ).json()
    stages = [h["stage"] for h in data["history"]]
    assert stages[0] == pod.stage and stages[1] != pod.stage


def test_failed_and_lost_analyses_are_tried_again_with_backoff(monkeypatch):
    earlier, later = demo_load()
    monkeypatch.setattr("dradash.dra.analysis.analyse", lambda state, budget=None: 1 / 0)
    analyse_snapshot.apply(args=[earlier.pk])
    failed = SnapshotAnalysis.objects.get(pk=earlier.pk)
    assert (failed.status, failed.attempts) == ("failed", 1)
    now = failed.finished_at
    with django_on_commit_now():
        assert analyses_reap(now=now + timedelta(seconds=10)) == []  # too soon
        assert analyses_reap(now=now + timedelta(seconds=31)) == [earlier.pk]
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).attempts == 2  # ran again, failed again
    # The later snapshot's worker was lost mid-run: it never finished.
    SnapshotAnalysis.objects.filter(pk=later.pk).update(started_at=now, attempts=1)
    monkeypatch.undo()
    with django_on_commit_now():
        assert analyses_reap(now=now + timedelta(hours=1)) == [earlier.pk, later.pk]
    for snapshot in (earlier, later):
        assert SnapshotAnalysis.objects.get(pk=snapshot.pk).status == "done"


def test_a_failed_analysis_gives_up_after_its_retries(monkeypatch):
    earlier, _ = demo_load()
    SnapshotAnalysis.objects.filter(pk=earlier.pk).update(
        status="failed", attempts=RETRIES + 1, error="boom", finished_at=timezone.now()
    )
    assert earlier.pk not in analyses_reap(now=timezone.now() + timedelta(days=1))
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).error == "boom"


def test_with_the_queue_down_an_analysis_is_failed_and_queued_again_later(monkeypatch):
    from kombu.exceptions import OperationalError

    def down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(analyse_snapshot, "delay", down)
    with django_on_commit_now():
        earlier, _ = demo_load()
    analysis = SnapshotAnalysis.objects.get(pk=earlier.pk)
    assert analysis.status == "failed"
    assert "the task queue is unavailable" in analysis.error
    monkeypatch.undo()  # the queue is back
    with django_on_commit_now():
        assert earlier.pk in analyses_reap(now=analysis.finished_at + timedelta(minutes=1))
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).status == "done"


def test_an_analysis_that_loses_the_database_records_why_and_is_queued_again_at_once(
    monkeypatch, api_client, settings
):
    from django.db import OperationalError

    from dradash.analysis import services

    settings.CELERY_TASK_ALWAYS_EAGER = False  # a worker takes what is queued
    earlier, _ = demo_load()
    queued: list[int] = []
    monkeypatch.setattr(services, "analysis_enqueue", queued.append)

    def gone(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "_store", gone)
    analyse_snapshot.apply(args=[earlier.pk])
    analysis = SnapshotAnalysis.objects.get(pk=earlier.pk)
    assert analysis.status == "failed"
    assert analysis.error == (
        "the database was unavailable during the analysis (server closed the connection "
        "unexpectedly); it is tried again at once"
    )
    assert queued == [earlier.pk]
    answer = api_client.get(f"/api/v1/snapshots/{earlier.pk}/findings")
    assert answer.status_code == 503 and "will be retried" in answer.json()["detail"]

    monkeypatch.undo()  # the database is back: the queued task runs
    analyse_snapshot.apply(args=[earlier.pk])
    assert SnapshotAnalysis.objects.get(pk=earlier.pk).status == "done"


def test_an_analysis_over_its_time_limit_fails_with_that_reason_and_is_not_retried(
    monkeypatch, client_logged_in, api_client
):
    from celery.exceptions import SoftTimeLimitExceeded

    earlier, _ = demo_load()

    def endless(state: Any, budget: Any = None) -> None:
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr("dradash.dra.analysis.analyse", endless)
    analyse_snapshot.apply(args=[earlier.pk])
    analysis = SnapshotAnalysis.objects.get(pk=earlier.pk)
    assert analysis.status == "failed" and not analysis.retried
    assert analysis.error.startswith(
        "the analysis took longer than its time limit of 240 s and was stopped"
    )
    assert earlier.pk not in analyses_reap(now=timezone.now() + timedelta(days=1))
    page = client_logged_in.get(reverse("snapshot-detail", args=[earlier.pk]))
    assert "It is not tried again by itself." in page.content.decode()
    answer = api_client.get(f"/api/v1/snapshots/{earlier.pk}/findings")
    assert "is not retried by itself" in answer.json()["detail"]
