"""Time diagnosis and the main pages on a stored synthetic snapshot.

    DATABASE_URL=postgres://… python -m benchmarks.pages [--profile large] [--keep]

Imports the profile's cluster into the configured database, then prints: loading the snapshot
into a fresh process's cache, diagnosing every Pod and claim, computing findings, and the server
time and number of SQL queries of each main page (overview, lists, a Pod's and a claim's chain,
a class, the device inventory, capacity, the checklist, the playground) once the snapshot is
loaded. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import time
from urllib.parse import urlencode

from benchmarks.stored import django_setup, stored_profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="large")
    parser.add_argument("--keep", action="store_true", help="keep the imported snapshot")
    args = parser.parse_args()

    django_setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from dradash.explorer.selectors import snapshot_diagnosis, snapshot_findings
    from dradash.snapshots.selectors import snapshot_state, state_cache

    with stored_profile(args.profile, keep=args.keep) as stored:
        snapshot = stored.snapshot
        print(f"synthetic-{args.profile}: {snapshot.object_count:,} objects in {connection.vendor}")
        state_cache.clear()
        t0 = time.perf_counter()
        state = snapshot_state(snapshot)
        print(f"{'load the snapshot (cold)':44} {time.perf_counter() - t0:8.2f} s")
        t0 = time.perf_counter()
        result = snapshot_diagnosis(state)
        elapsed = time.perf_counter() - t0
        counts = ", ".join(f"{s} {n}" for s, n in result.stage_counts().items() if n)
        print(
            f"{'diagnose every Pod and claim':44} {elapsed:8.2f} s  "
            f"({len(result.pods):,} Pods: {counts})"
        )
        t0 = time.perf_counter()
        found = snapshot_findings(state)
        print(f"{'findings':44} {time.perf_counter() - t0:8.2f} s  ({len(found)} findings)")

        user, _ = get_user_model().objects.get_or_create(username="benchmark")
        client = Client()
        client.force_login(user)
        pending = next(p for p in state.dra_pods if not p.node_name and p.claims)
        running = next(p for p in state.dra_pods if p.phase == "Running" and p.claims)
        pending_claim = next(c for c in pending.claims if not c.allocated)
        device_class = sorted(state.classes)[0]
        expression = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
        attribute = "productName=NVIDIA H100 80GB HBM3"
        pk = snapshot.pk
        pages = [
            ("overview", f"/snapshots/{pk}/"),
            ("claims list", f"/snapshots/{pk}/claims/"),
            ("claims list, pending", f"/snapshots/{pk}/claims/?state=pending"),
            (
                "pods list, stuck in claim-unallocated",
                f"/snapshots/{pk}/pods/?stage=claim-unallocated",
            ),
            ("pending Pod", f"/snapshots/{pk}/pods/{pending.namespace}/{pending.name}/"),
            ("running Pod", f"/snapshots/{pk}/pods/{running.namespace}/{running.name}/"),
            (
                "unallocated claim",
                f"/snapshots/{pk}/claims/{pending_claim.namespace}/{pending_claim.name}/",
            ),
            ("device class", f"/snapshots/{pk}/classes/{device_class}/"),
            ("devices", f"/snapshots/{pk}/devices/"),
            (
                "devices, allocated on one node",
                f"/snapshots/{pk}/devices/?state=allocated&node={running.node_name}",
            ),
            (
                "devices, free of one class",
                f"/snapshots/{pk}/devices/?"
                + urlencode({"device_class": device_class, "state": "free"}),
            ),
            (
                "devices, by attribute",
                f"/snapshots/{pk}/devices/?" + urlencode({"attribute": attribute}),
            ),
            (
                "devices, htmx: class and attribute, page 3",
                f"/snapshots/{pk}/devices/?"
                + urlencode({"device_class": device_class, "attribute": "type=gpu", "page": 3}),
                {"HX-Request": "true"},
            ),
            ("devices API, one node", f"/api/v1/snapshots/{pk}/devices?node={running.node_name}"),
            ("pools API", f"/api/v1/snapshots/{pk}/pools"),
            ("capacity", f"/snapshots/{pk}/capacity/"),
            ("checklist", f"/snapshots/{pk}/checklist/"),
            ("capacity API", f"/api/v1/snapshots/{pk}/capacity"),
            ("playground", "/playground/?" + urlencode({"snapshot": pk, "expression": expression})),
        ]
        print(f"{'page (snapshot loaded)':44} {'first':>8} {'again':>8} {'queries':>8}")
        for name, url, *headers in pages:
            timings = []
            for _ in range(2):
                with CaptureQueriesContext(connection) as queries:
                    t0 = time.perf_counter()
                    response = client.get(url, headers=headers[0] if headers else None)
                    timings.append(time.perf_counter() - t0)
                assert response.status_code == 200, (url, response.status_code)
            print(
                f"{name:44} {timings[0] * 1000:6.0f}ms {timings[1] * 1000:6.0f}ms {len(queries):8}"
            )


if __name__ == "__main__":
    main()
