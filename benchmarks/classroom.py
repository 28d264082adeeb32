"""The classroom benchmark: many students on one server at once, as a class uses posviz.

    python benchmarks/classroom.py [--students 40] [--url http://host:port] [--only WAVE ...] [--out FILE]

Without ``--url`` it starts the app exactly as the README does (``streamlit run app.py``, on a free port, with the
project's ``.streamlit/config.toml``) and measures that server; with ``--url`` it drives a server or proxy that is
already running (``deploy/serve.sh``). Every student is one browser tab driven over Streamlit's own websocket
protocol (``streamlit_client.Tab``: the messages the frontend sends, the messages a browser receives); the waves:

- ``warm``: every page once, one after the other (fills the caches), then one at a time again, warm;
- ``pages``: N students open pages at the same moment, round robin over every page (warm), three rounds;
- ``large``: N students at once, each a different large view (sinusoidal n ~ 8,192 x d = 1,024, RoPE head_dim 512),
  cold: nobody has asked for these settings before;
- ``lab``: 5 students press Start on the same settings while others keep opening pages;
- ``memory``: the server's memory once the caches are full, and again after every session has closed.

Per wave: p50 / p95 / max seconds per page, failures (no end of the run, dropped connections), exceptions and
error boxes on the page, bytes per session, the server's CPU seconds (its process and its children) and its RSS.
Targets (2 cores, machine otherwise idle) are in TARGETS; the report marks each PASS or FAIL.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pages import app_pages  # noqa: E402
from streamlit_client import Run, Tab  # noqa: E402

#: Targets, on a 2-core machine that is otherwise idle.
TARGETS = {
    "pages_p95": 1.0,  # seconds, N students opening pages at once (warm)
    "large_p95": 3.0,  # seconds, N students at once, each a different large view
    "lab_cpu_ratio": 1.3,  # server CPU of 5 identical Start presses / CPU of one run
    "lab_pages_p95": 1.0,  # seconds, page loads of other students while runs train
}
WAVES = ("warm", "pages", "large", "lab", "memory")


# ------------------------------------------------------------------------------------------------ the server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it (lab workers included), read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(children.get(current, []))
    return tree


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` and its living descendants, plus what its finished children used."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
        total += (utime + stime + cutime + cstime) / tick
    return total


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants."""
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


class Server:
    """``streamlit run app.py`` as the README starts it, on a free port, in the project's folder."""

    def __init__(self, extra_args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.extra_args = extra_args
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, *self.extra_args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        return self
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError("the app did not answer /_stcore/health within 60 s")

    @property
    def pid(self) -> int:
        return self.process.pid

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)


# ------------------------------------------------------------------------------------------------ waves


@dataclass
class Visit:
    page: str
    query: str
    run: Run
    bytes: int


@dataclass
class Wave:
    name: str
    visits: list[Visit] = field(default_factory=list)
    cpu: float = 0.0
    rss: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def times(self, page: str | None = None) -> list[float]:
        return [v.run.seconds for v in self.visits if page is None or v.page == page]

    @property
    def failures(self) -> int:
        return sum(not v.run.ok for v in self.visits)

    @property
    def exceptions(self) -> int:
        return sum(len(v.run.exceptions) for v in self.visits)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


async def visit(url: str, page: str, query: str, start: asyncio.Event | None = None) -> Visit:
    """One student: a new tab that opens ``page?query`` (at ``start``, when given, so a wave starts together)."""
    tab = Tab(url)
    try:
        await tab.connect(page, query)
        if start is not None:
            await start.wait()
        run = await tab.open(page, query)
    except Exception as exc:
        run = Run(failure=f"{type(exc).__name__}: {exc}")
    finally:
        await tab.close()
    return Visit(page, query, run, tab.http_bytes + run.bytes)


async def together(url: str, views: list[tuple[str, str]]) -> list[Visit]:
    """Every view in its own tab, all connected first and then started at the same moment, while the lecturer's tab
    (the projector, open on Home) stays connected: a server whose last session closes drops its compiled page
    scripts, which a class never lets happen."""
    lecturer = Tab(url)
    await lecturer.connect()
    await lecturer.open("home")
    try:
        start = asyncio.Event()
        tasks = [asyncio.create_task(visit(url, page, query, start)) for page, query in views]
        await asyncio.sleep(0.5)  # let every tab connect before the class presses Enter together
        start.set()
        return list(await asyncio.gather(*tasks))
    finally:
        await lecturer.close()


