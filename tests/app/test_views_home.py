"""The Home page's views (posviz/ui/views/home.py): cached by their settings and the language, their numbers checked
against one attention head written here from the formula, refused sentences raised and never cached.

The head (Vaswani et al., 2017, equation 1): A = softmax(Q K^T / sqrt(d) + M), outputs A V, with Q = X W_Q, K = X W_K,
V = X W_V; M = 0, or -inf above the diagonal under the causal mask. The demo's data (the hashed token vectors and the
projections) are read from the core; everything computed from them is computed here. Without positions and without
a mask, shuffling the tokens by P shuffles the outputs the same way, Attn(P X) = P Attn(X) (Lee et al., 2019,
lemma 1); the sinusoidal table added by slot, PE[p, 2k] = sin(p w_k), PE[p, 2k + 1] = cos(p w_k), w_k =
10000^(-2k / d) (section 3.5), or the mask alone, breaks it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from posviz.lessons import attention_demo as demo
from posviz.ui import cache
from posviz.ui.views import Figure, Text
from posviz.ui.views import home as home_views

from ._support import as_array, assert_matrix, tr

DOG = ("the", "dog", "bit", "the", "man")
SENTENCE = "the dog bit the man"


pytestmark = pytest.mark.usefixtures("views_in_english")


def view_keys() -> list[tuple]:
    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def permutation(n: int, seed: int) -> list[int]:
    """Slot j of the shuffle holds token order[j]: numpy's permutation drawn from ``seed``, moved on by one slot
    should it leave every token in place (the demo always shows another order)."""
    order = [int(i) for i in np.random.default_rng(seed).permutation(n)]
    return order[-1:] + order[:-1] if order == list(range(n)) else order


def position_table(n: int, d: int) -> np.ndarray:
    pe = np.zeros((n, d))
    for p in range(n):
        for k in range(0, d, 2):
            angle = p / 10000.0 ** (k / d)
            pe[p, k], pe[p, k + 1] = np.sin(angle), np.cos(angle)
    return pe


def head(x: np.ndarray, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """(A, A V) of the demo's head over the rows of ``x``, a softmax per query over the keys it may see."""
    w_q, w_k, w_v = demo.projections()
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    n = len(x)
    weights = np.zeros((n, n))
    for i in range(n):
        seen = range(i + 1) if causal else range(n)
        scores = np.array([q[i] @ k[j] / np.sqrt(q.shape[1]) for j in seen])
        e = np.exp(scores - scores.max())
        weights[i, : len(e)] = e / e.sum()
    return weights, weights @ v


def derived(tokens, seed: int, positions: bool, causal: bool) -> dict:
    """Everything the two views show, from the head above: the weights as written and shuffled, the shuffle's put
    back in the sentence's order, and each token's output distance between the orders."""
    n = len(tokens)
    order = permutation(n, seed)
    slot_of = {token: slot for slot, token in enumerate(order)}
    x = demo.token_embeddings(tokens)
    x_shuffled = x[order]
    if positions:
        pe = position_table(n, x.shape[1])
        x, x_shuffled = x + pe, x_shuffled + pe
    weights, outputs = head(x, causal)
    shuffled_weights, shuffled_outputs = head(x_shuffled, causal)
    back = np.array([[shuffled_weights[slot_of[i], slot_of[j]] for j in range(n)] for i in range(n)])
    moved = np.array([np.linalg.norm(outputs[i] - shuffled_outputs[slot_of[i]]) for i in range(n)])
    return {
        "order": order,
        "shuffled_tokens": [tokens[i] for i in order],
        "weights": weights,
        "shuffled_weights": shuffled_weights,
        "back": back,
        "outputs": outputs,
        "shuffled_outputs": shuffled_outputs,
        "distance": moved,
        "norm": np.linalg.norm(outputs, axis=1),
    }


def panels(fig: dict) -> tuple[np.ndarray, np.ndarray]:
    left, right = (trace for trace in fig["data"] if trace["type"] == "heatmap")
    return as_array(left["z"]), as_array(right["z"])


