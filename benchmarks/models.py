"""How long ``posviz.model_positions`` takes to resolve a deep model's config, from its config.json text.

    python benchmarks/models.py [--out benchmarks/results/models.md] [--layers 128]

Each case is a real family's config (a preset, or for a model type read through transformers' own config class its
class defaults) with ``num_hidden_layers`` (and its per-layer lists) stretched to ``--layers`` layers, given as
JSON text so that parsing is measured too. The figure is the best of 20 runs in milliseconds, after the first; the
target is < 50 ms for 128 layers. The first read through a config class imports transformers once per process:
that is timed separately, in a fresh interpreter, beside ``import posviz`` alone (which does not import it). These
are absolute times on this machine, reported here with the machine's details and load, never asserted in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import posviz  # noqa: E402
from posviz.models import preset  # noqa: E402

TARGET_MS = 50.0


def deep(name: str, layers: int) -> str:
    """The preset ``name`` with ``layers`` decoder layers, its per-layer lists repeated to match, as JSON text."""
    cfg = preset(name)
    text = cfg.get("text_config", cfg)
    for key in ("num_hidden_layers", "n_layer", "n_layers", "num_layers"):
        if key in text:
            text[key] = layers
    if "layer_types" in text:  # repeat the pattern up to and including the first full-attention layer
        period = text["layer_types"][: text["layer_types"].index("full_attention") + 1]
        text["layer_types"] = (period * layers)[:layers]
    return json.dumps(cfg)


def best_ms(func, repeat: int = 20) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


CASES = (
    "llama4_scout",
    "gemma3_4b",
    "olmo3_7b",
    "phi3_5_mini",
    "deepseek_v3",
    "qwen3_next_80b",
    "t5_base",
    "gemma4",
)
#: Model types read through transformers' config class (``posviz.models.by_class``), from their class defaults.
CLASS_CASES = ("qwen3_moe", "glm4", "exaone4", "deepseek_v32")


def class_default(model_type: str, layers: int) -> str:
    """The class defaults of ``model_type`` with ``layers`` layers (the class derives its per-layer lists)."""
    return json.dumps({"model_type": model_type, "num_hidden_layers": layers})


def first_read_seconds() -> tuple[float, float]:
    """(seconds to import posviz, seconds for its first read through a config class), each in a fresh interpreter."""
    code = (
        "import sys, time; t = time.perf_counter(); import posviz; a = time.perf_counter() - t; "
        "assert 'transformers' not in sys.modules; t = time.perf_counter(); "
        "posviz.model_positions({'model_type': 'qwen3_moe'}); print(a, time.perf_counter() - t)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    first, second = out.stdout.split()
    return float(first), float(second)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "models.md"))
    parser.add_argument("--layers", type=int, default=128)
    args = parser.parse_args()
    load = os.getloadavg()
    rows = []
    cases = [(name, deep(name, args.layers)) for name in CASES]
    cases += [(f"{name} (config class)", class_default(name, args.layers)) for name in CLASS_CASES]
    for name, text in cases:
        got = posviz.model_positions(text)
        assert got.num_layers == args.layers, (name, got.num_layers)
        ms = best_ms(lambda text=text: posviz.model_positions(text))
        rows.append((name, got.num_layers, len(got.summary()), ms))
        print(f"{name:16s} {got.num_layers:4d} layers {ms:7.2f} ms", file=sys.stderr)
    imported, first = first_read_seconds()
    end = os.getloadavg()
    lines = [
        "# model_positions on deep configs",
        "",
        f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores; "
        f"load average {load[0]:.2f} at the start, {end[0]:.2f} at the end.",
        "",
        f"| preset stretched to {args.layers} layers | layers | groups | best of 20 (ms) | target < {TARGET_MS:g} ms |",
        "|---|---|---|---|---|",
    ]
    for name, layers, groups, ms in rows:
        lines.append(f"| {name} | {layers} | {groups} | {ms:.2f} | {'PASS' if ms < TARGET_MS else 'FAIL'} |")
    lines += [
        "",
        f"In a fresh interpreter: `import posviz` {imported:.2f} s (transformers not imported); the first read through "
        f"a config class, which imports transformers, {first:.2f} s. Pages that read no config never pay it.",
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
