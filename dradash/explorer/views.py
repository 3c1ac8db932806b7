"""The object-chain pages: claim, Pod and device lists; a Pod's, claim's or class's page.

Every page reads the snapshot's stored analysis (dradash.analysis); lists filter, sort and
paginate in SQL through the FilterSet their API shares.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import cached_property
from typing import Any

import django_filters
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from dradash.analysis.filters import (
    CLAIM_STATES,
    DEVICE_STATES,
    PODGROUP_STATES,
    SEVERITIES,
    ClaimFilter,
    DeviceFilter,
    PodFilter,
    PodGroupFilter,
)
from dradash.analysis.models import SnapshotAnalysis
from dradash.analysis.selectors import (
    claim_detail as claim_page,
)
from dradash.analysis.selectors import (
    claim_names,
    claim_verdicts,
    class_claims,
    device_detail,
    device_entries,
    device_history,
    device_pool,
    device_rows,
    device_timeline,
    member_claims,
    node_detail,
    node_devices,
    node_exists,
    pod_timeline,
    pod_verdicts,
    podgroup_detail,
    podgroup_rows,
    pool_rows,
    snapshot_search,
)
from dradash.analysis.selectors import (
    pod_detail as pod_page,
)
from dradash.analysis.views import analysed
from dradash.dra.analysis import device_counters, device_display, node_rules
from dradash.dra.diagnosis import STAGES
from dradash.explorer.forms import SearchForm
from dradash.htmx import HtmxHttpRequest, template_for
from dradash.snapshots.models import Snapshot

PAGE_SIZE = 100
DEVICES_PAGE_SIZE = 50  # a device row shows much more than a Pod's or a claim's
POOLS_SHOWN = 50  # on the devices page, those that need attention first; the API lists all
CLASS_CLAIMS_SHOWN = 50  # the claims list, filtered by class, has them all


def _filtered_list(
    request: HtmxHttpRequest,
    snapshot: Snapshot,
    filterset: django_filters.FilterSet,
    template: str,
    **context: Any,
) -> HttpResponse:
    """A list page: filters, one page of rows, the results partial alone for htmx."""
    if not filterset.is_valid():
        return HttpResponseBadRequest("Invalid filter: " + filterset.errors.as_text())
    page = _page(filterset, snapshot, PAGE_SIZE, context["total"], request.GET.get("page"))
    return render(
        request,
        template_for(request, template, "results"),
        {
            "snapshot": snapshot,
            "filters": _raw(filterset),
            "page": page,
            **context,
        },
    )


class _Paginator(Paginator):
    """A Paginator that counts the rows of a filter once per process: a snapshot's rows never
    change, so neither does how many of them a filter keeps (counting thousands of rows was
    most of a filtered page of a 5,000-node snapshot). An unfiltered list's count is the
    analysis's."""

    COUNTS: OrderedDict[tuple[Any, ...], int] = OrderedDict()
    SIZE = 512
    _lock = threading.Lock()

    def __init__(self, object_list: Any, per_page: int, key: tuple[Any, ...] | None) -> None:
        super().__init__(object_list, per_page)
        self.key = key

    @cached_property
    def count(self) -> int:
        counts = type(self).COUNTS
        if self.key is not None:
            with self._lock:
                if (known := counts.get(self.key)) is not None:
                    counts.move_to_end(self.key)
                    return known
        found = super().count
        if self.key is not None:
            with self._lock:
                counts[self.key] = found
                while len(counts) > self.SIZE:
                    counts.popitem(last=False)
        return found


def _page(
    filterset: django_filters.FilterSet, snapshot: Snapshot, per_page: int, total: int, number: Any
) -> Any:
    """The requested page of the filtered rows; ``total`` is how many rows there are without
    any filter."""
    filters = tuple(
        sorted(
            (name, str(value))
            for name, value in filterset.form.cleaned_data.items()
            if name != "sort" and value not in (None, "", [])
        )
    )
    key = (filterset._meta.model._meta.label, snapshot.pk, filters)
    paginator = _Paginator(filterset.qs, per_page, key)
    if not filters:
        paginator.count = total  # type: ignore[misc]
    return paginator.get_page(number)


def _raw(filterset: django_filters.FilterSet) -> dict[str, str]:
    """The filters as given (valid ones), for the form's fields and the pager's links."""
    return {name: str(filterset.data.get(name) or "") for name in filterset.filters}


