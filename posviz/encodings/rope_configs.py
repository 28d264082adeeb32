"""RoPE settings of real models: read them from a Hugging Face ``config.json``, and compare the context-extension
scalings of ``rope.py`` side by side.

Two config formats exist. Up to transformers 4 a config has ``rope_theta`` at the top level and an optional
``rope_scaling`` dict; transformers 5 writes one ``rope_parameters`` dict holding ``rope_theta``, ``rope_type``
and the scaling's own keys. ``parse_config`` reads both.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from . import _checks
from .rope import PAIR_CLASSES, classify_pairs, normalize_scaling, ntk_scaled_base, rope_inv_freq, rope_wavelength


@dataclasses.dataclass(frozen=True)
class RopeConfig:
    """The RoPE part of a model config: what ``rope_inv_freq`` needs to rebuild its frequencies."""

    head_dim: int
    base: float
    scaling: dict | None
    max_position_embeddings: int | None
    partial_rotary_factor: float = 1.0

    @property
    def rope_type(self) -> str:
        return normalize_scaling(self.scaling)["rope_type"]

    @property
    def original_max_position_embeddings(self) -> int | None:
        """The context the model was pre-trained on: the scaling's ``original_max_position_embeddings`` if set."""
        value = (self.scaling or {}).get("original_max_position_embeddings")
        return int(value) if value is not None else self.max_position_embeddings

    @property
    def target_context(self) -> int | None:
        """The context the scaling is meant for: original x ``factor`` when the scaling has a factor (a YaRN block
        added to a config often leaves max_position_embeddings at the original length), at least
        max_position_embeddings."""
        factor, original = (self.scaling or {}).get("factor"), self.original_max_position_embeddings
        if factor is None or original is None:
            return self.max_position_embeddings
        return max(int(round(original * factor)), self.max_position_embeddings or 0)

    def inv_freq(self, seq_len: int | None = None) -> tuple[np.ndarray, float]:
        """``rope_inv_freq`` with this config's settings: ``(inv_freq, attention_factor)``."""
        return rope_inv_freq(
            self.head_dim,
            base=self.base,
            scaling=self.scaling,
            max_position_embeddings=self.max_position_embeddings,
            seq_len=seq_len,
            partial_rotary_factor=self.partial_rotary_factor,
        )


def _whole(config: dict, key: str) -> int | None:
    value = config.get(key)
    if value is None:
        return None
    return _checks.positive_int(key, value)


def _head_dim(config: dict) -> int:
    if config.get("head_dim") is not None:
        return _checks.positive_int("head_dim", config["head_dim"], maximum=_checks.MAX_DIM)
    hidden, heads = _whole(config, "hidden_size"), _whole(config, "num_attention_heads")
    if hidden is None or heads is None:
        raise ValueError(
            "the config needs head_dim, or hidden_size and num_attention_heads to derive it "
            "(head_dim = hidden_size / num_attention_heads)"
        )
    if hidden % heads:
        raise ValueError(f"hidden_size {hidden} does not split into {heads} attention heads of equal size")
    return _checks.positive_int("head_dim", hidden // heads, maximum=_checks.MAX_DIM)


def parse_config(config: str | dict) -> RopeConfig:
    """Read the RoPE settings of a Hugging Face model config (JSON text or a dict).

    - head_dim: ``head_dim``, else ``hidden_size / num_attention_heads``.
    - base: ``rope_parameters["rope_theta"]`` (transformers 5), else ``rope_theta``, else 10000 (LlamaConfig's
      default).
    - scaling: ``rope_parameters`` without rope_theta / partial_rotary_factor, else ``rope_scaling``; None when
      its type is "default".
    - partial_rotary_factor: inside ``rope_parameters``, else at the top level, else 1.

    The result is checked by building its frequencies once, so a config that ``rope_inv_freq`` cannot use raises
    the same ValueError here (odd rotated dimension, unknown rope type, missing scaling keys).
    """
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"the config is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
            ) from None
    if not isinstance(config, dict):
        raise ValueError(f"a config.json holds one JSON object {{...}}; got {type(config).__name__}")
    rope = config.get("rope_parameters")
    if rope is not None and not isinstance(rope, dict):
        raise ValueError(f"rope_parameters must be a JSON object; got {rope!r}")
    rope = dict(rope or {})
    base = rope.pop("rope_theta", config.get("rope_theta", 10000.0))
    prf = rope.pop("partial_rotary_factor", config.get("partial_rotary_factor", 1.0))
    scaling = rope if rope else config.get("rope_scaling")
    scaling = normalize_scaling(scaling)
    parsed = RopeConfig(
        head_dim=_head_dim(config),
        base=_checks.positive_float("rope_theta", base, minimum_exclusive=1.0),
        scaling=None if scaling["rope_type"] == "default" else scaling,
        max_position_embeddings=_whole(config, "max_position_embeddings"),
        partial_rotary_factor=_checks.positive_float("partial_rotary_factor", prf),
    )
    parsed.inv_freq()
    return parsed


#: The keys of a config.json that decide a model's rotary frequencies (everything ``parse_config`` reads).
ROPE_FIELDS = (
    "model_type",
    "head_dim",
    "hidden_size",
    "num_attention_heads",
    "max_position_embeddings",
    "rope_theta",
    "partial_rotary_factor",
    "rope_parameters",
    "rope_scaling",
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
    plain, _ = rope_inv_freq(parsed.head_dim, base=parsed.base, partial_rotary_factor=parsed.partial_rotary_factor)
    scaled, attention = parsed.inv_freq(parsed.max_position_embeddings)
    return ConfigFrequencies(parsed, plain, scaled, attention)


#: Published configurations, written from the RoPE-related values of each model's config.json on the Hugging Face
#: Hub (only the keys ``parse_config`` reads). The Qwen2.5 entry adds the YaRN block its model card recommends
#: for inputs beyond 32,768 tokens; Llama 3.1 is written in the transformers 5 ``rope_parameters`` format.
PRESETS: dict[str, dict] = {
    "llama2_7b": {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": None,
    },
    "mistral_7b": {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 32768,
        "rope_theta": 10000.0,
    },
    "qwen2_7b": {
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
    },
    "llama31_8b": {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "max_position_embeddings": 131072,
        "rope_parameters": {
            "rope_type": "llama3",
            "rope_theta": 500000.0,
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    },
    "qwen25_7b_yarn": {
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
    },
}

#: What each preset is, for labels.
PRESET_NAMES = {
    "llama2_7b": "Llama-2-7B",
    "mistral_7b": "Mistral-7B-v0.1",
    "qwen2_7b": "Qwen2-7B-Instruct",
    "llama31_8b": "Llama-3.1-8B",
    "qwen25_7b_yarn": "Qwen2.5-7B-Instruct + YaRN ×4",
}


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
    "ntk" is a base change, not a scaling dict: None."""
    _checks.choice("method", method, EXTENSION_METHODS)
    common = {"factor": float(factor), "original_max_position_embeddings": int(original)}
    if method == "ntk":
        return None
    if method in ("linear", "dynamic"):
        return {"rope_type": method, "factor": float(factor)}
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

    "ntk" uses ``ntk_scaled_base`` (bloc97, 2023); the others ``rope_inv_freq`` with ``extension_scaling``.
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
