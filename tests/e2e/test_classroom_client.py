"""The classroom benchmark's students are websocket clients (``benchmarks/streamlit_client.Tab``), not browsers:
check that such a client gets what a real browser gets from the same server. For a few pages, the charts, the
exceptions and the error boxes the client counts equal what Chromium draws, the widgets it finds by key include the
page's URL-bound controls, and a button pressed by the client runs the page as a click does."""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from ._server import ROOT
from .test_pages import errors_on, page_url, settle

sys.path.insert(0, str(ROOT / "benchmarks"))

from streamlit_client import Tab  # noqa: E402

#: (page, query, URL-bound controls the client must find on it)
VIEWS = [
    ("sinusoidal", "n=300&d=16", {"n", "d", "base", "lang", "present"}),
    ("rope", "tab=scores&head_dim=32", {"n", "head_dim", "base"}),
    ("claims", "", {"tab"}),
    ("xlnet", "seed=3", {"len", "seed", "order"}),
]


def in_thread(make_coroutine):
    """Run a client coroutine to the end on a thread of its own: Playwright's sync API keeps an event loop running
    on the test's thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make_coroutine())).result()


def client_view(url: str, page: str, query: str):
    async def go():
        tab = Tab(url)
        await tab.connect(page, query)
        try:
            return await tab.open(page, query), dict(tab.widgets)
        finally:
            await tab.close()

    return in_thread(go)


@pytest.mark.parametrize("name,query,controls", VIEWS)
def test_the_websocket_client_sees_what_the_browser_draws(page, app_url, name, query, controls):
    run, widgets = client_view(app_url, name, query)
    assert run.ok, run.failure
    page.goto(page_url(app_url, name, query), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    charts = page.locator('[data-testid="stPlotlyChart"]').count()
    assert run.charts == charts > 0
    assert len(run.exceptions) + len(run.errors) == len(errors_on(page)) == 0
    assert controls <= set(widgets), sorted(widgets)
    assert run.bytes > 10_000  # the charts travel over the websocket: their data is in what the client received


def test_a_button_pressed_by_the_client_runs_the_page_as_a_click_does(app_url):
    """XLNet's Shuffle button moves the seed one on: after the client presses it, the page shows the order of the
    next seed, the same line a browser shows for that seed's link."""

    async def go():
        tab = Tab(app_url)
        await tab.connect("xlnet", "seed=3")
        try:
            first = await tab.open("xlnet", "seed=3")
            shuffle = next(label for label in tab.widgets if "Shuffle" in label)
            pressed = await tab.click(shuffle)
            return first, pressed
        finally:
            await tab.close()

    def order_line(run):
        return next(m for m in run.markdown if "→" in m)

    first, pressed = in_thread(go)
    assert first.ok and pressed.ok
    next_seed, _ = client_view(app_url, "xlnet", "seed=4")
    assert order_line(pressed) != order_line(first)
    assert order_line(pressed) == order_line(next_seed)
