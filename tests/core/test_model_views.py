"""The Models page's computations against independent derivations: the frequencies before scaling (transformers'
default RoPE for the same head), the share of a turn each pair covers, the M-RoPE score along one axis (a scalar loop
over the pairs of a rotated constant query and key), RoPE-Mixed's angles (each pair's frequency vector written out
from Heo et al. 2024's formula) and the similarity of one patch with the others (rotating q = k = ones pair by pair)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

import posviz.models as models
from posviz.models import views

from . import _oracles  # noqa: F401


def default_rope(head_dim: int, base: float) -> np.ndarray:
    """transformers' unscaled inv_freq for a head of ``head_dim``."""
    config = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, head_dim=head_dim, rope_theta=base)
    return LlamaRotaryEmbedding(config).inv_freq.double().numpy()


@pytest.mark.parametrize("name", ["llama3_1_8b", "qwen2_5_7b_yarn", "gemma3_4b", "deepseek_v3", "phi3_5_mini"])
def test_plain_frequencies_are_the_unscaled_rope_of_the_rotated_slice(name):
    for group in models.model_positions(models.preset(name)).summary():
        layer = group.layer
        if layer.kind != "rope":
            continue
        expected = default_rope(layer.rotary_dim, layer.rope_theta)
        np.testing.assert_allclose(views.plain_inv_freq(layer), expected, rtol=1e-6)
        if layer.rope_type == "default":
            np.testing.assert_allclose(views.plain_inv_freq(layer), layer.inv_freq, rtol=0)


def test_plain_frequencies_refuse_a_layer_without_rope():
    nope = models.model_positions(models.preset("llama4_scout")).layers[3]
    with pytest.raises(ValueError, match="does not use RoPE"):
        views.plain_inv_freq(nope)


