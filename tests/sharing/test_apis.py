"""POST/GET /api/v1/snapshots/{id}/shares and DELETE /api/v1/shares/{id}."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from dradash.sharing.models import AuditEvent, ShareLink, token_hash

pytestmark = pytest.mark.django_db


def shares_url(snapshot_id: int) -> str:
    return f"/api/v1/snapshots/{snapshot_id}/shares"


def test_create_returns_an_absolute_url_with_the_token_and_pins_the_snapshot(
    api_client, tiny, user, client
) -> None:
    snapshot = tiny[0]
    assert not snapshot.pinned
    response = api_client.post(shares_url(snapshot.pk), {"expires_in": 3600}, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert set(data) == {"id", "url", "expires_at"}
    assert "no-store" in response["Cache-Control"]
    url = urlsplit(data["url"])
    assert url.scheme == "http" and url.netloc == "testserver"
    prefix, token, rest = url.path[1:].split("/", 2)
    assert (prefix, rest) == ("share", f"snapshots/{snapshot.pk}/")
    link = ShareLink.objects.get(pk=data["id"])
    assert link.token_hash == token_hash(token)
    assert link.created_by == user
    expires = parse_datetime(data["expires_at"])
    assert abs(expires - (timezone.now() + timedelta(hours=1))) < timedelta(seconds=30)
    snapshot.refresh_from_db()
    assert snapshot.pinned
    event = AuditEvent.objects.get(action="share.create")
    assert (event.share_id, event.snapshot_id, event.user) == (link.pk, snapshot.pk, user)
    assert token not in event.detail
    # the url works, without a login
    assert client.get(url.path).status_code == 200


def test_create_defaults_to_seven_days(api_client, tiny) -> None:
    response = api_client.post(shares_url(tiny[0].pk), {}, format="json")
    assert response.status_code == 201
    expires = parse_datetime(response.json()["expires_at"])
    assert abs(expires - (timezone.now() + timedelta(days=7))) < timedelta(seconds=30)


@pytest.mark.parametrize("expires_in", [59, 0, -5, 90 * 86400 + 1, "soon", None])
def test_create_refuses_an_expiry_out_of_range(api_client, tiny, expires_in) -> None:
    response = api_client.post(shares_url(tiny[0].pk), {"expires_in": expires_in}, format="json")
    assert response.status_code == 400
    assert "expires_in" in response.json()
    assert not ShareLink.objects.exists()


@pytest.mark.parametrize("expires_in", [60, 90 * 86400])
def test_create_accepts_the_limits(api_client, tiny, expires_in) -> None:
    response = api_client.post(shares_url(tiny[0].pk), {"expires_in": expires_in}, format="json")
    assert response.status_code == 201


def test_unknown_snapshot_is_404(api_client, db) -> None:
    assert api_client.post(shares_url(999999), {}, format="json").status_code == 404
    assert api_client.get(shares_url(999999)).status_code == 404


def test_list_shows_active_links_without_tokens(api_client, tiny, tiny_shared) -> None:
    link, token = tiny_shared
    expired = ShareLink.objects.create(
        snapshot=tiny[0], token_hash="0" * 64, expires_at=timezone.now() - timedelta(seconds=1)
    )
    revoked = ShareLink.objects.create(
        snapshot=tiny[0], token_hash="1" * 64, revoked_at=timezone.now()
    )
    ShareLink.objects.create(snapshot=tiny[1], token_hash="2" * 64)
    response = api_client.get(shares_url(tiny[0].pk))
    assert response.status_code == 200
    rows = response.json()
    assert [r["id"] for r in rows] == [link.pk]
    assert {expired.pk, revoked.pk}.isdisjoint(r["id"] for r in rows)
    assert set(rows[0]) == {
        "id",
        "created_by",
        "created_at",
        "expires_at",
        "last_accessed_at",
        "access_count",
    }
    assert rows[0]["created_by"] == "alice"
    assert rows[0]["last_accessed_at"] is None
    assert token not in response.content.decode()
    assert link.token_hash not in response.content.decode()


def test_list_shows_a_link_whose_creator_is_gone(api_client, tiny) -> None:
    ShareLink.objects.create(snapshot=tiny[0], token_hash="3" * 64)
    assert api_client.get(shares_url(tiny[0].pk)).json()[0]["created_by"] is None


def test_delete_revokes_idempotently(api_client, tiny_shared, user, client) -> None:
    link, token = tiny_shared
    response = api_client.delete(f"/api/v1/shares/{link.pk}")
    assert response.status_code == 204
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert api_client.delete(f"/api/v1/shares/{link.pk}").status_code == 204
    assert AuditEvent.objects.filter(action="share.revoke").count() == 1
    assert client.get(f"/share/{token}/snapshots/{link.snapshot_id}/").status_code == 404


def test_delete_unknown_is_404(api_client, db) -> None:
    assert api_client.delete("/api/v1/shares/999999").status_code == 404


def test_anonymous_api_requests_are_refused(client, tiny_shared) -> None:
    link, _ = tiny_shared
    anonymous = APIClient()
    assert anonymous.post(shares_url(link.snapshot_id), {}).status_code in (401, 403)
    assert anonymous.get(shares_url(link.snapshot_id)).status_code in (401, 403)
    assert anonymous.delete(f"/api/v1/shares/{link.pk}").status_code in (401, 403)
    link.refresh_from_db()
    assert link.revoked_at is None


def test_token_authentication_works(tiny, user) -> None:
    from knox.models import AuthToken

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(user)[1]}")
    assert client.post(shares_url(tiny[0].pk), {}, format="json").status_code == 201


def test_session_api_writes_need_a_csrf_token(tiny, user) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.login(username="alice", password="pw-for-tests")
    assert client.post(shares_url(tiny[0].pk), {}, format="json").status_code == 403
    assert not ShareLink.objects.exists()


def test_the_share_endpoints_are_in_the_openapi_schema(client_logged_in) -> None:
    import yaml

    schema = yaml.safe_load(client_logged_in.get("/api/schema/").content)
    paths = schema["paths"]
    shares = paths["/api/v1/snapshots/{snapshot_id}/shares"]
    assert {"get", "post"} <= set(shares)
    assert "201" in shares["post"]["responses"]
    assert "delete" in paths["/api/v1/shares/{share_id}"]
