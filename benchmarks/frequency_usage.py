"""RoPE frequency usage of a large checkpoint: memory while reading its q/k projections, and the time to draw.

    python benchmarks/frequency_usage.py [--layers 32] [--heads 32] [--kv-heads 8] [--head-dim 128]
                                         [--dtype float16|bfloat16] [--keep DIR]
                                         [--out benchmarks/results/frequency_usage.md]

A synthetic Llama-shaped folder is written to a temporary directory: per layer q_proj (heads x head_dim rows),
k_proj and v_proj (kv_heads x head_dim rows each), hidden = heads x head_dim, float16 (or bfloat16), four layers
per shard with a ``model.safetensors.index.json``; at the defaults (32 layers x 32 heads x head_dim 128, 8 key-value
heads) that is 1.6 GB. If the machine has too little free memory or disk, the layer count is scaled down and the
table says so.

A fresh subprocess then reads it: its peak resident memory (``VmHWM``, reset after the imports by writing 5 to
/proc/self/clear_refs) and tracemalloc's peak of Python allocations while ``rope_frequency_usage`` runs, against the
largest single tensor read (q_proj) in its stored and its float64 size; then the time to build every usage figure
(layers x pairs, heads x pairs of one layer, usage against wavelength, p-RoPE with its share, the score pattern of
one layer's heads) from the arrays read, JSON included. Targets (issue: "32 layers x 32 heads x 64 pairs renders in
< 2 s after the tensors are read; reading a 1.6 GB model's q/k projections stays under 900 MB peak"): peak RSS
growth < 900 MB, figures < 2 s. Nothing here is asserted in a test.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

LAYERS_PER_SHARD = 4


def memory_status(field: str) -> int:
    """``VmRSS`` / ``VmHWM`` of this process from /proc/self/status, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def available_bytes() -> tuple[int, int]:
    """(MemAvailable, free disk in the temporary directory), in bytes."""
    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            mem = int(line.split()[1]) * 1024
    return mem, shutil.disk_usage(tempfile.gettempdir()).free


