"""The playground under pressure (issue 27), as a user sees it in Chromium: a class chosen right
after typing stays chosen; a misspelt name gets "did you mean", errors from other drivers' devices
a class to choose; a clause && never evaluated is no error; every attribute of a result row is a
click away. (That no playground cell breaks a word in two: test_issue17's word-break test.)"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Site, Watch, log_in

pytestmark = pytest.mark.browser

H100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
CLASS_LABEL = "Device class (its selectors apply first)"


def stat(page: Page, label: str) -> int:
    box = page.locator(".stat").filter(has=page.locator(".stat-l", has_text=label))
    return int(box.locator(".stat-n").inner_text())


def test_a_class_chosen_right_after_typing_stays_chosen(
    page: Page, watch: Watch, site: Site
) -> None:
    log_in(page, site, "/playground/")
    expression = page.get_by_label("CEL selector expression")
    classes = page.get_by_label(CLASS_LABEL)
    counts = []
    for attempt, device_class in enumerate(["gpu.nvidia.com", "mig.nvidia.com", "gpu.nvidia.com"]):
        # Type, then go straight to the class select: the textarea's change (on blur) and its
        # keyup request are still on their way while the class is chosen.
        expression.fill(H100 + " " * attempt)
        expression.press("End")
        classes.click()
        classes.select_option(device_class)
        page.wait_for_load_state("networkidle")
        page.wait_for_timeout(800)  # the keyup delay (600 ms) has run out; its request too
        page.wait_for_load_state("networkidle")
        expect(classes).to_have_value(device_class)
        expect(page).to_have_url(re.compile(rf"[?&]class={re.escape(device_class)}(&|$)"))
        results = page.locator("#results")
        expect(results).to_contain_text(f"class {device_class} applied first")
        assert stat(page, "error") == 0  # the class keeps other drivers' devices out
        counts.append((stat(page, "devices match"), stat(page, f"not in class {device_class}")))
    # The results are those of the class chosen: whole GPUs, MIG slices, whole GPUs again.
    assert counts[0] == counts[2] != counts[1]
    assert all(matched > 0 and outside > 0 for matched, outside in counts)
    assert watch.errors() == []


def test_choosing_a_snapshot_still_updates_the_classes(
    page: Page, watch: Watch, site: Site
) -> None:
    log_in(page, site, f"/playground/?snapshot={site.snapshot_id}&class=gpu.nvidia.com")
    classes = page.get_by_label(CLASS_LABEL)
    expect(classes).to_have_value("gpu.nvidia.com")
    page.get_by_label("CEL selector expression").fill(H100)
    page.get_by_label("CEL selector expression").press("End")
    page.locator("select[name=snapshot]").select_option(str(site.snapshot_id - 1))
    expect(page).to_have_url(re.compile(rf"[?&]snapshot={site.snapshot_id - 1}(&|$)"))
    page.wait_for_load_state("networkidle")
    expect(page.locator("#results")).to_contain_text(f"snapshot #{site.snapshot_id - 1}")
    # The earlier snapshot's classes are offered, and the class chosen is still chosen.
    expect(classes).to_have_value("gpu.nvidia.com")
    classes.select_option("")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#results")).not_to_contain_text("applied first")
    assert watch.errors() == []


def test_a_typo_and_other_drivers_say_what_to_do(page: Page, watch: Watch, site: Site) -> None:
    log_in(page, site, "/playground/")
    expression = page.get_by_label("CEL selector expression")
    expression.fill("device.attributes['gpu.nvidia.com'].prodctName == 'NVIDIA H100 80GB HBM3'")
    expression.press("End")
    errors = page.locator("#results section.card-bad")
    expect(errors).to_contain_text(
        "No device publishes prodctName in gpu.nvidia.com — did you mean productName?"
    )
    choose = page.locator("#choose-class")
    expect(choose).to_contain_text("devices of gpu.example.com")
    expect(choose).to_contain_text("selects devices first, as in the allocator")
    assert choose.bounding_box()["y"] < errors.bounding_box()["y"]  # type: ignore[index]
    choose.get_by_role("link", name="gpu.nvidia.com").click()
    expect(page).to_have_url(re.compile(r"[?&]class=gpu.nvidia.com(&|$)"))
    expect(page.get_by_label(CLASS_LABEL)).to_have_value("gpu.nvidia.com")
    expect(page.locator("#choose-class")).to_have_count(0)
    expect(errors).to_contain_text("did you mean productName?")  # the typo is still there
    # Correct it: no error, and H100s match.
    expression = page.get_by_label("CEL selector expression")
    expression.fill("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'")
    expression.press("End")
    expect(page.locator("#results section.card-bad")).to_have_count(0)
    assert stat(page, "error") == 0 and stat(page, "devices match") > 0
    # A misspelt domain, guarded: no error, but the page says why nothing matches.
    expression.fill("device.attributes['gpu.nvidia.co'].?productName.orValue('') == 'x'")
    expression.press("End")
    expect(page.locator("#misspelt")).to_contain_text(
        "No device publishes gpu.nvidia.co — did you mean gpu.nvidia.com?"
    )
    assert watch.errors() == []


def test_a_clause_never_evaluated_is_not_an_error(page: Page, watch: Watch, site: Site) -> None:
    expression = (
        "device.driver == 'gpu.nvidia.com'"
        " && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
    )
    log_in(page, site, "/playground/?" + urlencode({"expression": expression, "limit": 100}))
    assert stat(page, "error") == 0
    misses = page.locator(
        "#results section.card", has=page.get_by_role("heading", name="Nearest misses")
    )
    row = misses.locator("tbody tr", has_text="gpu.example.com").first
    expect(row.locator(".badge", has_text="false")).to_have_count(1)
    expect(row.locator(".badge", has_text="not evaluated")).to_have_count(1)
    expect(row.locator(".badge-bad")).to_have_count(0)
    expect(row).not_to_contain_text("no such key")
    assert watch.errors() == []


def test_every_attribute_of_a_row_is_a_click_away(page: Page, watch: Watch, site: Site) -> None:
    log_in(
        page, site, "/playground/?" + urlencode({"expression": "device.driver == 'gpu.nvidia.com'"})
    )
    matching = page.locator(
        "#results section.card", has=page.get_by_role("heading", name="Matching devices")
    )
    row = matching.locator("tbody tr").first
    expect(row.locator(".attr")).to_have_count(4 + 1)  # four key attributes, one capacity
    uuid = row.locator("dt", has_text="uuid")
    expect(uuid).to_be_hidden()
    more = row.get_by_text(re.compile(r"^\+\d+ more$"))
    more.click()
    expect(uuid).to_be_visible()
    expect(row.locator("dt", has_text="resource.kubernetes.io/pciBusID")).to_be_visible()
    row.get_by_role("link", name="the device's page").click()
    expect(page).to_have_url(re.compile(r"/devices/gpu.nvidia.com/[^/]+/gpu-\d+/$"))
    expect(page.get_by_role("heading", name=re.compile("^Attributes"))).to_be_visible()
    assert watch.errors() == []
