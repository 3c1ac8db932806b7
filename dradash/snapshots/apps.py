from __future__ import annotations

from django.apps import AppConfig


class SnapshotsConfig(AppConfig):
    name = "dradash.snapshots"
    label = "snapshots"
    default_auto_field = "django.db.models.BigAutoField"
