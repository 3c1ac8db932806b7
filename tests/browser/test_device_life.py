"""A GPU that went bad, as a user sees it in Chromium (issue 25): from the evicted Pod's page,
its timeline names the device, the taint and the eviction with their times; one click opens the
device's page, with the same story, and one more its node."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Site, Watch, log_in

pytestmark = pytest.mark.browser

DEVICE = "gpu.nvidia.com/h100-mig-node-01/gpu-1-mig-3g40gb-9-4"


def test_from_an_evicted_pod_to_its_device_and_node(page: Page, watch: Watch, site: Site) -> None:
    log_in(page, site, site.snap("pods/finetune/llama-eval-p3m7d/"))
    expect(page.locator(".verdict").first).to_contain_text("evicted-by-device-taint")
    story = page.locator("#timeline")
    expect(story).to_contain_text("2026-11-28 10:29:30")
    expect(story).to_contain_text("evicted by the device taint eviction controller")
    expect(story).to_contain_text("DeviceTaintRule xid-79-gpu-1-mig-3g40gb-9-4")

    story.get_by_role("link", name=DEVICE).first.click()
    expect(page).to_have_url(site.snap(f"devices/{DEVICE}/"))
    expect(page.locator("#timeline")).to_contain_text("reported Unhealthy")
    expect(page.locator("table.device-health")).to_contain_text("Unhealthy")

    page.locator("main a.node-link", has_text="h100-mig-node-01").first.click()
    expect(page).to_have_url(site.snap("nodes/h100-mig-node-01/"))
    assert watch.errors() == []
