"""posviz.rope_inv_freq / posviz.apply_rope against Hugging Face transformers (LLaMA, GPT-NeoX, GPT-J).

Tolerances for inverse frequencies: ROPE_INIT_FUNCTIONS computes in float32 (``torch.arange(...).float()``,
float32 ``pow``), posviz in float64. A float32 exponent 2i/d carries a relative rounding error up to 2^-24, and
base^e turns it into a relative error of ln(base) * e * 2^-24 <= ln(5e5) * 6e-8 ~ 8e-7 on base^e; the pow and the
reciprocal add a few ulps more. The grid below stays under 9e-7 (largest at base 1e6), inside the rtol = 1e-6 that
the project asks of float32 oracles; the grid is fixed, so the margin does not move from run to run. Attention
factors are Python floats (float64) in both, so they match to 1e-12.

Rotations (apply_rope) are compared with the HF functions fed float64 tensors, so they match to ~1e-12; the
float32 end-to-end module checks use a bound derived in their docstrings.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)
RTOL_F32 = 1e-6
LAYOUTS = st.sampled_from(["half", "interleaved"])
SEEDS = st.integers(0, 2**32 - 1)
ALL_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")


def check_against_hf(
    head_dim, *, base=10000.0, scaling=None, max_position_embeddings=2048, seq_len=None, partial_rotary_factor=1.0
):
    kwargs = dict(
        base=base,
        max_position_embeddings=max_position_embeddings,
        seq_len=seq_len,
        partial_rotary_factor=partial_rotary_factor,
    )
    got, got_af = posviz.rope_inv_freq(head_dim, scaling=None if scaling is None else dict(scaling), **kwargs)
    want, want_af = oracle.hf_rope_inv_freq(head_dim, scaling=None if scaling is None else dict(scaling), **kwargs)
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float64
    assert got.shape == ((int(head_dim * partial_rotary_factor) + 1) // 2,)  # an odd rotated dim is rounded up
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL_F32, atol=0)
    assert got_af == pytest.approx(want_af, rel=1e-12)
    return got, got_af


HEAD_DIMS = [16, 64, 128]
BASES = [10000.0, 500000.0]
PRFS = [1.0, 0.5, 0.25]
#: The heads every scaling is checked on, each for a reason: together they cover every head size, base and rotated
#: share above, and the smallest rotated part.
HEADS = [
    pytest.param(128, 10000.0, 1.0, id="llama-2-head"),
    pytest.param(128, 500000.0, 1.0, id="llama-3-base"),
    pytest.param(64, 10000.0, 0.25, id="pythia-quarter-rotated"),
    pytest.param(64, 500000.0, 0.5, id="half-rotated-large-base"),
    pytest.param(16, 10000.0, 0.25, id="two-pairs-rotated"),
    pytest.param(16, 500000.0, 1.0, id="small-head-large-base"),
]


# ------------------------------------------------------------------------------------------------ default / linear


@pytest.mark.parametrize(
    "head_dim,prf", [(h, f) for h in HEAD_DIMS + [2, 6, 96] for f in PRFS if int(h * f) % 2 == 0 and int(h * f) >= 2]
)
@pytest.mark.parametrize("base", BASES + [100.0, 1e6])
def test_default_matches_hf(head_dim, base, prf):
    got, af = check_against_hf(head_dim, base=base, partial_rotary_factor=prf)
    assert af == 1.0
    assert got[0] == 1.0  # theta_0 = base^0


@pytest.mark.parametrize("head_dim", HEAD_DIMS)
@pytest.mark.parametrize("base", BASES)
def test_default_matches_llama_compute_default_rope_parameters(head_dim, base):
    got, _ = posviz.rope_inv_freq(head_dim, base=base)
    np.testing.assert_allclose(got, oracle.hf_default_rope_inv_freq(head_dim, base), rtol=RTOL_F32)


def test_default_formula_in_float64():
    got, _ = posviz.rope_inv_freq(64, base=10000.0)
    expected = np.array([10000.0 ** (-2 * i / 64) for i in range(32)])
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("head_dim,base,prf", HEADS)
@pytest.mark.parametrize("factor", [1.0, 2.0, 8.0, 3.5])
def test_linear_matches_hf(head_dim, base, prf, factor):
    got, af = check_against_hf(
        head_dim, base=base, partial_rotary_factor=prf, scaling={"rope_type": "linear", "factor": factor}
    )
    default, _ = posviz.rope_inv_freq(head_dim, base=base, partial_rotary_factor=prf)
    np.testing.assert_allclose(got, default / factor, rtol=1e-14)
    assert af == 1.0


# ------------------------------------------------------------------------------------------------ dynamic NTK


@pytest.mark.parametrize("head_dim,base,prf", HEADS)
@pytest.mark.parametrize("factor", [2.0, 4.0])
@pytest.mark.parametrize("seq_len", [None, 100, 2047, 2048, 2049, 5000, 20000])
def test_dynamic_matches_hf(head_dim, base, prf, factor, seq_len):
    check_against_hf(
        head_dim,
        base=base,
        partial_rotary_factor=prf,
        max_position_embeddings=2048,
        seq_len=seq_len,
        scaling={"rope_type": "dynamic", "factor": factor},
    )


@pytest.mark.parametrize("seq_len", [None, 1, 512, 2048])
def test_dynamic_is_unscaled_up_to_max_position_embeddings(seq_len):
    # L = max(seq_len, L_max) = L_max gives base * (factor - factor + 1)^... = base
    got, _ = posviz.rope_inv_freq(
        64, scaling={"rope_type": "dynamic", "factor": 4.0}, max_position_embeddings=2048, seq_len=seq_len
    )
    np.testing.assert_allclose(got, posviz.rope_inv_freq(64)[0], rtol=1e-13)


def test_dynamic_above_max_lowers_every_frequency_but_the_first():
    default, _ = posviz.rope_inv_freq(64)
    got, _ = posviz.rope_inv_freq(
        64, scaling={"rope_type": "dynamic", "factor": 2.0}, max_position_embeddings=1024, seq_len=4096
    )
    # new base = 10000 * (2 * 4096/1024 - 1)^(64/62) = 10000 * 7^(64/62)
    new_base = 10000.0 * 7.0 ** (64 / 62)
    np.testing.assert_allclose(got, [new_base ** (-2 * i / 64) for i in range(32)], rtol=1e-13)
    assert got[0] == default[0] == 1.0
    assert np.all(got[1:] < default[1:])


# ------------------------------------------------------------------------------------------------ YaRN


def scaling_case(case_id: str, max_position_embeddings: int, original: int | None = None, **params):
    """A row of a scaling's table: its parameters (``original`` is ``original_max_position_embeddings``, left out
    when None), the ``max_position_embeddings`` it is checked at, and an id that says what the row checks."""
    if original is not None:
        params["original_max_position_embeddings"] = original
    return pytest.param(params, max_position_embeddings, id=case_id)


YARN_CASES = [
    scaling_case("basic", 4096, original=1024, factor=4.0),
    scaling_case("explicit-attention-factor", 4096, original=1024, factor=4.0, attention_factor=0.8),
    scaling_case("mscale-ratio", 163840, original=4096, factor=40.0, mscale=1.0, mscale_all_dim=0.5),
    scaling_case("mscale-equal-deepseek", 163840, original=4096, factor=40.0, mscale=0.707, mscale_all_dim=0.707),
    scaling_case("mscale-without-all-dim", 16384, original=2048, factor=8.0, mscale=1.0),
    scaling_case("betas", 4096, original=1024, factor=4.0, beta_fast=16, beta_slow=2),
    scaling_case("betas-float", 4096, original=1024, factor=4.0, beta_fast=64.0, beta_slow=0.5),
    scaling_case("factor-derived", 8192, original=2048, factor=None),
    scaling_case("no-truncate", 4096, original=1024, factor=4.0, truncate=False),
    scaling_case("no-truncate-beta", 8192, original=512, factor=16.0, truncate=False, beta_fast=8),
    scaling_case("factor-one", 2048, original=2048, factor=1.0),
    scaling_case("original-defaults-to-max", 4096, factor=2.0),
]


def test_yarn_attention_factor_formulas():
    # default: 0.1 ln(factor) + 1 (Peng et al. 2023, eq. 22 with sqrt(1/t) = 0.1 ln(s) + 1)
    _, af = posviz.rope_inv_freq(
        64,
        scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024},
        max_position_embeddings=4096,
    )
    assert af == pytest.approx(0.1 * math.log(4.0) + 1.0, rel=1e-14)
    # mscale / mscale_all_dim: ratio of the two get_mscale values
    _, af = posviz.rope_inv_freq(
        64,
        scaling={
            "rope_type": "yarn",
            "factor": 40.0,
            "mscale": 1.0,
            "mscale_all_dim": 0.5,
            "original_max_position_embeddings": 4096,
        },
        max_position_embeddings=163840,
    )
    assert af == pytest.approx((0.1 * math.log(40.0) + 1.0) / (0.05 * math.log(40.0) + 1.0), rel=1e-14)
    # an explicit attention_factor wins
    _, af = posviz.rope_inv_freq(
        64,
        scaling={"rope_type": "yarn", "factor": 4.0, "attention_factor": 0.8, "original_max_position_embeddings": 1024},
        max_position_embeddings=4096,
    )
    assert af == 0.8


def test_yarn_keeps_fast_pairs_and_interpolates_slow_pairs():
    head_dim, factor = 128, 8.0
    default, _ = posviz.rope_inv_freq(head_dim)
    got, _ = posviz.rope_inv_freq(
        head_dim,
        scaling={"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": 2048},
        max_position_embeddings=16384,
    )
    # pairs completing > beta_fast = 32 turns inside the original context are extrapolated (unchanged) ...
    turns = 2048 * default / (2 * math.pi)
    fast = turns > 32 * 1.5  # a margin past floor/ceil truncation of the correction range
    slow = turns < 1 / 1.5
    assert fast.any() and slow.any()
    np.testing.assert_allclose(got[fast], default[fast], rtol=1e-14)
    # ... and pairs turning < beta_slow = 1 time are interpolated (divided by factor)
    np.testing.assert_allclose(got[slow], default[slow] / factor, rtol=1e-14)
    # in between the result lies between the two
    assert np.all(got <= default * (1 + 1e-14)) and np.all(got >= default / factor * (1 - 1e-14))


# ------------------------------------------------------------------------------------------------ LongRoPE


def _longrope_scaling(n_pairs: int, **extra) -> dict:
    """A LongRoPE scaling over an original context of 1024 positions: short factors growing slowly over the
    ``n_pairs`` pairs, long factors growing fast, and ``extra`` entries."""
    return {
        "rope_type": "longrope",
        "short_factor": [1.0 + 0.05 * i for i in range(n_pairs)],
        "long_factor": [1.0 + 0.75 * i**1.3 for i in range(n_pairs)],
        "original_max_position_embeddings": 1024,
        **extra,
    }


LONGROPE_CASES = [
    pytest.param({}, None, id="no-seq-len"),
    pytest.param({}, 1024, id="at-original"),
    pytest.param({}, 1025, id="just-past-original"),
    pytest.param({}, 3000, id="long"),
    pytest.param({"factor": 4.0}, 3000, id="explicit-factor"),
    pytest.param({"attention_factor": 1.3}, 3000, id="explicit-attention-factor"),
    pytest.param({"factor": 1.0}, 500, id="factor-one"),
]


@pytest.mark.parametrize("head_dim,base,prf", HEADS)
@pytest.mark.parametrize("extra,seq_len", LONGROPE_CASES)
def test_longrope_matches_hf(head_dim, base, prf, extra, seq_len):
    scaling = _longrope_scaling(int(head_dim * prf) // 2, **extra)
    check_against_hf(
        head_dim, base=base, partial_rotary_factor=prf, max_position_embeddings=4096, seq_len=seq_len, scaling=scaling
    )


@pytest.mark.parametrize(
    "seq_len,which", [(None, "short"), (10, "short"), (1024, "short"), (1025, "long"), (100000, "long")]
)
def test_longrope_picks_factor_set_by_seq_len(seq_len, which):
    scaling = _longrope_scaling(32)
    got, af = posviz.rope_inv_freq(64, max_position_embeddings=4096, seq_len=seq_len, scaling=scaling)
    default, _ = posviz.rope_inv_freq(64)
    ext = np.array(scaling[f"{which}_factor"])
    np.testing.assert_allclose(got, default / ext, rtol=1e-14)
    # factor derived as 4096 / 1024 = 4, attention factor sqrt(1 + ln 4 / ln 1024) (Phi-3 / LongRoPE default)
    assert af == pytest.approx(math.sqrt(1 + math.log(4.0) / math.log(1024)), rel=1e-14)


def test_longrope_attention_factor_is_one_without_extension():
    _, af = posviz.rope_inv_freq(16, max_position_embeddings=1024, scaling=_longrope_scaling(8))
    assert af == 1.0


# ------------------------------------------------------------------------------------------------ Llama 3.1

LLAMA3_CASES = [
    scaling_case("llama-3.1", 131072, original=8192, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0),
    scaling_case("llama-3.2", 131072, original=8192, factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0),
    scaling_case("small-context", 4000, original=1000, factor=4.0, low_freq_factor=2.0, high_freq_factor=8.0),
    scaling_case("original-from-max", 3000, factor=2.0, low_freq_factor=1.0, high_freq_factor=3.0),
]


@pytest.mark.parametrize("head_dim,base,prf", HEADS)
@pytest.mark.parametrize(
    "rope_type,params,max_pos",
    [pytest.param("yarn", *case.values, id=f"yarn-{case.id}") for case in YARN_CASES]
    + [pytest.param("llama3", *case.values, id=f"llama3-{case.id}") for case in LLAMA3_CASES],
)
def test_yarn_and_llama3_match_hf(head_dim, base, prf, rope_type, params, max_pos):
    """The two scalings that read the original context (``original_max_position_embeddings`` or
    ``max_position_embeddings``) with their parameters, on every head."""
    check_against_hf(
        head_dim,
        base=base,
        partial_rotary_factor=prf,
        max_position_embeddings=max_pos,
        scaling={"rope_type": rope_type, **params},
    )


def test_llama3_bands():
    params = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    got, af = posviz.rope_inv_freq(128, base=500000.0, scaling=params, max_position_embeddings=131072)
    default, _ = posviz.rope_inv_freq(128, base=500000.0)
    wavelen = 2 * math.pi / default
    high = wavelen < 8192 / 4.0
    low = wavelen > 8192 / 1.0
    mid = ~high & ~low
    assert high.any() and low.any() and mid.any()
    np.testing.assert_allclose(got[high], default[high], rtol=1e-14)
    np.testing.assert_allclose(got[low], default[low] / 8.0, rtol=1e-14)
    smooth = (8192 / wavelen[mid] - 1.0) / (4.0 - 1.0)
    np.testing.assert_allclose(got[mid], (1 - smooth) * default[mid] / 8.0 + smooth * default[mid], rtol=1e-14)
    assert af == 1.0


# ------------------------------------------------------------------------------------------------ dict handling


@pytest.mark.parametrize(
    "rope_type,params",
    [
        ("linear", {"factor": 2.0}),
        ("dynamic", {"factor": 2.0}),
        ("yarn", {"factor": 4.0, "original_max_position_embeddings": 1024}),
        (
            "llama3",
            {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 1024},
        ),
    ],
)
def test_legacy_type_key(rope_type, params):
    kwargs = dict(max_position_embeddings=4096, seq_len=8000)
    new = posviz.rope_inv_freq(64, scaling={"rope_type": rope_type, **params}, **kwargs)
    legacy = posviz.rope_inv_freq(64, scaling={"type": rope_type, **params}, **kwargs)
    np.testing.assert_array_equal(new[0], legacy[0])
    assert new[1] == legacy[1]
    check_against_hf(64, scaling={"type": rope_type, **params}, **kwargs)


def test_default_type_dict_equals_none():
    np.testing.assert_array_equal(
        posviz.rope_inv_freq(32, scaling={"rope_type": "default"})[0], posviz.rope_inv_freq(32)[0]
    )


def test_rope_theta_inside_scaling_dict_overrides_base():
    # HF reads the base from rope_parameters["rope_theta"]
    got, _ = posviz.rope_inv_freq(
        64, base=10000.0, scaling={"rope_type": "linear", "factor": 2.0, "rope_theta": 500000.0}
    )
    want, _ = oracle.hf_rope_inv_freq(64, base=500000.0, scaling={"rope_type": "linear", "factor": 2.0})
    np.testing.assert_allclose(got, want, rtol=RTOL_F32)


def test_scaling_dict_is_not_mutated():
    scaling = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}
    snapshot = dict(scaling)
    posviz.rope_inv_freq(64, scaling=scaling, max_position_embeddings=4096)
    assert scaling == snapshot


@pytest.mark.parametrize("bad", ["ntk", "Linear", "su", "proportional-x"])
def test_unknown_type_names_supported_types(bad):
    with pytest.raises(ValueError) as info:
        posviz.rope_inv_freq(64, scaling={"rope_type": bad, "factor": 2.0})
    message = str(info.value)
    assert bad in message
    for name in ALL_TYPES:
        assert name in message


@pytest.mark.parametrize("head_dim", [5, 9, 63, 65, 129])
def test_fully_rotated_odd_head_is_refused_like_transformers(head_dim):
    """transformers 5.24 refuses a fully rotated odd head_dim above 4 at config validation; so does posviz, in a
    sentence that names the head and says why."""
    with pytest.raises(Exception, match="RoPE requires an even rotary dimension"):
        oracle.hf_rope_config(head_dim, base=10000.0, scaling=None, max_position_embeddings=2048)
    with pytest.raises(ValueError) as info:
        posviz.rope_inv_freq(head_dim)
    message = str(info.value)
    assert f"head_dim {head_dim}" in message and "pairs" in message and "even" in message


@pytest.mark.parametrize(
    "head_dim,prf,rotated",
    [
        (64, 0.05, 3),
        (12, 0.25, 3),
        (20, 0.25, 5),
        (65, 0.5, 32),
        (64, 0.02, 1),
        (65, 0.999, 64),
        (3, 1.0, 3),
        (1, 1.0, 1),
    ],
)
@pytest.mark.parametrize(
    "scaling",
    [
        None,
        {"rope_type": "linear", "factor": 2.0},
        {"rope_type": "dynamic", "factor": 2.0},
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 256,
        },
    ],
)
def test_odd_rotated_dim_is_rounded_up_like_transformers(head_dim, prf, rotated, scaling):
    """64 x 0.05 -> 3: base^(-arange(0, 3, 2) / 3), two frequencies with the exponent over the odd dimension, as
    ROPE_INIT_FUNCTIONS computes them (transformers accepts these heads: partial, or at most 4 wide)."""
    got, _ = check_against_hf(head_dim, partial_rotary_factor=prf, scaling=scaling, seq_len=4096)
    assert got.size == (rotated + 1) // 2
    if scaling is None:
        np.testing.assert_allclose(got, 10000.0 ** (-np.arange(0, rotated, 2) / rotated), rtol=1e-14)


def test_odd_rotated_dim_matches_the_default_rope_of_gpt_neox():
    """GPT-NeoX's own default RoPE (its rotary module) for a head of 64 with rotary_pct 0.05."""
    import transformers

    config = transformers.GPTNeoXConfig(hidden_size=128, num_attention_heads=2, rotary_pct=0.05)
    module = transformers.models.gpt_neox.modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)
    got, _ = posviz.rope_inv_freq(64, partial_rotary_factor=0.05)
    np.testing.assert_allclose(got, module.inv_freq.double().numpy(), rtol=RTOL_F32)
    assert got.size == 2


