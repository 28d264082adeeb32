"""The Sinusoidal page's views without building the whole table: sampled rows, strided profiles and closed forms,
each equal to what the same analysis of the full table gives (``tests/core/test_sinusoidal_lesson.py``), so the
page stays fast at 32,768 positions x 4,096 dimensions."""

from __future__ import annotations

import numpy as np

from .._parallel import on_every_core
from ..analysis import (
    cosine_similarity_matrix,
    evenly_spaced,
    lag_spread_of_rows,
    nested_ridge_probe,
    offset_profile,
    outside_excess,
    project,
    row_norms,
    spectrum_dims,
    spectrum_of_columns,
    stride_for,
)
from ..base import checks
from ..base.sampling import block_edges
from ..encodings.learned import sinusoidal_column_frequencies
from ..encodings.sinusoidal import (
    LAYOUTS,
    fill_rows,
    pair_columns,
    sinusoidal_frequencies,
    sinusoidal_rows,
    sinusoidal_wavelengths,
)


def slow_pairs(d_model: int, n_positions: int, *, base: float = 10000.0) -> np.ndarray:
    """Which pairs turn less than once over a context of n positions: lambda_k > n.

    Such a pair moves by less than a full circle between the first and the last position, so it can say
    "early or late in the text" but hardly tells neighbours apart.
    """
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    return sinusoidal_wavelengths(d_model, base=base) > n


def shift_residual(table, k: int, *, base: float = 10000.0, layout: str = "interleaved", chunk: int = 1024) -> float:
    """How far the shift matrix misses: max over p of ||PE(p + k) - M_k PE(p)||_2, for p = 0 .. n - k - 1.

    M_k is ``shift_matrix(d, k, base=base, layout=layout)``. It is block diagonal, one 2 x 2 rotation per pair,
    so M_k PE(p) is applied pair by pair with the same entries (sin' = cos(k w) sin + sin(k w) cos,
    cos' = -sin(k w) sin + cos(k w) cos) rather than as a d x d product, in chunks of rows that bound the memory.
    For a float64 sinusoidal table the residual is rounding noise, ~1e-12 (the angle-addition identity is
    exact); for any other table it is large.
    """
    table = checks.finite_table(table)
    n, d = table.shape
    k = _shift_checks(n, d, k, layout)
    worst = 0.0
    for start in range(0, n - k, chunk):  # chunks of rows bound the memory, not a per-position loop
        stop = min(start + chunk, n - k)
        worst = max(worst, _shift_miss(table[start:stop], table[start + k : stop + k], k, base, layout))
    return worst


def _shift_checks(n: int, d: int, k, layout: str) -> int:
    k = checks.positive_int("k", k)
    checks.choice("layout", layout, LAYOUTS)
    if d % 2:
        raise ValueError(f"the shift matrix needs sin/cos pairs, so d_model must be even; got {d}")
    if k >= n:
        raise ValueError(f"a shift by k = {k:,} needs more than {k:,} positions; the table has {n:,}")
    return k


def _shift_miss(now: np.ndarray, later: np.ndarray, k: int, base: float, layout: str) -> float:
    """max over rows of ||later - M_k now||_2, M_k applied pair by pair."""
    d = now.shape[1]
    theta = k * sinusoidal_frequencies(d, base=base)
    cos_k, sin_k = np.cos(theta), np.sin(theta)
    sin_cols, cos_cols = pair_columns(layout, d)
    miss_sin = later[:, sin_cols] - (cos_k * now[:, sin_cols] + sin_k * now[:, cos_cols])
    miss_cos = later[:, cos_cols] - (cos_k * now[:, cos_cols] - sin_k * now[:, sin_cols])
    return float(np.sqrt((miss_sin**2 + miss_cos**2).sum(axis=1).max()))


def sampled_shift_residual(
    n_positions: int,
    d_model: int,
    k: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    max_positions: int = 4096,
) -> tuple[float, int]:
    """:func:`shift_residual` of ``sinusoidal(n, d)`` over at most ``max_positions`` evenly spaced p out of
    0 .. n - k - 1, from the rows PE(p) and PE(p + k) alone: ``(residual, positions_used)``. Equal to the full
    residual when n - k <= max_positions."""
    n, d = checks.table_size(n_positions, d_model)
    k = _shift_checks(n, d, k, layout)

    positions = evenly_spaced(n - k, max_positions).astype(np.float64)
    omega = sinusoidal_frequencies(d, base=base)

    def miss(start: int) -> float:  # chunks of rows on every core: bounded memory, not a per-row loop
        chunk = positions[start : start + 256]
        now, later = np.empty((chunk.size, d)), np.empty((chunk.size, d))
        fill_rows(now, chunk, omega, layout)
        fill_rows(later, chunk + k, omega, layout)
        return _shift_miss(now, later, k, base, layout)

    return max(on_every_core(miss, range(0, positions.size, 256))), positions.size


