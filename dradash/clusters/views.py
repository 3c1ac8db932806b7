"""Capture now: the button on the home page."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from dradash.clusters.models import Cluster
from dradash.clusters.services import CaptureNotPossible, capture_now
from dradash.htmx import HtmxHttpRequest


@require_POST
def cluster_capture(request: HtmxHttpRequest, cluster_id: int) -> HttpResponse:
    """Queue a capture of the cluster (or join the one under way) and show its progress. Any
    logged-in user may; at most one new capture per cluster every DRADASH_CAPTURE_NOW_INTERVAL.

    htmx gets the run's status fragment, which polls until the run ends; a plain form POST is
    redirected to the run's page.
    """
    cluster = get_object_or_404(Cluster, pk=cluster_id)
    try:
        run = capture_now(cluster=cluster, user=request.user)
    except CaptureNotPossible as exc:
        if request.htmx:
            return render(request, "snapshots/home.html#capture-refused", {"error": str(exc)})
        messages.error(request, str(exc))
        return redirect("home")
    if request.htmx:
        run.refresh_from_db()  # without a broker the capture has already run, eagerly
        return render(request, "snapshots/run.html#status", {"run": run})
    return redirect("run-detail", run_id=run.pk)
