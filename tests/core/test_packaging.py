"""``pip install .`` works: the project builds a wheel (offline, with the installed setuptools) that holds the
``posviz`` package and its command, and the core imported from that wheel, outside the checkout, computes the same
table as the checkout's."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import posviz

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        cwd=out,
    )
    (built,) = out.glob("posviz-*.whl")
    return built


def test_the_wheel_holds_the_package_and_the_command(wheel):
    with zipfile.ZipFile(wheel) as archive:
        files = archive.namelist()
        entry_points = next(name for name in files if name.endswith("entry_points.txt"))
        assert "posviz = posviz.__main__:main" in archive.read(entry_points).decode()
    packaged = {name for name in files if name.startswith("posviz/") and name.endswith(".py")}
    in_checkout = {str(p.relative_to(ROOT)) for p in (ROOT / "posviz").rglob("*.py")}
    assert packaged == in_checkout


def test_the_core_from_the_wheel_computes_what_the_checkout_does(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import sys, numpy as np, posviz; "
        "assert posviz.__file__.startswith(sys.argv[1]), posviz.__file__; "
        "np.save(sys.argv[2], posviz.sinusoidal(32, 16))"
    )
    saved = tmp_path / "table.npy"
    subprocess.run(
        [sys.executable, "-c", code, str(target), str(saved)],
        check=True,
        cwd=tmp_path,  # outside the checkout: only the installed copy can be imported
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
    )
    np.testing.assert_array_equal(np.load(saved), posviz.sinusoidal(32, 16))
