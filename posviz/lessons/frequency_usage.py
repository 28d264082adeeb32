"""What a RoPE model's weights say about its frequencies (Barbero et al., 2025, "Round and Round We Go! What makes
Rotary Positional Encodings useful?", ICLR 2025, arXiv:2410.06205).

RoPE turns pair i of every query and key head by the angle m theta_i at position m. How much a head relies on pair i
shows in the weights that produce that pair: the two rows of ``q_proj`` (``k_proj``) feeding it. Their Frobenius
norm is the "usage" of the pair by the head, the per-frequency norm Barbero et al. study in Gemma 7B: its positional
heads put large norms on the highest frequencies, and overall the norms are largest on the lowest frequencies,
which the authors suspect carry semantic rather than positional information.

    rope_frequency_usage(source, *, layers=None, config=None) -> FrequencyUsage
    p_rope_dropped(inv_freq, p) -> bool (pairs,)          the pairs p-RoPE removes
    p_rope_share(usage, dropped) -> the share of usage they carry
    head_score_pattern(source, layer, distances, *, hidden=None, config=None) -> ScorePattern
    rope_score_pattern(q, k, inv_freq, distances, *, layout) -> ScorePattern

The weights are found and read by ``posviz.checkpoint.qk_weights`` (only the projections, a block of rows at a time),
with the model's geometry from its config.json through ``posviz.models.model_positions``. Layers that rotate alike
form a ``RotaryGroup`` and are measured together on one frequency axis; a model with several groups (Gemma 3's local and
global layers, Gemma 4's global heads of another size) is read one group at a time, and its NoPE layers are named,
not measured.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..checkpoint.errors import UnsupportedAttention
from ..checkpoint.qk_weights import (
    RotaryGroup,
    chosen_layers,
    head_norms,
    mean_embedding,
    prepare,
    projected,
    row_energy,
)
from ..encodings.rope import pair_dimensions, rope_wavelength

# --------------------------------------------------------------------------------------------------------------------
# frequency usage


@dataclasses.dataclass(frozen=True)
class FrequencyUsage:
    """||W[rows of pair i]||_F, the Frobenius norm of the two weight rows feeding each rotary pair i of each head,
    for one rotary group of layers (``RotaryGroup``: the layers that share head sizes, layout and frequencies, so
    one frequency axis). Pair i turns at ``inv_freq[i]`` (highest frequency first), its wavelength 2 pi / theta_i
    positions."""

    #: (layers, heads, pairs): the query projection's norms.
    query: np.ndarray
    #: (layers, kv_heads, pairs): the key projection's; MLA: one key head, the rotary key all heads share.
    key: np.ndarray
    inv_freq: np.ndarray
    #: The model's pairing: "half" (dims i and i + rotary_dim / 2) or "interleaved" (2i and 2i + 1).
    layout: str
    #: The layer numbers read.
    layers: np.ndarray
    #: The query head size; ``rotary_dim`` the dimensions its rotary embedding covers.
    head_dim: int
    rotary_dim: int
    #: The context the model was pre-trained on, when the config gives it.
    training_context: int | None
    model_type: str | None
    #: The attention layers without a rotary embedding (SmolLM3's, Llama 4's every fourth, Cohere2's full-attention
    #: layers), never measured as rotating.
    nope_layers: tuple[int, ...] = ()
    #: Every rotary group of the model, and the index of the one read.
    groups: tuple[RotaryGroup, ...] = ()
    group: int = 0
    #: The pairs of the rotary embedding whose frequency is 0 (Gemma 4's ``proportional`` rope type): they never
    #: turn, have an infinite wavelength, and are left out of the pairs here as a partial RoPE's unrotated dims are.
    zero_frequency_pairs: int = 0
    #: Whether the model is DeepSeek-V3's multi-head latent attention.
    mla: bool = False
    #: The normalisations the checkpoint applies to each query or key head after its projection (``q_norm``,
    #: ``k_norm``, DeepSeek-V4's ``kv_norm``: their weights' names beside the read layers' projections), whose
    #: per-dimension scale the usage does not include.
    head_norms: tuple[str, ...] = ()
    #: {layer: the layer whose keys it reuses} for read layers that project no keys of their own (Gemma 3n / Gemma
    #: 4's KV sharing).
    kv_shared: dict[int, int] = dataclasses.field(default_factory=dict)

    @property
    def wavelength(self) -> np.ndarray:
        return rope_wavelength(self.inv_freq)

    @property
    def other_groups(self) -> tuple[RotaryGroup, ...]:
        """The rotary groups not read here (their layers rotate with other frequencies or head sizes)."""
        return tuple(g for i, g in enumerate(self.groups) if i != self.group)

    def layer_means(self, which: str = "query") -> np.ndarray:
        """(layers, pairs): the usage of each pair averaged over the heads of each layer (``which``: "query" or
        "key"), the layers x pairs view of the model."""
        return self._of(which).mean(axis=1)

    def pair_means(self, which: str = "query") -> np.ndarray:
        """(pairs,): the usage of each pair averaged over every head of every layer read."""
        return self._of(which).mean(axis=(0, 1))

    def _of(self, which: str) -> np.ndarray:
        if which not in ("query", "key"):
            raise ValueError(f"which must be 'query' or 'key'; got {which!r}")
        return self.query if which == "query" else self.key


def rope_frequency_usage(
    source, *, layers=None, group: int | None = None, config: dict | None = None
) -> FrequencyUsage:
    """Barbero et al. (2025)'s per-frequency norms for a RoPE checkpoint, over one group of layers that rotate alike.

    ``source``: a model folder (``model.safetensors`` or shards with ``model.safetensors.index.json``, or a
    PyTorch ``pytorch_model.bin``), one weights file, or a state dict (name -> numpy array or torch tensor).
    ``config``: the config.json as a dict, needed for a state dict and for a file without a config.json beside it.
    ``layers``: layer numbers to read, all of one rotary group (default: every layer of the group); ``group``: the
    index of the rotary group (``FrequencyUsage.groups``) when ``layers`` is not given (default 0, the group of the
    first rotating layer). A model whose layers rotate with different frequencies or head sizes (Gemma 3's local and
    global layers, Gemma 4's global heads of another size) has several groups, read one at a time, never mixed under
    one frequency axis; NoPE layers belong to none and are listed in ``nope_layers``.

    For head h and pair i, with (a, b) the pair's two dims as the model pairs them (its layout; MLA: inside the last
    qk_rope_head_dim dims of each query head, and the rotary key's; DeepSeek-V4: inside the last rotary_dim dims of
    each head) and W the rows of head h in the query (key) projection as the model splits it (separate ``q_proj`` /
    ``k_proj``; Phi-3's ``qkv_proj``; GPT-NeoX's per-head ``query_key_value``; DeepSeek-V3's ``q_proj`` or
    ``q_b_proj`` and the last qk_rope_head_dim rows of ``kv_a_proj_with_mqa``; DeepSeek-V4's ``q_b_proj`` and
    ``kv_proj``): usage = sqrt(|W_a|^2 + |W_b|^2), the Frobenius norm of the 2 x input block that produces pair i.
    Biases and norms (the input's, the latent's, a per-head q_norm / k_norm, DeepSeek-V4's kv_norm) are not
    included (``FrequencyUsage.head_norms`` names the ones the checkpoint holds); for MLA with a low-rank query the
    input of ``q_b_proj`` is the normalised latent. Grouped-query models have ``key`` per key-value head.

    Raises ``NoAttentionProjections`` (no q/k weights), ``UnknownFusedLayout`` (a fused weight whose split is not
    known for the model type) or ``ConfigMismatch`` (no config, not RoPE, or shapes that disagree with it), each a
    ``CheckpointError`` whose sentence names what was expected and what was found.
    """
    first = None if layers is None else int(np.atleast_1d(np.asarray(layers))[0])
    weights, geo, found = prepare(source, config, group=group, layer=first)
    chosen = chosen_layers(found, layers, weights.name, geo)
    (q_first, q_second), (k_first, k_second) = geo.q_dims, geo.k_dims
    some = found[chosen[0]]
    query = np.empty((len(chosen), len(some.q_rows), geo.pairs))
    key = np.empty((len(chosen), len(some.k_rows), geo.pairs))
    for slot, n in enumerate(chosen):  # one layer's tensors at a time
        layer = found[n]
        q_energy = row_energy(weights, layer.q_key, layer.rows_needed(layer.q_key))
        k_energy = q_energy if layer.fused else row_energy(weights, layer.k_key, layer.rows_needed(layer.k_key))
        query[slot] = np.sqrt(q_energy[layer.q_rows[:, q_first]] + q_energy[layer.q_rows[:, q_second]])
        key[slot] = np.sqrt(k_energy[layer.k_rows[:, k_first]] + k_energy[layer.k_rows[:, k_second]])
    return FrequencyUsage(
        query=query,
        key=key,
        inv_freq=geo.inv_freq,
        layout=geo.layout,
        layers=np.asarray(chosen, dtype=np.int64),
        head_dim=geo.head_dim,
        rotary_dim=geo.rotary_dim,
        training_context=geo.training_context,
        model_type=geo.model_type,
        nope_layers=geo.nope_layers,
        groups=geo.groups,
        group=geo.group,
        zero_frequency_pairs=geo.zero_pairs,
        mla=geo.mla,
        head_norms=head_norms(weights, found[chosen[0]], geo.head_dim),
        kv_shared={n: geo.kv_shared[n] for n in chosen if n in geo.kv_shared},
    )


def p_rope_dropped(inv_freq, p: float) -> np.ndarray:
    """The pairs that p-RoPE removes (Barbero et al., 2025): p-RoPE keeps RoPE on the fraction p of the
    pairs with the HIGHEST frequencies and stops rotating the lowest 1 - p (they become position-free, NoPE-like
    channels), so 1-RoPE is RoPE and 0-RoPE is NoPE. Kept: the round(p x pairs) highest theta_i (p x pairs is whole
    in the paper's settings, 0.25 and 0.75 of 128 pairs). Returns a boolean (pairs,), True where removed."""
    theta = np.asarray(inv_freq, dtype=np.float64)
    if theta.ndim != 1 or theta.size == 0 or not np.all(np.isfinite(theta)) or np.any(theta <= 0):
        raise ValueError("inv_freq must be a non-empty list of positive frequencies, one per rotary pair")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating, np.integer)) or not 0 <= p <= 1:
        raise ValueError(f"p is the fraction of frequencies p-RoPE keeps, from 0 (NoPE) to 1 (RoPE); got {p!r}")
    kept = int(np.floor(p * theta.size + 0.5))
    order = np.argsort(-theta, kind="stable")  # highest frequency first
    dropped = np.ones(theta.size, dtype=bool)
    dropped[order[:kept]] = False
    return dropped