def bar_heights(fig: dict) -> tuple[np.ndarray, np.ndarray]:
    bar, reference = fig["data"][0], fig["data"][1]
    assert (bar["type"], reference["type"]) == ("bar", "scatter")
    return as_array(bar["y"]), as_array(reference["y"])


def chips(tokens) -> str:
    return " ".join(f"`{token}`" for token in tokens)


# ---------------------------------------------------------------------------------------------------- the cache


def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output():
    first = home_views.attention(SENTENCE, 0, False, False, False)
    assert home_views.attention(SENTENCE, 0, False, False, False) is first
    assert home_views.attention(sentence=SENTENCE, seed=0, positions=False, causal=False, back=False) is first
    for changed in (
        ("the dog bit the cat", 0, False, False, False),
        (SENTENCE, 1, False, False, False),
        (SENTENCE, 0, True, False, False),
        (SENTENCE, 0, False, True, False),
        (SENTENCE, 0, False, False, True),
    ):
        assert home_views.attention(*changed) is not first, changed
    bars = home_views.distance(SENTENCE, 0, False, False)
    assert home_views.distance(SENTENCE, 0, False, False) is bars
    assert home_views.distance(SENTENCE, 3, False, False) is not bars
    assert home_views.distance(SENTENCE, 0, False, True) is not bars


def test_sorting_back_recomputes_the_attention_maps_only():
    """The distances do not read ``back``: switching it builds a new attention view and leaves one distance view."""
    home_views.distance(SENTENCE, 0, True, False)
    home_views.attention(SENTENCE, 0, True, False, False)
    home_views.attention(SENTENCE, 0, True, False, True)
    names = sorted(key[2] for key in view_keys())
    assert names == ["attention", "attention", "distance"]


def test_the_language_is_part_of_the_key():
    english = home_views.attention(SENTENCE, 0, True, False, False)
    st.session_state["lang"] = "zh"
    chinese = home_views.attention(SENTENCE, 0, True, False, False)
    assert chinese is not english
    en, zh = english.figure("attention").fig.to_dict(), chinese.figure("attention").fig.to_dict()
    assert en["layout"]["title"]["text"] == tr("en", "home.attention")
    assert zh["layout"]["title"]["text"] == tr("zh", "home.attention")
    for a, b in zip(panels(en), panels(zh), strict=True):
        np.testing.assert_array_equal(a, b)
    assert list(chinese.figure("attention").data.columns.levels[0]) != list(
        english.figure("attention").data.columns.levels[0]
    )


@pytest.mark.parametrize(
    ("positions", "causal", "back"),
    [(False, False, False), (True, False, True), (False, True, False), (True, True, True)],
)
def test_a_view_equals_its_uncached_build(positions, causal, back):
    for cached, fresh in (
        (
            home_views.attention(SENTENCE, 5, positions, causal, back),
            home_views.attention.uncached(SENTENCE, 5, positions, causal, back),
        ),
        (
            home_views.distance(SENTENCE, 5, positions, causal),
            home_views.distance.uncached(SENTENCE, 5, positions, causal),
        ),
    ):
        assert [type(item) for item in cached.items] == [type(item) for item in fresh]
        for got, built in zip(cached.items, fresh, strict=True):
            if isinstance(got, Figure):
                assert (got.key, got.options) == (built.key, built.options)
                assert got.fig.to_dict() == built.fig.to_dict()
            else:
                assert got == built


# ------------------------------------------------------------------------------------------------- the numbers


def test_without_positions_a_shuffle_only_permutes_the_head():
    """The head written here is permutation-equivariant: Attn(P X) = P Attn(X), P A P^T for the weights."""
    x = demo.token_embeddings(DOG)
    order = permutation(len(DOG), 0)
    weights, outputs = head(x, causal=False)
    shuffled_weights, shuffled_outputs = head(x[order], causal=False)
    np.testing.assert_allclose(shuffled_outputs, outputs[order], atol=1e-12)
    np.testing.assert_allclose(shuffled_weights, weights[np.ix_(order, order)], atol=1e-12)
    assert np.abs(outputs[order] - outputs).max() > 0.1  # the outputs did move: the order is not the identity
    # with the position table added by slot, the shuffled head no longer permutes the outputs
    pe = position_table(len(DOG), x.shape[1])
    _, placed = head(x + pe, causal=False)
    _, shuffled_placed = head(x[order] + pe, causal=False)
    assert np.abs(shuffled_placed - placed[order]).max() > 0.1


