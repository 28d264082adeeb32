"""``posviz.model_positions`` against transformers 5.24 itself, layer by layer, on every preset.

For each preset the model's own config class is built from the same dict (``AutoConfig.for_model``), and its rotary
embedding module(s) from that config, as the model builds them (one module per model, holding one buffer per layer
type where the model has layer types). Each layer's kind (RoPE or not), attention and window come from the
attribute the model's decoder layer reads for that layer (``no_rope_layers``, ``layer_types``, ``sliding_window``,
...), never from posviz. Frequencies are compared in float64: transformers' initialisers are run with
``torch.float`` / ``torch.float32`` / ``Tensor.float`` and the default dtype all meaning float64 (``float64_torch``),
so the same formulas run at posviz's precision and agree to rtol 1e-12; a second check compares with the float32
buffers the real models hold, within float32 rounding.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import inspect
import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from transformers import AutoConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

import posviz
from posviz.models import positions

from . import _oracles  # noqa: F401  (quiets the transformers config warnings)

RTOL = 1e-12
#: float32 keeps 24 bits: a frequency base^(-2i/d) is off by at most a few ulp of float32 (~1e-7 relative) after
#: the power, the division and the scaling's few operations; 2e-6 leaves an order of magnitude of margin.
RTOL_F32 = 2e-6

#: model_type of the wrapper -> the module holding its text decoder
MODULES = {"llama4": "llama4", "gemma3": "gemma3", "qwen2_vl": "qwen2_vl", "qwen3_vl": "qwen3_vl"}
#: the modeling module's rotary class of the decoder, where the module has several
ROTARY = {
    "llama4": "Llama4TextRotaryEmbedding",
    "qwen2_vl": "Qwen2VLRotaryEmbedding",
    "qwen3_vl": "Qwen3VLTextRotaryEmbedding",
}
ROPE_FREE = ("mpt", "bloom", "t5")


@contextlib.contextmanager
def float64_torch():
    """transformers' RoPE initialisers, run in float64: every float32 they ask for is float64 here."""
    saved = (torch.float, torch.float32, torch.Tensor.float, torch.get_default_dtype())
    torch.float = torch.float64  # type: ignore[misc]
    torch.float32 = torch.float64  # type: ignore[misc]
    torch.Tensor.float = torch.Tensor.double  # type: ignore[method-assign]
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved[:3]  # type: ignore[misc]
        torch.set_default_dtype(saved[3])


def hf_config(name: str):
    """The preset's config as transformers 5.24 builds it, and the decoder's (text) config."""
    cfg = posviz.models.preset(name)
    cfg.pop("_source")
    model_type = cfg.pop("model_type")
    hf = AutoConfig.for_model(model_type, **copy.deepcopy(cfg))
    return model_type, hf, hf.get_text_config()


def rotary(model_type: str, text):
    """The decoder's rotary embedding module, built from its config as the model builds it."""
    family = MODULES.get(model_type, model_type)
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    name = ROTARY.get(model_type) or next(n for n in dir(module) if n.endswith("RotaryEmbedding") and "Vision" not in n)
    return getattr(module, name)(text)


def buffers(model_type: str, module, layer_type: str | None):
    """``(inv_freq, attention_scaling)`` of the module for a layer of ``layer_type`` (float64 numpy)."""
    if model_type == "gptj":  # a sin | cos table: the angles at position 1 are the frequencies
        sincos = module.embed_positions[1].double()
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2)
        return torch.atan2(sin, cos).numpy(), 1.0
    if hasattr(module, "layer_types"):
        return (
            getattr(module, f"{layer_type}_inv_freq").double().numpy(),
            float(getattr(module, f"{layer_type}_attention_scaling")),
        )
    return module.inv_freq.double().numpy(), float(module.attention_scaling)