def p_rope_share(usage, dropped) -> np.ndarray:
    """The share of usage carried by the ``dropped`` pairs, over the last axis: sum of usage^2 over the dropped
    pairs / sum over all pairs (squared norms add up to the squared norm of the head's rotated rows)."""
    usage = np.asarray(usage, dtype=np.float64)
    dropped = np.asarray(dropped, dtype=bool)
    if usage.shape[-1:] != dropped.shape:
        raise ValueError(f"usage has {usage.shape[-1]} pairs but the mask has {dropped.size}")
    energy = usage**2
    total = energy.sum(axis=-1)
    return np.divide(energy[..., dropped].sum(axis=-1), total, out=np.zeros_like(total), where=total > 0)


# --------------------------------------------------------------------------------------------------------------------
# the positional score pattern a head's weights imply


@dataclasses.dataclass(frozen=True)
class ScorePattern:
    """The positional part of q_m . k_n for fixed q and k, as a function of the distance m - n.

    ``distances`` (D,); ``score`` (heads, D) = sum_i amplitude_i cos(d theta_i + phase_i); ``amplitude`` and
    ``phase`` (heads, pairs); ``constant`` (heads,) the part of q . k in dims that do not rotate (partial RoPE),
    the same at every distance. The whole q_m . k_n is score + constant."""

    distances: np.ndarray
    score: np.ndarray
    amplitude: np.ndarray
    phase: np.ndarray
    constant: np.ndarray
    inv_freq: np.ndarray

    @property
    def swing(self) -> np.ndarray:
        """(heads,): max - min of each head's score over the distances, to sort heads: a positional head's score
        swings with distance, a head that ignores position is flat."""
        return self.score.max(axis=1) - self.score.min(axis=1)


