"""``rope_configs.parse_config`` against transformers 5.24's own config classes: every config is
built by the class of its model_type from the same dict, and the frequencies its rotary embedding module computes
are compared with posviz's (and so are the rotated dimension, the layout, the attention factor). A config that
transformers refuses must be refused by posviz too."""

from __future__ import annotations

import copy
import importlib
import json
import math

import numpy as np
import pytest
import torch
from transformers import CONFIG_MAPPING
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

import posviz
from posviz.checkpoint import tables
from posviz.encodings import rope
from posviz.models import rope_configs

from . import _oracles  # noqa: F401  (quiets the transformers config warnings)

RTOL_F32 = 2e-6


def rotary_module(model_type: str, config):
    """The model's rotary embedding module, built from its config as the model builds it."""
    package = CONFIG_MAPPING[model_type].__module__.rsplit(".", 1)[0]  # llama4_text's class lives in models.llama4
    module = importlib.import_module(f"{package}.modeling_{package.rsplit('.', 1)[1]}")
    names = [name for name in dir(module) if name.endswith("RotaryEmbedding") and "Vision" not in name]
    (cls,) = names if len(names) == 1 else [name for name in names if "Text" in name]
    return getattr(module, cls)(config)


def hf_frequencies(model_type: str, config: dict):
    """``(inv_freq, attention_factor, fits)`` as transformers' model of ``model_type`` builds them from ``config``
    (float32); ``fits`` says whether the rotated dimensions fit the model's rotation (2 len(inv_freq) within the
    head; GPT-J: exactly its rotary_dim), i.e. whether its forward pass can apply them. GPT-J stores a sin | cos
    table: its frequencies are the angles at position 1."""
    config = copy.deepcopy(config)
    if model_type == "mixtral" and "head_dim" not in config:
        # MixtralConfig leaves head_dim None, which only the dynamic / yarn / longrope initialisers trip over
        # (TypeError); MixtralAttention uses hidden_size // num_attention_heads, and so does posviz
        config["head_dim"] = config.get("hidden_size", 4096) // config.get("num_attention_heads", 32)
    hf = CONFIG_MAPPING[model_type](**config)
    module = rotary_module(model_type, hf)
    head_dim = hf.hidden_size // hf.num_attention_heads
    if model_type == "gptj":
        sincos = module.embed_positions[1].double()
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2)
        inv = torch.atan2(sin, cos).numpy()
        return inv, 1.0, 2 * inv.size == min(hf.rotary_dim, head_dim)
    inv = module.inv_freq.double().numpy()
    head_dim = getattr(hf, "head_dim", None) or head_dim
    return inv, float(module.attention_scaling), 2 * inv.size <= head_dim


def refused_by_transformers(model_type: str, config: dict) -> bool:
    try:
        hf_frequencies(model_type, config)
    except Exception:  # noqa: BLE001 - any refusal (validation error, KeyError, TypeError) counts
        return True
    return False


