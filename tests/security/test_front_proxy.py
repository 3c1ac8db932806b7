"""The front proxy as deployed (deploy/kubernetes/nginx.conf.template, in docker-compose.yml and
the web pods): it buffers slow clients, so gunicorn's sync workers never wait for one, and it
sends selector evaluations to a gunicorn of their own."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from tests.servers import DEMO_POD, PASSWORD, USERNAME, Browser, Gunicorn, Nginx, Stack

pytestmark = pytest.mark.servers


def test_the_deployed_proxy_configuration_is_valid(tmp_path: Path) -> None:
    result = Nginx("127.0.0.1:8000", "127.0.0.1:8001", tmp_path).check()
    assert result.returncode == 0, result.stderr


class SlowClient(threading.Thread):
    """Sends a request's header lines one at a time, one every ``pause`` seconds."""

    def __init__(self, port: int, lines: int, pause: float) -> None:
        super().__init__(daemon=True)
        self.port, self.lines, self.pause = port, lines, pause
        self.sent = 0

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sock:
            sock.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            for i in range(self.lines):
                time.sleep(self.pause)
                try:
                    sock.sendall(f"X-Slow-{i}: {'x' * 20}\r\n".encode())
                except OSError:  # the proxy gave up on us: what it should do
                    return
                self.sent += 1


def test_slow_clients_do_not_hold_gunicorns_workers(stack: Stack, tmp_path: Path) -> None:
    """With one sync worker, one client sending its headers slowly would hold it for as long
    as it likes (until gunicorn kills the worker after 30 s). Behind the proxy, four such
    clients leave it free: a logged-in user's pages are answered meanwhile."""
    web = Gunicorn(stack.env, workers=1, logdir=tmp_path / "web").start()
    proxy = Nginx(web.url.removeprefix("http://"), "127.0.0.1:9", tmp_path / "nginx").start()
    slow = [SlowClient(proxy.port, lines=8, pause=1.0) for _ in range(4)]
    try:
        # The worker has loaded Django before the clock starts: on a busy machine the first
        # request alone can take seconds.
        assert Browser(proxy.url, timeout=60).get("/accounts/login/").status == 200
        for client in slow:
            client.start()
        time.sleep(1.5)  # every slow client has started its request
        # Straight to gunicorn, the first slow client alone would hold the worker for 8 s.
        browser = Browser(proxy.url, timeout=6)
        browser.log_in(USERNAME, PASSWORD)
        assert any(client.is_alive() for client in slow), "the slow clients ended too soon"
        namespace, name = DEMO_POD
        pages = [
            f"/snapshots/{stack.seed.snapshot}/",
            f"/snapshots/{stack.seed.snapshot}/pods/{namespace}/{name}/",
        ]
        for path in pages:
            reply = browser.get(path)
            assert reply.status == 200, f"{path}: {reply.status}\n{proxy.output()}"
    finally:
        proxy.stop()
        web.stop()
    assert "WORKER TIMEOUT" not in web.output()


def test_selector_evaluations_go_to_their_own_gunicorn(stack: Stack, tmp_path: Path) -> None:
    web = Gunicorn(stack.env, workers=1, logdir=tmp_path / "web").start()
    evaluate = Gunicorn(stack.env, workers=1, logdir=tmp_path / "evaluate").start()
    proxy = Nginx(
        web.url.removeprefix("http://"), evaluate.url.removeprefix("http://"), tmp_path / "nginx"
    ).start()
    snapshot = stack.seed.snapshot
    body = json.dumps({"expression": "device.driver != ''", "snapshot": snapshot}).encode()
    api = {**stack.seed.auth(), "Content-Type": "application/json"}
    try:
        browser = Browser(proxy.url)
        for path in ("/api/v1/selectors/evaluate", "/api/v1/selectors/evaluate/"):
            reply = browser.request("POST", path, data=body, headers=api)
            assert reply.status == 200, reply.text[:500]
            assert reply.json()["summary"]["matched"] > 0
        browser.log_in(USERNAME, PASSWORD)
        assert browser.get(f"/playground/?snapshot={snapshot}").status == 200
        assert browser.get(f"/snapshots/{snapshot}/").status == 200
    finally:
        proxy.stop()
        web.stop()
        evaluate.stop()
    web_log, evaluate_log = web.output(), evaluate.output()
    assert "/api/v1/selectors/evaluate" in evaluate_log
    assert "/playground/" in evaluate_log
    assert f"/snapshots/{snapshot}/ " in web_log
    assert "/api/v1/selectors/" not in web_log
    assert "/playground/" not in web_log
    assert f"/snapshots/{snapshot}/ " not in evaluate_log
