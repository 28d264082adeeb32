"""ALiBi, attention with linear biases (Press et al., 2022, "Train Short, Test Long", arXiv:2108.12409).

No position vector at all: head h adds -m_h * (i - j) to the score of query i on key j. The slopes m_h form a
geometric sequence; for n heads, a power of two, head h = 0 .. n - 1 has m_h = 2^(-8(h + 1) / n) (the paper counts
heads from 1 and writes 2^(-8h / n), h = 1 .. n). For other head counts the paper takes the slopes of the closest
smaller power of two c, then every other slope of 2c heads.
"""

from __future__ import annotations

import numpy as np

from ..base import checks

MAX_HEADS = 256


def _power_of_two_slopes(n: int) -> np.ndarray:
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def alibi_slopes(n_heads: int) -> np.ndarray:
    """Per-head slopes of ALiBi, heads h = 0 .. n - 1 (Press et al., 2022, section 3 and their reference code).

    n a power of two: m_h = 2^(-8(h + 1) / n). Otherwise, with c the largest power of two below n: the c slopes of
    c heads, followed by the first n - c of the odd-indexed slopes of 2c heads, 2^(-4(2t + 1) / c),
    t = 0 .. n - c - 1 (they interleave between the first ones). For 8 heads: 1/2, 1/4, ..., 1/256.
    """
    n = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
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
    h = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    q = checks.positive_int("q_len", q_len, maximum=checks.MAX_POSITIONS)
    k = q if k_len is None else checks.positive_int("k_len", k_len, maximum=checks.MAX_POSITIONS)
    slopes = alibi_slopes(h)
    if heads is not None:
        slopes = slopes[_head_index(heads, h)]
    if slopes.size * q * k > checks.MAX_ELEMENTS:
        raise ValueError(
            f"an ALiBi bias of {slopes.size} heads x {q} x {k} has {slopes.size * q * k:,} entries, more than the "
            f"{checks.MAX_ELEMENTS:,} posviz computes at once; use fewer heads or shorter lengths"
        )
    distance = np.arange(q)[:, None] - np.arange(k)[None, :]
    slopes = slopes[:, None, None]
    if not causal:
        return -slopes * np.abs(distance)
    bias = -slopes * distance
    return np.where(distance < 0, -np.inf, bias)


def alibi_slope_origin(n_heads: int) -> np.ndarray:
    """Where each head's slope comes from, per head: 0 = the slopes of c heads, 1 = an interleaved extra slope
    of 2c heads, with c the largest power of two <= n (Press et al., 2022, reference code ``get_slopes``).

    Heads h = 0 .. c - 1 take 2^(-8(h + 1) / c); heads c + t (t = 0 .. n - c - 1) take every other slope of 2c
    heads from its head 0 on, 2^(-8(2t + 1) / 2c). For a power of two every head is of origin 0.
    """
    n = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    closest = 1 << (n.bit_length() - 1)
    return (np.arange(n) >= closest).astype(np.int64)


