"""Every page of posviz in a real browser, in English and in Chinese: it runs without an error, its title comes
from the catalog, its charts are drawn, and a screenshot of it lands in ``test-artifacts/screenshots/``.
Plus the two things only a browser proves: URL-bound controls, and the language switch in the sidebar."""

from __future__ import annotations

import json
import math
from functools import cache
from urllib.parse import parse_qs, urlsplit

import pytest

from posviz.pages import PAGES as PAGE_TABLE

from ._server import ROOT, streamlit_server

PAGES = [page.key for page in PAGE_TABLE]
FAMILY_PAGES = ["sinusoidal", "learned", "rope", "alibi", "relative", "xlnet"]  # the ones Home links as families
EMPTY_PAGES = ("inspect", "lab")  # no chart until a model is loaded or trained
LANGS = ["en", "zh"]
#: A later tab to open on pages with tabs: (index of the tab, its code in the URL).
SECOND_TAB = {
    "sinusoidal": (2, "shift"),
    "learned": (3, "probe"),
    "rope": (5, "extension"),
    "alibi": (4, "long"),
    "relative": (1, "t5"),
    "compare": (2, "long"),
}

# What plotly draws: go.Heatmap an <image> in .heatmaplayer, go.Image an <image> in .imagelayer,
# go.Scatter a path per trace, go.Bar a .point per bar.
DRAWN = ".heatmaplayer image, .imagelayer image, .scatterlayer .trace path, .barlayer .point"

# True once Streamlit has finished the script and the page has stopped changing: the script is not running,
# the socket is connected, there is a title, at least ``minCharts`` charts each with drawn content and at least
# ``minLinks`` page links, and the same fingerprint of the page was seen on ``stablePolls`` polls in a row.
SETTLED_JS = """
(args) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.dataset.testScriptState !== 'notRunning' || app.dataset.testConnectionState !== 'CONNECTED') {
    window.__posvizFingerprint = null; return false;
  }
  const h1 = document.querySelector('[data-testid="stMain"] h1');
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  const links = document.querySelectorAll('[data-testid="stPageLink"] a').length;
  const errors = document.querySelectorAll('[data-testid="stException"], [data-testid="stAlertContentError"]');
  const ready = h1 && (errors.length > 0 || (
    charts.length >= args.minCharts && links >= args.minLinks && charts.every(c => c.querySelector(args.drawn))));
  if (!ready) { window.__posvizFingerprint = null; return false; }
  const fingerprint = [location.href, h1.innerText, charts.length, links, errors.length,
                       document.querySelectorAll('[data-testid="stElementContainer"]').length].join('|');
  if (window.__posvizFingerprint !== fingerprint) {
    window.__posvizFingerprint = fingerprint; window.__posvizStable = 0; return false;
  }
  window.__posvizStable += 1;
  return window.__posvizStable >= args.stablePolls;
}
"""

DIAGNOSE_JS = """
() => ({
  url: location.href,
  scriptState: document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState,
  connection: document.querySelector('[data-testid="stApp"]')?.dataset.testConnectionState,
  titles: [...document.querySelectorAll('h1')].map(h => h.innerText),
  charts: document.querySelectorAll('[data-testid="stPlotlyChart"]').length,
  errors: [...document.querySelectorAll('[data-testid="stException"], [data-testid="stAlertContentError"]')]
          .map(e => e.innerText.slice(0, 500)),
})
"""


@cache
def catalog(lang: str) -> dict[str, str]:
    merged: dict[str, str] = {}
    for path in sorted((ROOT / "assets" / "i18n" / lang).glob("*.json")):
        merged.update(json.loads(path.read_text(encoding="utf-8")))
    return merged


def page_url(base: str, name: str, query: str = "") -> str:
    path = "/" if name == "home" else f"/{name}"
    return f"{base}{path}{'?' + query if query else ''}"


def settle(tab, *, min_charts: int = 0, min_links: int = 0, timeout: float = 90_000) -> None:
    """Wait until the app has finished its run and the DOM has stopped changing; fail with what is on screen."""
    args = {"minCharts": min_charts, "minLinks": min_links, "drawn": DRAWN, "stablePolls": 3}
    try:
        tab.wait_for_function(SETTLED_JS, arg=args, polling=150, timeout=timeout)
        tab.wait_for_load_state("networkidle", timeout=timeout)
        tab.wait_for_function(SETTLED_JS, arg={**args, "stablePolls": 1}, polling=150, timeout=timeout)
    except Exception as exc:  # playwright's TimeoutError: say what the page shows instead
        pytest.fail(f"the page did not settle ({type(exc).__name__}); it shows {tab.evaluate(DIAGNOSE_JS)}")


