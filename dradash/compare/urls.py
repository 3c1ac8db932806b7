from __future__ import annotations

from django.urls import path

from dradash.compare import views

urlpatterns = [
    path(
        "snapshots/<int:before_id>/diff/<int:after_id>/",
        views.snapshot_diff_page,
        name="snapshot-diff",
    ),
]
