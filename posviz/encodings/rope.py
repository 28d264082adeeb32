"""Rotary position embedding (RoPE; Su et al., 2021, "RoFormer: Enhanced Transformer with Rotary Position
Embedding") and its context-extension scalings.

RoPE splits a query or key of size d into d/2 pairs and turns pair i by the angle m * theta_i at position m,

    theta_i = base^(-2i / d),   i = 0 .. d/2 - 1,

so the score q_m . k_n depends on the positions only through m - n. A scaling changes the theta_i (and
sometimes multiplies cos/sin by an attention factor) so a model trained on a short context reads a longer one:

    linear    position interpolation, theta_i / factor                 (Chen et al., 2023, arXiv:2306.15595)
    dynamic   NTK-aware base growth with the current length             (bloc97 / emozilla, 2023)
    yarn      per-pair ramp between interpolation and extrapolation     (Peng et al., 2023, arXiv:2309.00071)
    longrope  per-pair rescale factors, short and long sets             (Ding et al., 2024, arXiv:2402.13753)
    llama3    wavelength bands: keep, smooth, interpolate               (Meta, Llama 3.1, 2024)

Parameters, defaults and edge cases follow the reference implementation in Hugging Face transformers
(``modeling_rope_utils``), computed here in float64.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..base import checks

ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
LAYOUTS = ("half", "interleaved")


#: transformers' config check lets fully rotated odd heads of at most this size through (tiny test models).
ODD_HEAD_DIM_ALLOWED_UP_TO = 4

#: The message transformers 5.24 raises for a fully rotated odd head (``validate_rope`` in modeling_rope_utils.py),
#: with ``{head_dim}``, ``{partial_rotary_factor}`` and ``{layer_type}`` to fill in.
TRANSFORMERS_ODD_MESSAGE = (
    "RoPE requires an even rotary dimension, but got `head_dim`={head_dim} with "
    "`partial_rotary_factor`={partial_rotary_factor} for `{layer_type}`."
)


def refuses_odd_head(head_dim: int, partial_rotary_factor: float = 1.0) -> bool:
    """Whether transformers 5.24 refuses this head at config validation: head_dim odd, larger than 4, and every
    dimension rotated (int(head_dim * partial_rotary_factor) == head_dim). An odd *partial* rotary dimension is
    rounded up to whole pairs instead, and heads of at most 4 dimensions are let through."""
    return (
        head_dim > ODD_HEAD_DIM_ALLOWED_UP_TO
        and head_dim % 2 == 1
        and int(head_dim * partial_rotary_factor) == head_dim
    )


def rotated_dim(head_dim, partial_rotary_factor) -> int:
    """The rotated dimension d = int(head_dim * partial_rotary_factor), as transformers computes it. d may be odd:
    its frequencies are base^(-arange(0, d, 2) / d), ceil(d / 2) of them, so it is rounded up to whole pairs."""
    head_dim = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    prf = checks.positive_float("partial_rotary_factor", partial_rotary_factor)
    if prf > 1.0:
        raise ValueError(f"partial_rotary_factor is the fraction of head_dim that rotates, at most 1; got {prf}")
    dim = int(head_dim * prf)
    if refuses_odd_head(head_dim, prf):
        raise ValueError(
            f"RoPE turns dimensions in pairs, so a head that rotates all of its dimensions needs an even head_dim; "
            f"got head_dim {head_dim} (partial_rotary_factor {prf:g}). transformers refuses such a config too "
            '("RoPE requires an even rotary dimension"). Use an even head_dim, or rotate only part of the head '
            "(partial_rotary_factor < 1: an odd rotated part is rounded up to whole pairs)."
        )
    if dim < 1:
        raise ValueError(
            f"head_dim x partial_rotary_factor = {head_dim} x {prf:g} = {head_dim * prf:g} rounds down to 0, so no "
            f"dimension would rotate; partial_rotary_factor must be at least 1/{head_dim}"
        )
    return dim


def _default_inv_freq(dim: int, base: float) -> np.ndarray:
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)


def _number(params: dict, key: str, default=None, *, required: bool = False, positive: bool = True):
    value = params.get(key, default)
    if value is None:
        if required:
            raise ValueError(f"rope scaling of type {params['rope_type']!r} needs {key!r}")
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"rope scaling {key!r} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"rope scaling {key!r} must be greater than 0, got {value!r}")
    return float(value)


def _original_max(params: dict, max_position_embeddings) -> float:
    value = params.get("original_max_position_embeddings", max_position_embeddings)
    if value is None:
        raise ValueError(
            f"rope scaling of type {params['rope_type']!r} needs original_max_position_embeddings "
            "(or max_position_embeddings to default it to)"
        )
    return _number({"v": value, "rope_type": params["rope_type"]}, "v")


def _linear(inv, dim, base, p, max_pos, seq_len):
    """Position interpolation: theta_i / factor, i.e. positions squeezed by ``factor``."""
    return inv / _number(p, "factor", required=True), 1.0


def _dynamic(inv, dim, base, p, max_pos, seq_len):
    """Dynamic NTK: base' = base * (factor * L / L_max - (factor - 1))^(d / (d - 2)), L = max(seq_len, L_max)
    (see ``dynamic_ntk_scale``)."""
    factor = _number(p, "factor", required=True)
    if max_pos is None:
        raise ValueError("dynamic rope scaling needs max_position_embeddings, the length it starts scaling at")
    if dim == 2:
        raise ValueError("dynamic NTK scaling raises the base to d / (d - 2), so the rotated dimension must exceed 2")
    new_base = base * float(dynamic_ntk_scale(seq_len or max_pos, factor, max_pos)) ** (dim / (dim - 2))
    if not new_base > 0:
        raise ValueError(f"dynamic rope scaling gives a non-positive base ({new_base:g}); check factor={factor:g}")
    return _default_inv_freq(dim, new_base), 1.0


def _yarn(inv, dim, base, p, max_pos, seq_len):
    """YaRN: ramp from extrapolation (fast pairs) to interpolation by ``factor`` (slow pairs), and an attention
    factor 0.1 ln(factor) + 1 (or the mscale / mscale_all_dim ratio)."""
    original = _original_max(p, max_pos)
    factor = _number(p, "factor")
    if factor is None:
        if max_pos is None:
            raise ValueError("yarn rope scaling needs factor (or max_position_embeddings to derive it)")
        factor = max_pos / original
    attention_factor = _number(p, "attention_factor")
    mscale, mscale_all_dim = _number(p, "mscale", positive=False), _number(p, "mscale_all_dim", positive=False)

    def get_mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim)
        else:
            attention_factor = get_mscale(factor)
    beta_fast = p.get("beta_fast") or 32
    beta_slow = p.get("beta_slow") or 1
    beta_fast = _number({"beta_fast": beta_fast, "rope_type": "yarn"}, "beta_fast")
    beta_slow = _number({"beta_slow": beta_slow, "rope_type": "yarn"}, "beta_slow")

    def correction_dim(rotations):
        # the pair index whose wavelength fits ``rotations`` turns into the original context
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if p.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    # transformers builds the ramp over dim // 2 pairs: one fewer than the frequencies of an odd rotated dimension
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    if ramp.size not in (1, inv.size):
        raise ValueError(
            f"YaRN blends each pair along a ramp over rotated_dim // 2 = {ramp.size} pairs, but the odd rotated "
            f"dimension {dim} has {inv.size} frequencies, so the two do not line up (transformers fails on it too); "
            "choose a head_dim and partial_rotary_factor whose product is even"
        )
    extrapolation = 1.0 - ramp
    return inv / factor * (1.0 - extrapolation) + inv * extrapolation, float(attention_factor)


def _longrope(inv, dim, base, p, max_pos, seq_len):
    """LongRoPE: theta_i / ext_i with per-pair factors, ``long_factor`` past the original length and
    ``short_factor`` within it; attention factor sqrt(1 + ln(factor) / ln(L_orig))."""
    original = _original_max(p, max_pos)
    factor = _number(p, "factor")
    if factor is None:
        factor = 1.0 if max_pos is None else max_pos / original
    attention_factor = _number(p, "attention_factor")
    if attention_factor is None:
        attention_factor = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    key = "long_factor" if seq_len and seq_len > original else "short_factor"
    ext = p.get(key)
    if ext is None:
        raise ValueError(f"longrope rope scaling needs {key!r}, one factor per rotated pair ({inv.size})")
    try:
        ext = np.asarray(ext, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"longrope {key!r} must be a list of numbers") from None
    if ext.shape != inv.shape or not np.all(np.isfinite(ext)) or np.any(ext <= 0):
        raise ValueError(
            f"longrope {key!r} must hold {inv.size} positive numbers (one per rotated pair); got shape {ext.shape}"
        )
    return inv / ext, float(attention_factor)


def _llama3(inv, dim, base, p, max_pos, seq_len):
    """Llama 3.1: pairs whose wavelength is longer than L_orig / low_freq_factor are divided by ``factor``,
    pairs shorter than L_orig / high_freq_factor are kept, and those in between are blended smoothly."""
    factor = _number(p, "factor", required=True)
    low_freq_factor = _number(p, "low_freq_factor", required=True)
    high_freq_factor = _number(p, "high_freq_factor", required=True)
    if high_freq_factor < low_freq_factor:
        raise ValueError(
            f"llama3 rope scaling needs high_freq_factor >= low_freq_factor; got {high_freq_factor:g} "
            f"and {low_freq_factor:g}"
        )
    old_context = _original_max(p, max_pos)
    low_freq_wavelen, high_freq_wavelen = old_context / low_freq_factor, old_context / high_freq_factor
    wavelen = 2 * math.pi / inv
    scaled = np.where(wavelen > low_freq_wavelen, inv / factor, inv)
    # equal factors (Llama 4 Scout: 1 and 1) leave no band to blend: every pair is either kept or divided
    with np.errstate(divide="ignore", invalid="ignore"):
        smooth = (old_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen)
    return np.where(medium, smoothed, scaled), 1.0


_SCALINGS = {
    "default": lambda inv, dim, base, p, max_pos, seq_len: (inv, 1.0),
    "linear": _linear,
    "dynamic": _dynamic,
    "yarn": _yarn,
    "longrope": _longrope,
    "llama3": _llama3,
}


def normalize_scaling(scaling: dict | None) -> dict:
    """A copy of a Hugging-Face-style ``rope_scaling`` / ``rope_parameters`` dict with ``rope_type`` set.

    The legacy key ``"type"`` is accepted; a missing type means ``"default"``. An unknown type raises a
    ValueError that names the supported ones.
    """
    if scaling is None:
        return {"rope_type": "default"}
    if not isinstance(scaling, dict):
        raise ValueError(
            f"rope scaling must be a dict such as {{'rope_type': 'linear', 'factor': 2.0}}; got {scaling!r}"
        )
    params = dict(scaling)
    params["rope_type"] = params.get("rope_type", params.get("type", "default")) or "default"
    if params["rope_type"] not in _SCALINGS:
        raise ValueError(
            f"unknown rope scaling type {params['rope_type']!r}; supported types are {', '.join(ROPE_TYPES)}"
        )
    return params


def rope_inv_freq(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: dict | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> tuple[np.ndarray, float]:
    """RoPE inverse frequencies and attention factor: ``(inv_freq, attention_factor)``.

    Without scaling, inv_freq[i] = base^(-2i / d) for i = 0 .. ceil(d/2) - 1 (Su et al., 2021), where
    d = int(head_dim * partial_rotary_factor) is the rotated dimension, exactly as transformers computes it
    (``base ** (arange(0, d, 2) / d)``): an odd d (64 x 0.05 -> 3) gets ceil(d/2) frequencies with the exponent
    over d itself (base^0, base^(-2/3)), so 2 ceil(d/2) dimensions turn. Like transformers 5.24's config check, a
    fully rotated odd head_dim above 4 is refused (``refuses_odd_head``), and so is a d that rounds down to 0.

    ``scaling`` is a Hugging-Face-style dict
    (``{"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}``; ``"type"`` is accepted
    too; ``"rope_theta"`` and ``"partial_rotary_factor"`` inside it override the keyword arguments) for the types
    in ROPE_TYPES, with the parameters and defaults of transformers' ``ROPE_INIT_FUNCTIONS``:

    - linear: ``factor``. inv_freq / factor.
    - dynamic: ``factor``; uses ``max_position_embeddings`` and ``seq_len`` (``dynamic_ntk_scale``).
    - yarn: ``factor``, ``original_max_position_embeddings``, optional ``attention_factor``, ``beta_fast`` (32),
      ``beta_slow`` (1), ``mscale``, ``mscale_all_dim``, ``truncate`` (True).
    - longrope: ``short_factor``, ``long_factor``, ``original_max_position_embeddings``, optional ``factor``
      and ``attention_factor``; the long set is used when ``seq_len`` exceeds the original length.
    - llama3: ``factor``, ``low_freq_factor``, ``high_freq_factor``, ``original_max_position_embeddings``.

    ``attention_factor`` multiplies cos and sin (YaRN's and LongRoPE's temperature); it is 1 for the others.
    """
    params = normalize_scaling(scaling)
    base = checks.positive_float("base", params.get("rope_theta", base), minimum_exclusive=1.0)
    dim = rotated_dim(head_dim, params.get("partial_rotary_factor", partial_rotary_factor))
    if max_position_embeddings is not None:
        max_position_embeddings = checks.positive_int("max_position_embeddings", max_position_embeddings)
    if seq_len is not None:
        seq_len = checks.positive_int("seq_len", seq_len)
    inv, attention_factor = _SCALINGS[params["rope_type"]](
        _default_inv_freq(dim, base), dim, base, params, max_position_embeddings, seq_len
    )
    inv = np.asarray(inv, dtype=np.float64)
    if inv.size == 0:
        raise ValueError(f"{params['rope_type']} rope scaling leaves no frequency for a rotated dimension of {dim}")
    return inv, float(attention_factor)


def rope_wavelength(inv_freq) -> np.ndarray:
    """Positions per full turn of each pair, 2 pi / theta_i."""
    return 2 * math.pi / np.asarray(inv_freq, dtype=np.float64)


def rope_cos_sin(positions, inv_freq, *, attention_factor: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of the angles m * theta_i, shape (len(positions), len(inv_freq)), times ``attention_factor``."""
    pos = np.asarray(positions, dtype=np.float64)
    inv = np.asarray(inv_freq, dtype=np.float64)
    if pos.ndim != 1:
        raise ValueError(f"positions must be a 1-D sequence of positions; got shape {pos.shape}")
    if inv.ndim != 1 or inv.size == 0:
        raise ValueError(f"inv_freq must be a non-empty 1-D array (one frequency per pair); got shape {inv.shape}")
    angles = pos[:, None] * inv[None, :]
    return np.cos(angles) * attention_factor, np.sin(angles) * attention_factor


def apply_rope(x, positions, inv_freq, *, layout: str = "half", attention_factor: float = 1.0) -> np.ndarray:
    """Rotate the last axis of ``x`` (..., seq, head_dim) by RoPE (Su et al., 2021).

    Pair i, with frequency inv_freq[i], is turned by the angle positions[m] * inv_freq[i]:

        (a, b) -> (a cos - b sin, b cos + a sin)

    ``layout="half"`` pairs dimension i with i + r/2 (GPT-NeoX ``rotate_half``, and transformers' port of LLaMA,
    whose conversion permutes Meta's q/k weights so that it can use ``rotate_half``); ``layout="interleaved"``
    pairs 2i with 2i + 1 (GPT-J ``rotate_every_two``, RoFormer, and Meta's reference LLaMA code, which multiplies
    adjacent pairs as complex numbers). r = 2 * len(inv_freq) dimensions rotate (an odd rotated dimension is
    rounded up to whole pairs, as transformers' GPT-NeoX rotates ``cos.shape[-1]`` dimensions); any further
    dimensions (partial rotary) pass through unchanged. Returns float64.
    """
    checks.choice("layout", layout, LAYOUTS)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"x must have shape (..., seq, head_dim); got shape {x.shape}")
    head_dim, pairs = x.shape[-1], np.size(inv_freq)
    if 2 * pairs > head_dim:
        why = (
            f"head_dim {head_dim} is odd, and RoPE rotates pairs of dimensions, so it must be even"
            if head_dim % 2
            else f"inv_freq has {pairs} pairs but head_dim {head_dim} holds only {head_dim // 2}"
        )
        raise ValueError(f"cannot apply RoPE: {why}")
    positions = np.asarray(positions)
    if positions.shape != (x.shape[-2],):
        raise ValueError(
            f"positions must hold one entry per sequence element ({x.shape[-2]}); got shape {positions.shape}"
        )
    cos, sin = rope_cos_sin(positions, inv_freq, attention_factor=attention_factor)
    out = x.copy()
    if layout == "half":
        a, b = x[..., :pairs], x[..., pairs : 2 * pairs]
        out[..., :pairs] = a * cos - b * sin
        out[..., pairs : 2 * pairs] = b * cos + a * sin
    else:
        a, b = x[..., 0 : 2 * pairs : 2], x[..., 1 : 2 * pairs : 2]
        out[..., 0 : 2 * pairs : 2] = a * cos - b * sin
        out[..., 1 : 2 * pairs : 2] = b * cos + a * sin
    return out


