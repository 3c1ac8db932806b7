"""Capture a synthetic cluster from the test Kubernetes API server into the database.

    DATABASE_URL=postgres://… python -m benchmarks.capture [--profile large] [--nodes N]
        [--page-size 500]

A child process generates the profile's cluster (``benchmarks.synthetic``) and serves it from
``tests.kubeapi.KubeAPIServer`` over real HTTP on loopback, so this process holds only what the
capture itself holds. This process then:

1. captures the cluster as a capture run does (``dradash.clusters.services``: discovery, paginated
   lists, filtering, redaction, the objects' blobs stored by a second thread while later lists
   download, then the snapshot in one transaction; its analysis is left to the analyse task, as
   a worker would run it) and prints its time, the peak memory of this process and the bytes
   the database grew by;
2. captures the unchanged cluster again and prints the bytes that second capture added;
3. downloads every list a capture reads with the ``kubernetes`` client alone, twice: raw JSON
   parsed and dropped (the floor any capture is compared with), and through the client's typed
   API (model objects, as most tools use it).

Targets (DESIGN "Performance", large profile on 2 cores): capture ≤ 2 × the plain download and
≤ 60 s, peak memory ≤ 1.5 GiB, a second capture of an unchanged cluster ≤ 5 % of the first's
bytes. ``--nodes N`` scales the profile to N GPU nodes, Pods, claims and events per node kept
(``benchmarks.synthetic.scaled``; issue 28: 20,000 nodes), to see that time and peak memory grow
linearly. A benchmark, not a test: it asserts nothing. It deletes what it stored unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.stored import django_setup

LISTS = [  # what a capture lists, at resource.k8s.io/v1
    "/api/v1/namespaces",
    "/api/v1/nodes",
    "/api/v1/pods",
    "/api/v1/events",
    "/apis/resource.k8s.io/v1/deviceclasses",
    "/apis/resource.k8s.io/v1/resourceslices",
    "/apis/resource.k8s.io/v1/resourceclaims",
    "/apis/resource.k8s.io/v1/resourceclaimtemplates",
    "/apis/resource.k8s.io/v1/devicetaintrules",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
    "/apis/batch/v1/jobs",
]


def _serve(profile: str, nodes: int | None, kubeconfig: str, ready: Any, stop: Any) -> None:
    """Child process: generate the cluster (scaled to ``nodes`` if given) and serve it until told
    to stop."""
    from benchmarks.synthetic import PROFILES, generate, scaled
    from tests.kubeapi import KubeAPIServer

    objects = generate(**(scaled(profile, nodes) if nodes else PROFILES[profile]))
    with KubeAPIServer(objects) as api:
        api.kubeconfig(kubeconfig)
        ready.send(len(objects))
        stop.recv()


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _plain_download(kubeconfig: str, page_size: int) -> tuple[float, int, int]:
    """Every list, page by page, with the kubernetes client alone: (seconds, items, bytes)."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=kubeconfig)
    started = time.perf_counter()
    items = size = 0
    for path in LISTS:
        token = ""
        while True:
            query = [("limit", page_size)] + ([("continue", token)] if token else [])
            response = client.call_api(
                path,
                "GET",
                query_params=query,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
                _preload_content=False,
            )
            data = response.data
            size += len(data)
            page = json.loads(data)
            items += len(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                break
    client.close()
    return time.perf_counter() - started, items, size


def _typed_download(kubeconfig: str, page_size: int) -> tuple[float, int]:
    """The same lists through the client's typed API (model objects): (seconds, items).
    DeviceTaintRules are left out: this client has no v1 method for them (there are none)."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    configuration.client_side_validation = False  # synthetic Nodes lack some nodeInfo fields
    api = client.ApiClient(configuration)
    core, resource = client.CoreV1Api(api), client.ResourceV1Api(api)
    calls = [
        core.list_namespace,
        core.list_node,
        core.list_pod_for_all_namespaces,
        core.list_event_for_all_namespaces,
        resource.list_device_class,
        resource.list_resource_slice,
        resource.list_resource_claim_for_all_namespaces,
        resource.list_resource_claim_template_for_all_namespaces,
        client.SchedulingV1Api(api).list_priority_class,
        client.BatchV1Api(api).list_job_for_all_namespaces,
    ]
    started = time.perf_counter()
    items = 0
    for call in calls:
        token = None
        while True:
            page = call(limit=page_size, _continue=token) if token else call(limit=page_size)
            items += len(page.items)
            token = page.metadata._continue
            if not token:
                break
    api.close()
    return time.perf_counter() - started, items


def _database_bytes() -> int:
    from django.db import connection

    if connection.vendor != "postgresql":
        return Path(connection.settings_dict["NAME"]).stat().st_size
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')"
        )
        return int(cursor.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="large")
    parser.add_argument("--nodes", type=int, help="scale the profile to this many GPU nodes")
    parser.add_argument("--page-size", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the captured snapshots")
    args = parser.parse_args()

    django_setup()
    from dradash.analysis import services as analysis
    from dradash.clusters.models import Cluster
    from dradash.clusters.services import capture_run_create, capture_run_execute
    from dradash.snapshots.services import blobs_prune

    # The capture alone, as a deployment's capture worker runs it: the analysis is queued for
    # another worker (benchmarks.scale and benchmarks.pages measure it), not run in this
    # process as it would be without a broker.
    analysis.analysis_enqueue = lambda snapshot_id: None
    name = args.profile + (f"-{args.nodes}" if args.nodes else "")
    workdir = tempfile.mkdtemp(prefix="dradash-capture-")
    kubeconfig = str(Path(workdir) / "kubeconfig")
    ready_recv, ready_send = multiprocessing.Pipe(duplex=False)
    stop_recv, stop_send = multiprocessing.Pipe(duplex=False)
    server = multiprocessing.get_context("fork").Process(
        target=_serve,
        args=(args.profile, args.nodes, kubeconfig, ready_send, stop_recv),
        daemon=True,
    )
    server.start()
    objects = ready_recv.recv()
    print(f"synthetic-{name}: {objects:,} objects served over HTTP on loopback")

    cluster, _ = Cluster.objects.update_or_create(
        name=f"benchmark-{name}",
        defaults={
            "kubeconfig_path": kubeconfig,
            "context": "test",
            "capture_enabled": True,
            "capture_interval": 0,  # on demand only
        },
    )
    rows = []
    snapshots = []
    try:
        for attempt in ("first", "second"):
            before = _database_bytes()
            run = capture_run_create(cluster, enqueue=False)
            started = time.perf_counter()
            capture_run_execute(run.pk)
            elapsed = time.perf_counter() - started
            run.refresh_from_db()
            if run.snapshot_id is None:
                sys.exit(f"the capture failed: {run.error}")
            snapshots.append(run.snapshot)
            added = _database_bytes() - before
            rows.append((attempt, elapsed, added, run.snapshot.object_count, _peak_rss_mib()))
        plain, items, size = _plain_download(kubeconfig, args.page_size)
        typed, typed_items = _typed_download(kubeconfig, args.page_size)
    finally:
        stop_send.send(None)
        server.join(timeout=30)
        if not args.keep:
            for snapshot in snapshots:
                snapshot.delete()
            cluster.delete()
            blobs_prune()

    mib = 2**20
    print(
        f"{'plain download, client alone':34} {plain:8.2f} s  {items:,} items, {size / mib:.1f} MiB"
    )
    print(f"{'typed download, client models':34} {typed:8.2f} s  {typed_items:,} items")
    for attempt, elapsed, added, count, peak in rows:
        print(
            f"{attempt + ' capture':34} {elapsed:8.2f} s  {count:,} objects stored, "
            f"{added / mib:.1f} MiB added, peak RSS {peak:,.0f} MiB"
        )
    first, second = rows[0], rows[1]
    print(
        f"{'capture / plain download':34} {first[1] / plain:8.2f} ×  (target ≤ 2, and ≤ 60 s)\n"
        f"{'capture / typed download':34} {first[1] / typed:8.2f} ×\n"
        f"{'second capture adds':34} {100 * second[2] / max(first[2], 1):8.2f} %  (target ≤ 5 %)"
    )


if __name__ == "__main__":
    main()
