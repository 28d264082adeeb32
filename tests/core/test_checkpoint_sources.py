"""The Hugging Face cache listing, config.json lookup, known keys, offsets and the table summary."""

import json

import numpy as np
import pytest

import posviz
from posviz.checkpoint import hf_cache_dir, known_key
from posviz.checkpoint.tables import BERT, GPT2, LEARNED, OPT, T5, position_offset

from ._checkpoint_files import safetensors_bytes


def _snapshot(repo, revision, files):
    folder = repo / "snapshots" / revision
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def test_cached_models_from_a_fake_cache(tmp_path, monkeypatch):
    weights = safetensors_bytes({"encoder.embed_positions.weight": np.ones((6, 2), np.float32)})
    config = json.dumps({"model_type": "bart", "max_position_embeddings": 4}).encode()
    bart = tmp_path / "models--facebook--bart-tiny"
    old = _snapshot(bart, "0ld", {"config.json": b"{}"})
    main = _snapshot(bart, "abc123", {"config.json": config, "model.safetensors": weights})
    (bart / "refs").mkdir()
    (bart / "refs" / "main").write_text("abc123")
    (old / "model.safetensors").write_bytes(weights)
    bert = _snapshot(tmp_path / "models--bert-base-uncased", "fff", {"config.json": b"{}"})
    (tmp_path / "models--half-downloaded" / "snapshots").mkdir(parents=True)
    _snapshot(tmp_path / "datasets--someone--data", "d1", {"data.csv": b"a,b"})
    expected = [posviz.CachedModel("bert-base-uncased", bert), posviz.CachedModel("facebook/bart-tiny", main)]
    assert posviz.list_cached_models(tmp_path) == expected
    table = posviz.load_position_embeddings(expected[1].path)
    assert table.offset == 2 and table.config["model_type"] == "bart"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert posviz.list_cached_models() == expected
    assert posviz.list_cached_models(tmp_path / "no-cache-here") == []


def test_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert hf_cache_dir() == tmp_path / "hf" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hf_cache_dir() == tmp_path / "hub"
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.delenv("HF_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert hf_cache_dir() == tmp_path / ".cache" / "huggingface" / "hub"


def test_model_config_of_bytes_files_and_folders(tmp_path):
    assert posviz.load_model_config(b"anything") is None
    (tmp_path / "weights.npy").write_bytes(b"")
    assert posviz.load_model_config(tmp_path / "weights.npy") is None
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    assert posviz.load_model_config(tmp_path / "weights.npy") == {"model_type": "gpt2"}
    assert posviz.load_model_config(tmp_path) == {"model_type": "gpt2"}
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(posviz.CorruptFile, match="JSON object"):
        posviz.load_model_config(tmp_path)


def test_modules_json_cannot_point_outside_the_folder(tmp_path):
    (tmp_path / "modules.json").write_text(
        json.dumps([{"path": "../elsewhere", "type": "sentence_transformers.models.Transformer"}])
    )
    with pytest.raises(posviz.CorruptFile, match="inside the model folder"):
        posviz.load_position_embeddings(tmp_path)


def test_index_shards_cannot_point_outside_the_folder(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"wpe.weight": "/etc/passwd"}}))
    with pytest.raises(posviz.CorruptFile, match="inside the model folder"):
        posviz.load_position_embeddings(tmp_path)


@pytest.mark.parametrize(
    ("key", "family"),
    [
        ("bert.embeddings.position_embeddings.weight", BERT),
        ("embeddings.position_embeddings.weight", BERT),
        ("transformer.wpe.weight", GPT2),
        ("wpe.weight", GPT2),
        ("model.decoder.embed_positions.weight", OPT),
        ("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", T5),
        ("position_embeddings.weight", LEARNED),
        ("lab.position_embeddings.weight", LEARNED),
        ("transformer.xwpe.weight", None),
        ("embeddings.word_embeddings.weight", None),
    ],
)
def test_known_keys_match_with_any_prefix(key, family):
    assert known_key(key) is family


@pytest.mark.parametrize(
    ("family", "rows", "config", "offset"),
    [
        (BERT, 514, {"model_type": "roberta", "pad_token_id": 1}, 2),
        (BERT, 514, {"model_type": "xlm-roberta"}, 2),
        (BERT, 512, {"model_type": "bert", "max_position_embeddings": 512}, 0),
        (BERT, 514, {"model_type": "bert"}, 0),
        (BERT, 514, None, 2),
        (BERT, 512, None, 0),
        (OPT, 2050, {"model_type": "opt", "max_position_embeddings": 2048}, 2),
        (OPT, 1026, {"model_type": "mbart"}, 2),
        (OPT, 66, {"model_type": "new-model", "max_position_embeddings": 64}, 2),
        (OPT, 448, {"model_type": "whisper", "max_target_positions": 448}, 0),
        (OPT, 130, None, 2),
        (GPT2, 1026, None, 0),
        (LEARNED, 66, None, 0),
        (T5, 34, {"model_type": "opt"}, 0),
        (None, 514, None, 0),
    ],
)
def test_offset_rows(family, rows, config, offset):
    assert position_offset(family, rows, config) == offset


def test_summary_of_a_table_with_offset_rows():
    rows = np.vstack([np.full((2, 3), 7.0), np.eye(3), [[1.0, 0.0, 1.0]]])
    table = posviz.load_position_embeddings(safetensors_bytes({"model.embed_positions.weight": rows}))
    assert table.offset == 2 and table.known == "OPT/BART-style absolute"
    np.testing.assert_array_equal(table.table, rows[2:])
    summary = table.summary()
    assert summary["shape"] == [6, 3] and summary["row_norm_max"] == pytest.approx(np.sqrt(2))
    assert summary["row_norm_min"] == 1.0
    assert summary["neighbour_cosine_mean"] == pytest.approx((0 + 0 + np.sqrt(0.5)) / 3)


def test_fingerprint_follows_content_not_names(tmp_path):
    from posviz.checkpoint import fingerprint

    data = bytes(range(200))
    changed = data[:99] + b"\xff" + data[100:]
    assert fingerprint(data) == fingerprint(bytes(data)) != fingerprint(changed)
    folder = tmp_path / "model"
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(data)
    first = fingerprint(folder)
    assert fingerprint(folder) == first and fingerprint(weights) != first
    weights.write_bytes(data + b"x")  # a replaced file changes the folder's fingerprint
    assert fingerprint(folder) != first
    second = fingerprint(folder)
    (folder / "config.json").write_text("{}")
    assert fingerprint(folder) != second
