"""The Pods and claims lists (issue 17): worst stage first, any column sorted on click (the
header links, with htmx and without), the same filters and order in their APIs; the claim that
running Pods share is healthy."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

from dradash.dra.diagnosis import STAGES

pytestmark = pytest.mark.django_db


def get(client: Any, name: str, snapshot: Any, **params: str) -> str:
    response = client.get(reverse(name, args=[snapshot.pk]), params)
    assert response.status_code == 200, response.content[:300]
    return response.content.decode().replace("<wbr>", "")


ROW = re.compile(
    r'<span class="muted">([^<]+)/</span>([^<]+)</a>.*?<span class="badge[^"]*">([a-z-]+)</span>',
    re.S,
)


def rows(html: str) -> list[tuple[str, str]]:
    """(namespace/name, stage) of each row of the list, in order."""
    results = html[html.index('id="results"') :]
    return [(f"{ns}/{name}", stage) for ns, name, stage in ROW.findall(results)]


def test_the_pods_list_is_worst_stage_first(client_logged_in, demo) -> None:
    stages = [stage for _, stage in rows(get(client_logged_in, "pod-list", demo[-1]))]
    assert stages == sorted(stages, key=STAGES.index)
    assert stages[0] == "pod-pending" and stages[-1] == "healthy"


@pytest.mark.parametrize("name", ["pod-list", "claim-list"])
def test_every_sortable_column_header_is_a_link_that_sorts(client_logged_in, demo, name) -> None:
    html = get(client_logged_in, name, demo[-1], namespace="gpu-test2")
    head = html[html.index("<thead>") : html.index("</thead>")]
    sorts = re.findall(r'href="[^"?]*\?([^"]*)"', head)
    assert len(sorts) >= 4
    for query in sorts:
        assert "namespace=gpu-test2" in query.replace("&amp;", "&")  # the filters stay
        assert re.search(r"sort=-?[a-z_]+", query)
    # Without ?sort=, the list is worst stage first, and the Stage header says so.
    assert re.search(r'<th aria-sort="ascending"><a class="sort"[^>]*>Stage', head)


def test_sorting_by_name_then_again_reverses(client_logged_in, demo) -> None:
    later = demo[-1]
    ascending = rows(get(client_logged_in, "pod-list", later, sort="namespace"))
    assert [r for r, _ in ascending] == sorted(r for r, _ in ascending)
    html = get(client_logged_in, "pod-list", later, sort="namespace")
    head = html[html.index("<thead>") : html.index("</thead>")]
    assert 'aria-sort="ascending"' in head and "sort=-namespace" in head  # next click: reverse
    descending = rows(get(client_logged_in, "pod-list", later, sort="-namespace"))
    assert descending == list(reversed(ascending))


def test_claims_sort_by_devices_and_stage(client_logged_in, demo) -> None:
    later = demo[-1]
    worst_last = rows(get(client_logged_in, "claim-list", later, sort="-stage"))
    stages = [s for _, s in worst_last]
    assert stages == sorted(stages, key=STAGES.index, reverse=True)


def test_the_sort_survives_paging_and_filtering(client_logged_in, demo) -> None:
    html = get(client_logged_in, "pod-list", demo[-1], sort="-phase", stage="healthy")
    assert '<input type="hidden" name="sort" id="sort-input" value="-phase">' in html


def test_an_htmx_sort_swaps_the_results_and_updates_the_forms_sort(client_logged_in, demo) -> None:
    response = client_logged_in.get(
        reverse("pod-list", args=[demo[-1].pk]),
        {"sort": "node"},
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert "<html" not in html
    assert 'id="sort-input" value="node" hx-swap-oob="true"' in html


def test_a_bad_sort_is_a_bad_request(client_logged_in, demo) -> None:
    response = client_logged_in.get(reverse("pod-list", args=[demo[-1].pk]), {"sort": "secret"})
    assert response.status_code == 400


def test_a_claim_that_running_pods_share_is_healthy(client_logged_in, demo) -> None:
    """gpu-test2/single-gpu is reserved for and used by two running Pods; the third Pod, which
    cannot go to its node, is stuck on its own account."""
    later = demo[-1]
    listed = dict(rows(get(client_logged_in, "claim-list", later, namespace="gpu-test2")))
    assert listed["gpu-test2/single-gpu"] == "healthy"
    html = get_detail(client_logged_in, "claim-detail", later.pk, "gpu-test2", "single-gpu")
    assert "is allocated and in use by Pods pod0, pod1" in html
    assert "Pod pod2 cannot use it yet: allocated-not-bound (node-conflict)" in html
    pods = dict(rows(get(client_logged_in, "pod-list", later, namespace="gpu-test2")))
    assert pods["gpu-test2/pod2"] == "allocated-not-bound"


def get_detail(client: Any, name: str, *args: Any) -> str:
    response = client.get(reverse(name, args=args))
    assert response.status_code == 200
    return re.sub(r"<[^>]+>", "", response.content.decode())  # the text: names are links


# --- the lists' APIs ---------------------------------------------------------------------------


def test_the_pods_api_filters_and_sorts_as_the_page(api_client, demo) -> None:
    later = demo[-1].pk
    url = f"/api/v1/snapshots/{later}/pods"
    page = api_client.get(url).json()
    assert page["count"] == 36
    body = page["results"]
    assert [p["stage"] for p in body] == sorted((p["stage"] for p in body), key=STAGES.index)
    assert {"namespace", "name", "stage", "reason", "summary", "phase", "node", "owner"} <= set(
        body[0]
    )
    stuck = api_client.get(url, {"stage": "claim-unallocated", "sort": "-namespace"}).json()
    stuck = stuck["results"]
    assert [p["namespace"] for p in stuck] == sorted((p["namespace"] for p in stuck), reverse=True)
    assert {p["stage"] for p in stuck} == {"claim-unallocated"}
    assert api_client.get(url, {"limit": 5, "offset": 5}).json()["results"] == body[5:10]
    assert api_client.get(url, {"sort": "nope"}).status_code == 400


def test_the_claims_api_takes_the_search_filter(api_client, demo) -> None:
    later = demo[-1].pk
    url = f"/api/v1/snapshots/{later}/claims"
    body = api_client.get(url, {"q": "gpu-test2/single"}).json()["results"]
    assert [(c["namespace"], c["name"], c["stage"]) for c in body] == [
        ("gpu-test2", "single-gpu", "healthy")
    ]
    assert body[0]["pods"] == ["pod0", "pod1", "pod2"]
