from __future__ import annotations

from celery import shared_task

from dradash.snapshots import services


# acks_late with reject_on_worker_lost: when the worker process dies mid-import (killed for
# want of memory), the message goes back to the queue and the next delivery records the run as
# failed (services.upload_run_process) instead of leaving it "running".
@shared_task(ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def upload_run_process(run_id: int) -> None:
    """Turn an uploaded bundle into a snapshot (idempotent: the run is claimed first)."""
    services.upload_run_process(run_id)


@shared_task(ignore_result=True)
def upload_runs_reap() -> None:
    """Beat, every minute: fail upload runs whose worker and message were both lost."""
    services.upload_runs_reap()
