"""The colour-blind-safe mode: the deficiency simulation against colorspacious (an independent implementation of
Machado et al. 2009), and the palettes checked with it; the figures restyled for a projector without touching the
shared original."""

from __future__ import annotations

import base64
import copy
import io
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from colorspacious import cspace_convert
from PIL import Image
from plotly.colors import get_colorscale, qualitative, sample_colorscale

from posviz import figures
from posviz.figures import colours, compare, screen
from tests.core._figures import font_sizes

ROOT = Path(__file__).resolve().parents[2]
CVD = {"protanopia": "protanomaly", "deuteranopia": "deuteranomaly", "tritanopia": "tritanomaly"}
#: Two colours side by side are told apart at a CIE76 difference of a few units; lines and the ends of a scale need
#: far more to be named apart from across a room.
NEIGHBOURS = 20.0
ANY_PAIR = 15.0
DIVERGING_ENDS = 40.0


def rgb(colour: str) -> np.ndarray:
    return colours.parse(colour)[0]


@pytest.mark.parametrize("deficiency", list(CVD))
def test_simulation_matches_colorspacious(deficiency):
    sample = np.random.default_rng(0).uniform(0, 1, size=(200, 3))
    space = {"name": "sRGB1+CVD", "cvd_type": CVD[deficiency], "severity": 100}
    expected = np.clip(cspace_convert(sample, space, "sRGB1"), 0, 1)
    np.testing.assert_allclose(colours.simulate(sample, deficiency), expected, atol=1e-6)


def test_cielab_and_delta_e_match_colorspacious():
    """To a few hundredths of a unit: the two use slightly different sRGB and D65 constants."""
    a, b = np.random.default_rng(1).uniform(0, 1, size=(2, 100, 3))
    np.testing.assert_allclose(colours.lab(a), cspace_convert(a, "sRGB1", "CIELab"), atol=0.05)
    expected = np.linalg.norm(cspace_convert(a, "sRGB1", "CIELab") - cspace_convert(b, "sRGB1", "CIELab"), axis=-1)
    np.testing.assert_allclose(colours.delta_e(a, b), expected, atol=0.05)


def test_the_simulation_collapses_red_and_green_for_deuteranopia():
    """The check has teeth: a red and a green of equal lightness, far apart for normal vision, come close."""
    red, green = rgb("#d62728"), rgb("#2ca02c")
    assert colours.delta_e(red, green) > 60
    simulated = colours.delta_e(colours.simulate(red, "deuteranopia"), colours.simulate(green, "deuteranopia"))
    assert simulated < 0.5 * colours.delta_e(red, green)


def test_the_safe_diverging_scale_keeps_its_two_sides_apart_for_every_eye():
    assert colours.diverging_separation(colours.SAFE_DIVERGING) >= DIVERGING_ENDS
    assert colours.diverging_separation(colours.SAFE_DIVERGING + "_r") >= DIVERGING_ENDS
    # the scales it replaces do not: red-green fails outright, RdBu's dark ends come close for protanopia
    assert colours.diverging_separation("RdYlGn") < DIVERGING_ENDS
    assert colours.diverging_separation("RdBu_r") < DIVERGING_ENDS
    ends = colours.scale_colours(colours.SAFE_DIVERGING, 3)
    for deficiency in CVD:  # the middle is neutral and lighter than both ends
        seen = colours.lab(colours.simulate(ends, deficiency))
        assert seen[1, 0] > max(seen[0, 0], seen[2, 0]) + 20


def test_every_diverging_scale_of_the_figures_becomes_one_that_survives_the_simulation():
    used = {"RdBu_r", "RdBu"}  # figures.heatmap's default and its mirror
    for name in used:
        safe = colours.safe_scale(get_colorscale(name))
        assert colours.diverging_separation(safe) >= DIVERGING_ENDS
        # same direction: the low end stays the cool side, the high end the warm one
        low, high = colours.scale_colours(safe, 2)
        original_low = colours.scale_colours(name, 2)[0]
        assert (colours.lab(low)[2] < colours.lab(high)[2]) == (colours.lab(original_low)[2] < 0)


