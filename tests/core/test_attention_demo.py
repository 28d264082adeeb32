"""The Home page's demo: one attention head is permutation-equivariant without positions and without a mask, and is
not with positions, nor with a causal mask alone.

Checked against an attention written out entry by entry, torch's scaled_dot_product_attention, the sinusoidal
table computed entry by entry and an explicit permutation matrix P."""

from __future__ import annotations

import hashlib
import math
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from posviz.lessons import attention_demo as demo

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)


def attention_by_hand(x, w_q, w_k, w_v):
    """softmax(Q K^T / sqrt(d)) V, every score and every exponential computed one at a time."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    n, d = q.shape
    weights = np.zeros((n, n))
    for i in range(n):
        scores = [sum(q[i, c] * k[j, c] for c in range(d)) / math.sqrt(d) for j in range(n)]
        exps = [math.exp(s) for s in scores]
        weights[i] = [e / sum(exps) for e in exps]
    return weights, weights @ v


def attention_by_torch(x, w_q, w_k, w_v, causal=False):
    q, k, v = (torch.from_numpy(x @ w) for w in (w_q, w_k, w_v))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal).numpy()


def causal_attention_by_prefix(x, w_q, w_k, w_v):
    """Masked attention written without a mask: query i takes a softmax over the keys 0 .. i only."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    outputs = np.empty_like(v)
    for i in range(len(x)):
        scores = k[: i + 1] @ q[i] / math.sqrt(q.shape[1])
        weights = np.exp(scores - scores.max())
        outputs[i] = (weights / weights.sum()) @ v[: i + 1]
    return outputs


def permutation_matrix(order):
    """P with (P X)[j] = X[order[j]]."""
    return np.eye(len(order))[order]


# -------------------------------------------------------------------------------------------------- tokens


def test_tokenize_english_words_and_punctuation():
    assert demo.tokenize("The dog bit the man.") == ("The", "dog", "bit", "the", "man", ".")
    assert demo.tokenize("  x2,  don't ") == ("x2", ",", "don", "'", "t")


def test_tokenize_chinese_one_character_each():
    assert demo.tokenize("狗咬人，人咬狗") == ("狗", "咬", "人", "，", "人", "咬", "狗")
    assert demo.tokenize("我爱NLP!") == ("我", "爱", "NLP", "!")
    assert all(len(t) == 1 for t in demo.tokenize(demo.EXAMPLES["zh_dog"]))


def test_token_ids_are_sha256_rows():
    tokens = ("the", "狗", "the")
    expected = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "big") % demo.VOCAB_SIZE for t in tokens]
    np.testing.assert_array_equal(demo.token_ids(tokens), expected)
    x = demo.token_embeddings(tokens)
    assert x.shape == (3, demo.D_MODEL)
    np.testing.assert_array_equal(x[0], x[2])  # the same word, the same vector
    assert not np.allclose(x[0], x[1])
    np.testing.assert_array_equal(x, demo.embedding_table()[expected])


# ---------------------------------------------------------------------------------------------- attention


def test_self_attention_is_the_formula():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 8))
    w = tuple(rng.standard_normal((3, 8, 8)))
    weights, outputs = demo.self_attention(x, *w)
    expected_weights, expected_outputs = attention_by_hand(x, *w)
    np.testing.assert_allclose(weights, expected_weights, rtol=0, atol=1e-13)
    np.testing.assert_allclose(outputs, expected_outputs, rtol=0, atol=1e-13)
    np.testing.assert_allclose(outputs, attention_by_torch(x, *w), rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-15)


@FAST
@given(n=st.integers(2, 24), seed=st.integers(0, 2**32 - 1))
def test_attention_without_positions_is_permutation_equivariant(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, demo.D_MODEL))
    p = permutation_matrix(rng.permutation(n))
    w = demo.projections()
    weights, outputs = demo.self_attention(x, *w)
    shuffled_weights, shuffled_outputs = demo.self_attention(p @ x, *w)
    np.testing.assert_allclose(shuffled_outputs, p @ outputs, rtol=0, atol=1e-12)  # Attn(PX) = P Attn(X)
    np.testing.assert_allclose(shuffled_weights, p @ weights @ p.T, rtol=0, atol=1e-12)