@pytest.mark.parametrize("seed", [0, 3, 41])
def test_the_default_maps_permute_and_the_distances_vanish(seed):
    out = home_views.attention(SENTENCE, seed, False, False, False)
    expected = derived(DOG, seed, False, False)
    fig = out.figure("attention").fig.to_dict()
    left, right = panels(fig)
    assert_matrix(left, expected["weights"], what="as written")
    assert_matrix(right, expected["shuffled_weights"], what="shuffled")
    order = expected["order"]
    assert_matrix(right, expected["weights"][np.ix_(order, order)], what="a permuted copy")
    assert fig["layout"]["xaxis"]["ticktext"] == list(DOG)
    assert fig["layout"]["xaxis2"]["ticktext"] == expected["shuffled_tokens"]
    assert out.figure("attention").options == {"variant": "plain"}
    bars = home_views.distance(SENTENCE, seed, False, False)
    heights, reference = bar_heights(bars.figure("distance").fig.to_dict())
    assert heights.max() < 1e-12 < 0.5 < reference.min()  # every token keeps its own output
    np.testing.assert_allclose(reference, expected["norm"], rtol=1e-12)
    assert bars.figure("distance").options == {"variant": "plain"}


def test_positions_break_it_and_sorting_back_reads_the_shuffle_in_the_sentences_order():
    expected = derived(DOG, 0, True, False)
    out = home_views.attention(SENTENCE, 0, True, False, True)
    fig = out.figure("attention").fig.to_dict()
    left, right = panels(fig)
    assert_matrix(left, expected["weights"], what="as written")
    assert_matrix(right, expected["back"], what="sorted back")
    assert np.abs(right - left).max() > 0.05  # sorted back, the maps still differ: the positions moved them
    assert fig["layout"]["xaxis2"]["ticktext"] == list(DOG)
    panel_titles = sorted(fig["layout"]["annotations"], key=lambda a: a["x"])
    assert [a["text"] for a in panel_titles] == [tr("en", "home.attention.written"), tr("en", "home.attention.sorted")]
    bars = home_views.distance(SENTENCE, 0, True, False)
    heights, reference = bar_heights(bars.figure("distance").fig.to_dict())
    np.testing.assert_allclose(heights, expected["distance"], rtol=1e-9)
    np.testing.assert_allclose(reference, expected["norm"], rtol=1e-12)
    assert heights.min() > 1e-3
    assert bars.figure("distance").options == {"variant": "pe"}
    assert bars.texts[0] == tr(
        "en", "home.demo.max", value=f"{expected['distance'].max():.2g}", scale=f"{expected['norm'].mean():.2g}"
    )


def test_a_causal_mask_alone_changes_the_outputs_and_keeps_those_of_a_shared_prefix():
    """Seed 41 shuffles "the dog bit the man" into "dog the bit the man": from "bit" on, each slot is preceded by
    the same tokens in both orders, so under the mask those three keep their outputs."""
    expected = derived(DOG, 41, False, True)
    assert expected["shuffled_tokens"] == ["dog", "the", "bit", "the", "man"]
    out = home_views.attention(SENTENCE, 41, False, True, False)
    left, right = panels(out.figure("attention").fig.to_dict())
    assert_matrix(left, expected["weights"], what="as written")
    assert_matrix(right, expected["shuffled_weights"], what="shuffled")
    assert np.isclose(left[np.triu_indices(5, 1)], 0).all()  # no query sees a later key
    bars = home_views.distance(SENTENCE, 41, False, True)
    heights, _ = bar_heights(bars.figure("distance").fig.to_dict())
    np.testing.assert_allclose(heights, expected["distance"], rtol=1e-9, atol=1e-12)
    assert heights[2:].max() < 1e-12 < 1e-3 < heights[:2].min()
    assert bars.figure("distance").options == {"variant": "causal"}
    assert bars.texts[-1] == tr("en", "home.demo.kept", kept=3, n=5, tokens="`bit` `the` `man`")
    none_kept = home_views.distance(SENTENCE, 0, False, True)
    assert none_kept.texts[-1] == tr("en", "home.demo.kept.none", n=5)


