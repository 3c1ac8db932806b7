from __future__ import annotations

from django.apps import AppConfig


class PlaygroundConfig(AppConfig):
    name = "dradash.playground"
    label = "playground"
    default_auto_field = "django.db.models.BigAutoField"
