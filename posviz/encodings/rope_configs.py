"""RoPE settings of real models: read them from a Hugging Face ``config.json`` the way transformers does, and
compare the context-extension scalings of ``rope.py`` side by side.

Two config formats exist. Up to transformers 4 a config has ``rope_theta`` at the top level and an optional
``rope_scaling`` dict; transformers 5 writes one ``rope_parameters`` dict holding ``rope_theta``, ``rope_type``
and the scaling's own keys. Some families name things their own way: GPT-NeoX (Pythia) keeps ``rotary_emb_base``
and ``rotary_pct``, GPT-J ``n_embd``, ``n_head``, ``n_positions`` and ``rotary_dim``. ``read_config`` resolves a
config.json into the attributes transformers 5.24's config class for its ``model_type`` holds (``MODEL_SPECS``:
attribute maps, class defaults, legacy keys); ``parse_config`` turns them into the RoPE settings.
"""

from __future__ import annotations

import dataclasses
import json
import types

import numpy as np

from ..models import presets as _stored
from . import _checks
from .rope import (
    LAYOUTS,
    PAIR_CLASSES,
    ROPE_TYPES,
    classify_pairs,
    normalize_scaling,
    ntk_scaled_base,
    rope_inv_freq,
    rope_wavelength,
)

#: rope types whose pre-training length transformers moves into the rope parameters (``standardize_rope_params``).
ORIGINAL_LENGTH_TYPES = ("llama3", "yarn", "longrope")


@dataclasses.dataclass(frozen=True, eq=False)
class ModelSpec:
    """How transformers 5.24's config class for one ``model_type`` reads the keys that decide RoPE.

    ``attribute_map``: standard name -> the name the config stores it under (``PreTrainedConfig.attribute_map``;
    GPT-J's ``hidden_size`` is ``n_embd``); when both are in a config.json the standard name wins, as it is set
    last. ``defaults``: the class's defaults of ``hidden_size``, ``num_attention_heads``, ``head_dim`` and
    ``max_position_embeddings``. ``theta_key`` / ``prf_key``: the top-level keys read for rope_theta and
    partial_rotary_factor (GPT-NeoX: ``rotary_emb_base`` / ``rotary_pct``); ``default_prf``: the fraction used when
    neither the rope dict nor the top level sets it (None: the whole head). ``default_rope_partial``: whether the
    model's own default RoPE honours partial_rotary_factor (LLaMA's ``compute_default_rope_parameters`` rotates the
    whole head whatever it says; the scaled types of ``ROPE_INIT_FUNCTIONS`` always honour it). ``divisible``:
    the class refuses a hidden_size that does not split into equal heads. ``original_length``: a class field
    ``original_max_position_embeddings`` with this default, which overrides the rope dict's (Phi-3).
    ``rope_types``: the only rope types the class accepts, after renaming ``type_aliases`` (Phi-3: su, yarn ->
    longrope). ``rotary_dim``: GPT-J's explicit number of rotated dimensions (its default); GPT-J builds its
    frequencies with base 10000 and no scaling whatever the config says.
    """

    config_class: str
    layout: str = "half"
    attribute_map: types.MappingProxyType = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    defaults: types.MappingProxyType = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    default_theta: float = 10000.0
    theta_key: str = "rope_theta"
    prf_key: str = "partial_rotary_factor"
    default_prf: float | None = None
    default_rope_partial: bool = True
    divisible: bool = False
    original_length: int | None = None
    rope_types: tuple[str, ...] | None = None
    type_aliases: types.MappingProxyType = dataclasses.field(default_factory=lambda: types.MappingProxyType({}))
    rotary_dim: int | None = None


def _spec(config_class: str, hidden: int, heads: int, head_dim: int | None, max_pos: int, **kw) -> ModelSpec:
    defaults = {
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "head_dim": head_dim,
        "max_position_embeddings": max_pos,
    }
    for key in ("attribute_map", "type_aliases"):
        if key in kw:
            kw[key] = types.MappingProxyType(kw[key])
    return ModelSpec(config_class, defaults=types.MappingProxyType(defaults), **kw)


