"""The reference web client in a real browser: Playwright (PyPI) driving Debian's Chromium (`apt-get install
chromium`, which .ci/run does; no browser is downloaded) against `souk serve` on the test Redis.

Fixtures: ``chromium`` (the browser, one per test module), ``souk_url`` (a real `souk serve`, tests/e2e), and
``open_page`` (a new browser context at a URL of the client; every console error or uncaught exception in it
fails the test at teardown, but for the API refusals a test allows with ``open_page.allow_refusals(status...)``). SOUK_CHROMIUM names another Chromium binary. Without Chromium the tests skip, except
under CI (CI set), where they fail: .ci/run installs it, so a missing browser there is a broken run.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from collections.abc import Callable, Iterator

import pytest

from tests.e2e.conftest import souk_env, souk_url  # noqa: F401  (fixtures shared with the end-to-end tests)

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items) -> None:
    """Marks this folder's tests ``browser`` (a conftest's ``pytestmark`` marks nothing): ``-m browser``."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def chromium_binary() -> str | None:
    return os.environ.get("SOUK_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    binary = chromium_binary()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium binary under CI: .ci/run installs Debian's chromium")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=binary, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


REFUSED = re.compile(r"^Failed to load resource: the server responded with a status of (\d+)")


class PageErrors:
    """What went wrong in a page: console errors and uncaught exceptions, checked at the test's end.

    Chromium logs every API answer with a 4xx status as a console error ("Failed to load resource"), though the
    page shows the refusal as it should: a test that provokes refusals names their statuses with
    ``open_page.allow_refusals(422, ...)``; only answers of the API (not the page's own files under /app) are
    let through then."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.allowed: set[int] = set()

    def console(self, message) -> None:
        if message.type != "error":
            return
        refused = REFUSED.match(message.text)
        url = (message.location or {}).get("url", "")
        if refused and int(refused.group(1)) in self.allowed and "/app/" not in url:
            return
        self.errors.append(f"console.{message.type}: {message.text} ({url})")

    def watch(self, page) -> None:
        page.on("console", self.console)
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))


@pytest.fixture
def open_page(chromium, souk_url) -> Iterator[Callable[..., object]]:  # noqa: F811
    """``open_page(path="/", viewport=DESKTOP)``: a page of a new browser context (its own localStorage, as another
    person's browser) at ``souk_url + path``."""
    contexts = []
    errors = PageErrors()

    def open_(path: str = "/", viewport: dict[str, int] = DESKTOP):
        context = chromium.new_context(viewport=viewport)
        contexts.append(context)
        page = context.new_page()
        errors.watch(page)
        page.goto(souk_url + path)
        return page

    open_.allow_refusals = lambda *statuses: errors.allowed.update(statuses)  # type: ignore[attr-defined]
    open_.errors = errors  # type: ignore[attr-defined]
    yield open_
    for context in contexts:
        context.close()
    assert not errors.errors, "\n".join(errors.errors)
