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
