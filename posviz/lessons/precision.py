"""How precisely a sinusoidal table survives low-precision arithmetic: float16, bfloat16 and float32 against
float64.

Computing PE "in float16" means what a model running in that precision does: the position p and the frequency
omega_k are rounded to the format, their product p * omega_k is rounded to it, and so is the sine. A format with
m mantissa bits holds every integer up to 2^(m + 1) exactly; past that, neighbouring positions round to the same
number (float16: p > 2048, bfloat16: p > 256, float32: p > 2^24), and the fastest pairs, whose angle is about p
radians, lose their angle entirely. Every low-precision number comes from ``number_formats``, which gives the
same bits on every CPU: the sine of an angle the format holds is rounded once (numpy's own float16 sine rounds twice,
through float32, and differently for contiguous and strided arrays on different CPUs).
"""

from __future__ import annotations

import numpy as np

from .. import number_formats
from .._parallel import on_every_core
from ..analysis import evenly_spaced
from ..base import checks
from ..encodings.sinusoidal import sinusoidal_frequencies
from ..number_formats import MANTISSA_BITS

DTYPES = number_formats.FORMATS
#: Largest number of positions the error is evaluated at (evenly spaced over the range).
PRECISION_POSITIONS = 4096


def _sin_cos_in(dtype: str, positions: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sin and cos of p * omega with p, omega, the product and the results all rounded to ``dtype``."""
    return number_formats.sin_cos(number_formats.multiply(positions[:, None], omega[None, :], dtype), dtype)


def pair_errors(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    dtype: str = "float16",
    max_positions: int = PRECISION_POSITIONS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Absolute error of every sin/cos pair computed in ``dtype``, against float64.

    error[p, k] = max(|sin_dtype(p omega_k) - sin(p omega_k)|, |cos_dtype(p omega_k) - cos(p omega_k)|) with
    omega_k = base^(-2k / d) (Vaswani et al., 2017); for an odd d the last pair has only its sin column.
    Evaluated at at most ``max_positions`` evenly spaced positions. Returns ``(positions, error, max_error)``
    where max_error[p] = max_k error[p, k]. An error near 1 means the entry is as good as random.
    """
    checks.choice("dtype", dtype, DTYPES)
    return pair_errors_by_dtype(n_positions, d_model, base=base, dtypes=(dtype,), max_positions=max_positions)[dtype]


#: Positions whose errors one worker of :func:`pair_errors_by_dtype` computes at a time.
_CHUNK_POSITIONS = 256


def pair_errors_by_dtype(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    dtypes: tuple[str, ...] = DTYPES,
    max_positions: int = PRECISION_POSITIONS,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """:func:`pair_errors` of each of ``dtypes``, ``{dtype: (positions, error, max_error)}``: the float64 sines and
    cosines are computed once for all formats, a chunk of positions at a time on every core (small temporaries
    instead of a dozen matrices of the full size)."""
    n, d = checks.table_size(n_positions, d_model)
    for dtype in dtypes:
        checks.choice("dtype", dtype, DTYPES)
    positions = evenly_spaced(n, max_positions)
    omega = sinusoidal_frequencies(d, base=base)
    errors = {dtype: np.empty((positions.size, omega.size)) for dtype in dtypes}

    def chunk(start: int) -> None:
        rows = slice(start, start + _CHUNK_POSITIONS)
        angles = positions[rows].astype(np.float64)[:, None] * omega[None, :]
        exact_sin, exact_cos = np.sin(angles), np.cos(angles)
        for dtype in dtypes:
            sin, cos = _sin_cos_in(dtype, positions[rows], omega)
            cos_error = np.abs(np.subtract(cos, exact_cos, out=cos), out=cos)
            cos_error[:, d // 2 :] = 0.0  # the unpaired sin column of an odd d has no cos partner
            sin_error = np.abs(np.subtract(sin, exact_sin, out=sin), out=sin)
            np.maximum(sin_error, cos_error, out=errors[dtype][rows])

    on_every_core(chunk, range(0, positions.size, _CHUNK_POSITIONS))
    return {dtype: (positions, error, error.max(axis=1)) for dtype, error in errors.items()}


def first_merged_position(dtype: str) -> int:
    """The first position that ``dtype`` cannot hold: 2^(m + 1) + 1 with m mantissa bits. It rounds to its
    neighbour 2^(m + 1) (ties to even), so from there on two neighbouring positions get the same angle."""
    checks.choice("dtype", dtype, DTYPES)
    return 2 ** (MANTISSA_BITS[dtype] + 1) + 1


def position_spacing(positions, dtype: str) -> np.ndarray:
    """Gap between a position p >= 1 and the next number ``dtype`` can hold: 2^(floor(log2 p) - m).

    Once it exceeds 1, positions are rounded to a coarser grid; an angle p * omega can then be off by up to
    half the gap times omega."""
    checks.choice("dtype", dtype, DTYPES)
    p = np.asarray(positions, dtype=np.float64)
    if p.size and p.min() < 1:
        raise ValueError(f"the spacing is defined here for positions >= 1; got {p.min():g}")
    return 2.0 ** (np.floor(np.log2(p)) - MANTISSA_BITS[dtype])


def breakdown_position(positions, max_error, threshold: float = 0.5) -> int | None:
    """The first position whose largest error reaches ``threshold`` (an error of order 1: the entry is no
    better than a guess), or None when no position does."""
    positions, max_error = np.asarray(positions), np.asarray(max_error)
    broken = np.flatnonzero(max_error >= threshold)
    return int(positions[broken[0]]) if broken.size else None