def test_sequential_scales_become_cividis_or_stay_single_hue():
    turbo = colours.safe_scale(get_colorscale("Turbo"))
    assert [c for _, c in turbo] == [c for _, c in get_colorscale("Cividis")]
    blues = get_colorscale("Blues")
    assert colours.safe_scale(blues) == blues
    # cividis reads the same with every deficiency: its lightness rises monotonically under each simulation
    for deficiency in CVD:
        lightness = colours.lab(colours.simulate(colours.scale_colours("Cividis", 21), deficiency))[:, 0]
        assert np.all(np.diff(lightness) > 0)


def test_neighbouring_line_colours_stay_apart_for_every_eye():
    safe = [rgb(c) for c in colours.SAFE_COLORWAY]
    for a, b in zip(safe, safe[1:] + safe[:1], strict=True):
        assert colours.worst_delta_e(a, b) >= NEIGHBOURS
    for a, b in itertools.combinations(safe, 2):
        assert colours.worst_delta_e(a, b) >= ANY_PAIR
    # D3's palette, which the figures name by hand, fails: its orange and green meet for deuteranopia
    d3 = [rgb(c) for c in qualitative.D3]
    assert min(colours.worst_delta_e(a, b) for a, b in zip(d3, d3[1:], strict=False)) < NEIGHBOURS


