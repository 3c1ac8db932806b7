"""After an upload (issue 17): the new snapshot opens, and no "Importing…" banner stays above
it."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from dradash.demo.cluster import build
from dradash.snapshots.models import Snapshot, SnapshotRun


@pytest.mark.django_db(transaction=True)
def test_a_finished_upload_opens_its_snapshot(client_logged_in) -> None:
    """Without a broker the import runs in the request: the upload lands on the snapshot."""
    data = json.dumps({"kind": "List", "items": build(later=True)}).encode()
    response = client_logged_in.post(
        reverse("upload"),
        {"files": SimpleUploadedFile("bundle.json", data), "cluster": "uploaded"},
    )
    snapshot = Snapshot.objects.get(cluster__name="uploaded")
    assert response.status_code == 302
    assert response["Location"] == reverse("snapshot-detail", args=[snapshot.pk])
    html = client_logged_in.get(response["Location"]).content.decode()
    assert f"imported as snapshot #{snapshot.pk}" in html
    assert "Importing" not in html
    # The message is said once.
    again = client_logged_in.get(response["Location"]).content.decode()
    assert "imported as snapshot" not in again


@pytest.mark.django_db
def test_the_upload_page_waits_then_opens_the_snapshot(client_logged_in, demo) -> None:
    run = SnapshotRun.objects.create(kind="upload", cluster_name="demo", status="running")
    url = reverse("run-detail", args=[run.pk])
    html = client_logged_in.get(url).content.decode()
    assert f'hx-get="{url}?open=1"' in html  # it polls
    assert "Importing… this page updates by itself" in html
    assert "messages" not in html  # no banner above it
    waiting = client_logged_in.get(url, {"open": "1"}, headers={"HX-Request": "true"})
    assert waiting.status_code == 200 and "HX-Redirect" not in waiting
    SnapshotRun.objects.filter(pk=run.pk).update(status="succeeded", snapshot=demo[-1])
    done = client_logged_in.get(url, {"open": "1"}, headers={"HX-Request": "true"})
    assert done["HX-Redirect"] == reverse("snapshot-detail", args=[demo[-1].pk])


@pytest.mark.django_db
def test_a_failed_upload_stays_on_its_page_with_the_error(client_logged_in) -> None:
    run = SnapshotRun.objects.create(
        kind="upload", cluster_name="x", status="failed", error="bundle.json: not JSON"
    )
    url = reverse("run-detail", args=[run.pk])
    response = client_logged_in.get(url, {"open": "1"}, headers={"HX-Request": "true"})
    assert "HX-Redirect" not in response
    assert "bundle.json: not JSON" in response.content.decode()


@pytest.mark.django_db
def test_a_capture_run_polled_on_the_home_page_does_not_navigate(client_logged_in, demo) -> None:
    run = SnapshotRun.objects.create(
        kind="capture", cluster_name="demo", status="succeeded", snapshot=demo[-1]
    )
    url = reverse("run-detail", args=[run.pk])
    response = client_logged_in.get(url, headers={"HX-Request": "true"})
    assert "HX-Redirect" not in response