def write_model(
    folder: Path, layers: int, heads: int, kv_heads: int, head_dim: int, dtype: str = "float16", seed: int = 0
) -> int:
    """The synthetic folder; returns its size in bytes."""
    if dtype == "bfloat16":  # numpy has no bfloat16: torch writes it
        import torch
        from safetensors.torch import save_file

        def stored(values: np.ndarray):
            return torch.from_numpy(values).to(torch.bfloat16)
    else:
        from safetensors.numpy import save_file  # type: ignore[assignment]

        def stored(values: np.ndarray):
            return values.astype(np.float16)

    hidden = heads * head_dim
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "num_hidden_layers": layers,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "torch_dtype": dtype,
    }
    (folder / "config.json").write_text(json.dumps(config, indent=1))
    rng = np.random.default_rng(seed)
    shards = -(-layers // LAYERS_PER_SHARD)
    weight_map, total = {}, 0
    for shard in range(shards):
        name = f"model-{shard + 1:05d}-of-{shards:05d}.safetensors"
        tensors = {}
        for n in range(shard * LAYERS_PER_SHARD, min(layers, (shard + 1) * LAYERS_PER_SHARD)):
            for proj, rows in (
                ("q_proj", heads * head_dim),
                ("k_proj", kv_heads * head_dim),
                ("v_proj", kv_heads * head_dim),
            ):
                key = f"model.layers.{n}.self_attn.{proj}.weight"
                tensors[key] = stored(rng.standard_normal((rows, hidden), dtype=np.float32) * 0.02)
                weight_map[key] = name
        save_file(tensors, str(folder / name))
        total += (folder / name).stat().st_size
        del tensors
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return total


def measure(folder: str) -> dict:
    """Run in the subprocess: memory while reading, then the time to build the figures."""
    import tracemalloc

    import posviz
    from posviz.figures import frequency_usage as figures
    from posviz.lessons import frequency_usage as fu

    before = memory_status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM := VmRSS from here on
    tracemalloc.start()
    start = time.perf_counter()
    usage = posviz.rope_frequency_usage(folder)
    read_seconds = time.perf_counter() - start
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak = memory_status("VmHWM")

    hidden = np.random.default_rng(1).standard_normal(usage.query.shape[1] * usage.head_dim)
    start = time.perf_counter()
    pattern = fu.head_score_pattern(folder, 0, np.arange(-256, 257), hidden=hidden)
    pattern_read_seconds = time.perf_counter() - start

    start = time.perf_counter()
    dropped = fu.p_rope_dropped(usage.inv_freq, 0.75)
    share = float(fu.p_rope_share(usage.pair_means(), dropped))
    built = [
        figures.usage_heatmap(usage.layer_means(), title="t", x_title="pair", y_title="layer"),
        figures.usage_heatmap(usage.query[0], title="t", x_title="pair", y_title="head"),
        figures.usage_against_wavelength(
            usage.wavelength,
            {"query": usage.pair_means(), "key": usage.pair_means("key")},
            training_context=usage.training_context,
            context_label="context",
            title="t",
            x_title="wavelength",
            y_title="usage",
        ),
        figures.p_rope_figure(
            usage.wavelength,
            usage.pair_means(),
            dropped,
            kept_label="kept",
            dropped_label="dropped",
            share_text=f"{share:.0%}",
            title="t",
            x_title="wavelength",
            y_title="usage",
        ),
        figures.score_pattern_figure(
            pattern.distances,
            pattern.score,
            [f"h{i}" for i in range(len(pattern.score))],
            title="t",
            x_title="d",
            y_title="score",
        ),
    ]
    payload = sum(len(fig.to_json()) for fig in built)
    figure_seconds = time.perf_counter() - start
    return {
        "rss_before": before,
        "peak_growth": peak - before,
        "traced_peak": traced_peak,
        "read_seconds": read_seconds,
        "pattern_read_seconds": pattern_read_seconds,
        "figure_seconds": figure_seconds,
        "payload": payload,
        "shape": list(usage.query.shape),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--kv-heads", type=int, default=8)
    parser.add_argument("--head-dim", type=int, default=128)
    parser.add_argument("--dtype", choices=("float16", "bfloat16"), default="float16")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "frequency_usage.md"))
    parser.add_argument("--keep", help="write the model here and keep it (default: a temporary folder, removed)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the subprocess's entry point
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return

    hidden = args.heads * args.head_dim
    per_layer = (args.heads + 2 * args.kv_heads) * args.head_dim * hidden * 2
    layers, note = args.layers, ""
    memory, disk = available_bytes()
    fits = min(disk // 2, memory // 4) // per_layer  # the writer holds one shard; keep half the disk free
    if fits < layers:
        layers = max(LAYERS_PER_SHARD, int(fits))
        note = (
            f"scaled down from {args.layers} to {layers} layers: {memory / 1e9:.1f} GB free memory, "
            f"{disk / 1e9:.1f} GB free disk"
        )
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="posviz-usage-bench-"))
    try:
        print(f"writing {layers} layers ({layers * per_layer / 1e9:.2f} GB) to {folder} ...", file=sys.stderr)
        start = time.perf_counter()
        size = write_model(folder, layers, args.heads, args.kv_heads, args.head_dim, args.dtype)
        write_seconds = time.perf_counter() - start
        load_before = os.getloadavg()
        run = subprocess.run(
            [sys.executable, __file__, "--measure", str(folder)], capture_output=True, text=True, check=True
        )
        result = json.loads(run.stdout.strip().splitlines()[-1])
        load_after = os.getloadavg()
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)

    q_stored = args.heads * args.head_dim * hidden * 2
    mb = 1024**2
    target_rss = 900 * mb * size / 1.6e9 if note else 900 * mb
    rows = [
        (
            "model on disk",
            f"{size / 1e9:.2f} GB, {layers} layers x {args.heads} heads x head_dim {args.head_dim} "
            f"({args.kv_heads} key-value heads), {args.dtype}, written in {write_seconds:.0f} s",
            "",
        ),
        ("largest tensor read (q_proj)", f"{q_stored / mb:.0f} MiB stored, {q_stored * 4 / mb:.0f} MiB as float64", ""),
        ("process RSS before reading (imports)", f"{result['rss_before'] / mb:.0f} MiB", ""),
        (
            "peak RSS growth while reading q/k",
            f"{result['peak_growth'] / mb:.0f} MiB",
            f"< {target_rss / mb:.0f} MiB: {'PASS' if result['peak_growth'] < target_rss else 'FAIL'}",
        ),
        (
            "tracemalloc peak while reading",
            f"{result['traced_peak'] / mb:.1f} MiB",
            f"< 2 x q_proj ({2 * q_stored / mb:.0f} MiB): {'PASS' if result['traced_peak'] < 2 * q_stored else 'FAIL'}",
        ),
        ("time to read q/k of every layer", f"{result['read_seconds']:.2f} s", ""),
        ("time to read one layer's q/k for the score pattern", f"{result['pattern_read_seconds']:.2f} s", ""),
        (
            "time to build the 5 usage figures (JSON included)",
            f"{result['figure_seconds']:.2f} s",
            f"< 2 s: {'PASS' if result['figure_seconds'] < 2 else 'FAIL'}",
        ),
        ("figures' JSON", f"{result['payload'] / 1024:.0f} KiB", ""),
    ]
    lines = [
        "# RoPE frequency usage: memory and time",
        "",
        f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}; load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after.",
        *(["", f"**{note}** (the RSS target is scaled with the size)."] if note else []),
        "",
        "| measure | value | target |",
        "|---|---|---|",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
        "",
    ]
    text = "\n".join(lines)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
