"""posviz.FAMILIES: every entry's parameters build, its flags tell the truth, and lookups fail readably."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import posviz
from posviz.encodings import registry

FAMILY_KEYS = sorted(posviz.FAMILIES)
PARAMS = [(key, p.name) for key in FAMILY_KEYS for p in posviz.FAMILIES[key].params]
# values of these parameters that would build tables of ~1 GB; their maxima are checked by size arithmetic only
LENGTH_PARAMS = {"n_positions", "seq_len"}


def test_registry_covers_the_core_families():
    for key in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw", "xlnet"):
        assert key in posviz.FAMILIES
        assert posviz.family(key) is posviz.FAMILIES[key]
        assert posviz.FAMILIES[key].key == key


def test_unknown_family_names_the_known_ones():
    with pytest.raises(ValueError) as info:
        posviz.family("nope")
    assert "nope" in str(info.value)
    for key in FAMILY_KEYS:
        assert key in str(info.value)


@pytest.mark.parametrize("key", FAMILY_KEYS)
def test_defaults_are_valid_and_build(key):
    fam = posviz.FAMILIES[key]
    for p in fam.params:
        if p.options:
            assert p.default in p.options
        else:
            assert p.minimum <= p.default <= p.maximum
            assert p.clamp(p.default) == p.default
    out = fam.build(**fam.defaults())
    out = out if isinstance(out, np.ndarray) else np.asarray(out)
    assert out.ndim == 2 and out.size > 0
    assert not np.any(np.isnan(out.astype(float)))


@pytest.mark.parametrize("key,name", PARAMS)
def test_every_in_range_value_builds(key, name):
    """The UI offers every value in [minimum, maximum]; each end must build with the other parameters at their
    defaults (the page would otherwise show an error for a value its own slider offers)."""
    fam = posviz.FAMILIES[key]
    p = fam.param(name)
    values = list(p.options) if p.options else [p.minimum, p.maximum]
    for value in values:
        if name in LENGTH_PARAMS and not p.options and value > 2048:
            continue
        kwargs = fam.defaults()
        kwargs[name] = type(p.default)(value) if not p.options else value
        out = fam.build(**kwargs)
        assert np.asarray(out).size > 0


@pytest.mark.parametrize("key,name", [kn for kn in PARAMS if not posviz.FAMILIES[kn[0]].param(kn[1]).options])
def test_clamp_numeric(key, name):
    p = posviz.FAMILIES[key].param(name)
    lo, hi = p.minimum, p.maximum
    assert p.clamp(lo - 1) == type(p.default)(lo)
    assert p.clamp(hi * 2 + 1) == type(p.default)(hi)
    assert p.clamp("not a number") == p.default
    assert p.clamp(float("nan")) == p.default
    assert p.clamp(None) == p.default
    assert isinstance(p.clamp(lo), type(p.default))


@pytest.mark.parametrize("key,name", [kn for kn in PARAMS if posviz.FAMILIES[kn[0]].param(kn[1]).options])
def test_clamp_options(key, name):
    p = posviz.FAMILIES[key].param(name)
    for option in p.options:
        assert p.clamp(option) == option
    assert p.clamp("definitely-not-an-option") == p.default


def test_unknown_param_lookup():
    with pytest.raises(KeyError):
        posviz.FAMILIES["sinusoidal"].param("nope")


def test_builds_equal_the_direct_calls():
    f = posviz.FAMILIES
    np.testing.assert_array_equal(
        f["sinusoidal"].build(n_positions=20, d_model=10, base=500.0, layout="halves"),
        posviz.sinusoidal(20, 10, base=500.0, layout="halves"),
    )
    np.testing.assert_array_equal(
        f["learned"].build(n_positions=20, d_model=10, init="random", std=0.1, seed=4),
        posviz.learned_init(20, 10, std=0.1, seed=4),
    )
    np.testing.assert_array_equal(
        f["alibi"].build(n_heads=4, seq_len=9, head=2, causal=False), posviz.alibi_bias(4, 9, causal=False)[2]
    )
    np.testing.assert_array_equal(
        f["shaw"].build(seq_len=12, max_relative_position=3), posviz.shaw_relative_index(12, 12, 3)
    )
    np.testing.assert_array_equal(
        f["t5"].build(seq_len=40, num_buckets=16, max_distance=64, bidirectional=False),
        posviz.t5_relative_bucket(
            np.arange(40)[None, :] - np.arange(40)[:, None], num_buckets=16, max_distance=64, bidirectional=False
        ),
    )
    np.testing.assert_array_equal(f["xlnet"].build(seq_len=6, seed=0), np.tril(np.ones((6, 6), bool), -1))
    inv, _ = posviz.rope_inv_freq(32, base=1000.0)
    np.testing.assert_allclose(
        f["rope"].build(n_positions=30, head_dim=32, base=1000.0),
        np.cos(np.arange(30)[:, None] * inv[None, :]),
        atol=1e-14,
    )


@pytest.mark.parametrize("key", [k for k in FAMILY_KEYS if posviz.FAMILIES[k].capabilities & {"bias", "index"}])
def test_relative_bias_and_index_families_are_toeplitz(key):
    """A family flagged ``relative`` looks up what it adds by j - i only, so the bias or index matrix its page
    shows is constant along every diagonal."""
    fam = posviz.FAMILIES[key]
    out = np.asarray(fam.build(**fam.defaults()), dtype=float)
    assert fam.relative
    inner = out[1:, 1:]
    np.testing.assert_array_equal(inner, out[:-1, :-1])


def test_rope_scores_are_relative():
    s = posviz.rope_score_matrix(40, 16)
    np.testing.assert_allclose(s[1:, 1:], s[:-1, :-1], atol=1e-12)
    np.testing.assert_allclose(np.diag(s), 1.0, atol=1e-12)
    # closed form from the docstring's derivation: mean_i cos((m - n) theta_i)
    inv, _ = posviz.rope_inv_freq(16)
    k = np.arange(40)[:, None] - np.arange(40)[None, :]
    np.testing.assert_allclose(s, np.cos(k[..., None] * inv).mean(axis=-1), atol=1e-12)


def test_flags_consistent_with_how_the_family_enters():
    for key in FAMILY_KEYS:
        fam = posviz.FAMILIES[key]
        assert fam.enters in {"input", "rotation", "score", "bias"}  # a position code is never just a mask
        assert fam.terms[0].position_code
        assert fam.name and fam.summary and fam.paper
        if fam.enters == "input":
            assert not fam.relative  # an absolute table added to the embeddings
        if fam.enters == "bias":
            assert not fam.content  # a bias is the same whatever the tokens
        if fam.enters in ("rotation", "score"):
            assert fam.content  # it acts through the query (and key)
    assert posviz.FAMILIES["learned"].learnable and not posviz.FAMILIES["learned"].extrapolates
    assert not posviz.FAMILIES["sinusoidal"].learnable
    assert posviz.FAMILIES["rope"].relative and posviz.FAMILIES["alibi"].relative


def test_length_maxima_fit_the_core_limits():
    """Arithmetic check of the largest length values without building them: the output must stay within
    posviz's element budget (MAX_POSITIONS x MAX_DIM)."""
    budget = posviz.MAX_POSITIONS * posviz.MAX_DIM
    for key in FAMILY_KEYS:
        fam = posviz.FAMILIES[key]
        d = fam.defaults()
        for p in fam.params:
            if p.name not in LENGTH_PARAMS:
                continue
            if "d_model" in d:
                assert p.maximum * d["d_model"] <= budget
            elif "head_dim" in d:
                assert p.maximum * d["head_dim"] // 2 <= budget
            elif key == "alibi":
                assert d["n_heads"] * p.maximum**2 <= budget
            else:
                assert p.maximum**2 <= budget
    assert math.isfinite(budget)


