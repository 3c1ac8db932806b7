"""Celery tasks for live capture: thin wrappers around dradash.clusters.services."""

from __future__ import annotations

from celery import shared_task

from dradash.clusters import services


@shared_task(ignore_result=True, acks_late=True)
def capture_run(run_id: int) -> None:
    """Capture the cluster of a queued run (idempotent: the run is claimed first)."""
    services.capture_run_execute(run_id)


@shared_task(ignore_result=True)
def capture_due() -> None:
    """Beat, every minute: queue captures of clusters whose interval has passed."""
    services.capture_due()


@shared_task(ignore_result=True)
def capture_runs_reap() -> None:
    """Beat, every minute: fail capture runs whose worker was lost, and retry them."""
    services.capture_runs_reap()
