"""Which failed logins count against whom (django-axes' handler, settings.AXES_HANDLER).

Counted per user name *from one address* (DRADASH_LOGIN_FAILURE_LIMIT, 10) and per address
whatever the user names (DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT, 50), never per user name alone:
failures from elsewhere cannot lock a user out (10 wrong passwords from any address locked
``admin`` out for everyone), while guessing from one address stays throttled, and guessing many
user names from one address too. A successful login forgets only its own user name's failures
from its address, so logging in to one's own account does not reset the count of guesses made
at others.
"""

from __future__ import annotations

from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import QuerySet, Sum
from django.http import HttpRequest


class LoginLockoutHandler(AxesDatabaseHandler):
    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        """One number that axes compares with AXES_FAILURE_LIMIT: the failures of this user
        name from this address, or those from this address scaled so that they reach the limit
        at DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT, whichever is nearer it."""
        recent = _from_address(request).filter(attempt_time__gte=get_cool_off_threshold(request))
        username = get_client_username(request, credentials)
        pair = _failures(recent.filter(username=username))
        address = _failures(recent)
        limit = settings.AXES_FAILURE_LIMIT
        return max(pair, address * limit // settings.DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT)

    def reset_user_attempts(
        self, request: HttpRequest, credentials: dict[str, Any] | None = None
    ) -> int:
        """After a successful login: its user name's failures from its address, nothing else."""
        username = get_client_username(request, credentials)
        count, _ = _from_address(request).filter(username=username).delete()
        return count


def _from_address(request: HttpRequest) -> QuerySet[AccessAttempt]:
    """The failures recorded from the request's address (axes keeps a row per user name,
    address and user agent)."""
    return AccessAttempt.objects.filter(ip_address=request.axes_ip_address)  # type: ignore[attr-defined]


def _failures(attempts: QuerySet[AccessAttempt]) -> int:
    return attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0
