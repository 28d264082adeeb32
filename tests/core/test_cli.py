"""The command line prints the registry and computes tables that equal the core's."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import posviz

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
