"""The journey of issue 6, as a user sees it: log in, find the pending Pod, read its verdict,
try its selector in the playground, and share the view."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import Site, Watch, log_in

pytestmark = pytest.mark.browser

H200 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'
H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"


def mark_page(page: Page) -> None:
    """Set a flag that survives htmx swaps but not a full page load."""
    page.evaluate("window.__noReload = true")


def not_reloaded(page: Page) -> bool:
    return page.evaluate("window.__noReload === true")


def stat(page: Page, label: str) -> int:
    """The number of the playground's stat whose label contains `label`."""
    box = page.locator(".stat").filter(has=page.locator(".stat-l", has_text=label))
    return int(box.locator(".stat-n").inner_text())


def card(page: Page, heading: str) -> Locator:
    """The playground's result card under `heading`."""
    return page.locator("#results section.card", has=page.get_by_role("heading", name=heading))


def test_pending_pod_from_login_to_playground(page: Page, watch: Watch, site: Site) -> None:
    # Log in through the form; the address asked for comes back after it.
    page.goto(site.snap("claims/"))
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    log_in(page, site, page.url)
    expect(page).to_have_url(site.snap("claims/"))
    expect(page.get_by_role("heading", name="Log in")).to_have_count(0)

    # The claims list, filtered to pending claims by htmx: the table changes, the page stays.
    rows = page.locator("#results tbody tr")
    all_claims = rows.count()
    counter = page.locator("#results > p.muted").first
    expect(counter).to_contain_text(f"{all_claims} of {all_claims} claims")
    mark_page(page)
    page.get_by_label("State").select_option("pending")
    expect(page).to_have_url(re.compile(r"[?&]state=pending"))
    expect(counter).not_to_contain_text(f"{all_claims} of")
    pending = rows.count()
    assert 0 < pending < all_claims
    assert not_reloaded(page), "the filter reloaded the whole page instead of swapping #results"
    expect(rows.locator("td:nth-child(3) .badge")).to_have_text(["pending"] * pending)
    assert parse_qs(urlsplit(page.url).query)["state"] == ["pending"]

    # The pending Pod, from its claim's row.
    row = rows.filter(has_text="h200-eval")
    expect(row).to_contain_text("llm-eval/")
    row.get_by_role("link", name="eval-h200").click()
    expect(page).to_have_url(site.snap("pods/llm-eval/eval-h200/"))
    expect(page.locator("h1")).to_contain_text("llm-eval/eval-h200")

    # Its verdict: the stage bar stops at "Claim unallocated", because no device matches.
    verdict = page.locator("section.verdict")
    expect(verdict).to_be_visible()
    current = verdict.locator(".stagebar .stagestep.current")
    expect(current).to_have_text("Claim unallocated")
    expect(current).to_have_class(re.compile(r"\bfailing\b"))
    expect(verdict.locator(".stagebar .stagestep.passed")).to_have_text(["Pod pending"])
    summary = verdict.locator(".verdict-summary")
    expect(summary).to_contain_text("claim-unallocated")
    expect(summary.locator(".badge-muted")).to_have_text("no-matching-devices")
    funnel = verdict.locator(".funnel")
    expect(funnel).to_be_visible()
    expect(funnel.locator("h4")).to_contain_text("cannot allocate")
    empty = funnel.locator(".funnel-steps li.empty")
    expect(empty).to_have_count(1)
    expect(empty).to_contain_text("pass the request's selectors")
    expect(empty.locator(".funnel-n")).to_have_text("0")
    steps = verdict.locator(".nextsteps li")
    expect(steps.first).to_be_visible()
    assert steps.count() >= 1

    # "open in playground" on the request's selector.
    link = page.locator(".requests .cel", has_text="NVIDIA H200").get_by_role(
        "link", name="open in playground"
    )
    expect(link).to_have_count(1)
    link.click()
    expect(page).to_have_url(re.compile(r"/playground/\?"))
    query = parse_qs(urlsplit(page.url).query)
    assert query["expression"] == [H200]
    assert query["class"] == ["gpu.nvidia.com"]
    expression = page.get_by_label("CEL selector expression")
    expect(expression).to_have_value(H200)
    expect(page.get_by_label("Device class (its selectors apply first)")).to_have_value(
        "gpu.nvidia.com"
    )
    results = page.locator("#results")
    expect(results.locator(".stat")).to_have_count(4)
    assert stat(page, "devices match") == 0
    misses = stat(page, "do not match")  # the class's devices, all rejected
    assert misses > 0
    outside = stat(page, "not in class gpu.nvidia.com")
    assert outside > 0
    expect(results.get_by_text("No device matches.")).to_be_visible()
    misses_table = card(page, "Nearest misses").locator("tbody tr")
    expect(misses_table.first).to_be_visible()
    expect(misses_table.first).to_contain_text("gpu.nvidia.com")

    # Type a selector that matches: the counts update as you type, without a page load.
    mark_page(page)
    expression.fill(H100)
    expression.press("End")  # the form listens to keyup
    matched = results.locator(".stat").first.locator(".stat-n")
    expect(matched).not_to_have_text("0")
    h100s = int(matched.inner_text())
    assert 0 < h100s < misses
    assert stat(page, "do not match") == misses - h100s
    assert stat(page, "not in class gpu.nvidia.com") == outside
    assert not_reloaded(page), "typing reloaded the page instead of swapping #results"
    expect(page).to_have_url(re.compile(r"expression=.*H100"))
    matching = card(page, "Matching devices")
    expect(matching.locator("tbody tr")).to_have_count(h100s)
    for text in matching.locator("tbody tr td:nth-child(4)").all_inner_texts():
        assert "NVIDIA H100 80GB HBM3" in text
    assert watch.errors() == []


