"""POST /api/v1/selectors/evaluate is rate limited per user (DRADASH_SELECTOR_RATE)."""

from __future__ import annotations

import pytest
from django.conf import settings
from rest_framework.test import APIClient
from rest_framework.throttling import ScopedRateThrottle

pytestmark = pytest.mark.django_db

URL = "/api/v1/selectors/evaluate"
BODY = {"expression": "true", "resource_slices": []}


@pytest.fixture
def three_a_minute(monkeypatch) -> None:
    # DRF reads the rates once, at import; the test changes them where the throttle looks.
    monkeypatch.setitem(ScopedRateThrottle.THROTTLE_RATES, "selectors", "3/minute")


def test_the_rate_comes_from_the_settings() -> None:
    assert settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["selectors"]
    assert ScopedRateThrottle.THROTTLE_RATES["selectors"]


def test_the_selector_api_answers_429_beyond_the_rate(api_client, three_a_minute) -> None:
    for _ in range(3):
        assert api_client.post(URL, BODY, format="json").status_code == 200
    response = api_client.post(URL, BODY, format="json")
    assert response.status_code == 429
    detail = response.json()["detail"]
    assert "Too many selector evaluations" in detail
    assert "3/minute" in detail
    assert int(response["Retry-After"]) > 0


def test_the_limit_is_per_user(api_client, django_user_model, three_a_minute) -> None:
    for _ in range(4):
        api_client.post(URL, BODY, format="json")
    other = APIClient()
    other.force_authenticate(django_user_model.objects.create_user("bob", password="x"))
    assert other.post(URL, BODY, format="json").status_code == 200


def test_other_apis_are_not_limited(api_client, three_a_minute) -> None:
    for _ in range(5):
        assert api_client.get("/api/v1/snapshots/").status_code == 200


def test_with_a_cache_url_every_process_counts_in_redis(
    api_client, user, three_a_minute, settings
) -> None:
    """DRADASH_CACHE_URL puts the counters in Redis, where every web process sees them."""
    import os
    import subprocess
    import sys

    import redis
    from django.core.cache import caches

    url = os.environ.get("DRADASH_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    probe = (
        "import django; django.setup(); from django.conf import settings; "
        "c = settings.CACHES['default']; print(c['BACKEND'], c['LOCATION'])"
    )
    env = {**os.environ, "DRADASH_CACHE_URL": url, "DJANGO_SETTINGS_MODULE": "dradash.settings"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["dradash.cache.FailSafeRedisCache", url], out.stderr

    server = redis.Redis.from_url(url)
    key = f"dradash:1:throttle_selectors_{user.pk}"
    server.delete(key)
    settings.CACHES = {
        "default": {
            "BACKEND": "dradash.cache.FailSafeRedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "dradash",
            "OPTIONS": {"STRICT_KEY_PREFIXES": ["throttle_"]},
        }
    }
    try:
        for _ in range(3):
            assert api_client.post(URL, BODY, format="json").status_code == 200
        assert server.exists(key)  # the history of this user's requests, shared by all
        caches["default"].close()  # another process would start with nothing of its own
        assert api_client.post(URL, BODY, format="json").status_code == 429
    finally:
        server.delete(key)


def test_the_playground_page_counts_against_the_same_limit(
    client_logged_in, api_client, demo, three_a_minute
) -> None:
    """Evaluations on the page and through the API share one limit per user (issue 13)."""
    page = f"/playground/?snapshot={demo[0].pk}&expression=true"
    assert client_logged_in.get(page).status_code == 200
    assert client_logged_in.get("/playground/").status_code == 200  # no expression: no count
    assert api_client.post(URL, BODY, format="json").status_code == 200
    assert client_logged_in.get(page).status_code == 200
    refused = client_logged_in.get(page)
    assert refused.status_code == 429
    assert "Too many selector evaluations" in refused.content.decode()
    assert int(refused["Retry-After"]) > 0