def interleaved_to_half(rotated_dim: int) -> np.ndarray:
    """The permutation p with ``x_half = x_interleaved[..., p]``: interleaved pair (2i, 2i + 1) becomes half pair
    (i, i + r/2). Then ``apply_rope(x, ..., layout="interleaved")[..., p] == apply_rope(x[..., p], ...,
    layout="half")``, which is how interleaved checkpoints (GPT-J, Meta's LLaMA) are converted to half-split code
    (transformers' LLaMA: its weight conversion permutes the rows of every head's query and key projections this
    way)."""
    r = checks.positive_int("rotated_dim", rotated_dim, maximum=checks.MAX_DIM)
    if r % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions, so the rotated dimension must be even; got {r}")
    return np.concatenate([np.arange(0, r, 2), np.arange(1, r, 2)])


def rope_scores(q, k, inv_freq, *, layout: str = "half", q_positions=None, k_positions=None) -> np.ndarray:
    """Attention logits between one rotated query vector and one rotated key vector at every pair of positions.

    Returns S with S[m, n] = RoPE(q, m) . RoPE(k, n). It depends only on m - n (Su et al., 2021, section 3.4).
    """
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.ndim != 1 or q.shape != k.shape:
        raise ValueError(f"q and k must be vectors of the same length; got shapes {q.shape} and {k.shape}")
    qp = np.arange(16) if q_positions is None else np.asarray(q_positions)
    kp = qp if k_positions is None else np.asarray(k_positions)
    rq = apply_rope(np.broadcast_to(q, (qp.size, q.size)), qp, inv_freq, layout=layout)
    rk = apply_rope(np.broadcast_to(k, (kp.size, k.size)), kp, inv_freq, layout=layout)
    return rq @ rk.T


