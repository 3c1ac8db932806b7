"""The acceptance checklist and capacity pages of a snapshot."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from dradash.htmx import HtmxHttpRequest
from dradash.readiness.selectors import checklist_tally, snapshot_capacity, snapshot_checklist
from dradash.snapshots.selectors import snapshot_list, snapshot_state

JOBS_SHOWN = 50  # the API has them all


@require_safe
def snapshot_checklist_page(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
    items = snapshot_checklist(snapshot_state(snapshot))
    return render(
        request,
        "readiness/checklist.html",
        {"snapshot": snapshot, "items": items, "tally": checklist_tally(items)},
    )


@require_safe
def snapshot_capacity_page(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
    found = snapshot_capacity(snapshot_state(snapshot))
    jobs = found["jobs"]
    return render(
        request,
        "readiness/capacity.html",
        {
            "snapshot": snapshot,
            "classes": found["classes"],
            "jobs": jobs[:JOBS_SHOWN],
            "jobs_total": len(jobs),
            "jobs_short": sum(1 for j in jobs if j.fits is False),
        },
    )
