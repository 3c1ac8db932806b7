"""API token authentication: django-rest-knox's, hardened against undecodable headers."""

from __future__ import annotations

from typing import Any

from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework import exceptions


class TokenAuthentication(KnoxTokenAuthentication):
    """``Authorization: Token <token>``; tokens are stored hashed (SHA-512) and expire
    (settings.REST_KNOX["TOKEN_TTL"]). A token that is not UTF-8 is refused (401) instead of
    raising UnicodeDecodeError (500)."""

    def authenticate_credentials(self, token: bytes) -> Any:
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        return super().authenticate_credentials(token)
