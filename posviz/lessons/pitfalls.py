"""The mistakes people make with position encodings, each written out as the buggy code does it, next to the
posviz function that does it right, with a function that measures the mistake (its signature).

    pitfall                          buggy variant here             correct version            signature
    doubled exponent, shifted cos    buggy_sinusoidal               sinusoidal                 still_columns,
                                                                                               pair_radius_error
    position and dimension swapped   swapped_axes_table             sinusoidal                 offset_dependence
    all-zero learned table           zero_table                     learned_init               nearest_distance
    position louder than tokens      token_position_inputs(scaled=False)  (scaled=True)        mix_signature
    multiplying instead of adding    lost_dimensions("multiply")    lost_dimensions("add")     share of lost dims
    concatenating instead of adding  concat_error                   adding                     torch's error
    d_model mismatch                 torch_add_error                matching shapes            torch's error
    odd RoPE head dimension          rope_odd_error                 rope_inv_freq (ValueError) torch's error,
                                                                                               transformers' refusal
    pairing mixed up                 pairing_scores                 same layout twice          pairing_gap
    ALiBi slopes, any head count     naive_alibi_slopes             alibi_slopes               slope_error
    learned table past its end       past_end_error                 lookup inside the table    torch's error
    positions in float16             rounded_positions("float16")   float32 positions          merged_neighbours

Only the torch error messages import torch (on call), so that each is the exact text a user would see.
"""

from __future__ import annotations

import numpy as np

from ..analysis import cosine_similarity_matrix, evenly_spaced
from ..base import checks
from ..encodings.alibi import MAX_HEADS, alibi_slopes
from ..encodings.learned import learned_init, torch_lookup_error
from ..encodings.rope import TRANSFORMERS_ODD_MESSAGE, apply_rope, refuses_odd_head, rope_inv_freq
from ..encodings.sinusoidal import sinusoidal

VARIANTS = ("doubled", "cos_shift")
COMBINES = ("add", "multiply")
LAYOUTS = ("interleaved", "half")
#: Largest number of positions whose pairwise structure (Gram matrix) a signature computes.
MAX_PAIRWISE = 2048

past_end_error = torch_lookup_error


def buggy_sinusoidal(n_positions: int, d_model: int, *, base: float = 10000.0, variant: str = "doubled") -> np.ndarray:
    """The sinusoidal table as two common buggy loops compute it, shape (n_positions, d_model).

    Both loop ``for i in range(0, d, 2)``, so i already is the column index 2k, and then write the paper's
    exponent 2i/d again:

        doubled:    PE[p, i] = sin(p / base^(2i/d)),  PE[p, i + 1] = cos(p / base^(2i/d))
        cos_shift:  PE[p, i] = sin(p / base^(2i/d)),  PE[p, i + 1] = cos(p / base^(2(i + 1)/d))

    so pair k turns at base^(-4k/d) instead of base^(-2k/d) (Vaswani et al., 2017, section 3.5): the
    frequencies fall twice as fast and the upper half of the columns hardly moves. In ``cos_shift`` the cos
    column of a pair also turns at another speed than its sin. Correct version: ``posviz.sinusoidal``.
    """
    n, d = checks.table_size(n_positions, d_model)
    checks.choice("variant", variant, VARIANTS)
    base = checks.positive_float("base", base, minimum_exclusive=1.0)
    column = np.arange(d)
    exponent = 2.0 * (column - column % 2 if variant == "doubled" else column) / d
    angles = np.arange(n, dtype=np.float64)[:, None] * base ** -exponent[None, :]
    return np.where(column % 2 == 0, np.sin(angles), np.cos(angles))


def column_motion(table) -> np.ndarray:
    """How far each column moves over the positions of the table: max_p PE[p, j] - min_p PE[p, j]."""
    table = checks.finite_table(table)
    return table.max(axis=0) - table.min(axis=0)


def still_columns(table, tol: float = 0.05) -> int:
    """Number of columns that move by less than ``tol`` over all positions: they carry no position signal."""
    return int(np.count_nonzero(column_motion(table) < tol))


