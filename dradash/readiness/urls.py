from __future__ import annotations

from django.urls import path

from dradash.readiness import views

urlpatterns = [
    path(
        "snapshots/<int:snapshot_id>/checklist/",
        views.snapshot_checklist_page,
        name="snapshot-checklist",
    ),
    path(
        "snapshots/<int:snapshot_id>/capacity/",
        views.snapshot_capacity_page,
        name="snapshot-capacity",
    ),
]
