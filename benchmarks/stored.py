"""What the benchmarks that run dradash itself share: Django set up, a profile stored as a
snapshot."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


def django_setup() -> None:
    """Django on the configured database (DATABASE_URL), debug settings, the test client's host."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
    os.environ.setdefault("DRADASH_DEBUG", "1")
    os.environ.setdefault("DRADASH_ALLOWED_HOSTS", "testserver")
    import django

    django.setup()


@dataclass
class Stored:
    snapshot: Any  # dradash.snapshots.models.Snapshot
    bundle_bytes: int
    import_seconds: float


@contextmanager
def stored_profile(profile: str, *, keep: bool) -> Iterator[Stored]:
    """The profile's synthetic cluster imported as a snapshot; deleted afterwards (with the
    blobs no other snapshot holds) unless ``keep``. Call django_setup() first."""
    from benchmarks.synthetic import PROFILES, bundle_chunks, generate
    from dradash.snapshots.services import blobs_prune, bundle_import

    data = "".join(bundle_chunks(profile, generate(**PROFILES[profile]))).encode()
    started = time.perf_counter()
    snapshot = bundle_import(files=[("synthetic.json", data)])
    stored = Stored(snapshot, len(data), time.perf_counter() - started)
    try:
        yield stored
    finally:
        if not keep:
            snapshot.delete()
            blobs_prune()