def rope_score_pattern(q, k, inv_freq, distances, *, layout: str = "half", dims=None) -> ScorePattern:
    """For q (heads, head_dim) and k (kv_heads, head_dim) in the model's layout (query head h reads key-value
    head h // (heads / kv_heads)), pair i as the complex numbers z_q = q_a + i q_b and z_k = k_a + i k_b:
    RoPE multiplies them by e^{i m theta_i} and e^{i n theta_i}, so

        q_m . k_n = sum_i Re(z_q conj(z_k) e^{i (m - n) theta_i}) + q_pass . k_pass
                  = sum_i |q_i| |k_i| cos((m - n) theta_i + phi_i) + constant,   phi_i = arg z_q - arg z_k.

    ``dims``: (first, second) dimension of each pair, when they are not ``pair_dimensions`` of the first
    2 len(inv_freq) dims in ``layout`` (Gemma 4's proportional RoPE pairs i with i + head_dim / 2 and leaves out the
    pairs at zero frequency, whose dims count in the constant).
    """
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    k = np.atleast_2d(np.asarray(k, dtype=np.float64))
    theta = np.asarray(inv_freq, dtype=np.float64)
    d = np.asarray(distances, dtype=np.float64)
    if q.shape[1] != k.shape[1] or q.shape[0] % k.shape[0]:
        raise ValueError(f"q {q.shape} and k {k.shape}: heads must share key-value heads equally, with one head_dim")
    if dims is None:
        first, second = pair_dimensions(q.shape[1], 2 * theta.size, layout)
    else:
        first, second = np.asarray(dims[0]), np.asarray(dims[1])
    if first.shape != theta.shape or second.shape != theta.shape:
        raise ValueError(f"dims must give two dimensions for each of the {theta.size} frequencies")
    k = np.repeat(k, q.shape[0] // k.shape[0], axis=0)
    zq = q[:, first] + 1j * q[:, second]
    zk = k[:, first] + 1j * k[:, second]
    product = zq * np.conj(zk)
    score = np.real(product[:, None, :] * np.exp(1j * d[None, :, None] * theta)).sum(axis=-1)
    rotated = np.zeros(q.shape[1], dtype=bool)
    rotated[first], rotated[second] = True, True
    constant = (q[:, ~rotated] * k[:, ~rotated]).sum(axis=-1)
    return ScorePattern(d, score, np.abs(product), np.angle(product), constant, theta)


def head_score_pattern(source, layer: int, distances, *, hidden=None, config: dict | None = None) -> ScorePattern:
    """The positional score pattern (``rope_score_pattern``) every head of ``layer`` implies for a constant input:
    q = W_q x, k = W_k x (biases included, as the model adds them), x = ``hidden`` or, by default, the mean row of
    the token embedding. A head whose pattern swings with distance is positional; a flat one is not."""
    weights, geo, found = prepare(source, config, layer=int(layer))
    (n,) = chosen_layers(found, [layer], weights.name, geo)
    if geo.mla:
        raise UnsupportedAttention(
            f"{weights.name} uses multi-head latent attention: its keys (and, with q_lora_rank, its queries) pass "
            "through an RMSNorm of a latent before they are made, so q . k of a constant input is not read off the "
            "weights; its score pattern is not drawn (the frequency usage is)"
        )
    shapes = weights.shapes()
    if hidden is None:
        hidden = mean_embedding(weights, shapes)
    x = np.asarray(hidden, dtype=np.float64)
    cols = shapes[found[n].q_key][1]
    if x.shape != (cols,):
        raise ValueError(f"the constant input must be one vector of the model's width {cols}; got shape {x.shape}")
    q, k = projected(weights, found[n], x, shapes)
    return rope_score_pattern(q, k, geo.inv_freq, distances, layout=geo.layout, dims=geo.q_dims)
