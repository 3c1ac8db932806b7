from __future__ import annotations

from django.apps import AppConfig


class UiConfig(AppConfig):
    """What every page shares: the ``dradash`` and ``object_links`` template tag libraries and
    the SVG charts."""

    name = "dradash.ui"
    label = "ui"
    default_auto_field = "django.db.models.BigAutoField"