def test_playground_works_without_javascript(contexts: Any, site: Site) -> None:
    context, watch = contexts(java_script_enabled=False)
    page = context.new_page()
    log_in(page, site, "/playground/")
    expect(page).to_have_url(re.compile(r"/playground/$"))
    expect(page.locator("#results")).to_contain_text("Write an expression above")
    page.get_by_label("CEL selector expression").fill(H100)
    page.get_by_label("Device class (its selectors apply first)").select_option("gpu.nvidia.com")
    page.get_by_role("button", name="Evaluate").click()
    expect(page).to_have_url(re.compile(r"/playground/\?.*expression=.*H100"))
    matched = page.locator("#results .stat").first
    expect(matched).to_contain_text("match")
    assert int(matched.locator(".stat-n").inner_text()) > 0
    expect(page.get_by_role("heading", name="Matching devices")).to_be_visible()

    # The claims filter also submits as a plain form.
    page.goto(site.snap("claims/"))
    page.get_by_label("State").select_option("pending")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]state=pending"))
    expect(page.locator("#results tbody tr").filter(has_text="h200-eval")).to_have_count(1)
    assert watch.errors() == []


def test_share_link_shows_the_verdict_until_revoked(contexts: Any, site: Site) -> None:
    context, watch = contexts()
    page = context.new_page()
    pod = site.snap("pods/llm-eval/eval-h200/")
    log_in(page, site, pod)
    expect(page).to_have_url(pod)

    # "Share this view" on the Pod's page makes a read-only link to this page.
    page.get_by_text("Share this view").click()
    page.get_by_role("button", name="Create read-only link").click()
    field = page.get_by_label("Share link")
    expect(field).to_have_value(re.compile(r"/share/"))
    url = field.input_value()
    assert url.startswith(site.url) and url.endswith("/pods/llm-eval/eval-h200/"), url

    # Someone without an account opens it in a fresh browser and sees the same verdict.
    stranger_context, stranger_watch = contexts()
    stranger = stranger_context.new_page()
    response = stranger.goto(url)
    assert response is not None and response.status == 200
    expect(stranger).to_have_url(url)
    verdict = stranger.locator("section.verdict")
    expect(verdict.locator(".stagestep.current")).to_have_text("Claim unallocated")
    expect(verdict.locator(".verdict-summary .badge-muted")).to_have_text("no-matching-devices")
    expect(verdict.locator(".funnel")).to_be_visible()
    expect(stranger.locator(".sharebar")).to_contain_text("Shared read-only view")
    expect(stranger.get_by_role("button", name=re.compile("Log out"))).to_have_count(0)
    expect(stranger.get_by_text("Share this view")).to_have_count(0)

    # Revoked on the snapshot's share links page, the same address is refused.
    page.get_by_role("link", name="Manage share links").first.click()
    expect(page).to_have_url(site.snap("shares/"))
    links = page.locator("#share-links tbody tr")
    expect(links).to_have_count(1)
    page.once("dialog", lambda dialog: dialog.accept())  # "Revoke share link #…?"
    links.get_by_role("button", name=re.compile("Revoke")).click()
    expect(page.locator("#share-links")).to_contain_text("No active share links")
    response = stranger.reload()
    assert response is not None and response.status == 404
    expect(stranger.get_by_role("heading")).to_have_text(
        "This share link is invalid, expired or revoked"
    )
    expect(stranger.locator("section.verdict")).to_have_count(0)
    assert watch.errors() == []
    # The refused reload logs its 404 to the console; nothing else may.
    assert [e for e in stranger_watch.errors() if "404" not in e] == []
