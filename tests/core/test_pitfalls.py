"""Each pitfall's buggy variant reproduces its signature and the correct version does not, checked against
scalar loops and closed forms written here; the torch errors are the ones torch itself raises."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz
from posviz.lessons import pitfalls

FAST = settings(max_examples=30, deadline=None)


def loop_table(n, d, exponent):
    """A scalar reference loop: column j of pair k = j // 2 at angle p / base^exponent(j)."""
    table = np.empty((n, d))
    for p in range(n):
        for j in range(d):
            angle = p / 10000.0 ** exponent(j)
            table[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return table


def test_buggy_loops_match_scalar_code():
    n, d = 12, 10
    doubled = loop_table(n, d, lambda j: 2 * (j - j % 2) / d)
    shifted = loop_table(n, d, lambda j: 2 * j / d)
    np.testing.assert_allclose(pitfalls.buggy_sinusoidal(n, d), doubled, atol=1e-14)
    np.testing.assert_allclose(pitfalls.buggy_sinusoidal(n, d, variant="cos_shift"), shifted, atol=1e-14)
    np.testing.assert_allclose(posviz.sinusoidal(n, d), loop_table(n, d, lambda j: (j - j % 2) / d), atol=1e-14)


@FAST
@given(st.integers(1, 200), st.integers(1, 96), st.sampled_from([100.0, 10000.0, 500000.0]))
def test_doubled_exponent_is_the_correct_table_with_the_base_squared(n, d, base):
    """base^(4k/d) = (base^2)^(2k/d): every pair turns as in the correct table of base squared."""
    bug = pitfalls.buggy_sinusoidal(n, d, base=base)
    np.testing.assert_allclose(bug, posviz.sinusoidal(n, d, base=base**2), atol=1e-9)


def test_doubled_exponent_freezes_the_upper_half():
    n, d = 128, 128
    still_bug = pitfalls.still_columns(pitfalls.buggy_sinusoidal(n, d))
    still_ok = pitfalls.still_columns(posviz.sinusoidal(n, d))
    # the buggy pair k moves like the correct pair 2k: about twice as many still columns
    assert still_bug >= d // 2 and still_ok < d // 4
    motion = pitfalls.column_motion(pitfalls.buggy_sinusoidal(n, d))
    np.testing.assert_allclose(motion, np.ptp(pitfalls.buggy_sinusoidal(n, d), axis=0))


def test_shifted_cos_leaves_the_unit_circle_and_the_others_do_not():
    for table in (posviz.sinusoidal(64, 32), pitfalls.buggy_sinusoidal(64, 32)):
        assert pitfalls.pair_radius_error(table).max() < 1e-12
    radius = pitfalls.pair_radius_error(pitfalls.buggy_sinusoidal(64, 32, variant="cos_shift"))
    assert radius[0] > 0.5  # pair 0: sin at frequency 1, cos at base^(-1/8)


def test_swapped_axes_break_offset_dependence():
    ok = pitfalls.offset_dependence(posviz.sinusoidal(64, 64))
    bug = pitfalls.offset_dependence(pitfalls.swapped_axes_table(64, 64))
    assert ok.max() < 1e-12 and bug.max() > 0.1
    np.testing.assert_array_equal(pitfalls.swapped_axes_table(10, 6), posviz.sinusoidal(6, 10).T)
    gram = posviz.sinusoidal(20, 8) @ posviz.sinusoidal(20, 8).T
    assert np.ptp(np.diagonal(gram, 3)) / np.abs(gram).max() < 1e-12


def test_zero_init_makes_every_position_the_same():
    assert np.all(pitfalls.nearest_distance(pitfalls.zero_table(30, 8)) == 0)
    random = posviz.learned_init(30, 8)
    expected = [min(np.linalg.norm(random[p] - random[q]) for q in range(30) if q != p) for p in range(30)]
    np.testing.assert_allclose(pitfalls.nearest_distance(random), expected, rtol=1e-9)


def test_unscaled_tokens_drown_in_the_position_signal():
    _, same_pos_bug, same_tok_bug, ratio_bug = pitfalls.mix_signature(128, 8, 16, scaled=False)
    _, same_pos_ok, same_tok_ok, ratio_ok = pitfalls.mix_signature(128, 8, 16, scaled=True)
    assert ratio_bug == pytest.approx(math.sqrt(128 / 2), rel=0.1)  # ||PE|| = sqrt(d/2) over ||E|| ~ 1
    assert ratio_ok == pytest.approx(math.sqrt(0.5), rel=0.1)  # sqrt(d/2) / sqrt(d)
    assert same_pos_bug > 0.9 > 0.5 > same_pos_ok
    assert same_tok_ok > same_pos_ok and same_tok_bug < same_pos_bug


def test_multiplying_erases_and_adding_does_not():
    lost = pitfalls.lost_dimensions(100, 64, combine="multiply")
    table = posviz.sinusoidal(100, 64)
    np.testing.assert_array_equal(lost, (np.abs(table) < 0.1).mean(axis=1))
    assert lost[0] == 0.5 and not pitfalls.lost_dimensions(100, 64, combine="add").any()


def real_error(func) -> str:
    with pytest.raises(RuntimeError) as info:
        func()
    return str(info.value)


def test_torch_errors_are_torch_s_own():
    assert pitfalls.torch_add_error((5, 512), (5, 768)) == real_error(lambda: torch.ones(5, 512) + torch.ones(5, 768))
    assert "512" in pitfalls.torch_add_error((5, 512), (5, 768))
    with pytest.raises(ValueError, match="can be added"):
        pitfalls.torch_add_error((5, 64), (5, 64))
    assert pitfalls.concat_error(4, 32) == real_error(lambda: torch.nn.Linear(32, 32)(torch.ones(4, 64)))
    assert pitfalls.past_end_error(8, 8) == "index out of range in self"


@pytest.mark.parametrize("head_dim", [3, 65, 129])
def test_odd_rope_head_dim_fails_in_hand_written_code_with_torch_s_shape_error(head_dim):
    assert pitfalls.rope_odd_error(head_dim) == (
        f"The size of tensor a ({head_dim}) must match the size of tensor b ({head_dim + 1}) "
        "at non-singleton dimension 1"
    )
    assert "RoPE" not in pitfalls.rope_odd_error(head_dim)
    assert str(head_dim) in pitfalls.rope_odd_reason(head_dim)
    with pytest.raises(ValueError, match="even"):
        pitfalls.rope_odd_error(head_dim + 1)


def _transformers_config_error(head_dim: int) -> str | None:
    """The ValueError transformers' LlamaConfig raises for a fully rotated head_dim (None if it accepts it)."""
    import transformers

    transformers.logging.set_verbosity_error()
    try:
        transformers.LlamaConfig(hidden_size=2 * head_dim, num_attention_heads=2, head_dim=head_dim)
    except Exception as exc:  # noqa: BLE001 - the strict dataclass wraps the ValueError
        cause = exc.__cause__ if isinstance(exc.__cause__, ValueError) else exc
        return str(cause)
    return None


@pytest.mark.parametrize("head_dim", [1, 3, 5, 64, 65, 129, 4095])
def test_transformers_refusal_is_quoted_word_for_word(head_dim):
    """transformers 5.24 refuses a fully rotated odd head above 4 dimensions with a message that names RoPE; the
    pitfall quotes it exactly, and says nothing (None) where transformers accepts the config."""
    expected = _transformers_config_error(head_dim)
    assert pitfalls.rope_odd_config_error(head_dim) == expected
    if head_dim % 2 and head_dim > 4:
        assert expected.startswith("RoPE requires an even rotary dimension")
    else:
        assert expected is None


@pytest.mark.parametrize("head_dim", [1, 3])
def test_tiny_odd_heads_pass_transformers_and_posviz_explains_them_at_the_rotation(head_dim):
    """Heads of 1 or 3 dimensions pass transformers' check (and posviz's frequencies, like ROPE_INIT_FUNCTIONS give
    ceil(d/2) of them), then cannot be rotated: posviz says so when they are applied."""
    assert pitfalls.rope_odd_config_error(head_dim) is None
    assert posviz.rope_inv_freq(head_dim)[0].size == (head_dim + 1) // 2
    reason = pitfalls.rope_odd_reason(head_dim)
    assert f"head_dim {head_dim} is odd" in reason and "pairs" in reason


def test_odd_rope_pitfall_says_both_errors_in_both_languages():
    """The pitfall's text says the hand-written error does not name RoPE and transformers' does, in en and zh."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "assets" / "i18n"
    en = json.loads((root / "en" / "pitfalls.json").read_text())["pitfalls.rope.what.odd"]
    zh = json.loads((root / "zh" / "pitfalls.json").read_text())["pitfalls.rope.what.odd"]
    assert "does not mention RoPE" in en and "transformers 5.24" in en and "does name RoPE" in en
    assert "不提 RoPE" in zh and "transformers 5.24" in zh and "明确提到 RoPE" in zh
    assert "64 × 0.05 → 3 → 2 pairs" in en and "64 × 0.05 → 3 → 转 2 对" in zh
    assert posviz.rope_inv_freq(64, partial_rotary_factor=0.05)[0].size == 2  # what the example says


def test_mixed_pairing_changes_scores_except_at_offset_zero():
    offsets, trained, inference = pitfalls.pairing_scores(16, 40, seed=1)
    q, k = np.random.default_rng(1).standard_normal((2, 16))
    theta = 10000.0 ** (-np.arange(0, 16, 2) / 16)

    def score(pair_a, pair_b, r):  # rotate each pair of q by r theta_i, dot with k
        a, b = q[pair_a], q[pair_b]
        c, s = np.cos(r * theta), np.sin(r * theta)
        return ((a * c - b * s) @ k[pair_a] + (b * c + a * s) @ k[pair_b]) / 4.0

    inter = [score(np.arange(0, 16, 2), np.arange(1, 16, 2), r) for r in offsets]
    half = [score(np.arange(8), np.arange(8, 16), r) for r in offsets]
    np.testing.assert_allclose(trained, inter, atol=1e-12)
    np.testing.assert_allclose(inference, half, atol=1e-12)
    assert trained[0] == pytest.approx(inference[0]) and pitfalls.pairing_gap(trained, inference) > 0.1
    same = pitfalls.pairing_scores(16, 40, seed=1, inference="interleaved")
    assert pitfalls.pairing_gap(same[1], same[2]) == 0


@pytest.mark.parametrize("n_heads", [1, 2, 4, 8, 16, 32, 64])
def test_naive_slopes_are_right_for_powers_of_two(n_heads):
    assert pitfalls.slope_error(n_heads).max() == 0


@pytest.mark.parametrize("n_heads", [3, 5, 6, 12, 20, 24, 40])
def test_naive_slopes_are_wrong_otherwise(n_heads):
    expected = np.abs(np.log2(2.0 ** (-8 * np.arange(1, n_heads + 1) / n_heads) / posviz.alibi_slopes(n_heads)))
    np.testing.assert_allclose(pitfalls.slope_error(n_heads), expected)
    assert expected.max() > 0.25


def test_float16_merges_neighbours_past_2048():
    assert pitfalls.merged_neighbours(2049) == 0
    assert pitfalls.merged_neighbours(2050) == 1  # 2049 rounds to 2048
    merged = sum(1 for p in range(1, 4096) if float(np.float16(p)) == float(np.float16(p - 1)))
    assert pitfalls.merged_neighbours(4096) == merged
    assert pitfalls.merged_neighbours(posviz.MAX_POSITIONS, "float32") == 0
    positions, err16, err32 = pitfalls.position_rounding(5000, 5000)
    assert err16[:2049].max() == 0 and err16.max() == 2 and not err32.any()


def test_bad_parameters_are_explained():
    with pytest.raises(ValueError, match="variant"):
        pitfalls.buggy_sinusoidal(4, 4, variant="tripled")
    with pytest.raises(ValueError, match="at most 2,048 positions"):
        pitfalls.offset_dependence(np.ones((3000, 2)))


def test_the_pitfall_tables_are_the_named_tables():
    """Each entry of TABLES is the table its name says, built with the same (n_positions, d_model, *, base)."""
    n, d, base = 33, 12, 500.0
    expected = {
        "correct": posviz.sinusoidal(n, d, base=base),
        "doubled": pitfalls.buggy_sinusoidal(n, d, base=base, variant="doubled"),
        "cos_shift": pitfalls.buggy_sinusoidal(n, d, base=base, variant="cos_shift"),
        "swapped": pitfalls.swapped_axes_table(n, d, base=base),
        "random": posviz.learned_init(n, d),
        "zero": np.zeros((n, d)),
    }
    assert set(pitfalls.TABLES) == set(expected)
    for kind, table in expected.items():
        np.testing.assert_array_equal(pitfalls.TABLES[kind](n, d, base=base), table)
