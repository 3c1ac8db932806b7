from __future__ import annotations

from django.urls import path

from dradash.snapshots.apis import (
    SnapshotDetailApi,
    SnapshotListApi,
    UploadCreateApi,
    UploadDetailApi,
)

urlpatterns = [
    path("snapshots/", SnapshotListApi.as_view(), name="api-snapshot-list"),
    path("snapshots/<int:snapshot_id>/", SnapshotDetailApi.as_view(), name="api-snapshot-detail"),
    path("uploads/", UploadCreateApi.as_view(), name="api-upload-create"),
    path("uploads/<int:upload_id>/", UploadDetailApi.as_view(), name="api-upload-detail"),
]
