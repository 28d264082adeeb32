"""Relative position encodings: Shaw et al. (2018) clipped relative embeddings and T5's bucketed biases.

Both give the attention score of query i on key j a term that depends on the relative position j - i only:
Shaw et al. look up a learned vector by clip(j - i, -k, k); T5 (Raffel et al., 2020) looks up one learned scalar
per head by a bucket index that is exact for small distances and logarithmic for large ones.
"""

from __future__ import annotations

import math

import numpy as np

from . import _checks


def shaw_relative_index(q_len: int, k_len: int, max_relative_position: int) -> np.ndarray:
    """Index of the relative embedding used by query i and key j (Shaw et al., 2018, "Self-Attention with
    Relative Position Representations", section 3.2): clip(j - i, -k, k) + k, shape (q_len, k_len), in 0 .. 2k.

    Distances beyond k share the embedding of distance k, so only 2k + 1 vectors are learned.
    """
    q = _checks.positive_int("q_len", q_len, maximum=_checks.MAX_POSITIONS)
    k_len = _checks.positive_int("k_len", k_len, maximum=_checks.MAX_POSITIONS)
    k = _checks.positive_int("max_relative_position", max_relative_position, maximum=_checks.MAX_POSITIONS)
    if q * k_len > _checks.MAX_ELEMENTS:
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
    b = _checks.positive_int("num_buckets", num_buckets, maximum=4096)
    max_distance = _checks.positive_int("max_distance", max_distance, maximum=10**9)
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


def t5_bucket_matrix(q_len: int, k_len: int, **kwargs) -> np.ndarray:
    """Bucket of every (query i, key j) pair, shape (q_len, k_len): ``t5_relative_bucket(j - i, **kwargs)``."""
    q = _checks.positive_int("q_len", q_len, maximum=_checks.MAX_POSITIONS)
    k = _checks.positive_int("k_len", k_len, maximum=_checks.MAX_POSITIONS)
    if q * k > _checks.MAX_ELEMENTS:
        raise ValueError(f"a {q} x {k} bucket matrix is too large to compute at once")
    return t5_relative_bucket(np.arange(k)[None, :] - np.arange(q)[:, None], **kwargs)
