"""Axial 2-D RoPE against transformers 5.24's Pixtral: a tiny ``PixtralVisionModel`` reads an image of
n_rows x n_cols patches, builds its own position ids and its rotary embedding, and the cos / sin it hands to its
transformer layers are compared with cos / sin of ``rope_2d_angles`` (pairs laid out half-split, i and i + d/2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import PixtralVisionConfig, PixtralVisionModel

import posviz
from posviz.models import rope_2d_axes

from . import _oracles  # noqa: F401  (quiets the transformers config warnings)
from .test_model_positions import float64_torch

PATCH = 4


def pixtral_cos_sin(n_rows: int, n_cols: int, head_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """The position embeddings PixtralVisionModel passes to its transformer for one image of that grid."""
    seen = {}
    with float64_torch():
        config = PixtralVisionConfig(
            hidden_size=2 * head_dim,
            num_attention_heads=2,
            intermediate_size=8,
            num_hidden_layers=1,
            image_size=PATCH * max(n_rows, n_cols),
            patch_size=PATCH,
            rope_parameters={"rope_type": "axial", "rope_theta": base},
        )
        model = PixtralVisionModel(config).double()

        def grab(module, args, kwargs):
            seen["cos_sin"] = kwargs["position_embeddings"]

        hook = model.transformer.register_forward_pre_hook(grab, with_kwargs=True)
        pixels = torch.zeros(1, 3, PATCH * n_rows, PATCH * n_cols, dtype=torch.float64)
        model(pixels, image_sizes=[(PATCH * n_rows, PATCH * n_cols)])
        hook.remove()
    cos, sin = seen["cos_sin"]
    return cos.reshape(-1, head_dim).double().numpy(), sin.reshape(-1, head_dim).double().numpy()


GRIDS = {
    "square": (4, 4, 16, 10000.0),
    "wide": (2, 7, 32, 10000.0),
    "tall": (6, 3, 8, 10000.0),
    "Pixtral's base": (5, 5, 64, 1e4),
    "a small base": (3, 4, 16, 100.0),
    "one row": (1, 9, 12, 10000.0),
}


@pytest.mark.parametrize("case", list(GRIDS))
def test_angles_are_pixtrals(case):
    rows, cols, head_dim, base = GRIDS[case]
    angles = posviz.rope_2d_angles(rows, cols, head_dim, base=base)
    assert angles.shape == (rows * cols, head_dim // 2) and angles.dtype == np.float64
    cos, sin = pixtral_cos_sin(rows, cols, head_dim, base)
    full = np.concatenate([angles, angles], axis=1)  # rotate_half pairs dimension i with i + head_dim / 2
    np.testing.assert_allclose(np.cos(full), cos, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.sin(full), sin, rtol=1e-12, atol=1e-12)


def test_each_pair_sees_one_direction():
    """Pairs of axis 0 turn with the row only, pairs of axis 1 with the column only (independent derivation:
    patch p = r * n_cols + c)."""
    rows, cols, head_dim = 3, 5, 16
    angles = posviz.rope_2d_angles(rows, cols, head_dim)
    axes = rope_2d_axes(head_dim)
    r, c = np.divmod(np.arange(rows * cols), cols)
    theta = 10000.0 ** (-np.arange(0, head_dim, 2) / head_dim)
    for k in range(head_dim // 2):
        position = r if axes[k] == 0 else c
        source = theta[2 * k] if axes[k] == 0 else theta[2 * (k - head_dim // 4) + 1]
        np.testing.assert_allclose(angles[:, k], position * source, rtol=1e-15)


BAD = {
    "0 rows": ((0, 4, 16), "n_rows"),
    "a head not a multiple of 4": ((4, 4, 18), "multiple of 4"),
    "a base of 1": ((4, 4, 16, 1.0), "greater than 1"),
    "a huge grid": ((4096, 4, 16), "at most"),
    "a fractional side": ((2.5, 4, 16), "whole number"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_a_sentence(case):
    args, words = BAD[case]
    base = {"base": args[3]} if len(args) == 4 else {}
    with pytest.raises(ValueError, match=words):
        posviz.rope_2d_angles(*args[:3], **base)


def rotated_scores(angles: np.ndarray, n_cols: int, q: np.ndarray, k: np.ndarray, patch: int) -> np.ndarray:
    """q rotated at ``patch`` against k rotated at every patch, as a (rows, columns) grid: a scalar-free derivation
    of RoPE's score, pair i made of dimensions i and i + d/2 (rotate_half), turned by ``angles[p, i]``."""
    pairs = angles.shape[1]

    def rotate(x, a):
        x1, x2 = x[..., :pairs], x[..., pairs:]
        return np.concatenate([x1 * np.cos(a) - x2 * np.sin(a), x2 * np.cos(a) + x1 * np.sin(a)], axis=-1)

    query = rotate(q, angles[patch])
    keys = rotate(np.broadcast_to(k, (angles.shape[0], k.size)), angles)
    return (keys @ query).reshape(-1, n_cols)