def _query_key(head_dim: int, seed: int | None) -> tuple[np.ndarray, np.ndarray]:
    if seed is None:
        return np.ones(head_dim), np.ones(head_dim)
    q, k = np.random.default_rng(int(seed)).standard_normal((2, head_dim))
    return q, k


def rope_score_matrix(
    n_positions: int, head_dim: int, *, base: float = 10000.0, layout: str = "half", seed: int | None = None
) -> np.ndarray:
    """S[m, n] = RoPE(q, m) . RoPE(k, n) / head_dim, shape (n_positions, n_positions).

    With ``seed=None``, q = k = (1, ..., 1): each pair contributes (cos a_m - sin a_m)(cos a_n - sin a_n) +
    (sin a_m + cos a_m)(sin a_n + cos a_n) = 2 cos((m - n) theta_i), so S[m, n] = mean_i cos((m - n) theta_i):
    the same along every diagonal, equal to 1 at m = n and decaying with |m - n| (Su et al., 2021, section 3.4.3).
    With a ``seed``, q and k are drawn from N(0, 1) by ``numpy.random.default_rng(seed)``; S still depends on
    m - n only.
    """
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    if n > 8192:
        raise ValueError(f"a score matrix of {n:,} positions is too large to draw; use at most 8,192")
    inv, _ = rope_inv_freq(head_dim, base=base)
    q, k = _query_key(int(head_dim), seed)
    return rope_scores(q, k, inv, layout=layout, q_positions=np.arange(n)) / int(head_dim)