@pytest.mark.parametrize("key", FAMILY_KEYS)
def test_comparison_fields_agree_with_the_flags(key):
    """The Compare page's feature table reads these fields; they must not contradict the flags above."""
    fam = posviz.FAMILIES[key]
    assert fam.depends_on in ("position", "offset")
    assert (fam.depends_on == "offset") == fam.relative
    assert (fam.param_formula == "0") == (not fam.learnable) == (fam.param_scope == "")  # only learned ones have any
    assert fam.models


def test_a_term_outside_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="enters one of"):
        registry.Term("everywhere", "offset", content=True)
    with pytest.raises(ValueError, match="position code"):
        dataclasses.replace(posviz.family("xlnet"), terms=posviz.family("xlnet").terms[::-1])
    with pytest.raises(ValueError, match="scope"):
        dataclasses.replace(posviz.family("t5"), param_scope="")


# ------------------------------------------------------------------ what each term depends on, computed


def shaw_score_term(queries: np.ndarray, a_key: np.ndarray, k: int) -> np.ndarray:
    """Shaw et al. (2018), eq. 4 split as in their section 3.3: the position part of e_ij is
    x_i W^Q (a^K_ij)^T = q_i . a^K[clip(j - i, -k, k) + k], one scalar loop per (i, j) pair."""
    n = len(queries)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = queries[i] @ a_key[min(max(j - i, -k), k) + k]
    return out


def t5_bias_term(table: np.ndarray, n: int, head: int) -> np.ndarray:
    """T5's position part of the score for head ``head``: table[bucket(j - i), head] (``T5Attention.compute_bias``),
    bucketed by transformers' own function. Nothing in it reads a query or a key."""
    from ._oracles import t5_bucket

    i, j = np.indices((n, n))
    return table[t5_bucket(j - i, bidirectional=True, num_buckets=table.shape[0], max_distance=128), head]


