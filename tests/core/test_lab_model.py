"""The lab's micro BERT: RoPE and ALiBi as posviz computes them, tables at the documented key, and a model without
positions that cannot tell one order of its tokens from another."""

import dataclasses

import numpy as np
import pytest
import torch

import posviz
from posviz.lab import TABLE_KEY, MicroBert
from posviz.lab.model import SelfAttention, alibi, rope_angles, rotate

torch.set_num_threads(1)


def test_rotate_equals_posviz_apply_rope():
    x = torch.randn(2, 4, 12, 16, generator=torch.Generator().manual_seed(0))
    rotated = rotate(x, *rope_angles(12, 16))
    inv_freq, _ = posviz.rope_inv_freq(16)
    expected = posviz.apply_rope(x.numpy(), np.arange(12), inv_freq, layout="half")
    np.testing.assert_allclose(rotated.numpy(), expected, atol=2e-6)


def test_rotated_scores_depend_on_the_offset_only():
    rng = torch.Generator().manual_seed(1)
    q, k = torch.randn(16, generator=rng).expand(20, 16), torch.randn(16, generator=rng).expand(20, 16)
    cos, sin = rope_angles(20, 16)
    scores = (rotate(q, cos, sin) @ rotate(k, cos, sin).T).numpy()  # scores[m, n] = q_m . k_n, same q and k
    np.testing.assert_allclose(scores[1:, 1:], scores[:-1, :-1], atol=1e-4)  # constant along every diagonal
    assert np.ptp(scores[0]) > 1.0  # yet not constant: it changes with m - n


def test_alibi_bias_equals_posviz():
    np.testing.assert_array_equal(alibi(4, 9).numpy(), posviz.alibi_bias(4, 9, causal=False).astype(np.float32))


