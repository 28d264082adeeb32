"""posviz.alibi_slopes / posviz.alibi_bias against BLOOM, the paper's reference code and scalar loops.

BLOOM computes the slopes in float32 (``torch.pow`` of a float32 base), so its values carry a relative error
of a few float32 ulps (2^-24 ~ 6e-8 each); rtol 1e-6 bounds that. The paper's reference code, re-typed in the
oracle module, runs in float64 and matches to 1e-12.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)
HEAD_COUNTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 20, 24, 25, 32, 40, 48, 64, 71, 96, 112, 128]


@pytest.mark.parametrize("n_heads", HEAD_COUNTS)
def test_slopes_match_bloom(n_heads):
    got = posviz.alibi_slopes(n_heads)
    assert got.dtype == np.float64
    assert got.shape == (n_heads,)
    np.testing.assert_allclose(got, oracle.bloom_alibi_slopes(n_heads), rtol=1e-6, atol=0)


@pytest.mark.parametrize("n_heads", HEAD_COUNTS)
def test_slopes_match_paper_reference_code(n_heads):
    np.testing.assert_allclose(posviz.alibi_slopes(n_heads), oracle.paper_alibi_slopes(n_heads), rtol=1e-12)


def test_eight_heads_are_exact_powers_of_two():
    np.testing.assert_array_equal(posviz.alibi_slopes(8), [2.0**-k for k in range(1, 9)])


@pytest.mark.parametrize("n_heads", [1, 2, 4, 16, 32, 64, 128])
def test_power_of_two_heads_form_geometric_sequence(n_heads):
    # m_h = 2^(-8h/n), h = 1..n: first slope 2^(-8/n), ratio 2^(-8/n), last slope 2^-8
    slopes = posviz.alibi_slopes(n_heads)
    np.testing.assert_allclose(slopes, [2.0 ** (-8 * h / n_heads) for h in range(1, n_heads + 1)], rtol=1e-14)
    assert slopes[-1] == 2.0**-8


def test_twelve_heads_exact_values():
    # 8 slopes of 8 heads (2^-1 .. 2^-8) then every other slope of 16 heads (2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5)
    expected = [2.0**-k for k in range(1, 9)] + [2.0 ** -(k + 0.5) for k in range(4)]
    np.testing.assert_allclose(posviz.alibi_slopes(12), expected, rtol=1e-15)


@FAST
@given(n_heads=st.integers(1, 256))
def test_slopes_positive_distinct_and_at_most_one(n_heads):
    slopes = posviz.alibi_slopes(n_heads)
    assert np.all(slopes > 0) and np.all(slopes < 1)
    assert len(np.unique(slopes)) == n_heads
    # the non-power-of-two extras are every other slope of the next power of two: all still in [2^-8, 1)
    assert slopes.min() >= 2.0**-8


# ------------------------------------------------------------------------------------------------ bias


def bias_loop(n_heads, q_len, k_len, causal):
    slopes = oracle.paper_alibi_slopes(n_heads)
    out = np.zeros((n_heads, q_len, k_len))
    for h in range(n_heads):
        for i in range(q_len):
            for j in range(k_len):
                if causal:
                    out[h, i, j] = -slopes[h] * (i - j) if j <= i else -math.inf
                else:
                    out[h, i, j] = -slopes[h] * abs(i - j)
    return out


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(
    "n_heads,q_len,k_len", [(1, 1, 1), (4, 6, 6), (12, 9, 9), (3, 5, 8), (6, 8, 3), (8, 16, None), (5, 1, 7)]
)
def test_bias_matches_loop(causal, n_heads, q_len, k_len):
    got = posviz.alibi_bias(n_heads, q_len, k_len, causal=causal)
    expected = bias_loop(n_heads, q_len, q_len if k_len is None else k_len, causal)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(expected))
    finite = np.isfinite(expected)
    assert np.all(np.isfinite(got[finite]))
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-14, atol=0)


def test_causal_is_the_default():
    np.testing.assert_array_equal(posviz.alibi_bias(4, 6), posviz.alibi_bias(4, 6, causal=True))


@pytest.mark.parametrize("n_heads", [1, 3, 8, 12])
def test_causal_rows_match_bloom_up_to_a_row_constant(n_heads):
    """BLOOM adds slope * j (the key index) and lets softmax's shift invariance absorb -slope * i.

    So ours[h, i, j] + slope_h * i == bloom[h, j] on the visible keys j <= i (float32 oracle: atol 1e-6 * L).
    """
    length = 24
    ours = posviz.alibi_bias(n_heads, length, causal=True)
    bloom = oracle.bloom_alibi_rows(n_heads, length)
    slopes = posviz.alibi_slopes(n_heads)
    for h in range(n_heads):
        for i in range(length):
            np.testing.assert_allclose(
                ours[h, i, : i + 1] + slopes[h] * i, bloom[h, : i + 1], rtol=0, atol=1e-6 * length
            )

    # hence the attention probabilities agree
    def softmax(z):
        z = z - z.max(axis=-1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=-1, keepdims=True)

    causal_mask = np.triu(np.ones((length, length), dtype=bool), 1)
    bloom_full = np.where(causal_mask, -np.inf, bloom[:, None, :])
    np.testing.assert_allclose(softmax(ours), softmax(bloom_full), atol=1e-6)


@FAST
@given(n_heads=st.integers(1, 16), q_len=st.integers(1, 30), shift=st.integers(1, 10))
def test_bias_is_translation_invariant_and_noncausal_symmetric(n_heads, q_len, shift):
    big = posviz.alibi_bias(n_heads, q_len + shift, causal=False)
    small = posviz.alibi_bias(n_heads, q_len, causal=False)
    np.testing.assert_array_equal(big[:, shift:, shift:], small)
    np.testing.assert_array_equal(small, np.swapaxes(small, 1, 2))
    # the causal bias equals the symmetric one on and below the diagonal
    causal = posviz.alibi_bias(n_heads, q_len, causal=True)
    lower = np.tril(np.ones((q_len, q_len), dtype=bool))
    np.testing.assert_array_equal(causal[:, lower], small[:, lower])
    assert np.all(np.isneginf(causal[:, ~lower]))
    assert np.all(np.diagonal(small, axis1=1, axis2=2) == 0)


@pytest.mark.parametrize(
    "call,name,value",
    [
        (lambda: posviz.alibi_slopes(0), "n_heads", "0"),
        (lambda: posviz.alibi_slopes(-2), "n_heads", "-2"),
        (lambda: posviz.alibi_slopes(2.5), "n_heads", "2.5"),
        (lambda: posviz.alibi_bias(0, 4), "n_heads", "0"),
        (lambda: posviz.alibi_bias(4, 0), "q_len", "0"),
        (lambda: posviz.alibi_bias(4, 4, -1), "k_len", "-1"),
    ],
)
def test_bad_inputs_raise_value_error_naming_them(call, name, value):
    with pytest.raises(ValueError) as info:
        call()
    assert name in str(info.value)
    assert value in str(info.value)


def test_selected_heads_equal_the_full_bias_and_own_their_memory():
    full = posviz.alibi_bias(12, 9, causal=True)
    some = posviz.alibi_bias(12, 9, causal=True, heads=[0, 7, 11])
    np.testing.assert_array_equal(some, full[[0, 7, 11]])
    shown = posviz.family("alibi").build(n_heads=12, seq_len=9, head=7, causal=True)
    np.testing.assert_array_equal(shown, full[7])
    assert shown.base is None or shown.base.size == shown.size  # not a view of all twelve heads
    with pytest.raises(ValueError, match="between 0 and 11"):
        posviz.alibi_bias(12, 9, heads=[12])


ASSETS = __import__("pathlib").Path(__file__).resolve().parents[2] / "assets"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_alibi_page_counts_heads_from_zero_and_says_so_once(lang):
    """The page numbers heads from 0 (its figures do): its formula is m_h = 2^(-8(h+1)/H) for h = 0 .. H - 1, which
    is BLOOM's slope of head index h; it says the convention once, and no string of the page uses the paper's
    1-based 2^(-8h/n) as a rule of its own."""
    import json
    import re

    text = (ASSETS / "texts" / f"alibi.{lang}.md").read_text(encoding="utf-8")
    assert r"m_h = 2^{-8(h+1)/H}\ \ (h = 0, \dots, H - 1;" in text
    said = {"en": "Heads are numbered from 0 on this page", "zh": "本页的头从 0 开始编号"}[lang]
    assert text.count(said) == 1
    for n in (2, 8, 16, 64):  # the page's formula, evaluated as written, is BLOOM's slope of head index h
        page = 2.0 ** (-8.0 * (np.arange(n) + 1) / n)
        np.testing.assert_allclose(page, oracle.bloom_alibi_slopes(n), rtol=1e-6)
    # the paper's 1-based form appears only in the one remark that names it as the paper's
    assert len(re.findall(r"2\^\{-8h/H\}", text)) == 1
    catalog = json.loads((ASSETS / "i18n" / lang / "alibi.json").read_text(encoding="utf-8"))
    assert not [k for k, v in catalog.items() if re.search(r"8h\s*/", v)]
    assert "2^(−8(h+1)/n)" in catalog["alibi.origin.text"]


def test_texts_give_2_to_the_minus_8k_over_h_for_powers_of_two_only():
    """2^(-8k/h), k = 1 .. h, is Press et al.'s rule only for a power-of-two h: for 12 heads their reference code
    (``oracle.paper_alibi_slopes``) gives the 8 slopes of 8 heads and then 2^(-1/2), 2^(-3/2), 2^(-5/2), 2^(-7/2),
    every other slope of 16 heads. The claim's verdict sentence and notice, and the ALiBi page's article note,
    qualify the rule in both languages and list those slopes."""
    import json

    paper = np.asarray(oracle.paper_alibi_slopes(12))
    assert not np.allclose(paper, 2.0 ** (-8.0 * np.arange(1, 13) / 12))
    np.testing.assert_allclose(paper[:8], 2.0 ** -np.arange(1.0, 9.0), rtol=1e-12)
    np.testing.assert_allclose(paper[8:], 2.0 ** -np.array([0.5, 1.5, 2.5, 3.5]), rtol=1e-12)
    said = {"en": "power", "zh": "2 的幂"}
    for lang in ("en", "zh"):
        claims_text = json.loads((ASSETS / "i18n" / lang / "claims.json").read_text(encoding="utf-8"))
        alibi_text = json.loads((ASSETS / "i18n" / lang / "alibi.json").read_text(encoding="utf-8"))
        wrong = claims_text["claims.alibi.wrong"]
        assert said[lang] in wrong and "2^(−8k/n)" in wrong, lang
        listed = {"en": "2^(−1/2), 2^(−3/2), 2^(−5/2) and 2^(−7/2)", "zh": "2^(−1/2)、2^(−3/2)、2^(−5/2) 和 2^(−7/2)"}
        assert listed[lang] in wrong, lang
        assert said[lang] in claims_text["claims.alibi.notice"], lang
        assert said[lang] in alibi_text["alibi.article.text"], lang