#: The RoPE models whose config class posviz mirrors, by ``model_type`` (transformers 5.24).
MODEL_SPECS: dict[str, ModelSpec] = {
    "llama": _spec("LlamaConfig", 4096, 32, None, 2048, default_rope_partial=False, divisible=True),
    "mistral": _spec("MistralConfig", 4096, 32, None, 131072, default_rope_partial=False),
    "mixtral": _spec("MixtralConfig", 4096, 32, None, 131072, default_theta=1e6, default_rope_partial=False),
    "qwen2": _spec("Qwen2Config", 4096, 32, None, 32768, default_rope_partial=False),
    "qwen3": _spec("Qwen3Config", 4096, 32, 128, 32768, default_rope_partial=False),
    "gemma": _spec("GemmaConfig", 3072, 16, 256, 8192, default_rope_partial=False),
    "gemma2": _spec("Gemma2Config", 2304, 8, 256, 8192, default_rope_partial=False, divisible=True),
    "phi": _spec("PhiConfig", 2048, 32, None, 2048, default_prf=0.5),
    "phi3": _spec(
        "Phi3Config",
        3072,
        32,
        None,
        4096,
        default_prf=1.0,
        original_length=4096,
        rope_types=("default", "longrope"),
        type_aliases={"su": "longrope", "yarn": "longrope"},
    ),
    "stablelm": _spec("StableLmConfig", 2560, 32, None, 4096, default_prf=0.25),
    "gpt_neox": _spec(
        "GPTNeoXConfig",
        6144,
        64,
        None,
        2048,
        theta_key="rotary_emb_base",
        prf_key="rotary_pct",
        default_prf=0.25,
        divisible=True,
    ),
    "gptj": _spec(
        "GPTJConfig",
        4096,
        16,
        None,
        2048,
        layout="interleaved",
        attribute_map={
            "hidden_size": "n_embd",
            "num_attention_heads": "n_head",
            "max_position_embeddings": "n_positions",
        },
        divisible=True,
        rotary_dim=64,
    ),
}

#: A config without a model_type posviz knows: PreTrainedConfig's generic RoPE handling, no class defaults.
GENERIC = ModelSpec("PreTrainedConfig", divisible=True)

#: Keys that only some families read, and the model_type that reads them: a config with one of them and a model
#: type outside MODEL_SPECS is refused rather than silently misread.
FAMILY_KEYS = {
    "rotary_emb_base": "gpt_neox",
    "rotary_pct": "gpt_neox",
    "rotary_dim": "gptj",
    "n_embd": "gptj",
    "n_head": "gptj",
    "n_positions": "gptj",
}


@dataclasses.dataclass(frozen=True)
class RopeConfig:
    """The RoPE part of a model config: what ``rope_inv_freq`` needs to rebuild its frequencies, the pair layout
    its model uses and, for GPT-J, its explicit ``rotary_dim``."""

    head_dim: int
    base: float
    scaling: dict | None
    max_position_embeddings: int | None
    partial_rotary_factor: float = 1.0
    layout: str = "half"
    model_type: str | None = None
    rotary_dim: int | None = None

    @property
    def rope_type(self) -> str:
        return normalize_scaling(self.scaling)["rope_type"]

    @property
    def original_max_position_embeddings(self) -> int | None:
        """The context the model was pre-trained on: the scaling's ``original_max_position_embeddings`` for the
        types that use it (llama3, yarn, longrope), else max_position_embeddings (dynamic NTK, for one, starts
        scaling at max_position_embeddings whatever else the dict says)."""
        value = (self.scaling or {}).get("original_max_position_embeddings")
        if value is None or self.rope_type not in ORIGINAL_LENGTH_TYPES:
            return self.max_position_embeddings
        return int(value)

    @property
    def target_context(self) -> int | None:
        """The context the scaling is meant for: original x ``factor`` when the scaling has a factor (a YaRN block
        added to a config often leaves max_position_embeddings at the original length), at least
        max_position_embeddings."""
        factor, original = (self.scaling or {}).get("factor"), self.original_max_position_embeddings
        if factor is None or original is None:
            return self.max_position_embeddings
        return max(int(round(original * factor)), self.max_position_embeddings or 0)

    def _rope(self, scaling: dict | None, seq_len: int | None) -> tuple[np.ndarray, float]:
        # GPT-J and MLA: frequencies over the rotary_dim their rope initialisation reads
        return rope_inv_freq(
            self.rotary_dim or self.head_dim,
            base=self.base,
            scaling=scaling,
            max_position_embeddings=self.max_position_embeddings,
            seq_len=seq_len,
            partial_rotary_factor=self.partial_rotary_factor,
        )

    def inv_freq(self, seq_len: int | None = None) -> tuple[np.ndarray, float]:
        """``rope_inv_freq`` with this config's settings: ``(inv_freq, attention_factor)``."""
        return self._rope(self.scaling, seq_len)

    def plain_inv_freq(self) -> np.ndarray:
        """The same rotated dimension and base without the scaling: theta_i = base^(-2i/r)."""
        return self._rope(None, None)[0]


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """A config.json as transformers' config class for its model_type holds it: the sizes after attribute maps
    and class defaults, and ``rope_parameters`` standardised (rope_type, rope_theta, partial_rotary_factor and the
    scaling's keys, original_max_position_embeddings moved in for llama3 / yarn / longrope). ``spec`` is the
    ``ModelSpec`` it was read with (``GENERIC`` for an unknown model_type)."""

    model_type: str | None
    spec: ModelSpec
    hidden_size: int | None
    num_attention_heads: int | None
    head_dim: int
    max_position_embeddings: int | None
    rope_parameters: dict
    rotary_dim: int | None = None


