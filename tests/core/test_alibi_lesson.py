"""The ALiBi lesson's core: where non-power-of-two slopes come from, the article's "2^(-8/h), 2^(-9/h), ..."
against the paper, the softmax of one attention row, the span of a head and the attention mass past the training
length. References are the paper's code (oracle module), scalar loops and closed forms derived here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz
from posviz.encodings import alibi

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)
HEADS = [1, 2, 3, 5, 6, 7, 8, 9, 12, 16, 20, 24, 40, 64, 96]


def power_of_two_slopes(n: int) -> list[float]:
    """2^(-8/n) times itself again and again: the geometric ladder of n heads, by repeated multiplication."""
    start = 2.0 ** (-8.0 / n)
    return [start ** (h + 1) for h in range(n)]


@pytest.mark.parametrize("n_heads", HEADS)
def test_origin_follows_the_paper_construction(n_heads):
    closest = 2 ** math.floor(math.log2(n_heads))
    origin = alibi.alibi_slope_origin(n_heads)
    slopes = np.asarray(oracle.paper_alibi_slopes(n_heads))
    np.testing.assert_array_equal(origin, [0] * closest + [1] * (n_heads - closest))
    np.testing.assert_allclose(slopes[origin == 0], power_of_two_slopes(closest), rtol=1e-12)
    extra = power_of_two_slopes(2 * closest)[0::2][: n_heads - closest]  # paper: get_slopes(2c)[0::2]
    np.testing.assert_allclose(slopes[origin == 1], extra, rtol=1e-12)
    c_set = np.asarray(power_of_two_slopes(closest))
    assert not np.isclose(slopes[origin == 1][:, None], c_set[None, :], rtol=1e-12).any()  # truly new slopes


@pytest.mark.parametrize("n_heads", HEADS)
def test_ladder_of_2c_heads_marks_the_slopes_used(n_heads):
    closest = 2 ** math.floor(math.log2(n_heads))
    ladder, use = alibi.alibi_slope_ladder(n_heads)
    np.testing.assert_allclose(ladder, power_of_two_slopes(2 * closest), rtol=1e-12)
    slopes = np.asarray(oracle.paper_alibi_slopes(n_heads))
    np.testing.assert_allclose(ladder[use == 0], slopes[:closest], rtol=1e-12)
    np.testing.assert_allclose(ladder[use == 1], slopes[closest:], rtol=1e-12)
    assert (use == 2).sum() == 2 * closest - n_heads
    # each extra slope lies geometrically halfway between two neighbouring c-head slopes (or above the first)
    for k in np.flatnonzero(use == 1):
        above = ladder[k - 1] if k > 0 else 1.0
        assert ladder[k] == pytest.approx(math.sqrt(above * ladder[k + 1]), rel=1e-12)


@pytest.mark.parametrize("n_heads", [8, 12, 16])
def test_article_formula_against_the_paper(n_heads):
    article = np.asarray([2.0 ** (-(8 + k) / n_heads) for k in range(n_heads)])  # "2^(-8/h), 2^(-9/h), ..."
    np.testing.assert_allclose(alibi.article_slopes(n_heads), article, rtol=1e-12)
    paper = np.asarray(oracle.paper_alibi_slopes(n_heads))
    agree = alibi.article_slopes_agree(n_heads)
    np.testing.assert_array_equal(agree, np.isclose(article, paper, rtol=1e-12, atol=0))
    if math.log2(n_heads).is_integer():
        # -(8 + k)/n = -8(k + 1)/n only for k = 0: the first head, and no other
        np.testing.assert_array_equal(np.flatnonzero(agree), [0])
    else:
        assert not agree.any()  # 12 heads start from the 8-head slope 1/2, the article from 2^(-8/12)
        assert paper[0] == 0.5 and article[0] == pytest.approx(2 ** (-2 / 3))
    assert article.max() / article.min() < 2.0 <= 2.0**7 <= paper.max() / paper.min()


@FAST
@given(n_heads=st.integers(1, 64), query=st.integers(0, 300), seed=st.one_of(st.none(), st.integers(0, 10**6)))
def test_softmax_row_sums_to_one_and_matches_a_loop(n_heads, query, seed):
    heads = list(range(0, n_heads, max(n_heads // 3, 1)))
    with_bias, without = alibi.alibi_attention_row(n_heads, query, heads=heads, seed=seed)
    assert with_bias.shape == (len(heads), query + 1) and without.shape == (query + 1,)
    np.testing.assert_allclose(with_bias.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(without.sum(), 1.0, rtol=1e-12)
    scores = [0.0] * (query + 1) if seed is None else np.random.default_rng(seed).standard_normal(query + 1)
    slopes = oracle.paper_alibi_slopes(n_heads)
    for row, h in zip(with_bias, heads, strict=True):
        logits = [scores[j] - slopes[h] * (query - j) for j in range(query + 1)]
        top = max(logits)
        weights = [math.exp(v - top) for v in logits]
        np.testing.assert_allclose(row, np.asarray(weights) / sum(weights), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("n_heads", [4, 8, 12])
def test_equal_scores_decay_as_exp_minus_m_distance(n_heads):
    query = 40
    with_bias, without = alibi.alibi_attention_row(n_heads, query)
    np.testing.assert_allclose(without, 1.0 / (query + 1), rtol=1e-12)
    distance = query - np.arange(query + 1)
    slopes = np.asarray(oracle.paper_alibi_slopes(n_heads))
    ratio = with_bias / with_bias[:, -1:]  # relative to the nearest key (j = i)
    np.testing.assert_allclose(ratio, np.exp(-slopes[:, None] * distance[None, :]), rtol=1e-10)


@pytest.mark.parametrize("n_heads", [1, 8, 12, 32])
def test_span_is_where_the_weight_falls_to_one_percent(n_heads):
    span = alibi.alibi_span(n_heads, 0.01)
    slopes = np.asarray(oracle.paper_alibi_slopes(n_heads))
    np.testing.assert_allclose(np.exp(-slopes * span), 0.01, rtol=1e-12)
    np.testing.assert_allclose(span, math.log(100) / slopes, rtol=1e-12)
    # on a long equal-score row, the last key still above 1 % of the nearest is at floor(span)
    row, _ = alibi.alibi_attention_row(n_heads, 4000)
    above = row / row[:, -1:] >= 0.01
    np.testing.assert_array_equal(4000 - np.argmax(above, axis=1), np.minimum(np.floor(span), 4000))


@FAST
@given(
    n_heads=st.integers(1, 24),
    train=st.integers(1, 200),
    lengths=st.lists(st.integers(1, 1200), min_size=1, max_size=4),
)
def test_mass_beyond_training_length_is_the_sum_of_the_far_weights(n_heads, train, lengths):
    mass = alibi.alibi_mass_beyond(n_heads, train, lengths)
    assert mass.shape == (n_heads, len(lengths))
    for k, length in enumerate(lengths):
        row, _ = alibi.alibi_attention_row(n_heads, length - 1)  # last query: distances 0 .. L - 1, d = L - 1 - j
        far = row[:, : max(length - train, 0)].sum(axis=1)  # keys at distance >= train
        np.testing.assert_allclose(mass[:, k], far, rtol=1e-9, atol=1e-15)


def test_bias_is_defined_at_every_distance_and_matches_the_bias_matrix():
    far = alibi.alibi_distance_bias(8, 5000)
    slopes = np.asarray(oracle.paper_alibi_slopes(8))
    np.testing.assert_allclose(far, -slopes[:, None] * np.arange(5001)[None, :], rtol=1e-12)
    last_row = posviz.alibi_bias(8, 300)[:, 299, :]  # query 299 on keys 0 .. 299: distances 299 .. 0
    np.testing.assert_allclose(last_row[:, ::-1], far[:, :300], rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: alibi.alibi_attention_row(8, -1), "-1"),
        (lambda: alibi.alibi_attention_row(8, 3, heads=[8]), "8"),
        (lambda: alibi.alibi_span(8, 1.5), "1.5"),
        (lambda: alibi.alibi_mass_beyond(8, 16, [0, 4]), "[0, 4]"),
        (lambda: alibi.alibi_slope_origin(0), "0"),
    ],
)
def test_bad_arguments_name_the_value(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value)
