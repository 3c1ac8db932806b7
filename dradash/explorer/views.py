"""The object-chain pages: claim, Pod and device lists; a Pod's, claim's or class's page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django import forms
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from dradash.dra.chain import claim_chain, pod_chain
from dradash.dra.diagnosis import STAGES
from dradash.dra.state import ClusterState
from dradash.explorer.forms import (
    CLAIM_STATES,
    DEVICE_STATES,
    ClaimFilterForm,
    DeviceFilterForm,
    PodFilterForm,
)
from dradash.explorer.selectors import (
    claim_diagnosis,
    claim_explanation,
    claim_filter_options,
    claim_rows,
    class_info,
    device_entries,
    device_filter_options,
    device_inventory,
    device_rows,
    node_utilisation,
    object_findings,
    pod_diagnosis,
    pod_filter_options,
    pod_rows,
    pool_table,
)
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_list, snapshot_state

PAGE_SIZE = 100


def _get_snapshot(pk: int) -> Snapshot:
    return get_object_or_404(snapshot_list(), pk=pk)


def _filtered_list(
    request: HtmxHttpRequest,
    snapshot_id: int,
    form_class: type[forms.Form],
    template: str,
    rows: Callable[[ClusterState, dict[str, Any]], list[Any]],
    extra: Callable[[ClusterState, Page], dict[str, Any]],
) -> HttpResponse:
    """A list page: filter form, one page of rows, the results partial alone for htmx;
    ``extra`` adds to the context what else the page shows."""
    snapshot = _get_snapshot(snapshot_id)
    form = form_class(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("Invalid filter: " + form.errors.as_text())
    state = snapshot_state(snapshot)
    found = rows(state, form.cleaned_data)
    page = Paginator(found, PAGE_SIZE).get_page(form.cleaned_data.get("page") or 1)
    return render(
        request,
        template_for(request, template, "results"),
        {
            "snapshot": snapshot,
            "form": form,
            "filters": form.cleaned_data,
            "page": page,
            **extra(state, page),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
def claim_list(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    return _filtered_list(
        request,
        snapshot_id,
        ClaimFilterForm,
        "explorer/claims.html",
        claim_rows,
        lambda state, page: {
            "options": claim_filter_options(state),
            "states": CLAIM_STATES,
            "stages": STAGES,
            "total": len(state.claims),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
def pod_list(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    return _filtered_list(
        request,
        snapshot_id,
        PodFilterForm,
        "explorer/pods.html",
        pod_rows,
        lambda state, page: {
            "options": pod_filter_options(state),
            "stages": STAGES,
            "total": len(state.dra_pods),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
def pod_detail(
    request: HtmxHttpRequest, snapshot_id: int, namespace: str, name: str
) -> HttpResponse:
    snapshot = _get_snapshot(snapshot_id)
    state = snapshot_state(snapshot)
    pod = state.pods.get((namespace, name))
    if pod is None:
        raise Http404(f"No Pod {namespace}/{name} in snapshot {snapshot.pk}")
    findings = object_findings(state, "Pod", namespace, name)
    for claim in pod.claims:
        findings += object_findings(state, "ResourceClaim", claim.namespace, claim.name)
    return render(
        request,
        template_for(request, "explorer/pod.html", "content"),
        {
            "snapshot": snapshot,
            "chain": pod_chain(state, pod),
            "uses_dra": pod.uses_dra,
            "diagnosis": pod_diagnosis(state, pod) if pod.uses_dra else None,
            "findings": list({id(f): f for f in findings}.values()),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
def claim_detail(
    request: HtmxHttpRequest, snapshot_id: int, namespace: str, name: str
) -> HttpResponse:
    snapshot = _get_snapshot(snapshot_id)
    state = snapshot_state(snapshot)
    claim = state.claims.get((namespace, name))
    if claim is None:
        raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot.pk}")
    verdict = claim_diagnosis(state, claim)
    if verdict.explanation is None and not claim.allocated:
        verdict = replace(verdict, explanation=claim_explanation(state, claim))
    return render(
        request,
        template_for(request, "explorer/claim.html", "content"),
        {
            "snapshot": snapshot,
            "chain": claim_chain(state, claim),
            "diagnosis": verdict,
            "findings": object_findings(state, "ResourceClaim", namespace, name),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
def class_detail(request: HtmxHttpRequest, snapshot_id: int, name: str) -> HttpResponse:
    snapshot = _get_snapshot(snapshot_id)
    state = snapshot_state(snapshot)
    device_class = state.classes.get(name)
    if device_class is None:
        raise Http404(f"No DeviceClass {name} in snapshot {snapshot.pk}")
    return render(
        request,
        template_for(request, "explorer/class.html", "content"),
        {"snapshot": snapshot, "info": class_info(state, device_class)},
    )


@require_safe
@vary_on_headers("HX-Request")
def device_list(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    """The inventory: counts per class, node, driver and pool, then the devices grouped by
    driver, pool and node (only the device rows for htmx)."""
    return _filtered_list(
        request,
        snapshot_id,
        DeviceFilterForm,
        "explorer/devices.html",
        device_rows,
        lambda state, page: {
            "entries": device_entries(state, page.object_list),
            "total": len(state.devices),
            "options": device_filter_options(state),
            "states": DEVICE_STATES,
            "inv": device_inventory(state),
            "nodes": node_utilisation(state),
            "pools": pool_table(state),
        },
    )