def test_shaws_score_term_changes_with_the_query_and_t5s_bias_does_not():
    rng = np.random.default_rng(0)
    n, d, k = 12, 8, 3
    a_key = rng.normal(size=(2 * k + 1, d))  # learned a^K for offsets -k .. k
    q1, q2 = rng.normal(size=(n, d)), rng.normal(size=(n, d))  # the same positions, other tokens
    shaw1, shaw2 = shaw_score_term(q1, a_key, k), shaw_score_term(q2, a_key, k)
    assert np.abs(shaw1 - shaw2).min() > 1e-6  # every (i, j): the position term follows the query
    # with the query held fixed, the term still depends on j - i only through a^K
    np.testing.assert_allclose(shaw1 - shaw_score_term(q1, a_key + 1.0, k), -q1.sum(axis=1)[:, None] * np.ones(n))
    table = rng.normal(size=(32, 4))
    for head in range(4):
        bias = t5_bias_term(table, n, head)  # the same matrix whatever q1 or q2 are
        np.testing.assert_array_equal(bias[1:, 1:], bias[:-1, :-1])
    # the registry and the Compare map say so
    assert posviz.family("shaw").content and not posviz.family("t5").content
    assert [t.stage for t in posviz.family("shaw").terms] == ["score", "values"]
    assert posviz.family("t5").enters == "bias"


def test_transformers_shaw_term_follows_the_query_and_t5_position_bias_does_not():
    """The same in the reference code: Wav2Vec2-BERT's "relative_key" (Shaw's a^K) score changes with the query,
    T5's position_bias is identical for two different inputs."""
    import torch
    from transformers import T5Config, Wav2Vec2BertConfig
    from transformers.models.t5.modeling_t5 import T5Attention
    from transformers.models.wav2vec2_bert import modeling_wav2vec2_bert as w2v

    torch.manual_seed(0)
    config = Wav2Vec2BertConfig(
        hidden_size=16, num_attention_heads=2, left_max_position_embeddings=3, right_max_position_embeddings=3
    )
    attention = w2v.Wav2Vec2BertSelfAttention(config).eval()
    q1, q2, key = torch.randn(1, 2, 10, 8), torch.randn(1, 2, 10, 8), torch.randn(1, 2, 10, 8)
    with torch.no_grad():
        _, term1 = w2v._apply_relative_key_position_encoding(attention, q1, key)
        _, term2 = w2v._apply_relative_key_position_encoding(attention, q2, key)
    a_key = attention.distance_embedding.weight.detach().numpy().astype(np.float64)
    for q, term in ((q1, term1), (q2, term2)):
        for h in range(2):
            expected = shaw_score_term(q[0, h].numpy().astype(np.float64), a_key, 3) * attention.scaling
            np.testing.assert_allclose(term[0, h].numpy(), expected, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(term1, term2)

    t5 = T5Attention(T5Config(d_model=16, num_heads=2, d_kv=8), has_relative_attention_bias=True).eval()
    with torch.no_grad():
        _, bias1, _ = t5(torch.randn(1, 10, 16))
        _, bias2, _ = t5(torch.randn(1, 10, 16))
    torch.testing.assert_close(bias1, bias2, rtol=0, atol=0)
    table = t5.relative_attention_bias.weight.detach().numpy().astype(np.float64)
    for h in range(2):
        np.testing.assert_allclose(bias1[0, h].numpy(), t5_bias_term(table, 10, h), rtol=1e-6)


def test_xlnet_position_term_is_transformer_xl_and_follows_the_query():
    """Transformer-XL (Dai et al., 2019, section 3.3), which XLNet uses: the position part of A_ij is
    q_i . W_R R_{i-j} + v . W_R R_{i-j}, with R sinusoids of the offset. It changes with the query; the masks of
    the factorisation order are a separate, non-positional term."""
    rng = np.random.default_rng(1)
    n, d = 6, 8
    offsets = np.arange(n)[:, None] - np.arange(n)[None, :]  # i - j
    freq = 10_000.0 ** (-np.arange(0, d, 2) / d)
    sinusoids = np.concatenate([np.sin(offsets[..., None] * freq), np.cos(offsets[..., None] * freq)], axis=-1)
    w_r, v = rng.normal(size=(d, d)), rng.normal(size=d)
    keys_r = sinusoids @ w_r  # (i, j, d): W_R R_{i-j}
    term = lambda q: np.einsum("id,ijd->ij", q, keys_r) + keys_r @ v  # noqa: E731
    t1, t2 = term(rng.normal(size=(n, d))), term(rng.normal(size=(n, d)))
    assert np.abs(t1 - t2).max() > 1e-3
    np.testing.assert_allclose(term(np.zeros((n, d)))[1:, 1:], term(np.zeros((n, d)))[:-1, :-1])  # v part: j - i only
    xlnet = posviz.family("xlnet")
    assert (xlnet.enters, xlnet.depends_on, xlnet.content, xlnet.relative) == ("score", "offset", True, True)
    mask = xlnet.terms[1]
    assert (mask.stage, mask.depends_on, mask.position_code) == ("mask", "order", False)
