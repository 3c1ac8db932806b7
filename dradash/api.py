"""The base of every JSON API view, its JSON parser and its exception handler.

Every error under /api/ is JSON (``{"detail": …}``): DRF's own errors through
``exception_handler``, everything Django answers itself (an unknown URL, a body too large, a
server error) through dradash.middleware.ApiErrorsMiddleware. A request without valid
credentials gets 401 with ``WWW-Authenticate: Token`` (the token authentication comes first in
settings.REST_FRAMEWORK, and DRF takes the header from the first class).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from dradash.cache import CacheUnavailable
from dradash.errors import database_unavailable


class BaseApi(APIView):
    """An APIView that answers 401/403 itself instead of redirecting to the login page.

    Token or session authentication and the IsAuthenticated permission (settings.REST_FRAMEWORK)
    still apply: the site-wide LoginRequiredMiddleware only steps aside for API views.
    """

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        return login_not_required(super().as_view(**initkwargs))


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = "The service is temporarily unavailable; try again shortly."
    default_code = "service_unavailable"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, plus: the rate limiter's store down → 503; the database unavailable or
    too slow → 503; too deep a structure → 400. Anything else unexpected is left to Django
    (a logged 500, made JSON by ApiErrorsMiddleware)."""
    if isinstance(exc, CacheUnavailable):
        exc = ServiceUnavailable(f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    elif (reason := database_unavailable(exc)) is not None:
        exc = ServiceUnavailable(reason)
    elif isinstance(exc, RecursionError):
        exc = exceptions.ParseError("The request is nested too deeply to process.")
    response = drf_exception_handler(exc, context)
    if response is not None and response.status_code == status.HTTP_503_SERVICE_UNAVAILABLE:
        response.headers.setdefault("Retry-After", str(settings.DRADASH_RETRY_AFTER_SECONDS))
    return response
