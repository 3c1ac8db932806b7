"""The analyse task and the main pages of a stored synthetic snapshot, from a fresh process.

    DATABASE_URL=postgres://… python -m benchmarks.pages [--profile large] [--nodes N] [--keep]

Imports the profile's cluster twice as two snapshots of one cluster (the second with some Pods
changed, for the diff), runs the analyse task on each in a process of its own (time and peak
memory), and measures the bytes the analysis stores per snapshot. Then a fresh process — as a
gunicorn worker after a restart — requests every main page once and again (server time and SQL
queries per request, the process's peak memory). Prints the figures measured before the analysis
was stored (issue 12) beside them. ``--nodes`` scales the profile to that many GPU nodes
(``benchmarks.synthetic.scaled``, as ``benchmarks.scale``; issue 28). A benchmark, not a test:
it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from urllib.parse import urlencode

from benchmarks.stored import django_setup

# Measured on the large profile before the analysis was stored (issue 12, commit 2ddd5b9):
# every fresh web process loaded and diagnosed the whole snapshot on its first request.
BEFORE = {
    "load the snapshot (first request of a process)": "9.3 s",
    "diagnose it": "7.0 s",
    "findings": "2.2 s",
    "overview, first request after a restart": "≈ 18 s",
    "devices, first visit": "1.4 s",
    "capacity, first visit": "1.0 s",
    "playground, first visit": "1.3 s",
    "peak memory of one web process": "1.39 GB",
}

# Run in a fresh interpreter, started as a gunicorn worker starts (dradash.wsgi): every main
# page once, then again. Peak memory is the process's own high-water mark (VmHWM).
PAGES_SCRIPT = r"""
import json, os, sys, time
import dradash.wsgi
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

