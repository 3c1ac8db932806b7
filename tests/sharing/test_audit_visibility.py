"""Who reads a share link's audit log, with its visitors' addresses (README "Who may see and do
what"): the link's creator and staff users; any other user sees the links, not who opened them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from dradash.sharing.services import share_link_create
from tests.sharing.conftest import share_url

pytestmark = pytest.mark.django_db

VISITOR = "203.0.113.9"


@pytest.fixture
def bob(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("bob", password="bob-pw-123")


@pytest.fixture
def staff(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("sam", password="sam-pw-123", is_staff=True)


@pytest.fixture
def visited(tiny_shared: tuple[Any, str]) -> Any:
    """alice's link to tiny[0], opened once by a visitor from VISITOR."""
    link, token = tiny_shared
    assert Client(REMOTE_ADDR=VISITOR).get(share_url(token), follow=True).status_code == 200
    return link


def activity(user: Any, snapshot_id: int) -> str:
    client = Client()
    client.force_login(user)
    html = client.get(reverse("share-list", args=[snapshot_id])).content.decode()
    return html[html.index("Recent activity") :]


def test_the_links_creator_sees_who_opened_it(visited: Any, user: Any) -> None:
    html = activity(user, visited.snapshot_id)
    assert VISITOR in html and "share.access" in html and "share.create" in html
    assert "Of the links you made" in html


def test_another_user_does_not_see_the_visitors_of_someone_elses_link(
    visited: Any, bob: Any
) -> None:
    html = activity(bob, visited.snapshot_id)
    assert VISITOR not in html
    assert "share.access" not in html
    assert "Nothing yet." in html
    links = Client()
    links.force_login(bob)
    page = links.get(reverse("share-list", args=[visited.snapshot_id])).content.decode()
    assert f"#{visited.pk} " in page  # the link itself stays listed for everyone


def test_another_user_sees_the_visitors_of_their_own_link_only(visited: Any, bob: Any) -> None:
    bobs, token = share_link_create(
        snapshot=visited.snapshot, user=bob, expires_in=timedelta(days=1)
    )
    Client(REMOTE_ADDR="198.51.100.7").get(share_url(token), follow=True)
    html = activity(bob, visited.snapshot_id)
    assert "198.51.100.7" in html
    assert VISITOR not in html
    assert f"#{bobs.pk}" in html and f"<td>#{visited.pk}</td>" not in html


def test_staff_see_every_links_visitors(visited: Any, staff: Any) -> None:
    html = activity(staff, visited.snapshot_id)
    assert VISITOR in html and "share.access" in html
    assert "Of the links you made" not in html


@pytest.mark.parametrize("who", ["user", "bob", "staff"])
def test_the_share_list_api_holds_no_visitors_address(
    visited: Any, who: str, request: pytest.FixtureRequest
) -> None:
    api = APIClient()
    api.force_authenticate(request.getfixturevalue(who))
    response = api.get(f"/api/v1/snapshots/{visited.snapshot_id}/shares")
    assert response.status_code == 200
    assert [link["id"] for link in response.json()] == [visited.pk]
    assert VISITOR not in response.content.decode()
