"""Database timeouts per kind of process (settings.DRADASH_DB_TIMEOUTS).

PostgreSQL's ``lock_timeout`` bounds how long a statement waits for a lock, and
``statement_timeout`` how long it may run. Web requests get short ones (a page that waits on a
lock fails with a clear 503 instead of holding a gunicorn worker until it is killed); Celery
workers get longer ones (captures and imports write a lot). gunicorn.conf.py applies the web
timeouts in each gunicorn worker, dradash.celery the worker timeouts. Management commands
(``migrate``, ``import_bundle``, ``capture``), runserver and tests get none.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.db import connections

_TIMEOUT_OPTION = re.compile(r"\s*-c\s*(lock_timeout|statement_timeout)=\S+")


def timeout_options(role: str) -> str:
    """libpq ``options`` that set the role's timeouts, e.g. ``-c lock_timeout=5000 …``."""
    timeouts = settings.DRADASH_DB_TIMEOUTS[role]
    return " ".join(f"-c {name}={int(seconds * 1000)}" for name, seconds in timeouts.items())


def use_timeouts(role: str) -> None:
    """Give this process's PostgreSQL connections the timeouts of ``role`` ("web" or "worker").

    Call it before the process serves anything; connections already open are closed, so the
    next query opens one with the new settings.
    """
    for alias in connections:
        config = settings.DATABASES[alias]
        if "postgresql" not in config.get("ENGINE", ""):
            continue
        options = config.setdefault("OPTIONS", {})
        kept = _TIMEOUT_OPTION.sub("", options.get("options", "")).strip()
        options["options"] = f"{kept} {timeout_options(role)}".strip()
        connections[alias].settings_dict.setdefault("OPTIONS", {})["options"] = options["options"]
        connections[alias].close()
