"""The diff of two snapshots of one cluster (no models: it reads snapshots)."""

from __future__ import annotations

from django.apps import AppConfig


class CompareConfig(AppConfig):
    name = "dradash.compare"
    label = "compare"
    default_auto_field = "django.db.models.BigAutoField"
