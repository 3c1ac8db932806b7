from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("", include("dradash.snapshots.urls")),
    path("", include("dradash.explorer.urls")),
    path("", include("dradash.playground.urls")),
    path("", include("dradash.compare.urls")),
    path("", include("dradash.readiness.urls")),
    path("", include("dradash.sharing.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("dradash.snapshots.api_urls")),
    path("api/v1/", include("dradash.playground.api_urls")),
    path("api/v1/", include("dradash.explorer.api_urls")),
    path("api/v1/", include("dradash.sharing.api_urls")),
    path("api/v1/", include("dradash.readiness.api_urls")),
    path("api/schema/", login_not_required(SpectacularAPIView.as_view()), name="api-schema"),
]

# The database (or the rate limiter's Redis) being away is a 503, not a 500; JSON under /api/.
handler500 = "dradash.errors.server_error"
