"""dradash.cache.FailSafeRedisCache on our own Redis: while Redis is down, reads miss and
writes are dropped, except for rate-limit counters, which raise CacheUnavailable; once Redis is
back (after at most RETRY_AFTER seconds) everything is as before."""

from __future__ import annotations

import time

import pytest

from dradash import cache as cache_module
from dradash.cache import CacheUnavailable, FailSafeRedisCache
from tests.servers import RedisServer

pytestmark = pytest.mark.servers


def make(server: RedisServer) -> FailSafeRedisCache:
    return FailSafeRedisCache(
        server.url(3),
        {
            "KEY_PREFIX": "t",
            "OPTIONS": {
                "STRICT_KEY_PREFIXES": ["throttle_"],
                "socket_connect_timeout": 1,
                "socket_timeout": 1,
            },
        },
    )


def test_reads_miss_writes_drop_and_limits_fail_closed_while_redis_is_down(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "RETRY_AFTER", 0.5)
    cache = make(redis_server)
    cache.set("page", "cached", 60)
    cache.set("throttle_selectors_1", [1.0], 60)
    assert cache.get("page") == "cached"

    redis_server.kill()
    started = time.monotonic()
    assert cache.get("page", "default") == "default"
    assert cache.add("refusal", 1, 60) is True  # as DummyCache: the caller does its work
    cache.set("page", "new", 60)  # dropped, no error
    assert cache.get_many(["page", "other"]) == {}
    assert cache.delete("page") is False
    with pytest.raises(ValueError):
        cache.incr("counter")
    with pytest.raises(CacheUnavailable, match="rate limiter's store"):
        cache.get("throttle_selectors_1", [])
    with pytest.raises(CacheUnavailable):
        cache.set("throttle_selectors_1", [2.0], 60)
    assert time.monotonic() - started < 3  # one failed connection, then no more waiting

    redis_server.start()
    time.sleep(0.6)
    cache.set("page", "again", 60)
    assert cache.get("page") == "again"
    assert cache.get("throttle_selectors_1", []) == []  # the new Redis is empty
    cache.set("throttle_selectors_1", [3.0], 60)
    assert cache.get("throttle_selectors_1") == [3.0]
