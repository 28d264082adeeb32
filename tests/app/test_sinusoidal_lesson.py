"""The Sinusoidal page's lessons: every chart holds the core's numbers (and closed forms where they exist) for the
default view and for a view given by the URL, in both languages; nonsense in the URL falls back cleanly."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz import analysis
from posviz.encodings import sinusoidal as sin
from posviz.figures import block_mean
from posviz.figures import heatmap as heatmap_figure
from posviz.lessons import precision
from posviz.lessons import sinusoidal as sinlesson
from posviz.ui import cache

from ._support import (
    as_array,
    assert_clean,
    assert_matrix,
    chart,
    charts,
    charts_by_key,
    from_catalog,
    heatmap_z,
    image_rgba,
    open_page,
    sinusoidal_formula,
    sinusoidal_similarity_formula,
    title,
    tr,
    visit_tabs,
)

TABS = ["table", "distance", "shift", "frequencies", "projection", "extrapolation", "layout", "precision", "norms"]

#: The charts each tab draws, by the catalog keys of their titles (the shift tab draws none for an odd d; the
#: projection's title names its method).
LAYOUT = {
    "table": ("sinusoidal.table", "figure.similarity"),
    "distance": ("sinusoidal.offset", "sinusoidal.spread"),
    "shift": ("sinusoidal.shift",),
    "frequencies": ("sinusoidal.wavelength", "sinusoidal.base"),
    "projection": ("sinusoidal.proj.title.{proj}",),
    "extrapolation": ("sinusoidal.extra", "sinusoidal.excess"),
    "layout": ("sinusoidal.layout",),
    "precision": ("sinusoidal.precision.map", "sinusoidal.precision"),
    "norms": ("sinusoidal.norms",),
}
NOTICES = [
    "sinusoidal.table.notice",
    "sinusoidal.similarity.notice",
    "sinusoidal.offset.notice",
    "sinusoidal.shift.notice",
    "sinusoidal.base.notice",
    "sinusoidal.proj.notice.pca",
    "sinusoidal.excess.notice",
    "sinusoidal.layout.notice",
    "sinusoidal.precision.map.notice",
    "sinusoidal.norms.notice",
]


def visit(query: dict | None = None, lang: str = "en"):
    """The page opened with ``query`` and every tab visited in turn."""
    at = open_page("sinusoidal", query=query, lang=lang)
    return at, visit_tabs(at, "sinusoidal", TABS, lang)


def assert_view_clean(view) -> None:
    assert not view.exceptions, view.exceptions
    assert not view.errors, view.errors


def charts_of(view, lang: str = "en", values: dict | None = None) -> dict[str, dict]:
    """The figures of a view over all its tabs by the catalog key of their titles in ``lang``: each tab drew the
    charts of ``LAYOUT`` and no other (``values[key]``: the values a title must be filled with, where given)."""
    values = values or {}
    figs = {}
    for tab, keys in LAYOUT.items():
        keys = [key.format(proj=view.widgets["proj"]) for key in keys]
        if tab == "shift" and view.widgets["d"] % 2:
            keys = []  # no shift matrix for an odd d (the tab says why)
        found = charts_by_key(view.charts[tab], lang, [(key, values.get(key, {})) for key in keys])
        figs |= {key: c.fig for key, c in found.items()}
    return figs


def charts_of_tab(view, tab: str, lang: str = "en") -> dict[str, dict]:
    """The figures of one visited tab by the catalog keys of their titles (``LAYOUT``)."""
    return {key: c.fig for key, c in charts_by_key(view.charts[tab], lang, LAYOUT[tab]).items()}


def trace(fig, name=None) -> dict:
    return fig["data"][0] if name is None else next(tr_ for tr_ in fig["data"] if tr_.get("name") == name)


def xy(tr_) -> tuple[np.ndarray, np.ndarray]:
    return as_array(tr_["x"]), as_array(tr_["y"])


def shape_positions(fig, axis: str) -> list[float]:
    return [s[f"{axis}0"] for s in fig["layout"].get("shapes", [])]


def check_view(view, *, n, d, base, layout, k, train, span, dtype, lang="en"):
    """Every chart against the core, for the given controls."""
    figs = charts_of(view, lang)
    table = posviz.sinusoidal(n, d, base=base, layout=layout)

    # the two maps, where drawn cell for cell (a larger similarity matrix is drawn as an image of block means)
    exact = {key: not figs[key]["layout"]["meta"]["downsampled"] for key in ("sinusoidal.table", "figure.similarity")}
    assert exact["sinusoidal.table"]
    assert_matrix(heatmap_z(figs["sinusoidal.table"]), table, what="table vs core")
    if d % 2 == 0:  # PE[p, 2k] = sin(p w_k), PE[p, 2k + 1] = cos(p w_k) (or sin | cos halves)
        assert_matrix(heatmap_z(figs["sinusoidal.table"]), sinusoidal_formula(n, d, base, layout), what="formula")
    if exact["figure.similarity"] and d % 2 == 0:
        expected = sinusoidal_similarity_formula(n, d, base)
        assert_matrix(heatmap_z(figs["figure.similarity"]), expected, atol=1e-5, what="similarity formula")

    offsets, dot, cosine = analysis.strided_offset_profile(table)
    x, y = xy(trace(figs["sinusoidal.offset"], tr(lang, "sinusoidal.offset.dot")))
    np.testing.assert_array_equal(x, offsets)
    omega = base ** (-np.arange(0, d, 2) / d)
    np.testing.assert_allclose(y, dot, atol=1e-12)
    if d % 2 == 0:  # sum_i cos(k w_i)
        np.testing.assert_allclose(y, np.cos(offsets[:, None] * omega).sum(axis=1), atol=1e-9)
    np.testing.assert_allclose(xy(trace(figs["sinusoidal.offset"], tr(lang, "sinusoidal.offset.cos")))[1], cosine)

    spread = figs["sinusoidal.spread"]
    lags, dot_spread, cos_spread = analysis.lag_spread(table)
    _, _, random_spread = analysis.lag_spread(posviz.learned_init(len(lags) + 2, d, std=0.02, seed=0))
    floored = np.maximum(dot_spread, 1e-17)  # spreads of exactly 0 lie on the log axis's floor
    np.testing.assert_allclose(xy(trace(spread, tr(lang, "sinusoidal.spread.dot")))[1], floored, atol=1e-15)
    np.testing.assert_allclose(xy(trace(spread, tr(lang, "sinusoidal.spread.random")))[1], random_spread)
    if d % 2 == 0:
        assert np.nanmax(xy(trace(spread, tr(lang, "sinusoidal.spread.cos")))[1]) < 1e-10
    assert np.nanmedian(xy(trace(spread, tr(lang, "sinusoidal.spread.random")))[1]) > 0.1

    if d % 2 == 0:
        assert_matrix(heatmap_z(figs["sinusoidal.shift"]), posviz.shift_matrix(d, k, base=base, layout=layout))
        residual = sinlesson.shift_residual(table, k, base=base, layout=layout)
        assert residual < 1e-11
        text = tr(lang, "sinusoidal.shift.residual", k=k, n=n, residual=f"{residual:.1e}")
        assert text in view.markdown

    wave = figs["sinusoidal.wavelength"]
    fast, slow = (xy(trace(wave, tr(lang, f"sinusoidal.wavelength.{s}"))) for s in ("fast", "slow"))
    expected = 2 * np.pi * base ** (np.arange(0, d, 2) / d)
    np.testing.assert_allclose(fast[1], expected[fast[0].astype(int)], rtol=1e-6)
    np.testing.assert_allclose(slow[1], expected[slow[0].astype(int)], rtol=1e-6)
    assert np.all(fast[1] <= n) and np.all(slow[1] > n) and len(fast[0]) + len(slow[0]) == len(expected)
    assert list(xy(trace(wave, tr(lang, "sinusoidal.wavelength.context", n=n)))[1]) == [n, n]

    bases = list(dict.fromkeys((100.0, 10_000.0, 1_000_000.0, base)))
    offsets, similarity = sinlesson.origin_similarity(n, d, tuple(bases))
    lines = figs["sinusoidal.base"]["data"]
    assert len(lines) == len(bases)
    for line, expected in zip(lines, similarity, strict=True):
        np.testing.assert_array_equal(as_array(line["x"]), offsets)
        np.testing.assert_allclose(as_array(line["y"]), expected, atol=1e-12)

    positions, coords = analysis.project_positions(table, "pca", 2048)
    points = figs["sinusoidal.proj.title.pca"]["data"][1]
    np.testing.assert_allclose(np.c_[as_array(points["x"]), as_array(points["y"])], coords, atol=1e-9)
    np.testing.assert_array_equal(as_array(points["marker"]["color"]), positions)

    share, excess = analysis.beyond_training(table, train)
    np.testing.assert_allclose(xy(trace(figs["sinusoidal.extra"]))[1], share)
    assert shape_positions(figs["sinusoidal.extra"], "x") == ([train] if train < n else [])
    np.testing.assert_allclose(as_array(trace(figs["sinusoidal.excess"])["y"]), excess)

    np.testing.assert_array_equal(xy(trace(figs["sinusoidal.layout"]))[1], sin.layout_permutation(d))

    results = {dt: precision.pair_errors(span, d, base=base, dtype=dt) for dt in precision.DTYPES}
    error_map = figs["sinusoidal.precision.map"]
    assert error_map["layout"]["meta"]["source_shape"] == list(results[dtype][1].shape)
    if results[dtype][1].size <= 256 * 256:
        assert_matrix(heatmap_z(error_map), results[dtype][1], what="error map")
    *lines, floor = figs["sinusoidal.precision"]["data"]
    floor_y = as_array(floor["y"])
    assert floor["name"] == tr(lang, "figure.floor", floor="1e-12") and list(floor_y) == [1e-12, 1e-12]
    for line, dt in zip(lines, precision.DTYPES, strict=True):
        assert line["name"] == dt
        np.testing.assert_array_equal(as_array(line["x"]), results[dt][0])
        # every position is drawn, an exact zero (position 0) on the axis floor instead of vanishing from the log axis
        np.testing.assert_allclose(as_array(line["y"]), np.maximum(results[dt][2], 1e-12), rtol=1e-12)
    assert (
        results["float16"][2][0] == 0.0
        and np.log10(1e-12) > figs["sinusoidal.precision"]["layout"]["yaxis"]["range"][0]
    )
    marks = [p for p in (257, 2049, 20_000) if p <= span]
    assert shape_positions(figs["sinusoidal.precision"], "x") == marks

    norms = figs["sinusoidal.norms"]
    measured = xy(trace(norms, tr(lang, "sinusoidal.norms.measured")))[1]
    np.testing.assert_allclose(measured, posviz.row_norms(table))
    if d % 2 == 0:
        np.testing.assert_allclose(measured, np.sqrt(d / 2), rtol=1e-12)
    assert shape_positions(norms, "y") == [pytest.approx(np.sqrt(d))]


DEFAULTS = {
    "n": 128,
    "d": 128,
    "base": 10000.0,
    "layout": "interleaved",
    "k": 1,
    "train": 64,
    "span": posviz.MAX_POSITIONS,
    "dtype": "float16",
}


@pytest.fixture(scope="module")
def default_tabs():
    """The default view in each language with every tab visited, shared by the tests of this module."""
    views = {}

    def get(lang: str = "en"):
        if lang not in views:
            views[lang] = visit(lang=lang)
        return views[lang]

    return get


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_default_view_holds_the_core_numbers(default_tabs, lang):
    at, view = default_tabs(lang)
    assert_view_clean(view)
    check_view(view, lang=lang, **DEFAULTS)
    values = {
        "sinusoidal.shift": {"k": 1},
        "sinusoidal.excess": {"train": 64},
        "sinusoidal.precision.map": {"dtype": "float16"},
    }
    charts_of(view, lang, values)  # each tab's charts, titled in the language with the default view's values
    untold = [c.title for c in view.all_charts() if not (c.notice and from_catalog(c.notice, lang))]
    assert not untold, f"charts without a caption under them: {untold}"
    for key in NOTICES:
        assert tr(lang, key) in view.captions, key
    for key in ("sinusoidal.spread.notice", "sinusoidal.extra.notice"):
        assert tr(lang, key) in view.captions, key
    longest = 2 * np.pi * 10000.0 ** (126 / 128)  # the slowest pair of d = 128: 2 pi base^((d - 2) / d), not 2 pi base
    assert tr(lang, "sinusoidal.wavelength.notice", longest=f"{longest:,.0f}") in view.captions
    _, _, worst32 = precision.pair_errors(posviz.MAX_POSITIONS, 128, dtype="float32")
    assert worst32.max() > 1e-3  # the sentence "float32 stays below about 1e-3" was not true at this span
    float32 = f"{worst32.max():.1e}"
    assert tr(lang, "sinusoidal.precision.notice", span=f"{posviz.MAX_POSITIONS:,}", float32=float32) in view.captions
    assert [tab.label for tab in at.tabs] == [tr(lang, f"sinusoidal.tab.{name}") for name in TABS]


def test_only_the_open_tab_computes_and_the_url_names_it():
    at = open_page("sinusoidal")
    charts_by_key(charts(at), "en", LAYOUT["table"])
    assert "tab" not in at.query_params  # the first tab is the default, left out of the link
    at = open_page("sinusoidal", query={"tab": "norms", "lang": "zh"})
    charts_by_key(charts(at), "zh", LAYOUT["norms"])
    assert at.query_params["tab"] == "norms"  # the code, not the Chinese label
    at.session_state["lang"] = "en"
    at.run()
    charts_by_key(charts(at), "en", LAYOUT["norms"])  # same tab in the other language
    at = open_page("sinusoidal", query={"tab": "nonsense"})
    assert_clean(at)
    charts_by_key(charts(at), "en", LAYOUT["table"])  # the first tab


def test_default_view_checks_the_claims(default_tabs):
    """The norm claim (d = 128: 8, not sqrt(128)) and the precision claim, as the page states them."""
    _, view = default_tabs()
    texts = view.markdown
    assert tr("en", "sinusoidal.norms.check", d=128, measured="8", claim=f"{128**0.5:.4g}") in texts
    statements = next(m for m in texts if m.startswith("- **float16**"))
    for dt in precision.DTYPES:
        positions, _, worst = precision.pair_errors(posviz.MAX_POSITIONS, 128, dtype=dt)
        broken = precision.breakdown_position(positions, worst)
        merged = f"{precision.first_merged_position(dt):,}"
        if dt == "float32":
            assert broken is None
            line = tr(
                "en",
                "sinusoidal.precision.fine",
                dtype=dt,
                span=f"{posviz.MAX_POSITIONS:,}",
                error=f"{worst.max():.1e}",
                merged=merged,
            )
        else:
            assert broken is not None and broken < 2049
            line = tr("en", "sinusoidal.precision.broken", dtype=dt, position=f"{broken:,}", merged=merged)
        assert line in statements


URL = {
    "n": "300",
    "d": "16",
    "base": "100",
    "layout": "halves",
    "k": "5",
    "train": "100",
    "dtype": "bfloat16",
    "span": "500",
}


def test_url_sets_every_control_and_the_charts_follow():
    at, view = visit(URL)
    assert_view_clean(view)
    shown = {key: view.widgets[key] for key in URL}
    assert shown == {
        "n": 300,
        "d": 16,
        "base": 100,
        "layout": "halves",
        "k": 5,
        "train": 100,
        "dtype": "bfloat16",
        "span": 500,
    }
    check_view(view, n=300, d=16, base=100.0, layout="halves", k=5, train=100, span=500, dtype="bfloat16")
    assert title(charts_of(view)["sinusoidal.precision.map"]) == tr("en", "sinusoidal.precision.map", dtype="bfloat16")
    at.session_state["tab"] = tr("en", "sinusoidal.tab.precision")
    at.run()
    at.radio(key="dtype").set_value("float32").run()
    assert at.query_params.get("dtype") == "float32" and at.query_params.get("tab") == "precision"
    error_map = chart(charts(at), "en", "sinusoidal.precision.map", dtype="float32").fig
    assert_matrix(heatmap_z(error_map), precision.pair_errors(500, 16, base=100.0, dtype="float32")[1])


def test_url_in_chinese():
    _, view = visit({**URL, "lang": "zh"}, lang="zh")
    assert_view_clean(view)
    figs = charts_of(view, "zh")
    assert title(figs["sinusoidal.shift"]) == tr("zh", "sinusoidal.shift", k=5)
    assert title(figs["sinusoidal.extra"]) == tr("zh", "sinusoidal.extra")
    slow = int(sinlesson.slow_pairs(16, 300, base=100.0).sum())
    assert tr("zh", "sinusoidal.wavelength.count", slow=slow, pairs=8, n=300) in view.markdown


def test_odd_width_explains_the_missing_shift_matrix():
    _, view = visit({"d": "7"})
    assert_view_clean(view)
    assert view.warnings == [tr("en", "sinusoidal.shift.odd", d=7)]
    check_view(view, **{**DEFAULTS, "d": 7})


def test_shift_beyond_the_table_is_an_error_in_its_tab_only():
    _, view = visit({"n": "10", "k": "20"})
    assert not view.exceptions
    assert len(view.errors) == 1 and "k = 20" in view.errors[0]
    figs = charts_of(view)  # every chart is drawn: M_20 exists, only its residual over 10 rows does not
    assert_matrix(heatmap_z(figs["sinusoidal.shift"]), posviz.shift_matrix(128, 20))


def test_large_table_is_subsampled_and_says_so():
    _, view = visit({"n": "3000", "d": "8", "span": "3000"})
    assert_view_clean(view)
    figs = charts_of(view)
    points = figs["sinusoidal.proj.title.pca"]["data"][1]
    np.testing.assert_array_equal(as_array(points["marker"]["color"]), posviz.evenly_spaced(3000, 2048))
    assert as_array(trace(figs["sinusoidal.offset"])["x"])[1] == 1  # 3000 <= 4096 rows: every offset
    assert as_array(trace(figs["sinusoidal.spread"])["x"])[0] == 3  # stride ceil(3000 / 1024)
    assert tr("en", "sinusoidal.subsampled", shown=2048, n=3000) in view.markdown
    assert tr("en", "sinusoidal.subsampled", shown=1024, n=3000) in view.markdown


def test_tsne_projection_is_the_cores():
    at = open_page("sinusoidal", query={"n": "30", "d": "8", "proj": "tsne", "tab": "projection"})
    assert_clean(at)
    assert at.radio(key="proj").value == "tsne" and at.query_params.get("proj") == "tsne"
    fig = chart(charts(at), "en", "sinusoidal.proj.title.tsne").fig
    coords = posviz.project(posviz.sinusoidal(30, 8), "tsne")
    np.testing.assert_allclose(np.c_[as_array(fig["data"][1]["x"]), as_array(fig["data"][1]["y"])], coords, atol=1e-4)


NONSENSE = {"k": "abc", "train": "-3", "proj": "umap", "dtype": "float8", "span": "1e9", "n": "40000"}


def test_nonsense_in_the_url_falls_back():
    _, view = visit(NONSENSE)
    assert_view_clean(view)
    shown = {key: view.widgets[key] for key in NONSENSE}
    assert shown == {"k": 1, "train": 64, "proj": "pca", "dtype": "float16", "span": posviz.MAX_POSITIONS, "n": 128}
    check_view(view, **DEFAULTS)


def built_tables(n: int, d: int) -> list:
    """Cached sinusoidal tables of n x d, whatever their other parameters."""
    return [
        params for params in cache.held_tables("sinusoidal") if (params["n_positions"], params["d_model"]) == (n, d)
    ]


def test_a_table_too_big_to_export_is_drawn_from_closed_form_block_means_without_building_it():
    n, d = 2101, 2000  # 4.2 M cells: more than a CSV holds cell by cell, so shown and exported as block means
    at = open_page("sinusoidal", query={"n": str(n), "d": str(d), "base": "100"})
    assert_clean(at)
    drawn = charts_by_key(charts(at), "en", LAYOUT["table"])
    table_fig, similarity_fig = (drawn[key].fig for key in LAYOUT["table"])
    assert table_fig["layout"]["meta"] == {"source_shape": [n, d], "downsampled": True, "shape": [1024, 1024]}
    assert tr("en", "figure.downsampled", src=f"{n}×{d}", dst="1024×1024") in title(table_fig)
    table = posviz.sinusoidal(n, d, base=100.0)
    expected = heatmap_figure(table, title="", x_title="", y_title="")  # block means of the built table
    same = image_rgba(table_fig) == image_rgba(expected.to_dict())
    assert same.all(axis=2).mean() > 0.999  # a colour level apart at most where rounding crosses a level
    scale = table_fig["data"][1]["marker"]
    reach = np.abs(block_mean(table)).max()
    assert scale["cmin"] == pytest.approx(-reach, abs=1e-12) and scale["cmax"] == pytest.approx(reach, abs=1e-12)
    similarity = posviz.cosine_similarity_matrix(table[posviz.evenly_spaced(n, 1024)])
    expected = heatmap_figure(similarity, title="", x_title="", y_title="", zmin=-1.0, zmax=1.0)
    assert similarity_fig["data"][0]["source"] == expected.data[0].source  # the same numbers, the same image
    assert not built_tables(n, d), "the table was built"


def test_views_past_4096_positions_use_evenly_spaced_rows_and_say_so():
    n, d, train = 4200, 8, 100
    at = open_page("sinusoidal", query={"n": str(n), "d": str(d), "train": str(train)})
    view = visit_tabs(at, "sinusoidal", ["table", "shift", "extrapolation", "norms"])
    assert_view_clean(view)
    positions = posviz.evenly_spaced(n, 4096)
    table = posviz.sinusoidal(n, d)
    drawn = charts_of_tab(view, "extrapolation")
    extra, bars = drawn["sinusoidal.extra"], drawn["sinusoidal.excess"]
    np.testing.assert_array_equal(as_array(extra["data"][0]["x"]), positions)
    np.testing.assert_array_equal(as_array(extra["data"][0]["y"]), analysis.beyond_training(table, train)[0][positions])
    low, high = table[:train].min(axis=0), table[:train].max(axis=0)  # the training range of every row p < 100
    later = table[positions[positions >= train]]
    np.testing.assert_allclose(
        as_array(bars["data"][0]["y"]), np.maximum(low - later, later - high).clip(min=0).max(axis=0)
    )
    norms = charts_of_tab(view, "norms")["sinusoidal.norms"]
    np.testing.assert_array_equal(as_array(norms["data"][0]["x"]), positions)
    np.testing.assert_allclose(as_array(norms["data"][0]["y"]), posviz.row_norms(table)[positions])
    used = posviz.evenly_spaced(n - 1, 4096)
    misses = [np.linalg.norm(table[p + 1] - posviz.shift_matrix(d, 1) @ table[p]) for p in used]
    residual, count = sinlesson.sampled_shift_residual(n, d, 1)
    assert count == used.size and residual == pytest.approx(max(misses), abs=1e-14)
    sampled = tr("en", "sinusoidal.shift.residual.sampled", k=1, shown=count, n=n - 1, residual=f"{residual:.1e}")
    assert sampled in view.markdown
    assert tr("en", "sinusoidal.subsampled", shown=4096, n=n) in view.markdown
