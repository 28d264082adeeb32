"""Benchmarks of every page of the app and of the core, side by side with baselines measured in the same run.

    python benchmarks/pages.py [--quick] [--only SECTION ...] [--out benchmarks/results/pages.md]

Sections (each a markdown table with a PASS/FAIL column per target, the targets being the constants below):

- pages: every page of app.py (and every tab of a tabbed page) at default settings, cold (caches cleared) and
  warm (``at.run()`` again) through ``streamlit.testing.v1.AppTest``, against a reference page that shows one
  512 x 512 float32 heatmap from a precomputed array; the bytes of the plotly figures each view sends;
- largest sizes (n = 32,768, d_model = 4,096) for the pages with size controls, every tab, one subprocess per
  view so that peak memory (``VmHWM``) is that view's own;
- the core against the articles' loop and one ``np.sin`` over as many elements, and the payload of a
  full-resolution ``go.Heatmap`` of a 32,768 x 4,096 float32 matrix against the image posviz sends;
- projections: PCA and t-SNE of a sinusoidal table at 512 and 2,048 positions of dimension 768, cold and cached;
- the training lab's default run per encoding.

``--quick`` skips the largest sizes and the lab. The machine is shared, so every time is compared with a baseline
timed in the same run; progress goes to stderr, and the table is rewritten after each section.
"""

from __future__ import annotations

import argparse
import ast
import base64
import gc
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
APP_FILE = ROOT / "app.py"
sys.path.insert(0, str(ROOT))
# as app.py does, before anything loads the OpenMP runtime: threads that wait sleep instead of spinning
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: The targets. A warm rerun of a page costs at most WARM_RATIO reference pages (one 512 x 512 heatmap from a
#: precomputed array); no view sends more than MAX_FIGURE_BYTES of figures; every view at the largest sizes renders
#: in BIG_SECONDS and BIG_MEMORY bytes of peak memory; the core is LOOP_SPEEDUP times faster than the articles' loop
#: and within FLOOR_RATIO of one ``np.sin`` over as many elements; t-SNE of 2,048 positions x 768 dimensions takes
#: TSNE_SECONDS; a cached result comes back in CACHED_SECONDS; the lab's default run trains in LAB_SECONDS.
WARM_RATIO = 5.0
MAX_FIGURE_BYTES = 2_000_000
BIG_SECONDS = 2.0
BIG_MEMORY = 1_500_000_000
LOOP_SPEEDUP = 20.0
FLOOR_RATIO = 1.5
TSNE_SECONDS = 5.0
CACHED_SECONDS = 0.01
LAB_SECONDS = 120.0

#: The largest sizes the app allows, as URL parameters of the pages that have size controls.
BIG_QUERY = {"n": "32768", "d": "4096"}
SIZED_PAGES = ("sinusoidal", "learned")
#: Views beyond each tab's defaults worth measuring at the largest sizes.
EXTRA_VIEWS = {
    "sinusoidal": ({"tab": "projection", "proj": "tsne"},),
    "learned": (
        {"tab": "projection", "proj": "tsne"},
        {"init": "sinusoidal", "tab": "table"},
        {"init": "sinusoidal", "tab": "spectrum"},
    ),
}
#: The sections of the report, in order.
SECTIONS = ("pages", "largest", "core", "projections", "lab")
REF_SIDE = 512
TIMEOUT = 300

REFERENCE_PAGE = '''"""One 512 x 512 float32 heatmap from a precomputed array: the floor cost of one typical figure."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st


@st.cache_resource
def matrix():
    return np.load({path!r})


st.plotly_chart(go.Figure(go.Heatmap(z=matrix())), key="reference")
'''


# ------------------------------------------------------------------------------------------------ pure helpers


def app_pages() -> tuple[tuple[str, str], ...]:
    """``(key, script path)`` of every page, from the page table (``posviz.pages``)."""
    from posviz.pages import PAGES

    return tuple((page.key, page.file) for page in PAGES)


def tab_codes(page_file: Path) -> tuple[str, ...]:
    """The tab codes of a page, first tab first: the string keys of its ``DRAW = {...}`` literal (empty if none)."""
    tree = ast.parse(Path(page_file).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Dict)
            and any(isinstance(t, ast.Name) and t.id == "DRAW" for t in node.targets)
        ):
            return tuple(k.value for k in node.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return ()


def verdict(value: float | None, limit: float, *, at_least: bool = False) -> str:
    """PASS when ``value`` is within ``limit`` (at most, or at least with ``at_least``); a dash when unmeasured."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return "PASS" if (value >= limit if at_least else value <= limit) else "FAIL"


def base64_length(n_bytes: int) -> int:
    """Length of the base64 text of ``n_bytes`` bytes (with padding): 4 * ceil(n / 3)."""
    return 4 * math.ceil(n_bytes / 3)


def plotly_z_length(matrix, dtype=np.float32) -> int:
    """Characters the values of ``matrix`` take in plotly's JSON of a heatmap: base64 of the raw ``dtype`` bytes,
    with every "/" written as the 6 characters of \\u002f. Encoded by blocks of whole rows that are a multiple
    of 3 bytes, so the blocks' base64 texts concatenate to that of the whole array."""
    matrix = np.asarray(matrix)
    row_bytes = matrix.shape[1] * np.dtype(dtype).itemsize
    rows = 3 * max(1, (1 << 22) // (3 * row_bytes))
    total = 0
    for start in range(0, matrix.shape[0], rows):
        encoded = base64.b64encode(np.ascontiguousarray(matrix[start : start + rows], dtype=dtype).tobytes())
        total += len(encoded) + 5 * encoded.count(b"/")
    return total


def human_bytes(n: float | None) -> str:
    """Bytes in decimal units (kB, MB, GB), three significant digits."""
    if n is None:
        return "—"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def markdown_table(header: list[str], rows: list[list]) -> list[str]:
    """A markdown table; numbers right-aligned, ``None`` shown as a dash, ``|`` in cells escaped."""

    def cell(value) -> str:
        return "—" if value is None else str(value).replace("|", "\\|").replace("\n", " ")

    numeric = [
        bool(rows) and all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) for i in range(len(header))
    ]
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---:" if num else "---" for num in numeric) + "|",
        *["| " + " | ".join(cell(v) for v in row) + " |" for row in rows],
    ]


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1e3, 1)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------ running pages


