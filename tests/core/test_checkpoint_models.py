"""Position tables of real transformers models, saved by save_pretrained (safetensors) and torch.save (.bin), load
exactly as the models hold them, with the right key, offset and kind, from folders, files and bytes."""

import shutil

import numpy as np
import pytest
import torch

import posviz
from posviz.checkpoint import safetensors_format, torch_format

from ._checkpoint_files import save_bin, save_sharded_bin, tiny_models

MODELS = ("bert", "gpt2", "roberta", "opt", "t5")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each tiny model saved once: name -> (model, key, offset, kind, safetensors folder, .bin folder)."""
    root = tmp_path_factory.mktemp("models")
    out = {}
    for name, (model, key, offset, kind) in tiny_models().items():
        model.save_pretrained(root / name / "safetensors")
        out[name] = (model, key, offset, kind, root / name / "safetensors", save_bin(model, root / name / "bin"))
    return out


def _parameter(model, key) -> np.ndarray:
    return model.state_dict()[key].detach().numpy().astype(np.float64)


@pytest.mark.parametrize("layout", ["safetensors", "bin"])
@pytest.mark.parametrize("name", MODELS)
def test_folder_loads_the_models_own_parameter(saved, name, layout):
    model, key, offset, kind, st_folder, bin_folder = saved[name]
    table = posviz.load_position_embeddings(st_folder if layout == "safetensors" else bin_folder)
    np.testing.assert_array_equal(table.matrix, _parameter(model, key))
    assert table.matrix.dtype == np.float64 and table.matrix.flags.c_contiguous
    assert (table.key, table.offset, table.kind) == (key, offset, kind)
    assert table.format == ("safetensors" if layout == "safetensors" else "torch-zip")
    assert table.dtype == "float32" and table.config["model_type"] == name
    np.testing.assert_array_equal(table.table, table.matrix[offset:])


@pytest.mark.parametrize("name", MODELS)
def test_bytes_of_a_file_load_without_config(saved, name):
    model, key, offset, kind, st_folder, bin_folder = saved[name]
    for path in (st_folder / "model.safetensors", bin_folder / "pytorch_model.bin"):
        table = posviz.load_position_embeddings(path.read_bytes(), name="upload.bin")
        np.testing.assert_array_equal(table.matrix, _parameter(model, key))
        assert table.config is None and table.source == "upload.bin"
        # without config.json the 2^k + 2 rows of the RoBERTa and OPT tables still mark 2 offset rows
        assert (table.key, table.offset, table.kind) == (key, offset, kind)


def test_a_file_inside_a_folder_reads_its_config(saved):
    table = posviz.load_position_embeddings(saved["opt"][4] / "model.safetensors")
    assert table.config["model_type"] == "opt" and table.offset == 2
    assert posviz.load_model_config(saved["opt"][4] / "model.safetensors") == table.config
    assert posviz.load_model_config(saved["opt"][4]) == table.config


def test_t5_bias_is_buckets_by_heads_and_prefers_the_encoder(saved):
    model, key, _, _, folder, _ = saved["t5"]
    table = posviz.load_position_embeddings(folder)
    assert table.matrix.shape == (model.config.relative_attention_num_buckets, model.config.num_heads)
    decoder = posviz.load_position_embeddings(folder, key=key.replace("encoder", "decoder"))
    assert decoder.kind == "t5_bias"
    np.testing.assert_array_equal(decoder.matrix, _parameter(model, key.replace("encoder", "decoder")))


def test_candidates_known_first_then_pos_then_the_rest(saved):
    model, key, *_, folder, _ = saved["bert"]
    candidates = posviz.list_position_candidates(folder)
    assert candidates[0] == posviz.Candidate(key, (64, 32), "float32", "BERT-style absolute")
    expected = {k for k, v in model.state_dict().items() if v.ndim == 2 and v.is_floating_point()}
    assert {c.key for c in candidates} == expected
    assert all(c.known is None for c in candidates[1:])
    t5 = [c.key for c in posviz.list_position_candidates(saved["t5"][4])]
    assert t5[:2] == [saved["t5"][1], saved["t5"][1].replace("encoder", "decoder")]


def test_candidates_read_no_tensor_data(saved, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("tensor data was read while listing candidates")

    monkeypatch.setattr(safetensors_format.SafetensorsFile, "read", refuse)
    monkeypatch.setattr(torch_format.TorchFile, "read", refuse)
    loads = []
    real_load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **kw: loads.append(kw) or real_load(*a, **kw))
    for name in MODELS:
        for folder in saved[name][4:]:
            assert posviz.list_position_candidates(folder)[0].key == saved[name][1]
    assert loads and all(kw["map_location"] == "meta" and kw["weights_only"] is True for kw in loads)


def test_bfloat16_is_widened_exactly(saved, tmp_path):
    model = saved["gpt2"][0]
    model.to(torch.bfloat16).save_pretrained(tmp_path / "bf16")
    model.to(torch.float32)
    table = posviz.load_position_embeddings(tmp_path / "bf16")
    expected = model.state_dict()["transformer.wpe.weight"].to(torch.bfloat16).to(torch.float64).numpy()
    assert table.dtype == "bfloat16"
    np.testing.assert_array_equal(table.matrix, expected)


def test_sharded_safetensors_reads_only_the_shard_it_needs(saved, tmp_path):
    model, key, *_ = saved["bert"]
    folder = tmp_path / "sharded"
    model.save_pretrained(folder, max_shard_size="20KB")
    index = posviz.checkpoint.sources.read_json(folder / "model.safetensors.index.json")
    shards = set(index["weight_map"].values())
    needed = index["weight_map"][key]
    assert len(shards) > 2
    assert len(posviz.list_position_candidates(folder)) == len(posviz.list_position_candidates(saved["bert"][4]))
    for shard in shards - {needed}:
        (folder / shard).write_bytes(b"not a model any more")
    table = posviz.load_position_embeddings(folder)
    np.testing.assert_array_equal(table.matrix, _parameter(model, key))
    with pytest.raises(posviz.UnsupportedFormat, match="plain text"):
        posviz.list_position_candidates(folder)


def test_sharded_bin_with_missing_shards_still_loads(saved, tmp_path):
    model, key, *_ = saved["gpt2"]
    folder = save_sharded_bin(model, tmp_path / "sharded-bin")
    index = posviz.checkpoint.sources.read_json(folder / "pytorch_model.bin.index.json")
    for shard in set(index["weight_map"].values()) - {index["weight_map"][key]}:
        (folder / shard).unlink()
    table = posviz.load_position_embeddings(folder)
    assert table.format == "torch-zip"
    np.testing.assert_array_equal(table.matrix, _parameter(model, key))
    with pytest.raises(posviz.CorruptFile, match="missing"):
        posviz.list_position_candidates(folder)


@pytest.mark.parametrize("wrap", ["plain", "state_dict", "model", "legacy"])
def test_torch_save_of_state_dicts_plain_and_nested(saved, tmp_path, wrap):
    model, key, *_ = saved["gpt2"]
    state = model.state_dict()
    obj = {"plain": state, "legacy": state, "state_dict": {"state_dict": state, "epoch": 3}, "model": {"model": state}}
    path = tmp_path / "checkpoint.pt"
    torch.save(obj[wrap], path, _use_new_zipfile_serialization=wrap != "legacy")
    table = posviz.load_position_embeddings(path)
    assert table.key == (key if wrap in ("plain", "legacy") else f"{wrap}.{key}")
    assert table.format == ("torch-legacy" if wrap == "legacy" else "torch-zip")
    np.testing.assert_array_equal(table.matrix, _parameter(model, key))


def test_torch_save_of_a_module_is_refused_naming_its_class(saved, tmp_path):
    path = tmp_path / "whole_model.pt"
    torch.save(saved["bert"][0], path)
    for source in (path, path.read_bytes()):
        with pytest.raises(posviz.UnsafePickle, match="state_dict") as caught:
            posviz.load_position_embeddings(source)
        assert "transformers.models.bert.modeling_bert.BertModel" in caught.value.globals
        assert "BertModel" in str(caught.value)


@pytest.mark.parametrize("nested", [False, True])
def test_sentence_transformers_folder(saved, tmp_path, nested):
    model, key, *_, folder, _ = saved["bert"]
    root = tmp_path / "st"
    transformer = root / "0_Transformer" if nested else root
    shutil.copytree(folder, transformer)
    (root / "1_Pooling").mkdir()
    (root / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    modules = [
        {
            "idx": 0,
            "name": "0",
            "path": "0_Transformer" if nested else "",
            "type": "sentence_transformers.models.Transformer",
        },
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    (root / "modules.json").write_text(__import__("json").dumps(modules))
    table = posviz.load_position_embeddings(root)
    np.testing.assert_array_equal(table.matrix, _parameter(model, key))
    assert table.config["model_type"] == "bert" and table.source == "st"


def test_rope_model_folder_raises_rope_model_with_its_config(tmp_path):
    import transformers as tf

    config = tf.LlamaConfig(
        hidden_size=32,
        intermediate_size=37,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=100,
        max_position_embeddings=128,
    )
    tf.LlamaForCausalLM(config).save_pretrained(tmp_path / "llama")
    with pytest.raises(posviz.RopeModel, match="RoPE") as caught:
        posviz.load_position_embeddings(tmp_path / "llama")
    assert isinstance(caught.value, posviz.NoPositionTable)
    assert caught.value.config["model_type"] == "llama"
    assert caught.value.rope.head_dim == 16 and caught.value.rope.max_position_embeddings == 128
    assert [c.key for c in posviz.list_position_candidates(tmp_path / "llama")][0] == "lm_head.weight"
    (tmp_path / "config-only").mkdir()
    shutil.copy(tmp_path / "llama" / "config.json", tmp_path / "config-only")
    with pytest.raises(posviz.RopeModel):
        posviz.load_position_embeddings(tmp_path / "config-only")


@pytest.mark.parametrize(
    ("family", "sizes", "pairs", "layout"),
    [
        ("GPTNeoX", {"hidden_size": 64, "num_attention_heads": 2, "rotary_pct": 0.25}, 4, "half"),
        ("GPTJ", {"n_embd": 64, "n_head": 2, "rotary_dim": 8}, 4, "interleaved"),
    ],
)
def test_pythia_and_gptj_folders_are_rope_models(tmp_path, family, sizes, pairs, layout):
    """A tiny Pythia (GPT-NeoX: a quarter of each 32-wide head rotates) and GPT-J (8 of 32 dimensions) saved by
    save_pretrained: neither has a position table, and both are recognised as RoPE models with the pairs their
    own rotary module builds."""
    import transformers as tf

    config = getattr(tf, f"{family}Config")(
        **sizes, num_hidden_layers=1, intermediate_size=32, vocab_size=100, max_position_embeddings=128
    )
    model = getattr(tf, f"{family}ForCausalLM")(config)
    model.save_pretrained(tmp_path / "model")
    with pytest.raises(posviz.RopeModel) as caught:
        posviz.load_position_embeddings(tmp_path / "model")
    rope = caught.value.rope
    module = model.get_decoder().rotary_emb
    expected = module.inv_freq if family == "GPTNeoX" else module.embed_positions[1, : module.pos_embd_dim // 2]
    if family == "GPTJ":  # sin(1 * inv_freq) at position 1; every frequency is at most 1 radian per position
        expected = torch.asin(expected)
    inv, _ = rope.inv_freq()
    assert (inv.size, rope.layout, rope.head_dim, rope.max_position_embeddings) == (pairs, layout, 32, 128)
    np.testing.assert_allclose(inv, expected.double().numpy(), rtol=1e-6)


def test_folder_without_weights_or_rope_says_so(saved, tmp_path):
    shutil.copy(saved["bert"][4] / "config.json", tmp_path)
    with pytest.raises(posviz.NoPositionTable, match="no model weights") as caught:
        posviz.load_position_embeddings(tmp_path)
    assert not isinstance(caught.value, posviz.RopeModel)