SIZES = {"hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 1024}
CASES = {
    "class defaults": {},
    "sizes": SIZES,
    "rope_theta": {**SIZES, "rope_theta": 500000.0},
    "top-level partial factor": {**SIZES, "partial_rotary_factor": 0.5},
    "head_dim": {**SIZES, "head_dim": 32},
    "linear (rope_scaling, legacy type)": {**SIZES, "rope_scaling": {"type": "linear", "factor": 2.0}},
    "dynamic (rope_parameters)": {
        **SIZES,
        "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1e5},
    },
    "rope_scaling wins over rope_parameters": {
        **SIZES,
        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 100.0},
        "rope_scaling": {"type": "linear", "factor": 4.0},
    },
    "yarn, top-level original length wins": {
        **SIZES,
        "rope_theta": 123.0,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256},
        "original_max_position_embeddings": 512,
    },
    "yarn without an original length": {**SIZES, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}},
    "llama3 with a partial factor": {
        **SIZES,
        "rope_parameters": {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 256,
            "partial_rotary_factor": 0.5,
        },
    },
    "longrope (su)": {
        **SIZES,
        "rope_scaling": {"type": "su", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32},
        "original_max_position_embeddings": 256,
    },
    "odd partial rotary dimension": {
        **SIZES,
        "rope_parameters": {"rope_type": "linear", "factor": 1.0, "partial_rotary_factor": 0.05},
    },
    "odd head, fully rotated": {**SIZES, "head_dim": 65},
    "odd head of 3": {**SIZES, "head_dim": 3},
    "GPT-NeoX keys": {**SIZES, "rotary_emb_base": 500.0, "rotary_pct": 0.5},
    "GPT-NeoX keys and a top-level rope_theta": {**SIZES, "rope_theta": 7.0, "rotary_pct": 0.05},
    "GPT-J keys": {"n_embd": 1024, "n_head": 4, "n_positions": 512, "rotary_dim": 32},
    "GPT-J keys and standard names": {"n_embd": 1024, "hidden_size": 512, "num_attention_heads": 4, "rotary_dim": 64},
    "GPT-J, odd rotary_dim": {"n_embd": 1024, "n_head": 4, "rotary_dim": 33},
    "GPT-J, rotary_dim larger than a head": {"n_embd": 1024, "n_head": 16, "rotary_dim": 128},
    "uneven heads": {"hidden_size": 520, "num_attention_heads": 8},
}


#: GPT-J's model ignores every rope setting (base 10000, no scaling), though its config class still validates
#: a rope dict: those combinations say nothing about GPT-J's frequencies (see test_gptj_ignores_rope_settings).
#: Model types read each variant of CASES (the families the config box once mirrored by hand, and two it did not).
MODEL_TYPES = (
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "phi", "phi3", "stablelm", "gpt_neox", "gptj",
    "qwen3_moe", "granite",
)  # fmt: skip
PAIRS = [
    (model_type, case)
    for model_type in MODEL_TYPES
    for case in CASES
    if not (model_type == "gptj" and {"rope_scaling", "rope_parameters"} & set(CASES[case]))
]


@pytest.mark.parametrize(("model_type", "case"), PAIRS)
def test_configs_are_read_as_transformers_reads_them(model_type, case):
    config = {"model_type": model_type, **CASES[case]}
    if refused_by_transformers(model_type, CASES[case]):
        with pytest.raises(ValueError):
            rope_configs.config_frequencies(config)
        return
    expected, attention, fits = hf_frequencies(model_type, CASES[case])
    if expected.size == 0:  # transformers rotates nothing at all; posviz refuses such a RoPE with a sentence
        with pytest.raises(ValueError, match="no dimension would rotate"):
            rope_configs.parse_config(config)
        return
    if not fits:  # transformers reads the config, but the model cannot apply the result in its forward pass
        try:
            parsed = rope_configs.parse_config(config)
        except ValueError:
            return  # posviz says so when it reads the config
        inv, _ = parsed.inv_freq()
        np.testing.assert_allclose(inv, expected, rtol=RTOL_F32, atol=0)
        with pytest.raises(ValueError):  # or when the frequencies are applied to a head
            rope.apply_rope(np.ones((2, parsed.head_dim)), np.arange(2), inv, layout=parsed.layout)
        return
    parsed = rope_configs.parse_config(config)
    inv, found_attention = parsed.inv_freq()
    np.testing.assert_allclose(inv, expected, rtol=RTOL_F32, atol=0)
    assert found_attention == pytest.approx(attention, rel=1e-6)
    assert parsed.layout == ("interleaved" if model_type == "gptj" else "half")
    assert parsed.model_type == model_type


def test_gptj_ignores_rope_settings():
    """GPT-J's create_sinusoidal_positions hard-codes base 10000: a rope_theta in its config changes nothing."""
    config = {"n_embd": 512, "n_head": 4, "rotary_dim": 32, "rope_theta": 500.0}
    expected, _, _ = hf_frequencies("gptj", config)
    parsed = rope_configs.parse_config({"model_type": "gptj", **config})
    assert parsed.base == 10000.0 and parsed.scaling is None
    np.testing.assert_allclose(parsed.inv_freq()[0], expected, rtol=RTOL_F32)