@dataclass
class Run:
    """One view through AppTest: cold and warm seconds, figures sent, and what went wrong."""

    cold: float | None = None
    warm: float | None = None
    charts: int = 0
    figure_bytes: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    widgets: dict = field(default_factory=dict)


def reset_caches() -> None:
    """Fresh process state for a cold run: posviz's table cache and Streamlit's caches."""
    import streamlit as st
    from streamlit.logger import set_log_level

    from posviz.ui import cache

    set_log_level("error")  # clearing Streamlit's caches outside a script run warns on every call

    cache.TABLES.clear()
    st.cache_data.clear()
    st.cache_resource.clear()
    gc.collect()


def page_test(script: Path, query: dict, *, page_file: str | None = None, timeout: float = TIMEOUT):
    """An AppTest of ``script`` (app.py switched to ``page_file``, or a standalone script) with ``query``."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(script), default_timeout=timeout)
    if page_file is not None:
        at.switch_page(page_file)
    at.query_params.update(query)
    return at


def _problems(at) -> tuple[str | None, list[str]]:
    error = next((e.value.splitlines()[0] if e.value else "exception" for e in at.exception), None)
    return error, [f"st.error: {e.value[:120]}" for e in at.error]


def measure(make_at, *, warm_repeats: int, keys: tuple[str, ...] = ()) -> Run:
    """Cold run after ``reset_caches``, then the fastest of ``warm_repeats`` reruns; never raises."""
    run = Run()
    try:
        reset_caches()
        at = make_at()
        start = time.perf_counter()
        at.run()
        run.cold = time.perf_counter() - start
        run.error, run.notes = _problems(at)
        if run.error is None and warm_repeats:
            warm = []
            for _ in range(warm_repeats):
                start = time.perf_counter()
                at.run()
                warm.append(time.perf_counter() - start)
            run.warm = min(warm)
            run.error, run.notes = _problems(at)
        charts = at.get("plotly_chart")
        run.charts, run.figure_bytes = len(charts), sum(len(c.proto.spec) for c in charts)
        run.widgets = {
            w.key: w.value for kind in ("number_input", "slider") for w in getattr(at, kind) if w.key in keys
        }
        if "tab.code" in at.session_state:
            run.widgets["tab"] = at.session_state["tab.code"]
    except Exception as exc:  # a page that raises is a row of the table, not the end of the run
        run.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return run


def reference_script(folder: Path) -> Path:
    """Write the reference page and its precomputed float32 matrix (a sinusoidal table) into ``folder``."""
    import posviz

    matrix = folder / "reference.npy"
    np.save(matrix, posviz.sinusoidal(REF_SIDE, REF_SIDE).astype(np.float32))
    script = folder / "reference_page.py"
    script.write_text(REFERENCE_PAGE.format(path=str(matrix)), encoding="utf-8")
    return script


def pages_section(warm_repeats: int) -> list[str]:
    """Every page's default view and every other tab, against the reference page."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        reference = reference_script(Path(folder))
        measure(lambda: page_test(reference, {}), warm_repeats=1)  # imports Streamlit and plotly once
        ref = measure(lambda: page_test(reference, {}), warm_repeats=max(warm_repeats, 3))
    log(f"reference page: cold {ms(ref.cold)} ms, warm {ms(ref.warm)} ms, {ref.figure_bytes} figure bytes")
    rows.append(page_row("reference", f"one {REF_SIDE}×{REF_SIDE} heatmap", ref, ref))
    for name, path in app_pages():
        codes = tab_codes(ROOT / path)
        run = measure(lambda p=path: page_test(APP_FILE, {}, page_file=p), warm_repeats=warm_repeats)
        log(f"{name}: cold {ms(run.cold)} ms, warm {ms(run.warm)} ms, {run.figure_bytes} bytes {run.error or ''}")
        rows.append(page_row(name, f"default (tab={codes[0]})" if codes else "default", run, ref))
        if "tab" not in run.widgets:
            continue  # no tabs on this page, or hidden until something is loaded
        for code in codes[1:]:
            run = measure(
                lambda p=path, c=code: page_test(APP_FILE, {"tab": c}, page_file=p), warm_repeats=warm_repeats
            )
            if run.widgets.get("tab", code) != code:
                run.notes.append(f"opened tab {run.widgets.get('tab')!r}")
            log(f"{name} tab={code}: cold {ms(run.cold)} ms, warm {ms(run.warm)} ms, {run.figure_bytes} bytes")
            rows.append(page_row(name, f"tab={code}", run, ref))
    header = ["page", "view", "cold (ms)", "warm (ms)", "warm / ref warm", "≤ 5x", "figures", "figure bytes", "≤ 2 MB"]
    return [
        "## Pages at default settings",
        "",
        f"Cold: caches cleared, fresh AppTest, one run. Warm: fastest of {warm_repeats} reruns (`at.run()` again, "
        "nothing changed). Reference: a script that shows one "
        f"{REF_SIDE} × {REF_SIDE} float32 `go.Heatmap` from a precomputed array.",
        "",
        *markdown_table([*header, "notes"], rows),
        "",
    ]


