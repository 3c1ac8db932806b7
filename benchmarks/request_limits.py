"""A gunicorn worker's memory for a huge API body, and for a bundle downloaded through a share
link (issue 22).

    python -m benchmarks.request_limits [--body-mib 200] [--profile medium] [--json]

Starts everything on 127.0.0.1 and nothing elsewhere: a PostgreSQL of its own (initdb, on a free
port, removed afterwards; tests/servers.py), the profile's synthetic cluster imported into it,
and gunicorn as deployed (``-c gunicorn.conf.py``, production settings, DEBUG off) with 2
workers, started afresh for each case so that each worker's high-water mark is that case's.
Cases:

- ``selector-api``: ``POST /api/v1/selectors/evaluate`` with a JSON body of --body-mib MiB
  (a valid request, padded with one long string);
- ``share-create``: ``POST /api/v1/snapshots/{id}/shares`` with such a body;
- ``selector-api-chunked``: the selector API's body sent with ``Transfer-Encoding: chunked``
  (no Content-Length);
- ``share-download``: the snapshot's bundle through a share link, read to the end.

For each it prints the answer's status, the seconds it took, the bytes received and the largest
growth of a worker's peak resident memory (VmHWM) over the same worker's before the request. A
benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.load import memory, worker_pids  # noqa: E402
from tests.servers import (  # noqa: E402  (after the path is set)
    Gunicorn,
    PostgresServer,
    base_env,
    collect_static,
    manage,
)

SETUP = """
import json
from django.contrib.auth import get_user_model
from knox.models import AuthToken
user = get_user_model().objects.create_user("bench", password="bench-password-1")
print(json.dumps(AuthToken.objects.create(user)[1]))
"""
PIECE = 1 << 20


def padded_body(prefix: bytes, mib: int) -> tuple[int, Iterator[bytes]]:
    """A JSON object starting with ``prefix`` (its first members, then a comma) and a "padding"
    member of ``mib`` MiB: its length and its bytes a MiB at a time."""
    head, tail = prefix + b'"padding":"', b'"}'
    length = len(head) + mib * PIECE + len(tail)

    def pieces() -> Iterator[bytes]:
        yield head
        for _ in range(mib):
            yield b"x" * PIECE
        yield tail

    return length, pieces()


def send(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str],
    body: tuple[int, Iterator[bytes]] | None = None,
    chunked: bool = False,
) -> dict[str, Any]:
    """The answer's status, its size and the seconds until it was read whole (a server that
    answers before reading the body may close the connection under the sender: that is fine)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    started = time.monotonic()
    sent_error = ""
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            length, pieces = body
            conn.putheader("Content-Type", "application/json")
            if chunked:
                conn.putheader("Transfer-Encoding", "chunked")
            else:
                conn.putheader("Content-Length", str(length))
        conn.endheaders()
        if body is not None:
            try:
                for piece in body[1]:
                    conn.send(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                if chunked:
                    conn.send(b"0\r\n\r\n")
            except OSError as exc:  # the server answered and closed: read its answer
                sent_error = f"{type(exc).__name__} while sending"
        response = conn.getresponse()
        received = 0
        first = b""
        while piece := response.read(PIECE):
            first = first or piece[:300]
            received += len(piece)
        return {
            "status": response.status,
            "bytes": received,
            "answer": first.decode("utf-8", "replace")[:160] if received < 10_000 else "",
            "retry_after": response.getheader("Retry-After"),
            "seconds": round(time.monotonic() - started, 2),
            "note": sent_error,
        }
    except OSError as exc:
        return {
            "status": None,
            "bytes": 0,
            "answer": f"{type(exc).__name__}: {exc}",
            "seconds": round(time.monotonic() - started, 2),
            "note": sent_error,
        }
    finally:
        conn.close()


def warm_up(port: int, requests: list[tuple[str, str, dict[str, str], bytes | None]]) -> None:
    """Each request a few times from several threads at once, so that both workers have served
    them (a fresh worker's first request imports and builds what later ones reuse)."""

    def client() -> None:
        for _ in range(3):
            for method, path, headers, body in requests:
                send(port, method, path, headers, (len(body), iter([body])) if body else None)

    threads = [threading.Thread(target=client) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def measured(
    env: dict[str, str],
    workdir: Path,
    warm: list[tuple[str, str, dict[str, str], bytes | None]],
    case: Any,
) -> dict[str, Any]:
    """``case(port)`` against a fresh gunicorn whose workers served ``warm`` first: its answer
    and the largest growth of a worker's peak memory."""
    server = Gunicorn(env, workers=2, logdir=workdir, args=("--max-requests", "0")).start()
    try:
        assert server.process is not None
        warm_up(server.port, warm)
        pids = worker_pids(server.process.pid)
        before = {pid: memory(pid) for pid in pids}
        answer = case(server.port)
        after = {pid: memory(pid) for pid in worker_pids(server.process.pid)}
        growth = max(
            (after[p]["peak_mib"] - before[p]["peak_mib"] for p in pids if p in after),
            default=0.0,
        )
        return {
            **answer,
            "worker_peak_growth_mib": round(growth, 1),
            "worker_peak_mib": max((m["peak_mib"] for m in after.values()), default=0.0),
            "workers_replaced": sorted(set(pids) - set(after)),
        }
    finally:
        server.stop()


def run(body_mib: int, profile: str) -> dict[str, Any]:
    postgres = PostgresServer()
    workdir = Path(tempfile.mkdtemp(prefix="dradash-limits-"))
    try:
        postgres.start()
        postgres.create_database()
        static = workdir / "static"
        collect_static(static)
        env = base_env(
            DATABASE_URL=postgres.url(),
            DRADASH_STATIC_ROOT=str(static),
            PYTHONPATH=str(ROOT),
            DRADASH_SELECTOR_RATE="100000/minute",
        )
        manage(env, "migrate", "--noinput")
        bundle = workdir / "bundle.json"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.synthetic",
                "--profile",
                profile,
                "--output",
                bundle,
            ],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        last = manage(env, "import_bundle", str(bundle), "--cluster", "limits", "--json")
        snapshot = json.loads(last.splitlines()[-1])["snapshot"]
        token = json.loads(manage(env, "shell", "-c", SETUP).splitlines()[-1])
        auth = {"Authorization": f"Token {token}"}
        selector = b'{"expression":"true","resource_slices":[],'
        results: dict[str, Any] = {
            "body_mib": body_mib,
            "profile": profile,
            "bundle_mib": round(bundle.stat().st_size / 2**20, 1),
        }
        # What every case's workers serve first: small requests of the same views.
        warm = [
            ("POST", "/api/v1/selectors/evaluate", auth, selector + b'"padding":""}'),
            ("GET", f"/api/v1/snapshots/{snapshot}/shares", auth, None),
            ("GET", f"/api/v1/snapshots/{snapshot}/", auth, None),
        ]
        results["selector-api"] = measured(
            env,
            workdir,
            warm,
            lambda port: send(
                port,
                "POST",
                "/api/v1/selectors/evaluate",
                auth,
                padded_body(selector, body_mib),
            ),
        )
        results["share-create"] = measured(
            env,
            workdir,
            warm,
            lambda port: send(
                port,
                "POST",
                f"/api/v1/snapshots/{snapshot}/shares",
                auth,
                padded_body(b'{"expires_in":3600,', body_mib),
            ),
        )
        results["selector-api-chunked"] = measured(
            env,
            workdir,
            warm,
            lambda port: send(
                port,
                "POST",
                "/api/v1/selectors/evaluate",
                auth,
                padded_body(selector, body_mib),
                chunked=True,
            ),
        )

        def download(port: int) -> dict[str, Any]:
            made = send(
                port,
                "POST",
                f"/api/v1/snapshots/{snapshot}/shares",
                auth,
                (2, iter([b"{}"])),
            )
            if made["status"] != 201:
                return made
            return send(port, "GET", _share_bundle_path(made, snapshot), {})

        results["share-download"] = measured(env, workdir, warm, download)
        return results
    finally:
        postgres.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _share_bundle_path(made: dict[str, Any], snapshot: int) -> str:
    url = json.loads(made["answer"])["url"]
    token = url.split("/share/", 1)[1].split("/", 1)[0]
    return f"/share/{token}/snapshots/{snapshot}/bundle.json"


def report(result: dict[str, Any]) -> None:
    print(
        f"bodies of {result['body_mib']} MiB; bundle of synthetic-{result['profile']}: "
        f"{result['bundle_mib']} MiB"
    )
    print(f"{'case':<22} {'status':>6} {'seconds':>8} {'received':>12} {'worker peak +MiB':>17}")
    for case in ("selector-api", "share-create", "selector-api-chunked", "share-download"):
        r = result[case]
        print(
            f"{case:<22} {r['status']!s:>6} {r['seconds']:>8} {r['bytes']:>12,} "
            f"{r['worker_peak_growth_mib']:>17}"
        )
        if r.get("answer"):
            print(f"    {r['answer'][:150]}")
        if r.get("workers_replaced"):
            print(f"    workers replaced: {r['workers_replaced']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--body-mib", type=int, default=200)
    parser.add_argument("--profile", default="medium")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.body_mib, args.profile)
    if args.json:
        print(json.dumps(result))
    else:
        report(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
