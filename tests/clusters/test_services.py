"""Capture runs: one at a time per cluster, claimed once, reaped when lost, retention, schedule."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from dradash.analysis.models import SnapshotAnalysis
from dradash.clusters import services
from dradash.clusters.models import Cluster
from dradash.clusters.services import (
    CaptureNotPossible,
    ClusterConfigError,
    capture_due,
    capture_run_create,
    capture_run_execute,
    capture_runs_reap,
    cluster_register,
    error_message,
    snapshots_retain,
)
from dradash.kube.client import KubeError
from dradash.snapshots import members
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects
from dradash.snapshots.services import blobs_prune, snapshot_store
from tests.kubeapi import KubeAPIServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Run ids handed to the capture task (which is not run)."""
    from dradash.clusters import tasks

    sent: list[int] = []
    monkeypatch.setattr(tasks.capture_run, "delay", sent.append)
    return sent


# --- creating runs -------------------------------------------------------------------------


def test_a_new_run_is_queued_and_enqueued_after_commit(
    cluster: Cluster, enqueued: list[int], django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = capture_run_create(cluster)
        assert enqueued == []  # not before the transaction commits
    assert (run.kind, run.status, run.cluster_name, run.attempt) == ("capture", "queued", "prod", 1)
    assert enqueued == [run.pk]


def test_a_second_create_returns_the_active_run(
    cluster: Cluster, enqueued: list[int], django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = capture_run_create(cluster)
        second = capture_run_create(cluster)
    assert second.pk == first.pk
    assert enqueued == [first.pk]
    SnapshotRun.objects.filter(pk=first.pk).update(status="running")
    assert capture_run_create(cluster).pk == first.pk
    assert SnapshotRun.objects.count() == 1


def test_after_a_run_ends_a_new_one_can_start(cluster: Cluster, enqueued: list[int]) -> None:
    first = capture_run_create(cluster)
    SnapshotRun.objects.filter(pk=first.pk).update(status="failed")
    assert capture_run_create(cluster).pk != first.pk


def test_the_database_refuses_two_active_captures_of_one_cluster(cluster: Cluster) -> None:
    SnapshotRun.objects.create(kind="capture", cluster_name="prod", status="running")
    with pytest.raises(IntegrityError), transaction.atomic():
        SnapshotRun.objects.create(kind="capture", cluster_name="prod", status="queued")
    # Uploads and other clusters are not affected.
    SnapshotRun.objects.create(kind="upload", cluster_name="prod", status="queued")
    SnapshotRun.objects.create(kind="capture", cluster_name="staging", status="queued")


def test_a_create_racing_another_returns_the_winner(
    cluster: Cluster, enqueued: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    winner = SnapshotRun.objects.create(kind="capture", cluster_name="prod")
    looks = iter([None])  # the first look misses the winner's run, as in a race
    real = services.active_capture_run
    monkeypatch.setattr(services, "active_capture_run", lambda name: next(looks, real(name)))
    assert capture_run_create(cluster).pk == winner.pk
    assert enqueued == []


def test_clusters_without_credentials_or_disabled_are_not_captured(enqueued) -> None:
    for cluster in (
        Cluster.objects.create(name="imported"),
        Cluster.objects.create(name="off", in_cluster=True, capture_enabled=False),
    ):
        with pytest.raises(CaptureNotPossible, match="cannot be captured"):
            capture_run_create(cluster)
    assert not SnapshotRun.objects.exists()


# --- executing runs ------------------------------------------------------------------------


def test_a_run_claimed_twice_is_captured_once(cluster: Cluster, kube_api: KubeAPIServer) -> None:
    run = capture_run_create(cluster, enqueue=False)

    first = capture_run_execute(run.pk)
    requests = len(kube_api.requests)
    second = capture_run_execute(run.pk)  # a redelivered task

    assert first is not None and first.status == "succeeded"
    assert second is None
    assert len(kube_api.requests) == requests  # the second did not even connect
    assert Snapshot.objects.count() == 1


def test_a_running_run_is_not_taken_over(cluster: Cluster, kube_api: KubeAPIServer) -> None:
    run = SnapshotRun.objects.create(
        kind="capture", cluster_name="prod", status="running", started_at=timezone.now()
    )
    assert capture_run_execute(run.pk) is None
    assert kube_api.requests == []
    run.refresh_from_db()
    assert run.status == "running"


def test_a_missing_run_is_ignored(db: None) -> None:
    assert capture_run_execute(123456) is None


def test_an_unexpected_error_fails_the_run_with_its_type_and_no_traceback(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("dradash.kube.capture.capture", broken)
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None
    assert finished.status == "failed"
    assert finished.error == "ZeroDivisionError: division by zero"
    assert finished.finished_at is not None
    assert not Snapshot.objects.exists()


def test_a_failure_while_storing_leaves_no_snapshot_rows(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    def store_then_break(**kwargs):
        snapshot_store(**kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "snapshot_store", store_then_break)
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None and finished.status == "failed"
    assert finished.error == "RuntimeError: disk full"
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()


def test_an_unreachable_server_fails_the_run_with_a_readable_reason(
    cluster: Cluster, kube_api: KubeAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = services.cluster_kube

    def without_retries(c: Cluster):
        kube = real(c)
        kube.retries = 0
        return kube

    monkeypatch.setattr(services, "cluster_kube", without_retries)
    kube_api.stop()
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None and finished.status == "failed"
    assert finished.error
    assert "Traceback" not in finished.error
    assert "\n" not in finished.error
    assert "cannot reach" in finished.error


def test_a_deleted_kubeconfig_fails_the_run(cluster: Cluster, kubeconfig) -> None:
    kubeconfig.unlink()
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None and finished.status == "failed"
    assert "kubeconfig" in finished.error


def test_error_messages_are_one_line_and_hide_credentials() -> None:
    exc = ValueError("bad header Authorization: Bearer abc.def.ghi\nHTTP response body: {...}")
    assert error_message(exc) == "ValueError: bad header Authorization: Bearer [redacted]"
    assert error_message(KubeError(401, "Unauthorized", "Unauthorized")) == "Unauthorized"
    assert error_message(TimeoutError()) == "TimeoutError"
    assert len(error_message(RuntimeError("x" * 5000))) <= 1000


# --- storing while capturing (committed blobs need transactional test databases) ----------


@pytest.mark.django_db(transaction=True)
def test_a_capture_stores_each_object_once_and_a_recapture_adds_none(
    cluster: Cluster, kube_api: KubeAPIServer
) -> None:
    first = capture_run_execute(capture_run_create(cluster, enqueue=False).pk)
    second = capture_run_execute(capture_run_create(cluster, enqueue=False).pk)

    assert first is not None and first.snapshot is not None
    assert second is not None and second.snapshot is not None
    assert first.snapshot.object_count > 20
    assert ObjectBlob.objects.count() == first.snapshot.object_count
    assert second.snapshot.members == first.snapshot.members


@pytest.mark.django_db(transaction=True)
def test_a_staged_capture_holds_no_object_and_stores_the_snapshot_held_objects_give(
    cluster: Cluster, kube_api: KubeAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dradash.kube import capture

    results: list[tuple[capture.CaptureResult, set]] = []  # and the objects it held
    real_capture = capture.capture

    def recorded(*args, **kwargs):
        result = real_capture(*args, **kwargs)
        results.append((result, set(result.objects)))  # (freed once stored)
        return result

    monkeypatch.setattr(capture, "capture", recorded)

    class Unstaged(services.BlobStager):
        def __init__(self) -> None:
            super().__init__()
            self.enabled = False  # as on SQLite: the objects are held and stored at once

    monkeypatch.setattr(services, "BlobStager", Unstaged)
    held = capture_run_execute(capture_run_create(cluster, enqueue=False).pk)
    monkeypatch.undo()
    monkeypatch.setattr(capture, "capture", recorded)
    staged = capture_run_execute(capture_run_create(cluster, enqueue=False).pk)

    assert held is not None and held.snapshot is not None
    assert staged is not None and staged.snapshot is not None
    [(with_objects, held_keys), (without, staged_keys)] = results
    # The staged capture held no object, only the objects' keys.
    assert staged_keys == set() and without.objects == {}
    assert held_keys == with_objects.keys == without.keys
    assert len(without.keys) > 20
    # The snapshot stored is the one stored from the held objects.
    first, second = held.snapshot, staged.snapshot
    assert second.members == first.members
    assert (second.kinds, second.status, second.object_count) == (
        first.kinds,
        first.status,
        first.object_count,
    )
    assert ObjectBlob.objects.count() == first.object_count


@pytest.mark.django_db(transaction=True)
def test_a_capture_failing_after_its_blobs_were_staged_leaves_none(
    cluster: Cluster, kube_api: KubeAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(**kwargs):
        assert ObjectBlob.objects.exists()  # staged while the lists were read
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "snapshot_store", broken)
    monkeypatch.setattr(services, "snapshot_store_staged", broken)
    finished = capture_run_execute(capture_run_create(cluster, enqueue=False).pk)

    assert finished is not None and finished.status == "failed"
    assert finished.error == "RuntimeError: disk full"
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_prune_between_staging_and_storing_loses_no_object(
    cluster: Cluster,
    kube_api: KubeAPIServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    real_finish = services.BlobStager.finish

    def finish_then_prune(stager):
        staged = real_finish(stager)
        assert blobs_prune() > 0  # e.g. retention of another cluster, just then
        return staged

    monkeypatch.setattr(services.BlobStager, "finish", finish_then_prune)
    with caplog.at_level("WARNING", logger=services.logger.name):
        finished = capture_run_execute(capture_run_create(cluster, enqueue=False).pk)

    assert finished is not None and finished.snapshot is not None
    # The staged objects were not held: the cluster was captured again, holding them.
    assert "capturing again" in caplog.text
    snapshot = finished.snapshot
    assert len(list(snapshot_objects(snapshot, fields=("data",)))) == snapshot.object_count
    assert ObjectBlob.objects.count() == snapshot.object_count


# --- reaping lost runs ---------------------------------------------------------------------


def test_reap_fails_a_run_running_past_the_time_limit_and_retries_it(
    cluster: Cluster, enqueued: list[int], settings, django_capture_on_commit_callbacks
) -> None:
    settings.CELERY_TASK_TIME_LIMIT = 600
    now = timezone.now()
    lost = SnapshotRun.objects.create(
        kind="capture",
        cluster_name="prod",
        status="running",
        started_at=now - timedelta(seconds=601),
    )
    with django_capture_on_commit_callbacks(execute=True):
        result = capture_runs_reap(now=now)

    lost.refresh_from_db()
    assert lost.status == "failed"
    assert lost.error.startswith("worker lost:")
    assert lost.finished_at == now
    [retry] = result.retries
    assert f"retried as run #{retry.pk}" in lost.error
    assert (retry.status, retry.attempt, retry.cluster_name) == ("queued", 2, "prod")
    assert enqueued == [retry.pk]
    assert not Snapshot.objects.exists()


def test_reap_leaves_runs_within_the_limits_alone(cluster: Cluster, enqueued, settings) -> None:
    settings.CELERY_TASK_TIME_LIMIT = 600
    now = timezone.now()
    run = SnapshotRun.objects.create(
        kind="capture", cluster_name="prod", status="running", started_at=now - timedelta(seconds=5)
    )
    SnapshotRun.objects.create(
        kind="upload", cluster_name="x", status="running", started_at=now - timedelta(days=1)
    )
    result = capture_runs_reap(now=now)
    assert result.failed == [] and result.retries == []
    run.refresh_from_db()
    assert run.status == "running"


def test_reap_fails_a_run_queued_too_long(cluster: Cluster, enqueued, settings) -> None:
    settings.DRADASH_CAPTURE_QUEUED_TIMEOUT = 60
    run = SnapshotRun.objects.create(kind="capture", cluster_name="prod")
    result = capture_runs_reap(now=timezone.now() + timedelta(seconds=61))
    run.refresh_from_db()
    assert run.status == "failed"
    assert "no worker took the run within 60 s" in run.error
    assert len(result.retries) == 1


def test_reap_prunes_the_blobs_a_lost_worker_had_staged(cluster: Cluster, enqueued) -> None:
    held = _captured(cluster, 60)
    ObjectBlob.objects.create(digest="0" * 64, kind="Node", name="staged", data="{}")
    SnapshotRun.objects.create(
        kind="capture",
        cluster_name="prod",
        status="running",
        started_at=timezone.now() - timedelta(days=1),
    )

    capture_runs_reap()

    assert list(ObjectBlob.objects.values_list("id", flat=True)) == members.unpack(held.members)


def test_reap_stops_retrying_after_the_last_attempt(cluster: Cluster, enqueued, settings) -> None:
    settings.DRADASH_CAPTURE_MAX_ATTEMPTS = 3
    SnapshotRun.objects.create(
        kind="capture",
        cluster_name="prod",
        status="running",
        attempt=3,
        started_at=timezone.now() - timedelta(days=1),
    )
    result = capture_runs_reap()
    assert len(result.failed) == 1
    assert result.retries == []
    assert not SnapshotRun.objects.filter(status="queued").exists()


def test_a_reaped_run_whose_worker_comes_back_stores_nothing(
    cluster: Cluster, kube_api: KubeAPIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = capture_run_create(cluster, enqueue=False)
    real = services.cluster_kube

    def reaped_meanwhile(c: Cluster):
        SnapshotRun.objects.filter(pk=run.pk).update(status="failed", error="worker lost: …")
        return real(c)

    monkeypatch.setattr(services, "cluster_kube", reaped_meanwhile)
    finished = capture_run_execute(run.pk)
    assert finished is not None
    assert (finished.status, finished.error) == ("failed", "worker lost: …")
    assert not Snapshot.objects.exists()


# --- retention -----------------------------------------------------------------------------


def _captured(cluster: Cluster, minutes_ago: int, *, source: str = "capture", **extra) -> Snapshot:
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n-{minutes_ago}"}}
    snapshot = snapshot_store(
        cluster=cluster,
        objects={("Node", "", f"n-{minutes_ago}"): obj},
        source=source,
        captured_at=timezone.now() - timedelta(minutes=minutes_ago),
    )
    if extra:
        Snapshot.objects.filter(pk=snapshot.pk).update(**extra)
    return snapshot


def test_retention_keeps_the_last_n_and_the_pinned(cluster: Cluster) -> None:
    cluster.keep_last = 2
    snapshots = [_captured(cluster, m) for m in (50, 40, 30, 20, 10)]  # oldest first
    Snapshot.objects.filter(pk=snapshots[0].pk).update(pinned=True)
    uploaded = _captured(cluster, 60, source="upload")
    other = _captured(Cluster.objects.create(name="other"), 70)

    assert snapshots_retain(cluster) == 2

    kept = set(Snapshot.objects.values_list("pk", flat=True))
    assert kept == {snapshots[0].pk, snapshots[3].pk, snapshots[4].pk, uploaded.pk, other.pk}
    # The deleted snapshots' objects are gone, and nothing else.
    assert ObjectBlob.objects.count() == 5
    assert sum(len(members.unpack(s.members)) for s in Snapshot.objects.all()) == 5


def test_retention_zero_keeps_everything(cluster: Cluster) -> None:
    cluster.keep_last = 0
    for m in (3, 2, 1):
        _captured(cluster, m)
    assert snapshots_retain(cluster) == 0
    assert Snapshot.objects.count() == 3


def test_a_capture_applies_retention(cluster: Cluster, kube_api: KubeAPIServer) -> None:
    cluster.keep_last = 1
    cluster.save()
    old = _captured(cluster, 60)
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None and finished.snapshot is not None
    assert list(Snapshot.objects.values_list("pk", flat=True)) == [finished.snapshot.pk]
    assert not Snapshot.objects.filter(pk=old.pk).exists()


def test_a_capture_compacts_the_analyses_beyond_keep_analysed(
    cluster: Cluster, kube_api: KubeAPIServer, analysed
) -> None:
    cluster.keep_analysed = 1
    cluster.save()
    with analysed():
        old = _captured(cluster, 60)
    assert SnapshotAnalysis.objects.get(pk=old.pk).status == "done"
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None and finished.snapshot is not None
    assert SnapshotAnalysis.objects.get(pk=old.pk).status == "compacted"
    assert Snapshot.objects.filter(pk=old.pk).exists()  # within keep_last: only compacted


def test_cluster_register_refuses_a_negative_keep_analysed(kubeconfig) -> None:
    with pytest.raises(ClusterConfigError, match="keep-analysed must be 0 or more"):
        cluster_register(name="prod", kubeconfig_path=str(kubeconfig), keep_analysed=-1)
    cluster, _ = cluster_register(name="prod", kubeconfig_path=str(kubeconfig), keep_analysed=0)
    assert cluster.keep_analysed == 0


# --- the schedule --------------------------------------------------------------------------


def test_capture_due_picks_only_due_clusters(cluster: Cluster, enqueued, kubeconfig) -> None:
    now = timezone.now()

    def make(name: str, **fields) -> Cluster:
        defaults = {"kubeconfig_path": str(kubeconfig), "capture_enabled": True}
        return Cluster.objects.create(name=name, **{**defaults, **fields})

    def last_run(name: str, minutes_ago: int, status: str = "succeeded") -> None:
        run = SnapshotRun.objects.create(kind="capture", cluster_name=name, status=status)
        SnapshotRun.objects.filter(pk=run.pk).update(
            created_at=now - timedelta(minutes=minutes_ago)
        )

    # "prod": 60-minute interval, never captured -> due.
    make("recent", capture_interval=30)
    last_run("recent", 10)  # not due
    make("stale", capture_interval=30)
    last_run("stale", 31)  # due
    make("failed-stale", capture_interval=30)
    last_run("failed-stale", 45, status="failed")  # due: failures count, once per interval
    make("busy", capture_interval=1)
    last_run("busy", 90, status="running")  # a capture is under way
    make("on-demand", capture_interval=0)
    make("disabled", capture_enabled=False)
    Cluster.objects.create(name="imported")
    make("in-cluster", kubeconfig_path="", in_cluster=True, capture_interval=5)

    created = capture_due(now=now)

    assert sorted(r.cluster_name for r in created) == [
        "failed-stale",
        "in-cluster",
        "prod",
        "stale",
    ]
    assert capture_due(now=now) == []  # they are active now


def test_capture_due_allows_beat_a_little_slack(cluster: Cluster, enqueued) -> None:
    now = timezone.now()
    run = SnapshotRun.objects.create(kind="capture", cluster_name="prod", status="succeeded")
    SnapshotRun.objects.filter(pk=run.pk).update(created_at=now - timedelta(minutes=59, seconds=45))
    assert [r.cluster_name for r in capture_due(now=now)] == ["prod"]
