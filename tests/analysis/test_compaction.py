"""Compaction: captures beyond a cluster's newest keep_analysed keep their objects and summary
but not their detailed analysis; opening one analyses it again."""

from __future__ import annotations

import json
from datetime import UTC, timedelta
from typing import Any

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from dradash.analysis import services
from dradash.analysis.models import (
    ClaimVerdict,
    DeviceRow,
    Explanation,
    Finding,
    FindingObject,
    NodeRow,
    PodGroupRow,
    PodVerdict,
    PoolRow,
    SnapshotAnalysis,
)
from dradash.analysis.services import REOPENED_KEPT, analyses_compact, analyses_reap
from dradash.clusters.models import Cluster
from dradash.demo import cluster as demo
from dradash.dra.bundle import parse_bundle
from dradash.snapshots.models import Snapshot
from dradash.snapshots.services import snapshot_store

pytestmark = pytest.mark.django_db

ROWS = (
    PodVerdict,
    ClaimVerdict,
    PodGroupRow,
    Finding,
    FindingObject,
    DeviceRow,
    PoolRow,
    NodeRow,
    Explanation,
)


@pytest.fixture
def prod(db: None) -> Cluster:
    return Cluster.objects.create(name="prod", keep_analysed=2)


@pytest.fixture
def bundle() -> Any:
    data = json.dumps(demo.build(True)).encode()
    return parse_bundle([("demo.json", data)], max_bytes=settings.DRADASH_BUNDLE_MAX_BYTES)


def _store(cluster: Cluster, bundle: Any, hours_ago: int, source: str = "capture") -> Snapshot:
    return snapshot_store(
        cluster=cluster,
        objects=bundle.objects,
        source=source,
        captured_at=demo.CAPTURED[True].replace(tzinfo=UTC) - timedelta(hours=hours_ago),
        server_version=demo.SERVER_VERSION,
        api_versions=demo.API_VERSIONS,
    )


def _rows(snapshot: Snapshot) -> dict[str, int]:
    return {m.__name__: m.objects.filter(snapshot=snapshot).count() for m in ROWS}


def _state(snapshot: Snapshot) -> SnapshotAnalysis:
    return SnapshotAnalysis.objects.get(pk=snapshot.pk)


@pytest.fixture
def captures(prod: Cluster, bundle: Any, analysed: Any) -> list[Snapshot]:
    """Five analysed captures of prod, oldest first (the oldest pinned), and an upload older
    than all of them."""
    with analysed():
        uploaded = _store(prod, bundle, 10, source="upload")
        snapshots = [_store(prod, bundle, h) for h in (5, 4, 3, 2, 1)]
    Snapshot.objects.filter(pk=snapshots[0].pk).update(pinned=True)
    return [uploaded, *snapshots]


def test_it_compacts_older_captures_and_keeps_the_newest_the_pinned_and_the_uploads(
    prod: Cluster, captures: list[Snapshot]
) -> None:
    uploaded, pinned, old1, old2, new1, new2 = captures
    full = _rows(new2)
    assert full["PodVerdict"] and full["DeviceRow"] and full["Finding"] and full["Explanation"]
    summary = _state(old1).summary

    assert analyses_compact(prod) == 2

    for snapshot in (old1, old2):
        state = _state(snapshot)
        assert (state.status, state.compacted_at is not None) == ("compacted", True)
        assert set(_rows(snapshot).values()) == {0}
        # What the cluster's history reads is kept; the playground's device index is not.
        assert state.summary == summary and state.checklist and state.inventory
        assert (bytes(state.device_index), state.device_objects) == (b"", [])
    for snapshot in (uploaded, pinned, new1, new2):
        assert _state(snapshot).status == "done"
        assert _rows(snapshot) == full
    assert analyses_compact(prod) == 0  # nothing more to do


def test_keep_analysed_zero_compacts_nothing(prod: Cluster, captures: list[Snapshot]) -> None:
    prod.keep_analysed = 0
    assert analyses_compact(prod) == 0
    assert set(SnapshotAnalysis.objects.values_list("status", flat=True)) == {"done"}


