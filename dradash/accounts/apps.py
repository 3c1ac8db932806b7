from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "dradash.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dradash.accounts import schema  # noqa: F401  (registers the OpenAPI extension)