def pair_radius_error(table) -> np.ndarray:
    """For each column pair (2k, 2k + 1): max_p |PE[p, 2k]^2 + PE[p, 2k + 1]^2 - 1|.

    Zero when sin and cos of a pair share one frequency (the pair is a point on the unit circle, and
    PE(p + k) = M_k PE(p) holds); of order 1 when they turn at different speeds. An odd last column is left out.
    """
    table = checks.finite_table(table)
    pairs = table.shape[1] // 2
    if pairs == 0:
        raise ValueError("a table needs at least 2 columns to have a sin/cos pair")
    radius = table[:, 0 : 2 * pairs : 2] ** 2 + table[:, 1 : 2 * pairs : 2] ** 2
    return np.abs(radius - 1.0).max(axis=0)


def swapped_axes_table(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The table of a loop that swaps the roles of position and dimension, shape (n_positions, d_model):

        PE_bug[p, j] = PE_correct(d_model x n_positions)[j, p] = sin or cos(j * base^(-2 floor(p/2) / n))

    i.e. ``sinusoidal(d_model, n_positions).T``: every row is a wave over the dimensions at its own frequency.
    When n_positions == d_model it adds to the token embeddings without an error. Correct version:
    ``posviz.sinusoidal(n_positions, d_model)``.
    """
    n, d = checks.table_size(n_positions, d_model)
    return sinusoidal(d, n, base=base).T.copy()


def _gram(table, max_positions: int) -> np.ndarray:
    table = checks.finite_table(table)
    if table.shape[0] > max_positions:
        raise ValueError(
            f"this signature compares every pair of positions, so it takes at most {max_positions:,} positions; "
            f"got {table.shape[0]:,}"
        )
    return table @ table.T


def offset_dependence(table) -> np.ndarray:
    """For each offset k: the spread (max - min) of PE(p) . PE(p + k) over p, divided by the largest |dot|.

    Zero for every k when the dot product depends on the offset only, as for the sinusoidal table
    (PE(i) . PE(j) = sum_k cos((i - j) omega_k), Vaswani et al., 2017); large when it depends on where the pair
    sits. Returns one value per offset k = 0 .. n - 1 (at most ``MAX_PAIRWISE`` positions).
    """
    gram = _gram(table, MAX_PAIRWISE)
    n = gram.shape[0]
    rows = np.arange(n)[:, None]
    cols = rows + np.arange(n)[None, :]  # cols[p, k] = p + k
    valid = cols < n
    diagonals = gram[rows, np.minimum(cols, n - 1)]
    high = np.where(valid, diagonals, -np.inf).max(axis=0)
    low = np.where(valid, diagonals, np.inf).min(axis=0)
    scale = np.abs(gram).max()
    return (high - low) / (scale if scale > 0 else 1.0)


def zero_table(n_positions: int, d_model: int) -> np.ndarray:
    """A learned table initialised to zeros (``nn.Parameter(torch.zeros(n, d))`` with its init forgotten).

    Every position starts as the same vector; a position that no training sequence reaches keeps it forever.
    Correct version: ``posviz.learned_init`` (BERT's N(0, 0.02^2)).
    """
    n, d = checks.table_size(n_positions, d_model)
    return np.zeros((n, d))


def nearest_distance(table) -> np.ndarray:
    """For every position p: min over q != p of ||PE(p) - PE(q)||, from ||a - b||^2 = |a|^2 + |b|^2 - 2 a.b.

    Zero means another position has the same vector, so the model cannot tell the two apart.
    """
    gram = _gram(table, MAX_PAIRWISE)
    if gram.shape[0] < 2:
        raise ValueError("a nearest other position needs a table of at least 2 positions")
    sq = np.diag(gram)
    dist2 = sq[:, None] + sq[None, :] - 2.0 * gram
    np.fill_diagonal(dist2, np.inf)
    return np.sqrt(np.maximum(dist2.min(axis=1), 0.0))


def token_position_inputs(
    d_model: int, n_tokens: int, n_positions: int, *, scaled: bool, seed: int = 0, base: float = 10000.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The inputs x = s E[t] + PE[p] of ``n_tokens`` tokens at ``n_positions`` positions, token-major.

    E ~ N(0, 1/d) per entry (the Transformer's shared embedding, norm about 1), s = sqrt(d_model) when
    ``scaled`` (Vaswani et al., 2017, section 3.4: "we multiply those weights by sqrt(d_model)") and 1 when not.
    PE is ``sinusoidal``, norm sqrt(d/2). Returns ``(inputs, token_part, position_part)``, each of shape
    (n_tokens * n_positions, d_model).
    """
    d = checks.positive_int("d_model", d_model, maximum=checks.MAX_DIM)
    t = checks.positive_int("n_tokens", n_tokens, maximum=256)
    n = checks.positive_int("n_positions", n_positions, maximum=256)
    embedding = np.random.default_rng(int(seed)).normal(0.0, d**-0.5, size=(t, d))
    tokens = np.repeat(embedding * (np.sqrt(d) if scaled else 1.0), n, axis=0)
    positions = np.tile(sinusoidal(n, d, base=base), (t, 1))
    return tokens + positions, tokens, positions


def mix_signature(
    d_model: int, n_tokens: int, n_positions: int, *, scaled: bool, seed: int = 0, base: float = 10000.0
) -> tuple[np.ndarray, float, float, float]:
    """Cosine similarity of the inputs of ``token_position_inputs`` and what it says.

    Returns ``(S, same_position, same_token, ratio)``: S over the token-major inputs, the mean cosine between
    different tokens at one position, the mean cosine between one token at different positions, and
    ratio = mean ||PE|| / mean ||s E||. When same_position is near 1 the position drowns the token: two different
    words at the same place look alike to the first layer.
    """
    inputs, tokens, positions = token_position_inputs(
        d_model, n_tokens, n_positions, scaled=scaled, seed=seed, base=base
    )
    similarity = cosine_similarity_matrix(inputs)
    token_id = np.repeat(np.arange(n_tokens), n_positions)
    position_id = np.tile(np.arange(n_positions), n_tokens)
    same_token = token_id[:, None] == token_id[None, :]
    same_position = position_id[:, None] == position_id[None, :]
    ratio = np.linalg.norm(positions, axis=1).mean() / np.linalg.norm(tokens, axis=1).mean()
    return (
        similarity,
        float(similarity[same_position & ~same_token].mean()) if n_tokens > 1 else float("nan"),
        float(similarity[same_token & ~same_position].mean()) if n_positions > 1 else float("nan"),
        float(ratio),
    )


def lost_dimensions(
    n_positions: int, d_model: int, *, combine: str = "multiply", tol: float = 0.1, base: float = 10000.0
) -> np.ndarray:
    """Share of the token's dimensions that position p nearly erases, for x = E + PE or x = E * PE.

    Dimension j of the token reaches the model with the gain dx_j / dE_j: 1 when adding (the token is intact,
    E = x - PE) and PE[p, j] when multiplying. A dimension counts as lost where |gain| < ``tol``: at p = 0 every
    sin column is 0, so multiplying erases half of every token there, and slow sin columns stay near 0 for long.
    """
    checks.choice("combine", combine, COMBINES)
    table = sinusoidal(n_positions, d_model, base=base)
    gain = np.ones_like(table) if combine == "add" else table
    return (np.abs(gain) < tol).mean(axis=1)


def concat_error(n_positions: int, d_model: int) -> str:
    """The error of a layer built for d_model inputs (``torch.nn.Linear(d, d)``) fed the concatenation
    [E | PE] of width 2 d_model: concatenating changes the width that every later layer expects."""
    n, d = checks.table_size(n_positions, d_model)
    import torch

    with torch.no_grad():
        try:
            torch.nn.Linear(d, d)(torch.zeros(n, 2 * d))
        except RuntimeError as exc:
            return str(exc)
    raise AssertionError("torch.nn.Linear accepted an input of the wrong width")


def torch_add_error(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> str:
    """The message torch gives for ``torch.zeros(shape_a) + torch.zeros(shape_b)`` when the shapes cannot
    broadcast, e.g. token embeddings (n, 512) plus a position table (n, 768). Raises ValueError when they can."""
    a = tuple(checks.positive_int("size", s, maximum=checks.MAX_ELEMENTS) for s in shape_a)
    b = tuple(checks.positive_int("size", s, maximum=checks.MAX_ELEMENTS) for s in shape_b)
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        import torch

        try:
            torch.empty(a) + torch.empty(b)
        except RuntimeError as exc:
            return str(exc)
        raise AssertionError("torch added tensors that numpy cannot broadcast") from None
    raise ValueError(f"shapes {a} and {b} can be added (the result has shape {np.broadcast_shapes(a, b)})")


def rope_odd_error(head_dim: int, n_positions: int = 4, *, base: float = 10000.0) -> str:
    """The error hand-written LLaMA-style RoPE code gives for an odd head_dim (the maths of transformers'
    ``LlamaRotaryEmbedding`` and ``apply_rotary_pos_emb``, written out): inv_freq = base^(-arange(0, d, 2) / d) has
    ceil(d/2) entries, cos and sin are cat(freqs, freqs) of width 2 ceil(d/2) = d + 1, and ``q * cos`` fails with a
    shape error that does not mention RoPE. transformers 5.24 itself refuses such a config before it gets there
    (``rope_odd_config_error``) unless the head has at most 4 dimensions; those fail here, in the forward pass.
    Raises ValueError for an even d."""
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    if d % 2 == 0:
        raise ValueError(f"head_dim {d} is even, so RoPE works and there is no error to show")
    import torch

    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    freqs = torch.outer(torch.arange(n, dtype=torch.float32), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    q = torch.zeros(n, d)
    rotated = torch.cat((-q[..., d // 2 :], q[..., : d // 2]), dim=-1)
    try:
        q * emb.cos() + rotated * emb.sin()
    except RuntimeError as exc:
        return str(exc)
    raise AssertionError("an odd head_dim went through rotate_half")


def rope_odd_config_error(head_dim: int) -> str | None:
    """What transformers 5.24 says when a model config has this head_dim, fully rotated: the ValueError of its
    config check (``RotaryEmbeddingConfigMixin.validate_rope``), which names RoPE, for an odd head_dim above 4;
    None when it accepts the config (an even head_dim, or a tiny odd one of 1 or 3, which then fails in the forward
    pass with ``rope_odd_error``). posviz does not import transformers: the message is its text, filled in."""
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    if not refuses_odd_head(d):
        return None
    return TRANSFORMERS_ODD_MESSAGE.format(head_dim=d, partial_rotary_factor=1.0, layer_type="full_attention")


def rope_odd_reason(head_dim: int) -> str:
    """posviz's explanation of the same mistake: the ValueError of ``rope_inv_freq(head_dim)`` (an odd head above
    4 dimensions), or of ``apply_rope`` when the frequencies of a tiny odd head (1 or 3, which transformers lets
    through) are applied to it."""
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    if d % 2 == 0:
        raise ValueError(f"head_dim {d} is even, so RoPE works and there is no error to show")
    try:
        inv, _ = rope_inv_freq(d)
        apply_rope(np.zeros((1, d)), np.zeros(1), inv)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"RoPE went through an odd head_dim {d}")


def pairing_scores(
    head_dim: int,
    n_positions: int,
    *,
    trained: str = "interleaved",
    inference: str = "half",
    base: float = 10000.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Attention logits q . k / sqrt(d) by offset r = 0 .. n - 1 under the pairing a model was trained with and
    the pairing inference applies to the same q and k (N(0, 1) from ``seed``).

    s(r) = RoPE(q, r) . RoPE(k, 0) / sqrt(d) with ``apply_rope`` (Su et al., 2021): "interleaved" pairs
    (2i, 2i + 1) as GPT-J and Meta's reference LLaMA code, "half" pairs (i, i + d/2) as GPT-NeoX and transformers'
    port of LLaMA. Both agree at r = 0 (no rotation) and drift apart with the offset. Returns
    ``(offsets, trained_scores, inference_scores)``.
    """
    d = checks.positive_int("head_dim", head_dim, maximum=checks.MAX_DIM)
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    checks.choice("trained", trained, LAYOUTS)
    checks.choice("inference", inference, LAYOUTS)
    inv, _ = rope_inv_freq(d, base=base)
    q, k = np.random.default_rng(int(seed)).standard_normal((2, d))
    offsets = np.arange(n)
    scores = {}
    for layout in {trained, inference}:
        rq = apply_rope(np.broadcast_to(q, (n, d)), offsets, inv, layout=layout)
        rk = apply_rope(k[None, :], np.zeros(1), inv, layout=layout)[0]
        scores[layout] = rq @ rk / np.sqrt(d)
    return offsets, scores[trained], scores[inference]


def pairing_gap(trained_scores, inference_scores) -> float:
    """max_r |s_inference(r) - s_trained(r)| / max_r |s_trained(r)|: 0 when training and inference agree."""
    trained_scores = np.asarray(trained_scores, dtype=np.float64)
    gap = np.abs(np.asarray(inference_scores, dtype=np.float64) - trained_scores).max()
    scale = np.abs(trained_scores).max()
    return float(gap / scale) if scale > 0 else float(gap)


def naive_alibi_slopes(n_heads: int) -> np.ndarray:
    """The power-of-two rule applied to any head count: m_h = 2^(-8h / n), h = 1 .. n.

    Right only when n is a power of two; for other n the paper (Press et al., 2022) takes the slopes of the
    largest power of two below n and fills in from twice that many heads. Correct version: ``alibi_slopes``.
    """
    n = checks.positive_int("n_heads", n_heads, maximum=MAX_HEADS)
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def slope_error(n_heads: int) -> np.ndarray:
    """Per head, by how many factors of two the naive slope misses the paper's: |log2(naive_h / paper_h)|."""
    return np.abs(np.log2(naive_alibi_slopes(n_heads) / alibi_slopes(n_heads)))


def rounded_positions(n_positions: int, dtype: str = "float16") -> np.ndarray:
    """The positions 0 .. n - 1 as ``torch.arange(n, dtype=...)`` holds them, back in float64.

    A format with m mantissa bits holds every whole number up to 2^(m + 1) (float16: 2048, float32: 2^24);
    past that, positions round to the nearest representable number, ties to even.
    """
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    checks.choice("dtype", dtype, ("float16", "float32"))
    return np.arange(n).astype(dtype).astype(np.float64)


def merged_neighbours(n_positions: int, dtype: str = "float16") -> int:
    """How many positions p in 1 .. n - 1 hold the same number as p - 1 in ``dtype``: the model sees them as
    one position (float16 from p = 2049 on)."""
    return int(np.count_nonzero(np.diff(rounded_positions(n_positions, dtype)) == 0))


def position_rounding(n_positions: int, max_positions: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How far each position moves when held in float16 and in float32: |round_dtype(p) - p|, at most
    ``max_positions`` evenly spaced positions. Returns ``(positions, float16_error, float32_error)``."""
    n = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    positions = evenly_spaced(n, max_positions)
    exact = positions.astype(np.float64)
    errors = [np.abs(positions.astype(dt).astype(np.float64) - exact) for dt in ("float16", "float32")]
    return positions, errors[0], errors[1]


def doubled_exponent_table(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """``buggy_sinusoidal`` with the exponent doubled."""
    return buggy_sinusoidal(n_positions, d_model, base=base, variant="doubled")


def cos_shift_table(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """``buggy_sinusoidal`` with the cosine columns shifted by one pair."""
    return buggy_sinusoidal(n_positions, d_model, base=base, variant="cos_shift")


def random_table(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """BERT's random initial table (``learned_init``, its default seed); ``base`` is not used."""
    return learned_init(n_positions, d_model)


def all_zero_table(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """``zero_table``, with the signature of the other tables; ``base`` is not used."""
    return zero_table(n_positions, d_model)


#: The tables the sinusoidal and learned pitfalls compare, by name, each ``(n_positions, d_model, *, base)``: the
#: correct sinusoidal table, its buggy variants, and the learned initialisations.
TABLES = {
    "correct": sinusoidal,
    "doubled": doubled_exponent_table,
    "cos_shift": cos_shift_table,
    "swapped": swapped_axes_table,
    "random": random_table,
    "zero": all_zero_table,
}
