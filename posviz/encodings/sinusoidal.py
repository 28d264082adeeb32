"""Fixed sinusoidal position encodings (Vaswani et al., 2017, "Attention Is All You Need", section 3.5).

    PE[p, 2k]     = sin(p / base^(2k / d))
    PE[p, 2k + 1] = cos(p / base^(2k / d))

Each pair of columns (2k, 2k + 1) is a point on a circle turning with angular speed
omega_k = base^(-2k / d) per position, so PE(p + k) is a rotation of PE(p) that depends on k only.
"""

from __future__ import annotations

import numpy as np

from .. import number_formats
from .._parallel import on_every_core
from . import _checks

LAYOUTS = ("interleaved", "halves")


def sinusoidal_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Angular frequency of each sin/cos pair: omega_k = base^(-2k / d_model) for k = 0 .. ceil(d/2) - 1.

    With an odd ``d_model`` the last frequency drives a sin column that has no cos partner.
    Source: Vaswani et al. (2017), section 3.5.
    """
    d = _checks.positive_int("d_model", d_model, maximum=_checks.MAX_DIM)
    base = _checks.positive_float("base", base, minimum_exclusive=1.0)
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


#: Cells per block of rows when a table is built or scanned in pieces (4 MiB of float64).
_CHUNK_CELLS = 1 << 19


def sinusoidal(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype=np.float64,
) -> np.ndarray:
    """The sinusoidal position table, shape (n_positions, d_model).

    Formula (Vaswani et al., 2017, section 3.5), for positions p = 0 .. n_positions - 1 and k = 0 .. d/2:

        PE[p, 2k] = sin(p * omega_k),   PE[p, 2k + 1] = cos(p * omega_k),   omega_k = base^(-2k / d_model)

    ``layout="interleaved"`` is the paper's order (sin, cos, sin, cos, ...), as in DistilBERT.
    ``layout="halves"`` puts every sin column first and then every cos column, as RoFormer and Marian do.
    An odd ``d_model`` works: the last frequency has only its sin column.

    ``dtype`` (float16, float32 or float64) is the precision in which the angles p * omega_k and their sines
    are computed, so the table shows what a model computing in that precision really gets: p, omega_k and their
    product are rounded to it, and each sine is rounded once (``number_formats``, the same bits on every CPU).
    """
    n, d = _checks.table_size(n_positions, d_model)
    _checks.choice("layout", layout, LAYOUTS)
    dtype = np.dtype(dtype)
    if dtype.name not in ("float64", *number_formats.FORMATS) or dtype.name == "bfloat16":
        raise ValueError(f"dtype must be float16, float32 or float64; got {dtype}")
    omega = sinusoidal_frequencies(d, base=base)
    table = np.empty((n, d), dtype=dtype)
    rows = max(1, _CHUNK_CELLS // d)

    def fill(start: int) -> None:
        block = table[start : start + rows]
        _fill_rows(block, np.arange(start, start + len(block), dtype=np.float64), omega, layout)

    on_every_core(fill, range(0, n, rows))  # blocks of rows bound the angles' temporary; each cell is the same
    return table


def _fill_rows(block: np.ndarray, positions: np.ndarray, omega: np.ndarray, layout: str) -> None:
    """Write PE(p) for each of ``positions`` into the rows of ``block``, in the column order of ``layout``, computed
    in the precision of ``block``: float64 directly, float16 and float32 through ``number_formats``."""
    sin_cols, cos_cols = _pair_columns(layout, block.shape[1])
    n_cos = block.shape[1] // 2
    if block.dtype == np.float64:
        angles = positions[:, None] * omega[None, :]
        np.sin(angles, out=block[:, sin_cols])
        np.cos(angles[:, :n_cos], out=block[:, cos_cols])
        return
    fmt = block.dtype.name
    sin, cos = number_formats.sin_cos(number_formats.multiply(positions[:, None], omega[None, :], fmt), fmt)
    block[:, sin_cols] = sin
    block[:, cos_cols] = cos[:, :n_cos]


def sinusoidal_rows(positions, d_model: int, *, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """The rows PE(p) of :func:`sinusoidal` at the given whole-number positions, shape (len(positions), d_model).

    Entry for entry equal to ``sinusoidal(n, d_model, base=base, layout=layout)[positions]`` (the same float64
    products p * omega_k and the same sines), without building the n x d table: the rows of a few thousand
    positions of a 32,768 x 4,096 table cost a few thousand rows, not 1 GiB.
    """
    _checks.choice("layout", layout, LAYOUTS)
    omega = sinusoidal_frequencies(d_model, base=base)
    pos = np.asarray(positions)
    if pos.ndim != 1 or (pos.size and (pos.dtype.kind not in "iu" or pos.min() < 0)):
        raise ValueError(f"positions must be a 1-D array of whole numbers >= 0; got {pos!r}")
    rows = np.empty((pos.size, int(d_model)))
    step = max(1, _CHUNK_CELLS // rows.shape[1])

    def fill(start: int) -> None:
        _fill_rows(rows[start : start + step], pos[start : start + step].astype(np.float64), omega, layout)

    on_every_core(fill, range(0, pos.size, step))
    return rows


def shift_matrix(d_model: int, k: float, *, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """The matrix M_k with PE(p + k) = M_k @ PE(p) for every p, in the column order of ``layout``.

    For each pair (2i, 2i + 1) with frequency omega_i, M_k holds the 2 x 2 block
    [[cos(k omega_i), sin(k omega_i)], [-sin(k omega_i), cos(k omega_i)]], from the angle-addition formulas
    sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b. It depends on k only,
    which is why a linear layer can learn to attend by relative offset. With an odd d_model the unpaired last
    sin column has no partner to rotate with, so M_k is only defined for even d_model. With
    ``layout="halves"`` the same matrix has its rows and columns reordered by ``layout_permutation``.
    """
    d = _checks.positive_int("d_model", d_model, maximum=_checks.MAX_DIM)
    _checks.choice("layout", layout, LAYOUTS)
    if d % 2:
        raise ValueError(f"the shift matrix needs sin/cos pairs, so d_model must be even; got {d}")
    theta = float(k) * sinusoidal_frequencies(d, base=base)
    c, s = np.cos(theta), np.sin(theta)
    m = np.zeros((d, d))
    i = np.arange(0, d, 2)
    m[i, i], m[i, i + 1], m[i + 1, i], m[i + 1, i + 1] = c, s, -s, c
    if layout == "halves":
        order = layout_permutation(d)
        return m[np.ix_(order, order)]
    return m


def layout_permutation(d_model: int) -> np.ndarray:
    """The column order that turns the interleaved table into the halves table: halves = interleaved[:, order].

    order = (0, 2, 4, ..., 1, 3, 5, ...): every sin column first, then every cos column (RoFormer, Marian).
    """
    d = _checks.positive_int("d_model", d_model, maximum=_checks.MAX_DIM)
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def sinusoidal_wavelengths(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Wavelength of each sin/cos pair in positions: lambda_k = 2 pi / omega_k = 2 pi base^(2k / d).

    They grow geometrically from 2 pi (pair 0) towards 2 pi base (Vaswani et al., 2017, section 3.5).
    """
    return 2.0 * np.pi / sinusoidal_frequencies(d_model, base=base)


