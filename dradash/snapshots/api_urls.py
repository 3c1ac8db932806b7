from __future__ import annotations

from django.urls import path

from dradash.snapshots.apis import (
    SnapshotDetailApi,
    SnapshotListApi,
    UploadDetailApi,
    UploadListApi,
)

urlpatterns = [
    path("snapshots/", SnapshotListApi.as_view(), name="api-snapshot-list"),
    path("snapshots/<int:snapshot_id>/", SnapshotDetailApi.as_view(), name="api-snapshot-detail"),
    path("uploads/", UploadListApi.as_view(), name="api-upload-list"),
    path("uploads/<int:run_id>/", UploadDetailApi.as_view(), name="api-upload-detail"),
]
