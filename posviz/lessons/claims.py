"""Myth or fact: claims from four practitioner articles on positional encodings, each checked by computation.

Every claim is a ``Claim`` record: a short id, the topic it belongs to, its sources (keys of ``SOURCES``: the four
articles of posviz's reference set and the papers the verdict rests on), the parameters of its check and the
function that computes the evidence. A check returns an ``Evidence``: a verdict code, the numbers the verdict
rests on and the arrays its figure draws. Verdict codes:

    holds   the claim is right as stated
    wrong   the computation contradicts it
    partly  it holds only under a condition that the claim leaves out

``SOURCES`` is the one list of what the page cites: every article by its title and every paper by authors, year,
venue and arXiv id.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..analysis import cosine_similarity_matrix, diagonal_spread, evenly_spaced, row_norms
from ..base import checks
from ..encodings.alibi import alibi_slopes, article_slopes
from ..encodings.learned import example_table, learned_init, torch_lookup_error
from ..encodings.rope import apply_rope, rope_inv_freq
from ..encodings.sinusoidal import shift_matrix, sinusoidal, sinusoidal_frequencies
from ..encodings.xlnet import factorisation_order, xlnet_masks
from ..models.rope_configs import PRESETS, parse_config
from . import attention_demo, precision
from .compare import unseen_angle_share
from .pitfalls import torch_add_error
from .sinusoidal import shift_residual

VERDICTS = ("holds", "wrong", "partly")
#: The topics the claims are grouped by, in the order the page lists them.
TOPICS = ("sinusoidal", "learned", "rope", "alibi", "attention")


@dataclasses.dataclass(frozen=True)
class Source:
    """One source the page cites.

    ``kind`` is "article" (one of the four articles of posviz's reference set, all in Chinese; ``key`` is its
    number, "000" .. "003") or "paper". ``titles`` maps a language code to how the title reads in it: an article's
    own title, with our English translation in "en"; an article without a title line gets a descriptive title of
    ours (``descriptive``). A paper has ``authors`` (as printed, family name first), ``year``, ``title``, ``venue``
    and its ``arxiv`` id.
    """

    key: str
    kind: str
    titles: dict
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    arxiv: str = ""
    descriptive: bool = False

    @property
    def first_author(self) -> str:
        """The family name of the first author ("Vaswani")."""
        return self.authors[0].split(",")[0] if self.authors else ""

    def title(self, lang: str) -> str:
        return self.titles.get(lang) or self.titles["en"]


def _article(key: str, original: str, english: str, *, descriptive: bool = False) -> Source:
    return Source(key, "article", {"zh": original, "en": f"{original} ({english})"}, descriptive=descriptive)


def _paper(key: str, authors: tuple[str, ...], year: int, title: str, venue: str, arxiv: str) -> Source:
    return Source(key, "paper", {"en": title}, authors=authors, year=year, venue=venue, arxiv=arxiv)


SOURCES: dict[str, Source] = {
    s.key: s
    for s in (
        _article(
            "000",
            "解密BERT中的位置编码：为什么随机初始化效果不输三角函数？",
            "Decoding BERT's position encoding: why random initialisation does no worse than sine and cosine",
        ),
        _article(
            "001",
            "Transformer位置编码原理与实战选型指南",
            "Transformer position encoding: how it works and how to choose one in practice",
        ),
        # article 002 (in traditional characters) has no title line: it opens straight into its preface, which
        # promises to explain why the Transformer uses sine and cosine and what each term of the formula does
        _article(
            "002",
            "正余弦位置编码为何如此设计：成对的正弦与余弦、几何递减的频率、底数 10000",
            "Why the sinusoidal position encoding is built as it is: sin/cos pairs, geometric frequencies, base 10000",
            descriptive=True,
        ),
        _article(
            "003",
            "从BERT到LLaMA：位置编码技术演进与工程实践全解析",
            "From BERT to LLaMA: how position encoding evolved, and engineering practice",
        ),
        _paper(
            "vaswani2017",
            (
                "Vaswani, A.",
                "Shazeer, N.",
                "Parmar, N.",
                "Uszkoreit, J.",
                "Jones, L.",
                "Gomez, A. N.",
                "Kaiser, Ł.",
                "Polosukhin, I.",
            ),
            2017,
            "Attention Is All You Need",
            "NeurIPS 2017",
            "1706.03762",
        ),
        _paper(
            "su2021",
            ("Su, J.", "Lu, Y.", "Pan, S.", "Murtadha, A.", "Wen, B.", "Liu, Y."),
            2021,
            "RoFormer: Enhanced Transformer with Rotary Position Embedding",
            "arXiv preprint (Neurocomputing 568, 2024)",
            "2104.09864",
        ),
        _paper(
            "press2022",
            ("Press, O.", "Smith, N. A.", "Lewis, M."),
            2022,
            "Train Short, Test Long: Attention with Linear Biases Enables Input Length Extrapolation",
            "ICLR 2022",
            "2108.12409",
        ),
        _paper(
            "chen2023",
            ("Chen, S.", "Wong, S.", "Chen, L.", "Tian, Y."),
            2023,
            "Extending Context Window of Large Language Models via Positional Interpolation",
            "arXiv preprint",
            "2306.15595",
        ),
        _paper(
            "peng2024",
            ("Peng, B.", "Quesnelle, J.", "Fan, H.", "Shippole, E."),
            2024,
            "YaRN: Efficient Context Window Extension of Large Language Models",
            "ICLR 2024",
            "2309.00071",
        ),
        _paper(
            "yang2019",
            ("Yang, Z.", "Dai, Z.", "Yang, Y.", "Carbonell, J.", "Salakhutdinov, R.", "Le, Q. V."),
            2019,
            "XLNet: Generalized Autoregressive Pretraining for Language Understanding",
            "NeurIPS 2019",
            "1906.08237",
        ),
        _paper(
            "lan2020",
            ("Lan, Z.", "Chen, M.", "Goodman, S.", "Gimpel, K.", "Sharma, P.", "Soricut, R."),
            2020,
            "ALBERT: A Lite BERT for Self-supervised Learning of Language Representations",
            "ICLR 2020",
            "1909.11942",
        ),
        _paper(
            "lee2019",
            ("Lee, J.", "Lee, Y.", "Kim, J.", "Kosiorek, A. R.", "Choi, S.", "Teh, Y. W."),
            2019,
            "Set Transformer: A Framework for Attention-based Permutation-Invariant Neural Networks",
            "ICML 2019",
            "1810.00825",
        ),
        _paper(
            "wolf2020",
            (
                "Wolf, T.",
                "Debut, L.",
                "Sanh, V.",
                "Chaumond, J.",
                "Delangue, C.",
                "Moi, A.",
                "Cistac, P.",
                "Rault, T.",
                "Louf, R.",
                "Funtowicz, M.",
                "Davison, J.",
                "Shleifer, S.",
                "von Platen, P.",
                "Ma, C.",
                "Jernite, Y.",
                "Plu, J.",
                "Xu, C.",
                "Le Scao, T.",
                "Gugger, S.",
                "Drame, M.",
                "Lhoest, Q.",
                "Rush, A. M.",
            ),
            2020,
            "Transformers: State-of-the-Art Natural Language Processing",
            "EMNLP 2020 (System Demonstrations)",
            "1910.03771",
        ),
    )
}

ARXIV_ID = re.compile(r"\d{4}\.\d{4,5}")


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
    """One checkable claim: its id, its topic (one of TOPICS), its sources (keys of SOURCES, articles first), the
    default parameters of its check and the check."""

    id: str
    topic: str
    sources: tuple[str, ...]
    defaults: dict
    check: Callable[..., Evidence]

    @property
    def articles(self) -> tuple[str, ...]:
        """The reference articles the claim comes from ("001", ...)."""
        return tuple(k for k in self.sources if SOURCES[k].kind == "article")


# --------------------------------------------------------------------------------------------- the checks


#: The largest relative difference between the loop's frequencies and the paper's that still counts as the same.
EXPONENT_RTOL = 1e-9


def exponent_verdict(correct, loop) -> str:
    """The exponent claim's rule: "holds" if every frequency of the loop equals the paper's to a relative
    difference of ``EXPONENT_RTOL`` (max_k |omega'_k / omega_k - 1| <= EXPONENT_RTOL), else "wrong"."""
    correct, loop = np.asarray(correct, dtype=np.float64), np.asarray(loop, dtype=np.float64)
    if correct.shape != loop.shape:
        raise ValueError(f"the two rules must give the same pairs; got {correct.shape} and {loop.shape}")
    return "holds" if float(np.abs(loop / correct - 1.0).max(initial=0.0)) <= EXPONENT_RTOL else "wrong"


def doubled_exponent(d_model: int = 512, n_positions: int = 512) -> Evidence:
    """The loop ``for i in range(0, d, 2): sin(pos / 10000 ** (2 * i / d))`` (articles 000 and 003).

    With i = 2k already the column index, its pair k gets omega'_k = 10000^(-4k / d) instead of the paper's
    omega_k = 10000^(-2k / d) (Vaswani et al., 2017, section 3.5): ln omega' = 2 ln omega, so the frequencies
    fall twice as fast and the slowest pair reaches 10000^(-2 + 4/d). sin and cos of a pair use the same
    expression, so they still share a frequency. A pair "hardly moves" over a context of n positions when its
    total angle n * omega_k is below 0.1 radian.

    Verdict (``exponent_verdict``): "holds" when the loop's frequencies are the paper's, every pair within a relative
    difference of ``EXPONENT_RTOL``; "wrong" otherwise. For d = 2 there is only pair 0, omega_0 = 1 either way, and
    the loop is right.
    """
    n, d = checks.table_size(n_positions, d_model)
    k = np.arange((d + 1) // 2, dtype=np.float64)
    correct = 10000.0 ** (-2.0 * k / d)
    doubled = 10000.0 ** (-4.0 * k / d)
    still_correct, still_doubled = int((n * correct < 0.1).sum()), int((n * doubled < 0.1).sum())
    return Evidence(
        exponent_verdict(correct, doubled),
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
    n, d = checks.table_size(n_positions, d_model)
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


def float_breakdown(d_model: int = 128, span: int = checks.MAX_POSITIONS) -> Evidence:
    """ "Past position 2e4 the low dimensions (i < 10) start to jump" (article 001).

    ``precision.pair_errors_by_dtype`` computes every pair in float16, bfloat16 and float32 against float64; a position
    is broken when some pair is off by 0.5 or more (``precision.breakdown_position``). The fast pairs (small i)
    break first, as claimed, but where depends on the format: float16 and bfloat16 long before 20,000, float32
    not within 32,768 positions.
    """
    span = checks.positive_int("span", span, maximum=checks.MAX_POSITIONS)
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    numbers: dict[str, float | None] = {}
    arrays: dict[str, np.ndarray] = {}
    for dtype, (positions, errors, worst) in precision.pair_errors_by_dtype(span, d).items():
        arrays["position"], arrays[dtype] = positions, worst
        numbers[f"broken_{dtype}"] = precision.breakdown_position(positions, worst)
        at = min(int(np.searchsorted(positions, ARTICLE_POSITION)), positions.size - 1)
        bad = np.flatnonzero(errors[at] >= 0.5)
        numbers[f"pairs_{dtype}"] = int(bad.size)
        numbers[f"first_pair_{dtype}"] = int(bad.min()) if bad.size else None
        numbers[f"max_{dtype}"] = float(worst.max())
    early = all(
        (broken := numbers[f"broken_{dt}"]) is not None and broken < ARTICLE_POSITION for dt in ("float16", "bfloat16")
    )
    verdict = "partly" if early and numbers["broken_float32"] is None else "holds"
    return Evidence(verdict, numbers, arrays)


def shift_is_rotation(d_model: int = 32, k: int = 5, n_positions: int = 512) -> Evidence:
    """ "PE(pos + k) is a linear function of PE(pos)" (articles 000 and 002), and "sin alone could not do it" (002).

    M_k = ``shift_matrix(d, k)`` holds one 2 x 2 rotation per pair; the residual max_p ||PE(p + k) - M_k PE(p)||
    is rounding noise and ||M_k^T M_k - I|| = 0 (a rotation). With the sin columns alone the best linear map
    A (least squares over all p) leaves a residual of order 1: sin(p w + k w) needs cos(p w).
    """
    n, d = checks.table_size(n_positions, d_model)
    k = checks.positive_int("k", k, maximum=n - 1)
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
    numbers: dict[str, float] = {}
    arrays: dict[str, np.ndarray] = {}
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
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    if d % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions, so head_dim must be even; got {d}")
    n = checks.positive_int("n_positions", n_positions, maximum=8192)
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


#: The small base the base claim compares with 10,000, and the contexts whose best base it reports.
SMALL_BASE = 100.0


def base_optimum(d_model: int = 512, context: int = 2048) -> Evidence:
    """ "The base 10000 is the theoretical optimum": too small a base makes the fast (high-frequency) dimensions
    repeat too densely, so far positions blur; too large a base makes the slow ones so slow that neighbours look
    alike (article 002).

    For each base b in BASES (10 .. 10^7) and even d, with omega_k = b^(-2k/d) (Vaswani et al., 2017, section 3.5):
    near(b) = 1 - cos(PE(p), PE(p + 1)) = 1 - mean_k cos(omega_k), how different neighbours are (falls with b);
    order(b) = the rank correlation between the distance delta and the dissimilarity 1 - cos(PE(0), PE(delta))
    over the context, how faithfully similarity tells near from far (1 = perfectly). The base with the best
    order moves with the context length, so no single base is optimal; the paper picks 10000 without such a claim.

    The mechanism is wrong at the fast end: omega_0 = b^0 = 1 for every base, so the fastest pair always turns
    once every 2 pi positions. The base sets the slow end: the slowest wavelength is 2 pi b^((d - 2) / d), and
    ``wrapping`` counts the pairs whose wavelength 2 pi / omega_k is shorter than the context (they repeat in it).
    """
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    if d % 2:
        raise ValueError(f"the similarity of sin/cos pairs needs an even d_model; got {d}")
    context = checks.positive_int("context", context, maximum=checks.MAX_POSITIONS)
    if context < 3:
        raise ValueError(f"ordering distances needs a context of at least 3 positions; got {context}")
    omega = BASES[:, None] ** (-np.arange(0, d, 2)[None, :] / d)
    near = 1.0 - np.cos(omega).mean(axis=1)
    order = _distance_order(d, context)
    best = {c: float(BASES[np.argmax(_distance_order(d, c))]) for c in CONTEXTS}
    at_10000, at_small = (int(np.argmin(np.abs(BASES - b))) for b in (1e4, SMALL_BASE))
    wavelength = 2 * np.pi / omega
    wrapping = (wavelength < context).sum(axis=1)
    numbers = {
        "best": float(BASES[np.argmax(order)]),
        "order_10000": float(order[at_10000]),
        "best_order": float(order.max()),
        "omega0_spread": float(np.abs(omega[:, 0] - 1.0).max()),
        "fastest": float(wavelength[:, 0].max()),
        "small": SMALL_BASE,
        "slowest_small": float(wavelength[at_small, -1]),
        "slowest_10000": float(wavelength[at_10000, -1]),
        "wrap_small": int(wrapping[at_small]),
        "wrap_10000": int(wrapping[at_10000]),
        "pairs": d // 2,
        "context": context,
    }
    numbers.update({f"best_{c}": b for c, b in best.items()})
    verdict = "holds" if len(set(best.values())) == 1 and best[CONTEXTS[0]] == 1e4 else "wrong"
    return Evidence(
        verdict,
        numbers,
        {
            "base": BASES,
            "near": near,
            "order": order,
            "fastest_wavelength": wavelength[:, 0],
            "slowest_wavelength": wavelength[:, -1],
            "wrapping_pairs": wrapping,
        },
    )


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


#: Article 003's RoPE config as it first gives it, and the update it later applies to it with ``dict.update``
#: ("model_config.update(...)"), so the updated config keeps the first one's max_position_embeddings.
ARTICLE_CONFIG: dict[str, Any] = {
    "rope_theta": 10000.0,
    "rope_scaling": {"type": "linear", "factor": 4.0},
    "max_position_embeddings": 32768,
}
ARTICLE_UPDATE: dict[str, Any] = {
    "rope_theta": 50000.0,
    "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048},
}


def article_config() -> dict:
    """Article 003's config after its update: ``{**ARTICLE_CONFIG, **ARTICLE_UPDATE}`` (what ``dict.update`` gives)."""
    return {**ARTICLE_CONFIG, **ARTICLE_UPDATE}


def rope_snippets(head_dim: int = 128, seq_len: int = 8192) -> Evidence:
    """Article 003's config snippets, read the way transformers reads them (``rope_inv_freq`` follows
    ``modeling_rope_utils``; Wolf et al., 2020).

    The first config is linear x4 (theta_i / 4 at any length). The updated one (``article_config``) is
    rope_theta 50000 with dynamic x2 and ``original_max_position_embeddings`` 2048, which the article credits with
    taking a 2K model to 8K. transformers' dynamic NTK scaling has no such key (it warns that it does not recognise
    it): it rescales only once the current length L exceeds ``max_position_embeddings``, with
    base' = base (factor L / L_max - (factor - 1))^(d / (d - 2)) — and the updated config still holds the first
    one's max_position_embeddings, 32,768. ``LlamaRotaryEmbedding`` recomputes its frequencies only for an input
    longer than that (``dynamic_rope_update``), so at ``seq_len`` = 8,192 they are exactly rope_theta 50,000's.

    Arrays: theta'_i / theta_i against the default base 10000 for every pair: ``linear`` (first config),
    ``article`` (updated config at ``seq_len``), ``theta`` (rope_theta 50000 alone), ``meant`` (the updated config
    with max_position_embeddings 2,048, what the article describes, at ``seq_len``) and ``past`` (the updated
    config at twice max_position_embeddings, where its dynamic scaling does act).
    """
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    seq_len = checks.positive_int("seq_len", seq_len, maximum=checks.MAX_POSITIONS)
    first, updated = ARTICLE_CONFIG, article_config()
    scaling, max_pos = updated["rope_scaling"], updated["max_position_embeddings"]
    original = int(scaling["original_max_position_embeddings"])

    def ratio(config: dict, length: int, max_position_embeddings: int, scaling=None) -> np.ndarray:
        inv, _ = rope_inv_freq(
            d,
            base=config["rope_theta"],
            scaling=config["rope_scaling"] if scaling is None else scaling,
            max_position_embeddings=max_position_embeddings,
            seq_len=length,
        )
        return inv / reference

    reference, _ = rope_inv_freq(d)
    without_key = {k: v for k, v in scaling.items() if k != "original_max_position_embeddings"}
    arrays = {
        "pair": np.arange(reference.size),
        "linear": ratio(first, seq_len, first["max_position_embeddings"]),
        "article": ratio(updated, seq_len, max_pos),
        "theta": ratio(updated, seq_len, max_pos, scaling={"rope_type": "default"}),
        "meant": ratio(updated, seq_len, original),
        "past": ratio(updated, 2 * max_pos, max_pos),
    }
    unchanged = bool(np.allclose(arrays["article"], arrays["theta"], rtol=1e-12, atol=0))
    ignored = bool(np.array_equal(ratio(updated, seq_len, max_pos, scaling=without_key), arrays["article"]))
    numbers = {
        "seq_len": seq_len,
        "max_position_embeddings": max_pos,
        "original": original,
        "past_len": 2 * max_pos,
        "linear": float(arrays["linear"][0]),
        "theta_slowest": float(arrays["theta"][-1]),
        "article_slowest": float(arrays["article"][-1]),
        "meant_slowest": float(arrays["meant"][-1]),
        "past_slowest": float(arrays["past"][-1]),
        "unchanged": unchanged,
        "ignored": ignored,
    }
    meant_differs = not np.allclose(arrays["meant"], arrays["article"], rtol=1e-9, atol=0)
    return Evidence("wrong" if unchanged and meant_differs else "holds", numbers, arrays)


def sum_is_shift(d_model: int = 512, n_positions: int = 64) -> Evidence:
    """ "The encodings of positions i and j should add up to about the encoding of i + j" (article 001).

    err[i, j] = ||PE(i) + PE(j) - PE(i + j)|| / ||PE(i + j)|| for i, j < n. Even at i = 0 it is 1, since
    PE(0) = (0, 1, 0, 1, ...) is not zero. What holds instead is PE(i + j) = M_j PE(i) (``shift_matrix``), whose
    relative residual is rounding noise.
    """
    n, d = checks.table_size(n_positions, d_model)
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


#: The share of a query's attention on future keys above which a bias without a causal mask counts as leaking.
TRIL_FUTURE_MASS = 0.01


def tril_verdict(masked_equal: bool, future_mass: float) -> str:
    """The tril claim's rule: "wrong" unless tril plus a causal mask gives ALiBi's causal bias (``masked_equal``);
    then "partly" if the largest share of attention any query puts on future keys with tril alone
    (``future_mass``) exceeds ``TRIL_FUTURE_MASS``, else "holds"."""
    if not masked_equal:
        return "wrong"
    return "partly" if future_mass > TRIL_FUTURE_MASS else "holds"


def alibi_tril(n_heads: int = 8, seq_len: int = 16) -> Evidence:
    """``B = torch.tril(-m * |i - j|)`` as ALiBi's bias (article 001).

    ``tril`` keeps the lower triangle and puts 0 above the diagonal (np.tril has the same rule), so a key in the
    future gets bias 0, the largest of the row, instead of -inf. With equal raw scores the weight query i puts
    on keys j > i is (L - 1 - i) / (sum_{j<=i} exp(-m (i - j)) + L - 1 - i). Only with a separate causal mask
    (-inf for j > i) does the result equal ALiBi's causal bias.

    Verdict (``tril_verdict``): "wrong" if the tril matrix with a causal mask on top is not ALiBi's causal bias;
    "partly" if it is, but without that mask some query of some head puts more than ``TRIL_FUTURE_MASS`` of its
    attention on future keys (the condition the claim leaves out); "holds" if tril alone already keeps every query's
    future share at or below that (e.g. a single token, which has no future).
    """
    h = checks.positive_int("n_heads", n_heads, maximum=256)
    n = checks.positive_int("seq_len", seq_len, maximum=1024)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    slopes = alibi_slopes(h)
    bias = np.tril(-slopes[:, None, None] * distance[None])
    weights = np.exp(bias - bias.max(axis=2, keepdims=True))
    weights /= weights.sum(axis=2, keepdims=True)
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    mass = (weights * future).sum(axis=2)
    masked = np.where(future, -np.inf, bias)
    causal = np.where(future, -np.inf, -slopes[:, None, None] * distance[None])
    masked_equal = bool(np.array_equal(masked, causal))
    return Evidence(
        tril_verdict(masked_equal, float(mass.max())),
        {
            "first_query": float(mass[0, 0]),
            "head_0_mean": float(mass[0, :-1].mean()),
            "masked_equal": masked_equal,
            "future_max": float(mass.max()),
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
    """ "In RoPE, max_position_embeddings only affects the cache" (a comment in article 003's config).

    For each rope type, the largest change of ln theta_i when max_position_embeddings goes from ``small`` to
    ``large`` (``rope_inv_freq`` at ``seq_len``, as transformers computes it): 0 for default and linear, whose
    frequencies ignore it; not 0 for dynamic (the length it starts scaling at) and yarn without an
    ``original_max_position_embeddings`` (the original length its ramp is measured against). The article's own
    updated config (``article_config``: dynamic, max_position_embeddings 32,768) is a case in point.
    """
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    changes: list[float] = []
    for scaling in MAX_POSITION_TYPES.values():
        a, _ = rope_inv_freq(d, scaling=scaling, max_position_embeddings=small, seq_len=seq_len)
        b, _ = rope_inv_freq(d, scaling=scaling, max_position_embeddings=large, seq_len=seq_len)
        changes.append(float(np.abs(np.log(a / b)).max()))
    change = np.asarray(changes)
    kept = [t for t, c in zip(MAX_POSITION_TYPES, change, strict=True) if c < 1e-12]
    verdict = "holds" if len(kept) == len(MAX_POSITION_TYPES) else "partly"
    return Evidence(
        verdict,
        {
            "kept": ", ".join(kept),
            "small": small,
            "large": large,
            "article": article_config()["max_position_embeddings"],
        },
        {"type": np.asarray(list(MAX_POSITION_TYPES)), "change": change},
    )


# ------------------------------------------------------------------------ what the articles get wrong (more)

#: How many token vectors the scale check draws per width, and the widths it compares.
SCALE_TOKENS = 256
SCALE_WIDTHS = (64, 128, 256, 512, 768, 1024, 2048, 4096)


def embedding_scale(d_model: int = 512, seed: int = 0) -> Evidence:
    """ "The original paper did not scale the sinusoidal encoding; practice divides it by sqrt(d_model)"
    (article 001).

    Vaswani et al. (2017), section 3.4: "In the embedding layers, we multiply those weights by sqrt(d_model)" —
    the token embeddings, which share their weights with the output layer. Token vectors drawn as fairseq's
    Transformer initialises them, N(0, 1/d) per entry (``SCALE_TOKENS`` of them per width, ``default_rng(seed)``),
    have norm about 1, and ||PE(p)|| = sqrt(d/2) (``row_norms``). The ratio of the position's norm to the token's:

        no scaling   sqrt(d/2) / ||e||            (16 at d = 512: the position drowns the token)
        paper        sqrt(d/2) / (sqrt(d) ||e||)  (the token times sqrt(d))
        article      (sqrt(d/2) / sqrt(d)) / ||e||  (the position divided by sqrt(d)) — the same ratio,
                                                    since E sqrt(d) + PE = sqrt(d) (E + PE / sqrt(d)).
    """
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    widths = np.asarray(sorted(set(SCALE_WIDTHS) | {d}), dtype=np.int64)
    rng = np.random.default_rng(int(seed))
    token = np.array(
        [np.linalg.norm(rng.standard_normal((SCALE_TOKENS, w)), axis=1).mean() / np.sqrt(w) for w in widths]
    )
    position = np.array([row_norms(sinusoidal(SCALE_TOKENS, int(w))).mean() for w in widths])
    root = np.sqrt(widths.astype(np.float64))
    arrays = {
        "d_model": widths,
        "token_norm": token,
        "position_norm": position,
        "unscaled": position / token,
        "paper": position / (token * root),
        "article": (position / root) / token,
    }
    at = int(np.flatnonzero(widths == d)[0])
    numbers = {
        "d": d,
        "token": float(token[at]),
        "position": float(position[at]),
        "root": float(root[at]),
        "unscaled": float(arrays["unscaled"][at]),
        "paper": float(arrays["paper"][at]),
        "article": float(arrays["article"][at]),
    }
    same = bool(np.allclose(arrays["paper"], arrays["article"], rtol=1e-12, atol=0))
    return Evidence("wrong" if same else "holds", numbers, arrays)


#: How far past the training length the extrapolation check looks, in training lengths.
EXTRAPOLATION_SPAN = 4


def extrapolation(train_len: int = 512, d_model: int = 512, head_dim: int = 128) -> Evidence:
    """ "Sinusoidal positions and RoPE extrapolate to any length at no cost" (articles 001 and 003).

    A model trained on ``train_len`` = T tokens has met the sinusoidal pair k only at angles p omega_k,
    p = 0 .. T - 1, and RoPE's pair i only at rotations delta theta_i between a query and a key delta = 0 .. T - 1
    apart. ``compare.unseen_angle_share`` gives, for each position (sinusoidal) or distance (RoPE) up to
    ``EXTRAPOLATION_SPAN`` T, the share of pairs at an angle training never produced: 0 up to T - 1, about half
    just past T (every pair too slow to finish a turn within T), and it never returns to 0. What such inputs do to
    a trained model is measured, not derived: Press et al. (2022, figure 1) trained language models on WikiText-103
    with T = 512 and 1,024 tokens, and perplexity grew with the input length past T for sinusoidal and rotary
    positions (not for ALiBi) — which is why position interpolation (Chen et al., 2023), NTK-aware scaling and
    YaRN (Peng et al., 2024) exist.
    """
    t = checks.positive_int("train_len", train_len, maximum=checks.MAX_POSITIONS)
    if t < 2:
        raise ValueError(f"a training length needs at least 2 positions; got {t}")
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    omega = sinusoidal_frequencies(d)
    theta, _ = rope_inv_freq(head_dim)
    span = EXTRAPOLATION_SPAN * t
    steps = np.unique(np.concatenate([np.rint(np.linspace(0, span, 1025)), [t - 1, t, 2 * t]])).astype(np.int64)
    sin_share = unseen_angle_share(steps, t, omega)
    rope_share = unseen_angle_share(steps, t, theta)

    def at(share: np.ndarray, step: int) -> float:
        return float(share[np.searchsorted(steps, step)])

    numbers = {
        "train_len": t,
        "d": d,
        "head_dim": int(2 * theta.size),
        "span": span,
        "sin_pairs": int(omega.size),
        "rope_pairs": int(theta.size),
        "sin_slow": int(((t - 1) * omega < 2 * np.pi).sum()),
        "rope_slow": int(((t - 1) * theta < 2 * np.pi).sum()),
        "sin_inside": float(sin_share[steps < t].max()),
        "rope_inside": float(rope_share[steps < t].max()),
        "sin_at_t": at(sin_share, t),
        "rope_at_t": at(rope_share, t),
        "sin_at_2t": at(sin_share, 2 * t),
        "rope_at_2t": at(rope_share, 2 * t),
        "sin_beyond_min": float(sin_share[steps >= t].min()),
        "rope_beyond_min": float(rope_share[steps >= t].min()),
    }
    free = numbers["sin_beyond_min"] == 0 and numbers["rope_beyond_min"] == 0
    return Evidence("holds" if free else "wrong", numbers, {"step": steps, "sinusoidal": sin_share, "rope": rope_share})


def past_table_end(n_positions: int = 1024, seq_len: int = 1500, d_model: int = 768) -> Evidence:
    """ "A learned table runs out of memory (OOM) on an input longer than the table" (article 001: 1,500 tokens
    against L_max = 1,024).

    Position p reads row p of a (n_positions, d_model) table; row n_positions does not exist, and
    ``torch.nn.Embedding`` stops with an IndexError ("index out of range in self", asked of torch at run time by
    ``learned.torch_lookup_error``) before anything is allocated. The memory involved is small: the rows of a
    float32 table for L tokens take 4 d L bytes (``found`` while L <= n_positions, ``missing`` past it, the rows
    that would be needed but do not exist), in MiB.
    """
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    seq_len = checks.positive_int("seq_len", seq_len, maximum=checks.MAX_POSITIONS)
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    if seq_len <= n:
        raise ValueError(f"the input must be longer than the table to run past it: {seq_len:,} <= {n:,} rows")
    message = torch_lookup_error(n, n)
    length = np.arange(1, seq_len + 1)
    mib = 4.0 * d * length / 2**20
    numbers = {
        "n": n,
        "seq_len": seq_len,
        "d": d,
        "first_missing": n,
        "error": f"IndexError: {message}",
        "table_mib": 4.0 * d * n / 2**20,
        "input_mib": float(mib[-1]),
        "missing_rows": seq_len - n,
    }
    arrays = {
        "tokens": length,
        "found": np.where(length <= n, mib, np.nan),
        "missing": np.where(length >= n, mib, np.nan),
    }
    return Evidence("wrong" if "index out of range" in message else "holds", numbers, arrays)


#: ALBERT-base (``albert-base-v2`` config.json): factorised embeddings of width 128 projected to a hidden
#: size of 768 (Lan et al., 2020, section 3.1), and BERT-base (``bert-base-uncased``), whose embeddings are as wide
#: as its hidden states.
ALBERT_BASE = {
    "vocab_size": 30000,
    "embedding_size": 128,
    "hidden_size": 768,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}
BERT_BASE = {
    "vocab_size": 30522,
    "embedding_size": 768,
    "hidden_size": 768,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}
#: The steps of an embedding block, in the order data flows through it.
EMBEDDING_STAGES = ("word", "position", "token_type", "sum", "hidden")


def _embedding_widths(config: dict, seq_len: int, rng: np.random.Generator) -> tuple[np.ndarray, tuple]:
    """Run one embedding block (Devlin et al. 2019 / Lan et al. 2020) on ``seq_len`` random token ids and return the
    width of the tensor after each of EMBEDDING_STAGES, and the position table's shape. Only the rows looked up are
    drawn; the projection to the hidden size exists only when ``embedding_size`` differs from it."""
    e, h = config["embedding_size"], config["hidden_size"]
    ids = rng.integers(0, config["vocab_size"], seq_len)
    word = rng.standard_normal((np.unique(ids).size, e))[np.unique(ids, return_inverse=True)[1]]
    table = rng.standard_normal((config["max_position_embeddings"], e)) * 0.02
    position = table[np.arange(seq_len)]
    token_type = rng.standard_normal((config["type_vocab_size"], e))[np.zeros(seq_len, dtype=np.int64)]
    summed = word + position + token_type
    summed = (summed - summed.mean(axis=1, keepdims=True)) / summed.std(axis=1, keepdims=True)  # LayerNorm
    hidden = summed @ rng.standard_normal((e, h)) / np.sqrt(e) if e != h else summed
    widths = np.array([word.shape[1], position.shape[1], token_type.shape[1], summed.shape[1], hidden.shape[1]])
    return widths, table.shape


def albert_table_width(seq_len: int = 16, seed: int = 0) -> Evidence:
    """ "The position table must have the model's hidden size d_model, even when the embeddings are narrower"
    (article 001: with d_emb = 512 and d_model = 768 the position encoding must be 768 wide).

    A position table is added to the vectors it sits next to, so it must match their width — the embedding width.
    ALBERT (Lan et al., 2020) makes the embeddings narrower than the model: word, position and token-type
    embeddings are ``embedding_size`` = 128 wide, summed and normalised at that width, and only then projected to
    the hidden size 768 (transformers' ``AlbertEmbeddings`` and ``embedding_hidden_mapping_in``). A 768-wide table
    added to the 128-wide word vectors is torch's shape error (``pitfalls.torch_add_error``, at run time).
    """
    n = checks.positive_int("seq_len", seq_len, maximum=ALBERT_BASE["max_position_embeddings"])
    rng = np.random.default_rng(int(seed))
    albert, albert_table = _embedding_widths(ALBERT_BASE, n, rng)
    bert, bert_table = _embedding_widths(BERT_BASE, n, rng)
    e, h = ALBERT_BASE["embedding_size"], ALBERT_BASE["hidden_size"]
    numbers = {
        "embedding_size": e,
        "hidden_size": h,
        "rows": albert_table[0],
        "table_width": albert_table[1],
        "albert_params": int(np.prod(albert_table)),
        "hidden_params": albert_table[0] * h,
        "bert_width": bert_table[1],
        "error": torch_add_error((n, e), (n, h)),
    }
    verdict = "wrong" if albert_table[1] == e != h else "holds"
    return Evidence(verdict, numbers, {"stage": np.asarray(EMBEDDING_STAGES), "albert": albert, "bert": bert})


#: The model whose RoPE width the head_dim check reads (a preset of ``rope_configs``).
ROPE_WIDTH_MODEL = "llama2_7b"


def rope_head_dim(model: str = ROPE_WIDTH_MODEL) -> Evidence:
    """ "RoPE's angles are theta_i = 10000^(-2i / d_model)" (article 001).

    RoFormer (Su et al., 2021) rotates each query and key vector of dimension d; in a multi-head model that is
    one head's, so d = head_dim = hidden_size / num_attention_heads (transformers' ``head_dim``; 4096 / 32 = 128
    for Llama 2 7B, read by ``rope_configs.parse_config``). The head's pairs i = 0 .. head_dim/2 - 1 get
    theta_i = base^(-2i / head_dim); with d_model in the exponent they would get base^(-2i / d_model), and the
    slowest of them would turn once every 2 pi base^((head_dim - 2) / d_model) positions instead of
    2 pi base^((head_dim - 2) / head_dim). Wavelengths 2 pi / theta_i, compared with the model's context.
    """
    config = PRESETS[checks.choice("model", model, tuple(PRESETS))]
    parsed = parse_config(config)
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    inv, _ = rope_inv_freq(parsed.head_dim, base=parsed.base)
    with_d_model = parsed.base ** (-np.arange(0, parsed.head_dim, 2, dtype=np.float64) / hidden)
    head_wavelength, model_wavelength = 2 * np.pi / inv, 2 * np.pi / with_d_model
    if parsed.max_position_embeddings is None:
        raise ValueError(f"the preset {model!r} gives no max_position_embeddings")
    context = int(parsed.max_position_embeddings)
    numbers = {
        "hidden": hidden,
        "heads": heads,
        "head_dim": parsed.head_dim,
        "pairs": inv.size,
        "base": parsed.base,
        "context": context,
        "slowest_head": float(head_wavelength[-1]),
        "slowest_model": float(model_wavelength[-1]),
        "long_head": int((head_wavelength > context).sum()),
        "long_model": int((model_wavelength > context).sum()),
    }
    verdict = "holds" if parsed.head_dim == hidden else "wrong"
    return Evidence(
        verdict,
        numbers,
        {"pair": np.arange(inv.size), "head_dim": head_wavelength, "d_model": model_wavelength},
    )


def xlnet_streams(n_tokens: int = 6, seed: int = 3) -> Evidence:
    """ "XLNet's two streams fix the position leakage of GPT-style models, which see the positions before the target
    and lose those after it" (article 001).

    Yang et al. (2019, section 2.3) give another reason. With a permuted factorisation order z, the standard
    parameterisation p(x | x_{z<t}) = softmax(e(x)^T h(x_{z<t})) does not depend on the target position z_t, so
    every position that could come next gets the same distribution. The query stream g(x_{z<t}, z_t) therefore
    starts from the target's position and must not see its content; the content stream h sees its own token, so
    later targets can use it. From ``xlnet_masks`` of a shuffled order (``factorisation_order(n, seed)``):
    ``own_query`` = how many tokens' query rows include themselves (0), ``own_content`` = the same for the
    content stream (n); ``same_context`` = for each step t, whether the query row of the target z_t equals that of
    z_{t+1} in the order with steps t and t + 1 swapped (the same visible tokens for two different targets: only
    the position tells them apart); ``right_share`` = the share of what the query stream sees that lies to the
    right of the target in the sentence (0 for the left-to-right order: bidirectional context comes from the
    permutation, not from the two streams).
    """
    n = checks.positive_int("n_tokens", n_tokens, maximum=64)
    if n < 2:
        raise ValueError(f"a factorisation order needs at least 2 tokens; got {n}")
    order = factorisation_order(n, seed)
    content, query = xlnet_masks(order)
    steps = np.arange(n - 1)
    swapped = np.tile(order, (n - 1, 1))
    swapped[steps, steps], swapped[steps, steps + 1] = order[steps + 1], order[steps]
    rank = np.argsort(swapped, axis=1)  # rank[s, j] = step of token j in the order with steps s, s + 1 swapped
    target = order[steps + 1]  # the target at step s of the swapped order
    swapped_rows = rank < rank[steps, target][:, None]  # its query row: the tokens of earlier steps
    same = np.all(swapped_rows == query[order[steps]], axis=1)
    _, left = xlnet_masks(np.arange(n))
    right = np.triu(np.ones((n, n), dtype=bool), 1)
    numbers = {
        "n": n,
        "order": " → ".join(str(int(i)) for i in order),
        "own_query": int(np.diagonal(query).sum()),
        "own_content": int(np.diagonal(content).sum()),
        "same_context": int(same.sum()),
        "swaps": int(steps.size),
        "right_share": float((query & right).sum() / max(query.sum(), 1)),
        "left_to_right_share": float((left & right).sum() / max(left.sum(), 1)),
    }
    verdict = "wrong" if numbers["own_query"] == 0 and same.all() else "holds"
    return Evidence(verdict, numbers, {"order": order, "content": content, "query": query})


def attention_symmetry(sentence: str = attention_demo.EXAMPLES["dog"], seed: int = 0) -> Evidence:
    """ "Attention cannot see word order because it only uses dot products, and x . y = y . x" (article 001).

    The score of query i for key j is q_i . k_j = (x_i W_Q) . (x_j W_K), with W_Q != W_K, so S_ij != S_ji: the
    scores are not symmetric (``attention_demo``'s token vectors and projections). Attention without positions
    is blind to order for another reason, permutation equivariance: Attn(P X) = P Attn(X) (Lee et al., 2019,
    lemma 1), so shuffling the tokens only shuffles their outputs (``attention_demo.shuffle_demo``: each token's
    output moves by rounding noise), while with a position table added they change. This holds without a causal
    mask; with one, the mask itself carries order.
    """
    tokens = attention_demo.tokenize(sentence)
    x = attention_demo.token_embeddings(tokens)
    w_q, w_k, _ = attention_demo.projections()
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_q.shape[1])
    plain = attention_demo.shuffle_demo(sentence, seed)
    placed = attention_demo.shuffle_demo(sentence, seed, positions=True)
    asymmetry = float(np.abs(scores - scores.T).max())
    plain_distance, placed_distance = plain.largest_distance, placed.largest_distance
    numbers = {
        "asymmetry": asymmetry,
        "score_scale": float(np.abs(scores).max()),
        "projection_gap": float(np.abs(w_q - w_k).max()),
        "plain": plain_distance,
        "placed": placed_distance,
        "scale": plain.typical_norm,
        "sentence": sentence,
    }
    verdict = "wrong" if asymmetry > 1e-9 and plain_distance < 1e-9 < placed_distance else "holds"
    return Evidence(
        verdict,
        numbers,
        {
            "tokens": np.asarray(tokens),
            "scores": scores,
            "plain": np.asarray(plain.distance),
            "placed": np.asarray(placed.distance),
        },
    )


#: Vaswani et al. (2017), table 3, English-to-German development set (newstest2013): the base model and row (E),
#: "positional embedding instead of sinusoids" — perplexity (per wordpiece) and BLEU, quoted from the paper.
TABLE_3 = {"base": (4.92, 25.8), "learned": (4.92, 25.7)}


def _offset_means(similarity: np.ndarray) -> np.ndarray:
    """Mean of each diagonal |i - j| = 1 .. n - 1 of a symmetric similarity matrix."""
    n = similarity.shape[0]
    offset = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    return (np.bincount(offset.ravel(), similarity.ravel()) / np.bincount(offset.ravel()))[1:]


def _nearest_is_neighbour(similarity: np.ndarray) -> float:
    """Share of positions whose most similar other position is p - 1 or p + 1."""
    s = np.array(similarity, dtype=np.float64)
    np.fill_diagonal(s, -np.inf)
    return float((np.abs(np.argmax(s, axis=1) - np.arange(s.shape[0])) == 1).mean())


def learned_positions_work(seed: int = 0) -> Evidence:
    """ "Learned position tables don't work, which is why the Transformer uses sinusoids" (article 002, whose
    reason is that a table has nothing for positions past its end).

    The limit is real (see the past-the-end claim), but within their length learned tables work: Vaswani et al.
    (2017, section 3.5 and table 3 row (E)) found "nearly identical results" (``TABLE_3``) and chose sinusoids
    because they may extrapolate. Computed here: posviz's trained example (``learned.example_table``, 64 x 64,
    started from N(0, 0.02^2)) against a fresh table of that kind (``learned_init``, ``seed``) and the sinusoidal
    table of the same shape — the mean cosine similarity at each offset |i - j| and the share of positions whose
    most similar other position is a neighbour (p +- 1).
    """
    trained = example_table()
    n, d = trained.shape
    tables = {"trained": trained, "init": learned_init(n, d, seed=int(seed)), "sinusoidal": sinusoidal(n, d)}
    similarity = {name: cosine_similarity_matrix(table) for name, table in tables.items()}
    arrays = {"offset": np.arange(1, n)} | {name: _offset_means(s) for name, s in similarity.items()}
    numbers = {
        "n": n,
        "d": d,
        "neighbour_trained": _nearest_is_neighbour(similarity["trained"]),
        "neighbour_init": _nearest_is_neighbour(similarity["init"]),
        "neighbour_sinusoidal": _nearest_is_neighbour(similarity["sinusoidal"]),
        "ppl_sin": TABLE_3["base"][0],
        "bleu_sin": TABLE_3["base"][1],
        "ppl_learned": TABLE_3["learned"][0],
        "bleu_learned": TABLE_3["learned"][1],
    }
    learned_order = numbers["neighbour_trained"] > 0.9 > numbers["neighbour_init"]
    return Evidence("partly" if learned_order else "holds", numbers, arrays)


CLAIMS = {
    claim.id: claim
    for claim in (
        Claim(
            "exponent",
            "sinusoidal",
            ("000", "003", "vaswani2017"),
            {"d_model": 512, "n_positions": 512},
            doubled_exponent,
        ),
        Claim("norm", "sinusoidal", ("001",), {"d_model": 512}, row_norm),
        Claim("unscaled", "sinusoidal", ("001", "vaswani2017"), {"d_model": 512}, embedding_scale),
        Claim("precision", "sinusoidal", ("001",), {"d_model": 128}, float_breakdown),
        Claim("shift", "sinusoidal", ("000", "002", "vaswani2017"), {"d_model": 32, "k": 5}, shift_is_rotation),
        Claim("sum", "sinusoidal", ("001",), {"d_model": 512}, sum_is_shift),
        Claim("base", "sinusoidal", ("002", "vaswani2017"), {"d_model": 512, "context": 2048}, base_optimum),
        Claim("blocks", "learned", ("000",), {}, learned_blocks),
        Claim("learned", "learned", ("002", "vaswani2017"), {}, learned_positions_work),
        Claim("oom", "learned", ("001",), {"n_positions": 1024, "seq_len": 1500}, past_table_end),
        Claim("albert", "learned", ("001", "lan2020"), {}, albert_table_width),
        Claim("rot90", "rope", ("001", "su2021"), {"head_dim": 64}, rope_rot90),
        Claim("head_dim", "rope", ("001", "su2021"), {}, rope_head_dim),
        Claim("snippets", "rope", ("003", "wolf2020"), {"head_dim": 128, "seq_len": 8192}, rope_snippets),
        Claim("max_pos", "rope", ("003", "wolf2020"), {"head_dim": 128}, max_position_effect),
        Claim("alibi", "alibi", ("001", "press2022"), {}, alibi_article_slopes),
        Claim("tril", "alibi", ("001", "press2022"), {"n_heads": 8, "seq_len": 16}, alibi_tril),
        Claim("symmetry", "attention", ("001", "vaswani2017", "lee2019"), {}, attention_symmetry),
        Claim(
            "extrapolate",
            "attention",
            ("001", "003", "press2022", "vaswani2017", "chen2023", "peng2024"),
            {"train_len": 512},
            extrapolation,
        ),
        Claim("xlnet", "attention", ("001", "yang2019"), {}, xlnet_streams),
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


def sources(claim_id: str) -> tuple[Source, ...]:
    """The sources of claim ``claim_id`` (articles first, then papers), as ``Source`` records from SOURCES."""
    if claim_id not in CLAIMS:
        raise ValueError(f"there is no claim {claim_id!r}; the claims are {', '.join(CLAIMS)}")
    return tuple(SOURCES[key] for key in CLAIMS[claim_id].sources)


def cited() -> tuple[Source, ...]:
    """Every source some claim cites, in the order of SOURCES (articles first)."""
    used = {key for claim in CLAIMS.values() for key in claim.sources}
    return tuple(source for key, source in SOURCES.items() if key in used)
