"""An analysis and its worker's limits, with a PostgreSQL, Redis and Celery worker of their own.

PostgreSQL lost in the middle of an analysis: the worker waits for it to come back, records the
real cause and queues the analysis again at once, so the snapshot is analysed soon after
PostgreSQL's return — not left "being analysed" (its API answering 503) until the reaper calls
the worker lost, 11 minutes later. And an analysis over its soft time limit ends as a failure
with that reason, leaving the worker free for the next one.

The analysis that takes a while is benchmarks/allocator.py's attack at 60 devices: its one
allocator search runs for its whole budget (seconds, in no need of the database).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks.allocator import attack_bundle
from tests.servers import CeleryWorker, RedisServer, Stack, wait_for

pytestmark = pytest.mark.servers

LAST_SNAPSHOT = "SELECT max(id) FROM snapshots_snapshot"


def analysis_row(stack: Stack, snapshot: int) -> tuple[str, str, int, bool]:
    (row,) = stack.query(
        "SELECT status, error, attempts, started_at IS NOT NULL "
        "FROM analysis_snapshotanalysis WHERE snapshot_id = %s",
        [snapshot],
    )
    return row[0], row[1], row[2], row[3]


def import_attack(stack: Stack, env: dict[str, str], tmp_path: Path, devices: int) -> int:
    """Import the attack bundle as the upload's worker would; the analysis is queued."""
    path = tmp_path / f"attack-{devices}.json"
    path.write_bytes(attack_bundle(devices))
    stack.manage("import_bundle", str(path), "--cluster", f"attack-{devices}", **env)
    (row,) = stack.query(LAST_SNAPSHOT)
    return int(row[0])


def test_an_analysis_that_loses_postgresql_is_failed_with_the_cause_and_retried_at_once(
    stack: Stack, postgres_up: object, redis_server: RedisServer, tmp_path: Path
) -> None:
    # The search stops after 3 s, while PostgreSQL is still away: the results cannot be stored,
    # and the failure cannot be recorded yet either.
    env = {
        **stack.env,
        "CELERY_BROKER_URL": redis_server.url(0),
        "DRADASH_ALLOCATOR_SEARCH_SECONDS": "3",
    }
    worker = CeleryWorker(env, tmp_path).start()
    try:
        snapshot = import_attack(stack, env, tmp_path, 60)
        wait_for(lambda: analysis_row(stack, snapshot)[3], 60, "the analysis to start")
        assert analysis_row(stack, snapshot)[0] == "pending"

        stack.postgres.stop()
        time.sleep(8)  # the analysis searches on, then can neither store nor record anything
        stack.postgres.start()

        def cause() -> tuple[str, str, int, bool] | None:
            row = analysis_row(stack, snapshot)
            return row if "database was unavailable" in row[1] else None

        status, error, attempts, _ = wait_for(
            cause, 60, f"the failure to be recorded\n{worker.output()}", interval=0.05
        )
        assert status in ("failed", "pending")  # failed, and perhaps running again already
        assert "worker was lost" not in error and "it is tried again at once" in error
        assert attempts == 1 or status == "pending"

        wait_for(
            lambda: analysis_row(stack, snapshot)[0] == "done",
            120,
            f"the analysis to be done\n{worker.output()}",
        )
        assert analysis_row(stack, snapshot)[1:3] == ("", 2)
        assert "cannot record its failure yet, the database is unavailable" in (
            worker.log.read_text()
        )
        assert worker.alive
    finally:
        worker.stop()


def test_an_analysis_over_its_soft_time_limit_fails_with_that_reason(
    stack: Stack, postgres_up: object, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = {
        **stack.env,
        "CELERY_BROKER_URL": redis_server.url(0),
        "DRADASH_ANALYSIS_SOFT_TIME_LIMIT": "3",
        "DRADASH_ANALYSIS_TIME_LIMIT": "60",
        "DRADASH_ALLOCATOR_SEARCH_SECONDS": "120",  # the search alone outlasts 3 s
    }
    worker = CeleryWorker(env, tmp_path).start()
    try:
        slow = import_attack(stack, env, tmp_path, 60)
        status, error, _, _ = wait_for(
            lambda: (row := analysis_row(stack, slow))[0] == "failed" and row,
            60,
            f"the analysis to be stopped\n{worker.output()}",
        )
        assert error.startswith("the analysis took longer than its time limit of 3 s")
        assert "not tried again by itself" in error

        # The worker is free: the next snapshot's analysis runs and is done.
        quick = import_attack(stack, env, tmp_path, 8)
        wait_for(
            lambda: analysis_row(stack, quick)[0] == "done",
            60,
            f"the next analysis\n{worker.output()}",
        )
        assert worker.alive
    finally:
        worker.stop()
