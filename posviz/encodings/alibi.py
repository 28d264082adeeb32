"""ALiBi, attention with linear biases (Press et al., 2022, "Train Short, Test Long", arXiv:2108.12409).

No position vector at all: head h adds -m_h * (i - j) to the score of query i on key j. The slopes m_h form a
geometric sequence; for n heads, a power of two, m_h = 2^(-8h / n), h = 1 .. n. For other head counts the
paper takes the slopes of the closest smaller power of two c, then every other slope of 2c heads.
"""

from __future__ import annotations

import numpy as np

from . import _checks

MAX_HEADS = 256


def _power_of_two_slopes(n: int) -> np.ndarray:
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """Per-head slopes m_1 .. m_n of ALiBi (Press et al., 2022, section 3 and their reference code).

    n a power of two: m_h = 2^(-8h / n). Otherwise, with c the largest power of two below n: the c slopes of
    c heads, followed by the first n - c of the odd-indexed slopes of 2c heads, 2^(-4(2t + 1) / c),
    t = 0 .. n - c - 1 (they interleave between the first ones). For 8 heads: 1/2, 1/4, ..., 1/256.
    """
    n = _checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    closest = 1 << (n.bit_length() - 1)
    if closest == n:
        return _power_of_two_slopes(n)
    extra = 2.0 ** (-4.0 * (2 * np.arange(n - closest) + 1) / closest)
    return np.concatenate([_power_of_two_slopes(closest), extra])


def alibi_bias(n_heads: int, q_len: int, k_len: int | None = None, *, causal: bool = True, heads=None) -> np.ndarray:
    """The bias ALiBi adds to attention scores, shape (n_heads, q_len, k_len), for query i and key j.

    causal:     -m_h * (i - j) for j <= i and -inf for j > i (the causal mask, folded in);
    not causal: -m_h * |i - j| (the symmetric variant used by bidirectional encoders).
    Source: Press et al. (2022), equation in section 3.

    ``heads`` (a sequence of head indices) computes only those heads, shape (len(heads), q_len, k_len).
    """
    h = _checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    q = _checks.positive_int("q_len", q_len, maximum=_checks.MAX_POSITIONS)
    k = q if k_len is None else _checks.positive_int("k_len", k_len, maximum=_checks.MAX_POSITIONS)
    slopes = alibi_slopes(h)
    if heads is not None:
        index = np.asarray(heads)
        if index.ndim != 1 or index.dtype.kind not in "iu" or np.any((index < 0) | (index >= h)):
            raise ValueError(f"heads must be a list of head indices between 0 and {h - 1}; got {heads!r}")
        slopes = slopes[index]
    if slopes.size * q * k > _checks.MAX_ELEMENTS:
        raise ValueError(
            f"an ALiBi bias of {slopes.size} heads x {q} x {k} has {slopes.size * q * k:,} entries, more than the "
            f"{_checks.MAX_ELEMENTS:,} posviz computes at once; use fewer heads or shorter lengths"
        )
    distance = np.arange(q)[:, None] - np.arange(k)[None, :]
    slopes = slopes[:, None, None]
    if not causal:
        return -slopes * np.abs(distance)
    bias = -slopes * distance
    return np.where(distance < 0, -np.inf, bias)
