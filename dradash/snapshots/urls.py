from __future__ import annotations

from django.urls import include, path

from dradash.snapshots import views

urlpatterns = [
    path("", views.home, name="home"),
    path("snapshots/<int:snapshot_id>/", views.snapshot_detail, name="snapshot-detail"),
    path("snapshots/<int:snapshot_id>/bundle.json", views.snapshot_bundle, name="snapshot-bundle"),
    path("upload/", views.upload, name="upload"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("", include("dradash.clusters.urls")),
]
