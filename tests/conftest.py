"""Fixtures shared by the whole suite. The database comes from DATABASE_URL (PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

USER_PASSWORD = "pw-for-tests"
NOT_POSTGRESQL = (
    "The database tests need PostgreSQL, but the configured database engine is {engine}. "
    "Run `python3 dev.py test` (it sets up PostgreSQL and Redis), or set DATABASE_URL, e.g. "
    "DATABASE_URL=postgres://dradash:dradash@127.0.0.1:5432/dradash"
)


@pytest.fixture(scope="session")
def _require_postgresql() -> None:
    engine = settings.DATABASES["default"]["ENGINE"]
    if "postgresql" not in engine:
        pytest.exit(NOT_POSTGRESQL.format(engine=engine), returncode=1)


@pytest.fixture(scope="session")
def django_db_setup(_require_postgresql: None, django_db_setup: None) -> None:
    """pytest-django's test databases, refused on SQLite.

    Checked here, not at import, so tests that need no database (tests/dra/) run anywhere.
    """


@pytest.fixture(autouse=True)
def _clear_cache() -> None:
    """Rate limits (the selector API's, share links' per address) and the share-link refusal
    audit count in the default cache, across tests of one process: each test starts afresh."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _clear_snapshot_caches() -> Iterator[None]:
    """Snapshot members, playground devices, diffs and list counts are cached per process by
    snapshot id, and test databases reuse ids."""
    from dradash.compare.selectors import snapshot_diffs
    from dradash.explorer.views import _Paginator
    from dradash.playground.services import snapshot_devices
    from dradash.snapshots.selectors import snapshot_members

    caches = (snapshot_members, snapshot_devices, snapshot_diffs, _Paginator.COUNTS)
    for cache in caches:
        cache.clear()
    yield
    for cache in caches:
        cache.clear()


@pytest.fixture
def analysed(django_capture_on_commit_callbacks: Any) -> Any:
    """``with analysed(): …`` runs the analyse tasks that storing snapshots queued (on commit,
    which a test's transaction never reaches) when the block ends."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def user(db: None, django_user_model: Any) -> Any:
    """A regular (not staff) user; log in with USER_PASSWORD."""
    return django_user_model.objects.create_user(
        username="alice", email="alice@example.com", password=USER_PASSWORD
    )


@pytest.fixture
def client_logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def api_client(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def demo(db: None, analysed: Any) -> list[Any]:
    """The demo cluster's two snapshots (see dradash.demo.cluster), earlier one first,
    analysed."""
    from dradash.snapshots.services import demo_load

    with analysed():
        return demo_load()


@pytest.fixture
def fixtures_dir() -> Path:
    """Real manifests from DRA drivers and docs; INDEX.md there describes each file."""
    return Path(__file__).parent / "fixtures" / "upstream"


@pytest.fixture
def gpu_lab(db: None) -> list[Any]:
    """A cluster whose Pods ask for GPUs as extended resources backed by DRA
    (tests/extended_cluster.py): its two snapshots, earlier one first, analysed as the analyse
    task does."""
    from tests import extended_cluster
    from tests.stored import import_analysed

    return [
        import_analysed(files=[(f"{name}.json", extended_cluster.bundle(objects))])
        for name, objects in (
            ("earlier", extended_cluster.earlier()),
            ("later", extended_cluster.later()),
        )
    ]
