"""Screenshots of the main pages for the README, taken in headless Chromium at 1280 px.

Not collected by a plain `pytest` run (the name does not start with `test_`); run it by path,
with the same PostgreSQL settings as the tests:

    python3 dev.py test tests/browser/screenshots.py -p no:randomly
    .venv/bin/python -m pytest tests/browser/screenshots.py   # DATABASE_URL etc. set

It writes docs/*.png, or into the directory DRADASH_SCREENSHOTS names (to compare first).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Site, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True, reset_sequences=True)]

DOCS = Path(__file__).resolve().parents[2] / "docs"
A100_SELECTOR = (
    "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')\n"
    "&& device.attributes['gpu.nvidia.com'].index == 0"
)


@pytest.fixture
def out() -> Path:
    path = Path(os.environ.get("DRADASH_SCREENSHOTS") or DOCS)
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def user(db: None, django_user_model: Any) -> Any:
    """Named as in `dev.py demo`, since the name shows in the header."""
    from tests.conftest import USER_PASSWORD

    return django_user_model.objects.create_user(username="demo", password=USER_PASSWORD)


def shoot(page: Page, path: Path) -> None:
    page.wait_for_load_state("networkidle")
    page.screenshot(path=path, full_page=True, animations="disabled", caret="hide")
    print(f"wrote {path}")


def test_screenshots(page: Page, contexts: Any, site: Site, out: Path) -> None:
    log_in(page, site, site.snap())
    expect(page.locator("main")).to_contain_text("by stage")
    shoot(page, out / "overview.png")

    page.goto(site.snap("pods/llm-eval/eval-h200/"))
    expect(page.locator(".verdict .stagestep.current")).to_have_text("Claim unallocated")
    shoot(page, out / "pod-chain.png")

    # A claim whose funnel gets far: devices exist and match, but all are taken.
    page.goto(site.snap("claims/?reason=devices-exhausted"))
    page.locator("#results tbody tr a[href*='/claims/']").first.click()
    expect(page.locator(".funnel")).to_be_visible()
    page.locator(".funnel-devices summary").first.click()
    shoot(page, out / "claim-funnel.png")

    query = {"snapshot": site.snapshot_id, "class": "gpu.nvidia.com", "expression": A100_SELECTOR}
    page.goto("/playground/?" + urlencode(query))
    expect(page.locator("#results")).to_contain_text(re.compile(r"errors?"))
    shoot(page, out / "playground.png")

    page.goto(site.snap("devices/?node=h100-mig-node-01"))  # one node's devices, a tainted one
    expect(page.locator("main")).to_contain_text("Pools")
    shoot(page, out / "devices.png")

    page.goto(site.snap("capacity/"))
    page.locator(".capacity-class details summary").first.click()
    shoot(page, out / "capacity.png")

    page.goto(site.snap("podgroups/llm-train/llm-train/"))  # the gang of which 3 of 4 fit
    expect(page.locator("tr.row-breaking")).to_have_count(1)
    shoot(page, out / "gang.png")

    page.goto(site.snap("checklist/"))
    expect(page.locator(".checklist")).to_contain_text("fail")
    shoot(page, out / "checklist.png")

    # The Pod's page as someone without an account sees it through a share link.
    page.goto(site.snap("pods/llm-eval/eval-h200/"))
    page.get_by_text("Share this view").click()
    page.get_by_role("button", name="Create read-only link").click()
    url = page.get_by_label("Share link").input_value()
    stranger, _ = contexts()
    shared = stranger.new_page()
    shared.goto(url)
    expect(shared.locator(".sharebar")).to_be_visible()
    shoot(shared, out / "shared-pod.png")
