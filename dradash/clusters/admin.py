from __future__ import annotations

from django.contrib import admin

from dradash.clusters.models import Cluster


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "kubeconfig_path", "context", "in_cluster", "capture_enabled"]
    search_fields = ["name"]
