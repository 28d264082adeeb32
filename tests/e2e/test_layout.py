"""Wide controls fit their column at 1280 px, in a real browser, in both languages: beside the open sidebar at
1280 x 800 (a laptop) and in presentation mode at 1280 x 720 (a projector, the sidebar folded, the folded controls
unfolded first). The Training lab's chips of encodings all lie inside the main column and inside every box that
clips them (a chip scrolled out of its widget is not on the screen)."""

from __future__ import annotations

import pytest

from posviz import lab

from .test_formulas import UNFOLD_JS
from .test_pages import errors_on, page_url, screenshot, settle

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
