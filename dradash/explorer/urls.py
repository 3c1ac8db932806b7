from __future__ import annotations

from django.urls import path

from dradash.explorer import views

urlpatterns = [
    path("snapshots/<int:snapshot_id>/claims/", views.claim_list, name="claim-list"),
    path(
        "snapshots/<int:snapshot_id>/claims/<str:namespace>/<str:name>/",
        views.claim_detail,
        name="claim-detail",
    ),
    path("snapshots/<int:snapshot_id>/pods/", views.pod_list, name="pod-list"),
    path("snapshots/<int:snapshot_id>/devices/", views.device_list, name="device-list"),
    path(
        "snapshots/<int:snapshot_id>/nodes/<str:name>/",
        views.node_page,
        name="node-detail",
    ),
    # A pool's name may hold slashes ("a/b"); a driver's and a device's do not.
    path(
        "snapshots/<int:snapshot_id>/devices/<str:driver>/<path:pool>/<str:device>/",
        views.device_page,
        name="device-detail",
    ),
    path("snapshots/<int:snapshot_id>/search/", views.snapshot_search_page, name="snapshot-search"),
    path(
        "snapshots/<int:snapshot_id>/classes/<str:name>/",
        views.class_detail,
        name="class-detail",
    ),
    path(
        "snapshots/<int:snapshot_id>/pods/<str:namespace>/<str:name>/",
        views.pod_detail,
        name="pod-detail",
    ),
    path("snapshots/<int:snapshot_id>/podgroups/", views.podgroup_list, name="podgroup-list"),
    path(
        "snapshots/<int:snapshot_id>/podgroups/<str:namespace>/<str:name>/",
        views.podgroup_page,
        name="podgroup-detail",
    ),
]