SIDE, CENTRE = 9, 4


def offset_score(scores: np.ndarray, dr: int, dc: int) -> float:
    return float(scores[CENTRE + dr, CENTRE + dc])


@pytest.mark.parametrize("seed", range(5))
def test_axial_tells_the_diagonals_apart_for_random_q_and_k(seed):
    """The two diagonal neighbours (1, 1) and (1, -1) get the same axial score only for q = k = ones (the Models
    page's map); with random q and k each pair's score |q_i||k_i| cos(delta + phi_i) is not even in the offset."""
    head_dim = 16
    angles = posviz.rope_2d_angles(SIDE, SIDE, head_dim, base=100.0)
    ones = rotated_scores(angles, SIDE, np.ones(head_dim), np.ones(head_dim), CENTRE * SIDE + CENTRE)
    assert offset_score(ones, 1, 1) == pytest.approx(offset_score(ones, 1, -1), abs=1e-12)
    q, k = np.random.default_rng(seed).standard_normal((2, head_dim))
    scores = rotated_scores(angles, SIDE, q, k, CENTRE * SIDE + CENTRE)
    assert abs(offset_score(scores, 1, 1) - offset_score(scores, 1, -1)) > 1e-3
    assert abs(offset_score(scores, 2, 2) - offset_score(scores, -2, 2)) > 1e-3


def interaction(scores: np.ndarray, dr: int, dc: int) -> float:
    """s(dr, dc) - s(dr, 0) - s(0, dc) + s(0, 0): 0 whenever s is a function of dr plus a function of dc."""
    return (
        offset_score(scores, dr, dc)
        - offset_score(scores, dr, 0)
        - offset_score(scores, 0, dc)
        + offset_score(scores, 0, 0)
    )


@pytest.mark.parametrize("seed", range(5))
def test_axial_scores_add_a_row_part_and_a_column_part_and_mixed_ones_do_not(seed):
    """What axial 2-D RoPE lacks is a non-separable dependence on the offset: each of its pairs turns with dr or
    with dc alone, so s(dr, dc) = f(dr) + g(dc) exactly, for any q and k. RoPE-Mixed's slanted pairs turn with
    dr sin(phi) + dc cos(phi), and the interaction term is far from 0."""
    from posviz.models.views import rope_mixed_angles

    head_dim = 16
    q, k = np.random.default_rng(seed).standard_normal((2, head_dim))
    patch = CENTRE * SIDE + CENTRE
    axial = rotated_scores(posviz.rope_2d_angles(SIDE, SIDE, head_dim, base=100.0), SIDE, q, k, patch)
    mixed = rotated_scores(rope_mixed_angles(SIDE, SIDE, head_dim, base=10.0), SIDE, q, k, patch)
    offsets = [(dr, dc) for dr in range(-CENTRE, CENTRE + 1) for dc in range(-CENTRE, CENTRE + 1)]
    scale = np.abs(q) @ np.abs(k)
    assert max(abs(interaction(axial, dr, dc)) for dr, dc in offsets) < 1e-12 * scale
    assert max(abs(interaction(mixed, dr, dc)) for dr, dc in offsets) > 0.05 * scale
    assert abs(interaction(mixed, 1, 1)) > 1e-3 and abs(interaction(mixed, 1, -1)) > 1e-3
