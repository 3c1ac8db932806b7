"""The share bar above a snapshot page: the "shared read-only view" banner under a share link,
else the "Share this view" form for a logged-in user on a page a link can show."""

from __future__ import annotations

from typing import Any

from django import template

from dradash.sharing.forms import ShareCreateForm
from dradash.sharing.services import SHARED_VIEWS
from dradash.snapshots.models import Snapshot

register = template.Library()


@register.inclusion_tag("sharing/includes/share_bar.html", takes_context=True)
def share_bar(context: template.Context) -> dict[str, Any]:
    request = context.get("request")
    share = getattr(request, "share", None)
    if share is not None:
        return {"share": share}
    snapshot = context.get("snapshot")
    match = getattr(request, "resolver_match", None)
    user = getattr(request, "user", None)
    if (
        isinstance(snapshot, Snapshot)
        and match is not None
        and match.url_name in SHARED_VIEWS
        and match.kwargs.get("snapshot_id") == snapshot.pk
        and user is not None
        and user.is_authenticated
    ):
        return {
            "snapshot": snapshot,
            "form": ShareCreateForm(initial={"path": request.get_full_path()}),
        }
    return {}


@register.filter
def opens(link: Any) -> str:
    """The page a share link opens first, named ("Pod ml/trainer-0"), or ""."""
    from dradash.sharing.pages import page_title

    return page_title(getattr(link, "path", "") or "")


@register.filter
def site_path(path: str) -> str:
    """A path relative to the site (ShareLink.path) as an address on it."""
    from django.urls import get_script_prefix

    return get_script_prefix() + path.lstrip("/")