def test_pythia_is_read_with_a_quarter_of_each_head_rotating():
    """Pythia-410M's config: 8 of 32 pairs turn (rotary_pct 0.25), base from rotary_emb_base."""
    config = rope_configs.PRESETS["pythia_410m"]
    parsed = rope_configs.parse_config(config)
    assert (parsed.head_dim, parsed.partial_rotary_factor, parsed.base, parsed.layout) == (64, 0.25, 10000.0, "half")
    expected, _, fits = hf_frequencies("gpt_neox", {k: v for k, v in config.items() if k != "model_type"})
    assert expected.size == 8 and fits
    np.testing.assert_allclose(parsed.inv_freq()[0], expected, rtol=RTOL_F32)
    found = rope_configs.config_frequencies(config)
    np.testing.assert_allclose(found.plain, 10000.0 ** (-np.arange(0, 16, 2) / 16), rtol=1e-12)


def test_gptj_is_read_with_its_own_names_and_interleaved_pairs():
    """GPT-J-6B's config (n_embd 4096, n_head 16, rotary_dim 64): 32 interleaved pairs of a 256-wide head."""
    config = rope_configs.PRESETS["gptj_6b"]
    parsed = rope_configs.parse_config(config)
    assert (parsed.head_dim, parsed.rotary_dim, parsed.layout, parsed.max_position_embeddings) == (
        256,
        64,
        "interleaved",
        2048,
    )
    expected, _, fits = hf_frequencies("gptj", {k: v for k, v in config.items() if k != "model_type"})
    assert fits and expected.size == 32
    np.testing.assert_allclose(parsed.inv_freq()[0], expected, rtol=RTOL_F32)
    # the standard names mean the same thing
    renamed = {"model_type": "gptj", "hidden_size": 4096, "num_attention_heads": 16, "rotary_dim": 64}
    assert rope_configs.parse_config(renamed) == parsed


def test_codegen_rotates_like_gptj():
    """CodeGen builds GPT-J's table (its own sinusoidal positions over rotary_dim, base 10,000, rotate_every_two):
    the same 32 interleaved pairs of a 256-wide head, checked against CodeGen's own rotary code."""
    from transformers.models.codegen import modeling_codegen

    parsed = rope_configs.parse_config({"model_type": "codegen", "n_embd": 4096, "n_head": 16, "rotary_dim": 64})
    assert (parsed.head_dim, parsed.rotary_dim, parsed.layout) == (256, 64, "interleaved")
    table = modeling_codegen.create_sinusoidal_positions(2, 64).double().numpy()  # [sin | cos] at positions 0, 1
    np.testing.assert_allclose(np.arcsin(table[1, :32]), parsed.inv_freq()[0], rtol=RTOL_F32)


def test_gptj_rotation_is_interleaved_like_rotate_every_two():
    """The layout parse_config reports is the one GPT-J's own code uses."""
    parsed = rope_configs.parse_config({"model_type": "gptj", "n_embd": 64, "n_head": 2, "rotary_dim": 16})
    inv, _ = parsed.inv_freq()
    x = np.random.default_rng(3).normal(size=(5, parsed.head_dim))
    positions = np.arange(5)
    from . import _oracles as oracle

    np.testing.assert_allclose(
        rope.apply_rope(x, positions, inv, layout=parsed.layout), oracle.gptj_rope(x, positions, inv), atol=1e-12
    )


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ({"hidden_size": 512, "num_attention_heads": 8, "rotary_pct": 0.25}, '"gpt_neox"'),
        ({"n_embd": 4096, "n_head": 16, "rotary_dim": 64}, '"gptj"'),
    ],
)
def test_another_family_s_keys_without_its_model_type_are_refused(config, needle):
    """A config without model_type whose keys only one family reads is refused, naming that family."""
    with pytest.raises(ValueError) as info:
        rope_configs.parse_config(config)
    assert needle in str(info.value)