def test_opening_a_compacted_snapshot_analyses_it_again(
    prod: Cluster,
    captures: list[Snapshot],
    client_logged_in: Any,
    api_client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    old = captures[2]
    full = _rows(old)
    analyses_compact(prod)
    assert api_client.get(f"/api/v1/snapshots/{old.pk}/").json()["analysis"] == "compacted"
    # The home page's health comes from the kept summary, not from the dropped rows.
    assert "being analysed" not in client_logged_in.get(reverse("home")).content.decode()

    url = reverse("snapshot-detail", args=[old.pk])
    with django_capture_on_commit_callbacks() as callbacks:
        html = client_logged_in.get(url).content.decode()
        again = client_logged_in.get(url, headers={"HX-Request": "true"})
        api = api_client.get(f"/api/v1/snapshots/{old.pk}/findings")
    assert "Analysing this snapshot" in html and 'hx-trigger="every 3s"' in html
    assert "compacted" in html and "last 2 captures" in html
    assert "compacted" in again.content.decode() and "<html" not in again.content.decode()
    assert (api.status_code, api.json()["analysis"]) == (503, "pending")
    assert len(callbacks) == 1  # queued once, however many asked
    assert _state(old).status == "pending"

    for callback in callbacks:
        callback()  # the analyse task
    assert _state(old).status == "done"
    assert _rows(old) == full
    html = client_logged_in.get(url).content.decode()
    assert "Analysing this snapshot" not in html and "compacted" not in html
    assert api_client.get(f"/api/v1/snapshots/{old.pk}/findings").status_code == 200


def test_old_snapshots_are_analysed_again_a_few_at_a_time(
    prod: Cluster,
    captures: list[Snapshot],
    client_logged_in: Any,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: Any,
) -> None:
    monkeypatch.setattr(services, "REOPENED_AT_ONCE", 1)
    first, second = captures[2], captures[3]
    assert analyses_compact(prod) == 2
    with django_capture_on_commit_callbacks() as callbacks:
        client_logged_in.get(reverse("snapshot-detail", args=[first.pk]))
        html = client_logged_in.get(reverse("snapshot-detail", args=[second.pk])).content.decode()
    assert len(callbacks) == 1 and _state(first).status == "pending"
    assert _state(second).status == "compacted"
    assert "waits to be analysed again" in html and 'hx-trigger="every 3s"' in html
    callbacks[0]()  # the first one's analysis ends: the second's turn when its page refreshes
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        client_logged_in.get(reverse("snapshot-detail", args=[second.pk]))
    assert len(callbacks) == 1 and _state(second).status == "done"


def test_a_reopened_snapshot_stays_analysed_a_while(
    prod: Cluster, captures: list[Snapshot], client_logged_in: Any, analysed: Any
) -> None:
    old = captures[2]
    analyses_compact(prod)
    with analysed():
        client_logged_in.get(reverse("snapshot-detail", args=[old.pk]))
    assert _state(old).status == "done"
    assert analyses_compact(prod) == 0
    assert analyses_compact(prod, now=timezone.now() + REOPENED_KEPT * 2) == 1
    assert _state(old).status == "compacted"


def test_the_diff_with_a_compacted_snapshot_analyses_it_again(
    prod: Cluster,
    captures: list[Snapshot],
    client_logged_in: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    old, new = captures[2], captures[5]
    analyses_compact(prod)
    url = reverse("snapshot-diff", args=[old.pk, new.pk])
    with django_capture_on_commit_callbacks() as callbacks:
        response = client_logged_in.get(url)
    assert response.status_code == 200
    assert "Analysing this snapshot" in response.content.decode()
    for callback in callbacks:
        callback()
    response = client_logged_in.get(url)
    assert response.status_code == 200
    assert "Analysing this snapshot" not in response.content.decode()


def test_the_reaper_leaves_compacted_analyses_alone(
    prod: Cluster, captures: list[Snapshot]
) -> None:
    analyses_compact(prod)
    assert analyses_reap(now=timezone.now() + timedelta(days=1)) == []
    assert SnapshotAnalysis.objects.filter(status="compacted").count() == 2
