"""The fault tests: their own PostgreSQL and Redis, gunicorn and a Celery worker
(tests/servers.py), broken and brought back while the tests watch."""

from __future__ import annotations

from tests.servers import postgres_up, redis_server, stack  # noqa: F401  (fixtures)
