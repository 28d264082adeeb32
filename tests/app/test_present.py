"""Presentation mode, the colour-blind-safe switch and downloads, on every page: what a teacher projects and what a
learner takes home."""

from __future__ import annotations

import re

import numpy as np
import pytest
from plotly.colors import get_colorscale

from tests.core._figures import font_sizes

from ._support import (
    EMPTY_PAGES,
    PAGE_NAMES,
    assert_clean,
    figures,
    image_rgba,
    open_page,
    tab_codes,
    teaching_text,
    tr,
    widget,
)

FAMILY_PAGES = [p for p in PAGE_NAMES if p not in EMPTY_PAGES]  # test_inspect and test_lab cover those with content
#: Okabe & Ito's colours (Color Universal Design, 2008), written out here rather than read from posviz.
OKABE_ITO = {"#0072b2", "#d55e00", "#cc79a7", "#000000", "#009e73", "#e69f00", "#56b4e9"}


@pytest.mark.parametrize("page", FAMILY_PAGES)
def test_presentation_mode_from_the_url_enlarges_figures_and_folds_controls(page):
    normal, shown = open_page(page), open_page(page, query={"present": "true"})
    assert_clean(shown)
    assert [t.value for t in shown.toggle if t.key == "present"] == [True]
    assert [t.value for t in normal.toggle if t.key == "present"] == [False]
    big, small = figures(shown), figures(normal)
    assert len(big) == len(small) > 0
    assert all(f["layout"]["font"]["size"] == 20 for f in big)
    assert all(f["layout"].get("font", {}).get("size") != 20 for f in small)
    for fig in big:  # every text the figure sets is at least 18 px; a title's 70% <sup> note too
        assert min(font_sizes(fig)) >= 18, fig["layout"].get("title")
        assert fig["layout"]["title"]["font"]["size"] * 0.7 >= 18
        assert fig["layout"]["hoverlabel"]["font"]["size"] >= 18
        for name, axis in fig["layout"].items():
            if name.startswith(("xaxis", "yaxis")):
                assert axis["tickfont"]["size"] * (0.7 if axis.get("exponentformat") == "power" else 1) >= 18
    labels = [e.label for e in shown.expander]
    assert tr("en", "present.controls") in labels
    assert tr("en", "present.controls") not in [e.label for e in normal.expander]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_values_in_use_are_written_under_the_folded_controls(lang):
    at = open_page("sinusoidal", query={"present": "true", "n": "64", "base": "100", "layout": "halves"}, lang=lang)
    assert_clean(at)
    line = tr(lang, "present.values.separator").join(
        [
            tr(lang, "present.value.number", label=tr(lang, "param.n_positions"), value="64"),
            tr(lang, "present.value.number", label=tr(lang, "param.d_model"), value="128"),
            tr(lang, "present.value.number", label=tr(lang, "param.base"), value="100"),
            tr(lang, "present.value.choice", label=tr(lang, "param.layout"), value=tr(lang, "option.halves")),
        ]
    )
    assert tr(lang, "present.values", values=line) in [c.value for c in at.caption]
    widget(at, "d").set_value(256).run()  # the line follows the controls
    assert tr(lang, "present.value.number", label=tr(lang, "param.d_model"), value="256") in at.caption[0].value
    normal = open_page("sinusoidal", query={"n": "64"}, lang=lang)
    assert not [c for c in normal.caption if c.value.startswith(tr(lang, "present.values", values=""))]


def test_the_values_line_names_only_the_controls_in_use_with_thousands_separated():
    at = open_page("learned", query={"present": "true", "init": "sinusoidal", "n": "4096"})
    assert_clean(at)
    line = next(c.value for c in at.caption if c.value.startswith(tr("en", "present.values", values="")))
    assert tr("en", "present.value.number", label=tr("en", "param.n_positions"), value="4,096") in line
    assert tr("en", "param.std") not in line and tr("en", "param.seed") not in line  # disabled for this table


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_introduction_folds_to_its_first_sentence(lang):
    at = open_page("sinusoidal", query={"present": "true"}, lang=lang)
    text = teaching_text("sinusoidal", lang)
    first = at.markdown[0].value
    stop = "。" if lang == "zh" else "."
    assert first.endswith(stop) and first.count(stop) == 1 and text.startswith(first)
    more = [e for e in at.expander if e.label == tr(lang, "present.more")]
    assert len(more) == 1
    rest = more[0].markdown[0].value
    assert re.sub(r"\s+", "", first + rest) == re.sub(r"\s+", "", text)
    assert open_page("sinusoidal", lang=lang).markdown[0].value.strip() == text.strip()  # whole, when not presenting


def test_presentation_mode_shows_a_tab_selector_bound_to_the_same_link():
    codes = tab_codes("sinusoidal")
    at = open_page("sinusoidal", query={"present": "true", "tab": "shift"})
    assert_clean(at)
    assert not at.tabs
    selector = next(s for s in at.selectbox if s.key == "tab")
    assert selector.value == "shift" and list(selector.options) == [tr("en", f"sinusoidal.tab.{c}") for c in codes]
    selector.set_value("norms").run()
    assert at.query_params["tab"] == "norms"
    at.toggle(key="present").set_value(False).run()  # back to tabs, on the same one
    assert at.tabs and at.query_params["tab"] == "norms"
    assert tr("en", "sinusoidal.tab.norms") in [t.label for t in at.tabs]


