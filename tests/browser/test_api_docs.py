"""The API's reference reads as a page: a browser opening /api/schema/ gets Swagger UI with
every operation, from dradash's own static files, within the Content-Security-Policy."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import Site, new_context

pytestmark = [pytest.mark.browser, pytest.mark.django_db]


def test_a_browser_opening_the_schema_reads_the_api_docs(browser: Browser, live_server: Any):
    context, watch = new_context(browser, Site(url=live_server.url, snapshot_id=0, username=""))
    try:
        page = context.new_page()
        response = page.goto("/api/schema/")
        assert response is not None and response.status == 200
        assert page.url.endswith("/api/docs/")
        expect(page.locator(".swagger-ui .title")).to_contain_text("dradash API")
        paths = page.locator(".opblock-summary-path")
        expect(paths.filter(has_text="/api/v1/selectors/evaluate")).to_be_visible()
        expect(paths.filter(has_text="/diagnosis").first).to_be_visible()
        assert paths.count() >= 20  # every operation, not an error page
        schema = page.locator(".swagger-ui .info a", has_text="/api/schema/")
        assert schema.get_attribute("href") == "/api/schema/?format=yaml"
        page.wait_for_load_state("networkidle")
        assert watch.errors() == []
    finally:
        context.close()
