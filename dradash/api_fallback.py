"""What answers a path under /api/ that no API operation has.

Every operation answers with and without a trailing slash, the same answer, never a redirect
(a redirected POST loses its body, and clients should not need to know which spelling the schema
uses); any other path under /api/ is a JSON 404, not the site's HTML error page.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt

NAME = "api-fallback"


@csrf_exempt  # the operation it hands over to checks CSRF itself (DRF, for session logins)
@login_not_required  # and authentication: 401/403 as JSON, never the login page
def api_fallback(request: HttpRequest, rest: str = "") -> HttpResponse:
    path = request.path_info
    other = path[:-1] if path.endswith("/") else f"{path}/"
    try:
        match = resolve(other, getattr(request, "urlconf", None))
    except Resolver404:
        match = None
    if match is not None and match.url_name != NAME:
        request.resolver_match = match
        return match.func(request, *match.args, **match.kwargs)
    # As every other 404 under /api/ (dradash.middleware.ApiErrorsMiddleware's words).
    return JsonResponse({"detail": "Not found."}, status=404)
