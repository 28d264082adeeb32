"""2-D RoPE of vision encoders: each patch of an image turns its pairs by its row and by its column.

Axial 2-D RoPE (Pixtral, Mistral AI 2024; Heo et al. 2024, "Rotary Position Embedding for Vision Transformer",
arXiv:2403.13298, "RoPE-Axial") starts from the 1-D frequencies of the whole head,

    theta_i = base^(-2i / d),   i = 0 .. d/2 - 1,

gives the even-indexed ones to the row and the odd-indexed ones to the column, and lays the pairs out as

    angle[p, k]       = r_p * theta_{2k}        k = 0 .. d/4 - 1   (row r_p of patch p)
    angle[p, d/4 + k] = c_p * theta_{2k+1}                          (column c_p)

with pair i made of dimensions i and i + d/2 (transformers' ``PixtralVisionRotaryEmbedding`` and
``rotate_half``). A pair thus only ever sees one direction, so for any query and key the score between two
patches is f(dr) + g(dc), a function of the row offset plus a function of the column offset, never a non-separable
mix of the two (the two diagonal offsets (1, 1) and (1, -1) score alike for q = k = ones, but not for q and k in
general). Heo et al.'s RoPE-Mixed instead turns pair i by r theta_i^r + c theta_i^c with learned
frequencies for both axes (posviz's ``views.rope_mixed_angles`` fixes them, as an illustration).
"""

from __future__ import annotations

import numpy as np

from ..base.checks import number, whole

#: The largest grid ``rope_2d_angles`` builds: 256 x 256 patches.
MAX_GRID_SIDE = 256


def rope_2d_angles(n_rows: int, n_cols: int, head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    """The angle of every rotary pair for every patch of an ``n_rows`` x ``n_cols`` grid, patches in row-major
    order: float64 array (n_rows * n_cols, head_dim / 2), as in the module docstring. Equal to transformers 5.24's
    Pixtral 2-D rotary embedding for that grid (positions built as ``PixtralVisionModel`` builds them).
    head_dim must be a multiple of 4 (each axis gets head_dim / 4 pairs)."""
    rows = whole("n_rows", n_rows, maximum=MAX_GRID_SIDE)
    cols = whole("n_cols", n_cols, maximum=MAX_GRID_SIDE)
    head_dim = whole("head_dim", head_dim, minimum=4, maximum=4096)
    if head_dim % 4:
        raise ValueError(
            f"2-D RoPE gives head_dim / 4 pairs to the rows and as many to the columns, so head_dim must be a "
            f"multiple of 4; got {head_dim}"
        )
    base = number("base", base)
    if base <= 1:
        raise ValueError(f"the base of RoPE must be greater than 1, got {base}")
    theta = 1.0 / base ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    r, c = np.meshgrid(np.arange(rows, dtype=np.float64), np.arange(cols, dtype=np.float64), indexing="ij")
    return np.concatenate([r.reshape(-1, 1) * theta[0::2], c.reshape(-1, 1) * theta[1::2]], axis=1)


def rope_2d_axes(head_dim: int) -> np.ndarray:
    """For each pair of ``rope_2d_angles``, the direction that turns it: 0 row, 1 column."""
    head_dim = whole("head_dim", head_dim, minimum=4, maximum=4096)
    if head_dim % 4:
        raise ValueError(f"head_dim must be a multiple of 4 for 2-D RoPE; got {head_dim}")
    return (np.arange(head_dim // 2) >= head_dim // 4).astype(np.int64)


__all__ = ["MAX_GRID_SIDE", "rope_2d_angles", "rope_2d_axes"]
