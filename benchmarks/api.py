"""Time the selector API on a stored synthetic snapshot: import, then cold and warm requests.

    DATABASE_URL=postgres://… python -m benchmarks.api [--profile large] [--keep]

Imports the profile's cluster as a snapshot into the configured database (PostgreSQL, as in
production), then times ``POST /api/v1/selectors/evaluate`` through Django's test client (server
time, no network): the first request of a fresh process (loading the snapshot's devices from the
database), the same request again, and other selectors. Deletes the snapshot afterwards unless
``--keep``. A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time

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

    from benchmarks.playground import SELECTORS
    from dradash.playground.services import snapshot_devices

    with stored_profile(args.profile, keep=args.keep) as stored:
        snapshot = stored.snapshot
        print(
            f"imported synthetic-{args.profile} into {connection.vendor}: "
            f"{snapshot.object_count:,} objects, {stored.bundle_bytes / 2**20:.1f} MiB bundle, "
            f"{stored.import_seconds:.1f} s"
        )
        user, _ = get_user_model().objects.get_or_create(username="benchmark")
        client = Client()
        client.force_login(user)

        def post(expression: str) -> tuple[float, dict[str, int]]:
            body = json.dumps({"expression": expression, "snapshot": snapshot.pk})
            t0 = time.perf_counter()
            response = client.post(
                "/api/v1/selectors/evaluate", body, content_type="application/json"
            )
            elapsed = time.perf_counter() - t0
            assert response.status_code == 200, response.content[:300]
            return elapsed, response.json()["summary"]

        snapshot_devices.clear()
        first_expression = SELECTORS[0][1]
        cold, summary = post(first_expression)
        print(f"{'first request (loads the devices)':40} {cold:6.2f} s  {summary}")
        warm, summary = post(first_expression)
        print(f"{'same request again':40} {warm:6.2f} s  {summary}")
        for name, expression, _ in SELECTORS[1:]:
            elapsed, summary = post(expression)
            print(f"{name + ' (new expression)':40} {elapsed:6.2f} s  {summary}")


if __name__ == "__main__":
    main()
