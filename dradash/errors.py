"""Error pages for what is not a bug: the database or the cache being away.

``server_error`` is the project's handler500. Django calls it while handling the exception, so
the exception is at hand: PostgreSQL down, refusing connections, or a query that hit the lock or
statement timeout (dradash.db) is a 503 "try again shortly", not a 500 "something went wrong".
Under /api/ both are JSON. Nothing here touches the database.
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

from dradash.cache import CacheUnavailable

DATABASE_UNAVAILABLE = "The database is unavailable; try again shortly."
DATABASE_BUSY = "The database did not answer in time (a lock or a slow query); try again shortly."
CANCELLED_CODES = {"55P03", "57014"}  # lock_not_available, query_canceled (the two timeouts)


def database_unavailable(exc: BaseException | None) -> str | None:
    """Why ``exc`` means the database cannot serve now (for people), or None if it does not."""
    if not isinstance(exc, DatabaseError):
        return None
    cause = exc.__cause__
    if getattr(cause, "sqlstate", None) in CANCELLED_CODES:
        return DATABASE_BUSY
    if isinstance(exc, (OperationalError, InterfaceError)):
        return DATABASE_UNAVAILABLE
    return None


def is_api(request: HttpRequest) -> bool:
    """Whether the request was for /api/… (as it arrived: ShareLinkMiddleware rewrites
    path_info of /share/<token>/… requests, which are never API requests)."""
    return str(request.META.get("PATH_INFO", request.path_info)).startswith("/api/")


def server_error(request: HttpRequest) -> HttpResponse:
    exc = sys.exc_info()[1]
    reason = database_unavailable(exc)
    if reason is None and isinstance(exc, CacheUnavailable):
        reason = f"{str(exc)[:1].upper()}{str(exc)[1:]}."
    if reason is None:
        if is_api(request):
            return JsonResponse({"detail": "Server error; it was logged."}, status=500)
        return HttpResponse(loader.render_to_string("500.html"), status=500)
    if is_api(request):
        response: HttpResponse = JsonResponse({"detail": reason}, status=503)
    else:
        page = loader.render_to_string("503.html", {"reason": reason})
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(settings.DRADASH_RETRY_AFTER_SECONDS)
    return response
