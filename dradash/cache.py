"""The Redis cache, degrading to no cache while Redis is away, and failing closed for limits.

Pages must not fail because a cache is down: a read that cannot reach Redis is a miss, a write
is dropped (what Django's DummyCache does). Counters that enforce a limit are the exception:
a rate limit that forgets its counts while Redis is down lets every request through, so keys
with one of ``STRICT_KEY_PREFIXES`` (an entry of the cache's OPTIONS; settings gives
``throttle_``, the keys of DRF's throttles) raise CacheUnavailable instead, which the API turns
into a 503 (dradash.api.exception_handler) and pages into a 503 page (dradash.errors).

After a failure Redis is not asked again for RETRY_AFTER seconds, so a Redis that hangs costs
one socket timeout per process, not one per cache call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import redis.exceptions
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)
T = TypeVar("T")

# What "Redis is away" looks like: refused, reset, timed out, still loading its data.
UNAVAILABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
RETRY_AFTER = 5.0


class CacheUnavailable(Exception):
    """A limit's counter could not be read or written: its store (Redis) is unavailable."""


class FailSafeRedisCache(RedisCache):
    """django.core.cache.backends.redis.RedisCache that survives Redis being down."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = dict(params.get("OPTIONS") or {})
        self.strict_prefixes = tuple(options.pop("STRICT_KEY_PREFIXES", ()))
        super().__init__(server, {**params, "OPTIONS": options})
        self._down_until = 0.0
        self._lock = threading.Lock()

    # --- the guard ----------------------------------------------------------------------

    def _strict(self, keys: Iterable[Any]) -> bool:
        return any(str(k).startswith(self.strict_prefixes) for k in keys)

    def _guard(self, keys: Iterable[Any], call: Callable[[], T], fallback: T) -> T:
        keys = list(keys)
        if time.monotonic() < self._down_until:
            return self._unavailable(keys, fallback, None)
        try:
            return call()
        except UNAVAILABLE as exc:
            with self._lock:
                if time.monotonic() >= self._down_until:
                    logger.warning(
                        "the cache (Redis) is unavailable, working without it for %g s: %s",
                        RETRY_AFTER,
                        exc,
                    )
                self._down_until = time.monotonic() + RETRY_AFTER
            return self._unavailable(keys, fallback, exc)

    def _unavailable(self, keys: list[Any], fallback: T, exc: BaseException | None) -> T:
        if self._strict(keys):
            raise CacheUnavailable(
                "the rate limiter's store (Redis) is unavailable, so requests it limits are "
                "refused until it is back"
            ) from exc
        return fallback

    # --- the cache API (see django.core.cache.backends.redis.RedisCache) ---------------------

    def add(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> bool:
        # True, as DummyCache answers: callers that add to coalesce (share-link refusals) then
        # do their work each time instead of never.
        return self._guard(
            [key], lambda: super(FailSafeRedisCache, self).add(key, value, timeout, version), True
        )

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        return self._guard(
            [key], lambda: super(FailSafeRedisCache, self).get(key, default, version), default
        )

    def set(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> None:
        self._guard(
            [key], lambda: super(FailSafeRedisCache, self).set(key, value, timeout, version), None
        )

    def touch(self, key: Any, timeout: Any = None, version: Any = None) -> bool:
        return self._guard(
            [key], lambda: super(FailSafeRedisCache, self).touch(key, timeout, version), False
        )

    def delete(self, key: Any, version: Any = None) -> bool:
        return self._guard(
            [key], lambda: super(FailSafeRedisCache, self).delete(key, version), False
        )

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:
        keys = list(keys)
        return self._guard(
            keys, lambda: super(FailSafeRedisCache, self).get_many(keys, version), {}
        )

    def has_key(self, key: Any, version: Any = None) -> bool:
        return self._guard(
            [key], lambda: super(FailSafeRedisCache, self).has_key(key, version), False
        )

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> int:
        missing = object()
        result = self._guard(
            [key], lambda: super(FailSafeRedisCache, self).incr(key, delta, version), missing
        )
        if result is missing:  # as for a key that is not there
            raise ValueError(f"Key '{key}' not found (the cache is unavailable)")
        return result  # type: ignore[return-value]

    def set_many(self, data: Any, timeout: Any = None, version: Any = None) -> list[Any]:
        data = dict(data)
        return self._guard(
            data, lambda: super(FailSafeRedisCache, self).set_many(data, timeout, version), []
        )

    def delete_many(self, keys: Any, version: Any = None) -> None:
        keys = list(keys)
        self._guard(keys, lambda: super(FailSafeRedisCache, self).delete_many(keys, version), None)

    def clear(self) -> bool:
        return self._guard([], lambda: super(FailSafeRedisCache, self).clear(), False)
