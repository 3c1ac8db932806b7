"""A capture carried out by a real Celery worker, over real Redis, into the test database.

The worker fixture is the one of tests/snapshots/test_worker.py: a worker process on a queue of
its own, pointed at this session's PostgreSQL test database.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.utils import timezone

from dradash.clusters import services
from dradash.clusters.tasks import capture_run
from dradash.snapshots.models import ObjectBlob, Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects
from tests.kubeapi import REDACTED_SECRET, KubeAPIServer
from tests.snapshots.test_worker import ROOT, Worker, database_url, wait_until_finished
from tests.snapshots.test_worker import worker as worker  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def test_worker_captures_a_cluster_into_a_snapshot(worker: Worker, tmp_path: Path) -> None:
    with KubeAPIServer() as api:
        api.forbid("priorityclasses", group="scheduling.k8s.io")
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        cluster, _ = services.cluster_register(
            name="worker-capture", kubeconfig_path=str(kubeconfig)
        )

        run = services.capture_run_create(cluster)
        assert services.capture_run_create(cluster).pk == run.pk  # one at a time
        run = wait_until_finished(run, worker)

        assert run.status == SnapshotRun.Status.SUCCEEDED, f"{run.error}\n{worker.output()}"
        assert any(path.startswith("/api/v1/pods") for path in api.paths())

    snapshot = run.snapshot
    assert snapshot is not None
    assert snapshot.cluster.name == "worker-capture"
    assert snapshot.source == Snapshot.Source.CAPTURE
    assert snapshot.status == Snapshot.Status.PARTIAL
    assert snapshot.kinds["PriorityClass"]["status"] == "forbidden"
    assert snapshot.server_version == "v1.36.1"
    assert list(snapshot_objects(snapshot, kinds=["ResourceSlice"], fields=("name",)))
    assert len(list(snapshot_objects(snapshot, fields=("id",)))) == snapshot.object_count
    assert not ObjectBlob.objects.filter(data__contains=REDACTED_SECRET).exists()
    assert run.started_at is not None and run.finished_at is not None


def test_a_worker_killed_mid_capture_leaves_nothing_and_the_run_is_retried(
    worker: Worker, tmp_path: Path
) -> None:
    """SIGKILL a worker in the middle of a capture: no snapshot; the reaper marks the run
    failed, prunes the blobs the worker had staged, and queues a retry, which another worker
    finishes."""
    doomed_queue = f"{worker.queue}-doomed"
    log = tmp_path / "doomed.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(
        DATABASE_URL=database_url(),
        CELERY_BROKER_URL=str(capture_run.app.conf.broker_url),
        DRADASH_SECRET_KEY=os.environ.get("DRADASH_SECRET_KEY") or "test-only-secret",
        DJANGO_SETTINGS_MODULE="dradash.settings",
    )
    command = [sys.executable, "-m", "celery", "-A", "dradash", "worker", "--pool=solo"]
    command += ["-Q", doomed_queue, "--hostname", f"{doomed_queue}@%h", "-l", "info"]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle"]
    with KubeAPIServer(page_delay=0.5) as api:  # a capture that takes several seconds
        kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
        cluster, _ = services.cluster_register(name="doomed", kubeconfig_path=str(kubeconfig))
        with log.open("wb") as out:
            doomed = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
        try:
            run = services.capture_run_create(cluster, enqueue=False)
            capture_run.apply_async(args=[run.pk], queue=doomed_queue)
            deadline = time.monotonic() + 60
            # Killed once it has staged blobs: committed while its lists still download.
            while not ObjectBlob.objects.exists():
                assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
                time.sleep(0.1)
            run.refresh_from_db()
            assert run.status == SnapshotRun.Status.RUNNING
            doomed.send_signal(signal.SIGKILL)
            doomed.wait(timeout=15)
        finally:
            if doomed.poll() is None:
                doomed.kill()
                doomed.wait()

        run.refresh_from_db()
        assert run.status == SnapshotRun.Status.RUNNING  # nobody is left to say otherwise
        assert not Snapshot.objects.exists()

        api.page_delay = 0.0
        later = timezone.now() + timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 1)
        with mock.patch.object(capture_run, "delay"):  # the retry waits until we looked
            reaped = services.capture_runs_reap(now=later)
        assert [r.pk for r in reaped.failed] == [run.pk]
        assert not ObjectBlob.objects.exists()  # what it had staged is pruned
        (retry,) = reaped.retries
        capture_run.delay(retry.pk)
        assert retry.attempt == 2
        retry = wait_until_finished(retry, worker)
        assert retry.status == SnapshotRun.Status.SUCCEEDED, f"{retry.error}\n{worker.output()}"

    run.refresh_from_db()
    assert run.status == SnapshotRun.Status.FAILED
    assert run.error.startswith("worker lost") and f"run #{retry.pk}" in run.error
    assert Snapshot.objects.get() == retry.snapshot
    assert retry.snapshot.status == Snapshot.Status.COMPLETE
