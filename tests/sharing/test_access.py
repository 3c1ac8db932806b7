"""Pages under /share/<token>/: one snapshot, read-only, no login, nothing else."""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from dradash.sharing.models import AuditEvent, ShareLink
from dradash.sharing.services import share_link_revoke, shared_view_allowed
from tests.sharing.conftest import page_urls, share_url

pytestmark = pytest.mark.django_db

SHARED_PAGES = [
    ("snapshot-detail", ()),
    ("pod-list", ()),
    ("claim-list", ()),
    ("pod-detail", ("inference", "vllm-0")),
    ("claim-detail", ("gpu-test2", "single-gpu")),
    ("class-detail", ("gpu.nvidia.com",)),
    ("device-list", ()),
    ("snapshot-checklist", ()),
    ("snapshot-capacity", ()),
]


def shared_path(token: str, name: str, snapshot_id: int, *args: str) -> str:
    return share_url(token, reverse(name, args=[snapshot_id, *args]))


@pytest.mark.parametrize(("name", "args"), SHARED_PAGES)
def test_shared_pages_render_without_login_and_links_stay_under_the_share(
    client, shared, name, args
) -> None:
    link, token = shared
    response = client.get(shared_path(token, name, link.snapshot_id, *args))
    assert response.status_code == 200, response.content[:300]
    html = response.content.decode()
    assert f"Shared read-only view of snapshot #{link.snapshot_id}" in html
    urls = page_urls(html)
    assert urls
    for tag, attr, url in urls:
        if url.startswith("/static/") or url.startswith("?"):
            continue
        assert url.startswith(f"/share/{token}/"), (tag, attr, url)
        # and it leads to a page the link opens (no playground, diff, upload … links)
        rest = "/" + urlsplit(url).path.removeprefix(f"/share/{token}/")
        assert rest == "/" or shared_view_allowed(
            path_info=rest, method="GET", snapshot_id=link.snapshot_id
        ), (tag, attr, url)


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [("claim-list", {"state": "pending"}, "9 of 28 claims"), ("pod-list", {}, "Pods")],
)
def test_shared_lists_filter_as_htmx_partials(client, shared, name, params, expected) -> None:
    link, token = shared
    response = client.get(
        shared_path(token, name, link.snapshot_id), params, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert expected in html
    for tag, attr, url in page_urls(html):
        assert url.startswith(f"/share/{token}/") or url.startswith("?"), (tag, attr, url)


def test_shared_list_filters_without_javascript(client, shared) -> None:
    link, token = shared
    html = client.get(
        shared_path(token, "claim-list", link.snapshot_id), {"state": "pending"}
    ).content.decode()
    assert "9 of 28 claims" in html
    assert f'action="/share/{token}/snapshots/{link.snapshot_id}/claims/"' in html


def test_the_bundle_downloads_under_a_share(client, shared) -> None:
    link, token = shared
    response = client.get(shared_path(token, "snapshot-bundle", link.snapshot_id))
    assert response.status_code == 200
    assert b"SnapshotInfo" in b"".join(response.streaming_content)


def test_the_share_root_opens_the_snapshot_overview(client, shared) -> None:
    link, token = shared
    response = client.get(share_url(token))
    assert response.status_code == 302
    assert response["Location"] == share_url(token, f"snapshots/{link.snapshot_id}/")


def test_head_requests_answer_like_get_without_a_body(client, client_logged_in, shared) -> None:
    """Link checkers and chat unfurlers send HEAD first."""
    link, token = shared
    response = client.head(shared_path(token, "claim-list", link.snapshot_id))
    assert response.status_code == 200
    assert response.content == b""
    assert client_logged_in.head(reverse("claim-list", args=[link.snapshot_id])).status_code == 200


def test_a_logged_in_visitor_sees_the_shared_view_without_account_actions(
    client_logged_in, shared
) -> None:
    link, token = shared
    html = client_logged_in.get(
        shared_path(token, "snapshot-detail", link.snapshot_id)
    ).content.decode()
    assert "Shared read-only view" in html
    for absent in ("Log out", "Upload bundle", "Selector playground", "Share this view"):
        assert absent not in html
    assert "csrfmiddlewaretoken" not in html


def test_normal_pages_after_a_shared_one_are_not_prefixed(client_logged_in, shared) -> None:
    link, token = shared
    assert client_logged_in.get(shared_path(token, "pod-list", link.snapshot_id)).status_code == 200
    assert reverse("home") == "/"
    html = client_logged_in.get(reverse("pod-list", args=[link.snapshot_id])).content.decode()
    assert "/share/" not in html
    assert "Share this view" in html


@pytest.mark.parametrize(
    "path",
    [
        "",  # home, through the brand link: redirects (tested above); others follow
        "snapshots/{other}/",
        "snapshots/{other}/pods/",
        "snapshots/{other}/bundle.json",
        "snapshots/{other}/diff/{id}/",
        "snapshots/{id}/diff/{other}/",
        "snapshots/{id}/shares/",
        "playground/",
        "upload/",
        "runs/1/",
        "admin/",
        "admin/sharing/sharelink/",
        "accounts/logout/",
        "api/v1/snapshots/",
        "api/v1/snapshots/{id}/",
        "api/v1/snapshots/{id}/shares",
        "api/v1/snapshots/{id}/findings",
        "api/schema/",
        "no/such/page/",
    ],
)
def test_everything_else_under_the_share_prefix_is_refused(client, demo, shared, path) -> None:
    link, token = shared
    url = share_url(token, path.format(id=link.snapshot_id, other=demo[1].pk))
    response = client.get(url)
    if path == "":
        assert response.status_code == 302
        return
    assert response.status_code == 404, url
    assert b"Not part of the shared view" in response.content


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "snapshots/{id}/"),
        ("post", "snapshots/{id}/shares/new/"),
        ("post", "accounts/logout/"),
        ("post", "api/v1/snapshots/{id}/shares"),
        ("post", "api/v1/selectors/evaluate"),
        ("delete", "api/v1/shares/{share}"),
        ("post", "shares/{share}/revoke/"),
        ("put", "snapshots/{id}/pods/"),
    ],
)
def test_writes_under_the_share_prefix_are_refused(client_logged_in, shared, method, path) -> None:
    link, token = shared
    url = share_url(token, path.format(id=link.snapshot_id, share=link.pk))
    response = getattr(client_logged_in, method)(url)
    assert response.status_code == 404
    link.refresh_from_db()
    assert link.revoked_at is None
    assert ShareLink.objects.count() == 1


