"""The acceptance checklist and capacity pages of a snapshot (read from its stored analysis)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.views import analysed
from dradash.htmx import HtmxHttpRequest
from dradash.snapshots.models import Snapshot

JOBS_SHOWN = 50  # the API has them all


@require_safe
@analysed
def snapshot_checklist_page(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    return render(
        request,
        "readiness/checklist.html",
        {
            "snapshot": snapshot,
            "items": analysis.checklist,
            "tally": analysis.summary.get("checklist", {}),
        },
    )


@require_safe
@analysed
def snapshot_capacity_page(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    jobs = analysis.capacity.get("jobs", [])
    return render(
        request,
        "readiness/capacity.html",
        {
            "snapshot": snapshot,
            "classes": analysis.capacity.get("classes", []),
            "jobs": jobs[:JOBS_SHOWN],
            "jobs_total": len(jobs),
            "jobs_short": sum(1 for j in jobs if j["fits"] is False),
            "extended": analysis.capacity.get("extended_resources", []),
            "unknown": analysis.summary.get("unknown", {}),
        },
    )
