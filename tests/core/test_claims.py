"""The Myth-or-fact checks: every claim's evidence and verdict recomputed here independently — scalar loops over
the articles' own formulas, transformers' RoPE, ALBERT and BLOOM/paper ALiBi oracles, torch's own errors, scipy's
rank correlation — never by calling the check under test. And every claim's sources are full citations."""

from __future__ import annotations

import logging
import math
import re

import numpy as np
import pytest
import torch
import transformers
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from transformers import AlbertConfig, AlbertModel, LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from posviz.encodings.learned import example_table
from posviz.lessons import attention_demo, claims

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
    assert len(claims.CLAIMS) == 20
    for claim_id, claim in claims.CLAIMS.items():
        assert claim.id == claim_id and claim.topic in claims.TOPICS
        assert claim.sources and set(claim.sources) <= set(claims.SOURCES)
        assert claim.articles and set(claim.articles) <= {"000", "001", "002", "003"}
        assert list(claim.sources[: len(claim.articles)]) == list(claim.articles)  # articles first
    topics = [claim.topic for claim in claims.CLAIMS.values()]
    assert topics == sorted(topics, key=claims.TOPICS.index)  # grouped by topic, in the page's order
    assert set(claims.verdicts().values()) <= set(claims.VERDICTS)


AUTHOR = re.compile(r"^(von |van |de |Le )?[A-Z][\w'-]*( [A-Z][\w'-]*)*, ([A-ZŁ]\. ?)+$")


def test_every_source_is_a_full_citation_in_both_languages():
    """A lecturer can cite every source: an article by its title (in Chinese, and in English translation), a paper by
    authors, year, title, venue and arXiv id."""
    cited = {key for claim in claims.CLAIMS.values() for key in claim.sources}
    assert cited == set(claims.SOURCES)  # no claim cites a missing source, no source is cited by nothing
    articles = {k: s for k, s in claims.SOURCES.items() if s.kind == "article"}
    assert sorted(articles) == ["000", "001", "002", "003"]
    for source in articles.values():
        zh, en = source.title("zh"), source.title("en")
        assert re.search(r"[\u4e00-\u9fff]", zh) and zh in en and len(en) > len(zh) + 20  # original + translation
        assert not source.authors and source.year is None  # the reference set names no author or date
    assert [k for k, s in articles.items() if s.descriptive] == ["002"]  # the one without a title line
    for key, source in claims.SOURCES.items():
        if source.kind == "article":
            continue
        assert source.kind == "paper" and source.title("en") == source.title("zh") != ""
        assert source.authors and all(AUTHOR.match(a) for a in source.authors), source.authors
        assert 2015 <= source.year <= 2025 and source.venue
        assert re.fullmatch(r"\d{4}\.\d{4,5}", source.arxiv)
        yy = int(source.arxiv[:2])
        assert 2000 + yy <= source.year <= 2000 + yy + 3  # posted on arXiv at most 3 years before the venue
        assert key.startswith(source.first_author.lower().replace(" ", "")) and key.endswith(str(source.year))
    paper = claims.SOURCES["vaswani2017"]
    assert (paper.arxiv, paper.venue, len(paper.authors)) == ("1706.03762", "NeurIPS 2017", 8)
    assert claims.SOURCES["press2022"].arxiv == "2108.12409" and claims.SOURCES["press2022"].venue == "ICLR 2022"
    assert claims.sources("xlnet") == (claims.SOURCES["001"], claims.SOURCES["yang2019"])
    with pytest.raises(ValueError, match="no claim"):
        claims.sources("bogus")


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


