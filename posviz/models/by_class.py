"""Any RoPE model transformers knows: its config read by transformers' own config class, its frequencies by posviz.

``read(raw)`` hands a config.json's dict to the config class transformers registers for its ``model_type``
(``CONFIG_MAPPING``; local data only, nothing is downloaded), so that the class's defaults, attribute maps,
legacy keys and its standardised ``rope_parameters`` and ``layer_types`` are the ones the model is built with.
The frequencies are then computed by posviz's numpy core (``positions._frequencies``, tested against
``ROPE_INIT_FUNCTIONS``).

What a config does not say, the modeling code decides; those decisions are the explicit rules of ``RULES``, one
line per model type, each named in ``ModelPositions.rules`` when it is used:

- ``interleaved``: the apply-rotary function pairs dimension 2i with 2i + 1 (a complex product, or a
  ``rotate_half`` over every other dimension) instead of i with i + d/2;
- ``partial``: the model's default RoPE rotates ``partial_rotary_factor`` of each head (LLaMA's rotates the
  whole head whatever the config says; the scaled types always honour the factor);
- ``mla``: multi-head latent attention rotates a separate ``qk_rope_head_dim`` slice of each query/key head;
- ``no_rope_layers``: a per-layer list (1: the layer rotates) says which layers skip RoPE;
- ``rope_on_sliding``: only the layers that attend within a window rotate (Cohere2: none without a window);
- ``rope_on_sliding_type``: only the layers of type ``sliding_attention`` rotate, window or not (AFMoE);
- ``nope_global``: with a sliding window set, the global layers do not rotate; without one, every layer does
  (EXAONE 4);
- ``sliding_all``: without ``layer_types``, a set ``sliding_window`` applies to every layer (Mistral);
- ``bidirectional``: an encoder whose sliding window is a radius on each side: its span, the layer's window, is
  twice ``sliding_window``, and no layer is causal;
- ``cross_attention_layers``: the layers the config lists there attend to the image instead of the text (Mllama):
  NoPE layers whose attention is "cross";
- ``compressed``: DeepSeek-V4's compressed layers (``compressed_sparse_attention``, ``heavily_compressed_attention``)
  attend within ``sliding_window`` and also to compressed entries of the earlier tokens, one per
  ``compress_rates[layer_type]`` (the compressed-sparse layers to the ones an indexer picks), and rotate with the
  ``compress`` rope parameters; its ``sliding_attention`` layers rotate with ``main``;
- ``rope_switch``: a config key switches RoPE off for every layer (``ROPE_SWITCHES``: GraniteMoeHybrid's
  ``position_embedding_type``, Zamba2's ``use_mem_rope``), so its attention layers are NoPE unless it is on.

Layer types (``layer_types``) decide each layer's attention: ``sliding_attention`` attends within
``sliding_window`` (None: the whole context, as transformers builds it), ``chunked_attention`` within
``attention_chunk_size``, and the recurrent mixers (``linear_attention``, ``conv``, ...) have no attention and
no position signal.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import warnings

from ..base.checks import whole
from . import positions as _p

#: Layer types whose layers attend to the whole (causal) context and rotate.
FULL_TYPES = frozenset({"full_attention", "indexed_attention", "attention", "global_attention", "hybrid"})
#: Layer types that attend within ``sliding_window``.
SLIDING_TYPES = frozenset({"sliding_attention", "window_attention", "hybrid_sliding", "local_attention"})
#: Layer types that attend within ``attention_chunk_size``.
CHUNKED_TYPES = frozenset({"chunked_attention"})
#: Layer types that attend within ``sliding_window`` and to compressed entries of the earlier tokens (DeepSeek-V4).
COMPRESSED_TYPES = frozenset({"compressed_sparse_attention", "heavily_compressed_attention"})
#: Layer types without attention: recurrent or convolutional mixers, which see order but no position signal.
MIXER_TYPES = frozenset({"linear_attention", "mamba", "conv", "mamba2", "recurrent", "rwkv", "deltanet"})

RULE_NAMES = (
    "interleaved", "partial", "mla", "no_rope_layers", "rope_on_sliding", "rope_on_sliding_type", "nope_global",
    "sliding_all", "bidirectional", "cross_attention_layers", "compressed", "rope_switch",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Rule:
    """What a model type's modeling code decides beyond its config (see the module docstring)."""

    interleaved: bool = False
    partial: bool = False
    mla: bool = False
    no_rope_layers: bool = False
    rope_on_sliding: bool = False
    rope_on_sliding_type: bool = False
    nope_global: bool = False
    sliding_all: bool = False
    bidirectional: bool = False
    cross_attention_layers: bool = False
    compressed: bool = False
    rope_switch: bool = False

    def __or__(self, other: Rule) -> Rule:
        return Rule(**{name: getattr(self, name) or getattr(other, name) for name in RULE_NAMES})

    def names(self) -> tuple[str, ...]:
        return tuple(name for name in RULE_NAMES if getattr(self, name))


