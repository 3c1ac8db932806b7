"""Login throttling: django-axes' check in front of Django's ModelBackend."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.http import HttpRequest


class LoginThrottleBackend(AxesStandaloneBackend):
    """Refuse logins of a locked-out username or address (settings.AXES_*), before Django's
    ModelBackend checks the password.

    Every login over HTTP (the login page, the admin's) passes the request and is counted.
    Calls without one (``Client.login`` in tests, code in management commands) come from no
    address and are not throttled, where axes would raise.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
