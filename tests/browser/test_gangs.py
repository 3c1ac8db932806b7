"""A stuck gang as a user sees it in Chromium (issue 24): a member's page says the gang is stuck
and why, next to the Pod's own verdict; one click opens the PodGroup's page, which shows how
far placement got and which member breaks it; one more opens that member."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Site, Watch, log_in

pytestmark = pytest.mark.browser

MEMBER = "llm-train/llm-train-workers-0-0-451bf"
BREAKING = "llm-train-workers-0-3-10a7c"


def test_from_a_stuck_member_to_the_member_that_breaks_its_gang(
    page: Page, watch: Watch, site: Site
) -> None:
    log_in(page, site, site.snap(f"pods/{MEMBER}/"))
    verdict = page.locator(".verdict").first
    expect(verdict).to_contain_text("gang-does-not-fit")
    expect(verdict).to_contain_text("only 3 fit at once")
    panel = page.locator("#gang")
    expect(panel).to_contain_text("3 of 4")
    expect(panel.locator(".gang-alone")).to_contain_text("schedulable-now")

    panel.get_by_role("link", name="The PodGroup's page").click()
    expect(page).to_have_url(site.snap("podgroups/llm-train/llm-train/"))
    expect(page.locator(".gang-fit")).to_contain_text("3 of 4")
    rows = page.locator("table.gang-members tbody tr")
    expect(rows).to_have_count(4)
    breaking = page.locator("tr.row-breaking")
    expect(breaking).to_have_count(1)
    expect(breaking).to_contain_text(BREAKING)
    expect(breaking).to_contain_text("does-not-fit")
    expect(page.get_by_role("heading", name="Conditions")).to_be_visible()
    expect(page.locator("main")).to_contain_text("Unschedulable")

    breaking.get_by_role("link", name=re.compile(BREAKING)).click()
    expect(page).to_have_url(site.snap(f"pods/llm-train/{BREAKING}/"))
    expect(page.locator("#gang")).to_contain_text("this Pod")
    assert watch.errors() == []
