"""The classroom benchmark: a class of students on one server at once, as a lecture uses posviz.

    python benchmarks/classroom.py [--students 40] [--url http://host:port] [--only WAVE ...] [--out FILE]

Without ``--url`` it starts the app exactly as the README does (``streamlit run app.py`` in the project folder, on a
free port, with the project's ``.streamlit/config.toml``; the lab keeps its finished runs in a fresh temporary
folder, so nothing comes from an earlier run); with ``--url`` it drives a server or proxy that is already running
(``deploy/serve.sh``), and reports no server CPU or memory.

Every student is one browser tab driven over Streamlit's own websocket protocol (``streamlit_client.Tab``: the
messages the frontend sends, the messages a browser receives), and so is the lecturer, whose tab (on Home, as on the
projector) stays open through every wave. The waves:

- ``pages``: every page once, one after another (filling the caches), again warm, then N students open pages at the
  same moment, round robin over every page, for several rounds;
- ``large``: N students at once, each a different large view nobody asked for before (the Sinusoidal table at about
  8,192 positions x 1,024 dimensions, the RoPE page at head_dim 512), twice with new settings; the lecturer opened one
  of each kind first;
- ``lab``: one student presses Start on the training lab (the CPU of one run), then 5 students press Start on the same
  new settings (trained once? everybody gets the result?), then 5 more on other settings while 30 students keep
  opening pages;
- ``memory``: the server's memory once the caches are full, and again after every student has closed the tab and
  Streamlit has dropped the sessions (``server.disconnectedSessionTTL``, 120 s).

Per wave: p50 / p95 / max seconds per page, failures (no end of the run, a dropped connection), exceptions and error
boxes on the pages, bytes per session, the server's CPU seconds (its process and every process below it: lab workers
too) and its resident memory. The targets (a 2-core machine, otherwise idle) are in TARGETS; the report marks each
PASS or FAIL and is written to ``benchmarks/results/classroom.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import itertools
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
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
    "pages_p95": 1.0,  # seconds: N students opening pages at once (warm)
    "large_p95": 3.0,  # seconds: N students at once, each a different large view
    "lab_cpu_ratio": 1.3,  # server CPU of 5 students pressing Start on the same settings / CPU of one run
    "lab_pages_p95": 1.0,  # seconds: other students' page loads while runs train
    "memory_over_budget": 0,  # bytes over the documented budget, with the caches full and after the class leaves
}
WAVES = ("pages", "large", "lab", "memory")
#: How long Streamlit keeps a closed tab's session (server.disconnectedSessionTTL), plus a margin.
SESSION_TTL = 120
#: Memory a server needs besides what it keeps: Python, numpy, plotly, Streamlit (measured: about 0.43 GB).
BASE_MEMORY = 512 << 20
#: Memory of one of the lab's worker processes (a Python with torch; measured: about 0.47 GB).
WORKER_MEMORY = 512 << 20


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
    """User + system CPU of ``pid`` and its living descendants, and what their finished children used."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for member in process_tree(pid):
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(fields[i]) for i in (11, 12, 13, 14)) / tick
    return total


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its descendants."""
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


class Server:
    """``streamlit run app.py`` as the README starts it, on a free port, in the project's folder."""

    def __init__(self, extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.extra_args = extra_args
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, *self.extra_args],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # not yet: nothing listening, or a connection to itself (a loopback port nothing listens on yet)
            with contextlib.suppress(OSError, http.client.HTTPException):
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