def test_turn_share_counts_the_angle_reached_in_the_context():
    inv = np.array([1.0, 2 * math.pi / 100, 2 * math.pi / 1000, 2 * math.pi / 10_000])
    share = views.turn_share(inv, 501)
    # angle reached at the last position 500: 500, 5 turns, half a turn, a twentieth of a turn
    for got, theta in zip(share, inv, strict=True):
        assert got == pytest.approx(min(1.0, 500 * theta / (2 * math.pi)))
    assert share[2] == pytest.approx(0.5) and share[3] == pytest.approx(0.05)


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_mrope_score_along_one_axis_is_that_of_rotated_ones(axis, interleaved):
    head_dim, section = 16, [2, 3, 3]
    inv = 1.0 / 10000 ** (np.arange(0, head_dim, 2) / head_dim)
    axes = models.mrope_axes(head_dim, section, interleaved=interleaved)
    distances = [0, 1, 3, 17]
    got = views.mrope_axis_score(inv, axes, axis, distances)
    for delta, score in zip(distances, got, strict=True):
        # two tokens whose three positions differ by delta on ``axis`` only; rotate q = k = ones pair by pair
        pos_q, pos_k = [5, 5, 5], [5, 5, 5]
        pos_k[axis] += delta
        total = 0.0
        for j in range(head_dim // 2):
            a = pos_q[axes[j]] * inv[j]
            b = pos_k[axes[j]] * inv[j]
            q = (math.cos(a) - math.sin(a), math.sin(a) + math.cos(a))
            k = (math.cos(b) - math.sin(b), math.sin(b) + math.cos(b))
            total += (q[0] * k[0] + q[1] * k[1]) / 2
        assert score == pytest.approx(total / (head_dim // 2), abs=1e-12)


def test_mrope_score_refuses_axes_of_another_length():
    with pytest.raises(ValueError, match="one axis per frequency"):
        views.mrope_axis_score(np.ones(4), np.zeros(3, dtype=int), 1, [1])


def test_rope_mixed_angles_follow_the_papers_formula():
    rows, cols, d, base, directions = 3, 4, 16, 100.0, 8
    got = views.rope_mixed_angles(rows, cols, d, base=base, n_directions=directions)
    assert got.shape == (rows * cols, d // 2)
    for p in range(rows * cols):
        r, c = divmod(p, cols)
        for t in range(d // 2):
            phi = math.pi / 2 - math.pi * (t % directions) / directions
            mag = base ** (-2 * t / d)
            # frequency vector (theta_x, theta_y) = |theta| (cos phi, sin phi), angle = theta . (x, y), x the column
            assert got[p, t] == pytest.approx(mag * (math.cos(phi) * c + math.sin(phi) * r), abs=1e-12)
    spread = {round(math.degrees(math.pi / 2 - math.pi * j / directions) % 180, 6) for j in range(directions)}
    assert spread == {22.5 * j for j in range(8)}  # evenly spread over half a turn, the diagonals among them


def test_rope_mixed_with_two_directions_is_pixtrals_axial_rope():
    rows, cols, d = 4, 5, 16
    mixed = views.rope_mixed_angles(rows, cols, d, base=100.0, n_directions=2)
    axial = models.rope_2d_angles(rows, cols, d, base=100.0)
    # axial lays out rows (the even frequencies) first, then the columns (the odd ones)
    order = np.concatenate([np.arange(0, d // 2, 2), np.arange(1, d // 2, 2)])
    np.testing.assert_allclose(mixed[:, order], axial, atol=1e-12)


def test_rope_mixed_refuses_odd_settings():
    with pytest.raises(ValueError, match="head_dim must be even"):
        views.rope_mixed_angles(2, 2, 7)
    with pytest.raises(ValueError, match="n_directions"):
        views.rope_mixed_angles(2, 2, 8, n_directions=1)


def test_with_q_and_k_ones_axial_rope_scores_both_diagonals_alike_but_mixed_does_not():
    """With q = k = ones (the page's map) each axial pair scores cos(dr theta) or cos(dc theta), even in the offset,
    so (1, 1) and (1, -1) score the same; RoPE-Mixed's slanted directions tell them apart. (With random q and k axial
    RoPE tells them apart too: tests/core/test_rope_2d.py.)"""
    n = 9
    centre = 4 * n + 4
    for table, same in ((models.rope_2d_angles(n, n, 32), True), (views.rope_mixed_angles(n, n, 32), False)):
        sim = views.rope_2d_similarity(table, centre).reshape(n, n)
        assert bool(np.isclose(sim[5, 5], sim[5, 3])) is same


def test_rope_2d_similarity_rotates_ones():
    table = models.rope_2d_angles(3, 3, 8)
    got = views.rope_2d_similarity(table, 4)
    for p in range(9):
        total = 0.0
        for i in range(4):
            a, b = table[4, i], table[p, i]
            rq = (math.cos(a) - math.sin(a), math.sin(a) + math.cos(a))
            rk = (math.cos(b) - math.sin(b), math.sin(b) + math.cos(b))
            total += (rq[0] * rk[0] + rq[1] * rk[1]) / 2  # |ones|^2 = 2
        assert got[p] == pytest.approx(total / 4, abs=1e-12)
    with pytest.raises(ValueError, match="patch"):
        views.rope_2d_similarity(table, 9)


def walk(shape, start, step):
    """The points of the line start + k * step that are on the grid before it first leaves it, one step at a time."""
    points, (r, c) = [], start
    while 0 <= r < shape[0] and 0 <= c < shape[1]:
        points.append((r, c))
        r, c = r + step[0], c + step[1]
    return points


STEPS = [(1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1), (1, 0), (0, -1), (2, 1), (1, -3), (-2, 0)]


@pytest.mark.parametrize("step", STEPS)
def test_steps_inside_counts_the_points_a_walk_visits(step):
    for shape in ((1, 1), (5, 6), (15, 15), (4, 9)):
        for row in range(shape[0]):
            for col in range(shape[1]):
                assert views.steps_inside(shape, (row, col), step) == len(walk(shape, (row, col), step)), (
                    shape,
                    row,
                    col,
                )


def test_steps_inside_refuses_a_start_off_the_grid_and_a_step_that_never_leaves():
    with pytest.raises(ValueError, match="not on the 5 x 6 grid"):
        views.steps_inside((5, 6), (5, 0), (1, 1))
    with pytest.raises(ValueError, match="never leaves"):
        views.steps_inside((5, 6), (2, 2), (0, 0))


@pytest.mark.parametrize("step", STEPS)
def test_line_profile_reads_the_grid_along_the_line_then_nan(step):
    rng = np.random.default_rng(7)
    grid = rng.normal(size=(5, 6))
    for start in ((0, 0), (2, 3), (4, 5), (4, 0)):
        length = 9  # longer than any line on the grid: the tail is off it
        got = views.line_profile(grid, start, step, length)
        on = walk(grid.shape, start, step)
        expected = [grid[p] for p in on] + [math.nan] * (length - len(on))
        np.testing.assert_array_equal(got, np.array(expected), err_msg=str((start, step)))


def test_line_profile_of_an_axial_grid_is_the_same_on_both_diagonals():
    """With q = k = ones axial 2-D RoPE's score is even in dr and in dc: from the centre of a square grid, the
    similarity along the diagonal and along the antidiagonal agree step by step."""
    angles = models.rope_2d_angles(9, 9, 16, base=100.0)
    grid = views.rope_2d_similarity(angles, 4 * 9 + 4).reshape(9, 9)
    length = views.steps_inside((9, 9), (4, 4), (1, 1))
    assert length == 5
    np.testing.assert_allclose(
        views.line_profile(grid, (4, 4), (1, 1), length), views.line_profile(grid, (4, 4), (1, -1), length), atol=1e-12
    )


ASSETS = __import__("pathlib").Path(__file__).resolve().parents[2] / "assets"


def models_catalog(lang: str) -> dict[str, str]:
    import json

    return json.loads((ASSETS / "i18n" / lang / "models.json").read_text(encoding="utf-8"))


def models_text(lang: str) -> str:
    return (ASSETS / "texts" / f"models.{lang}.md").read_text(encoding="utf-8")


def test_rope_mixed_is_said_to_be_learned_and_the_fixed_directions_an_illustration():
    """Heo et al. learn RoPE-Mixed's 2-D frequencies (initialised per head with a random angle and its perpendicular,
    magnitudes theta^(-4t/d), theta = 10); the evenly spread fixed directions are posviz's illustration, and both
    languages say so."""
    words = {"en": ("learn", "illustration"), "zh": ("学习", "演示")}
    for lang, (learned, illustration) in words.items():
        catalog, text = models_catalog(lang), models_text(lang)
        help_text = catalog["models.ctl.dirs.help"]
        assert learned in help_text and illustration in help_text, lang
        assert "θ^(−4t/d)" in help_text and "θ = 10" in help_text, lang
        assert illustration in catalog["models.rope2d.mixed"] or "illustrating" in catalog["models.rope2d.mixed"]
        assert learned in text and illustration in text, lang
    assert "perpendicular" in models_catalog("en")["models.ctl.dirs.help"]
    assert "垂直" in models_catalog("zh")["models.ctl.dirs.help"]


def test_texts_say_axial_scores_are_a_sum_not_that_axial_cannot_tell_the_diagonals_apart():
    """With random q and k axial 2-D RoPE does score the two diagonals differently (tests/core/test_rope_2d.py); what
    it lacks is a non-separable dependence, s = f(dr) + g(dc). The texts say that, and say that the diagonals only
    look the same for q = k = ones."""
    wrong = {"en": "can tell the two diagonals apart", "zh": "能分辨两条对角线"}
    ones = {"en": "q = k = ones", "zh": "q = k = 全 1"}
    for lang in ("en", "zh"):
        catalog, text = models_catalog(lang), models_text(lang)
        for key, value in [*catalog.items(), ("models.md", text)]:
            assert wrong[lang] not in value, (lang, key)
        assert "f(dr) + g(dc)" in catalog["models.rope2d.similarity.notice"], lang
        for key in ("models.rope2d.similarity.notice", "models.rope2d.directions.notice"):
            assert ones[lang] in catalog[key], (lang, key)
    assert "a function of the row offset plus a function of the column offset" in models_text("en")
    assert "行偏移的一个函数加上列偏移的一个函数" in models_text("zh")


def test_models_texts_say_what_llama_4_s_nope_layers_and_gemma_3_s_scaling_are():
    """Llama 4's NoPE layers have no RoPE but do see order (the causal mask and, with attn_temperature_tuning, a query
    scale that grows with the position: transformers' Llama4TextAttention); Gemma 3's global layers are linearly
    scaled in the 4B, 12B and 27B checkpoints, and the 1B one has no rope_scaling."""
    llama4 = models.preset("llama4_scout")
    text_config = llama4.get("text_config", llama4)
    assert text_config["attn_temperature_tuning"] is True
    kinds = {group.layer.kind for group in models.model_positions(llama4).summary()}
    assert kinds == {"rope", "nope"}
    gemma = [g.layer for g in models.model_positions(models.preset("gemma3_4b")).summary()]
    assert [layer.rope_type for layer in gemma] == ["default", "linear"]  # the 4B preset's global layers
    en, zh = models_text("en"), models_text("zh")
    assert "without any" not in en and "without RoPE" in en and "temperature" in en and "causal mask" in en
    assert "完全没有位置信号" not in zh and "不用 RoPE" in zh and "温度" in zh and "因果掩码" in zh
    assert "in the 4B, 12B and 27B models with\na linear scaling" in en and "(the 1B model has none)" in en
    assert "4B、12B 和 27B 模型的全局层还加了线性缩放（1B 模型没有）" in zh


def test_the_layer_map_calls_a_linear_attention_mixer_attention_without_softmax():
    """A linear-attention mixer (kind "none") has no softmax attention and no position encoding of its own, but it is
    still attention: neither language says the layer has none."""
    en, zh = models_catalog("en"), models_catalog("zh")
    assert "没有注意力" not in zh["models.map.notice"]
    assert "没有 softmax 注意力" in zh["models.map.notice"] and zh["models.kind.none"] in zh["models.map.notice"]
    assert "no softmax attention" in en["models.map.notice"] and en["models.kind.none"] in en["models.map.notice"]


def test_the_wavelength_notice_says_only_what_the_wavelengths_show_of_windowed_layers():
    """Within a window of W tokens a pair of wavelength lambda >> W turns through W / lambda of a turn at most: the
    notice says such pairs tell distances apart only weakly, not that they "matter little"."""
    window, wavelength = 1024, 2 * math.pi * 1e6 ** ((128 - 2) / 128)
    assert window / wavelength < 0.01
    en, zh = models_catalog("en"), models_catalog("zh")
    assert "matter little" not in en["models.layers.wavelength.notice"]
    assert "tells their distances apart only weakly" in en["models.layers.wavelength.notice"]
    assert "作用不大" not in zh["models.layers.wavelength.notice"]
    assert "只能微弱地区分它们的距离" in zh["models.layers.wavelength.notice"]
