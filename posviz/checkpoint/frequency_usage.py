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
model's size, and no torch is needed for bfloat16. The model's geometry (which layers rotate, head_dim, rotated
dimensions, pair layout, frequencies) comes from its config.json through ``posviz.models.model_positions``, the
project's one reader of configs; only the head counts are read here. Layers that rotate alike form a
``RotaryGroup`` and are measured together on one frequency axis; a model with several groups (Gemma 3's local and
global layers, Gemma 4's global heads of another size) is read one group at a time, and its NoPE layers are named,
not measured.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping

import numpy as np

from ..base import checks
from ..encodings.rope import rope_wavelength
from ..models import LayerPositions, ModelPositions, model_positions
from .errors import CheckpointError
from .safetensors_format import SafetensorsFile, bf16_to_float32
from .sources import Model, open_model

# --------------------------------------------------------------------------------------------------------------------
# errors


class NoAttentionProjections(CheckpointError):
    """The checkpoint has no query/key projections posviz can find (or a layer lacks one of them)."""


class UnknownFusedLayout(CheckpointError):
    """The queries and keys are fused in one weight whose split posviz does not know for this model type."""


class ConfigMismatch(CheckpointError):
    """The config is missing, is not a RoPE config, or does not match the shapes of the weights."""


class UnsupportedAttention(CheckpointError):
    """The attention makes its queries or keys through a normalisation, so a quantity that needs them linear in the
    input (the score pattern of a constant input) is not computed for it (DeepSeek-V3's latent attention)."""


# --------------------------------------------------------------------------------------------------------------------
# the model's geometry, from its config

#: Text model types whose attention is multi-head latent attention (DeepSeek-V3's ``DeepseekV3Attention``).
MLA_TYPES = frozenset({"deepseek_v3"})
#: Text model types whose heads are laid out [nope | rope], the rotary dims the last rotary_dim of each query and key
#: head, with queries from ``q_b_proj`` and one key-value head from ``kv_proj`` (DeepSeek-V4's
#: ``DeepseekV4Attention``, whose keys are its values).
TRAILING_ROPE_TYPES = frozenset({"deepseek_v4"})


@dataclasses.dataclass(frozen=True, eq=False)
class RotaryGroup:
    """Layers that rotate alike, so that their pairs share one frequency axis: the same head sizes, rotated
    dimensions, pair layout and frequencies. ``layers`` their indices; ``head_dim`` the query/key head size
    (MLA: qk_nope_head_dim + qk_rope_head_dim); ``rotary_dim`` the dimensions the rotary embedding covers;
    ``inv_freq`` all its rotary_dim / 2 frequencies, transformers' buffer (Gemma 4's ``proportional`` type keeps
    zeros there for the pairs it does not turn); ``layer_type`` the first layer's (``layer_types``)."""

    layers: tuple[int, ...]
    head_dim: int
    rotary_dim: int
    layout: str
    inv_freq: np.ndarray
    layer_type: str | None
    n_kv_heads: int

    @property
    def turning_pairs(self) -> int:
        """Pairs with a frequency above zero (those the usage is measured on)."""
        return int(np.count_nonzero(self.inv_freq > 0))


@dataclasses.dataclass(frozen=True, eq=False)
class Geometry:
    """How one rotary group of a RoPE model splits its projections.

    ``n_heads`` query heads and ``n_kv_heads`` key heads (MLA: one key head, the rotary key every head shares);
    ``q_dims`` / ``k_dims``: (first, second) dimension of each turning pair inside a query head and a key head,
    pair i turning at ``inv_freq[i]``; ``k_head_dim``: the size of a key head as its projection stores it (MLA:
    the rotary key alone, qk_rope_head_dim). ``zero_pairs``: pairs of the rotary embedding whose frequency is 0
    (Gemma 4's ``proportional`` rope type), left out of the usage. ``mla``: DeepSeek-V3's latent attention (queries
    from ``q_proj`` or ``q_b_proj``, the rotary key from the last qk_rope_head_dim rows of ``kv_a_proj_with_mqa``),
    with ``kv_lora_rank`` rows before the rotary key when the config gives it. ``groups``: every rotary group of the
    model, ``group`` the index of this one; ``nope_layers``: the attention layers that do not rotate; ``n_layers``:
    the model's number of decoder layers; ``kv_shared``: {layer: the layer whose keys it reuses} (Gemma 3n / Gemma
    4's KV sharing), the key usage of such a layer being that layer's."""

    model_type: str
    n_heads: int | None
    n_kv_heads: int | None
    head_dim: int
    k_head_dim: int
    rotary_dim: int
    layout: str
    inv_freq: np.ndarray
    q_dims: tuple[np.ndarray, np.ndarray]
    k_dims: tuple[np.ndarray, np.ndarray]
    zero_pairs: int
    training_context: int | None
    mla: bool
    kv_lora_rank: int | None
    groups: tuple[RotaryGroup, ...]
    group: int
    nope_layers: tuple[int, ...]
    n_layers: int
    kv_shared: dict[int, int] = dataclasses.field(default_factory=dict)

    @property
    def pairs(self) -> int:
        return int(self.inv_freq.size)

    @property
    def layers(self) -> tuple[int, ...]:
        return self.groups[self.group].layers


def _text_config(config: dict, positions: ModelPositions) -> dict:
    """The part of a config.json that describes the decoder: a multimodal config's ``text_config`` when the model
    read is its language model."""
    text = config.get("text_config")
    if isinstance(text, dict) and positions.text_model_type != config.get("model_type"):
        return text
    return config


def _positions(config: dict) -> ModelPositions:
    try:
        positions = model_positions(config)
    except ValueError as exc:
        raise ConfigMismatch(f"the model's config.json cannot be read: {exc}") from None
    if not any(layer.kind == "rope" for layer in positions.layers):
        kinds = ", ".join(sorted({layer.kind for layer in positions.layers}))
        raise ConfigMismatch(
            f"the config describes no RoPE model: expected layers that rotate, found model_type "
            f"{config.get('model_type')!r} whose layers are {kinds}"
        )
    return positions


def _kv_heads(text: dict, layer: LayerPositions, n_heads: int | None) -> int | None:
    """A layer's key-value heads as its attention builds them: the reader's (the config class's, per layer for a
    heterogeneous config such as Gemma 4's), else the config's ``num_key_value_heads``, else one per query head."""
    if layer.num_kv_heads is not None:
        return layer.num_kv_heads
    value = text.get("num_key_value_heads")
    return n_heads if value is None else checks.positive_int("num_key_value_heads", value)


def _groups(positions: ModelPositions, text: dict, n_heads: int | None) -> tuple[RotaryGroup, ...]:
    """The model's rotating layers, grouped by what decides their pairs (in order of first appearance)."""
    found: dict[tuple, list[LayerPositions]] = {}
    kv: dict[int, int | None] = {}
    for layer in positions.layers:
        if layer.kind != "rope":
            continue
        assert layer.inv_freq is not None and layer.head_dim is not None and layer.rotary_dim is not None
        kv[layer.index] = _kv_heads(text, layer, n_heads)
        key = (layer.head_dim, layer.rotary_dim, layer.layout, layer.inv_freq.tobytes(), kv[layer.index])
        found.setdefault(key, []).append(layer)
    return tuple(
        RotaryGroup(
            layers=tuple(x.index for x in members),
            head_dim=int(first.head_dim),  # type: ignore[arg-type]
            rotary_dim=int(first.rotary_dim),  # type: ignore[arg-type]
            layout=str(first.layout),
            inv_freq=np.asarray(first.inv_freq, dtype=np.float64),
            layer_type=first.layer_type,
            n_kv_heads=kv[first.index],  # type: ignore[arg-type]
        )
        for members in found.values()
        for first in members[:1]
    )


def _geometry(config: dict, *, group: int | None = None, layer: int | None = None) -> Geometry:
    """The geometry of one rotary group of the model a config.json dict describes (``group``: its index; ``layer``:
    the group of that layer; neither: the first group). Every position setting comes from
    ``posviz.models.model_positions``, the project's one reader of configs (transformers' config classes and the
    rules of the modeling code); only the head counts are read here, from the (text) config: ``num_attention_heads``
    (else taken from the weights, as the attention's ``view(..., -1, head_dim)`` does), ``num_key_value_heads``
    and, for MLA, ``kv_lora_rank``."""
    positions = _positions(config)
    text = _text_config(config, positions)
    heads = text.get("num_attention_heads", text.get("n_head"))
    n_heads = None if heads is None else checks.positive_int("num_attention_heads", heads)
    groups = _groups(positions, text, n_heads)
    nope = tuple(x.index for x in positions.layers if x.kind == "nope")
    if layer is not None:
        index = next((g for g, members in enumerate(groups) if layer in members.layers), None)
        if index is None:
            kind = next((x.kind for x in positions.layers if x.index == layer), None)
            what = "has no rotary embedding (NoPE)" if kind == "nope" else "does not rotate"
            if kind is None:
                raise ValueError(f"the model has layers 0 to {positions.num_layers - 1}; there is no layer {layer}")
            raise ValueError(
                f"layer {layer} {what}, so it has no frequency usage; the layers that rotate are "
                f"{_ranges([n for g in groups for n in g.layers])}"
            )
        group = index
    group = 0 if group is None else group
    if not 0 <= group < len(groups):
        raise ValueError(f"the model has {len(groups)} groups of rotating layers (0 to {len(groups) - 1}); got {group}")
    chosen = groups[group]
    if n_heads is not None and chosen.n_kv_heads is not None and n_heads % chosen.n_kv_heads:
        raise ConfigMismatch(
            f"{n_heads} query heads cannot share {chosen.n_kv_heads} key-value heads equally (num_key_value_heads)"
        )
    turning = np.flatnonzero(chosen.inv_freq > 0)
    mla = positions.text_model_type in MLA_TYPES
    if mla:  # the rotary dims are the last qk_rope_head_dim of each query head and the whole of the rotary key
        nope_dim = chosen.head_dim - chosen.rotary_dim
        first, second = pair_dimensions(chosen.rotary_dim, chosen.rotary_dim, chosen.layout)
        q_dims = (nope_dim + first[turning], nope_dim + second[turning])
        k_dims = (first[turning], second[turning])
        k_head_dim, kv_heads = chosen.rotary_dim, 1
        rank = text.get("kv_lora_rank")
        kv_lora_rank = None if rank is None else checks.positive_int("kv_lora_rank", rank)
    elif positions.text_model_type in TRAILING_ROPE_TYPES:
        offset = chosen.head_dim - chosen.rotary_dim
        first, second = pair_dimensions(chosen.rotary_dim, chosen.rotary_dim, chosen.layout)
        q_dims = k_dims = (offset + first[turning], offset + second[turning])
        k_head_dim, kv_heads, kv_lora_rank = chosen.head_dim, chosen.n_kv_heads, None
    else:
        first, second = pair_dimensions(chosen.head_dim, chosen.rotary_dim, chosen.layout)
        q_dims = k_dims = (first[turning], second[turning])
        k_head_dim, kv_heads, kv_lora_rank = chosen.head_dim, chosen.n_kv_heads, None
    context = next((x.original_max_position_embeddings for x in positions.layers if x.index == chosen.layers[0]), None)
    return Geometry(
        model_type=positions.text_model_type,
        n_heads=n_heads,
        n_kv_heads=kv_heads,
        head_dim=chosen.head_dim,
        k_head_dim=k_head_dim,
        rotary_dim=chosen.rotary_dim,
        layout=chosen.layout,
        inv_freq=chosen.inv_freq[turning],
        q_dims=q_dims,
        k_dims=k_dims,
        zero_pairs=int(chosen.inv_freq.size - turning.size),
        training_context=context or positions.original_max_position_embeddings or positions.max_position_embeddings,
        mla=mla,
        kv_lora_rank=kv_lora_rank,
        groups=groups,
        group=group,
        nope_layers=nope,
        n_layers=positions.num_layers,
        kv_shared={x.index: x.kv_shared_from for x in positions.layers if x.kv_shared_from is not None},
    )


def _ranges(numbers) -> str:
    """0, 1, 2, 5 -> '0-2, 5'."""
    numbers = sorted(numbers)
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(parts)


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
#: Separate projections: queries and keys, and MLA's queries (``q_b_proj`` after a low-rank ``q_a_proj``) and its
#: latent with the rotary key (``kv_a_proj_with_mqa``), and DeepSeek-V4's queries and keys-and-values (``q_b_proj``
#: and ``kv_proj`` as transformers names them, ``wq_b`` and ``wkv`` as its checkpoints store them).
SEPARATE_NAMES = ("q_proj", "k_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_proj", "wq_b", "wkv")
#: DeepSeek-V4's (query, key) projections, by transformers' names and by its checkpoints'.
TRAILING_NAMES = (("q_b_proj", "kv_proj"), ("wq_b", "wkv"))
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
    k_rows: np.ndarray  # (n_kv_heads, k_head_dim)

    @property
    def fused(self) -> bool:
        return self.q_key == self.k_key

    def rows_needed(self, key: str) -> int:
        """How many leading rows of tensor ``key`` hold its queries and/or keys (a fused weight's values after
        them are not read)."""
        rows = [r for r, k in ((self.q_rows, self.q_key), (self.k_rows, self.k_key)) if k == key]
        return int(max(r.max() for r in rows)) + 1


def _find_layers(weights: _Weights, geo: Geometry) -> dict[int, _Layer]:
    """The query/key projections of every layer of the group ``geo`` describes, checked against the config's
    shapes; layers of other groups (other frequencies, or NoPE) are not read."""
    shapes = weights.shapes()
    found: dict[str, dict[int, dict[str, str]]] = {}
    for name in shapes:
        match = _NAME.match(name)
        if match and match["proj"] in (*SEPARATE_NAMES, *FUSED_NAMES):
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
    wanted = set(geo.layers)
    for stack_name, stack in stacks:
        try:
            beyond = [n for n in stack if n >= geo.n_layers]
            if beyond:
                raise ConfigMismatch(
                    f"{weights.name}: the config gives {geo.n_layers} layers (num_hidden_layers), but "
                    f"{stack_name} has a layer {max(beyond)}; the config.json does not belong to these weights"
                )
            layers = {
                n: _layer(weights.name, _with_shared_keys(stack, n, geo), shapes, geo, n) for n in stack if n in wanted
            }
            if layers:
                break
        except (ConfigMismatch, UnknownFusedLayout, NoAttentionProjections) as exc:  # perhaps another stack fits
            errors.append(exc)
    if not layers:
        if errors:
            raise errors[0]
        raise NoAttentionProjections(
            f"{weights.name} has projections for layers {_ranges(stacks[0][1])}, but the layers that rotate with "
            f"these frequencies are {_ranges(geo.layers)}"
        )
    return dict(sorted(layers.items()))


def _with_shared_keys(stack: dict[int, dict[str, str]], n: int, geo: Geometry) -> dict[str, str]:
    """Layer ``n``'s projections; a layer that reuses the keys of another (``Geometry.kv_shared``) has no key
    projection of its own, and its keys are that layer's."""
    projections = stack[n]
    source = geo.kv_shared.get(n)
    if source is None or "k_proj" in projections or "k_proj" not in stack.get(source, {}):
        return projections
    return {**projections, "k_proj": stack[source]["k_proj"]}


def _heads(name: str, key: str, shape: tuple, heads: int | None, head_dim: int, what: str) -> int:
    """How many heads of ``head_dim`` rows tensor ``key`` holds: ``heads`` (the config's, checked against the
    shape), or when the config does not say, its rows / head_dim as the attention's view makes them."""
    if heads is None:
        if len(shape) != 2 or shape[0] % head_dim or not shape[0]:
            raise ConfigMismatch(
                f"{name}: the config gives head_dim {head_dim}, so {key} should have a multiple of {head_dim} rows "
                f"(its {what} heads), but the weight has shape {tuple(shape)}; the config.json does not belong to "
                "these weights"
            )
        return int(shape[0]) // head_dim
    _expect_rows(name, key, shape, heads * head_dim, f"{heads} {what} heads x head_dim {head_dim}")
    return heads


def _layer(name: str, projections: dict[str, str], shapes: dict, geo: Geometry, n: int) -> _Layer:
    hd, khd = geo.head_dim, geo.k_head_dim
    if geo.mla:  # DeepseekV3Attention: q_proj (or q_b_proj after q_a_proj) and kv_a_proj_with_mqa
        q_name = "q_b_proj" if "q_b_proj" in projections else "q_proj"
        missing = [p for p in (q_name, "kv_a_proj_with_mqa") if p not in projections]
        if missing:
            raise NoAttentionProjections(
                f"{name}: layer {n} of this multi-head latent attention model has no {missing[0]}.weight; expected "
                "q_proj (or q_b_proj) and kv_a_proj_with_mqa"
            )
        q_key, k_key = projections[q_name], projections["kv_a_proj_with_mqa"]
        nq = _heads(name, q_key, shapes[q_key], geo.n_heads, hd, "query")
        shape = shapes[k_key]
        if geo.kv_lora_rank is not None:
            rows = geo.kv_lora_rank + khd
            _expect_rows(name, k_key, shape, rows, f"kv_lora_rank {geo.kv_lora_rank} + qk_rope_head_dim {khd}")
        elif len(shape) != 2 or shape[0] <= khd:
            raise ConfigMismatch(
                f"{name}: {k_key} should hold the latent rows and then the qk_rope_head_dim = {khd} rows of the "
                f"rotary key, but the weight has shape {tuple(shape)}"
            )
        start = int(shape[0]) - khd  # the rotary key: the last qk_rope_head_dim rows, one head shared by all
        q_rows = np.arange(nq)[:, None] * hd + np.arange(hd)
        return _Layer(q_key, k_key, q_rows, start + np.arange(khd)[None, :])
    dims = np.arange(hd)
    names = ("q_proj", "k_proj")
    if geo.model_type in TRAILING_ROPE_TYPES:
        names = next((pair for pair in TRAILING_NAMES if any(p in projections for p in pair)), TRAILING_NAMES[0])
    if any(p in projections for p in names):
        missing = [p for p in names if p not in projections]
        if missing:
            raise NoAttentionProjections(f"{name}: layer {n} has no {missing[0]}.weight beside its other projection")
        q_key, k_key = projections[names[0]], projections[names[1]]
        nq = _heads(name, q_key, shapes[q_key], geo.n_heads, hd, "query")
        nkv = _heads(name, k_key, shapes[k_key], geo.n_kv_heads, hd, "key-value")
        if nq % nkv:
            raise ConfigMismatch(f"{name}: {nq} query heads cannot share the {nkv} key-value heads of {k_key} equally")
        q_rows = np.arange(nq)[:, None] * hd + dims
        k_rows = np.arange(nkv)[:, None] * hd + dims
        return _Layer(q_key, k_key, q_rows, k_rows)
    fused_name = next((p for p in projections if p in FUSED_NAMES), None)
    if fused_name is None:
        raise NoAttentionProjections(
            f"{name}: layer {n} has {', '.join(sorted(projections))} but no q_proj / k_proj or fused projection"
        )
    key = projections[fused_name]
    layout = KNOWN_FUSED.get((geo.model_type, fused_name))
    if layout is None:
        known = ", ".join(f"{p} of model_type {t!r}" for t, p in KNOWN_FUSED)
        raise UnknownFusedLayout(
            f"{name}: the queries and keys are fused in {key} (model_type {geo.model_type!r}), and posviz does not "
            f"know how this model splits it; it knows {known}"
        )
    if geo.n_heads is None:
        raise ConfigMismatch(f"{name}: the config does not say how many attention heads share {key}")
    nq = geo.n_heads
    nkv = geo.n_kv_heads or nq
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


def _prepare(
    source, config: dict | None, *, group: int | None = None, layer: int | None = None
) -> tuple[_Weights, Geometry, dict[int, _Layer]]:
    weights = _Weights(source, config)
    if not weights.config:
        raise ConfigMismatch(
            f"{weights.name} comes without a config.json, which says how the heads and rotary pairs are laid out; "
            "open the model's folder, or pass config="
        )
    geo = _geometry(weights.config, group=group, layer=layer)
    return weights, geo, _find_layers(weights, geo)


def _chosen(found: dict[int, _Layer], layers, name: str, geo: Geometry) -> list[int]:
    if layers is None:
        return list(found)
    chosen = [int(n) for n in np.atleast_1d(np.asarray(layers))]
    for n in chosen:
        if n in found:
            continue
        if n in geo.nope_layers:
            raise ValueError(f"layer {n} of {name} has no rotary embedding (NoPE), so it has no frequency usage")
        other = next((g for g, members in enumerate(geo.groups) if n in members.layers and g != geo.group), None)
        if other is not None:
            raise ValueError(
                f"layer {n} of {name} rotates with other frequencies than layer {chosen[0]} (group {other}, not "
                f"{geo.group}); read the layers of one group at a time"
            )
        raise ValueError(f"{name} has layers {min(found)} to {max(found)}; there is no layer {n}")
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
    """The Frobenius norm of the two weight rows feeding each rotary pair of each head, for one rotary group of
    layers (``RotaryGroup``: the layers that share head sizes, layout and frequencies, so one frequency axis):
    ``query`` (layers, heads, pairs), ``key`` (layers, kv_heads, pairs; MLA: one key head, the rotary key all heads
    share); pair i turns at ``inv_freq[i]`` (highest frequency first), its wavelength 2 pi / theta_i positions.
    ``layers`` the layer numbers read; ``layout`` the model's pairing ("half": dims i and i + rotary_dim / 2;
    "interleaved": 2i and 2i + 1), ``head_dim`` the query head size and ``rotary_dim`` the dimensions its rotary
    embedding covers; ``zero_frequency_pairs`` the pairs of that embedding whose frequency is 0 (Gemma 4's
    ``proportional`` rope type), which never turn, have an infinite wavelength and are left out of the pairs here
    as the unrotated dims of a partial RoPE are; ``training_context`` the context the model was pre-trained on,
    when the config gives it. ``groups`` every rotary group of the model and ``group`` the index of the one read;
    ``nope_layers`` the attention layers without a rotary embedding (SmolLM3's, Llama 4's every fourth, Cohere2's
    full-attention layers), never measured as rotating; ``mla`` whether the model is DeepSeek-V3's multi-head latent
    attention; ``head_norms`` the normalisations the checkpoint applies to each query or key head after its
    projection (``q_norm``, ``k_norm``, DeepSeek-V4's ``kv_norm``: the names of their weights beside the read
    layers' projections), whose per-dimension scale the usage does not include; ``kv_shared`` {layer: the layer whose
    keys it reuses} for the read layers that project no keys of their own (Gemma 3n / Gemma 4's KV sharing)."""

    query: np.ndarray
    key: np.ndarray
    inv_freq: np.ndarray
    layout: str
    layers: np.ndarray
    head_dim: int
    rotary_dim: int
    training_context: int | None
    model_type: str | None
    nope_layers: tuple[int, ...] = ()
    groups: tuple[RotaryGroup, ...] = ()
    group: int = 0
    zero_frequency_pairs: int = 0
    mla: bool = False
    head_norms: tuple[str, ...] = ()
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
    weights, geo, found = _prepare(source, config, group=group, layer=first)
    chosen = _chosen(found, layers, weights.name, geo)
    (q_first, q_second), (k_first, k_second) = geo.q_dims, geo.k_dims
    some = found[chosen[0]]
    query = np.empty((len(chosen), len(some.q_rows), geo.pairs))
    key = np.empty((len(chosen), len(some.k_rows), geo.pairs))
    for slot, n in enumerate(chosen):  # one layer's tensors at a time
        layer = found[n]
        q_energy = _row_energy(weights, layer.q_key, layer.rows_needed(layer.q_key))
        k_energy = q_energy if layer.fused else _row_energy(weights, layer.k_key, layer.rows_needed(layer.k_key))
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
        head_norms=_head_norms(weights, found[chosen[0]], geo.head_dim),
        kv_shared={n: geo.kv_shared[n] for n in chosen if n in geo.kv_shared},
    )


