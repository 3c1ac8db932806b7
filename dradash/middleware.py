"""Security headers that Django does not set by itself, JSON errors under /api/, no NUL in
paths, and the size limit of request bodies."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dradash.errors import is_api

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class SecurityHeadersMiddleware:
    """A Content-Security-Policy without inline script or style, on every response."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.headers.setdefault("Cross-Origin-Opener-Policy", "same-origin")
        return response


class NulPathMiddleware:
    """404 for a path with a NUL character in it (``/snapshots/1/pods/ns/a%00b/``): no page or
    Kubernetes name has one, and PostgreSQL refuses it in a query (it was a 500). Query strings
    are the forms' business (their fields refuse NUL: 400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path_info:
            raise Http404("No page has a NUL character in its address.")
        return self.get_response(request)


# Words for the statuses Django answers by itself (its error pages are HTML).
API_ERROR_DETAIL = {
    400: "Bad request.",
    401: "Authentication credentials were not provided or are not valid.",
    403: "Forbidden.",
    404: "Not found.",
    405: "Method not allowed.",
    413: "Request body too large.",
    429: "Too many requests.",
    500: "Server error; it was logged.",
    503: "The service is temporarily unavailable; try again shortly.",
}
# Headers of an error response that still mean something once it is JSON.
KEPT_HEADERS = ("WWW-Authenticate", "Retry-After", "Allow", "Vary", "Cache-Control")


class ApiErrorsMiddleware:
    """Every error under /api/ is JSON: what Django answers itself there (a URL that matches no
    route, a body too large, a disallowed host, a server error) is an HTML page, which this
    turns into ``{"detail": …}`` with the same status.

    Place it just after SecurityMiddleware/SecurityHeadersMiddleware, so the headers those set
    still apply, and before everything that may answer with an error.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        api = request.path_info.startswith("/api/")  # before anything rewrites it
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not api
            or response.get("Content-Type", "").startswith(
                ("application/json", "application/problem+json")
            )
        ):
            return response
        detail = API_ERROR_DETAIL.get(response.status_code) or response.reason_phrase
        converted = JsonResponse({"detail": detail}, status=response.status_code)
        for name in KEPT_HEADERS:
            if name in response:
                converted[name] = response[name]
        return converted


def limits_own_body(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Marks a view that limits its request body itself (the upload form: a larger limit,
    DRADASH_UPLOAD_MAX_BYTES, counted while it streams the files to the database), so that
    RequestBodyLimitMiddleware leaves it alone."""
    view.limits_own_body = True  # type: ignore[attr-defined]
    return view


class RequestBodyLimitMiddleware:
    """Every request body is at most DRADASH_REQUEST_MAX_BYTES (3 MiB, as the Kubernetes API
    server accepts), checked before it is read: a larger Content-Length is answered 413 at
    once; a body without one (``Transfer-Encoding: chunked``) is read up to one byte past the
    limit, 413 beyond it, and otherwise handed on as if its length had been given (Django's
    WSGI request ignores a body without Content-Length). Under /api/ the 413 is JSON.

    Its process_view must run before anything reads the body (CsrfViewMiddleware reads form
    posts): place it before CsrfViewMiddleware. Views marked with limits_own_body are left alone.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: Any
    ) -> HttpResponse | None:
        if getattr(view, "limits_own_body", False):
            return None
        limit = settings.DRADASH_REQUEST_MAX_BYTES
        given = request.META.get("CONTENT_LENGTH")
        if given:
            try:
                length = int(given)
            except ValueError:
                return None  # Django reads no body then
            return _body_too_large(request, limit, length) if length > limit else None
        chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        if not (chunked and request.META.get("wsgi.input_terminated")):
            return None
        body = request.META["wsgi.input"].read(limit + 1)
        if len(body) > limit:
            return _body_too_large(request, limit, None)
        request.META["CONTENT_LENGTH"] = str(len(body))
        request._stream = LimitedStream(io.BytesIO(body), len(body))  # type: ignore[attr-defined]
        return None


def _body_too_large(request: HttpRequest, limit: int, length: int | None) -> HttpResponse:
    """413: the body (of ``length`` bytes, if known) is over ``limit``; nothing was done."""
    size = f"{length:,} bytes" if length is not None else "larger"
    detail = (
        f"The request body is {size}, over the limit of {limit:,} bytes "
        "(DRADASH_REQUEST_MAX_BYTES); nothing was done."
    )
    if is_api(request):
        return JsonResponse({"detail": detail}, status=413)
    return render(request, "413.html", {"detail": detail}, status=413)
