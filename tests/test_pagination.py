"""Every list API pages: ``limit`` (up to a maximum) and ``offset`` choose the rows, the total
and the neighbouring pages are in the answer, and the schema says so. The devices API used to
ignore ``limit`` and answer every device at once (36.6 MB for 40,000 devices)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from dradash.pagination import ListPage, Page
from dradash.sharing.services import share_link_create

pytestmark = pytest.mark.django_db

ARRAYS = ["snapshots", "findings", "devices", "pools", "shares"]


def list_url(name: str, snapshot: int) -> str:
    return "/api/v1/snapshots/" if name == "snapshots" else f"/api/v1/snapshots/{snapshot}/{name}"


@pytest.fixture
def listed(demo, user) -> int:
    """The later demo snapshot, with three share links."""
    for _ in range(3):
        share_link_create(snapshot=demo[1], user=user, expires_in=timedelta(days=1))
    return demo[1].pk


@pytest.mark.parametrize("name", ARRAYS)
def test_a_list_answers_the_page_asked_for_and_says_how_many_there_are(
    api_client: Any, listed: int, name: str
) -> None:
    url = list_url(name, listed)
    everything = api_client.get(url)
    assert everything.status_code == 200, everything.content[:300]
    rows, total = everything.json(), int(everything["X-Total-Count"])
    assert len(rows) == total >= 2
    assert "Link" not in everything  # one page holds them all

    first = api_client.get(url, {"limit": 1})
    assert first.json() == rows[:1]
    assert first["X-Total-Count"] == str(total)
    assert 'rel="next"' in first["Link"] and 'rel="prev"' not in first["Link"]
    second = api_client.get(url, {"limit": 1, "offset": 1})
    assert second.json() == rows[1:2]
    assert 'rel="prev"' in second["Link"]
    last = api_client.get(url, {"limit": 1, "offset": total - 1})
    assert last.json() == rows[-1:] and 'rel="next"' not in last["Link"]


@pytest.mark.parametrize("name", [*ARRAYS, "pods", "claims"])
def test_no_list_answers_more_than_its_maximum(
    api_client: Any, listed: int, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """However many rows there are, and whatever limit is asked for (the maximum is 1,000;
    lowered here to 2 so that the demo cluster exceeds it)."""
    for page in (ListPage, Page):
        monkeypatch.setattr(page, "max_limit", 2)
        monkeypatch.setattr(page, "default_limit", 2)
    url = list_url(name, listed)
    for params in ({}, {"limit": 500}):
        answer = api_client.get(url, params).json()
        rows = answer if isinstance(answer, list) else answer["results"]
        assert len(rows) == 2, (name, params)


def test_the_devices_of_a_large_snapshot_come_a_page_at_a_time(
    api_client: Any, listed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ListPage, "default_limit", 10)
    url = list_url("devices", listed)
    first = api_client.get(url)
    assert len(first.json()) == 10
    total = int(first["X-Total-Count"])
    assert total > 10
    seen = []
    offset = 0
    while offset < total:
        seen += api_client.get(url, {"offset": offset}).json()
        offset += 10
    assert len({(d["driver"], d["pool"], d["device"]) for d in seen}) == total


# Arrays of a fixed size: one item per check of the checklist (each with at most 20 objects).
FIXED = {"/api/v1/snapshots/{snapshot_id}/checklist"}


def test_the_schema_documents_the_paging_of_every_list(client: Any, db: None) -> None:
    spec = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    lists = []
    for path, operations in spec["paths"].items():
        get = operations.get("get")
        if get is None or path in FIXED:
            continue
        body = get["responses"]["200"]["content"]["application/json"]["schema"]
        if "$ref" in body:
            body = spec["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
        if body.get("type") != "array" and "results" not in body.get("properties", {}):
            continue
        lists.append(path)
        parameters = {p["name"]: p for p in get.get("parameters", [])}
        assert {"limit", "offset"} <= set(parameters), path
        assert "at most 1000" in parameters["limit"]["description"], path
        if body.get("type") == "array":
            headers = get["responses"]["200"].get("headers", {})
            assert {"X-Total-Count", "Link"} <= set(headers), path
    assert len(lists) == 8, lists
