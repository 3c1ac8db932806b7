from __future__ import annotations

from django.apps import AppConfig


class SnapshotsConfig(AppConfig):
    name = "dradash.snapshots"
    label = "snapshots"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Make dradash's Celery app the current one, so tasks enqueue on its broker.
        import dradash.celery  # noqa: F401