def rope_shifted_scores(
    n_positions: int, head_dim: int, shift: int, *, base: float = 10000.0, seed: int | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(S, S_shifted, max_abs_diff)`` with S[m, n] as in ``rope_score_matrix`` and S_shifted[m, n] the score
    with both positions moved by ``shift``, S[m + s, n + s].

    Since R(m theta)^T R(n theta) = R((n - m) theta), the two are equal up to rounding (Su et al., 2021,
    eq. 16); ``max_abs_diff`` = max |S_shifted - S| measures that rounding.
    """
    n = checks.positive_int("n_positions", n_positions, maximum=8192)
    s = checks.positive_int("shift", shift, maximum=checks.MAX_POSITIONS)
    inv, _ = rope_inv_freq(head_dim, base=base)
    q, k = _query_key(int(head_dim), seed)
    scores = rope_scores(q, k, inv, q_positions=np.arange(n)) / int(head_dim)
    shifted = rope_scores(q, k, inv, q_positions=np.arange(n) + s) / int(head_dim)
    return scores, shifted, float(np.max(np.abs(shifted - scores)))


def rope_pair_trajectory(q, positions, inv_freq, pairs, *, layout: str = "half") -> np.ndarray:
    """The rotated coordinates (a', b') of the chosen ``pairs`` of ``q`` at every position, shape
    (len(positions), len(pairs), 2).

    Pair i of a vector rotated by ``apply_rope`` at position m: (a', b') = R(m theta_i) (a, b), read back from the
    dimensions the layout assigns to it (i and i + r/2 for "half", 2i and 2i + 1 for "interleaved").
    """
    q = np.asarray(q, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    pairs = np.asarray(pairs, dtype=np.int64)
    r = 2 * np.size(inv_freq)
    if q.ndim != 1:
        raise ValueError(f"q must be one vector of size head_dim; got shape {q.shape}")
    if pairs.ndim != 1 or pairs.size == 0 or pairs.min() < 0 or pairs.max() >= r // 2:
        raise ValueError(f"pairs must be indices between 0 and {r // 2 - 1} (one per rotated pair); got {pairs}")
    rotated = apply_rope(np.broadcast_to(q, (positions.size, q.size)), positions, inv_freq, layout=layout)
    first, second = (pairs, pairs + r // 2) if layout == "half" else (2 * pairs, 2 * pairs + 1)
    return np.stack([rotated[:, first], rotated[:, second]], axis=-1)


def rope_decay_bound(distances, head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    """RoFormer's relative upper bound of the score at relative distance r = m - n (Su et al., 2021, 3.4.3):

        (1 / (d/2)) * sum_{j=1}^{d/2} |S_j|,   S_j = sum_{i=0}^{j-1} exp(1j * r * theta_i),

    from Abel summation of sum_i h_i exp(1j r theta_i): the score is at most max_i |h_{i+1} - h_i| sum_j |S_j|,
    and this average of |S_j| decays as r grows. Equals d/4 + 1/2 at r = 0.
    """
    r = np.asarray(distances, dtype=np.float64)
    if r.ndim != 1:
        raise ValueError(f"distances must be a 1-D sequence; got shape {r.shape}")
    inv, _ = rope_inv_freq(head_dim, base=base)
    partial_sums = np.cumsum(np.exp(1j * r[:, None] * inv[None, :]), axis=1)
    return np.abs(partial_sums).mean(axis=1)


#: Distances per block when ``rope_decay_profile`` evaluates the bound at every integer distance.
DECAY_BLOCK = 2048


def rope_decay_profile(
    max_distance: int, head_dim: int, *, base: float = 10000.0, points: int = 1024, horizon: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(distances, bound, envelope)`` for reading RoFormer's decay: at most ``points`` integer distances r from 0
    to ``max_distance`` (all of them when they fit, else 0 and geometrically spaced ones from 1, so that a log axis
    shows the near distances, where most of the decay happens, as finely as the far ones), the bound B(r) of
    ``rope_decay_bound`` at each, and its upper envelope

        E(r) = max { B(r') : r <= r' <= horizon },   horizon = 2 max_distance unless given,

    the largest value the bound takes at r or at any farther distance up to the horizon. B oscillates as the
    partial sums S_j turn, so two distances a few tokens apart can differ a lot; E never rises and says what the
    decay means: past distance r no score can exceed E(r) times max_i |h_{i+1} - h_i| (Su et al., 2021, section
    3.4.3), as far as the horizon. The horizon lies beyond the last distance shown so that E does not drop at the
    end of the plot only because fewer distances are left to take the maximum over. E is taken over every integer
    distance (evaluated ``DECAY_BLOCK`` distances at a time), so a peak between two shown distances is not missed.
    """
    reach = checks.positive_int("max_distance", max_distance, maximum=checks.MAX_POSITIONS)
    points = checks.positive_int("points", points)
    horizon = 2 * reach if horizon is None else checks.positive_int("horizon", horizon, maximum=4 * reach)
    if horizon < reach:
        raise ValueError(f"the horizon of the envelope ({horizon:,}) must reach the largest distance ({reach:,})")
    starts = range(0, horizon + 1, DECAY_BLOCK)
    every = np.concatenate(
        [rope_decay_bound(np.arange(a, min(a + DECAY_BLOCK, horizon + 1)), head_dim, base=base) for a in starts]
    )
    envelope = np.maximum.accumulate(every[::-1])[::-1]
    if reach + 1 <= points:
        distances = np.arange(reach + 1)
    else:
        distances = np.unique(np.round(np.geomspace(1, reach, points - 1)).astype(np.int64))
        distances = np.concatenate([[0], distances])
    return distances, every[distances], envelope[distances]


def ntk_scaled_base(base: float, factor: float, rotated_dim: int) -> float:
    """The static "NTK-aware" base for a context ``factor`` times longer: base' = base * factor^(d / (d - 2)).

    With theta_i' = base'^(-2i/d) = theta_i * factor^(-2i / (d - 2)) the fastest pair (i = 0) is kept and the
    slowest (i = d/2 - 1) is slowed by exactly ``factor``, as position interpolation would do (bloc97, 2023,
    "NTK-Aware Scaled RoPE", r/LocalLLaMA). Not a transformers rope type; ``dynamic`` applies it with a factor
    that grows with the current length.
    """
    base = checks.positive_float("base", base, minimum_exclusive=1.0)
    factor = checks.positive_float("factor", factor)
    dim = checks.positive_int("rotated_dim", rotated_dim, maximum=checks.MAX_DIM)
    if dim < 4 or dim % 2:
        raise ValueError(
            f"the NTK base raises factor to d / (d - 2), so the rotated dimension must be even and > 2; got {dim}"
        )
    return base * factor ** (dim / (dim - 2))


def dynamic_ntk_scale(seq_len, factor: float, max_position_embeddings: int) -> np.ndarray:
    """The NTK scale that dynamic scaling applies when the text read so far is ``seq_len`` tokens long:

        s_eff = factor * L / L_max - (factor - 1) = 1 + factor * (L / L_max - 1),   L = max(seq_len, L_max),

    with L_max = ``max_position_embeddings`` (transformers' ``_compute_dynamic_ntk_parameters``; bloc97 and
    emozilla, 2023). The base becomes base * s_eff^(d / (d - 2)), the static NTK-aware base of ``ntk_scaled_base``
    for the factor s_eff, so for an even rotated dimension the fastest pair is kept and the slowest slowed by exactly
    s_eff. ``factor`` is not the context extension: it is how fast s_eff grows, 1 at L_max and then ``factor``
    more for every further L_max tokens. With factor 1, s_eff = L / L_max, the stretch of the text itself (at
    s L_max exactly s); with factor s it reaches s^2 - s + 1 there. Vectorised over ``seq_len``.
    """
    factor = checks.positive_float("factor", factor)
    max_pos = checks.positive_int("max_position_embeddings", max_position_embeddings)
    length = np.asarray(seq_len, dtype=np.float64)
    if not np.all(np.isfinite(length)) or np.any(length < 1):
        raise ValueError(f"seq_len must hold lengths of at least 1 token; got {seq_len!r}")
    return factor * np.maximum(length, max_pos) / max_pos - (factor - 1)


#: How a scaling treats each pair, by the ratio theta_scaled / theta_original (see ``classify_pairs``).
PAIR_CLASSES = ("kept", "blended", "interpolated", "beyond", "faster")


def classify_pairs(inv_scaled, inv_original, factor: float, *, rtol: float = 1e-3) -> np.ndarray:
    """One code per pair, an index into PAIR_CLASSES, from the ratio rho_i = theta_scaled_i / theta_i:

    kept (0): rho ~ 1, the pair turns as in training and extrapolates to the longer context;
    blended (1): 1/factor < rho < 1, between the two;
    interpolated (2): rho ~ 1/factor, positions squeezed as in position interpolation (Chen et al., 2023);
    beyond (3): rho < 1/factor, slowed more than the context grew;
    faster (4): rho > 1.
    "~" means |ln rho - ln target| <= rtol.
    """
    scaled = np.asarray(inv_scaled, dtype=np.float64)
    original = np.asarray(inv_original, dtype=np.float64)
    if scaled.shape != original.shape:
        raise ValueError(
            f"scaled and original frequencies must have the same shape; got {scaled.shape} and {original.shape}"
        )
    factor = checks.positive_float("factor", factor)
    log_ratio = np.log(scaled / original)
    kept = np.abs(log_ratio) <= rtol
    interpolated = np.abs(log_ratio + np.log(factor)) <= rtol
    codes = np.select(
        [kept, interpolated, log_ratio > 0, log_ratio < -np.log(factor)],
        [0, 2, 4, 3],
        default=1,
    )
    return codes.astype(np.int64)


def layout_pair_index(rotated_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The pair each dimension belongs to: ``(interleaved, half)``, i.e. j // 2 and j mod (r/2) for j < r."""
    r = interleaved_to_half(rotated_dim).size
    dims = np.arange(r)
    return dims // 2, dims % (r // 2)


def rope_layout_check(
    head_dim: int, n_positions: int, *, base: float = 10000.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(A, B, max |A - B|)`` with A = apply_rope(x, layout="interleaved")[..., p] and
    B = apply_rope(x[..., p], layout="half") for a random x ~ N(0, 1) of shape (n_positions, head_dim) from
    ``numpy.random.default_rng(seed)`` and p = ``interleaved_to_half(head_dim)``: A = B, so the two layouts differ
    only by a fixed permutation of the dimensions."""
    n = checks.positive_int("n_positions", n_positions, maximum=8192)
    inv, _ = rope_inv_freq(head_dim, base=base)
    perm = interleaved_to_half(int(head_dim))
    x = np.random.default_rng(int(seed)).standard_normal((n, int(head_dim)))
    positions = np.arange(n)
    interleaved_then_permuted = apply_rope(x, positions, inv, layout="interleaved")[:, perm]
    permuted_then_half = apply_rope(x[:, perm], positions, inv, layout="half")
    return (
        interleaved_then_permuted,
        permuted_then_half,
        float(np.max(np.abs(interleaved_then_permuted - permuted_then_half))),
    )


def partial_rotary_table(
    n_positions: int, head_dim: int, partial_rotary_factor: float, *, base: float = 10000.0, layout: str = "half"
) -> tuple[np.ndarray, np.ndarray]:
    """``(table, rotates)``: the all-ones vector rotated at positions 0 .. n - 1, shape (n, head_dim), and a
    boolean per dimension, True for the r dimensions that turn: int(head_dim * partial_rotary_factor) rounded up to
    whole pairs, as transformers' GPT-NeoX rotates them.

    Rotated dimensions follow cos(m theta_i) -/+ sin(m theta_i); the other head_dim - r pass through as 1
    (GPT-NeoX ``rotary_pct``, transformers ``partial_rotary_factor``).
    """
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    inv, _ = rope_inv_freq(head_dim, base=base, partial_rotary_factor=partial_rotary_factor)
    table = apply_rope(np.ones((n, int(head_dim))), np.arange(n), inv, layout=layout)
    return table, np.arange(int(head_dim)) < 2 * inv.size


def pair_dimensions(head_dim: int, rotary_dim: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The two dimensions of each rotary pair inside a head, ``(first, second)``, pair i turning at theta_i:
    half-split (LLaMA's ``rotate_half``) pairs dim i with i + r/2 among the first r = ``rotary_dim`` dims,
    interleaved (GPT-J's ``rotate_every_two``) pairs 2i with 2i + 1. Dims r .. head_dim - 1 do not rotate."""
    if rotary_dim % 2 or not 2 <= rotary_dim <= head_dim:
        raise ValueError(f"rotary_dim must be even and between 2 and head_dim = {head_dim}; got {rotary_dim}")
    i = np.arange(rotary_dim // 2)
    if layout == "half":
        return i, i + rotary_dim // 2
    if layout == "interleaved":
        return 2 * i, 2 * i + 1
    raise ValueError(f"layout must be 'half' or 'interleaved'; got {layout!r}")
