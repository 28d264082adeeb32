"""Slides in a real browser at a projector's 1280 x 720: the keys a presenter's clicker sends step the slides, the
step lands in the URL, the slide on screen is the one the URL names, and the slide fits the screen."""

from __future__ import annotations

import functools
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.app._support import figures, open_page

from .test_pages import DRAWN, catalog, errors_on, page_url, screenshot, settle


@functools.cache
def figures_on(page: str, tab: str) -> int:
    """How many figures the tab ``tab`` of ``page`` draws at its defaults (its slides), as the page itself draws it."""
    return len(figures(open_page(page, query={"tab": tab})))


PROJECTOR = {"width": 1280, "height": 720}
SLIDE_CHART = ".st-key-posviz-slide-body [data-testid='stPlotlyChart']"

#: What the slide shows: the URL's slide and tab, the drawn chart's title, the bar's line, and where things sit.
STATE_JS = """
(drawn) => {
  const box = (el) => { if (!el) return null; const b = el.getBoundingClientRect();
                        return {top: b.top, bottom: b.bottom, width: b.width, height: b.height}; };
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
    .filter(c => c.getBoundingClientRect().height > 0);
  const chart = document.querySelector('.st-key-posviz-slide-body [data-testid="stPlotlyChart"]');
  const caption = document.querySelector('.st-key-posviz-slide-caption p');
  return {
    url: location.href,
    visibleCharts: charts.length,
    title: chart?.querySelector('.gtitle')?.textContent || null,
    drawn: !!chart?.querySelector(drawn),
    bar: document.querySelector('.st-key-posviz-slide-title')?.innerText.trim() || null,
    chart: box(chart),
    caption: box(caption),
    captionSize: caption ? parseFloat(getComputedStyle(caption).fontSize) : null,
    intro: box(document.querySelector('[data-testid="stMain"] h1')),
    buttons: box(document.querySelector('.st-key-posviz-slide-previous')),
    header: box(document.querySelector('[data-testid="stHeader"]')),
  };
}
"""