def _load(config: str | dict) -> dict:
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"the config is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
    if not isinstance(config, dict):
        raise ValueError(f"a config.json holds one JSON object {{...}}; got {type(config).__name__}")
    return config


def _whole(name: str, value) -> int | None:
    return None if value is None else _checks.positive_int(name, value)


def _attribute(config: dict, spec: ModelSpec, name: str):
    """``name`` as the config class holds it: the standard key, else the key the attribute map stores it under,
    else the class default (None values count as absent)."""
    for key in (name, spec.attribute_map.get(name)):
        if key is not None and config.get(key) is not None:
            return config[key]
    return spec.defaults.get(name)


def _head_dim(config: dict, spec: ModelSpec, hidden: int | None, heads: int | None) -> int:
    explicit = config.get("head_dim") if spec.rotary_dim is None else None  # GPT-J splits n_embd by n_head only
    if explicit:
        return _checks.positive_int("head_dim", explicit, maximum=_checks.MAX_DIM)
    if spec.defaults.get("head_dim"):
        return spec.defaults["head_dim"]
    if hidden is None or heads is None:
        raise ValueError(
            "the config needs head_dim, or hidden_size and num_attention_heads to derive it "
            "(head_dim = hidden_size / num_attention_heads)"
        )
    if spec.divisible and hidden % heads:
        raise ValueError(f"hidden_size {hidden} does not split into {heads} attention heads of equal size")
    return _checks.positive_int("head_dim", hidden // heads, maximum=_checks.MAX_DIM)


def _rope_parameters(config: dict, spec: ModelSpec, max_pos: int | None) -> dict:
    """transformers' ``convert_rope_params_to_dict`` + ``standardize_rope_params`` for one global rope dict."""
    for key in ("rope_scaling", "rope_parameters"):
        if config.get(key) is not None and not isinstance(config[key], dict):
            raise ValueError(f"{key} must be a JSON object; got {config[key]!r}")
    # a non-empty rope_scaling replaces rope_parameters, as in transformers
    rope = dict(config.get("rope_scaling") or config.get("rope_parameters") or {})
    nested = [key for key, value in rope.items() if isinstance(value, dict)]
    if nested:
        raise ValueError(
            f"this config sets RoPE separately for each kind of layer ({', '.join(nested)}); "
            "the RoPE view reads one setting for the whole model"
        )
    rope.setdefault("rope_theta", config.get(spec.theta_key, spec.default_theta))
    prf = config.get(spec.prf_key, spec.default_prf)
    if prf is not None:
        rope.setdefault("partial_rotary_factor", prf)
    written = rope.get("rope_type", rope.get("type", "default")) or "default"
    rope.pop("type", None)
    if written in ORIGINAL_LENGTH_TYPES:
        top = config.get("original_max_position_embeddings", spec.original_length)
        if top is not None:  # a top-level value (or Phi-3's class field) overrides the dict's
            rope["original_max_position_embeddings"] = top
        elif max_pos is not None:
            rope.setdefault("original_max_position_embeddings", max_pos)
    rope_type = rope["rope_type"] = spec.type_aliases.get(written, written)  # Phi-3 renames only now
    if spec.rope_types is not None and rope_type not in spec.rope_types:
        raise ValueError(
            f"{spec.config_class} accepts only the rope types {', '.join(spec.rope_types)}; got {rope_type!r}"
        )
    if rope_type in ORIGINAL_LENGTH_TYPES and rope.get("original_max_position_embeddings") is None:
        renamed = f" (transformers renames {written!r} to {rope_type!r} only after it fills that in)"
        raise ValueError(
            f"rope type {rope_type!r} needs original_max_position_embeddings, the context the model was pre-trained "
            f"on, inside its rope parameters{renamed if written != rope_type else ''}"
        )
    return rope


def read_config(config: str | dict) -> ModelConfig:
    """Read a Hugging Face config.json (JSON text or a dict) the way transformers 5.24's config class for its
    ``model_type`` does (``MODEL_SPECS``; ``GENERIC`` for other types):

    - sizes: the standard key, else the model's own name for it (GPT-J: ``n_embd``, ``n_head``, ``n_positions``),
      else the class default; head_dim = ``head_dim`` (or the class default, Qwen3 128, Gemma 256), else
      hidden_size // num_attention_heads (GPT-J always the latter).
    - rope parameters: ``rope_scaling`` if non-empty, else ``rope_parameters``; rope_theta inside it, else the
      top-level ``rope_theta`` (GPT-NeoX: ``rotary_emb_base``), else the class's default theta (10000, Mixtral
      1e6); partial_rotary_factor likewise (GPT-NeoX: ``rotary_pct``, default 0.25; Phi 0.5; StableLM 0.25); the
      legacy key ``type`` becomes ``rope_type``; for llama3, yarn and longrope a top-level
      ``original_max_position_embeddings`` (Phi-3: its class field, default 4096) overrides the dict's, which
      otherwise defaults to max_position_embeddings.
    - GPT-J: ``rotary_dim`` (default 64) dimensions rotate, interleaved, with base 10000 and no scaling.

    A config with another family's keys (``rotary_pct``, ``rotary_dim``, ``n_embd``, ...) and a model_type posviz
    does not mirror is refused: read generically they would be ignored, and the result would be wrong.
    """
    config = _load(config)
    model_type = config.get("model_type")
    spec = MODEL_SPECS.get(model_type, GENERIC) if isinstance(model_type, str) else GENERIC
    if spec is GENERIC:
        foreign = [key for key in FAMILY_KEYS if key in config]
        if foreign:
            needs = sorted({FAMILY_KEYS[key] for key in foreign})
            which = " or ".join(f'"{n}"' for n in needs)
            classes = " and ".join(MODEL_SPECS[n].config_class for n in needs)
            has = f"its model_type is {model_type!r}" if model_type is not None else "it has no model_type"
            raise ValueError(
                f"{', '.join(foreign)}: posviz reads {'this key' if len(foreign) == 1 else 'these keys'} only for "
                f"model_type {which}, as transformers' {classes} does; this config is not one of those ({has}), so "
                f'posviz cannot tell how its model reads them. If it is one, add "model_type": "{needs[0]}".'
            )
    hidden = _whole("hidden_size", _attribute(config, spec, "hidden_size"))
    heads = _whole("num_attention_heads", _attribute(config, spec, "num_attention_heads"))
    head_dim = _head_dim(config, spec, hidden, heads)
    max_pos = _whole("max_position_embeddings", _attribute(config, spec, "max_position_embeddings"))
    rotary_dim = None
    if spec.rotary_dim is not None:
        rotary_dim = config.get("rotary_dim", spec.rotary_dim)
        if isinstance(rotary_dim, bool) or not isinstance(rotary_dim, int) or not 2 <= rotary_dim <= head_dim:
            raise ValueError(
                f"rotary_dim is the number of dimensions of each head that rotate, a whole number from 2 to head_dim "
                f"({head_dim}); got {rotary_dim!r}"
            )
        if rotary_dim % 2:
            raise ValueError(
                f"GPT-J turns its first rotary_dim dimensions in neighbouring pairs, so rotary_dim must be even; got "
                f"{rotary_dim}"
            )
        rope = {"rope_type": "default", "rope_theta": 10000.0}
    else:
        rope = _rope_parameters(config, spec, max_pos)
    return ModelConfig(model_type, spec, hidden, heads, head_dim, max_pos, rope, rotary_dim)


def parse_config(config: str | dict) -> RopeConfig:
    """The RoPE settings of a Hugging Face model config (JSON text or a dict), read by posviz's one config reader,
    ``posviz.models.model_positions`` (transformers' config class for the model type, with the rules its modeling
    code adds): the settings of the model's first rotating layer.

    - head_dim, and rotary_dim where the rope initialisation reads another size (MLA: ``qk_rope_head_dim``;
      GPT-J: ``rotary_dim``); max_position_embeddings; the layout of the model's pairs (interleaved for GPT-J,
      Cohere, Llama 4, MLA with ``rope_interleave``; half-split for the others);
    - base: rope_theta; scaling: the rope parameters without rope_theta and partial_rotary_factor, None for
      "default"; partial_rotary_factor: the one in effect (1 where the default RoPE rotates the whole head).

    A config without a model_type is read by the standard keys alone (``_parse_standard_keys``). Raises ValueError
    for a config the reader refuses, and for a model none of whose layers rotates. A model whose
    layers differ (local and global bases, NoPE layers) is described by its first rotating layer here; the Models
    page reads every layer.
    """
    from ..models import model_positions

    raw = _load(config)
    if not isinstance(raw.get("model_type"), str):
        return _parse_standard_keys(raw)
    positions = model_positions(raw)
    layer = next((x for x in positions.layers if x.kind == "rope"), None)
    if layer is None or layer.rope_parameters is None or layer.rope_head_dim is None:
        raise ValueError(
            f"no layer of this {positions.text_model_type} model rotates its queries and keys, so it has no RoPE "
            "frequencies to show; the Models page says how its layers see positions"
        )
    rope = dict(layer.rope_parameters)
    base = rope.pop("rope_theta")
    prf = rope.pop("partial_rotary_factor", 1.0)
    scaling = normalize_scaling(rope)
    if scaling["rope_type"] not in ROPE_TYPES:
        raise ValueError(
            f"this config's rope type {scaling['rope_type']!r} is read on the Models page; this tab draws "
            f"{', '.join(ROPE_TYPES)}"
        )
    head_dim = layer.head_dim or layer.rope_head_dim
    parsed = RopeConfig(
        head_dim=head_dim,
        rotary_dim=layer.rope_head_dim if layer.rope_head_dim != head_dim else None,
        base=_checks.positive_float("rope_theta", base, minimum_exclusive=1.0),
        scaling=None if scaling["rope_type"] == "default" else scaling,
        max_position_embeddings=positions.max_position_embeddings,
        partial_rotary_factor=_checks.positive_float("partial_rotary_factor", prf),
        layout=_checks.choice("layout", layer.layout, LAYOUTS),
        model_type=positions.model_type,
    )
    parsed.inv_freq()
    return parsed


def _parse_standard_keys(config: dict) -> RopeConfig:
    """A config without a model_type (a sketch such as ``{"head_dim": 64}``): the standard keys, read as
    transformers' ``PreTrainedConfig`` reads them (``read_config``'s generic case: no class defaults, rope_theta
    10,000, the rope parameters' partial_rotary_factor honoured). Another family's keys are refused there."""
    read = read_config(config)
    rope = dict(read.rope_parameters)
    base = rope.pop("rope_theta")
    prf = rope.pop("partial_rotary_factor", 1.0)
    scaling = normalize_scaling(rope)
    parsed = RopeConfig(
        head_dim=read.head_dim,
        base=_checks.positive_float("rope_theta", base, minimum_exclusive=1.0),
        scaling=None if scaling["rope_type"] == "default" else scaling,
        max_position_embeddings=read.max_position_embeddings,
        partial_rotary_factor=_checks.positive_float("partial_rotary_factor", prf),
    )
    parsed.inv_freq()
    return parsed


#: The keys of a config.json that decide a model's rotary frequencies (everything ``read_config`` reads).
ROPE_FIELDS = (
    "model_type",
    "head_dim",
    "hidden_size",
    "num_attention_heads",
    "max_position_embeddings",
    "original_max_position_embeddings",
    "rope_theta",
    "partial_rotary_factor",
    "rope_parameters",
    "rope_scaling",
    *FAMILY_KEYS,
)


def rope_fields(config: dict) -> dict:
    """The part of a config.json that decides its RoPE frequencies (``ROPE_FIELDS``), short enough for a link;
    ``parse_config`` reads the same settings from it as from the whole config."""
    return {key: config[key] for key in ROPE_FIELDS if key in config}


@dataclasses.dataclass(frozen=True)
class ConfigFrequencies:
    """A parsed config with its unscaled and scaled frequencies (scaled at ``seq_len`` = max_position_embeddings,
    which selects LongRoPE's long factors when that exceeds the original context)."""

    config: RopeConfig
    plain: np.ndarray
    scaled: np.ndarray
    attention_factor: float

    @property
    def plain_wavelength(self) -> np.ndarray:
        return rope_wavelength(self.plain)

    @property
    def scaled_wavelength(self) -> np.ndarray:
        return rope_wavelength(self.scaled)


def config_frequencies(config: str | dict) -> ConfigFrequencies:
    """``parse_config(config)`` and its frequencies: inv_freq from rope_theta alone (theta_i = base^(-2i/r)) and
    inv_freq with the config's scaling, both from ``rope_inv_freq``."""
    parsed = parse_config(config)
    scaled, attention = parsed.inv_freq(parsed.max_position_embeddings)
    return ConfigFrequencies(parsed, parsed.plain_inv_freq(), scaled, attention)


#: The config box's presets: the models of posviz's one preset store (``posviz.models.presets``, published configs)
#: whose layers rotate, in the order the box lists them.
PRESETS: dict[str, dict] = {
    name: {key: value for key, value in _stored.preset(name).items() if key != "_source"}
    for name in (
        "llama2_7b", "mistral_7b", "qwen2_7b", "llama3_1_8b", "qwen2_5_7b_yarn", "pythia_410m", "gptj_6b",
        "phi3_5_mini", "deepseek_v3", "llama4_scout", "command_r7b", "gemma4_e2b",
    )
}  # fmt: skip

#: What each preset is, for labels (the store's names).
PRESET_NAMES = {name: _stored.PRESETS[name] for name in PRESETS}

#: Names the box gave two presets before it read the one store; a link that names them still opens them.
PRESET_ALIASES = {"llama31_8b": "llama3_1_8b", "qwen25_7b_yarn": "qwen2_5_7b_yarn"}


def preset_text(name: str) -> str:
    """The preset ``name`` as config.json text (indented JSON)."""
    _checks.choice("preset", name, tuple(PRESETS))
    return json.dumps(PRESETS[name], indent=2)


def demo_longrope_factors(n_pairs: int, factor: float) -> tuple[list[float], list[float]]:
    """An illustrative LongRoPE factor set (not a searched one): ``(short_factor, long_factor)``.

    short_factor_i = 1 (the original context is read unchanged); long_factor_i = 1 + (factor - 1) (i / (n - 1))^2,
    so the fast pairs are barely stretched and the slowest one by ``factor``, the non-uniform shape LongRoPE's
    search finds (Ding et al., 2024, arXiv:2402.13753, figure 3).
    """
    n = _checks.positive_int("n_pairs", n_pairs, maximum=_checks.MAX_DIM // 2)
    factor = _checks.positive_float("factor", factor)
    share = np.arange(n, dtype=np.float64) / max(n - 1, 1)
    return [1.0] * n, (1.0 + (factor - 1.0) * share**2).tolist()


#: The methods ``compare_scalings`` lays side by side, in that order.
EXTENSION_METHODS = ("linear", "ntk", "dynamic", "yarn", "llama3", "longrope")


def extension_scaling(method: str, head_dim: int, factor: float, original: int) -> dict | None:
    """The ``rope_scaling`` dict of ``method`` for a context ``factor`` times ``original``, with the defaults of
    the papers (YaRN beta_fast 32 / beta_slow 1; Llama 3.1 low 1 / high 4; LongRoPE ``demo_longrope_factors``).
    "ntk" is a base change, not a scaling dict: None.

    Dynamic NTK gets ``factor`` 1 (with max_position_embeddings = ``original``): it scales by the length it is
    reading, s_eff = L / original (``rope.dynamic_ntk_scale``), so at the target length it is static NTK with the
    extension ``factor``. Its own ``factor`` only sets how fast s_eff grows; set to the extension factor s it
    would reach s^2 - s + 1 at the target length and slow the slowest pair far more than the context grew."""
    _checks.choice("method", method, EXTENSION_METHODS)
    common = {"factor": float(factor), "original_max_position_embeddings": int(original)}
    if method == "ntk":
        return None
    if method == "linear":
        return {"rope_type": "linear", "factor": float(factor)}
    if method == "dynamic":
        return {"rope_type": "dynamic", "factor": 1.0}
    if method == "llama3":
        return {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0, **common}
    if method == "longrope":
        short, long = demo_longrope_factors(head_dim // 2, factor)
        return {"rope_type": "longrope", "short_factor": short, "long_factor": long, **common}
    return {"rope_type": "yarn", **common}


@dataclasses.dataclass(frozen=True)
class ScalingComparison:
    """Per-pair view of several scalings: ``inv_freq[k]`` and ``classes[k]`` (codes into ``PAIR_CLASSES``) of
    ``methods[k]``, against the unscaled ``original``; ``wavelength = 2 pi / inv_freq``, ``original_wavelength``
    likewise, and ``ratio = inv_freq / original`` (theta_scaled / theta_original per method and pair, the quantity
    ``classify_pairs`` reads). The derived arrays are fields, computed once, so a cache can freeze them with the
    rest."""

    methods: tuple[str, ...]
    original: np.ndarray
    inv_freq: np.ndarray
    attention_factor: np.ndarray
    classes: np.ndarray
    wavelength: np.ndarray = dataclasses.field(init=False)
    original_wavelength: np.ndarray = dataclasses.field(init=False)
    ratio: np.ndarray = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "wavelength", rope_wavelength(self.inv_freq))
        object.__setattr__(self, "original_wavelength", rope_wavelength(self.original))
        object.__setattr__(self, "ratio", self.inv_freq / self.original)

    def counts(self) -> np.ndarray:
        """How many pairs of each method fall in each class, shape (methods, len(PAIR_CLASSES))."""
        return (self.classes[:, :, None] == np.arange(len(PAIR_CLASSES))).sum(axis=1)


def compare_scalings(
    head_dim: int, base: float, factor: float, original: int, current_length: int | None = None
) -> ScalingComparison:
    """Every method of EXTENSION_METHODS for a context ``factor`` x ``original`` long, at the target length
    (dynamic NTK and LongRoPE at ``current_length``, default the target), classified by ``classify_pairs``.

    "ntk" uses ``ntk_scaled_base`` (bloc97, 2023); the others ``rope_inv_freq`` with ``extension_scaling``, so
    dynamic NTK (factor 1) scales by current_length / original: at the target length it equals "ntk" exactly,
    its slowest pair slowed by ``factor`` and none slowed more.
    """
    factor = _checks.positive_float("factor", factor, minimum_exclusive=1.0)
    original = _checks.positive_int("original context", original, maximum=1 << 24)
    target = int(round(factor * original))
    length = target if current_length is None else _checks.positive_int("current length", current_length)
    plain, _ = rope_inv_freq(head_dim, base=base)
    rows, attention = [], []
    for method in EXTENSION_METHODS:
        if method == "ntk":
            inv, attn = rope_inv_freq(head_dim, base=ntk_scaled_base(base, factor, plain.size * 2))
        else:
            inv, attn = rope_inv_freq(
                head_dim,
                base=base,
                scaling=extension_scaling(method, head_dim, factor, original),
                max_position_embeddings=original,
                seq_len=length,
            )
        rows.append(inv)
        attention.append(attn)
    inv_freq = np.stack(rows)
    return ScalingComparison(
        methods=EXTENSION_METHODS,
        original=plain,
        inv_freq=inv_freq,
        attention_factor=np.asarray(attention),
        classes=np.stack([classify_pairs(row, plain, factor) for row in inv_freq]),
    )