def expected_layers(model_type: str, text) -> list[dict]:
    """Each layer's kind, attention and window, from the attributes the model's decoder layers read."""
    n = text.num_hidden_layers
    types = getattr(text, "layer_types", None)
    out = []
    for i in range(n):
        t = types[i] if types is not None else None
        kind, attention, window = "rope", "full", None
        if model_type in ("mpt", "bloom"):
            kind = "alibi"  # MptModel and BloomModel add ALiBi in every block
        elif model_type == "t5":
            kind = "relative_bias"  # block 0 learns the bias, every block adds it (position_bias is passed on)
        elif model_type == "llama4":
            kind = "rope" if text.no_rope_layers[i] else "nope"  # Llama4TextAttention.use_rope
            if t == "chunked_attention":
                attention, window = "chunked", text.attention_chunk_size
        elif model_type == "smollm3":
            kind = "rope" if text.no_rope_layers[i] else "nope"  # SmolLM3Attention.use_rope
            if text.use_sliding_window and t == "sliding_attention":
                attention, window = "sliding", text.sliding_window
        elif model_type == "cohere2":
            # Cohere2Attention: sliding_window set on sliding layers only, and RoPE applied only where it is set
            if t == "sliding_attention":
                attention, window = "sliding", text.sliding_window
            else:
                kind = "nope"
        elif model_type == "qwen3_next":
            if t == "linear_attention":  # Qwen3NextDecoderLayer: a Gated DeltaNet instead of attention
                kind, attention = "none", "linear"
        elif model_type == "modernbert":
            if t == "sliding_attention":  # ModernBertAttention: sliding_window + 1 on each side, local_attention wide
                attention, window = "sliding", text.local_attention
                assert text.local_attention == 2 * text.sliding_window
        elif model_type in ("mistral", "phi3", "ministral3"):
            if text.sliding_window is not None:  # the whole model's mask is a sliding window
                attention, window = "sliding", text.sliding_window
        elif t == "sliding_attention" and text.sliding_window is not None:
            attention, window = "sliding", text.sliding_window
        out.append({"kind": kind, "attention": attention, "window": window, "layer_type": t})
    return out


