"""Uploads stream: files go to the database in chunks and are parsed as a stream; one request is
capped in size; a worker lost mid-import leaves a failed run, not a running one."""

from __future__ import annotations

import io
import json
import tracemalloc
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import StopUpload
from django.urls import reverse
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from dradash.dra.bundle import parse_bundle
from dradash.snapshots import services, tasks
from dradash.snapshots.forms import UploadForm, UploadSizeLimit
from dradash.snapshots.models import ObjectBlob, RunFile, Snapshot, SnapshotRun


def pods_bundle(count: int, prefix: str = "p", size: int = 200) -> bytes:
    items = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "namespace": "ml", "labels": {"i": str(i)}},
            "spec": {"containers": [{"name": "main", "image": "busybox", "args": ["x" * size]}]},
        }
        for i in range(count)
    ]
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}).encode()


@pytest.mark.django_db
def test_an_upload_is_stored_in_chunks_and_read_back_whole(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    monkeypatch.setattr(services, "UPLOAD_CHUNK", 4096)
    first, second = pods_bundle(40, "a"), pods_bundle(30, "b")

    with django_capture_on_commit_callbacks(execute=False):
        run = services.upload_run_create(
            files=[("same.json", io.BytesIO(first)), ("same.json", second)], cluster_name="up"
        )
    assert RunFile.objects.filter(run=run).count() > 4
    assert max(len(bytes(d)) for d in RunFile.objects.values_list("data", flat=True)) == 4096

    services.upload_run_process(run.pk)

    run.refresh_from_db()
    assert run.status == SnapshotRun.Status.SUCCEEDED, run.error
    assert run.snapshot.object_count == 70
    assert not RunFile.objects.exists()


@pytest.mark.django_db
def test_an_upload_request_over_the_limit_is_refused_before_it_is_read(
    client_logged_in: Any, settings: Any
) -> None:
    settings.DRADASH_UPLOAD_MAX_BYTES = 20_000
    files = [SimpleUploadedFile(f"{i}.json", pods_bundle(20, str(i))) for i in range(3)]

    response = client_logged_in.post(reverse("upload"), {"files": files, "cluster": "big"})

    assert response.status_code == 413
    assert "over the limit of 20,000 bytes for one request" in response.content.decode()
    assert not SnapshotRun.objects.exists()
    assert not RunFile.objects.exists()


def test_a_request_without_a_length_is_stopped_once_over_the_limit(settings: Any) -> None:
    settings.DRADASH_UPLOAD_MAX_BYTES = 10
    limit = UploadSizeLimit()
    assert limit.receive_data_chunk(b"12345", 0) == b"12345"
    with pytest.raises(StopUpload):
        limit.receive_data_chunk(b"123456", 5)
    assert limit.exceeded


def test_files_over_the_total_limit_are_refused_by_the_form(settings: Any) -> None:
    """The form checks the total too, whatever the request said its length was."""
    data = pods_bundle(20)
    settings.DRADASH_UPLOAD_MAX_BYTES = len(data) * 2 - 1
    files = [SimpleUploadedFile(f"{i}.json", data) for i in range(2)]

    form = UploadForm({"cluster": "x"}, MultiValueDict({"files": files}))

    assert not form.is_valid()
    assert "together, over the limit" in str(form.errors)


@pytest.mark.django_db
def test_a_run_delivered_again_after_its_worker_was_lost_is_failed_not_retried(
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        run = services.upload_run_create(files=[("b.json", pods_bundle(3))], cluster_name="up")
    # A worker claimed it and was killed: the run says running, the message comes back.
    SnapshotRun.objects.filter(pk=run.pk).update(
        status=SnapshotRun.Status.RUNNING, started_at=timezone.now()
    )

    services.upload_run_process(run.pk)

    run.refresh_from_db()
    assert run.status == SnapshotRun.Status.FAILED
    assert "worker lost" in run.error
    assert run.finished_at is not None
    assert not RunFile.objects.exists()
    assert not Snapshot.objects.exists()
    assert not ObjectBlob.objects.exists()


def test_the_upload_task_is_requeued_when_its_worker_is_lost() -> None:
    task = tasks.upload_run_process
    assert task.acks_late and task.reject_on_worker_lost


@pytest.mark.django_db
def test_runs_whose_worker_and_message_were_lost_are_reaped(
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        old = services.upload_run_create(files=[("b.json", b"{}")], cluster_name="a")
        fresh = services.upload_run_create(files=[("b.json", b"{}")], cluster_name="b")
    long_ago = timezone.now() - timedelta(hours=1)
    SnapshotRun.objects.filter(pk=old.pk).update(
        status=SnapshotRun.Status.RUNNING, started_at=long_ago
    )
    SnapshotRun.objects.filter(pk=fresh.pk).update(
        status=SnapshotRun.Status.RUNNING, started_at=timezone.now()
    )

    assert services.upload_runs_reap() == 1

    old.refresh_from_db()
    fresh.refresh_from_db()
    assert old.status == SnapshotRun.Status.FAILED and "worker lost" in old.error
    assert fresh.status == SnapshotRun.Status.RUNNING


def test_a_large_json_bundle_is_parsed_in_a_fraction_of_its_size() -> None:
    data = pods_bundle(4_000, size=2_000)  # ~ 8 MB of Pods of 2 KB
    kept = []

    tracemalloc.start()
    try:
        parse_bundle(
            [("big.json", io.BytesIO(data))],
            max_bytes=len(data),
            on_object=lambda key, obj: kept.append(key),
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert len(kept) == 4_000
    # Read whole, the text and the parsed objects took about 10 times the file; a stream
    # holds a window of it and one object at a time.
    assert peak < len(data), f"peak {peak:,} bytes for {len(data):,}"
