"""Wide controls and tables fit their column at 1280 px, in a real browser, in both languages: beside the open sidebar
at 1280 x 800 (a laptop) and in presentation mode at 1280 x 720 (a projector, the sidebar folded, the folded controls
unfolded first). The Training lab's chips of encodings all lie inside the main column and inside every box that
clips them (a chip scrolled out of its widget is not on the screen); Myth or fact's table of verdicts ends inside the
main column, lists every claim, and no cell hides part of its text."""

from __future__ import annotations

import pytest

from posviz import lab
from posviz.lessons import claims

from .test_formulas import UNFOLD_JS
from .test_pages import catalog, errors_on, page_url, screenshot, settle

#: (width, height, presentation mode)
SCREENS = [(1280, 800, False), (1280, 720, True)]
SCREEN_IDS = [f"{w}x{h}{'-present' if p else ''}" for w, h, p in SCREENS]
LANGS = ["en", "zh"]
#: A sub-pixel rounding of the browser's boxes is not an overflow.
SLACK_PX = 1

#: The main column's content box (the main block without its padding), as ``{left, right}``.
COLUMN_JS = """
const column = () => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const box = main.getBoundingClientRect(), style = getComputedStyle(main);
  return {left: box.left + parseFloat(style.paddingLeft), right: box.right - parseFloat(style.paddingRight)};
};
"""

#: Every chip of the lab's row of encodings (a multiselect's selected values, or the buttons of pills / a segmented
#: control), with its box and the boxes of its ancestors up to the main column that clip what sticks out of them.
CHIPS_JS = (
    "() => {"
    + COLUMN_JS
    + """
  const chips = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stMultiSelect"] [data-tag], '
                                             + '[data-testid="stMain"] [data-testid="stButtonGroup"] button')];
  const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, right: r.right}; };
  return {column: column(), chips: chips.map(chip => {
    const clips = [];
    for (let el = chip.parentElement; el && el.dataset.testid !== 'stMainBlockContainer'; el = el.parentElement) {
      if (getComputedStyle(el).overflowX === 'visible') continue;
      clips.push({...box(el), testid: el.dataset.testid || el.tagName});
    }
    return {text: chip.innerText.trim(), ...box(chip), clips};
  })};
}
"""
)

#: The table of verdicts (the first table after the heading ``title``): its box, every box in it that scrolls or
#: clips sideways, its drawn rows' texts, and every drawn cell with the width its text needs and the width it has.
#: A grid painted on a canvas (``st.dataframe``) draws no rows of its own (its rows exist only as a hidden table for
#: screen readers): its cells' text cannot be measured, and none of its rows count as drawn.
TABLE_JS = (
    "(title) => {"
    + COLUMN_JS
    + """
  const heading = [...document.querySelectorAll('[data-testid="stMain"] h3')].find(h => h.innerText.trim() === title);
  if (!heading) return null;
  const table = [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stTable"], [data-testid="stMain"] [data-testid="stDataFrame"]')]
    .find(t => heading.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
  if (!table) return null;
  const r = table.getBoundingClientRect();
  const scrollers = [table, ...table.querySelectorAll('*')]
    .filter(el => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX))
    .map(el => ({scroll: el.scrollWidth, client: el.clientWidth, testid: el.dataset.testid || el.className}));
  const drawn = el => el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const cells = [...table.querySelectorAll('th, td')].filter(drawn).map(c => ({
    text: c.innerText.trim().slice(0, 60), needs: c.scrollWidth, has: c.clientWidth}));
  const rows = [...table.querySelectorAll('tbody tr')].filter(drawn).map(row => row.innerText);
  return {column: column(), left: r.left, right: r.right, kind: table.dataset.testid, scrollers, cells, rows};
}
"""
)


def open_view(page, app_url: str, name: str, width: int, height: int, presenting: bool, lang: str) -> None:
    """Open ``name`` at ``width`` x ``height`` in ``lang``, in presentation mode with its folded sections unfolded."""
    page.set_viewport_size({"width": width, "height": height})
    query = f"lang={lang}" + ("&present=true" if presenting else "")
    page.goto(page_url(app_url, name, query), wait_until="domcontentloaded")
    settle(page)
    if page.evaluate(UNFOLD_JS):
        page.wait_for_timeout(300)
        settle(page)
    assert not errors_on(page), errors_on(page)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("width", "height", "presenting"), SCREENS, ids=SCREEN_IDS)
def test_the_labs_encoding_chips_fit_the_main_column(page, app_url, screenshot_dir, width, height, presenting, lang):
    open_view(page, app_url, "lab", width, height, presenting, lang)
    seen = page.evaluate(CHIPS_JS)
    screenshot(page, screenshot_dir / f"layout-lab-{width}x{height}{'-present' if presenting else ''}-{lang}.png")
    column, chips = seen["column"], seen["chips"]
    assert [c["text"] for c in chips] == list(lab.ENCODINGS), chips  # every encoding is chosen by default
    outside = [
        (chip["text"], round(chip["left"]), round(chip["right"]), box)
        for chip in chips
        for box in [{**column, "testid": "main column"}, *chip["clips"]]
        if chip["left"] < box["left"] - SLACK_PX or chip["right"] > box["right"] + SLACK_PX
    ]
    assert not outside, "chips past the right edge of a box that holds them:\n" + "\n".join(map(str, outside))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(("width", "height", "presenting"), SCREENS, ids=SCREEN_IDS)
def test_the_table_of_verdicts_fits_the_main_column(page, app_url, screenshot_dir, width, height, presenting, lang):
    open_view(page, app_url, "claims", width, height, presenting, lang)
    words = catalog(lang)
    # the page settles before the browser has laid out the whole long page: wait for the table itself
    page.wait_for_function(f"(title) => ({TABLE_JS})(title) !== null", arg=words["claims.summary"], timeout=30_000)
    seen = page.evaluate(TABLE_JS, words["claims.summary"])
    screenshot(page, screenshot_dir / f"layout-claims-{width}x{height}{'-present' if presenting else ''}-{lang}.png")
    assert seen is not None, f"no table under the heading {words['claims.summary']!r}"
    column = seen["column"]
    assert column["left"] - SLACK_PX <= seen["left"] and seen["right"] <= column["right"] + SLACK_PX, seen
    scrolling = [s for s in seen["scrollers"] if s["scroll"] > s["client"] + SLACK_PX]
    assert not scrolling, f"the table is wider than its box and scrolls sideways: {scrolling}"
    shorts = [words[f"claims.{code}.short"] for code in claims.CLAIMS]
    assert len(seen["rows"]) == len(shorts), f"{seen['kind']}: {len(seen['rows'])} rows drawn, not {len(shorts)}"
    missing = [s for s, row in zip(shorts, seen["rows"], strict=True) if s not in row]
    assert not missing, f"claims not shown in full: {missing}"
    clipped = [c for c in seen["cells"] if c["needs"] > c["has"] + SLACK_PX]
    assert not clipped, f"cells that hide part of their text: {clipped}"
