"""The handout in a real browser: "Download this lesson" saves one HTML file, and that file, opened from disk in
Chromium with every network request refused, draws all its charts and typesets its formulas."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.app._support import as_array
from tests.app.test_handout import Handout

from ._server import fresh_chromium
from .test_pages import DRAWN, catalog, errors_on, page_url, screenshot, settle

#: What the opened file shows: every chart drawn (plotly's SVG with marks in it), every formula typeset.
OFFLINE_JS = """
(drawn) => ({
  plots: document.querySelectorAll('.plot').length,
  drawn: [...document.querySelectorAll('.plot')].filter(p => p.dataset.drawn === 'true' && p.querySelector(drawn)
                                                    && p.getBoundingClientRect().height > 200).length,
  math: document.querySelectorAll('.math').length,
  typeset: document.querySelectorAll('.math > .katex, .math > .katex-display').length,
  titles: [...document.querySelectorAll('.plot .gtitle')].map(t => t.textContent),
})
"""


def download_handout(tab, lang: str, tmp_path: Path) -> Path:
    with tab.expect_download(timeout=120_000) as info:
        tab.get_by_role("button", name=catalog(lang)["handout.download"]).click()
    download = info.value
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    return path


@pytest.mark.parametrize(("lang", "query"), [("en", "n=64&d=32&tab=distance"), ("zh", "lang=zh&tab=t5")])
def test_the_downloaded_lesson_works_offline(
    page, app_url, driver, chromium_path, screenshot_dir, tmp_path, lang, query
):
    name = "sinusoidal" if lang == "en" else "relative"
    page.goto(page_url(app_url, name, query), wait_until="domcontentloaded")
    settle(page, min_charts=2)
    assert errors_on(page) == []
    on_page = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .gtitle')].map(t => t.textContent)"""
    )
    path = download_handout(page, lang, tmp_path)
    assert path.name == f"posviz-{name}-{lang}.html"
    text = path.read_text(encoding="utf-8")
    doc = Handout(text)
    assert len(doc.figures) == len(on_page)
    assert doc.references == []
    (link,) = doc.links
    parts, given = urlsplit(link), parse_qs(query)
    assert f"{parts.scheme}://{parts.netloc}" == app_url and parts.path == f"/{name}"  # the address the browser used
    assert {k: v for k, v in parse_qs(parts.query).items() if k in given} == given
    assert parse_qs(parts.query)["lang"] == [lang]

    requests: list[str] = []
    with fresh_chromium(driver, chromium_path) as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)

        def refuse(route):
            requests.append(route.request.url)
            if route.request.url.startswith("file://"):
                route.continue_()
            else:
                route.abort()

        context.route("**/*", refuse)
        offline = context.new_page()
        problems: list[str] = []
        offline.on("pageerror", lambda exc: problems.append(str(exc)))
        offline.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
        offline.goto(path.as_uri())
        try:
            offline.wait_for_function(
                "(drawn) => { const s = (" + OFFLINE_JS + ")(drawn); return s.plots > 0 && s.drawn === s.plots; }",
                arg=DRAWN,
                timeout=60_000,
            )
        except Exception:
            pytest.fail(f"the handout did not draw offline: {offline.evaluate(OFFLINE_JS, DRAWN)} {problems}")
        state = offline.evaluate(OFFLINE_JS, DRAWN)
        offline.screenshot(path=str(screenshot_dir / f"handout-{name}-{lang}.png"), full_page=True)
        context.close()
    assert state["plots"] == len(on_page)
    assert state["titles"] == on_page  # the view's figures, in its order
    assert state["math"] > 0 and state["typeset"] == state["math"]
    assert problems == []
    assert requests == [path.as_uri()]  # the file itself, and nothing else was even asked for
    screenshot(page, screenshot_dir / f"handout-page-{name}-{lang}.png")


def test_the_whole_lesson_is_one_file_that_draws_every_tab_offline(
    page, app_url, driver, chromium_path, screenshot_dir, tmp_path
):
    from tests.app._support import tab_codes

    page.goto(page_url(app_url, "alibi", "tab=row"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    words = catalog("en")
    page.get_by_role("button", name=words["handout.whole"]).click()
    n = len(tab_codes("alibi"))
    ready = page.get_by_role("button", name=words["handout.whole.download"].format(n=n))
    ready.wait_for(timeout=120_000)
    assert errors_on(page) == []
    assert page.evaluate("() => new URL(location.href).searchParams.get('tab')") == "row"  # the view stays
    with page.expect_download(timeout=120_000) as info:
        ready.click()
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    assert path.name == "posviz-alibi-lesson-en.html"
    doc = Handout(path.read_text(encoding="utf-8"))
    assert doc.tab_headings == [words[f"alibi.tab.{code}"] for code in tab_codes("alibi")]
    with fresh_chromium(driver, chromium_path) as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, offline=True)
        context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith("file://") else route.abort()
        )
        offline = context.new_page()
        problems: list[str] = []
        offline.on("pageerror", lambda exc: problems.append(str(exc)))
        offline.goto(path.as_uri())
        offline.wait_for_function(
            "(drawn) => { const s = (" + OFFLINE_JS + ")(drawn); return s.plots > 0 && s.drawn === s.plots; }",
            arg=DRAWN,
            timeout=60_000,
        )
        state = offline.evaluate(OFFLINE_JS, DRAWN)
        offline.screenshot(path=str(screenshot_dir / "handout-alibi-lesson-en.png"), full_page=False)
        context.close()
    assert state["plots"] == len(doc.figures) and problems == []


@pytest.mark.parametrize(
    ("tab", "label", "typed"), [("extension", "rope.ctl.factor", 40), ("decay", "rope.ctl.decay_len", 3000)]
)
def test_a_value_typed_into_a_view_of_a_fragment_is_the_handouts(page, app_url, tmp_path, tab, label, typed):
    """The RoPE page's views rerun alone (fragments) when one of their controls changes: the handout names the typed
    value, its link carries it, and its figures were drawn with it."""
    page.goto(page_url(app_url, "rope", f"tab={tab}"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    box = page.locator("input[type=number]").and_(page.get_by_label(catalog("en")[label], exact=True))
    box.fill(str(typed))
    box.press("Enter")
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('{label.rsplit('.', 1)[1]}') === '{typed}'")
    settle(page, min_charts=1)
    doc = Handout(download_handout(page, "en", tmp_path).read_text(encoding="utf-8"))
    key = label.rsplit(".", 1)[1]
    assert doc.values[key] == str(typed)
    (link,) = doc.links
    assert parse_qs(urlsplit(link).query)[key] == [str(typed)]
    if key == "factor":  # Dynamic NTK's curve for the page's factor
        assert f"factor {typed}" in [trace.get("name") for fig in doc.figures for trace in fig["data"]]
    else:  # the bound is drawn out to the largest distance typed
        (decay,) = [fig for fig in doc.figures if fig["layout"].get("xaxis", {}).get("type") == "log"]
        assert max(as_array(trace["x"]).max() for trace in decay["data"]) == typed
