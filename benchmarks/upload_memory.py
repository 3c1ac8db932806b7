"""Peak memory of a bundle upload against the file's size, before and after streaming (issue 13).

Writes a synthetic cluster's bundle (benchmarks.synthetic, JSON as kubectl prints it, or with
``--format yaml`` YAML as ``kubectl get … -o yaml`` prints it: one List) to a file, then
measures in fresh processes, each on the configured PostgreSQL database (DATABASE_URL):

* web: what the upload view does once Django has the file (in a temporary file for anything
  over FILE_UPLOAD_MAX_MEMORY_SIZE): store it for the worker. Before: ``f.read()`` and one
  RunFile row holding it. After: ``services.upload_run_create`` copies it in 4 MiB chunks.
* worker: the Celery task's work. Before: every chunk read whole, ``parse_bundle`` in memory and
  ``snapshot_store`` of all objects at once (the code before streaming). After:
  ``services.upload_run_process`` (streamed parse, objects stored a batch at a time).

Before YAML was streamed (issue 22), the worker's "after" on a 12.5 MiB YAML bundle (medium
profile) peaked at 539 MiB, 43x the file's size; streamed, 46 MiB (3.7x, mostly a fixed window).

Peak is the process's resident high-water mark (VmHWM) at the end less its mark after setting up
Django, the task module, a database connection and the parser, so it is what the upload itself
costs (the analysis of the stored snapshot, a task of its own, is left out).
Prints a table, or JSON lines with --json.

    DATABASE_URL=postgres://dradash:dradash@127.0.0.1:5432/dradash_bench \\
        python -m benchmarks.upload_memory --profile medium --profile large [--format yaml]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _peak_mib() -> float:
    """The high-water mark of this process image (VmHWM; ru_maxrss would carry over the peak
    of the parent that forked it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _phase(phase: str, mode: str, path: str, run_id: int) -> dict[str, Any]:
    from benchmarks.stored import django_setup

    django_setup()
    from django.conf import settings
    from django.db import connection, transaction

    import dradash.analysis.services

    # What every process of its kind holds anyway, before it sees an upload: the task module
    # (and so Celery), a database connection, the parser once.
    import dradash.snapshots.tasks  # noqa: F401
    from dradash.dra.bundle import parse_bundle
    from dradash.snapshots import services
    from dradash.snapshots.models import RunFile, Snapshot, SnapshotRun

    # The analysis of the stored snapshot is a task of its own (benchmarks.pages measures it),
    # and the web process only queues the import (eagerly it would run the worker's part too).
    dradash.analysis.services.analysis_enqueue = lambda snapshot_id: None
    services.upload_run_enqueue = lambda run_id: None
    connection.ensure_connection()
    parse_bundle([("warm.json", b'{"kind": "List", "items": []}')], max_bytes=100)
    # The high-water mark so far (setting up only grows memory, so it is about the RSS now);
    # what the upload adds shows as the mark's rise.
    base = max(_peak_mib(), _rss_mib())
    out: dict[str, Any] = {"phase": phase, "mode": mode}
    started = time.perf_counter()
    if phase == "web":
        with open(path, "rb") as f, transaction.atomic():
            if mode == "before":
                run = SnapshotRun.objects.create(kind=SnapshotRun.Kind.UPLOAD, cluster_name="bench")
                RunFile.objects.create(run=run, filename=Path(path).name, data=f.read())
            else:
                run = services.upload_run_create(files=[(Path(path).name, f)], cluster_name="bench")
        out["run"] = run.pk
    else:
        run = SnapshotRun.objects.get(pk=run_id)
        if mode == "before":
            files = [(f.filename, bytes(f.data)) for f in run.files.all()]
            bundle = parse_bundle(
                files, max_bytes=settings.DRADASH_BUNDLE_MAX_BYTES, stream_over=sys.maxsize
            )
            del files
            snapshot = services.snapshot_store(
                cluster=services.cluster_for_name("bench"),
                objects=bundle.objects,
                source=Snapshot.Source.UPLOAD,
                captured_at=services._captured_at(bundle),
            )
            out["objects"] = snapshot.object_count
        else:
            services.upload_run_process(run_id)
            run.refresh_from_db()
            assert run.status == SnapshotRun.Status.SUCCEEDED, run.error
            out["objects"] = run.snapshot.object_count
    out["seconds"] = round(time.perf_counter() - started, 1)
    out["peak_mib"] = round(_peak_mib() - base, 1)
    return out


def _write_yaml(out: Any, profile: str, objects: list[dict[str, Any]]) -> None:
    """The bundle as `kubectl get … -o yaml` prints it: one List, keys sorted, block style."""
    import yaml

    from benchmarks.synthetic import bundle_info
    from dradash.dra.bundle import info_object

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    out.write("apiVersion: v1\nitems:\n")
    for obj in [info_object(bundle_info(profile)), *objects]:
        text = yaml.dump(obj, Dumper=dumper, default_flow_style=False, sort_keys=True)
        out.write("- " + text.replace("\n", "\n  ").rstrip(" "))
    out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def _child(args: list[str]) -> dict[str, Any]:
    env = {
        **os.environ,
        "CELERY_BROKER_URL": "",  # tasks eager: nothing leaves the process
        # DEBUG would keep every SQL statement, file chunks included, in connection.queries.
        "DRADASH_DEBUG": "0",
        "DRADASH_SECRET_KEY": "benchmark-only",
        "DRADASH_ALLOWED_HOSTS": "testserver",
    }
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.upload_memory", "--child", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cleanup() -> None:
    from benchmarks.stored import django_setup

    django_setup()
    from dradash.snapshots.models import Snapshot, SnapshotRun
    from dradash.snapshots.services import blobs_prune

    Snapshot.objects.filter(cluster__name="bench").delete()
    SnapshotRun.objects.filter(cluster_name="bench").delete()
    blobs_prune()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", action="append", help="small, medium or large")
    parser.add_argument("--format", choices=("json", "yaml"), default="json", help="the bundle's")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=4, metavar=("PHASE", "MODE", "FILE", "RUN"))
    args = parser.parse_args()
    if args.child:
        phase, mode, path, run = args.child
        print(json.dumps(_phase(phase, mode, path, int(run))))
        return
    from benchmarks.stored import django_setup

    django_setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from benchmarks.synthetic import PROFILES, bundle_chunks, generate

    rows = []
    for profile in args.profile or ["medium"]:
        with tempfile.NamedTemporaryFile("w", suffix=f".{args.format}", delete=False) as f:
            if args.format == "yaml":  # as `kubectl get … -o yaml` prints it: one List
                _write_yaml(f, profile, generate(**PROFILES[profile]))
            else:
                for chunk in bundle_chunks(profile, generate(**PROFILES[profile])):
                    f.write(chunk)
        size_mib = os.path.getsize(f.name) / 2**20
        try:
            for mode in ("before", "after"):
                _cleanup()
                web = _child(["web", mode, f.name, "0"])
                worker = _child(["worker", mode, f.name, str(web["run"])])
                for row in (web, worker):
                    row.update(profile=profile, file_mib=round(size_mib, 1))
                    row["ratio"] = round(row["peak_mib"] / size_mib, 2)
                    rows.append(row)
        finally:
            os.unlink(f.name)
            _cleanup()
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return
    print(
        f"{'profile':8} {'file MiB':>9} {'phase':7} {'mode':7} {'peak MiB':>9} {'x size':>7}"
        f" {'seconds':>8}"
    )
    for r in rows:
        print(
            f"{r['profile']:8} {r['file_mib']:9.1f} {r['phase']:7} {r['mode']:7} "
            f"{r['peak_mib']:9.1f} {r['ratio']:7.2f} {r['seconds']:8.1f}"
        )


if __name__ == "__main__":
    main()
