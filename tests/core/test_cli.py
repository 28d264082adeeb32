"""The command line prints the registry and computes tables that equal the core's."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import posviz
from posviz.__main__ import main

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "posviz", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_families_lists_every_registry_entry():
    out = _run("families")
    assert out.returncode == 0
    for key in posviz.FAMILIES:
        assert any(line.startswith(key + " ") for line in out.stdout.splitlines()), key


def test_table_writes_the_core_matrix(tmp_path):
    target = tmp_path / "pe.npy"
    out = _run("table", "sinusoidal", "n_positions=20", "d_model=6", "layout=halves", "base=100", "--out", str(target))
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["shape"] == [20, 6]
    np.testing.assert_array_equal(np.load(target), posviz.sinusoidal(20, 6, base=100, layout="halves"))


def test_bad_parameter_is_a_message_not_a_traceback():
    out = _run("table", "rope", "head_dim=7")
    assert out.returncode == 2
    assert "even" in out.stderr and "Traceback" not in out.stderr
    out = _run("table", "sinusoidal", "colour=blue")
    assert out.returncode == 2 and "no parameter 'colour'" in out.stderr


def test_inspect_lists_candidates_and_summarises_the_table(tmp_path):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    wpe, wte = rng.normal(size=(12, 4)).astype(np.float32), rng.normal(size=(30, 4)).astype(np.float32)
    save_file({"transformer.wpe.weight": wpe, "transformer.wte.weight": wte}, tmp_path / "model.safetensors")
    out = _run("inspect", str(tmp_path / "model.safetensors"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split()[:4] == ["transformer.wpe.weight", "[12,", "4]", "float32"]
    assert "GPT-2-style absolute" in lines[1] and lines[2].split()[0] == "transformer.wte.weight"
    assert "table: transformer.wpe.weight" in out.stdout and "shape 12 x 4" in out.stdout and "offset 0" in out.stdout
    norms = np.linalg.norm(wpe.astype(np.float64), axis=1)
    assert f"max {norms.max():.4g}" in out.stdout and f"mean {norms.mean():.4g}" in out.stdout
    picked = _run("inspect", str(tmp_path / "model.safetensors"), "--key", "transformer.wte.weight")
    assert picked.returncode == 0 and "shape 30 x 4" in picked.stdout


def test_inspect_of_a_bad_file_is_a_sentence_and_exit_code_2(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")
    out = _run("inspect", str(tmp_path / "model.safetensors"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.startswith("error: model.safetensors: the safetensors header claims 16 bytes")
    (tmp_path / "notes.txt").write_text("hello")
    out = _run("inspect", str(tmp_path / "notes.txt"))
    assert out.returncode == 2 and "looks like plain text" in out.stderr


def test_inspect_of_a_rope_model_reports_its_settings(tmp_path):
    config = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "rope_theta": 500000.0}
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = _run("inspect", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("0 candidate tables")
    assert "is a RoPE model" in out.stdout and "head_dim 16, base 500000" in out.stdout


@pytest.mark.slow  # a training run
def test_train_writes_the_model_and_prints_its_metrics_as_json(tmp_path):
    target = tmp_path / "learned.safetensors"
    out = _run("train", "--encoding", "learned", "--steps", "20", "--seed", "3", "--out", str(target))
    assert out.returncode == 0, out.stderr
    metrics = json.loads(out.stdout.strip().splitlines()[-1])
    assert metrics["encoding"] == "learned" and metrics["steps"] == 20 and metrics["seed"] == 3
    assert {"final_loss", "mlm_accuracy", "probe_before", "probe_after", "seconds"} <= metrics.keys()
    assert 0.0 <= metrics["mlm_accuracy"] <= 1.0 and metrics["final_loss"] > 0
    assert "step     20/20" in out.stderr
    table = posviz.load_position_embeddings(target)
    assert table.key == "embeddings.position_embeddings.weight" and table.table.shape == (32, 64)


def test_train_with_bad_arguments_is_a_sentence_and_exit_code_2(tmp_path, capsys):
    out = _run("train", "--encoding", "rope", "--out", str(tmp_path / "missing" / "m.safetensors"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"the folder {tmp_path / 'missing'} does not exist" in out.stderr
    assert main(["train", "--encoding", "absolute", "--out", str(tmp_path / "m.safetensors")]) == 2
    wrong = "encoding must be one of sinusoidal, learned, sin-init, rope, alibi, nope; got 'absolute'"
    assert wrong in capsys.readouterr().err
    assert main(["train", "--encoding", "rope", "--steps", "0", "--out", str(tmp_path / "m.safetensors")]) == 2
    assert "steps must be a whole number from 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--encoding", "rope", "--steps", "many", "--out", str(tmp_path / "m.safetensors")])
    assert exit_info.value.code == 2 and "invalid int value: 'many'" in capsys.readouterr().err
    assert not (tmp_path / "m.safetensors").exists()
