"""Myth or fact: claims from four practitioner articles on positional encodings, each checked by computation.

Every claim is a ``Claim`` record: a short id, the article(s) it comes from (``"001"`` is
``/work/shared/reference/001_*.txt`` of the posviz sources), the parameters of its check and the function that
computes the evidence. A check returns an ``Evidence``: a verdict code, the numbers the verdict rests on and the
arrays its figure draws. Verdict codes:

    holds   the claim is right as stated
    wrong   the computation contradicts it
    partly  it holds only under a condition that the claim leaves out
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from . import precision
from .analysis import cosine_similarity_matrix, evenly_spaced, row_norms
from .encodings import _checks
from .encodings.alibi import alibi_slopes, article_slopes
from .encodings.learned import example_table
from .encodings.rope import apply_rope, rope_inv_freq
from .encodings.sinusoidal import diagonal_spread, shift_matrix, shift_residual, sinusoidal, sinusoidal_frequencies

VERDICTS = ("holds", "wrong", "partly")


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What a check found: ``verdict`` (one of VERDICTS), ``numbers`` (name -> number or string, the values a
    verdict sentence quotes) and ``arrays`` (name -> array, what the figure draws)."""

    verdict: str
    numbers: dict
    arrays: dict

    @property
    def nbytes(self) -> int:
        return sum(np.asarray(a).nbytes for a in self.arrays.values())


@dataclasses.dataclass(frozen=True)
class Claim:
    """One checkable claim: its id, its source article(s), the default parameters of its check and the check."""

    id: str
    sources: tuple[str, ...]
    defaults: dict
    check: Callable[..., Evidence]


# --------------------------------------------------------------------------------------------- the checks


