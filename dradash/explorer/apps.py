from __future__ import annotations

from django.apps import AppConfig


class ExplorerConfig(AppConfig):
    name = "dradash.explorer"
    label = "explorer"
    default_auto_field = "django.db.models.BigAutoField"