pages = json.loads(sys.argv[1])
client = Client()
client.force_login(get_user_model().objects.get(username="benchmark"))
out = []
for name, url, headers in pages:
    timings, queries = [], []
    for _ in range(2):
        with CaptureQueriesContext(connection) as captured:
            t0 = time.perf_counter()
            response = client.get(url, headers=headers or None)
            timings.append(time.perf_counter() - t0)
        queries.append(len(captured))
        assert response.status_code == 200, (url, response.status_code, response.content[:300])
        assert b"Analysing this snapshot" not in response.content, url
    out.append([name, timings, queries])
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"pages": out, "peak_mib": peak / 1024}))
"""

ANALYSE_SCRIPT = r"""
import os, sys, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
import django
django.setup()
from dradash.analysis.services import analysis_run
t0 = time.perf_counter()
analysis_run(int(sys.argv[1]))
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(time.perf_counter() - t0, peak / 1024)
"""


def _python(script: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ.copy(),
    )
    if result.returncode != 0:
        raise SystemExit(result.stderr[-3000:])
    return result.stdout.strip().splitlines()[-1]


def _analysis_bytes() -> int:
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0
    from django.apps import apps

    # Every table of the analysis app: rows per snapshot and the facts they share.
    tables = [m._meta.db_table for m in apps.get_app_config("analysis").get_models()]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT sum(pg_total_relation_size(c)) FROM unnest(%s::regclass[]) AS c", [tables]
        )
        return int(cursor.fetchone()[0] or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="large")
    parser.add_argument("--nodes", type=int, help="the profile scaled to this many GPU nodes")
    parser.add_argument("--keep", action="store_true", help="keep the imported snapshots")
    args = parser.parse_args()

    django_setup()
    from django.contrib.auth import get_user_model
    from django.db import connection

    from benchmarks.synthetic import PROFILES, bundle_chunks, generate, scaled
    from dradash.analysis import services
    from dradash.analysis.models import PodVerdict, SnapshotAnalysis
    from dradash.snapshots.services import blobs_prune, bundle_import

    # The analysis runs in processes of its own below, to be measured there.
    services.analysis_enqueue = lambda snapshot_id: None

    profile_sizes = scaled(args.profile, args.nodes) if args.nodes else PROFILES[args.profile]
    objects = generate(**profile_sizes)
    snapshots = []
    for version in (0, 1):
        if version:  # 200 Pods that were Running are now Failed
            changed = 0
            for obj in objects:
                if obj.get("kind") == "Pod" and obj.get("status", {}).get("phase") == "Running":
                    obj["status"]["phase"] = "Failed"
                    changed += 1
                    if changed == 200:
                        break
        data = "".join(bundle_chunks(args.profile, objects)).encode()
        t0 = time.perf_counter()
        snapshot = bundle_import(files=[(f"synthetic-{version}.json", data)])
        if version:
            snapshot.captured_at = snapshots[0].captured_at + timedelta(minutes=30)
            snapshot.save(update_fields=["captured_at"])
        print(
            f"imported snapshot #{snapshot.pk}: {snapshot.object_count:,} objects, "
            f"{len(data) / 2**20:.0f} MiB, {time.perf_counter() - t0:.1f} s"
        )
        snapshots.append(snapshot)
    del objects, data

    print(f"\n{'analyse task (a process of its own)':44} {'time':>8} {'peak memory':>12}")
    sizes = [_analysis_bytes()]
    for snapshot in snapshots:
        seconds, peak = _python(ANALYSE_SCRIPT, str(snapshot.pk)).split()
        sizes.append(_analysis_bytes())
        print(
            f"{'snapshot #' + str(snapshot.pk):44} {float(seconds):7.1f}s {float(peak):9.0f} MiB"
            "   (targets ≤ 60 s, ≤ 2 GiB)"
        )
    added = [b - a for a, b in zip(sizes, sizes[1:], strict=False)]
    print(
        f"{'bytes the analysis stores per snapshot':44} "
        + ", ".join(f"{b / 2**20:.0f} MiB" for b in added)
        + f" (PostgreSQL tables and indexes; the snapshot's objects: "
        f"{snapshots[0].object_count:,})"
    )

    get_user_model().objects.get_or_create(username="benchmark")
    before, after = snapshots
    pk = after.pk
    pending = PodVerdict.objects.filter(snapshot=after, stage="claim-unallocated").first()
    running = PodVerdict.objects.filter(snapshot=after, stage="healthy", phase="Running").first()
    claim = pending.claims[0] if pending and pending.claims else ""
    device_class = sorted(SnapshotAnalysis.objects.get(pk=pk).classes)[0]
    expression = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
    pages: list[tuple[str, str, dict[str, str]]] = [
        ("overview", f"/snapshots/{pk}/", {}),
        ("pods list", f"/snapshots/{pk}/pods/", {}),
        ("claims list", f"/snapshots/{pk}/claims/", {}),
        ("pods list, claim-unallocated", f"/snapshots/{pk}/pods/?stage=claim-unallocated", {}),
        ("claims list, pending, page 3", f"/snapshots/{pk}/claims/?state=pending&page=3", {}),
        ("pending Pod", f"/snapshots/{pk}/pods/{pending.namespace}/{pending.name}/", {}),
        ("running Pod", f"/snapshots/{pk}/pods/{running.namespace}/{running.name}/", {}),
        ("unallocated claim", f"/snapshots/{pk}/claims/{pending.namespace}/{claim}/", {}),
        ("device class", f"/snapshots/{pk}/classes/{device_class}/", {}),
        ("devices", f"/snapshots/{pk}/devices/", {}),
        (
            "devices, free of one class, by attribute",
            f"/snapshots/{pk}/devices/?"
            + urlencode(
                {
                    "device_class": device_class,
                    "state": "free",
                    "attribute": "productName=NVIDIA H100 80GB HBM3",
                }
            ),
            {},
        ),
        (
            "devices, htmx, one node",
            f"/snapshots/{pk}/devices/?node={running.node}",
            {"HX-Request": "true"},
        ),
        ("capacity", f"/snapshots/{pk}/capacity/", {}),
        ("checklist", f"/snapshots/{pk}/checklist/", {}),
        ("playground", "/playground/?" + urlencode({"snapshot": pk, "expression": expression}), {}),
        ("diff", f"/snapshots/{before.pk}/diff/{pk}/", {}),
        (
            "API: pod diagnosis",
            f"/api/v1/snapshots/{pk}/pods/{pending.namespace}/{pending.name}/diagnosis",
            {},
        ),
        ("API: findings", f"/api/v1/snapshots/{pk}/findings", {}),
        ("API: devices of one node", f"/api/v1/snapshots/{pk}/devices?node={running.node}", {}),
    ]
    result = json.loads(_python(PAGES_SCRIPT, json.dumps(pages)))
    print(
        f"\n{'page (a fresh process: first, again)':44} {'first':>8} {'again':>8} {'queries':>8}"
        "   (targets ≤ 300 ms, ≤ 100 ms)"
    )
    for name, timings, queries in result["pages"]:
        print(
            f"{name:44} {timings[0] * 1000:6.0f}ms {timings[1] * 1000:6.0f}ms "
            f"{queries[0]:4} {queries[1]:3}"
        )
    print(f"{'peak memory of the web process':44} {result['peak_mib']:7.0f} MiB   (target ≤ 400)")
    print(f"\nbefore the analysis was stored ({args.profile} profile, issue 12):")
    for name, figure in BEFORE.items():
        print(f"  {name:44} {figure}")
    print(f"\n(database {connection.vendor})")
    if not args.keep:
        for snapshot in snapshots:
            snapshot.delete()
        blobs_prune()


if __name__ == "__main__":
    main()
