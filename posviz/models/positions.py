"""Every layer's positions, read from a model's config.json exactly as transformers 5.24 reads it.

Today's models rarely use one position scheme everywhere. ``model_positions(config)`` returns one
``LayerPositions`` per decoder layer (the encoder's for T5 and ModernBERT):

- Llama 4 (iRoPE, Meta 2025): every fourth layer has no RoPE (NoPE) and attends to the whole context, its
  queries scaled by the attention temperature 1 + attn_scale ln(1 + floor((m + 1) / floor_scale)) at position m
  (Nakanishi 2025, "Scalable-Softmax", arXiv:2501.19399); the other layers rotate and attend within chunks of
  8,192 tokens.
- Gemma 2 / Gemma 3 (Gemma Team 2025, "Gemma 3 Technical Report", arXiv:2503.19786): sliding-window layers
  rotate with base 10,000 (``rope_local_base_freq``), global layers with base 1,000,000 and, for the larger
  models, linear scaling by 8.
- Qwen3-Next: linear-attention (Gated DeltaNet) layers have no position signal; full-attention layers rotate a
  quarter of each head. DeepSeek-V3 (MLA, arXiv:2412.19437) rotates a separate 64-dimensional slice of its
  192-dimensional query/key heads, with YaRN and an mscale that also multiplies the softmax scale.
- SmolLM3 and Cohere2 mix NoPE and RoPE layers; ModernBERT alternates global and local attention with two bases.
- Pythia and GPT-J rotate part of each head (a quarter; 64 of 256 dimensions, interleaved), BLOOM and MPT use
  ALiBi, T5 a bucketed relative bias shared by all layers.
- Qwen2-VL / Qwen3-VL give each token three positions (M-RoPE, ``posviz.models.mrope``).

The frequencies are transformers' ``inv_freq`` buffers for each layer type, computed here in float64 with
``posviz.encodings.rope.rope_inv_freq`` (the scalings of ``modeling_rope_utils``). The config is read as the
model's config class reads it: ``rope_parameters`` or the legacy ``rope_scaling`` (which wins when both are set)
with ``type`` for ``rope_type``; a top-level ``rope_theta`` / ``partial_rotary_factor`` filled in when the rope
dict lacks them; ``original_max_position_embeddings`` moved into the dict for llama3 / yarn / longrope (Phi-3's
top-level value overriding it); per-layer-type dicts keyed by ``layer_types``; each family's own names and
defaults (``rope_local_base_freq``, ``rotary_pct``, ``rotary_emb_base``, ``rotary_dim``, ``qk_rope_head_dim``,
``global_rope_theta``, ``n_embd``, ``n_head``, ...). What transformers refuses is refused here with a sentence;
position keys it reads but ignores are listed in ``ModelPositions.ignored``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

import numpy as np

from ..base.checks import flag, mapping, number, whole
from ..encodings.rope import rope_inv_freq
from . import _read
from ._read import MAX_CONFIG_BYTES, MAX_LAYERS

KINDS = ("rope", "nope", "alibi", "relative_bias", "learned", "sinusoidal", "none")
ATTENTIONS = ("full", "sliding", "chunked", "linear", "cross")
LAYOUTS = ("half", "interleaved")
#: Why a key of the config does not change the model's positions (``ModelPositions.ignored``):
#: "unread": the model's class never reads it; "overridden": another key or the class itself sets the value;
#: "unrecognised": a key of the rope parameters transformers does not know for that rope type (it warns and goes on).
IGNORE_REASONS = ("unread", "overridden", "unrecognised")

#: The keys of a config.json that can decide positions in some model; those a model does not read are reported.
POSITION_KEYS = frozenset(
    {
        "rope_theta",
        "rope_scaling",
        "rope_parameters",
        "partial_rotary_factor",
        "rotary_pct",
        "rotary_emb_base",
        "rotary_dim",
        "rope_local_base_freq",
        "no_rope_layers",
        "no_rope_layer_interval",
        "layer_types",
        "sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "sliding_window_pattern",
        "attention_chunk_size",
        "original_max_position_embeddings",
        "head_dim",
        "qk_rope_head_dim",
        "rope_interleave",
        "global_rope_theta",
        "local_rope_theta",
        "local_attention",
        "global_attn_every_n_layers",
        "full_attention_interval",
        "attn_temperature_tuning",
        "floor_scale",
        "attn_scale",
        "alibi",
        "position_embedding_type",
        "relative_attention_num_buckets",
        "relative_attention_max_distance",
        "use_bidirectional_attention",
    }
)

#: rope types whose pre-training length transformers moves into the rope parameters (``standardize_rope_params``).
_ORIGINAL_LENGTH_TYPES = ("llama3", "yarn", "longrope")
#: transformers 5.24's ``_validate_<type>_rope_parameters``: required and optional keys of each rope type
#: (``partial_rotary_factor`` is optional for all); a missing required key is a KeyError there, an unknown key a
#: warning.
_ROPE_KEYS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "default": (frozenset({"rope_type"}), frozenset({"rope_theta"})),
    "linear": (frozenset({"rope_type", "factor"}), frozenset({"rope_theta"})),
    "dynamic": (frozenset({"rope_type", "factor"}), frozenset({"rope_theta"})),
    "yarn": (
        frozenset({"rope_type", "factor", "original_max_position_embeddings"}),
        frozenset({"rope_theta", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate"}),
    ),
    "longrope": (
        frozenset({"rope_type", "short_factor", "long_factor", "original_max_position_embeddings"}),
        frozenset({"rope_theta", "attention_factor", "factor"}),
    ),
    "llama3": (
        frozenset(
            {"rope_type", "factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"}
            | {"rope_theta"}
        ),
        frozenset(),
    ),
    "proportional": (frozenset({"rope_type", "rope_theta"}), frozenset({"factor"})),
}
ROPE_TYPES = tuple(_ROPE_KEYS)


class FrozenDict(dict):
    """A dict that refuses changes (a layer's rope parameters), and pickles (Streamlit's data cache)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("a layer's rope parameters are read-only; copy them with dict(...) to change them")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self):
        return (FrozenDict, (dict(self),))


@dataclasses.dataclass(frozen=True)
class TemperatureTuning:
    """A query scale that grows with the position m (attention temperature tuning):

        s(m) = 1 + attn_scale * ln(1 + floor((m + offset) / floor_scale)),

    1 over the first floor_scale positions, then growing like the log of the length, so that attention does not
    flatten over very long contexts (Nakanishi 2025, "Scalable-Softmax Is Superior for Attention",
    arXiv:2501.19399). Llama 4 applies it on its NoPE layers (``attn_temperature_tuning``: offset 1,
    ``floor_scale`` 8,192, ``attn_scale`` 0.1; transformers ``Llama4TextAttention``); Ministral 3 on every layer
    (``llama_4_scaling_beta`` as attn_scale, the rope parameters' original_max_position_embeddings as floor_scale,
    offset 0; ``get_llama_4_attn_scale``)."""

    floor_scale: float
    attn_scale: float
    offset: float = 1.0

    def scale(self, positions) -> np.ndarray:
        """s(m) for each position m (vectorised)."""
        m = np.asarray(positions, dtype=np.float64)
        return 1.0 + self.attn_scale * np.log1p(np.floor((m + self.offset) / self.floor_scale))


