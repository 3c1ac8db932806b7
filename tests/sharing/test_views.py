"""The "Share this view" form, the share links page and its Revoke buttons."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from dradash.sharing.models import AuditEvent, ShareLink, token_hash

pytestmark = pytest.mark.django_db

DAY = 86400


def created_url(html: str) -> str:
    match = re.search(r'class="share-url" type="text" readonly value="([^"]+)"', html)
    assert match, html[:2000]
    return match[1].replace("&amp;", "&")


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("snapshot-detail", ()),
        ("pod-list", ()),
        ("claim-list", ()),
        ("pod-detail", ("inference", "vllm-0")),
        ("claim-detail", ("gpu-test2", "single-gpu")),
        ("class-detail", ("gpu.nvidia.com",)),
        ("device-list", ()),
    ],
)
def test_every_snapshot_page_has_a_share_button(client_logged_in, demo, name, args) -> None:
    snapshot = demo[0]
    url = reverse(name, args=[snapshot.pk, *args])
    html = client_logged_in.get(url).content.decode()
    assert "Share this view" in html
    assert f'action="{reverse("share-create", args=[snapshot.pk])}"' in html
    assert f'name="path" value="{url}"' in html
    assert "csrfmiddlewaretoken" in html


def test_pages_that_are_not_of_one_snapshot_have_no_share_button(client_logged_in, demo) -> None:
    for url in (reverse("home"), reverse("playground"), reverse("upload")):
        assert "Share this view" not in client_logged_in.get(url).content.decode()


def test_sharing_without_javascript_shows_the_link_to_the_current_view(
    client_logged_in, demo, user
) -> None:
    snapshot = demo[0]
    page = reverse("claim-list", args=[snapshot.pk]) + "?state=pending&namespace=gpu-test2"
    response = client_logged_in.post(
        reverse("share-create", args=[snapshot.pk]), {"expires_in": DAY, "path": page}
    )
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    assert "<html" in html
    url = urlsplit(created_url(html))
    assert url.netloc == "testserver"
    token = url.path.split("/")[2]
    assert url.path == f"/share/{token}/snapshots/{snapshot.pk}/claims/"
    assert url.query == "state=pending&namespace=gpu-test2"
    link = ShareLink.objects.get()
    assert link.token_hash == token_hash(token)
    assert (link.expires_at - link.created_at).total_seconds() == DAY
    assert link.created_by == user
    snapshot.refresh_from_db()
    assert snapshot.pinned
    shared = Client().get(f"{url.path}?{url.query}")
    assert shared.status_code == 200
    assert "claims" in shared.content.decode()


def test_sharing_with_htmx_returns_the_fragment_for_the_browsers_current_address(
    client_logged_in, demo
) -> None:
    snapshot = demo[0]
    current = reverse("pod-list", args=[snapshot.pk]) + "?stage=claim-unallocated"
    response = client_logged_in.post(
        reverse("share-create", args=[snapshot.pk]),
        {"expires_in": 30 * DAY, "path": reverse("snapshot-detail", args=[snapshot.pk])},
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{current}"},
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    url = urlsplit(created_url(html))
    assert url.path.endswith(f"/snapshots/{snapshot.pk}/pods/")
    assert url.query == "stage=claim-unallocated"
    link = ShareLink.objects.get()
    assert (link.expires_at - link.created_at).total_seconds() == 30 * DAY


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/",
        "/playground/?snapshot=1",
        "/snapshots/{other}/pods/",
        "https://evil.example/snapshots/{id}/",
        "//evil.example/snapshots/{id}/",
        "/admin/",
        "javascript:alert(1)",
    ],
)
def test_a_page_a_link_cannot_show_is_shared_as_the_overview(client_logged_in, tiny, path) -> None:
    snapshot = tiny[0]
    response = client_logged_in.post(
        reverse("share-create", args=[snapshot.pk]),
        {"expires_in": DAY, "path": path.format(id=snapshot.pk, other=tiny[1].pk)},
    )
    url = urlsplit(created_url(response.content.decode()))
    assert url.netloc == "testserver"
    assert re.fullmatch(rf"/share/[A-Za-z0-9_-]{{43}}/snapshots/{snapshot.pk}/", url.path)
    assert url.query == ""


def test_sharing_refuses_an_expiry_that_is_not_offered(client_logged_in, tiny) -> None:
    response = client_logged_in.post(
        reverse("share-create", args=[tiny[0].pk]), {"expires_in": 365 * DAY}
    )
    assert response.status_code == 400
    assert not ShareLink.objects.exists()


def test_sharing_an_unknown_snapshot_is_404(client_logged_in, db) -> None:
    response = client_logged_in.post(reverse("share-create", args=[999999]), {"expires_in": DAY})
    assert response.status_code == 404


def test_sharing_needs_a_login(client, tiny) -> None:
    response = client.post(reverse("share-create", args=[tiny[0].pk]), {"expires_in": DAY})
    assert response.status_code == 302
    assert not ShareLink.objects.exists()


def test_the_share_links_page_and_revoking_need_a_login(client, tiny_shared) -> None:
    link, _ = tiny_shared
    list_url = reverse("share-list", args=[link.snapshot_id])
    assert client.get(list_url)["Location"] == f"{reverse('login')}?next={list_url}"
    assert client.post(reverse("share-revoke", args=[link.pk])).status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is None


def test_the_share_links_page_lists_active_links(client_logged_in, tiny_shared) -> None:
    link, token = tiny_shared
    Client().get(f"/share/{token}/snapshots/{link.snapshot_id}/")
    html = client_logged_in.get(reverse("share-list", args=[link.snapshot_id])).content.decode()
    assert f"#{link.pk}" in html
    assert "alice" in html
    assert "Revoke" in html
    assert f'action="{reverse("share-revoke", args=[link.pk])}"' in html
    assert "share.access" in html  # recent activity
    assert token not in html
    assert link.token_hash not in html


def test_revoking_from_the_page_without_javascript_redirects_back(
    client_logged_in, tiny_shared, user
) -> None:
    link, token = tiny_shared
    response = client_logged_in.post(reverse("share-revoke", args=[link.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("share-list", args=[link.snapshot_id])
    link.refresh_from_db()
    assert link.revoked_at is not None
    assert AuditEvent.objects.get(action="share.revoke").user == user
    assert Client().get(f"/share/{token}/snapshots/{link.snapshot_id}/").status_code == 404


def test_revoking_with_htmx_returns_the_updated_list(client_logged_in, tiny_shared) -> None:
    link, _ = tiny_shared
    response = client_logged_in.post(
        reverse("share-revoke", args=[link.pk]), headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert html.strip().startswith('<section class="card" id="share-links">')
    assert "No active share links" in html


def test_revoking_an_unknown_link_is_404(client_logged_in, db) -> None:
    assert client_logged_in.post(reverse("share-revoke", args=[999999])).status_code == 404


@pytest.mark.parametrize("form", ["create", "revoke"])
def test_the_share_forms_need_a_csrf_token(user, tiny_shared, form) -> None:
    link, _ = tiny_shared
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    if form == "create":
        response = client.post(
            reverse("share-create", args=[link.snapshot_id]), {"expires_in": DAY}
        )
    else:
        response = client.post(reverse("share-revoke", args=[link.pk]))
    assert response.status_code == 403
    link.refresh_from_db()
    assert link.revoked_at is None
    assert ShareLink.objects.count() == 1
