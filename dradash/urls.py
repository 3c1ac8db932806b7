from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from dradash import api_docs
from dradash.api_fallback import NAME as API_FALLBACK
from dradash.api_fallback import api_fallback

urlpatterns = [
    path("", include("dradash.snapshots.urls")),
    path("", include("dradash.explorer.urls")),
    path("", include("dradash.playground.urls")),
    path("", include("dradash.compare.urls")),
    path("", include("dradash.readiness.urls")),
    path("", include("dradash.sharing.urls")),
    path("", include("dradash.metrics.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("dradash.snapshots.api_urls")),
    path("api/v1/", include("dradash.playground.api_urls")),
    path("api/v1/", include("dradash.explorer.api_urls")),
    path("api/v1/", include("dradash.sharing.api_urls")),
    path("api/v1/", include("dradash.readiness.api_urls")),
    # The OpenAPI schema and its docs are public: they hold nothing of any cluster.
    path("api/schema/", api_docs.schema, name="api-schema"),
    path("api/docs/", api_docs.docs, name="api-docs"),
    # Last: the other spelling (trailing slash or not) of an operation, else a JSON 404.
    re_path(r"^api/(?P<rest>.*)\Z", api_fallback, name=API_FALLBACK),
]

# The database (or the rate limiter's Redis) being away is a 503, not a 500; JSON under /api/.
handler500 = "dradash.errors.server_error"
