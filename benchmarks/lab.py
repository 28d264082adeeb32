"""The training lab's default budget, timed: one run per encoding, as the page and ``python -m posviz train`` do.

    python benchmarks/lab.py [--out benchmarks/results/lab.md] [--isolation]

The target: all six encodings in under two minutes on a 2-core CPU. Wall-clock time on a shared machine
depends on its load, so the table also gives the CPU time of each run and the load average before and after.
``--isolation`` times the isolation check (``position_accuracy``) at the same budget too.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch  # noqa: E402

from posviz import lab  # noqa: E402


def timed(func):
    """``(result, wall seconds, CPU seconds of this process)`` of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = func()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "lab.md"))
    parser.add_argument("--isolation", action="store_true", help="also time the isolation check per encoding")
    args = parser.parse_args()

    config = lab.TrainConfig()
    load_before = os.getloadavg()
    lab.train(lab.TrainConfig(steps=5))  # imports and first-call costs, paid once by any process
    header = "| encoding | seconds | CPU seconds | final loss | MLM accuracy | probe before → after |"
    rows = [header, "|---|---:|---:|---:|---:|---|"]
    total_wall = total_cpu = 0.0
    isolation = []
    for encoding in lab.ENCODINGS:
        result, wall, cpu = timed(lambda enc=encoding: lab.train(lab.TrainConfig(encoding=enc)))
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
        probe = "" if result.model.position_table() is None else f"{result.probe_before:.2f} → {result.probe_after:.2f}"
        rows.append(
            f"| {encoding} | {wall:.1f} | {cpu:.1f} | {result.final_loss:.3f} | {result.mlm_accuracy:.3f} | {probe} |"
        )
        print(rows[-1], flush=True)
        if args.isolation:
            accuracy, wall, cpu = timed(lambda enc=encoding: lab.position_accuracy(enc, config))
            isolation.append(f"| {encoding} | {wall:.1f} | {cpu:.1f} | {accuracy:.3f} |")
            print(isolation[-1], flush=True)
    rows.append(f"| **all six** | **{total_wall:.1f}** | **{total_cpu:.1f}** | | | |")
    if isolation:
        rows += ["", f"Isolation check (chance {1 / config.seq_len:.3f}):", ""]
        rows += ["| encoding | seconds | CPU seconds | position accuracy |", "|---|---:|---:|---:|", *isolation]
    load_after = os.getloadavg()
    text = "\n".join(
        [
            "# Training lab: the default budget",
            "",
            f"{config.steps} steps of batch {config.batch} x {config.seq_len} tokens per encoding, seed {config.seed}, "
            f"lr {config.lr:g}; hidden {config.hidden}, {config.heads} heads, 1 layer; torch on one thread.",
            "",
            *rows,
            "",
            f"Machine: {platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, torch {torch.__version__}; load average (1 min) "
            f"{load_before[0]:.2f} before, {load_after[0]:.2f} after.",
            "",
        ]
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    print(f"all six: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU; wrote {args.out}")


if __name__ == "__main__":
    main()
