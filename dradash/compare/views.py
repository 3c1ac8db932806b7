"""The diff page: what changed between two snapshots of one cluster."""

from __future__ import annotations

from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from dradash.analysis.selectors import snapshot_analysis
from dradash.analysis.views import pending_page
from dradash.compare import selectors
from dradash.compare.forms import DiffFilterForm
from dradash.compare.selectors import diff_view, snapshot_diff
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_list


def _get_snapshot(pk: int) -> Snapshot:
    snapshot = snapshot_list().filter(pk=pk).first()
    if snapshot is None:
        raise Http404(f"There is no snapshot #{pk}.")
    return snapshot


@require_safe
@vary_on_headers("HX-Request")
def snapshot_diff_page(request: HtmxHttpRequest, before_id: int, after_id: int) -> HttpResponse:
    before = _get_snapshot(before_id)
    after = _get_snapshot(after_id)
    if before.cluster_id != after.cluster_id:
        return render(
            request,
            "400.html",
            {
                "exception": f"Snapshot #{before.pk} is of cluster {before.cluster.name} and "
                f"snapshot #{after.pk} of cluster {after.cluster.name}: only snapshots of the "
                "same cluster can be compared."
            },
            status=400,
        )
    form = DiffFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("Invalid filter: " + form.errors.as_text())
    kind = form.cleaned_data.get("kind") or ""
    # The diff reads what their analyses stored: both are asked for (a compacted one queued
    # again) before the page waits for the first that is not done.
    analyses = [(snapshot, snapshot_analysis(snapshot)) for snapshot in (before, after)]
    for snapshot, analysis in analyses:
        if not analysis.done:
            return pending_page(request, snapshot, analysis)
    result = snapshot_diff(before, after)
    return render(
        request,
        template_for(request, "compare/diff.html", "changes"),
        {
            "snapshot": after,
            "before": before,
            "after": after,
            "form": form,
            "kind": kind,
            "diff": result,
            "view": diff_view(result, before, after, kind),
            "read_budget": selectors.READ_BUDGET,
        },
    )
