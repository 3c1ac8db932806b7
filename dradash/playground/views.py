"""The selector playground: paste a CEL selector, see which devices it matches."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers
from rest_framework.throttling import ScopedRateThrottle

from dradash.analysis.selectors import snapshot_analysis, summary_figure
from dradash.cache import CacheUnavailable
from dradash.dra import matching
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.playground.forms import PlaygroundForm
from dradash.playground.services import (
    EvaluationRefused,
    NotAnalysed,
    evaluation_time,
    selector_evaluate,
)
from dradash.snapshots.selectors import snapshot_list

ROWS = 50  # rows per table, unless ?limit= asks for more
ERROR_ROWS = 10  # devices shown per error message


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
        if refusal := _rate_limited(request):
            return refusal
        try:
            with evaluation_time(request.user.pk) as seconds:
                evaluation = selector_evaluate(
                    expression=expression,
                    snapshot=snapshot,
                    device_class=data["class"] or None,
                    time_limit=seconds,
                )
        except EvaluationRefused as exc:
            return _too_many(request, str(exc), exc.retry_after)
        except CacheUnavailable:
            return _counter_unavailable(request)
        except matching.UnknownDeviceClass as exc:
            class_error = f"{exc} in snapshot {snapshot.pk}"
        except NotAnalysed as exc:
            class_error = str(exc)
    limit = data["limit"] or ROWS
    # What an expression is evaluated against, said while there is none.
    ready = analysis is not None and analysis.done and evaluation is None and not class_error
    devices = summary_figure(snapshot, "devices") if ready else None
    # A bundle without ResourceSlices proves nothing about the cluster's devices.
    devices_unknown = summary_figure(snapshot, "unknown__devices") if ready else None
    errors, unknown, misses, misses_total = [], [], [], 0
    misspelt: list[matching.ErrorHint] = []
    other_drivers = None
    if evaluation is not None and not evaluation.compile_error:
        errors = [
            (message, rows, evaluation.error_hint(message, rows))
            for message, rows in evaluation.error_groups
        ]
        unknown = evaluation.unknown_groups
        hints = [hint for _, _, hint in errors]
        misspelt = evaluation.misspelt([hint for hint in hints if hint is not None])
        other_drivers = evaluation.other_drivers(hints)
        nearest = evaluation.nearest_misses
        misses_total = len(nearest)
        misses = [(row, evaluation.clauses(row)) for row in nearest[:limit]]
    return render(
        request,
        template_for(request, "playground/playground.html", "results"),
        {
            "form": form,
            "errors": errors,
            "unknown": unknown,
            "misspelt": misspelt,
            "other_drivers": other_drivers,
            "errors_shown": ERROR_ROWS,
            "misses": misses,
            "misses_total": misses_total,
            "snapshot": snapshot,
            "snapshots": snapshot_list()[:100],
            "classes": classes,
            "devices": devices,
            "devices_unknown": devices_unknown,
            "device_class": data["class"] or "",
            "expression": expression,
            "evaluation": evaluation,
            "class_error": class_error,
            # A new snapshot, new classes: the one response that swaps the class select.
            "classes_changed": bool(request.htmx) and request.htmx.trigger_name == "snapshot",
            "limit": limit,
            "examples": EXAMPLES,
        },
    )


class _SelectorScope:
    """What ScopedRateThrottle reads of a view: the selector API's scope, so that the page and
    the API count against one limit per user."""

    throttle_scope = "selectors"


def _rate_limited(request: HtmxHttpRequest) -> HttpResponse | None:
    """A 429 page once the user has evaluated DRADASH_SELECTOR_RATE selectors (page and API
    together); a 503 when the counter cannot be read (its cache is down: fail closed)."""
    throttle = ScopedRateThrottle()
    try:
        allowed = throttle.allow_request(request, _SelectorScope())  # type: ignore[arg-type]
    except CacheUnavailable:
        return _counter_unavailable(request)
    if allowed:
        return None
    wait = throttle.wait()
    return _too_many(
        request,
        f"Too many selector evaluations: the limit is {throttle.rate} per user, "
        "for this page and the selector API together.",
        None if wait is None else max(1, round(wait)),
    )


def _too_many(request: HtmxHttpRequest, message: str, retry_after: int | None) -> HttpResponse:
    response = render(request, "429.html", {"message": message}, status=429)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _counter_unavailable(request: HtmxHttpRequest) -> HttpResponse:
    return render(
        request,
        "503.html",
        {
            "reason": "Selector evaluations are counted in a cache that is unavailable; "
            "try again in a minute."
        },
        status=503,
    )


# Each names the driver first: other drivers' devices have no gpu.nvidia.com attributes or
# capacities, and looking up a key that is not there is an error, not a "no" (false && error
# is false).
EXAMPLES = [
    (
        "A product",
        "device.driver == 'gpu.nvidia.com' &&\n"
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'",
    ),
    (
        "At least 40 GiB",
        "device.driver == 'gpu.nvidia.com' &&\n"
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0",
    ),
    (
        "A driver version",
        "device.driver == 'gpu.nvidia.com' &&\n"
        "device.attributes['gpu.nvidia.com'].driverVersion.isGreaterThan(semver('550.0.0'))",
    ),
    (
        "Guarded lookup",
        "device.attributes['gpu.nvidia.com'].?architecture.orValue('') == 'Hopper'",
    ),
]
