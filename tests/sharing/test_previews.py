"""Chat previews (DESIGN "Metrics and chat previews"): a page opened through a share link
carries og:title, og:description and og:site_name naming the object and its verdict, and
nothing beyond what the link itself shows."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

import pytest

from dradash.sharing.services import share_link_create

pytestmark = pytest.mark.django_db


def og(html: str) -> dict[str, str]:
    return {
        name: unescape(value)
        for name, value in re.findall(r'<meta property="og:([a-z_]+)" content="([^"]*)">', html)
    }


def visible(html: str) -> str:
    body = html[html.index("<body") :]
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body)))


@pytest.fixture
def link(demo: list[Any], user: Any) -> str:
    _, token = share_link_create(snapshot=demo[-1], user=user, expires_in=timedelta(days=1))
    return f"/share/{token}/snapshots/{demo[-1].pk}/"


def test_a_shared_pod_previews_with_its_verdict(client, demo, link) -> None:
    html = client.get(link + "pods/llm-eval/eval-h200/").content.decode()
    tags = og(html)
    assert tags["site_name"] == "dradash"
    assert tags["title"] == "Pod llm-eval/eval-h200: claim-unallocated (no-matching-devices)"
    assert tags["description"].startswith("No device in the cluster matches request gpu")
    assert " ".join(tags["description"].split()) in visible(html)  # nothing the page hides


def test_a_shared_claim_previews_with_its_verdict(client, demo, link) -> None:
    html = client.get(link + "claims/render/render-farm-6-05b2e-gpus-9927f/").content.decode()
    tags = og(html)
    assert tags["title"] == (
        "ResourceClaim render/render-farm-6-05b2e-gpus-9927f: claim-unallocated (devices-exhausted)"
    )
    assert tags["description"] in visible(html)


def test_a_shared_overview_previews_with_its_counts(client, demo, link) -> None:
    tags = og(client.get(link).content.decode())
    stuck = "20 of 36 Pods using DRA stuck"
    assert tags["title"] == f"Snapshot #{demo[-1].pk} of cluster demo: {stuck}"
    assert tags["description"].startswith("3 pod-pending, 9 claim-unallocated, ")


def test_other_shared_pages_name_the_snapshot_only(client, demo, link) -> None:
    tags = og(client.get(link + "devices/").content.decode())
    assert tags["title"] == f"Snapshot #{demo[-1].pk} of cluster demo"
    assert tags["description"] == (
        f"A read-only view of snapshot #{demo[-1].pk} of cluster demo, captured "
        "2026-11-28 10:30 UTC."
    )


def test_pages_behind_a_login_carry_no_preview(client_logged_in, demo) -> None:
    html = client_logged_in.get(f"/snapshots/{demo[-1].pk}/pods/llm-eval/eval-h200/").content
    assert b"og:" not in html


def test_a_refused_link_previews_nothing(client, demo) -> None:
    html = client.get(f"/share/not-a-token/snapshots/{demo[-1].pk}/").content
    assert b"og:" not in html