@require_safe
@vary_on_headers("HX-Request")
@analysed
def claim_list(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    analysis.load("summary", "options")
    return _filtered_list(
        request,
        snapshot,
        ClaimFilter(request.GET, claim_verdicts(snapshot)),
        "explorer/claims.html",
        options=analysis.options.get("claims", {}),
        states=CLAIM_STATES,
        stages=STAGES,
        severities=SEVERITIES,
        total=analysis.summary.get("claims", 0),
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def pod_list(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    analysis.load("summary", "options")
    return _filtered_list(
        request,
        snapshot,
        PodFilter(request.GET, pod_verdicts(snapshot)),
        "explorer/pods.html",
        options=analysis.options.get("pods", {}),
        stages=STAGES,
        total=analysis.summary.get("dra_pods", 0),
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def pod_detail(
    request: HtmxHttpRequest,
    snapshot: Snapshot,
    analysis: SnapshotAnalysis,
    namespace: str,
    name: str,
) -> HttpResponse:
    detail = pod_page(snapshot, namespace, name)
    if detail is None:
        raise Http404(f"No Pod {namespace}/{name} in snapshot {snapshot.pk}")
    return render(
        request,
        template_for(request, "explorer/pod.html", "content"),
        {
            "snapshot": snapshot,
            "detail": detail,
            "timeline": pod_timeline(snapshot, detail.verdict),
            "chain": detail.chain,
            "classes": analysis.summary.get("classes", []),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def claim_detail(
    request: HtmxHttpRequest,
    snapshot: Snapshot,
    analysis: SnapshotAnalysis,
    namespace: str,
    name: str,
) -> HttpResponse:
    detail = claim_page(snapshot, namespace, name)
    if detail is None:
        raise Http404(f"No ResourceClaim {namespace}/{name} in snapshot {snapshot.pk}")
    return render(
        request,
        template_for(request, "explorer/claim.html", "content"),
        {
            "snapshot": snapshot,
            "detail": detail,
            "chain": detail.chain,
            "classes": analysis.summary.get("classes", []),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def podgroup_list(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    analysis.load("summary", "options")
    return _filtered_list(
        request,
        snapshot,
        PodGroupFilter(request.GET, podgroup_rows(snapshot)),
        "explorer/podgroups.html",
        options=analysis.options.get("podgroups", {}),
        states=PODGROUP_STATES,
        total=analysis.summary.get("podgroups", 0),
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def podgroup_page(
    request: HtmxHttpRequest,
    snapshot: Snapshot,
    analysis: SnapshotAnalysis,
    namespace: str,
    name: str,
) -> HttpResponse:
    group = podgroup_detail(snapshot, namespace, name)
    if group is None:
        raise Http404(f"No PodGroup {namespace}/{name} in snapshot {snapshot.pk}")
    data = group.data
    claims = claim_names(snapshot, namespace, [c["claim"] for c in data["claims"] if c["claim"]])
    # The objects its summary may name: its members and their claims (dradash.ui.links).
    refs = [{"kind": "Pod", "namespace": namespace, "name": m["pod"]} for m in data["members"]]
    refs += [
        {"kind": "ResourceClaim", "namespace": namespace, "name": c}
        for c in sorted(claims | member_claims(snapshot, namespace, name))
    ]
    return render(
        request,
        template_for(request, "explorer/podgroup.html", "content"),
        {
            "snapshot": snapshot,
            "group": group,
            "data": data,
            "need": data["min_count"] if data["min_count"] is not None else len(data["members"]),
            "claims_existing": claims,
            "refs": refs,
        },
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def class_detail(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis, name: str
) -> HttpResponse:
    info = analysis.classes.get(name)
    if info is None:
        raise Http404(f"No DeviceClass {name} in snapshot {snapshot.pk}")
    return render(
        request,
        template_for(request, "explorer/class.html", "content"),
        {
            "snapshot": snapshot,
            "info": info,
            "claims": class_claims(snapshot, name, CLASS_CLAIMS_SHOWN),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def device_list(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    """The inventory: counts per class, node, driver and pool, then the devices grouped by
    driver, pool and node (only the device rows for htmx)."""
    filterset = DeviceFilter(request.GET, device_rows(snapshot), snapshot_id=snapshot.pk)
    if not filterset.is_valid():
        return HttpResponseBadRequest("Invalid filter: " + filterset.errors.as_text())
    full = not (request.htmx and not request.htmx.boosted)
    analysis.load("summary", *(("options", "inventory") if full else ()))
    page = _page(
        filterset,
        snapshot,
        DEVICES_PAGE_SIZE,
        analysis.summary.get("devices", 0),
        request.GET.get("page"),
    )
    context: dict[str, Any] = {
        "snapshot": snapshot,
        "filters": _raw(filterset),
        "page": page,
        "entries": device_entries(snapshot, list(page.object_list)),
        "total": analysis.summary.get("devices", 0),
    }
    if full:
        pools = pool_rows(snapshot)
        context |= {
            "options": analysis.options.get("devices", {}),
            "states": DEVICE_STATES,
            "inv": analysis.inventory,
            "unknown": analysis.summary.get("unknown", {}),
            "pools": [p.data for p in pools[:POOLS_SHOWN]],
            "pools_total": pools.count(),
        }
    return render(request, template_for(request, "explorer/devices.html", "results"), context)


@require_safe
@vary_on_headers("HX-Request")
@analysed
def snapshot_search_page(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis
) -> HttpResponse:
    """Pods, claims and nodes of the snapshot by name (the header's search box); one hit
    opens its page."""
    form = SearchForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest("Invalid search: " + form.errors.as_text())
    query = form.cleaned_data["q"]
    found = snapshot_search(snapshot, query) if query else None
    if found is not None and found.exact and not request.htmx:  # the one it names exactly
        kind, namespace, name = found.exact
        if kind == "node":
            return redirect("node-detail", snapshot.pk, name)
        return redirect(f"{kind}-detail", snapshot.pk, namespace, name)
    if found is not None and found.total == 1 and not request.htmx:
        if found.pods:
            return redirect("pod-detail", snapshot.pk, found.pods[0].namespace, found.pods[0].name)
        if found.claims:
            c = found.claims[0]
            return redirect("claim-detail", snapshot.pk, c.namespace, c.name)
    return render(
        request,
        template_for(request, "explorer/search.html", "results"),
        {"snapshot": snapshot, "query": query, "found": found},
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def node_page(
    request: HtmxHttpRequest, snapshot: Snapshot, analysis: SnapshotAnalysis, name: str
) -> HttpResponse:
    """A node: its drivers and slices, its devices and who holds them, taints, the DRA Pods on
    it, its events."""
    node = node_detail(snapshot, name)
    if node is None:
        raise Http404(
            f"Node {name} is not in snapshot #{snapshot.pk}: the snapshot has no Node of that "
            "name, though a Pod, a claim or a ResourceSlice may name it (a node deleted or "
            "renamed, or a capture without Nodes)."
        )
    devices = node_devices(snapshot, name)
    return render(
        request,
        template_for(request, "explorer/node.html", "content"),
        {
            "snapshot": snapshot,
            "node": node.data,
            "devices": [(row, device_display(row.data)) for row in devices],
            "rules": node_rules([row.data for row in devices]),
        },
    )


@require_safe
@vary_on_headers("HX-Request")
@analysed
def device_page(
    request: HtmxHttpRequest,
    snapshot: Snapshot,
    analysis: SnapshotAnalysis,
    driver: str,
    pool: str,
    device: str,
) -> HttpResponse:
    """A device: all its attributes, capacity, the counters it consumes, taints, binding
    conditions, the claims and Pods holding it, its node, and its history in the cluster."""
    row = device_detail(snapshot, driver, pool, device)
    if row is None:
        raise Http404(
            f"Device {driver}/{pool}/{device} is not in snapshot #{snapshot.pk}: no current "
            "ResourceSlice of that pool publishes it."
        )
    data = row.data
    return render(
        request,
        template_for(request, "explorer/device.html", "content"),
        {
            "snapshot": snapshot,
            "row": row,
            "data": data,
            "v": device_display(data),
            "counters": device_counters(data, device_pool(snapshot, driver, pool)),
            "history": device_history(snapshot, driver, pool, device),
            "timeline": device_timeline(snapshot, driver, pool, device),
            "node_known": bool(row.node) and node_exists(snapshot, row.node),
        },
    )
