"""Model types read through transformers' own config class (``posviz.models.by_class``), against transformers.

An explicit ``null`` window is checked against the config class (which keeps it None) and against the attention
modules transformers builds from it (on the meta device): the layers attend to the whole context. The models the
hand-written families do not cover are checked against their own rotary module's ``inv_freq`` here; the test over
every registered model type is ``test_every_model_type``.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import CONFIG_MAPPING, AutoModel
from transformers.models.auto import configuration_auto

import posviz
from posviz.models import by_class

from . import _oracles  # noqa: F401  (quiets the transformers config warnings)

#: Float32 buffers against posviz's float64: a few ulps of float32.
RTOL_F32 = 4e-7


def tiny(model_type: str, **keys) -> dict:
    """A small default config of ``model_type`` as config.json holds it, with ``keys`` on top."""
    raw = json.loads(CONFIG_MAPPING[model_type]().to_json_string())
    for key in ("layer_types", "no_rope_layers"):
        raw.pop(key, None)  # the class derives them for the new depth
    raw.update(num_hidden_layers=raw.get("num_hidden_layers") and 8, vocab_size=64, **keys)
    return raw


def attention_windows(raw: dict) -> list:
    """The window each attention module of the model transformers builds from ``raw`` (meta device) attends
    within: the module's ``sliding_window`` where it keeps one, else the config's (the mask of Mistral-like models
    is built from ``config.sliding_window`` for every layer)."""
    config = CONFIG_MAPPING[raw["model_type"]].from_dict(dict(raw))
    for key in ("intermediate_size", "moe_intermediate_size"):
        if getattr(config, key, None):
            setattr(config, key, 8)
    for key in ("num_local_experts", "num_experts"):
        if getattr(config, key, None):
            setattr(config, key, 2)
    with torch.device("meta"):
        model = AutoModel.from_config(config)
    modules = [m for name, m in model.named_modules() if name.endswith(("self_attn", "attention")) and m is not model]
    assert modules, "no attention modules found"
    return [getattr(m, "sliding_window", getattr(model.config, "sliding_window", None)) for m in modules]


NULL_WINDOWS = [
    ("mistral", {"sliding_window": None}),
    ("mixtral", {"sliding_window": None}),
    ("qwen2", {"sliding_window": None, "use_sliding_window": True}),
    ("gemma2", {"sliding_window": None}),
    ("gemma3_text", {"sliding_window": None}),
    ("cohere2", {"sliding_window": None}),
    ("olmo3", {"sliding_window": None}),
    ("gpt_oss", {"sliding_window": None}),
]


@pytest.mark.parametrize(("model_type", "keys"), NULL_WINDOWS, ids=[t for t, _ in NULL_WINDOWS])
def test_an_explicit_null_window_is_full_attention(model_type, keys):
    raw = tiny(model_type, **keys)
    assert CONFIG_MAPPING[model_type].from_dict(dict(raw)).sliding_window is None  # the class keeps the null
    assert set(attention_windows(raw)) == {None}  # and the model attends fully in every layer
    found = posviz.model_positions(raw)
    assert {(layer.attention, layer.window) for layer in found.layers} == {("full", None)}
    without = {k: v for k, v in raw.items() if k != "sliding_window"}
    default_window = CONFIG_MAPPING[model_type]().sliding_window
    if default_window is not None and model_type != "qwen2":  # an absent key is the class default, not a null
        assert any(layer.window == default_window for layer in posviz.model_positions(without).layers)


def test_cohere2_without_a_window_rotates_no_layer():
    """Cohere2's attention rotates only when it has a sliding window (``if self.sliding_window is not None``)."""
    found = posviz.model_positions(tiny("cohere2", sliding_window=None))
    assert found.counts() == {"nope": found.num_layers}


def test_llama4_null_chunk_attends_fully():
    raw = tiny("llama4_text", attention_chunk_size=None)
    assert CONFIG_MAPPING["llama4_text"].from_dict(dict(raw)).attention_chunk_size is None
    found = posviz.model_positions(raw)
    assert {layer.attention for layer in found.layers} == {"full"}


def rotary_module(model_type: str, text):
    """The one text rotary embedding class of ``model_type``'s modeling module, built from ``text``."""
    name = configuration_auto.model_type_to_module_name(model_type)
    module = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    found = [
        cls
        for key, cls in vars(module).items()
        if key.endswith("RotaryEmbedding") and inspect.isclass(cls) and cls.__module__ == module.__name__
        and not any(word in key for word in ("Vision", "Audio", "Visual"))
    ]  # fmt: skip
    assert len(found) == 1, found
    return found[0](config=text)


#: Model types the issue found refused, read now through their config class.
REACHED = (
    "gemma", "gemma4_text", "mixtral", "qwen2_moe", "qwen3_moe", "qwen3_5", "phi", "olmo2", "granite", "starcoder2",
    "falcon", "deepseek_v2", "glm4", "exaone4", "ernie4_5", "lfm2", "qwen2_5_vl",
)  # fmt: skip