def test_positions_and_the_mask_together_are_captioned_as_positions_and_list_no_kept_tokens():
    bars = home_views.distance(SENTENCE, 41, True, True)
    assert bars.figure("distance").options == {"variant": "pe"}
    assert len(bars.texts) == 1
    expected = derived(DOG, 41, True, True)
    heights, _ = bar_heights(bars.figure("distance").fig.to_dict())
    np.testing.assert_allclose(heights, expected["distance"], rtol=1e-9)


def test_the_csv_data_hold_both_maps_by_slot_and_token():
    out = home_views.attention(SENTENCE, 0, False, False, False)
    expected = derived(DOG, 0, False, False)
    data = out.figure("attention").data
    assert isinstance(data, pd.DataFrame)
    written, shuffled = tr("en", "home.attention.written"), tr("en", "home.attention.shuffled")
    slots = [f"{i} {token}" for i, token in enumerate(DOG)]
    shuffled_slots = [f"{i} {token}" for i, token in enumerate(expected["shuffled_tokens"])]
    assert set(data.index) == set(slots) | set(shuffled_slots)  # the rows of both maps, side by side
    assert list(data[written].columns) == slots and list(data[shuffled].columns) == shuffled_slots
    np.testing.assert_allclose(data[written].loc[slots].to_numpy(), expected["weights"], atol=1e-12)
    shuffled_map = data[shuffled].loc[shuffled_slots].to_numpy()
    np.testing.assert_allclose(shuffled_map, expected["shuffled_weights"], atol=1e-12)
    bars = home_views.distance(SENTENCE, 0, False, False).figure("distance").data
    assert bars["token"] == list(DOG)
    np.testing.assert_allclose(bars["output_norm"], expected["norm"], rtol=1e-12)
    assert np.abs(bars["distance"]).max() < 1e-12


def test_the_texts_name_both_orders_and_a_long_sentence_is_cut_with_a_notice():
    out = home_views.attention(SENTENCE, 0, False, False, False)
    expected = derived(DOG, 0, False, False)
    (orders,) = out.items[:1]
    assert orders == Text(
        tr("en", "home.demo.orders", original=chips(DOG), shuffled=chips(expected["shuffled_tokens"]))
    )
    words = ["w" + str(i) for i in range(40)]
    long = home_views.attention(" ".join(words), 0, False, False, False)
    assert long.items[0] == Text(tr("en", "home.demo.truncated", total=40, shown=demo.MAX_TOKENS), "info")
    fig = long.figure("attention").fig.to_dict()
    assert fig["layout"]["xaxis"]["ticktext"] == words[: demo.MAX_TOKENS]
    assert_matrix(panels(fig)[0], derived(tuple(words[: demo.MAX_TOKENS]), 0, False, False)["weights"])
    assert isinstance(out.items[-1], Figure) and len(out.texts) == 1  # no notice for a short sentence


def test_a_chinese_sentence_is_one_token_a_character():
    sentence = demo.EXAMPLES["zh_cat"]
    out = home_views.attention(sentence, 2, True, False, False)
    tokens = tuple(sentence)
    expected = derived(tokens, 2, True, False)
    fig = out.figure("attention").fig.to_dict()
    assert fig["layout"]["xaxis"]["ticktext"] == list(tokens)
    left, right = panels(fig)
    assert_matrix(left, expected["weights"])
    assert_matrix(right, expected["shuffled_weights"])


# ------------------------------------------------------------------------------------------------- refused input


@pytest.mark.parametrize(
    ("sentence", "seed", "message"),
    [("", 0, "no words"), ("   ,", 0, "single token"), ("狗", 0, "single token"), (SENTENCE, -1, "seed")],
)
def test_refused_settings_raise_and_are_not_cached(sentence, seed, message):
    for _ in range(2):
        with pytest.raises(ValueError, match=message):
            home_views.attention(sentence, seed, False, False, False)
        with pytest.raises(ValueError, match=message):
            home_views.distance(sentence, seed, False, True)
    assert not view_keys()
