"""The base of every JSON API view."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from rest_framework.views import APIView


class BaseApi(APIView):
    """An APIView that answers 401/403 itself instead of redirecting to the login page.

    Session or token authentication and the IsAuthenticated permission (settings.REST_FRAMEWORK)
    still apply: the site-wide LoginRequiredMiddleware only steps aside for API views.
    """

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return login_not_required(super().as_view(**initkwargs))
