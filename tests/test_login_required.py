"""Everything needs a login; nothing leaks to an anonymous visitor."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

PAGES = [
    ("home", ()),
    ("upload", ()),
    ("snapshot-detail", (1,)),
    ("snapshot-bundle", (1,)),
    ("claim-list", (1,)),
    ("pod-list", (1,)),
    ("pod-detail", (1, "inference", "vllm-0")),
    ("claim-detail", (1, "gpu-test2", "single-gpu")),
    ("run-detail", (1,)),
    ("class-detail", (1, "gpu.nvidia.com")),
    ("node-detail", (1, "h100-node-01")),
    ("device-detail", (1, "gpu.nvidia.com", "h100-node-01", "gpu-5")),
    ("playground", ()),
]


@pytest.mark.parametrize(("name", "args"), PAGES)
def test_pages_redirect_anonymous_visitors_to_the_login_page(client, demo, name, args) -> None:
    url = reverse(name, args=args)
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={url}"


@pytest.mark.parametrize(
    "url",
    ["/api/v1/snapshots/", "/api/v1/snapshots/1/", "/api/v1/selectors/evaluate"],
)
def test_api_refuses_anonymous_requests(client, demo, url) -> None:
    assert client.get(url).status_code in (401, 403)


def test_the_login_page_itself_is_open_and_logs_in(client, user) -> None:
    assert client.get(reverse("login")).status_code == 200
    response = client.post(
        reverse("login"), {"username": user.username, "password": "pw-for-tests"}
    )
    assert response.status_code == 302
    assert client.get(reverse("home")).status_code == 200


def test_upload_needs_a_csrf_token(user) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(reverse("upload"), {}).status_code == 403


def test_pages_carry_security_headers(client_logged_in) -> None:
    response = client_logged_in.get(reverse("home"))
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def _routes(patterns=None, prefix: str = ""):  # type: ignore[no-untyped-def]
    """Every route of the URLconf as (name, example path), converters filled with samples."""
    from django.urls import URLPattern, URLResolver, get_resolver

    samples = {"int": "1", "str": "x", "slug": "x", "path": "x/y", "uuid": "0" * 32}
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        route = str(entry.pattern)
        for converter, sample in samples.items():
            route = re.sub(rf"<{converter}:\w+>", sample, route)
        route = re.sub(r"<\w+>", "x", route)
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, prefix + route)
        elif isinstance(entry, URLPattern):
            yield entry.name or route, "/" + prefix + route


# The login page; the public API schema and its docs; /metrics, whose credential is its bearer
# token (and which does not exist without one: tests/metrics).
OPEN = {"login", "api-schema", "api-docs", "metrics"}


def test_every_route_needs_a_login(client, demo) -> None:
    """Nothing is reachable without a login but the login page and share links (their token is
    the credential, and an unknown token is a 404)."""
    routes = [(n, p) for n, p in _routes() if n not in OPEN and "^" not in p and "(?P" not in p]
    assert len(routes) > 20
    for name, path in routes:
        response = client.get(path)
        if path.startswith("/api/"):
            assert response.status_code in (401, 403, 405), (name, path, response.status_code)
        else:
            assert response.status_code in (302, 405), (name, path, response.status_code)
            if response.status_code == 302:
                login = (reverse("login"), "/admin/login/")
                assert response["Location"].startswith(login), (name, path)
    assert client.get("/share/not-a-token/snapshots/1/").status_code == 404
