"""deploy/serve.sh as a lecturer and a script use it: it refuses to run without nginx and says how to install it,
it fronts app processes that run elsewhere (``N = 0`` and ``--upstream``), it shares the training workers out
among the processes, and Ctrl-C stops nginx and every process it started."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import tempfile
import time
from urllib.parse import urlsplit

from deploy import serve as serve_script

from ._deploy import ROOT, SERVE, Browser, free_block, healthy, serve, serve_env


def test_without_nginx_it_says_how_to_install_it_and_fails():
    port = free_block(2)
    with tempfile.TemporaryDirectory() as run_dir:
        env = {**serve_env(run_dir), "POSVIZ_NGINX": "/nonexistent/nginx"}
        done = subprocess.run(
            ["bash", str(SERVE), "1", str(port), "--listen", "127.0.0.1", "--run-dir", run_dir],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert "sudo apt-get install nginx" in done.stderr
    assert "posviz: http" not in done.stdout
    assert not healthy(f"http://127.0.0.1:{port + 1}")  # no app process was left behind


def test_training_workers_are_shared_out_to_cores_minus_one_and_at_least_one_each():
    for n_cores, processes in itertools.product(range(1, 33), range(1, 17)):
        workers = serve_script.lab_workers(processes, n_cores)
        assert len(workers) == processes
        assert min(workers) >= 1
        if n_cores - 1 >= processes:
            assert sum(workers) == n_cores - 1
            assert max(workers) - min(workers) <= 1
        else:
            assert workers == [1] * processes, (n_cores, processes)


def test_it_fronts_app_processes_that_run_elsewhere(app_url):
    """The lecture-hall setup: the apps on other machines, nginx here; one plain server stands in for them."""
    elsewhere = urlsplit(app_url).netloc
    by_name = f"localhost:{urlsplit(app_url).port}"  # a host name: nginx reports the address it resolved to
    with serve(0, "--upstream", by_name) as served:
        browser = Browser(served.url)
        page = browser.get("/")
        assert page.status == 200 and page.upstream == elsewhere
        assert browser.cookie("posviz_server") == "s1"  # sticky: the cookie names the process that answered
        assert browser.connect() == elsewhere
        run = browser.run("alibi", "")
        assert run.finished and run.charts > 0 and not run.exceptions
        browser.close()
        assert served.app_ports == [] and not list(served.run_dir.glob("logs/app-*.pid"))


def test_ctrl_c_stops_nginx_and_every_app_process():
    with serve(2) as served:
        pids = [served.pid(i) for i in range(2)]
        nginx_pid = int((served.run_dir / "nginx.pid").read_text())
        os.killpg(served.proc.pid, signal.SIGINT)  # Ctrl-C: to the script's process group (the apps have their own)
        assert served.proc.wait(60) == 0
        for pid in [*pids, nginx_pid]:
            deadline = time.monotonic() + 10
            while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not os.path.exists(f"/proc/{pid}"), f"process {pid} outlived serve.sh"
        assert not healthy(served.url)
        assert not any(healthy(served.app_url(i)) for i in range(2))


def test_a_health_check_that_reads_back_its_own_request_is_not_ready():
    """On loopback, a connection to a port that nothing listens on yet can connect to itself and read its own request
    back as the answer: the health check says "not ready" (and the poll goes on) instead of raising."""
    import socket
    import threading

    from deploy.serve import healthy

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)

        def echo() -> None:
            conn, _ = server.accept()
            with conn:
                conn.sendall(conn.recv(4096))  # what a self-connected socket reads: the request itself

        thread = threading.Thread(target=echo, daemon=True)
        thread.start()
        assert healthy(f"http://127.0.0.1:{server.getsockname()[1]}") is False
        thread.join(5)
