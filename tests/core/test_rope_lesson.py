"""The RoPE page's lessons, checked independently: shift invariance, RoFormer's decay bound, the pair trajectory,
the layouts, partial rotation, the static NTK base, the per-pair classes of each scaling, and config.json
parsing (both formats, with transformers' ROPE_INIT_FUNCTIONS as the oracle for the published presets)."""

from __future__ import annotations

import cmath
import copy
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import CONFIG_MAPPING
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from posviz.encodings import rope
from posviz.models import rope_configs

from . import _oracles as oracle
from .test_rope_configs_hf import hf_frequencies

FAST = settings(max_examples=40, deadline=None)
KEPT, BLENDED, INTERPOLATED, BEYOND, FASTER = range(5)


def test_pair_classes_are_in_code_order():
    assert rope.PAIR_CLASSES == ("kept", "blended", "interpolated", "beyond", "faster")


# ------------------------------------------------------------------------------------------- shift invariance


@FAST
@given(
    n=st.integers(2, 24),
    half=st.integers(1, 16),
    shift=st.integers(1, 5000),
    seed=st.one_of(st.none(), st.integers(0, 99)),
    base=st.sampled_from([100.0, 10_000.0, 500_000.0]),
)
def test_shifting_both_positions_leaves_the_scores_unchanged(n, half, shift, seed, base):
    scores, shifted, diff = rope.rope_shifted_scores(n, 2 * half, shift, base=base, seed=seed)
    np.testing.assert_allclose(shifted, scores, rtol=0, atol=1e-9 * (1 + np.abs(scores).max()))
    assert diff == pytest.approx(np.abs(shifted - scores).max(), abs=0)
    np.testing.assert_array_equal(scores, rope.rope_score_matrix(n, 2 * half, base=base, seed=seed))


def _rotate(v, position, inv):
    """Half layout by hand: pair (i, i + r/2) turned by position * inv[i]."""
    out, r = np.array(v, dtype=float), len(inv)
    for i, w in enumerate(inv):
        c, s = math.cos(position * w), math.sin(position * w)
        out[i], out[i + r] = v[i] * c - v[i + r] * s, v[i + r] * c + v[i] * s
    return out


def test_seeded_score_matrix_equals_a_scalar_loop():
    head_dim, n, seed = 8, 6, 3
    q, k = np.random.default_rng(seed).standard_normal((2, head_dim))
    inv = 10_000.0 ** (-np.arange(0, head_dim, 2) / head_dim)
    expected = [[_rotate(q, m, inv) @ _rotate(k, j, inv) / head_dim for j in range(n)] for m in range(n)]
    np.testing.assert_allclose(rope.rope_score_matrix(n, head_dim, seed=seed), expected, rtol=0, atol=1e-12)