@dataclasses.dataclass(frozen=True, eq=False)
class LayerPositions:
    """How one layer of a model sees positions.

    ``kind``: one of KINDS ("none": the layer has no attention, e.g. a linear-attention / state-space mixer);
    ``attention``: one of ATTENTIONS, with ``window`` the sliding window or chunk size the config sets (None for
    full attention; ModernBERT: ``local_attention``, the whole span, half of it on each side; "cross": Mllama's
    cross-attention layers, whose keys are the image's, not the text's); ``causal``: whether
    a token sees only earlier tokens. ``layer_type``: transformers' name of the layer's type (``layer_types``),
    which also keys its rope parameters.

    RoPE layers: ``rope_type`` (transformers' name of the scaling), ``rope_theta``, ``inv_freq`` (float64, read-only:
    the frequencies theta_i of the layer's rotary embedding, transformers' ``inv_freq`` buffer for its layer type),
    ``attention_factor`` (transformers' ``attention_scaling``: cos and sin are multiplied by it), ``head_dim`` (the
    size of a query/key head; DeepSeek-V3: qk_nope_head_dim + qk_rope_head_dim), ``rotary_dim`` (= 2 len(inv_freq),
    the dimensions that turn; for the ``proportional`` type, whose slowest frequencies are 0, still the whole head),
    ``layout`` ("half": dimension i pairs with i + rotary_dim/2; "interleaved": 2i with 2i + 1), ``mrope_section``
    (M-RoPE: how many pairs encode time, height and width) and ``mrope_interleaved`` (Qwen3-VL's layout of those
    axes). ``long_inv_freq``: LongRoPE's frequencies once the text is longer than the pre-training context;
    ``original_max_position_embeddings``: that context, for the scalings that name it (llama3, yarn, longrope).

    Further effects on positions: ``temperature_tuning`` (Llama 4's NoPE layers), ``softmax_scale`` (a factor on the
    usual 1/sqrt(head_dim) of the scores: DeepSeek-V3's mscale^2 with YaRN), ``alibi_max_bias`` and ``num_heads``
    (ALiBi: slopes 2^(-alibi_max_bias * h / num_heads)), ``relative_buckets`` and ``relative_max_distance``
    (T5's bucketed relative bias, one learned scalar per bucket and head, shared by every layer).

    How the frequencies are built: ``rope_parameters``, the layer's standardised rope parameters as transformers
    holds them (read-only; ``partial_rotary_factor`` the one in effect: 1 where the model's default RoPE rotates
    the whole head whatever the config says), and ``rope_head_dim``, the head size its rope initialisation reads
    (``head_dim``; MLA: ``qk_rope_head_dim``; GPT-J: ``rotary_dim``), so that ``rope_inv_freq(rope_head_dim,
    scaling=rope_parameters)`` rebuilds ``inv_freq``. ``num_kv_heads``: the layer's key-value heads as its config
    class gives them (per layer for a heterogeneous config such as Gemma 4's); None where posviz's own family
    readers read the config. ``compress_rate``: DeepSeek-V4's compressed layers also attend to compressed entries of
    the earlier tokens, one per ``compress_rate`` (the compressed-sparse layers to those an indexer picks), beside
    their sliding window (None: no such entries). ``kv_shared_from``:
    the layer whose keys and values this one reuses instead of projecting its own (Gemma 3n's and Gemma 4's last
    ``num_kv_shared_layers`` layers: the last earlier layer of their type); they were rotated there, at the same
    positions and with the same frequencies.
    """

    index: int
    kind: str
    attention: str = "full"
    window: int | None = None
    causal: bool = True
    layer_type: str | None = None
    rope_type: str | None = None
    rope_theta: float | None = None
    inv_freq: np.ndarray | None = None
    attention_factor: float | None = None
    head_dim: int | None = None
    rotary_dim: int | None = None
    layout: str | None = None
    mrope_section: tuple[int, ...] | None = None
    mrope_interleaved: bool = False
    long_inv_freq: np.ndarray | None = None
    original_max_position_embeddings: int | None = None
    temperature_tuning: TemperatureTuning | None = None
    softmax_scale: float = 1.0
    alibi_max_bias: float | None = None
    num_heads: int | None = None
    relative_buckets: int | None = None
    relative_max_distance: int | None = None
    rope_head_dim: int | None = None
    rope_parameters: Mapping | None = None
    num_kv_heads: int | None = None
    compress_rate: int | None = None
    kv_shared_from: int | None = None

    @property
    def partial(self) -> bool:
        """Whether only part of each head rotates (rotary_dim < head_dim)."""
        return self.kind == "rope" and self.rotary_dim is not None and self.rotary_dim < (self.head_dim or 0)

    def group_key(self) -> tuple:
        """What makes two layers the same for a summary: everything but the index and the arrays' identity."""
        freq = None if self.inv_freq is None else self.inv_freq.tobytes()
        return (
            self.kind,
            self.attention,
            self.window,
            self.layer_type,
            self.rope_type,
            self.rope_theta,
            freq,
            self.attention_factor,
            self.rotary_dim,
            self.temperature_tuning,
            self.softmax_scale,
            self.compress_rate,
        )


@dataclasses.dataclass(frozen=True)
class LayerGroup:
    """Layers that see positions the same way: ``count`` of them, at ``indices``; ``layer`` is the first one (its
    fields describe them all). For a sentence such as "36 layers: 27 RoPE with chunked attention of 8,192, 9 NoPE
    with temperature tuning"."""

    count: int
    indices: tuple[int, ...]
    layer: LayerPositions


@dataclasses.dataclass(frozen=True, eq=False)
class ModelPositions:
    """The positions of every layer of a model: ``layers`` in order (``num_hidden_layers`` of them; for an
    encoder–decoder model, the encoder's). ``model_type``: the config's; ``text_model_type``: the type whose
    config was read (a multimodal config's ``text_config``, e.g. "llama4_text"). ``max_position_embeddings`` (the
    config's or its class's default; MPT's ``max_seq_len``, GPT-J's ``n_positions``; None for BLOOM and T5, which
    have no such limit) and ``original_max_position_embeddings`` (the pre-training context of a scaled RoPE, else
    None).

    ``ignored``: (key, reason) pairs, the position keys of the config that change nothing (reasons in
    IGNORE_REASONS; rope keys are written "rope_parameters.<key>", or "rope_parameters.<layer type>.<key>"; keys
    inside a multimodal config's text_config "text_config.<key>", its own top-level ones bare).

    How it was read: ``config_class``, the transformers config class of the text model, and ``rules``: ("family",)
    for the model types posviz reads with a reader of its own (``MODEL_TYPES``: every key checked, the ignored ones
    listed, temperature tuning, softmax scales, M-RoPE), else ("config_class", *the ``by_class.RULES`` used*)."""

    model_type: str
    text_model_type: str
    layers: tuple[LayerPositions, ...]
    max_position_embeddings: int | None
    original_max_position_embeddings: int | None
    ignored: tuple[tuple[str, str], ...]
    rules: tuple[str, ...] = ()
    config_class: str | None = None

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def summary(self) -> tuple[LayerGroup, ...]:
        """The layers grouped by how they see positions (``LayerPositions.group_key``), in order of first
        appearance: counts and indices, no text (a page words the sentence in its own language)."""
        groups: dict[tuple, list[LayerPositions]] = {}
        for layer in self.layers:
            groups.setdefault(layer.group_key(), []).append(layer)
        return tuple(LayerGroup(len(g), tuple(x.index for x in g), g[0]) for g in groups.values())

    def counts(self) -> dict[str, int]:
        """How many layers of each kind."""
        out: dict[str, int] = {}
        for layer in self.layers:
            out[layer.kind] = out.get(layer.kind, 0) + 1
        return out


def pre_training_context(layers) -> int | None:
    """The context a scaled RoPE model was pre-trained on: the first layer's that names one (llama3, yarn, longrope)."""
    return next(
        (x.original_max_position_embeddings for x in layers if x.original_max_position_embeddings is not None), None
    )


# ---------------------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------------------


class _Config:
    """A config dict with a record of the position keys read and the ones found ignored."""

    def __init__(self, raw: dict, name: str):
        self.raw = raw
        self.name = name
        self.read: set[str] = set()
        self.ignored: list[tuple[str, str]] = []
        self.max_positions: int | None = None

    def has(self, key: str) -> bool:
        return self.raw.get(key) is not None

    def get(self, key: str, default=None, *, aliases: tuple[str, ...] = ()):
        """``key``, else the first alias set (transformers' attribute maps: the standard name is set last and
        wins), else ``default``; None counts as absent."""
        for name in (key, *aliases):
            self.read.add(name)
        for name in (key, *aliases):
            if self.raw.get(name) is not None:
                return self.raw[name]
        return default

    def kept(self, key: str, default=None):
        """``key`` as the config class keeps it: an explicit ``null`` stays None (a window of None is full
        attention), only an absent key takes the class default."""
        self.read.add(key)
        return self.raw[key] if key in self.raw else default

    def ignore(self, key: str, reason: str) -> None:
        if key in self.raw and (key, reason) not in self.ignored:
            self.ignored.append((key, reason))

    def unread(self) -> list[tuple[str, str]]:
        found = [(key, "unread") for key in self.raw if key in POSITION_KEYS and key not in self.read]
        seen = {key for key, _ in self.ignored}
        return self.ignored + [item for item in found if item[0] not in seen]


def _sizes(
    c: _Config,
    *,
    hidden: int,
    heads: int,
    layers: int,
    hidden_aliases: tuple[str, ...] = (),
    heads_aliases: tuple[str, ...] = (),
    layers_aliases: tuple[str, ...] = (),
    divisible: bool = False,
) -> tuple[int, int, int]:
    h = whole("hidden_size", c.get("hidden_size", hidden, aliases=hidden_aliases), maximum=1 << 20)
    n = whole("num_attention_heads", c.get("num_attention_heads", heads, aliases=heads_aliases), maximum=1 << 14)
    n_layers = whole(
        "num_hidden_layers", c.get("num_hidden_layers", layers, aliases=layers_aliases), maximum=MAX_LAYERS
    )
    if divisible and h % n:
        raise ValueError(
            f"hidden_size {h} does not split into {n} attention heads of equal size; {c.name}'s config class refuses it"
        )
    return h, n, n_layers


