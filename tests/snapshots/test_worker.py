"""Uploads processed by a real Celery worker, over real Redis, against the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import kombu.pools
import pytest
import redis
from django.conf import settings
from django.db import connection

from dradash.celery import app as celery_app
from dradash.snapshots import services
from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects

REDIS_URL = os.environ.get("DRADASH_TEST_REDIS_URL") or "redis://127.0.0.1:6379/15"
ROOT = Path(__file__).resolve().parents[2]
BUNDLE = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


@dataclass
class Worker:
    queue: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-5000:] or "(no output)"


def database_url() -> str:
    """DATABASE_URL for the test database this session created (test_<name>)."""
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = quote(db["HOST"] or "", safe="")  # a socket directory becomes %2Fvar%2Frun…
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{auth}{'@' if auth else ''}{host}{port}/{quote(db['NAME'], safe='')}"


def forget_broker_state() -> None:
    """Celery caches its connection pool, queues and routes on first use, and kombu its
    producer pools per broker URL (even eager tasks take a producer): drop them all, so no
    later test gets a pool closed here."""
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
    celery_app._pool = None
    celery_app.__dict__.pop("amqp", None)
    kombu.pools.reset()


@pytest.fixture(scope="module")
def worker(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """One worker for this module, on a queue of its own, and this process sending to it."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
        problem = None
    except redis.RedisError as exc:
        problem = exc
    if problem is not None:  # fail, never skip: CI must not pass without the worker tests
        pytest.fail(
            f"Redis at {REDIS_URL} is not reachable ({problem}). Run `python3 dev.py test`, "
            "which starts it, or set DRADASH_TEST_REDIS_URL.",
            pytrace=False,
        )
    queue = f"dradash-test-{uuid.uuid4().hex[:12]}"
    # The routes of the settings, each queue renamed for this module; the worker serves them all.
    routes = {
        task: {"queue": f"{queue}-{route['queue']}"}
        for task, route in settings.CELERY_TASK_ROUTES.items()
    }
    log = tmp_path_factory.mktemp("worker") / "worker.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not TESTING
    env.update(
        DATABASE_URL=database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        DRADASH_SECRET_KEY=os.environ.get("DRADASH_SECRET_KEY") or "test-only-secret",
        DJANGO_SETTINGS_MODULE="dradash.settings",
    )
    command = [sys.executable, "-m", "celery", "-A", "dradash", "worker", "--pool=solo"]
    queues = ",".join([queue, *(route["queue"] for route in routes.values())])
    command += ["--concurrency=1", "-Q", queues, "--hostname", f"{queue}@%h", "-l", "info"]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle"]
    saved = {
        k: celery_app.conf[k]
        for k in ("broker_url", "task_always_eager", "task_default_queue", "task_routes")
    }
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
    celery_app.conf.update(
        broker_url=REDIS_URL, task_always_eager=False, task_default_queue=queue, task_routes=routes
    )
    forget_broker_state()
    try:
        yield Worker(queue, process, log)
    finally:
        celery_app.conf.update(saved)
        forget_broker_state()
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        client = redis.Redis.from_url(REDIS_URL)
        for key in client.scan_iter(match=f"*{queue}*"):
            client.delete(key)


def wait_until_finished(run: SnapshotRun, worker: Worker, timeout: float = 60) -> SnapshotRun:
    deadline = time.monotonic() + timeout
    while True:
        run.refresh_from_db()
        if run.finished:
            return run
        if worker.process.poll() is not None:
            pytest.fail(
                f"the worker exited with status {worker.process.returncode} before run "
                f"{run.pk} finished (status {run.status}). Worker output:\n{worker.output()}",
                pytrace=False,
            )
        if time.monotonic() > deadline:
            pytest.fail(
                f"run {run.pk} still {run.status} after {timeout:.0f} s on queue {worker.queue}. "
                f"Worker output:\n{worker.output()}",
                pytrace=False,
            )
        time.sleep(0.1)


def test_worker_turns_an_uploaded_bundle_into_a_snapshot(worker: Worker, fixtures_dir: Path):
    data = (fixtures_dir / BUNDLE).read_bytes()

    run = services.upload_run_create(files=[("bundle.yaml", data)], cluster_name="worker-test")
    run = wait_until_finished(run, worker)

    assert run.status == SnapshotRun.Status.SUCCEEDED, f"{run.error}\n{worker.output()}"
    assert run.error == ""
    snapshot = run.snapshot
    assert snapshot is not None
    assert snapshot.cluster.name == "worker-test"
    assert snapshot.source == Snapshot.Source.UPLOAD
    assert snapshot.object_count >= 1
    assert list(snapshot_objects(snapshot, kinds=["ResourceSlice"], fields=("name",)))
    assert not run.files.exists()


def test_worker_marks_a_truncated_bundle_failed_and_stores_nothing(worker: Worker):
    data = b'{"apiVersion": "v1", "kind": "List", "items": ['

    run = services.upload_run_create(files=[("broken.json", data)], cluster_name="worker-test")
    run = wait_until_finished(run, worker)

    assert run.status == SnapshotRun.Status.FAILED
    assert "broken.json" in run.error
    assert "truncated JSON" in run.error
    assert run.snapshot is None
    assert not Snapshot.objects.exists()
    assert not run.files.exists()


def test_worker_stores_a_users_upload_naming_a_live_cluster_in_their_own(
    worker: Worker, django_user_model
):
    from dradash.clusters.models import Cluster
    from tests.snapshots.test_cluster_ownership import forged

    alice = django_user_model.objects.create_user("alice", password="alice-pw-123")
    Cluster.objects.create(name="prod", in_cluster=True, capture_enabled=True)

    run = services.upload_run_create(
        files=[("b.json", forged("prod"))], cluster_name="", user=alice
    )
    run = wait_until_finished(run, worker)

    assert run.status == SnapshotRun.Status.SUCCEEDED, f"{run.error}\n{worker.output()}"
    assert run.snapshot.cluster.name == "prod~alice"
    assert "names cluster prod, which is captured live" in run.notice
    assert not Snapshot.objects.filter(cluster__name="prod").exists()
