"""End-to-end fixtures: a real Streamlit server on a free loopback port and Debian's headless Chromium.

No browser is ever downloaded: Playwright drives ``/usr/bin/chromium`` (or ``$POSVIZ_CHROMIUM``). A missing
browser fails the run loudly, locally as in CI, because the project forbids skipped tests.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ._server import CHROMIUM_ARGS, MISSING_CHROMIUM, SCREENSHOTS, VIEWPORT, streamlit_server


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """The base URL of one posviz server shared by the whole e2e session."""
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = os.environ.get("POSVIZ_CHROMIUM", "/usr/bin/chromium")
    if not os.path.exists(path):
        where = " (CI)" if os.environ.get("CI") else ""
        pytest.fail(
            f"{MISSING_CHROMIUM} -- no browser at {path}{where}; set POSVIZ_CHROMIUM to use another one", pytrace=False
        )
    return path


@pytest.fixture(scope="session")
def driver() -> Iterator:
    """Playwright, started once for the session: its sync API runs an event loop that a second start inside the same
    session would refuse, so every test that needs a browser of its own launches it from here."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(chromium_path, driver) -> Iterator:
    """One headless Chromium for the session, as a persistent context on a fresh temporary profile.

    A persistent profile keeps the HTTP cache and V8's code cache between tabs, so the 4.7 MB plotly bundle is
    compiled once instead of on every page load (an in-memory context re-parses it each time, ~5 s a page on a
    busy machine). Each test still gets a tab of its own, hence a Streamlit session of its own.
    """
    with tempfile.TemporaryDirectory(prefix="posviz-e2e-chromium-") as profile:
        context = driver.chromium.launch_persistent_context(
            profile,
            executable_path=chromium_path,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport=VIEWPORT,
            locale="en-US",
            timezone_id="UTC",
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser):
    """A fresh English-locale tab (the app picks its default language from the browser locale).

    Every request the page makes is recorded in ``page.external_requests`` when it leaves loopback: the app
    must not fetch anything from outside.
    """
    tab = browser.new_page()
    tab.set_default_timeout(30_000)
    tab.external_requests = []

    def record(request):
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in ("127.0.0.1", "localhost"):
            tab.external_requests.append(request.url)

    tab.on("request", record)
    try:
        yield tab
    finally:
        tab.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
