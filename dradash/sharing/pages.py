"""Which page a share link opens: recorded when it is made, named on the share links page."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.urls import Resolver404, resolve

from dradash.sharing.models import ShareLink

TITLES = {
    "snapshot-detail": "the overview",
    "pod-list": "the Pods list",
    "claim-list": "the claims list",
    "podgroup-list": "the PodGroups list",
    "device-list": "the devices",
    "snapshot-capacity": "the capacity page",
    "snapshot-checklist": "the checklist",
    "snapshot-bundle": "the bundle",
}


def share_link_opens(*, link: ShareLink, path: str) -> None:
    """Record the page the link was made on (a path relative to the site, with its query)."""
    ShareLink.objects.filter(pk=link.pk).update(path=path[:2000])
    link.path = path[:2000]


def page_title(path: str) -> str:
    """ "Pod ml/trainer-0", "the claims list (filtered)", "the overview"; "" when unknown."""
    if not path:
        return ""
    parts = urlsplit(path)
    try:
        match = resolve(parts.path)
    except Resolver404:
        return ""
    kwargs = match.kwargs
    if match.url_name == "pod-detail":
        title = f"Pod {kwargs['namespace']}/{kwargs['name']}"
    elif match.url_name == "claim-detail":
        title = f"claim {kwargs['namespace']}/{kwargs['name']}"
    elif match.url_name == "podgroup-detail":
        title = f"PodGroup {kwargs['namespace']}/{kwargs['name']}"
    elif match.url_name == "node-detail":
        title = f"node {kwargs['name']}"
    elif match.url_name == "device-detail":
        title = f"device {kwargs['driver']}/{kwargs['pool']}/{kwargs['device']}"
    elif match.url_name == "class-detail":
        title = f"DeviceClass {kwargs['name']}"
    else:
        title = TITLES.get(match.url_name or "", "")
    if title and parts.query and match.url_name in TITLES:
        title += " (filtered)"
    return title
