"""Snapshots stored and analysed, for tests that read their pages.

Storing a snapshot queues the analyse task on commit, which a test's transaction never
reaches; these run what the task runs (dradash.analysis.services.analysis_run) right away.
"""

from __future__ import annotations

from typing import Any

from dradash.analysis.services import analysis_run
from dradash.snapshots.models import Snapshot
from dradash.snapshots.services import bundle_import


def analysed(snapshot: Snapshot) -> Snapshot:
    analysis_run(snapshot.pk)
    return snapshot


def import_analysed(**kwargs: Any) -> Snapshot:
    """bundle_import(**kwargs), analysed."""
    return analysed(bundle_import(**kwargs))
