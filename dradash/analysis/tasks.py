"""The analyse tasks: thin wrappers around dradash.analysis.services."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from dradash.analysis import services

logger = logging.getLogger(__name__)


@shared_task(
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.DRADASH_ANALYSIS_SOFT_TIME_LIMIT,
    time_limit=settings.DRADASH_ANALYSIS_TIME_LIMIT,
)
def analyse_snapshot(snapshot_id: int) -> None:
    """Analyse a stored snapshot (idempotent: a repeat replaces what was stored). A failure is
    recorded on the snapshot's analysis and analyses_reap tries it again later (one that lost
    the database, at once; one that hit the soft time limit, not by itself); a worker that
    dies mid-run leaves the message unacknowledged, so another worker gets it."""
    try:
        services.analysis_run(snapshot_id)
    except Exception:
        logger.exception("analysis of snapshot %s failed", snapshot_id)


@shared_task(ignore_result=True)
def analyses_reap() -> None:
    """Beat, every minute: queue again failed and lost analyses (see services.analyses_reap)."""
    services.analyses_reap()


@shared_task(ignore_result=True)
def facts_prune() -> None:
    """Beat, every hour: delete the facts no snapshot shows any more (see
    services.facts_prune)."""
    services.facts_prune()
