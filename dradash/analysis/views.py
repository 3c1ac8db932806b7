"""Snapshot pages read the stored analysis: until it is there, they say so and refresh."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.selectors import snapshot_analysis
from dradash.htmx import HtmxHttpRequest
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_list

AnalysedView = Callable[..., HttpResponse]


def analysed(view: AnalysedView) -> Callable[..., HttpResponse]:
    """For a view of one snapshot's page: 404 for an unknown snapshot, a page that refreshes
    itself while the snapshot is being analysed (or its error, while a failed analysis waits
    for its retry), else ``view(request, snapshot, analysis, …)``."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, snapshot_id: int, *args: Any, **kwargs: Any) -> Any:
        snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
        analysis = snapshot_analysis(snapshot)
        if not analysis.done:
            return pending_page(request, snapshot, analysis)
        return view(request, snapshot, analysis, *args, **kwargs)

    return wrapper


def pending_page(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    template = "analysis/pending.html"
    if request.htmx and not request.htmx.boosted:
        template += "#status"
    return render(request, template, {"snapshot": snapshot, "analysis": analysis})