@pytest.mark.parametrize("model_type", REACHED)
def test_reached_types_rotate_with_their_models_frequencies(model_type):
    config = CONFIG_MAPPING[model_type]()
    text = config.get_text_config(decoder=True)
    module = rotary_module(model_type, text)
    found = posviz.model_positions(config.to_json_string())
    assert found.rules[0] == "config_class"
    buffers = {
        k: v.double().numpy() for k, v in module.named_buffers() if k.endswith("inv_freq") and "original" not in k
    }
    assert buffers
    for key, expected in buffers.items():
        layer_type = None if key == "inv_freq" else key.removesuffix("_inv_freq")
        layers = [x for x in found.layers if x.kind == "rope" and layer_type in (None, x.layer_type)]
        assert layers, f"no rotating layer for {key}"
        for layer in layers:
            np.testing.assert_allclose(layer.inv_freq, expected, rtol=RTOL_F32, atol=0)


def test_rules_are_named_and_known():
    assert set(by_class.RULE_NAMES) == {f.name for f in by_class.dataclasses.fields(by_class.Rule)}
    found = posviz.model_positions(tiny("cohere"))
    assert found.rules == ("config_class", "interleaved")
    assert {layer.layout for layer in found.layers} == {"interleaved"}


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"model_type": "lama"}, "registers no config class"),
        ({"model_type": "mixtral", "rope_parameters": {"rope_type": "yarn"}}, "factor"),
        ({"model_type": "mixtral", "num_hidden_layers": 2, "layer_types": ["full_attention"] * 3}, "layer"),
        ({"model_type": "bert"}, "rope parameters"),
    ],
)
def test_bad_configs_are_one_sentence(raw, needle):
    with pytest.raises(ValueError) as info:
        posviz.model_positions(raw)
    message = str(info.value)
    assert needle in message and "\n" not in message and "Traceback" not in message


def test_a_folder_without_config_json_is_named(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match="config.json"):
        posviz.model_positions(tmp_path)


