"""A share link's pages show Pods that ask for devices as extended resources backed by DRA
(issue 23) as the logged-in pages do, and preview them with their verdict
(tests/extended_cluster.py's cluster, fixture ``gpu_lab``)."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest

from dradash.sharing.services import share_link_create
from tests.extended_cluster import GENERATED, NS, RESOURCE
from tests.sharing.conftest import page_urls

pytestmark = pytest.mark.django_db


def og(html: str) -> dict[str, str]:
    return {
        name: unescape(value)
        for name, value in re.findall(r'<meta property="og:([a-z_]+)" content="([^"]*)">', html)
    }


@pytest.fixture
def shared(gpu_lab, user) -> tuple[str, str]:
    """(prefix of the later snapshot's pages under its link, the link's own prefix)."""
    later = gpu_lab[1]
    _, token = share_link_create(snapshot=later, user=user, expires_in=timedelta(days=1))
    return f"/share/{token}/snapshots/{later.pk}/", f"/share/{token}/"


def get(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return unescape(response.content.decode()).replace("<wbr>", "")


def test_the_shared_pod_page_previews_and_shows_the_pending_pod(client, shared) -> None:
    pages, link = shared
    html = get(client, pages + f"pods/{NS}/pod1/")
    tags = og(html)
    assert tags["title"] == f"Pod {NS}/pod1: claim-unallocated (devices-exhausted)"
    assert tags["description"].startswith("Every device matching request container-0-request-0")
    assert "The claim the scheduler creates at binding" in html
    assert RESOURCE in html
    urls = [url for _, _, url in page_urls(html) if url.startswith("/")]
    claims = [url for url in urls if "/claims/" in url and url.count("/") > 6]
    assert claims and all(url.startswith(link) for url in claims)
    assert not any("%3Cextended-resources%3E" in url for url in claims)
    for url in set(claims):  # every claim it links to has a page the link opens
        assert client.get(url).status_code == 200, url


def test_the_shared_list_overview_and_generated_claim(client, shared) -> None:
    pages, _ = shared
    assert "pod1" in get(client, pages + "pods/?stage=claim-unallocated")
    overview = og(get(client, pages))
    assert "1 of 3 Pods using DRA stuck" in overview["title"]
    claim = get(client, pages + f"claims/{NS}/{GENERATED}/")
    assert "created by the scheduler for the extended resources of Pod pod0" in claim