def slow_pairs(d_model: int, n_positions: int, *, base: float = 10000.0) -> np.ndarray:
    """Which pairs turn less than once over a context of n positions: lambda_k > n.

    Such a pair moves by less than a full circle between the first and the last position, so it can say
    "early or late in the text" but hardly tells neighbours apart.
    """
    n = _checks.positive_int("n_positions", n_positions, maximum=_checks.MAX_POSITIONS)
    return sinusoidal_wavelengths(d_model, base=base) > n


def _pair_columns(layout: str, d: int) -> tuple[slice, slice]:
    """The sin columns and the cos columns of a table of width d, pair i being (sin[i], cos[i]); an odd d ends
    with an unpaired sin column."""
    n_sin = (d + 1) // 2
    return (slice(0, None, 2), slice(1, None, 2)) if layout == "interleaved" else (slice(0, n_sin), slice(n_sin, d))


def shift_residual(table, k: int, *, base: float = 10000.0, layout: str = "interleaved", chunk: int = 1024) -> float:
    """How far the shift matrix misses: max over p of ||PE(p + k) - M_k PE(p)||_2, for p = 0 .. n - k - 1.

    M_k is ``shift_matrix(d, k, base=base, layout=layout)``. It is block diagonal, one 2 x 2 rotation per pair,
    so M_k PE(p) is applied pair by pair with the same entries (sin' = cos(k w) sin + sin(k w) cos,
    cos' = -sin(k w) sin + cos(k w) cos) rather than as a d x d product, in chunks of rows that bound the memory.
    For a float64 sinusoidal table the residual is rounding noise, ~1e-12 (the angle-addition identity is
    exact); for any other table it is large.
    """
    table = _checks.finite_table(table)
    n, d = table.shape
    k = _shift_checks(n, d, k, layout)
    worst = 0.0
    for start in range(0, n - k, chunk):  # chunks of rows bound the memory, not a per-position loop
        stop = min(start + chunk, n - k)
        worst = max(worst, _shift_miss(table[start:stop], table[start + k : stop + k], k, base, layout))
    return worst