PRESETS = list(posviz.models.PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_every_layer_matches_transformers(name):
    model_type, hf, text = hf_config(name)
    got = posviz.model_positions(posviz.models.preset(name))
    assert got.model_type == model_type
    expected = expected_layers(model_type, text)
    assert got.num_layers == len(expected) == text.num_hidden_layers
    assert [x.index for x in got.layers] == list(range(len(expected)))
    for layer, want in zip(got.layers, expected, strict=True):
        assert (layer.kind, layer.attention, layer.window) == (want["kind"], want["attention"], want["window"]), (
            layer.index
        )
    if model_type in ROPE_FREE:
        return
    with float64_torch():
        module = rotary(model_type, text)
    module32 = rotary(model_type, text)
    for layer in got.layers:
        if layer.kind != "rope":
            assert layer.inv_freq is None
            continue
        inv, scaling = buffers(model_type, module, layer.layer_type)
        assert inv.dtype == np.float64
        np.testing.assert_allclose(layer.inv_freq, inv, rtol=RTOL, atol=0, err_msg=f"layer {layer.index}")
        inv32, scaling32 = buffers(model_type, module32, layer.layer_type)
        np.testing.assert_allclose(layer.inv_freq, inv32, rtol=RTOL_F32, atol=0)
        assert layer.attention_factor == pytest.approx(scaling, rel=RTOL)
        assert layer.rotary_dim == 2 * inv.size
        assert not layer.inv_freq.flags.writeable


#: head_dim as the attention module sizes a query/key head (``XAttention.head_dim`` or the config's)
def hf_head_dim(model_type: str, text, index: int) -> int:
    if model_type == "deepseek_v3":
        return text.qk_head_dim
    if model_type == "gptj":
        return text.hidden_size // text.num_attention_heads
    layer = text.per_layer_config[index]  # Gemma 4: its global layers have heads of global_head_dim
    return getattr(layer, "head_dim", None) or layer.hidden_size // layer.num_attention_heads


@pytest.mark.parametrize("name", [n for n in PRESETS if hf_config(n)[0] not in ROPE_FREE])
def test_head_sizes_rope_types_and_sections(name):
    model_type, hf, text = hf_config(name)
    got = posviz.model_positions(posviz.models.preset(name))
    module = rotary(model_type, text)
    for layer in got.layers:
        if layer.kind != "rope":
            continue
        assert layer.head_dim == hf_head_dim(model_type, text, layer.index)
        assert layer.rotary_dim <= layer.head_dim
        if model_type == "gptj":
            assert layer.rotary_dim == text.rotary_dim
            continue
        params = text.rope_parameters
        if layer.layer_type in params and isinstance(params[layer.layer_type], dict):
            params = params[layer.layer_type]
        assert layer.rope_type == params["rope_type"]
        assert layer.rope_theta == float(params["rope_theta"])
        if hasattr(module, "mrope_section"):
            assert layer.mrope_section == tuple(module.mrope_section)
        else:
            assert layer.mrope_section is None


def test_deepseek_softmax_scale_is_the_models():
    """DeepSeek-V3 multiplies its softmax scale by mscale^2 (``yarn_apply_mscale``)."""
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import yarn_apply_mscale

    _, _, text = hf_config("deepseek_v3")
    got = posviz.model_positions(posviz.models.preset("deepseek_v3"))
    want = yarn_apply_mscale(text.rope_parameters, 1.0)
    assert want > 1.3  # 0.1 ln 40 + 1 = 1.37, squared 1.87: a real change, not a no-op
    assert all(layer.softmax_scale == pytest.approx(want, rel=RTOL) for layer in got.layers)


def test_longrope_long_frequencies_are_the_models_past_the_original_context():
    _, _, text = hf_config("phi3_5_mini")
    got = posviz.model_positions(posviz.models.preset("phi3_5_mini"))
    original = text.rope_parameters["original_max_position_embeddings"]
    assert got.original_max_position_embeddings == original == 4096
    with float64_torch():
        long, _ = ROPE_INIT_FUNCTIONS["longrope"](text, "cpu", seq_len=original + 1)
        short, _ = ROPE_INIT_FUNCTIONS["longrope"](text, "cpu", seq_len=original)
    np.testing.assert_allclose(got.layers[0].long_inv_freq, long.numpy(), rtol=RTOL)
    np.testing.assert_allclose(got.layers[0].inv_freq, short.numpy(), rtol=RTOL)
    assert not np.allclose(long.numpy(), short.numpy())


def test_llama4_temperature_tuning_is_the_attention_modules():
    """The query scale of Llama 4's NoPE layers, against ``Llama4TextAttention.forward``'s formula on the model's
    own config values, at positions either side of floor_scale."""
    _, _, text = hf_config("llama4_scout")
    got = posviz.model_positions(posviz.models.preset("llama4_scout"))
    nope = [x for x in got.layers if x.kind == "nope"]
    assert len(nope) == 12 and all(x.temperature_tuning is not None for x in nope)
    assert all(x.temperature_tuning is None for x in got.layers if x.kind == "rope")
    positions_ = torch.arange(0, 40000, 97, dtype=torch.float64)
    want = torch.log1p(torch.floor((positions_ + 1.0) / text.floor_scale)) * text.attn_scale + 1.0
    np.testing.assert_allclose(nope[0].temperature_tuning.scale(positions_.numpy()), want.numpy(), rtol=RTOL)


def test_summary_counts_the_layers_of_each_kind():
    got = posviz.model_positions(posviz.models.preset("llama4_scout"))
    groups = got.summary()
    assert [(g.count, g.layer.kind, g.layer.attention, g.layer.window) for g in groups] == [
        (36, "rope", "chunked", 8192),
        (12, "nope", "full", None),
    ]
    assert groups[1].indices == tuple(range(3, 48, 4))
    assert got.counts() == {"rope": 36, "nope": 12}


# ------------------------------------------------------------------------------------------------------------------
# Configs transformers reads its own way
# ------------------------------------------------------------------------------------------------------------------

SMALL = {"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 6, "max_position_embeddings": 4096}
VARIANTS = {
    "legacy rope_scaling wins over rope_parameters": (
        "llama",
        {
            **SMALL,
            "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 100.0},
            "rope_scaling": {"type": "linear", "factor": 4.0},
        },
    ),
    "phi3 top-level original length overrides the dict's": (
        "phi3",
        {
            **SMALL,
            "original_max_position_embeddings": 1024,
            "rope_scaling": {
                "type": "yarn",
                "short_factor": [1.0] * 32,
                "long_factor": [2.0] * 32,
                "original_max_position_embeddings": 2048,
            },
        },
    ),
    "gemma3 local base and global linear scaling": (
        "gemma3_text",
        {
            **SMALL,
            "head_dim": 64,
            "rope_theta": 50000.0,
            "rope_local_base_freq": 500.0,
            "rope_scaling": {"rope_type": "linear", "factor": 4.0},
            "sliding_window_pattern": 3,
        },
    ),
    "gemma3 nested rope_parameters": (
        "gemma3_text",
        {
            **SMALL,
            "head_dim": 64,
            "rope_parameters": {
                "full_attention": {"rope_type": "yarn", "factor": 8.0, "rope_theta": 1e6},
                "sliding_attention": {"rope_type": "default", "rope_theta": 1e4},
            },
        },
    ),
    "gemma3 with a flat rope_parameters, which it does not read": (
        "gemma3_text",
        {**SMALL, "head_dim": 64, "rope_parameters": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}},
    ),
    "qwen3_next partial rotary and layer_types": (
        "qwen3_next",
        {
            **SMALL,
            "head_dim": 64,
            "partial_rotary_factor": 0.5,
            "layer_types": ["linear_attention", "full_attention"] * 3,
        },
    ),
    "smollm3 no_rope_layer_interval": ("smollm3", {**SMALL, "no_rope_layer_interval": 3}),
    "llama4 explicit no_rope_layers": (
        "llama4_text",
        {**SMALL, "head_dim": 64, "no_rope_layers": [1, 0, 1, 1, 0, 1], "attn_temperature_tuning": False},
    ),
    "gpt_neox rotary_pct and rotary_emb_base with dynamic NTK": (
        "gpt_neox",
        {**SMALL, "rotary_pct": 0.5, "rotary_emb_base": 500.0, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
    ),
    "olmo3 yarn on the full-attention layers only": (
        "olmo3",
        {**SMALL, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}},
    ),
    "modernbert rope_scaling goes to both kinds of layers": (
        "modernbert",
        {**SMALL, "global_rope_theta": 8e4, "rope_scaling": {"rope_type": "linear", "factor": 2.0}},
    ),
    "proportional rope type": (
        "llama",
        {**SMALL, "rope_parameters": {"rope_type": "proportional", "rope_theta": 1e4, "partial_rotary_factor": 0.25}},
    ),
    "cohere2 reads head_dim": ("cohere2", {**SMALL, "head_dim": 32}),
    "a top-level original length replaces the rope dict's": (
        "llama",
        {
            **SMALL,
            "original_max_position_embeddings": 2048,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 512},
        },
    ),
    "a top-level original length on qwen2_vl": (
        "qwen2_vl_text",
        {
            **SMALL,
            "original_max_position_embeddings": 2048,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "mrope_section": [8, 12, 12]},
        },
    ),
    "ministral3 with its class's default yarn": ("ministral3", {**SMALL, "head_dim": 64, "sliding_window": 512}),
    "deepseek yarn without mscale_all_dim": (
        "deepseek_v3",
        {
            **SMALL,
            "qk_rope_head_dim": 32,
            "qk_nope_head_dim": 32,
            "rope_interleave": False,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024},
        },
    ),
}


