"""Failed logins are throttled per user name from one address and per address (django-axes,
dradash.accounts.lockout), never per user name alone: the DRADASH_LOGIN_FAILURE_LIMIT-th failure
(10) of one user name from one address locks that user name out *from that address*, the
DRADASH_LOGIN_ADDRESS_FAILURE_LIMIT-th (50) from one address locks the address out, the right
password included, until DRADASH_LOGIN_LOCKOUT_MINUTES (15) pass. Failures from elsewhere
cannot lock a user out: 10 wrong passwords from any address used to lock `admin` out for
everyone."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.test import Client, RequestFactory
from django.urls import reverse

from dradash.accounts.clients import client_ip
from tests.conftest import USER_PASSWORD
from tests.servers import page_text

pytestmark = pytest.mark.django_db
LIMIT = 10
ADDRESS_LIMIT = 50


@pytest.fixture(autouse=True)
def _fast_passwords(settings) -> None:
    """Dozens of logins per test: a fast hasher (before the users are made)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def log_in(client: Client, username: str, password: str, addr: str) -> Any:
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=addr
    )


def logged_in(client: Client) -> bool:
    return client.get(reverse("home")).status_code == 200


def test_failures_from_other_addresses_cannot_lock_a_user_out(user) -> None:
    """The issue's probe: wrong passwords for alice from any number of addresses."""
    attacker = Client()
    for i in range(3 * LIMIT):
        log_in(attacker, "alice", "wrong", f"10.0.{i // 200}.{i % 200 + 1}")
    for _ in range(LIMIT + 5):  # and from one address, more than the limit
        log_in(attacker, "alice", "wrong", "203.0.113.66")
    alice = Client()
    assert log_in(alice, "alice", USER_PASSWORD, "198.51.100.1").status_code == 302
    assert logged_in(alice)


def test_a_user_name_is_locked_out_from_one_address_even_with_the_right_password(user) -> None:
    client = Client()
    for _ in range(LIMIT - 1):
        response = log_in(client, "alice", "wrong", "10.0.0.1")
        assert response.status_code == 200  # the login form again, with its error
    assert log_in(client, "alice", "wrong", "10.0.0.1").status_code == 429  # the last straw
    refused = log_in(client, "alice", USER_PASSWORD, "10.0.0.1")
    assert refused.status_code == 429
    assert b"Too many failed logins" in refused.content
    assert int(refused["Retry-After"]) == 15 * 60
    assert not logged_in(client)
    # alice from elsewhere, and another user from the same address, are not affected.
    assert log_in(Client(), "alice", USER_PASSWORD, "10.0.0.2").status_code == 302
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("bob", password="bob-password-1")
    assert log_in(Client(), "bob", "bob-password-1", "10.0.0.1").status_code == 302


def test_an_address_is_locked_out_after_its_limit_whatever_the_user_name(user) -> None:
    client = Client()
    for i in range(ADDRESS_LIMIT - 1):
        assert log_in(client, f"guess-{i}", "wrong", "192.0.2.7").status_code == 200
    assert log_in(client, "guess-last", "wrong", "192.0.2.7").status_code == 429
    refused = log_in(client, "alice", USER_PASSWORD, "192.0.2.7")
    assert refused.status_code == 429
    assert "for every user name after 50" in page_text(refused.content.decode())
    assert not logged_in(client)
    # alice herself, from elsewhere, is fine.
    elsewhere = Client()
    assert log_in(elsewhere, "alice", USER_PASSWORD, "198.51.100.1").status_code == 302
    assert logged_in(elsewhere)


def test_logging_in_to_ones_own_account_does_not_reset_the_guesses_at_another(
    user, django_user_model
) -> None:
    django_user_model.objects.create_user("mallory", password="mallory-password-1")
    client = Client()
    for _ in range(LIMIT - 1):
        log_in(client, "alice", "wrong", "203.0.113.9")
    assert log_in(client, "mallory", "mallory-password-1", "203.0.113.9").status_code == 302
    client.logout()
    assert log_in(client, "alice", "wrong", "203.0.113.9").status_code == 429


def test_the_admin_login_is_throttled_too(user) -> None:
    client = Client()
    url = reverse("admin:login")
    for _ in range(LIMIT):
        client.post(url, {"username": "alice", "password": "wrong"}, REMOTE_ADDR="10.9.9.9")
    response = client.post(
        url, {"username": "alice", "password": USER_PASSWORD}, REMOTE_ADDR="10.9.9.9"
    )
    assert response.status_code == 429


def test_a_success_resets_the_count_and_the_lockout_ends_after_the_cool_off(user) -> None:
    client = Client()
    for _ in range(LIMIT - 1):
        log_in(client, "alice", "wrong", "10.1.1.1")
    assert log_in(client, "alice", USER_PASSWORD, "10.1.1.1").status_code == 302
    client.logout()
    for _ in range(LIMIT - 1):  # counting starts again from zero
        log_in(client, "alice", "wrong", "10.1.1.1")
    assert log_in(client, "alice", USER_PASSWORD, "10.1.1.1").status_code == 302
    client.logout()

    for _ in range(LIMIT):
        log_in(client, "alice", "wrong", "10.1.1.1")
    assert log_in(client, "alice", USER_PASSWORD, "10.1.1.1").status_code == 429
    # 16 minutes later (the records age; the lockout is 15 minutes).
    for attempt in AccessAttempt.objects.all():
        AccessAttempt.objects.filter(pk=attempt.pk).update(
            attempt_time=attempt.attempt_time - timedelta(minutes=16)
        )
    assert log_in(client, "alice", USER_PASSWORD, "10.1.1.1").status_code == 302


def test_failed_logins_are_not_answered_at_full_speed_forever(user) -> None:
    """The issue's probe: 50 wrong passwords in a row. Only the first LIMIT are even checked."""
    client = Client()
    statuses = [log_in(client, "alice", f"guess-{i}", "203.0.113.5").status_code for i in range(50)]
    assert statuses[: LIMIT - 1] == [200] * (LIMIT - 1)
    assert set(statuses[LIMIT - 1 :]) == {429}


@pytest.mark.parametrize(
    ("proxies", "remote", "forwarded", "expected"),
    [
        (0, "10.0.0.1", "198.51.100.9", "10.0.0.1"),  # no proxy: the header is the client's word
        (1, "10.0.0.1", "198.51.100.9", "198.51.100.9"),
        (1, "10.0.0.1", "6.6.6.6, 198.51.100.9", "198.51.100.9"),  # a forged entry on the left
        (2, "10.0.0.1", "198.51.100.9, 10.0.0.2", "198.51.100.9"),
        (1, "10.0.0.1", "", "10.0.0.1"),
        (0, "not-an-ip", "", None),
    ],
)
def test_the_client_address_trusts_only_the_configured_proxies(
    settings, proxies: int, remote: str, forwarded: str, expected: str | None
) -> None:
    settings.DRADASH_TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected
