"""XLNet's two-stream self-attention masks (Yang et al., 2019, "XLNet: Generalized Autoregressive
Pretraining for Language Understanding", NeurIPS 2019, arXiv:1906.08237, section 2.3).

In pretraining, one factorisation order z (a permutation of the positions) is sampled per sequence, and only its
last tokens are predicted (``prediction_targets``). The order decides who may see whom: the content stream of
token i sees every token that comes no later than i in z, itself included; the query stream, which must predict
token i, sees only those strictly earlier, so it may know i's position but never its content.

These masks are a training device, not a position code. XLNet's positions come from Transformer-XL's relative
encoding (Dai et al., 2019, arXiv:1901.02860, section 3.3): the score of query i on key j gains
q_i . W_R R_{i-j} + v . W_R R_{i-j}, with R_{i-j} sinusoids of the offset, W_R a learned projection and v a
learned bias, a term that depends on the query as well as on the offset.
"""

from __future__ import annotations

import numpy as np

from ..base import checks


def factorisation_rank(permutation) -> np.ndarray:
    """rank[t] = the step at which token t is predicted in the factorisation order ``permutation``."""
    perm = np.asarray(permutation)
    if perm.ndim != 1 or perm.size == 0:
        raise ValueError(f"permutation must be a non-empty 1-D sequence of token indices; got shape {perm.shape}")
    if perm.dtype.kind not in "iu" or perm.size > checks.MAX_POSITIONS:
        raise ValueError("permutation must hold whole-number token indices (at most 32,768 of them)")
    if not np.array_equal(np.sort(perm), np.arange(perm.size)):
        raise ValueError(
            f"permutation must contain each of 0 .. {perm.size - 1} exactly once; got {perm.tolist()[:20]}"
        )
    rank = np.empty(perm.size, dtype=np.int64)
    rank[perm] = np.arange(perm.size)
    return rank


def xlnet_masks(permutation) -> tuple[np.ndarray, np.ndarray]:
    """``(content_mask, query_mask)``, boolean (L, L), True where token i (row) may attend to token j (column).

    content_mask[i, j] = rank[j] <= rank[i];   query_mask[i, j] = rank[j] < rank[i],
    with rank the position of each token in the factorisation order (Yang et al., 2019, equations 4 and 5).
    XLNet's ``perm_mask`` (1 = cannot attend) is the logical not of ``query_mask``.
    """
    rank = factorisation_rank(permutation)
    content = rank[None, :] <= rank[:, None]
    query = rank[None, :] < rank[:, None]
    return content, query


#: XLNet's partial-prediction constant K: about 1/K of a sequence's tokens are prediction targets. Yang et al. (2019)
#: pretrain with K = 6 (85 targets of 512 tokens, ``num_predict=85`` in their code) and try K = 6 and 7 in ablations.
PARTIAL_PREDICTION_K = 6


def prediction_targets(permutation, k: int = PARTIAL_PREDICTION_K) -> np.ndarray:
    """The tokens XLNet predicts for the factorisation order z = ``permutation``, in the order they are predicted:
    the last ones, z_{>c}, with the cut c chosen so that |z| / (|z| - c) is about K (Yang et al., 2019, section
    2.3, "partial prediction"), i.e. max(1, round(L / K)) tokens of L. The earlier tokens are context only.
    """
    perm = np.asarray(permutation)
    factorisation_rank(perm)  # a permutation of 0 .. L - 1, or a ValueError that says what is wrong
    k = checks.positive_int("k", k, maximum=checks.MAX_POSITIONS)
    count = max(1, int(np.floor(perm.size / k + 0.5)))
    return perm[perm.size - count :].astype(np.int64)


def factorisation_order(seq_len: int, seed: int = 0) -> np.ndarray:
    """A random factorisation order of ``seq_len`` tokens, reproducible from ``seed`` (seed 0 is the
    left-to-right order 0, 1, ..., L - 1, which makes XLNet an ordinary causal language model)."""
    n = checks.positive_int("seq_len", seq_len, maximum=checks.MAX_POSITIONS)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number, got {seed!r}")
    if seed == 0:
        return np.arange(n)
    return np.random.default_rng(int(seed)).permutation(n)


def parse_order(text: str, max_tokens: int = checks.MAX_POSITIONS) -> np.ndarray:
    """A factorisation order typed by hand, "3, 1, 0, 2" (commas and/or spaces), as an int array.

    It must list each of 0 .. L - 1 exactly once, L <= ``max_tokens``; otherwise a ValueError says what is wrong.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("type an order as token indices separated by commas, for example 3,1,0,2")
    parts = [p for p in text.replace(",", " ").split() if p]
    bad = [p for p in parts if not (p.isascii() and p.isdigit())]
    if bad:
        raise ValueError(f"an order holds whole token indices 0, 1, 2, …; {bad[0]!r} is not one")
    order = np.array([int(p) for p in parts], dtype=np.int64)
    if order.size > max_tokens:
        raise ValueError(f"an order can list at most {max_tokens:,} tokens here; got {order.size:,}")
    values, counts = np.unique(order, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"token {int(values[counts > 1][0])} appears more than once in the order {text.strip()!r}")
    missing = np.setdiff1d(np.arange(order.size), order)
    if missing.size:
        raise ValueError(
            f"an order of {order.size} tokens must use each of 0 .. {order.size - 1} once; "
            f"{int(missing[0])} is missing (and {int(order.max())} is too large)"
        )
    return order


def visible_tokens(permutation, token: int) -> tuple[np.ndarray, np.ndarray]:
    """The tokens that ``token`` may attend to in each stream, ``(content, query)``, as sorted index arrays:
    content = {j : rank[j] <= rank[token]} (itself included), query = {j : rank[j] < rank[token]} — the rows
    ``token`` of ``xlnet_masks`` (Yang et al., 2019, section 2.3)."""
    rank = factorisation_rank(permutation)
    if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < rank.size:
        raise ValueError(f"token must be an index between 0 and {rank.size - 1}; got {token!r}")
    return np.flatnonzero(rank <= rank[token]), np.flatnonzero(rank < rank[token])
