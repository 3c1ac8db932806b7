from __future__ import annotations

from django.urls import path

from dradash.snapshots.apis import SnapshotDetailApi, SnapshotListApi

urlpatterns = [
    path("snapshots/", SnapshotListApi.as_view(), name="api-snapshot-list"),
    path("snapshots/<int:snapshot_id>/", SnapshotDetailApi.as_view(), name="api-snapshot-detail"),
]
