"""Presentation mode on a projector, in a real browser: every page once at 1280 x 720 and once at 1920 x 1080 (in
English at one size and in Chinese at the other), checked on what the browser reports — the sidebar closed, the first
chart on the first screen, every text inside every chart at least 18 px, no tab bar that hides tabs, the values in
use written beside the folded controls — and a screenshot of the first screen in ``test-artifacts/screenshots/``.
Plus the colour-blind-safe switch written into the link, and tab bars that wrap instead of overflowing."""

from __future__ import annotations

import pytest

from .test_pages import EMPTY_PAGES, PAGES, catalog, errors_on, page_url, screenshot, settle

SIZES = [(1280, 720), (1920, 1080)]
MIN_FONT_PX = 18
#: Pages whose controls fold at the top of the page; on the others they sit inside a tab or a claim.
CASES = [
    (name, size, "en" if (i + j) % 2 == 0 else "zh") for i, name in enumerate(PAGES) for j, size in enumerate(SIZES)
]

#: What the browser shows of the page: the sidebar's box, the first chart's top, every text element drawn inside a
#: plotly chart with its computed size, each chart's hover-label size, each tab list's widths, the values line.
MEASURE_JS = """
(valuesPrefix) => {
  const side = document.querySelector('[data-testid="stSidebar"]').getBoundingClientRect();
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  const texts = [];
  charts.forEach((chart, index) => chart.querySelectorAll('svg text, svg tspan').forEach(el => {
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
    if (!own || !el.getBoundingClientRect().width) return;  // empty or not drawn
    if (el.closest('.hoverlayer')) return;  // a hover label only exists while the pointer is on the chart
    texts.push({chart: index, text: own.slice(0, 40), px: parseFloat(getComputedStyle(el).fontSize)});
  }));
  const hover = [...document.querySelectorAll('.js-plotly-plot')].map(g => g._fullLayout.hoverlabel.font.size);
  const tabLists = [...document.querySelectorAll('[data-testid="stTabs"] [role="tablist"]')].map(l =>
    ({scroll: l.scrollWidth, client: l.clientWidth}));
  const values = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
    .filter(c => c.innerText.trim().startsWith(valuesPrefix));
  const valueBoxes = values.map(v => { const r = v.getBoundingClientRect();
    return {top: r.top, height: r.height, visible: v.checkVisibility()}; });
  // what Streamlit's header paints over the page's title (its background, its buttons and icons)
  const title = document.querySelector('[data-testid="stMain"] h1');
  const header = document.querySelector('[data-testid="stHeader"]');
  const overTitle = [];
  if (title && header) {
    const t = title.getBoundingClientRect();
    for (const el of [header, ...header.querySelectorAll('*')]) {
      const r = el.getBoundingClientRect(), bg = getComputedStyle(el).backgroundColor;
      const paints = ['BUTTON', 'svg', 'IMG'].includes(el.tagName) || !['rgba(0, 0, 0, 0)', 'transparent'].includes(bg);
      if (paints && r.width && r.height && r.left < t.right && r.right > t.left && r.top < t.bottom && r.bottom > t.top)
        overTitle.push(`${el.tagName} ${el.getAttribute('data-testid') || ''} ${Math.round(r.bottom - t.top)} px`);
    }
  }
  // each legend's box against its chart's plot area and its chart's box
  const legends = [];
  document.querySelectorAll('.js-plotly-plot').forEach((g, index) => {
    const svg = g.querySelector('svg.main-svg').getBoundingClientRect();
    const plots = [...g.querySelectorAll('.draglayer .nsewdrag, .xtick text, .g-xtitle text')]
      .map(e => e.getBoundingClientRect()).filter(b => b.width);  // the plot areas and the x axes' texts
    g.querySelectorAll('g.legend').forEach(legend => {
      const r = legend.getBoundingClientRect();
      if (!r.width) return;
      const over = plots.some(p => r.left < p.right - 1 && r.right > p.left + 1 && r.top < p.bottom - 1
        && r.bottom > p.top + 1);
      legends.push({chart: index, over, below: r.bottom > svg.bottom + 1, scrolls: !!legend.querySelector('.scrollbar')
        && legend.querySelector('.scrollbar').getBoundingClientRect().height > 0});
    });
  });
  return {sidebarRight: side.right, sidebarWidth: side.width, overTitle, legends,
          firstChartTop: charts.length ? charts[0].getBoundingClientRect().top : null,
          texts, hover, tabLists, values: valueBoxes,
          selectors: document.querySelectorAll('[data-testid="stSelectbox"]').length};
}
"""


