"""Creating, listing and revoking share links from the snapshot pages."""

from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from dradash.htmx import HtmxHttpRequest, template_for
from dradash.sharing.forms import ShareCreateForm
from dradash.sharing.models import ShareLink
from dradash.sharing.pages import share_link_opens
from dradash.sharing.selectors import audit_event_list, share_link_list_active
from dradash.sharing.services import (
    REVOKE_REFUSED,
    remote_addr,
    share_link_create,
    share_link_may_revoke,
    share_link_revoke,
    share_path,
    shareable_path,
)
from dradash.snapshots.models import Snapshot
from dradash.snapshots.selectors import snapshot_list


def _get_snapshot(pk: int) -> Snapshot:
    return get_object_or_404(snapshot_list(), pk=pk)


@require_POST
def share_create(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = _get_snapshot(snapshot_id)
    form = ShareCreateForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest("Invalid share request: " + form.errors.as_text())
    current = (request.htmx.current_url_abs_path if request.htmx else None) or form.cleaned_data[
        "path"
    ]
    link, token = share_link_create(
        snapshot=snapshot,
        user=request.user,
        expires_in=timedelta(seconds=form.cleaned_data["expires_in"]),
        remote_addr=remote_addr(request),
    )
    opens = shareable_path(current, snapshot_id=snapshot.pk)
    share_link_opens(link=link, path=opens)
    url = request.build_absolute_uri(share_path(token, opens))
    response = render(
        request,
        template_for(request, "sharing/created.html", "created"),
        {"snapshot": snapshot, "link": link, "url": url},
    )
    # The only response that holds the token.
    patch_cache_control(response, private=True, no_store=True)
    return response


@require_safe
@vary_on_headers("HX-Request")
def share_list(request: HtmxHttpRequest, snapshot_id: int) -> HttpResponse:
    return _share_list(request, _get_snapshot(snapshot_id))


def _share_list(request: HtmxHttpRequest, snapshot: Snapshot) -> HttpResponse:
    links = list(share_link_list_active(snapshot=snapshot))
    for link in links:
        link.may_revoke = share_link_may_revoke(link=link, user=request.user)  # type: ignore[attr-defined]
    return render(
        request,
        template_for(request, "sharing/list.html", "links"),
        {
            "snapshot": snapshot,
            "links": links,
            "events": audit_event_list(snapshot=snapshot, user=request.user),
        },
    )


@require_http_methods(["GET", "POST"])
def share_revoke(request: HtmxHttpRequest, share_id: int) -> HttpResponse:
    """GET asks to confirm (the list's Revoke button without JavaScript; with it, the browser
    asks), POST revokes; either is its creator's or staff's only (403 for anyone else)."""
    link = get_object_or_404(ShareLink.objects.select_related("snapshot"), pk=share_id)
    if request.method == "GET":
        if not share_link_may_revoke(link=link, user=request.user):
            raise PermissionDenied(REVOKE_REFUSED)
        return render(request, "sharing/revoke.html", {"link": link, "snapshot": link.snapshot})
    share_link_revoke(link=link, user=request.user, remote_addr=remote_addr(request))
    if request.htmx:
        return _share_list(request, link.snapshot)
    return redirect("share-list", snapshot_id=link.snapshot_id)
