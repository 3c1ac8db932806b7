"""Blobs stored ahead of their snapshot (BlobStager): the same snapshot, nothing lost or left.

A capture stages its objects' blobs in a thread, committed as it goes, before the transaction
that stores the snapshot. These tests need real commits, hence transactional test databases.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dradash.clusters.models import Cluster
from dradash.demo.cluster import build
from dradash.dra.bundle import parse_bundle
from dradash.dra.kinds import ObjectKey
from dradash.snapshots import services
from dradash.snapshots.models import ObjectBlob, Snapshot
from dradash.snapshots.selectors import snapshot_objects
from dradash.snapshots.services import (
    BlobStager,
    Staged,
    blobs_prune,
    raw_json,
    snapshot_store,
)

pytestmark = pytest.mark.django_db(transaction=True)

Objects = dict[ObjectKey, dict[str, Any]]


def demo_objects() -> Objects:
    data = json.dumps(build(False)).encode()
    return parse_bundle([("demo.json", data)], max_bytes=settings.DRADASH_BUNDLE_MAX_BYTES).objects


def stage(objects: Objects, pages: int = 3) -> tuple[BlobStager, Staged]:
    """Stage the objects as a capture does, in several pages."""
    items = list(objects.items())
    with BlobStager() as stager:
        for page in range(pages):
            stager.add(dict(items[page::pages]))
        return stager, stager.finish()


def store(objects: Objects, staged: Staged | None = None) -> Snapshot:
    cluster, _ = Cluster.objects.get_or_create(name="staged")
    return snapshot_store(
        cluster=cluster,
        objects=objects,
        source=Snapshot.Source.CAPTURE,
        captured_at=timezone.now(),
        staged=staged,
    )


def stored(snapshot: Snapshot) -> dict[ObjectKey, str]:
    rows = snapshot_objects(snapshot, fields=("kind", "namespace", "name", "data"))
    return {(kind, namespace, name): data for kind, namespace, name, data in rows}


def test_a_staged_snapshot_is_the_snapshot_stored_at_once() -> None:
    objects = demo_objects()
    stager, staged = stage(objects)
    assert staged.keys() == objects.keys()
    assert ObjectBlob.objects.count() == len(stager.inserted) > 0  # stored before the snapshot

    snapshot = store(objects, staged)
    again = store(objects)  # without staging

    assert snapshot.members == again.members
    assert stored(snapshot) == {key: raw_json(obj) for key, obj in objects.items()}
    assert ObjectBlob.objects.count() == len(stager.inserted)  # nothing stored twice
    assert stager.discard(kept=snapshot) == 0


def test_blobs_pruned_before_the_snapshot_is_stored_are_stored_again() -> None:
    objects = demo_objects()
    stager, staged = stage(objects)
    assert blobs_prune() == len(stager.inserted)  # no snapshot held them yet
    assert not ObjectBlob.objects.exists()

    snapshot = store(objects, staged)

    assert stored(snapshot) == {key: raw_json(obj) for key, obj in objects.items()}
    assert snapshot.object_count == len(objects)


def test_discard_prunes_only_what_the_stager_inserted_and_no_snapshot_holds() -> None:
    objects = demo_objects()
    items = list(objects.items())
    earlier = store(dict(items[::2]))
    blobs_before = ObjectBlob.objects.count()

    stager, _ = stage(objects)  # a capture that then fails
    assert 0 < len(stager.inserted) < len(objects)  # the earlier snapshot's blobs were reused

    assert stager.discard() == len(stager.inserted)
    assert ObjectBlob.objects.count() == blobs_before
    assert stored(earlier) == {key: raw_json(obj) for key, obj in items[::2]}


def test_discard_after_success_prunes_only_what_the_snapshot_does_not_hold() -> None:
    """Staged objects can miss from the snapshot: their list was read again, and they changed."""
    items = list(demo_objects().items())
    stager, staged = stage(dict(items))
    kept = dict(items[1:])

    snapshot = store(kept, staged)

    assert stager.discard(kept=snapshot) == 1
    assert ObjectBlob.objects.count() == len(kept)
    assert stored(snapshot) == {key: raw_json(obj) for key, obj in kept.items()}


def test_inside_a_transaction_nothing_is_staged() -> None:
    with transaction.atomic():
        stager, staged = stage(demo_objects())
        assert not stager.enabled
        assert staged == {}
        assert not ObjectBlob.objects.exists()


def test_an_error_while_staging_reaches_the_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(rows: list[Any]) -> dict[str, int]:
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "_blobs_insert", broken)
    with BlobStager() as stager:
        stager.add(demo_objects())
        with pytest.raises(RuntimeError, match="disk full"):
            stager.finish()
        with pytest.raises(RuntimeError, match="disk full"):
            stager.add(demo_objects())  # a capture still reading stops at its next page
    assert not ObjectBlob.objects.exists()


def test_the_backlog_is_bounded_and_a_full_one_still_sees_the_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    started, release = threading.Event(), threading.Event()
    raised: list[BaseException] = []

    def stuck(stager: BlobStager, objects: Objects) -> None:
        started.set()
        release.wait(10)
        raise RuntimeError("disk full")

    monkeypatch.setattr(BlobStager, "_stage", stuck)
    items = list(demo_objects().items())
    with BlobStager() as stager:
        stager.add(dict(items[:1]))
        assert started.wait(10)
        for i in range(services.STAGER_BACKLOG):  # queued while the thread is busy
            stager.add(dict(items[i + 1 : i + 2]))
        assert stager._queue.full()

        def add_one_more() -> None:
            try:
                stager.add(dict(items[-1:]))
            except RuntimeError as exc:
                raised.append(exc)

        waiting = threading.Thread(target=add_one_more)
        waiting.start()
        waiting.join(0.3)
        assert waiting.is_alive()  # the capture waits for the backlog to go down
        release.set()
        with pytest.raises(RuntimeError, match="disk full"):
            stager.finish()
        waiting.join(10)
        assert not waiting.is_alive()
    assert [str(exc) for exc in raised] == ["disk full"]  # the waiting capture stops too


def test_a_snapshot_of_staged_blobs_is_the_snapshot_of_the_objects() -> None:
    objects = demo_objects()
    stager, staged = stage(objects)
    cluster, _ = Cluster.objects.get_or_create(name="staged")
    snapshot = services.snapshot_store_staged(
        cluster=cluster,
        keys=set(objects),
        staged=staged,
        source=Snapshot.Source.CAPTURE,
        captured_at=timezone.now(),
    )
    again = store(objects)

    assert (snapshot.members, snapshot.kinds, snapshot.status, snapshot.object_count) == (
        again.members,
        again.kinds,
        again.status,
        again.object_count,
    )


def test_a_snapshot_of_staged_blobs_pruned_meanwhile_is_not_stored() -> None:
    objects = demo_objects()
    stager, staged = stage(objects)
    assert blobs_prune() == len(stager.inserted)
    cluster, _ = Cluster.objects.get_or_create(name="staged")
    with pytest.raises(services.StagedBlobsGone):
        services.snapshot_store_staged(
            cluster=cluster,
            keys=set(objects),
            staged=staged,
            source=Snapshot.Source.CAPTURE,
            captured_at=timezone.now(),
        )
    assert not Snapshot.objects.exists()