def _head_norms(weights: _Weights, layer: _Layer, head_dim: int) -> tuple[str, ...]:
    """The normalisations of the queries or keys the checkpoint holds beside ``layer``'s projections: the modules
    of the same attention whose weight is one scale per dimension of a head or of all the query or key heads
    (Qwen3's and Gemma 3's ``q_norm`` / ``k_norm``, OLMo 2's over all heads, DeepSeek-V4's ``kv_norm``, stored as
    ``norm``); a latent's normalisation (MLA's ``q_a_layernorm``) has another size and is not one of them."""
    shapes = weights.shapes()
    sizes = {head_dim, layer.q_rows.size, layer.k_rows.size}
    out = []
    for prefix in dict.fromkeys(key.rsplit(".", 2)[0] for key in (layer.q_key, layer.k_key)):
        for key, shape in shapes.items():
            module = key[len(prefix) + 1 : -len(".weight")]
            if key.startswith(prefix + ".") and key.endswith(".weight") and "." not in module and "norm" in module:
                if len(shape) == 1 and shape[0] in sizes and module not in out:
                    out.append(module)
    return tuple(out)


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


#: Names of the token embedding, whose mean row is the default constant input.
EMBEDDING_NAMES = ("embed_tokens", "embed_in", "wte", "word_embeddings", "tok_embeddings")


