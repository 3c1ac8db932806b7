from __future__ import annotations

from django.apps import AppConfig


class ClustersConfig(AppConfig):
    name = "dradash.clusters"
    label = "clusters"
    default_auto_field = "django.db.models.BigAutoField"