def _rules(**groups: str) -> dict[str, Rule]:
    """``rule="type type ..."`` -> {type: Rule}."""
    out: dict[str, dict[str, bool]] = {}
    for rule, model_types in groups.items():
        for model_type in model_types.split():
            out.setdefault(model_type, {})[rule] = True
    return {model_type: Rule(**flags) for model_type, flags in sorted(out.items())}


#: The rules of each text model type (transformers 5.24's modeling code); a type not listed follows none.
RULES: dict[str, Rule] = _rules(
    interleaved=(
        "cohere cohere2 cohere2_moe llama4_text gptj codegen glm glm4 glm4v_text glm_ocr_text ernie4_5 ernie4_5_moe "
        "ernie4_5_vl_moe_text helium dots3_note_text mistral4 openai_privacy_filter moonshine moonshine_streaming "
        "hy_v4_vl_text blt_global_transformer blt_local_decoder blt_local_encoder blt_patcher deepseek_v4"
    ),
    partial=(
        "bamba deepseek_v4 diffusion_gemma_text dots3_note_text glm glm4 glm4_moe glm4_moe_lite "
        "glm4v_moe_text glm4v_text glm_image_text glm_ocr_text gpt_neox gpt_neox_japanese laguna mellum "
        "mimo_v2_flash minimax_m2 minimax_m3_vl_text moonshine moonshine_streaming nemotron persimmon phi "
        "phi3 qwen3_5_moe_text qwen3_5_text qwen3_next qwen4_exp_text recurrent_gemma solar_open stablelm "
        "step3p5 step3p7 zaya glmasr_encoder nemotron3_5_transcribe_asr_audio "
        "nemotron3_5_transcribe_word_timestamp neomme"
    ),
    mla=(
        "deepseek_v2 deepseek_v3 deepseek_v32 axk1 axk2 bailing_hybrid glm4_moe_lite glm_moe_dsa longcat_flash "
        "mistral_large4_text youtu"
    ),
    no_rope_layers="smollm3 llama4_text mistral_large4_text",
    rope_on_sliding="cohere2 cohere2_moe flint",
    rope_on_sliding_type="afmoe",
    nope_global="exaone4 exaone_moe kolibri1",
    sliding_all=(
        "mistral mixtral ministral3 starcoder2 minimax olmoe phi3 mimi mimi_encoder mimi_decoder openai_privacy_filter "
        "voxtral_realtime_encoder"
    ),
    bidirectional=(
        "embedding_gemma2_text neomme openai_privacy_filter pe_audio pe_audio_video pe_video ultrabert ultravbert"
    ),
    cross_attention_layers="mllama_text_model",
    compressed="deepseek_v4",
    rope_switch="granitemoehybrid zamba2",
)

#: The rope_switch rule's key of each type, and the value that switches RoPE on (the modeling code builds its
#: rotary module only then, and hands the layers no cos / sin otherwise).
ROPE_SWITCHES: dict[str, tuple[str, object]] = {
    "granitemoehybrid": ("position_embedding_type", "rope"),
    "zamba2": ("use_mem_rope", True),
}


