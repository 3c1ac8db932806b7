from __future__ import annotations

from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    """What dradash derives from a snapshot, computed once when the snapshot is stored."""

    name = "dradash.analysis"
    label = "analysis"
    default_auto_field = "django.db.models.BigAutoField"
