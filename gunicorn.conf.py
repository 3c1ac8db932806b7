"""gunicorn settings for dradash (the Dockerfile, docker-compose.yml and deploy/kubernetes run
``gunicorn -c gunicorn.conf.py dradash.wsgi``). Environment variables:

    DRADASH_BIND         address to listen on (default 0.0.0.0:8000)
    WEB_CONCURRENCY      worker processes (default 3)
    WEB_THREADS          threads per worker (default 1: gunicorn's sync worker; more: gthread).
                         The gunicorn that serves selector evaluations runs 4, so that a quick
                         evaluation never waits for a worker a long one holds
    DRADASH_WORKER_NICE  niceness added to each worker (default 0); the gunicorn that serves
                         selector evaluations runs with 10, so that pages win the CPU

In production gunicorn sits behind nginx (deploy/kubernetes/nginx.conf.template), which buffers
slow clients: its sync workers serve one request at a time and must never wait for a client.

The access log goes to standard output through dradash.logs.GunicornLogger, which masks share
tokens (/share/<token>/…) in every field. Requests time out after 30 s; the database statement
timeout of web requests (DRADASH_DB_STATEMENT_TIMEOUT, 20 s) is shorter, so a slow query ends in
a clear error page rather than a killed worker.
"""

from __future__ import annotations

import os

bind = [os.environ.get("DRADASH_BIND") or "0.0.0.0:8000"]
workers = int(os.environ.get("WEB_CONCURRENCY") or 3)
threads = int(os.environ.get("WEB_THREADS") or 1)
timeout = 30
graceful_timeout = 30
# Recycle workers now and then, so memory a large request grew is given back.
max_requests = 5000
max_requests_jitter = 500
accesslog = "-"
errorlog = "-"
logger_class = "dradash.logs.GunicornLogger"
# No control socket: nothing uses it, and instances would share ~/.gunicorn/gunicorn.ctl.
control_socket_disable = True
# The worker heartbeat in memory, not on the container's disk.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None


WORKER_NICE = int(os.environ.get("DRADASH_WORKER_NICE") or 0)


def post_worker_init(worker: object) -> None:
    """Web requests get the web database timeouts (dradash.db; settings.DRADASH_DB_TIMEOUTS);
    workers run at the niceness DRADASH_WORKER_NICE asks for."""
    from dradash.db import use_timeouts

    use_timeouts("web")
    if WORKER_NICE > 0:
        os.nice(WORKER_NICE)