#: Text model types whose positions posviz does not read, and why (one sentence each; the README lists them).
NOT_READ: dict[str, str] = {
    "ernie4_5_vl_moe_text": (
        "ERNIE 4.5-VL's rotary module reorders its frequencies for M-RoPE (height and width pairs first, "
        "pre-rotated, then time), a layout posviz's reader does not model"
    ),
    "t5gemma2_text": (
        "T5Gemma 2's encoder attends within a window centred on each query whose size depends on the attention "
        "implementation (its mask: sliding_window keys; flash attention: sliding_window - 1 keys on each side), "
        "so posviz does not state one"
    ),
    "unlimited_ocr_text": (
        "Unlimited-OCR's reference_sliding_attention layers see a sliding window plus the reference tokens through "
        "a mask of their own, which posviz's windows (full, sliding, chunked) do not describe"
    ),
}


@functools.cache
def _config_classes():
    """transformers' ``CONFIG_MAPPING``, imported once per process, offline and quiet."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers import CONFIG_MAPPING
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    logging.getLogger("transformers").setLevel(logging.ERROR)
    return CONFIG_MAPPING


def known(model_type: str) -> bool:
    """Whether transformers registers a config class for ``model_type``."""
    return model_type in _config_classes()


def _config(raw: dict):
    classes = _config_classes()
    model_type = raw["model_type"]
    cls = classes[model_type]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # a config.json transformers wrote keeps Infinity and NaN as {"__float__": "Infinity"}; its loader
            # decodes them before the class reads the dict (Bamba's time_step_limit), and so does posviz
            decode = getattr(cls, "_decode_special_floats", lambda value: value)
            return cls.from_dict(decode(dict(raw)))
    except Exception as exc:  # a config class raises what it likes; the sentence is what the user needs
        raise ValueError(f"transformers' {cls.__name__} refuses this config: {_sentence(exc)}") from None


def _sentence(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _Layers:
    """A config's attributes, layer by layer: transformers' heterogeneous configs (Gemma 4's global heads) keep some
    of them per layer (``per_layer_config``) and refuse to give one value for the whole model."""

    def __init__(self, text):
        self.text = text
        self._per_layer: dict[int, object] = {}

    def get(self, i: int, name: str, default=None):
        from transformers.integrations.heterogeneity.configuration_utils import (
            AmbiguousGlobalPerLayerAttributeError,
        )

        try:
            return getattr(self.text, name, default)
        except AmbiguousGlobalPerLayerAttributeError:  # the value differs between layers: read this layer's
            if i not in self._per_layer:
                self._per_layer[i] = self.text.per_layer_config[i]
            return getattr(self._per_layer[i], name, default)

    def head_dims(self, i: int, rule: Rule) -> tuple[int, int]:
        """(the head size the rotary part is computed over, the query/key head size) of layer ``i``."""
        if rule.mla:
            rope = whole("qk_rope_head_dim", self.get(i, "qk_rope_head_dim"), maximum=4096)
            nope = whole("qk_nope_head_dim", self.get(i, "qk_nope_head_dim", 0) or 0, minimum=0, maximum=4096)
            return rope, rope + nope
        value = self.get(i, "head_dim")
        if not value:
            hidden = whole("hidden_size", self.get(i, "hidden_size"), maximum=1 << 20)
            heads = whole("num_attention_heads", self.get(i, "num_attention_heads"), maximum=1 << 14)
            value = hidden // heads
        size = whole("head_dim", value, maximum=4096)
        return size, size


def _rope_dicts(text) -> dict[str | None, dict]:
    """The standardised rope parameters, keyed by layer type (None: one dict for every layer)."""
    params = getattr(text, "rope_parameters", None)
    if not params:
        raise ValueError(
            f"{type(text).__name__} holds no rope parameters, so its layers do not rotate, and posviz reads no other "
            "position scheme through a config class"
        )
    params = dict(params)
    if all(isinstance(v, dict) for v in params.values()):
        return {key: dict(value) for key, value in params.items()}
    return {None: params}


def read(raw: dict) -> _p.ModelPositions:
    """The positions of every layer of the model ``raw`` describes, read through transformers' config class."""
    config = _config(raw)
    text = config.get_text_config(decoder=True)
    if getattr(text, "rope_parameters", None):
        text.standardize_rope_params()  # again, as building the rotary module does: attributes set late now count
    text_type = getattr(text, "model_type", None) or raw["model_type"]
    if text_type in _p._FAMILIES and text_type != raw["model_type"]:  # a wrapper of a model posviz reads itself
        inner = _p.model_positions({**text.to_dict(), "model_type": text_type})
        return dataclasses.replace(inner, model_type=raw["model_type"])
    if text_type in NOT_READ:
        raise ValueError(f"posviz does not read model_type {raw['model_type']!r}: {NOT_READ[text_type]}")
    rule = RULES.get(text_type, Rule()) | RULES.get(raw["model_type"], Rule())
    n_layers = whole("num_hidden_layers", getattr(text, "num_hidden_layers", None), maximum=_p.MAX_LAYERS)
    per_layer = _Layers(text)
    max_pos = getattr(text, "max_position_embeddings", None)
    max_pos = None if max_pos is None else whole("max_position_embeddings", max_pos, maximum=1 << 40)
    types_ = list(getattr(text, "layer_types", None) or ["full_attention"] * n_layers)[:n_layers]
    if len(types_) < n_layers:
        raise ValueError(f"layer_types names {len(types_)} layers but num_hidden_layers is {n_layers}")
    ropes = _rope_dicts(text)
    # MLA's modeling code interleaves unless its config has a rope_interleave switch set off (DeepSeek-V3's)
    layout = "interleaved" if rule.interleaved or (rule.mla and getattr(text, "rope_interleave", True)) else "half"
    makers: dict[tuple, _p._RopeMaker] = {}

    def maker(i: int, layer_type: str) -> _p._RopeMaker:
        key = layer_type if None not in ropes else None
        if rule.compressed:  # the rope parameters are keyed by a label of their own, not by the layer type
            key = "main" if layer_type == "sliding_attention" else "compress"
        if key not in ropes:
            raise ValueError(f"rope_parameters has no entry for the layer type {layer_type!r}")
        rotary_head, qk_head = per_layer.head_dims(i, rule)
        if (key, rotary_head, qk_head) not in makers:
            rope = ropes[key]
            rope.setdefault("rope_type", "default")
            _p._validate_rope(_p._Config(rope, type(text).__name__), rope, "rope_parameters")
            makers[key, rotary_head, qk_head] = _p._RopeMaker(
                rope, rotary_head, max_pos, default_partial=rule.partial, layout=layout, qk_head_dim=qk_head
            )
        return makers[key, rotary_head, qk_head]

    uses_rope = [True] * n_layers
    if rule.rope_switch:
        key, on = ROPE_SWITCHES[text_type]
        uses_rope = [getattr(text, key, None) == on] * n_layers
    cross = set()
    if rule.cross_attention_layers:
        cross = {
            whole("cross_attention_layers", v, minimum=0) for v in getattr(text, "cross_attention_layers", None) or ()
        }
    if rule.no_rope_layers:
        flags = list(getattr(text, "no_rope_layers", None) or [])
        if len(flags) < n_layers:
            raise ValueError(f"no_rope_layers has {len(flags)} entries but the model has {n_layers} layers")
        uses_rope = [bool(v) for v in flags[:n_layers]]
    layers = []
    for i, layer_type in enumerate(types_):
        kv = per_layer.get(i, "num_key_value_heads")  # as the layer's attention is built with them
        kv_heads = None if kv is None else whole("num_key_value_heads", kv, maximum=1 << 14)
        window, chunk = per_layer.get(i, "sliding_window"), per_layer.get(i, "attention_chunk_size")
        if layer_type in MIXER_TYPES:
            layers.append(_p.LayerPositions(i, "none", "linear", layer_type=layer_type))
            continue
        if i in cross:  # its queries come from the text, its keys from the image: no position signal
            layers.append(
                _p.LayerPositions(
                    i,
                    "nope",
                    "cross",
                    layer_type=layer_type,
                    head_dim=per_layer.head_dims(i, rule)[1],
                    num_kv_heads=kv_heads,
                )
            )
            continue
        attention, size, compress_rate = "full", None, None
        if rule.compressed and layer_type in COMPRESSED_TYPES:
            rates = getattr(text, "compress_rates", None) or {}
            if layer_type not in rates:
                raise ValueError(f"compress_rates has no entry for the layer type {layer_type!r}")
            compress_rate = whole(f"compress_rates.{layer_type}", rates[layer_type], maximum=1 << 20)
            attention, size = ("sliding", int(window)) if window is not None else ("full", None)
        elif layer_type in SLIDING_TYPES or (rule.sliding_all and getattr(text, "layer_types", None) is None):
            attention, size = ("sliding", int(window)) if window is not None else ("full", None)
        elif layer_type in CHUNKED_TYPES and chunk is not None:
            attention, size = "chunked", int(chunk)
        elif layer_type not in FULL_TYPES:
            raise ValueError(
                f"posviz does not read the layer type {layer_type!r} of {type(text).__name__}: it knows "
                f"{', '.join(sorted(FULL_TYPES | SLIDING_TYPES | CHUNKED_TYPES | MIXER_TYPES))}"
            )
        if rule.bidirectional and size is not None:
            size = 2 * size
        rotates = uses_rope[i] and not (
            (rule.rope_on_sliding and attention != "sliding")
            or (rule.rope_on_sliding_type and layer_type not in SLIDING_TYPES)
            or (rule.nope_global and window is not None and layer_type not in SLIDING_TYPES)
        )
        if rotates:
            layer = maker(i, layer_type).layer(
                i,
                layer_type=layer_type,
                attention=attention,
                window=size,
                causal=not rule.bidirectional,
                num_kv_heads=kv_heads,
            )
            layers.append(layer if compress_rate is None else dataclasses.replace(layer, compress_rate=compress_rate))
        else:
            layers.append(
                _p.LayerPositions(
                    i,
                    "nope",
                    attention,
                    size,
                    causal=not rule.bidirectional,
                    layer_type=layer_type,
                    head_dim=per_layer.head_dims(i, rule)[1],
                    num_kv_heads=kv_heads,
                )
            )
    return _p.ModelPositions(
        model_type=raw["model_type"],
        text_model_type=text_type,
        layers=_kv_shared(text, layers, types_),
        max_position_embeddings=max_pos,
        original_max_position_embeddings=_p.pre_training_context(layers),
        ignored=(),
        rules=("config_class", *rule.names()),
        config_class=type(text).__name__,
    )


def _kv_shared(text, layers: list, layer_types: list) -> tuple:
    """The layers with the keys and values of another (``num_kv_shared_layers``, Gemma 3n / Gemma 4): each of the
    last ones reuses those of the last earlier layer of its own type, as transformers' ``kv_sharing_modes`` says
    (transformers refuses a config where a shared layer's type has no earlier layer)."""
    n = len(layers)
    shared = whole("num_kv_shared_layers", getattr(text, "num_kv_shared_layers", 0) or 0, minimum=0, maximum=n)
    if not shared:
        return tuple(layers)
    first = n - shared
    out = list(layers)
    for i in range(first, n):
        sources = [j for j in range(first) if layer_types[j] == layer_types[i]]
        if sources:  # none: an assistant model, all of whose layers read the keys of the model it assists
            out[i] = dataclasses.replace(out[i], kv_shared_from=sources[-1])
    return tuple(out)
