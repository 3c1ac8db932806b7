"""Rate limits of what share links serve, per link and per client address: pages at
DRADASH_SHARE_RATE, bundle downloads (the heaviest thing a link serves) much more strictly at
DRADASH_SHARE_DOWNLOAD_RATE.

Counted as the selector API's DRF throttle counts: a sliding window in the default cache, so
every web process shares the counts when DRADASH_CACHE_URL is set. While Redis is down, pages
work without the cache as every page does (their counters count nothing then), but downloads
are refused (503) rather than let through unlimited: only their keys have the prefix the cache
is strict about (``throttle_``, dradash.cache).
"""

from __future__ import annotations

import math

from django.conf import settings
from django.http import HttpRequest
from rest_framework.throttling import SimpleRateThrottle


class _Count(SimpleRateThrottle):
    """One counter: ``rate`` for the requests of ``ident`` in ``scope``; ``strict``: refuse
    (the cache raises CacheUnavailable) when it cannot count."""

    def __init__(self, scope: str, rate: str, ident: str, *, strict: bool) -> None:
        self.scope, self.rate, self.ident = scope, rate, ident
        if not strict:
            self.cache_format = "share_%(scope)s_%(ident)s"
        super().__init__()

    def get_cache_key(self, request: HttpRequest, view: object) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.ident}


class ShareThrottled(Exception):
    """A share link's request over one of its rates: ``message`` says which, ``wait`` is the
    seconds until one more request is allowed."""

    def __init__(self, message: str, wait: int) -> None:
        super().__init__(message)
        self.message, self.wait = message, wait


def _count(
    request: HttpRequest, scope: str, rate: str, ident: str, what: str, *, strict: bool = False
) -> None:
    counter = _Count(scope, rate, ident, strict=strict)
    if not counter.allow_request(request, None):
        wait = max(1, math.ceil(counter.wait() or counter.duration))
        raise ShareThrottled(f"Too many {what}: the limit is {rate}.", wait)


def share_address_throttle(request: HttpRequest, *, addr: str | None) -> None:
    """Count a request under /share/ from ``addr``, whatever its link (a wrong token too);
    raises ShareThrottled over DRADASH_SHARE_RATE."""
    rate = settings.DRADASH_SHARE_RATE
    _count(request, "share_addr", rate, addr or "unknown", "requests from your address")


def share_link_throttle(
    request: HttpRequest, *, link_id: int, addr: str | None, download: bool
) -> None:
    """Count a request a link serves; a bundle download counts against the download rate too,
    per link and per address. Raises ShareThrottled over a rate."""
    _count(
        request, "share_link", settings.DRADASH_SHARE_RATE, str(link_id), "requests with this link"
    )
    if download:
        rate = settings.DRADASH_SHARE_DOWNLOAD_RATE
        _count(
            request,
            "share_download_link",
            rate,
            str(link_id),
            "bundle downloads with this link",
            strict=True,
        )
        _count(
            request,
            "share_download_addr",
            rate,
            addr or "unknown",
            "bundle downloads from your address",
            strict=True,
        )
