"""The ALiBi page's lesson figures: their data is the core's for the default view and for a view given by the URL,
in both languages; nonsense in the URL falls back to the defaults."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posviz
from posviz.encodings import alibi

from ._support import TabbedView, as_array, assert_clean, chart, charts, charts_by_key, open_page, title, tr, visit_tabs

URL = {"heads": "12", "q": "5", "scores": "random", "seed": "3", "train": "64"}
TABS = ["bias", "origin", "article", "row", "long"]
#: The charts each tab draws: a name used below -> the catalog key of its title.
LAYOUT = {
    "bias": {"slopes": "alibi.slopes", "bias": "alibi.bias"},
    "origin": {"ladder": "alibi.ladder"},
    "article": {"article": "alibi.article"},
    "row": {"row": "alibi.row", "span": "alibi.span"},
    "long": {"far": "alibi.far", "mass": "alibi.mass"},
}


def lesson_charts(view: TabbedView, lang: str = "en") -> dict[str, dict]:
    """The figures of every tab by name, each found by its title in ``lang``: every tab draws the charts of
    ``LAYOUT`` and no other."""
    figs = {}
    for tab, names in LAYOUT.items():
        found = charts_by_key(view.charts[tab], lang, names.values())
        figs |= {name: found[key].fig for name, key in names.items()}
    return figs


def visit(query: dict | None = None, lang: str = "en", at=None) -> TabbedView:
    """Every tab of the page opened with ``query`` (or of ``at``), first tab first."""
    view = visit_tabs(at or open_page("alibi", query=query, lang=lang), "alibi", TABS, lang)
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    return view


@pytest.fixture(scope="module")
def default_tabs():
    return {lang: visit(lang=lang) for lang in ("en", "zh")}


@pytest.fixture(scope="module")
def url_view():
    return visit(URL)


def ys(fig) -> list[np.ndarray]:
    return [as_array(trace["y"]) for trace in fig["data"] if trace.get("x") != [None]]


def check_lessons(view: TabbedView, *, n_heads, query, seed, train, lang="en"):
    figs = lesson_charts(view, lang)
    slopes, ladder, article, row, span, far, mass = (
        figs[name] for name in ("slopes", "ladder", "article", "row", "span", "far", "mass")
    )
    expected = posviz.alibi_slopes(n_heads)
    np.testing.assert_allclose(as_array(slopes["data"][0]["y"]), expected, rtol=1e-12)
    origin = alibi.alibi_slope_origin(n_heads)
    colours = np.asarray(slopes["data"][0]["marker"]["color"])
    assert len(set(colours[origin == 0])) == 1 and len(set(colours[origin == 1])) <= 1
    assert not set(colours[origin == 0]) & set(colours[origin == 1])  # coloured by origin
    legend = [trace["name"] for trace in slopes["data"][1:]]
    c = largest_power_of_two(n_heads)
    names = [tr(lang, f"alibi.origin.{use}", c=c, c2=2 * c) for use in ("c", "extra")]
    assert legend == names[: len(set(origin))]
    assert f"c = {c}" in legend[0]  # the legend says what c is here

    rungs, use = alibi.alibi_slope_ladder(n_heads)
    for trace, u in zip(ladder["data"], [u for u in (0, 1, 2) if (use == u).any()], strict=True):
        np.testing.assert_allclose(as_array(trace["y"]), rungs[use == u], rtol=1e-12)
        np.testing.assert_array_equal(as_array(trace["x"]), np.flatnonzero(use == u))

    got = ys(article)
    for k, n in enumerate((8, 12, 16)):
        np.testing.assert_allclose(got[2 * k], posviz.alibi_slopes(n), rtol=1e-12)
        np.testing.assert_allclose(got[2 * k + 1], 2.0 ** (-(8 + np.arange(n)) / n), rtol=1e-12)

    heads = posviz.evenly_spaced(n_heads, 4)
    with_bias, without = alibi.alibi_attention_row(n_heads, query, heads=tuple(heads.tolist()), seed=seed)
    got = ys(row)
    np.testing.assert_allclose(got[0], without, rtol=1e-12)
    for k in range(len(heads)):
        np.testing.assert_allclose(got[1 + k], with_bias[k], rtol=1e-12)
        np.testing.assert_allclose(got[1 + k].sum(), 1.0, rtol=1e-9)
    np.testing.assert_array_equal(as_array(row["data"][0]["x"]), np.arange(query + 1))

    np.testing.assert_allclose(as_array(span["data"][0]["y"]), np.log(100) / expected, rtol=1e-12)

    few = posviz.evenly_spaced(n_heads, 8)
    for k, h in enumerate(few):
        np.testing.assert_allclose(ys(far)[k], -expected[h] * np.arange(4 * train + 1), rtol=1e-12, atol=1e-12)
    lengths = as_array(mass["data"][0]["x"]).astype(int)
    assert lengths.min() >= 1 and lengths.max() == 8 * train
    beyond = alibi.alibi_mass_beyond(n_heads, train, tuple(lengths.tolist()))
    for k, h in enumerate(few):
        np.testing.assert_allclose(ys(mass)[k], 100 * beyond[h], rtol=1e-9, atol=1e-300)
        assert (ys(mass)[k][lengths <= train] == 0).all()
    markers = [shape["x0"] for fig in (far, mass) for shape in fig["layout"]["shapes"]]
    assert markers == [train, train]
    assert title(row) == tr(lang, "alibi.row", i=query)
    assert title(mass) == tr(lang, "alibi.mass", n=train)


def test_default_view_lessons(default_tabs):
    view = default_tabs["en"]
    check_lessons(view, n_heads=8, query=16, seed=None, train=512)
    assert tr("en", "alibi.ladder.notice.power") in view.captions
    assert view.subheaders == [tr("en", f"alibi.{code}.header") for code in TABS[1:]]


def test_url_view_lessons(url_view):
    assert {k: url_view.widgets[k] for k in ("heads", "q", "scores", "seed", "train")} == {
        "heads": 12,
        "q": 5,
        "scores": "random",
        "seed": 3,
        "train": 64,
    }
    check_lessons(url_view, n_heads=12, query=5, seed=3, train=64)
    assert tr("en", "alibi.ladder.notice") in url_view.captions


def largest_power_of_two(n: int) -> int:
    """c of the ALiBi paper's get_slopes: 2 ** floor(log2 n), the largest power of two not above n."""
    return 2 ** math.floor(math.log2(n))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_agreement_table_says_how_many_heads_agree_and_which(lang):
    """Paper against the article's 2^(-(8 + k)/n), k = 0 .. n - 1, recomputed here: one column counts the heads
    that agree, the other names them (numbered from 0 like every head on the page), so "0" is never ambiguous."""
    table = open_page("alibi", query={"tab": "article"}, lang=lang).dataframe[0].value
    count = table[tr(lang, "alibi.article.col.count")].tolist()
    which = table[tr(lang, "alibi.article.col.which")].tolist()
    agree = [
        np.flatnonzero(np.isclose(posviz.alibi_slopes(n), 2.0 ** (-(8.0 + np.arange(n)) / n), rtol=1e-12, atol=0))
        for n in (8, 12, 16)
    ]
    assert count == [len(a) for a in agree] == [1, 0, 1]
    assert which == [
        tr(lang, "alibi.article.which.one", heads="0"),
        tr(lang, "alibi.article.which.none"),
        tr(lang, "alibi.article.which.one", heads="0"),
    ]
    assert which[0] != "0" and which[1] != "0" and which[0] != which[1]  # a head and a count never read alike


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("n_heads", [12, 8, 5])
def test_c_is_defined_where_the_slopes_are_drawn(n_heads, lang):
    at = open_page("alibi", query={"heads": str(n_heads)}, lang=lang)
    assert_clean(at)
    c = largest_power_of_two(n_heads)
    slopes = chart(charts(at), lang, "alibi.slopes")
    legend = [trace["name"] for trace in slopes.fig["data"][1:]]
    assert legend[0] == tr(lang, "alibi.origin.c", c=c, c2=2 * c)
    assert f"c = {c}" in legend[0]  # the legend gives this page's c ...
    notice = tr(lang, "alibi.slopes.notice.power" if c == n_heads else "alibi.slopes.notice")
    assert slopes.notice == notice  # the caption under the slopes
    definition = {"en": "largest power of two not above", "zh": "不超过"}[lang]
    assert definition in notice and "2c" in notice  # ... and the caption says what c is and where 2c comes in
    if c != n_heads:
        assert legend[1] == tr(lang, "alibi.origin.extra", c=c, c2=2 * c) and f"2c = {2 * c}" in legend[1]
    else:
        assert "c = n" in notice


