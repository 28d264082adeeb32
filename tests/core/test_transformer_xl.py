"""Transformer-XL's relative encoding against transformers' XLNet: the embeddings R, the relative shift, the four
terms of the score (through XLNet's own attention core) and the memory's positions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import XLNetConfig, XLNetModel
from transformers.models.xlnet import modeling_xlnet
from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

from posviz.encodings import transformer_xl as txl


def tiny_xlnet(d_model=16, n_head=1, **kw) -> XLNetModel:
    config = XLNetConfig(vocab_size=11, d_model=d_model, n_layer=1, n_head=n_head, d_inner=8, **kw)
    return XLNetModel(config).eval()


@pytest.mark.parametrize("attn_type", ["bi", "uni"])
@pytest.mark.parametrize(("q_len", "k_len"), [(1, 1), (4, 4), (3, 7), (5, 9)])
@pytest.mark.parametrize("clamp_len", [-1, 2])
def test_pos_emb_equals_xlnet(attn_type, q_len, k_len, clamp_len):
    model = tiny_xlnet(attn_type=attn_type, clamp_len=clamp_len)
    with torch.no_grad():
        hf = model.relative_positional_encoding(q_len, k_len).squeeze(1).double().numpy()
    ours = txl.transformer_xl_pos_emb(q_len, k_len, 16, attn_type=attn_type, clamp_len=clamp_len)
    assert ours.shape == hf.shape == (k_len + (q_len if attn_type == "bi" else 1), 16)
    np.testing.assert_allclose(ours, hf, atol=2e-6)


@pytest.mark.parametrize("clamp_len", [-1, 3])
def test_pos_emb_bi_data_halves_in_xlnet_order(clamp_len):
    model = tiny_xlnet(bi_data=True, clamp_len=clamp_len)
    with torch.no_grad():
        hf = model.relative_positional_encoding(4, 6).double().numpy()  # (R, 2, d): forward then backward
        hf_batch = model.relative_positional_encoding(4, 6, bsz=4).double().numpy()  # (R, 4, d)
    ours = txl.transformer_xl_pos_emb(4, 6, 16, clamp_len=clamp_len, bi_data=True)
    assert ours.shape == (2, 10, 16)
    np.testing.assert_allclose(ours[0], hf[:, 0], atol=2e-6)
    np.testing.assert_allclose(ours[1], hf[:, 1], atol=2e-6)
    np.testing.assert_allclose(ours[1], hf_batch[:, 3], atol=2e-6)  # the second half of a batch reads backwards
    # the backward half is the forward one at the negated offsets: sines change sign, cosines do not
    np.testing.assert_allclose(ours[1][:, :8], -ours[0][:, :8], atol=1e-12)
    np.testing.assert_allclose(ours[1][:, 8:], ours[0][:, 8:], atol=1e-12)


def test_offsets_and_formula():
    offsets = txl.transformer_xl_offsets(3, 5)
    np.testing.assert_array_equal(offsets, [5, 4, 3, 2, 1, 0, -1, -2])
    np.testing.assert_array_equal(txl.transformer_xl_offsets(3, 5, attn_type="uni"), [5, 4, 3, 2, 1, 0])
    pe = txl.transformer_xl_pos_emb(3, 5, 8)
    for r, p in enumerate(offsets):  # the scalar formula, one entry at a time
        for k in range(4):
            w = 1 / 10000 ** (2 * k / 8)
            assert pe[r, k] == pytest.approx(np.sin(p * w), abs=1e-15)
            assert pe[r, 4 + k] == pytest.approx(np.cos(p * w), abs=1e-15)


@pytest.mark.parametrize(("q_len", "k_len"), [(1, 1), (3, 3), (3, 7), (4, 10)])
@pytest.mark.parametrize("attn_type", ["bi", "uni"])
def test_rel_shift_equals_xlnet_and_definition(q_len, k_len, attn_type):
    r_len = k_len + (q_len if attn_type == "bi" else 1)
    x = np.random.default_rng(0).standard_normal((2, 3, q_len, r_len))
    hf = XLNetRelativeAttention.rel_shift_bnij(torch.from_numpy(x), klen=k_len).numpy()
    ours = txl.rel_shift(x, k_len)
    np.testing.assert_array_equal(ours, hf)
    offsets = txl.transformer_xl_offsets(q_len, k_len, attn_type=attn_type)
    mlen = k_len - q_len
    for i in range(q_len):
        for j in range(k_len):
            if attn_type == "uni" and j > mlen + i:
                continue  # wrapped values, masked by the causal mask
            r = int(np.flatnonzero(offsets == mlen + i - j)[0])  # the row of R at offset mlen + i - j
            assert ours[0, 1, i, j] == x[0, 1, i, r]


def test_rel_shift_refuses_bad_input():
    with pytest.raises(ValueError, match="klen can be at most"):
        txl.rel_shift(np.zeros((2, 5)), 5)
    with pytest.raises(ValueError, match=r"\(\.\.\., q_len, R\)"):
        txl.rel_shift(np.zeros(5), 2)


def _xlnet_scores(weights: txl.XLWeights, queries, keys, monkeypatch) -> np.ndarray:
    """XLNet's own rel_attn_core on these weights (one head), its logits captured before the softmax, unscaled."""
    d_model, d_head = weights.w_q.shape
    n_head = d_model // d_head  # XLNet's config requires d_head = d_model / n_head; head 0 is the one compared
    config = XLNetConfig(d_model=d_model, n_head=n_head, d_head=d_head, n_layer=1, d_inner=8, vocab_size=11)
    attn = XLNetRelativeAttention(config).double().eval()
    model = tiny_xlnet(d_model=d_model)
    with torch.no_grad():
        for parameter in attn.parameters():
            parameter.zero_()
        for name, value in (("q", weights.w_q), ("k", weights.w_k), ("r", weights.w_r)):
            getattr(attn, name)[:, 0].copy_(torch.from_numpy(value))
        attn.r_w_bias[0].copy_(torch.from_numpy(weights.u))
        attn.r_r_bias[0].copy_(torch.from_numpy(weights.v))
    captured = []
    softmax = torch.nn.functional.softmax

    def spy(scores, dim):
        captured.append(scores)
        return softmax(scores, dim=dim)

    monkeypatch.setattr(modeling_xlnet.nn.functional, "softmax", spy)
    h_q = torch.from_numpy(queries)[:, None, :]  # (i, b, d)
    h_k = torch.from_numpy(keys)[:, None, :]
    with torch.no_grad():
        r = model.relative_positional_encoding(len(queries), len(keys)).double()
        q_head = torch.einsum("ibh,hnd->ibnd", h_q, attn.q)
        k_head = torch.einsum("ibh,hnd->ibnd", h_k, attn.k)
        k_head_r = torch.einsum("ibh,hnd->ibnd", r, attn.r)
        attn.rel_attn_core(q_head, k_head, k_head, k_head_r)
    return captured[0][0, 0].numpy() / attn.scale


