"""A worker that still dies, or gets stuck, is restarted: compose and Kubernetes restart it when
it exits, and its liveness check (python -m dradash.liveness) fails when its event loop stops
touching the liveness file."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.servers import ROOT, CeleryWorker, RedisServer, Stack

pytestmark = pytest.mark.servers


def probe(file: Path, max_age: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dradash.liveness", "--max-age", str(max_age)],
        cwd=ROOT,
        env={"DRADASH_WORKER_LIVENESS_FILE": str(file), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )


def test_the_liveness_check_follows_the_worker(
    stack: Stack, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = {**stack.env, "CELERY_BROKER_URL": redis_server.url(0)}
    worker = CeleryWorker(env, tmp_path).start()
    try:
        assert probe(worker.liveness).returncode == 0
        first = worker.liveness.stat().st_mtime
        time.sleep(16)  # touched every 15 s
        assert worker.liveness.stat().st_mtime > first
        # Frozen (SIGSTOP: alive, but its loop no longer runs): the file goes stale.
        assert worker.process is not None
        worker.process.send_signal(signal.SIGSTOP)
        time.sleep(3)
        stale = probe(worker.liveness, max_age=2)
        assert stale.returncode == 1 and "stuck" in stale.stderr
        worker.process.send_signal(signal.SIGCONT)
    finally:
        worker.stop()
    gone = probe(worker.liveness)
    assert gone.returncode == 1 and "does not exist" in gone.stderr


def test_compose_and_kubernetes_restart_every_worker_and_check_it() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    workers = [s for s in compose["services"].values() if " worker " in f" {s.get('command')} "]
    assert len(workers) >= 3  # one per queue
    for worker in workers:
        assert worker["restart"] in ("always", "unless-stopped")
        assert worker["healthcheck"]["test"][1:4] == ["python", "-m", "dradash.liveness"]

    deployments = list(yaml.safe_load_all((ROOT / "deploy/kubernetes/worker.yaml").read_text()))
    assert len(deployments) >= 3
    for deployment in deployments:
        spec = deployment["spec"]["template"]["spec"]
        assert spec.get("restartPolicy", "Always") == "Always"
        (container,) = spec["containers"]
        probe = container["livenessProbe"]["exec"]["command"]
        assert probe[:3] == ["python", "-m", "dradash.liveness"]
