"""The RoPE page's views beyond the scores (tests/app/test_views.py): the pairs turning, the decay bound, the two
layouts, partial rotation, the context-extension scalings, dynamic NTK's growth and a config.json's frequencies,
each against the formula written out here, each cached by its settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posviz.ui import cache
from posviz.ui.views import rope as rope_views

from ._support import assert_matrix, heatmap_z, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


def thetas(dim: int, base: float) -> np.ndarray:
    """theta_i = base^(-2i/dim), i = 0 .. ceil(dim/2) - 1 (transformers' default inv_freq)."""
    return base ** (-np.arange(0, dim, 2) / dim)


def test_the_pairs_turn_a_query_of_ones_by_m_theta():
    head_dim, base, length, count = 12, 100.0, 9, 3
    out = rope_views.animation(head_dim, base, length, count)
    assert rope_views.animation(head_dim, base, length, count) is out
    data = out.figure("anim").data
    theta = thetas(head_dim, base)
    m = np.arange(length)
    for i in (0, 2, 5):  # three pairs evenly spaced over 6
        angle = m * theta[i]
        # R(a) (1, 1) = (cos a - sin a, sin a + cos a)
        np.testing.assert_allclose(data[f"pair{i}_a"], np.cos(angle) - np.sin(angle), atol=1e-12)
        np.testing.assert_allclose(data[f"pair{i}_b"], np.sin(angle) + np.cos(angle), atol=1e-12)
    assert sorted(k for k in data if k.startswith("pair")) == sorted(
        f"pair{i}_{s}" for i in (0, 2, 5) for s in ("a", "b")
    )


def decay_bound(r: np.ndarray, head_dim: int, base: float) -> np.ndarray:
    """Su et al. (2021, 3.4.3): B(r) = (1 / (d/2)) sum_{j=1}^{d/2} |S_j|, S_j = sum_{i<j} e^{i r theta_i}."""
    partial = np.cumsum(np.exp(1j * np.outer(r, thetas(head_dim, base))), axis=1)
    return np.abs(partial).mean(axis=1)


def test_the_decay_bound_is_su_et_al_s_for_every_base_drawn():
    head_dim, base, reach = 16, 2000.0, 200
    out = rope_views.decay(head_dim, base, reach)
    data = out.figure("decay").data
    r = np.asarray(data["distance"], dtype=float)
    np.testing.assert_array_equal(r, np.arange(reach + 1))  # every distance fits in the points drawn
    for b in (*rope_views.DECAY_BASES, base):
        name = tr("en", "rope.decay.base", base=f"{b:,.0f}")
        np.testing.assert_allclose(data[f"{name}: bound"], decay_bound(r, head_dim, b), atol=1e-9)
        envelope = np.asarray(data[f"{name}: envelope"])
        assert np.all(envelope >= np.asarray(data[f"{name}: bound"]) - 1e-12) and np.all(np.diff(envelope) <= 1e-12)
    assert rope_views.decay(head_dim, base, reach + 1) is not out


def test_the_layouts_pair_two_ways_and_one_permutation_maps_them():
    d = 10
    out = rope_views.layouts(d, 10_000.0)
    data = out.figure("layouts").data
    np.testing.assert_array_equal(data["p"], [0, 2, 4, 6, 8, 1, 3, 5, 7, 9])
    np.testing.assert_array_equal(data["pair_interleaved"], np.arange(d) // 2)
    np.testing.assert_array_equal(data["pair_half"], np.arange(d) % (d // 2))
    check = out.figure("check").data
    np.testing.assert_allclose(check["interleaved_then_p"], check["p_then_half"], atol=1e-12)


def test_partial_rotation_turns_the_first_r_dims_and_passes_the_rest():
    n, head_dim, base, factor = 6, 16, 500.0, 0.5
    out = rope_views.partial(n, head_dim, base, factor, "half")
    table = heatmap_z(out.figure("partial").fig.to_dict())
    r = 8
    angle = np.arange(n)[:, None] * thetas(r, base)[None, :]
    expected = np.ones((n, head_dim))
    expected[:, : r // 2] = np.cos(angle) - np.sin(angle)
    expected[:, r // 2 : r] = np.sin(angle) + np.cos(angle)
    assert_matrix(table, expected)
    assert rope_views.partial(n, head_dim, base, factor, "interleaved") is not out


def test_extension_ratios_are_pi_s_and_ntk_s():
    head_dim, base, factor, original = 32, 10_000.0, 4, 2048
    out = rope_views.extension(head_dim, base, factor, original, original * factor)
    data = out.figure("ext.classes").data
    np.testing.assert_allclose(data["linear_ratio"], np.full(head_dim // 2, 1 / factor), rtol=1e-12)
    # NTK-aware: base' = base s^(d/(d-2)), so theta_i' / theta_i = s^(-(d/(d-2)) 2i/d) = s^(-2i/(d-2))
    i = np.arange(head_dim // 2)
    np.testing.assert_allclose(data["ntk_ratio"], float(factor) ** (-2 * i / (head_dim - 2)), rtol=1e-12)
    wavelengths = out.figure("ext.wavelength").data
    np.testing.assert_allclose(wavelengths[tr("en", "rope.method.none")], 2 * np.pi / thetas(head_dim, base))
    attention = dict(zip(*out.figure("ext.attention").data.values(), strict=True))
    assert attention["yarn"] == pytest.approx(0.1 * np.log(factor) + 1)  # YaRN's sqrt(1/t) (Peng et al., 2023)
    assert attention["linear"] == 1.0


def test_dynamic_ntk_grows_past_the_original_context_only():
    factor, original, current = 4, 1000, 3000
    out = rope_views.dynamic_growth(factor, original, current)
    assert tr("en", "rope.ext.dynamic.text", s=factor, overshoot=f"{factor * factor - factor + 1:,}") in out.texts
    data = out.figure("ext.dynamic").data
    lengths = np.asarray(data["length"], dtype=float)
    for f in (1, 2, factor):
        expected = f * np.maximum(lengths, original) / original - (f - 1)  # 1 up to L_max, then linear
        np.testing.assert_allclose(data[tr("en", "rope.ext.dynamic.factor", f=f)], expected, rtol=1e-12)


def test_a_config_s_frequencies_are_base_to_minus_2i_over_d():
    text = json.dumps(
        {
            "model_type": "llama",
            "hidden_size": 256,
            "num_attention_heads": 4,
            "num_key_value_heads": 4,
            "num_hidden_layers": 2,
            "rope_theta": 50_000.0,
            "max_position_embeddings": 4096,
        }
    )
    out = rope_views.config(text)
    data = out.figure("cfg").data
    np.testing.assert_allclose(data["inv_freq"], thetas(64, 50_000.0), rtol=1e-12)
    np.testing.assert_allclose(data["inv_freq_scaled"], thetas(64, 50_000.0), rtol=1e-12)  # no rope_scaling
    assert "64" in out.texts[0] and "50,000" in out.texts[0]
    assert rope_views.config(text) is out
    with pytest.raises(ValueError):
        rope_views.config("{not json")
    # the refused text is not kept: the good one is the only config view held
    assert len([key for key in cache.TABLES.keys() if key[0] == "view" and key[2] == "config"]) == 1