def test_the_exponent_verdict_follows_the_frequencies():
    """The verdict is the rule ``exponent_verdict`` applied to the two rules' frequencies: for d = 2 the article's
    loop has only pair 0, where 10000^0 = 1 either way (a scalar loop of its own here), so the claim holds; and the
    rule flips on constructed frequencies a relative 1e-6 apart but not on ones 1e-12 apart."""
    loop = [2 * math.pi / (10000 ** (2 * i / 2)) for i in range(0, 2, 2)]
    found = claims.check("exponent", d_model=2, n_positions=512)
    np.testing.assert_allclose(found.arrays["wavelength_doubled"], loop, rtol=1e-15)
    np.testing.assert_allclose(found.arrays["wavelength_correct"], loop, rtol=1e-15)
    assert found.verdict == "holds"
    assert claims.check("exponent", d_model=4).verdict == "wrong"  # pair 1: 10000^(-1) against 10000^(-1/2)
    omega = 10000.0 ** (-2 * np.arange(8) / 16)
    assert claims.exponent_verdict(omega, omega * (1 + 1e-12)) == "holds"
    assert claims.exponent_verdict(omega, omega * np.r_[np.ones(7), 1 + 1e-6]) == "wrong"
    with pytest.raises(ValueError, match="same pairs"):
        claims.exponent_verdict(omega, omega[:-1])


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


@pytest.mark.parametrize(("d", "context"), [(512, 2048), (64, 512)])
def test_a_small_base_does_not_touch_the_fastest_pair(d, context):
    """Article 002's mechanism: a small base would make the high-frequency dimensions denser. The first pair's
    frequency is base^0 = 1 whatever the base; what moves is the slowest pair, 2 pi base^((d - 2) / d)."""
    found = claims.check("base", d_model=d, context=context)
    bases = found.arrays["base"]
    for index, base in enumerate(bases):
        fastest = 2 * math.pi / base ** (-0 / d)
        slowest = 2 * math.pi / base ** (-(d - 2) / d)
        assert found.arrays["fastest_wavelength"][index] == pytest.approx(2 * math.pi, rel=1e-15) == fastest
        assert found.arrays["slowest_wavelength"][index] == pytest.approx(slowest, rel=1e-12)
        repeating = sum(2 * math.pi * base ** (k / d) < context for k in range(0, d, 2))
        assert found.arrays["wrapping_pairs"][index] == repeating
    assert found.numbers["omega0_spread"] == 0.0 and found.numbers["fastest"] == pytest.approx(2 * math.pi)
    assert found.numbers["slowest_small"] == pytest.approx(2 * math.pi * 100.0 ** ((d - 2) / d))
    assert found.numbers["slowest_10000"] == pytest.approx(2 * math.pi * 10000.0 ** ((d - 2) / d))
    assert found.numbers["wrap_small"] > found.numbers["wrap_10000"]  # the small base changes the slow end
    if (d, context) == (512, 2048):
        assert found.numbers["wrap_small"] == found.numbers["pairs"] == 256  # every pair repeats at base 100


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


def _article_llama_config():
    """Article 003's two snippets as a LlamaConfig of Llama 2 7B's shape: the first dict, then ``dict.update``."""
    config = {
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "linear", "factor": 4.0},
        "max_position_embeddings": 32768,
    }
    config.update(
        {
            "rope_theta": 50000.0,
            "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048},
        }
    )
    return transformers.LlamaConfig(
        hidden_size=4096, num_attention_heads=32, num_hidden_layers=1, intermediate_size=8, vocab_size=8, **config
    )


def test_article_config_is_the_updated_dict():
    assert claims.article_config() == {
        "rope_theta": 50000.0,
        "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048},
        "max_position_embeddings": 32768,  # kept from the first snippet by dict.update
    }


