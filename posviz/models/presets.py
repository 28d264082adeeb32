"""Published configs of today's model families, shipped with posviz (``presets/<name>.json``; nothing is
downloaded). Each holds only the fields that decide positions, copied from the model's config.json on the Hugging
Face Hub (and its model card, for Qwen2.5's YaRN block); ``"_source"`` names the model id. Gemma 4 31B's comes from
its config as transformers 5.7 prints it (a public report; the Hub file itself could not be opened here), and
``gemma4`` is transformers 5.24's own ``Gemma4Config`` defaults. The RoPE page's config
box lists the rotating ones (``posviz.models.rope_configs.PRESETS``)."""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources

#: Preset names, in the order a page lists them, and the model each one is.
PRESETS: dict[str, str] = {
    "llama2_7b": "Llama 2 7B",
    "llama3_1_8b": "Llama 3.1 8B",
    "llama3_2_1b": "Llama 3.2 1B",
    "llama4_scout": "Llama 4 Scout 17B-16E",
    "qwen2_7b": "Qwen2 7B Instruct",
    "qwen2_5_7b_yarn": "Qwen2.5 7B Instruct + YaRN ×4",
    "qwen3_8b": "Qwen3 8B",
    "qwen3_next_80b": "Qwen3-Next 80B-A3B",
    "qwen2_vl_7b": "Qwen2-VL 7B Instruct",
    "qwen3_vl_8b": "Qwen3-VL 8B Instruct",
    "gemma2_9b": "Gemma 2 9B",
    "gemma3_4b": "Gemma 3 4B",
    "gemma4_31b": "Gemma 4 31B",
    "gemma4": "Gemma 4 (transformers' Gemma4Config defaults)",
    "deepseek_v3": "DeepSeek-V3",
    "gpt_oss_20b": "gpt-oss-20b",
    "phi3_5_mini": "Phi-3.5 mini (LongRoPE)",
    "olmo3_7b": "OLMo 3 7B",
    "smollm3_3b": "SmolLM3 3B",
    "command_r7b": "Command R7B (Cohere2)",
    "modernbert_base": "ModernBERT base",
    "mistral_7b": "Mistral 7B v0.1",
    "pythia_410m": "Pythia 410M",
    "gptj_6b": "GPT-J 6B",
    "mpt_7b": "MPT 7B",
    "bloom_560m": "BLOOM 560M",
    "t5_base": "T5 base",
}


@functools.cache
def _text(name: str) -> str:
    return resources.files(__package__).joinpath("presets", f"{name}.json").read_text(encoding="utf-8")


def preset(name: str) -> dict:
    """The preset ``name`` (one of PRESETS) as a dict, a fresh copy each time."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; the presets are {', '.join(PRESETS)}")
    return copy.deepcopy(json.loads(_text(name)))


def preset_text(name: str) -> str:
    """The preset ``name`` as config.json text."""
    preset(name)
    return _text(name)
