"""Browser tests: the demo cluster served by pytest-django's live server, driven in headless
Chromium (Debian's `chromium`) through Playwright's sync API.

Chromium comes from the system, never from `playwright install`: `python3 dev.py test` installs
the Debian package when it is missing. Without it these tests fail; they are not skipped.
A failing test leaves a screenshot of each page it had open (the path is printed with the
failure); set DRADASH_BROWSER_ARTIFACTS to a directory to keep them somewhere else.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, sync_playwright

from tests.conftest import USER_PASSWORD

CHROMIUM = "/usr/bin/chromium"
NO_CHROMIUM = (
    "The browser tests need Chromium, and there is none at {path}. Install Debian's package "
    "(`sudo apt-get install -y chromium`; `python3 dev.py test` does it when run as root)."
)
WIDTH, HEIGHT = 1280, 900
REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


def chromium_path() -> str:
    return shutil.which("chromium") or CHROMIUM


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember each phase's report, so fixtures can tell whether the test failed."""
    report = yield
    item.stash.setdefault(REPORTS, {})[report.when] = report
    return report


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the session; each test gets its own context."""
    path = chromium_path()
    if not os.access(path, os.X_OK):
        pytest.fail(NO_CHROMIUM.format(path=path), pytrace=False)
    # The sync API runs an asyncio event loop in this thread, and Django refuses ORM calls from
    # a thread with a running loop; the tests' own ORM calls (fixtures, flush) are synchronous.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            args = ["--no-sandbox"] if os.geteuid() == 0 else []
            chromium = playwright.chromium.launch(executable_path=path, args=args)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@dataclass
class Site:
    """The live server with the demo cluster loaded and a user who can log in."""

    url: str
    snapshot_id: int  # the demo's later snapshot, the one the playground opens by default
    username: str
    password: str = USER_PASSWORD

    def __call__(self, path: str) -> str:
        return self.url + path

    def snap(self, path: str = "") -> str:
        return self.url + f"/snapshots/{self.snapshot_id}/{path}"


@pytest.fixture
def site(live_server: Any, demo: list[Any], user: Any) -> Site:
    return Site(url=live_server.url, snapshot_id=demo[-1].pk, username=user.get_username())


@dataclass
class Watch:
    """Console errors, uncaught exceptions and CSP violations of the pages of one context."""

    messages: list[str] = field(default_factory=list)

    def errors(self) -> list[str]:
        return list(self.messages)


# Chromium logs CSP violations as console errors; this makes them explicit (and catches any
# whose console message is suppressed), reported by the page itself.
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (e) => {
  console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
});
"""


def new_context(browser: Browser, site: Site, **options: Any) -> tuple[BrowserContext, Watch]:
    options = {"viewport": {"width": WIDTH, "height": HEIGHT}, **options}
    context = browser.new_context(base_url=site.url, **options)
    context.set_default_timeout(10_000)
    watch = Watch()
    context.add_init_script(CSP_LISTENER)

    def on_page(page: Page) -> None:
        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error":
                watch.messages.append(f"{page.url}: console error: {message.text}")

        page.on("console", on_console)
        page.on("pageerror", lambda exc: watch.messages.append(f"{page.url}: uncaught {exc}"))

    context.on("page", on_page)
    return context, watch


@pytest.fixture
def contexts(
    browser: Browser, site: Site, request: pytest.FixtureRequest, tmp_path_factory: Any
) -> Iterator[Any]:
    """Make browser contexts; on failure, screenshot their pages; close them all after."""
    made: list[BrowserContext] = []

    def make(**options: Any) -> tuple[BrowserContext, Watch]:
        context, watch = new_context(browser, site, **options)
        made.append(context)
        return context, watch

    yield make
    reports = request.node.stash.get(REPORTS, {})
    if any(r.failed for r in reports.values()):
        out = Path(
            os.environ.get("DRADASH_BROWSER_ARTIFACTS")
            or tmp_path_factory.getbasetemp() / "browser-failures"
        )
        out.mkdir(parents=True, exist_ok=True)
        stem = re.sub(r"[^\w.-]+", "_", request.node.name)
        for c, context in enumerate(made):
            for p, page in enumerate(context.pages):
                path = out / f"{stem}-{c}-{p}.png"
                try:
                    page.screenshot(path=path, full_page=True)
                    print(f"screenshot of {page.url} at failure: {path}")
                except Exception as exc:  # a crashed page must not hide the real failure
                    print(f"no screenshot of {page.url}: {exc}")
    for context in made:
        context.close()


@pytest.fixture
def context(contexts: Any) -> tuple[BrowserContext, Watch]:
    return contexts()


@pytest.fixture
def page(context: tuple[BrowserContext, Watch]) -> Page:
    return context[0].new_page()


@pytest.fixture
def watch(context: tuple[BrowserContext, Watch]) -> Watch:
    return context[1]


def log_in(page: Page, site: Site, path: str = "/") -> None:
    """Log in through the login form, starting from `path` (which redirects to it)."""
    page.goto(path)
    page.get_by_label("Username").fill(site.username)
    page.get_by_label("Password").fill(site.password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