def test_rope_snippets_as_transformers_reads_them():
    """What transformers 5.24 does with article 003's updated config: it warns that original_max_position_embeddings
    is not a dynamic key, and LlamaRotaryEmbedding keeps rope_theta 50000's frequencies at 8,192 tokens
    (``dynamic_rope_update`` recomputes them only past max_position_embeddings = 32,768)."""
    found = claims.check("snippets")
    default = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    hf_logger = transformers.utils.logging.get_logger("transformers.modeling_rope_utils")
    level = transformers.utils.logging.get_verbosity()
    transformers.utils.logging.set_verbosity_warning()
    hf_logger.addHandler(handler)
    try:
        config = _article_llama_config()
        rotary = LlamaRotaryEmbedding(config)
    finally:
        hf_logger.removeHandler(handler)
        transformers.utils.logging.set_verbosity(level)
    assert any(
        "original_max_position_embeddings" in r.getMessage() and "Unrecognized" in r.getMessage() for r in records
    )
    initial = rotary.inv_freq.clone()
    x = torch.zeros(1, 8192, 128)
    rotary(x, torch.arange(8192)[None])
    at_8192 = rotary.inv_freq.double().numpy()
    np.testing.assert_array_equal(at_8192, initial.double().numpy())  # no update at 8,192 tokens
    theta_50000 = 50000.0 ** (-np.arange(0, 128, 2) / 128)
    np.testing.assert_allclose(at_8192, theta_50000, rtol=1e-6)
    np.testing.assert_allclose(found.arrays["article"], at_8192 / default, rtol=1e-5)
    np.testing.assert_allclose(found.arrays["theta"], theta_50000 / default, rtol=1e-12)
    # past max_position_embeddings the dynamic update does act: the forward at 65,536 positions recomputes inv_freq
    rotary(torch.zeros(1, 1, 128), torch.tensor([[65535]]))
    np.testing.assert_allclose(found.arrays["past"], rotary.inv_freq.double().numpy() / default, rtol=1e-5)
    assert found.numbers["past_slowest"] < found.numbers["article_slowest"]
    # what the article describes needs max_position_embeddings 2,048: ROPE_INIT_FUNCTIONS["dynamic"] at 8,192
    meant, _ = oracle.hf_rope_inv_freq(
        128, base=50000.0, scaling={"rope_type": "dynamic", "factor": 2.0}, max_position_embeddings=2048, seq_len=8192
    )
    np.testing.assert_allclose(found.arrays["meant"], meant / default, rtol=1e-5)
    linear, _ = oracle.hf_rope_inv_freq(128, base=10000.0, scaling={"rope_type": "linear", "factor": 4.0})
    np.testing.assert_allclose(found.arrays["linear"], linear / default, rtol=1e-5)
    assert found.numbers["theta_slowest"] == pytest.approx(5 ** (-126 / 128))
    assert found.numbers["unchanged"] and found.numbers["ignored"]
    assert (found.numbers["max_position_embeddings"], found.numbers["original"]) == (32768, 2048)
    assert found.verdict == "wrong"


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
    assert found.numbers["future_max"] == pytest.approx(15 / 16)  # query 0 of every head: 15 zeros against one 0
    assert found.verdict == "partly"


def test_the_tril_verdict_follows_the_future_attention():
    """The verdict is ``tril_verdict`` of what the check measured: a single token has no future key, so tril alone
    is ALiBi's causal bias and the claim holds; the rule flips with the future share around TRIL_FUTURE_MASS and
    turns "wrong" when tril plus the mask is not the causal bias."""
    alone = claims.check("tril", n_heads=8, seq_len=1)
    assert alone.numbers["future_max"] == 0.0 and alone.numbers["masked_equal"] is True
    assert alone.verdict == "holds"
    two = claims.check("tril", n_heads=1, seq_len=2)  # query 0 of one head: exp(0) / (exp(0) + exp(0)) on key 1
    assert two.numbers["future_max"] == pytest.approx(0.5)
    assert two.verdict == "partly"
    limit = claims.TRIL_FUTURE_MASS
    assert claims.tril_verdict(True, limit / 2) == "holds"
    assert claims.tril_verdict(True, 2 * limit) == "partly"
    assert claims.tril_verdict(False, 0.0) == claims.tril_verdict(False, 0.9) == "wrong"


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
    assert found.numbers["article"] == _article_llama_config().max_position_embeddings == 32768


# ------------------------------------------------------------------------- what the articles get wrong (more)