class Proxy(Server):
    """``deploy/serve.sh N``: N app processes behind nginx on a free port. Its process tree (the script, nginx and
    every app process) is what the CPU and memory columns measure."""

    def __init__(self, processes: int, env: dict[str, str] | None = None) -> None:
        super().__init__(env=env)
        self.processes = processes

    def __enter__(self) -> Proxy:
        self.run_dir = tempfile.mkdtemp(prefix="posviz-classroom-proxy-")
        command = ["bash", "deploy/serve.sh", str(self.processes), str(self.port), "--listen", "127.0.0.1"]
        self.process = subprocess.Popen(
            [*command, "--run-dir", self.run_dir],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        ready = self.process.stdout.readline()  # "posviz: http://127.0.0.1:PORT" once every process answers
        if not ready.startswith("posviz: "):
            self.__exit__()
            raise RuntimeError(f"deploy/serve.sh did not start: {ready!r}")
        self.url = ready.split(" ", 1)[1].strip().rstrip("/")
        return self

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        shutil.rmtree(getattr(self, "run_dir", ""), ignore_errors=True)


# ------------------------------------------------------------------------------------------------ students


@dataclass
class Visit:
    page: str
    query: str
    run: Run
    bytes: int


@dataclass
class Wave:
    name: str
    kind: str = (
        ""  # what the wave measures, for the targets: "round", "large", "lab-one", "lab-five", "lab-busy", "memory"
    )
    visits: list[Visit] = field(default_factory=list)
    cpu: float | None = None
    rss: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def throughput(self) -> float | None:
        """Page views per second: the views of a wave that starts together over the time until the last one ended,
        or of views one after another over their total time."""
        times = self.times()
        if not times or self.kind not in ("", "round", "large"):
            return None
        return len(times) / (max(times) if self.kind else sum(times))

    def times(self, page: str | None = None) -> list[float]:
        return [v.run.seconds for v in self.visits if page is None or v.page == page]

    @property
    def failures(self) -> int:
        return sum(not v.run.ok for v in self.visits)

    @property
    def exceptions(self) -> int:
        return sum(len(v.run.exceptions) for v in self.visits)

    @property
    def errors(self) -> int:
        return sum(len(v.run.errors) for v in self.visits)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


async def visit(url: str, page: str, query: str = "", start: asyncio.Event | None = None) -> Visit:
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
    """Every view in its own tab, all connected first and then started at the same moment."""
    start = asyncio.Event()
    tasks = [asyncio.create_task(visit(url, page, query, start)) for page, query in views]
    await asyncio.sleep(0.5)  # every tab connects, then the class presses Enter together
    start.set()
    return list(await asyncio.gather(*tasks))


async def one_by_one(url: str, views: list[tuple[str, str]]) -> list[Visit]:
    return [await visit(url, page, query) for page, query in views]


class Meter:
    """The server's CPU seconds and memory around a piece of work (nothing without a pid)."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid

    @contextlib.contextmanager
    def measure(self, wave: Wave):
        before = cpu_seconds(self.pid) if self.pid else None
        yield wave
        if self.pid:
            wave.cpu, wave.rss = cpu_seconds(self.pid) - before, rss_bytes(self.pid)


def page_views() -> list[tuple[str, str]]:
    return [(name, "") for name, _ in app_pages()]


_fresh = itertools.count(1)


def large_views(n: int) -> list[tuple[str, str]]:
    """``n`` large views with settings nobody asked for before in this run: Sinusoidal tables of about 8,192 x 1,024
    and the RoPE page at head_dim 512, alternately."""
    views = []
    for _ in range(n):
        i = next(_fresh)
        if i % 2:
            views.append(("sinusoidal", f"n={8192 - i}&d=1024"))
        else:
            views.append(("rope", f"head_dim=512&base={10000 + 7 * i}"))
    return views


# ------------------------------------------------------------------------------------------------ waves


async def pages_waves(url: str, meter: Meter, students: int, rounds: int) -> list[Wave]:
    views = page_views()
    waves = []
    for name in ("cold, one at a time", "warm, one at a time"):
        with meter.measure(Wave(name)) as wave:
            wave.visits = await one_by_one(url, views)
        waves.append(wave)
    for r in range(rounds):
        with meter.measure(Wave(f"{students} at once, round {r + 1}", "round")) as wave:
            wave.visits = await together(url, [views[i % len(views)] for i in range(students)])
        waves.append(wave)
    return waves


async def large_waves(url: str, meter: Meter, students: int, rounds: int = 2) -> list[Wave]:
    await one_by_one(url, large_views(2))  # the lecturer shows one of each on the projector first
    waves = []
    for r in range(rounds):
        with meter.measure(Wave(f"{students} large views at once, round {r + 1}", "large")) as wave:
            wave.visits = await together(url, large_views(students))
        waves.append(wave)
    return waves


LAB_PAGE = "lab"


def trained(run: Run) -> bool:
    """Whether the lab page shows every chosen encoding trained: its results are drawn and neither Start (for what
    is missing) nor Stop (for what is coming) is on the page any more."""
    return run.ok and run.charts > 0 and not {"start", "start-stop"} & run.widgets


async def press_start(url: str, query: str, start: asyncio.Event | None, timeout: float) -> Visit:
    """A student on the lab page who presses Start and waits, looking every second, until every run is done."""
    tab = Tab(url)
    began = time.perf_counter()
    total = 0
    try:
        await tab.connect(LAB_PAGE, query)
        run = await tab.open(LAB_PAGE, query)
        total += run.bytes
        if start is not None:
            await start.wait()
            began = time.perf_counter()
        if "start" in run.widgets:
            run = await tab.click("start")
            total += run.bytes
        while run.ok and not trained(run) and time.perf_counter() - began < timeout:
            await asyncio.sleep(1.0)
            run = await tab.rerun()
            total += run.bytes
        if run.ok and not trained(run):
            run.failure = f"no results within {timeout:g} s"
    except Exception as exc:
        run = Run(failure=f"{type(exc).__name__}: {exc}")
    finally:
        await tab.close()
    run.seconds = time.perf_counter() - began
    return Visit(LAB_PAGE, query, run, total)


async def lab_waves(url: str, meter: Meter, timeout: float = 900.0) -> list[Wave]:
    waves = []
    with meter.measure(Wave("lab: one student presses Start", "lab-one")) as one:
        one.visits = [await press_start(url, "seed=101", None, timeout)]
    waves.append(one)
    with meter.measure(Wave("lab: 5 students press Start on the same settings", "lab-five")) as five:
        go = asyncio.Event()
        tasks = [asyncio.create_task(press_start(url, "seed=102", go, timeout)) for _ in range(5)]
        await asyncio.sleep(0.5)
        go.set()
        five.visits = list(await asyncio.gather(*tasks))
    if one.cpu and five.cpu:
        five.notes.append(f"CPU {five.cpu:.1f} s = {five.cpu / one.cpu:.2f} x one run ({one.cpu:.1f} s)")
    waves.append(five)
    with meter.measure(Wave("pages while 5 students train", "lab-busy")) as busy:
        go = asyncio.Event()
        trainers = [asyncio.create_task(press_start(url, "seed=103", go, timeout)) for _ in range(5)]
        views = page_views()
        visits: list[Visit] = []

        async def student(index: int) -> None:
            for page, query in itertools.islice(itertools.cycle(views), index, None):
                if all(t.done() for t in trainers):
                    return
                visits.append(await visit(url, page, query))

        await asyncio.sleep(0.5)
        go.set()
        await asyncio.gather(*(student(i) for i in range(30)))
        trained = [t.result() for t in trainers]
        busy.visits = visits
        busy.notes.append(f"{sum(v.run.ok for v in trained)} of 5 trainers got their results")
    waves.append(busy)
    return waves


async def memory_waves(url: str, meter: Meter, ttl: float = SESSION_TTL + 15) -> list[Wave]:
    """The memory with the caches full (after the other waves), then after the class has left."""
    full = Wave("memory with the caches full", "memory")
    if meter.pid:
        full.rss = rss_bytes(meter.pid)
    await asyncio.sleep(ttl)  # every tab is closed; Streamlit drops a closed tab's session after its TTL
    left = Wave(f"memory {ttl:.0f} s after the last student left", "memory")
    if meter.pid:
        left.rss = rss_bytes(meter.pid)
    return [full, left]


# ------------------------------------------------------------------------------------------------ report


def machine() -> str:
    load = os.getloadavg()
    return (
        f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
    )


def mib(value: int | None) -> str:
    return "—" if value is None else f"{value / 2**20:,.0f}"


def wave_rows(wave: Wave) -> list[str]:
    if not wave.visits:
        return [f"| {wave.name} | — | 0 | — | — | — | — | — | — | — | — | {mib(wave.rss)} |"]
    rows = []
    for page in sorted({v.page for v in wave.visits}):
        times = wave.times(page)
        rows.append(
            f"| {wave.name} | {page} | {len(times)} | {percentile(times, 50):.2f} | {percentile(times, 95):.2f} | "
            f"{max(times):.2f} | | | | | | |"
        )
    times = wave.times()
    per_tab = statistics.mean(v.bytes for v in wave.visits)
    cpu = "—" if wave.cpu is None else f"{wave.cpu:.1f}"
    rate = "—" if wave.throughput is None else f"{wave.throughput:.1f}"
    rows.append(
        f"| {wave.name} | **all** | {len(times)} | {percentile(times, 50):.2f} | **{percentile(times, 95):.2f}** | "
        f"{max(times):.2f} | {wave.failures} | {wave.exceptions} / {wave.errors} | {per_tab / 1024:,.0f} | {rate} | "
        f"{cpu} | {mib(wave.rss)} |"
    )
    return rows


def verdicts(waves: list[Wave], budget: int) -> list[tuple[str, str, str]]:
    """(target, measured, PASS/FAIL) for every target the waves measured."""
    out = []

    def add(name, value, limit, text, at_least=False):
        ok = value >= limit if at_least else value <= limit
        out.append((name, text, "PASS" if ok else "FAIL"))

    def of(kind: str) -> list[Wave]:
        return [w for w in waves if w.kind == kind]

    if of("round"):
        worst = max(percentile(w.times(), 95) for w in of("round"))
        add("pages at once: p95 ≤ 1 s", worst, TARGETS["pages_p95"], f"worst round p95 {worst:.2f} s")
        bad = sum(w.failures + w.exceptions for w in of("round"))
        add("pages at once: no failure, no exception", bad, 0, f"{bad}")
    if of("large"):
        worst = max(percentile(w.times(), 95) for w in of("large"))
        add("different large views at once: p95 ≤ 3 s", worst, TARGETS["large_p95"], f"worst round p95 {worst:.2f} s")
    one, five = (of("lab-one") or [None])[0], (of("lab-five") or [None])[0]
    if one and five and one.cpu and five.cpu:
        ratio = five.cpu / one.cpu
        add("5 Starts on the same settings: CPU ≤ 1.3 × one run", ratio, TARGETS["lab_cpu_ratio"], f"{ratio:.2f} ×")
        got = sum(v.run.ok for v in five.visits)
        add("5 Starts on the same settings: all get the result", got, 5, f"{got} of 5", at_least=True)
    for busy in of("lab-busy"):
        p95 = percentile(busy.times(), 95)
        add("pages while runs train: p95 ≤ 1 s", p95, TARGETS["lab_pages_p95"], f"p95 {p95:.2f} s")
    for w in of("memory"):
        if w.rss is not None:
            add(f"{w.name}: ≤ budget {mib(budget)} MiB", w.rss - budget, 0, f"{mib(w.rss)} MiB")
    return out


def served(args) -> str:
    if args.url:
        return args.url
    if args.processes:
        return f"deploy/serve.sh {args.processes} (nginx in front of {args.processes} app processes)"
    return "streamlit run app.py, as the README starts it"


def report(waves: list[Wave], budget: int, args) -> str:
    lines = [
        "# Classroom benchmark",
        "",
        f"{machine()}; {args.students} students; server: {served(args)}",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
        *(f"| {name} | {text} | {flag} |" for name, text, flag in verdicts(waves, budget)),
        "",
        "| wave | page | tabs | p50 s | p95 s | max s | failures | exceptions / errors | KiB per tab | views per s "
        "| server CPU s | RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for wave in waves:
        lines.extend(wave_rows(wave))
    notes = [f"- {w.name}: {note}" for w in waves for note in w.notes]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def memory_budget() -> int:
    """The documented budget of a server's memory: Python and its libraries, the store's budget (``POSVIZ_CACHE_MB``:
    tables, views and the results they share), the lab's loaded results and its worker processes."""
    sys.path.insert(0, str(ROOT))
    from posviz.lab.queue import KEEP_BYTES, default_workers
    from posviz.ui.cache import budget_bytes

    return BASE_MEMORY + budget_bytes() + KEEP_BYTES + default_workers() * WORKER_MEMORY


async def run_waves(url: str, pid: int | None, args) -> list[Wave]:
    meter = Meter(pid)
    lecturer = Tab(url)
    await lecturer.connect()
    await lecturer.open("home")
    waves: list[Wave] = []
    try:
        for name in args.only or WAVES:
            print(f"{name} ...", file=sys.stderr)
            if name == "pages":
                waves += await pages_waves(url, meter, args.students, args.rounds)
            elif name == "large":
                waves += await large_waves(url, meter, args.students)
            elif name == "lab":
                waves += await lab_waves(url, meter)
            elif name == "memory":
                await lecturer.close()
                waves += await memory_waves(url, meter)
            for wave in waves[-3:]:
                print("\n".join(wave_rows(wave)), file=sys.stderr)
    finally:
        await lecturer.close()
    return waves


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the pages wave")
    parser.add_argument("--url", help="a running server or proxy; default: start one as the README does")
    parser.add_argument(
        "--processes", type=int, help="start deploy/serve.sh with this many app processes behind nginx and drive that"
    )
    parser.add_argument("--only", action="append", choices=WAVES)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "classroom.md")
    args = parser.parse_args(argv)
    budget = memory_budget()
    lab_dir = tempfile.mkdtemp(prefix="posviz-classroom-lab-")
    try:
        with contextlib.ExitStack() as stack:
            if args.url:
                url, pid = args.url.rstrip("/"), None
            elif args.processes:
                proxy = stack.enter_context(Proxy(args.processes, env={"POSVIZ_LAB_DIR": lab_dir}))
                url, pid = proxy.url, proxy.pid
            else:
                server = stack.enter_context(Server(env={"POSVIZ_LAB_DIR": lab_dir}))
                url, pid = server.url, server.pid
            waves = asyncio.run(run_waves(url, pid, args))
    finally:
        shutil.rmtree(lab_dir, ignore_errors=True)
    text = report(waves, budget, args)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