def _reference_attention(module: SelfAttention, x: np.ndarray, encoding: str) -> np.ndarray:
    """Multi-head attention written out in numpy, positions from posviz: softmax(q k^T / sqrt(d) + bias) v."""
    weights = {name: p.detach().double().numpy() for name, p in module.named_parameters()}
    length, hidden = x.shape
    q, k, v = np.split(x @ weights["qkv.weight"].T + weights["qkv.bias"], 3, axis=1)
    q, k, v = (t.reshape(length, 4, hidden // 4).transpose(1, 0, 2) for t in (q, k, v))
    if encoding == "rope":
        inv_freq, _ = posviz.rope_inv_freq(hidden // 4)
        q, k = (posviz.apply_rope(t, np.arange(length), inv_freq, layout="half") for t in (q, k))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(hidden // 4)
    if encoding == "alibi":
        scores = scores + posviz.alibi_bias(4, length, causal=False)
    attn = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attn /= attn.sum(axis=-1, keepdims=True)
    y = (attn @ v).transpose(1, 0, 2).reshape(length, hidden)
    return y @ weights["proj.weight"].T + weights["proj.bias"]


@pytest.mark.parametrize("encoding", ["rope", "alibi", "nope"])
def test_attention_matches_a_numpy_reference(encoding):
    torch.manual_seed(2)
    module = SelfAttention(64, 4, encoding)
    x = torch.randn(1, 10, 64)
    with torch.no_grad():
        out = module(x)[0].numpy()
    np.testing.assert_allclose(out, _reference_attention(module, x[0].double().numpy(), encoding), atol=1e-5)


def test_position_tables_live_at_the_documented_key():
    models = {enc: MicroBert(enc, vocab=33, outputs=32, max_positions=24) for enc in posviz.lab.ENCODINGS}
    sin = models["sinusoidal"].state_dict()[TABLE_KEY]
    np.testing.assert_allclose(sin.numpy(), posviz.sinusoidal(24, 64), atol=1e-6)
    assert not models["sinusoidal"].embeddings.position_embeddings.weight.requires_grad
    np.testing.assert_allclose(models["sin-init"].position_table(), posviz.sin_init(24, 64), atol=1e-6)
    assert models["sin-init"].embeddings.position_embeddings.weight.requires_grad
    assert abs(models["learned"].position_table().std() - 0.02) < 0.002
    for enc in ("rope", "alibi", "nope"):
        assert models[enc].position_table() is None
        assert not any("position" in key for key in models[enc].state_dict())


def test_the_sinusoidal_model_continues_its_table_past_the_last_row():
    model = MicroBert("sinusoidal", vocab=33, outputs=32, max_positions=16)
    ids = torch.zeros(1, 40, dtype=torch.long)
    with torch.no_grad():
        added = model.embeddings(ids) - model.embeddings.word_embeddings(ids)
    np.testing.assert_allclose(added[0].numpy(), posviz.sinusoidal(40, 64), atol=1e-5)


def test_without_positions_every_order_gives_the_same_outputs():
    ids = torch.randint(0, 33, (2, 24), generator=torch.Generator().manual_seed(3))
    order = torch.randperm(24, generator=torch.Generator().manual_seed(4))
    for encoding in posviz.lab.ENCODINGS:
        torch.manual_seed(5)
        model = MicroBert(encoding, vocab=33, outputs=32, max_positions=24).eval()
        with torch.no_grad():
            same = torch.allclose(model(ids[:, order]), model(ids)[:, order], atol=1e-5)
        assert same == (encoding == "nope"), encoding


@pytest.mark.parametrize(("heads", "length"), [(4, 9), (4, 32), (3, 16), (8, 1)])
def test_the_alibi_bias_is_the_same_read_backwards(heads, length):
    """-m_h |i - j| is unchanged by i -> L-1-i, j -> L-1-j (|(L-1-i) - (L-1-j)| = |i - j|): reversing the sequence
    leaves the lab's bias exactly where it was, so positions p and L-1-p are mirror images to it."""
    bias = alibi(heads, length).numpy()
    np.testing.assert_array_equal(bias, bias[:, ::-1, ::-1])
    i = np.arange(length)
    slopes = -bias[:, 0, 1] if length > 1 else np.zeros(heads)
    np.testing.assert_allclose(bias, -slopes[:, None, None] * np.abs(i[:, None] - i[None, :]), rtol=1e-6)


def test_an_alibi_encoder_cannot_tell_left_from_right():
    """With a bias that is the same read backwards and nothing else positional, the whole encoder commutes with
    reversal: the output for the reversed tokens is the reversed output, whatever the weights. Position p of a
    sequence and position L-1-p of its mirror get the same prediction, so over inputs as likely reversed as not
    (the isolation check's random tokens) a prediction of p is right at most half the time: for every (x, p) it
    gets right, it names p at L-1-p of reversed x too, which is wrong. RoPE turns keys ahead and behind by opposite
    angles, so its encoder does tell them apart."""
    ids = torch.randint(0, 33, (3, 20), generator=torch.Generator().manual_seed(6))
    flipped = ids.flip(1)
    for encoding, mirrors in (("alibi", True), ("rope", False), ("sinusoidal", False), ("learned", False)):
        torch.manual_seed(7)
        model = MicroBert(encoding, vocab=33, outputs=20, max_positions=20).eval()
        with torch.no_grad():
            out, out_flipped = model(ids), model(flipped)
        assert torch.allclose(out_flipped, out.flip(1), atol=1e-5) == mirrors, encoding


def test_an_alibi_position_reader_is_right_at_most_half_the_time():
    """The bound above, measured: an ALiBi encoder trained a little to name each token's position from random tokens,
    scored on a batch and its reversal, never passes 1/2 (and a learned table, which has absolute positions, does)."""
    from posviz.lab.evaluate import position_batch
    from posviz.lab.train import TrainConfig, accuracy, build_model, fit

    config = TrainConfig(steps=40, seq_len=8, min_len=8, vocab=4, hidden=32, heads=2)
    tokens, labels = position_batch(np.random.default_rng([0, 1]), config, 256)
    both = (np.concatenate([tokens, tokens[:, ::-1]]), np.concatenate([labels, labels]))
    scores = {}
    for encoding in ("alibi", "learned"):
        model = build_model(dataclasses.replace(config, encoding=encoding), outputs=config.seq_len)
        batches = np.random.default_rng(0)
        fit(model, config, lambda rng=batches: position_batch(rng, config, config.batch))
        scores[encoding] = accuracy(model, np.ascontiguousarray(both[0]), both[1])
    assert scores["alibi"] <= 0.5 + 0.01 < scores["learned"], scores  # 0.01: argmax ties broken by rounding