def _shift_checks(n: int, d: int, k, layout: str) -> int:
    k = _checks.positive_int("k", k)
    _checks.choice("layout", layout, LAYOUTS)
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
    sin_cols, cos_cols = _pair_columns(layout, d)
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
    n, d = _checks.table_size(n_positions, d_model)
    k = _shift_checks(n, d, k, layout)
    from ..analysis import evenly_spaced

    positions = evenly_spaced(n - k, max_positions).astype(np.float64)
    omega = sinusoidal_frequencies(d, base=base)

    def miss(start: int) -> float:  # chunks of rows on every core: bounded memory, not a per-row loop
        chunk = positions[start : start + 256]
        now, later = np.empty((chunk.size, d)), np.empty((chunk.size, d))
        _fill_rows(now, chunk, omega, layout)
        _fill_rows(later, chunk + k, omega, layout)
        return _shift_miss(now, later, k, base, layout)

    return max(on_every_core(miss, range(0, positions.size, 256))), positions.size


def diagonal_spread(matrix) -> np.ndarray:
    """Spread of every diagonal of a square matrix: spread[k] = max_i S[i, i + k] - min_i S[i, i + k].

    A matrix whose entries depend on the offset j - i only (a Toeplitz matrix, such as the similarity of a
    sinusoidal table) has spread 0 on every diagonal, up to rounding; a random table does not.
    """
    matrix = _checks.finite_table(matrix, name="matrix")
    n = matrix.shape[0]
    if matrix.shape[1] != n:
        raise ValueError(f"diagonals need a square matrix; got shape {matrix.shape}")
    i, k = np.arange(n)[None, :], np.arange(n)[:, None]
    inside = i + k < n
    skewed = matrix[np.minimum(i, n - 1), np.minimum(i + k, n - 1)]  # skewed[k, i] = S[i, i + k]
    high = np.where(inside, skewed, -np.inf).max(axis=1)
    low = np.where(inside, skewed, np.inf).min(axis=1)
    return high - low