def head_score_pattern(source, layer: int, distances, *, hidden=None, config: dict | None = None) -> ScorePattern:
    """The positional score pattern (``rope_score_pattern``) every head of ``layer`` implies for a constant input:
    q = W_q x, k = W_k x (biases included, as the model adds them), x = ``hidden`` or, by default, the mean row of
    the token embedding. A head whose pattern swings with distance is positional; a flat one is not."""
    weights, geo, found = _prepare(source, config, layer=int(layer))
    (n,) = _chosen(found, [layer], weights.name, geo)
    if geo.mla:
        raise UnsupportedAttention(
            f"{weights.name} uses multi-head latent attention: its keys (and, with q_lora_rank, its queries) pass "
            "through an RMSNorm of a latent before they are made, so q . k of a constant input is not read off the "
            "weights; its score pattern is not drawn (the frequency usage is)"
        )
    shapes = weights.shapes()
    if hidden is None:
        hidden = _mean_embedding(weights, shapes)
    x = np.asarray(hidden, dtype=np.float64)
    cols = shapes[found[n].q_key][1]
    if x.shape != (cols,):
        raise ValueError(f"the constant input must be one vector of the model's width {cols}; got shape {x.shape}")
    q, k = _projected(weights, found[n], x, shapes)
    return rope_score_pattern(q, k, geo.inv_freq, distances, layout=geo.layout, dims=geo.q_dims)


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
