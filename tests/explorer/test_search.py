"""The search box in the header of a snapshot's pages (issue 17): Pods, claims and nodes by
name, its page and its API."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse

from dradash.sharing.services import share_link_create

pytestmark = pytest.mark.django_db


def search(client: Any, snapshot: Any, q: str, **extra: Any) -> Any:
    return client.get(reverse("snapshot-search", args=[snapshot.pk]), {"q": q}, **extra)


def test_every_snapshot_page_has_the_search_box_in_its_header(client_logged_in, demo) -> None:
    later = demo[-1]
    for url in (
        reverse("snapshot-detail", args=[later.pk]),
        reverse("device-list", args=[later.pk]),
        reverse("pod-detail", args=[later.pk, "llm-eval", "eval-h200"]),
    ):
        html = client_logged_in.get(url).content.decode()
        header = html[html.index('<header class="topbar">') : html.index("</header>")]
        assert f'action="{reverse("snapshot-search", args=[later.pk])}"' in header, url
        assert 'name="q"' in header


def test_it_finds_pods_claims_and_nodes(client_logged_in, demo) -> None:
    html = search(client_logged_in, demo[-1], "gpu-example").content.decode()
    html = html.replace("<wbr>", "")
    assert "<h2>Nodes" in html
    for node in ("gpu-example-worker-1", "gpu-example-worker-2", "gpu-example-worker-3"):
        assert node in html
    html = search(client_logged_in, demo[-1], "render-farm").content.decode().replace("<wbr>", "")
    assert "render-farm-6-05b2e" in html and "render-farm-6-05b2e-gpus-9927f" in html
    assert html.index("render-farm-6-05b2e") < html.index("<h2>ResourceClaims")


def test_one_hit_opens_its_page(client_logged_in, demo) -> None:
    later = demo[-1]
    response = search(client_logged_in, later, "llm-eval/eval-h2")
    assert response.status_code == 302
    assert response["Location"] == reverse("pod-detail", args=[later.pk, "llm-eval", "eval-h200"])


def test_an_exact_name_opens_its_page_whatever_else_matches(client_logged_in, demo) -> None:
    """render/render-farm-6-05b2e also matches its claim render-farm-6-05b2e-gpus-9927f."""
    later = demo[-1]
    response = search(client_logged_in, later, "render/render-farm-6-05b2e")
    assert response["Location"] == reverse(
        "pod-detail", args=[later.pk, "render", "render-farm-6-05b2e"]
    )
    node = search(client_logged_in, later, "h100-node-01")  # h100-mig-node-01 does not match
    assert node["Location"] == reverse("node-detail", args=[later.pk, "h100-node-01"])


def test_the_search_page_has_one_search_box(client_logged_in, demo) -> None:
    html = search(client_logged_in, demo[-1], "gpu").content.decode()
    assert html.count('type="search"') == 1
    assert 'class="topsearch"' not in html  # only its invisible stand-in, for the header's height


def test_nothing_found_says_so(client_logged_in, demo) -> None:
    html = search(client_logged_in, demo[-1], "no-such-thing").content.decode()
    assert "Nothing in snapshot" in html


def test_the_search_as_an_htmx_partial(client_logged_in, demo) -> None:
    response = search(client_logged_in, demo[-1], "pod", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and html.lstrip().startswith('<section id="results">')


def test_a_shared_page_has_no_search_box(client, demo, user) -> None:
    """Search is not a page a share link opens: the box would lead nowhere."""
    later = demo[-1]
    _, token = share_link_create(snapshot=later, user=user, expires_in=timedelta(days=1))
    html = client.get(f"/share/{token}/snapshots/{later.pk}/").content.decode()
    assert 'class="topsearch"' not in html


def test_the_search_api(api_client, demo) -> None:
    later = demo[-1].pk
    body = api_client.get(f"/api/v1/snapshots/{later}/search", {"q": "h100"}).json()
    assert body["query"] == "h100"
    assert {n["name"] for n in body["nodes"]} == {"h100-node-01", "h100-mig-node-01"}
    node = next(n for n in body["nodes"] if n["name"] == "h100-node-01")
    assert node["devices"] == 8 and node["pods"] > 0
    assert body["totals"]["nodes"] == 2
    claims = api_client.get(f"/api/v1/snapshots/{later}/search", {"q": "h200"}).json()
    assert [(c["namespace"], c["name"]) for c in claims["claims"]] == [("llm-eval", "h200-eval")]
    assert claims["pods"][0]["stage"] == "claim-unallocated"
    assert api_client.get(f"/api/v1/snapshots/{later}/search").status_code == 400
