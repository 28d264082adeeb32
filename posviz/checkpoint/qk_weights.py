"""The query and key weights of a RoPE checkpoint: where each layer's projections are and which of their rows
feed each rotary pair, then those rows read a block at a time.

The model's geometry (``Geometry``: which layers rotate and how, head sizes, the rows of each head inside its
projections) comes from its config.json through ``posviz.models.model_positions``, the project's one reader of
configs; only the head counts are read here. The projections are found by their names and checked against the
config's shapes (``prepare``), and read one tensor at a time and, from safetensors files, in blocks of rows (one
range read of the file each, after posviz's loader has validated the header), so memory stays near one block
whatever the model's size, and no torch is needed for bfloat16. What the rows say about the frequencies is
``posviz.lessons.frequency_usage``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping

import numpy as np

from ..base import checks
from ..encodings.rope import pair_dimensions
from ..models import LayerPositions, ModelPositions, model_positions
from .errors import CheckpointError, ConfigMismatch, NoAttentionProjections, UnknownFusedLayout
from .safetensors_format import SafetensorsFile, bf16_to_float32
from .sources import Model, open_model

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


def prepare(
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


def chosen_layers(found: dict[int, _Layer], layers, name: str, geo: Geometry) -> list[int]:
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


def row_energy(weights: _Weights, key: str, rows: int) -> np.ndarray:
    """Sum of squares of each of the first ``rows`` rows, in float64, one block of rows at a time."""
    energy = np.empty(rows, dtype=np.float64)
    for start, block in weights.blocks(key, rows):
        energy[start : start + len(block)] = np.einsum("ij,ij->i", block, block)
    return energy


def row_products(weights: _Weights, key: str, rows: int, hidden: np.ndarray) -> np.ndarray:
    out = np.empty(rows, dtype=np.float64)
    for start, block in weights.blocks(key, rows):
        out[start : start + len(block)] = block @ hidden
    return out


def head_norms(weights: _Weights, layer: _Layer, head_dim: int) -> tuple[str, ...]:
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


#: Names of the token embedding, whose mean row is the default constant input.
EMBEDDING_NAMES = ("embed_tokens", "embed_in", "wte", "word_embeddings", "tok_embeddings")


def mean_embedding(weights: _Weights, shapes: dict) -> np.ndarray:
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


def projected(weights: _Weights, layer: _Layer, x: np.ndarray, shapes: dict) -> tuple[np.ndarray, np.ndarray]:
    """q = W_q x + b_q and k = W_k x + b_k of every head, (heads, head_dim) and (kv_heads, head_dim)."""
    out = {}
    for key in dict.fromkeys((layer.q_key, layer.k_key)):  # one pass over a fused weight
        needed = layer.rows_needed(key)
        bias_key = key.removesuffix("weight") + "bias"
        bias = weights.read(bias_key)[:needed] if bias_key in shapes else 0.0
        out[key] = row_products(weights, key, needed, x) + bias
    return out[layer.q_key][layer.q_rows], out[layer.k_key][layer.k_rows]
