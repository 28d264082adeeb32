"""Transformer-XL's relative positional encoding, as XLNet uses it (Dai et al., 2019, "Transformer-XL: Attentive
Language Models Beyond a Fixed-Length Context", ACL 2019, arXiv:1901.02860, section 3.3; Yang et al., 2019, XLNet,
section 2.4).

A standard Transformer adds the absolute position U_i to the token embedding E_{x_i}. Transformer-XL instead puts
the position inside the attention score, as the offset i - j between query i and key j. Expanding
(E_{x_i} + U_i)^T W_q^T W_k (E_{x_j} + U_j) and replacing every absolute position by the offset gives the score

    A_{i,j} = E_{x_i}^T W_q^T W_{k,E} E_{x_j}       (a) content-content
            + E_{x_i}^T W_q^T W_{k,R} R_{i-j}       (b) content-position
            + u^T W_{k,E} E_{x_j}                   (c) global content bias
            + v^T W_{k,R} R_{i-j}                   (d) global position bias

with R_{i-j} the sinusoid of the offset (no learned table), W_{k,R} its own learned projection and u, v two learned
vectors shared by all queries. XLNet (and transformers' ``XLNetRelativeAttention``) computes (a) + (c) as
(q_i + u) . k_j (``r_w_bias`` is u) and (b) + (d) as (q_i + v) . W_{k,R} R_{i-j} (``r_r_bias`` is v), then multiplies
the sum by 1 / sqrt(d_head). The terms here are unscaled, and XLNet's relative segment term (whether two tokens
come from the same segment) is left out: it does not depend on positions.

Relative offsets are what lets Transformer-XL reuse the hidden states of the previous segment as a memory: keys are
the ``mem_len`` cached states followed by the current segment, and the query at index i of the current segment sits at
offset mem_len + i - j from key j whatever segment either came from. With absolute positions, each segment would be
encoded from 0 again and the memory's tokens would share positions with the current ones.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..base import checks
from .sinusoidal import sinusoidal_frequencies

#: XLNet's attention types: "bi" (every query sees every key) and "uni" (a causal language model).
ATTN_TYPES = ("bi", "uni")


def _sinusoid(offsets: np.ndarray, d_model: int) -> np.ndarray:
    """XLNet's ``positional_embedding``: [sin(p * w_k) | cos(p * w_k)], w_k = 10000^(-2k / d_model) (Vaswani et al.'s
    frequencies, ``sinusoidal_frequencies``)."""
    angles = np.asarray(offsets, dtype=np.float64)[..., None] * sinusoidal_frequencies(d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)


def _d_model(d_model: int) -> int:
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    if d % 2:
        raise ValueError(f"R_(i-j) holds a sine and a cosine for each frequency, so d_model must be even; got {d}")
    return d


def transformer_xl_offsets(q_len: int, k_len: int, *, attn_type: str = "bi", clamp_len: int = -1) -> np.ndarray:
    """The offsets i - j that XLNet's ``relative_positional_encoding`` encodes, in its order (float64):
    k_len, k_len - 1, ..., -q_len + 1 for ``attn_type="bi"`` (k_len + q_len of them) and k_len, ..., 1, 0 for "uni"
    (k_len + 1), each clipped to [-clamp_len, clamp_len] when clamp_len > 0."""
    q = checks.positive_int("q_len", q_len, maximum=checks.MAX_POSITIONS)
    k = checks.positive_int("k_len", k_len, maximum=checks.MAX_POSITIONS)
    attn_type = checks.choice("attn_type", attn_type, ATTN_TYPES)
    if isinstance(clamp_len, bool) or not isinstance(clamp_len, (int, np.integer)):
        raise ValueError(f"clamp_len must be a whole number (-1 or 0 for no clamping); got {clamp_len!r}")
    end = -q if attn_type == "bi" else -1
    offsets = np.arange(k, end, -1, dtype=np.float64)
    if clamp_len > 0:
        offsets = np.clip(offsets, -clamp_len, clamp_len)
    return offsets


def transformer_xl_pos_emb(
    q_len: int, k_len: int, d_model: int, *, attn_type: str = "bi", clamp_len: int = -1, bi_data: bool = False
) -> np.ndarray:
    """The sinusoidal relative embeddings R of Transformer-XL in XLNet's order, equal to transformers 5.24's
    ``XLNetModel.relative_positional_encoding(q_len, k_len)`` (with the model's ``attn_type``, ``clamp_len`` and
    ``bi_data``).

    Row r is R at the offset p_r of ``transformer_xl_offsets`` (k_len, k_len - 1, ..., down to -q_len + 1 for "bi",
    to 0 for "uni"): R_p = [sin(p w_0), ..., sin(p w_{d/2-1}), cos(p w_0), ..., cos(p w_{d/2-1})],
    w_k = 1 / 10000^(2k / d_model) (Vaswani et al.'s frequencies, sines then cosines rather than interleaved).

    Returns (R, d_model) without ``bi_data``. With ``bi_data=True`` (XLNet's bidirectional data pipeline, where half
    of a batch reads the text backwards) it returns (2, R, d_model): [0] the forward offsets above, [1] their
    negation -p_r, clamped the same way; transformers concatenates them along the batch axis, forward half first,
    so ``pos_emb[:, 0]`` and ``pos_emb[:, 1]`` of the method called without ``bsz`` are these two.
    """
    d = _d_model(d_model)
    offsets = transformer_xl_offsets(q_len, k_len, attn_type=attn_type, clamp_len=clamp_len)
    if not bi_data:
        return _sinusoid(offsets, d)
    return np.stack([_sinusoid(offsets, d), _sinusoid(-offsets, d)])  # the clamp is symmetric: clip(-p) = -clip(p)


def rel_shift(x, klen: int) -> np.ndarray:
    """XLNet's relative-shift trick (``XLNetRelativeAttention.rel_shift_bnij``) on the last two axes of ``x``.

    ``x[..., i, r]`` is the position score of query i against the relative embedding of row r of
    ``transformer_xl_pos_emb`` (offset p_r = k_len - r). Reshaping the (q_len, R) block to (R, q_len), dropping its
    first row and reshaping back to (q_len, R - 1) moves every row i left by q_len - i places; keeping the first
    ``klen`` columns gives

        out[..., i, j] = x[..., i, q_len - i + j],   the score for offset p = klen - q_len + i - j = mlen + i - j,

    i.e. query i of the current segment (absolute index mlen + i, after mlen memory keys) against key j. For
    ``attn_type="bi"`` (R = k_len + q_len) every entry is exact; for "uni" (R = k_len + 1) only j <= mlen + i is,
    the keys a causal mask keeps (the others hold wrapped-around values, as in XLNet, and are masked there).
    """
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"rel_shift needs scores of shape (..., q_len, R); got shape {x.shape}")
    q_len, r_len = x.shape[-2:]
    klen = checks.positive_int("klen", klen, maximum=checks.MAX_POSITIONS)
    if klen > r_len - 1:
        raise ValueError(f"after the shift a row holds {r_len - 1} scores, so klen can be at most that; got {klen}")
    lead = x.shape[:-2]
    shifted = x.reshape(*lead, r_len, q_len)[..., 1:, :].reshape(*lead, q_len, r_len - 1)
    return shifted[..., :klen]


@dataclasses.dataclass(frozen=True)
class XLWeights:
    """The weights of one Transformer-XL attention head: W_q, W_{k,E}, W_{k,R} (each (d_model, d_head), applied as
    h @ W) and the global biases u, v (d_head,)."""

    w_q: np.ndarray
    w_k: np.ndarray
    w_r: np.ndarray
    u: np.ndarray
    v: np.ndarray

    @property
    def d_model(self) -> int:
        return int(self.w_q.shape[0])


def xl_demo_weights(d_model: int, d_head: int, seed: int = 0) -> XLWeights:
    """Small random weights for one head, reproducible from ``seed``: normal with standard deviation
    1 / sqrt(d_model) for the projections and 1 for u and v, so that no term dwarfs the others."""
    d = _d_model(d_model)
    dh = checks.positive_int("d_head", d_head, maximum=checks.MAX_DIM)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, d, dh)) / np.sqrt(d)
    u, v = rng.standard_normal((2, dh))
    return XLWeights(w[0], w[1], w[2], u, v)


@dataclasses.dataclass(frozen=True)
class ScoreTerms:
    """The four terms of the Transformer-XL score (Dai et al., 2019, section 3.3), unscaled, each
    (q_len, k_len), and ``offset`` (q_len, k_len) = i + mem_len - j, the offset each R_{i-j} encodes."""

    content_content: np.ndarray
    content_position: np.ndarray
    content_bias: np.ndarray
    position_bias: np.ndarray
    offset: np.ndarray

    @property
    def total(self) -> np.ndarray:
        """A_{i,j} = (a) + (b) + (c) + (d); XLNet's attention logit is this times 1 / sqrt(d_head)."""
        return self.content_content + self.content_position + self.content_bias + self.position_bias

    def row(self, i: int) -> ScoreTerms:
        """The terms of query i alone, each (1, k_len)."""
        return ScoreTerms(*(getattr(self, f.name)[i : i + 1] for f in dataclasses.fields(self)))


def transformer_xl_score_terms(
    query_hidden, key_hidden, weights: XLWeights, *, mem_len: int = 0, clamp_len: int = -1
) -> ScoreTerms:
    """The four terms of A_{i,j} for the queries ``query_hidden`` (q_len, d_model), the current segment, against the
    keys ``key_hidden`` (k_len, d_model): the ``mem_len`` cached states of the previous segment, then the current
    segment (so k_len = mem_len + q_len when the current segment's states are the queries' own).

    With q_i = h_i W_q, k_j = h_j W_{k,E} and r_{ij} = R_{i + mem_len - j} W_{k,R} (R from ``transformer_xl_pos_emb``'s
    sinusoid, its offset clipped to [-clamp_len, clamp_len] when clamp_len > 0):
    (a) q_i . k_j, (b) q_i . r_{ij}, (c) u . k_j, (d) v . r_{ij}. Computed from the definition, one R per (i, j)
    pair; XLNet gets the same numbers with one R per offset and ``rel_shift``.
    """
    query_hidden = np.asarray(query_hidden, dtype=np.float64)
    key_hidden = np.asarray(key_hidden, dtype=np.float64)
    d = weights.d_model
    if query_hidden.ndim != 2 or key_hidden.ndim != 2 or {query_hidden.shape[1], key_hidden.shape[1]} != {d}:
        raise ValueError(
            f"queries and keys are (tokens, d_model) with d_model = {d} as in the weights; got {query_hidden.shape} "
            f"and {key_hidden.shape}"
        )
    if isinstance(mem_len, bool) or not isinstance(mem_len, (int, np.integer)) or not 0 <= mem_len < len(key_hidden):
        raise ValueError(f"mem_len counts the cached keys, from 0 to k_len - 1 = {len(key_hidden) - 1}; got {mem_len}")
    q_len, k_len = len(query_hidden), len(key_hidden)
    offset = (np.arange(q_len)[:, None] + mem_len - np.arange(k_len)[None, :]).astype(np.float64)
    clipped = np.clip(offset, -clamp_len, clamp_len) if clamp_len > 0 else offset
    r = _sinusoid(clipped, d) @ weights.w_r  # (q_len, k_len, d_head)
    q = query_hidden @ weights.w_q
    k = key_hidden @ weights.w_k
    return ScoreTerms(
        content_content=q @ k.T,
        content_position=np.einsum("id,ijd->ij", q, r),
        content_bias=np.broadcast_to(k @ weights.u, (q_len, k_len)).copy(),
        position_bias=r @ weights.v,
        offset=offset,
    )


@dataclasses.dataclass(frozen=True)
class SegmentPositions:
    """Keys = ``mem_len`` cached states of the previous segment followed by the ``seg_len`` current ones.

    ``offset`` (seg_len, k_len): i + mem_len - j, what Transformer-XL encodes, all distinct along a row;
    ``naive`` (k_len,): the absolute position a model that encodes every segment from 0 would give each key
    (0 .. mem_len - 1, then 0 .. seg_len - 1 again); ``collides`` (k_len,): True where that absolute position is also
    another key's, so the query could not tell the two apart by position."""

    mem_len: int
    seg_len: int
    offset: np.ndarray
    naive: np.ndarray
    collides: np.ndarray

    @property
    def is_memory(self) -> np.ndarray:
        return np.arange(self.mem_len + self.seg_len) < self.mem_len


def segment_positions(mem_len: int, seg_len: int) -> SegmentPositions:
    """Why Transformer-XL's memory needs relative positions (Dai et al., 2019, section 3.3: with absolute encodings
    both the cached segment and the current one would be encoded with the same U_{1:L}, so the j-th token of each
    gets the same position): the offsets Transformer-XL uses and the absolute positions a naive segment-by-segment
    model would give the same keys."""
    m = checks.positive_int("mem_len", mem_len, maximum=checks.MAX_POSITIONS) if mem_len else 0
    s = checks.positive_int("seg_len", seg_len, maximum=checks.MAX_POSITIONS)
    naive = np.concatenate([np.arange(m), np.arange(s)])
    _, inverse, counts = np.unique(naive, return_inverse=True, return_counts=True)
    offset = np.arange(s)[:, None] + m - np.arange(m + s)[None, :]
    return SegmentPositions(m, s, offset, naive, counts[inverse] > 1)
