from __future__ import annotations

from django.urls import path

from dradash.clusters import views

urlpatterns = [
    path("clusters/<int:cluster_id>/capture/", views.cluster_capture, name="cluster-capture"),
]
