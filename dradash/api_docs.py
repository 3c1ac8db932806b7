"""The API's reference: the OpenAPI schema at ``/api/schema/`` for programs, and Swagger UI at
``/api/docs/`` for people (drf-spectacular-sidecar serves its files from here: no CDN, and its
start script is a file of its own, as the Content-Security-Policy wants). A browser that opens
``/api/schema/`` is sent to the docs; ``?format=yaml|json`` or any other ``Accept`` still gets
the schema. Both are public: they describe the API and hold nothing of any cluster."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse_lazy
from django.utils.text import format_lazy
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

_schema = SpectacularAPIView.as_view(permission_classes=[AllowAny], authentication_classes=[])
docs = login_not_required(
    SpectacularSwaggerSplitView.as_view(
        # with its format, so that following the docs' link to it downloads the schema
        url=format_lazy("{}?format=yaml", reverse_lazy("api-schema")),
        template_name="api/docs.html",
        permission_classes=[AllowAny],
        authentication_classes=[],
    )
)


def _wants_page(request: HttpRequest) -> bool:
    """A browser's navigation: HTML before anything else, and no format asked for."""
    if "format" in request.GET:
        return False
    accept = request.headers.get("Accept", "")
    return accept.split(",")[0].strip().startswith("text/html")


@login_not_required
def schema(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    if request.method == "GET" and _wants_page(request):
        return redirect("api-docs")
    return _schema(request, *args, **kwargs)
