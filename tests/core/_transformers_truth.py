"""What transformers 5.24 itself does with positions, for every model type it registers: the truth
``posviz.model_positions`` is tested against (``tests/core/test_every_model_type.py``).

Nothing here imports posviz, and nothing is a table of answers: every value is read from transformers' own objects
or measured by running its own code, offline, on default configs only.

The universe. A ``model_type`` of ``CONFIG_MAPPING`` is in it when

1. its config class builds with its defaults (``AutoConfig.for_model``), and its decoder's config is
   ``config.get_text_config(decoder=True)`` (the config itself for a plain model, the text / language config of a
   multimodal wrapper). Where transformers' own default leaves out a value its model needs to build or run (a
   head_dim of None, an mrope_section that does not fit the head, expert counts of None, ...), ``_REPAIRS`` sets
   that one value, each with the reason; the repaired config is then the one both sides read. A type whose window
   is in a mask of its own that contradicts what its attention function is handed (``_WINDOW_IN_MASK``: T5Gemma 2,
   T5Gemma's encoder) is out of scope, since the window read below is the attention function's;
2. the modeling module of that decoder config (``transformers.models.<name>.modeling_<name>``, beside the config
   class's ``configuration_<name>``) holds a ``*RotaryEmbedding`` class that is a text one (its name does not say
   Vision / Audio / Video / Speech / ViT / Encoder / DiT / Talker unless it also says Text) and builds from that
   config (``cls(config=text)``);
3. the decoder model built from that config on the meta device (``AutoModel.from_config``, else the model
   class of that config, else the part of a composite model built from it alone: ``_model_class``) holds exactly
   one instance of one such class (the rotary embedding the model really uses), and a stack
   of ``num_hidden_layers`` decoder layers. A model with several instances is in when each decoder layer's is found
   (``_rotary_per_layer``: the instance inside the layer, else the one the stack's holder hands it; the stack of an
   encoder-decoder is its decoder's, as ``get_text_config(decoder=True)`` says), its inv_freq then read per layer;
   a model that builds none (GraniteMoeHybrid's default, all Mamba layers) is in, each layer run without cos / sin.

Anything that fails on the way, in transformers itself (a default config that does not validate, a model that
does not build), puts the type out of scope (``OutOfScope``) with the exception's sentence.

Per layer, everything comes from running transformers' modules:

- Frequencies: the rotary module built on the CPU from the config, as the model builds it; its float32
  ``inv_freq`` buffer (``{layer_type}_inv_freq`` where it keeps one per layer type, the layer's type being
  ``config.layer_types[i]``, which is how the model's forward picks the layer's cos / sin) and its
  ``attention_scaling``.
- Kind and window: one attention module per distinct layer (layers grouped by the attention class, the plain
  attributes it was built with and the layer type) is copied from the meta model to the CPU with small random
  weights and run on one token, its attention function replaced by a recorder registered in transformers'
  ``AttentionInterface``: the recorder keeps the query and key it is handed and the ``sliding_window`` it is
  passed. The cos / sin handed to the layer come from the model's rotary module with test frequencies put in its
  ``inv_freq`` buffers (distinct angles in [0.2, 0.8) rad at position 1), and the run is repeated at position 2.
  A layer whose query or key changes between the two is a RoPE layer, one whose query and key do not a NoPE
  layer (SmolLM3's ``no_rope_layers``, Llama 4's every fourth layer, Cohere2's full-attention layers: whatever the
  module decides). A layer with no attention submodule, or whose mixer never calls the attention function (Gated
  DeltaNet, Mamba, short convolutions, lightning attention), has kind "none" and attention "linear". The window is
  the ``sliding_window`` the module passes to its attention function (attention "sliding"); a bidirectional module
  (``is_causal`` False, ModernBERT) is passed half its span plus one (flash attention's convention), so its window is
  reported as the whole span, 2 (sliding_window - 1). A cross-attention (its class says so and its forward takes
  ``cross_attention_states``: Mllama's) is handed one image token as those states; its attention is "cross". An
  attention that names the rope parameters it reads (``rope_layer_type``: DeepSeek-V4's "main" / "compress") is
  handed its cos / sin in a dict under that name, and its frequencies are that name's buffer. A layer of type
  "chunked_attention" attends within chunks of ``attention_chunk_size`` (attention "chunked"; the model's
  ``create_chunked_causal_mask`` reads that key).
- Pairing: the modeling module's apply-rotary functions (module-level ``apply_*rot*`` / ``apply_*rope*``) are
  wrapped while the layer runs, so the call the attention makes is recorded with its arguments. That call is then
  replayed with the query replaced by each basis vector e_j (and the cos / sin of the test frequencies): the image of
  e_j is cos(a) e_j + sin(a) e_k for its partner k, or e_j itself for a dimension that does not turn. That gives the
  pairs, ordered by their test frequency (so pair i turns with inv_freq[i]), the rotated dimensions (rotary_dim;
  when the attention rotates a slice of the head itself, only that slice is handed to the function, and its size is
  compared with the head size the attention function receives), and the layout: "half" when every pair is
  (i, i + rotary_dim / 2), "interleaved" when every pair is (2i, 2i + 1).

Run ``python -m tests.core._transformers_truth [--compare] [TYPE ...]`` to print the universe (and, with
``--compare``, whether posviz reads each type the same way).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import importlib
import inspect
import os
import re
import time

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import CONFIG_MAPPING, AttentionInterface, AutoConfig, AutoModel  # noqa: E402

transformers.logging.set_verbosity_error()

#: the name of a rotary class made for images, audio or other non-text streams (unless it also says Text)
_NOT_TEXT = re.compile(r"Vision|Visual|Audio|Video|Speech|Image|ViT|Encoder|DiT|Talker")
_ORACLE_ATTENTION = "posviz_truth_recorder"
#: test angles at position 1: pair k of n turns by LOW + SPAN * k / n radians (distinct, far from 0 and pi)
_LOW, _SPAN = 0.2, 0.6
_TOKENS = 1
_BLOCK = 100_003


@dataclasses.dataclass(frozen=True, eq=False)
class LayerTruth:
    """One decoder layer as transformers runs it (see the module docstring)."""

    index: int
    kind: str  # "rope", "nope" or "none"
    attention: str  # "full", "sliding", "chunked", "linear" or "cross" (keys from another stream: an image)
    window: int | None
    layer_type: str | None
    head_dim: int | None = None
    inv_freq: np.ndarray | None = None  # float64 copy of the float32 buffer
    attention_scaling: float | None = None
    rotary_dim: int | None = None
    layout: str | None = None  # "half", "interleaved", or "other" (pairs fit neither)
    pairs: tuple[tuple[int, int], ...] | None = None  # pair i turns with inv_freq[i]


@dataclasses.dataclass(frozen=True, eq=False)
class TypeTruth:
    model_type: str
    text_model_type: str
    config_json: str  # the default config as config.json text, the one handed to posviz
    rotary_class: str
    layers: tuple[LayerTruth, ...]
    seconds: float


@dataclasses.dataclass(frozen=True)
class OutOfScope:
    model_type: str
    reason: str


#: Default configs of transformers 5.24 that do not build their own model, keyed by the decoder config's
#: model_type: the values each lacks, set on that config before anything is built, so that the repaired config is
#: the one both transformers and posviz read. Each is the value the modeling code needs and the default leaves out
#: (None, or absent); where it touches positions it is the published model's unless said.
_REPAIRS: dict[str, dict[str, object]] = {
    # head_dim None: the attention computes head_dim ** -0.5 (the rotary module falls back to hidden / heads)
    "hunyuan_v1_dense": {"head_dim": 128},
    "hunyuan_v1_moe": {"head_dim": 128},
    # and HunYuan-VL's mrope_section None: its rotary module expands the positions to one row per section (here
    # three axes splitting the 64 frequencies as Qwen2-VL does; a text token has one position on every axis)
    "hunyuan_vl_text": {"head_dim": 128, "rope_parameters.mrope_section": [16, 24, 24]},
    "ministral": {"head_dim": 128},
    # num_key_value_heads None (or absent): the attention divides by it
    "nemotron": {"num_key_value_heads": 48},
    "moonshine_streaming": {"num_key_value_heads": 8},
    # the indexer's sizes None: the indexed-attention layers build their indexer from them
    "qwen4_exp_text": {
        "indexer_n_heads": 4,
        "indexer_kv_heads": 1,
        "indexer_head_dim": 256,
        "indexer_budget": 256,
        "indexer_compress_ratio": 4,
    },
    # mrope_section [8, 12, 12] splits 32 frequencies; GLM-4.1V's and GLM-4.5V's rotate half of a 128-dim head
    "glm4v_text": {"rope_parameters.partial_rotary_factor": 0.5},
    "glm_image_text": {"rope_parameters.partial_rotary_factor": 0.5},
    "glm4v_moe_text": {"head_dim": 128},
    # mrope_section [24, 20, 20] splits 64 frequencies of a 128-dim head; hidden / heads is 73 (Qwen3-Omni: 128)
    "qwen3_omni_moe_text": {"head_dim": 128},
    # layer_types None: each layer indexes it (LFM2's pattern: attention at every third layer from the third)
    "lfm2_moe": {
        "layer_types": lambda c: ["full_attention" if i % 3 == 2 else "conv" for i in range(c.num_hidden_layers)]
    },
    # mlp_layer_types None: each layer indexes it
    "deepseek_ocr2_text": {"mlp_layer_types": lambda c: ["dense"] * c.num_hidden_layers},
    # the expert counts None: the experts' weights are built from them
    "dots1": {"n_routed_experts": 8, "n_shared_experts": 1, "num_experts_per_tok": 2},
    "diffusion_gemma_text": {"num_experts": 8, "top_k_experts": 2, "moe_intermediate_size": 512},
    # vocabulary_map None: the model maps image tokens through it
    "chameleon": {"vocabulary_map": {"<image>": 8711}},
    # the attention config's rope_theta absent: the attention reads it (the rotary module reads rope_parameters)
    # and clip_qkv None: the attention clamps by it (DBRX's is 8)
    "dbrx": {"attn_config.rope_theta": 10000.0, "attn_config.clip_qkv": 8.0},
}


#: Model types whose windows live in a mask of their own that contradicts the window their attention function
#: is handed (which is what the harness reads): T5Gemma's encoder masks |q - k| <= sliding_window but hands flash
#: attention sliding_window (sliding_window - 1 on each side), T5Gemma 2's encoder masks sliding_window keys around
#: the query, and T5Gemma 2's merged self- and cross-attention hands no window at all (T5Gemma's decoder, which
#: the t5gemma type is read by, hands the window it masks)
_WINDOW_IN_MASK = frozenset({"t5_gemma_module", "t5gemma2", "t5gemma2_decoder", "t5gemma2_encoder", "t5gemma2_text"})


def _repair(text) -> None:
    for key, value in _REPAIRS.get(text.model_type, {}).items():
        owner, _, name = key.rpartition(".")
        value = value(text) if callable(value) else value
        holder = getattr(text, owner) if owner else text
        if isinstance(holder, dict):
            holder[name] = value
        else:
            setattr(holder, name, value)


def model_types() -> tuple[str, ...]:
    """Every model_type transformers registers."""
    return tuple(sorted(CONFIG_MAPPING.keys()))


def _sentence(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:300]}"


class _Recorded(Exception):
    """Raised by the recording attention function once it has what it needs."""


_RECORD: dict = {}


def _recording_attention(module, query, key, value, attention_mask, **kwargs):
    _RECORD["query"] = query.detach().clone()
    _RECORD["key"] = key.detach().clone()
    _RECORD["sliding_window"] = kwargs.get("sliding_window")
    _RECORD["is_causal"] = getattr(module, "is_causal", True)
    raise _Recorded


AttentionInterface.register(_ORACLE_ATTENTION, _recording_attention)


def _modeling_module(text_config):
    name = type(text_config).__module__.replace(".configuration_", ".modeling_")
    return importlib.import_module(name)


def _rotary_candidates(module, text) -> list[type]:
    out = []
    for name, obj in vars(module).items():
        if not (name.endswith("RotaryEmbedding") and inspect.isclass(obj) and issubclass(obj, torch.nn.Module)):
            continue
        if _NOT_TEXT.search(name) and "Text" not in name:
            continue
        try:
            obj(config=text)
        except Exception:  # noqa: BLE001 - a class that does not build from this config is not its rotary
            continue
        out.append(obj)
    return out


def _model_class(module, text) -> type:
    """The decoder's class: AutoModel's for the config, else the modeling module's bare model for that config class
    (the class whose ``config_class`` it is, with no head: the shortest name ending in Model), else the part of a
    composite model that is built from that config class alone (its ``__init__`` takes ``config:`` of that class:
    Dia's and T5Gemma 2's decoder, BLT's local decoder and global transformer), else, for the decoder config of an
    encoder-decoder (T5Gemma's ``T5GemmaModuleConfig``), the module's one ``*Decoder`` model."""
    models = {
        name: obj
        for name, obj in vars(module).items()
        if inspect.isclass(obj) and issubclass(obj, transformers.PreTrainedModel) and obj.__module__ == module.__name__
    }
    own = [obj for name, obj in models.items() if obj.config_class is type(text) and name.endswith("Model")]
    try:
        return AutoModel._model_mapping[type(text)]
    except KeyError:
        pass
    if own:
        return min(own, key=lambda c: len(c.__name__))
    taking = [obj for obj in models.values() if _config_annotation(obj) == type(text).__name__]
    if len(taking) == 1:
        return taking[0]
    holders = {  # the config classes of this family whose decoder is a config of type(text)
        name
        for name, obj in vars(importlib.import_module(type(text).__module__)).items()
        if inspect.isclass(obj) and getattr(obj, "sub_configs", {}).get("decoder") is type(text)
    }
    decoders = [obj for name, obj in models.items() if name.endswith("Decoder") and _config_annotation(obj) in holders]
    if len(decoders) == 1:
        return decoders[0]
    raise LookupError(f"{module.__name__} has no model class for {type(text).__name__}")


def _config_annotation(cls) -> str | None:
    """The name of the class ``cls.__init__`` declares its ``config`` argument to be."""
    param = inspect.signature(cls.__init__).parameters.get("config")
    if param is None or param.annotation is inspect.Parameter.empty:
        return None
    annotation = param.annotation
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", None)


def _meta_model(module, text):
    """The decoder built from its config on the meta device (no weights allocated)."""
    cls = _model_class(module, text)
    with torch.device("meta"):
        return cls._from_config(text)


class _Sublayer(torch.nn.Module):
    """One attention of a decoder layer that holds several (LongCat-Flash's two per layer), as a layer of its own:
    transformers counts each in ``num_hidden_layers``."""

    def __init__(self, attention: torch.nn.Module):
        super().__init__()
        self.self_attn = attention


def _sublayers(model, n_layers: int) -> list[torch.nn.Module]:
    """The attentions of a stack whose layers each hold k of them in a ``ModuleList`` (k x layers = n_layers), in
    order; [] for a model without such a stack."""
    for _, stack in model.named_modules():
        if not isinstance(stack, torch.nn.ModuleList) or not len(stack) or n_layers % len(stack):
            continue
        k = n_layers // len(stack)
        inner = [getattr(layer, "self_attn", None) for layer in stack]
        if k > 1 and all(isinstance(m, torch.nn.ModuleList) and len(m) == k for m in inner):
            return [_Sublayer(attention) for group in inner for attention in group]
    return []


def _decoder_layers(model, n_layers: int) -> list[torch.nn.Module]:
    """The stack of ``n_layers`` layers; of several, the one whose path says "decoder" (Moonshine Streaming's
    encoder has as many layers as its decoder); for layers of several attentions, those attentions (``_sublayers``)."""
    lists = [
        (name, m) for name, m in model.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n_layers
    ]
    if not lists and (sub := _sublayers(model, n_layers)):
        return sub
    if not lists:
        raise LookupError(f"no stack of {n_layers} decoder layers in {type(model).__name__}")
    by_decoder = [m for name, m in lists if "decoder" in name]
    return list(by_decoder[0] if len(by_decoder) == 1 else lists[0][1])


@contextlib.contextmanager
def _rotaries_on_cpu(classes):
    """While the model builds on the meta device, its rotary modules build on the CPU: their buffers are the values
    transformers computes (whatever config and arguments the model hands each instance)."""
    saved = {c: c.__dict__["__init__"] for c in classes if "__init__" in c.__dict__}

    def wrap(init):
        @functools.wraps(init)
        def on_cpu(self, *args, **kwargs):
            with torch.device("cpu"):
                init(self, *args, **kwargs)

        return on_cpu

    for cls, init in saved.items():
        cls.__init__ = wrap(init)
    try:
        yield
    finally:
        for cls, init in saved.items():
            cls.__init__ = init


def _rotary_key(rotary: torch.nn.Module) -> tuple:
    buffers = tuple((n, tuple(b.double().reshape(-1).tolist())) for n, b in rotary.named_buffers(recurse=False))
    return type(rotary), _plain_attributes(rotary), buffers


def _distinct(rotaries) -> list[torch.nn.Module]:
    seen: dict[tuple, torch.nn.Module] = {}
    for r in rotaries:
        seen.setdefault(_rotary_key(r), r)
    return list(seen.values())


def _rotary_per_layer(module, text, candidates, n_layers):
    """For a model with several rotary instances: its decoder stack, and per layer the rotary module that layer's
    forward uses, with whether it sits inside the layer's attention.

    The stack: the ``ModuleList`` of ``num_hidden_layers`` layers; of several, the one whose path says "decoder"
    (``get_text_config(decoder=True)`` is the decoder's config: Mimi's decoder transformer, Moonshine's decoder),
    else the model's own ``layers``. A layer's rotary module: the one inside the layer (identical instances count
    once; Moshi, IDEFICS, RecurrentGemma build one per attention), else the one held by the module that holds the
    stack (CSM's backbone); where that module holds several distinct ones (Granite-SWA's one per theta, Molmo2's
    scaled and unscaled), the one whose cos / sin its forward hands the layer, measured by running that forward on
    the meta device with the layers replaced by recorders."""
    with _rotaries_on_cpu(candidates):
        model = _meta_model(module, text)
    stacks = [
        (name, m) for name, m in model.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n_layers
    ]
    if not stacks:
        raise LookupError(f"no stack of {n_layers} decoder layers in {type(model).__name__}")
    by_decoder = [s for s in stacks if "decoder" in s[0]]
    plain = [s for s in stacks if s[0] == "layers"]
    if len(by_decoder) == 1:
        stack_name, stack = by_decoder[0]
    elif not by_decoder and plain:
        stack_name, stack = plain[0]
    elif len(stacks) == 1:
        stack_name, stack = stacks[0]
    else:
        raise LookupError(f"no one decoder stack among {', '.join(s[0] for s in stacks)}")
    layers = list(stack)
    owner = model.get_submodule(stack_name.rpartition(".")[0]) if "." in stack_name else model
    rotaries: list = []
    owned: list[bool] = []
    outside: list | None = None
    for i, layer in enumerate(layers):
        inside = _distinct(m for m in layer.modules() if type(m) in candidates)
        if len(inside) > 1:
            raise LookupError(f"layer {i} holds {len(inside)} distinct ones")
        if inside:
            attention = _attention_child(layer)
            rotaries.append(inside[0])
            owned.append(attention is not None and any(m is inside[0] for m in attention.modules()))
            continue
        if outside is None:
            outside = _dispatch(owner, stack, candidates)
        rotaries.append(outside[i])
        owned.append(False)
    same: dict[tuple, torch.nn.Module] = {}  # identical instances count once
    rotaries = [None if r is None else same.setdefault(_rotary_key(r), r) for r in rotaries]
    return layers, rotaries, owned


def _dispatch(owner, stack, candidates) -> list:
    """Per layer of ``stack``, the rotary module of ``owner`` (outside the layers) whose cos / sin ``owner``'s
    forward hands it (None: no cos / sin)."""
    in_layers = {id(m) for layer in stack for m in layer.modules()}
    held = [m for m in owner.modules() if type(m) in candidates and id(m) not in in_layers]
    distinct = _distinct(held)
    if len(distinct) <= 1:
        return [distinct[0] if distinct else None] * len(stack)
    made: dict[int, torch.nn.Module] = {}
    handed: list = [None] * len(stack)

    def recording(rotary):
        forward = rotary.forward

        def record(*args, **kwargs):
            out = forward(*args, **kwargs)
            made[id(out[0])] = next(d for d in distinct if _rotary_key(d) == _rotary_key(rotary))
            return out

        return record

    def stub(i):
        def forward(hidden_states, *args, **kwargs):
            pe = kwargs.get("position_embeddings")
            handed[i] = None if pe is None else made.get(id(pe[0]), LookupError)
            return hidden_states

        return forward

    for rotary in held:
        rotary.forward = recording(rotary)
    for i, layer in enumerate(stack):
        layer.forward = stub(i)
    with torch.no_grad():
        owner(input_ids=torch.zeros(1, _TOKENS, dtype=torch.long, device="meta"))
    if any(h is LookupError for h in handed):
        raise LookupError("a layer is handed cos / sin no rotary module made")
    return handed


def _attention_child(layer: torch.nn.Module) -> torch.nn.Module | None:
    """The layer's attention module: its first submodule whose class says Attention (or Attn); where that is a
    block holding an attention of its own (Zamba2's shared ``Zamba2AttentionDecoderLayer``), that attention."""
    if isinstance(layer, _Sublayer):
        return layer.self_attn
    for _, child in layer.named_children():
        if re.search(r"Attention|Attn", type(child).__name__) and not re.search(r"Norm", type(child).__name__):
            inner = [m for _, m in child.named_children() if re.search(r"Attention$", type(m).__name__)]
            return inner[0] if re.search(r"DecoderLayer$", type(child).__name__) and inner else child
    for _, child in layer.named_modules():
        if child is not layer and re.search(r"Attention$|Attn$", type(child).__name__):
            return child
    return None


def _is_cross(attention: torch.nn.Module) -> bool:
    """A cross-attention: its class says so and its forward takes the states its keys come from."""
    takes = "cross_attention_states" in inspect.signature(attention.forward).parameters
    return takes and "CrossAttention" in type(attention).__name__


def _plain_attributes(module: torch.nn.Module) -> tuple:
    simple = (int, float, bool, str, type(None))
    items = []
    for key, value in sorted(vars(module).items()):
        if key.startswith("_") or key in ("layer_idx", "layer_id", "layer_number", "training"):
            continue
        if isinstance(value, simple) or (isinstance(value, tuple | list) and all(isinstance(v, simple) for v in value)):
            items.append((key, repr(value)))
    return tuple(items)


def _inv_freq_names(rotary: torch.nn.Module) -> list[str]:
    return [name for name, _ in rotary.named_buffers(recurse=False) if name.endswith("inv_freq")]


@contextlib.contextmanager
def _test_frequencies(rotary: torch.nn.Module):
    """Put the test angles in every inv_freq buffer of the rotary module (original_inv_freq too)."""
    saved = {}
    for name in _inv_freq_names(rotary):
        buf = getattr(rotary, name)
        saved[name] = buf.clone()
        n = buf.numel()
        buf.copy_((_LOW + _SPAN * torch.arange(n, dtype=torch.float64) / n).to(buf.dtype).reshape(buf.shape))
    try:
        yield
    finally:
        for name, value in saved.items():
            getattr(rotary, name).copy_(value)


def _position_embeddings(rotary: torch.nn.Module, position: int, layer_type: str | None, dtype=torch.float32):
    x = torch.zeros(1, _TOKENS, 8, dtype=dtype)
    ids = torch.full((1, _TOKENS), position, dtype=torch.long)
    params = inspect.signature(rotary.forward).parameters
    kwargs = {"layer_type": layer_type} if "layer_type" in params and layer_type is not None else {}
    rope_parameters = getattr(getattr(rotary, "config", None), "rope_parameters", None) or {}
    if getattr(rotary, "mrope_section", None) is not None or "mrope_section" in rope_parameters:
        # M-RoPE: one row of positions per axis (time, height, width), all equal for text
        return rotary(x, ids[None].expand(3, 1, _TOKENS), **kwargs)
    try:
        return rotary(x, ids, **kwargs)
    except Exception:  # noqa: BLE001 - M-RoPE modules that keep their sections elsewhere
        return rotary(x, ids[None].expand(3, 1, _TOKENS), **kwargs)


def _apply_functions(module) -> dict[str, object]:
    return {
        name: obj
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and name.startswith("apply") and re.search(r"rot|rope", name)
    }


@contextlib.contextmanager
def _recording_apply(module, calls: list):
    originals = _apply_functions(module)

    def wrap(fn):
        @functools.wraps(fn)
        def recorder(*args, **kwargs):
            calls.append((fn, args, kwargs))
            return fn(*args, **kwargs)

        return recorder

    for name, fn in originals.items():
        setattr(module, name, wrap(fn))
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(module, name, fn)


def _materialise(attention_meta: torch.nn.Module, text, own_rotary: torch.nn.Module | None = None) -> torch.nn.Module:
    """A CPU copy of a meta attention module with small pseudo-random weights: one random block of a prime length,
    tiled (cheap for the large projections, and aligned with no row or head). A rotary module inside the attention
    is ``own_rotary`` when given (the layer's own, with its buffers as the model built them), else one built from
    the config."""
    attention = copy.deepcopy(attention_meta).to_empty(device="cpu")
    block = torch.randn(_BLOCK, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 0.05
    with torch.no_grad():
        for p in attention.parameters():
            n = p.numel()
            tiled = block.repeat(n // _BLOCK + 1)[:n] if n > _BLOCK else block[:n]
            p.copy_(tiled.reshape(p.shape).to(p.dtype))
        for name, sub in list(attention.named_modules()):
            if type(sub).__name__.endswith("RotaryEmbedding"):  # an attention that owns its rotary module
                parent = attention.get_submodule(name.rsplit(".", 1)[0]) if "." in name else attention
                setattr(parent, name.rsplit(".", 1)[-1], own_rotary or type(sub)(config=text))
    cfg = getattr(attention, "config", None)
    if cfg is not None:
        cfg._attn_implementation = _ORACLE_ATTENTION
    return attention


def _run_attention(attention, text, hidden_size: int, pe, position: int, shared: dict | None = None) -> dict:
    """One forward of the attention module on one token; what the attention function was handed. Without a mask
    first; an attention that reads its mask gets an all-visible one. ``shared``: the keys and values a layer hands
    the later layers that reuse them (Gemma 3n / Gemma 4's KV sharing), kept across the layers of one model."""
    try:
        return _run_attention_once(attention, hidden_size, pe, position, None, shared)
    except (TypeError, AttributeError, IndexError):
        mask = torch.zeros(1, 1, _TOKENS, _TOKENS)
        return _run_attention_once(attention, hidden_size, pe, position, mask, shared)
    except ValueError:
        # a shared DSA layer (HY-V4's) reuses the top-k key indices of the last full indexer layer
        # (``prev_topk_indices``, [batch, query, top-k]): with one token, the one key, all visible
        mask = torch.zeros(1, 1, _TOKENS, _TOKENS)
        topk = torch.arange(_TOKENS).expand(1, _TOKENS, _TOKENS)
        return _run_attention_once(attention, hidden_size, pe, position, mask, shared, {"prev_topk_indices": topk})


def _run_attention_once(attention, hidden_size, pe, position, mask, shared, more=None) -> dict:
    _RECORD.clear()
    params = inspect.signature(attention.forward).parameters
    gen = torch.Generator().manual_seed(1)
    hidden = torch.randn(1, _TOKENS, hidden_size, generator=gen)
    offered = {
        "hidden_states": hidden,
        "position_embeddings": pe,
        "attention_mask": mask,
        "shared_kv_states": {} if shared is None else shared,
        "position_ids": torch.full((1, _TOKENS), position, dtype=torch.long),
        "cache_position": torch.full((_TOKENS,), position, dtype=torch.long),
        "cross_attention_states": hidden,  # a cross-attention's keys: one image token (Mllama's)
        **(more or {}),
    }
    kwargs = {k: v for k, v in offered.items() if k in params}
    for name, p in params.items():
        if name not in kwargs and p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD:
            # a merged self- and cross-attention (T5Gemma 2's decoder) needs the encoder's states: one token's
            kwargs[name] = hidden if name == "encoder_hidden_states" else None
    with torch.no_grad():
        try:
            attention(**kwargs)
        except _Recorded:
            pass
    return dict(_RECORD)


def _images(call) -> np.ndarray:
    """The recorded apply-rotary call replayed with each basis vector e_j as the query: column j is its image."""
    fn, args, kwargs = call
    q = args[0]
    if torch.is_complex(q):
        raise TypeError("the apply-rotary function takes complex queries")
    d = q.shape[-1]
    columns = []
    with torch.no_grad():
        for j in range(d):
            e = torch.zeros_like(q)
            e[..., j] = 1
            out = fn(e, *args[1:], **kwargs)
            out = out[0] if isinstance(out, tuple | list) else out
            columns.append(out.reshape(-1, out.shape[-1])[0].double().numpy())
    return np.stack(columns, axis=1)


def _pairing(call0, call1, by_frequency: bool) -> dict:
    """The rotated dimensions, their pairs and layout, from the apply-rotary call at position 0 (angle 0: the
    identity, or a reordering of the dimensions that the query and the key share, e.g. DeepSeek's de-interleaving)
    and at position 1: the turn in the query's own coordinates is image0^-1 image1. Pairs are ordered by their angle
    when the test frequencies were in place (so pair i turns with inv_freq[i]), else by their first dimension, with
    their angles at position 1 (the frequencies of a module that keeps a table, not inv_freq)."""
    before, after = _images(call0), _images(call1)
    d = before.shape[1]
    turn = np.linalg.lstsq(before, after, rcond=None)[0]
    image = turn.T  # image[j] = the image of e_j
    partner, angle = {}, {}
    for j in range(d):
        off = image[j].copy()
        off[j] = 0.0
        k = int(np.argmax(np.abs(off)))
        if abs(off[k]) < 1e-6:
            continue
        partner[j] = k
        angle[j] = float(np.arctan2(abs(off[k]), image[j, j]))
    pairs = sorted(
        {tuple(sorted((j, k))) for j, k in partner.items()}, key=lambda p: angle[p[0]] if by_frequency else p
    )
    rotary_dim = len(partner)
    half = rotary_dim // 2
    consistent = all(partner.get(b) == a for a, b in pairs) and 2 * len(pairs) == rotary_dim
    if consistent and rotary_dim and all(b - a == half and a < half for a, b in pairs):
        layout = "half"
    elif consistent and rotary_dim and all(a % 2 == 0 and b == a + 1 for a, b in pairs):
        layout = "interleaved"
    else:
        layout = "other"
    return {
        "rotary_dim": rotary_dim,
        "pairs": tuple(pairs),
        "layout": layout,
        "angles": np.array([angle[a] for a, _ in pairs]),
    }


def _changed(a: dict, b: dict) -> bool:
    return not (torch.equal(a["query"], b["query"]) and torch.equal(a["key"], b["key"]))


def _compute(model_type: str) -> TypeTruth | OutOfScope:
    start = time.perf_counter()
    try:
        config = AutoConfig.for_model(model_type)
        text = config.get_text_config(decoder=True)
        _repair(text)
    except Exception as exc:  # noqa: BLE001
        return OutOfScope(model_type, f"the default config does not build: {_sentence(exc)}")
    if model_type in _WINDOW_IN_MASK:
        return OutOfScope(
            model_type, f"{type(text).__name__}'s windows are in its own mask, not the window its attention is handed"
        )
    try:
        module = _modeling_module(text)
    except ImportError:
        return OutOfScope(model_type, f"{type(text).__name__} has no modeling module of its own")
    candidates = _rotary_candidates(module, text)
    if not candidates:
        return OutOfScope(model_type, f"{module.__name__} holds no text rotary embedding that builds from the config")
    config_json = config.to_json_string(use_diff=False)
    try:
        model = _meta_model(module, text)
    except Exception as exc:  # noqa: BLE001
        return OutOfScope(model_type, f"the model does not build: {_sentence(exc)}")
    used = [m for m in model.modules() if type(m) in candidates]
    n_layers = text.num_hidden_layers
    if len(used) == 1:
        rotary_cls = type(used[0])
        try:
            layers = _decoder_layers(model, n_layers)
        except LookupError as exc:
            return OutOfScope(model_type, str(exc))
        rotaries = [rotary_cls(config=text)] * n_layers
        owned = [False] * n_layers
    else:
        try:
            layers, rotaries, owned = _rotary_per_layer(module, text, candidates, n_layers)
        except LookupError as exc:
            names = ", ".join(sorted({type(m).__name__ for m in used} or {c.__name__ for c in candidates}))
            return OutOfScope(model_type, f"the model holds {len(used)} text rotary embeddings ({names}): {exc}")
        # no layer handed cos / sin (GraniteMoeHybrid's and Zamba2's defaults build no rotary module): no layer
        # rotates, which the attention runs below confirm
        rotary_cls = next((type(r) for r in rotaries if r is not None), candidates[0])
    layer_types = getattr(text, "layer_types", None)
    hidden_size = int(text.hidden_size)

    groups: dict[tuple, list[int]] = {}
    children = []
    for i, layer in enumerate(layers):
        attention = _attention_child(layer)
        children.append(attention)
        lt = layer_types[i] if layer_types is not None else getattr(layer, "attention_type", None)
        key = (type(attention), _plain_attributes(attention) if attention is not None else (), lt, id(rotaries[i]))
        groups.setdefault(key, []).append(i)

    out: list[LayerTruth | None] = [None] * n_layers
    shared: dict = {}
    for (_, _, lt, _), indices in groups.items():
        attention_meta = children[indices[0]]
        rotary = rotaries[indices[0]]
        per_type = rotary is not None and any(hasattr(rotary, f"{t}_inv_freq") for t in set(layer_types or ()))
        rope_type = lt if per_type else None
        # an attention that names the rope parameters it reads (DeepSeek-V4's ``rope_layer_type``: "main" for its
        # sliding layers, "compress" for the compressed ones) picks them out of the model's dict of cos / sin
        label = getattr(attention_meta, "rope_layer_type", None)
        if rotary is not None and label is not None and hasattr(rotary, f"{label}_inv_freq"):
            rope_type = label
        try:
            fields = _layer_fields(
                module, attention_meta, text, rotary, rope_type, hidden_size, shared, owned=owned[indices[0]]
            )
        except Exception as exc:  # noqa: BLE001
            return OutOfScope(model_type, f"layer {indices[0]}'s attention does not run: {_sentence(exc)}")
        if fields["kind"] == "rope":
            name = f"{rope_type}_inv_freq" if rope_type else "inv_freq"
            buffer = getattr(rotary, name, None)
            angles = fields.pop("angles")
            scaling = getattr(rotary, f"{rope_type}_attention_scaling" if rope_type else "attention_scaling", None)
            if buffer is not None:
                fields["inv_freq"] = buffer.detach().double().numpy().reshape(-1).copy()
            elif not _inv_freq_names(rotary):  # a module that keeps a sin / cos table: the angles at position 1
                fields["inv_freq"] = angles
            else:
                return OutOfScope(model_type, f"{rotary_cls.__name__} keeps no {name} for layer type {lt!r}")
            fields["attention_scaling"] = None if scaling is None else float(scaling)
        attention, window = fields.pop("attention"), fields.pop("window")
        if fields["kind"] != "none" and lt == "chunked_attention":
            attention, window = "chunked", int(text.attention_chunk_size)
        for i in indices:
            out[i] = LayerTruth(index=i, attention=attention, window=window, layer_type=lt, **fields)
    return TypeTruth(
        model_type=model_type,
        text_model_type=text.model_type,
        config_json=config_json,
        rotary_class=rotary_cls.__name__,
        layers=tuple(out),
        seconds=time.perf_counter() - start,
    )


def _layer_fields(module, attention_meta, text, rotary, layer_type, hidden_size, shared, owned=False) -> dict:
    """``owned``: the rotary module sits inside the attention, which makes its cos / sin itself (Moshi, IDEFICS):
    the test frequencies stay in it while the attention runs."""
    if attention_meta is None:
        return {"kind": "none", "attention": "linear", "window": None}
    if owned:
        with torch.no_grad(), _test_frequencies(rotary):
            attention = _materialise(attention_meta, text, own_rotary=rotary)
            return _layer_fields(module, attention, text, rotary, layer_type, hidden_size, shared, owned=None)
    attention = attention_meta if owned is None else _materialise(attention_meta, text)
    # the width of what the attention is handed: the model's hidden size, or what its query projection takes
    # (Zamba2's attention reads the hidden states concatenated with the embeddings)
    hidden_size = getattr(getattr(attention, "q_proj", None), "in_features", hidden_size)
    if rotary is None:  # a layer its model hands no cos / sin (a NoPE layer of Granite-SWA)
        pe0 = pe1 = pe2 = None
    else:
        with torch.no_grad(), _test_frequencies(rotary) if owned is not None else contextlib.nullcontext():
            pe0, pe1, pe2 = (_position_embeddings(rotary, p, layer_type) for p in (0, 1, 2))
        if getattr(attention, "rope_layer_type", None) is not None:
            pe0, pe1, pe2 = ({attention.rope_layer_type: pe} for pe in (pe0, pe1, pe2))
    calls: list = []
    with _recording_apply(module, calls):
        first = _run_attention(attention, text, hidden_size, pe1, 1, shared)
        call = calls[0] if calls else None
        if not first and call is not None:
            # an attention that computes its scores itself (Falcon's, GPT-NeoX-Japanese's), never calling the
            # attention function: its apply-rotary call at positions 0 and 1 shows what turns; no window
            calls.clear()
            _run_attention(attention, text, hidden_size, pe0, 0, shared)
            by_frequency = rotary is not None and bool(_inv_freq_names(rotary))
            turned = _pairing(calls[0], call, by_frequency=by_frequency) if calls else None
            if turned is None or not turned["rotary_dim"]:
                return {"kind": "nope", "attention": "full", "window": None}
            return {"kind": "rope", "attention": "full", "window": None, **turned}
        if not first:
            return {"kind": "none", "attention": "linear", "window": None}
        calls.clear()
        _run_attention(attention, text, hidden_size, pe0, 0, shared)
        call0 = calls[0] if calls else None
        second = _run_attention(attention, text, hidden_size, pe2, 1, shared)
        rope = _changed(first, second)
        if not rope and calls:  # an attention that makes its own cos / sin from the positions
            rope = _changed(first, _run_attention(attention, text, hidden_size, pe1, 2, shared))
    head_dim = int(first["query"].shape[-1])
    window = first["sliding_window"]
    attention_kind = "full"
    if _is_cross(attention):
        attention_kind = "cross"
    elif window is not None:
        attention_kind = "sliding"
        window = int(window)
        if not first["is_causal"]:
            window = 2 * (window - 1)
    fields = {"kind": "rope" if rope else "nope", "attention": attention_kind, "window": window, "head_dim": head_dim}
    if rope:
        if call is None or call0 is None:
            raise LookupError("the attention turns its queries without a module-level apply-rotary function")
        if rotary is None:
            raise LookupError("a layer handed no cos / sin turns its queries")
        fields.update(_pairing(call0, call, by_frequency=bool(_inv_freq_names(rotary))))
    return fields


def inv_freq_rtol(inv_freq: np.ndarray) -> np.ndarray:
    """How far transformers' float32 ``inv_freq`` may be from the exact frequency, relative, element by element.

    A frequency base^(-e) is computed in float32 from the exponent e = 2i / d, itself rounded to float32 (half an
    ulp, 2^-24 relative); an error de in the exponent moves the frequency by ln(base) de relative, that is
    |ln(inv_freq)| 2^-24. The power, the division and a scaling's few operations add half an ulp each: eight
    2^-24 cover them. A bound from the value alone, on any CPU."""
    x = np.abs(np.asarray(inv_freq, dtype=np.float64))
    with np.errstate(divide="ignore"):
        log = np.where(x > 0, np.abs(np.log(np.where(x > 0, x, 1.0))), 0.0)
    return (log + 8.0) * 2.0**-24


def _differs(index: int, field: str, mine, theirs) -> str:
    return f"layer {index} {field}: posviz {mine!r}, transformers {theirs!r}"


def differences(t: TypeTruth, got) -> list[str]:
    """Where posviz's ``ModelPositions`` ``got`` differs from the truth, one sentence per field and layer."""
    out = []
    if len(got.layers) != len(t.layers):
        return [f"{len(got.layers)} layers, transformers builds {len(t.layers)}"]
    for want, layer in zip(t.layers, got.layers, strict=True):
        i = want.index
        for field in ("kind", "attention", "window"):
            if getattr(layer, field) != getattr(want, field):
                out.append(
                    f"layer {i} {field}: posviz {getattr(layer, field)!r}, transformers {getattr(want, field)!r}"
                )
        if want.kind != "rope" or layer.kind != "rope":
            continue
        for field in ("rotary_dim", "layout"):
            if getattr(layer, field) != getattr(want, field):
                out.append(
                    f"layer {i} {field}: posviz {getattr(layer, field)!r}, transformers {getattr(want, field)!r}"
                )
        mine = None if layer.inv_freq is None else np.asarray(layer.inv_freq, dtype=np.float64)
        if mine is None or mine.shape != want.inv_freq.shape:
            shape = None if mine is None else mine.shape
            out.append(f"layer {i} inv_freq: posviz shape {shape}, transformers {want.inv_freq.shape}")
        else:
            err = np.abs(mine - want.inv_freq) / np.maximum(np.abs(want.inv_freq), np.finfo(np.float64).tiny)
            bad = err > inv_freq_rtol(want.inv_freq)
            if bad.any():
                k = int(np.argmax(np.where(bad, err, -1)))
                out.append(
                    f"layer {i} inv_freq[{k}]: posviz {mine[k]:.9g}, transformers {want.inv_freq[k]:.9g} "
                    f"({int(bad.sum())} of {bad.size} off)"
                )
        factor = getattr(layer, "attention_factor", None)
        if want.attention_scaling is not None and (
            factor is None or abs(factor - want.attention_scaling) > 1e-6 * abs(want.attention_scaling)
        ):
            out.append(f"layer {i} attention_factor: posviz {factor!r}, transformers {want.attention_scaling!r}")
    return out


@functools.cache
def truth(model_type: str) -> TypeTruth | OutOfScope:
    """transformers' own account of ``model_type``'s positions (cached per process)."""
    try:
        return _compute(model_type)
    except Exception as exc:  # noqa: BLE001 - whatever transformers raises puts the type out of scope
        return OutOfScope(model_type, f"transformers raised {_sentence(exc)}")


def _in_scope(model_type: str) -> tuple[str, bool]:
    return model_type, isinstance(truth(model_type), TypeTruth)


@functools.cache
def universe(jobs: int | None = None) -> tuple[str, ...]:
    """The model types in scope, their truths computed in ``jobs`` worker processes (default: one per CPU)."""
    import multiprocessing

    jobs = jobs or os.cpu_count() or 1
    if jobs == 1:
        return tuple(m for m in model_types() if isinstance(truth(m), TypeTruth))
    with multiprocessing.get_context("spawn").Pool(jobs, maxtasksperchild=40) as pool:
        return tuple(sorted(m for m, ok in pool.imap_unordered(_in_scope, model_types(), chunksize=4) if ok))


def _line(model_type: str, compare: bool) -> tuple[str, str, str]:
    """(model_type, status, detail) for the command line; status is out / in, or OK / refused / differs / error."""
    t = truth(model_type)
    if isinstance(t, OutOfScope):
        return model_type, "out", t.reason
    if not compare:
        kinds = sorted({(x.kind, x.attention, x.layout) for x in t.layers}, key=str)
        return model_type, "in", f"{t.rotary_class}, {len(t.layers)} layers, {kinds} ({t.seconds:.1f} s)"
    import posviz.models  # the command line compares; the truth above never reads posviz

    try:
        got = posviz.models.model_positions(t.config_json)
    except ValueError as exc:
        return model_type, "refused", " ".join(str(exc).split())[:100]
    except Exception as exc:  # noqa: BLE001 - a crash is what the comparison is there to show
        return model_type, "error", _sentence(exc)
    diff = differences(t, got)
    if diff:
        more = f" (+{len(diff) - 1} more)" if len(diff) > 1 else ""
        return model_type, "differs", diff[0] + more
    return model_type, "OK", ""


def _worker(job: tuple[str, bool]) -> tuple[str, str, str]:
    return _line(*job)


def main(argv: list[str] | None = None) -> int:
    import argparse
    import multiprocessing

    parser = argparse.ArgumentParser(
        prog="python -m tests.core._transformers_truth",
        description="The model types whose transformers code holds one text rotary embedding, and (--compare) "
        "whether posviz.models.model_positions reads each of them as transformers runs it.",
    )
    parser.add_argument("--compare", action="store_true", help="compare posviz's reading with the truth, per type")
    parser.add_argument("--all", action="store_true", help="also print the types out of scope and why")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("types", nargs="*", help="model types (default: every registered one)")
    args = parser.parse_args(argv)
    types = args.types or list(model_types())
    start = time.perf_counter()
    jobs = [(m, args.compare) for m in types]
    if args.jobs > 1 and len(jobs) > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=40) as pool:
            rows = sorted(pool.imap_unordered(_worker, jobs, chunksize=2))
    else:
        rows = [_worker(job) for job in jobs]
    counts: dict[str, int] = {}
    for model_type, status, detail in rows:
        counts[status] = counts.get(status, 0) + 1
        if status != "out" or args.all or args.types:
            print(f"{model_type:<40} {status:<8} {detail}".rstrip())
    n_in = len(rows) - counts.get("out", 0)
    print(f"universe: {n_in} of {len(rows)} model types (text rotary embedding, model builds on the meta device)")
    if args.compare:
        parts = ", ".join(f"{counts.get(s, 0)} {s}" for s in ("OK", "refused", "differs", "error"))
        print(f"posviz: {parts} of {n_in}; {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
