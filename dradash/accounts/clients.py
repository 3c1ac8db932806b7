"""The address a request came from, as far as this deployment can tell."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str | None:
    """The client's IP address: REMOTE_ADDR, or behind DRADASH_TRUSTED_PROXY_COUNT proxies the
    address that many entries from the right of X-Forwarded-For (each proxy appends the address
    it was reached from, so entries further left are whatever the client claimed).

    None when there is no valid address. Login throttling (django-axes) and the share-link audit
    log count by it.
    """
    proxies = settings.DRADASH_TRUSTED_PROXY_COUNT
    value = request.META.get("REMOTE_ADDR") or ""
    if proxies > 0:
        forwarded = [
            a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()
        ]
        if len(forwarded) >= proxies:
            value = forwarded[-proxies]
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None
