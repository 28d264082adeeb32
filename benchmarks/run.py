"""Benchmarks of the posviz core against naive baselines and the floor, measured side by side in one run.

    python benchmarks/run.py [--out benchmarks/results/core.md]

Every number is a ratio against a baseline timed in the same run, so results from a noisy shared machine
still compare. Writes a markdown table with the machine's details.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import posviz  # noqa: E402


def best_of(func, repeat: int = 5) -> float:
    """Fastest of ``repeat`` runs, in seconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def articles_loop(n: int, d: int) -> np.ndarray:
    """The sinusoidal table written as nested Python loops, the way tutorials usually do (correct exponent)."""
    pe = np.zeros((n, d))
    for pos in range(n):
        for i in range(0, d, 2):
            angle = pos / (10000 ** (i / d))
            pe[pos, i] = math.sin(angle)
            if i + 1 < d:
                pe[pos, i + 1] = math.cos(angle)
    return pe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "core.md"))
    args = parser.parse_args()

    n, d = 4096, 1024
    angles = np.random.default_rng(0).uniform(0, 100, size=(n, d))
    floor = best_of(lambda: np.sin(angles))
    core = best_of(lambda: posviz.sinusoidal(n, d))
    loop = best_of(lambda: articles_loop(n, d), repeat=1)
    assert np.allclose(articles_loop(64, 32), posviz.sinusoidal(64, 32))

    table = posviz.sinusoidal(2048, 768)
    offset = best_of(lambda: posviz.offset_profile(table), repeat=3)
    gram = best_of(lambda: posviz.cosine_similarity_matrix(table), repeat=3)

    rows = [
        ("sinusoidal 4096 x 1024: posviz", core, core / floor, "np.sin over as many elements"),
        ("sinusoidal 4096 x 1024: nested loops", loop, loop / core, "posviz.sinusoidal"),
        ("offset_profile 2048 x 768 (FFT)", offset, offset / gram, "cosine_similarity_matrix (n x n)"),
    ]
    lines = [
        "# posviz core benchmarks",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"numpy {np.__version__}. Floor np.sin: {floor * 1e3:.1f} ms.",
        "",
        "| measurement | time (ms) | ratio | against |",
        "|---|---:|---:|---|",
        *[f"| {name} | {t * 1e3:.1f} | {ratio:.2f}x | {base} |" for name, t, ratio, base in rows],
        "",
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
