from __future__ import annotations

from django.urls import path

from dradash.explorer import apis

urlpatterns = [
    path("snapshots/<int:snapshot_id>/pods", apis.PodListApi.as_view(), name="api-pods"),
    path("snapshots/<int:snapshot_id>/claims", apis.ClaimListApi.as_view(), name="api-claims"),
    path(
        "snapshots/<int:snapshot_id>/pods/<str:namespace>/<str:name>/diagnosis",
        apis.PodDiagnosisApi.as_view(),
        name="api-pod-diagnosis",
    ),
    path(
        "snapshots/<int:snapshot_id>/claims/<str:namespace>/<str:name>/diagnosis",
        apis.ClaimDiagnosisApi.as_view(),
        name="api-claim-diagnosis",
    ),
    path(
        "snapshots/<int:snapshot_id>/pods/<str:namespace>/<str:name>/explain",
        apis.PodExplainApi.as_view(),
        name="api-pod-explain",
    ),
    path(
        "snapshots/<int:snapshot_id>/claims/<str:namespace>/<str:name>/explain",
        apis.ClaimExplainApi.as_view(),
        name="api-claim-explain",
    ),
    path(
        "snapshots/<int:snapshot_id>/findings",
        apis.FindingListApi.as_view(),
        name="api-findings",
    ),
    path("snapshots/<int:snapshot_id>/devices", apis.DeviceListApi.as_view(), name="api-devices"),
    path(
        "snapshots/<int:snapshot_id>/nodes/<str:name>",
        apis.NodeApi.as_view(),
        name="api-node",
    ),
    path(
        "snapshots/<int:snapshot_id>/devices/<str:driver>/<path:pool>/<str:device>",
        apis.DeviceApi.as_view(),
        name="api-device",
    ),
    path("snapshots/<int:snapshot_id>/pools", apis.PoolListApi.as_view(), name="api-pools"),
    path(
        "snapshots/<int:snapshot_id>/podgroups",
        apis.PodGroupListApi.as_view(),
        name="api-podgroups",
    ),
    path(
        "snapshots/<int:snapshot_id>/podgroups/<str:namespace>/<str:name>",
        apis.PodGroupApi.as_view(),
        name="api-podgroup",
    ),
    path("snapshots/<int:snapshot_id>/search", apis.SnapshotSearchApi.as_view(), name="api-search"),
]
