"""Measure what deploy/ saves on a first visit: bytes on the wire and the server CPU it costs to send them.

    python deploy/measure.py [--visits 40] [--port 8640]

Starts ``deploy/serve.sh 1 PORT`` (one app process behind nginx), opens the home page in a fresh headless Chromium
(Debian's /usr/bin/chromium) directly from the app process and through nginx and sums the bytes of every HTTP
response (headers included, as the browser counts them), then fetches that visit's static files ``--visits`` times
over 8 connections, the way a class's browsers would, in three ways: directly from Streamlit (uncompressed),
through nginx with the precompressed ``.gz`` files (``gzip_static``, as deployed), and through nginx compressing
each response as it goes (the ``.gz`` files removed). For each: bytes sent, wall time, and the CPU seconds of the
process that did the sending (the app process or nginx's worker).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("POSVIZ_CHROMIUM", "/usr/bin/chromium")


def first_visit(url: str) -> dict[str, int]:
    """Path -> bytes received, for every HTTP response of a first visit to the home page at ``url``."""
    from playwright.sync_api import sync_playwright

    received: dict[str, int] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-quic"]
        )
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        urls: dict[str, str] = {}
        cdp.on("Network.responseReceived", lambda e: urls.__setitem__(e["requestId"], e["response"]["url"]))
        cdp.on(
            "Network.loadingFinished",
            lambda e: received.__setitem__(urls.get(e["requestId"], "?")[len(url) :], int(e["encodedDataLength"])),
        )
        page.goto(url + "/", timeout=120_000)
        page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg", timeout=120_000)
        page.wait_for_timeout(3000)
        browser.close()
    return received


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fetch_all(port: int, paths: list[str], visits: int, gzip: bool) -> int:
    """Fetch ``paths`` ``visits`` times over 8 connections; returns the body bytes received."""
    headers = {"Accept-Encoding": "gzip"} if gzip else {}
    jobs = [p for _ in range(visits) for p in paths]
    lock = threading.Lock()
    total = 0

    def worker(chunk: list[str]) -> None:
        nonlocal total
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        got = 0
        for path in chunk:
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            got += len(response.read())
            assert response.status == 200, (path, response.status)
        conn.close()
        with lock:
            total += got

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(worker, [jobs[i::8] for i in range(8)]))
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visits", type=int, default=40)
    parser.add_argument("--port", type=int, default=8640)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="posviz-measure-") as run_dir:
        serve = subprocess.Popen(
            ["bash", "deploy/serve.sh", "1", str(args.port), "--listen", "127.0.0.1", "--run-dir", run_dir],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            for line in serve.stdout:
                if line.startswith("posviz: "):
                    break
            else:
                return 1
            proxy, app = f"http://127.0.0.1:{args.port}", f"http://127.0.0.1:{args.port + 1}"
            direct, proxied = first_visit(app), first_visit(proxy)
            mib = 2**20
            print(f"first visit of the home page, {len(direct)} responses:")
            print(f"  directly from the app process: {sum(direct.values()) / mib:.2f} MiB")
            print(f"  through nginx:                 {sum(proxied.values()) / mib:.2f} MiB")
            print(
                f"  {args.visits} students: {args.visits * sum(direct.values()) / mib:.0f} MiB directly, "
                f"{args.visits * sum(proxied.values()) / mib:.0f} MiB through nginx"
            )

            paths = sorted(p for p in direct if p.startswith("/static/"))
            app_pid = int((Path(run_dir) / "logs" / "app-1.pid").read_text())
            master = int((Path(run_dir) / "nginx.pid").read_text())
            worker = int(re.findall(r"\d+", Path(f"/proc/{master}/task/{master}/children").read_text())[0])
            print(f"{args.visits} first visits' static files ({len(paths)} files each), 8 connections:")
            cases = [("directly from Streamlit, uncompressed", args.port + 1, False, app_pid)]
            cases.append(("nginx, precompressed .gz (gzip_static)", args.port, True, worker))
            for label, port, gzip, pid in cases:
                before, start = cpu_seconds(pid), time.perf_counter()
                sent = fetch_all(port, paths, args.visits, gzip)
                wall, cpu = time.perf_counter() - start, cpu_seconds(pid) - before
                print(f"  {label:45s} {sent / mib:7.1f} MiB  {wall:6.2f} s  CPU {cpu:5.2f} s")
            for gz in Path(run_dir).glob("static-*/static/**/*.gz"):
                gz.unlink()
            before, start = cpu_seconds(worker), time.perf_counter()
            sent = fetch_all(args.port, paths, args.visits, True)
            wall, cpu = time.perf_counter() - start, cpu_seconds(worker) - before
            label = "nginx, compressing each response (gzip on)"
            print(f"  {label:45s} {sent / mib:7.1f} MiB  {wall:6.2f} s  CPU {cpu:5.2f} s")
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
