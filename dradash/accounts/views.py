"""The page of a login refused because of too many failures (django-axes calls it)."""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def locked_out(
    request: HttpRequest, original_response: HttpResponse | None, credentials: Any = None
) -> HttpResponse:
    """429 with the login page's look and how long to wait (settings.AXES_LOCKOUT_CALLABLE).

    Always HTML, without the CORS headers axes adds to its JSON variant."""
    minutes = math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    response = render(
        request,
        "registration/locked_out.html",
        {
            "minutes": minutes,
            "failure_limit": settings.AXES_FAILURE_LIMIT,
            "address_limit": settings.DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT,
        },
        status=429,
    )
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response
