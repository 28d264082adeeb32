"""How long ``posviz.model_positions`` takes to resolve a deep model's config, from its config.json text.

    python benchmarks/models.py [--out benchmarks/results/models.md] [--layers 128]

Each case is a real family's config (a preset) with ``num_hidden_layers`` (and its per-layer lists) stretched to
``--layers`` layers, given as JSON text so that parsing is measured too. The figure is the best of 20 runs in
milliseconds; the target is < 50 ms for 128 layers. It is an absolute time on this machine, reported here with the
machine's details and load, never asserted in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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


CASES = ("llama4_scout", "gemma3_4b", "olmo3_7b", "phi3_5_mini", "deepseek_v3", "qwen3_next_80b", "t5_base")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "models.md"))
    parser.add_argument("--layers", type=int, default=128)
    args = parser.parse_args()
    load = os.getloadavg()
    rows = []
    for name in CASES:
        text = deep(name, args.layers)
        got = posviz.model_positions(text)
        assert got.num_layers == args.layers, (name, got.num_layers)
        ms = best_ms(lambda text=text: posviz.model_positions(text))
        rows.append((name, got.num_layers, len(got.summary()), ms))
        print(f"{name:16s} {got.num_layers:4d} layers {ms:7.2f} ms", file=sys.stderr)
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
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
