"""The Celery app. Without CELERY_BROKER_URL tasks run eagerly in the calling process.

Besides the app this module holds what every process needs around the broker:

- ``enqueue``: send a task, turning "the broker is unreachable" into QueueUnavailable, so that
  the caller can fail the run it just created with that reason instead of answering 500 and
  leaving a run queued that no worker will ever see.
- the worker's liveness file (dradash.liveness), touched from the worker's event loop;
- the worker's database timeouts (dradash.db.use_timeouts("worker")), longer than the web's.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery, bootsteps, signals
from kombu.exceptions import OperationalError

from dradash import liveness

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")

logger = logging.getLogger(__name__)

app = Celery("dradash")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class QueueUnavailable(Exception):
    """The task could not be handed to the broker (Redis down, unreachable, refusing)."""


def enqueue(task: Any, *args: Any) -> None:
    """``task.delay(*args)``; raises QueueUnavailable when the broker cannot take it.

    Publishing retries briefly (CELERY_TASK_PUBLISH_RETRY_POLICY) before giving up. Without a
    broker the task runs here and now, and its own exceptions propagate as they are.
    """
    try:
        task.delay(*args)
    except OperationalError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        logger.error(
            "cannot queue %s%r: the task queue is unavailable: %s", task.name, args, reason
        )
        raise QueueUnavailable(reason) from exc


class LivenessFile(bootsteps.StartStopStep):
    """Touch the liveness file every liveness.TOUCH_INTERVAL s from the worker's timer (the
    event loop's, with the prefork pool), and remove it when the worker stops."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None

    def start(self, worker: Any) -> None:
        liveness.touch()
        self.tref = worker.timer.call_repeatedly(liveness.TOUCH_INTERVAL, self._touch)

    def _touch(self) -> None:
        try:
            liveness.touch()
        except OSError:  # a full or read-only /tmp must not take the worker down
            logger.exception("cannot touch the liveness file %s", liveness.path())

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None
        liveness.remove()


app.steps["worker"].add(LivenessFile)


@signals.worker_init.connect
def _worker_database_timeouts(**kwargs: Any) -> None:
    """Workers get the longer worker timeouts (pool processes inherit them)."""
    from dradash.db import use_timeouts

    use_timeouts("worker")
