from __future__ import annotations

from celery import shared_task

from dradash.snapshots import services


@shared_task(ignore_result=True, acks_late=True)
def upload_run_process(run_id: int) -> None:
    """Turn an uploaded bundle into a snapshot (idempotent: the run is claimed first)."""
    services.upload_run_process(run_id)
