"""HSTS, the TLS-terminating proxy header and CSRF's trusted origins, from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.test import Client

from tests.conftest import USER_PASSWORD

PROBE = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, "
    "s.SECURE_HSTS_PRELOAD, getattr(s, 'SECURE_PROXY_SSL_HEADER', None), "
    "s.CSRF_TRUSTED_ORIGINS]))"
)


def settings_with(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("DRADASH_HSTS")}
    environ.update(DJANGO_SETTINGS_MODULE="dradash.settings", **env)
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=environ, capture_output=True, text=True
    )


def test_defaults_are_secure_without_trusting_any_proxy() -> None:
    out = settings_with()
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [31536000, False, False, None, []]


def test_everything_can_be_set_from_the_environment() -> None:
    out = settings_with(
        DRADASH_HSTS_SECONDS="63072000",
        DRADASH_HSTS_INCLUDE_SUBDOMAINS="1",
        DRADASH_HSTS_PRELOAD="yes",
        DRADASH_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto=https",
        DRADASH_CSRF_TRUSTED_ORIGINS="https://dradash.example.com, https://*.corp.example",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [
        63072000,
        True,
        True,
        ["HTTP_X_FORWARDED_PROTO", "https"],
        ["https://dradash.example.com", "https://*.corp.example"],
    ]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DRADASH_SECURE_PROXY_SSL_HEADER", "X-Forwarded-Proto", "X-Forwarded-Proto=https"),
        ("DRADASH_CSRF_TRUSTED_ORIGINS", "dradash.example.com", "must start with https://"),
        ("DRADASH_HSTS_SECONDS", "a year", "must be an integer"),
    ],
)
def test_bad_values_fail_loudly(name: str, value: str, message: str) -> None:
    out = settings_with(**{name: value})
    assert out.returncode != 0
    assert "ImproperlyConfigured" in out.stderr and message in out.stderr


@pytest.mark.django_db
def test_https_responses_carry_hsts(client_logged_in: Client) -> None:
    assert client_logged_in.get("/", secure=True)["Strict-Transport-Security"] == (
        "max-age=31536000"
    )
    assert "Strict-Transport-Security" not in client_logged_in.get("/")  # plain HTTP: never


@pytest.mark.django_db
def test_behind_a_tls_proxy_requests_count_as_https(client_logged_in: Client, settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    response = client_logged_in.get("/", HTTP_X_FORWARDED_PROTO="https")
    assert response["Strict-Transport-Security"] == "max-age=31536000"


@pytest.mark.django_db
def test_csrf_accepts_a_trusted_origin_and_refuses_others(user, settings) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://dradash.example.com"]
    settings.ALLOWED_HOSTS = ["internal.svc", "testserver"]

    def log_in(origin: str) -> int:
        client = Client(enforce_csrf_checks=True)
        client.get("/accounts/login/", secure=True, HTTP_HOST="internal.svc")
        token = client.cookies["csrftoken"].value
        return client.post(
            "/accounts/login/",
            {"username": "alice", "password": USER_PASSWORD, "csrfmiddlewaretoken": token},
            secure=True,
            HTTP_HOST="internal.svc",
            HTTP_ORIGIN=origin,
        ).status_code

    assert log_in("https://dradash.example.com") == 302
    assert log_in("https://evil.example") == 403