@pytest.mark.parametrize("case", list(VARIANTS))
def test_variants_match_transformers(case):
    model_type, cfg = VARIANTS[case]
    hf = AutoConfig.for_model(model_type, **copy.deepcopy(cfg))
    got = posviz.model_positions({"model_type": model_type, **cfg})
    expected = expected_layers(model_type.removesuffix("_text"), hf)
    assert [(x.kind, x.attention, x.window) for x in got.layers] == [
        (e["kind"], e["attention"], e["window"]) for e in expected
    ]
    with float64_torch():
        module = rotary(model_type.removesuffix("_text"), hf)
    for layer in got.layers:
        if layer.kind == "rope":
            inv, scaling = buffers(model_type, module, layer.layer_type)
            np.testing.assert_allclose(layer.inv_freq, inv, rtol=RTOL, atol=0)
            assert layer.attention_factor == pytest.approx(scaling, rel=RTOL)


def test_the_config_can_be_text_a_file_or_a_folder(tmp_path):
    cfg = posviz.models.preset("gemma3_4b")
    text = json.dumps(cfg)
    (tmp_path / "config.json").write_text(text)
    from_dict = posviz.model_positions(cfg)
    for source in (text, str(tmp_path / "config.json"), tmp_path, str(tmp_path)):
        got = posviz.model_positions(source)
        assert [x.group_key() for x in got.layers] == [x.group_key() for x in from_dict.layers]


# ------------------------------------------------------------------------------------------------------------------
# Ignored keys: listed, and transformers' frequencies are the same without them
# ------------------------------------------------------------------------------------------------------------------