def _colours(node, key=""):
    if isinstance(node, dict):
        if "bdata" in node:
            return
        for k, v in node.items():
            if k != "template":
                yield from _colours(v, k)
    elif isinstance(node, list):
        for item in node:
            yield from _colours(item, key)
    elif isinstance(node, str) and key in ("color", "fillcolor") and re.match(r"#|rgb", node):
        yield node


def _hex(colour: str) -> str:
    if colour.startswith("#"):
        return colour.lower()
    r, g, b = (int(float(v)) for v in re.findall(r"[\d.]+", colour)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _is_grey(colour: str) -> bool:
    h = _hex(colour)
    values = [int(h[i : i + 2], 16) for i in (1, 3, 5)]
    return max(values) - min(values) < 26


@pytest.mark.parametrize("page", FAMILY_PAGES)
def test_the_colour_blind_safe_switch_puts_safe_colours_in_every_figure(page):
    at = open_page(page, query={"contrast": "true"})
    assert_clean(at)
    assert [t.value for t in at.toggle if t.key == "contrast"] == [True]
    rdbu = [c for _, c in get_colorscale("RdBu")]
    for fig in figures(at):
        assert len(fig["layout"]["colorway"]) == 7 and {c.lower() for c in fig["layout"]["colorway"]} == OKABE_ITO
        for trace in fig["data"]:
            for scale in (trace.get("colorscale"), trace.get("marker", {}).get("colorscale")):
                if scale:
                    colours = [c for _, c in scale]
                    assert colours != rdbu and colours != rdbu[::-1]  # the diverging scale is PuOr now
                    if len(colours) > 2 and colours[0] == "rgb(45,0,75)":
                        assert colours[-1] == "rgb(127,59,8)"
        for colour in _colours(fig["data"]):
            assert _hex(colour) in OKABE_ITO or _is_grey(colour), colour


def test_the_diverging_heatmaps_turn_purple_to_orange_when_the_switch_is_turned_on():
    """(That the switch writes ``contrast=true`` into the address bar is the browser's part: tests/e2e.)"""
    at = open_page("sinusoidal")
    before = figures(at)[0]["data"][0]["colorscale"]
    at.toggle(key="contrast").set_value(True).run()
    after = figures(at)[0]["data"][0]["colorscale"]
    assert [c for _, c in before] == [c for _, c in get_colorscale("RdBu_r")]
    assert [c for _, c in after] == [c for _, c in get_colorscale("PuOr_r")]
    lines = figures(open_page("sinusoidal", query={"contrast": "true", "tab": "distance"}))
    widths = [t["line"]["width"] for f in lines for t in f["data"] if t.get("mode", "lines") == "lines"]
    assert widths and min(widths) >= 3


def test_a_large_image_heatmap_is_repainted_in_the_safe_palette():
    at = open_page("sinusoidal", query={"contrast": "true", "n": "2048", "d": "512"})
    assert_clean(at)
    fig = figures(at)[0]
    assert fig["data"][0]["type"] == "image"
    pixels = image_rgba(fig)[..., :3].reshape(-1, 3).astype(int)

    def near(colour) -> bool:
        return bool(np.any(np.abs(pixels - np.array(colour)).max(axis=1) < 12))

    assert near((45, 0, 75)) and near((127, 59, 8))  # PuOr's dark purple (-1) and dark orange (+1)
    assert not near((103, 0, 31)) and not near((5, 48, 97))  # RdBu's dark red and dark blue are gone


@pytest.mark.parametrize("page", FAMILY_PAGES)
def test_every_figure_offers_its_data_as_csv(page):
    at = open_page(page)
    assert_clean(at)
    # the lesson's button and a table's (Myth or fact's verdicts) are not a figure's
    buttons = [b for b in at.get("download_button") if b.key not in ("posviz-handout", "csv-claims-verdicts")]
    assert len(buttons) == len(figures(at)) > 0
    names = [b.proto.label for b in buttons]
    assert set(names) == {tr("en", "download.csv")}


@pytest.mark.parametrize(("page", "tab"), [("pitfalls", "scale"), ("sinusoidal", "table"), ("alibi", "long")])
def test_the_first_figure_is_cut_to_the_first_screen_unless_it_stands_beside_another(page, tab):
    """In presentation mode the view's first figure is cut to the first screen's height, so that it shows whole
    under the page's bar; a figure in a pair of columns (Pitfalls' correct and buggy versions) keeps the height of
    the figure beside it."""
    from posviz.figures.screen import MIN_PLOT
    from posviz.ui import FIRST_SCREEN_HEIGHT

    shown = figures(open_page(page, query={"present": "true", "tab": tab}))
    heights = [fig["layout"]["height"] for fig in shown]
    if page == "pitfalls":  # the pair: side by side, one height
        assert heights[0] == heights[1] > FIRST_SCREEN_HEIGHT
    else:  # as short as the first screen asks, with room for a plot between its margins
        margin = shown[0]["layout"]["margin"]
        assert heights[0] == max(FIRST_SCREEN_HEIGHT, margin["t"] + margin["b"] + MIN_PLOT) < max(heights[1:])
