"""What the Models page shows of a model's positions, computed here: the frequencies a layer was pre-trained with and
how far each pair turned within the pre-training context, the M-RoPE score of two patches that move apart along one
axis, and 2-D RoPE with mixed directions (RoPE-Mixed) beside the axial kind, with the similarity of one patch to the
others.

RoPE-Mixed (Heo et al. 2024, "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298, section 3.2)
turns pair t of a patch at (row r, column c) by

    angle_t = r * theta_t^y + c * theta_t^x,

so each pair turns along a direction of the grid, (theta_t^y, theta_t^x) = |theta_t| (sin phi_t, cos phi_t), not
along the rows or the columns alone as in axial 2-D RoPE. An axial pair turns with dr or with dc alone, so for any
q and k the axial score is f(dr) + g(dc), a function of the row offset plus a function of the column offset; a slanted
pair puts both offsets into one angle, and RoPE-Mixed's score does not split into such a sum. (With q = k = ones,
as ``rope_2d_similarity`` takes them, the axial score is also the same at (dr, dc) and (dr, -dc); with other q and k
it is not.)

The paper learns both frequencies of every pair: its code starts each head from one random angle alpha and its
perpendicular, frequency vectors |theta_t| (cos alpha, sin alpha) and |theta_t| (cos(alpha + pi/2),
sin(alpha + pi/2)) with magnitudes |theta_t| = 10^(-4t / d), t = 0 .. d/4 - 1, and trains them. Here they are
fixed, posviz's illustration rather than the paper's: the magnitudes are the 1-D frequencies of the head,
|theta_t| = base^(-2t / d), t = 0 .. d/2 - 1, as axial 2-D RoPE uses them, and the directions are evenly spread over
half a turn, phi_t = pi/2 - pi (t mod D) / D, D = ``n_directions`` (with D = 8: every 22.5 degrees, the diagonals
included). With D = 2 the even pairs turn along the rows and the odd ones along the columns: exactly axial 2-D RoPE
(Pixtral), its pairs in another order.
"""

from __future__ import annotations

import math

import numpy as np

from ..base.checks import number, whole
from ..encodings.rope import rope_inv_freq
from .positions import LayerPositions
from .rope2d import MAX_GRID_SIDE


def plain_inv_freq(layer: LayerPositions) -> np.ndarray:
    """The frequencies a RoPE layer turns with before any scaling: theta_i = rope_theta^(-2i / rotary_dim), as many
    as ``layer.inv_freq`` (for the ``proportional`` type, whose rotary_dim is the whole head, the same formula over
    head_dim). For a layer of rope type "default" these are its ``inv_freq``."""
    if layer.kind != "rope" or layer.inv_freq is None or layer.rope_theta is None or layer.rotary_dim is None:
        raise ValueError(f"layer {layer.index} does not use RoPE ({layer.kind}), so it has no frequencies")
    inv, _ = rope_inv_freq(int(layer.rotary_dim), base=float(layer.rope_theta))
    return inv[: layer.inv_freq.size]


def turn_share(inv_freq, length: int) -> np.ndarray:
    """For each pair, the share of a full turn its angle m * theta_i covers while m runs over a context of ``length``
    positions (0 .. length - 1): min(1, (length - 1) theta_i / (2 pi)). A pair below 1 never turned all the way
    round during pre-training: at longer contexts it meets angles it has never seen."""
    length = whole("length", length, maximum=1 << 40)
    inv = np.asarray(inv_freq, dtype=np.float64)
    return np.minimum(1.0, (length - 1) * inv / (2 * math.pi))


def mrope_axis_score(inv_freq, axes, axis: int, distances) -> np.ndarray:
    """The RoPE score of a constant query and key (q = k = ones) of two image tokens ``distances`` apart along one
    axis (0 time, 1 height, 2 width) and at the same place along the others, with M-RoPE's axis of each pair
    ``axes`` (``mrope_axes``): only the pairs of that axis turn, so

        S(delta) = (1 / n) sum_j cos(delta * theta_j * [axes_j = axis]),   n = len(inv_freq),

    1 at delta = 0. Float64 array, one score per distance."""
    inv = np.asarray(inv_freq, dtype=np.float64)
    axes = np.asarray(axes)
    if inv.ndim != 1 or axes.shape != inv.shape:
        raise ValueError(f"axes must give one axis per frequency; got {axes.shape} axes for {inv.shape} frequencies")
    if axis not in (0, 1, 2):
        raise ValueError(f"axis must be 0 (time), 1 (height) or 2 (width); got {axis!r}")
    delta = np.asarray(distances, dtype=np.float64)
    turns = np.where(axes == axis, inv, 0.0)
    return np.cos(delta[:, None] * turns[None, :]).mean(axis=1)