IGNORED = {
    "a rope key llama's rope type does not know": (
        "llama",
        {"rope_parameters": {"rope_type": "linear", "factor": 2.0, "beta_fast": 8}},
        ("rope_parameters.beta_fast", "unrecognised"),
    ),
    "sliding_window on llama": ("llama", {"sliding_window": 64}, ("sliding_window", "unread")),
    "rope_theta on gpt_neox (it reads rotary_emb_base)": ("gpt_neox", {"rope_theta": 5.0e5}, ("rope_theta", "unread")),
    "a top-level rope_theta under a rope dict that has one": (
        "llama",
        {"rope_theta": 5.0, "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4}},
        ("rope_theta", "overridden"),
    ),
    "no_rope_layers on llama": ("llama", {"no_rope_layers": [0, 1, 1, 1, 1, 1]}, ("no_rope_layers", "unread")),
    "rope_local_base_freq on gemma2": ("gemma2", {"rope_local_base_freq": 100.0}, ("rope_local_base_freq", "unread")),
}


@pytest.mark.parametrize("case", list(IGNORED))
def test_ignored_keys_change_nothing_in_transformers(case):
    model_type, extra, item = IGNORED[case]
    got = posviz.model_positions({"model_type": model_type, **SMALL, **extra})
    assert item in got.ignored
    with_key = rotary(model_type, AutoConfig.for_model(model_type, **SMALL, **copy.deepcopy(extra)))
    reduced = {k: v for k, v in extra.items() if k != item[0].split(".")[0]}
    if item[0].startswith("rope_parameters."):
        reduced = {"rope_parameters": {"rope_type": "linear", "factor": 2.0}}
    without = rotary(model_type, AutoConfig.for_model(model_type, **SMALL, **reduced))
    assert torch.equal(with_key.inv_freq, without.inv_freq)
    clean = posviz.model_positions({"model_type": model_type, **SMALL, **reduced})
    assert item not in clean.ignored


def test_mpt_ignores_its_alibi_switch():
    """transformers' MptModel adds ALiBi whatever attn_config.alibi says: a tiny model's blocks receive it."""
    from transformers import MptConfig, MptModel

    config = MptConfig(d_model=16, n_heads=2, n_layers=2, max_seq_len=8, vocab_size=10, attn_config={"alibi": False})
    model = MptModel(config)
    seen = []
    hooks = [
        b.register_forward_pre_hook(lambda m, a, k: seen.append(k.get("position_bias")), with_kwargs=True)
        for b in model.blocks
    ]
    model(torch.tensor([[1, 2, 3]]))
    for h in hooks:
        h.remove()
    assert len(seen) == 2 and all(bias is not None and bias.abs().sum() > 0 for bias in seen)
    got = posviz.model_positions(
        {"model_type": "mpt", "d_model": 16, "n_heads": 2, "n_layers": 2, "attn_config": {"alibi": False}}
    )
    assert [x.kind for x in got.layers] == ["alibi", "alibi"]
    assert ("attn_config.alibi", "unread") in got.ignored


# ------------------------------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------------------------------

#: configs transformers refuses (its config class or its rotary module raises): posviz refuses them too
REFUSED_BY_BOTH = {
    "unknown rope type": ("llama", {**SMALL, "rope_parameters": {"rope_type": "stretchy", "factor": 2.0}}),
    "yarn without its factor": ("llama", {**SMALL, "rope_scaling": {"rope_type": "yarn"}}),
    "llama3 without its band factors": ("llama", {**SMALL, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}),
    "layer_types of the wrong length": ("gemma2", {**SMALL, "layer_types": ["full_attention"] * 5}),
    "an unknown layer type": ("gemma2", {**SMALL, "layer_types": ["mystery_attention"] * 6}),
    "an odd fully rotated head": ("llama", {**SMALL, "head_dim": 63}),
    "phi3 factors of the wrong length": (
        "phi3",
        {**SMALL, "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 3, "long_factor": [1.0] * 3}},
    ),
    "phi3 with a rope type it does not read": ("phi3", {**SMALL, "rope_scaling": {"type": "linear", "factor": 2.0}}),
    "hidden size not divisible by the heads": ("llama", {**SMALL, "hidden_size": 250}),
    "Llama 4 Scout's published temperature switch, 4": ("llama4_text", {**SMALL, "attn_temperature_tuning": 4}),
}


@pytest.mark.parametrize("case", list(REFUSED_BY_BOTH))
def test_what_transformers_refuses_is_refused(case):
    model_type, cfg = REFUSED_BY_BOTH[case]
    with pytest.raises(Exception):  # noqa: B017 - transformers raises KeyError, ValueError or its own errors
        hf = AutoConfig.for_model(model_type, **copy.deepcopy(cfg))
        rotary(model_type, hf)
    with pytest.raises(ValueError) as err:
        posviz.model_positions({"model_type": model_type, **cfg})
    assert len(str(err.value).split()) >= 6  # a sentence, not a bare key name


BAD_INPUT = {
    "not JSON": ("{model_type: llama", "not valid JSON"),
    "a JSON list": ("[1, 2]", "one JSON object"),
    "no model_type": ({"hidden_size": 64}, "model_type"),
    "an unknown model_type": ({"model_type": "gpt5"}, "does not read model_type"),
    "rope_type and type contradict": (
        {"model_type": "llama", **SMALL, "rope_scaling": {"rope_type": "linear", "type": "dynamic", "factor": 2.0}},
        "contradict",
    ),
    "mrope_section off by one": (
        {"model_type": "qwen2_vl", **SMALL, "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 13]}},
        "add up to 32",
    ),
    "a 10 MB config": ('{"model_type": "llama", "pad": "' + "x" * 10_000_000 + '"}', "at most"),
    "a path that does not exist": ("/nonexistent/model", "path"),
    "no_rope_layers too short": ({"model_type": "smollm3", **SMALL, "no_rope_layers": [1, 0]}, "one per layer"),
    "a negative window": ({"model_type": "gemma2", **SMALL, "sliding_window": -4}, "sliding_window"),
    "a text rope_theta": ({"model_type": "llama", **SMALL, "rope_theta": "big"}, "rope_theta"),
    "deepseek head_dim against qk_rope_head_dim": (
        {"model_type": "deepseek_v3", **SMALL, "qk_rope_head_dim": 32, "head_dim": 64},
        "contradict",
    ),
    "a rope dict whose rope_theta is null": (
        {"model_type": "cohere2", **SMALL, "rope_parameters": {"rope_theta": None}},
        "rope_theta must be a finite number",
    ),
    "a null partial_rotary_factor": (
        {"model_type": "gpt_neox", **SMALL, "rope_parameters": {"partial_rotary_factor": None}},
        "partial_rotary_factor must be a finite number",
    ),
    "a million layers": ({"model_type": "llama", **SMALL, "num_hidden_layers": 10**6}, "num_hidden_layers"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_a_sentence(case):
    config, words = BAD_INPUT[case]
    with pytest.raises(ValueError, match=words):
        posviz.model_positions(config)


def test_the_size_limit_is_documented_and_generous():
    assert posviz.models.MAX_CONFIG_BYTES == positions.MAX_CONFIG_BYTES
    largest = max(len(posviz.models.preset_text(n).encode()) for n in PRESETS)
    assert largest * 10 < posviz.models.MAX_CONFIG_BYTES
    assert math.isfinite(largest)


# ------------------------------------------------------------------------------------------------------------------
# Pair layout: which dimension each dimension turns with, in the model's own rotation
# ------------------------------------------------------------------------------------------------------------------


def hf_rotated_basis(model_type: str, text, module, layer) -> np.ndarray:
    """Row a: the model's rotation at position 1 applied to the basis vector e_a of one query head (one "head" per
    basis vector), as the model's attention calls it. Covers the rotated slice (DeepSeek-V3: qk_rope_head_dim)."""
    family = MODULES.get(model_type, model_type)
    modeling = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    size = layer.rotary_dim if model_type == "deepseek_v3" else layer.head_dim
    basis = torch.eye(size, dtype=torch.float64)
    x = torch.zeros(1, dtype=torch.float64)
    position = torch.tensor([[1]])
    if model_type == "gptj":
        sin, cos = module(x, position)
        rot = layer.rotary_dim
        q = basis.view(1, 1, size, size)  # (batch, seq, heads, dim)
        turned = modeling.apply_rotary_pos_emb(q[..., :rot], sin, cos)
        return torch.cat([turned, q[..., rot:]], dim=-1)[0, 0].numpy()
    if model_type == "llama4":
        freqs = module(x, position)
        q = basis.view(1, 1, size, size)
        return modeling.apply_rotary_emb(q, q, freqs)[0][0, 0].numpy()
    if model_type in ("qwen2_vl", "qwen3_vl"):
        position = position.view(1, 1, 1).expand(3, 1, 1)
    args = (layer.layer_type,) if hasattr(module, "layer_types") else ()
    cos, sin = module(x, position, *args)
    q = basis.view(1, size, 1, size)  # (batch, heads, seq, dim)
    if "q" not in inspect.signature(modeling.apply_rotary_pos_emb).parameters:  # Gemma 4: one tensor at a time
        return modeling.apply_rotary_pos_emb(q, cos, sin)[0, :, 0].numpy()
    if model_type == "deepseek_v3" and text.rope_interleave:
        return modeling.apply_rotary_pos_emb_interleave(q, q, cos, sin)[0][0, :, 0].numpy()
    return modeling.apply_rotary_pos_emb(q, q, cos, sin)[0][0, :, 0].numpy()


def partners(layer) -> np.ndarray:
    """The dimension each dimension is paired with under posviz's layout (itself if it does not turn)."""
    dims = np.arange(layer.rotary_dim if layer.head_dim is None else max(layer.head_dim, layer.rotary_dim))
    r = layer.rotary_dim
    if layer.layout == "interleaved":
        paired = dims ^ 1
    else:
        paired = np.where(dims < r // 2, dims + r // 2, dims - r // 2)
    return np.where(dims < r, paired, dims)


@pytest.mark.parametrize("name", [n for n in PRESETS if hf_config(n)[0] not in ROPE_FREE])
def test_pair_layout_is_the_models(name):
    model_type, _, text = hf_config(name)
    got = posviz.model_positions(posviz.models.preset(name))
    with float64_torch():
        module = rotary(model_type, text)
        for group in got.summary():
            layer = group.layer
            if layer.kind != "rope":
                continue
            turned = np.abs(hf_rotated_basis(model_type, text, module, layer))
            want = partners(layer)[: turned.shape[0]]
            if layer.layout == "half":  # a pair at frequency 0 (the proportional type's) does not turn
                still = np.flatnonzero(layer.inv_freq == 0)
                for dim in (still, still + layer.rotary_dim // 2):
                    want[dim] = dim
            # dimensions a and b are paired when their images share an output dimension (DeepSeek's interleaved
            # rotation writes its output half-split: the same permutation for queries and keys, scores unchanged)
            shared = (turned @ turned.T) * (1 - np.eye(turned.shape[0]))
            moved = shared.max(axis=1) > 0
            found = np.where(moved, shared.argmax(axis=1), np.arange(turned.shape[0]))
            np.testing.assert_array_equal(found, want, err_msg=f"{name}, layer type {layer.layer_type}")


def test_a_multimodal_configs_own_position_keys_do_not_reach_its_decoder():
    cfg = posviz.models.preset("gemma3_4b")
    cfg.pop("_source")
    cfg["rope_theta"] = 123.0
    cfg["text_config"]["no_rope_layers"] = [0] * 34
    got = posviz.model_positions(cfg)
    assert ("rope_theta", "unread") in got.ignored
    assert ("text_config.no_rope_layers", "unread") in got.ignored
    text = AutoConfig.for_model("gemma3", **copy.deepcopy({k: v for k, v in cfg.items() if k != "model_type"}))
    text = text.get_text_config()
    assert text.rope_parameters["full_attention"]["rope_theta"] == 1_000_000.0
    assert {x.rope_theta for x in got.layers} == {10_000.0, 1_000_000.0}


@pytest.mark.parametrize("name", PRESETS)
def test_the_length_is_the_config_classes(name):
    model_type, _, text = hf_config(name)
    got = posviz.model_positions(posviz.models.preset(name))
    want = getattr(text, "max_position_embeddings", None)
    if model_type == "mpt":
        want = text.max_seq_len
    assert got.max_position_embeddings == want


def test_ministral3_query_scale_is_the_models():
    """Ministral 3's llama_4_scaling_beta: every layer's query scale against ``get_llama_4_attn_scale``."""
    from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale

    hf = AutoConfig.for_model("ministral3", **SMALL)
    got = posviz.model_positions({"model_type": "ministral3", **SMALL})
    positions_ = torch.arange(0, 70000, 61, dtype=torch.float64).view(1, -1)
    params = hf.rope_parameters
    want = get_llama_4_attn_scale(
        positions_, params["llama_4_scaling_beta"], params["original_max_position_embeddings"]
    )
    for layer in got.layers:
        np.testing.assert_allclose(layer.temperature_tuning.scale(positions_[0].numpy()), want.flatten(), rtol=RTOL)
    assert ("rope_parameters.max_position_embeddings", "unrecognised") not in got.ignored


def test_a_mistral3_wrapper_reads_its_ministral3_decoder():
    got = posviz.model_positions({"model_type": "mistral3", "text_config": {"model_type": "ministral3", **SMALL}})
    assert got.text_model_type == "ministral3"
    assert all(x.temperature_tuning is not None and x.rope_type == "yarn" for x in got.layers)


def test_a_flat_rope_dict_on_gemma3_is_listed_as_ignored():
    got = posviz.model_positions(
        {"model_type": "gemma3_text", **SMALL, "rope_parameters": {"rope_type": "linear", "factor": 8.0}}
    )
    assert {("rope_parameters.rope_type", "unread"), ("rope_parameters.factor", "unread")} <= set(got.ignored)
    assert {x.rope_type for x in got.layers} == {"default"}


CAUSAL = {
    "llama": ("llama", {}, "LlamaAttention"),
    "gemma2 bidirectional": ("gemma2", {"use_bidirectional_attention": True}, "Gemma2Attention"),
    "gemma2": ("gemma2", {}, "Gemma2Attention"),
    "gemma3 bidirectional": ("gemma3_text", {"use_bidirectional_attention": True}, "Gemma3Attention"),
    "modernbert": ("modernbert", {}, "ModernBertAttention"),
}


@pytest.mark.parametrize("case", list(CAUSAL))
def test_causal_is_the_attention_modules(case):
    """Whether a token sees only earlier ones, against ``is_causal`` of the model's attention module (a small
    config, so that building one attention layer is cheap)."""
    model_type, extra, name = CAUSAL[case]
    hf = AutoConfig.for_model(model_type, **SMALL, **extra)
    family = model_type.removesuffix("_text")
    module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
    got = posviz.model_positions({"model_type": model_type, **SMALL, **extra})
    for layer in got.layers[:3]:
        attention = getattr(module, name)(hf, layer.index)
        assert layer.causal == attention.is_causal


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=8,
)
FUZZED_KEYS = sorted(positions.POSITION_KEYS) + ["hidden_size", "num_attention_heads", "num_hidden_layers"]
rope_dicts = st.fixed_dictionaries(
    {},
    optional={
        "rope_type": st.sampled_from(["default", "linear", "dynamic", "yarn", "longrope", "llama3", "mrope", "x"]),
        "factor": json_values,
        "rope_theta": json_values,
        "original_max_position_embeddings": json_values,
        "low_freq_factor": json_values,
        "high_freq_factor": json_values,
        "short_factor": json_values,
        "long_factor": json_values,
        "mrope_section": json_values,
        "partial_rotary_factor": json_values,
    },
)


@pytest.mark.slow
@settings(max_examples=400)
@given(
    st.sampled_from(posviz.models.MODEL_TYPES),
    st.dictionaries(st.sampled_from(FUZZED_KEYS), json_values, max_size=4),
    st.one_of(st.none(), rope_dicts),
)
def test_any_config_gives_positions_or_a_value_error(model_type, extra, rope):
    """Whatever the values, model_positions returns or raises ValueError with a sentence of its own: never another
    exception, and never one caught only by its last-resort safety net."""
    config = {"model_type": model_type, **SMALL, **extra}
    if rope is not None:
        config["rope_parameters"] = rope
    try:
        got = posviz.model_positions(config)
    except ValueError as err:
        assert "cannot read this config (" not in str(err)
        return
    assert all(x.kind in positions.KINDS and x.attention in positions.ATTENTIONS for x in got.layers)
    for layer in got.layers:
        if layer.kind == "rope":
            assert np.all(np.isfinite(layer.inv_freq)) and math.isfinite(layer.attention_factor)


def test_learned_and_sinusoidal_tables_are_the_models():
    """GPT-2 adds a learned table of n_positions vectors, Marian's encoder a sinusoidal one: tiny models of each."""
    from transformers import GPT2Config, GPT2Model, MarianConfig, MarianModel
    from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

    gpt2 = GPT2Model(GPT2Config(n_embd=8, n_head=2, n_layer=3, n_positions=64, vocab_size=10))
    got = posviz.model_positions({"model_type": "gpt2", "n_embd": 8, "n_head": 2, "n_layer": 3, "n_positions": 64})
    assert [x.kind for x in got.layers] == ["learned"] * len(gpt2.h)
    assert got.max_position_embeddings == gpt2.wpe.num_embeddings == 64
    small = {"d_model": 8, "encoder_layers": 2, "encoder_attention_heads": 2, "max_position_embeddings": 32}
    marian = MarianModel(
        MarianConfig(**small, decoder_layers=1, decoder_attention_heads=2, vocab_size=10, pad_token_id=0)
    )
    got = posviz.model_positions({"model_type": "marian", **small})
    assert isinstance(marian.encoder.embed_positions, MarianSinusoidalPositionalEmbedding)
    assert [(x.kind, x.causal) for x in got.layers] == [("sinusoidal", False)] * len(marian.encoder.layers)
    assert got.max_position_embeddings == marian.encoder.embed_positions.num_embeddings
