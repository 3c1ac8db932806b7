"""Only the user who made a share link, or a staff user, may revoke it: on the page, in the
API and in the admin. Anyone else gets 403 and the link keeps working."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from dradash.sharing.models import AuditEvent, ShareLink
from tests.sharing.conftest import share_url

pytestmark = pytest.mark.django_db


@pytest.fixture
def mallory(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("mallory", password="mallory-pw-123")


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("sam", password="sam-pw-123", is_staff=True)


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def api_as(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def still_works(link: ShareLink, token: str) -> bool:
    link.refresh_from_db()
    return link.revoked_at is None and Client().get(share_url(token)).status_code == 302


def test_another_user_cannot_revoke_on_the_page(tiny_shared, mallory) -> None:
    link, token = tiny_shared
    client = logged_in(mallory)
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = client.post(reverse("share-revoke", args=[link.pk]), **headers)
        assert response.status_code == 403
    assert still_works(link, token)
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.SHARE_REVOKE).exists()


def test_another_user_cannot_revoke_in_the_api(tiny_shared, mallory) -> None:
    link, token = tiny_shared
    response = api_as(mallory).delete(f"/api/v1/shares/{link.pk}")
    assert response.status_code == 403
    assert "Only the user who created a share link" in response.json()["detail"]
    assert still_works(link, token)


def test_the_list_offers_revoke_only_for_links_one_may_revoke(tiny_shared, mallory, user) -> None:
    link, _ = tiny_shared
    url = reverse("share-list", args=[link.snapshot_id])
    revoke = reverse("share-revoke", args=[link.pk]).encode()
    assert revoke not in logged_in(mallory).get(url).content
    assert revoke in logged_in(user).get(url).content


def test_the_creator_may_revoke(tiny_shared, user) -> None:
    link, token = tiny_shared
    response = logged_in(user).post(reverse("share-revoke", args=[link.pk]))
    assert response.status_code == 302
    assert not still_works(link, token)


@pytest.mark.parametrize("where", ["page", "api", "admin"])
def test_staff_may_revoke_anyones_link(tiny_shared, staff, where: str) -> None:
    link, token = tiny_shared
    if where == "page":
        assert logged_in(staff).post(reverse("share-revoke", args=[link.pk])).status_code == 302
    elif where == "api":
        assert api_as(staff).delete(f"/api/v1/shares/{link.pk}").status_code == 204
    else:
        staff.is_superuser = True  # the admin needs model permissions too
        staff.save()
        response = logged_in(staff).post(
            reverse("admin:sharing_sharelink_changelist"),
            {"action": "revoke", "_selected_action": [link.pk]},
        )
        assert response.status_code == 302
    assert not still_works(link, token)
    event = AuditEvent.objects.get(action=AuditEvent.Action.SHARE_REVOKE)
    assert event.user == staff


def test_a_link_whose_creator_is_gone_can_be_revoked_by_staff_only(tiny_shared, user, staff):
    link, token = tiny_shared
    ShareLink.objects.filter(pk=link.pk).update(created_by=None)
    assert logged_in(user).post(reverse("share-revoke", args=[link.pk])).status_code == 403
    assert logged_in(staff).post(reverse("share-revoke", args=[link.pk])).status_code == 302
    assert not still_works(link, token)
