"""Relative position encodings: Shaw et al. (2018) clipped relative embeddings and T5's bucketed biases.

Both look up what they learned by the relative position j - i alone, but they use it differently. Shaw et al.
("Self-Attention with Relative Position Representations", NAACL 2018, arXiv:1803.02155) learn vectors a^K and
a^V per clipped offset clip(j - i, -k, k): the score gains the term q_i . a^K_ij, which depends on the query too
(their equation 4), and a^V_ij is added to the values (equation 3). T5 (Raffel et al., 2020) learns one scalar per
head and bucket, added to the score whatever the tokens; the bucket is exact for small distances and logarithmic
for large ones.
"""

from __future__ import annotations

import math

import numpy as np

from ..base import checks


def shaw_relative_index(q_len: int, k_len: int, max_relative_position: int) -> np.ndarray:
    """Index of the relative embedding used by query i and key j (Shaw et al., 2018, "Self-Attention with
    Relative Position Representations", section 3.2): clip(j - i, -k, k) + k, shape (q_len, k_len), in 0 .. 2k.

    Distances beyond k share the embedding of distance k, so only 2k + 1 vectors are learned.
    """
    q = checks.positive_int("q_len", q_len, maximum=checks.MAX_POSITIONS)
    k_len = checks.positive_int("k_len", k_len, maximum=checks.MAX_POSITIONS)
    k = checks.positive_int("max_relative_position", max_relative_position, maximum=checks.MAX_POSITIONS)
    if q * k_len > checks.MAX_ELEMENTS:
        raise ValueError(f"a {q} x {k_len} index matrix is too large to compute at once")
    rel = np.arange(k_len)[None, :] - np.arange(q)[:, None]
    return np.clip(rel, -k, k) + k


