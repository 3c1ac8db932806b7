"""The diff page of two large snapshots, from a fresh web process: time, peak memory, queries.

    DATABASE_URL=postgres://… python -m benchmarks.diff [--profile large] [--rebuild] [--drop]

Stores three snapshots of one synthetic cluster (once: they are kept for the next run, so that
the page can be measured before and after a change of the code), each analysed:

* A: the profile's cluster (seed 0);
* B: A half an hour later: every Node posted a heartbeat (a new resourceVersion and
  lastHeartbeatTime: changed objects that are no change), every Event recurred, 5 % of the
  running Pods failed, 50 devices got a taint;
* C: another cluster of the same size (seed 1) under the same name: most objects added or
  removed, every pool's slices replaced;
* D: A with a label on every object: every object changed, the most a diff can read.

Then a fresh process per pair — as a gunicorn worker after a restart — requests the diff page
of A and each other snapshot (the first request, then the same page again, and the page
filtered to one kind), and prints server time, SQL queries and the process's peak memory
(VmHWM). A benchmark, not a test: it asserts nothing.

Before the diff read a part at a time (issue 22), on the large profile: A → B 8.1 s and 456 MiB,
A → C 59 s and 2,004 MiB (a web worker is cut off at 30 s). After, on the same (busy) machine:
A → B 4.0 s and 153 MiB, A → C 6.5 s and 231 MiB, A → D 6.6 s and 197 MiB (its read budget
spent).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from datetime import timedelta

from benchmarks.stored import django_setup

CLUSTER = "diff-bench-{profile}"

# Run in a fresh interpreter, started as a gunicorn worker starts (dradash.wsgi).
PAGE_SCRIPT = r"""
import json, sys, time
import dradash.wsgi
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

client = Client()
client.force_login(get_user_model().objects.get(username="benchmark"))
out = []
for url in json.loads(sys.argv[1]):
    with CaptureQueriesContext(connection) as captured:
        t0 = time.perf_counter()
        response = client.get(url)
        seconds = time.perf_counter() - t0
    assert response.status_code == 200, (url, response.status_code, response.content[:300])
    out.append([url, seconds, len(captured), len(response.content)])
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"requests": out, "peak_mib": peak / 1024}))
"""


def _later(objects: list[dict]) -> list[dict]:
    """The cluster half an hour later (see the module docstring)."""
    out = copy.deepcopy(objects)
    running = [o for o in out if o["kind"] == "Pod" and o["status"].get("phase") == "Running"]
    for pod in running[: len(running) // 20]:
        pod["status"]["phase"] = "Failed"
    tainted = 0
    for obj in out:
        kind = obj["kind"]
        if kind == "Node":
            obj["metadata"]["resourceVersion"] = "1800"
            for condition in obj["status"].get("conditions") or []:
                condition["lastHeartbeatTime"] = "2026-12-08T09:30:00Z"
        elif kind == "Event":
            obj["count"] = int(obj.get("count") or 1) + 1
            obj["lastTimestamp"] = "2026-12-08T09:29:30Z"
        elif kind == "ResourceSlice" and tainted < 50 and obj["spec"].get("devices"):
            obj["spec"]["devices"][0]["taints"] = [
                {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule"}
            ]
            tainted += 1
    return out


def _relabelled(objects: list[dict]) -> list[dict]:
    out = copy.deepcopy(objects)
    for obj in out:
        obj["metadata"].setdefault("labels", {})["diff-bench"] = "relabelled"
    return out


LABELS = ("A", "B", "C", "D")


def _store(profile: str, stored: int) -> list[int]:
    """Store the versions after the first ``stored``; their ids."""
    from benchmarks.synthetic import PROFILES, bundle_chunks, generate
    from dradash.analysis import services as analysis
    from dradash.snapshots.services import bundle_import

    analysis.analysis_enqueue = lambda snapshot_id: None  # analysed below, one at a time
    first = generate(**PROFILES[profile])
    versions = {
        "A": lambda: first,
        "B": lambda: _later(first),
        "C": lambda: generate(**PROFILES[profile], seed=1),
        "D": lambda: _relabelled(first),
    }
    ids = []
    for minutes, label in enumerate(LABELS):
        if minutes < stored:
            continue
        objects = versions[label]()
        data = "".join(bundle_chunks(profile, objects)).encode()
        del objects
        t0 = time.perf_counter()
        snapshot = bundle_import(
            files=[(f"{label}.json", data)], cluster_name=CLUSTER.format(profile=profile)
        )
        snapshot.captured_at += timedelta(minutes=30 * minutes)
        snapshot.save(update_fields=["captured_at"])
        imported = time.perf_counter() - t0
        analysis.analysis_run(snapshot.pk)
        print(
            f"stored {label}: snapshot #{snapshot.pk}, {snapshot.object_count:,} objects, "
            f"{len(data) / 2**20:.0f} MiB, imported in {imported:.0f} s, analysed in "
            f"{time.perf_counter() - t0 - imported:.0f} s"
        )
        ids.append(snapshot.pk)
    return ids


def _page(urls: list[str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", PAGE_SCRIPT, json.dumps(urls)],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ.copy(),
    )
    if result.returncode != 0:
        return {"error": (result.stderr or result.stdout)[-1500:], "returncode": result.returncode}
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="large")
    parser.add_argument("--rebuild", action="store_true", help="store the snapshots again")
    parser.add_argument("--drop", action="store_true", help="delete the snapshots and stop")
    args = parser.parse_args()

    django_setup()
    from django.contrib.auth import get_user_model

    from dradash.clusters.models import Cluster
    from dradash.snapshots.models import Snapshot
    from dradash.snapshots.services import blobs_prune

    name = CLUSTER.format(profile=args.profile)
    if args.drop or args.rebuild:
        Cluster.objects.filter(name=name).delete()
        blobs_prune()
        if args.drop:
            return
    ids = list(
        Snapshot.objects.filter(cluster__name=name)
        .order_by("captured_at")
        .values_list("pk", flat=True)
    )
    if len(ids) < len(LABELS):
        ids += _store(args.profile, len(ids))
    get_user_model().objects.get_or_create(username="benchmark")
    a, b, c, d = ids

    print(
        f"\n{'diff page (a fresh process)':46} {'time':>8} {'queries':>8} {'HTML':>9}"
        f" {'peak memory':>12}"
    )
    for label, (before, after) in (
        ("A → B (half an hour later)", (a, b)),
        ("A → C (another cluster)", (a, c)),
        ("A → D (every object changed)", (a, d)),
    ):
        url = f"/snapshots/{before}/diff/{after}/"
        result = _page([url, url, url + "?kind=Pod"])
        if "error" in result:
            print(f"{label:46} failed (exit {result['returncode']}): {result['error'][-300:]}")
            continue
        for (_, seconds, queries, size), what in zip(
            result["requests"], ("first", "again", "kind=Pod"), strict=True
        ):
            print(f"{label + ', ' + what:46} {seconds:7.2f}s {queries:8} {size / 1024:7.0f} KiB")
        print(f"{label + ', peak memory':46} {result['peak_mib']:7.0f} MiB   (target ≤ 400)")


if __name__ == "__main__":
    main()