def test_odd_rotated_part_turns_whole_pairs_like_gpt_neox():
    """An odd rotated dimension (3 of 8) turns 2 whole pairs, 4 dimensions, like GPT-NeoX's apply_rotary_pos_emb
    (it rotates cos.shape[-1] dimensions)."""
    inv, _ = posviz.rope_inv_freq(8, partial_rotary_factor=3 / 8)
    x = _rng_x((5, 8), seed=4)
    np.testing.assert_allclose(
        posviz.apply_rope(x, np.arange(5), inv), oracle.llama_rope(x, np.arange(5), inv), atol=1e-12
    )


@pytest.mark.parametrize("head_dim,prf", [(64, 0.01), (3, 0.25)])
def test_nothing_left_to_rotate_is_refused(head_dim, prf):
    with pytest.raises(ValueError, match="no dimension would rotate"):
        posviz.rope_inv_freq(head_dim, partial_rotary_factor=prf)


def test_yarn_with_an_odd_rotated_dim_that_transformers_cannot_build_is_refused():
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}
    with pytest.raises(RuntimeError):
        oracle.hf_rope_inv_freq(64, scaling=scaling, partial_rotary_factor=5 / 64)
    with pytest.raises(ValueError, match="ramp"):
        posviz.rope_inv_freq(64, scaling=scaling, partial_rotary_factor=5 / 64)
    check_against_hf(64, scaling=scaling, partial_rotary_factor=3 / 64)  # a ramp of one pair broadcasts


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        pytest.param({"head_dim": 0}, "head_dim", id="head-dim-zero"),
        pytest.param({"head_dim": -4}, "head_dim", id="head-dim-negative"),
        pytest.param({"head_dim": 64, "base": 0.0}, "base", id="base-zero"),
        pytest.param({"head_dim": 64, "base": -10000.0}, "base", id="base-negative"),
        pytest.param({"head_dim": 64, "partial_rotary_factor": 0.0}, "partial_rotary_factor", id="nothing-rotated"),
        pytest.param({"head_dim": 64, "partial_rotary_factor": 1.5}, "partial_rotary_factor", id="more-than-all"),
        pytest.param({"head_dim": 64, "scaling": {"rope_type": "linear"}}, "factor", id="linear-without-factor"),
        pytest.param(
            {"head_dim": 64, "scaling": {"rope_type": "linear", "factor": -2.0}}, "factor", id="negative-factor"
        ),
        pytest.param(
            {
                "head_dim": 64,
                "scaling": {
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "original_max_position_embeddings": 8192,
                },
            },
            "high_freq_factor",
            id="llama3-without-high-freq-factor",
        ),
        pytest.param(
            {"head_dim": 16, "scaling": _longrope_scaling(8, short_factor=[1.0] * 3, long_factor=[1.0] * 8)},
            "short_factor",
            id="longrope-short-factors-not-one-per-pair",
        ),
    ],
)
def test_bad_rope_inputs_raise_value_error(kwargs, needle):
    with pytest.raises(ValueError) as info:
        posviz.rope_inv_freq(**kwargs)
    assert needle in str(info.value)


