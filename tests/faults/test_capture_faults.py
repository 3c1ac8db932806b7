"""An API server that misbehaves: an object too large to keep, an answer cut off half-way
(IncompleteRead), an HTML page where JSON belongs. The capture run records what happened in
words a person understands, naming the object, the cut or the page."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from dradash.clusters.models import Cluster
from dradash.clusters.services import capture_run_create, capture_run_execute, cluster_register
from dradash.kube.client import Kube, KubeError, connect
from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.selectors import snapshot_objects
from tests.kubeapi import KubeAPIServer, fixture_objects

pytestmark = pytest.mark.django_db

LIMIT = 256 * 1024


class RawServer:
    """Answers every request with the same raw bytes (status line, headers, body), then
    closes the connection: whatever a broken server or a proxy in the way might send."""

    def __init__(self, raw: bytes, answers: int | None = None) -> None:
        """``answers``: after that many, close each connection without a word."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                outer.requests += 1
                if answers is not None and outer.requests > answers:
                    self.close_connection = True
                    return
                self.wfile.write(raw)
                self.wfile.flush()
                self.close_connection = True

            do_POST = do_GET  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.requests = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: raw\n"
            f"clusters: [{{name: raw, cluster: {{server: '{self.url}'}}}}]\n"
            "users: [{name: raw, user: {token: t}}]\n"
            "contexts: [{name: raw, context: {cluster: raw, user: raw}}]\n"
        )
        return path

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries without waiting (they still happen)."""
    monkeypatch.setattr(Kube, "_delay", lambda self, attempt, retry_after: 0.0)


@pytest.fixture
def raw_server() -> Iterator[list[RawServer]]:
    servers: list[RawServer] = []
    yield servers
    for server in servers:
        server.close()


def capture_with(kubeconfig: Path, name: str = "faulty") -> SnapshotRun:
    cluster, _ = cluster_register(name=name, kubeconfig_path=str(kubeconfig))
    run = capture_run_create(cluster, enqueue=False)
    finished = capture_run_execute(run.pk)
    assert finished is not None
    return finished


def test_an_object_over_the_size_limit_is_named_and_left_out(tmp_path: Path, settings) -> None:
    settings.DRADASH_CAPTURE_MAX_OBJECT_BYTES = LIMIT
    objects = fixture_objects()
    pod = next(o for o in objects if o["kind"] == "Pod" and o["spec"].get("resourceClaims"))
    bloated = copy.deepcopy(pod)
    bloated["metadata"]["name"] = "bloated-0"
    bloated["metadata"]["uid"] = "bloated-uid"
    bloated["metadata"].setdefault("annotations", {})["example.com/blob"] = "x" * (4 * LIMIT)
    objects.append(bloated)
    namespace = bloated["metadata"]["namespace"]

    with KubeAPIServer(objects) as api:
        run = capture_with(api.kubeconfig(tmp_path / "kubeconfig"))

    assert run.status == SnapshotRun.Status.SUCCEEDED, run.error
    snapshot = run.snapshot
    assert snapshot is not None and snapshot.status == Snapshot.Status.PARTIAL
    pods = snapshot.kinds["Pod"]
    assert pods["status"] == "error"
    assert f"Pod {namespace}/bloated-0 (1.0 MiB)" in pods["message"]
    assert "limit of 0.2 MiB per object" in pods["message"]
    names = {r[0] for r in snapshot_objects(snapshot, kinds=["Pod"], fields=("name",))}
    assert pod["metadata"]["name"] in names and "bloated-0" not in names
    # Everything else is whole.
    assert snapshot.kinds["ResourceClaim"]["status"] == "ok"


def test_an_answer_cut_off_half_way_is_reported_as_such(
    tmp_path: Path, raw_server: list[RawServer]
) -> None:
    cut = RawServer(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
        b'{"kind": "Status", "gitVersion": "v1.3'
    )
    raw_server.append(cut)
    kube = Kube(connect(str(cut.kubeconfig(tmp_path / "kc")), None, False), retries=1, sleep=float)
    with pytest.raises(KubeError) as caught:
        kube.get("/version")
    message = str(caught.value)
    assert caught.value.reason == "IncompleteRead"
    assert f"{cut.url} broke off its answer to GET /version" in message
    assert "38 bytes, 4962 more expected" in message
    assert "cannot reach" not in message
    assert cut.requests == 2  # retried once, as for any transient failure

    run = capture_with(cut.kubeconfig(tmp_path / "kubeconfig"))
    assert run.status == SnapshotRun.Status.FAILED
    assert "broke off its answer to GET /version" in run.error
    assert "IncompleteRead" in run.error and "cannot reach" not in run.error


LOGIN_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Sign in - Corporate SSO</title></head>"
    b"<body><form>...</form></body></html>"
)


@pytest.mark.parametrize(
    ("status", "content_type"),
    [(b"200 OK", b"text/html; charset=utf-8"), (b"502 Bad Gateway", b"text/html")],
)
def test_an_html_page_instead_of_json_is_named_as_html(
    tmp_path: Path, raw_server: list[RawServer], status: bytes, content_type: bytes
) -> None:
    page = RawServer(
        b"HTTP/1.1 " + status + b"\r\nContent-Type: " + content_type + b"\r\n"
        b"Content-Length: " + str(len(LOGIN_PAGE)).encode() + b"\r\n\r\n" + LOGIN_PAGE
    )
    raw_server.append(page)
    run = capture_with(page.kubeconfig(tmp_path / "kubeconfig"))
    assert run.status == SnapshotRun.Status.FAILED
    assert 'an HTML page titled "Sign in - Corporate SSO"' in run.error
    assert "<html" not in run.error and "<form" not in run.error
    if status.startswith(b"200"):
        assert "not a Kubernetes API server, or a proxy or login page" in run.error
    assert Cluster.objects.get(name="faulty").snapshots.count() == 0


def test_a_connection_dropped_after_an_answer_reports_the_answer(
    tmp_path: Path, raw_server: list[RawServer]
) -> None:
    """A proxy that answers 502 once and then drops connections: giving up, the capture names
    the answer it got (an HTML page), not the dropped connection of its last try."""
    page = RawServer(
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\n"
        b"Content-Length: " + str(len(LOGIN_PAGE)).encode() + b"\r\n\r\n" + LOGIN_PAGE,
        answers=1,
    )
    raw_server.append(page)
    run = capture_with(page.kubeconfig(tmp_path / "kubeconfig"))
    assert run.status == SnapshotRun.Status.FAILED
    assert page.requests > 1  # it retried
    assert 'an HTML page titled "Sign in - Corporate SSO"' in run.error
    assert "cannot reach" not in run.error
