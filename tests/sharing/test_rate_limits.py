"""What a share link serves is rate limited, per link and per client address
(DRADASH_SHARE_RATE), and its bundle downloads much more strictly (DRADASH_SHARE_DOWNLOAD_RATE):
beyond a rate, 429 with Retry-After, as the selector API answers. Two anonymous downloads of a
123 MB bundle through one link used to raise other users' median page time to 7.1 s."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client

from dradash.sharing.services import share_link_create
from tests.sharing.conftest import share_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings) -> None:
    settings.DRADASH_SHARE_RATE = "3/minute"
    settings.DRADASH_SHARE_DOWNLOAD_RATE = "1/hour"


def overview(client: Client, token: str, snapshot: Any, addr: str) -> Any:
    return client.get(share_url(token, f"snapshots/{snapshot.pk}/"), REMOTE_ADDR=addr)


def assert_throttled(response: Any, words: str) -> int:
    assert response.status_code == 429
    assert words in response.content.decode()
    assert (
        response["Cache-Control"].startswith("private") or "no-store" in response["Cache-Control"]
    )
    wait = int(response["Retry-After"])
    assert wait > 0
    return wait


def test_a_link_serves_at_most_its_rate_whatever_the_address(
    client: Client, tiny_shared: tuple[Any, str], tiny: list[Any], rates: None
) -> None:
    _, token = tiny_shared
    for i in range(3):
        assert overview(client, token, tiny[0], f"192.0.2.{i + 1}").status_code == 200
    refused = overview(client, token, tiny[0], "198.51.100.7")
    wait = assert_throttled(refused, "Too many requests with this link: the limit is 3/minute.")
    assert wait <= 60


def test_an_address_is_served_at_most_the_rate_whatever_the_link(
    client: Client, tiny: list[Any], user: Any, rates: None
) -> None:
    tokens = [
        share_link_create(snapshot=tiny[0], user=user, expires_in=timedelta(days=1))[1]
        for _ in range(4)
    ]
    for token in tokens[:3]:
        assert overview(client, token, tiny[0], "192.0.2.9").status_code == 200
    refused = overview(client, tokens[3], tiny[0], "192.0.2.9")
    assert_throttled(refused, "Too many requests from your address")
    # Guessing tokens counts too: an unknown token is refused before it is looked up.
    assert_throttled(
        client.get(share_url("no-such-token", "/"), REMOTE_ADDR="192.0.2.9"), "Too many"
    )
    # Another address is served.
    assert overview(client, tokens[3], tiny[0], "192.0.2.10").status_code == 200


def test_bundle_downloads_are_limited_much_more_strictly(
    client: Client, tiny_shared: tuple[Any, str], tiny: list[Any], rates: None, settings
) -> None:
    settings.DRADASH_SHARE_RATE = "100/minute"
    _, token = tiny_shared
    bundle = share_url(token, f"snapshots/{tiny[0].pk}/bundle.json")
    first = client.get(bundle, REMOTE_ADDR="192.0.2.1")
    assert first.status_code == 200
    assert b'"kind":"Pod"' in b"".join(first.streaming_content)
    # The same link from elsewhere, and another link from the same address: both refused.
    wait = assert_throttled(
        client.get(bundle, REMOTE_ADDR="192.0.2.2"), "Too many bundle downloads with this link"
    )
    assert 3500 < wait <= 3600
    other = share_link_create(
        snapshot=tiny[0], user=tiny_shared[0].created_by, expires_in=timedelta(days=1)
    )[1]
    other_bundle = share_url(other, f"snapshots/{tiny[0].pk}/bundle.json")
    assert_throttled(
        client.get(other_bundle, REMOTE_ADDR="192.0.2.1"),
        "Too many bundle downloads from your address",
    )
    # Pages are still served: downloads have a rate of their own.
    assert overview(client, token, tiny[0], "192.0.2.1").status_code == 200


def test_with_the_cache_down_pages_are_served_and_downloads_refused_with_503(
    client: Client, tiny_shared: tuple[Any, str], tiny: list[Any], settings
) -> None:
    """Pages work without the cache, as every page does; a download's limit that cannot count
    refuses rather than let downloads through unlimited (the cache's Redis is unreachable)."""
    settings.CACHES = {
        "default": {
            "BACKEND": "dradash.cache.FailSafeRedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"STRICT_KEY_PREFIXES": ["throttle_"], "socket_connect_timeout": 0.2},
        }
    }
    client.raise_request_exception = False
    _, token = tiny_shared
    assert overview(client, token, tiny[0], "192.0.2.1").status_code == 200
    download = client.get(share_url(token, f"snapshots/{tiny[0].pk}/bundle.json"))
    assert download.status_code == 503
    assert download["Retry-After"]