# ------------------------------------------------------------------------------------------------ apply_rope


def _rng_x(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


@pytest.mark.parametrize("shape", [(7, 16), (2, 3, 11, 64), (1, 5, 128), (4, 2, 1, 8)])
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("start", [0, 1000])
def test_half_layout_matches_llama(shape, base, start):
    inv, _ = posviz.rope_inv_freq(shape[-1], base=base)
    positions = np.arange(start, start + shape[-2])
    x = _rng_x(shape)
    got = posviz.apply_rope(x, positions, inv, layout="half")
    assert got.shape == x.shape
    np.testing.assert_allclose(got, oracle.llama_rope(x, positions, inv), rtol=1e-12, atol=1e-12)


def test_default_layout_is_half():
    x = _rng_x((6, 32))
    inv, _ = posviz.rope_inv_freq(32)
    np.testing.assert_array_equal(
        posviz.apply_rope(x, np.arange(6), inv), posviz.apply_rope(x, np.arange(6), inv, layout="half")
    )


@pytest.mark.parametrize("shape", [(7, 16), (2, 3, 11, 64), (1, 5, 128)])
@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("start", [0, 1000])
def test_interleaved_layout_matches_gptj(shape, base, start):
    inv, _ = posviz.rope_inv_freq(shape[-1], base=base)
    positions = np.arange(start, start + shape[-2])
    x = _rng_x(shape, seed=1)
    got = posviz.apply_rope(x, positions, inv, layout="interleaved")
    np.testing.assert_allclose(got, oracle.gptj_rope(x, positions, inv), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout,reference", [("half", oracle.llama_rope), ("interleaved", oracle.gptj_rope)])
@pytest.mark.parametrize("head_dim,prf", [(64, 0.5), (64, 0.25), (80, 0.4), (32, 0.75), (10, 0.2)])
def test_partial_rotary_matches_neox_and_gptj(layout, reference, head_dim, prf):
    inv, _ = posviz.rope_inv_freq(head_dim, partial_rotary_factor=prf)
    assert 2 * len(inv) == int(head_dim * prf)
    x = _rng_x((2, 2, 9, head_dim), seed=2)
    positions = np.arange(3, 12)
    got = posviz.apply_rope(x, positions, inv, layout=layout)
    np.testing.assert_allclose(got, reference(x, positions, inv), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[..., 2 * len(inv) :], x[..., 2 * len(inv) :])


@pytest.mark.parametrize(
    "scaling,max_pos",
    [
        (None, 128),
        ({"rope_type": "linear", "factor": 4.0}, 128),
        ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32}, 128),
        (
            {
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 32,
            },
            128,
        ),
    ],
)
def test_end_to_end_against_llama_rotary_embedding_module(scaling, max_pos):
    """A real LlamaRotaryEmbedding (float32) incl. its attention_scaling, against apply_rope in float64.

    float32 bound: the angle m * theta is formed in float32 (relative error <= 2^-23 with theta's own rounding),
    so |angle error| <= 2^-23 * m <= 2^-23 * 64 ~ 8e-6 rad; cos/sin and the 2-term products add ~3 float32 ulps of
    |x| <= 5. Bound: 1e-5 * |x|max * 4 + 1e-6 -> use atol 2e-4.
    """
    head_dim, base = 32, 10000.0
    config = oracle.hf_rope_config(head_dim, base=base, scaling=scaling, max_position_embeddings=max_pos)
    inv, af = posviz.rope_inv_freq(head_dim, base=base, scaling=scaling, max_position_embeddings=max_pos)
    x = _rng_x((1, 2, 64, head_dim), seed=5).clip(-5, 5)
    positions = np.arange(64)
    got = posviz.apply_rope(x, positions, inv, attention_factor=af)
    np.testing.assert_allclose(got, oracle.llama_rope_module_float32(x, positions, config), rtol=0, atol=2e-4)


