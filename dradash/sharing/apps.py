"""Share links: read-only, expiring, revocable access to one snapshot."""

from __future__ import annotations

import logging

from django.apps import AppConfig

# Loggers that write request paths, which under /share/ carry a token. settings.LOGGING also
# filters its handlers; this covers handlers configured elsewhere.
REDACTED_LOGGERS = ("django.request", "django.server", "django.security.csrf")


class SharingConfig(AppConfig):
    name = "dradash.sharing"
    label = "sharing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dradash.logs import RedactShareTokens

        for name in REDACTED_LOGGERS:
            logger = logging.getLogger(name)
            if not any(isinstance(f, RedactShareTokens) for f in logger.filters):
                logger.addFilter(RedactShareTokens())
