"""Load on gunicorn while one client sends expensive CEL expressions (issue 13).

    python -m benchmarks.load [--profile small] [--duration 30] [--clients 20] [--json]

Starts everything on 127.0.0.1 and nothing elsewhere: a PostgreSQL of its own (initdb, on a free
port, removed afterwards; tests/servers.py), the profile's synthetic cluster imported into it,
and gunicorn as deployed (``-c gunicorn.conf.py``) with 2 workers (not recycled during the
run). Then, for --duration seconds (at most 60):

- --clients clients (20), each logged in as its own user, request in turn the snapshot's
  overview, a Pod page and ``POST /api/v1/selectors/evaluate`` with an ordinary selector;
- one more client sends, one after another, the expensive expressions of issue 13 to the
  selector API: a backtracking regex (``(a+)+$``) on a 27-character attribute, and eight
  chained ``.replace()`` calls that build a 10⁹-character string.

It reports the throughput and latency (p50, p90, p99, max) of the ordinary requests, how each
expensive request ended and how long it took, and the resident memory of each gunicorn worker
before and after (and its peak), including workers gunicorn had to replace. The selector API's
rate limit is raised for the run (DRADASH_SELECTOR_RATE), so that 429s do not stand in for
work. A benchmark, not a test: it asserts nothing. Each request times out after 25 s, so the
load phase ends within --duration + 25 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.servers import (  # noqa: E402  (after the path is set)
    Browser,
    Gunicorn,
    PostgresServer,
    base_env,
    collect_static,
    manage,
)

MAX_DURATION = 60.0
REQUEST_TIMEOUT = 25.0
PASSWORD = "load-benchmark-password-1"
ORDINARY_SELECTOR = 'device.driver == "gpu.nvidia.com"'
# 26 a's and a character the pattern cannot end on: a backtracking engine tries 2**26 ways.
ATTRIBUTE = "a" * 26 + "!"
EXPENSIVE = {
    "regex": 'device.attributes["x"].model.matches("(a+)+$")',
    "replace": '"aaaaaaaaaa"' + '.replace("a", "aaaaaaaaaa")' * 8 + ".size() > 0",
}
SETUP = """
import json
from django.contrib.auth import get_user_model
from knox.models import AuthToken
User = get_user_model()
tokens = []
for i in range({clients}):
    user = User.objects.create_user(f"load-{{i}}", password="{password}")
    tokens.append(AuthToken.objects.create(user)[1])
