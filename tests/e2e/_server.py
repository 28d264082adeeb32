"""Start and stop a posviz Streamlit server for the end-to-end tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1400, "height": 1000}
SERVER_START_TIMEOUT = 60.0
MISSING_CHROMIUM = "chromium is required in CI: apt-get install chromium"


def _free_port() -> int:
    from ._deploy import free_block  # below the ephemeral ports: see ``deploy.serve.healthy``

    return free_block(1)


def _healthy(url: str) -> bool:
    from deploy.serve import healthy

    return healthy(url)


def _stop(proc: subprocess.Popen) -> None:
    """Terminate the server's whole process group, then kill it if it lingers."""
    if proc.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def streamlit_server() -> Iterator[str]:
    """Run ``streamlit run app.py`` from the repo root on a free port; yield its base URL."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tempfile.NamedTemporaryFile(prefix="posviz-e2e-server-", suffix=".log", delete=False)
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )

    def output() -> str:
        log.flush()
        return Path(log.name).read_text(encoding="utf-8", errors="replace")

    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with code {proc.returncode} before it was healthy:\n{output()}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"streamlit was not healthy at {url}/_stcore/health after {SERVER_START_TIMEOUT:.0f} s:\n{output()}"
                )
            time.sleep(0.25)
        yield url
    finally:
        _stop(proc)
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


@contextlib.contextmanager
def fresh_chromium(driver, executable_path: str) -> Iterator:
    """A new headless Chromium with an empty cache (a browser's first visit), launched from the session's Playwright
    (``driver``): a second Playwright started in the same session would be refused."""
    browser = driver.chromium.launch(executable_path=executable_path, headless=True, args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()
