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

Only the projections are read, one tensor at a time and, from safetensors files, in blocks of rows (one range read
of the file each, after posviz's loader has validated the header), so memory stays near one block whatever the
model's size, and no torch is needed for bfloat16. The model's geometry (heads, key-value heads, head_dim, rotated
dimensions, pair layout, frequencies) comes from its config.json, read by ``_geometry`` the way transformers'
config classes read it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping

import numpy as np

from ..encodings import _checks
from ..encodings.rope import rope_wavelength
from ..encodings.rope_configs import parse_config, read_config
from .errors import CheckpointError
from .safetensors_format import SafetensorsFile, bf16_to_float32
from .sources import Model, open_model
from .tables import ROPE_CONFIG_KEYS, ROPE_MODEL_TYPES

# --------------------------------------------------------------------------------------------------------------------
# errors


class NoAttentionProjections(CheckpointError):
    """The checkpoint has no query/key projections posviz can find (or a layer lacks one of them)."""


class UnknownFusedLayout(CheckpointError):
    """The queries and keys are fused in one weight whose split posviz does not know for this model type."""


class ConfigMismatch(CheckpointError):
    """The config is missing, is not a RoPE config, or does not match the shapes of the weights."""


# --------------------------------------------------------------------------------------------------------------------
# the model's geometry, from its config


@dataclasses.dataclass(frozen=True)
class Geometry:
    """How a RoPE model splits its projections: heads, key-value heads, head_dim, rotated dimensions per head, pair
    layout ("half": pair i is dims (i, i + r/2) of the first r; "interleaved": (2i, 2i + 1)), the model's inv_freq
    (r/2 of them, highest frequency first) and the context it was pre-trained on."""

    model_type: str | None
    n_heads: int
    n_kv_heads: int
    head_dim: int
    rotary_dim: int
    layout: str
    inv_freq: np.ndarray
    training_context: int | None

    @property
    def pairs(self) -> int:
        return self.rotary_dim // 2


def _geometry(config: dict) -> Geometry:
    """Read the attention geometry from a config.json dict. The one place that reads a config here: it goes
    through ``rope_configs`` (transformers' attribute maps and defaults, GPT-NeoX's ``rotary_pct``, the scalings),
    and only ``num_key_value_heads`` is read directly (default: one per query head, as every class has it).
    A multimodal config (LLaVA and the like) keeps its language model's settings in ``text_config``: those are read
    when the top level names no attention heads."""
    text = config.get("text_config")
    if isinstance(text, dict) and not any(config.get(k) is not None for k in ("num_attention_heads", "n_head")):
        config = text
    rope_keys = any(config.get(k) is not None for k in ROPE_CONFIG_KEYS)
    if not rope_keys and config.get("model_type") not in ROPE_MODEL_TYPES:
        raise ConfigMismatch(
            f"the config describes no RoPE model: expected rope_theta, rope_parameters or rope_scaling, or a RoPE "
            f"model_type ({', '.join(sorted(ROPE_MODEL_TYPES))}); found model_type {config.get('model_type')!r}"
        )
    try:
        read, rope = read_config(config), parse_config(config)
    except ValueError as exc:
        raise ConfigMismatch(f"the model's config.json cannot be read as a RoPE config: {exc}") from None
    if read.num_attention_heads is None:
        raise ConfigMismatch("the config does not say how many attention heads the model has (num_attention_heads)")
    n_heads = read.num_attention_heads
    kv = config.get("num_key_value_heads") or n_heads
    kv = _checks.positive_int("num_key_value_heads", kv)
    if n_heads % kv:
        raise ConfigMismatch(f"{n_heads} query heads cannot share {kv} key-value heads equally (num_key_value_heads)")
    inv_freq, _ = rope.inv_freq()
    return Geometry(
        model_type=read.model_type,
        n_heads=n_heads,
        n_kv_heads=kv,
        head_dim=read.head_dim,
        rotary_dim=2 * len(inv_freq),
        layout=rope.layout,
        inv_freq=np.asarray(inv_freq, dtype=np.float64),
        training_context=rope.original_max_position_embeddings,
    )


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


# --------------------------------------------------------------------------------------------------------------------
# finding and reading the projections

#: ``<prefix>.<layers|h|layer|blocks>.<n>.<module>.<projection>.weight``
_NAME = re.compile(
    r"^(?P<stack>(?:.*\.)?(?:layers|h|layer|blocks))\.(?P<layer>\d+)\.(?P<module>\w+)\.(?P<proj>\w+)\.weight$"
)

#: Fused query/key/value weights and, by model_type, how the model splits them (transformers 5.24):
#: Phi-3 ``qkv_proj``: [all query heads | all key heads | all value heads] (``Phi3Attention.forward``);
#: GPT-NeoX ``query_key_value``: for each head in turn its [q | k | v] (``.view(..., -1, 3 * head_size)``, then
#: ``chunk(3)``).
FUSED_NAMES = ("qkv_proj", "query_key_value", "Wqkv", "W_pack", "c_attn", "qkv", "in_proj")
KNOWN_FUSED = {("phi3", "qkv_proj"): "concatenated", ("gpt_neox", "query_key_value"): "per_head"}

#: Rows read at once, in elements (16 MB of float64): the peak beyond what is kept.
BLOCK_ELEMENTS = 2 * 1024 * 1024


class _Weights:
    """The tensors of a source, each read in blocks of rows: a model file or folder (safetensors by byte ranges;
    other formats through posviz's reader, one tensor at a time) or a state dict."""

    def __init__(self, source, config: dict | None):
        self._dict: Mapping | None = None
        self._model: Model | None = None
        if isinstance(source, Mapping):
            self._dict = source
            self.name = "the state dict"
            self.config = config
        else:
            self._model = open_model(source)
            self.name = self._model.name
            self.config = config if config is not None else self._model.config
        self._shapes: dict[str, tuple[int, ...]] | None = None

    def shapes(self) -> dict[str, tuple[int, ...]]:
        if self._shapes is None:
            if self._dict is not None:
                self._shapes = {k: tuple(np.shape(v)) for k, v in self._dict.items()}
            else:
                assert self._model is not None
                self._shapes = {k: tuple(info.shape) for k, info in self._model.entries().items()}
        return self._shapes

    def read(self, key: str) -> np.ndarray:
        """A small tensor (a bias) whole, float64."""
        if self._dict is not None:
            return np.asarray(_as_numpy(self._dict[key]), dtype=np.float64)
        assert self._model is not None
        return np.asarray(self._model.file_for(key).read(key), dtype=np.float64)

    def blocks(self, key: str, rows: int) -> Iterator[tuple[int, np.ndarray]]:
        """``(start, block)`` over the first ``rows`` rows of the 2-D tensor ``key``, each block float64."""
        cols = int(self.shapes()[key][1])
        step = max(1, BLOCK_ELEMENTS // max(cols, 1))
        if self._dict is not None:
            whole = _as_numpy(self._dict[key])
            for start in range(0, rows, step):
                yield start, np.asarray(whole[start : start + step], dtype=np.float64)
            return
        assert self._model is not None
        opened = self._model.file_for(key)
        if isinstance(opened, SafetensorsFile):
            yield from _safetensors_blocks(opened, key, rows, step)
            return
        whole = opened.read(key)
        for start in range(0, rows, step):
            yield start, np.asarray(whole[start : start + step], dtype=np.float64)


#: safetensors dtypes read by rows, and how: numpy storage type, and whether it is bfloat16 (the upper half of a
#: float32, widened by ``bf16_to_float32``).
ROW_DTYPES = {"F64": ("<f8", False), "F32": ("<f4", False), "F16": ("<f2", False), "BF16": ("<u2", True)}


def _safetensors_blocks(opened: SafetensorsFile, key: str, rows: int, step: int) -> Iterator[tuple[int, np.ndarray]]:
    """Blocks of rows of a 2-D tensor of a validated safetensors file, each one range read of its bytes (the
    tensor is stored row after row), so only one block is ever in memory and neither torch nor a copy of the
    tensor is needed."""
    code, shape, begin, _ = opened._spans[key]
    if code not in ROW_DTYPES:
        raise CheckpointError(
            f"{opened.blob.name}: {key} is stored as {opened.entries[key].dtype}; posviz reads projections stored "
            "as float16, bfloat16, float32 or float64 (a quantised checkpoint needs dequantising first)"
        )
    storage, bf16 = ROW_DTYPES[code]
    row_bytes = int(shape[1]) * np.dtype(storage).itemsize
    for start in range(0, rows, step):
        count = min(step, rows - start)
        raw = np.frombuffer(opened.blob.read(opened.data_start + begin + start * row_bytes, count * row_bytes), storage)
        values = bf16_to_float32(raw) if bf16 else raw
        yield start, values.reshape(count, shape[1]).astype(np.float64)


def _as_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor (bfloat16 included)
        value = value.detach().cpu()
        if not value.dtype.is_floating_point:
            raise CheckpointError(f"a projection must hold floating-point weights; this one is {value.dtype}")
        return value.double().numpy()
    return np.asarray(value)


@dataclasses.dataclass(frozen=True)
class _Layer:
    """Where one layer's queries and keys are: tensor names and, for each head, the row of each of its dims."""

    q_key: str
    k_key: str
    q_rows: np.ndarray  # (n_heads, head_dim)
    k_rows: np.ndarray  # (n_kv_heads, head_dim)

    @property
    def fused(self) -> bool:
        return self.q_key == self.k_key

    def rows_needed(self, key: str) -> int:
        """How many leading rows of tensor ``key`` hold its queries and/or keys (a fused weight's values after
        them are not read)."""
        rows = [r for r, k in ((self.q_rows, self.q_key), (self.k_rows, self.k_key)) if k == key]
        return int(max(r.max() for r in rows)) + 1


def _find_layers(weights: _Weights, geo: Geometry) -> dict[int, _Layer]:
    """Every layer's query/key projections, checked against the config's shapes."""
    shapes = weights.shapes()
    found: dict[str, dict[int, dict[str, str]]] = {}
    for name in shapes:
        match = _NAME.match(name)
        if match and match["proj"] in ("q_proj", "k_proj", *FUSED_NAMES):
            found.setdefault(match["stack"], {}).setdefault(int(match["layer"]), {})[match["proj"]] = name
    if not found:
        found_text = f"{len(shapes):,} tensors such as {', '.join(list(shapes)[:4])}" if shapes else "no tensors at all"
        raise NoAttentionProjections(
            f"{weights.name} has no attention projections: expected tensors named like "
            "model.layers.0.self_attn.q_proj.weight and k_proj.weight (or a fused qkv_proj / query_key_value), "
            f"found {found_text}"
        )
    # a multimodal checkpoint has several stacks (vision tower, language model): the one read is the longest whose
    # projections match the config; when none does, the longest one's error is raised
    stacks = sorted(found.items(), key=lambda item: (-len(item[1]), item[0]))
    layers: dict[int, _Layer] = {}
    errors = []
    for _, stack in stacks:
        try:
            layers = {n: _layer(weights.name, projections, shapes, geo, n) for n, projections in stack.items()}
            break
        except (ConfigMismatch, UnknownFusedLayout, NoAttentionProjections) as exc:  # perhaps another stack fits
            errors.append(exc)
    if not layers:
        raise errors[0]
    return dict(sorted(layers.items()))


def _layer(name: str, projections: dict[str, str], shapes: dict, geo: Geometry, n: int) -> _Layer:
    hd, nq, nkv = geo.head_dim, geo.n_heads, geo.n_kv_heads
    dims = np.arange(hd)
    if "q_proj" in projections or "k_proj" in projections:
        missing = [p for p in ("q_proj", "k_proj") if p not in projections]
        if missing:
            raise NoAttentionProjections(f"{name}: layer {n} has no {missing[0]}.weight beside its other projection")
        q_key, k_key = projections["q_proj"], projections["k_proj"]
        for key, heads, what in ((q_key, nq, "query"), (k_key, nkv, "key-value")):
            _expect_rows(name, key, shapes[key], heads * hd, f"{heads} {what} heads x head_dim {hd}")
        q_rows = np.arange(nq)[:, None] * hd + dims
        k_rows = np.arange(nkv)[:, None] * hd + dims
        return _Layer(q_key, k_key, q_rows, k_rows)
    fused_name = next(iter(projections))
    key = projections[fused_name]
    layout = KNOWN_FUSED.get((geo.model_type, fused_name))  # type: ignore[arg-type]
    if layout is None:
        known = ", ".join(f"{p} of model_type {t!r}" for t, p in KNOWN_FUSED)
        raise UnknownFusedLayout(
            f"{name}: the queries and keys are fused in {key} (model_type {geo.model_type!r}), and posviz does not "
            f"know how this model splits it; it knows {known}"
        )
    if layout == "concatenated":  # Phi-3: q heads, then k heads, then v heads
        _expect_rows(name, key, shapes[key], (nq + 2 * nkv) * hd, f"({nq} query + 2 x {nkv} key-value heads) x {hd}")
        q_rows = np.arange(nq)[:, None] * hd + dims
        k_rows = nq * hd + np.arange(nkv)[:, None] * hd + dims
    else:  # GPT-NeoX: each head's [q | k | v] in turn
        _expect_rows(name, key, shapes[key], 3 * nq * hd, f"3 x {nq} heads x head_dim {hd}")
        q_rows = np.arange(nq)[:, None] * 3 * hd + dims
        k_rows = q_rows + hd
    return _Layer(key, key, q_rows, k_rows)


def _expect_rows(name: str, key: str, shape: tuple, rows: int, why: str) -> None:
    if len(shape) != 2 or shape[0] != rows:
        raise ConfigMismatch(
            f"{name}: the config gives {why} = {rows} rows for {key}, but the weight has shape {tuple(shape)}; "
            "the config.json does not belong to these weights"
        )


def _prepare(source, config: dict | None) -> tuple[_Weights, Geometry, dict[int, _Layer]]:
    weights = _Weights(source, config)
    if not weights.config:
        raise ConfigMismatch(
            f"{weights.name} comes without a config.json, which says how the heads and rotary pairs are laid out; "
            "open the model's folder, or pass config="
        )
    geo = _geometry(weights.config)
    return weights, geo, _find_layers(weights, geo)


def _chosen(found: dict[int, _Layer], layers, name: str) -> list[int]:
    if layers is None:
        return list(found)
    chosen = [int(n) for n in np.atleast_1d(np.asarray(layers))]
    missing = [n for n in chosen if n not in found]
    if missing:
        raise ValueError(f"{name} has layers {min(found)} to {max(found)}; there is no layer {missing[0]}")
    return chosen


def _row_energy(weights: _Weights, key: str, rows: int) -> np.ndarray:
    """Sum of squares of each of the first ``rows`` rows, in float64, one block of rows at a time."""
    energy = np.empty(rows, dtype=np.float64)
    for start, block in weights.blocks(key, rows):
        energy[start : start + len(block)] = np.einsum("ij,ij->i", block, block)
    return energy


def _row_products(weights: _Weights, key: str, rows: int, hidden: np.ndarray) -> np.ndarray:
    out = np.empty(rows, dtype=np.float64)
    for start, block in weights.blocks(key, rows):
        out[start : start + len(block)] = block @ hidden
    return out


# --------------------------------------------------------------------------------------------------------------------
# frequency usage


@dataclasses.dataclass(frozen=True)
class FrequencyUsage:
    """The Frobenius norm of the two weight rows feeding each rotary pair of each head:
    ``query`` (layers, heads, pairs), ``key`` (layers, kv_heads, pairs); pair i turns at ``inv_freq[i]`` (highest
    frequency first), its wavelength 2 pi / theta_i positions. ``layers`` the layer numbers read; ``layout`` the
    pair layout; ``training_context`` the context the model was pre-trained on, when the config gives it."""

    query: np.ndarray
    key: np.ndarray
    inv_freq: np.ndarray
    layout: str
    layers: np.ndarray
    head_dim: int
    rotary_dim: int
    training_context: int | None
    model_type: str | None

    @property
    def wavelength(self) -> np.ndarray:
        return rope_wavelength(self.inv_freq)

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


def rope_frequency_usage(source, *, layers=None, config: dict | None = None) -> FrequencyUsage:
    """Barbero et al. (2025)'s per-frequency norms for a RoPE checkpoint.

    ``source``: a model folder (``model.safetensors`` or shards with ``model.safetensors.index.json``, or a
    PyTorch ``pytorch_model.bin``), one weights file, or a state dict (name -> numpy array or torch tensor).
    ``config``: the config.json as a dict, needed for a state dict and for a file without a config.json beside it.

    For head h and pair i, with (a, b) the pair's two dims (``pair_dimensions``) and W the rows of head h in the
    query (key) projection as the model splits it (separate ``q_proj`` / ``k_proj``; Phi-3's ``qkv_proj``;
    GPT-NeoX's per-head ``query_key_value``): usage = sqrt(|W_a|^2 + |W_b|^2), the Frobenius norm of the 2 x hidden
    block that produces pair i. Biases are not included. Grouped-query models have ``key`` per key-value head.

    Raises ``NoAttentionProjections`` (no q/k weights), ``UnknownFusedLayout`` (a fused weight whose split is not
    known for the model type) or ``ConfigMismatch`` (no config, not RoPE, or shapes that disagree with it), each a
    ``CheckpointError`` whose sentence names what was expected and what was found.
    """
    weights, geo, found = _prepare(source, config)
    chosen = _chosen(found, layers, weights.name)
    first, second = pair_dimensions(geo.head_dim, geo.rotary_dim, geo.layout)
    query = np.empty((len(chosen), geo.n_heads, geo.pairs))
    key = np.empty((len(chosen), geo.n_kv_heads, geo.pairs))
    for slot, n in enumerate(chosen):  # one layer's tensors at a time
        layer = found[n]
        q_energy = _row_energy(weights, layer.q_key, layer.rows_needed(layer.q_key))
        k_energy = q_energy if layer.fused else _row_energy(weights, layer.k_key, layer.rows_needed(layer.k_key))
        query[slot] = np.sqrt(q_energy[layer.q_rows[:, first]] + q_energy[layer.q_rows[:, second]])
        key[slot] = np.sqrt(k_energy[layer.k_rows[:, first]] + k_energy[layer.k_rows[:, second]])
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


def rope_score_pattern(q, k, inv_freq, distances, *, layout: str = "half") -> ScorePattern:
    """For q (heads, head_dim) and k (kv_heads, head_dim) in the model's layout (query head h reads key-value
    head h // (heads / kv_heads)), pair i as the complex numbers z_q = q_a + i q_b and z_k = k_a + i k_b:
    RoPE multiplies them by e^{i m theta_i} and e^{i n theta_i}, so

        q_m . k_n = sum_i Re(z_q conj(z_k) e^{i (m - n) theta_i}) + q_pass . k_pass
                  = sum_i |q_i| |k_i| cos((m - n) theta_i + phi_i) + constant,   phi_i = arg z_q - arg z_k.
    """
    q = np.atleast_2d(np.asarray(q, dtype=np.float64))
    k = np.atleast_2d(np.asarray(k, dtype=np.float64))
    theta = np.asarray(inv_freq, dtype=np.float64)
    d = np.asarray(distances, dtype=np.float64)
    if q.shape[1] != k.shape[1] or q.shape[0] % k.shape[0]:
        raise ValueError(f"q {q.shape} and k {k.shape}: heads must share key-value heads equally, with one head_dim")
    first, second = pair_dimensions(q.shape[1], 2 * theta.size, layout)
    k = np.repeat(k, q.shape[0] // k.shape[0], axis=0)
    zq = q[:, first] + 1j * q[:, second]
    zk = k[:, first] + 1j * k[:, second]
    product = zq * np.conj(zk)
    score = np.real(product[:, None, :] * np.exp(1j * d[None, :, None] * theta)).sum(axis=-1)
    rotated = np.zeros(q.shape[1], dtype=bool)
    rotated[first], rotated[second] = True, True
    constant = (q[:, ~rotated] * k[:, ~rotated]).sum(axis=-1)
    return ScorePattern(d, score, np.abs(product), np.angle(product), constant, theta)


#: Names of the token embedding, whose mean row is the default constant input.
EMBEDDING_NAMES = ("embed_tokens", "embed_in", "wte", "word_embeddings", "tok_embeddings")


def head_score_pattern(source, layer: int, distances, *, hidden=None, config: dict | None = None) -> ScorePattern:
    """The positional score pattern (``rope_score_pattern``) every head of ``layer`` implies for a constant input:
    q = W_q x, k = W_k x (biases included, as the model adds them), x = ``hidden`` or, by default, the mean row of
    the token embedding. A head whose pattern swings with distance is positional; a flat one is not."""
    weights, geo, found = _prepare(source, config)
    (n,) = _chosen(found, [layer], weights.name)
    shapes = weights.shapes()
    if hidden is None:
        hidden = _mean_embedding(weights, shapes)
    x = np.asarray(hidden, dtype=np.float64)
    cols = shapes[found[n].q_key][1]
    if x.shape != (cols,):
        raise ValueError(f"the constant input must be one vector of the model's width {cols}; got shape {x.shape}")
    q, k = _projected(weights, found[n], x, shapes)
    return rope_score_pattern(q, k, geo.inv_freq, distances, layout=geo.layout)


def _mean_embedding(weights: _Weights, shapes: dict) -> np.ndarray:
    names = [k for k in shapes if any(k.endswith(f"{e}.weight") for e in EMBEDDING_NAMES) and len(shapes[k]) == 2]
    if not names:
        raise NoAttentionProjections(
            f"{weights.name} has no token embedding ({', '.join(EMBEDDING_NAMES)}) to average; pass hidden="
        )
    key = sorted(names, key=len)[0]
    total = np.zeros(shapes[key][1])
    for _, block in weights.blocks(key, shapes[key][0]):
        total += block.sum(axis=0)
    return total / shapes[key][0]


def _projected(weights: _Weights, layer: _Layer, x: np.ndarray, shapes: dict) -> tuple[np.ndarray, np.ndarray]:
    """q = W_q x + b_q and k = W_k x + b_k of every head, (heads, head_dim) and (kv_heads, head_dim)."""
    out = {}
    for key in dict.fromkeys((layer.q_key, layer.k_key)):  # one pass over a fused weight
        needed = layer.rows_needed(key)
        bias_key = key.removesuffix("weight") + "bias"
        bias = weights.read(bias_key)[:needed] if bias_key in shapes else 0.0
        out[key] = _row_products(weights, key, needed, x) + bias
    return out[layer.q_key][layer.q_rows], out[layer.k_key][layer.k_rows]
