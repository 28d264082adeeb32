"""RoPE settings of real models: read them from a Hugging Face ``config.json`` the way transformers does, and
compare the context-extension scalings of ``rope.py`` side by side.

``parse_config`` reads a config.json through posviz's one config reader, ``posviz.models.model_positions``
(transformers' own config class for its ``model_type``, with the rules its modeling code adds), and returns the
settings of its first rotating layer; a sketch without a model_type is read by the standard keys alone. Up to
transformers 4 a config has ``rope_theta`` at the top level and an optional ``rope_scaling`` dict; transformers 5
writes one ``rope_parameters`` dict holding ``rope_theta``, ``rope_type`` and the scaling's own keys. The presets
are the rotating models of posviz's one preset store (``posviz.models.presets``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

import numpy as np

from ..base import checks
from ..encodings.rope import (
    LAYOUTS,
    PAIR_CLASSES,
    ROPE_TYPES,
    classify_pairs,
    normalize_scaling,
    ntk_scaled_base,
    rope_inv_freq,
    rope_wavelength,
)
from . import presets as _stored
from .positions import POSITION_KEYS, model_positions

#: rope types whose pre-training length transformers moves into the rope parameters (``standardize_rope_params``).
ORIGINAL_LENGTH_TYPES = ("llama3", "yarn", "longrope")


#: Keys that only some families read, and the model_type that reads them: a config without a model_type that has one
#: of them is refused rather than silently misread.
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
    return None if value is None else checks.positive_int(name, value)


#: The config classes of the families whose own keys a sketch without a model_type might hold.
_FAMILY_CLASSES = {"gpt_neox": "GPTNeoXConfig", "gptj": "GPTJConfig"}


def _standard_head_dim(config: dict) -> int:
    if config.get("head_dim") is not None:
        return checks.positive_int("head_dim", config["head_dim"], maximum=checks.MAX_DIM)
    hidden = _whole("hidden_size", config.get("hidden_size"))
    heads = _whole("num_attention_heads", config.get("num_attention_heads"))
    if hidden is None or heads is None:
        raise ValueError(
            "the config needs head_dim, or hidden_size and num_attention_heads to derive it "
            "(head_dim = hidden_size / num_attention_heads)"
        )
    if hidden % heads:
        raise ValueError(f"hidden_size {hidden} does not split into {heads} attention heads of equal size")
    return checks.positive_int("head_dim", hidden // heads, maximum=checks.MAX_DIM)


def _standard_rope(config: dict, max_pos: int | None) -> dict:
    """transformers' ``convert_rope_params_to_dict`` + ``standardize_rope_params`` for one global rope dict, as
    ``PreTrainedConfig`` does them for the standard keys."""
    for key in ("rope_scaling", "rope_parameters"):
        if config.get(key) is not None and not isinstance(config[key], dict):
            raise ValueError(f"{key} must be a JSON object; got {config[key]!r}")
    # a non-empty rope_scaling replaces rope_parameters, as in transformers
    rope = dict(config.get("rope_scaling") or config.get("rope_parameters") or {})
    nested = [key for key, value in rope.items() if isinstance(value, dict)]
    if nested:
        raise ValueError(
            f"this config sets RoPE separately for each kind of layer ({', '.join(nested)}); add its model_type, "
            "and the Models page reads every layer"
        )
    rope.setdefault("rope_theta", config.get("rope_theta", 10000.0))
    if config.get("partial_rotary_factor") is not None:
        rope.setdefault("partial_rotary_factor", config["partial_rotary_factor"])
    rope["rope_type"] = rope.get("rope_type", rope.get("type", "default")) or "default"
    rope.pop("type", None)
    if rope["rope_type"] in ORIGINAL_LENGTH_TYPES:
        top = config.get("original_max_position_embeddings")
        if top is not None:  # a top-level value overrides the dict's
            rope["original_max_position_embeddings"] = top
        elif max_pos is not None:
            rope.setdefault("original_max_position_embeddings", max_pos)
        if rope.get("original_max_position_embeddings") is None:
            raise ValueError(
                f"rope type {rope['rope_type']!r} needs original_max_position_embeddings, the context the model was "
                "pre-trained on, inside its rope parameters"
            )
    return rope


def _parse_standard_keys(config: dict) -> RopeConfig:
    """A config without a model_type (a sketch such as ``{"head_dim": 64}``): the standard keys, read as
    transformers' ``PreTrainedConfig`` reads them (no class defaults; rope_theta 10,000; head_dim, else
    hidden_size / num_attention_heads; the rope parameters' partial_rotary_factor honoured). A sketch with another
    family's keys (``rotary_pct``, ``rotary_dim``, ``n_embd``, ...) is refused: read by the standard keys they would
    be ignored, and the result would be wrong."""
    foreign = [key for key in FAMILY_KEYS if key in config]
    if foreign:
        needs = sorted({FAMILY_KEYS[key] for key in foreign})
        which = " or ".join(f'"{n}"' for n in needs)
        classes = " and ".join(_FAMILY_CLASSES[n] for n in needs)
        raise ValueError(
            f"{', '.join(foreign)}: posviz reads {'this key' if len(foreign) == 1 else 'these keys'} only for "
            f"model_type {which}, as transformers' {classes} does; this config has no model_type, so posviz cannot "
            f'tell how its model reads them. If it is one, add "model_type": "{needs[0]}".'
        )
    max_pos = _whole("max_position_embeddings", config.get("max_position_embeddings"))
    return _rope_config(_standard_rope(config, max_pos), head_dim=_standard_head_dim(config), max_pos=max_pos)


def _rope_config(rope: Mapping, *, head_dim: int, max_pos: int | None, **fields) -> RopeConfig:
    """A ``RopeConfig`` from standardised rope parameters (rope_theta, partial_rotary_factor and the scaling's
    keys), checked by building its frequencies once, so that what ``rope_inv_freq`` cannot use raises here."""
    rope = dict(rope)
    base = rope.pop("rope_theta")
    prf = rope.pop("partial_rotary_factor", 1.0)
    scaling = normalize_scaling(rope)
    parsed = RopeConfig(
        head_dim=head_dim,
        base=checks.positive_float("rope_theta", base, minimum_exclusive=1.0),
        scaling=None if scaling["rope_type"] == "default" else scaling,
        max_position_embeddings=max_pos,
        partial_rotary_factor=checks.positive_float("partial_rotary_factor", prf),
        **fields,
    )
    parsed.inv_freq()
    return parsed


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
    if layer.rope_type not in ROPE_TYPES:
        raise ValueError(
            f"this config's rope type {layer.rope_type!r} is read on the Models page; this tab draws "
            f"{', '.join(ROPE_TYPES)}"
        )
    head_dim = layer.head_dim or layer.rope_head_dim
    return _rope_config(
        layer.rope_parameters,
        head_dim=head_dim,
        max_pos=positions.max_position_embeddings,
        rotary_dim=layer.rope_head_dim if layer.rope_head_dim != head_dim else None,
        layout=checks.choice("layout", layer.layout, LAYOUTS),
        model_type=positions.model_type,
    )


#: The keys of a config.json that decide a model's rotary frequencies and which layers rotate (everything the one
#: reader reads of positions, with the sizes); a multimodal config's ``text_config`` is kept with the same keys.
ROPE_FIELDS = tuple(
    sorted(
        POSITION_KEYS
        | set(FAMILY_KEYS)
        | {
            "model_type", "text_config", "hidden_size", "num_attention_heads", "num_hidden_layers",
            "max_position_embeddings", "qk_nope_head_dim", "global_head_dim", "mrope_section",
        }
    )
)  # fmt: skip


def rope_fields(config: dict) -> dict:
    """The part of a config.json that decides its RoPE frequencies (``ROPE_FIELDS``; a ``text_config`` filtered
    alike), short enough for a link; ``parse_config`` reads the same settings from it as from the whole config."""
    fields = {key: config[key] for key in ROPE_FIELDS if key in config}
    if isinstance(fields.get("text_config"), dict):
        fields["text_config"] = rope_fields(fields["text_config"])
    return fields


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
#: whose layers rotate, a selection in the order the box lists them.
PRESETS: dict[str, dict] = {
    name: {key: value for key, value in _stored.preset(name).items() if key != "_source"}
    for name in (
        "llama2_7b", "mistral_7b", "qwen2_7b", "llama3_1_8b", "qwen2_5_7b_yarn", "pythia_410m", "gptj_6b",
        "phi3_5_mini", "deepseek_v3", "llama4_scout", "command_r7b", "gemma4_31b", "gemma4",
    )
}  # fmt: skip

#: What each preset is, in English (the store's names; a page shows the catalog's ``models.preset.<name>``).
PRESET_NAMES = {name: _stored.PRESETS[name] for name in PRESETS}

#: Names the box gave two presets before it read the one store; a link that names them still opens them.
PRESET_ALIASES = {"llama31_8b": "llama3_1_8b", "qwen25_7b_yarn": "qwen2_5_7b_yarn"}


def preset_text(name: str) -> str:
    """The preset ``name`` as config.json text (indented JSON)."""
    checks.choice("preset", name, tuple(PRESETS))
    return json.dumps(PRESETS[name], indent=2)


def demo_longrope_factors(n_pairs: int, factor: float) -> tuple[list[float], list[float]]:
    """An illustrative LongRoPE factor set (not a searched one): ``(short_factor, long_factor)``.

    short_factor_i = 1 (the original context is read unchanged); long_factor_i = 1 + (factor - 1) (i / (n - 1))^2,
    so the fast pairs are barely stretched and the slowest one by ``factor``, the non-uniform shape LongRoPE's
    search finds (Ding et al., 2024, arXiv:2402.13753, figure 3).
    """
    n = checks.positive_int("n_pairs", n_pairs, maximum=checks.MAX_DIM // 2)
    factor = checks.positive_float("factor", factor)
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
    checks.choice("method", method, EXTENSION_METHODS)
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
    factor = checks.positive_float("factor", factor, minimum_exclusive=1.0)
    original = checks.positive_int("original context", original, maximum=1 << 24)
    target = int(round(factor * original))
    length = target if current_length is None else checks.positive_int("current length", current_length)
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