def t5_relative_bucket(
    relative_position, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """T5's bucket for each relative position (key index - query index), as in ``T5Attention``
    (Raffel et al., 2020, "Exploring the Limits of Transfer Learning", section 2.1; mesh-tensorflow code).

    Bidirectional: half the buckets for keys after the query (offset by num_buckets / 2), half for the rest, on
    n = |relative_position|. Causal: n = max(-relative_position, 0) (keys after the query all share bucket 0).
    Then with B buckets per side and max_exact = B / 2:

        bucket(n) = n                                                          for n < max_exact
        bucket(n) = min(B - 1, max_exact + floor(ln(n / max_exact) / ln(max_distance / max_exact)
                                                 * (B - max_exact)))          otherwise

    The logarithm is taken in float32, as in the reference code, so boundary cases match trained models.
    """
    b = checks.positive_int("num_buckets", num_buckets, maximum=4096)
    max_distance = checks.positive_int("max_distance", max_distance, maximum=10**9)
    rel = np.asarray(relative_position)
    if rel.dtype.kind not in "iu":
        if rel.dtype.kind == "f" and np.all(np.isfinite(rel)) and np.all(rel == np.round(rel)):
            rel = rel.astype(np.int64)
        else:
            raise ValueError("relative_position must hold whole numbers (key index - query index)")
    rel = rel.astype(np.int64)
    buckets = np.zeros(rel.shape, dtype=np.int64)
    if bidirectional:
        b //= 2
        buckets += (rel > 0) * b
        n = np.abs(rel)
    else:
        n = -np.minimum(rel, 0)
    max_exact = b // 2
    if max_exact < 1:
        raise ValueError(f"num_buckets is too small to hold an exact region: got {num_buckets}")
    if max_distance <= max_exact:
        raise ValueError(f"max_distance ({max_distance}) must exceed the exact region ({max_exact} positions)")
    with np.errstate(divide="ignore"):
        ratio = np.log(n.astype(np.float32) / np.float32(max_exact)) / np.float32(math.log(max_distance / max_exact))
    large = max_exact + np.nan_to_num(ratio * np.float32(b - max_exact), neginf=0.0).astype(np.int64)
    large = np.minimum(large, b - 1)
    return buckets + np.where(n < max_exact, n, large)


def t5_last_bucket_start(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> int:
    """The smallest distance n whose T5 bucket is the last of its side (B - 1 with B buckets per side): from there
    on every key shares one bias, so the bucket curve and every head's bias are flat.

    The logarithmic region reaches the last bucket before max_distance D: with E = max_exact,
    E + floor(ln(n / E) / ln(D / E) (B - E)) = B - 1 first at n >= E (D / E)^((B - E - 1) / (B - E)), which is 91
    for 32 bidirectional buckets and D = 128 (B = 16, E = 8) and 113 for 32 causal buckets (B = 32, E = 16). Found
    by evaluating ``t5_relative_bucket`` at n = 0 .. D (the float32 logarithm included); the bucket never falls as
    n grows and equals B - 1 at n = D at the latest.
    """
    d = checks.positive_int("max_distance", max_distance, maximum=checks.MAX_ELEMENTS)
    b = checks.positive_int("num_buckets", num_buckets, maximum=4096)
    side = b // 2 if bidirectional else b
    n = np.arange(d + 1)
    buckets = t5_relative_bucket(-n, bidirectional=bidirectional, num_buckets=b, max_distance=d)
    return int(np.searchsorted(buckets, side - 1))


def t5_bucket_matrix(q_len: int, k_len: int, **kwargs) -> np.ndarray:
    """Bucket of every (query i, key j) pair, shape (q_len, k_len): ``t5_relative_bucket(j - i, **kwargs)``."""
    q = checks.positive_int("q_len", q_len, maximum=checks.MAX_POSITIONS)
    k = checks.positive_int("k_len", k_len, maximum=checks.MAX_POSITIONS)
    if q * k > checks.MAX_ELEMENTS:
        raise ValueError(f"a {q} x {k} bucket matrix is too large to compute at once")
    return t5_relative_bucket(np.arange(k)[None, :] - np.arange(q)[:, None], **kwargs)


def shaw_distinct_count(seq_lens, max_relative_position: int) -> np.ndarray:
    """How many different relative embeddings an L x L attention uses: offsets j - i run over -(L - 1) .. L - 1
    and are clipped to -k .. k, so 2 min(L - 1, k) + 1 of the 2k + 1 learned vectors (Shaw et al., 2018)."""
    k = checks.positive_int("max_relative_position", max_relative_position, maximum=checks.MAX_POSITIONS)
    lengths = np.asarray(seq_lens)
    if lengths.ndim != 1 or lengths.dtype.kind not in "iu" or lengths.size == 0 or np.any(lengths < 1):
        raise ValueError(f"seq_lens must be a list of sequence lengths of at least 1; got {seq_lens!r}")
    return 2 * np.minimum(lengths - 1, k) + 1


def t5_exact_region(num_buckets: int = 32, bidirectional: bool = True) -> int:
    """max_exact of ``t5_relative_bucket``: distances n < max_exact get a bucket each. It is half the buckets
    of one side: num_buckets // 4 when bidirectional (two sides), num_buckets // 2 when causal."""
    b = checks.positive_int("num_buckets", num_buckets, maximum=4096)
    return (b // 2 if bidirectional else b) // 2


def t5_bucket_sizes(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """How many relative positions n = j - i in -max_distance .. max_distance fall into each bucket, shape
    (num_buckets,), by enumeration: a bincount of ``t5_relative_bucket``. The counts sum to 2 max_distance + 1;
    every farther position also lands in a last bucket (num_buckets / 2 - 1 or num_buckets - 1, or 0 when causal
    and j > i), which already starts at ``t5_last_bucket_start`` (before max_distance).
    """
    d = checks.positive_int("max_distance", max_distance, maximum=checks.MAX_ELEMENTS)
    rel = np.arange(-d, d + 1)
    buckets = t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=d)
    return np.bincount(buckets, minlength=num_buckets)


def t5_unused_buckets(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Bucket indices in 0 .. num_buckets - 1 that no relative position ever reaches (``t5_bucket_sizes`` == 0).

    Bidirectional: bucket num_buckets // 2 is never used. It would mean "key after the query (offset
    num_buckets // 2) at distance n = 0", but a key after the query has n = j - i >= 1. (With odd num_buckets
    the top bucket num_buckets - 1 is unused too.) Buckets of the log region are skipped as well when one step
    of distance climbs more than one bucket there, i.e. when (B - max_exact) / (max_exact ln(max_distance /
    max_exact)) > 1 with B the buckets per side.
    """
    sizes = t5_bucket_sizes(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    return np.flatnonzero(sizes == 0)


def t5_bias_curve(bias_table, relative_position, *, bidirectional: bool = True, max_distance: int = 128) -> np.ndarray:
    """The bias each head adds at each relative position, bias_table[bucket(j - i), h], shape (n_heads, len(rel)).

    ``bias_table`` is T5's ``relative_attention_bias.weight``, shape (num_buckets, n_heads); num_buckets is read
    from its first side (Raffel et al., 2020; ``T5Attention.compute_bias``).
    """
    table = checks.finite_table(bias_table, name="the relative attention bias table")
    buckets = t5_relative_bucket(
        relative_position, bidirectional=bidirectional, num_buckets=table.shape[0], max_distance=max_distance
    )
    return table[buckets].T


def t5_synthetic_bias_table(num_buckets: int = 32, n_heads: int = 8, seed: int = 0) -> np.ndarray:
    """A made-up T5 bias table (NOT from a trained model), shape (num_buckets, n_heads), for demonstrations:
    head h decays with the bucket's distance from "here" at its own rate, plus N(0, 0.1^2) noise from ``seed``.

    Buckets are reduced to their side's index r = bucket mod (num_buckets / 2), then
    bias[b, h] = -r * 2^(-h / 2) / 4 + noise.
    """
    b = checks.positive_int("num_buckets", num_buckets, maximum=4096)
    h = checks.positive_int("n_heads", n_heads, maximum=256)
    side = np.arange(b) % max(b // 2, 1)
    rate = 2.0 ** (-np.arange(h) / 2.0) / 4.0
    noise = np.random.default_rng(int(seed)).normal(0.0, 0.1, size=(b, h))
    return -side[:, None] * rate[None, :] + noise
