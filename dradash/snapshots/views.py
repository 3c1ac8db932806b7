"""Home, snapshot overview, bundle upload and download."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.selectors import snapshot_findings, stuck_pods
from dradash.analysis.views import analysed
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.snapshots.forms import UploadForm
from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.selectors import (
    cluster_list_with_snapshots,
    run_list,
    snapshot_list,
)
from dradash.snapshots.services import bundle_export, upload_run_create


@require_safe
@vary_on_headers("HX-Request")
def home(request: HtmxHttpRequest) -> HttpResponse:
    return render(
        request,
        template_for(request, "snapshots/home.html", "content"),
        {"clusters": cluster_list_with_snapshots(), "runs": run_list()},
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def snapshot_detail(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    stuck, stuck_total = stuck_pods(snapshot)
    return render(
        request,
        template_for(request, "snapshots/overview.html", "content"),
        {
            "snapshot": snapshot,
            "summary": analysis.summary,
            "stuck": stuck,
            "stuck_total": stuck_total,
            "findings": snapshot_findings(snapshot),
            "checklist": analysis.summary.get("checklist", {}),
        },
    )


@require_safe
def snapshot_bundle(request: HtmxHttpRequest, snapshot_id: int) -> StreamingHttpResponse:
    snapshot = get_object_or_404(snapshot_list(), pk=snapshot_id)
    response = StreamingHttpResponse(
        (chunk.encode() for chunk in bundle_export(snapshot)), content_type="application/json"
    )
    filename = f"dradash-{slugify(snapshot.cluster.name) or 'cluster'}-{snapshot.pk}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def upload(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            files = [(f.name or "upload", f.read()) for f in form.cleaned_data["files"]]
            run = upload_run_create(
                files=files, cluster_name=form.cleaned_data["cluster"], user=request.user
            )
            messages.info(request, f"Importing {len(files)} file(s).")
            return redirect("run-detail", run_id=run.pk)
    else:
        form = UploadForm()
    return render(
        request, template_for(request, "snapshots/upload.html", "content"), {"form": form}
    )


@require_safe
@vary_on_headers("HX-Request")
def run_detail(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(SnapshotRun.objects.select_related("snapshot"), pk=run_id)
    return render(request, template_for(request, "snapshots/run.html", "status"), {"run": run})
