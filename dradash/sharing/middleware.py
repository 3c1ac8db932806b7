"""Serving a snapshot's pages under /share/<token>/ without a login.

ShareLinkMiddleware looks the token up, refuses unknown, expired and revoked links with one
uniform 404, strips the prefix from ``request.path_info`` and sets the script prefix to it, so
every ``{% url %}`` and ``reverse()`` on the page stays under the link. Only GETs of the pages in
SHARED_VIEWS of the link's own snapshot get through; the visitor is anonymous there even when
logged in, so nothing that needs an account shows. LoginRequiredMiddleware (the project's, below)
lets those requests through.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from django.contrib.auth import middleware as auth_middleware
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import get_script_prefix, reverse, set_script_prefix
from django.utils.cache import patch_cache_control

from dradash.dra.words import plural
from dradash.sharing.selectors import share_link_for_token
from dradash.sharing.services import (
    remote_addr,
    share_link_accessed,
    share_link_refused,
    shared_view,
)
from dradash.sharing.throttles import ShareThrottled, share_address_throttle, share_link_throttle

SHARE_PATH = re.compile(r"\A/share/(?P<token>[A-Za-z0-9_-]{1,128})(?P<rest>/.*)\Z", re.DOTALL)


class ShareLinkMiddleware:
    """Place after AuthenticationMiddleware and before LoginRequiredMiddleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        match = SHARE_PATH.match(request.path_info)
        if match is None:
            return self.get_response(request)
        token, rest = match["token"], match["rest"]
        addr = remote_addr(request)
        try:  # before the token is even looked up: guessing tokens is limited too
            share_address_throttle(request, addr=addr)
        except ShareThrottled as exc:
            return _throttled(request, exc)
        described = f"{request.method} {rest}"[:300]
        link = share_link_for_token(token)
        reason = "unknown token" if link is None else link.refusal()
        if link is None or reason is not None:
            share_link_refused(
                link=link, token=token, reason=reason or "", remote_addr=addr, detail=described
            )
            return _no_store(render(request, "sharing/invalid.html", status=404))

        request.share = link  # type: ignore[attr-defined]
        request.user = AnonymousUser()
        base_prefix = get_script_prefix()
        request.path_info = rest
        set_script_prefix(f"{base_prefix}share/{token}/")
        try:
            overview = reverse("snapshot-detail", args=[link.snapshot_id])
            if rest == "/" and request.method in ("GET", "HEAD"):
                # The link itself (and "home" on its pages) opens the snapshot's overview.
                response: HttpResponse = HttpResponseRedirect(overview)
            elif (
                view := shared_view(
                    path_info=rest, method=request.method or "", snapshot_id=link.snapshot_id
                )
            ) is None:
                share_link_refused(
                    link=link, token=token, reason="not shared", remote_addr=addr, detail=described
                )
                response = render(
                    request, "sharing/not_shared.html", {"overview": overview}, status=404
                )
            else:
                try:
                    share_link_throttle(
                        request, link_id=link.pk, addr=addr, download=view == "snapshot-bundle"
                    )
                except ShareThrottled as exc:
                    response = _throttled(request, exc)
                else:
                    share_link_accessed(link=link, remote_addr=addr, detail=described)
                    response = self.get_response(request)
        finally:
            set_script_prefix(base_prefix)
        # The token is in the address: keep it out of caches and of Referer headers.
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Robots-Tag"] = "noindex, nofollow"
        return _no_store(response)


def _throttled(request: HttpRequest, exc: ShareThrottled) -> HttpResponse:
    """429 with Retry-After: a share link's request over a rate (dradash.sharing.throttles)."""
    wait = (
        plural(math.ceil(exc.wait / 60), "minute") if exc.wait > 90 else plural(exc.wait, "second")
    )
    response = render(request, "429.html", {"message": exc.message, "wait": wait}, status=429)
    response["Retry-After"] = str(exc.wait)
    return _no_store(response)


def _no_store(response: HttpResponse) -> HttpResponse:
    patch_cache_control(response, private=True, no_store=True)
    return response


class LoginRequiredMiddleware(auth_middleware.LoginRequiredMiddleware):
    """Django's LoginRequiredMiddleware, except for the requests ShareLinkMiddleware let
    through (it sets ``request.share`` only for a page the link opens)."""

    def process_view(self, request, view_func, view_args, view_kwargs):  # type: ignore[no-untyped-def]
        if getattr(request, "share", None) is not None:
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