def doubled_exponent(d_model: int = 512, n_positions: int = 512) -> Evidence:
    """The loop ``for i in range(0, d, 2): sin(pos / 10000 ** (2 * i / d))`` (articles 000 and 003).

    With i = 2k already the column index, its pair k gets omega'_k = 10000^(-4k / d) instead of the paper's
    omega_k = 10000^(-2k / d) (Vaswani et al., 2017, section 3.5): ln omega' = 2 ln omega, so the frequencies
    fall twice as fast and the slowest pair reaches 10000^(-2 + 4/d). sin and cos of a pair use the same
    expression, so they still share a frequency. A pair "hardly moves" over a context of n positions when its
    total angle n * omega_k is below 0.1 radian.
    """
    n, d = _checks.table_size(n_positions, d_model)
    k = np.arange((d + 1) // 2, dtype=np.float64)
    correct = 10000.0 ** (-2.0 * k / d)
    doubled = 10000.0 ** (-4.0 * k / d)
    still_correct, still_doubled = int((n * correct < 0.1).sum()), int((n * doubled < 0.1).sum())
    return Evidence(
        "wrong",
        {
            "pairs": k.size,
            "still_correct": still_correct,
            "still_doubled": still_doubled,
            "slowest_correct": float(correct[-1]),
            "slowest_doubled": float(doubled[-1]),
        },
        {"pair": k, "wavelength_correct": 2 * np.pi / correct, "wavelength_doubled": 2 * np.pi / doubled},
    )


def row_norm(d_model: int = 512, n_positions: int = 1024) -> Evidence:
    """ "A 512-d sinusoidal row has L2 norm about sqrt(512) = 22.6" (article 001).

    Each sin/cos pair adds sin^2 + cos^2 = 1, so ||PE(p)|| = sqrt(d/2) at every position for an even d (16 for
    d = 512), sqrt(2) times less than claimed; after the division by sqrt(d) the article recommends, the norm is
    sqrt(1/2) ~ 0.71. Measured on the table itself (``analysis.row_norms``).
    """
    n, d = _checks.table_size(n_positions, d_model)
    norms = row_norms(sinusoidal(n, d))
    claimed = float(np.sqrt(d))
    verdict = "holds" if np.allclose(norms, claimed, rtol=0.05) else "wrong"
    return Evidence(
        verdict,
        {
            "d": d,
            "claimed": claimed,
            "measured_min": float(norms.min()),
            "measured_max": float(norms.max()),
            "half": float(np.sqrt(d / 2)),
            "scaled": float(norms.mean() / np.sqrt(d)),
        },
        {"position": np.arange(n), "norm": norms},
    )


ARTICLE_POSITION = 20_000


def float_breakdown(d_model: int = 128, span: int = _checks.MAX_POSITIONS) -> Evidence:
    """ "Past position 2e4 the low dimensions (i < 10) start to jump" (article 001).

    ``precision.pair_errors_by_dtype`` computes every pair in float16, bfloat16 and float32 against float64; a position
    is broken when some pair is off by 0.5 or more (``precision.breakdown_position``). The fast pairs (small i)
    break first, as claimed, but where depends on the format: float16 and bfloat16 long before 20,000, float32
    not within 32,768 positions.
    """
    span = _checks.positive_int("span", span, maximum=_checks.MAX_POSITIONS)
    d = _checks.positive_int("d_model", d_model, maximum=_checks.MAX_DIM)
    numbers, arrays = {}, {}
    for dtype, (positions, errors, worst) in precision.pair_errors_by_dtype(span, d).items():
        arrays["position"], arrays[dtype] = positions, worst
        numbers[f"broken_{dtype}"] = precision.breakdown_position(positions, worst)
        at = min(np.searchsorted(positions, ARTICLE_POSITION), positions.size - 1)
        bad = np.flatnonzero(errors[at] >= 0.5)
        numbers[f"pairs_{dtype}"] = int(bad.size)
        numbers[f"first_pair_{dtype}"] = int(bad.min()) if bad.size else None
        numbers[f"max_{dtype}"] = float(worst.max())
    early = all(
        numbers[f"broken_{dt}"] is not None and numbers[f"broken_{dt}"] < ARTICLE_POSITION
        for dt in ("float16", "bfloat16")
    )
    verdict = "partly" if early and numbers["broken_float32"] is None else "holds"
    return Evidence(verdict, numbers, arrays)


def shift_is_rotation(d_model: int = 32, k: int = 5, n_positions: int = 512) -> Evidence:
    """ "PE(pos + k) is a linear function of PE(pos)" (articles 000 and 002), and "sin alone could not do it" (002).

    M_k = ``shift_matrix(d, k)`` holds one 2 x 2 rotation per pair; the residual max_p ||PE(p + k) - M_k PE(p)||
    is rounding noise and ||M_k^T M_k - I|| = 0 (a rotation). With the sin columns alone the best linear map
    A (least squares over all p) leaves a residual of order 1: sin(p w + k w) needs cos(p w).
    """
    n, d = _checks.table_size(n_positions, d_model)
    k = _checks.positive_int("k", k, maximum=n - 1)
    table = sinusoidal(n, d)
    shift = shift_matrix(d, k)
    sines = table[:, 0::2]
    fit, *_ = np.linalg.lstsq(sines[:-k], sines[k:], rcond=None)
    sin_only = float(np.linalg.norm(sines[k:] - sines[:-k] @ fit, axis=1).max())
    residual = shift_residual(table, k)
    orthogonal = float(np.abs(shift.T @ shift - np.eye(d)).max())
    verdict = "holds" if residual < 1e-9 and orthogonal < 1e-12 else "wrong"
    return Evidence(
        verdict, {"k": k, "d": d, "residual": residual, "orthogonal": orthogonal, "sin_only": sin_only}, {"M": shift}
    )


ALIBI_HEADS = (8, 12, 16)


def alibi_article_slopes() -> Evidence:
    """ "ALiBi slopes are 2^(-8/h), 2^(-9/h), ..." (article 001) against the paper's (Press et al., 2022).

    The article's k-th slope is 2^(-(8 + k) / h); the paper's ``alibi_slopes``. For 8, 12 and 16 heads: how
    many heads agree (to 1e-12), and the smallest slope of each rule.
    """
    numbers, arrays = {}, {}
    for h in ALIBI_HEADS:
        paper, article = alibi_slopes(h), article_slopes(h)
        arrays[f"paper_{h}"], arrays[f"article_{h}"] = paper, article
        numbers[f"agree_{h}"] = int(np.isclose(paper, article, rtol=1e-12, atol=0).sum())
        numbers[f"paper_min_{h}"], numbers[f"article_min_{h}"] = float(paper.min()), float(article.min())
    verdict = "holds" if all(numbers[f"agree_{h}"] == h for h in ALIBI_HEADS) else "wrong"
    return Evidence(verdict, numbers, arrays)


def rope_rot90(head_dim: int = 64, n_positions: int = 64, seed: int = 0) -> Evidence:
    """ "RoPE can be implemented with torch.rot90" (article 001).

    x ~ N(0, 1) (``default_rng(seed)``), pairs (x_2i, x_2i+1) as the rows of a (d/2, 2) matrix P.
    ``torch.rot90(P)`` turns the array itself by 90 degrees: a fixed shuffle of the entries, the same at every
    position. RoPE (``apply_rope``, interleaved pairs) turns pair i by m theta_i, which equals
    x cos(m theta) + J x sin(m theta) with J (a, b) = (-b, a), the quarter turn of each pair. Returns the
    relative error ||y - RoPE(x, m)|| / ||x|| of both against every position m.
    """
    d = _checks.positive_int("head_dim", head_dim, maximum=_checks.MAX_DIM)
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions, so head_dim must be even; got {d}")
    n = _checks.positive_int("n_positions", n_positions, maximum=8192)
    import torch

    x = np.random.default_rng(int(seed)).standard_normal(d)
    positions = np.arange(n)
    inv, _ = rope_inv_freq(d)
    rope = apply_rope(np.broadcast_to(x, (n, d)), positions, inv, layout="interleaved")
    rot90 = torch.rot90(torch.from_numpy(x.reshape(d // 2, 2))).reshape(-1).numpy()
    quarter = np.stack([-x[1::2], x[0::2]], axis=1).reshape(-1)
    angles = positions[:, None] * inv[None, :]
    cos, sin = np.repeat(np.cos(angles), 2, axis=1), np.repeat(np.sin(angles), 2, axis=1)
    size = np.linalg.norm(x)
    rot90_error = np.linalg.norm(rope - rot90, axis=1) / size
    turn_error = np.linalg.norm(rope - (x * cos + quarter * sin), axis=1) / size
    verdict = "holds" if rot90_error.min() < 1e-9 else "wrong"
    return Evidence(
        verdict,
        {"rot90_min": float(rot90_error.min()), "turn_max": float(turn_error.max())},
        {"position": positions, "rot90": rot90_error, "quarter_turn": turn_error},
    )


BASES = 10.0 ** np.arange(1.0, 7.01, 0.25)
CONTEXTS = (512, 2048, 8192, 32768)


def _distance_order(d: int, context: int, max_offsets: int = 1024) -> np.ndarray:
    """Rank correlation between the offset delta and -cos(PE(0), PE(delta)), delta = 1 .. context - 1 (at most
    ``max_offsets`` evenly spaced), for every base in BASES: 1 when similarity falls steadily with distance."""
    offsets = 1 + evenly_spaced(context - 1, max_offsets)
    omega = BASES[:, None] ** (-np.arange(0, d, 2)[None, :] / d)
    similarity = np.cos(offsets[None, :, None] * omega[:, None, :]).mean(axis=2)
    ranks = np.argsort(np.argsort(-similarity, axis=1, kind="stable"), axis=1).astype(np.float64)
    ranks -= ranks.mean(axis=1, keepdims=True)
    order = np.arange(offsets.size) - (offsets.size - 1) / 2
    return ranks @ order / (np.linalg.norm(ranks, axis=1) * np.linalg.norm(order))


def base_optimum(d_model: int = 512, context: int = 2048) -> Evidence:
    """ "The base 10000 is the theoretical optimum" (article 002).

    For each base b in BASES (10 .. 10^7) and even d, with omega_k = b^(-2k/d):
    near(b) = 1 - cos(PE(p), PE(p + 1)) = 1 - mean_k cos(omega_k), how different neighbours are (falls with b);
    order(b) = the rank correlation between the distance delta and the dissimilarity 1 - cos(PE(0), PE(delta))
    over the context, how faithfully similarity tells near from far (1 = perfectly). The base with the best
    order moves with the context length, so no single base is optimal; the paper picks 10000 without such a claim.
    """
    d = _checks.positive_int("d_model", d_model, maximum=_checks.MAX_DIM)
    if d % 2:
        raise ValueError(f"the similarity of sin/cos pairs needs an even d_model; got {d}")
    context = _checks.positive_int("context", context, maximum=_checks.MAX_POSITIONS)
    if context < 3:
        raise ValueError(f"ordering distances needs a context of at least 3 positions; got {context}")
    omega = BASES[:, None] ** (-np.arange(0, d, 2)[None, :] / d)
    near = 1.0 - np.cos(omega).mean(axis=1)
    order = _distance_order(d, context)
    best = {c: float(BASES[np.argmax(_distance_order(d, c))]) for c in CONTEXTS}
    at_10000 = int(np.argmin(np.abs(BASES - 1e4)))
    numbers = {
        "best": float(BASES[np.argmax(order)]),
        "order_10000": float(order[at_10000]),
        "best_order": float(order.max()),
    }
    numbers.update({f"best_{c}": b for c, b in best.items()})
    verdict = "holds" if len(set(best.values())) == 1 and best[CONTEXTS[0]] == 1e4 else "wrong"
    return Evidence(verdict, numbers, {"base": BASES, "near": near, "order": order})


def _toeplitz_share(similarity: np.ndarray) -> float:
    """Share of the variance of a similarity matrix explained by the offset |i - j| alone (1 = a pure band):
    1 - sum (S - m(|i-j|))^2 / sum (S - mean S)^2, m the mean of each diagonal."""
    n = similarity.shape[0]
    offset = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    means = np.bincount(offset.ravel(), similarity.ravel()) / np.bincount(offset.ravel())
    return float(1 - ((similarity - means[offset]) ** 2).sum() / ((similarity - similarity.mean()) ** 2).sum())


def learned_blocks() -> Evidence:
    """ "Learned positions give a messy, block-like similarity; sinusoids a band that depends on |i - j| only"
    (article 000).

    Checked on posviz's trained example (64 positions, width 64, ``learned.example_table``) and the sinusoidal
    table of the same shape: the spread of each diagonal (``diagonal_spread``, 0 for a pure band) and the share
    of the similarity explained by |i - j| alone.
    """
    learned = example_table()
    n, d = learned.shape
    learned_similarity = cosine_similarity_matrix(learned)
    sin_similarity = cosine_similarity_matrix(sinusoidal(n, d))
    numbers = {
        "n": n,
        "sin_spread": float(diagonal_spread(sin_similarity).max()),
        "learned_spread": float(diagonal_spread(learned_similarity).max()),
        "sin_share": _toeplitz_share(sin_similarity),
        "learned_share": _toeplitz_share(learned_similarity),
    }
    verdict = "partly" if numbers["sin_spread"] < 1e-9 and numbers["learned_share"] > 0.5 else "holds"
    return Evidence(verdict, numbers, {"sinusoidal": sin_similarity, "learned": learned_similarity})


ROPE_SNIPPETS = {
    "linear": ({"rope_type": "linear", "factor": 4.0}, 10000.0),
    "theta": (None, 50000.0),
    "dynamic": ({"rope_type": "dynamic", "factor": 2.0}, 50000.0),
}


def rope_snippets(head_dim: int = 128, seq_len: int = 8192, original: int = 2048) -> Evidence:
    """The config snippets of article 003: ``rope_theta`` 10000 with ``rope_scaling`` linear x4, and
    ``rope_theta`` 50000 with dynamic x2 from an original context of 2048 tokens.

    For each, the ratio theta'_i / theta_i of every pair against the default base 10000 (``rope_inv_freq``):
    linear divides every pair by 4; theta 50000 slows pair i by 5^(-2i/d) at any length (pair 0 is kept);
    dynamic adds nothing up to ``original`` tokens and raises the base further past it (here at ``seq_len``).
    """
    d = _checks.positive_int("head_dim", head_dim, maximum=_checks.MAX_DIM)
    seq_len = _checks.positive_int("seq_len", seq_len, maximum=_checks.MAX_POSITIONS)
    original_inv, _ = rope_inv_freq(d)
    arrays = {"pair": np.arange(original_inv.size)}
    for name, (scaling, base) in ROPE_SNIPPETS.items():
        short, _ = rope_inv_freq(d, base=base, scaling=scaling, max_position_embeddings=original, seq_len=original)
        long, _ = rope_inv_freq(d, base=base, scaling=scaling, max_position_embeddings=original, seq_len=seq_len)
        arrays[f"{name}_short"], arrays[f"{name}_long"] = short / original_inv, long / original_inv
    numbers = {
        "seq_len": seq_len,
        "original": original,
        "linear": float(arrays["linear_short"][0]),
        "theta_slowest": float(arrays["theta_short"][-1]),
        "dynamic_slowest": float(arrays["dynamic_long"][-1]),
        "dynamic_short_same": bool(np.allclose(arrays["dynamic_short"], arrays["theta_short"], rtol=1e-12)),
    }
    short_changed = not np.allclose(arrays["theta_short"], 1.0)
    return Evidence("partly" if short_changed else "holds", numbers, arrays)


def sum_is_shift(d_model: int = 512, n_positions: int = 64) -> Evidence:
    """ "The encodings of positions i and j should add up to about the encoding of i + j" (article 001).

    err[i, j] = ||PE(i) + PE(j) - PE(i + j)|| / ||PE(i + j)|| for i, j < n. Even at i = 0 it is 1, since
    PE(0) = (0, 1, 0, 1, ...) is not zero. What holds instead is PE(i + j) = M_j PE(i) (``shift_matrix``), whose
    relative residual is rounding noise.
    """
    n, d = _checks.table_size(n_positions, d_model)
    table = sinusoidal(2 * n - 1, d)
    i, j = np.indices((n, n))
    miss = table[i] + table[j] - table[i + j]
    error = np.linalg.norm(miss, axis=2) / np.linalg.norm(table[i + j], axis=2)
    theta = np.arange(n)[:, None] * sinusoidal_frequencies(d)[None, : d // 2]  # theta[j, k] = j omega_k
    cos_j, sin_j = np.cos(theta)[None], np.sin(theta)[None]  # M_j, pair by pair
    sin_i, cos_i = table[:n, 0 : 2 * (d // 2) : 2][:, None], table[:n, 1::2][:, None]
    target = table[i + j]
    miss_sin = target[..., 0 : 2 * (d // 2) : 2] - (cos_j * sin_i + sin_j * cos_i)
    miss_cos = target[..., 1::2] - (cos_j * cos_i - sin_j * sin_i)
    rotation = float(np.sqrt((miss_sin**2 + miss_cos**2).sum(axis=2)).max() / np.sqrt(d / 2))
    verdict = "holds" if error.max() < 0.1 else "wrong"
    return Evidence(
        verdict, {"min": float(error.min()), "median": float(np.median(error)), "rotation": rotation}, {"error": error}
    )


def alibi_tril(n_heads: int = 8, seq_len: int = 16) -> Evidence:
    """``B = torch.tril(-m * |i - j|)`` as ALiBi's bias (article 001).

    ``tril`` keeps the lower triangle and puts 0 above the diagonal (np.tril has the same rule), so a key in the
    future gets bias 0, the largest of the row, instead of -inf. With equal raw scores the weight query i puts
    on keys j > i is (L - 1 - i) / (sum_{j<=i} exp(-m (i - j)) + L - 1 - i). Only with a separate causal mask
    (-inf for j > i) does the result equal ALiBi's causal bias.
    """
    h = _checks.positive_int("n_heads", n_heads, maximum=256)
    n = _checks.positive_int("seq_len", seq_len, maximum=1024)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    slopes = alibi_slopes(h)
    bias = np.tril(-slopes[:, None, None] * distance[None])
    weights = np.exp(bias - bias.max(axis=2, keepdims=True))
    weights /= weights.sum(axis=2, keepdims=True)
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    mass = (weights * future).sum(axis=2)
    masked = np.where(future, -np.inf, bias)
    causal = np.where(future, -np.inf, -slopes[:, None, None] * distance[None])
    return Evidence(
        "partly",
        {
            "first_query": float(mass[0, 0]),
            "head_0_mean": float(mass[0, :-1].mean()),
            "masked_equal": bool(np.array_equal(masked, causal)),
        },
        {"bias": bias[0], "future_mass": mass},
    )


MAX_POSITION_TYPES = {
    "default": None,
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 4.0},
    "yarn": {"rope_type": "yarn", "factor": 4.0},
}


def max_position_effect(head_dim: int = 128, seq_len: int = 8192, small: int = 2048, large: int = 32768) -> Evidence:
    """ "In RoPE, max_position_embeddings only affects the cache" (article 003).

    For each rope type, the largest change of ln theta_i when max_position_embeddings goes from ``small`` to
    ``large`` (``rope_inv_freq`` at ``seq_len``): 0 for default and linear, whose frequencies ignore it; not 0 for
    dynamic (the length it starts scaling at) and yarn (the original length its ramp is measured against).
    """
    d = _checks.positive_int("head_dim", head_dim, maximum=_checks.MAX_DIM)
    change = []
    for scaling in MAX_POSITION_TYPES.values():
        a, _ = rope_inv_freq(d, scaling=scaling, max_position_embeddings=small, seq_len=seq_len)
        b, _ = rope_inv_freq(d, scaling=scaling, max_position_embeddings=large, seq_len=seq_len)
        change.append(float(np.abs(np.log(a / b)).max()))
    change = np.asarray(change)
    kept = [t for t, c in zip(MAX_POSITION_TYPES, change, strict=True) if c < 1e-12]
    verdict = "holds" if len(kept) == len(MAX_POSITION_TYPES) else "partly"
    return Evidence(
        verdict,
        {"kept": ", ".join(kept), "small": small, "large": large},
        {"type": np.asarray(list(MAX_POSITION_TYPES)), "change": change},
    )


CLAIMS = {
    claim.id: claim
    for claim in (
        Claim("exponent", ("000", "003"), {"d_model": 512, "n_positions": 512}, doubled_exponent),
        Claim("norm", ("001",), {"d_model": 512}, row_norm),
        Claim("precision", ("001",), {"d_model": 128}, float_breakdown),
        Claim("shift", ("000", "002"), {"d_model": 32, "k": 5}, shift_is_rotation),
        Claim("alibi", ("001",), {}, alibi_article_slopes),
        Claim("rot90", ("001",), {"head_dim": 64}, rope_rot90),
        Claim("base", ("002",), {"d_model": 512, "context": 2048}, base_optimum),
        Claim("blocks", ("000",), {}, learned_blocks),
        Claim("snippets", ("003",), {"head_dim": 128, "seq_len": 8192}, rope_snippets),
        Claim("sum", ("001",), {"d_model": 512}, sum_is_shift),
        Claim("tril", ("001",), {"n_heads": 8, "seq_len": 16}, alibi_tril),
        Claim("max_pos", ("003",), {"head_dim": 128}, max_position_effect),
    )
}


def check(claim_id: str, **params) -> Evidence:
    """The evidence for claim ``claim_id`` with its default parameters, updated by ``params``."""
    if claim_id not in CLAIMS:
        raise ValueError(f"there is no claim {claim_id!r}; the claims are {', '.join(CLAIMS)}")
    claim = CLAIMS[claim_id]
    return claim.check(**{**claim.defaults, **params})


def verdicts() -> dict[str, str]:
    """Every claim's verdict at its default parameters: claim id -> verdict code."""
    return {claim_id: check(claim_id).verdict for claim_id in CLAIMS}