def test_causal_self_attention_is_the_masked_formula():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((7, 8))
    w = tuple(rng.standard_normal((3, 8, 8)))
    weights, outputs = demo.self_attention(x, *w, causal=True)
    np.testing.assert_allclose(outputs, causal_attention_by_prefix(x, *w), rtol=0, atol=1e-13)
    np.testing.assert_allclose(outputs, attention_by_torch(x, *w, causal=True), rtol=0, atol=1e-12)
    assert np.all(weights[np.triu_indices(7, 1)] == 0)  # no weight on a later key
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert weights[0, 0] == 1.0  # the first token attends to itself alone
    # the default stays the unmasked head
    np.testing.assert_array_equal(demo.self_attention(x, *w)[1], demo.self_attention(x, *w, causal=False)[1])


@FAST
@given(n=st.integers(2, 24), seed=st.integers(0, 2**32 - 1))
def test_a_causal_mask_breaks_the_equivariance_without_any_positions(n, seed):
    """Attn(PX) = P Attn(X) to 1e-12 without the mask; with it, P X gives other outputs than P Attn(X), computed
    here without the core (softmax over each prefix); the first slot whose token moved always differs."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, demo.D_MODEL))
    order = demo.shuffle_order(n, seed)
    p = permutation_matrix(order)
    w = demo.projections()
    _, plain = demo.self_attention(x, *w)
    np.testing.assert_allclose(demo.self_attention(p @ x, *w)[1], p @ plain, rtol=0, atol=1e-12)
    expected, expected_shuffled = causal_attention_by_prefix(x, *w), causal_attention_by_prefix(p @ x, *w)
    _, masked = demo.self_attention(x, *w, causal=True)
    _, masked_shuffled = demo.self_attention(p @ x, *w, causal=True)
    np.testing.assert_allclose(masked, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(masked_shuffled, expected_shuffled, rtol=0, atol=1e-12)
    first_moved = int(np.flatnonzero(order != np.arange(n))[0])
    gap = np.linalg.norm(expected_shuffled - p @ expected, axis=1)
    assert gap[first_moved] > 1e-6  # not merely permuted: the token now in that slot sees another prefix
    assert np.linalg.norm(masked_shuffled - p @ masked, axis=1)[first_moved] > 1e-6
    np.testing.assert_allclose(gap[:first_moved], 0.0, atol=1e-12)  # the untouched prefix keeps its outputs


@FAST
@given(n=st.integers(2, 24), seed=st.integers(0, 2**32 - 1))
def test_shuffle_order_always_moves_a_token(n, seed):
    order = demo.shuffle_order(n, seed)
    assert sorted(order.tolist()) == list(range(n))
    assert not np.array_equal(order, np.arange(n))
    np.testing.assert_array_equal(order, demo.shuffle_order(n, seed))


# ---------------------------------------------------------------------------------------- the whole demo


def reference_demo(sentence: str, seed: int, positions: bool, causal: bool = False):
    """The demo rebuilt from its definition: X and P X (+ the sinusoidal table, entry by entry), attention by torch
    (with its own causal mask when ``causal``)."""
    tokens = demo.tokenize(sentence)[: demo.MAX_TOKENS]
    x = demo.token_embeddings(tokens)
    p = permutation_matrix(demo.shuffle_order(len(tokens), seed))
    pe = oracle.sinusoidal_loop(len(tokens), demo.D_MODEL, 10000.0, "interleaved") if positions else 0.0
    w = demo.projections()
    outputs, shuffled = attention_by_torch(x + pe, *w, causal), attention_by_torch(p @ x + pe, *w, causal)
    return tokens, p, outputs, np.linalg.norm(outputs - p.T @ shuffled, axis=1)


def same_tokens_up_to(tokens, order) -> list[bool]:
    """For token i: are the tokens in slots 0 .. i as written those in slots 0 .. back[i] of the shuffle?"""
    back = {token_index: slot for slot, token_index in enumerate(order)}
    return [Counter(tokens[: i + 1]) == Counter(tokens[j] for j in order[: back[i] + 1]) for i in range(len(tokens))]


@pytest.mark.parametrize("example", list(demo.EXAMPLES))
@pytest.mark.parametrize("seed", [0, 1, 41])
def test_without_positions_every_token_keeps_its_output(example, seed):
    result = demo.shuffle_demo(demo.EXAMPLES[example], seed, positions=False)
    tokens, p, outputs, distance = reference_demo(demo.EXAMPLES[example], seed, positions=False)
    assert result.tokens == tokens and not result.truncated
    assert result.shuffled_tokens == tuple(tokens[i] for i in np.argmax(p, axis=1))
    np.testing.assert_allclose(result.outputs, outputs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.shuffled_outputs, p @ outputs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.sorted_back, result.weights, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.shuffled_weights, p @ result.weights @ p.T, rtol=0, atol=1e-12)
    assert result.largest_distance < 1e-12 and distance.max() < 1e-12
    np.testing.assert_allclose(result.output_norm, np.linalg.norm(outputs, axis=1), rtol=1e-12)


@pytest.mark.parametrize("example", list(demo.EXAMPLES))
@pytest.mark.parametrize("seed", [0, 1, 41])
def test_positions_break_the_equivariance(example, seed):
    result = demo.shuffle_demo(demo.EXAMPLES[example], seed, positions=True)
    tokens, p, outputs, distance = reference_demo(demo.EXAMPLES[example], seed, positions=True)
    np.testing.assert_allclose(result.outputs, outputs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.distance, distance, rtol=0, atol=1e-12)
    assert result.distance.min() > 1e-3  # every token's output changed, not only some
    assert result.largest_distance > 0.1 * result.typical_norm  # on the scale of the outputs, not of rounding
    assert not np.allclose(result.sorted_back, result.weights, atol=1e-3)


@pytest.mark.parametrize("example", list(demo.EXAMPLES))
@pytest.mark.parametrize("seed", [0, 1, 41])
def test_a_causal_mask_changes_the_outputs_without_positions(example, seed):
    result = demo.shuffle_demo(demo.EXAMPLES[example], seed, causal=True)
    tokens, p, outputs, distance = reference_demo(demo.EXAMPLES[example], seed, positions=False, causal=True)
    assert result.causal and not result.positions
    np.testing.assert_allclose(result.outputs, outputs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.distance, distance, rtol=0, atol=1e-12)
    assert not np.allclose(result.shuffled_outputs, p @ outputs, atol=1e-3)  # not merely permuted
    assert result.largest_distance > 0.1 * result.typical_norm
    same = np.array(same_tokens_up_to(tokens, result.order.tolist()))
    np.testing.assert_array_equal(result.same_prefix, same)
    assert (result.distance[same] < 1e-12).all()  # the same tokens before it: the same output
    assert (result.distance[~same] > 1e-3).all()  # other tokens before it: another output
    masked = np.triu_indices(len(tokens), 1)
    assert (result.weights[masked] == 0).all() and (result.shuffled_weights[masked] == 0).all()


def test_a_shuffle_of_the_first_tokens_leaves_the_rest_alone_under_the_mask():
    """Seed 41 swaps "the dog" into "dog the": from "bit" on, every token has the same tokens up to it."""
    result = demo.shuffle_demo(demo.EXAMPLES["dog"], 41, causal=True)
    assert result.shuffled_tokens == ("dog", "the", "bit", "the", "man")
    np.testing.assert_array_equal(result.same_prefix, [False, False, True, True, True])
    assert result.distance[2:].max() < 1e-12 < 1e-3 < result.distance[:2].min()


def test_without_the_mask_the_default_is_unchanged():
    for positions in (False, True):
        default = demo.shuffle_demo(demo.EXAMPLES["book"], 3, positions=positions)
        unmasked = demo.shuffle_demo(demo.EXAMPLES["book"], 3, positions=positions, causal=False)
        assert not default.causal
        np.testing.assert_array_equal(default.outputs, unmasked.outputs)
        np.testing.assert_array_equal(default.distance, unmasked.distance)


def test_the_arrays_are_read_only():
    result = demo.shuffle_demo("a b c", 0)
    with pytest.raises(ValueError):
        result.distance[0] = 1.0


def test_a_long_sentence_is_cut_to_max_tokens():
    result = demo.shuffle_demo("word " * 5000, 2)
    assert result.n_found == 5000 and result.truncated
    assert result.tokens == ("word",) * demo.MAX_TOKENS
    assert result.weights.shape == (demo.MAX_TOKENS, demo.MAX_TOKENS)
    np.testing.assert_allclose(result.weights, 1.0 / demo.MAX_TOKENS, rtol=1e-12)  # identical tokens, even attention


@pytest.mark.parametrize(
    ("sentence", "seed", "message"),
    [
        ("", 0, "no words"),
        ("  ", 0, "no words"),
        ("hello", 0, "'hello' is a single token"),
        ("狗", 0, "'狗' is a single token"),
        ("a b", -1, "got -1"),
        ("a b", 1.5, "got 1.5"),
        (None, 0, "must be text"),
    ],
)
def test_readable_errors(sentence, seed, message):
    with pytest.raises(ValueError, match=message):
        demo.shuffle_demo(sentence, seed)
