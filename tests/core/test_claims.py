"""The Myth-or-fact checks: every claim's evidence and verdict recomputed here independently — scalar loops over
the articles' own formulas, transformers' RoPE and BLOOM/paper ALiBi oracles, scipy's rank correlation — never by
calling the check under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from posviz import claims
from posviz.encodings.learned import example_table

from . import _oracles as oracle

FAST = settings(max_examples=30, deadline=None)


def table_loop(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """The paper's table by a scalar loop: PE[p, 2k] = sin(p / base^(2k/d)), PE[p, 2k+1] = cos(same)."""
    pe = np.zeros((n, d))
    for p in range(n):
        for k in range(0, d, 2):
            pe[p, k] = math.sin(p / base ** (k / d))
            if k + 1 < d:
                pe[p, k + 1] = math.cos(p / base ** (k / d))
    return pe


def article_000_row(pos: int, d: int) -> np.ndarray:
    """Article 000's function, as written: ``i`` steps by 2 and the exponent is 2 * i / d."""
    pe = np.zeros(d)
    for i in range(0, d, 2):
        pe[i] = math.sin(pos / (10000 ** (2 * i / d)))
        if i + 1 < d:
            pe[i + 1] = math.cos(pos / (10000 ** (2 * i / d)))
    return pe


def test_every_claim_has_a_source_and_a_verdict_code():
    assert len(claims.CLAIMS) >= 12
    for claim_id, claim in claims.CLAIMS.items():
        assert claim.id == claim_id
        assert claim.sources and all(s in {"000", "001", "002", "003"} for s in claim.sources)
    assert set(claims.verdicts().values()) <= set(claims.VERDICTS)


def test_unknown_claim_and_bad_parameters_raise_value_errors():
    with pytest.raises(ValueError, match="no claim 'bogus'"):
        claims.check("bogus")
    with pytest.raises(ValueError, match="head_dim must be even"):
        claims.check("rot90", head_dim=7)
    with pytest.raises(ValueError, match="even d_model"):
        claims.check("base", d_model=5)
    with pytest.raises(ValueError, match="context"):
        claims.check("base", context=2)