def test_the_paper_scaled_the_embeddings_and_it_balances_like_the_article():
    """Vaswani et al. 2017, section 3.4: the embedding weights are multiplied by sqrt(d_model). Token vectors drawn
    N(0, 1/d) have norm ~ 1; ||PE|| = sqrt(d/2) (scalar loop); E sqrt(d) + PE = sqrt(d) (E + PE / sqrt(d))."""
    found = claims.check("unscaled", d_model=768)
    widths = found.arrays["d_model"]
    assert list(widths) == sorted({*claims.SCALE_WIDTHS, 768})
    for index, d in enumerate(widths):
        if d <= 128:
            row = table_loop(5, int(d))[4]
            assert found.arrays["position_norm"][index] == pytest.approx(np.linalg.norm(row), rel=1e-12)
        assert found.arrays["position_norm"][index] == pytest.approx(math.sqrt(d / 2), rel=1e-12)
        # the mean norm of 256 vectors of N(0, 1/d) entries: 1 within a few standard errors
        assert found.arrays["token_norm"][index] == pytest.approx(1.0, abs=5 / math.sqrt(2 * 256 * d) + 1 / (4 * d))
    token, position = found.arrays["token_norm"], found.arrays["position_norm"]
    np.testing.assert_allclose(found.arrays["unscaled"], position / token, rtol=1e-12)
    np.testing.assert_allclose(found.arrays["paper"], position / (token * np.sqrt(widths)), rtol=1e-12)
    np.testing.assert_allclose(found.arrays["article"], found.arrays["paper"], rtol=1e-12)  # the same balance
    np.testing.assert_allclose(found.arrays["paper"], math.sqrt(0.5), rtol=0.02)
    assert found.numbers["unscaled"] == pytest.approx(math.sqrt(768 / 2), rel=0.02)
    assert found.verdict == "wrong"


def _unseen_share_loop(step: int, train_len: int, omega) -> float:
    """For one position or distance: the share of pairs whose angle (mod 2 pi) lies outside the arc
    [0, (T - 1) omega_k] that training swept, for the pairs that never completed a turn."""
    unseen = 0
    for w in omega:
        swept = (train_len - 1) * w
        angle = math.fmod(step * w, 2 * math.pi)
        unseen += swept < 2 * math.pi and angle > swept + 1e-9
    return unseen / len(omega)


