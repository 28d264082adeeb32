"""The ALiBi page's views (posviz/ui/views/alibi.py): each kept whole by its settings and the language, its numbers
those of Press et al. (2022) derived here by hand, a refused setting raised and never kept.

The oracle of the slopes is the paper's reference code ``get_slopes``: for n heads a power of two,
m_h = 2^(-8(h + 1)/n), h = 0 .. n - 1; otherwise the closest power of two c below n gives the first c, and the rest
are every other slope of 2c heads (its heads 0, 2, 4, ...).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import streamlit as st

from posviz.ui import cache
from posviz.ui.views import alibi as alibi_views
from tests.core._oracles import paper_alibi_slopes as paper_slopes

from ._support import as_array, assert_matrix, assert_same_items, heatmap_z, held_view_keys, title, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


def largest_power_of_two(n: int) -> int:
    return 2 ** math.floor(math.log2(n))


def ys(fig: dict) -> list[np.ndarray]:
    """The y values of every drawn trace (legend-only traces have x = [None])."""
    drawn = [trace for trace in fig["data"] if not np.isnan(as_array(trace["x"])).all()]
    return [as_array(trace["y"]) for trace in drawn]


def test_the_paper_rule_is_the_closed_form_for_powers_of_two():
    """The oracle itself: for n a power of two, get_slopes is 2^(-8(h + 1)/n)."""
    for n in (1, 2, 8, 16, 64):
        np.testing.assert_allclose(paper_slopes(n), 2.0 ** (-8.0 * (np.arange(n) + 1) / n), rtol=1e-12)
    assert paper_slopes(12)[8:] == pytest.approx([2.0 ** (-8 * (2 * t + 1) / 16) for t in range(4)], rel=1e-12)


# ------------------------------------------------------------------------------------------------------ caching


def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output():
    first = alibi_views.bias(8, 16, 2, True)
    assert alibi_views.bias(8, 16, 2, True) is first
    assert alibi_views.bias(n_heads=8, seq_len=16, head=2, causal=True) is first
    for changed in ((8, 16, 3, True), (8, 16, 2, False), (8, 17, 2, True), (12, 16, 2, True)):
        assert alibi_views.bias(*changed) is not first
    slopes = alibi_views.slopes(8)
    assert alibi_views.slopes(8) is slopes and alibi_views.slopes(9) is not slopes
    row = alibi_views.row(8, 5, None)
    assert alibi_views.row(8, 5, None) is row
    assert alibi_views.row(8, 5, 0) is not row and alibi_views.row(8, 6, None) is not row
    long = alibi_views.long(8, 32)
    assert alibi_views.long(8, 32) is long and alibi_views.long(8, 64) is not long
    article = alibi_views.article((8, 12, 16))
    assert alibi_views.article((8, 12, 16)) is article and alibi_views.article((8, 12)) is not article
    assert alibi_views.ladder(12) is alibi_views.ladder(12) is not alibi_views.ladder(8)
    assert alibi_views.span(12) is alibi_views.span(12) is not alibi_views.span(8)


def test_the_language_is_part_of_the_key():
    english = alibi_views.slopes(12)
    st.session_state["lang"] = "zh"
    chinese = alibi_views.slopes(12)
    assert chinese is not english
    en, zh = english.figure("slopes").fig.to_dict(), chinese.figure("slopes").fig.to_dict()
    assert title(en) == tr("en", "alibi.slopes") and title(zh) == tr("zh", "alibi.slopes") != title(en)
    np.testing.assert_array_equal(as_array(zh["data"][0]["y"]), as_array(en["data"][0]["y"]))


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("slopes", (12,)),
        ("bias", (5, 9, 4, False)),
        ("ladder", (6,)),
        ("article", ((8, 12, 16),)),
        ("row", (12, 7, 3)),
        ("span", (12,)),
        ("long", (12, 16)),
    ],
)
def test_a_view_equals_its_uncached_build(name, settings):
    made = getattr(alibi_views, name)
    assert_same_items(made(*settings), made.uncached(*settings))


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("slopes", (0,)),
        ("slopes", (300,)),
        ("bias", (8, 0, 0, True)),
        ("ladder", (-1,)),
        ("article", ((8, 0),)),
        ("row", (8, -1, None)),
        ("span", (0,)),
        ("long", (8, 0)),
    ],
)
def test_refused_settings_raise_and_are_not_cached(name, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            getattr(alibi_views, name)(*settings)
    assert not held_view_keys()


# ------------------------------------------------------------------------------------------------- the numbers


@pytest.mark.parametrize("n_heads", [1, 5, 8, 12, 64])
def test_slopes_are_the_papers_and_coloured_by_origin(n_heads):
    out = alibi_views.slopes(n_heads)
    shown = out.figure("slopes")
    fig = shown.fig.to_dict()
    expected = paper_slopes(n_heads)
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), expected, rtol=1e-12)
    np.testing.assert_allclose(shown.data["slope"], expected, rtol=1e-12)
    c = largest_power_of_two(n_heads)
    from_2c = np.arange(n_heads) >= c  # the heads past c take slopes of 2c heads
    np.testing.assert_array_equal(shown.data["from_2c_heads"], from_2c)
    colours = np.asarray(fig["data"][0]["marker"]["color"])
    assert len(set(colours[~from_2c])) == 1 and not set(colours[~from_2c]) & set(colours[from_2c])
    legend = [trace["name"] for trace in fig["data"][1:]]
    assert (
        legend
        == [tr("en", "alibi.origin.c", c=c, c2=2 * c), tr("en", "alibi.origin.extra", c=c, c2=2 * c)][
            : 1 + (c != n_heads)
        ]
    )
    assert shown.options == {"variant": "power" if c == n_heads else None}


@pytest.mark.parametrize(
    ("n_heads", "seq_len", "head", "causal"), [(8, 12, 3, True), (12, 10, 11, False), (1, 5, 0, True)]
)
def test_bias_is_minus_the_slope_times_the_distance(n_heads, seq_len, head, causal):
    out = alibi_views.bias(n_heads, seq_len, head, causal)
    shown = out.figure("bias")
    m = paper_slopes(n_heads)[head]
    i, j = np.arange(seq_len)[:, None], np.arange(seq_len)[None, :]
    expected = -m * np.abs(i - j) if not causal else np.where(j > i, -np.inf, -m * (i - j))
    assert_matrix(heatmap_z(shown.fig.to_dict()), expected, what="bias")
    assert title(shown.fig.to_dict()) == tr("en", "alibi.bias", head=head, slope=f"{m:.4g}")
    assert shown.options == {"variant": "causal" if causal else "symmetric", "suffix": f"head{head}"}
    # the data is the family's table itself, held once for every page that draws it
    assert shown.data is cache.family_table(
        "alibi", {"causal": causal, "head": head, "n_heads": n_heads, "seq_len": seq_len}
    )


@pytest.mark.parametrize("n_heads", [6, 8, 12])
def test_ladder_marks_the_rungs_n_heads_use(n_heads):
    shown = alibi_views.ladder(n_heads).figure("ladder")
    c = largest_power_of_two(n_heads)
    rungs = paper_slopes(2 * c)
    odd = set(range(1, 2 * c, 2))  # 2^(-8(2t + 2)/2c) = 2^(-8(t + 1)/c): the c-head slopes
    extra = set(range(0, 2 * (n_heads - c), 2))  # every other slope from rung 0: the n - c extra ones
    groups = [sorted(odd), sorted(extra), sorted(set(range(2 * c)) - odd - extra)]
    drawn = shown.fig.to_dict()["data"]
    assert len(drawn) == sum(bool(g) for g in groups)
    for trace, rung in zip(drawn, [g for g in groups if g], strict=True):
        np.testing.assert_array_equal(as_array(trace["x"]), rung)
        np.testing.assert_allclose(as_array(trace["y"]), [rungs[r] for r in rung], rtol=1e-12)
    assert title(shown.fig.to_dict()) == tr("en", "alibi.ladder", n=n_heads, c=c, c2=2 * c)
    assert shown.options == {"variant": "power" if c == n_heads else None}


def test_article_against_paper_and_the_table_of_agreement():
    out = alibi_views.article((8, 12, 16))
    got = ys(out.figure("article").fig.to_dict())
    for k, n in enumerate((8, 12, 16)):
        np.testing.assert_allclose(got[2 * k], paper_slopes(n), rtol=1e-12)
        np.testing.assert_allclose(got[2 * k + 1], [2.0 ** (-(7 + k1) / n) for k1 in range(1, n + 1)], rtol=1e-12)
    (frame,) = [item for item in out.items if isinstance(item, alibi_views.Frame)]
    columns = frame.columns
    assert columns[tr("en", "alibi.col.heads")] == [8, 12, 16]
    agree = [
        [h for h in range(n) if math.isclose(paper_slopes(n)[h], 2.0 ** (-(8 + h) / n), rel_tol=1e-12)]
        for n in (8, 12, 16)
    ]
    assert agree == [[0], [], [0]]
    assert columns[tr("en", "alibi.article.col.count")] == [1, 0, 1]
    assert columns[tr("en", "alibi.article.col.which")] == [
        tr("en", "alibi.article.which.one", heads="0"),
        tr("en", "alibi.article.which.none"),
        tr("en", "alibi.article.which.one", heads="0"),
    ]
    assert columns[tr("en", "alibi.article.col.article_min")] == [f"{2.0 ** (-(7 + n) / n):.4g}" for n in (8, 12, 16)]
    assert columns[tr("en", "alibi.article.col.paper_min")] == [f"{min(paper_slopes(n)):.4g}" for n in (8, 12, 16)]


def test_agreeing_heads_in_words():
    assert alibi_views.agreeing_heads(np.array([False, False])) == tr("en", "alibi.article.which.none")
    assert alibi_views.agreeing_heads(np.array([False, True, True])) == tr(
        "en", "alibi.article.which.many", heads="1, 2"
    )


@pytest.mark.parametrize(("n_heads", "query", "seed"), [(8, 16, None), (12, 5, 3), (3, 0, None)])
def test_row_is_the_softmax_of_the_biased_scores(n_heads, query, seed):
    shown = alibi_views.row(n_heads, query, seed).figure("row")
    fig = shown.fig.to_dict()
    # four heads evenly spaced from the first to the last
    heads = sorted({round(k * (n_heads - 1) / 3) for k in range(4)}) if n_heads > 4 else list(range(n_heads))
    scores = np.zeros(query + 1) if seed is None else np.random.default_rng(seed).standard_normal(query + 1)
    distance = query - np.arange(query + 1)
    got = ys(fig)
    plain = np.exp(scores) / np.exp(scores).sum()
    np.testing.assert_allclose(got[0], plain, rtol=1e-12)
    slopes = paper_slopes(n_heads)
    for k, h in enumerate(heads):
        weight = np.exp(scores - slopes[h] * distance)
        np.testing.assert_allclose(got[1 + k], weight / weight.sum(), rtol=1e-10)
    assert [trace["name"] for trace in fig["data"]] == [tr("en", "alibi.row.no_bias")] + [
        tr("en", "alibi.head_label", head=h, slope=f"{slopes[h]:.4g}") for h in heads
    ]
    np.testing.assert_array_equal(as_array(fig["data"][0]["x"]), np.arange(query + 1))
    assert shown.options == {"suffix": query}
    assert list(shown.data["key_position"]) == list(range(query + 1))


def test_span_is_ln_100_over_the_slope():
    shown = alibi_views.span(12).figure("span")
    expected = [math.log(100) / m for m in paper_slopes(12)]
    np.testing.assert_allclose(as_array(shown.fig.to_dict()["data"][0]["y"]), expected, rtol=1e-12)
    np.testing.assert_allclose(shown.data["span_1_percent"], expected, rtol=1e-12)


@pytest.mark.parametrize(("n_heads", "train"), [(8, 16), (12, 32)])
def test_far_bias_and_mass_past_the_training_length(n_heads, train):
    out = alibi_views.long(n_heads, train)
    few = sorted({round(k * (n_heads - 1) / 7) for k in range(8)}) if n_heads > 8 else list(range(n_heads))
    slopes = paper_slopes(n_heads)
    far = out.figure("far").fig.to_dict()
    for y, h in zip(ys(far), few, strict=True):
        np.testing.assert_allclose(y, [-slopes[h] * d for d in range(4 * train + 1)], rtol=1e-12, atol=1e-12)
    assert far["layout"]["shapes"][0]["x0"] == train
    mass = out.figure("mass").fig.to_dict()
    lengths = as_array(mass["data"][0]["x"]).astype(int)
    assert lengths[-1] == 8 * train and lengths[0] >= 1 and len(lengths) <= 64
    for y, h in zip(ys(mass), few, strict=True):
        # the last query of L tokens, equal scores: weight e^(-m d) on the key at distance d = 0 .. L - 1
        expected = []
        for length in lengths:
            weights = np.exp(-slopes[h] * np.arange(length))
            expected.append(100.0 * weights[train:].sum() / weights.sum())
        np.testing.assert_allclose(y, expected, rtol=1e-9, atol=1e-12)
    assert title(mass) == tr("en", "alibi.mass", n=train)
    assert [item.key for item in out.items] == ["far", "mass"]
