from __future__ import annotations

from django.urls import path

from dradash.readiness import apis

urlpatterns = [
    path(
        "snapshots/<int:snapshot_id>/checklist", apis.ChecklistApi.as_view(), name="api-checklist"
    ),
    path("snapshots/<int:snapshot_id>/capacity", apis.CapacityApi.as_view(), name="api-capacity"),
]