@pytest.mark.parametrize("train_len", [512, 2048])
def test_extrapolation_meets_angles_training_never_produced(train_len):
    found = claims.check("extrapolate", train_len=train_len)
    sin_omega = [10000.0 ** (-k / 512) for k in range(0, 512, 2)]
    rope_omega = oracle.hf_default_rope_inv_freq(128, 10000.0)  # transformers' RoPE frequencies
    steps = found.arrays["step"]
    assert steps[0] == 0 and steps[-1] == 4 * train_len and {train_len - 1, train_len, 2 * train_len} <= set(steps)
    for step in (0, train_len // 2, train_len - 1, train_len, 2 * train_len, 3 * train_len + 1, 4 * train_len):
        i = int(np.searchsorted(steps, step))
        if steps[i] != step:
            continue
        assert found.arrays["sinusoidal"][i] == pytest.approx(_unseen_share_loop(step, train_len, sin_omega))
        assert found.arrays["rope"][i] == pytest.approx(_unseen_share_loop(step, train_len, rope_omega), abs=1e-12)
    inside = steps < train_len
    assert found.arrays["rope"][inside].max() == found.arrays["sinusoidal"][inside].max() == 0.0  # nothing new
    slow = sum((train_len - 1) * w < 2 * math.pi for w in rope_omega)
    assert found.numbers["rope_slow"] == slow and found.numbers["rope_at_t"] == pytest.approx(slow / 64)
    assert found.numbers["sin_slow"] == sum((train_len - 1) * w < 2 * math.pi for w in sin_omega)
    assert found.arrays["rope"][~inside].min() > 0.2 and found.arrays["sinusoidal"][~inside].min() > 0.2
    assert found.verdict == "wrong"  # new angles past the training length: extrapolation is not free


def test_past_the_table_is_an_index_error_not_out_of_memory():
    found = claims.check("oom")
    table = torch.nn.Embedding(1024, 768)
    assert table(torch.arange(1024)).shape == (1024, 768)  # every row up to 1,023 exists
    with pytest.raises(IndexError, match="index out of range in self") as caught:
        table(torch.arange(1500))
    assert found.numbers["error"] == f"IndexError: {caught.value}"
    assert found.numbers["first_missing"] == 1024 and found.numbers["missing_rows"] == 476
    length = found.arrays["tokens"]
    np.testing.assert_array_equal(length, np.arange(1, 1501))
    mib = 4 * 768 * length / 2**20  # float32 rows
    np.testing.assert_allclose(np.where(length <= 1024, found.arrays["found"], mib), mib, rtol=1e-15)
    assert (
        np.isnan(found.arrays["found"][length > 1024]).all() and np.isnan(found.arrays["missing"][length < 1024]).all()
    )
    assert found.numbers["input_mib"] == pytest.approx(1500 * 768 * 4 / 2**20)
    assert found.numbers["input_mib"] < 5  # a few MiB
    assert found.numbers["table_mib"] == pytest.approx(3.0)
    assert found.verdict == "wrong"
    with pytest.raises(ValueError, match="longer than the table"):
        claims.check("oom", seq_len=1024)


def test_albert_position_table_matches_the_embeddings_not_the_hidden_size():
    """transformers' ALBERT-base: position_embeddings is (512, embedding_size 128), summed at width 128 and projected
    by embedding_hidden_mapping_in to 768; a 768-wide table added to 128-wide word vectors is torch's shape error."""
    found = claims.check("albert")
    config = AlbertConfig(
        vocab_size=30000,
        embedding_size=128,
        hidden_size=768,
        num_attention_heads=12,
        intermediate_size=3072,
        num_hidden_layers=1,
        max_position_embeddings=512,
    )
    model = AlbertModel(config).eval()
    assert tuple(model.embeddings.position_embeddings.weight.shape) == (found.numbers["rows"], 128)
    mapping = model.encoder.embedding_hidden_mapping_in
    assert (mapping.in_features, mapping.out_features) == (128, 768)
    with torch.no_grad():
        ids = torch.arange(16)[None] + 5
        embedded = model.embeddings(ids)
        hidden = model(ids).last_hidden_state
    widths = dict(zip(found.arrays["stage"], found.arrays["albert"], strict=True))
    assert widths == {
        "word": 128,
        "position": 128,
        "token_type": 128,
        "sum": embedded.shape[-1],
        "hidden": hidden.shape[-1],
    }
    assert set(found.arrays["bert"]) == {768}
    assert (found.numbers["table_width"], found.numbers["albert_params"]) == (128, 512 * 128)
    with pytest.raises(RuntimeError) as caught:
        model.embeddings.word_embeddings(ids)[0] + torch.zeros(16, 768)
    assert found.numbers["error"] == str(caught.value)
    assert found.verdict == "wrong"


def test_rope_uses_the_head_dimension_not_d_model():
    """Llama 2 7B: transformers' head_dim = 4096 / 32 = 128 and LlamaRotaryEmbedding's inv_freq = 10000^(-2i/128)."""
    found = claims.check("head_dim")
    config = LlamaConfig(hidden_size=4096, num_attention_heads=32, max_position_embeddings=4096, rope_theta=10000.0)
    assert config.head_dim == found.numbers["head_dim"] == 128
    inv = LlamaRotaryEmbedding(config).inv_freq.double().numpy()
    np.testing.assert_allclose(found.arrays["head_dim"], 2 * np.pi / inv, rtol=1e-6)
    with_d_model = [2 * math.pi * 10000.0 ** (2 * i / 4096) for i in range(64)]
    np.testing.assert_allclose(found.arrays["d_model"], with_d_model, rtol=1e-12)
    assert found.numbers["slowest_model"] == pytest.approx(with_d_model[-1])
    assert with_d_model[-1] < 10
    assert found.numbers["long_head"] == int((2 * np.pi / inv > 4096).sum()) > 0 == found.numbers["long_model"]
    assert found.verdict == "wrong"


def test_xlnet_query_stream_hides_its_content_and_only_the_position_tells_targets_apart():
    found = claims.check("xlnet", n_tokens=7, seed=5)
    order = [int(i) for i in found.arrays["order"]]
    assert sorted(order) == list(range(7)) and order != list(range(7))
    content, query = oracle.xlnet_hf_masks(order)  # transformers' perm_mask
    np.testing.assert_array_equal(found.arrays["content"], content)
    np.testing.assert_array_equal(found.arrays["query"], query)
    assert found.numbers["own_query"] == sum(query[i, i] for i in range(7)) == 0
    assert found.numbers["own_content"] == sum(content[i, i] for i in range(7)) == 7
    same = 0
    for t in range(6):  # swap steps t and t + 1: the new target at step t sees what the old one saw
        swapped = order.copy()
        swapped[t], swapped[t + 1] = swapped[t + 1], swapped[t]
        _, swapped_query = oracle.xlnet_hf_masks(swapped)
        same += bool(np.array_equal(swapped_query[swapped[t]], query[order[t]]))
    assert found.numbers["same_context"] == same == found.numbers["swaps"] == 6
    seen = [(i, j) for i in range(7) for j in range(7) if query[i, j]]
    right = sum(j > i for i, j in seen) / len(seen)
    assert found.numbers["right_share"] == pytest.approx(right) and right > 0
    assert found.numbers["left_to_right_share"] == 0.0  # GPT's order: only tokens to the left
    assert found.verdict == "wrong"


def _attention(x, w_q, w_k, w_v):
    """One head, the textbook way, row by row: softmax(q_i . k_j / sqrt(d)) v."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    out = np.zeros_like(v)
    for i in range(len(x)):
        scores = np.array([q[i] @ k[j] for j in range(len(x))]) / math.sqrt(q.shape[1])
        weights = np.exp(scores - scores.max())
        out[i] = (weights / weights.sum()) @ v
    return out


def test_attention_scores_are_not_symmetric_and_order_is_lost_by_equivariance():
    found = claims.check("symmetry")
    tokens = attention_demo.tokenize(found.numbers["sentence"])
    x = attention_demo.token_embeddings(tokens)
    w_q, w_k, w_v = attention_demo.projections()
    q, k = x @ w_q, x @ w_k
    scores = np.array([[q[i] @ k[j] for j in range(len(x))] for i in range(len(x))]) / math.sqrt(q.shape[1])
    np.testing.assert_allclose(found.arrays["scores"], scores, rtol=1e-12, atol=1e-12)
    assert found.numbers["asymmetry"] == pytest.approx(np.abs(scores - scores.T).max())
    assert np.abs(scores - scores.T).max() > 0.1
    order = attention_demo.shuffle_order(len(x), 0)
    back = np.argsort(order)
    plain = _attention(x, w_q, w_k, w_v)
    moved = np.linalg.norm(plain - _attention(x[order], w_q, w_k, w_v)[back], axis=1)
    np.testing.assert_allclose(found.arrays["plain"], moved, atol=1e-12)
    assert moved.max() < 1e-12  # Attn(PX) = P Attn(X)
    pe = table_loop(len(x), x.shape[1])
    placed = np.linalg.norm(_attention(x + pe, w_q, w_k, w_v) - _attention(x[order] + pe, w_q, w_k, w_v)[back], axis=1)
    np.testing.assert_allclose(found.arrays["placed"], placed, rtol=1e-9, atol=1e-12)
    assert placed.max() > 0.1 and found.verdict == "wrong"


def test_learned_positions_learn_order_and_the_paper_found_them_as_good():
    found = claims.check("learned")
    learned = example_table()
    n = len(learned)

    def similarity(table):
        unit = table / np.linalg.norm(table, axis=1, keepdims=True)
        return unit @ unit.T

    def neighbour_share(s):
        hits = 0
        for p in range(n):
            others = [(s[p, q], q) for q in range(n) if q != p]
            hits += abs(max(others)[1] - p) == 1
        return hits / n

    trained = similarity(learned)
    for offset in (1, 5, 30, 63):
        assert found.arrays["trained"][offset - 1] == pytest.approx(np.diagonal(trained, offset).mean())
    sin = similarity(table_loop(n, learned.shape[1]))
    assert found.arrays["sinusoidal"][9] == pytest.approx(np.diagonal(sin, 10).mean())
    assert found.numbers["neighbour_trained"] == neighbour_share(trained) > 0.9
    assert found.numbers["neighbour_sinusoidal"] == neighbour_share(sin)
    init = oracle.bert_init_blocks(n, learned.shape[1], std=0.02, seed=0, block_rows=4)
    assert found.numbers["neighbour_init"] == pytest.approx(neighbour_share(similarity(init)))
    assert neighbour_share(similarity(init)) < 0.2
    assert np.abs(found.arrays["init"]).max() < 0.2  # no order before training
    # Vaswani et al. (2017), table 3: base model 4.92 PPL / 25.8 BLEU, row (E) learned positions 4.92 / 25.7 (dev)
    assert (found.numbers["ppl_sin"], found.numbers["bleu_sin"]) == (4.92, 25.8)
    assert (found.numbers["ppl_learned"], found.numbers["bleu_learned"]) == (4.92, 25.7)
    assert found.verdict == "partly"
