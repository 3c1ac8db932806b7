"""The Celery worker's liveness file: touched by the worker, checked by its liveness probe.

The worker (a bootstep in dradash.celery) touches DRADASH_WORKER_LIVENESS_FILE every
TOUCH_INTERVAL seconds from its main event loop, so the file stops being touched when that
loop is stuck, and is removed when the worker stops. The probe (standard library only, so it
starts fast and needs neither Django nor the broker):

    python -m dradash.liveness [--max-age SECONDS]

exits 0 when the file was touched within --max-age seconds (default 120), else 1 with the
reason on stderr. docker-compose.yml and deploy/kubernetes/worker.yaml use it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DEFAULT_PATH = "/tmp/dradash-worker-alive"
TOUCH_INTERVAL = 15.0
DEFAULT_MAX_AGE = 120.0


def path() -> Path:
    return Path(os.environ.get("DRADASH_WORKER_LIVENESS_FILE") or DEFAULT_PATH)


def touch(file: Path | None = None) -> None:
    file = file or path()
    file.touch()
    os.utime(file)


def remove(file: Path | None = None) -> None:
    (file or path()).unlink(missing_ok=True)


def check(max_age: float = DEFAULT_MAX_AGE, file: Path | None = None) -> str | None:
    """None when the worker is alive, else why it is not."""
    file = file or path()
    try:
        age = time.time() - file.stat().st_mtime
    except FileNotFoundError:
        return f"{file} does not exist: the worker has not started, or has stopped"
    if age > max_age:
        return f"{file} was last touched {age:.0f} s ago (more than {max_age:g} s): stuck"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dradash.liveness", description=__doc__)
    parser.add_argument("--max-age", type=float, default=DEFAULT_MAX_AGE, metavar="SECONDS")
    args = parser.parse_args(argv)
    problem = check(args.max_age)
    if problem:
        print(f"dradash worker not alive: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
