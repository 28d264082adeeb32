"""Every family on the same axes: what it contributes at each offset, what it does past the training length, and
what it costs as the context grows.

Each family's position signal is a different kind of number (a cosine similarity, a score, a bias, an index, a
mask), so every function here says which one it returns; ``QUANTITY`` names it per family. The parameters of a
family are those of its registry entry (``posviz.FAMILIES[key].params``), given as a dict or as (name, value) pairs.
"""

from __future__ import annotations

import math

import numpy as np

from ..analysis import offset_profile
from ..base import checks
from ..encodings import alibi, learned, relative, rope, sinusoidal, xlnet
from ..encodings.registry import FAMILIES, STAGES, Term, family

#: What ``offset_curve`` returns for each family.
QUANTITY = {
    "sinusoidal": "cosine",
    "learned": "cosine",
    "rope": "score",
    "alibi": "bias",
    "t5": "bias",
    "shaw": "index",
    "xlnet": "visible",
}
#: Heads of the synthetic T5 bias table; ``offset_curve`` shows its head 0.
T5_HEADS = 8
#: Families whose learned parameters and stored numbers ``parameter_count`` and ``stored_floats`` know.
COST_FAMILIES = ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw", "xlnet")


def _settings(key: str, params) -> dict:
    """The registry defaults of ``key`` updated with ``params`` (a dict or (name, value) pairs); unknown names fail."""
    fam = family(key)
    given = dict(params or {})
    unknown = sorted(set(given) - {p.name for p in fam.params})
    if unknown:
        raise ValueError(f"{fam.name} has no parameter {unknown[0]!r}; its parameters are {', '.join(fam.defaults())}")
    return fam.defaults() | given


