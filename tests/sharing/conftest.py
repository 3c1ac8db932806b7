"""Fixtures for share links: a link (and its token) to the first demo snapshot."""

from __future__ import annotations

import json
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any

import pytest

from dradash.sharing.services import share_link_create
from tests.stored import import_analysed


def tiny_bundle(cluster: str = "tiny") -> bytes:
    """A bundle with one namespace and one Pod: a snapshot that loads fast."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "team", "uid": "u1"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                    "status": {"phase": "Running"},
                },
                {
                    "apiVersion": "dradash.io/v1",
                    "kind": "SnapshotInfo",
                    "metadata": {"name": "info"},
                    "spec": {"cluster": cluster},
                },
            ],
        }
    ).encode()


@pytest.fixture
def tiny(db: None) -> list[Any]:
    """Two small snapshots of one cluster (for tests that need no demo content)."""
    return [import_analysed(files=[("tiny.json", tiny_bundle())]) for _ in range(2)]


@pytest.fixture
def tiny_shared(tiny: list[Any], user: Any) -> tuple[Any, str]:
    """(link, token) for tiny[0], made by `user`, valid for 7 days."""
    return share_link_create(snapshot=tiny[0], user=user, expires_in=timedelta(days=7))


@pytest.fixture
def shared(demo: list[Any], user: Any) -> tuple[Any, str]:
    """(link, token) for demo[0], made by `user`, valid for 7 days."""
    return share_link_create(snapshot=demo[0], user=user, expires_in=timedelta(days=7))


def share_url(token: str, path: str = "") -> str:
    """/share/<token>/<path>; path relative (no leading slash)."""
    return f"/share/{token}/{path.lstrip('/')}"


class _Links(HTMLParser):
    ATTRS = {"href", "src", "action", "hx-get", "hx-post", "hx-put", "hx-delete", "hx-patch"}

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in self.ATTRS and value is not None:
                self.urls.append((tag, name, value))


def page_urls(html: str) -> list[tuple[str, str, str]]:
    """(tag, attribute, url) of every link, form action, script/style source and htmx request
    on a page."""
    parser = _Links()
    parser.feed(html)
    return parser.urls
