from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_snapshot_list_returns_newest_first_and_filters_by_cluster(api_client, demo) -> None:
    response = api_client.get(reverse("api-snapshot-list"))
    assert response.status_code == 200
    data = response.json()
    assert [s["id"] for s in data] == [demo[1].pk, demo[0].pk]
    first = data[1]
    assert first["cluster"] == "demo"
    assert first["status"] == "complete"
    assert first["source"] == "demo"
    assert first["server_version"] == "v1.36.1"
    assert first["api_versions"][0] == "resource.k8s.io/v1"
    assert first["kinds"]["Pod"]["count"] == 36
    assert first["missing_kinds"] == []
    assert first["captured_at"] == "2026-11-28T10:00:00Z"
    assert api_client.get(reverse("api-snapshot-list"), {"cluster": "other"}).json() == []
    assert len(api_client.get(reverse("api-snapshot-list"), {"limit": 1}).json()) == 1


def test_snapshot_list_rejects_bad_parameters(api_client) -> None:
    response = api_client.get(reverse("api-snapshot-list"), {"limit": "zero"})
    assert response.status_code == 400
    assert "limit" in response.json()


def test_snapshot_detail(api_client, demo) -> None:
    response = api_client.get(reverse("api-snapshot-detail", args=[demo[0].pk]))
    assert response.status_code == 200
    assert response.json()["id"] == demo[0].pk
    assert response.json()["object_count"] == demo[0].object_count


def test_snapshot_detail_of_an_unknown_id_is_404(api_client) -> None:
    response = api_client.get(reverse("api-snapshot-detail", args=[999999]))
    assert response.status_code == 404
    assert response.json() == {"detail": "No Snapshot matches the given query."}


def test_token_authentication_works(demo, user) -> None:
    from knox.models import AuthToken
    from rest_framework.test import APIClient

    _, token = AuthToken.objects.create(user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get(reverse("api-snapshot-list")).status_code == 200


def test_openapi_schema_describes_the_snapshot_endpoints(api_client) -> None:
    response = api_client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json() if response["Content-Type"].startswith("application/json") else None
    if schema is None:
        import yaml

        schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/snapshots/" in schema["paths"]
    assert "/api/v1/snapshots/{snapshot_id}/" in schema["paths"]


# --- uploads ---------------------------------------------------------------------------------


def test_an_upload_over_the_limit_is_refused_before_it_is_read(api_client, settings) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from dradash.snapshots.models import SnapshotRun
    from tests.snapshots.test_uploads import pods_bundle

    settings.DRADASH_UPLOAD_MAX_BYTES = 20_000
    files = [SimpleUploadedFile(f"{i}.json", pods_bundle(20, str(i))) for i in range(3)]
    response = api_client.post("/api/v1/uploads/", {"files": files}, format="multipart")
    assert response.status_code == 413
    assert "over the limit of 20,000 bytes for one request" in response.json()["detail"]
    assert not SnapshotRun.objects.exists()


def test_an_upload_needs_files_a_valid_cluster_name_and_credentials(api_client, client) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    from dradash.snapshots.models import SnapshotRun

    missing = api_client.post("/api/v1/uploads/", {"cluster": "x"}, format="multipart")
    assert missing.status_code == 400 and "files" in missing.json()
    bad = api_client.post(
        "/api/v1/uploads/",
        {"files": [SimpleUploadedFile("b.json", b"[]")], "cluster": "two words"},
        format="multipart",
    )
    assert bad.status_code == 400 and "cluster" in bad.json()
    anonymous = client.post("/api/v1/uploads/", {"files": [SimpleUploadedFile("b.json", b"[]")]})
    assert anonymous.status_code == 401
    assert not SnapshotRun.objects.exists()
    assert api_client.get("/api/v1/uploads/999/").status_code == 404
