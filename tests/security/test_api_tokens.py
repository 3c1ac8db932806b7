"""API tokens (django-rest-knox): made by `manage.py create_api_token`, stored only as a hash,
expiring, revocable. Requests without valid credentials get 401 with WWW-Authenticate; the
session of the pages keeps working for the API."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from knox.models import AuthToken
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
URL = "/api/v1/snapshots/"


def create_token(*args: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    call_command("create_api_token", *args, stdout=out, stderr=err)
    assert "shown only now" in err.getvalue()
    return out.getvalue().strip()


def with_token(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def test_the_command_prints_a_token_that_works_and_is_stored_only_hashed(user) -> None:
    token = create_token("alice")
    assert len(token) == 64
    assert with_token(token).get(URL).status_code == 200
    row = AuthToken.objects.get(user=user)
    assert row.digest != token and len(row.digest) == 128  # SHA-512
    # Not in any column of any table (knox keeps the first 15 characters to find the row).
    with connection.cursor() as cursor:
        for model in apps.get_models():
            for field in model._meta.concrete_fields:
                if field.get_internal_type() in ("CharField", "TextField"):
                    table, column = model._meta.db_table, field.column
                    cursor.execute(
                        f'SELECT 1 FROM "{table}" WHERE "{column}" LIKE %s', [f"%{token}%"]
                    )
                    assert cursor.fetchone() is None, f"{table}.{column} holds the token"


def test_tokens_expire(user) -> None:
    token = create_token("alice", "--days", "1")
    row = AuthToken.objects.get(user=user)
    assert timedelta(hours=23) < row.expiry - timezone.now() <= timedelta(days=1)
    AuthToken.objects.filter(pk=row.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    response = with_token(token).get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert not AuthToken.objects.exists()  # an expired token is deleted when presented


def test_the_default_lifetime_is_thirty_days(user) -> None:
    create_token("alice")
    row = AuthToken.objects.get(user=user)
    assert timedelta(days=29) < row.expiry - timezone.now() <= timedelta(days=30)


@pytest.mark.parametrize("days", ["0", "366", "-1", "many"])
def test_the_lifetime_is_bounded(user, days: str) -> None:
    with pytest.raises(CommandError):
        call_command("create_api_token", "alice", "--days", days, stdout=io.StringIO())


def test_unknown_and_inactive_users_get_no_token(user) -> None:
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("create_api_token", "nobody", stdout=io.StringIO())
    user.is_active = False
    user.save()
    with pytest.raises(CommandError, match="inactive"):
        call_command("create_api_token", "alice", stdout=io.StringIO())


def test_revoked_tokens_stop_working(user) -> None:
    token = create_token("alice")
    out = io.StringIO()
    call_command("revoke_api_tokens", "alice", stdout=out)
    assert "Revoked 1 API token(s) of alice" in out.getvalue()
    assert with_token(token).get(URL).status_code == 401


@pytest.mark.parametrize(
    "authorization",
    [None, "Token", "Token not-a-token", "Token a b", "Token \u00ff\u00fe\u00fd", "Bearer xyz"],
    ids=["none", "empty", "unknown", "spaces", "not-utf8", "other-scheme"],
)
def test_requests_without_valid_credentials_get_401_with_www_authenticate(
    db, authorization: str | None
) -> None:
    client = APIClient()
    if authorization is not None:
        client.credentials(HTTP_AUTHORIZATION=authorization)
    for method, url in [("get", URL), ("post", "/api/v1/selectors/evaluate")]:
        response = getattr(client, method)(url)
        assert response.status_code == 401, (authorization, url, response.content)
        assert response["WWW-Authenticate"] == "Token"
        assert response["Content-Type"] == "application/json"
        assert "detail" in response.json()


def test_the_session_still_works_for_the_api(client_logged_in) -> None:
    assert client_logged_in.get(URL).status_code == 200


def test_plain_drf_tokens_are_gone() -> None:
    assert not apps.is_installed("rest_framework.authtoken")
