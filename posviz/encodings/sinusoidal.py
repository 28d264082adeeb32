"""Fixed sinusoidal position encodings (Vaswani et al., 2017, "Attention Is All You Need", section 3.5).

    PE[p, 2k]     = sin(p / base^(2k / d))
    PE[p, 2k + 1] = cos(p / base^(2k / d))

Each pair of columns (2k, 2k + 1) is a point on a circle turning with angular speed
omega_k = base^(-2k / d) per position, so PE(p + k) is a rotation of PE(p) that depends on k only.
"""

from __future__ import annotations

import numpy as np

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
    are computed, so the table shows what a model computing in that precision really gets.
    """
    n, d = _checks.table_size(n_positions, d_model)
    _checks.choice("layout", layout, LAYOUTS)
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype must be a floating-point type such as float32; got {dtype}")
    omega = sinusoidal_frequencies(d, base=base).astype(dtype)
    angles = np.arange(n, dtype=dtype)[:, None] * omega[None, :]
    n_sin, n_cos = (d + 1) // 2, d // 2
    table = np.empty((n, d), dtype=dtype)
    if layout == "interleaved":
        np.sin(angles, out=table[:, 0::2])
        np.cos(angles[:, :n_cos], out=table[:, 1::2])
    else:
        np.sin(angles, out=table[:, :n_sin])
        np.cos(angles[:, :n_cos], out=table[:, n_sin:])
    return table


def shift_matrix(d_model: int, k: float, *, base: float = 10000.0) -> np.ndarray:
    """The matrix M_k with PE(p + k) = M_k @ PE(p) for every p (interleaved layout).

    For each pair (2i, 2i + 1) with frequency omega_i, M_k holds the 2 x 2 block
    [[cos(k omega_i), sin(k omega_i)], [-sin(k omega_i), cos(k omega_i)]], from the angle-addition formulas
    sin(a + b) = sin a cos b + cos a sin b and cos(a + b) = cos a cos b - sin a sin b. It depends on k only,
    which is why a linear layer can learn to attend by relative offset. With an odd d_model the unpaired last
    sin column has no partner to rotate with, so M_k is only defined for even d_model.
    """
    d = _checks.positive_int("d_model", d_model, maximum=_checks.MAX_DIM)
    if d % 2:
        raise ValueError(f"the shift matrix needs sin/cos pairs, so d_model must be even; got {d}")
    theta = float(k) * sinusoidal_frequencies(d, base=base)
    c, s = np.cos(theta), np.sin(theta)
    m = np.zeros((d, d))
    i = np.arange(0, d, 2)
    m[i, i], m[i, i + 1], m[i + 1, i], m[i + 1, i + 1] = c, s, -s, c
    return m
