"""The share links page (issue 17): which page each link opens; revoking asks first."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse

from dradash.sharing.models import ShareLink
from dradash.sharing.services import share_link_create

pytestmark = pytest.mark.django_db


def make(client: Any, snapshot: Any, path: str) -> ShareLink:
    response = client.post(
        reverse("share-create", args=[snapshot.pk]), {"path": path, "expires_in": 86400}
    )
    assert response.status_code == 200
    return ShareLink.objects.latest("id")


def test_each_link_says_which_page_it_opens(client_logged_in, demo) -> None:
    later = demo[-1]
    pod = reverse("pod-detail", args=[later.pk, "llm-eval", "eval-h200"])
    claims = reverse("claim-list", args=[later.pk]) + "?state=pending"
    make(client_logged_in, later, pod)
    make(client_logged_in, later, claims)
    make(client_logged_in, later, reverse("snapshot-checklist", args=[later.pk]))
    html = client_logged_in.get(reverse("share-list", args=[later.pk])).content.decode()
    assert f'<a href="{pod}">Pod llm-eval/eval-h200</a>' in html
    assert f'<a href="{claims}">the claims list (filtered)</a>' in html
    assert ">the checklist</a>" in html


def test_a_link_made_through_the_api_opens_the_overview(api_client, client_logged_in, demo):
    later = demo[-1]
    api_client.post(f"/api/v1/snapshots/{later.pk}/shares", {"expires_in": 600}, format="json")
    assert ShareLink.objects.get().path == reverse("snapshot-detail", args=[later.pk])
    html = client_logged_in.get(reverse("share-list", args=[later.pk])).content.decode()
    assert ">the overview</a>" in html


def test_revoking_asks_for_confirmation_first(client_logged_in, demo, user) -> None:
    link, _ = share_link_create(snapshot=demo[-1], user=user, expires_in=timedelta(days=1))
    url = reverse("share-revoke", args=[link.pk])
    listing = client_logged_in.get(reverse("share-list", args=[demo[-1].pk])).content.decode()
    # With JavaScript the browser asks (hx-confirm); without, the button opens a question.
    assert f'<form method="get" action="{url}" hx-post="{url}" hx-confirm="Revoke share link' in (
        listing
    )
    question = client_logged_in.get(url)
    assert question.status_code == 200
    assert f"Revoke share link #{link.pk}?" in question.content.decode()
    link.refresh_from_db()
    assert link.revoked_at is None  # asking revokes nothing
    assert client_logged_in.post(url).status_code == 302
    link.refresh_from_db()
    assert link.revoked_at is not None
