"""PostgreSQL lost in the middle of a capture: the worker waits for it to come back and records
the real cause, so the run is failed within seconds of PostgreSQL's return — not left "running"
until the 11-minute hard time limit and then reaped as "worker lost" — and the cluster can be
captured again at once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kubeapi import KubeAPIServer
from tests.servers import CeleryWorker, RedisServer, Stack, wait_for

pytestmark = pytest.mark.servers

CREATE_RUN = """
from dradash.clusters.models import Cluster
from dradash.clusters.services import capture_run_create
print(capture_run_create(Cluster.objects.get(name="{cluster}")).pk)
"""


@pytest.fixture
def slow_api() -> Iterator[KubeAPIServer]:
    with KubeAPIServer(page_delay=0.4) as api:
        yield api


def run_row(stack: Stack, run_id: int) -> tuple[str, str]:
    (row,) = stack.query("SELECT status, error FROM snapshots_snapshotrun WHERE id = %s", [run_id])
    return row[0], row[1]


def test_a_capture_that_loses_postgresql_is_failed_with_the_cause_once_it_is_back(
    stack: Stack,
    postgres_up: object,
    redis_server: RedisServer,
    slow_api: KubeAPIServer,
    tmp_path: Path,
) -> None:
    env = {**stack.env, "CELERY_BROKER_URL": redis_server.url(0)}
    cluster = "db-lost"
    kubeconfig = slow_api.kubeconfig(tmp_path / "kubeconfig")
    stack.manage("add_cluster", cluster, "--kubeconfig", str(kubeconfig), "--no-schedule")
    worker = CeleryWorker(env, tmp_path).start()
    try:
        run_id = int(stack.shell(CREATE_RUN.format(cluster=cluster), **env))
        wait_for(lambda: run_row(stack, run_id)[0] == "running", 30, "the capture to start")
        time.sleep(1)  # it has stored some blobs

        stack.postgres.stop()
        time.sleep(8)  # the capture fails meanwhile, and cannot write that down yet
        stack.postgres.start()
        back = time.monotonic()

        def finished() -> tuple[str, str] | None:
            status, error = run_row(stack, run_id)
            return (status, error) if status not in ("queued", "running") else None

        status, error = wait_for(finished, 60, f"the run to be failed\n{worker.output()}")
        assert time.monotonic() - back < 30
        assert status == "failed"
        assert "database" in error and "worker lost" not in error, error
        assert "nothing was stored" in error
        assert worker.alive

        # The cluster is free again: the next capture runs and succeeds.
        again = int(stack.shell(CREATE_RUN.format(cluster=cluster), **env))
        assert again != run_id
        wait_for(
            lambda: run_row(stack, again)[0] in ("succeeded", "failed"),
            90,
            f"the next capture\n{worker.output()}",
        )
        assert run_row(stack, again) == ("succeeded", "")
    finally:
        worker.stop()