def rope_mixed_angles(
    n_rows: int, n_cols: int, head_dim: int, *, base: float = 10000.0, n_directions: int = 8
) -> np.ndarray:
    """The angle of every pair for every patch of an ``n_rows`` x ``n_cols`` grid (row-major) in the form of RoPE-Mixed
    (Heo et al. 2024, arXiv:2403.13298) with fixed, evenly spread directions, posviz's illustration of the learned
    ones (module docstring): float64
    (n_rows * n_cols, head_dim / 2),

        angle[p, t] = base^(-2t / d) (r_p sin phi_t + c_p cos phi_t),   phi_t = pi/2 - pi (t mod D) / D,

    r_p, c_p the row and column of patch p, D = ``n_directions`` (at least 2)."""
    rows = whole("n_rows", n_rows, maximum=MAX_GRID_SIDE)
    cols = whole("n_cols", n_cols, maximum=MAX_GRID_SIDE)
    head_dim = whole("head_dim", head_dim, minimum=2, maximum=4096)
    if head_dim % 2:
        raise ValueError(f"RoPE turns pairs of dimensions, so head_dim must be even; got {head_dim}")
    directions = whole("n_directions", n_directions, minimum=2, maximum=360)
    base = number("base", base)
    if base <= 1:
        raise ValueError(f"the base of RoPE must be greater than 1, got {base}")
    t = np.arange(head_dim // 2)
    magnitude, _ = rope_inv_freq(head_dim, base=base)
    phi = math.pi / 2 - math.pi * (t % directions) / directions
    r, c = np.meshgrid(np.arange(rows, dtype=np.float64), np.arange(cols, dtype=np.float64), indexing="ij")
    return r.reshape(-1, 1) * (magnitude * np.sin(phi)) + c.reshape(-1, 1) * (magnitude * np.cos(phi))


def rope_2d_similarity(angles, patch: int) -> np.ndarray:
    """The score of patch ``patch``'s rotated query with every patch's rotated key, q = k = ones, divided by the
    number of pairs: S_p = mean_i cos(angle[patch, i] - angle[p, i]) (1 for the patch itself). ``angles`` is
    (patches, pairs), e.g. ``rope_2d_angles`` or ``rope_mixed_angles``."""
    table = np.asarray(angles, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ValueError(f"angles must be a (patches, pairs) table; got shape {table.shape}")
    patch = whole("patch", patch, minimum=0, maximum=table.shape[0] - 1)
    return np.cos(table[patch][None, :] - table).mean(axis=1)


def steps_inside(shape: tuple[int, int], start: tuple[int, int], step: tuple[int, int]) -> int:
    """How many points ``start + k * step`` (k = 0, 1, 2, ...) lie inside a grid of ``shape`` = (rows, columns) before
    the line leaves it, the start included: along each axis that the step moves on, the steps left before the edge,

        n = min over axes with step_a != 0 of  (size_a - start_a - 1) // step_a + 1  (step_a > 0)
                                               start_a // (-step_a) + 1               (step_a < 0).

    A start outside the grid or a step of zero on both axes (a line that never leaves) is refused."""
    rows = whole("rows", shape[0], maximum=1 << 30)
    cols = whole("columns", shape[1], maximum=1 << 30)
    row, col = start
    if not (0 <= row < rows and 0 <= col < cols):
        raise ValueError(f"the start ({row}, {col}) is not on the {rows} x {cols} grid")
    if step[0] == 0 and step[1] == 0:
        raise ValueError("a step of (0, 0) never leaves the grid: give a direction")
    counts = [
        (size - at - 1) // move + 1 if move > 0 else at // -move + 1
        for size, at, move in ((rows, row, step[0]), (cols, col, step[1]))
        if move != 0
    ]
    return int(min(counts))


def line_profile(grid, start: tuple[int, int], step: tuple[int, int], length: int) -> np.ndarray:
    """The values of the 2-D ``grid`` along a straight line: at ``start + k * step`` for k = 0 .. ``length`` - 1, NaN
    once the line has left the grid (e.g. a patch's similarity to the patches on its diagonal). Float64 array of
    ``length`` values."""
    values = np.asarray(grid, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"a line profile needs a 2-D grid, got shape {values.shape}")
    k = np.arange(whole("length", length, minimum=0, maximum=1 << 30))
    rows, cols = start[0] + k * step[0], start[1] + k * step[1]
    inside = (rows >= 0) & (rows < values.shape[0]) & (cols >= 0) & (cols < values.shape[1])
    out = np.full(k.size, np.nan)
    out[inside] = values[rows[inside], cols[inside]]
    return out


__all__ = [
    "line_profile",
    "mrope_axis_score",
    "plain_inv_freq",
    "rope_2d_similarity",
    "rope_mixed_angles",
    "steps_inside",
    "turn_share",
]
