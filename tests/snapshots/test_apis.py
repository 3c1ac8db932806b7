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
    assert first["kinds"]["Pod"]["count"] == 28
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
