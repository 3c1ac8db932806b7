from __future__ import annotations

from django.urls import path

from dradash.sharing import views

urlpatterns = [
    path("snapshots/<int:snapshot_id>/shares/", views.share_list, name="share-list"),
    path("snapshots/<int:snapshot_id>/shares/new/", views.share_create, name="share-create"),
    path("shares/<int:share_id>/revoke/", views.share_revoke, name="share-revoke"),
]
