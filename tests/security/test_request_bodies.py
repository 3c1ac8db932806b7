"""Every request body has a size limit (DRADASH_REQUEST_MAX_BYTES), checked before the body is
read: a larger one is answered 413 (JSON under /api/) and changes nothing. Uploads keep their
own, larger limit (DRADASH_UPLOAD_MAX_BYTES)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from dradash.sharing.models import ShareLink
from dradash.snapshots.models import SnapshotRun

pytestmark = pytest.mark.django_db
EVALUATE = "/api/v1/selectors/evaluate"
LIMIT = 1000


@pytest.fixture(autouse=True)
def _small_limit(settings) -> None:
    settings.DRADASH_REQUEST_MAX_BYTES = LIMIT


def padded(prefix: str, size: int) -> bytes:
    """A valid JSON request of ``size`` bytes: ``prefix`` (members and a comma), then padding."""
    head = f'{{{prefix}"padding":"'.encode()
    return head + b"x" * (size - len(head) - 2) + b'"}'


def test_a_selector_request_over_the_limit_is_413_json(api_client: APIClient) -> None:
    body = padded('"expression":"true","resource_slices":[],', 5000)
    response = api_client.post(EVALUATE, body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    detail = response.json()["detail"]
    assert "5,000 bytes" in detail and "1,000 bytes" in detail
    assert "DRADASH_REQUEST_MAX_BYTES" in detail


def test_a_share_request_over_the_limit_stores_no_link(api_client: APIClient, demo) -> None:
    url = f"/api/v1/snapshots/{demo[0].pk}/shares"
    response = api_client.post(
        url, padded('"expires_in":3600,', 4000), content_type="application/json"
    )
    assert response.status_code == 413
    assert not ShareLink.objects.exists()
    # Under the limit the same request makes the link.
    small = padded('"expires_in":3600,', 200)
    assert api_client.post(url, small, content_type="application/json").status_code == 201


def test_the_declared_length_is_refused_before_a_byte_is_read(api_client: APIClient) -> None:
    """A request that says it carries 200 MiB but sends two bytes: reading the body would fail
    (the test client refuses to read past what was sent), so a 413 means nothing was read."""
    response = api_client.post(
        EVALUATE, b"{}", content_type="application/json", CONTENT_LENGTH=str(200 * 2**20)
    )
    assert response.status_code == 413
    assert "209,715,200 bytes" in response.json()["detail"]


def chunked(client: Client, path: str, body: bytes, **extra: str):  # type: ignore[no-untyped-def]
    """A POST whose body has no Content-Length (Transfer-Encoding: chunked, as a WSGI server
    that de-chunks it passes it on)."""
    return client.generic(
        "POST",
        path,
        b"",
        content_type="application/json",
        CONTENT_LENGTH="",
        HTTP_TRANSFER_ENCODING="chunked",
        **{"wsgi.input": io.BytesIO(body), "wsgi.input_terminated": True},
        **extra,
    )


def test_a_chunked_body_is_read_up_to_the_limit_only(api_client: APIClient) -> None:
    over = chunked(api_client, EVALUATE, padded('"expression":"true",', 50_000))
    assert over.status_code == 413
    assert "larger" in over.json()["detail"]
    # Under the limit it is read as if its length had been given.
    body = b'{"expression": "true", "resource_slices": []}'
    under = chunked(api_client, EVALUATE, body)
    assert under.status_code == 200, under.content
    assert under.json()["summary"] == {"matched": 0, "unmatched": 0, "errors": 0, "unknown": 0}


def test_a_form_over_the_limit_is_a_413_page(client_logged_in: Client, demo) -> None:
    response = client_logged_in.post(
        f"/snapshots/{demo[0].pk}/shares/new/",
        {"expires_in": "86400", "path": "/" + "x" * 5000},
    )
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
    assert b"Request too large" in response.content
    assert not ShareLink.objects.exists()


def test_uploads_keep_their_own_larger_limit(
    client_logged_in: Client, settings, django_capture_on_commit_callbacks
) -> None:
    settings.DRADASH_UPLOAD_MAX_BYTES = 100_000
    pods = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p-{i}", "namespace": "ml"}}
        for i in range(100)
    ]
    bundle = SimpleUploadedFile("pods.json", json.dumps({"kind": "List", "items": pods}).encode())
    assert bundle.size > 4 * LIMIT
    with django_capture_on_commit_callbacks(execute=True):
        response = client_logged_in.post("/upload/", {"files": [bundle], "cluster": "big-enough"})
    assert response.status_code == 302, response.content[:300]
    assert SnapshotRun.objects.get().status == SnapshotRun.Status.SUCCEEDED
