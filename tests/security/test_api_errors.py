"""Every error under /api/ is JSON, whoever answers it; malformed or deeply nested JSON is a
400, never a 500."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import Client
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db
EVALUATE = "/api/v1/selectors/evaluate"


def assert_json_error(response, status: int) -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"] == "application/json", response.content[:300]
    body = response.json()
    assert isinstance(body, dict) and body
    return body


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # used to be a RecursionError: 500
        b'{"expression": ' + b'{"a": ' * 70 + b"1" + b"}" * 70 + b"}",
        b'{"expression": "device.driver == \\"x\\"", "resource_slices": ['
        + b"[" * 65
        + b"]" * 65
        + b"]}",
    ],
    ids=["100000-deep", "70-deep-object", "65-deep-list"],
)
def test_deeply_nested_json_is_a_400(api_client: APIClient, body: bytes) -> None:
    response = api_client.post(EVALUATE, body, content_type="application/json")
    assert "nested" in assert_json_error(response, 400)["detail"]


@pytest.mark.parametrize(
    "body",
    [b"{", b'{"expression": "x",}', b"\xff\xfe{}", b"NaN", b'{"a": 1e999999}'],
    ids=["truncated", "trailing-comma", "not-utf8", "nan", "huge-float"],
)
def test_malformed_json_is_a_400(api_client: APIClient, body: bytes) -> None:
    response = api_client.post(EVALUATE, body, content_type="application/json")
    assert "JSON parse error" in assert_json_error(response, 400)["detail"]


def test_an_empty_body_is_a_400(api_client: APIClient) -> None:
    response = api_client.post(EVALUATE, b"", content_type="application/json")
    assert "expression" in assert_json_error(response, 400)


def test_ordinary_nesting_still_parses(api_client: APIClient) -> None:
    deep_but_fine = {"expression": "true", "resource_slices": [{"spec": {"a": [[[[[[1]]]]]]}}]}
    response = api_client.post(EVALUATE, deep_but_fine, format="json")
    assert response.status_code in (200, 400)
    assert "JSON parse error" not in response.content.decode()


def test_an_unknown_api_url_is_json_404(api_client: APIClient) -> None:
    assert assert_json_error(api_client.get("/api/v1/no/such/thing"), 404) == {
        "detail": "Not found."
    }
    assert_json_error(Client().get("/api/v2/"), 404)  # anonymous too


def test_a_disallowed_host_under_the_api_is_json_400(api_client: APIClient) -> None:
    assert_json_error(api_client.get("/api/v1/snapshots/", HTTP_HOST="evil.example"), 400)


def test_a_body_over_the_limit_is_json(api_client: APIClient, settings) -> None:
    settings.DRADASH_REQUEST_MAX_BYTES = 1024
    body = b'{"expression": "' + b"x" * 4096 + b'"}'
    response = api_client.post(EVALUATE, body, content_type="application/json")
    assert "DRADASH_REQUEST_MAX_BYTES" in assert_json_error(response, 413)["detail"]


def test_a_server_error_under_the_api_is_json(api_client: APIClient, monkeypatch) -> None:
    from dradash.snapshots import apis

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")

    monkeypatch.setattr(apis, "snapshot_list", broken)
    api_client.raise_request_exception = False
    body = assert_json_error(api_client.get("/api/v1/snapshots/"), 500)
    assert body == {"detail": "Server error; it was logged."}
    assert "a bug" not in str(body)


def test_the_database_being_away_is_a_json_503(api_client: APIClient, monkeypatch) -> None:
    from dradash.snapshots import apis

    def unavailable(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    monkeypatch.setattr(apis, "snapshot_list", unavailable)
    response = api_client.get("/api/v1/snapshots/")
    assert assert_json_error(response, 503) == {
        "detail": "The database is unavailable; try again shortly."
    }
    assert response["Retry-After"] == "10"


def test_method_not_allowed_is_json(api_client: APIClient) -> None:
    assert_json_error(api_client.put("/api/v1/snapshots/"), 405)


def test_pages_keep_their_html_errors(client_logged_in) -> None:
    response = client_logged_in.get("/no/such/page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    "path",
    [
        "/snapshots/{s}/pods/ns/a%00b/",
        "/snapshots/{s}/claims/a%00/b/",
        "/api/v1/snapshots/{s}/pods/ns/a%00b/diagnosis",
        "/api/v1/snapshots/{s}/claims/ns/%00/explain",
        "/share/{token}/snapshots/{s}/pods/ns/a%00b/",
    ],
)
def test_a_nul_in_a_path_segment_is_a_404_not_a_500(
    client_logged_in: Client, api_client: APIClient, demo, user, path: str
) -> None:
    """PostgreSQL refuses NUL in a query: the issue's probe answered 500."""
    from datetime import timedelta

    from dradash.sharing.services import share_link_create

    _, token = share_link_create(snapshot=demo[1], user=user, expires_in=timedelta(days=1))
    path = path.format(s=demo[1].pk, token=token)
    client = api_client if path.startswith("/api/") else client_logged_in
    client.raise_request_exception = False
    response = client.get(path)
    if path.startswith("/api/"):
        assert assert_json_error(response, 404) == {"detail": "Not found."}
    else:
        assert response.status_code == 404
        assert b"NUL character" in response.content