def test_default_score_matrix_is_unchanged_by_the_seed_option():
    lag = np.subtract.outer(np.arange(10), np.arange(10))
    inv = 10_000.0 ** (-np.arange(0, 16, 2) / 16)
    expected = np.cos(lag[..., None] * inv).mean(axis=-1)
    np.testing.assert_allclose(rope.rope_score_matrix(10, 16), expected, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------- decay bound


def _decay_bound_loop(distance, head_dim, base):
    """RoFormer 3.4.3 term by term: S_j = sum_{i<j} e^{i r theta_i}; mean over j = 1 .. d/2 of |S_j|."""
    half = head_dim // 2
    total, partial = 0.0, 0j
    for i in range(half):
        partial += cmath.exp(1j * distance * base ** (-2 * i / head_dim))
        total += abs(partial)
    return total / half


@FAST
@given(
    half=st.integers(1, 40),
    base=st.sampled_from([10.0, 10_000.0, 1e6]),
    distances=st.lists(st.integers(0, 40_000), min_size=1, max_size=6),
)
def test_decay_bound_equals_the_scalar_loop(half, base, distances):
    got = rope.rope_decay_bound(np.array(distances), 2 * half, base=base)
    expected = [_decay_bound_loop(r, 2 * half, base) for r in distances]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_decay_bound_starts_at_d_over_4_plus_half_and_falls():
    bound = rope.rope_decay_bound(np.arange(0, 2001), 128)
    assert bound[0] == pytest.approx(128 / 4 + 0.5, rel=1e-12)
    assert bound[1000:].max() < 0.5 * bound[0]


@pytest.mark.parametrize(("reach", "head_dim", "base"), [(300, 16, 10_000.0), (5000, 8, 100.0), (4500, 32, 1e6)])
def test_decay_envelope_is_the_largest_bound_at_that_distance_or_farther(reach, head_dim, base):
    """The envelope at r is max over r <= r' <= 2 reach of the bound, the bound taken term by term at every
    integer distance (so a peak between two shown distances counts), and it never rises."""
    distances, bound, envelope = rope.rope_decay_profile(reach, head_dim, base=base, points=64)
    every = np.array([_decay_bound_loop(r, head_dim, base) for r in range(2 * reach + 1)])
    expected = np.array([every[r:].max() for r in distances])
    np.testing.assert_allclose(envelope, expected, rtol=1e-9)
    np.testing.assert_allclose(bound, every[distances], rtol=1e-9)
    assert distances[0] == 0 and distances[-1] == reach and distances.size <= 64
    assert np.all(np.diff(envelope) <= 0) and np.all(envelope >= bound)
    assert envelope[0] == pytest.approx(head_dim / 4 + 0.5, rel=1e-12)


def test_decay_envelope_horizon():
    """With the horizon at the last distance shown, the envelope ends on the bound itself."""
    _, bound, envelope = rope.rope_decay_profile(300, 16, horizon=300)
    assert envelope[-1] == bound[-1]
    with pytest.raises(ValueError, match="horizon"):
        rope.rope_decay_profile(300, 16, horizon=200)


def test_decay_profile_shows_every_distance_when_they_fit():
    distances, bound, _ = rope.rope_decay_profile(100, 16, points=1024)
    np.testing.assert_array_equal(distances, np.arange(101))
    np.testing.assert_allclose(bound, rope.rope_decay_bound(np.arange(101), 16), rtol=1e-15)


# ------------------------------------------------------------------------------------------------ trajectory


@pytest.mark.parametrize("layout", rope.LAYOUTS)
def test_pair_trajectory_is_the_rotation_of_each_pair(layout):
    head_dim, base = 12, 100.0
    q = np.random.default_rng(1).standard_normal(head_dim)
    inv, _ = rope.rope_inv_freq(head_dim, base=base)
    pairs, positions = np.array([0, 2, 5]), np.arange(9)
    traj = rope.rope_pair_trajectory(q, positions, inv, pairs, layout=layout)
    assert traj.shape == (9, 3, 2)
    for j, i in enumerate(pairs):
        a, b = (q[i], q[i + 6]) if layout == "half" else (q[2 * i], q[2 * i + 1])
        for m in positions:
            c, s = math.cos(m * inv[i]), math.sin(m * inv[i])
            np.testing.assert_allclose(traj[m, j], [a * c - b * s, a * s + b * c], rtol=0, atol=1e-12)


def test_pair_trajectory_rejects_a_pair_out_of_range():
    inv, _ = rope.rope_inv_freq(8)
    with pytest.raises(ValueError, match="between 0 and 3"):
        rope.rope_pair_trajectory(np.ones(8), [0, 1], inv, [4])


# --------------------------------------------------------------------------------------------------- layouts


@pytest.mark.parametrize("head_dim", [2, 4, 8, 30])
def test_layout_pair_index_and_the_check(head_dim):
    inter, half = rope.layout_pair_index(head_dim)
    perm = rope.interleaved_to_half(head_dim)
    assert inter.tolist() == [j // 2 for j in range(head_dim)]
    assert half.tolist() == [j if j < head_dim // 2 else j - head_dim // 2 for j in range(head_dim)]
    # dimension perm[j] of the interleaved layout sits in the same pair as dimension j of the half layout
    np.testing.assert_array_equal(inter[perm], half)
    a, b, diff = rope.rope_layout_check(head_dim, 7, base=50.0, seed=2)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    assert diff <= 1e-12
    x = np.random.default_rng(2).standard_normal((7, head_dim))
    inv = 50.0 ** (-np.arange(0, head_dim, 2) / head_dim)
    expected = np.stack([_rotate(x[m, perm], m, inv) for m in range(7)])
    np.testing.assert_allclose(b, expected, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------- partial rotary


@pytest.mark.parametrize("layout", rope.LAYOUTS)
@pytest.mark.parametrize(("head_dim", "prf", "rotated"), [(16, 0.5, 8), (64, 0.25, 16), (10, 1.0, 10)])
def test_partial_rotary_table(layout, head_dim, prf, rotated):
    table, rotates = rope.partial_rotary_table(20, head_dim, prf, layout=layout)
    assert rotates.tolist() == [j < rotated for j in range(head_dim)]
    np.testing.assert_array_equal(table[:, rotated:], 1.0)
    inv = 10_000.0 ** (-np.arange(0, rotated, 2) / rotated)
    angles = np.arange(20)[:, None] * inv
    first, second = np.cos(angles) - np.sin(angles), np.sin(angles) + np.cos(angles)
    if layout == "half":
        np.testing.assert_allclose(table[:, :rotated], np.hstack([first, second]), atol=1e-12)
    else:
        np.testing.assert_allclose(table[:, 0:rotated:2], first, atol=1e-12)
        np.testing.assert_allclose(table[:, 1:rotated:2], second, atol=1e-12)


# ------------------------------------------------------------------------------------------------ NTK base


@FAST
@given(half=st.integers(2, 64), base=st.floats(2.0, 1e6), factor=st.floats(1.0, 64.0))
def test_ntk_base_keeps_the_fastest_pair_and_slows_the_slowest_by_the_factor(half, base, factor):
    d = 2 * half
    new_base = rope.ntk_scaled_base(base, factor, d)
    assert new_base == pytest.approx(base * factor ** (d / (d - 2)), rel=1e-12)
    theta = base ** (-np.arange(0, d, 2) / d)
    scaled = new_base ** (-np.arange(0, d, 2) / d)
    assert scaled[0] == theta[0] == 1.0
    assert scaled[-1] == pytest.approx(theta[-1] / factor, rel=1e-9)


def test_ntk_base_equals_dynamic_ntk_at_the_length_where_its_factor_is_the_same():
    """transformers' dynamic scaling at length L uses factor' = s L / L_max - (s - 1): at L = L_max (1 + 3/s)
    factor' = 4, so its frequencies equal the static NTK ones for factor 4."""
    s, l_max, d = 8.0, 1024, 64
    dynamic, _ = rope.rope_inv_freq(
        d,
        scaling={"rope_type": "dynamic", "factor": s},
        max_position_embeddings=l_max,
        seq_len=int(l_max * (1 + 3 / s)),
    )
    static, _ = rope.rope_inv_freq(d, base=rope.ntk_scaled_base(10_000.0, 4.0, d))
    np.testing.assert_allclose(dynamic, static, rtol=1e-12)


@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0])
@pytest.mark.parametrize("seq_len", [1, 4096, 6000, 32768, 100_000])
def test_dynamic_ntk_scale_is_the_slowdown_of_the_slowest_pair_in_transformers(factor, seq_len):
    """Oracle: ROPE_INIT_FUNCTIONS["dynamic"] with a tiny LlamaConfig (head_dim 64, max_position_embeddings
    4096): the slowest pair's theta / theta' is the scale, whatever the factor and the length read."""
    scale = rope.dynamic_ntk_scale(seq_len, factor, 4096)
    scaled, _ = oracle.hf_rope_inv_freq(
        64, scaling={"rope_type": "dynamic", "factor": factor}, max_position_embeddings=4096, seq_len=seq_len
    )
    plain = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    assert plain[-1] / scaled[-1] == pytest.approx(float(scale), rel=1e-5)
    assert scaled[0] == 1.0
    # the closed form: 1 + factor * (L / L_max - 1), L = max(seq_len, L_max)
    assert float(scale) == pytest.approx(1 + factor * (max(seq_len, 4096) / 4096 - 1), rel=1e-14)


def test_dynamic_ntk_with_factor_s_overshoots_and_factor_one_does_not():
    """Read at 8 x 4096 tokens, factor 8 gives 8^2 - 8 + 1 = 57, factor 1 exactly the 8 the text grew by."""
    assert rope.dynamic_ntk_scale(8 * 4096, 8.0, 4096) == pytest.approx(57.0, rel=1e-14)
    np.testing.assert_allclose(rope.dynamic_ntk_scale([4096, 2 * 4096, 8 * 4096], 1.0, 4096), [1, 2, 8], rtol=1e-14)


@pytest.mark.parametrize(("head_dim", "factor", "original"), [(64, 8.0, 4096), (128, 4.0, 2048), (32, 16.0, 1024)])
def test_dynamic_ntk_is_compared_fairly_at_the_target_length(head_dim, factor, original):
    """At s L the comparison's dynamic NTK slows its slowest pair by exactly s, slows no pair by more than s,
    equals transformers' dynamic scaling read at that length, and equals static NTK-aware scaling."""
    target = int(factor * original)
    cmp = rope_configs.compare_scalings(head_dim, 10_000.0, factor, original, current_length=target)
    k = cmp.methods.index("dynamic")
    assert 1 / cmp.ratio[k][-1] == pytest.approx(factor, rel=1e-12)
    assert not (cmp.classes[k] == BEYOND).any()
    assert cmp.classes[k][0] == KEPT and cmp.classes[k][-1] == INTERPOLATED
    config = oracle.hf_rope_config(
        head_dim, base=10_000.0, scaling={"rope_type": "dynamic", "factor": 1.0}, max_position_embeddings=original
    )
    expected, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=target)
    np.testing.assert_allclose(cmp.inv_freq[k], expected.double().numpy(), rtol=1e-6)
    np.testing.assert_allclose(cmp.inv_freq[k], cmp.inv_freq[cmp.methods.index("ntk")], rtol=1e-12)


def test_dynamic_ntk_scales_by_the_length_read_so_far():
    """Halfway to the target (4 x L of 8 x L) dynamic NTK slows its slowest pair by 4, not 8."""
    cmp = rope_configs.compare_scalings(64, 10_000.0, 8.0, 4096, current_length=4 * 4096)
    assert 1 / cmp.ratio[cmp.methods.index("dynamic")][-1] == pytest.approx(4.0, rel=1e-12)


@pytest.mark.parametrize("d", [2, 7])
def test_ntk_base_needs_an_even_dimension_above_two(d):
    with pytest.raises(ValueError, match=f"got {d}"):
        rope.ntk_scaled_base(10_000.0, 2.0, d)


# ------------------------------------------------------------------------------------------- pair classes


def test_linear_interpolates_every_pair():
    cmp = rope_configs.compare_scalings(64, 10_000.0, 4.0, 2048)
    codes = dict(zip(cmp.methods, cmp.classes, strict=True))
    assert (codes["linear"] == INTERPOLATED).all()
    np.testing.assert_allclose(cmp.ratio[cmp.methods.index("linear")], 0.25, rtol=1e-12)


def test_llama3_keeps_high_frequencies_and_interpolates_low_ones():
    """Llama 3.1 bands (L = 8192, low 1, high 4, factor 8): wavelength < L/4 kept, > L interpolated."""
    head_dim, base, original = 128, 500_000.0, 8192
    cmp = rope_configs.compare_scalings(head_dim, base, 8.0, original)
    codes = cmp.classes[cmp.methods.index("llama3")]
    wavelength = 2 * math.pi * base ** (np.arange(0, head_dim, 2) / head_dim)
    np.testing.assert_array_equal(codes[wavelength < original / 4], KEPT)
    np.testing.assert_array_equal(codes[wavelength > original], INTERPOLATED)
    np.testing.assert_array_equal(codes[(wavelength > original / 4) & (wavelength < original)], BLENDED)
    assert (wavelength < original / 4).any() and (wavelength > original).any()


def test_yarn_ramp_classes_follow_the_correction_range():
    """YaRN (beta_fast 32, beta_slow 1): pairs below floor(low) are kept, above ceil(high) interpolated, where
    low/high are the pair indices that make 32 resp. 1 turns in the original context."""
    head_dim, base, original, factor = 64, 10_000.0, 4096, 8.0
    cmp = rope_configs.compare_scalings(head_dim, base, factor, original)
    codes = cmp.classes[cmp.methods.index("yarn")]

    def correction(turns):
        return head_dim * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = math.floor(correction(32)), math.ceil(correction(1))
    i = np.arange(head_dim // 2)
    np.testing.assert_array_equal(codes[i <= low], KEPT)
    np.testing.assert_array_equal(codes[i >= high], INTERPOLATED)
    np.testing.assert_array_equal(codes[(i > low) & (i < high)], BLENDED)
    assert cmp.attention_factor[cmp.methods.index("yarn")] == pytest.approx(0.1 * math.log(factor) + 1)


def test_ntk_blends_everything_between_its_two_ends():
    cmp = rope_configs.compare_scalings(32, 10_000.0, 4.0, 1024)
    codes = cmp.classes[cmp.methods.index("ntk")]
    assert codes[0] == KEPT and codes[-1] == INTERPOLATED and (codes[1:-1] == BLENDED).all()


def test_classify_pairs_on_hand_made_ratios():
    original = np.ones(6)
    scaled = np.array([1.0, 0.5, 0.25, 0.1, 2.0, 1.0005])
    assert rope.classify_pairs(scaled, original, 4.0).tolist() == [KEPT, BLENDED, INTERPOLATED, BEYOND, FASTER, KEPT]


def test_longrope_demo_factors_and_attention_factor():
    short, long = rope_configs.demo_longrope_factors(5, 9.0)
    assert short == [1.0] * 5
    np.testing.assert_allclose(long, [1 + 8 * (i / 4) ** 2 for i in range(5)])
    cmp = rope_configs.compare_scalings(10, 10_000.0, 9.0, 1000)
    k = cmp.methods.index("longrope")
    np.testing.assert_allclose(cmp.ratio[k], 1 / np.array(long), rtol=1e-12)
    assert cmp.attention_factor[k] == pytest.approx(math.sqrt(1 + math.log(9.0) / math.log(1000)))
    within = rope_configs.compare_scalings(10, 10_000.0, 9.0, 1000, current_length=1000)
    assert (within.classes[k] == KEPT).all()  # the short factors (all 1) within the original context


def test_counts_add_up_to_the_pairs():
    cmp = rope_configs.compare_scalings(48, 10_000.0, 16.0, 2048, current_length=4096)
    assert cmp.counts().shape == (len(cmp.methods), len(rope.PAIR_CLASSES))
    assert (cmp.counts().sum(axis=1) == 24).all()


# --------------------------------------------------------------------------------------------- config.json


def test_both_config_formats_give_the_same_settings():
    old = {
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "max_position_embeddings": 8192,
        "rope_theta": 5e5,
        "rope_scaling": {"type": "linear", "factor": 2.0},
        "partial_rotary_factor": 0.5,
    }
    new = {
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "max_position_embeddings": 8192,
        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 5e5, "partial_rotary_factor": 0.5},
    }
    a, b = rope_configs.parse_config(json.dumps(old)), rope_configs.parse_config(new)
    assert (a.head_dim, a.base, a.max_position_embeddings, a.partial_rotary_factor) == (128, 5e5, 8192, 0.5)
    assert (b.head_dim, b.base, b.max_position_embeddings, b.partial_rotary_factor) == (128, 5e5, 8192, 0.5)
    assert a.rope_type == b.rope_type == "linear"
    np.testing.assert_array_equal(a.inv_freq()[0], b.inv_freq()[0])
    assert a.inv_freq()[0].size == 32


def test_config_defaults():
    config = rope_configs.parse_config('{"head_dim": 64}')
    assert (config.base, config.scaling, config.rope_type, config.partial_rotary_factor) == (
        10000.0,
        None,
        "default",
        1.0,
    )
    assert config.max_position_embeddings is None and config.original_max_position_embeddings is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"head_dim": 64,', "not valid JSON"),
        ("[1, 2]", "one JSON object"),
        ('{"rope_theta": 10000}', "needs head_dim, or hidden_size and num_attention_heads"),
        ('{"hidden_size": 100, "num_attention_heads": 3}', "does not split into 3 attention heads"),
        ('{"head_dim": 7}', "needs an even head_dim"),
        ('{"hidden_size": 70, "num_attention_heads": 2}', "needs an even head_dim"),
        ('{"head_dim": 64, "rope_scaling": {"type": "ntk"}}', "supported types are default, linear, dynamic, yarn"),
        (
            '{"head_dim": 64, "max_position_embeddings": 8192, '
            '"rope_parameters": {"rope_type": "llama3", "factor": 8}}',
            "low_freq_factor",
        ),
        ('{"head_dim": 64, "rope_parameters": {"rope_type": "yarn", "factor": 4}}', "original_max_position_embeddings"),
        ('{"head_dim": 64, "rope_theta": "big"}', "rope_theta must be a finite number"),
        ('{"head_dim": 64, "rope_parameters": 3}', "rope_parameters must be a JSON object"),
    ],
)
def test_bad_configs_raise_a_clear_value_error(text, needle):
    with pytest.raises(ValueError, match=None) as info:
        rope_configs.parse_config(text)
    assert needle in str(info.value)


