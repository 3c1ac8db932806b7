from __future__ import annotations

from django.apps import AppConfig


class ReadinessConfig(AppConfig):
    name = "dradash.readiness"
    label = "readiness"
    default_auto_field = "django.db.models.BigAutoField"