def measured(name: str, pid: int | None, func) -> Wave:
    """Run the coroutine factory ``func`` and record the server's CPU seconds and RSS around it."""
    before = cpu_seconds(pid) if pid else 0.0
    began = time.perf_counter()
    visits = asyncio.run(func())
    wave = Wave(name, visits)
    wave.seconds = time.perf_counter() - began
    if pid:
        wave.cpu, wave.rss = cpu_seconds(pid) - before, rss_bytes(pid)
    return wave


def page_views() -> list[tuple[str, str]]:
    return [(name, "") for name, _ in app_pages()]


def large_views(n: int) -> list[tuple[str, str]]:
    """``n`` different large views: sinusoidal tables of about 8,192 x 1,024 and RoPE pages at head_dim 512, each
    with settings nobody asked for before (the seed of the run shifts them, so a second run is cold too)."""
    salt = int(time.time()) % 997
    views = []
    for i in range(n):
        if i % 2 == 0:
            views.append(("sinusoidal", f"n={8192 - 3 * (i + salt)}&d=1024"))
        else:
            views.append(("rope", f"head_dim=512&base={10000 + 17 * (i + salt)}"))
    return views


# ------------------------------------------------------------------------------------------------ report


def summary_rows(wave: Wave) -> list[str]:
    rows = []
    pages = sorted({v.page for v in wave.visits})
    for page in pages:
        times = wave.times(page)
        rows.append(
            f"| {wave.name} | {page} | {len(times)} | {percentile(times, 50):.2f} | {percentile(times, 95):.2f} | "
            f"{max(times):.2f} |"
        )
    times = wave.times()
    per_session = statistics.mean(v.bytes for v in wave.visits) if wave.visits else 0
    rows.append(
        f"| {wave.name} | **all** | {len(times)} | {percentile(times, 50):.2f} | **{percentile(times, 95):.2f}** | "
        f"{max(times):.2f} | {wave.failures} | {wave.exceptions} | {per_session / 1024:.0f} | {wave.cpu:.1f} | "
        f"{wave.rss / 2**20:.0f} |"
    )
    return rows


def machine() -> str:
    load = os.getloadavg()
    return (
        f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--url", help="a running server or proxy; default: start one as the README does")
    parser.add_argument("--only", action="append", choices=WAVES)
    parser.add_argument("--server-arg", action="append", default=[], help="an extra option of streamlit run")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "classroom.md")
    args = parser.parse_args(argv)
    waves = args.only or list(WAVES)

    with contextlib.ExitStack() as stack:
        if args.url:
            url, pid = args.url.rstrip("/"), None
        else:
            server = stack.enter_context(Server(tuple(args.server_arg)))
            url, pid = server.url, server.pid
        results: list[Wave] = []
        views = page_views()
        if "warm" in waves or "pages" in waves:
            results.append(measured("cold, one at a time", pid, lambda: _one_by_one(url, views)))
            results.append(measured("warm, one at a time", pid, lambda: _one_by_one(url, views)))
        if "pages" in waves:
            for r in range(args.rounds):
                round_views = [views[i % len(views)] for i in range(args.students)]
                results.append(measured(f"{args.students} at once, round {r + 1}", pid, lambda v=round_views: together(url, v)))
        if "large" in waves:
            results.append(measured(f"{args.students} large views at once", pid, lambda: together(url, large_views(args.students))))
        report = [f"# Classroom benchmark\n\n{machine()}\n", "| wave | page | n | p50 s | p95 s | max s | failures | exceptions | KiB/session | server CPU s | RSS MiB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for wave in results:
            report.extend(summary_rows(wave))
        text = "\n".join(report) + "\n"
        print(text)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    return 0


async def _one_by_one(url: str, views: list[tuple[str, str]]) -> list[Visit]:
    return [await visit(url, page, query) for page, query in views]


if __name__ == "__main__":
    sys.exit(main())
