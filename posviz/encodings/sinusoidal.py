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
from ..base import checks

LAYOUTS = ("interleaved", "halves")


def sinusoidal_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Angular frequency of each sin/cos pair: omega_k = base^(-2k / d_model) for k = 0 .. ceil(d/2) - 1.

    With an odd ``d_model`` the last frequency drives a sin column that has no cos partner.
    Source: Vaswani et al. (2017), section 3.5.
    """
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    base = checks.positive_float("base", base, minimum_exclusive=1.0)
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
    n, d = checks.table_size(n_positions, d_model)
    checks.choice("layout", layout, LAYOUTS)
    dtype = np.dtype(dtype)
    if dtype.name not in ("float64", *number_formats.FORMATS) or dtype.name == "bfloat16":
        raise ValueError(f"dtype must be float16, float32 or float64; got {dtype}")
    omega = sinusoidal_frequencies(d, base=base)
    table = np.empty((n, d), dtype=dtype)
    rows = max(1, _CHUNK_CELLS // d)

    def fill(start: int) -> None:
        block = table[start : start + rows]
        fill_rows(block, np.arange(start, start + len(block), dtype=np.float64), omega, layout)

    on_every_core(fill, range(0, n, rows))  # blocks of rows bound the angles' temporary; each cell is the same
    return table


def pair_columns(layout: str, d: int) -> tuple[slice, slice]:
    """The sin columns and the cos columns of a table of width d, pair i being (sin[i], cos[i]); an odd d ends
    with an unpaired sin column."""
    n_sin = (d + 1) // 2
    return (slice(0, None, 2), slice(1, None, 2)) if layout == "interleaved" else (slice(0, n_sin), slice(n_sin, d))


def fill_rows(block: np.ndarray, positions: np.ndarray, omega: np.ndarray, layout: str) -> None:
    """Write PE(p) for each of ``positions`` into the rows of ``block``, in the column order of ``layout``, computed
    in the precision of ``block``: float64 directly, float16 and float32 through ``number_formats``."""
    sin_cols, cos_cols = pair_columns(layout, block.shape[1])
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
    checks.choice("layout", layout, LAYOUTS)
    omega = sinusoidal_frequencies(d_model, base=base)
    pos = np.asarray(positions)
    if pos.ndim != 1 or (pos.size and (pos.dtype.kind not in "iu" or pos.min() < 0)):
        raise ValueError(f"positions must be a 1-D array of whole numbers >= 0; got {pos!r}")
    rows = np.empty((pos.size, int(d_model)))
    step = max(1, _CHUNK_CELLS // rows.shape[1])

    def fill(start: int) -> None:
        fill_rows(rows[start : start + step], pos[start : start + step].astype(np.float64), omega, layout)

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
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    checks.choice("layout", layout, LAYOUTS)
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
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    return np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])


def sinusoidal_wavelengths(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Wavelength of each sin/cos pair in positions: lambda_k = 2 pi / omega_k = 2 pi base^(2k / d).

    They grow geometrically from 2 pi (pair 0) towards 2 pi base (Vaswani et al., 2017, section 3.5).
    """
    return 2.0 * np.pi / sinusoidal_frequencies(d_model, base=base)