def _signed(lags: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A curve known for offsets 0 .. n - 1 that is even in the offset, spread over -(n - 1) .. n - 1."""
    return np.concatenate([-lags[:0:-1], lags]), np.concatenate([values[:0:-1], values])


def offset_curve(key: str, params=None) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, values)``: the family's position signal as a function of the offset o = j - i (key minus query),
    for o = -(L - 1) .. L - 1 with L the family's length parameter. What ``values`` is (``QUANTITY[key]``):

    - sinusoidal, learned ("cosine"): the mean over i of cos(PE(i), PE(i + |o|)), from ``analysis.offset_profile``;
      for the sinusoidal table (even d) it is exactly (2 / d) sum_k cos(o omega_k) (Vaswani et al., 2017).
    - rope ("score"): RoPE(q, i) . RoPE(k, j) / head_dim with q = k = (1, ..., 1), which is
      mean_k cos(o theta_k), theta_k = base^(-2k / head_dim) (Su et al., 2021, section 3.4.3).
    - alibi ("bias"): -m_h |o| of the chosen head h (Press et al., 2022); NaN for o > 0 when causal (masked keys).
    - t5 ("bias"): bias[bucket(o), 0] of ``relative.t5_synthetic_bias_table(num_buckets, T5_HEADS)``, a made-up
      table (not a trained model), looked up through T5's buckets (Raffel et al., 2020).
    - shaw ("index"): the index clip(o, -k, k) + k of the learned vectors a^K, a^V used at offset o (Shaw et al.,
      2018); what they add to the score, q_i . a^K, depends on the query as well.
    - xlnet ("visible"): not XLNet's position code (Transformer-XL's relative term needs trained weights) but its
      pretraining mask: the share of queries i whose query stream may see key i + o, rank(i + o) < rank(i), in the
      factorisation order drawn from ``seed`` (Yang et al., 2019, section 2.3).
    """
    s = _settings(key, params)
    if key in ("sinusoidal", "learned"):
        profile = offset_profile(family(key).build(**s))
        return _signed(profile.offsets, profile.mean_cosine)
    length = int(s["n_positions"] if key == "rope" else s["seq_len"])
    offsets = np.arange(-(length - 1), length)
    if key == "rope":
        inv, _ = rope.rope_inv_freq(s["head_dim"], base=s["base"])
        if offsets.size * inv.size > checks.MAX_ELEMENTS:
            raise ValueError(f"{offsets.size:,} offsets x {inv.size:,} pairs are too many to compute at once")
        return offsets, np.cos(offsets[:, None] * inv[None, :]).mean(axis=1)
    if key == "alibi":
        slope = alibi.alibi_slopes(s["n_heads"])[min(int(s["head"]), int(s["n_heads"]) - 1)]
        bias = -slope * np.abs(offsets).astype(np.float64)
        return offsets, np.where((offsets > 0) & bool(s["causal"]), np.nan, bias)
    if key == "t5":
        table = relative.t5_synthetic_bias_table(s["num_buckets"], T5_HEADS)
        kw = dict(bidirectional=bool(s["bidirectional"]), max_distance=s["max_distance"])
        return offsets, relative.t5_bias_curve(table, offsets, **kw)[0]
    if key == "shaw":
        k = checks.positive_int("max_relative_position", s["max_relative_position"])
        return offsets, (np.clip(offsets, -k, k) + k).astype(np.float64)
    _, query = xlnet.xlnet_masks(xlnet.factorisation_order(length, s["seed"]))
    i, j = np.indices(query.shape)
    seen = np.bincount((j - i).ravel() + length - 1, weights=query.ravel(), minlength=offsets.size)
    return offsets, seen / (length - np.abs(offsets))


def _lengths(name: str, values) -> np.ndarray:
    lengths = np.asarray(values)
    if lengths.ndim != 1 or lengths.size == 0 or lengths.dtype.kind not in "iu" or np.any(lengths < 1):
        raise ValueError(f"{name} must be a list of whole numbers of at least 1; got {values!r}")
    return lengths.astype(np.int64)


def unseen_angle_share(steps, train_len: int, inv_freq) -> np.ndarray:
    """For each step x (a position for the sinusoidal table, a distance for RoPE), the share of pairs k whose
    angle x omega_k (mod 2 pi) lies outside the arc the pair swept during training, shape (len(steps),).

    Training visits x = 0 .. T - 1, so pair k has swept the arc [0, (T - 1) omega_k]. A pair with
    (T - 1) omega_k >= 2 pi has seen every angle; a slower pair meets a new angle whenever
    (x omega_k mod 2 pi) > (T - 1) omega_k. Fast pairs repeat; only slow pairs walk into the unknown (the
    "critical dimension" of Liu et al., 2023, "Scaling Laws of RoPE-based Extrapolation").
    """
    x = np.asarray(steps, dtype=np.float64)
    if x.ndim != 1 or np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError("steps must be a list of positions or distances of at least 0")
    t = checks.positive_int("train_len", train_len)
    inv = np.asarray(inv_freq, dtype=np.float64)
    swept = (t - 1) * inv
    angle = np.mod(x[:, None] * inv[None, :], 2 * math.pi)
    return ((swept[None, :] < 2 * math.pi) & (angle > swept[None, :] + 1e-9)).mean(axis=1)


def _pairs_at(length: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets o = j - i of an L x L attention, -(L - 1) .. L - 1, and how many (i, j) pairs have each: L - |o|."""
    offsets = np.arange(-(length - 1), length)
    return offsets, length - np.abs(offsets)


def t5_last_bucket_share(seq_lens, *, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True):
    """Share of the L x L (query, key) pairs whose T5 bucket is the last of its side, for each L in ``seq_lens``.

    The last bucket of a side (num_buckets / 2 - 1 and num_buckets - 1 when bidirectional, num_buckets - 1 when
    causal) collects every distance from ``relative.t5_last_bucket_start`` on, which comes before max_distance
    (91 of 128 for 32 bidirectional buckets; Raffel et al., 2020): the farther the context grows past it, the
    more pairs share one number. Counted over offsets, L - |o| pairs at offset o.
    """
    lengths = _lengths("seq_lens", seq_lens)
    if lengths.max() > checks.MAX_POSITIONS:
        raise ValueError(f"seq_lens must be at most {checks.MAX_POSITIONS:,}; got {lengths.max():,}")
    top = int(lengths.max())
    offsets = np.arange(-(top - 1), top)
    bucket = relative.t5_relative_bucket(
        offsets, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    side = num_buckets // 2 if bidirectional else num_buckets
    last = bucket % side == side - 1
    count = np.clip(lengths[:, None] - np.abs(offsets)[None, :], 0, None)
    return (count * last[None, :]).sum(axis=1) / lengths.astype(np.float64) ** 2


def shaw_clipped_share(seq_lens, max_relative_position: int) -> np.ndarray:
    """Share of the L x L (query, key) pairs farther apart than k, which all share the vectors of distance +-k
    (Shaw et al., 2018): sum over |o| > k of (L - |o|), divided by L^2, which is (L - k - 1)(L - k) / L^2 for L > k."""
    lengths = _lengths("seq_lens", seq_lens)
    k = checks.positive_int("max_relative_position", max_relative_position)
    far = np.clip(lengths - k - 1, 0, None).astype(np.float64)
    return far * (far + 1) / lengths.astype(np.float64) ** 2


def parameter_count(
    key: str, n_positions, *, d_model: int, n_heads: int, n_layers: int = 1, num_buckets: int = 32, k: int = 16
):
    """Learned parameters of the position signal of a whole model of ``n_layers`` layers at context length n, for
    each n in ``n_positions``. Where they live is the registry's ``Family.param_scope``:

    - sinusoidal, RoPE, ALiBi: 0 (formulas, nothing learned).
    - learned: n d, one table added at the input, however many layers follow.
    - T5: num_buckets x n_heads, once: only the first layer of a stack holds the table, and every later layer
      reuses the bias it computes (Raffel et al., 2020; transformers' ``T5Stack`` builds block 0 alone with
      ``has_relative_attention_bias``). An encoder-decoder keeps one table per stack.
    - Shaw: 2 (2k + 1) d_head in every layer: a^K and a^V for offsets -k .. k, shared by the heads (Shaw et al.,
      2018, equations 3 and 4 and section 3.3), d_head = d_model // n_heads.
    - XLNet: (d_model + 1) n_heads d_head in every layer: Transformer-XL's projection W_R of the sinusoids R and
      its position bias v (Dai et al., 2019, section 3.3; ``XLNetRelativeAttention.r`` and ``r_r_bias``), which is
      d_model^2 + d_model when n_heads divides d_model.
    """
    n = _lengths("n_positions", n_positions).astype(np.float64)
    d, h, layers, b, k = _cost_settings(key, d_model, n_heads, n_layers, num_buckets, k)
    d_head = d // h
    count = {
        "learned": n * d,
        "t5": np.full_like(n, b * h),
        "shaw": np.full_like(n, layers * 2 * (2 * k + 1) * d_head),
        "xlnet": np.full_like(n, layers * (d + 1) * h * d_head),
    }
    return count.get(key, np.zeros_like(n))


def stored_floats(
    key: str, n_positions, *, d_model: int, n_heads: int, n_layers: int = 1, num_buckets: int = 32, k: int = 16
):
    """Numbers the position signal of an ``n_layers``-layer model holds at once in a forward pass at context
    length n, as a plain implementation builds them: all its parameters (``parameter_count``) plus what grows
    with n, built once for every layer or by one layer at a time:

    sinusoidal: the table, n d; learned: nothing more (the table is its parameters); RoPE: cos and sin caches of
    n x d_head / 2 each, n d_head; ALiBi: n_heads slopes and the bias added to the scores, n_heads n^2; T5: the
    bias, n_heads n^2, computed once and reused; Shaw: a layer's relative scores q_i . a^K_ij, n_heads n^2;
    XLNet: the sinusoids R of the offsets n .. -(n - 1), 2 n d, and a layer's position scores, n_heads n^2.
    """
    n = _lengths("n_positions", n_positions).astype(np.float64)
    d, h, layers, b, _ = _cost_settings(key, d_model, n_heads, n_layers, num_buckets, k)
    grows = {
        "sinusoidal": n * d,
        "learned": 0.0,
        "rope": n * (d // h),
        "alibi": h + h * n**2,
        "xlnet": 2 * n * d + h * n**2,
    }
    extra = grows.get(key, h * n**2)
    kw = dict(d_model=d, n_heads=h, n_layers=layers, num_buckets=b, k=k)
    return parameter_count(key, n_positions, **kw) + extra


def _cost_settings(key: str, d_model, n_heads, n_layers, num_buckets, k) -> tuple[int, int, int, int, int]:
    checks.choice("family", key, COST_FAMILIES)
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    h = checks.positive_int("n_heads", n_heads, maximum=alibi.MAX_HEADS)
    if h > d:
        raise ValueError(f"{h} heads cannot split a model dimension of {d}: each head needs at least one dimension")
    layers = checks.positive_int("n_layers", n_layers, maximum=1024)
    return d, h, layers, checks.positive_int("num_buckets", num_buckets), checks.positive_int("k", k)


def beyond_training(train_len: int, eval_len: int, params: dict | None = None, *, max_points: int = 2048) -> dict:
    """What each family does from step 0 to ``eval_len`` - 1 after training on ``train_len`` positions; a dict
    family -> ``(steps, values)`` with at most ``max_points`` evenly spaced steps (always the first and last):

    - sinusoidal: ``unseen_angle_share`` by position (new absolute angles: vectors the model never saw);
    - rope: ``unseen_angle_share`` by distance (new rotation angles between query and key);
    - learned: 0 where a row exists (p < T) and NaN past the table, where the lookup fails;
    - alibi: the bias -m_h d of head ``head`` by distance d: the same straight line, long or short;
    - t5: the synthetic bias by distance: flat from ``relative.t5_last_bucket_start`` on (before max_distance),
      every far key in the last bucket.

    ``params`` maps a family to its registry parameters (defaults otherwise).
    """
    t = checks.positive_int("train_len", train_len, maximum=checks.MAX_POSITIONS)
    e = checks.positive_int("eval_len", eval_len, maximum=checks.MAX_POSITIONS)
    params = params or {}
    steps = np.unique(np.round(np.linspace(0, e - 1, min(e, max_points))).astype(np.int64))
    sin_settings, rope_settings = (
        _settings("sinusoidal", params.get("sinusoidal")),
        _settings("rope", params.get("rope")),
    )
    omega = sinusoidal.sinusoidal_frequencies(sin_settings["d_model"], base=sin_settings["base"])
    theta, _ = rope.rope_inv_freq(rope_settings["head_dim"], base=rope_settings["base"])
    a, t5 = _settings("alibi", params.get("alibi")), _settings("t5", params.get("t5"))
    slope = alibi.alibi_slopes(a["n_heads"])[min(int(a["head"]), int(a["n_heads"]) - 1)]
    table = relative.t5_synthetic_bias_table(t5["num_buckets"], T5_HEADS)
    kw = dict(bidirectional=bool(t5["bidirectional"]), max_distance=t5["max_distance"])
    return {
        "sinusoidal": (steps, unseen_angle_share(steps, t, omega)),
        "learned": (steps, np.where(steps < t, 0.0, np.nan)),
        "rope": (steps, unseen_angle_share(steps, t, theta)),
        "alibi": (steps, -slope * steps.astype(np.float64)),
        "t5": (steps, relative.t5_bias_curve(table, -steps, **kw)[0]),
    }


def learned_past_end(train_len: int, eval_len: int) -> str:
    """The IndexError a learned table of ``train_len`` rows gives for position ``eval_len`` - 1, or "" when the
    position is inside the table."""
    t = checks.positive_int("train_len", train_len, maximum=checks.MAX_POSITIONS)
    e = checks.positive_int("eval_len", eval_len, maximum=checks.MAX_POSITIONS)
    return learned.lookup_error(t, e - 1) if e > t else ""


#: Rows of the family map: what a term depends on, with the offset split by whether the tokens take part too.
SIGNALS = ("position", "offset_content", "offset", "order")


def signal(term: Term) -> str:
    """The map row of a term: "offset_content" for an offset term that also depends on the query or key (RoPE,
    Shaw's q_i . a^K, Transformer-XL's), "offset" for one that does not (ALiBi, T5), otherwise what it depends on."""
    if term.depends_on == "offset":
        return "offset_content" if term.content else "offset"
    return term.depends_on


def family_cells() -> list[tuple[int, int, list[tuple[str, int]]]]:
    """Every term of every registry family (``Family.terms``), grouped by where it enters (index into ``STAGES``)
    and what it depends on (index into ``SIGNALS``): ``(stage, signal, [(family key, term index), ...])``, in
    registry order. Term 0 is a family's position code; Shaw's value term and XLNet's factorisation-order mask
    (not a position code) are terms 1."""
    cells: dict[tuple[int, int], list[tuple[str, int]]] = {}
    for fam in FAMILIES.values():
        for index, term in enumerate(fam.terms):
            cells.setdefault((STAGES.index(term.stage), SIGNALS.index(signal(term))), []).append((fam.key, index))
    return [(x, y, terms) for (x, y), terms in cells.items()]