def _head_dim(c: _Config, hidden: int, heads: int, default: int | None) -> int:
    """The head size the rotary embedding uses: ``head_dim`` (or the class default), else hidden / heads."""
    value = c.get("head_dim", default)
    if value is None:
        value = hidden // heads
        if value < 1:
            raise ValueError(f"hidden_size {hidden} is smaller than num_attention_heads {heads}")
    return whole("head_dim", value, maximum=4096)


def _max_positions(c: _Config, default: int | None, aliases: tuple[str, ...] = ()) -> int | None:
    value = c.get("max_position_embeddings", default, aliases=aliases)
    c.max_positions = None if value is None else whole("max_position_embeddings", value, maximum=1 << 40)
    return c.max_positions


def _layer_types(c: _Config, n_layers: int, default: list[str]) -> list[str]:
    """``layer_types`` as the config class checks it (``validate_layer_type``): one known type per layer."""
    value = c.get("layer_types")
    if value is None:
        return default
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValueError(f"layer_types must be a list of layer type names, got {value!r}")
    remap = {"mamba": "linear_attention", "attention": "full_attention"}  # transformers' legacy names
    value = [remap.get(t, t) for t in value]
    known = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention")
    unknown = sorted({t for t in value if t not in known})
    if unknown:
        raise ValueError(
            f"layer_types holds {', '.join(map(repr, unknown))}; posviz reads the layer types {', '.join(known)}"
        )
    if len(value) != n_layers:
        raise ValueError(
            f"layer_types names {len(value)} layers but num_hidden_layers is {n_layers}; the two must agree "
            "(transformers refuses the config too)"
        )
    return value


def _flags(c: _Config, key: str, n_layers: int, default: list[int]) -> list[int]:
    """A per-layer list of 0/1 such as ``no_rope_layers`` (1: the layer uses RoPE); an empty list means unset."""
    value = c.get(key)
    if not value:
        return default
    if not isinstance(value, list) or not all(v in (0, 1) and not isinstance(v, float) for v in value):
        raise ValueError(f"{key} must be a list of 0 and 1 (1: the layer uses RoPE), got {value!r}")
    if len(value) < n_layers:
        raise ValueError(f"{key} has {len(value)} entries but the model has {n_layers} layers; it needs one per layer")
    return [int(v) for v in value[:n_layers]]


def _rope_dict(value, where: str) -> dict:
    if value is None:
        return {}
    return dict(mapping(where, value))


def _standard_rope(
    c: _Config,
    *,
    default_theta: float,
    max_pos: int | None,
    theta_key: str = "rope_theta",
    prf_key: str = "partial_rotary_factor",
    prf_default: float | None = None,
    original_override: int | None = None,
) -> dict:
    """transformers' ``convert_rope_params_to_dict`` + ``standardize_rope_params`` for one rope dict for the
    whole model: ``rope_scaling`` if non-empty, else ``rope_parameters``; rope_theta and partial_rotary_factor
    from the top level when the dict lacks them; ``type`` read as ``rope_type``; original_max_position_embeddings
    set for llama3 / yarn / longrope (``original_override``, Phi-3's top-level value, wins over the dict's)."""
    scaling = _rope_dict(c.get("rope_scaling"), "rope_scaling")
    params = _rope_dict(c.get("rope_parameters"), "rope_parameters")
    if scaling and params:
        c.ignore("rope_parameters", "overridden")
    rope = dict(scaling or params)
    nested = [key for key, value in rope.items() if isinstance(value, dict)]
    if nested:
        raise ValueError(
            f"{c.name} reads one set of rope parameters for all its layers, but this config nests them under "
            f"{', '.join(map(repr, nested))}; write them as one object (rope_type, rope_theta, ...)"
        )
    _fill(c, rope, "rope_theta", theta_key, default_theta)
    _fill(c, rope, "partial_rotary_factor", prf_key, prf_default)
    _set_type(rope, "rope_parameters")
    _original_length(c, rope, max_pos, original_override)
    return rope


def _fill(c: _Config, rope: dict, key: str, top_key: str, default) -> None:
    """``rope[key]`` from the top-level ``top_key`` (else ``default``) when the rope dict lacks it; a top-level
    value the dict already overrides is listed as ignored."""
    top = c.get(top_key)
    if key in rope:
        if top is not None and top != rope[key]:
            c.ignore(top_key, "overridden")
        return
    value = default if top is None else top
    if value is not None:
        rope[key] = value


def _original_length(c: _Config, rope: dict, max_pos: int | None, override: int | None = None) -> None:
    """The pre-training length of llama3 / yarn / longrope, as ``standardize_rope_params`` sets it when the
    rotary module is built: a top-level ``original_max_position_embeddings`` (an attribute of the config by then;
    Phi-3's is a field of its class, default 4,096) replaces the dict's, which otherwise defaults to
    max_position_embeddings."""
    if rope["rope_type"] not in _ORIGINAL_LENGTH_TYPES:
        return
    top = c.get("original_max_position_embeddings", override)
    if top is not None:
        top = whole("original_max_position_embeddings", top)
        if "original_max_position_embeddings" in rope and rope["original_max_position_embeddings"] != top:
            c.ignored.append(("rope_parameters.original_max_position_embeddings", "overridden"))
        rope["original_max_position_embeddings"] = top
    elif max_pos is not None:
        rope.setdefault("original_max_position_embeddings", max_pos)


def _set_type(rope: dict, where: str) -> None:
    written, legacy = rope.get("rope_type"), rope.get("type")
    if written is not None and legacy is not None and written != legacy:
        raise ValueError(
            f"{where} says both rope_type {written!r} and type {legacy!r}; they contradict each other (transformers "
            "would use rope_type and drop type); keep one"
        )
    rope["rope_type"] = written if written is not None else (legacy if legacy is not None else "default")
    if not isinstance(rope["rope_type"], str):
        raise ValueError(f"{where}: rope_type must be a name such as 'yarn', got {rope['rope_type']!r}")


def _validate_rope(c: _Config, rope: dict, where: str, ignore_keys: frozenset[str] = frozenset()) -> None:
    """transformers' ``validate_rope`` for one dict: a known rope type with its required keys (a KeyError there,
    a ValueError here); unknown keys are ignored with a warning there, and listed here."""
    rope_type = rope["rope_type"]
    if rope_type not in _ROPE_KEYS:
        raise ValueError(
            f"{where}: unknown rope_type {rope_type!r}; transformers knows {', '.join(ROPE_TYPES)} (its model "
            "cannot be built with another)"
        )
    required, optional = _ROPE_KEYS[rope_type]
    received = set(rope) - {"type"} - ignore_keys
    missing = sorted(required - received)
    if missing:
        raise ValueError(
            f"{where}: rope_type {rope_type!r} needs {', '.join(missing)}, which the config does not set "
            "(transformers refuses it: 'Missing required keys in `rope_parameters`')"
        )
    for key in sorted(received - required - optional - {"partial_rotary_factor"}):
        c.ignored.append((f"{where}.{key}", "unrecognised"))
    # None for these: transformers fails when it builds the rotary module (a power or a product with None)
    number(f"{where}.rope_theta", rope.get("rope_theta"))
    if "partial_rotary_factor" in rope:
        number(f"{where}.partial_rotary_factor", rope["partial_rotary_factor"])
    if rope.get("factor") is not None:
        number(f"{where}.factor", rope["factor"])
    if rope.get("partial_rotary_factor") is not None and rope["partial_rotary_factor"] > 1:
        raise ValueError(
            f"{where}.partial_rotary_factor is the share of each head that rotates, at most 1; got "
            f"{rope['partial_rotary_factor']}"
        )