def test_every_colour_written_in_the_figure_builders_has_a_safe_stand_in():
    """Every colour literal under posviz/figures maps to an Okabe-Ito colour or to a grey dark enough to read."""
    safe = set(colours.SAFE_COLORWAY)
    grey_floor = colours.lab(rgb(colours.SAFE_GREY))[0]
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "posviz" / "figures").glob("*.py"))
    literals = set(re.findall(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b", source)) | set(qualitative.Plotly)
    assert len(literals) > 20
    for literal in literals:
        out = colours.safe_colour(literal)
        parsed = rgb(out)
        is_grey = np.ptp(parsed) < 0.1
        assert out in safe or (is_grey and colours.lab(parsed)[0] <= grey_floor + 1e-9), (literal, out)
    assert colours.safe_colour("rgba(214,39,40,0.12)") == "rgba(213, 94, 0, 0.12)"  # vermillion, same alpha
    assert colours.contrast_ratio(rgb(colours.SAFE_GREY)) >= 4.5


def test_the_family_colours_of_compare_stay_apart_in_the_safe_mode():
    fig = compare.panels(
        [("y", [compare.Series(f, f, np.arange(3.0), np.arange(3.0)) for f in compare.FAMILY_COLOURS])],
        title="t",
        x_title="x",
    )
    before = [trace["line"]["color"] for trace in fig.to_dict()["data"]]
    after = [trace["line"]["color"] for trace in screen.restyle(fig.to_dict(), large=False, safe=True)["data"]]
    assert len(set(after)) == len(after) == 7
    worst = min(colours.worst_delta_e(rgb(a), rgb(b)) for a, b in itertools.combinations(after, 2))
    assert worst >= ANY_PAIR
    assert min(colours.worst_delta_e(rgb(a), rgb(b)) for a, b in itertools.combinations(before, 2)) < ANY_PAIR


def _png(uri: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))


def test_a_palette_image_is_repainted_cell_for_cell():
    matrix = np.random.default_rng(2).uniform(-1, 1, size=(400, 300))
    matrix[5, 7] = np.nan  # a blank cell stays transparent
    fig = figures.heatmap(matrix, title="t", x_title="x", y_title="y").to_dict()
    safe = screen.restyle(fig, large=False, safe=True)
    old, new = _png(fig["data"][0]["source"]), _png(safe["data"][0]["source"])
    np.testing.assert_array_equal(np.asarray(old), np.asarray(new))  # the same palette indices
    expected = sample_colorscale(get_colorscale(colours.SAFE_DIVERGING + "_r"), np.linspace(0, 1, 255), "rgb")
    palette = np.asarray(new.getpalette()[: 3 * 255]).reshape(-1, 3)
    want = np.array([[float(v) for v in s[4:-1].split(",")] for s in expected])
    np.testing.assert_allclose(palette, want, atol=0.51)
    assert new.info["transparency"] == 255 and np.asarray(new)[5, 7] == 255
    assert safe["data"][1]["marker"]["colorscale"] == colours.safe_scale(fig["data"][1]["marker"]["colorscale"])
    new.load()  # the rewritten file is a valid PNG: its chunks' checksums hold


def test_presentation_type_leaves_the_shared_figure_alone_and_sizes_every_text():
    fig = compare.panels(
        [("y", [compare.Series("rope", "a", np.arange(3.0), np.arange(3.0))])],
        title="t<br><sup>note</sup>",
        x_title="x",
        notes={0: "a note"},
        marker=1.0,
        marker_text="here",
    )
    original = fig.to_dict()
    frozen = copy.deepcopy(original)
    large = screen.restyle(original, large=True, safe=True)
    assert json.dumps(original, sort_keys=True, default=str) == json.dumps(frozen, sort_keys=True, default=str)
    layout = large["layout"]
    assert layout["font"]["size"] == screen.FONT_SIZE and layout["title"]["font"]["size"] * 0.7 >= 18
    assert layout["hoverlabel"]["font"]["size"] >= 18 and layout["uniformtext"]["minsize"] >= 18
    assert layout["height"] >= screen.MIN_HEIGHT
    sizes = list(font_sizes(large))
    assert sizes and min(sizes) >= 18
    assert any(a["font"]["size"] >= 18 for a in layout["annotations"])
    assert min(font_sizes(original)) < 18  # the annotations were 12 px before
    for axis in (k for k in layout if k.startswith(("xaxis", "yaxis"))):
        assert layout[axis]["tickfont"]["size"] >= 18 and layout[axis]["title"]["font"]["size"] >= 18


@pytest.mark.parametrize(("low", "high", "axis"), [(-17.3, 0.07, "yaxis"), (-3, 0, "yaxis"), (-12, 2, "xaxis")])
def test_a_log_axis_keeps_its_labels_apart_at_presentation_size(low, high, axis):
    """A log axis labelled at every power of ten is labelled at every k-th one on a projector, k the smallest that
    leaves two label heights between labels on the plot's height (four on an x axis's assumed 900 px)."""
    fig = {"data": [], "layout": {axis: {"type": "log", "dtick": 1, "range": [low, high]}}}
    out = screen.restyle(fig, large=True, safe=False)["layout"]
    decades, tick = high - low, out[axis]["tickfont"]["size"]
    length = out["height"] - 200 if axis == "yaxis" else 900
    room = (2 if axis == "yaxis" else 4) * tick
    k = out[axis]["dtick"]
    assert length / (decades / k) >= room  # the labels are at least ``room`` apart
    assert k == 1 or length / (decades / (k - 1)) < room  # and no sparser than that needs
    assert fig["layout"][axis]["dtick"] == 1  # the shared figure keeps its own ticks


@pytest.mark.parametrize(("count", "height", "below"), [(8, 360, True), (8, 540, False), (3, 360, False)])
def test_a_legend_too_tall_for_the_projector_goes_under_the_plot(count, height, below):
    """At presentation type a legend entry is about 30 px: eight of them beside a figure cut to the first screen's
    360 px would scroll, so they go under the plot, in a figure no taller; a legend that fits stays beside it."""
    fig = figures.base.lines(
        np.arange(10), {f"head {h}": np.arange(10) * h for h in range(count)}, title="t", x_title="x", y_title="y"
    )
    before = screen.restyle(fig.to_dict(), large=True, safe=False)
    layout = screen.shorter(before, height)["layout"]
    assert before["layout"]["legend"].get("orientation") != "h"  # the figure it was made from is left alone
    margin = layout["margin"]
    assert layout["height"] == max(min(height, before["layout"]["height"]), margin["t"] + margin["b"] + screen.MIN_PLOT)
    assert (layout["legend"].get("orientation") == "h") is below
    if below:
        assert layout["legend"]["y"] <= 0 and layout["legend"]["yanchor"] == "bottom"
        assert margin["b"] >= before["layout"]["margin"]["b"] + screen.LEGEND_ENTRY
        assert count * screen.LEGEND_ENTRY > height - margin["t"] - before["layout"]["margin"]["b"]
    else:
        assert count * screen.LEGEND_ENTRY <= layout["height"] - margin["t"] - margin["b"]


def test_a_legend_of_many_entries_goes_under_a_projector_figure_that_grows_to_hold_it():
    fig = figures.base.lines(
        np.arange(10), {f"h{h}": np.arange(10) * h for h in range(20)}, title="t", x_title="x", y_title="y"
    )
    layout = screen.restyle(fig.to_dict(), large=True, safe=False)["layout"]
    assert layout["legend"]["orientation"] == "h" and layout["height"] > screen.MIN_HEIGHT


def test_a_title_too_wide_for_the_projector_is_broken_in_two_at_a_space_near_its_middle():
    long = "θ′ / θ of every pair against the default base 10,000 (head_dim 128): article 003's configs as read"
    fig = figures.base.lines(np.arange(4), {"a": np.arange(4)}, title=long, x_title="x", y_title="y")
    layout = screen.restyle(fig.to_dict(), large=True, safe=False)["layout"]
    first, second = layout["title"]["text"].split("<br>")
    assert f"{first} {second}" == long and abs(len(first) - len(second)) < 12
    assert max(screen.text_width(part, screen.TITLE_SIZE) for part in (first, second)) <= screen.TITLE_WIDTH
    assert layout["margin"]["t"] >= 110  # room for the second line
    short = figures.base.lines(np.arange(4), {"a": np.arange(4)}, title="Short", x_title="x", y_title="y")
    assert screen.restyle(short.to_dict(), large=True, safe=False)["layout"]["title"]["text"] == "Short"


def test_a_legend_under_the_plot_gets_the_rows_its_presentation_type_fills():
    """A legend its figure put under the plot for 13 px type fills more rows at presentation type: the bottom margin
    holds the x axis and every row (counted as plotly lays them out), and the plot keeps its height."""
    names = [f"a rather long legend entry number {i}" for i in range(4)]
    fig = figures.base.lines(np.arange(4), {n: np.arange(4) for n in names}, title="t", x_title="x", y_title="y")
    normal = fig.to_dict()["layout"]
    layout = screen.restyle(fig.to_dict(), large=True, safe=False)["layout"]
    rows = screen.legend_rows(names, screen.FONT_SIZE, screen.LEGEND_ROW_WIDTH)
    # the larger type needs more room than the figure made for it
    assert rows * screen.LEGEND_ENTRY > figures.base.legend_rows(names) * figures.base.LEGEND_ROW
    assert layout["margin"]["b"] >= screen.X_AXIS_ROOM + rows * screen.LEGEND_ENTRY
    assert layout["height"] - layout["margin"]["b"] == max(normal["height"], screen.MIN_HEIGHT) - normal["margin"]["b"]


def test_a_figure_cut_to_the_first_screen_stays_as_tall_as_its_y_axis_title_is_long():
    y_title = "θ′ / θ of the pair (against base 10,000, the default of every model here)"
    fig = figures.base.lines(np.arange(4), {"a": np.arange(4)}, title="t", x_title="x", y_title=y_title)
    layout = screen.shorter(screen.restyle(fig.to_dict(), large=True, safe=False), 300)["layout"]
    plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert plot >= screen.text_width(y_title, screen.FONT_SIZE) > screen.MIN_PLOT


def test_a_log_axis_without_a_step_of_its_own_is_labelled_at_two_and_five_on_a_projector():
    from posviz.figures import claims

    fig = claims.series({"a": (np.arange(64), 0.9 ** np.arange(64))}, title="t", x_title="x", y_title="y", log_y=True)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick is None  # plotly labels every digit
    layout = screen.restyle(fig.to_dict(), large=True, safe=False)["layout"]
    assert layout["yaxis"]["dtick"] == "D2"
    assert "dtick" not in fig.to_dict()["layout"]["yaxis"]  # the shared figure keeps its own