def _stride(n: int, limit: int) -> int:
    return -(-n // _checks.positive_int("max_positions", limit))


def lag_spread(table, max_positions: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Evidence that the dot product and cosine depend on |i - j| only: ``(offsets, dot_spread, cos_spread)``.

    The rows p = 0, s, 2s, ... (stride s = ceil(n / max_positions), so every diagonal is one offset k s) give
    the Gram matrix G[i, j] = PE(i) . PE(j) and the cosine matrix; ``diagonal_spread`` of each, per offset.
    Only the offsets 1 .. m - 2 of the m rows are returned: the main diagonal holds the squared norms, and the
    last diagonal has a single entry, whose spread is 0 by definition.
    """
    table = _checks.finite_table(table)
    stride = _stride(table.shape[0], max_positions)
    return _lag_spread_of(table[::stride], stride)


def _lag_spread_of(rows: np.ndarray, stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gram = rows @ rows.T
    norms = np.linalg.norm(rows, axis=1)
    cosine = gram / np.outer(np.where(norms > 0, norms, 1.0), np.where(norms > 0, norms, 1.0))
    if rows.shape[0] < 3:
        raise ValueError(f"the spread along diagonals needs at least 3 positions; got {rows.shape[0]}")
    inner = slice(1, rows.shape[0] - 1)
    offsets = np.arange(rows.shape[0])[inner] * stride
    return offsets, diagonal_spread(gram)[inner], diagonal_spread(cosine)[inner]


def strided_offset_profile(table, max_positions: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``analysis.offset_profile`` on the rows p = 0, s, 2s, ... (s = ceil(n / max_positions)), so that the
    largest tables stay fast: ``(offsets, mean_dot, mean_cosine)`` with offsets in positions (multiples of s)."""
    from ..analysis import offset_profile

    table = _checks.finite_table(table)
    stride = _stride(table.shape[0], max_positions)
    profile = offset_profile(table[::stride])
    return profile.offsets * stride, profile.mean_dot, profile.mean_cosine


def _strided_rows(n_positions: int, d_model: int, max_positions: int, base: float, layout: str):
    """The stride s = ceil(n / max_positions) and the rows p = 0, s, 2s, ... of ``sinusoidal(n, d)``."""
    n, d = _checks.table_size(n_positions, d_model)
    stride = _stride(n, max_positions)
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
    from ..analysis import offset_profile

    n, d = _checks.table_size(n_positions, d_model)
    _checks.choice("layout", layout, LAYOUTS)
    if d % 2:
        stride, rows = _strided_rows(n, d, max_positions, base, layout)
        profile = offset_profile(rows)
        return profile.offsets * stride, profile.mean_dot, profile.mean_cosine
    stride = _stride(n, max_positions)
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
    return _lag_spread_of(rows, stride)


def origin_similarity(
    n_positions: int, d_model: int, bases: tuple[float, ...], *, max_points: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """cos(PE(0), PE(k)) for offsets k = 1 .. n - 1 (at most ``max_points``, log-spaced) and each base.

    Returns ``(offsets, similarity)`` with similarity of shape (len(bases), len(offsets)). For an even d it is
    (2 / d) sum_i cos(k omega_i): a small base makes it fall and oscillate within a few positions, a large base
    keeps it near 1 far out.
    """
    n, d = _checks.table_size(n_positions, d_model)
    if n < 2:
        raise ValueError(f"similarity to position 0 needs at least 2 positions; got {n}")
    limit = _checks.positive_int("max_points", max_points)
    offsets = np.unique(np.round(np.geomspace(1, n - 1, min(limit, n - 1))).astype(np.int64))
    origin = sinusoidal_rows(np.zeros(1, dtype=np.int64), d)[0]  # PE(0) = (0, 1, 0, 1, ...) whatever the base
    similarity = np.empty((len(bases), offsets.size))
    for row, base in enumerate(bases):  # one row per base (a handful), vectorised over offsets and dimensions
        rows = sinusoidal_rows(offsets, d, base=base)
        similarity[row] = rows @ origin / (np.linalg.norm(rows, axis=1) * np.linalg.norm(origin))
    return offsets, similarity


def beyond_training(table, train_len: int, *, margin: float = 0.01, chunk: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """What is new past the training length: ``(share_by_position, excess_by_dimension)``.

    The training range of column j is [min, max] of PE[p, j] over p < train_len. share[p] is the fraction of
    columns in which row p lies more than ``margin`` outside that range (0 before ``train_len``, by definition);
    excess[j] is how far column j gets outside its range at any later position (0 when it never does). Fast
    pairs repeat their values and stay familiar; slow pairs walk into values the model never saw.
    """
    table = _checks.finite_table(table)
    train_len = _checks.positive_int("train_len", train_len)
    seen = table[:train_len]
    low, high = seen.min(axis=0), seen.max(axis=0)
    share = np.empty(table.shape[0])
    excess = np.zeros(table.shape[1])
    for start in range(0, table.shape[0], chunk):  # chunks of rows bound the memory, not a per-position loop
        rows = table[start : start + chunk]
        share[start : start + len(rows)] = _outside(rows, low, high, max(train_len - start, 0), margin, excess)
    return share, excess


def _outside(rows, low, high, first_unseen: int, margin: float, excess: np.ndarray) -> np.ndarray:
    """Share of each row's columns more than ``margin`` outside [low, high]; raises ``excess`` (in place) to how
    far the rows from index ``first_unseen`` on get outside."""
    outside = np.maximum(low - rows, rows - high).clip(min=0.0)
    if first_unseen < len(rows):
        np.maximum(excess, outside[first_unseen:].max(axis=0), out=excess)
    return (outside > margin).mean(axis=1)


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
    from ..analysis import evenly_spaced

    n, d = _checks.table_size(n_positions, d_model)
    train_len = _checks.positive_int("train_len", train_len)
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
        share[start : start + where.size] = _outside(
            rows, low, high, int(np.searchsorted(where, train_len)), margin, excess
        )
    return positions, share, excess


def project_positions(table, method: str = "pca", max_positions: int = 2048, seed: int = 0):
    """``analysis.project`` of at most ``max_positions`` evenly spaced rows: ``(positions, coords)``."""
    from ..analysis import evenly_spaced, project

    table = _checks.finite_table(table)
    positions = evenly_spaced(table.shape[0], max_positions)
    return positions, project(table[positions], method=method, seed=seed)


def _sampled_rows(n_positions: int, d_model: int, max_positions: int, base: float, layout: str):
    """At most ``max_positions`` evenly spaced positions of ``sinusoidal(n, d)`` and their rows."""
    from ..analysis import evenly_spaced

    n, d = _checks.table_size(n_positions, d_model)
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
    from ..analysis import project

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
    from ..analysis import cosine_similarity_matrix, evenly_spaced

    n, d = _checks.table_size(n_positions, d_model)
    _checks.choice("layout", layout, LAYOUTS)
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
    from ..analysis import row_norms

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
    from ..analysis import block_edges

    n, d = _checks.table_size(n_positions, d_model)
    _checks.choice("layout", layout, LAYOUTS)
    max_side = _checks.positive_int("max_side", max_side)
    omega = sinusoidal_frequencies(d, base=base)
    edges = block_edges(n, max_side)
    first, last = edges[:-1], edges[1:] - 1
    half = omega / 2.0
    centre = (first + last)[:, None] * half[None, :]
    lengths, length_of = np.unique(last - first + 1, return_inverse=True)  # near-equal blocks: one or two lengths
    kernel = (np.sin(lengths[:, None] * half[None, :]) / (np.sin(half) * lengths[:, None]))[length_of]
    rows = np.empty((first.size, d))
    sin_cols, cos_cols = _pair_columns(layout, d)
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
    n, d = _checks.table_size(n_positions, d_model)
    squared = np.full(n, float(d // 2))
    if d % 2:
        squared += np.sin(np.arange(n) * sinusoidal_frequencies(d, base=base)[-1]) ** 2
    return np.sqrt(squared)