def _frequencies(
    rope: dict, head_dim: int, max_pos: int | None, *, default_partial: bool, seq_len: int | None = None
) -> tuple[np.ndarray, float]:
    """``(inv_freq, attention_factor)`` as the layer's rotary module builds them at initialisation.

    "default": the model's ``compute_default_rope_parameters``, theta_i = rope_theta^(-2i/d) over d = head_dim
    (times partial_rotary_factor for the models whose default honours it: GPT-NeoX, Phi-3, Qwen3-Next). The
    scaled types: transformers' ``ROPE_INIT_FUNCTIONS`` through ``rope_inv_freq`` (at seq_len None: LongRoPE's
    short factors, dynamic NTK unscaled). "proportional": theta_i = rope_theta^(-2i/head_dim) / factor for the
    first int(partial_rotary_factor * head_dim // 2) pairs and 0 for the rest (the denominator stays head_dim)."""
    theta = float(rope["rope_theta"])
    rope_type = rope["rope_type"]
    if rope_type == "default":
        prf = float(rope.get("partial_rotary_factor", 1.0)) if default_partial else 1.0
        return rope_inv_freq(head_dim, base=theta, partial_rotary_factor=prf)
    if rope_type == "proportional":
        prf = float(rope.get("partial_rotary_factor", 1.0))
        rotated = int(prf * head_dim // 2)
        inv = np.zeros(head_dim // 2)
        inv[:rotated] = 1.0 / theta ** (np.arange(0, 2 * rotated, 2, dtype=np.float64) / head_dim)
        return inv / float(rope.get("factor", 1.0)), 1.0
    return rope_inv_freq(head_dim, base=theta, scaling=rope, max_position_embeddings=max_pos, seq_len=seq_len)


class _RopeMaker:
    """Builds the RoPE fields of the layers of one rope dict once, so that a deep model shares its arrays."""

    def __init__(
        self,
        rope: dict,
        head_dim: int,
        max_pos: int | None,
        *,
        default_partial: bool = False,
        layout: str = "half",
        qk_head_dim: int | None = None,
    ):
        inv, factor = _frequencies(rope, head_dim, max_pos, default_partial=default_partial)
        inv.setflags(write=False)
        long = None
        if rope["rope_type"] == "longrope":
            original = int(rope["original_max_position_embeddings"])
            long, _ = _frequencies(rope, head_dim, max_pos, default_partial=default_partial, seq_len=original + 1)
            long.setflags(write=False)
        params = dict(rope)
        if rope["rope_type"] == "default" and not default_partial:
            params["partial_rotary_factor"] = 1.0
        self.fields = {
            "rope_head_dim": head_dim,
            "rope_parameters": FrozenDict(params),
            "rope_type": rope["rope_type"],
            "rope_theta": float(rope["rope_theta"]),
            "inv_freq": inv,
            "attention_factor": float(factor),
            "head_dim": qk_head_dim or head_dim,
            "rotary_dim": 2 * inv.size,
            "layout": layout,
            "long_inv_freq": long,
            "original_max_position_embeddings": (
                int(rope["original_max_position_embeddings"]) if rope["rope_type"] in _ORIGINAL_LENGTH_TYPES else None
            ),
        }

    def layer(self, index: int, **kw) -> LayerPositions:
        return LayerPositions(index=index, kind="rope", **self.fields, **kw)


def _attention(layer_type: str, sliding_window: int | None, chunk: int | None = None) -> tuple[str, int | None]:
    if layer_type == "sliding_attention" and sliding_window is not None:
        return "sliding", sliding_window
    if layer_type == "chunked_attention" and chunk is not None:
        return "chunked", chunk
    if layer_type == "linear_attention":
        return "linear", None
    return "full", None


def _optional_whole(name: str, value) -> int | None:
    return None if value is None else whole(name, value)


# ---------------------------------------------------------------------------------------------------------------
# Families: one reader per config class of transformers 5.24
# ---------------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Simple:
    """A decoder whose layers all rotate with one rope dict (LlamaConfig-like classes), maybe with sliding
    windows: the class defaults and how it reads them."""

    name: str
    hidden: int
    heads: int
    layers: int
    max_pos: int
    head_dim: int | None = None
    default_theta: float = 10000.0
    default_partial: bool = False
    divisible: bool = False
    sliding: str | None = None  # "all" (Mistral), "qwen" (use_sliding_window + max_window_layers), "layer_types"
    default_sliding_window: int | None = 4096
    max_window_layers: int = 28
    ignore_keys: frozenset[str] = frozenset()


def _simple(spec: _Simple) -> Callable[[_Config], list[LayerPositions]]:
    def read(c: _Config) -> list[LayerPositions]:
        hidden, heads, n_layers = _sizes(
            c, hidden=spec.hidden, heads=spec.heads, layers=spec.layers, divisible=spec.divisible
        )
        head_dim = _head_dim(c, hidden, heads, spec.head_dim)
        max_pos = _max_positions(c, spec.max_pos)
        rope = _standard_rope(c, default_theta=spec.default_theta, max_pos=max_pos)
        _validate_rope(c, rope, "rope_parameters", spec.ignore_keys)
        maker = _RopeMaker(rope, head_dim, max_pos, default_partial=spec.default_partial)
        types_ = ["full_attention"] * n_layers
        window = None
        if spec.sliding == "all":
            window = _optional_whole("sliding_window", c.kept("sliding_window", spec.default_sliding_window))
            types_ = ["sliding_attention" if window is not None else "full_attention"] * n_layers
            c.ignore("layer_types", "unread")
            c.read.add("layer_types")
        elif spec.sliding == "qwen":
            use = flag("use_sliding_window", c.get("use_sliding_window", False))
            window = _optional_whole("sliding_window", c.kept("sliding_window", spec.default_sliding_window))
            if not use:
                if window is not None:
                    c.ignore("sliding_window", "overridden")
                window = None
            first = whole("max_window_layers", c.get("max_window_layers", spec.max_window_layers), minimum=0)
            default = [
                "sliding_attention" if window is not None and i >= first else "full_attention" for i in range(n_layers)
            ]
            types_ = _layer_types(c, n_layers, default)
        elif spec.sliding == "layer_types":
            window = _optional_whole("sliding_window", c.kept("sliding_window", spec.default_sliding_window))
            types_ = _layer_types(c, n_layers, types_)
        return [
            maker.layer(i, layer_type=t, **dict(zip(("attention", "window"), _attention(t, window), strict=True)))
            for i, t in enumerate(types_)
        ]

    return read


def _layers_with(maker: _RopeMaker, types_: list[str], window: int | None, chunk: int | None = None, **kw):
    out = []
    for i, t in enumerate(types_):
        attention, win = _attention(t, window, chunk)
        out.append(maker.layer(i, layer_type=t, attention=attention, window=win, **kw))
    return out


def _llama4_text(c: _Config) -> list[LayerPositions]:
    """Llama4TextConfig: ``no_rope_layers`` (1 = RoPE; empty or absent: NoPE every ``no_rope_layer_interval``-th
    layer), chunked attention of ``attention_chunk_size`` on RoPE layers, full attention with temperature tuning
    on NoPE layers; frequencies applied as complex numbers (interleaved pairs)."""
    hidden, heads, n_layers = _sizes(c, hidden=5120, heads=40, layers=48)
    head_dim = _head_dim(c, hidden, heads, 128)
    max_pos = _max_positions(c, 4096 * 32)
    rope = _standard_rope(c, default_theta=500000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters")
    interval = whole("no_rope_layer_interval", c.get("no_rope_layer_interval", 4))
    default = [int((i + 1) % interval != 0) for i in range(n_layers)]
    use_rope = _flags(c, "no_rope_layers", n_layers, default)
    chunk = _optional_whole("attention_chunk_size", c.kept("attention_chunk_size", 8192))
    types_ = _layer_types(
        c,
        n_layers,
        ["chunked_attention" if r and chunk is not None else "full_attention" for r in use_rope],
    )
    tuning = None
    switch = c.get("attn_temperature_tuning", True)
    if not isinstance(switch, bool):
        raise ValueError(
            f"attn_temperature_tuning must be true or false, got {switch!r}: transformers 5.24's Llama4TextConfig "
            "refuses anything else (Llama 4 Scout's published config.json says 4, which earlier versions read as "
            "true; write true)"
        )
    if switch:
        tuning = TemperatureTuning(
            number("floor_scale", c.get("floor_scale", 8192)), number("attn_scale", c.get("attn_scale", 0.1))
        )
    else:
        c.read.update({"floor_scale", "attn_scale"})
        for key in ("floor_scale", "attn_scale"):
            c.ignore(key, "unread")
    maker = _RopeMaker(rope, head_dim, max_pos, layout="interleaved")
    out = []
    for i, (r, t) in enumerate(zip(use_rope, types_, strict=True)):
        attention, window = _attention(t, None, chunk)
        if r:
            out.append(maker.layer(i, layer_type=t, attention=attention, window=window))
        else:
            out.append(
                LayerPositions(i, "nope", attention, window, layer_type=t, head_dim=head_dim, temperature_tuning=tuning)
            )
    return out


def _nested_rope(
    c: _Config,
    types_: list[str],
    max_pos: int | None,
    *,
    thetas: Mapping[str, tuple[str | None, float]],
    scaling_to: tuple[str, ...],
) -> dict[str, dict]:
    """The per-layer-type rope dicts of Gemma 3, OLMo 3 and ModernBERT (their ``convert_rope_params_to_dict``):
    ``rope_parameters`` keyed by layer type (the class's defaults when absent; other keys beside them, such as a
    flat rope dict, are not read), a legacy ``rope_scaling`` merged
    into the types of ``scaling_to``, each type's rope_theta from its own top-level key (``thetas``: type ->
    (key, class default); OLMo 3 reads ``rope_theta`` for the full-attention layers only), then
    ``standardize_rope_params`` per type."""
    params = c.get("rope_parameters")
    rope: dict[str, dict] = {}
    if params is not None:
        params = mapping("rope_parameters", params)
        rope = {key: dict(value) for key, value in params.items() if isinstance(value, dict) and key in thetas}
        # keys beside the per-type dicts (a flat {"rope_type": "linear", "factor": 8.0} written for one global
        # RoPE) are kept by transformers but never read: the layer types get their defaults instead
        for key in params:
            if key not in rope:
                c.ignored.append((f"rope_parameters.{key}", "unread"))
    else:
        rope = {t: {"rope_type": "default"} for t in thetas}
    scaling = c.get("rope_scaling")
    if scaling is not None:
        scaling = mapping("rope_scaling", scaling)
        for t in scaling_to:
            rope.setdefault(t, {"rope_type": "default"}).update(scaling)
    popped: set[str] = set()
    for t, (key, default) in thetas.items():
        rope.setdefault(t, {"rope_type": "default"})
        value = c.get(key) if key is not None and key not in popped else None
        if key is not None:
            popped.add(key)
        rope[t].setdefault("rope_theta", default if value is None else value)
    for t, params_t in rope.items():
        _set_type(params_t, f"rope_parameters.{t}")
        if params_t["rope_type"] in _ORIGINAL_LENGTH_TYPES and max_pos is not None:
            params_t.setdefault("original_max_position_embeddings", max_pos)
        # transformers' YaRN reads ``truncate`` from the top level of rope_parameters, never from a layer type's
        if "truncate" in params_t:
            c.ignored.append((f"rope_parameters.{t}.truncate", "unread"))
            params_t = dict(params_t)
        _validate_rope(c, params_t, f"rope_parameters.{t}")
    for t in set(types_):
        if t not in rope:
            raise ValueError(f"layer_types uses {t!r}, for which {c.name} has no rope parameters")
    return {t: {k: v for k, v in p.items() if k != "truncate"} for t, p in rope.items()}


def _gemma2(c: _Config) -> list[LayerPositions]:
    hidden, heads, n_layers = _sizes(c, hidden=2304, heads=8, layers=26, divisible=True)
    head_dim = _head_dim(c, hidden, heads, 256)
    max_pos = _max_positions(c, 8192)
    rope = _standard_rope(c, default_theta=10000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters")
    window = _optional_whole("sliding_window", c.kept("sliding_window", 4096))
    default = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]
    types_ = _layer_types(c, n_layers, default)
    causal = not flag("use_bidirectional_attention", c.get("use_bidirectional_attention", False))
    return _layers_with(_RopeMaker(rope, head_dim, max_pos), types_, window, causal=causal)


def _gemma3_text(c: _Config) -> list[LayerPositions]:
    """Gemma3TextConfig: sliding layers rotate with ``rope_local_base_freq`` (10,000), global ones with
    ``rope_theta`` (1,000,000) and the legacy ``rope_scaling`` (linear 8 on the 4B-27B models)."""
    hidden, heads, n_layers = _sizes(c, hidden=2304, heads=8, layers=26, divisible=True)
    head_dim = _head_dim(c, hidden, heads, 256)
    max_pos = _max_positions(c, 131072)
    window = _optional_whole("sliding_window", c.kept("sliding_window", 4096))
    bidirectional = flag("use_bidirectional_attention", c.get("use_bidirectional_attention", False))
    if window is not None and bidirectional:
        window = window // 2 + 1  # the class stores half the window plus one: it reaches both ways
    pattern = whole("sliding_window_pattern", c.get("sliding_window_pattern", 6))
    default = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n_layers)]
    types_ = _layer_types(c, n_layers, default)
    ropes = _nested_rope(
        c,
        types_,
        max_pos,
        thetas={"full_attention": ("rope_theta", 1_000_000.0), "sliding_attention": ("rope_local_base_freq", 10_000.0)},
        scaling_to=("full_attention",),
    )
    makers = {t: _RopeMaker(ropes[t], head_dim, max_pos) for t in set(types_)}
    return [
        makers[t].layer(
            i,
            layer_type=t,
            causal=not bidirectional,
            **dict(zip(("attention", "window"), _attention(t, window), strict=True)),
        )
        for i, t in enumerate(types_)
    ]


def _olmo3(c: _Config) -> list[LayerPositions]:
    """Olmo3Config: three sliding-window layers, then one full-attention layer; both rotate, each with its own rope
    dict (``rope_scaling`` goes to the full-attention layers only, and so does the top-level ``rope_theta``: the
    sliding layers keep the class's 500,000)."""
    hidden, heads, n_layers = _sizes(c, hidden=4096, heads=32, layers=32)
    head_dim = _head_dim(c, hidden, heads, None)
    max_pos = _max_positions(c, 2048)
    window = _optional_whole("sliding_window", c.kept("sliding_window", 4096))
    default = ["sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(n_layers)]
    types_ = _layer_types(c, n_layers, default)
    ropes = _nested_rope(
        c,
        types_,
        max_pos,
        thetas={"full_attention": ("rope_theta", 500000.0), "sliding_attention": ("rope_theta", 500000.0)},
        scaling_to=("full_attention",),
    )
    makers = {t: _RopeMaker(ropes[t], head_dim, max_pos) for t in set(types_)}
    return [
        makers[t].layer(i, layer_type=t, **dict(zip(("attention", "window"), _attention(t, window), strict=True)))
        for i, t in enumerate(types_)
    ]


def _modernbert(c: _Config) -> list[LayerPositions]:
    """ModernBertConfig (an encoder): every ``global_attn_every_n_layers``-th layer (from the first) is global,
    base ``global_rope_theta`` 160,000; the others attend within ``local_attention`` tokens (half on each side),
    base ``local_rope_theta`` 10,000."""
    hidden, heads, n_layers = _sizes(c, hidden=768, heads=12, layers=22)
    head_dim = _head_dim(c, hidden, heads, None)
    max_pos = _max_positions(c, 8192)
    local = whole("local_attention", c.get("local_attention", 128))
    every = whole("global_attn_every_n_layers", c.get("global_attn_every_n_layers", 3))
    default = ["sliding_attention" if i % every else "full_attention" for i in range(n_layers)]
    types_ = _layer_types(c, n_layers, default)
    ropes = _nested_rope(
        c,
        types_,
        max_pos,
        thetas={
            "full_attention": ("global_rope_theta", 160_000.0),
            "sliding_attention": ("local_rope_theta", 10_000.0),
        },
        scaling_to=("full_attention", "sliding_attention"),
    )
    c.ignore("rope_theta", "unread")
    makers = {t: _RopeMaker(ropes[t], head_dim, max_pos) for t in set(types_)}
    return [
        makers[t].layer(
            i,
            layer_type=t,
            causal=False,
            **dict(zip(("attention", "window"), _attention(t, local), strict=True)),
        )
        for i, t in enumerate(types_)
    ]


def _smollm3(c: _Config) -> list[LayerPositions]:
    """SmolLM3Config: ``no_rope_layers`` (1 = RoPE), default NoPE every fourth layer (``no_rope_layer_interval``)."""
    hidden, heads, n_layers = _sizes(c, hidden=2048, heads=16, layers=36)
    head_dim = _head_dim(c, hidden, heads, None)
    max_pos = _max_positions(c, 32768)
    rope = _standard_rope(c, default_theta=2_000_000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters")
    interval = whole("no_rope_layer_interval", c.get("no_rope_layer_interval", 4))
    if c.get("no_rope_layers") is not None and c.raw.get("no_rope_layers"):
        c.ignore("no_rope_layer_interval", "overridden")
    use_rope = _flags(c, "no_rope_layers", n_layers, [int((i + 1) % interval != 0) for i in range(n_layers)])
    use_window = flag("use_sliding_window", c.get("use_sliding_window", False))
    window = _optional_whole("sliding_window", c.kept("sliding_window"))
    default = [
        "sliding_attention" if use_window and window is not None and not r else "full_attention" for r in use_rope
    ]
    types_ = _layer_types(c, n_layers, default)
    maker = _RopeMaker(rope, head_dim, max_pos)
    out = []
    for i, (r, t) in enumerate(zip(use_rope, types_, strict=True)):
        attention, win = _attention(t, window if use_window else None)
        if r:
            out.append(maker.layer(i, layer_type=t, attention=attention, window=win))
        else:
            out.append(LayerPositions(i, "nope", attention, win, layer_type=t, head_dim=head_dim))
    return out


def _cohere2(c: _Config) -> list[LayerPositions]:
    """Cohere2Config: sliding-window layers rotate (interleaved pairs), full-attention layers have no position
    signal."""
    hidden, heads, n_layers = _sizes(c, hidden=8192, heads=64, layers=40)
    head_dim = _head_dim(c, hidden, heads, None)
    max_pos = _max_positions(c, 8192)
    rope = _standard_rope(c, default_theta=10000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters")
    window = _optional_whole("sliding_window", c.kept("sliding_window", 4096))
    pattern = whole("sliding_window_pattern", c.get("sliding_window_pattern", 4))
    default = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(n_layers)]
    types_ = _layer_types(c, n_layers, default)
    maker = _RopeMaker(rope, head_dim, max_pos, layout="interleaved")
    out = []
    for i, t in enumerate(types_):
        attention, win = _attention(t, window)
        if t == "sliding_attention" and window is not None:
            out.append(maker.layer(i, layer_type=t, attention=attention, window=win))
        else:
            out.append(LayerPositions(i, "nope", attention, win, layer_type=t, head_dim=head_dim))
    return out


def _qwen3_next(c: _Config) -> list[LayerPositions]:
    """Qwen3NextConfig: linear-attention (Gated DeltaNet) layers, no position signal, and every
    ``full_attention_interval``-th layer full attention rotating a quarter of each head (partial_rotary_factor
    0.25, which its default RoPE honours)."""
    hidden, heads, n_layers = _sizes(c, hidden=2048, heads=16, layers=48)
    head_dim = _head_dim(c, hidden, heads, 256)
    max_pos = _max_positions(c, 32768)
    rope = _standard_rope(c, default_theta=10000.0, max_pos=max_pos, prf_default=0.25)
    _validate_rope(c, rope, "rope_parameters")
    interval = whole("full_attention_interval", c.get("full_attention_interval", 4))
    default = ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(n_layers)]
    if c.has("layer_types"):
        c.ignore("full_attention_interval", "overridden")
    types_ = _layer_types(c, n_layers, default)
    maker = _RopeMaker(rope, head_dim, max_pos, default_partial=True)
    return [
        maker.layer(i, layer_type=t) if t != "linear_attention" else LayerPositions(i, "none", "linear", layer_type=t)
        for i, t in enumerate(types_)
    ]


def _deepseek_v3(c: _Config) -> list[LayerPositions]:
    """DeepseekV3Config (multi-head latent attention): each query/key head is qk_nope_head_dim dimensions without
    position plus qk_rope_head_dim that rotate (the rotary embedding's head_dim); with ``rope_interleave`` the
    rotated slice is stored as interleaved pairs. With a scaling and ``mscale_all_dim``, the softmax scale
    1/sqrt(qk_head_dim) is multiplied by mscale^2, mscale = 0.1 mscale_all_dim ln(factor) + 1."""
    hidden, heads, n_layers = _sizes(c, hidden=7168, heads=128, layers=61)
    rope_dim = whole("qk_rope_head_dim", c.get("qk_rope_head_dim", 64), maximum=4096)
    nope_dim = whole("qk_nope_head_dim", c.get("qk_nope_head_dim", 128), minimum=0)
    head_dim = c.get("head_dim")
    if head_dim is not None and head_dim != rope_dim:
        raise ValueError(
            f"head_dim {head_dim!r} and qk_rope_head_dim {rope_dim} contradict each other: DeepSeek-V3's rotary "
            "embedding would build its frequencies for head_dim while its attention rotates qk_rope_head_dim "
            "dimensions; leave head_dim out (the class sets it to qk_rope_head_dim)"
        )
    max_pos = _max_positions(c, 4096)
    rope = _standard_rope(c, default_theta=10000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters")
    interleave = flag("rope_interleave", c.get("rope_interleave", True))
    softmax = 1.0
    if rope["rope_type"] != "default" and rope.get("mscale_all_dim"):
        factor = number("rope_parameters.factor", rope["factor"])
        mscale = 1.0 if factor <= 1 else 0.1 * float(rope["mscale_all_dim"]) * math.log(factor) + 1.0
        softmax = mscale * mscale
    maker = _RopeMaker(
        rope, rope_dim, max_pos, layout="interleaved" if interleave else "half", qk_head_dim=nope_dim + rope_dim
    )
    return [maker.layer(i, softmax_scale=softmax) for i in range(n_layers)]


def _gpt_oss(c: _Config) -> list[LayerPositions]:
    """GptOssConfig: alternating sliding-window (128) and full-attention layers, all with YaRN (the class's
    default: factor 32 over 4,096 tokens, beta 32 / 1, no truncation)."""
    hidden, heads, n_layers = _sizes(c, hidden=2880, heads=64, layers=36)
    head_dim = _head_dim(c, hidden, heads, 64)
    max_pos = _max_positions(c, 131072)
    if not c.has("rope_parameters") and not c.has("rope_scaling"):
        c.raw = {
            **c.raw,
            "rope_parameters": {
                "rope_type": "yarn",
                "factor": 32.0,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "truncate": False,
                "original_max_position_embeddings": 4096,
            },
        }
    rope = _standard_rope(c, default_theta=150000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters")
    window = _optional_whole("sliding_window", c.kept("sliding_window", 128))
    default = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]
    types_ = _layer_types(c, n_layers, default)
    return _layers_with(_RopeMaker(rope, head_dim, max_pos), types_, window)


def _phi3(c: _Config) -> list[LayerPositions]:
    """Phi3Config: ``original_max_position_embeddings`` is a field of the class (default 4,096) that overrides the
    rope dict's; rope types "su" and "yarn" are renamed "longrope" after standardisation; only "default" and
    "longrope" are accepted, with one short and one long factor per rotated pair. The default RoPE honours
    partial_rotary_factor. ``sliding_window`` applies to every layer."""
    hidden, heads, n_layers = _sizes(c, hidden=3072, heads=32, layers=32)
    head_dim = _head_dim(c, hidden, heads, None)
    max_pos = _max_positions(c, 4096)
    original = whole("original_max_position_embeddings", c.get("original_max_position_embeddings", 4096))
    scaling = _rope_dict(c.get("rope_scaling"), "rope_scaling")
    params = _rope_dict(c.get("rope_parameters"), "rope_parameters")
    if scaling and params:
        c.ignore("rope_parameters", "overridden")
    rope = dict(scaling or params)
    _fill(c, rope, "rope_theta", "rope_theta", 10000.0)
    _fill(c, rope, "partial_rotary_factor", "partial_rotary_factor", 1.0)
    _set_type(rope, "rope_parameters")
    _original_length(c, rope, max_pos, original)
    if rope["rope_type"] in ("su", "yarn"):
        rope["rope_type"] = "longrope"
    if rope["rope_type"] not in ("default", "longrope"):
        raise ValueError(
            f"Phi-3 reads only the rope types default and longrope (su and yarn are renamed longrope); got "
            f"{rope['rope_type']!r}"
        )
    _validate_rope(c, rope, "rope_parameters")
    rotary = int(hidden // heads * float(rope["partial_rotary_factor"]))
    for key in ("short_factor", "long_factor"):
        value = rope.get(key)
        if value is not None and (not isinstance(value, list) or len(value) != rotary // 2):
            raise ValueError(
                f"rope_parameters.{key} must be a list of {rotary // 2} numbers, one per rotated pair; got "
                f"{len(value) if isinstance(value, list) else value!r}"
            )
    window = _optional_whole("sliding_window", c.kept("sliding_window"))
    maker = _RopeMaker(rope, head_dim, max_pos, default_partial=True)
    attention = "sliding" if window is not None else "full"
    return [maker.layer(i, attention=attention, window=window) for i in range(n_layers)]


def _gpt_neox(c: _Config) -> list[LayerPositions]:
    """GPTNeoXConfig (Pythia): ``rotary_emb_base`` and ``rotary_pct`` (default 0.25) are its names for rope_theta
    and partial_rotary_factor, and its default RoPE honours the latter."""
    hidden, heads, n_layers = _sizes(c, hidden=6144, heads=64, layers=44, divisible=True)
    head_dim = _head_dim(c, hidden, heads, None)
    max_pos = _max_positions(c, 2048)
    rope = _standard_rope(
        c, default_theta=10000.0, max_pos=max_pos, theta_key="rotary_emb_base", prf_key="rotary_pct", prf_default=0.25
    )
    for key in ("rope_theta", "partial_rotary_factor"):
        c.read.add(key)
        c.ignore(key, "unread")
    _validate_rope(c, rope, "rope_parameters")
    maker = _RopeMaker(rope, head_dim, max_pos, default_partial=True)
    return [maker.layer(i) for i in range(n_layers)]


def _gptj(c: _Config) -> list[LayerPositions]:
    """GPTJConfig: the first ``rotary_dim`` (64) dimensions of each head rotate as interleaved pairs with base
    10,000; GPT-J builds its table itself and reads no rope_theta or scaling."""
    hidden, heads, n_layers = _sizes(
        c,
        hidden=4096,
        heads=16,
        layers=28,
        hidden_aliases=("n_embd",),
        heads_aliases=("n_head",),
        layers_aliases=("n_layer",),
        divisible=True,
    )
    head_dim = hidden // heads
    c.read.add("head_dim")
    c.ignore("head_dim", "unread")
    rotary = c.get("rotary_dim", 64)
    rotary = whole("rotary_dim", rotary, minimum=2, maximum=head_dim)
    if rotary % 2:
        raise ValueError(
            f"GPT-J turns neighbouring pairs of its first rotary_dim dimensions: it must be even; got {rotary}"
        )
    _max_positions(c, 2048, aliases=("n_positions",))
    inv, _ = rope_inv_freq(rotary, base=10000.0)
    inv.setflags(write=False)
    return [
        LayerPositions(
            i,
            "rope",
            rope_type="default",
            rope_theta=10000.0,
            inv_freq=inv,
            attention_factor=1.0,
            head_dim=head_dim,
            rotary_dim=rotary,
            layout="interleaved",
            rope_head_dim=rotary,
            rope_parameters=FrozenDict({"rope_type": "default", "rope_theta": 10000.0}),
        )
        for i in range(n_layers)
    ]


def _mrope(default_section: list[int], interleaved: bool, ignore_keys: frozenset[str]):
    """Qwen2-VL / Qwen3-VL text decoders: one rope dict whose ``mrope_section`` (default ``default_section``)
    splits the pairs between time, height and width; Qwen2-VL's type "mrope" is read as "default"."""

    def read(c: _Config) -> list[LayerPositions]:
        if interleaved:
            hidden, heads, n_layers = _sizes(c, hidden=4096, heads=32, layers=32)
            head_dim = _head_dim(c, hidden, heads, 128)
            max_pos = _max_positions(c, 128000)
            theta = 500000.0
        else:
            hidden, heads, n_layers = _sizes(c, hidden=8192, heads=64, layers=80)
            head_dim = _head_dim(c, hidden, heads, None)
            max_pos = _max_positions(c, 32768)
            theta = 1000000.0
        scaling = _rope_dict(c.get("rope_scaling"), "rope_scaling")
        params = _rope_dict(c.get("rope_parameters"), "rope_parameters")
        if scaling and params:
            c.ignore("rope_parameters", "overridden")
        rope = dict(scaling or params)
        _fill(c, rope, "rope_theta", "rope_theta", theta)
        if rope.get("rope_type", rope.get("type")) == "mrope":
            rope["rope_type"] = "default"
            rope.pop("type", None)
        _set_type(rope, "rope_parameters")
        _original_length(c, rope, max_pos)
        _validate_rope(c, rope, "rope_parameters", ignore_keys)
        from .mrope import check_section

        maker = _RopeMaker(rope, head_dim, max_pos)
        section = check_section(rope.get("mrope_section", default_section), maker.fields["inv_freq"].size)
        window = None
        types_ = ["full_attention"] * n_layers
        if not interleaved:
            use = flag("use_sliding_window", c.get("use_sliding_window", False))
            window = _optional_whole("sliding_window", c.kept("sliding_window", 4096)) if use else None
            if not use:
                c.read.add("sliding_window")
                c.ignore("sliding_window", "overridden")
            first = whole("max_window_layers", c.get("max_window_layers", 80), minimum=0)
            default = [
                "sliding_attention" if window is not None and i >= first else "full_attention" for i in range(n_layers)
            ]
            types_ = _layer_types(c, n_layers, default)
        return _layers_with(maker, types_, window, mrope_section=section, mrope_interleaved=interleaved)

    return read


def _ministral3(c: _Config) -> list[LayerPositions]:
    """Ministral3Config: like Mistral (``sliding_window`` on every layer when set), with YaRN by default (factor 16
    over 16,384 tokens, base 1e6) and ``llama_4_scaling_beta`` in the rope parameters: every layer multiplies its
    queries by 1 + beta ln(1 + floor(m / original_max_position_embeddings))."""
    hidden, heads, n_layers = _sizes(c, hidden=4096, heads=32, layers=34)
    head_dim = _head_dim(c, hidden, heads, 128)
    max_pos = _max_positions(c, 262144)
    if not c.has("rope_parameters") and not c.has("rope_scaling"):
        c.raw = {
            **c.raw,
            "rope_parameters": {
                "type": "yarn",
                "rope_theta": 1000000.0,
                "factor": 16.0,
                "original_max_position_embeddings": 16384,
                "max_position_embeddings": max_pos,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "mscale_all_dim": 1.0,
                "mscale": 1.0,
                "llama_4_scaling_beta": 0.1,
            },
        }
    rope = _standard_rope(c, default_theta=10000.0, max_pos=max_pos)
    _validate_rope(c, rope, "rope_parameters", frozenset({"llama_4_scaling_beta", "max_position_embeddings"}))
    beta, original = rope.get("llama_4_scaling_beta"), rope.get("original_max_position_embeddings")
    if beta is None or original is None:
        raise ValueError(
            "Ministral 3 scales its queries with rope_parameters.llama_4_scaling_beta over "
            "original_max_position_embeddings, and this config lacks "
            f"{'llama_4_scaling_beta' if beta is None else 'original_max_position_embeddings'} (transformers fails "
            "on it when it runs)"
        )
    tuning = TemperatureTuning(
        number("original_max_position_embeddings", original),
        number("llama_4_scaling_beta", beta, positive=False),
        offset=0.0,
    )
    window = _optional_whole("sliding_window", c.kept("sliding_window"))
    c.read.add("layer_types")
    c.ignore("layer_types", "unread")
    maker = _RopeMaker(rope, head_dim, max_pos)
    attention = "sliding" if window is not None else "full"
    return [maker.layer(i, attention=attention, window=window, temperature_tuning=tuning) for i in range(n_layers)]


def _gpt2(c: _Config) -> list[LayerPositions]:
    """GPT2Config: a learned table of ``n_positions`` (1,024) position vectors added to the token embeddings before
    the first layer (Radford et al. 2019); no layer adds anything of its own, so every layer sees the positions the
    table wrote into the residual stream."""
    _, heads, n_layers = _sizes(
        c,
        hidden=768,
        heads=12,
        layers=12,
        hidden_aliases=("n_embd",),
        heads_aliases=("n_head",),
        layers_aliases=("n_layer",),
    )
    _max_positions(c, 1024, aliases=("n_positions",))
    return [LayerPositions(i, "learned", num_heads=heads) for i in range(n_layers)]


def _marian(c: _Config) -> list[LayerPositions]:
    """MarianConfig (an encoder–decoder): the encoder's ``encoder_layers`` layers read the sinusoidal table of
    Vaswani et al. 2017 added to the token embeddings (``MarianSinusoidalPositionalEmbedding``), bidirectionally."""
    _, heads, n_layers = _sizes(
        c,
        hidden=1024,
        heads=16,
        layers=12,
        hidden_aliases=("d_model",),
        heads_aliases=("encoder_attention_heads",),
        layers_aliases=("encoder_layers",),
    )
    _max_positions(c, 1024)
    return [LayerPositions(i, "sinusoidal", causal=False, num_heads=heads) for i in range(n_layers)]


def _bloom(c: _Config) -> list[LayerPositions]:
    """BloomConfig: ALiBi in every layer, slopes 2^(-8h/n) for n heads (Press et al. 2022); no position
    embedding."""
    _, heads, n_layers = _sizes(c, hidden=64, heads=8, layers=2, heads_aliases=("n_head",), layers_aliases=("n_layer",))
    return [LayerPositions(i, "alibi", alibi_max_bias=8.0, num_heads=heads) for i in range(n_layers)]


def _mpt(c: _Config) -> list[LayerPositions]:
    """MptConfig: transformers' MPT always adds ALiBi with alibi_bias_max 8 (slopes 2^(-8h/n)), whatever
    ``attn_config`` says about ``alibi`` or ``alibi_bias_max``, and has no position embedding (``learned_pos_emb``
    is not read)."""
    _, heads, n_layers = _sizes(
        c,
        hidden=2048,
        heads=16,
        layers=24,
        hidden_aliases=("d_model",),
        heads_aliases=("n_heads",),
        layers_aliases=("n_layers",),
    )
    _max_positions(c, 2048, aliases=("max_seq_len",))
    attn = c.raw.get("attn_config")
    if attn is not None:
        attn = mapping("attn_config", attn)
        for key in ("alibi", "alibi_bias_max"):
            if key in attn:
                c.ignored.append((f"attn_config.{key}", "unread"))
    if "learned_pos_emb" in c.raw:
        c.ignored.append(("learned_pos_emb", "unread"))
    return [LayerPositions(i, "alibi", alibi_max_bias=8.0, num_heads=heads) for i in range(n_layers)]


def _t5(c: _Config) -> list[LayerPositions]:
    """T5Config: the encoder's ``num_layers`` layers all add one bucketed relative bias, learned in the first layer
    and passed on to the others (Raffel et al. 2020): ``relative_attention_num_buckets`` buckets (32) up to
    ``relative_attention_max_distance`` (128), bidirectional in the encoder."""
    _, heads, n_layers = _sizes(
        c,
        hidden=512,
        heads=8,
        layers=6,
        hidden_aliases=("d_model",),
        heads_aliases=("num_heads",),
        layers_aliases=("num_layers",),
    )
    buckets = whole("relative_attention_num_buckets", c.get("relative_attention_num_buckets", 32))
    distance = whole("relative_attention_max_distance", c.get("relative_attention_max_distance", 128))
    return [
        LayerPositions(
            i,
            "relative_bias",
            causal=False,
            num_heads=heads,
            relative_buckets=buckets,
            relative_max_distance=distance,
        )
        for i in range(n_layers)
    ]


_FAMILIES: dict[str, tuple[str, Callable[[_Config], list[LayerPositions]]]] = {
    "llama": ("LlamaConfig", _simple(_Simple("Llama", 4096, 32, 32, 2048, divisible=True))),
    "mistral": ("MistralConfig", _simple(_Simple("Mistral", 4096, 32, 32, 131072, sliding="all"))),
    "ministral3": ("Ministral3Config", _ministral3),
    "qwen2": ("Qwen2Config", _simple(_Simple("Qwen2", 4096, 32, 32, 32768, sliding="qwen"))),
    "qwen3": ("Qwen3Config", _simple(_Simple("Qwen3", 4096, 32, 32, 32768, head_dim=128, sliding="qwen"))),
    "llama4_text": ("Llama4TextConfig", _llama4_text),
    "gemma2": ("Gemma2Config", _gemma2),
    "gemma3_text": ("Gemma3TextConfig", _gemma3_text),
    "olmo3": ("Olmo3Config", _olmo3),
    "modernbert": ("ModernBertConfig", _modernbert),
    "smollm3": ("SmolLM3Config", _smollm3),
    "cohere2": ("Cohere2Config", _cohere2),
    "qwen3_next": ("Qwen3NextConfig", _qwen3_next),
    "deepseek_v3": ("DeepseekV3Config", _deepseek_v3),
    "gpt_oss": ("GptOssConfig", _gpt_oss),
    "phi3": ("Phi3Config", _phi3),
    "gpt_neox": ("GPTNeoXConfig", _gpt_neox),
    "gptj": ("GPTJConfig", _gptj),
    "codegen": ("CodeGenConfig", _gptj),  # GPT-J's rotary code and defaults
    "qwen2_vl_text": ("Qwen2VLTextConfig", _mrope([16, 24, 24], False, frozenset({"mrope_section"}))),
    "qwen3_vl_text": (
        "Qwen3VLTextConfig",
        _mrope([24, 20, 20], True, frozenset({"mrope_section", "mrope_interleaved"})),
    ),
    "gpt2": ("GPT2Config", _gpt2),
    "marian": ("MarianConfig", _marian),
    "bloom": ("BloomConfig", _bloom),
    "mpt": ("MptConfig", _mpt),
    "t5": ("T5Config", _t5),
}

#: Multimodal configs whose decoder is described by a ``text_config``, and the model type of that text config.
#: Qwen2-VL's may be flat (its text keys at the top level, as the published config.json has them).
_WRAPPERS = {
    "llama4": "llama4_text",
    "gemma3": "gemma3_text",
    "qwen3_vl": "qwen3_vl_text",
    "qwen2_vl": "qwen2_vl_text",
    "mistral3": "mistral",
}
#: Wrappers whose text_config may be of another type than the default above.
_WRAPPED_TYPES = {"mistral3": ("mistral", "ministral3")}

#: The model types model_positions reads (multimodal wrappers included).
MODEL_TYPES = tuple(sorted(set(_FAMILIES) | set(_WRAPPERS)))


def model_positions(config) -> ModelPositions:
    """Read a Hugging Face config (a dict, the text of a config.json, or a path to one or to a model folder) as
    transformers 5.24 reads it, and return the positions of every layer (see the module docstring).

    Raises ValueError with a sentence for: a config that is not a JSON object or is larger than
    ``MAX_CONFIG_BYTES``; a model_type posviz does not read (``MODEL_TYPES``); values of the wrong kind; what
    transformers refuses (an unknown rope type, a rope type without its required keys, ``layer_types`` or
    ``no_rope_layers`` that do not match ``num_hidden_layers``, an odd fully rotated head, Phi-3's LongRoPE
    factors of the wrong length, ...); contradictory keys (``rope_type`` and ``type`` naming two types); an
    M-RoPE ``mrope_section`` that does not add up to the rotated pairs."""
    raw = _read.load(config)
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        raise ValueError(
            'the config has no "model_type", so posviz cannot tell which model reads it; add it (e.g. "llama")'
        )
    text_type = model_type
    outer: list[tuple[str, str]] = []
    prefix = ""
    if model_type in _WRAPPERS:
        text_type = _WRAPPERS[model_type]
        text = raw.get("text_config")
        if text is None:
            # Qwen2-VL's published config keeps its text keys at the top level; the others fall back to defaults
            text = {k: v for k, v in raw.items() if k != "vision_config"} if model_type == "qwen2_vl" else {}
        else:
            # the wrapper's own position keys never reach its decoder, which reads only its text_config
            outer = [(key, "unread") for key in raw if key in POSITION_KEYS]
            prefix = "text_config."
        raw = dict(mapping("text_config", text))
        inner = raw.get("model_type")
        if isinstance(inner, str) and inner in _WRAPPED_TYPES.get(model_type, ()):
            text_type = inner
        elif inner is not None and inner not in (text_type, model_type):
            raise ValueError(
                f"a {model_type} config's text_config must describe a {text_type} decoder; it says model_type {inner!r}"
            )
    if text_type not in _FAMILIES:
        from . import by_class

        if by_class.known(model_type):
            return by_class.read(raw)
        raise ValueError(
            f"posviz does not read model_type {model_type!r}: transformers 5.24 registers no config class of that "
            'name (check the spelling in config.json, e.g. "llama", "qwen2", "gemma3_text"), or pick a preset'
        )
    class_name, read = _FAMILIES[text_type]
    c = _Config(raw, class_name)
    try:
        layers = tuple(read(c))
    except (TypeError, KeyError, AttributeError, IndexError) as exc:  # a safety net: the checks above should catch all
        raise ValueError(f"{class_name} cannot read this config ({type(exc).__name__}: {exc})") from None
    return ModelPositions(
        model_type=model_type,
        text_model_type=text_type,
        layers=layers,
        max_position_embeddings=c.max_positions,
        original_max_position_embeddings=pre_training_context(layers),
        ignored=tuple(outer + [(prefix + key, reason) for key, reason in c.unread()]),
        rules=("family",),
        config_class=class_name,
    )


__all__ = [
    "ATTENTIONS",
    "IGNORE_REASONS",
    "KINDS",
    "MAX_CONFIG_BYTES",
    "MAX_LAYERS",
    "MODEL_TYPES",
    "POSITION_KEYS",
    "ROPE_TYPES",
    "LayerGroup",
    "LayerPositions",
    "ModelPositions",
    "TemperatureTuning",
    "model_positions",
]
