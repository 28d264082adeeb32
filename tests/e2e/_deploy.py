"""Run ``deploy/serve.sh`` for the tests, and talk to posviz as a browser does: a cookie jar for the HTTP requests
and Streamlit's websocket protocol for the page runs.

A browser's frontend opens ``/_stcore/stream`` with the subprotocols ``streamlit``, the XSRF cookie's value and,
when it reconnects, the id of the session it had; it sends a ``BackMsg`` with ``rerun_script`` and reads
``ForwardMsg`` protobufs until ``script_finished``. :class:`Browser` does the same with one cookie jar, so its
requests carry the proxy's sticky cookie as a real browser's would.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import inspect
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parents[2]
SERVE = ROOT / "deploy" / "serve.sh"
READY = "posviz: "
START_TIMEOUT = 240.0  # the processes start together on a 2-core machine shared with others
MISSING_NGINX = "nginx is required for the deploy tests and in CI: apt-get install nginx"
UPSTREAM = "X-Posviz-Upstream"
#: websockets >= 14 warns when connect() is used without a with-block unless asked for the plain connection.
_PLAIN = {"legacy": True} if "legacy" in inspect.signature(connect).parameters else {}


def nginx_present() -> bool:
    return bool(shutil.which("nginx") or os.access("/usr/sbin/nginx", os.X_OK))


def _ephemeral_low() -> int:
    """The first port Linux hands out to outgoing connections (32768 unless configured otherwise)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_block(size: int) -> int:
    """A port such that it and the ``size - 1`` ports after it are free on loopback (the proxy and its apps), below
    the ephemeral range: a health check of a port there that nothing listens on yet could connect to itself."""
    low, high = 20_000, max(20_000 + size + 1, _ephemeral_low() - size)
    for _ in range(200):
        base = random.randrange(low, high)
        socks = []
        try:
            for port in range(base, base + size):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no block of free ports on 127.0.0.1")


@dataclass
class Served:
    """A running ``deploy/serve.sh``: the proxy's URL, its app ports, its run directory and its output."""

    url: str
    port: int
    app_ports: list[int]
    run_dir: Path
    proc: subprocess.Popen
    lines: list[str] = field(default_factory=list)

    def app_url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.app_ports[i]}"

    def upstream(self, i: int) -> str:
        """How ``X-Posviz-Upstream`` names app process ``i`` (0-based)."""
        return f"127.0.0.1:{self.app_ports[i]}"

    def index_of(self, upstream: str) -> int:
        """The app process that answered, from an ``X-Posviz-Upstream`` value (its last address)."""
        return self.app_ports.index(int(upstream.split(",")[-1].strip().rsplit(":", 1)[1]))

    def pid(self, i: int) -> int:
        return int((self.run_dir / "logs" / f"app-{i + 1}.pid").read_text())

    def output(self) -> str:
        return "\n".join(self.lines)


def serve_env(run_dir: str) -> dict[str, str]:
    """The environment of a test's serve.sh: the lab's settings left to the script, its cache in ``run_dir``."""
    env = {k: v for k, v in os.environ.items() if k not in ("POSVIZ_LAB_WORKERS", "POSVIZ_LAB_DIR", "POSVIZ_NGINX")}
    return {**env, "XDG_CACHE_HOME": str(Path(run_dir) / "cache")}


@contextlib.contextmanager
def serve(processes: int, *extra: str) -> Iterator[Served]:
    """Start ``deploy/serve.sh processes PORT`` on free loopback ports; yield once it prints its URL."""
    if not nginx_present():
        pytest.fail(MISSING_NGINX, pytrace=False)
    port = free_block(processes + 1)
    with tempfile.TemporaryDirectory(prefix="posviz-deploy-test-") as run_dir:
        proc = subprocess.Popen(
            ["bash", str(SERVE), str(processes), str(port), "--listen", "127.0.0.1", "--run-dir", run_dir, *extra],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env=serve_env(run_dir),
        )
        served = Served(f"http://127.0.0.1:{port}", port, [port + 1 + i for i in range(processes)], Path(run_dir), proc)
        ready = threading.Event()

        def read() -> None:
            for line in proc.stdout:
                served.lines.append(line.rstrip("\n"))
                if line.startswith(READY):
                    ready.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not ready.wait(0.2):
                if proc.poll() is not None or time.monotonic() > deadline:
                    reader.join(2)
                    pytest.fail(f"deploy/serve.sh did not get ready (exit {proc.poll()}):\n{served.output()}")
            assert f"{READY}{served.url}" in served.lines
            yield served
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            reader.join(5)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def upstream(self) -> str | None:
        return self.headers.get(UPSTREAM.lower())