def test_scaled_frequencies_at_a_length_match_rope_init_functions():
    """config_frequencies reads the scaling at max_position_embeddings, as ROPE_INIT_FUNCTIONS does at that length."""
    config = {
        "model_type": "gpt_neox",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "max_position_embeddings": 1024,
        "rotary_pct": 0.5,
        "rope_scaling": {"type": "dynamic", "factor": 3.0},
    }
    found = rope_configs.config_frequencies(config)
    hf = CONFIG_MAPPING["gpt_neox"](**{k: v for k, v in copy.deepcopy(config).items() if k != "model_type"})
    for seq_len in (1024, 3000):
        expected, _ = ROPE_INIT_FUNCTIONS["dynamic"](hf, "cpu", seq_len=seq_len)
        np.testing.assert_allclose(found.config.inv_freq(seq_len)[0], expected.double().numpy(), rtol=RTOL_F32)
    assert found.plain.size == 16 and math.isclose(found.config.base, 10000.0)


@pytest.mark.parametrize("model_type", ["gpt_neox", "gptj", "phi", "stablelm", "gemma4_text", "qwen3_moe"])
def test_a_rotating_model_type_is_a_rope_model_for_the_inspector(model_type):
    assert tables.rope_config({"model_type": model_type}) == rope_configs.parse_config({"model_type": model_type})


def test_dynamic_starts_at_max_position_embeddings_whatever_the_dict_says():
    """transformers' dynamic scaling ignores original_max_position_embeddings (it scales from
    max_position_embeddings), so the pre-training length posviz reports for it is max_position_embeddings."""
    config = {
        "model_type": "llama",
        "hidden_size": 512,
        "num_attention_heads": 8,
        "max_position_embeddings": 4096,
        "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 1024},
    }
    parsed = rope_configs.parse_config(config)
    assert parsed.original_max_position_embeddings == 4096
    hf = CONFIG_MAPPING["llama"](**{k: v for k, v in copy.deepcopy(config).items() if k != "model_type"})
    for seq_len in (2048, 8192):
        expected, _ = ROPE_INIT_FUNCTIONS["dynamic"](hf, "cpu", seq_len=seq_len)
        np.testing.assert_allclose(parsed.inv_freq(seq_len)[0], expected.double().numpy(), rtol=RTOL_F32)


def _models_partner_of(model_type: str, text, module, layer) -> np.ndarray:
    """The dimension each rotated dimension turns with, in the model's own apply-rotary function at position 1."""
    from .test_model_positions import hf_rotated_basis

    turned = np.abs(hf_rotated_basis(model_type, text, module, layer))
    shared = (turned @ turned.T) * (1 - np.eye(turned.shape[0]))
    moved = shared.max(axis=1) > 0
    return np.where(moved, shared.argmax(axis=1), -1)


@pytest.mark.parametrize("name", ["command_r7b", "llama4_scout", "deepseek_v3", "cohere"])
def test_the_config_box_pairs_and_rotates_as_the_model_does(name):
    """Cohere, Cohere2 (Command R7B) and Llama 4 pair (2i, 2i + 1); DeepSeek-V3 rotates its 64-dimensional
    qk_rope_head_dim slice, interleaved. The config box reads what the model's own rotation does to basis
    vectors, and the frequencies of its rotary module."""
    from .test_model_positions import buffers, float64_torch, hf_config, rotary

    if name == "cohere":
        model_type, text = "cohere", CONFIG_MAPPING["cohere"]()
        config = json.loads(text.to_json_string())
    else:
        model_type, _, text = hf_config(name)
        config = posviz.models.preset(name)
        config.pop("_source")
    parsed = rope_configs.parse_config(config)
    layer = next(x for x in posviz.model_positions(config).layers if x.kind == "rope")
    with float64_torch():
        module = rotary(model_type, text)
        partner = _models_partner_of(model_type, text, module, layer)
        expected, _ = buffers(model_type, module, layer.layer_type)
    rotated = int((partner >= 0).sum())
    assert 2 * parsed.inv_freq()[0].size == rotated == 2 * expected.size
    assert parsed.layout == ("interleaved" if partner[0] == 1 else "half")
    np.testing.assert_allclose(parsed.inv_freq()[0], expected, rtol=1e-12)
