"""Security tests that need real servers use the fixtures of tests/servers.py."""

from __future__ import annotations

from tests.servers import postgres_up, redis_server, stack  # noqa: F401  (fixtures)