@dataclass
class Run:
    """What one script run sent: the session it ran in, the toasts and alerts it showed, and how it ended."""

    session_id: str = ""
    toasts: list[str] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    charts: int = 0
    finished: bool = False


class Browser:
    """One browser: a cookie jar shared by its page loads and its websocket."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(self.jar)
        )
        self.ws = None
        self.ws_upstream: str | None = None
        self.session_id: str | None = None

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def get(self, path: str, *, gzip: bool = True) -> Response:
        request = urllib.request.Request(self.base_url + path)
        if gzip:
            request.add_header("Accept-Encoding", "gzip")
        with self.opener.open(request, timeout=60) as response:
            return Response(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())

    def connect(self, previous: str | None = None) -> str:
        """Open the websocket as the frontend does (``previous``: the session id it had, on a reconnect); returns
        the ``X-Posviz-Upstream`` of the handshake."""
        cookies = "; ".join(f"{c.name}={c.value}" for c in self.jar)
        xsrf = self.cookie("_streamlit_xsrf") or "PLACEHOLDER_AUTH_TOKEN"  # what the frontend sends without one
        protocols = ["streamlit", xsrf, previous] if previous else ["streamlit", xsrf]
        ws_url = self.base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self.ws = connect(
            ws_url,
            subprotocols=protocols,
            origin=self.base_url,
            additional_headers={"Cookie": cookies} if cookies else {},
            max_size=None,
            proxy=None,
            open_timeout=60,
            **_PLAIN,
        )
        headers = self.ws.response.headers
        self.ws_upstream = headers.get(UPSTREAM)
        for header in headers.get_all("Set-Cookie"):  # the proxy may move the sticky cookie on the handshake too
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            self.jar.set_cookie(cookie_for(name.strip(), value, self.base_url))
        return self.ws_upstream

    def run(self, page: str = "", query: str = "", *, timeout: float = 120.0) -> Run:
        """Run ``page`` with ``query`` on the open websocket, as the frontend does on a page load or a click."""
        msg = BackMsg()
        msg.rerun_script.query_string = query
        msg.rerun_script.page_name = page
        self.ws.send(msg.SerializeToString())
        run = Run()
        deadline = time.monotonic() + timeout
        while True:
            fm = ForwardMsg()
            fm.ParseFromString(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.1)))
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                run.session_id = fm.new_session.initialize.session_id
                self.session_id = run.session_id
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                element = fm.delta.new_element
                which = element.WhichOneof("type")
                if which == "toast":
                    run.toasts.append(element.toast.body)
                elif which == "alert":
                    run.alerts.append(element.alert.body)
                elif which == "exception":
                    run.exceptions.append(f"{element.exception.type}: {element.exception.message}")
                elif which == "plotly_chart":
                    run.charts += 1
            elif kind == "script_finished":
                if fm.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue
                run.finished = True
                return run

    def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                self.ws.close()
            self.ws = None


def cookie_for(name: str, value: str, base_url: str) -> http.cookiejar.Cookie:
    host = base_url.split("://", 1)[1].split(":", 1)[0]
    return http.cookiejar.Cookie(
        0, name, value, None, False, host, False, False, "/", True, False, None, False, None, None, {}
    )


def wait_until(predicate, timeout: float, step: float = 0.25) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def healthy(url: str) -> bool:
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().strip() == b"ok"
    except OSError:
        return False


def catalog_text(lang: str, key: str) -> str:
    """The text of ``key`` in ``assets/i18n/<lang>/common.json``, as the app shows it."""
    import json

    return json.loads((ROOT / "assets" / "i18n" / lang / "common.json").read_text(encoding="utf-8"))[key]