def test_chinese_view_has_the_same_numbers(default_tabs):
    en, zh = default_tabs["en"], default_tabs["zh"]
    check_lessons(zh, n_heads=8, query=16, seed=None, train=512, lang="zh")
    drawn = zh.all_charts()
    chart(drawn, "zh", "alibi.ladder", n=8, c=8, c2=16)
    chart(drawn, "zh", "alibi.article")
    in_english = {c.key: c.fig for c in en.all_charts()}
    in_chinese = {c.key: c.fig for c in drawn}
    assert set(in_english) == set(in_chinese)
    for key, a in in_english.items():  # the same chart in both languages holds the same numbers
        b = in_chinese[key]
        for ta, tb in zip(a["data"], b["data"], strict=True):
            if ta.get("y") is not None and ta.get("x") != [None]:
                np.testing.assert_array_equal(as_array(ta["y"]), as_array(tb["y"]))


def test_nonsense_in_the_url_falls_back():
    view = visit({"q": "-4", "scores": "loud", "seed": "x", "train": "7", "tab": "nonsense"})
    assert view.by_tab["bias"]  # an unknown tab opens the first
    assert {k: view.widgets[k] for k in ("q", "scores", "seed", "train")} == {
        "q": 16,
        "scores": "equal",
        "seed": 0,
        "train": 512,
    }
    check_lessons(view, n_heads=8, query=16, seed=None, train=512)


