"""Serve posviz to a class: N Streamlit processes on this machine (and any elsewhere) behind nginx on one port.

    python deploy/serve.py N [PORT] [--listen ADDR] [--app-port P] [--run-dir DIR] [--upstream HOST:PORT ...]

(``deploy/serve.sh`` runs this.) Each app process is started as the README starts the app, ``streamlit run
app.py``, on its own loopback port (PORT+1 ... PORT+N unless ``--app-port`` says where to start), with
``POSVIZ_INSTANCE`` set to its number, ``POSVIZ_LAB_WORKERS`` shared out so that all of them train on at most
cores - 1 workers together (at least one each) and ``POSVIZ_LAB_DIR`` the same for all, so a run that one process
finished is found by the others. ``--upstream`` adds app processes already running elsewhere (another machine);
``N`` may then be 0. nginx runs in the foreground with its prefix, pid, logs and temporary files in the run
directory (never the system's /etc/nginx), from ``deploy/nginx.conf.template``. Streamlit's static files are
copied there once per Streamlit version, each text file with a gzip-compressed twin that nginx sends as it is.

When every process answers its health check and the proxy answers too, one line goes to standard output,
``posviz: http://127.0.0.1:PORT``, for people and for scripts. A process that dies is started again (its
sessions have moved to the others meanwhile). Ctrl-C or SIGTERM stops nginx and every process, then exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gzip
import http.client
import importlib.metadata
import importlib.util
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
READY = "posviz: "
INSTALL_NGINX = "nginx is not installed; install Debian's package with: sudo apt-get install nginx"

#: Files nginx sends precompressed: text. Fonts in woff2 and images are compressed already.
COMPRESSIBLE = {".js", ".mjs", ".css", ".json", ".map", ".svg", ".txt", ".html", ".ttf"}
HEALTH_TIMEOUT = 180.0  # seconds for a process to answer /_stcore/health (a cold start on a busy machine)
RESTART_DELAY = 5.0  # seconds before a process that died is started again; doubled while it keeps dying young
STOP_GRACE = 10.0


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


def find_nginx() -> str | None:
    """The nginx binary: ``$POSVIZ_NGINX`` if set, else on PATH, or where Debian puts it (/usr/sbin is not on a
    normal user's PATH)."""
    if "POSVIZ_NGINX" in os.environ:
        given = os.environ["POSVIZ_NGINX"]
        return given if os.access(given, os.X_OK) else None
    found = shutil.which("nginx")
    if found:
        return found
    for candidate in ("/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def cores() -> int:
    """The cores this process may run on (a container's limit too, when it is set through the CPU affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def lab_workers(processes: int, n_cores: int) -> list[int]:
    """Training workers per process: cores - 1 shared out, the first processes taking the remainder, at least one
    each (two processes on two cores train one run each)."""
    budget = max(n_cores - 1, 0)
    share, extra = divmod(budget, processes) if processes else (0, 0)
    return [max(1, share + (1 if i < extra else 0)) for i in range(processes)]


def streamlit_static() -> tuple[Path, str]:
    """The installed Streamlit's folder of static files (its ``static/static``) and its version."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("serve: Streamlit is not installed: python -m pip install -r requirements.txt")
    return Path(spec.submodule_search_locations[0]) / "static" / "static", importlib.metadata.version("streamlit")


def static_mirror(run_dir: Path) -> Path:
    """A copy of Streamlit's static files with a ``.gz`` beside every text file, made once per Streamlit version;
    returns the folder nginx uses as ``root`` for ``/static/``. A copy rather than the package's own folder: nginx's
    workers may run as another user (``nobody`` under root) that cannot read a home directory, and the package's
    folder may not be writable."""
    source, version = streamlit_static()
    root = run_dir / f"static-{version}"
    stamp = root / ".complete"
    marker = f"{source}\n{version}\n"
    if stamp.exists() and stamp.read_text(encoding="utf-8") == marker:
        return root
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(source, root / "static")
    raw = packed = 0
    for path in sorted((root / "static").rglob("*")):
        if not path.is_file() or path.suffix not in COMPRESSIBLE:
            continue
        data = path.read_bytes()
        small = gzip.compress(data, compresslevel=9, mtime=0)
        if len(small) < 0.9 * len(data):
            path.with_name(path.name + ".gz").write_bytes(small)
            raw, packed = raw + len(data), packed + len(small)
    stamp.write_text(marker, encoding="utf-8")
    log(
        f"static files of Streamlit {version} copied to {root}, text gzipped once: "
        f"{raw / 2**20:.1f} MiB -> {packed / 2**20:.1f} MiB"
    )
    return root


def resolve(upstream: str) -> str:
    """``host:port`` with the host as an IPv4 address: nginx names the process that answered by its address
    (``$upstream_addr``), and the sticky cookie is read from that name."""
    host, sep, port = upstream.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise SystemExit(f"serve: an upstream is HOST:PORT, got {upstream!r}")
    try:
        address = socket.getaddrinfo(host, int(port), socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except (OSError, IndexError):
        raise SystemExit(f"serve: cannot find the IPv4 address of {host!r} (upstream {upstream})") from None
    return f"{address}:{port}"


def render_config(
    *, run_dir: Path, listen: str, port: int, upstreams: list[str], static_root: Path, local: bool
) -> str:
    """The nginx configuration for ``upstreams`` (``host:port`` each, named s1, s2, ... in the sticky cookie)."""
    names = [f"s{i + 1}" for i in range(len(upstreams))]
    any_servers = "\n".join(f"        server {a} max_fails=1 fail_timeout=5s;" for a in upstreams)
    pinned = []
    for name, address in zip(names, upstreams, strict=True):
        backups = "".join(f"\n        server {b} backup;" for b in upstreams if b != address)
        pinned.append(
            f"    upstream posviz_{name} {{\n        server {address} max_fails=1 fail_timeout=5s;{backups}\n    }}"
        )
    route_map = "\n".join(f"        {name} posviz_{name};" for name in names)
    served_map = "\n".join(
        f'        "~(^|, ){re.escape(address)}$" {name};' for name, address in zip(names, upstreams, strict=True)
    )
    user = "user nobody nogroup;\n" if os.geteuid() == 0 else ""
    values = {
        "RUN_DIR": str(run_dir),
        "USER": user,
        "LISTEN": listen,
        "PORT": str(port),
        "ANY_SERVERS": any_servers,
        "PINNED_UPSTREAMS": "\n\n".join(pinned),
        "ROUTE_MAP": route_map,
        "SERVED_MAP": served_map,
        "STATIC_ROOT": str(static_root),
        "CONNECT_TIMEOUT": "2s" if local else "5s",
    }
    text = TEMPLATE.read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    left = re.findall(r"\{\{[A-Z_]+\}\}", text)
    if left:
        raise RuntimeError(f"nginx template placeholders left unfilled: {left}")
    return text


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether the server at ``url`` answers Streamlit's health check. Anything else is "not yet": nothing listening,
    or an answer that is no HTTP response — a connection to a loopback port that nothing listens on yet can connect
    to itself (TCP simultaneous open) and read back its own request."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout) as response:
            return response.status == 200 and response.read().strip() == b"ok"
    except (urllib.error.URLError, http.client.HTTPException, OSError):
        return False


def port_free(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError:
            return False
    return True


def _die_with_parent() -> None:
    """In the child: get SIGTERM when serve.py dies, however it dies (Linux), so no app outlives the proxy."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def stop_process(proc: subprocess.Popen | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@dataclass
class App:
    """One ``streamlit run app.py`` process."""

    index: int
    port: int
    env: dict[str, str]
    log_path: Path
    proc: subprocess.Popen | None = None
    started: float = 0.0
    delay: float = RESTART_DELAY
    restart_at: float | None = None
    extra: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(self.port)]
        command += ["--server.address", "127.0.0.1", *self.extra]
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self.started = time.monotonic()
        self.restart_at = None
        self.log_path.with_name(f"app-{self.index}.pid").write_text(f"{self.proc.pid}\n", encoding="utf-8")


class Server:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.nginx_bin = find_nginx()
        self.run_dir = Path(args.run_dir or f"/tmp/posviz-serve-{args.port}").resolve()
        self.apps: list[App] = []
        self.nginx: subprocess.Popen | None = None
        self.stopping = False

    def prepare(self) -> None:
        args = self.args
        if self.nginx_bin is None:
            raise SystemExit(f"serve: {INSTALL_NGINX}")
        if args.processes < 0 or (args.processes == 0 and not args.upstream):
            raise SystemExit("serve: give the number of app processes (1 or more), or --upstream for ones elsewhere")
        first = args.app_port or args.port + 1
        ports = list(range(first, first + args.processes))
        if args.port in ports:
            raise SystemExit(f"serve: the proxy's port {args.port} is one of the app ports {ports[0]}-{ports[-1]}")
        if not port_free(args.listen, args.port):
            raise SystemExit(f"serve: port {args.port} is in use on {args.listen}; choose another PORT")
        busy = [p for p in ports if not port_free("127.0.0.1", p)]
        if busy:
            raise SystemExit(f"serve: app port(s) {busy} in use; choose another PORT or --app-port")
        for sub in ("logs", "temp"):
            (self.run_dir / sub).mkdir(parents=True, exist_ok=True)
        self.run_dir.chmod(0o755)  # nginx's workers (nobody, under root) read the static copy inside it

        lab_dir = os.environ.get("POSVIZ_LAB_DIR") or str(
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "posviz" / "lab"
        )
        given_workers = os.environ.get("POSVIZ_LAB_WORKERS")
        workers = lab_workers(args.processes, cores())
        for i, port in enumerate(ports):
            env = {
                **os.environ,
                "PYTHONUNBUFFERED": "1",
                "POSVIZ_INSTANCE": str(i + 1),
                "POSVIZ_LAB_DIR": lab_dir,
                "POSVIZ_LAB_WORKERS": given_workers or str(workers[i]),
            }
            self.apps.append(App(i + 1, port, env, self.run_dir / "logs" / f"app-{i + 1}.log", extra=args.streamlit))
        if self.apps:
            where = f"port {ports[0]}" if len(ports) == 1 else f"ports {ports[0]}-{ports[-1]}"
            log(
                f"{len(self.apps)} app process(es) on {where}, training workers "
                f"{[a.env['POSVIZ_LAB_WORKERS'] for a in self.apps]}, finished runs in {lab_dir}"
            )

        upstreams = [f"127.0.0.1:{p}" for p in ports] + [resolve(u) for u in args.upstream]
        if len(set(upstreams)) < len(upstreams):
            raise SystemExit(f"serve: an app process is named twice among {upstreams}")
        config = render_config(
            run_dir=self.run_dir,
            listen=args.listen,
            port=args.port,
            upstreams=upstreams,
            static_root=static_mirror(self.run_dir),
            local=not args.upstream,
        )
        self.conf = self.run_dir / "nginx.conf"
        self.conf.write_text(config, encoding="utf-8")
        check = subprocess.run(self._nginx_command("-t"), capture_output=True, text=True)
        if check.returncode != 0:
            raise SystemExit(f"serve: nginx refused the configuration {self.conf}:\n{check.stderr}")

    def _nginx_command(self, *extra: str) -> list[str]:
        return [
            self.nginx_bin,
            "-p",
            str(self.run_dir),
            "-c",
            str(self.conf),
            "-e",
            str(self.run_dir / "logs" / "error.log"),
            *extra,
        ]

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + HEALTH_TIMEOUT
        waiting = {a.url: a for a in self.apps} | {f"http://{u}": None for u in self.args.upstream}
        while waiting:
            for url in list(waiting):
                app = waiting[url]
                if app is not None and app.proc.poll() is not None:
                    tail = app.log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
                    raise SystemExit(f"serve: app process {app.index} exited with code {app.proc.returncode}:\n{tail}")
                if healthy(url):
                    del waiting[url]
            if self.stopping:
                raise SystemExit(0)
            if waiting and time.monotonic() > deadline:
                raise SystemExit(f"serve: no answer from {', '.join(waiting)}/_stcore/health in {HEALTH_TIMEOUT:.0f} s")
            time.sleep(0.25)

    def run(self) -> int:
        self.prepare()
        for app in self.apps:
            app.start()
        self.wait_healthy()
        nginx_log = (self.run_dir / "logs" / "nginx.out").open("ab")
        self.nginx = subprocess.Popen(
            self._nginx_command(),
            stdin=subprocess.DEVNULL,
            stdout=nginx_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        shown = "127.0.0.1" if self.args.listen in ("0.0.0.0", "127.0.0.1") else self.args.listen
        url = f"http://{shown}:{self.args.port}"
        deadline = time.monotonic() + 30
        while not healthy(url):
            if self.nginx.poll() is not None or time.monotonic() > deadline:
                error = (self.run_dir / "logs" / "error.log").read_text(errors="replace")[-3000:]
                raise SystemExit(f"serve: nginx did not start (see {self.run_dir}/logs):\n{error}")
            if self.stopping:
                return 0
            time.sleep(0.1)
        print(f"{READY}{url}", flush=True)
        where = "every address of this machine" if self.args.listen == "0.0.0.0" else self.args.listen
        log(f"listening on {where}, port {self.args.port}; logs in {self.run_dir}/logs; Ctrl-C stops")
        return self.watch()

    def watch(self) -> int:
        while not self.stopping:
            if self.nginx.poll() is not None:
                log(f"nginx exited with code {self.nginx.returncode}; stopping (see {self.run_dir}/logs/error.log)")
                return 1
            now = time.monotonic()
            for app in self.apps:
                if app.restart_at is None and app.proc.poll() is not None:
                    lived = now - app.started
                    app.delay = RESTART_DELAY if lived > 60 else min(app.delay * 2, 300.0)
                    app.restart_at = now + app.delay
                    log(
                        f"app process {app.index} (port {app.port}) exited with code {app.proc.returncode}; its "
                        f"sessions move to the others; starting it again in {app.delay:.0f} s"
                    )
                elif app.restart_at is not None and now >= app.restart_at:
                    if port_free("127.0.0.1", app.port):
                        app.start()
                    else:
                        app.restart_at = now + app.delay
            time.sleep(0.2)
        return 0

    def stop(self, *_) -> None:
        self.stopping = True

    def shutdown(self) -> None:
        stop_process(self.nginx)  # SIGTERM: nginx's fast shutdown (a graceful one waits for every websocket)
        for app in self.apps:
            if app.proc is not None and app.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(app.proc.pid, signal.SIGTERM)
        for app in self.apps:
            stop_process(app.proc)


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="deploy/serve.sh", description=__doc__.split("\n\n")[0])
    parser.add_argument("processes", type=int, help="how many app processes to start on this machine")
    parser.add_argument("port", type=int, nargs="?", default=8501, help="the port students open (default 8501)")
    parser.add_argument("--listen", default="0.0.0.0", help="the address nginx listens on (default: every address)")
    parser.add_argument("--app-port", type=int, help="the first app process's port (default PORT+1)")
    parser.add_argument(
        "--run-dir", help="nginx's prefix: config, logs, pid, static copy (default /tmp/posviz-serve-PORT)"
    )
    parser.add_argument(
        "--upstream", action="append", default=[], metavar="HOST:PORT", help="an app process running elsewhere"
    )
    parser.add_argument(
        "--streamlit",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for every app process, e.g. --streamlit=--server.enableWebsocketCompression=true",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    server = Server(parse(argv))
    signal.signal(signal.SIGINT, server.stop)
    signal.signal(signal.SIGTERM, server.stop)
    signal.signal(signal.SIGHUP, server.stop)
    try:
        return server.run()
    except SystemExit as exc:
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr, flush=True)
            return 1
        return exc.code or 0
    finally:
        server.shutdown()
        if server.nginx is not None:
            log(f"stopped nginx and {len(server.apps)} app process(es)")


if __name__ == "__main__":
    sys.exit(main())