@pytest.mark.parametrize("head_dim,rotary_dim", [(16, 16), (64, 64), (64, 16), (256, 64)])
def test_end_to_end_against_gptj_float32_tables(head_dim, rotary_dim):
    """GPT-J's create_sinusoidal_positions (base 10000, float32) plus rotate_every_two on the first rotary_dim."""
    inv, _ = posviz.rope_inv_freq(head_dim, partial_rotary_factor=rotary_dim / head_dim)
    x = _rng_x((2, 1, 40, head_dim), seed=6).clip(-5, 5)
    positions = np.arange(40)
    got = posviz.apply_rope(x, positions, inv, layout="interleaved")
    np.testing.assert_allclose(got, oracle.gptj_rope_float32(x, positions, rotary_dim), rtol=0, atol=2e-4)


# ------------------------------------------------------------------------------------------------ properties


def _rotate_vec(v, pos, inv, layout):
    return posviz.apply_rope(np.asarray(v)[None, :], np.array([pos]), inv, layout=layout)[0]


@FAST
@given(
    half=st.integers(1, 64),
    m=st.integers(0, 10**5),
    n=st.integers(0, 10**5),
    shift=st.integers(-(10**4), 10**4),
    seed=SEEDS,
    layout=LAYOUTS,
    base=st.sampled_from([10000.0, 500000.0, 10.0]),
)
def test_scores_depend_only_on_relative_position(half, m, n, shift, seed, layout, base):
    m2, n2 = m + shift, n + shift
    if m2 < 0 or n2 < 0:
        m2, n2 = m - shift, n - shift  # keep positions non-negative; the claim holds for any common shift
    d = 2 * half
    inv, _ = posviz.rope_inv_freq(d, base=base)
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=d), rng.normal(size=d)
    s1 = _rotate_vec(q, m, inv, layout) @ _rotate_vec(k, n, inv, layout)
    s2 = _rotate_vec(q, m2, inv, layout) @ _rotate_vec(k, n2, inv, layout)
    # float64 angles of size <= 1.1e5 carry absolute errors ~1e-11 rad; scores scale with |q||k|
    assert abs(s1 - s2) <= 1e-8 * np.linalg.norm(q) * np.linalg.norm(k)


