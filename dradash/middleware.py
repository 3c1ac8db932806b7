"""Security headers that Django does not set by itself, and JSON errors under /api/."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

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