def screenshot(tab, path) -> None:
    """A screenshot of the whole page. Streamlit scrolls inside ``stMain``, not the document, so Playwright's
    ``full_page`` alone stops at the viewport: grow the viewport to the content's height for the shot."""
    size = tab.viewport_size
    height = tab.evaluate(
        """() => { const main = document.querySelector('[data-testid="stMain"]');
                   const side = document.querySelector('[data-testid="stSidebarContent"]');
                   return Math.max(main ? main.scrollHeight : 0, side ? side.scrollHeight : 0); }"""
    )
    tall = min(max(size["height"], int(height)), 12_000)
    try:
        if tall > size["height"]:
            tab.set_viewport_size({"width": size["width"], "height": tall})
            tab.wait_for_function(
                """(h) => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() =>
                     done(document.querySelector('[data-testid="stMain"]').clientHeight >= h - 2))))""",
                arg=min(tall, int(height)),
                timeout=10_000,
            )
        tab.screenshot(path=str(path), full_page=True)
    finally:
        tab.set_viewport_size(size)


def errors_on(tab) -> list[str]:
    return tab.locator('[data-testid="stException"], [data-testid="stAlertContentError"]').all_inner_texts()


def title_of(tab) -> str:
    return tab.locator('[data-testid="stMain"] h1').first.inner_text().strip()


def drawn_charts(tab) -> list[dict]:
    """Per plotly graph div: its trace types, how many drawn marks it has, and its on-screen size."""
    return tab.evaluate(
        """(drawn) => [...document.querySelectorAll('.js-plotly-plot')].map(g => {
             const box = g.getBoundingClientRect();
             return {types: (g._fullData || []).map(t => t.type), marks: g.querySelectorAll(drawn).length,
                     width: Math.round(box.width), height: Math.round(box.height)};
           })""",
        DRAWN,
    )


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", PAGES)
def test_page(page, app_url, screenshot_dir, name, lang):
    page.goto(page_url(app_url, name, "lang=zh" if lang == "zh" else ""), wait_until="domcontentloaded")
    settle(page, min_charts=0 if name in EMPTY_PAGES else 1, min_links=6 if name == "home" else 0)
    screenshot(page, screenshot_dir / f"{name}-{lang}.png")

    assert errors_on(page) == [], f"{name} ({lang}) shows an error"
    assert title_of(page) == catalog(lang)[f"page.{name}"]

    if name == "home":
        hrefs = page.eval_on_selector_all('[data-testid="stPageLink"] a', "as => as.map(a => a.href)")
        linked = {urlsplit(href).path.strip("/") for href in hrefs}
        assert set(FAMILY_PAGES) <= linked, f"home links to {sorted(linked)}"
    if name not in EMPTY_PAGES:
        charts = drawn_charts(page)
        visible = [c for c in charts if c["marks"] > 0 and c["width"] > 200 and c["height"] > 200]
        assert visible, f"no plotly chart with drawn content on {name} ({lang}): {charts}"

    if name in SECOND_TAB:  # only the open tab runs: a click reruns the page, draws that tab and names it in the URL
        index, code = SECOND_TAB[name]
        page.get_by_role("tab").nth(index).click()
        try:
            page.wait_for_function(
                """([drawn, code]) => new URL(location.href).searchParams.get('tab') === code &&
                     [...document.querySelectorAll('.js-plotly-plot')].some(g => {
                       const box = g.getBoundingClientRect();
                       return g.querySelector(drawn) && box.width > 200 && box.height > 200; })""",
                arg=[DRAWN, code],
                timeout=30_000,
            )
        except Exception:
            pytest.fail(f"the {code} tab did not draw: {page.evaluate(DIAGNOSE_JS)} {drawn_charts(page)}")
        settle(page, min_charts=1)
        screenshot(page, screenshot_dir / f"{name}-{code}-{lang}.png")
        assert errors_on(page) == []

    assert page.external_requests == [], "the app fetched from outside loopback"


def test_url_bound_slider_sets_the_table_size(page, app_url):
    """``?n=64`` reaches the "n" number box, and the table drawn in the browser has 64 rows."""
    page.goto(page_url(app_url, "sinusoidal", "n=64"), wait_until="domcontentloaded")
    settle(page, min_charts=2)

    assert errors_on(page) == []
    shape = page.evaluate(
        """() => { const g = document.querySelectorAll('.js-plotly-plot')[0];
                   return {rows: g._fullData[0].z.length, cols: g._fullData[0].z[0].length, meta: g.layout.meta}; }"""
    )
    assert shape["rows"] == 64, shape
    assert shape["meta"]["shape"][0] == 64, shape
    assert page.locator('[data-testid="stNumberInput"] input').first.input_value() == "64"
    assert parse_qs(urlsplit(page.url).query).get("n") == ["64"]


