"""Load on the deployed web stack while attackers send what one user may send (issues 13, 22).

    python -m benchmarks.load [--profile small] [--duration 30] [--clients 20]
                              [--attackers expensive,heavy,share,slow | all | none]
                              [--direct] [--json]

Starts everything on 127.0.0.1 and nothing elsewhere: a PostgreSQL and a Redis of its own (the
cache every process counts its limits in; tests/servers.py), the profile's synthetic cluster
imported into it, and the web stack as deployed: nginx (deploy/kubernetes/nginx.conf.template)
in front of gunicorn for pages (2 workers) and gunicorn for selector evaluations (2 workers of
4 threads, niced), each ``-c gunicorn.conf.py`` and not recycled during the run. ``--direct``
runs the topology before issue 22 instead: one gunicorn with 2 workers, clients talking to it
directly.
Then, for --duration seconds (at most 60):

- --clients ordinary clients (20), each logged in as its own user, request in turn the
  snapshot's overview, a Pod page and ``POST /api/v1/selectors/evaluate`` with an ordinary
  selector;
- the attackers, each a logged-in user unless said otherwise:

  ``expensive``  one client sending, one after another, expressions built to exhaust a worker:
                 a backtracking regex and chained ``.replace()`` (issue 13); ``distinct()`` on
                 14,000 elements, ``sets.contains`` on two 10,000-element lists, a list doubled
                 by concatenation 20 times, ``format`` with a precision of 10⁹ (issue 22);
  ``heavy``      two users sending, back to back, a legal selector that reads each device's
                 UUID and costs ~100 ms of CEL per device, so an evaluation over the snapshot
                 runs until the time limit (5 s) — within the request rate limit;
  ``share``      two anonymous clients downloading the snapshot's bundle through a share link,
                 back to back;
  ``slow``       two anonymous connections sending a request's header lines one every 5 s.

It reports the throughput and latency (p50, p90, p99, max) of the ordinary requests (pages and
selector requests apart), how the attackers' requests ended, and the resident memory of each
gunicorn worker before and after (and its peak), including workers gunicorn had to replace. The
request rate limit is raised for the run (DRADASH_SELECTOR_RATE), so that 429s for the number of
requests do not stand in for work; the evaluation time per user
(DRADASH_SELECTOR_SECONDS_PER_MINUTE) is as deployed. A benchmark, not a test: it asserts
nothing. Each request times out after 25 s, so the load phase ends within --duration + 25 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
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
    RedisServer,
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
DOUBLED = "cel.bind(l0, [1, 2, 3, 4], " + "".join(
    f"cel.bind(l{i + 1}, l{i} + l{i}, " for i in range(20)
)
EXPENSIVE = {
    "regex": 'device.attributes["x"].model.matches("(a+)+$")',
    "replace": '"aaaaaaaaaa"' + '.replace("a", "aaaaaaaaaa")' * 8 + ".size() > 0",
    "distinct": "lists.range(14000).distinct().size() > 0",
    "sets": "sets.contains(lists.range(10000), lists.range(10000))",
    "doubling": DOUBLED + "l20.size() > 0" + ")" * 21,
    "format": '"%.999999999e".format([1.0]).size() > 0',
}
# Legal (cost about 40,000 per device, far under the limit of 1,000,000) and slow in bulk: it
# reads each device's UUID, so every device is evaluated on its own.
HEAVY = (
    'device.attributes["gpu.nvidia.com"].?uuid.orValue("").size() >= 0 && '
    "lists.range(10000).all(i, i >= 0 && i < 1000000)"
)
ATTACKERS = ("expensive", "heavy", "share", "slow")
SETUP = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from knox.models import AuthToken
from dradash.sharing.services import share_link_create
from dradash.snapshots.models import Snapshot
User = get_user_model()
tokens = []
for name in [f"load-{{i}}" for i in range({clients})] + ["attacker", "heavy-0", "heavy-1"]:
    user = User.objects.create_user(name, password="{password}")
    tokens.append(AuthToken.objects.create(user)[1])
link, share = share_link_create(snapshot=Snapshot.objects.get(pk={snapshot}), user=None,
                                expires_in=timedelta(days=1))
print(json.dumps({{"tokens": tokens, "share": share}}))
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
    size: int = 0  # bytes of the body


@dataclass
class Results:
    ordinary: list[Sample] = field(default_factory=list)
    attacks: list[Sample] = field(default_factory=list)
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
    return Sample(endpoint, reply.status, reply.seconds, error, outcome(reply), len(reply.body))


def outcome(reply: Any) -> str:
    """What a selector API answer says: its error, or the verdict and the devices that ran out
    of time; the start of any other body."""
    if not reply.headers.get("Content-Type", "").startswith("application/json"):
        return ""
    try:
        data = json.loads(reply.body)
        results = data["results"]
    except (ValueError, KeyError, TypeError):
        return " ".join(reply.text[:160].split())
    if data.get("compile_error"):
        return f"compile error: {data['compile_error'].get('message', '')}"[:160]
    if not results:
        return "no devices"
    late = sum(1 for r in results if "time limit" in (r.get("error") or ""))
    first = results[0]
    answer = (first.get("error") or f"matches: {first.get('matches')}")[:140]
    return answer + (f" ({late} of {len(results)} devices out of time)" if late else "")


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
    names = list(EXPENSIVE)
    turn = 0
    while time.monotonic() < deadline:
        name = names[turn % len(names)]
        turn += 1
        body = expensive_body(EXPENSIVE[name])
        sample = timed(
            browser,
            f"expensive:{name}",
            "POST",
            "/api/v1/selectors/evaluate",
            data=body,
            headers=api,
        )
        results.add("attacks", sample)


def heavy_client(base: str, token: str, snapshot: str, deadline: float, results: Results) -> None:
    browser = Browser(base, timeout=REQUEST_TIMEOUT)
    api = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    body = json.dumps({"expression": HEAVY, "snapshot": int(snapshot)}).encode()
    while time.monotonic() < deadline:
        sample = timed(
            browser, "heavy", "POST", "/api/v1/selectors/evaluate", data=body, headers=api
        )
        results.add("attacks", sample)
        if sample.status == 429:  # as a client honouring Retry-After would
            time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))


def share_client(base: str, path: str, deadline: float, results: Results) -> None:
    browser = Browser(base, timeout=REQUEST_TIMEOUT)
    while time.monotonic() < deadline:
        sample = timed(browser, "share", "GET", path)
        results.add("attacks", sample)
        if sample.status == 429:
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def slow_client(port: int, deadline: float, results: Results) -> None:
    """One connection at a time, sending a header line every 5 s until the server gives up
    on it or the run ends; each connection is one sample (how long it was held open)."""
    while time.monotonic() < deadline:
        started = time.monotonic()
        status, error = 0, ""
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT) as sock:
                sock.sendall(b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                i = 0
                while time.monotonic() < deadline:
                    time.sleep(5)
                    sock.sendall(f"X-Slow-{i}: {'x' * 20}\r\n".encode())
                    i += 1
                    sock.setblocking(False)
                    try:
                        answer = sock.recv(64)
                    except BlockingIOError:
                        answer = None
                    finally:
                        sock.setblocking(True)
                    if answer is not None:  # an answer (408, 400) or a closed connection
                        match = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
                        status = int(match.group(1)) if match else 0
                        error = "answered" if match else "closed by the server"
                        break
                else:
                    error = "held until the run ended"
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc}"
        results.add("attacks", Sample("slow", status, time.monotonic() - started, error))


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


class Stack:
    """PostgreSQL, Redis, the imported cluster and the web stack (as deployed, or direct)."""

    def __init__(self, profile: str, clients: int, direct: bool) -> None:
        self.profile, self.clients, self.direct = profile, clients, direct
        self.workdir = Path(tempfile.mkdtemp(prefix="dradash-load-"))
        self.postgres = PostgresServer()
        self.redis = RedisServer()
        self.servers: list[Any] = []
        self.gunicorns: dict[str, Gunicorn] = {}

    def start(self) -> dict[str, Any]:
        self.postgres.start()
        self.postgres.create_database()
        self.redis.start()
        static = self.workdir / "static"
        collect_static(static)
        env = base_env(
            DATABASE_URL=self.postgres.url(),
            DRADASH_CACHE_URL=self.redis.url(1),
            DRADASH_STATIC_ROOT=str(static),
            PYTHONPATH=str(ROOT),
            DRADASH_SELECTOR_RATE="100000/minute",
        )
        manage(env, "migrate", "--noinput")
        bundle = self.workdir / "bundle.json"
        subprocess.run(
            [sys.executable, "-m", "benchmarks.synthetic", "--profile", self.profile]
            + ["--output", str(bundle)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
        )
        lines = manage(env, "import_bundle", str(bundle), "--cluster", "load", "--json")
        snapshot = json.loads(lines.splitlines()[-1])["snapshot"]
        seeded = json.loads(
            manage(
                env,
                "shell",
                "-c",
                SETUP.format(clients=self.clients, password=PASSWORD, snapshot=snapshot),
            ).splitlines()[-1]
        )
        with self.postgres.connect() as conn:
            namespace, name = conn.execute(
                "SELECT namespace, name FROM snapshots_objectblob WHERE kind = 'Pod' "
                "ORDER BY namespace, name LIMIT 1"
            ).fetchone()
        # No recycling after max_requests during the run: the same workers throughout, so
        # their memory before and after compares.
        args = ("--max-requests", "0")
        if self.direct:
            web = Gunicorn(env, workers=2, logdir=self.workdir / "web", args=args).start()
            self.gunicorns = {"web": web}
            self.url, self.port = web.url, web.port
        else:
            from tests.servers import Nginx

            web = Gunicorn(env, workers=2, logdir=self.workdir / "web", args=args).start()
            evaluate = Gunicorn(
                {**env, "DRADASH_WORKER_NICE": "10", "WEB_THREADS": "4"},
                workers=2,
                logdir=self.workdir / "evaluate",
                args=args,
            ).start()
            self.gunicorns = {"web": web, "evaluate": evaluate}
            proxy = Nginx(
                web.url.removeprefix("http://"),
                evaluate.url.removeprefix("http://"),
                self.workdir / "nginx",
            ).start()
            self.servers.append(proxy)
            self.url, self.port = proxy.url, proxy.port
        self.servers.extend(self.gunicorns.values())
        return {
            "snapshot": str(snapshot),
            "overview": f"/snapshots/{snapshot}/",
            "pod": f"/snapshots/{snapshot}/pods/{namespace}/{name}/",
            "share": f"/share/{seeded['share']}/snapshots/{snapshot}/bundle.json",
            "tokens": seeded["tokens"],
            "bundle_mib": round(bundle.stat().st_size / 2**20, 1),
        }

    def workers(self) -> dict[str, list[int]]:
        return {
            name: worker_pids(server.process.pid)
            for name, server in self.gunicorns.items()
            if server.process is not None
        }

    def logs(self) -> str:
        return "".join(g.stderr.read_text(errors="replace") for g in self.gunicorns.values())

    def close(self) -> None:
        # A worker stuck in an evaluation outlives its master's stop: kill what is left.
        workers = [pid for pids in self.workers().values() for pid in pids]
        for server in reversed(self.servers):
            server.stop()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.redis.close()
        self.postgres.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def run(
    profile: str, duration: float, clients: int, attackers: tuple[str, ...], direct: bool
) -> dict[str, Any]:
    stack = Stack(profile, clients, direct)
    try:
        paths = stack.start()
        tokens = paths["tokens"]

        # Warm up: every worker serves each page (a fresh process' first request loads more),
        # from several clients at once so that each worker takes some.
        def warm_up(i: int) -> None:
            browser = Browser(stack.url, timeout=60)
            browser.log_in(f"load-{i}", PASSWORD)
            api = {"Authorization": f"Token {tokens[i]}", "Content-Type": "application/json"}
            body = json.dumps({"expression": ORDINARY_SELECTOR, "snapshot": int(paths["snapshot"])})
            for _ in range(3):
                for path in (paths["overview"], paths["pod"]):
                    browser.get(path)
                browser.request(
                    "POST", "/api/v1/selectors/evaluate", data=body.encode(), headers=api
                )

        warmers = [threading.Thread(target=warm_up, args=(i,)) for i in range(min(4, clients))]
        for thread in warmers:
            thread.start()
        for thread in warmers:
            thread.join()
        before_pids = stack.workers()
        before = {pid: memory(pid) for pids in before_pids.values() for pid in pids}

        # Logged in before the clock starts (a login hashes a password: not what is measured).
        browsers = [Browser(stack.url, timeout=REQUEST_TIMEOUT) for _ in range(clients)]
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
        attacker_threads: list[threading.Thread] = []
        if "expensive" in attackers:
            attacker_threads.append(
                threading.Thread(
                    target=expensive_client, args=(stack.url, tokens[clients], deadline, results)
                )
            )
        if "heavy" in attackers:
            attacker_threads += [
                threading.Thread(
                    target=heavy_client,
                    args=(stack.url, tokens[clients + 1 + i], paths["snapshot"], deadline, results),
                )
                for i in range(2)
            ]
        if "share" in attackers:
            attacker_threads += [
                threading.Thread(
                    target=share_client, args=(stack.url, paths["share"], deadline, results)
                )
                for _ in range(2)
            ]
        if "slow" in attackers:
            attacker_threads += [
                threading.Thread(target=slow_client, args=(stack.port, deadline, results))
                for _ in range(2)
            ]
        for thread in attacker_threads:
            thread.daemon = True
        threads += attacker_threads
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline + REQUEST_TIMEOUT + 5 - time.monotonic()))
        elapsed = time.monotonic() - started

        after_pids = stack.workers()
        after = {pid: memory(pid) for pids in after_pids.values() for pid in pids}
        with results.lock:
            ordinary = list(results.ordinary)
            attacks = list(results.attacks)
        by_endpoint: dict[str, list[Sample]] = defaultdict(list)
        for sample in ordinary:
            by_endpoint[sample.endpoint].append(sample)
        pages = by_endpoint["overview"] + by_endpoint["pod"]
        log = stack.logs()
        return {
            "profile": profile,
            "bundle_mib": paths["bundle_mib"],
            "clients": clients,
            "attackers": list(attackers),
            "topology": "direct" if direct else "proxy",
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
            "attacks": [
                {
                    "kind": s.endpoint,
                    "status": s.status,
                    "seconds": round(s.seconds, 2),
                    "bytes": s.size,
                    "answer": s.error[:160] or s.answer[:160],
                }
                for s in attacks
            ],
            "workers": {
                "pools": {name: [str(p) for p in pids] for name, pids in before_pids.items()},
                "before": {str(pid): m for pid, m in before.items()},
                "after": {str(pid): m for pid, m in after.items()},
                "replaced": sorted(
                    {p for ps in before_pids.values() for p in ps}
                    - {p for ps in after_pids.values() for p in ps}
                ),
                "timeouts_in_log": log.count("WORKER TIMEOUT"),
            },
            "cpus": os.cpu_count(),
        }
    finally:
        stack.close()


def report(result: dict[str, Any]) -> None:
    o = result["ordinary"]
    topology = (
        "one gunicorn (2 workers), no proxy"
        if result["topology"] == "direct"
        else "nginx + gunicorn web (2 workers) + gunicorn evaluate (2 workers x 4 threads, niced)"
    )
    attackers = ", ".join(result["attackers"]) or "none"
    print(
        f"synthetic-{result['profile']} ({result['bundle_mib']} MiB bundle), "
        f"{result['clients']} clients, attackers: {attackers}; {result['duration_s']} s; "
        f"{topology}; {result['cpus']} CPUs"
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
    kinds = sorted({a["kind"] for a in result["attacks"]})
    if kinds:
        print("attackers' requests:")
    for kind in kinds:
        done = [a for a in result["attacks"] if a["kind"] == kind]
        seconds = [a["seconds"] for a in done]
        statuses = dict(Counter(a["status"] or "no answer" for a in done))
        answers = Counter(a["answer"] for a in done).most_common(1)
        mib = sum(a["bytes"] for a in done) / 2**20
        size = f"  {mib:.1f} MiB received" if mib >= 0.1 else ""
        print(
            f"  {kind:<19} n={len(done):<4} statuses {statuses}  median "
            f"{statistics.median(seconds):.2f} s  max {max(seconds):.2f} s{size}"
            f"  — {answers[0][0] if answers else ''}"
        )
    w = result["workers"]
    print("gunicorn workers (MiB, resident / peak):")
    for pool, pids in w["pools"].items():
        for pid in pids:
            m = w["before"][pid]
            later = w["after"].get(pid)
            now = f"{later['rss_mib']} / {later['peak_mib']}" if later else "replaced (killed)"
            print(f"  {pool:<8} pid {pid}: before {m['rss_mib']} / {m['peak_mib']}, after {now}")
    for pid, m in w["after"].items():
        if pid not in w["before"]:
            print(f"  pid {pid} (a replacement): after {m['rss_mib']} / {m['peak_mib']}")
    print(f"  worker timeouts in gunicorn's log: {w['timeouts_in_log']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.load",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--profile", default="small", help="synthetic cluster (benchmarks.synthetic)"
    )
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (max 60)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument(
        "--attackers",
        default="all",
        help=f"comma-separated, of {', '.join(ATTACKERS)}; 'all' or 'none' (the baseline)",
    )
    parser.add_argument(
        "--direct", action="store_true", help="one gunicorn, no proxy (the topology before)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    if not 0 < args.duration <= MAX_DURATION:
        parser.error(f"--duration must be more than 0 and at most {MAX_DURATION:g} seconds")
    if args.attackers == "all":
        attackers = ATTACKERS
    elif args.attackers == "none":
        attackers = ()
    else:
        attackers = tuple(a.strip() for a in args.attackers.split(",") if a.strip())
        if unknown := set(attackers) - set(ATTACKERS):
            parser.error(f"unknown attackers: {', '.join(sorted(unknown))}")
    result = run(args.profile, args.duration, args.clients, attackers, args.direct)
    report(result)
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
