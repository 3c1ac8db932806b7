from __future__ import annotations

from django.urls import path

from dradash.sharing import apis

urlpatterns = [
    path(
        "snapshots/<int:snapshot_id>/shares",
        apis.SnapshotShareListApi.as_view(),
        name="api-snapshot-shares",
    ),
    path("shares/<int:share_id>", apis.ShareRevokeApi.as_view(), name="api-share-revoke"),
]
