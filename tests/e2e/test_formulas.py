"""Every formula fits its column, in a real browser: on every page, and in every tab that writes a formula, in both
languages, at 1280 x 720 in presentation mode (a projector), at 1280 x 720 with the sidebar open (a laptop) and at
1920 x 1080. A display formula wider than its column is not wrapped: Streamlit gives it a horizontal scrollbar
(``overflow-x: auto``), so its right end is cut off on the screen, and on a projector nobody scrolls it. An inline
formula must end inside its paragraph. Formulas in a folded "more" section of presentation mode are unfolded first.
"""

from __future__ import annotations

import ast
from functools import cache

import pytest

from posviz.pages import PAGES as PAGE_TABLE

from ._server import ROOT
from .test_pages import PAGES, errors_on, page_url, settle

#: (width, height, presentation mode)
SCREENS = [(1280, 720, True), (1280, 720, False), (1920, 1080, False)]
LANGS = ["en", "zh"]

#: Every KaTeX formula on the page that the browser draws, with the width it needs and the width it has. A display
#: formula (``.katex-display``, a box as wide as the formula, centred, at most as wide as the column) needs its
#: content's width (``scrollWidth``) and has the width of the element's column (``stElementContainer``); it must not
#: show a scrollbar either (``offsetHeight`` > ``clientHeight``). An inline formula needs its own width and must end
#: inside the text block it stands in.
MEASURE_JS = """
() => {
  const drawn = el => el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const text = el => el.innerText.replace(/\\s+/g, ' ').slice(0, 80);
  const shown = [];
  document.querySelectorAll('.katex-display').forEach(d => {
    if (!drawn(d)) return;
    const column = d.closest('[data-testid="stElementContainer"]') || d.parentElement;
    shown.push({kind: 'display', text: text(d), needs: d.scrollWidth, has: column.clientWidth,
                scrollbar: d.offsetHeight - d.clientHeight});
  });
  document.querySelectorAll('.katex').forEach(k => {
    if (k.closest('.katex-display') || !drawn(k)) return;
    const within = k.closest('p, li, td, th') || k.closest('[data-testid="stMarkdownContainer"]');
    const block = within.getBoundingClientRect();
    const box = k.getBoundingClientRect();
    shown.push({kind: 'inline', text: text(k), needs: Math.round(box.right - block.left), has: Math.round(block.width),
                scrollbar: 0});
  });
  return shown;
}
"""

#: Unfold presentation mode's "more" sections (``st.expander``), so that the formulas in them are drawn.
UNFOLD_JS = """
() => { const closed = [...document.querySelectorAll('[data-testid="stExpander"] details:not([open]) > summary')];
        closed.forEach(s => s.click()); return closed.length; }
"""


@cache
def formula_tabs(page: str) -> tuple[str, ...]:
    """The codes of ``page``'s tabs after the first (which the page opens) whose drawing function writes a formula:
    it calls ``st.latex``, or calls a function of the page's script that does. Formulas of teaching texts are on the
    page's first view."""
    name = next(p.file for p in PAGE_TABLE if p.key == page)
    tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
    calls: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            calls[node.name] = {
                c.func.id if isinstance(c.func, ast.Name) else ast.unparse(c.func)
                for c in ast.walk(node)
                if isinstance(c, ast.Call)
            }

    @cache
    def writes_formula(function: str) -> bool:
        called = calls.get(function, set())
        return "st.latex" in called or any(writes_formula(f) for f in called if f in calls and f != function)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "DRAW" for t in node.targets):
            if isinstance(node.value, ast.Dict):
                codes = [(ast.literal_eval(k), v) for k, v in zip(node.value.keys, node.value.values, strict=True)]
                return tuple(c for c, v in codes[1:] if writes_formula(_drawn_by(v)))
    return ()


def _drawn_by(value) -> str:
    """The function a ``DRAW`` entry calls: ``tab`` or ``functools.partial(tab, ...)``."""
    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("functools.partial", "partial") and value.args:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else ""


def test_the_tabs_with_formulas_are_found():
    """Guard the scan: RoPE's context-extension tab writes dynamic NTK's formula (through ``dynamic_growth``),
    Relative's T5 tab its bucket formula; Pitfalls writes none."""
    assert "extension" in formula_tabs("rope") and "t5" in formula_tabs("relative")
    assert formula_tabs("pitfalls") == ()


def views() -> list[tuple[str, str]]:
    return [(page, "") for page in PAGES] + [(page, code) for page in PAGES for code in formula_tabs(page)]


#: KaTeX's italic letters stick out of their box by a pixel or two (dynamic NTK's formula: 825 px of content in a box
#: of 823, no scrollbar): what a formula needs beyond its column up to this much is not cut off.
OVERHANG_PX = 2


def too_wide(shown: list[dict]) -> list[dict]:
    return [f for f in shown if f["needs"] > f["has"] + OVERHANG_PX or f["scrollbar"] > 0]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize(
    ("width", "height", "presenting"), SCREENS, ids=[f"{w}x{h}{'-present' if p else ''}" for w, h, p in SCREENS]
)
def test_no_formula_overflows_its_column(page, app_url, width, height, presenting, lang):
    page.set_viewport_size({"width": width, "height": height})
    clipped, measured = [], 0
    for name, code in views():
        query = "&".join(
            part
            for part in ("present=true" if presenting else "", f"lang={lang}", f"tab={code}" if code else "")
            if part
        )
        page.goto(page_url(app_url, name, query))
        settle(page)
        assert not errors_on(page), f"{name} {query}: {errors_on(page)}"
        if page.evaluate(UNFOLD_JS):
            page.wait_for_timeout(300)
            settle(page)
        shown = page.evaluate(MEASURE_JS)
        measured += len(shown)
        clipped += [f"{name}?{query}: {f}" for f in too_wide(shown)]
    assert measured > 20, f"only {measured} formulas measured: the scan finds no formulas"
    assert not clipped, "formulas wider than their column:\n" + "\n".join(clipped)