def test_transformers_is_imported_only_by_a_read_through_a_config_class():
    """``import posviz`` and reading the families posviz reads itself leave transformers unimported (a page that
    reads no config, or a preset of such a family, never pays its import); a type read by its config class imports
    it."""
    import subprocess
    import sys

    code = (
        "import sys, posviz; from posviz.models import rope_configs; "
        "posviz.model_positions(posviz.models.preset('llama3_1_8b')); rope_configs.parse_config('{\"head_dim\": 64}'); "
        "print('transformers' in sys.modules); posviz.model_positions({'model_type': 'qwen3_moe'}); "
        "print('transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_rule_is_worded_in_both_languages(lang):
    """The Models page names each rule it used: every rule has its sentence in each catalog."""
    catalog = {}
    for path in (Path(__file__).parents[2] / "assets" / "i18n" / lang).glob("*.json"):
        catalog.update(json.loads(path.read_text(encoding="utf-8")))
    missing = [rule for rule in by_class.RULE_NAMES if not catalog.get(f"models.rule.{rule}")]
    assert not missing


def test_every_type_a_rule_names_is_one_transformers_registers():
    """A misspelt model type in a rule would silently apply nowhere."""
    assert set(by_class.RULES) - set(CONFIG_MAPPING.keys()) == set()
    assert set(by_class.NOT_READ) - set(CONFIG_MAPPING.keys()) == set()


def test_key_value_heads_are_the_attention_modules():
    """Gemma 4's global layers build their keys with other heads than its sliding ones (``per_layer_config``):
    each layer's key-value heads are what its attention's k_proj holds (meta device)."""
    config = CONFIG_MAPPING["gemma4_text"](num_hidden_layers=6, num_global_key_value_heads=2, attention_k_eq_v=True)
    found = posviz.model_positions(config.to_json_string())
    with torch.device("meta"):
        model = AutoModel.from_config(config)
    built = [layer.self_attn.k_proj.out_features // layer.self_attn.head_dim for layer in model.layers]
    assert [layer.num_kv_heads for layer in found.layers] == built
    assert len(set(built)) == 2  # the two kinds of layer differ, so the comparison can tell them apart


@pytest.mark.parametrize("switch", ["rope", None])
def test_granitemoehybrid_rotates_only_with_its_switch_on(switch, monkeypatch):
    """GraniteMoeHybrid builds its rotary module only for ``position_embedding_type="rope"``: its attention layers
    are RoPE layers then and NoPE layers otherwise, as transformers' own modules run them (the per-type harness, on
    a default config given attention layers)."""
    from . import _transformers_truth as truth_

    keys = {"num_hidden_layers": 4, "layer_types": ["linear_attention", "full_attention"] * 2}
    monkeypatch.setitem(truth_._REPAIRS, "granitemoehybrid", {**keys, "position_embedding_type": switch})
    t = truth_._compute("granitemoehybrid")
    assert isinstance(t, truth_.TypeTruth), t
    assert [x.kind for x in t.layers] == ["none", "rope" if switch else "nope"] * 2
    got = posviz.model_positions(t.config_json)
    assert truth_.differences(t, got) == []
    assert "rope_switch" in got.rules


@pytest.mark.parametrize("use_mem_rope", [True, False])
def test_zamba2_hybrid_layers_rotate_only_with_mem_rope(use_mem_rope, monkeypatch):
    """Zamba2 builds a rotary module for its shared attention blocks only with ``use_mem_rope``: its hybrid layers
    rotate then, as transformers' own modules run them (the per-type harness)."""
    from . import _transformers_truth as truth_

    monkeypatch.setitem(truth_._REPAIRS, "zamba2", {"use_mem_rope": use_mem_rope})
    t = truth_._compute("zamba2")
    assert isinstance(t, truth_.TypeTruth), t
    hybrid = {x.kind for x in t.layers if x.layer_type == "hybrid"}
    assert hybrid == {"rope" if use_mem_rope else "nope"}
    got = posviz.model_positions(t.config_json)
    assert truth_.differences(t, got) == []


@pytest.mark.parametrize("layers", [None, [0, 2, 5]])
def test_mllama_cross_attention_layers_attend_to_the_image(layers):
    """Mllama's cross-attention layers are the ones transformers builds as such (meta device); posviz names
    them NoPE layers attending "cross", and the others rotate."""
    from transformers import MllamaTextModel

    config = CONFIG_MAPPING["mllama_text_model"](num_hidden_layers=8, cross_attention_layers=layers)
    with torch.device("meta"):
        model = MllamaTextModel._from_config(config)
    built = [i for i, layer in enumerate(model.layers) if "CrossAttention" in type(layer).__name__]
    found = posviz.model_positions(config.to_json_string())
    assert [i for i, layer in enumerate(found.layers) if layer.attention == "cross"] == built
    assert {layer.kind for i, layer in enumerate(found.layers) if i in built} == {"nope"}
    assert {layer.kind for i, layer in enumerate(found.layers) if i not in built} == {"rope"}
    assert built


def test_deepseek_v4_rotates_each_layer_with_its_own_rope_parameters(monkeypatch):
    """DeepSeek-V4's sliding layers rotate with the ``main`` rope parameters and its compressed layers with
    ``compress`` (another base), on the trailing 64 dimensions of each 512-wide head, pairs (2i, 2i + 1), as its own
    modules run them (the per-type harness, on a default config given a layer of each type); the compressed layers'
    entries come one per ``compress_rate`` tokens, as their compressors are built (meta device)."""
    from transformers import DeepseekV4Model

    from . import _transformers_truth as truth_

    kinds = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention", "sliding_attention"]
    monkeypatch.setitem(truth_._REPAIRS, "deepseek_v4", {"num_hidden_layers": 4, "layer_types": kinds})
    t = truth_._compute("deepseek_v4")
    assert isinstance(t, truth_.TypeTruth), t
    got = posviz.model_positions(t.config_json)
    assert truth_.differences(t, got) == []
    assert not np.array_equal(t.layers[0].inv_freq, t.layers[1].inv_freq)  # the two bases differ: a real check
    assert t.layers[1].pairs[0] == (448, 449) and t.layers[1].layout == "interleaved"

    config = CONFIG_MAPPING["deepseek_v4"].from_dict(json.loads(t.config_json))
    with torch.device("meta"):
        model = DeepseekV4Model._from_config(config)
    built = [getattr(layer.self_attn.compressor, "compress_rate", None) for layer in model.layers]
    assert [layer.compress_rate for layer in got.layers] == built
    assert built[0] is None and built[1] != built[2]


@pytest.mark.parametrize("model_type", ["gemma3n_text", "gemma4_text"])
def test_kv_shared_layers_name_the_layer_they_reuse(model_type):
    """A layer transformers builds without keys of its own (``is_kv_shared_layer``, meta device) reuses the keys of
    the layer its config marks "store" for its type; posviz names that layer, and no other layer has one."""
    kinds = ["sliding_attention", "full_attention"] * 3
    config = CONFIG_MAPPING[model_type](num_hidden_layers=6, layer_types=kinds, num_kv_shared_layers=2)
    with torch.device("meta"):
        model = AutoModel.from_config(config)
    modes, types = config.kv_sharing_modes, config.layer_types
    store = {types[j]: j for j, mode in enumerate(modes) if mode == "store"}
    want = [store[types[i]] if layer.self_attn.is_kv_shared_layer else None for i, layer in enumerate(model.layers)]
    found = posviz.model_positions(config.to_json_string())
    assert [layer.kv_shared_from for layer in found.layers] == want
    assert want[-2:] != [None, None] and want[:4] == [None] * 4