def alibi_slope_ladder(n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """The 2c slopes of 2c heads, 2^(-8(r + 1) / 2c) for rung r = 0 .. 2c - 1 (c the largest power of two <= n),
    and the use of each: 0 = it is one of the c-head slopes (every odd r, since 2^(-8 (2t) / 2c) = 2^(-8t / c)),
    1 = it is one of the n - c extra slopes (the first even r), 2 = not used by n heads.
    """
    n = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    closest = 1 << (n.bit_length() - 1)
    h = np.arange(1, 2 * closest + 1)
    odd_rank = (h - 1) // 2
    use = np.where(h % 2 == 0, 0, np.where(odd_rank < n - closest, 1, 2))
    return _power_of_two_slopes(2 * closest), use


def article_slopes(n_heads: int) -> np.ndarray:
    """The slopes as one practitioner article states them, "2^(-8/h), 2^(-9/h), ...": m_k = 2^(-(8 + k) / n),
    k = 0 .. n - 1 for n heads. Not the paper's rule (``alibi_slopes``); kept so the two can be compared: they
    agree on the first head only, where 8k / n = (7 + k) / n for k = 1.
    """
    n = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    return 2.0 ** (-(8.0 + np.arange(n)) / n)


def alibi_attention_row(n_heads: int, query: int, heads=None, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Attention weights of query i over the keys j = 0 .. i (causal), ``(with_bias, without_bias)``.

    Raw scores s_j are all zero, or N(0, 1) draws from ``seed``; then

        with bias:    a_h(j) = exp(s_j - m_h (i - j)) / sum_k exp(s_k - m_h (i - k)),   shape (heads, i + 1)
        without bias: a(j)   = exp(s_j) / sum_k exp(s_k),                               shape (i + 1,)

    With equal scores a_h(j) / a_h(i) = exp(-m_h (i - j)): the weight decays exponentially with distance.
    """
    h = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    i = _position("query", query)
    slopes = alibi_slopes(h) if heads is None else alibi_slopes(h)[_head_index(heads, h)]
    scores = np.zeros(i + 1) if seed is None else np.random.default_rng(int(seed)).standard_normal(i + 1)
    distance = i - np.arange(i + 1)
    return _softmax(scores[None, :] - slopes[:, None] * distance[None, :]), _softmax(scores)


def alibi_span(n_heads: int, ratio: float = 0.01) -> np.ndarray:
    """Effective span of each head: the distance at which a key's weight falls to ``ratio`` of the nearest
    key's (equal raw scores), d_h = ln(1 / ratio) / m_h. For ratio 1 %: ln(100) / m_h ~ 4.6 / m_h."""
    h = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    r = checks.positive_float("ratio", ratio)
    if r >= 1.0:
        raise ValueError(f"ratio must be below 1 (a fraction of the nearest key's weight); got {ratio}")
    return np.log(1.0 / r) / alibi_slopes(h)


def alibi_distance_bias(n_heads: int, max_distance: int) -> np.ndarray:
    """-m_h * d for every head and every distance d = 0 .. max_distance, shape (n_heads, max_distance + 1).
    Defined for any distance: ALiBi has no table of positions that could run out."""
    h = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    d = checks.positive_int("max_distance", max_distance, maximum=checks.MAX_ELEMENTS // MAX_HEADS)
    return -alibi_slopes(h)[:, None] * np.arange(d + 1)[None, :]


def alibi_mass_beyond(n_heads: int, train_len: int, seq_lens) -> np.ndarray:
    """Attention mass that the last query of a sequence of length L puts on keys at distance >= train_len
    (distances never seen in training), equal raw scores, causal; shape (n_heads, len(seq_lens)).

    With r = exp(-m): mass = sum_{d=T}^{L-1} r^d / sum_{d=0}^{L-1} r^d = r^T (1 - r^(L - T)) / (1 - r^L)
    for L > T, and 0 for L <= T (geometric sums, computed with expm1 for small slopes).
    """
    h = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    t = checks.positive_int("train_len", train_len, maximum=checks.MAX_POSITIONS)
    lengths = np.asarray(seq_lens)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu" or lengths.size == 0 or np.any(lengths < 1):
        raise ValueError(f"seq_lens must be a list of sequence lengths of at least 1; got {seq_lens!r}")
    m = alibi_slopes(h)[:, None]
    beyond = np.maximum(lengths - t, 0)[None, :]
    mass = np.exp(-m * t) * -np.expm1(-m * beyond) / -np.expm1(-m * lengths[None, :])
    return np.where(beyond > 0, mass, 0.0)


def _head_index(heads, n: int) -> np.ndarray:
    index = np.asarray(heads)
    if index.ndim != 1 or index.dtype.kind not in "iu" or np.any((index < 0) | (index >= n)):
        raise ValueError(f"heads must be a list of head indices between 0 and {n - 1}; got {heads!r}")
    return index


def _position(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < checks.MAX_POSITIONS:
        raise ValueError(f"{name} must be a position between 0 and {checks.MAX_POSITIONS - 1:,}; got {value!r}")
    return int(value)


def _softmax(scores: np.ndarray) -> np.ndarray:
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def article_slopes_agree(n_heads: int) -> np.ndarray:
    """Per head, whether ``article_slopes`` equals the paper's ``alibi_slopes`` (to 1e-12 relative)."""
    return np.isclose(article_slopes(n_heads), alibi_slopes(n_heads), rtol=1e-12, atol=0.0)
