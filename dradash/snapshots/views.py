"""Home, snapshot overview, bundle upload and download."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.selectors import stuck_pods, top_findings
from dradash.analysis.views import analysed
from dradash.dra.words import plural
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.middleware import limits_own_body
from dradash.snapshots.forms import (
    UploadForm,
    request_length,
    upload_size_exceeded,
    upload_size_guard,
)
from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.selectors import (
    cluster_list_with_snapshots,
    run_list,
    snapshot_list,
)
from dradash.snapshots.services import (
    UploadRefused,
    bundle_export,
    upload_limits_check,
    upload_run_create,
)


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
    findings, findings_total, finding_codes = top_findings(snapshot)
    return render(
        request,
        template_for(request, "snapshots/overview.html", "content"),
        {
            "snapshot": snapshot,
            "summary": analysis.summary,
            "stuck": stuck,
            "stuck_total": stuck_total,
            "findings": findings,
            "findings_total": findings_total,
            "finding_codes": finding_codes,
            "checklist": analysis.summary.get("checklist", {}),
            "classes": analysis.summary.get("classes", []),  # those a sentence may link to
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


def _refused(request: HtmxHttpRequest, refused: UploadRefused) -> HttpResponse:
    """The upload form again, with why the upload was refused (413 or 429)."""
    form = UploadForm()
    form.full_clean()  # an unbound form: no field errors, room for this one
    form.cleaned_data = {}
    form.add_error(None, str(refused))
    response = render(
        request,
        template_for(request, "snapshots/upload.html", "content"),
        {"form": form},
        status=refused.status,
    )
    if refused.retry_after:
        response["Retry-After"] = str(refused.retry_after)
    return response


@limits_own_body  # DRADASH_UPLOAD_MAX_BYTES, not the other requests' limit
@csrf_exempt  # CSRF is checked by _upload: the limits must be in place before the body is read
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def upload(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        refused = upload_size_guard(request)
        if refused is None:  # the request's length stands for its files' size until they are read
            try:
                upload_limits_check(user=request.user, size=request_length(request))
            except UploadRefused as exc:
                refused = exc
        if refused is not None:
            return _refused(request, refused)
    return _upload(request)


@csrf_protect
def _upload(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        if (refused := upload_size_exceeded(request)) is not None:
            return _refused(request, refused)  # request.POST was read (CSRF): the limit is known
        form = UploadForm(request.POST, request.FILES)
        if form.is_valid():
            # The files go to the database a chunk at a time (Django keeps uploads over
            # FILE_UPLOAD_MAX_MEMORY_SIZE in temporary files): never whole in memory.
            files = [(f.name or "upload", f) for f in form.cleaned_data["files"]]
            try:
                run = upload_run_create(
                    files=files,
                    cluster_name=form.cleaned_data["cluster"],
                    user=request.user,
                    skip_invalid=form.cleaned_data["skip_invalid"],
                )
            except UploadRefused as exc:
                return _refused(request, exc)
            run.refresh_from_db()  # without a broker the import has run already
            if _imported(request, run):
                return redirect("snapshot-detail", snapshot_id=run.snapshot_id)
            return redirect("run-detail", run_id=run.pk)
    else:
        form = UploadForm()
    return render(
        request, template_for(request, "snapshots/upload.html", "content"), {"form": form}
    )


def _imported(request: HtmxHttpRequest, run: SnapshotRun) -> bool:
    """Whether an upload run has stored its snapshot (then the next page says so)."""
    if not (
        run.kind == SnapshotRun.Kind.UPLOAD
        and run.status == SnapshotRun.Status.SUCCEEDED
        and run.snapshot_id
    ):
        return False
    messages.success(request, f"Upload #{run.pk} imported as snapshot #{run.snapshot_id}.")
    if run.notice:
        messages.warning(request, run.notice)
    if run.snapshot and (refused := run.snapshot.refused_count):
        messages.warning(
            request,
            f"{plural(refused, 'invalid object')} {'was' if refused == 1 else 'were'} left out; "
            "“Refused” under “About this snapshot” says which and why.",
        )
    return True


@require_safe
@vary_on_headers("HX-Request")
def run_detail(request: HtmxHttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(SnapshotRun.objects.select_related("snapshot"), pk=run_id)
    # The upload page waits here, polling: once the snapshot is stored, open it.
    if request.htmx and request.GET.get("open") and _imported(request, run):
        return HttpResponseClientRedirect(reverse("snapshot-detail", args=[run.snapshot_id]))
    return render(request, template_for(request, "snapshots/run.html", "status"), {"run": run})