def test_doubled_exponent_matches_article_000_loop():
    d, n = 512, 512
    found = claims.check("exponent", d_model=d, n_positions=n)
    rows = np.stack([article_000_row(p, d) for p in (1, 7, 300)])
    k = np.arange(d // 2)
    omega = 2 * np.pi / found.arrays["wavelength_doubled"]
    np.testing.assert_allclose(rows[:, 0::2], np.sin(np.array([1, 7, 300])[:, None] * omega), atol=1e-12)
    np.testing.assert_allclose(rows[:, 1::2], np.cos(np.array([1, 7, 300])[:, None] * omega), atol=1e-12)  # shared
    paper = table_loop(2, d)[1]  # PE(1): sin(w_k), cos(w_k) with the paper's w_k
    np.testing.assert_allclose(np.sin(2 * np.pi / found.arrays["wavelength_correct"]), paper[0::2], atol=1e-12)
    assert found.numbers["still_doubled"] == sum(n * 10000 ** (-4 * kk / d) < 0.1 for kk in k)
    assert found.numbers["still_correct"] == sum(n * 10000 ** (-2 * kk / d) < 0.1 for kk in k)
    assert found.numbers["still_doubled"] > d // 4 > found.numbers["still_correct"]  # the upper half hardly moves
    assert found.verdict == "wrong"


@FAST
@given(st.integers(1, 200).map(lambda h: 2 * h))
def test_row_norm_is_sqrt_half_d_not_sqrt_d(d):
    found = claims.check("norm", d_model=d)
    measured = np.linalg.norm(table_loop(3, d), axis=1) if d <= 64 else np.full(3, math.sqrt(d / 2))
    np.testing.assert_allclose(found.arrays["norm"], math.sqrt(d / 2), rtol=1e-12)
    np.testing.assert_allclose(measured, math.sqrt(d / 2), rtol=1e-12)
    assert found.numbers["claimed"] == pytest.approx(math.sqrt(d))
    assert found.numbers["scaled"] == pytest.approx(math.sqrt(0.5))
    assert found.verdict == "wrong"


def test_norm_of_512_is_16():
    assert claims.check("norm").numbers["measured_max"] == pytest.approx(16.0)
    assert np.linalg.norm(table_loop(40, 512)[39]) == pytest.approx(16.0)


def _errors(dtype: str, positions: np.ndarray, d: int) -> np.ndarray:
    """Largest |sin/cos error| per position, everything rounded to ``dtype`` (torch for bfloat16)."""
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    exact = positions[:, None] * omega[None, :]
    kind = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    angle = torch.tensor(positions, dtype=torch.float64).to(kind)[:, None] * torch.tensor(omega).to(kind)[None, :]
    sin, cos = angle.sin().double().numpy(), angle.cos().double().numpy()
    return np.maximum(np.abs(sin - np.sin(exact)), np.abs(cos - np.cos(exact))).max(axis=1)


def test_precision_breakdown_positions():
    found = claims.check("precision")
    positions = found.arrays["position"]
    assert positions[-1] == 32767
    for dtype in ("float16", "bfloat16", "float32"):
        worst = _errors(dtype, positions.astype(np.float64), 128)
        np.testing.assert_allclose(found.arrays[dtype], worst, atol=1e-6)
        broken = positions[np.argmax(worst >= 0.5)] if (worst >= 0.5).any() else None
        assert found.numbers[f"broken_{dtype}"] == broken
    assert found.numbers["broken_bfloat16"] < found.numbers["broken_float16"] < 20_000  # far earlier than claimed
    assert found.numbers["broken_float32"] is None and found.numbers["max_float32"] < 0.01
    assert found.numbers["first_pair_float16"] == 0  # the fast pairs break: the article is right about which
    assert found.verdict == "partly"


@FAST
@given(st.integers(1, 200))
def test_shift_is_a_rotation_and_sin_alone_is_not_enough(k):
    found = claims.check("shift", k=k)
    d, n = 32, 512
    pe = table_loop(n, d)
    m = np.zeros((d, d))
    for i in range(0, d, 2):
        angle = k / 10000 ** (i / d)
        m[i : i + 2, i : i + 2] = [[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]]
    np.testing.assert_allclose(found.arrays["M"], m, atol=1e-12)
    assert np.abs(pe[k:] - pe[:-k] @ m.T).max() < 1e-9
    assert found.numbers["residual"] < 1e-9
    sines = pe[:, 0::2]
    fit = np.linalg.lstsq(sines[:-k], sines[k:], rcond=None)[0]
    assert found.numbers["sin_only"] == pytest.approx(np.linalg.norm(sines[k:] - sines[:-k] @ fit, axis=1).max())
    assert found.verdict == "holds"


def test_alibi_article_slopes_against_the_paper():
    found = claims.check("alibi")
    for h in (8, 12, 16):
        paper = np.asarray(oracle.paper_alibi_slopes(h))
        article = np.array([2.0 ** (-(8 + k) / h) for k in range(h)])
        np.testing.assert_allclose(found.arrays[f"paper_{h}"], paper, rtol=1e-12)
        np.testing.assert_allclose(found.arrays[f"article_{h}"], article, rtol=1e-12)
        assert found.numbers[f"agree_{h}"] == int(np.isclose(paper, article, rtol=1e-12, atol=0).sum())
    assert (found.numbers["agree_8"], found.numbers["agree_12"], found.numbers["agree_16"]) == (1, 0, 1)
    assert found.verdict == "wrong"


def test_rot90_is_not_rope():
    found = claims.check("rot90", head_dim=8, n_positions=16, seed=3)
    x = np.random.default_rng(3).standard_normal(8)
    inv = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    rope = oracle.gptj_rope(np.broadcast_to(x, (16, 8)).copy(), np.arange(16), inv)
    flipped = torch.rot90(torch.tensor(x.reshape(4, 2))).reshape(-1).numpy()
    assert sorted(flipped) == sorted(x) and not np.allclose(flipped, x)  # a shuffle of the entries
    expected = np.linalg.norm(rope - flipped, axis=1) / np.linalg.norm(x)
    np.testing.assert_allclose(found.arrays["rot90"], expected, atol=1e-12)
    assert found.arrays["rot90"].min() > 0.1
    assert found.arrays["quarter_turn"].max() < 1e-12
    assert found.verdict == "wrong"


@pytest.mark.parametrize("context", [512, 4096])
def test_base_order_is_a_rank_correlation_whose_best_base_moves(context):
    found = claims.check("base", d_model=64, context=context)
    offsets = np.arange(1, context)
    for index in (0, 8, 12, 24):
        base = 10.0 ** (1 + index / 4)
        omega = base ** (-np.arange(0, 64, 2) / 64)
        similarity = np.cos(offsets[:, None] * omega).mean(axis=1)
        rho = spearmanr(offsets, -similarity).statistic
        assert found.arrays["order"][index] == pytest.approx(rho, abs=0.02)  # ties broken by order here
        assert found.arrays["near"][index] == pytest.approx(1 - similarity[0])
    assert np.all(np.diff(found.arrays["near"]) < 0)  # a larger base always makes neighbours more alike


def test_no_single_best_base():
    found = claims.check("base")
    best = [found.numbers[f"best_{c}"] for c in claims.CONTEXTS]
    assert best == sorted(best) and best[0] < best[-1]  # the best base grows with the context
    assert found.verdict == "wrong"


def test_learned_blocks_measures():
    found = claims.check("blocks")
    learned = example_table()
    unit = learned / np.linalg.norm(learned, axis=1, keepdims=True)
    similarity = unit @ unit.T
    np.testing.assert_allclose(found.arrays["learned"], similarity, atol=1e-12)
    n = len(similarity)
    spread = max(np.ptp(np.diagonal(similarity, k)) for k in range(n))
    assert found.numbers["learned_spread"] == pytest.approx(spread)
    diagonal_mean = {k: np.diagonal(similarity, k).mean() for k in range(n)}  # S is symmetric
    band = np.array([[diagonal_mean[abs(i - j)] for j in range(n)] for i in range(n)])
    share = 1 - ((similarity - band) ** 2).sum() / ((similarity - similarity.mean()) ** 2).sum()
    assert found.numbers["learned_share"] == pytest.approx(share)
    assert found.numbers["sin_spread"] < 1e-12 and found.numbers["sin_share"] == pytest.approx(1.0)
    assert found.verdict == "partly"


def test_rope_snippets_against_transformers():
    found = claims.check("snippets")
    default, _ = oracle.hf_rope_inv_freq(128, base=10000.0)
    linear, _ = oracle.hf_rope_inv_freq(128, base=10000.0, scaling={"rope_type": "linear", "factor": 4.0})
    theta, _ = oracle.hf_rope_inv_freq(128, base=50000.0)
    dynamic = {"rope_type": "dynamic", "factor": 2.0}
    short, _ = oracle.hf_rope_inv_freq(128, base=50000.0, scaling=dynamic, max_position_embeddings=2048, seq_len=2048)
    long, _ = oracle.hf_rope_inv_freq(128, base=50000.0, scaling=dynamic, max_position_embeddings=2048, seq_len=8192)
    np.testing.assert_allclose(found.arrays["linear_short"], linear / default, rtol=1e-5)
    np.testing.assert_allclose(found.arrays["theta_short"], theta / default, rtol=1e-5)
    np.testing.assert_allclose(found.arrays["dynamic_short"], short / default, rtol=1e-5)
    np.testing.assert_allclose(found.arrays["dynamic_long"], long / default, rtol=1e-5)
    assert found.arrays["theta_short"][0] == 1.0 and found.numbers["theta_slowest"] == pytest.approx(5 ** (-126 / 128))
    assert found.verdict == "partly"


def test_sum_of_encodings_is_not_the_encoding_of_the_sum():
    found = claims.check("sum", d_model=16, n_positions=8)
    pe = table_loop(15, 16)
    for i, j in [(0, 0), (0, 5), (3, 4), (7, 7)]:
        expected = np.linalg.norm(pe[i] + pe[j] - pe[i + j]) / np.linalg.norm(pe[i + j])
        assert found.arrays["error"][i, j] == pytest.approx(expected)
    assert found.numbers["min"] >= 0.99  # PE(0) = (0, 1, 0, 1, ...) alone is off by a whole norm
    assert found.numbers["rotation"] < 1e-12
    assert found.verdict == "wrong"


def test_tril_bias_lets_attention_into_the_future():
    found = claims.check("tril", n_heads=8, seq_len=16)
    slope = 0.5
    bias = torch.tril(-slope * torch.abs(torch.arange(16.0)[:, None] - torch.arange(16.0)[None, :])).numpy()
    np.testing.assert_allclose(found.arrays["bias"], bias, atol=0)
    for query in (0, 5, 14):
        weights = np.exp(bias[query]) / np.exp(bias[query]).sum()
        assert found.arrays["future_mass"][0, query] == pytest.approx(weights[query + 1 :].sum())
    assert found.numbers["first_query"] == pytest.approx(15 / 16)
    assert found.arrays["future_mass"][:, -1].max() == 0.0
    assert found.verdict == "partly"


def test_max_position_embeddings_matters_for_dynamic_and_yarn():
    found = claims.check("max_pos")
    change = dict(zip(found.arrays["type"], found.arrays["change"], strict=True))
    for rope_type, scaling in claims.MAX_POSITION_TYPES.items():
        a, _ = oracle.hf_rope_inv_freq(128, scaling=scaling, max_position_embeddings=2048, seq_len=8192)
        b, _ = oracle.hf_rope_inv_freq(128, scaling=scaling, max_position_embeddings=32768, seq_len=8192)
        assert change[rope_type] == pytest.approx(np.abs(np.log(a / b)).max(), abs=1e-5)
    assert change["default"] == change["linear"] == 0.0
    assert change["dynamic"] == pytest.approx(math.log(4 * 4 - 3) * 128 / 126 * 126 / 128)  # slowest pair
    assert change["yarn"] > 0.1
    assert found.numbers["kept"] == "default, linear" and found.verdict == "partly"
