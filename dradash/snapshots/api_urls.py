from __future__ import annotations

from django.urls import path

from dradash.middleware import limits_own_body
from dradash.snapshots.apis import (
    SnapshotDetailApi,
    SnapshotListApi,
    UploadCreateApi,
    UploadDetailApi,
)

urlpatterns = [
    path("snapshots/", SnapshotListApi.as_view(), name="api-snapshot-list"),
    path("snapshots/<int:snapshot_id>/", SnapshotDetailApi.as_view(), name="api-snapshot-detail"),
    # DRADASH_UPLOAD_MAX_BYTES, checked by the view itself, not the other requests' limit.
    path("uploads/", limits_own_body(UploadCreateApi.as_view()), name="api-upload-create"),
    path("uploads/<int:upload_id>/", UploadDetailApi.as_view(), name="api-upload-detail"),
]