@pytest.mark.parametrize(("name", "size", "lang"), CASES, ids=[f"{n}-{w}x{h}-{lang}" for n, (w, h), lang in CASES])
def test_presentation_mode_on_a_projector(page, app_url, screenshot_dir, name, size, lang):
    width, height = size
    page.set_viewport_size({"width": width, "height": height})
    query = "present=true" + ("&lang=zh" if lang == "zh" else "")
    page.goto(page_url(app_url, name, query), wait_until="domcontentloaded")
    has_charts = name not in EMPTY_PAGES
    settle(page, min_charts=1 if has_charts else 0)
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    prefix = catalog(lang)["present.values"].split("{values}")[0]
    seen = page.evaluate(MEASURE_JS, prefix)
    page.screenshot(path=str(screenshot_dir / f"present-{name}-{width}x{height}-{lang}.png"))
    assert errors_on(page) == []

    assert seen["sidebarRight"] <= 0 or seen["sidebarWidth"] < 5, f"the sidebar is open: {seen['sidebarWidth']} px"
    assert seen["overTitle"] == [], "Streamlit's header covers the top of the page's title"
    bad = [leg for leg in seen["legends"] if leg["over"] or leg["below"] or leg["scrolls"]]
    assert bad == [], f"legends on the plot or its x axis, past the figure's bottom or scrolling: {bad}"
    assert all(t["scroll"] <= t["client"] + 1 for t in seen["tabLists"]), seen["tabLists"]
    assert seen["values"], f"no line naming the values in use on {name}"
    assert all(v["visible"] and v["height"] > 0 for v in seen["values"])
    if has_charts:
        assert seen["firstChartTop"] is not None and 0 <= seen["firstChartTop"] < height - 40, (
            f"the first chart starts at {seen['firstChartTop']} px, below the {height} px screen"
        )
        assert seen["values"][0]["top"] < seen["firstChartTop"]  # the values come before what they produced
        assert seen["texts"], "no text drawn in the charts"
        small = [t for t in seen["texts"] if t["px"] < MIN_FONT_PX]
        assert not small, f"texts under {MIN_FONT_PX} px: {small[:8]}"
        assert min(seen["hover"]) >= MIN_FONT_PX
    if name in ("sinusoidal", "pitfalls", "rope"):  # the longest rows of tabs became a selector
        assert not seen["tabLists"] and seen["selectors"] >= 1


def test_the_colour_blind_safe_switch_goes_into_the_link_and_recolours_the_figures(page, app_url, screenshot_dir):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(page_url(app_url, "sinusoidal", "n=64&d=32"), wait_until="domcontentloaded")
    settle(page, min_charts=2)
    first_scale = "() => document.querySelector('.js-plotly-plot')._fullData[0].colorscale.map(s => s[1])"
    before = page.evaluate(first_scale)
    label = catalog("en")["present.contrast"]
    page.locator('[data-testid="stSidebar"]').get_by_text(label).click()
    page.wait_for_function("() => new URL(location.href).searchParams.get('contrast') === 'true'", timeout=30_000)
    page.wait_for_function(f"() => ({first_scale})()[0] !== {before[0]!r}", timeout=30_000)
    settle(page, min_charts=2)
    after = page.evaluate(first_scale)
    assert before[0] == "rgb(5,48,97)" and after[0] == "rgb(45,0,75)"  # RdBu's dark blue became PuOr's dark purple
    assert "n=64" in page.url and "d=32" in page.url
    screenshot(page, screenshot_dir / "contrast-sinusoidal-en.png")


@pytest.mark.parametrize("name", ["pitfalls"])  # its nine tabs took 855 of 820 px beside the sidebar
def test_a_long_row_of_tabs_wraps_instead_of_hiding_tabs(page, app_url, screenshot_dir, name):
    """Outside presentation mode, beside the open sidebar at 1280 px: every tab is on screen and clickable."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(page_url(app_url, name), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    boxes = page.evaluate(
        """() => { const list = document.querySelector('[data-testid="stTabs"] [role="tablist"]');
                   const outer = list.getBoundingClientRect();
                   return {scroll: list.scrollWidth, client: list.clientWidth, right: outer.right,
                           tabs: [...list.querySelectorAll('[role="tab"]')].map(t => t.getBoundingClientRect().right)};
                 }"""
    )
    assert boxes["scroll"] <= boxes["client"] + 1 and max(boxes["tabs"]) <= boxes["right"] + 1, boxes
    page.get_by_role("tab").last.click()
    page.wait_for_function("() => new URL(location.href).searchParams.has('tab')", timeout=30_000)
    settle(page, min_charts=1)
    screenshot(page, screenshot_dir / f"tabs-{name}-1280x720-en.png")


#: Views whose figures a lecturer found with legends on their curves or scrolling at 1280 x 720: eight ALiBi heads,
#: the Models page's wavelengths under a long legend, Myth or fact's long names over a log axis.
CROWDED = [("alibi", "tab=long"), ("models", "tab=layers"), ("claims", "tab=snippets")]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("name", "query"), CROWDED, ids=[name for name, _ in CROWDED])
def test_a_legend_keeps_off_its_plot_on_a_projector(page, app_url, name, query, lang):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(page_url(app_url, name, f"present=true&{query}&lang={lang}"), wait_until="domcontentloaded")
    settle(page, min_charts=1)
    seen = page.evaluate(MEASURE_JS, catalog(lang)["present.values"].split("{values}")[0])
    assert seen["legends"], "no legend measured"
    bad = [leg for leg in seen["legends"] if leg["over"] or leg["below"] or leg["scrolls"]]
    assert bad == [], f"legends on the plot or its x axis, past the figure's bottom or scrolling: {bad}"
