"""The code keeps the project's style: ``ruff check`` (lint rules in pyproject.toml) and ``ruff format --check`` pass
on the whole checkout, and mypy passes on every module of posviz, the Streamlit layer too, with the bodies of
unannotated functions checked (``[tool.mypy]`` in pyproject.toml). The pre-commit hooks run the same ruff; this is the
check CI makes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_file_is_formatted():
    done = run("ruff", "format", "--check", "--no-cache", ".")
    assert done.returncode == 0, "run `ruff format .`:\n" + done.stdout + done.stderr


@pytest.mark.slow
def test_every_module_type_checks():
    done = run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