def query_of(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


def wait_for_slide(tab, slide: str, code: str | None, title: str) -> dict:
    """Wait until the URL names ``slide`` of tab ``code`` and that slide's chart, titled ``title``, is drawn."""
    try:
        tab.wait_for_function(
            """([slide, code, title, drawn]) => {
                 const q = new URL(location.href).searchParams;
                 const chart = document.querySelector('.st-key-posviz-slide-body [data-testid="stPlotlyChart"]');
                 return q.get('slide') === slide && q.get('tab') === code && chart &&
                        chart.querySelector('.gtitle')?.textContent === title && chart.querySelector(drawn);
               }""",
            arg=[slide, code, title, DRAWN],
            timeout=60_000,
        )
    except Exception:
        pytest.fail(f"slide {slide} of {code} ({title!r}) did not appear: {tab.evaluate(STATE_JS, DRAWN)}")
    settle(tab, min_charts=1)
    return tab.evaluate(STATE_JS, DRAWN)


def assert_fits(state: dict, lang: str) -> None:
    """One chart on screen, drawn, and the slide (bar, chart, caption) within the 720 pixels of the projector."""
    assert state["visibleCharts"] == 1, state
    assert state["drawn"], state
    assert state["intro"] is None or state["intro"]["height"] == 0, "the page's title and text are hidden"
    assert state["chart"]["height"] >= 400 and state["chart"]["width"] >= 700, state
    assert state["caption"]["bottom"] <= PROJECTOR["height"], f"the caption runs off the screen ({lang}): {state}"
    assert state["captionSize"] >= 20, state
    # the bar's buttons sit below Streamlit's header, which would otherwise cover them
    assert state["header"] is None or state["buttons"]["top"] >= state["header"]["bottom"], state


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_clickers_keys_step_the_slides_and_the_url(page, app_url, screenshot_dir, lang):
    words = catalog(lang)
    page.set_viewport_size(PROJECTOR)
    page.goto(page_url(app_url, "sinusoidal", f"slide=1&present=true&lang={lang}"), wait_until="domcontentloaded")
    steps = [
        (None, "1", None, words["sinusoidal.table"]),
        ("ArrowRight", "2", None, words["figure.similarity"]),
        ("PageDown", "1", "distance", words["sinusoidal.offset"]),  # past the tab's last figure: the next tab
        ("ArrowRight", "2", "distance", words["sinusoidal.spread"]),
        ("PageUp", "1", "distance", words["sinusoidal.offset"]),
        ("ArrowLeft", "2", None, words["figure.similarity"]),  # back past the tab's first: the tab before, last
        ("PageUp", "1", None, words["sinusoidal.table"]),
    ]
    for key, slide, code, title in steps:
        if key:
            page.keyboard.press(key)
        state = wait_for_slide(page, slide, code, title)
        assert_fits(state, lang)
        tab = words[f"sinusoidal.tab.{code or 'table'}"]
        assert state["bar"] == words["slides.position"].replace("**", "").format(
            page=words["page.sinusoidal"], tab=tab, k=slide, n=figures_on("sinusoidal", code or "table")
        )
        assert query_of(state["url"])["present"] == "true" and query_of(state["url"]).get("lang", "en") == lang
        if key in (None, "ArrowRight", "PageDown"):
            screenshot(page, screenshot_dir / f"slides-sinusoidal-{code or 'table'}-{slide}-{lang}.png")
    assert errors_on(page) == []
    assert page.external_requests == []


def test_the_slide_buttons_step_too_and_a_link_opens_one_slide(page, app_url):
    words = catalog("en")
    page.set_viewport_size(PROJECTOR)
    page.goto(page_url(app_url, "sinusoidal", "tab=distance&slide=2"), wait_until="domcontentloaded")
    wait_for_slide(page, "2", "distance", words["sinusoidal.spread"])
    page.get_by_role("button", name=words["slides.next"]).click()
    wait_for_slide(page, "1", "shift", words["sinusoidal.shift"].format(k=1))
    page.get_by_role("button", name=words["slides.previous"]).click()
    wait_for_slide(page, "2", "distance", words["sinusoidal.spread"])


def test_the_switch_starts_the_slides_at_the_open_tab_and_leaves_them(page, app_url, screenshot_dir):
    words = catalog("en")
    page.set_viewport_size(PROJECTOR)
    page.goto(page_url(app_url, "sinusoidal", "tab=distance"), wait_until="domcontentloaded")
    settle(page, min_charts=2)
    page.get_by_text(words["slides.toggle"], exact=True).click()
    state = wait_for_slide(page, "1", "distance", words["sinusoidal.offset"])
    assert query_of(state["url"]).get("present") == "true"
    assert_fits(state, "en")
    page.get_by_text(words["slides.toggle"], exact=True).click()
    page.wait_for_function("() => !new URL(location.href).searchParams.has('slide')", timeout=60_000)
    settle(page, min_charts=2)
    assert page.locator("h1").first.is_visible()
    screenshot(page, screenshot_dir / "slides-left-en.png")


def test_behind_the_proxy_the_keys_step_the_slides_and_the_handout_links_back_through_it(page, tmp_path):
    """``deploy/serve.sh`` puts nginx in front: the keys' component has nothing to fetch through it, and the
    handout's link is the address the browser used (the proxy's), not the app process's."""
    from tests.app.test_handout import Handout

    from ._deploy import serve
    from .test_handout import download_handout

    words = catalog("en")
    page.set_viewport_size(PROJECTOR)
    with serve(1) as served:
        page.goto(f"{served.url}/sinusoidal?slide=1", wait_until="domcontentloaded")
        wait_for_slide(page, "1", None, words["sinusoidal.table"])
        page.keyboard.press("PageDown")
        wait_for_slide(page, "2", None, words["figure.similarity"])
        page.keyboard.press("PageDown")
        wait_for_slide(page, "1", "distance", words["sinusoidal.offset"])
        page.get_by_text(words["slides.toggle"], exact=True).click()  # leave the slides: the page and its button
        page.wait_for_function("() => !new URL(location.href).searchParams.has('slide')", timeout=60_000)
        settle(page, min_charts=2)
        (link,) = Handout(download_handout(page, "en", tmp_path).read_text(encoding="utf-8")).links
        assert link.startswith(f"{served.url}/sinusoidal?")
        assert query_of(link)["tab"] == "distance"
    assert page.external_requests == []