def test_url_parameters_are_codes_not_labels(page, app_url):
    """A link names options by code, whatever its language: ``layout=halves`` in a Chinese page selects 分半 and
    draws the halves layout; ``base=100000`` sets the base slider; both stay in the URL as given."""
    page.goto(page_url(app_url, "sinusoidal", "lang=zh&layout=halves&base=100000"), wait_until="domcontentloaded")
    settle(page, min_charts=2)

    assert errors_on(page) == []
    assert title_of(page) == catalog("zh")["page.sinusoidal"]
    checked = page.eval_on_selector_all(
        '[data-testid="stMain"] [data-testid="stRadio"] input:checked',
        "inputs => inputs.map(i => i.closest('label').innerText.trim())",
    )
    assert checked[0] == catalog("zh")["option.halves"]  # the layout radio comes first; later tabs add their own
    thumbs = [v.replace(",", "") for v in page.locator('[data-testid="stSliderThumbValue"]').all_inner_texts()]
    assert "100000" in thumbs, thumbs
    # Halves: row p is [sin(p w_0) .. sin(p w_63), cos(p w_0) ..], so PE(1, 1) = sin(w_1) with w_1 = base^(-2/128).
    pe_1_1 = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[0]._fullData[0].z[1][1]")
    assert pe_1_1 == pytest.approx(math.sin(100_000 ** (-2 / 128)), abs=1e-5)
    assert parse_qs(urlsplit(page.url).query) == {"lang": ["zh"], "layout": ["halves"], "base": ["100000"]}


def test_language_radio_switches_to_chinese(page, app_url):
    """Clicking 简体中文 in the sidebar retitles the page in Chinese and puts ``lang=zh`` in the URL."""
    page.goto(page_url(app_url, "home"), wait_until="domcontentloaded")
    settle(page, min_links=6)
    assert title_of(page) == catalog("en")["page.home"]

    page.locator('[data-testid="stSidebar"] [data-testid="stRadio"]').get_by_text("简体中文", exact=True).click()
    page.wait_for_function(
        "(title) => document.querySelector('[data-testid=\"stMain\"] h1')?.innerText.trim() === title",
        arg=catalog("zh")["page.home"],
        timeout=30_000,
    )
    settle(page, min_links=6)

    assert errors_on(page) == []
    assert title_of(page) == catalog("zh")["page.home"]
    assert parse_qs(urlsplit(page.url).query).get("lang") == ["zh"], f"URL after the switch: {page.url}"


def test_first_visit_straight_to_a_page_keeps_the_app_frame(browser):
    """A fresh server whose first visitor opens a page URL (a shared link) still runs it inside app.py: the
    sidebar has the language switch and the navigation, and ``lang=zh`` is honoured."""
    with streamlit_server() as url:
        tab = browser.new_page()
        try:
            tab.goto(page_url(url, "rope", "lang=zh"), wait_until="domcontentloaded")
            settle(tab, min_charts=1)

            assert errors_on(tab) == []
            sidebar = tab.locator('[data-testid="stSidebar"]')
            nav = sidebar.locator('[data-testid="stSidebarNavLink"]').all_inner_texts()
            assert len(nav) == len(PAGES), f"the page ran outside app.py's navigation; sidebar menu: {nav}"
            language = sidebar.locator('[data-testid="stRadio"]').get_by_text("简体中文", exact=True)
            assert language.count() == 1, "no language switch in the sidebar"
            assert title_of(tab) == catalog("zh")["page.rope"]
        finally:
            tab.close()


def test_first_visit_to_an_address_that_names_no_page_is_said_in_the_pages_language(browser):
    """A fresh server whose first visitor opens ``/nosuchpage``: Home, with posviz's notice in Chinese, and no
    Streamlit dialog of its own (which it opens, in English, in its legacy mode for a ``pages/`` folder)."""
    with streamlit_server() as url:
        tab = browser.new_page()
        try:
            tab.goto(f"{url}/nosuchpage?lang=zh", wait_until="domcontentloaded")
            settle(tab, min_links=6)
            assert title_of(tab) == catalog("zh")["page.home"]
            said = catalog("zh")["link.no_page"].replace("{path}", "/nosuchpage")
            tab.wait_for_function(
                "(want) => [...document.querySelectorAll('[data-testid=stToast]')]"
                ".some(t => t.innerText.includes(want))",
                arg=said,
                timeout=30_000,
            )
            assert tab.get_by_text("Page not found").count() == 0
            assert errors_on(tab) == []
        finally:
            tab.close()


def test_inspector_upload_draws_the_table(page, app_url, screenshot_dir, tmp_path):
    """A safetensors file set on the uploader (as a drag and drop would) is read and its table drawn."""
    import numpy as np
    from safetensors.numpy import save_file

    table = np.cos(np.outer(np.arange(48), np.linspace(0.05, 1.0, 16))).astype(np.float32)
    path = tmp_path / "model.safetensors"
    save_file({"bert.embeddings.position_embeddings.weight": table}, str(path))
    page.goto(page_url(app_url, "inspect"), wait_until="domcontentloaded")
    settle(page)
    page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
    settle(page, min_charts=2)
    screenshot(page, screenshot_dir / "inspect-loaded-en.png")
    assert errors_on(page) == []
    z = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[0]._fullData[0].z")
    assert np.allclose(np.asarray(z, dtype=float), table, atol=1e-6)
    assert page.external_requests == []