@FAST
@given(
    half=st.integers(1, 64),
    n_pass=st.integers(0, 9),
    seq=st.integers(1, 12),
    start=st.integers(0, 5000),
    seed=SEEDS,
)
def test_layouts_equal_up_to_pair_permutation(half, n_pass, seq, start, seed):
    r = 2 * half
    d = r + 2 * n_pass
    inv, _ = posviz.rope_inv_freq(r)  # the pairs of a partial-rotary head: the default set for the rotated dim
    # interleaved pair (2i, 2i+1) <-> half pair (i, i + r/2); tail dims stay where they are
    perm = np.array([2 * i for i in range(half)] + [2 * i + 1 for i in range(half)] + list(range(r, d)))
    x = np.random.default_rng(seed).normal(size=(3, seq, d))
    positions = np.arange(start, start + seq)
    inter = posviz.apply_rope(x, positions, inv, layout="interleaved")
    halfl = posviz.apply_rope(x[..., perm], positions, inv, layout="half")
    np.testing.assert_allclose(inter[..., perm], halfl, rtol=1e-13, atol=1e-13)


@FAST
@given(
    half=st.integers(1, 64),
    seq=st.integers(1, 20),
    start=st.integers(0, 10**5),
    layout=LAYOUTS,
    seed=SEEDS,
    prf_quarters=st.integers(1, 4),
)
def test_rotation_preserves_norm_and_pair_norms(half, seq, start, layout, seed, prf_quarters):
    d = 8 * half
    inv, _ = posviz.rope_inv_freq(d, partial_rotary_factor=prf_quarters / 4)
    x = np.random.default_rng(seed).normal(size=(2, seq, d))
    y = posviz.apply_rope(x, np.arange(start, start + seq), inv, layout=layout)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    r = 2 * len(inv)
    if layout == "half":
        pair_norm = lambda v: np.hypot(v[..., : r // 2], v[..., r // 2 : r])  # noqa: E731
    else:
        pair_norm = lambda v: np.hypot(v[..., 0:r:2], v[..., 1:r:2])  # noqa: E731
    np.testing.assert_allclose(pair_norm(y), pair_norm(x), rtol=1e-12, atol=1e-300)


@FAST
@given(
    d_rot_half=st.integers(1, 32),
    tail=st.integers(1, 40),
    seq=st.integers(1, 10),
    layout=LAYOUTS,
    seed=SEEDS,
)
def test_partial_rotary_leaves_tail_bit_identical(d_rot_half, tail, seq, layout, seed):
    inv = 1.0 / 10000.0 ** (np.arange(d_rot_half) / d_rot_half)
    d = 2 * d_rot_half + tail
    x = np.random.default_rng(seed).normal(size=(seq, d))
    y = posviz.apply_rope(x, np.arange(seq) + 7, inv, layout=layout)
    np.testing.assert_array_equal(y[:, 2 * d_rot_half :], x[:, 2 * d_rot_half :])
    assert not np.allclose(y[:, : 2 * d_rot_half], x[:, : 2 * d_rot_half])


@FAST
@given(
    half=st.integers(1, 32),
    a=st.integers(0, 5000),
    b=st.integers(0, 5000),
    layout=LAYOUTS,
    seed=SEEDS,
)
def test_rotations_compose_and_position_zero_is_identity(half, a, b, layout, seed):
    d = 2 * half
    inv, _ = posviz.rope_inv_freq(d)
    v = np.random.default_rng(seed).normal(size=d)
    np.testing.assert_array_equal(_rotate_vec(v, 0, inv, layout), v)
    twice = _rotate_vec(_rotate_vec(v, a, inv, layout), b, inv, layout)
    np.testing.assert_allclose(twice, _rotate_vec(v, a + b, inv, layout), rtol=0, atol=1e-9 * np.linalg.norm(v))


def test_input_is_not_modified():
    x = _rng_x((5, 16))
    before = x.copy()
    posviz.apply_rope(x, np.arange(5), posviz.rope_inv_freq(16)[0])
    np.testing.assert_array_equal(x, before)


# ------------------------------------------------------------------------------------------------ apply_rope errors


@pytest.mark.parametrize("head_dim", [3, 9, 63])
def test_apply_rope_odd_head_dim_raises(head_dim):
    # a full set of pairs for the even width above (head_dim + 1) cannot fit an odd head
    inv, _ = posviz.rope_inv_freq(head_dim + 1)
    with pytest.raises(ValueError) as info:
        posviz.apply_rope(_rng_x((4, head_dim)), np.arange(4), inv)
    assert str(head_dim) in str(info.value)


def test_apply_rope_too_many_frequencies_raises():
    inv, _ = posviz.rope_inv_freq(64)
    with pytest.raises(ValueError) as info:
        posviz.apply_rope(_rng_x((4, 32)), np.arange(4), inv)
    assert "32" in str(info.value)


def test_apply_rope_unknown_layout_raises():
    inv, _ = posviz.rope_inv_freq(16)
    with pytest.raises(ValueError) as info:
        posviz.apply_rope(_rng_x((4, 16)), np.arange(4), inv, layout="every_two")
    assert "every_two" in str(info.value)


def test_apply_rope_positions_length_mismatch_raises():
    inv, _ = posviz.rope_inv_freq(16)
    with pytest.raises(ValueError):
        posviz.apply_rope(_rng_x((4, 16)), np.arange(5), inv)


# ------------------------------------------------------------------------------------------------ helpers


def test_partial_rotary_factor_inside_scaling_dict_overrides_keyword():
    got, _ = posviz.rope_inv_freq(
        64, partial_rotary_factor=1.0, scaling={"rope_type": "linear", "factor": 2.0, "partial_rotary_factor": 0.5}
    )
    want, _ = oracle.hf_rope_inv_freq(64, partial_rotary_factor=0.5, scaling={"rope_type": "linear", "factor": 2.0})
    assert got.shape == (16,)
    np.testing.assert_allclose(got, want, rtol=RTOL_F32)


def test_rope_cos_sin():
    inv, _ = posviz.rope_inv_freq(16)
    pos = np.array([0, 3, 100])
    cos, sin = posviz.rope_cos_sin(pos, inv, attention_factor=1.5)
    assert cos.shape == sin.shape == (3, 8)
    np.testing.assert_allclose(cos, 1.5 * np.cos(np.outer(pos, inv)), atol=1e-15)
    np.testing.assert_allclose(sin, 1.5 * np.sin(np.outer(pos, inv)), atol=1e-15)


def test_apply_rope_attention_factor_scales_rotated_dims_only():
    inv, _ = posviz.rope_inv_freq(32, partial_rotary_factor=0.5)
    x = _rng_x((6, 32), seed=8)
    plain = posviz.apply_rope(x, np.arange(6), inv)
    scaled = posviz.apply_rope(x, np.arange(6), inv, attention_factor=1.25)
    np.testing.assert_allclose(scaled[:, :16], 1.25 * plain[:, :16], rtol=1e-14)
    np.testing.assert_array_equal(scaled[:, 16:], x[:, 16:])


@pytest.mark.parametrize("r", [2, 8, 64])
def test_interleaved_to_half_permutation(r):
    perm = posviz.interleaved_to_half(r)
    np.testing.assert_array_equal(perm, [2 * i for i in range(r // 2)] + [2 * i + 1 for i in range(r // 2)])
    inv, _ = posviz.rope_inv_freq(r)
    x = _rng_x((3, 5, r), seed=r)
    np.testing.assert_allclose(
        posviz.apply_rope(x, np.arange(5), inv, layout="interleaved")[..., perm],
        posviz.apply_rope(x[..., perm], np.arange(5), inv, layout="half"),
        atol=1e-13,
    )
    with pytest.raises(ValueError):
        posviz.interleaved_to_half(r + 1)


def test_normalize_scaling():
    assert posviz.normalize_scaling(None)["rope_type"] == "default"
    legacy = {"type": "linear", "factor": 2.0}
    out = posviz.normalize_scaling(legacy)
    assert out["rope_type"] == "linear" and out["factor"] == 2.0
    assert "rope_type" not in legacy  # a copy, not the caller's dict
    assert set(posviz.ROPE_TYPES) == set(ALL_TYPES)
    with pytest.raises(ValueError) as info:
        posviz.normalize_scaling({"rope_type": "xpos"})
    assert "xpos" in str(info.value)
    with pytest.raises(ValueError):
        posviz.normalize_scaling("linear")


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_rope_scores_equal_direct_dot_products(layout):
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=16), rng.normal(size=16)
    inv, _ = posviz.rope_inv_freq(16)
    qp, kp = np.array([0, 5, 9]), np.array([1, 2, 3, 50])
    s = posviz.rope_scores(q, k, inv, layout=layout, q_positions=qp, k_positions=kp)
    assert s.shape == (3, 4)
    for a, m in enumerate(qp):
        for b, n in enumerate(kp):
            assert s[a, b] == pytest.approx(_rotate_vec(q, m, inv, layout) @ _rotate_vec(k, n, inv, layout), abs=1e-12)
