"""Every main page loads in Chromium without console errors, uncaught exceptions or
Content-Security-Policy violations, including after htmx swaps."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Site, Watch, log_in

pytestmark = pytest.mark.browser

SELECTOR = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"


def test_main_pages_have_no_console_errors_or_csp_violations(
    page: Page, watch: Watch, site: Site
) -> None:
    log_in(page, site)
    pages = {
        "clusters": ("/", "Clusters and snapshots"),
        "overview": (site.snap(), "by stage"),
        "claims list": (site.snap("claims/"), "claims"),
        "pods list": (site.snap("pods/"), "Pods using DRA"),
        "pod page": (site.snap("pods/llm-eval/eval-h200/"), "no-matching-devices"),
        "claim page": (site.snap("claims/llm-eval/h200-eval/"), "no-matching-devices"),
        "class page": (site.snap("classes/gpu.nvidia.com/"), "gpu.nvidia.com"),
        "devices": (site.snap("devices/"), "Pools"),
        "capacity": (site.snap("capacity/"), "Capacity by device class"),
        "checklist": (site.snap("checklist/"), "Production acceptance checklist"),
        "playground": (
            f"/playground/?snapshot={site.snapshot_id}&expression={quote(SELECTOR)}",
            "Matching devices",
        ),
    }
    for name, (url, text) in pages.items():
        response = page.goto(url)
        assert response is not None and response.status == 200, f"{name}: {url}"
        csp = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp, f"{name} has no Content-Security-Policy"
        expect(page.locator("main"), f"{name}: {url}").to_contain_text(text)
        page.wait_for_load_state("networkidle")  # late errors (htmx, favicon) arrive too

    # htmx swaps: the claims filter and the playground as you type.
    page.goto(site.snap("claims/"))
    page.get_by_label("State").select_option("pending")
    expect(page).to_have_url(re.compile(r"state=pending"))
    page.goto(site.snap("devices/"))
    page.get_by_label("State").select_option("allocated")
    expect(page).to_have_url(re.compile(r"state=allocated"))
    expect(page.locator("#results")).to_contain_text("allocated")
    page.goto("/playground/")
    page.get_by_label("CEL selector expression").fill("device.driver == ")
    page.get_by_label("CEL selector expression").press("End")
    expect(page.locator("#results")).to_contain_text("does not compile")
    page.wait_for_load_state("networkidle")

    assert watch.errors() == []