def page_row(name: str, view: str, run: Run, ref: Run) -> list:
    if run.error:
        return [name, view, ms(run.cold), None, None, "ERROR", run.charts, None, None, f"ERROR: {run.error}"]
    ratio = run.warm / ref.warm if run.warm is not None and ref.warm else None
    return [
        name,
        view,
        ms(run.cold),
        ms(run.warm),
        None if ratio is None else f"{ratio:.2f}x",
        verdict(ratio, WARM_RATIO),
        run.charts,
        human_bytes(run.figure_bytes),
        verdict(run.figure_bytes, MAX_FIGURE_BYTES),
        "; ".join(run.notes),
    ]


# --------------------------------------------------------------------------------------------- largest sizes


def memory_status(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in bytes: ``VmRSS`` (resident now) or ``VmHWM``
    (the peak resident size of this program, reset by exec; ``ru_maxrss`` is not: a child started by a large
    parent reports the parent's peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return 0


def worker(spec: dict) -> dict:
    """One view at the largest sizes, in its own process: the same view at default sizes first (imports and
    first calls paid), then caches cleared and the big view timed cold and warm; peak RSS of the process."""
    os.chdir(ROOT)
    small = {k: v for k, v in spec["query"].items() if k not in BIG_QUERY}
    measure(lambda: page_test(APP_FILE, small, page_file=spec["file"]), warm_repeats=0)
    reset_caches()
    before = memory_status("VmRSS")
    run = measure(lambda: page_test(APP_FILE, spec["query"], page_file=spec["file"]), warm_repeats=1, keys=("n", "d"))
    peak = memory_status("VmHWM")
    return {**run.__dict__, "rss_before": before, "peak_rss": peak}


def big_section(timeout: float) -> list[str]:
    """Every tab (and the extra views) of the pages with size controls at n = 32,768, d_model = 4,096."""
    files = dict(app_pages())
    rows = []
    for name in SIZED_PAGES:
        queries = [{**BIG_QUERY, "tab": code} for code in tab_codes(ROOT / files[name])]
        queries += [{**BIG_QUERY, **extra} for extra in EXTRA_VIEWS.get(name, ())]
        for query in queries:
            view = ", ".join(f"{k}={v}" for k, v in query.items() if k not in BIG_QUERY)
            log(f"largest sizes: {name} {view} ...")
            result = run_worker({"file": files[name], "query": query}, timeout)
            rows.append(big_row(name, view, result))
            log(f"  {rows[-1]}")
    header = ["page", "view", "server time (s)", "warm (s)", "< 2 s", "peak RSS", "RSS growth", "< 1.5 GB"]
    return [
        f"## Largest sizes (n = {int(BIG_QUERY['n']):,}, d_model = {int(BIG_QUERY['d']):,})",
        "",
        "One subprocess per view. Server time: the cold run with caches cleared (imports and first calls paid by "
        "a run of the same view at default sizes before it). Peak RSS: `VmHWM` of that process; RSS growth: "
        "peak minus the resident memory just before the cold run.",
        "",
        *markdown_table([*header, "figure bytes", "≤ 2 MB", "notes"], rows),
        "",
    ]


def run_worker(spec: dict, timeout: float) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"worker exited with {done.returncode}: {tail}"}
    return json.loads(lines[-1])


def big_row(name: str, view: str, result: dict) -> list:
    notes = list(result.get("notes", []))
    shown = result.get("widgets", {})
    applied = {k: shown.get(k) for k in ("n", "d")}
    if applied != {"n": int(BIG_QUERY["n"]), "d": int(BIG_QUERY["d"])}:
        notes.append(f"sizes shown: {applied}")
    if result.get("error"):
        return [name, view, None, None, "ERROR", None, None, "ERROR", None, None, f"ERROR: {result['error']}"]
    cold, warm, peak = result["cold"], result["warm"], result["peak_rss"]
    return [
        name,
        view,
        round(cold, 2),
        None if warm is None else round(warm, 2),
        verdict(cold, BIG_SECONDS),
        human_bytes(peak),
        human_bytes(peak - result["rss_before"]),
        verdict(peak, BIG_MEMORY),
        human_bytes(result["figure_bytes"]),
        verdict(result["figure_bytes"], MAX_FIGURE_BYTES),
        "; ".join(notes),
    ]


# ------------------------------------------------------------------------------------------------------ core


def core_benchmarks():
    """benchmarks/run.py as a module (its ``best_of`` and ``articles_loop``)."""
    spec = importlib.util.spec_from_file_location("posviz_core_benchmarks", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(func) -> tuple[object, float]:
    start = time.perf_counter()
    result = func()
    return result, time.perf_counter() - start


def core_section() -> list[str]:
    """The sinusoidal table against the loop and the floor, and the payload of a full-size heatmap."""
    import plotly.graph_objects as go

    import posviz
    from posviz import figures

    bench = core_benchmarks()
    n, d = 4096, 1024
    angles = np.random.default_rng(0).uniform(0, 100, size=(n, d))
    floor = bench.best_of(lambda: np.sin(angles))
    core = bench.best_of(lambda: posviz.sinusoidal(n, d))
    log(f"core: np.sin {ms(floor)} ms, posviz.sinusoidal {ms(core)} ms; the loop ...")
    loop = bench.best_of(lambda: bench.articles_loop(n, d), repeat=1)
    same = bool(np.allclose(bench.articles_loop(64, 32), posviz.sinusoidal(64, 32)))
    rows = [
        ["posviz.sinusoidal", ms(core), f"{core / floor:.2f}x", "one np.sin over as many elements", "≤ 1.5x"]
        + [verdict(core / floor, FLOOR_RATIO)],
        ["the articles' nested loops", ms(loop), f"{loop / core:.0f}x slower", "posviz.sinusoidal", "≥ 20x"]
        + [verdict(loop / core, LOOP_SPEEDUP, at_least=True)],
        ["np.sin (the floor)", ms(floor), "1.00x", "itself", "", ""],
    ]
    lines = [
        f"## Core: a {n:,} × {d:,} sinusoidal table",
        "",
        f"Fastest of 5 runs (the loop: one run). The loop and posviz agree on a 64 × 32 table: {same}.",
        "",
        *markdown_table(["measurement", "time (ms)", "ratio", "against", "target", "verdict"], rows),
        "",
    ]
    log("core: heatmap payloads ...")
    big_n, big_d = int(BIG_QUERY["n"]), int(BIG_QUERY["d"])
    table = posviz.sinusoidal(big_n, big_d)
    small = table[:64, :64]
    overhead = len(go.Figure(go.Heatmap(z=small.astype(np.float32))).to_json()) - plotly_z_length(small)
    full = overhead + plotly_z_length(table)
    raw = base64_length(big_n * big_d * 4)
    fig, seconds = timed(lambda tb=table: figures.heatmap(tb, title="PE", x_title="dimension", y_title="position"))
    sent = len(fig.to_json())
    del table, fig
    gc.collect()
    payload = [
        ["full-resolution go.Heatmap, float32 (plotly JSON)", human_bytes(full), "1x"],
        ["its z values alone, plain base64 (4 bytes per cell)", human_bytes(raw), f"{full / raw:.2f}x smaller"],
        [f"posviz.figures.heatmap (block means as a PNG), built in {seconds:.2f} s", human_bytes(sent)]
        + [f"{full / sent:,.0f}x smaller"],
    ]
    return [
        *lines,
        f"### Payload of a {big_n:,} × {big_d:,} float32 matrix (a sinusoidal table)",
        "",
        "The full heatmap's size is exact without building it: plotly's JSON of a small heatmap minus its values, "
        'plus the values of the whole table as plotly writes them (base64, "/" escaped). '
        f"Target: ≤ 2 MB sent: {verdict(sent, MAX_FIGURE_BYTES)}.",
        "",
        *markdown_table(["figure", "bytes", "against the full heatmap"], payload),
        "",
    ]


def projections_section() -> list[str]:
    """PCA and t-SNE of a sinusoidal table of dimension 768: cold (also on one thread, which shows what the
    other cores add), then through the Learned page's projection view of the whole table."""
    from unittest import mock

    from threadpoolctl import threadpool_limits

    import posviz
    from posviz.ui.views import learned as learned_views

    for method in ("pca", "tsne"):
        posviz.project(posviz.sinusoidal(64, 16), method)  # imports and first-call costs
    rows = []
    d = 768
    for n in (512, 2048):
        table = posviz.sinusoidal(n, d)
        for method in ("pca", "tsne"):
            log(f"projection: {method} of {n} x {d} ...")
            cpu = time.process_time()
            _, cold = timed(lambda m=method, tb=table: posviz.project(tb, m))
            cpu = time.process_time() - cpu
            with threadpool_limits(1), mock.patch("os.cpu_count", return_value=1):  # BLAS, OpenMP, openTSNE
                _, single = timed(lambda m=method, tb=table: posviz.project(tb, m))
            reset_caches()
            source = learned_views.registry_source("sinusoidal", n, d, 0.02, 0)
            _, first = timed(lambda m=method, s=source: learned_views.projection(s, m))
            _, again = timed(lambda m=method, s=source: learned_views.projection(s, m))
            target = method == "tsne" and n == 2048
            rows.append(
                [
                    method,
                    f"{n:,} × {d}",
                    round(cold, 3),
                    round(cpu, 3),
                    round(single, 3),
                    verdict(cold, TSNE_SECONDS) if target else "",
                    round(first, 3),
                    round(again * 1e3, 3),
                    verdict(again, CACHED_SECONDS),
                ]
            )
    reset_caches()
    header = ["method", "table", "cold (s)", "CPU (s)", "one thread (s)", "< 5 s cold", "cached, first (s)"]
    return [
        "## Projections of a sinusoidal table",
        "",
        "Cold: `posviz.project(table, method)` (CPU: of this process, all threads), and again on one thread "
        "(`threadpool_limits(1)` and one core for openTSNE). Then the Learned page's projection view "
        "(`posviz.ui.views.learned.projection`) of the sinusoidal-initialised table on an empty cache (builds the "
        "table, projects at most the page's positions and draws the figure) and a second time (served from the cache).",
        "",
        *markdown_table([*header, "cached (ms)", "cached < 10 ms"], rows),
        "",
    ]


def lab_section() -> list[str]:
    """posviz.lab.train at the default budget, once per encoding, after a short warm-up run."""
    from posviz import lab

    lab.train(lab.TrainConfig(steps=5))  # imports and first-call costs, paid once by any process
    rows, total = [], 0.0
    for encoding in lab.ENCODINGS:
        log(f"lab: {encoding} ...")
        cpu = time.process_time()
        result, wall = timed(lambda e=encoding: lab.train(lab.TrainConfig(encoding=e)))
        total += wall
        rows.append([encoding, round(wall, 1), round(time.process_time() - cpu, 1), round(result.final_loss, 3)])
    rows.append(["**all six**", round(total, 1), None, None])
    config = lab.TrainConfig()
    return [
        "## Training lab: the default run per encoding",
        "",
        f"`posviz.lab.train(TrainConfig(encoding=e))`: {config.steps} steps of batch {config.batch} × "
        f"{config.seq_len}. Target: all six < {LAB_SECONDS:.0f} s: {verdict(total, LAB_SECONDS)}.",
        "",
        *markdown_table(["encoding", "seconds", "CPU seconds", "final loss"], rows),
        "",
    ]


# ------------------------------------------------------------------------------------------------------ main


def machine(load_start: tuple, load_end: tuple | None) -> list[str]:
    import plotly
    import sklearn
    import streamlit
    import torch

    end = "running" if load_end is None else f"{load_end[0]:.2f} / {load_end[1]:.2f} / {load_end[2]:.2f}"
    return [
        f"Machine: {platform.platform()}, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs. "
        f"Python {platform.python_version()}, numpy {np.__version__}, torch {torch.__version__}, streamlit "
        f"{streamlit.__version__}, plotly {plotly.__version__}, scikit-learn {sklearn.__version__}.",
        "",
        f"Load average (1 / 5 / 15 min): {load_start[0]:.2f} / {load_start[1]:.2f} / {load_start[2]:.2f} at start, "
        f"{end} at end.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the largest sizes and the training lab")
    parser.add_argument("--out", help="markdown file (default benchmarks/results/pages[-quick].md)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per largest-size view")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="run only this section (repeatable); overrides --quick"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return

    os.chdir(ROOT)
    default = "pages.md" if not (args.quick or args.only) else "pages-" + "-".join(args.only or ["quick"]) + ".md"
    out = Path(args.out or ROOT / "benchmarks" / "results" / default)
    out.parent.mkdir(parents=True, exist_ok=True)
    load_start, started = os.getloadavg(), time.strftime("%Y-%m-%d %H:%M %Z")
    mode = "quick (no largest sizes, no lab)" if args.quick else "full"
    if args.only:
        mode = "only " + ", ".join(args.only)
    sections: list[list[str]] = []

    def write(load_end=None) -> None:
        title = ["# posviz page benchmarks", "", f"Run {started}, {mode}: `python benchmarks/pages.py`.", ""]
        lines = title + machine(load_start, load_end) + [line for section in sections for line in section]
        out.write_text("\n".join(lines), encoding="utf-8")

    steps = {
        "pages": lambda: pages_section(2 if args.quick else 3),
        "largest": lambda: big_section(args.timeout),
        "core": core_section,
        "projections": projections_section,
        "lab": lab_section,
    }
    chosen = args.only or [name for name in SECTIONS if not (args.quick and name in ("largest", "lab"))]
    for name, step in ((name, steps[name]) for name in SECTIONS if name in chosen):
        log(f"section {name}")
        load = f"Load average (1 min) when this section started: {os.getloadavg()[0]:.2f}."
        try:
            lines = step()
        except Exception as exc:  # one broken section must not lose the others
            lines = [f"## {name}", "", f"ERROR: {type(exc).__name__}: {exc}", ""]
        sections.append([*lines[:2], load, "", *lines[2:]])
        write()
    write(os.getloadavg())
    print(out.read_text(encoding="utf-8"))
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