#: Presets with one rope dict per layer type (the box reads the first rotating layer's): test_model_positions compares
#: every layer of every preset with the model's rotary module.
LAYER_TYPED = ("gemma4", "gemma4_31b")


@pytest.mark.parametrize("name", [n for n in rope_configs.PRESETS if n not in LAYER_TYPED])
def test_presets_match_transformers(name):
    """Oracle: the config class of the preset's model_type (a wrapper's text model) built from the same dict: its
    rotary module's own frequencies, and for a scaling ROPE_INIT_FUNCTIONS at max_position_embeddings (float32
    maths)."""
    preset = rope_configs.PRESETS[name]
    preset = preset.get("text_config", preset)
    config = {key: value for key, value in preset.items() if key != "model_type"}
    found = rope_configs.config_frequencies(rope_configs.preset_text(name))
    at_init, attention, fits = hf_frequencies(preset["model_type"], config)
    assert fits
    if not found.config.scaling:
        np.testing.assert_allclose(found.scaled, at_init, rtol=1e-6)
        np.testing.assert_array_equal(found.plain, found.scaled)
    else:
        hf = CONFIG_MAPPING[preset["model_type"]](**copy.deepcopy(config))
        rope_type = hf.rope_parameters["rope_type"]
        assert found.config.rope_type == rope_type
        inv, attention = ROPE_INIT_FUNCTIONS[rope_type](hf, "cpu", seq_len=hf.max_position_embeddings)
        np.testing.assert_allclose(found.scaled, inv.double().numpy(), rtol=1e-6)
        np.testing.assert_allclose(
            found.plain,
            oracle.hf_default_rope_inv_freq(found.config.rotary_dim or found.config.head_dim, found.config.base),
            rtol=1e-6,
        )
    assert found.attention_factor == pytest.approx(float(attention), rel=1e-12)


