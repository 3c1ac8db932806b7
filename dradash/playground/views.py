"""The selector playground: paste a CEL selector, see which devices it matches."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from dradash.analysis.selectors import snapshot_analysis
from dradash.dra import matching
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.playground.forms import PlaygroundForm
from dradash.playground.services import NotAnalysed, selector_evaluate
from dradash.snapshots.selectors import snapshot_list

ROWS = 100  # rows per table, unless ?limit= asks for more


@require_safe
@vary_on_headers("HX-Request")
def playground(request: HtmxHttpRequest) -> HttpResponse:
    form = PlaygroundForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("Invalid parameters: " + form.errors.as_text())
    data = form.cleaned_data
    snapshot = data["snapshot"] or snapshot_list().first()
    expression = data["expression"] or ""
    analysis = snapshot_analysis(snapshot) if snapshot else None
    classes = sorted(analysis.classes) if analysis and analysis.done else []
    evaluation, class_error = None, None
    if expression.strip() and snapshot is not None:
        try:
            evaluation = selector_evaluate(
                expression=expression, snapshot=snapshot, device_class=data["class"] or None
            )
        except matching.UnknownDeviceClass as exc:
            class_error = f"{exc} in snapshot {snapshot.pk}"
        except NotAnalysed as exc:
            class_error = str(exc)
    return render(
        request,
        template_for(request, "playground/playground.html", "results"),
        {
            "form": form,
            "snapshot": snapshot,
            "snapshots": snapshot_list()[:100],
            "classes": classes,
            "device_class": data["class"] or "",
            "expression": expression,
            "evaluation": evaluation,
            "class_error": class_error,
            "limit": data["limit"] or ROWS,
            "examples": EXAMPLES,
        },
    )


EXAMPLES = [
    ("A product", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"),
    (
        "At least 40 GiB",
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
    ),
    (
        "A driver version",
        "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))",
    ),
    ("Guarded lookup", "device.attributes['gpu.nvidia.com'].?index.orValue(-1) == 0"),
]