@pytest.mark.parametrize(("mem_len", "seg_len"), [(0, 5), (4, 3), (6, 6)])
def test_four_terms_sum_to_xlnet_scores(mem_len, seg_len, monkeypatch):
    weights = txl.xl_demo_weights(16, 4, seed=3)
    hidden = np.random.default_rng(1).standard_normal((mem_len + seg_len, 16))
    queries = hidden[mem_len:]
    terms = txl.transformer_xl_score_terms(queries, hidden, weights, mem_len=mem_len)
    expected = _xlnet_scores(weights, queries, hidden, monkeypatch)
    np.testing.assert_allclose(terms.total, expected, rtol=1e-6, atol=1e-6)  # XLNet builds R in float32
    # each term from its own definition in the paper, one (i, j) at a time
    for i in range(seg_len):
        for j in range(mem_len + seg_len):
            q = queries[i] @ weights.w_q
            k = hidden[j] @ weights.w_k
            p = i + mem_len - j
            w = 1 / 10000 ** (np.arange(0, 16, 2) / 16)
            rel = np.concatenate([np.sin(p * w), np.cos(p * w)]) @ weights.w_r
            assert terms.content_content[i, j] == pytest.approx(q @ k, abs=1e-12)
            assert terms.content_position[i, j] == pytest.approx(q @ rel, abs=1e-12)
            assert terms.content_bias[i, j] == pytest.approx(weights.u @ k, abs=1e-12)
            assert terms.position_bias[i, j] == pytest.approx(weights.v @ rel, abs=1e-12)
            assert terms.offset[i, j] == p
    one = terms.row(seg_len - 1)
    np.testing.assert_array_equal(one.total[0], terms.total[-1])


def test_terms_refuse_mismatched_shapes():
    weights = txl.xl_demo_weights(8, 2)
    with pytest.raises(ValueError, match="d_model = 8"):
        txl.transformer_xl_score_terms(np.zeros((2, 6)), np.zeros((3, 8)), weights)
    with pytest.raises(ValueError, match=r"d_model = 8 .* got \(2, 8\) and \(3, 6\)"):
        txl.transformer_xl_score_terms(np.zeros((2, 8)), np.zeros((3, 6)), weights)
    with pytest.raises(ValueError, match="mem_len"):
        txl.transformer_xl_score_terms(np.zeros((2, 8)), np.zeros((3, 8)), weights, mem_len=3)


@pytest.mark.parametrize(("mem_len", "seg_len"), [(0, 4), (3, 3), (5, 2), (2, 6)])
def test_segment_positions(mem_len, seg_len):
    seg = txl.segment_positions(mem_len, seg_len)
    k_len = mem_len + seg_len
    assert seg.offset.shape == (seg_len, k_len)
    for i in range(seg_len):
        assert len(set(seg.offset[i])) == k_len  # every key at a different offset from the query
        for j in range(k_len):
            assert seg.offset[i, j] == (mem_len + i) - j
    assert seg.naive.tolist() == list(range(mem_len)) + list(range(seg_len))
    for j in range(k_len):
        others = [seg.naive[o] for o in range(k_len) if o != j]
        assert seg.collides[j] == (seg.naive[j] in others)
    assert seg.collides.sum() == 2 * min(mem_len, seg_len)
    assert seg.is_memory.sum() == mem_len