def test_preset_values():
    llama31 = rope_configs.parse_config(rope_configs.PRESETS["llama3_1_8b"])
    assert (llama31.head_dim, llama31.base, llama31.max_position_embeddings) == (128, 500_000.0, 131072)
    assert llama31.original_max_position_embeddings == 8192
    assert {k: llama31.scaling[k] for k in ("factor", "low_freq_factor", "high_freq_factor")} == {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    }
    qwen = rope_configs.parse_config(rope_configs.PRESETS["qwen2_5_7b_yarn"])
    assert (qwen.head_dim, qwen.base, qwen.rope_type) == (128, 1e6, "yarn")
    # YaRN x4 over 32,768 aims at 131,072 although max_position_embeddings stays 32,768
    assert (qwen.max_position_embeddings, qwen.target_context) == (32768, 131072)
    assert llama31.target_context == 131072
    assert rope_configs.parse_config(rope_configs.PRESETS["llama2_7b"]).target_context == 4096


@pytest.mark.parametrize("name", list(rope_configs.PRESETS))
def test_rope_fields_keep_everything_the_frequencies_need(name):
    config = {**rope_configs.PRESETS[name], "vocab_size": 32000, "intermediate_size": 11008, "torch_dtype": "bfloat16"}
    fields = rope_configs.rope_fields(config)
    assert set(fields) <= set(rope_configs.ROPE_FIELDS) and "vocab_size" not in fields
    assert rope_configs.parse_config(fields) == rope_configs.parse_config(config)
