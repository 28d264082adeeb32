"""posviz.FAMILIES: every entry's parameters build, its flags tell the truth, and lookups fail readably."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posviz

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
    np.testing.assert_array_equal(f["sinusoidal"].build(n_positions=20, d_model=10, base=500.0, layout="halves"),
                                  posviz.sinusoidal(20, 10, base=500.0, layout="halves"))
    np.testing.assert_array_equal(f["learned"].build(n_positions=20, d_model=10, init="random", std=0.1, seed=4),
                                  posviz.learned_init(20, 10, std=0.1, seed=4))
    np.testing.assert_array_equal(f["alibi"].build(n_heads=4, seq_len=9, head=2, causal=False),
                                  posviz.alibi_bias(4, 9, causal=False)[2])
    np.testing.assert_array_equal(f["shaw"].build(seq_len=12, max_relative_position=3),
                                  posviz.shaw_relative_index(12, 12, 3))
    np.testing.assert_array_equal(
        f["t5"].build(seq_len=40, num_buckets=16, max_distance=64, bidirectional=False),
        posviz.t5_relative_bucket(np.arange(40)[None, :] - np.arange(40)[:, None], num_buckets=16, max_distance=64,
                                  bidirectional=False))
    np.testing.assert_array_equal(f["xlnet"].build(seq_len=6, seed=0), np.tril(np.ones((6, 6), bool), -1))
    inv, _ = posviz.rope_inv_freq(32, base=1000.0)
    np.testing.assert_allclose(f["rope"].build(n_positions=30, head_dim=32, base=1000.0),
                               np.cos(np.arange(30)[:, None] * inv[None, :]), atol=1e-14)


@pytest.mark.parametrize("key", [k for k in FAMILY_KEYS if posviz.FAMILIES[k].enters == "bias"])
def test_relative_bias_families_are_toeplitz(key):
    """A family flagged ``relative`` makes the score of query i on key j depend on j - i only, so the matrix its
    page shows is constant along every diagonal."""
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
        assert fam.enters in {"input", "rotation", "bias", "mask"}
        assert fam.name and fam.summary and fam.paper
        if fam.enters == "input":
            assert not fam.relative  # an absolute table added to the embeddings
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
    assert fam.depends_on in ("position", "offset", "order")
    assert (fam.depends_on == "offset") == fam.relative
    assert (fam.param_formula == "0") == (not fam.learnable)  # only learned families have parameters
    assert fam.models
