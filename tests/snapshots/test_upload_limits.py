"""Per-user upload limits: a user with DRADASH_UPLOADS_PER_USER uploads queued or running, or
over DRADASH_UPLOAD_BYTES_PER_HOUR, gets 429 on the upload page and the API, and nothing is
stored; other users are not affected."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from dradash.snapshots.models import RunFile, SnapshotRun
from dradash.snapshots.services import UploadRefused, upload_run_create

pytestmark = pytest.mark.django_db

POD = json.dumps(
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
).encode()


def bundle(name: str = "pod.json", data: bytes = POD) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/json")


@pytest.fixture
def bob(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="bob", password="pw")


def queued_uploads(user: Any, count: int) -> list[SnapshotRun]:
    """Uploads of the user that stay queued (no worker: the on-commit enqueue never runs)."""
    return [
        upload_run_create(files=[("q.json", POD)], cluster_name="", user=user) for _ in range(count)
    ]


def stored() -> tuple[int, int]:
    return SnapshotRun.objects.count(), RunFile.objects.count()


def test_the_upload_over_the_users_limit_gets_429_on_the_page_and_stores_nothing(
    client_logged_in: Client, user: Any, bob: Any, settings: Any
) -> None:
    settings.DRADASH_UPLOADS_PER_USER = 2
    first, second = queued_uploads(user, 2)
    before = stored()

    response = client_logged_in.post(reverse("upload"), {"files": [bundle()], "cluster": "x"})

    assert response.status_code == 429
    assert response["Retry-After"]
    page = response.content.decode()
    assert f"You have 2 uploads queued or running (#{first.pk}, #{second.pk})" in page
    assert "DRADASH_UPLOADS_PER_USER = 2" in page and "nothing was stored" in page
    assert 'enctype="multipart/form-data"' in page  # the form, to try again later
    assert stored() == before

    other = Client()
    other.force_login(bob)
    assert other.post(reverse("upload"), {"files": [bundle()]}).status_code == 302
    assert SnapshotRun.objects.filter(requested_by=bob).count() == 1


def test_the_upload_over_the_users_limit_gets_429_from_the_api(
    api_client: APIClient, user: Any, bob: Any, settings: Any
) -> None:
    settings.DRADASH_UPLOADS_PER_USER = 1
    (first,) = queued_uploads(user, 1)
    before = stored()

    response = api_client.post("/api/v1/uploads/", {"files": [bundle()]}, format="multipart")

    assert response.status_code == 429
    assert response["Retry-After"]
    assert response.json()["detail"].startswith(
        f"You have 1 uploads queued or running (#{first.pk})"
    )
    assert stored() == before

    other = APIClient()
    other.force_authenticate(bob)
    created = other.post("/api/v1/uploads/", {"files": [bundle()]}, format="multipart")
    assert created.status_code == 202, created.content
    assert SnapshotRun.objects.get(pk=created.json()["id"]).requested_by == bob


def test_finished_uploads_do_not_count_against_the_limit(
    client_logged_in: Client, user: Any, settings: Any
) -> None:
    settings.DRADASH_UPLOADS_PER_USER = 1
    for run in queued_uploads(user, 1):
        run.status = SnapshotRun.Status.FAILED
        run.save()

    response = client_logged_in.post(reverse("upload"), {"files": [bundle()]})

    assert response.status_code == 302


def test_uploads_over_the_bytes_per_hour_get_429_until_old_ones_leave_the_hour(
    api_client: APIClient, user: Any, settings: Any
) -> None:
    settings.DRADASH_UPLOAD_BYTES_PER_HOUR = 30_000
    early, late = (
        upload_run_create(files=[("q.json", POD.ljust(10_000))], cluster_name="", user=user)
        for _ in range(2)
    )
    now = timezone.now()
    SnapshotRun.objects.filter(pk=early.pk).update(
        status="succeeded", created_at=now - timedelta(minutes=50)
    )
    SnapshotRun.objects.filter(pk=late.pk).update(
        status="succeeded", created_at=now - timedelta(minutes=20)
    )
    big = bundle(data=POD.ljust(15_000))  # with the two earlier ones over the 30,000 bytes

    response = api_client.post("/api/v1/uploads/", {"files": [big]}, format="multipart")

    assert response.status_code == 429
    detail = response.json()["detail"]
    assert "one user may upload per hour (DRADASH_UPLOAD_BYTES_PER_HOUR)" in detail
    assert "Try again in 10 minutes" in detail  # when the earlier upload is an hour old
    assert 590 <= int(response["Retry-After"]) <= 600

    SnapshotRun.objects.filter(pk=early.pk).update(created_at=now - timedelta(minutes=61))
    big = bundle(data=POD.ljust(15_000))
    accepted = api_client.post("/api/v1/uploads/", {"files": [big]}, format="multipart")
    assert accepted.status_code == 202, accepted.content
    assert SnapshotRun.objects.get(pk=accepted.json()["id"]).upload_bytes == 15_000


def test_the_service_refuses_too_when_a_request_got_past_the_page(user: Any, settings: Any) -> None:
    """Two requests of one user at once both pass the page's early look; the service counts
    again under a lock, so the second is refused there, and stores nothing."""
    settings.DRADASH_UPLOADS_PER_USER = 1
    queued_uploads(user, 1)
    before = stored()

    with pytest.raises(UploadRefused) as refused:
        upload_run_create(files=[("again.json", POD)], cluster_name="", user=user)

    assert refused.value.status == 429
    assert stored() == before


def test_an_upload_through_the_api_is_imported_and_can_be_followed(
    api_client: APIClient, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        created = api_client.post(
            "/api/v1/uploads/", {"files": [bundle()], "cluster": "lab"}, format="multipart"
        )
    assert created.status_code == 202, created.content

    followed = api_client.get(f"/api/v1/uploads/{created.json()['id']}/").json()
    assert followed["status"] == "succeeded", followed
    assert followed["cluster"] == "lab" and followed["error"] == ""
    assert followed["snapshot"] is not None


def test_a_bad_upload_through_the_api_is_a_400_naming_the_field(api_client: APIClient) -> None:
    response = api_client.post("/api/v1/uploads/", {"cluster": "x"}, format="multipart")

    assert response.status_code == 400
    assert "files" in response.json()
    assert not SnapshotRun.objects.exists()