def test_short_sequence_clamps_the_query():
    at = open_page("alibi", query={"len": "40", "q": "30", "tab": "row"})
    assert at.slider(key="q").value == 30
    at.slider(key="len").set_value(10).run()
    assert_clean(at)
    assert at.slider(key="q").value == 9
    check_lessons(visit(at=at), n_heads=8, query=9, seed=None, train=512)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_two_slope_rules_are_named_in_the_page_language(lang):
    at = open_page("alibi", query={"tab": "article"}, lang=lang)
    formula = next(m.value for m in at.latex if "m_k" in m.value)
    for key in ("alibi.article.paper", "alibi.article.article"):
        assert f"\\text{{{tr(lang, key)}: }}" in formula
    if lang == "zh":
        assert "paper" not in formula and "article" not in formula


def above_the_plot(annotation: dict) -> bool:
    """An annotation placed in paper coordinates at or over the top of the plot area, growing upwards from there:
    it covers no point of any curve."""
    y, anchor = annotation.get("y", 0.5), annotation.get("yanchor", "auto")
    return annotation.get("yref") == "paper" and (y > 1 or (y == 1 and anchor == "bottom"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_labels_of_marks_sit_above_the_curves(default_tabs, lang):
    """The training length's label on the far-distance and attention-mass figures is written above the plot area,
    not across the curves under the top of the plot, and the top margin has grown to hold it."""
    from posviz.figures.base import MARK_ROW

    labelled = 0
    for drawn in default_tabs[lang].all_charts():
        for annotation in drawn.fig["layout"].get("annotations", []):
            labelled += 1
            assert above_the_plot(annotation), f"{drawn.title}: {annotation}"
            assert drawn.fig["layout"]["margin"]["t"] >= 70 + MARK_ROW, drawn.fig["layout"]["margin"]
    assert labelled >= 2, "the training length is labelled on the far-distance and attention-mass figures"