attacker = User.objects.create_user("attacker", password="{password}")
tokens.append(AuthToken.objects.create(attacker)[1])
print(json.dumps(tokens))
"""


def expensive_body(expression: str) -> bytes:
    """A selector request on one inline ResourceSlice whose device has x/model = ATTRIBUTE."""
    return json.dumps(
        {
            "expression": expression,
            "resource_slices": [
                {
                    "apiVersion": "resource.k8s.io/v1",
                    "kind": "ResourceSlice",
                    "metadata": {"name": "attack"},
                    "spec": {
                        "driver": "x",
                        "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                        "allNodes": True,
                        "devices": [
                            {"name": "d0", "attributes": {"x/model": {"string": ATTRIBUTE}}}
                        ],
                    },
                }
            ],
        }
    ).encode()


@dataclass
class Sample:
    endpoint: str
    status: int  # 0: no answer (timeout, connection reset)
    seconds: float
    error: str = ""
    answer: str = ""  # the start of the body


@dataclass
class Results:
    ordinary: list[Sample] = field(default_factory=list)
    expensive: list[Sample] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, sample: Sample) -> None:
        with self.lock:
            getattr(self, kind).append(sample)


def timed(browser: Browser, endpoint: str, method: str, path: str, **kwargs: Any) -> Sample:
    started = time.monotonic()
    try:
        reply = browser.request(method, path, **kwargs)
    except Exception as exc:  # timeouts, resets: a worker killed mid-request
        return Sample(endpoint, 0, time.monotonic() - started, f"{type(exc).__name__}: {exc}")
    error = "" if reply.status < 400 else reply.text[:200]
    return Sample(endpoint, reply.status, reply.seconds, error, outcome(reply.text))


def outcome(body: str) -> str:
    """What a selector API answer says about the first device: its error or its verdict."""
    try:
        data = json.loads(body)
        first = data["results"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return " ".join(body[:160].split())
    if data.get("compile_error"):
        return f"compile error: {data['compile_error'].get('message', '')}"[:160]
    return (first.get("error") or f"matches: {first.get('matches')}")[:160]


def ordinary_client(
    browser: Browser, token: str, paths: dict[str, str], deadline: float, results: Results
) -> None:
    api = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    body = json.dumps({"expression": ORDINARY_SELECTOR, "snapshot": int(paths["snapshot"])})
    turn = 0
    while time.monotonic() < deadline:
        which = ("overview", "pod", "selector")[turn % 3]
        turn += 1
        if which == "selector":
            sample = timed(
                browser,
                which,
                "POST",
                "/api/v1/selectors/evaluate",
                data=body.encode(),
                headers=api,
            )
        else:
            sample = timed(browser, which, "GET", paths[which])
        results.add("ordinary", sample)


def expensive_client(base: str, token: str, deadline: float, results: Results) -> None:
    browser = Browser(base, timeout=REQUEST_TIMEOUT)
    api = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    turn = 0
    while time.monotonic() < deadline:
        name = ("regex", "replace")[turn % 2]
        turn += 1
        sample = timed(
            browser,
            name,
            "POST",
            "/api/v1/selectors/evaluate",
            data=expensive_body(EXPENSIVE[name]),
            headers=api,
        )
        results.add("expensive", sample)


def worker_pids(master: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True
    ).stdout
    return sorted(int(p) for p in out.split())


def memory(pid: int) -> dict[str, float]:
    """Resident and peak resident memory of a process, in MiB."""
    fields: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024
    except FileNotFoundError:
        pass
    return {
        "rss_mib": round(fields.get("VmRSS", 0.0), 1),
        "peak_mib": round(fields.get("VmHWM", 0.0), 1),
    }


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def latency(samples: list[Sample]) -> dict[str, Any]:
    seconds = [s.seconds for s in samples]
    return {
        "requests": len(samples),
        "ok": sum(1 for s in samples if 200 <= s.status < 400),
        "statuses": dict(Counter(s.status for s in samples)),
        "p50_ms": round(1000 * statistics.median(seconds), 1) if seconds else None,
        "p90_ms": round(1000 * percentile(seconds, 90), 1) if seconds else None,
        "p99_ms": round(1000 * percentile(seconds, 99), 1) if seconds else None,
        "max_ms": round(1000 * max(seconds), 1) if seconds else None,
    }


def run(profile: str, duration: float, clients: int, expensive: bool = True) -> dict[str, Any]:
    postgres = PostgresServer()
    workdir = Path(tempfile.mkdtemp(prefix="dradash-load-"))
    server: Gunicorn | None = None
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
        imported = json.loads(
            manage(env, "import_bundle", str(bundle), "--cluster", "load", "--json").splitlines()[
                -1
            ]
        )
        snapshot = imported["snapshot"]
        tokens = json.loads(
            manage(
                env, "shell", "-c", SETUP.format(clients=clients, password=PASSWORD)
            ).splitlines()[-1]
        )
        with postgres.connect() as conn:
            namespace, name = conn.execute(
                "SELECT namespace, name FROM snapshots_objectblob WHERE kind = 'Pod' "
                "ORDER BY namespace, name LIMIT 1"
            ).fetchone()
        paths = {
            "snapshot": str(snapshot),
            "overview": f"/snapshots/{snapshot}/",
            "pod": f"/snapshots/{snapshot}/pods/{namespace}/{name}/",
        }

        # No recycling after max_requests during the run: the same two workers throughout, so
        # their memory before and after compares.
        server = Gunicorn(env, workers=2, logdir=workdir, args=("--max-requests", "0")).start()
        assert server.process is not None

        # Warm up: every worker serves each page (a fresh process' first request loads more),
        # from several clients at once so that both workers take some.
        def warm_up(i: int) -> None:
            browser = Browser(server.url, timeout=60)
            browser.log_in(f"load-{i}", PASSWORD)
            for _ in range(3):
                for path in (paths["overview"], paths["pod"]):
                    browser.get(path)

        warmers = [threading.Thread(target=warm_up, args=(i,)) for i in range(4)]
        for thread in warmers:
            thread.start()
        for thread in warmers:
            thread.join()
        before_pids = worker_pids(server.process.pid)
        before = {pid: memory(pid) for pid in before_pids}

        # Logged in before the clock starts (a login hashes a password: not what is measured).
        browsers = [Browser(server.url, timeout=REQUEST_TIMEOUT) for _ in range(clients)]
        for i, browser in enumerate(browsers):
            browser.log_in(f"load-{i}", PASSWORD)

        results = Results()
        started = time.monotonic()
        deadline = started + duration
        threads = [
            threading.Thread(
                target=ordinary_client,
                args=(browsers[i], tokens[i], paths, deadline, results),
                daemon=True,
            )
            for i in range(clients)
        ]
        if expensive:
            threads.append(
                threading.Thread(
                    target=expensive_client,
                    args=(server.url, tokens[-1], deadline, results),
                    daemon=True,
                )
            )
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline + REQUEST_TIMEOUT + 5 - time.monotonic()))
        elapsed = time.monotonic() - started

        after_pids = worker_pids(server.process.pid)
        after = {pid: memory(pid) for pid in after_pids}
        with results.lock:
            ordinary = list(results.ordinary)
            attacks = list(results.expensive)
        by_endpoint: dict[str, list[Sample]] = defaultdict(list)
        for sample in ordinary:
            by_endpoint[sample.endpoint].append(sample)
        pages = by_endpoint["overview"] + by_endpoint["pod"]
        worker_log = server.stderr.read_text(errors="replace")
        return {
            "profile": profile,
            "clients": clients,
            "with_expensive": expensive,
            "duration_s": round(elapsed, 1),
            "ordinary": {
                "requests": len(ordinary),
                "throughput_rps": round(len(ordinary) / elapsed, 1),
                "ok_throughput_rps": round(
                    sum(1 for s in ordinary if 200 <= s.status < 400) / elapsed, 1
                ),
                "pages": latency(pages),
                **{endpoint: latency(samples) for endpoint, samples in sorted(by_endpoint.items())},
                "errors": Counter(s.error[:120] for s in ordinary if s.error).most_common(5),
            },
            "expensive": [
                {
                    "expression": s.endpoint,
                    "status": s.status,
                    "seconds": round(s.seconds, 2),
                    "answer": s.error[:160] or s.answer[:160],
                }
                for s in attacks
            ],
            "workers": {
                "before": {str(pid): m for pid, m in before.items()},
                "after": {str(pid): m for pid, m in after.items()},
                "replaced": sorted(set(before_pids) - set(after_pids)),
                "timeouts_in_log": worker_log.count("WORKER TIMEOUT"),
            },
            "cpus": os.cpu_count(),
        }
    finally:
        if server is not None:
            server.stop()
        postgres.close()
        shutil.rmtree(workdir, ignore_errors=True)


def report(result: dict[str, Any]) -> None:
    o = result["ordinary"]
    attacker = " + 1 sending expensive expressions" if result["with_expensive"] else ""
    print(
        f"synthetic-{result['profile']}, {result['clients']} clients{attacker}, "
        f"{result['duration_s']} s, gunicorn 2 workers, {result['cpus']} CPUs"
    )
    print(
        f"ordinary requests: {o['requests']} ({o['throughput_rps']}/s, answered 2xx/3xx: "
        f"{o['ok_throughput_rps']}/s)"
    )
    for name in ("pages", "overview", "pod", "selector"):
        if name in o:
            m = o[name]
            print(
                f"  {name:<9} n={m['requests']:<5} p50 {m['p50_ms']} ms  p90 {m['p90_ms']} ms  "
                f"p99 {m['p99_ms']} ms  max {m['max_ms']} ms  statuses {m['statuses']}"
            )
    for error, count in o["errors"]:
        print(f"  {count} x {error}")
    if result["with_expensive"]:
        print("expensive requests:")
    for name in EXPENSIVE:
        done = [e for e in result["expensive"] if e["expression"] == name]
        if not done:
            continue
        seconds = [e["seconds"] for e in done]
        statuses = dict(Counter(e["status"] or "no answer" for e in done))
        answers = Counter(e["answer"] for e in done).most_common(1)
        print(
            f"  {name:<8} n={len(done)}  statuses {statuses}  median {statistics.median(seconds)} s"
            f"  max {max(seconds)} s  — {answers[0][0] if answers else ''}"
        )
    w = result["workers"]
    print("gunicorn workers (MiB, resident / peak):")
    for pid, m in w["before"].items():
        later = w["after"].get(pid)
        now = f"{later['rss_mib']} / {later['peak_mib']}" if later else "replaced (killed)"
        print(f"  pid {pid}: before {m['rss_mib']} / {m['peak_mib']}, after {now}")
    for pid, m in w["after"].items():
        if pid not in w["before"]:
            print(f"  pid {pid} (a replacement): after {m['rss_mib']} / {m['peak_mib']}")
    print(f"  worker timeouts in gunicorn's log: {w['timeouts_in_log']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__)
    parser.add_argument(
        "--profile", default="small", help="synthetic cluster (benchmarks.synthetic)"
    )
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (max 60)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument(
        "--without-expensive",
        action="store_true",
        help="no client sending expensive expressions (the baseline)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    if not 0 < args.duration <= MAX_DURATION:
        parser.error(f"--duration must be more than 0 and at most {MAX_DURATION:g} seconds")
    result = run(args.profile, args.duration, args.clients, not args.without_expensive)
    report(result)
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
