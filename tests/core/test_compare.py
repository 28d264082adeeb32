"""posviz.compare: every family's signal by offset, past the training length and by cost, checked against the
transformers reference code where there is one and against scalar loops over the papers' formulas otherwise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz
from posviz.encodings import learned
from posviz.lessons import compare

from ._oracles import (
    bert_init_blocks,
    bloom_alibi_slopes,
    distilbert_sinusoidal,
    hf_default_rope_inv_freq,
    llama_rope,
    t5_bucket,
)


def signed(length: int) -> np.ndarray:
    return np.arange(-(length - 1), length)


# ------------------------------------------------------------------------------------------------ by offset


@pytest.mark.parametrize("n,d,base", [(64, 32, 10_000.0), (50, 16, 100.0), (33, 8, 1e6)])
def test_sinusoidal_curve_is_the_mean_cosine_of_the_distilbert_table(n, d, base):
    offsets, values = compare.offset_curve("sinusoidal", {"n_positions": n, "d_model": d, "base": base})
    np.testing.assert_array_equal(offsets, signed(n))
    omega = base ** (-np.arange(0, d, 2) / d)
    closed = np.cos(np.abs(offsets)[:, None] * omega[None, :]).mean(axis=1)  # (2 / d) sum_k cos(o w_k)
    np.testing.assert_allclose(values, closed, atol=1e-12)
    if base == 10_000.0:  # the reference table, brute-force pair averages
        table = distilbert_sinusoidal(n, d)
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        similarity = unit @ unit.T
        means = np.array([np.diagonal(similarity, o).mean() for o in offsets])
        np.testing.assert_allclose(values, means, atol=1e-6)


def test_halves_layout_gives_the_same_curve():
    a = compare.offset_curve("sinusoidal", {"n_positions": 40, "d_model": 24})[1]
    b = compare.offset_curve("sinusoidal", {"n_positions": 40, "d_model": 24, "layout": "halves"})[1]
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_learned_curve_averages_the_diagonals_of_the_random_table():
    offsets, values = compare.offset_curve("learned", {"n_positions": 30, "d_model": 16, "seed": 3})
    table = bert_init_blocks(30, 16, std=0.02, seed=3, block_rows=learned.INIT_BLOCK_ROWS)
    np.testing.assert_array_equal(table, posviz.learned_init(30, 16, std=0.02, seed=3))  # the registry's table
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    similarity = unit @ unit.T
    np.testing.assert_allclose(values, [np.diagonal(similarity, o).mean() for o in offsets], atol=1e-12)
    assert values[29] == pytest.approx(1.0)


@pytest.mark.parametrize("head_dim,base", [(64, 10_000.0), (16, 500.0)])
def test_rope_curve_is_the_llama_score_of_all_ones(head_dim, base):
    n = 40
    offsets, values = compare.offset_curve("rope", {"n_positions": n, "head_dim": head_dim, "base": base})
    inv = hf_default_rope_inv_freq(head_dim, base)
    ones = np.ones((n, head_dim))
    rotated = llama_rope(ones, np.arange(n), inv)
    scores = rotated @ rotated.T / head_dim  # S[i, j] = RoPE(q, i) . RoPE(k, j) / head_dim
    expected = [np.diagonal(scores, o).mean() for o in offsets]  # key j = i + o
    np.testing.assert_allclose(values, expected, atol=1e-6)  # transformers computes inv_freq in float32
    for o in (-30, -1, 5, 39):  # the score depends on the offset only
        np.testing.assert_allclose(np.diagonal(scores, o), np.diagonal(scores, o)[0], atol=1e-10)


@pytest.mark.parametrize("n_heads,head,causal", [(8, 0, True), (12, 9, False), (5, 4, True)])
def test_alibi_curve_uses_blooms_slope(n_heads, head, causal):
    offsets, values = compare.offset_curve("alibi", {"n_heads": n_heads, "head": head, "seq_len": 20, "causal": causal})
    slope = bloom_alibi_slopes(n_heads)[head]
    expected = -slope * np.abs(offsets)
    if causal:
        expected = np.where(offsets > 0, np.nan, expected)
    np.testing.assert_allclose(values, expected, rtol=1e-6)  # BLOOM computes the slopes in float32


def test_t5_curve_reads_the_synthetic_table_through_t5_buckets():
    params = {"seq_len": 300, "num_buckets": 16, "max_distance": 64, "bidirectional": False}
    offsets, values = compare.offset_curve("t5", params)
    table = posviz.encodings.relative.t5_synthetic_bias_table(16, compare.T5_HEADS)
    buckets = t5_bucket(offsets, bidirectional=False, num_buckets=16, max_distance=64)
    np.testing.assert_array_equal(values, table[buckets, 0])
    assert np.unique(values[offsets <= -64]).size == 1  # every far key shares the last bucket's bias


def test_shaw_curve_is_the_clipped_index():
    offsets, values = compare.offset_curve("shaw", {"seq_len": 25, "max_relative_position": 4})
    np.testing.assert_array_equal(values, [min(max(o, -4), 4) + 4 for o in offsets])


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_xlnet_curve_counts_visible_keys(seed):
    n = 12
    offsets, values = compare.offset_curve("xlnet", {"seq_len": n, "seed": seed})
    order = posviz.factorisation_order(n, seed)
    rank = {int(token): step for step, token in enumerate(order)}
    for o, value in zip(offsets, values, strict=True):
        pairs = [(i, i + o) for i in range(n) if 0 <= i + o < n]
        assert value == pytest.approx(sum(rank[j] < rank[i] for i, j in pairs) / len(pairs))
    if seed == 0:  # left to right: the query stream sees exactly the earlier keys
        np.testing.assert_array_equal(values, offsets < 0)


def test_every_family_has_a_quantity_and_a_curve():
    assert set(compare.QUANTITY) == set(posviz.FAMILIES)
    for key in posviz.FAMILIES:
        offsets, values = compare.offset_curve(key)
        assert offsets.shape == values.shape and offsets[0] == -offsets[-1]


def test_unknown_parameter_is_named():
    with pytest.raises(ValueError, match="'head_dim'"):
        compare.offset_curve("sinusoidal", {"head_dim": 8})
    with pytest.raises(ValueError, match="unknown family 'nope'"):
        compare.offset_curve("nope")


# ------------------------------------------------------------------------------------ past the training length


def unseen_loop(steps, train_len, inv_freq):
    """A pair sweeps the arc [0, (T - 1) w] in training; a step x is new for it when x w mod 2 pi lies past it."""
    shares = []
    for x in steps:
        new = 0
        for w in inv_freq:
            arc = (train_len - 1) * w
            new += arc < 2 * math.pi and math.fmod(x * w, 2 * math.pi) > arc + 1e-9
        shares.append(new / len(inv_freq))
    return np.array(shares)


@settings(max_examples=40, deadline=None)
@given(train=st.integers(1, 300), d=st.sampled_from([8, 32, 64]), base=st.sampled_from([100.0, 10_000.0]))
def test_unseen_angle_share_matches_a_scalar_loop(train, d, base):
    inv = base ** (-np.arange(0, d, 2) / d)
    steps = np.arange(0, 4 * train + 5)
    got = compare.unseen_angle_share(steps, train, inv)
    np.testing.assert_allclose(got, unseen_loop(steps, train, inv), atol=0)
    assert not got[:train].any()  # nothing within the training range is new
    # right after training, exactly the pairs whose wavelength 2 pi / w exceeds T meet a new angle
    assert got[train] == pytest.approx(np.mean(2 * math.pi / inv > train))


def test_beyond_training_curves():
    curves = compare.beyond_training(100, 1000, max_points=300)
    steps = curves["rope"][0]
    assert steps[0] == 0 and steps[-1] == 999 and len(steps) <= 300
    assert all(np.array_equal(x, steps) for x, _ in curves.values())
    learned_values = curves["learned"][1]
    np.testing.assert_array_equal(np.isnan(learned_values), steps >= 100)  # no rows past the table
    np.testing.assert_allclose(curves["alibi"][1], -0.5 * steps)  # head 0 of 8 heads, m = 1/2
    omega = posviz.sinusoidal_frequencies(128)
    np.testing.assert_array_equal(curves["sinusoidal"][1], unseen_loop(steps, 100, omega))
    theta = 10_000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(curves["rope"][1], unseen_loop(steps, 100, theta), atol=0)
    t5 = curves["t5"][1]
    assert np.unique(t5[steps >= 128]).size == 1  # everything from max_distance on shares the last bucket


def test_learned_past_end_quotes_the_lookup_error():
    message = compare.learned_past_end(512, 2048)
    assert "2047" in message and "511" in message
    with pytest.raises(IndexError, match="2047"):
        posviz.lookup(np.zeros((512, 2)), [2047])
    assert compare.learned_past_end(512, 512) == ""


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_last_bucket_share_counts_the_bucket_matrix(bidirectional):
    kw = dict(num_buckets=16, max_distance=40, bidirectional=bidirectional)
    lengths = (5, 60, 200)
    got = compare.t5_last_bucket_share(lengths, **kw)
    side = 8 if bidirectional else 16
    for length, share in zip(lengths, got, strict=True):
        i, j = np.indices((length, length))
        buckets = t5_bucket(j - i, bidirectional=bidirectional, num_buckets=16, max_distance=40)
        assert share == pytest.approx(np.mean(buckets % side == side - 1))
    assert got[0] == 0.0 and got[1] < got[2]


def test_shaw_clipped_share_counts_far_pairs():
    lengths = (3, 9, 10, 64)
    got = compare.shaw_clipped_share(lengths, 8)
    for length, share in zip(lengths, got, strict=True):
        i, j = np.indices((length, length))
        assert share == pytest.approx(np.mean(np.abs(j - i) > 8))


# ------------------------------------------------------------------------------------------------------- cost


def position_parameters(model, *names: str) -> int:
    """Parameters of a transformers model whose dotted name ends with one of ``names``, summed over every layer."""
    return sum(p.numel() for n, p in model.named_parameters() if n.endswith(names))


@pytest.mark.parametrize("layers", [1, 3])
def test_parameter_counts_are_those_of_whole_real_models(layers):
    """A learned table and T5's bias table exist once per model however deep it is; Shaw's vectors and XLNet's
    projection exist in every layer. Counted in real transformers models of 1 and 3 layers."""
    from transformers import GPT2Config, T5Config, Wav2Vec2BertConfig, Wav2Vec2BertModel, XLNetConfig, XLNetModel
    from transformers.models.gpt2.modeling_gpt2 import GPT2Model
    from transformers.models.t5.modeling_t5 import T5EncoderModel

    n = np.array([16, 64])
    kw = dict(d_model=24, n_heads=4, n_layers=layers)
    for positions in n:
        config = GPT2Config(n_positions=int(positions), n_embd=24, n_layer=layers, n_head=4, vocab_size=10)
        wpe = position_parameters(GPT2Model(config), "wpe.weight")
        assert wpe == positions * 24
        assert compare.parameter_count("learned", [positions], **kw)[0] == wpe
    t5 = T5EncoderModel(
        T5Config(d_model=24, num_heads=4, d_kv=6, num_layers=layers, d_ff=16, vocab_size=10)
    )  # only block 0 holds relative_attention_bias; every later block reuses its position_bias
    t5_count = position_parameters(t5, "relative_attention_bias.weight")
    assert t5_count == 32 * 4
    np.testing.assert_array_equal(compare.parameter_count("t5", n, num_buckets=32, **kw), t5_count)
    # Shaw et al.'s a^K is Wav2Vec2-BERT's "relative_key" distance_embedding: 2k + 1 rows of d_head, shared by the
    # heads, in every layer; a^V (equation 3) is a second table of the same shape
    wav = Wav2Vec2BertModel(
        Wav2Vec2BertConfig(
            hidden_size=24,
            num_attention_heads=4,
            num_hidden_layers=layers,
            intermediate_size=16,
            left_max_position_embeddings=5,
            right_max_position_embeddings=5,
            conv_depthwise_kernel_size=3,
            feature_projection_input_dim=8,
        )
    )
    keys = position_parameters(wav, "distance_embedding.weight")
    assert keys == layers * (2 * 5 + 1) * 6
    np.testing.assert_array_equal(compare.parameter_count("shaw", n, k=5, **kw), 2 * keys)
    # XLNet: Transformer-XL's W_R (``r``) and position bias v (``r_r_bias``) in every layer
    xlnet = XLNetModel(XLNetConfig(d_model=24, n_head=4, n_layer=layers, d_inner=16, vocab_size=10))
    xl = position_parameters(xlnet, "rel_attn.r", "rel_attn.r_r_bias")
    assert xl == layers * (24 * 24 + 24)
    np.testing.assert_array_equal(compare.parameter_count("xlnet", n, **kw), xl)
    for key in ("sinusoidal", "rope", "alibi"):
        np.testing.assert_array_equal(compare.parameter_count(key, n, **kw), 0)


def test_where_the_parameters_live_is_what_the_counts_say():
    """The registry's scope agrees with how the count grows with the depth: "layer" families scale with it, the
    others do not."""
    n = [128]
    for key in compare.COST_FAMILIES:
        fam = posviz.family(key)
        one, twelve = (compare.parameter_count(key, n, d_model=64, n_heads=4, n_layers=L)[0] for L in (1, 12))
        assert (one == 0) == (fam.param_scope == "") == (fam.param_formula == "0")
        assert twelve == (12 * one if fam.param_scope == "layer" else one), key
    assert {k: posviz.family(k).param_scope for k in ("learned", "t5", "shaw", "xlnet")} == {
        "learned": "input",
        "t5": "first_layer",
        "shaw": "layer",
        "xlnet": "layer",
    }


def test_stored_floats():
    n = np.array([16, 1024])
    kw = dict(d_model=64, n_heads=8, n_layers=3, num_buckets=32, k=4)
    np.testing.assert_array_equal(compare.stored_floats("sinusoidal", n, **kw), n * 64)
    np.testing.assert_array_equal(compare.stored_floats("learned", n, **kw), n * 64)
    np.testing.assert_array_equal(compare.stored_floats("rope", n, **kw), n * 8)  # cos and sin, n x 4 each
    np.testing.assert_array_equal(compare.stored_floats("alibi", n, **kw), 8 + 8 * n**2)
    np.testing.assert_array_equal(compare.stored_floats("t5", n, **kw), 32 * 8 + 8 * n**2)
    np.testing.assert_array_equal(compare.stored_floats("shaw", n, **kw), 3 * 2 * 9 * 8 + 8 * n**2)
    np.testing.assert_array_equal(compare.stored_floats("xlnet", n, **kw), 3 * (64 * 64 + 64) + 2 * n * 64 + 8 * n**2)


def test_cost_rejects_impossible_settings():
    with pytest.raises(ValueError, match="12 heads"):
        compare.parameter_count("learned", [8], d_model=8, n_heads=12)
    with pytest.raises(ValueError, match="family"):
        compare.stored_floats("nope", [8], d_model=8, n_heads=1)
    with pytest.raises(ValueError, match="n_layers"):
        compare.parameter_count("shaw", [8], d_model=8, n_heads=1, n_layers=0)
    with pytest.raises(ValueError, match="n_positions"):
        compare.parameter_count("learned", [0], d_model=8, n_heads=1)


# ------------------------------------------------------------------------------------------------------ kinds


def test_family_cells_place_every_term_once():
    cells = compare.family_cells()
    placed = [term for _, _, terms in cells for term in terms]
    assert sorted(placed) == sorted((f.key, i) for f in posviz.FAMILIES.values() for i in range(len(f.terms)))
    for x, y, terms in cells:
        for key, i in terms:
            term = posviz.family(key).terms[i]
            assert compare.STAGES[x] == term.stage and compare.SIGNALS[y] == compare.signal(term)
    assert len({(x, y) for x, y, _ in cells}) == len(cells)


def test_map_says_where_shaw_t5_and_xlnet_act():
    """Shaw's position term q_i . a^K depends on the query and a^V goes to the values (Shaw et al., 2018, eq. 3-4);
    T5's bias does not depend on the tokens; XLNet's positions are Transformer-XL's content-dependent relative term,
    and its factorisation-order mask is no position code."""
    where = {
        (key, i): (compare.STAGES[x], compare.SIGNALS[y]) for x, y, terms in compare.family_cells() for key, i in terms
    }
    assert where["shaw", 0] == ("score", "offset_content")
    assert where["shaw", 1] == ("values", "offset")
    assert where["t5", 0] == where["alibi", 0] == ("bias", "offset")
    assert where["xlnet", 0] == ("score", "offset_content")
    assert where["xlnet", 1] == ("mask", "order") and not posviz.family("xlnet").terms[1].position_code
    assert where["rope", 0] == ("rotation", "offset_content")
    assert not any(stage == "mask" and posviz.family(k).terms[i].position_code for (k, i), (stage, _) in where.items())


@pytest.mark.parametrize(
    "text",
    [
        "XLNet's order masks (pretraining only)",
        "相对位置（T5 分桶）",
        "XLNet：分解顺序掩码（预训练用，不是位置编码）",
        "Shaw: a<sup>V</sup> added to the values",
        "offset j − i and the tokens",
    ],
)
def test_map_labels_wrap_without_losing_or_splitting_anything(text):
    from posviz.figures.compare import wrap

    lines = wrap(text, 14).split("<br>")
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    for line in lines:
        plain = line.replace("<sup>", "").replace("</sup>", "")
        width = sum(2 if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" else 1 for c in plain)
        assert width <= 14 or " " not in line.strip()  # only an unbreakable unit may run over
        assert not line.startswith(("）", "，", "。")) and not line.endswith("（")
        assert line.count("<sup>") == line.count("</sup>")
