"""The Redis transport for Celery, with the fix that keeps a worker alive when Redis drops.

The crash (issue 18): a worker running an ``acks_late`` task loses Redis. Celery 5.7's consumer
then (celery/worker/consumer/consumer.py, on_connection_error_after_connected) first calls
``connection.collect()``, which tries to close the channel — that fails on the dead socket of
the BRPOP in progress, before the channel restores its unacknowledged messages — and detaches
the transport from its connection (``transport.client = None``); then it calls
``connection.close()``, which closes the channel again. This time the channel tries to restore
the unacknowledged message (the running task's), and building a Redis client for that reads
``self.connection.client.hostname``: ``AttributeError: 'NoneType' object has no attribute
'hostname'``. kombu ignores connection errors while closing, but not an AttributeError, so it
reaches the worker as "Unrecoverable error" and the worker exits.

The fix: a channel whose transport was detached raises redis' ConnectionError ("the broker
connection is closed") when asked for a client, which kombu's closing code already ignores.
The consumer then reconnects as it does for any broker outage. The task carries on; its
message stays in Redis' unacked set and is redelivered after the visibility timeout only if it
was never acknowledged, which our idempotent tasks shrug off.

settings.CELERY_BROKER_TRANSPORT selects this transport for redis:// broker URLs.
tests/faults/test_broker.py drops Redis under a running task and checks the worker survives.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:  # detached by Connection.collect()/close()
            raise RedisConnectionError("the broker connection is closed")
        return super()._connparams(asynchronous=asynchronous)


class Transport(kombu_redis.Transport):
    Channel = Channel
