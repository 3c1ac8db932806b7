"""Redis going away: the worker survives and carries on, "Capture now" says the queue is
unavailable instead of answering 500, pages that use the cache keep working, and the selector
API's rate limit refuses with a clear 503. Everything recovers once Redis is back, by itself.

One site per module: our own PostgreSQL (tests/servers.py), our own Redis as broker (db 0) and
cache (db 1), gunicorn with two workers and a Celery worker with the prefork pool, as deployed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.kubeapi import KubeAPIServer
from tests.servers import (
    PASSWORD,
    ROOT,
    USERNAME,
    Browser,
    CeleryWorker,
    Gunicorn,
    RedisServer,
    Stack,
    page_text,
    wait_for,
)

pytestmark = pytest.mark.servers

QUEUE_UNAVAILABLE = "the task queue is unavailable"
CREATE_RUN = """
from dradash.clusters.models import Cluster
from dradash.clusters.services import capture_run_create
run = capture_run_create(Cluster.objects.get(name="{cluster}"))
print(run.pk)
"""


@dataclass
class Site:
    stack: Stack
    redis: RedisServer
    web: Gunicorn
    worker: CeleryWorker
    kube: KubeAPIServer
    cluster: str
    cluster_id: int

    def run(self, run_id: int) -> tuple[str, str]:
        (row,) = self.stack.query(
            "SELECT status, error FROM snapshots_snapshotrun WHERE id = %s", [run_id]
        )
        return row[0], row[1]

    def wait_finished(self, run_id: int, timeout: float = 90) -> tuple[str, str]:
        def finished() -> tuple[str, str] | None:
            assert self.worker.alive, f"the worker died:\n{self.worker.output()}"
            status, error = self.run(run_id)
            return (status, error) if status in ("succeeded", "failed") else None

        return wait_for(finished, timeout, f"run {run_id} to finish\n{self.worker.output()}")

    def browser(self) -> Browser:
        browser = Browser(self.web.url)
        browser.log_in(USERNAME, PASSWORD)
        return browser


@pytest.fixture(scope="module")
def site(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    logs = tmp_path_factory.mktemp("broker-site")
    redis = RedisServer()
    redis.start()
    env = {
        **stack.env,
        "CELERY_BROKER_URL": redis.url(0),
        "DRADASH_CACHE_URL": redis.url(1),
        # The tests press Capture now right after the first test's captures: its interval is
        # tested in tests/clusters/test_capture_now_access.py, not here.
        "DRADASH_CAPTURE_NOW_INTERVAL": "0",
    }
    # A capture that takes a few seconds: long enough to pull Redis out from under it.
    kube = KubeAPIServer(page_delay=0.4).start()
    cluster = "broker-faults"
    kubeconfig = kube.kubeconfig(logs / "kubeconfig")
    stack.manage("add_cluster", cluster, "--kubeconfig", str(kubeconfig), "--no-schedule")
    (cluster_id,) = stack.query("SELECT id FROM clusters_cluster WHERE name = %s", [cluster])[0]
    worker = CeleryWorker(env, logs).start()
    web = Gunicorn(env, workers=2, logdir=logs).start()
    try:
        yield Site(stack, redis, web, worker, kube, cluster, cluster_id)
    finally:
        web.stop()
        worker.stop()
        kube.stop()
        redis.close()


@pytest.fixture
def redis_back(site: Site) -> Iterator[RedisServer]:
    """Redis, running again after the test whatever the test did to it."""
    yield site.redis
    site.redis.start()


def liveness(site: Site) -> subprocess.CompletedProcess[str]:
    env = {"DRADASH_WORKER_LIVENESS_FILE": str(site.worker.liveness), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "dradash.liveness"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_worker_survives_redis_dropping_under_a_running_capture(
    site: Site, redis_back: RedisServer
) -> None:
    """Redis killed while a capture (acks_late) runs: the worker used to exit with
    "Unrecoverable error: AttributeError("'NoneType' object has no attribute 'hostname'")";
    now it reconnects, the capture finishes, and the next one runs too."""
    run_id = int(site.stack.shell(CREATE_RUN.format(cluster=site.cluster), **site_env(site)))
    wait_for(lambda: site.run(run_id)[0] == "running", 30, "the capture to start")

    site.redis.kill()
    time.sleep(3)  # the worker notices at once and keeps trying to reconnect
    assert site.worker.alive, f"the worker exited when Redis dropped:\n{site.worker.output()}"
    site.redis.start()

    assert site.wait_finished(run_id) == ("succeeded", "")
    wait_for(
        lambda: site.worker.output().count("Connected to") >= 2 or not site.worker.alive,
        30,
        "the worker to reconnect",
    )
    assert site.worker.alive, f"the worker exited:\n{site.worker.output()}"
    assert "Unrecoverable error" not in site.worker.output()

    # It still takes work: a new capture, queued after Redis came back.
    after = int(site.stack.shell(CREATE_RUN.format(cluster=site.cluster), **site_env(site)))
    assert site.wait_finished(after) == ("succeeded", "")
    assert site.worker.alive
    assert liveness(site).returncode == 0, liveness(site).stderr


def test_capture_now_with_the_broker_down_fails_the_run_at_once_and_says_so(
    site: Site, redis_back: RedisServer
) -> None:
    browser = site.browser()
    url = f"/clusters/{site.cluster_id}/capture/"
    site.redis.kill()

    # htmx (the button on the home page): the run's fragment, with the reason, not a 500.
    htmx = browser.post_form(url, {}, **{"HX-Request": "true"})
    assert htmx.status == 200, htmx.text[:500]
    assert QUEUE_UNAVAILABLE in page_text(htmx.text)
    assert "<html" not in htmx.text
    assert htmx.seconds < 10
    failed = [r for (r,) in site.stack.query(
        "SELECT id FROM snapshots_snapshotrun WHERE status = 'failed' AND error LIKE %s",
        [f"{QUEUE_UNAVAILABLE}%"],
    )]  # fmt: skip
    assert failed, "the run was left queued"

    # A plain form POST (no JavaScript): redirected to the run's page, which says why.
    plain = browser.post_form(url, {})
    assert plain.status == 302, plain.text[:500]
    run_page = browser.get(plain.headers["Location"])
    assert run_page.status == 200
    assert QUEUE_UNAVAILABLE in page_text(run_page.text)
    run_id = int(plain.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    assert run_id not in failed  # a new run, not joined to a dead one
    assert site.run(run_id)[0] == "failed"
    # The home page (which reads the cache-free run list) works meanwhile.
    assert browser.get("/").status == 200

    # Redis back: the next click queues a run that the worker carries out. No human needed.
    site.redis.start()
    again = browser.post_form(url, {}, **{"HX-Request": "true"})
    assert again.status == 200
    assert QUEUE_UNAVAILABLE not in page_text(again.text)
    (latest,) = site.stack.query("SELECT max(id) FROM snapshots_snapshotrun")[0]
    assert site.wait_finished(latest) == ("succeeded", "")


def test_with_the_cache_down_pages_work_and_the_selector_api_refuses_with_503(
    site: Site, redis_back: RedisServer
) -> None:
    browser = site.browser()
    api = {**site.stack.seed.auth(), "Content-Type": "application/json"}
    body = (
        b'{"expression": "device.driver == \\"gpu.example.com\\"", "resource_slices": '
        b'[{"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "pool": {"name": '
        b'"p", "generation": 1, "resourceSliceCount": 1}, "allNodes": true, "devices": '
        b'[{"name": "gpu-0"}]}}]}'
    )
    assert (
        browser.request("POST", "/api/v1/selectors/evaluate", data=body, headers=api).status == 200
    )

    site.redis.kill()
    limited = browser.request("POST", "/api/v1/selectors/evaluate", data=body, headers=api)
    assert limited.status == 503, limited.text[:500]
    assert limited.headers["Content-Type"] == "application/json"
    assert "rate limiter" in limited.json()["detail"] and "unavailable" in limited.json()["detail"]
    assert int(limited.headers["Retry-After"]) > 0
    # Pages that only read keep working; a refused share link (coalesced in the cache) is the
    # ordinary 404 page.
    assert browser.get("/").status == 200
    assert browser.get(f"/snapshots/{site.stack.seed.snapshot}/").status == 200
    refused = Browser(site.web.url).get("/share/not-a-real-token/")
    assert refused.status == 404
    assert "<html" in refused.text

    site.redis.start()
    back = wait_for(
        lambda: (
            r
            if (
                r := browser.request("POST", "/api/v1/selectors/evaluate", data=body, headers=api)
            ).status
            == 200
            else None
        ),
        30,
        "the selector API to answer again",
        interval=1,
    )
    assert back.json()["summary"]["matched"] == 1


def site_env(site: Site) -> dict[str, str]:
    return {"CELERY_BROKER_URL": site.redis.url(0), "DRADASH_CACHE_URL": site.redis.url(1)}


def test_the_liveness_probe_fails_once_the_worker_is_gone(tmp_path: Path) -> None:
    """The probe's logic without a worker: no file, a stale file, a fresh one."""
    from dradash import liveness as probe

    file = tmp_path / "alive"
    assert "does not exist" in (probe.check(60, file) or "")
    probe.touch(file)
    assert probe.check(60, file) is None
    import os

    os.utime(file, (time.time() - 300, time.time() - 300))
    assert "stuck" in (probe.check(60, file) or "")
