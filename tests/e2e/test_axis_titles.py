"""Every vertical axis title of the Pitfalls page is drawn whole, in a real browser: on every tab, in both languages,
at 1280 x 800 with the sidebar open (a laptop) and at 1280 x 720 in presentation mode (a projector, larger type). A
title longer than the figure is tall runs past the figure's edges, where the browser cuts it off."""

from __future__ import annotations

import pytest

from tests.app._support import tab_codes

from .test_pages import errors_on, page_url, settle

#: (width, height, presentation mode)
SCREENS = [(1280, 800, False), (1280, 720, True)]
LANGS = ["en", "zh"]

#: Per chart: its title, its figure's box (the plot's outer <svg>) and the box of every y axis's title text
#: (``.g-ytitle``, ``.g-y2title``, ...), each as (left, top, right, bottom) on the screen.
MEASURE_JS = """
() => [...document.querySelectorAll('.js-plotly-plot')].filter(g => g.checkVisibility()).map(g => {
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const titles = [...g.querySelectorAll('.infolayer > g')]
    .filter(e => /^g-y[0-9]*title$/.test(e.getAttribute('class')));
  return {figure: (g.layout.title || {}).text || '', box: box(g.querySelector('.main-svg')),
          titles: titles.flatMap(e => [...e.querySelectorAll('text')]).filter(e => e.textContent.trim())
                        .map(e => ({text: e.textContent, box: box(e)}))};
})
"""
#: Rounding of a box to whole pixels.
SLACK_PX = 1


def cut_off(chart: dict) -> list[str]:
    """The y axis titles of ``chart`` whose box leaves the figure's box."""
    left, top, right, bottom = chart["box"]
    return [
        f"{title['text']!r} at {[round(v) for v in title['box']]} in {[round(v) for v in chart['box']]}"
        for title in chart["titles"]
        if title["box"][0] < left - SLACK_PX
        or title["box"][1] < top - SLACK_PX
        or title["box"][2] > right + SLACK_PX
        or title["box"][3] > bottom + SLACK_PX
    ]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    ("width", "height", "presenting"), SCREENS, ids=[f"{w}x{h}{'-present' if p else ''}" for w, h, p in SCREENS]
)
def test_pitfalls_y_axis_titles_fit_their_figures(page, app_url, width, height, presenting, lang):
    page.set_viewport_size({"width": width, "height": height})
    cut, measured = [], 0
    for code in tab_codes("pitfalls"):
        query = "&".join(part for part in ("present=true" if presenting else "", f"lang={lang}", f"tab={code}") if part)
        page.goto(page_url(app_url, "pitfalls", query))
        settle(page)
        assert not errors_on(page), f"pitfalls?{query}: {errors_on(page)}"
        for chart in page.evaluate(MEASURE_JS):
            measured += len(chart["titles"])
            cut += [f"pitfalls?{query} {chart['figure']!r}: {c}" for c in cut_off(chart)]
    assert measured >= len(tab_codes("pitfalls")), f"only {measured} y axis titles measured: the scan finds none"
    assert not cut, "y axis titles cut off at the figure's edges:\n" + "\n".join(cut)