def test_an_unknown_token_is_refused_without_saying_which_snapshot(client, shared) -> None:
    response = client.get(share_url("x" * 43, "snapshots/1/"))
    assert response.status_code == 404
    html = response.content.decode()
    assert "This share link is invalid, expired or revoked" in html
    assert "snapshot #" not in html.lower()


def test_an_expired_link_is_refused(client, shared) -> None:
    link, token = shared
    ShareLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(share_url(token, f"snapshots/{link.snapshot_id}/"))
    assert response.status_code == 404
    assert b"invalid, expired or revoked" in response.content
    event = AuditEvent.objects.get(action="share.refused")
    assert event.share_id == link.pk
    assert event.detail.startswith("expired")


def test_a_revoked_link_is_refused_and_the_revocation_is_audited(client, shared, user) -> None:
    link, token = shared
    url = share_url(token, f"snapshots/{link.snapshot_id}/")
    assert client.get(url).status_code == 200
    assert share_link_revoke(link=link, user=user, remote_addr="10.0.0.9")
    response = client.get(url)
    assert response.status_code == 404
    assert b"invalid, expired or revoked" in response.content
    revoke = AuditEvent.objects.get(action="share.revoke")
    assert (revoke.share_id, revoke.user, revoke.remote_addr) == (link.pk, user, "10.0.0.9")
    assert AuditEvent.objects.get(action="share.refused").detail.startswith("revoked")


def test_access_is_counted_every_time_and_audited_once_a_minute(client, shared) -> None:
    link, token = shared
    url = share_url(token, f"snapshots/{link.snapshot_id}/pods/")
    for _ in range(3):
        assert client.get(url, REMOTE_ADDR="192.0.2.7").status_code == 200
    link.refresh_from_db()
    assert link.access_count == 3
    assert link.last_accessed_at is not None
    events = list(AuditEvent.objects.filter(action="share.access"))
    assert len(events) == 1
    assert events[0].share_id == link.pk
    assert events[0].snapshot_id == link.snapshot_id
    assert events[0].remote_addr == "192.0.2.7"
    assert events[0].detail == f"GET /snapshots/{link.snapshot_id}/pods/"
    # a minute later, the next access is audited again
    ShareLink.objects.filter(pk=link.pk).update(
        access_audited_at=timezone.now() - timedelta(seconds=61)
    )
    client.get(url)
    assert AuditEvent.objects.filter(action="share.access").count() == 2


def test_shared_pages_carry_the_security_headers(client, shared) -> None:
    link, token = shared
    response = client.get(share_url(token, f"snapshots/{link.snapshot_id}/"))
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "no-referrer"
    assert "no-store" in response["Cache-Control"]
    refused = client.get(share_url("y" * 43, "snapshots/1/"))
    assert "script-src 'self'" in refused["Content-Security-Policy"]


def test_the_token_never_reaches_the_logs(client, shared, caplog) -> None:
    link, token = shared
    caplog.set_level(logging.DEBUG)
    # Django's and dradash's loggers do not propagate to the root logger caplog listens on.
    loggers = [logging.getLogger(name) for name in ("django", "dradash")]
    for logger in loggers:
        logger.addHandler(caplog.handler)
    try:
        client.get(share_url(token, f"snapshots/{link.snapshot_id}/"))
        client.get(share_url(token, "admin/"))  # 404: Django logs the path
        client.get(share_url(token, "snapshots/999999/pods/nope/nope/"))
        client.get(share_url(token, "snapshots"))  # no trailing slash: not a share path
        ShareLink.objects.filter(pk=link.pk).update(revoked_at=timezone.now())
        client.get(share_url(token, f"snapshots/{link.snapshot_id}/"))
    finally:
        for logger in loggers:
            logger.removeHandler(caplog.handler)
    assert any("/share/" in r.getMessage() for r in caplog.records)  # the 404s were logged
    for record in caplog.records:
        assert token not in record.getMessage()
    for event in AuditEvent.objects.all():
        assert token not in event.detail


def test_the_token_is_stored_only_as_its_hash(shared) -> None:
    import hashlib

    from django.db import connection

    link, token = shared
    assert link.token_hash == hashlib.sha256(token.encode()).hexdigest()
    with connection.cursor() as cursor:
        for table in ("sharing_sharelink", "sharing_auditevent"):
            cursor.execute(f"SELECT * FROM {table}")  # noqa: S608
            for row in cursor.fetchall():
                assert token not in " ".join(map(str, row))


def test_a_second_client_does_not_get_the_share(shared) -> None:
    link, token = shared
    client = Client()
    assert client.get(reverse("snapshot-detail", args=[link.snapshot_id])).status_code == 302