def _strided_rows(n_positions: int, d_model: int, max_positions: int, base: float, layout: str):
    """The stride s = ceil(n / max_positions) and the rows p = 0, s, 2s, ... of ``sinusoidal(n, d)``."""
    n, d = checks.table_size(n_positions, d_model)
    stride = stride_for(n, max_positions)
    return stride, sinusoidal_rows(np.arange(0, n, stride), d, base=base, layout=layout)


def sinusoidal_offset_profile(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    max_positions: int = 4096,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`strided_offset_profile` of ``sinusoidal(n, d, base=base, layout=layout)`` without building the table.

    For an even d it is closed form: every pair of positions k apart has PE(i) . PE(i + k) = sum_j (sin(i w_j)
    sin((i + k) w_j) + cos(i w_j) cos((i + k) w_j)) = sum_j cos(k w_j), whatever i, and every row has norm^2
    d / 2, so mean_dot[k] = sum_j cos(k w_j) and mean_cosine[k] = mean_dot[k] / (d / 2). An odd d (its unpaired
    last sin column depends on i) takes the FFT profile of the strided rows."""

    n, d = checks.table_size(n_positions, d_model)
    checks.choice("layout", layout, LAYOUTS)
    if d % 2:
        stride, rows = _strided_rows(n, d, max_positions, base, layout)
        profile = offset_profile(rows)
        return profile.offsets * stride, profile.mean_dot, profile.mean_cosine
    stride = stride_for(n, max_positions)
    offsets = np.arange(0, n, stride)
    omega = sinusoidal_frequencies(d, base=base)

    def dots(start: int) -> np.ndarray:
        return np.cos(offsets[start : start + 256, None].astype(np.float64) * omega[None, :]).sum(axis=1)

    mean_dot = np.concatenate(on_every_core(dots, range(0, offsets.size, 256)))
    return offsets, mean_dot, np.clip(mean_dot / (d // 2), -1.0, 1.0)


def sinusoidal_lag_spread(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    max_positions: int = 1024,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`lag_spread` of ``sinusoidal(n, d, base=base, layout=layout)``, computed from the strided rows alone
    (the same numbers, without building the table)."""
    stride, rows = _strided_rows(n_positions, d_model, max_positions, base, layout)
    return lag_spread_of_rows(rows, stride)


def origin_similarity(
    n_positions: int, d_model: int, bases: tuple[float, ...], *, max_points: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """cos(PE(0), PE(k)) for offsets k = 1 .. n - 1 (at most ``max_points``, log-spaced) and each base.

    Returns ``(offsets, similarity)`` with similarity of shape (len(bases), len(offsets)). For an even d it is
    (2 / d) sum_i cos(k omega_i): a small base makes it fall and oscillate within a few positions, a large base
    keeps it near 1 far out.
    """
    n, d = checks.table_size(n_positions, d_model)
    if n < 2:
        raise ValueError(f"similarity to position 0 needs at least 2 positions; got {n}")
    limit = checks.positive_int("max_points", max_points)
    offsets = np.unique(np.round(np.geomspace(1, n - 1, min(limit, n - 1))).astype(np.int64))
    origin = sinusoidal_rows(np.zeros(1, dtype=np.int64), d)[0]  # PE(0) = (0, 1, 0, 1, ...) whatever the base
    similarity = np.empty((len(bases), offsets.size))
    for row, base in enumerate(bases):  # one row per base (a handful), vectorised over offsets and dimensions
        rows = sinusoidal_rows(offsets, d, base=base)
        similarity[row] = rows @ origin / (np.linalg.norm(rows, axis=1) * np.linalg.norm(origin))
    return offsets, similarity


def sinusoidal_beyond_training(
    n_positions: int,
    d_model: int,
    train_len: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    margin: float = 0.01,
    max_positions: int = 4096,
    chunk: int = 1024,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`beyond_training` of ``sinusoidal(n, d, base=base, layout=layout)`` without building the table:
    ``(positions, share, excess)``.

    The training range [min, max] of every column is exact, scanned over all rows p < train_len in chunks; the
    share is evaluated at at most ``max_positions`` evenly spaced positions, and the excess is the largest
    distance outside the range over those of them at or past ``train_len``. With n <= max_positions every
    position is evaluated and the numbers equal ``beyond_training``'s.
    """

    n, d = checks.table_size(n_positions, d_model)
    train_len = checks.positive_int("train_len", train_len)
    positions = evenly_spaced(n, max_positions)
    share, excess = np.zeros(positions.size), np.zeros(d)
    if train_len >= n:  # no position past the training length: nothing is outside
        return positions, share, excess
    low, high = np.full(d, np.inf), np.full(d, -np.inf)
    for start in range(0, train_len, chunk):  # chunks of rows bound the memory, not a per-position loop
        seen = sinusoidal_rows(np.arange(start, min(start + chunk, train_len)), d, base=base, layout=layout)
        np.minimum(low, seen.min(axis=0), out=low)
        np.maximum(high, seen.max(axis=0), out=high)
    for start in range(0, positions.size, chunk):
        where = positions[start : start + chunk]
        rows = sinusoidal_rows(where, d, base=base, layout=layout)
        share[start : start + where.size] = outside_excess(
            rows, low, high, int(np.searchsorted(where, train_len)), margin, excess
        )
    return positions, share, excess


def _sampled_rows(n_positions: int, d_model: int, max_positions: int, base: float, layout: str):
    """At most ``max_positions`` evenly spaced positions of ``sinusoidal(n, d)`` and their rows."""

    n, d = checks.table_size(n_positions, d_model)
    positions = evenly_spaced(n, max_positions)
    return positions, sinusoidal_rows(positions, d, base=base, layout=layout)


def sinusoidal_projection(
    n_positions: int,
    d_model: int,
    method: str = "pca",
    max_positions: int = 2048,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    seed: int = 0,
):
    """:func:`project_positions` of ``sinusoidal(n, d, base=base, layout=layout)`` from the sampled rows alone
    (the same numbers, without building the table): ``(positions, coords)``."""

    positions, rows = _sampled_rows(n_positions, d_model, max_positions, base, layout)
    return positions, project(rows, method=method, seed=seed)


def sinusoidal_similarity(
    n_positions: int, d_model: int, max_positions: int = 1024, *, base: float = 10000.0, layout: str = "interleaved"
) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarity S[i, j] = cos(PE(p_i), PE(p_j)) of at most ``max_positions`` evenly spaced positions p of
    ``sinusoidal(n, d, base=base, layout=layout)``, without building the table: ``(positions, S)``.

    For an even d every row has norm sqrt(d/2) and PE(p) . PE(q) = sum_k cos((p - q) w_k), so
    S[i, j] = c(|p_i - p_j|) with c(l) = sum_k cos(l w_k) / (d/2), evaluated only at the lags that occur (a few per
    diagonal of evenly spaced positions) instead of a matrix product of the rows; both layouts give the same S. For
    an odd d (an unpaired sin column) S is computed from the rows."""

    n, d = checks.table_size(n_positions, d_model)
    checks.choice("layout", layout, LAYOUTS)
    if d % 2:
        positions, rows = _sampled_rows(n, d, max_positions, base, layout)
        return positions, cosine_similarity_matrix(rows)
    positions = evenly_spaced(n, max_positions)
    lags = np.subtract.outer(positions.astype(np.int32), positions.astype(np.int32))  # n <= 32,768
    np.abs(lags, out=lags)
    occurring = np.zeros(n, dtype=bool)
    occurring[lags.ravel()] = True  # about two lags per diagonal: the positions are a rounded even spacing
    at = np.flatnonzero(occurring)
    profile = np.zeros(n)
    profile[at] = np.cos(at[:, None] * sinusoidal_frequencies(d, base=base)[None, :]).sum(axis=1) / (d // 2)
    return positions, np.clip(profile[lags], -1.0, 1.0)


def sinusoidal_row_norms(
    n_positions: int, d_model: int, *, base: float = 10000.0, layout: str = "interleaved", max_positions: int = 4096
) -> tuple[np.ndarray, np.ndarray]:
    """The measured norm ||PE(p)|| (``analysis.row_norms``) of at most ``max_positions`` evenly spaced rows of
    ``sinusoidal(n, d, base=base, layout=layout)``, from those rows alone: ``(positions, norms)``."""

    positions, rows = _sampled_rows(n_positions, d_model, max_positions, base, layout)
    return positions, row_norms(rows)


def sinusoidal_block_means(
    n_positions: int, d_model: int, *, base: float = 10000.0, layout: str = "interleaved", max_side: int = 1024
) -> np.ndarray:
    """Block means of ``sinusoidal(n, d, base=base, layout=layout)`` over at most ``max_side`` near-equal blocks
    per axis (the blocks of ``figures.block_mean``), without building the table.

    A block of rows a .. b of a column with frequency w sums in closed form (the Dirichlet kernel, from
    telescoping 2 sin(w / 2) sin(p w) = cos((p - 1/2) w) - cos((p + 1/2) w)):

        sum_{p=a}^{b} sin(p w) = sin((a + b) w / 2) sin((b - a + 1) w / 2) / sin(w / 2),

    and likewise for cos with cos((a + b) w / 2); sin(w / 2) > 0 since 0 < w <= 1. The row-block means are
    then averaged over blocks of columns. Exact up to rounding, O(blocks x d) instead of O(n x d).
    """

    n, d = checks.table_size(n_positions, d_model)
    checks.choice("layout", layout, LAYOUTS)
    max_side = checks.positive_int("max_side", max_side)
    omega = sinusoidal_frequencies(d, base=base)
    edges = block_edges(n, max_side)
    first, last = edges[:-1], edges[1:] - 1
    half = omega / 2.0
    centre = (first + last)[:, None] * half[None, :]
    lengths, length_of = np.unique(last - first + 1, return_inverse=True)  # near-equal blocks: one or two lengths
    kernel = (np.sin(lengths[:, None] * half[None, :]) / (np.sin(half) * lengths[:, None]))[length_of]
    rows = np.empty((first.size, d))
    sin_cols, cos_cols = pair_columns(layout, d)
    rows[:, sin_cols] = np.sin(centre) * kernel
    rows[:, cos_cols] = (np.cos(centre) * kernel)[:, : d // 2]
    if d <= max_side:  # one block per column: the row-block means are the block means
        return rows
    columns = block_edges(d, max_side)
    return np.add.reduceat(rows, columns[:-1], axis=1) / np.diff(columns)


def sinusoidal_row_norm(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Closed-form norm of every row: ||PE(p)|| = sqrt(floor(d / 2) + (d mod 2) sin^2(p omega_last)).

    Each sin/cos pair adds sin^2 + cos^2 = 1, so an even d gives sqrt(d / 2) at every position (16 for d = 512,
    not sqrt(512)); an odd d adds the square of its unpaired last sin column.
    """
    n, d = checks.table_size(n_positions, d_model)
    squared = np.full(n, float(d // 2))
    if d % 2:
        squared += np.sin(np.arange(n) * sinusoidal_frequencies(d, base=base)[-1]) ** 2
    return np.sqrt(squared)


def sinusoidal_position_probe(n_positions: int, d_model: int, limit: int = 1024, *, folds: int = 5, seed: int = 0):
    """:func:`sampled_position_probe` of the sinusoidal table ``sinusoidal(n, d)`` (= ``learned.sin_init(n, d)``)
    without building it: only the rows of the at most ``limit`` evenly spaced positions are computed
    (``sinusoidal_rows``, entry for entry the table's), so a 32,768 x 4,096 table costs 1,024 rows, not 1 GiB."""
    n, d = checks.table_size(n_positions, d_model)
    positions = evenly_spaced(n, limit)
    return nested_ridge_probe(sinusoidal_rows(positions, d), positions.astype(np.float64), folds, seed)


def sinusoidal_spectrum(n_positions: int, d_model: int, *, max_dims: int = 512):
    """``analysis.position_spectrum(sin_init(n_positions, d_model), max_dims=max_dims)`` built from the analysed
    columns only, a chunk at a time: column 2k is sin(p omega_k) and 2k + 1 is cos(p omega_k), so the reference
    spectrum of a 32,768 x 4,096 table costs its 256 analysed columns, not the whole table."""
    n, d = checks.table_size(n_positions, d_model)
    dims = spectrum_dims(n, d, max_dims)
    omega, even = sinusoidal_column_frequencies(d)[dims], dims % 2 == 0

    def columns(start: int, stop: int) -> np.ndarray:
        angles = np.arange(n, dtype=np.float64)[:, None] * omega[None, start:stop]
        chosen = even[start:stop]
        angles[:, chosen] = np.sin(angles[:, chosen])
        angles[:, ~chosen] = np.cos(angles[:, ~chosen])
        return angles

    return spectrum_of_columns(columns, n, dims)
