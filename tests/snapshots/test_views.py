from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from dradash.snapshots.models import Snapshot, SnapshotRun
from dradash.snapshots.services import bundle_import

pytestmark = pytest.mark.django_db

EIGHT_GPUS = "dra-example-driver__README__resourceslice-list-8gpu.yaml"
TEMPLATE_PODS = "dra-example-driver__basic-resourceclaimtemplate__basic-resourceclaimtemplate.yaml"


def test_home_without_snapshots_explains_how_to_make_a_bundle(client_logged_in) -> None:
    response = client_logged_in.get(reverse("home"))
    assert response.status_code == 200
    assert b"No clusters yet" in response.content
    assert b"kubectl get pods,nodes,namespaces,events" in response.content


def test_home_lists_clusters_with_their_latest_snapshots(client_logged_in, demo) -> None:
    response = client_logged_in.get(reverse("home"))
    html = response.content.decode()
    assert "demo" in html
    for snapshot in demo:
        assert reverse("snapshot-detail", args=[snapshot.pk]) in html


def test_home_as_htmx_fragment(client_logged_in, demo) -> None:
    response = client_logged_in.get(reverse("home"), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"Clusters and snapshots" in response.content


def test_overview_shows_counts_kinds_and_pods_to_look_at(client_logged_in, demo) -> None:
    first = demo[0]
    response = client_logged_in.get(reverse("snapshot-detail", args=[first.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert "v1.36.1" in html
    assert "Pods using DRA" in html
    assert "ResourceClaimTemplate" in html
    # Pending Pods are offered as starting points, running ones are not.
    assert reverse("pod-detail", args=[first.pk, "gpu-test6", "pod-5c8d7b9f4-qx2lm"]) in html
    assert reverse("pod-detail", args=[first.pk, "gpu-test1", "pod0"]) not in html


def test_overview_as_htmx_fragment(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("snapshot-detail", args=[demo[0].pk]), headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert b"<html" not in response.content
    assert b"Pods using DRA" in response.content


def test_a_partial_snapshot_names_the_missing_kinds_on_its_pages(
    client_logged_in, tmp_path
) -> None:
    info = {
        "apiVersion": "dradash.io/v1",
        "kind": "SnapshotInfo",
        "metadata": {"name": "prod"},
        "spec": {"kinds": {"Event": {"status": "forbidden", "message": "events is forbidden"}}},
    }
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    snapshot = bundle_import(files=[("b.json", json.dumps([info, node]).encode())])
    for url in (
        reverse("snapshot-detail", args=[snapshot.pk]),
        reverse("claim-list", args=[snapshot.pk]),
        reverse("pod-list", args=[snapshot.pk]),
    ):
        html = client_logged_in.get(url).content.decode()
        assert "This snapshot is partial" in html
        assert "events is forbidden" in html


def test_unknown_snapshot_is_404(client_logged_in) -> None:
    assert client_logged_in.get(reverse("snapshot-detail", args=[999999])).status_code == 404
    assert client_logged_in.get(reverse("snapshot-bundle", args=[999999])).status_code == 404
    assert client_logged_in.get(reverse("run-detail", args=[999999])).status_code == 404


def test_bundle_download_is_a_bundle_that_imports_back(client_logged_in, demo) -> None:
    response = client_logged_in.get(reverse("snapshot-bundle", args=[demo[0].pk]))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = b"".join(response.streaming_content)
    copy = bundle_import(files=[("download.json", data)])
    assert copy.object_count == demo[0].object_count
    assert copy.captured_at == demo[0].captured_at


def test_upload_page_has_a_form(client_logged_in) -> None:
    response = client_logged_in.get(reverse("upload"))
    assert response.status_code == 200
    assert b'enctype="multipart/form-data"' in response.content
    assert b"csrfmiddlewaretoken" in response.content
    fragment = client_logged_in.get(reverse("upload"), headers={"HX-Request": "true"})
    assert b"<html" not in fragment.content
    assert b'enctype="multipart/form-data"' in fragment.content


def test_upload_imports_files_into_one_snapshot(
    client_logged_in, fixtures_dir: Path, django_capture_on_commit_callbacks
) -> None:
    files = [
        SimpleUploadedFile(EIGHT_GPUS, (fixtures_dir / EIGHT_GPUS).read_bytes()),
        SimpleUploadedFile("pods.yaml", (fixtures_dir / TEMPLATE_PODS).read_bytes()),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = client_logged_in.post(reverse("upload"), {"files": files, "cluster": "lab"})
    run = SnapshotRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run-detail", args=[run.pk])
    run.refresh_from_db()
    assert run.status == "succeeded"
    assert run.snapshot is not None
    assert run.snapshot.object_count == 5
    assert run.snapshot.cluster.name == "lab"
    assert run.snapshot.source == "upload"
    assert not run.files.exists()  # uploaded bytes are not kept once read
    page = client_logged_in.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert reverse("snapshot-detail", args=[run.snapshot.pk]) in page
    assert "hx-trigger" not in page  # finished: no more polling


def test_upload_of_a_bad_bundle_fails_the_run_and_stores_nothing(
    client_logged_in, django_capture_on_commit_callbacks
) -> None:
    bad = SimpleUploadedFile("broken.json", b'{"apiVersion": "v1", "kind": "List", "items": [')
    with django_capture_on_commit_callbacks(execute=True):
        client_logged_in.post(reverse("upload"), {"files": [bad]})
    run = SnapshotRun.objects.get()
    assert run.status == "failed"
    assert run.error.startswith("broken.json: truncated JSON")
    assert not Snapshot.objects.exists()
    page = client_logged_in.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert "broken.json: truncated JSON" in page
    assert "Nothing was stored" in page


def test_upload_over_the_size_limit_is_refused_by_the_form(client_logged_in, settings) -> None:
    settings.DRADASH_BUNDLE_MAX_BYTES = 10
    big = SimpleUploadedFile("big.json", b"[" + b" " * 100 + b"]")
    response = client_logged_in.post(reverse("upload"), {"files": [big]})
    assert response.status_code == 200
    assert b"big.json: file is 102 bytes, over the limit of 10 bytes" in response.content
    assert not SnapshotRun.objects.exists()


def test_run_page_polls_while_the_run_is_queued(client_logged_in) -> None:
    run = SnapshotRun.objects.create(kind="upload", cluster_name="x")
    page = client_logged_in.get(reverse("run-detail", args=[run.pk])).content.decode()
    assert 'hx-trigger="load delay:1s, every 2s"' in page
    fragment = client_logged_in.get(
        reverse("run-detail", args=[run.pk]), headers={"HX-Request": "true"}
    )
    assert b"<html" not in fragment.content
    assert b'id="run-status"' in fragment.content


def test_an_upload_with_the_queue_down_fails_at_once_and_keeps_no_file(
    client_logged_in, fixtures_dir, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    from kombu.exceptions import OperationalError

    from dradash.snapshots.models import RunFile, SnapshotRun
    from dradash.snapshots.tasks import upload_run_process

    def down(*args, **kwargs):
        raise OperationalError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(upload_run_process, "delay", down)
    path = fixtures_dir / "dra-example-driver__README__resourceslice-list-8gpu.yaml"
    with django_capture_on_commit_callbacks(execute=True), path.open("rb") as fh:
        response = client_logged_in.post(reverse("upload"), {"cluster": "lab", "files": fh})
    assert response.status_code == 302
    run = SnapshotRun.objects.get()
    assert run.status == "failed"
    assert "the task queue is unavailable" in run.error
    page = client_logged_in.get(response["Location"]).content.decode()
    assert "the task queue is unavailable" in page
    assert not RunFile.objects.exists()
