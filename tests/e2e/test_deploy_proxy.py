"""deploy/serve.sh with two app processes behind nginx: each browser stays on one process (its page loads, health
checks and websocket, over reruns and a reconnect), browsers are spread over both, the app processes are started
as the README starts the app with the lab's settings shared out, and Streamlit's static files are served
gzip-compressed by nginx itself, so that a first visit in a real browser moves far fewer bytes than directly."""

from __future__ import annotations

import gzip
import os
import re
import time
from pathlib import Path

import pytest
import streamlit

from ._deploy import ROOT, Browser, serve

STATIC = Path(streamlit.__file__).parent / "static" / "static"
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def served():
    with serve(2) as running:
        yield running


def _proc(pid: int, name: str) -> list[str]:
    return Path(f"/proc/{pid}/{name}").read_bytes().decode().split("\0")


def test_app_processes_run_the_app_as_the_readme_starts_it_with_the_lab_shared_out(served):
    envs = []
    for i, port in enumerate(served.app_ports):
        pid = served.pid(i)
        command = [part for part in _proc(pid, "cmdline") if part]
        run = command.index("run")
        assert command[run - 1 : run + 2] == ["streamlit", "run", "app.py"], command
        # only what a process behind a proxy needs: its own port, on loopback
        assert command[run + 2 :] == ["--server.port", str(port), "--server.address", "127.0.0.1"]
        assert Path(f"/proc/{pid}/cwd").resolve() == ROOT
        env = dict(item.split("=", 1) for item in _proc(pid, "environ") if "=" in item)
        assert env["POSVIZ_INSTANCE"] == str(i + 1)
        envs.append(env)

    # one lab directory for all, so a run finished by one process is found by the others
    lab_dirs = {env["POSVIZ_LAB_DIR"] for env in envs}
    assert len(lab_dirs) == 1
    assert Path(lab_dirs.pop()).is_relative_to(served.run_dir / "cache")  # the default: under XDG_CACHE_HOME
    # training workers: cores - 1 in all, at least one per process, as even as whole numbers allow
    workers = [int(env["POSVIZ_LAB_WORKERS"]) for env in envs]
    cores = len(os.sched_getaffinity(0))
    assert min(workers) >= 1
    assert max(workers) - min(workers) <= 1
    assert sum(workers) == max(cores - 1, len(workers))


def test_one_browser_stays_on_one_process_over_page_loads_reruns_and_a_reconnect(served):
    browser = Browser(served.url)
    first = browser.get("/")
    assert first.status == 200 and first.upstream in {served.upstream(0), served.upstream(1)}
    mine = first.upstream
    assert browser.cookie("posviz_server")  # the sticky cookie, set by nginx on the first visit
    for path in ("/sinusoidal?n=64&d=32", "/_stcore/host-config", "/_stcore/health", "/rope", "/"):
        assert browser.get(path).upstream == mine, path

    assert browser.connect() == mine  # the websocket's handshake, read from the 101 response
    session = None
    for query in ("n=64&d=32", "n=128&d=32", "n=64&d=16&tab=shift", "n=64&d=32"):
        run = browser.run("sinusoidal", query)
        assert run.finished and not run.exceptions and run.charts > 0, query
        session = session or run.session_id
        assert run.session_id == session  # every rerun in the same session, hence the same process
        assert browser.get("/_stcore/health").upstream == mine

    # the frontend reconnects with the id it had: back on the same process, which resumes the very session
    browser.close()
    assert browser.connect(previous=session) == mine
    again = browser.run("sinusoidal", "n=64&d=32")
    assert again.finished and again.session_id == session
    browser.close()


def test_browsers_are_spread_over_both_processes_and_their_websockets_follow(served):
    browsers = [Browser(served.url) for _ in range(6)]
    first = [b.get("/").upstream for b in browsers]
    counts = {u: first.count(u) for u in (served.upstream(0), served.upstream(1))}
    assert set(first) == set(counts), first
    assert max(counts.values()) - min(counts.values()) <= 1, counts  # first visits take the processes in turn
    for browser, upstream in zip(browsers, first, strict=True):
        assert browser.connect() == upstream
        assert browser.run("", "").finished
        browser.close()


def _index_js(browser: Browser) -> str:
    page = browser.get("/")
    html = gzip.decompress(page.body) if page.headers.get("content-encoding") == "gzip" else page.body
    return re.search(rb'src="\./(static/js/index\.[^"]+\.js)"', html).group(1).decode()


@pytest.mark.parametrize("bundle", ["index", "PlotlyChart"])
def test_static_bundles_come_from_nginx_gzipped_and_byte_identical(served, bundle):
    browser = Browser(served.url)
    if bundle == "index":
        path = _index_js(browser)
    else:
        path = "static/js/" + next(STATIC.glob("js/PlotlyChart.*.js")).name  # plotly's 4.7 MB bundle
    original = (STATIC.parent / path).read_bytes()

    packed = browser.get("/" + path, gzip=True)
    assert packed.headers.get("content-encoding") == "gzip"
    assert "accept-encoding" in packed.headers.get("vary", "").lower()
    assert gzip.decompress(packed.body) == original
    assert len(packed.body) < 0.4 * len(original)
    assert packed.upstream is None  # served by nginx from its copy, not by an app process
    assert "immutable" in packed.headers.get("cache-control", "")

    plain = browser.get("/" + path, gzip=False)
    assert "content-encoding" not in plain.headers
    assert plain.body == original


def test_a_static_file_missing_from_the_copy_is_fetched_from_the_app_and_gzipped(served):
    """What happens when nginx's machine has another Streamlit version than the app processes."""
    name = sorted(STATIC.glob("js/*.js"), key=lambda p: p.stat().st_size)[-5].name
    copy = next(served.run_dir.glob("static-*")) / "static" / "js"
    for gone in (copy / name, copy / f"{name}.gz"):
        gone.unlink(missing_ok=True)
    browser = Browser(served.url)
    browser.get("/")
    response = browser.get(f"/static/js/{name}", gzip=True)
    assert response.upstream in {served.upstream(0), served.upstream(1)}
    assert response.headers.get("content-encoding") == "gzip"
    assert gzip.decompress(response.body) == (STATIC / "js" / name).read_bytes()


def _first_visit(driver, chromium_path: str, url: str) -> dict[str, tuple[int, str | None]]:
    """Every HTTP response a fresh headless Chromium receives while it opens the home page at ``url`` and draws
    its chart: URL path -> (bytes on the wire, headers included; Content-Encoding)."""

    from ._server import VIEWPORT, fresh_chromium

    received: dict[str, tuple[int, str | None]] = {}
    with fresh_chromium(driver, chromium_path) as browser:
        context = browser.new_context(viewport=VIEWPORT, locale="en-US")
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        urls: dict[str, tuple[str, str | None]] = {}

        def response(event):
            headers = {k.lower(): v for k, v in event["response"]["headers"].items()}
            urls[event["requestId"]] = (event["response"]["url"], headers.get("content-encoding"))

        def finished(event):
            target, encoding = urls.get(event["requestId"], ("", None))
            if target.startswith(url):
                received[target[len(url) :].split("?")[0]] = (int(event["encodedDataLength"]), encoding)

        cdp.on("Network.responseReceived", response)
        cdp.on("Network.loadingFinished", finished)
        page.goto(url + "/", timeout=120_000)
        page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg", timeout=120_000)
        quiet, seen = time.monotonic(), len(received)
        while time.monotonic() - quiet < 3:  # until nothing more arrives for 3 s (lazy chunks, fonts)
            page.wait_for_timeout(250)
            if len(received) != seen:
                quiet, seen = time.monotonic(), len(received)
    return received


def test_a_first_visit_through_the_proxy_moves_far_fewer_bytes_than_directly(served, driver, chromium_path):
    direct = _first_visit(driver, chromium_path, served.app_url(0))
    proxied = _first_visit(driver, chromium_path, served.url)
    static_direct = {p: n for p, (n, _) in direct.items() if p.startswith("/static/")}
    static_proxied = {p: n for p, (n, _) in proxied.items() if p.startswith("/static/")}
    assert set(static_direct) == set(static_proxied)  # the same files, so the same page
    assert any("PlotlyChart" in p for p in static_direct)

    # directly, every static file travels whole: at least its size on disk
    on_disk = sum((STATIC.parent / p.lstrip("/")).stat().st_size for p in static_direct)
    assert sum(static_direct.values()) >= on_disk
    # through the proxy every script and style sheet is gzipped (but those of a few bytes, which gzip would grow)
    for path, (_, encoding) in proxied.items():
        if path.endswith((".js", ".css")) and (STATIC.parent / path.lstrip("/")).stat().st_size >= 1024:
            assert encoding == "gzip", path

    total_direct = sum(n for n, _ in direct.values())
    total_proxied = sum(n for n, _ in proxied.values())
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "first-visit-bytes.txt").write_text(
        f"home page, first visit, headless Chromium, {len(direct)} responses\n"
        f"static files on disk: {on_disk / 2**20:.2f} MiB\n"
        f"directly from one app process: {total_direct / 2**20:.2f} MiB\n"
        f"through nginx (deploy/serve.sh): {total_proxied / 2**20:.2f} MiB\n",
        encoding="utf-8",
    )
    assert total_proxied < 0.45 * total_direct, (total_proxied, total_direct)


def test_a_checkpoint_of_several_megabytes_uploads_through_the_proxy(served, driver, chromium_path, tmp_path):
    """The upload goes to the process that holds the browser's session (Streamlit refuses it anywhere else) and
    is larger than nginx's default body limit of 1 MB."""
    import numpy as np
    from safetensors.numpy import save_file

    from ._server import VIEWPORT, fresh_chromium

    rng = np.random.default_rng(0)
    table = rng.normal(0.0, 0.02, size=(1024, 768)).astype(np.float32)  # 3 MiB, like a small BERT's table
    path = tmp_path / "model.safetensors"
    save_file({"bert.embeddings.position_embeddings.weight": table}, str(path))
    assert path.stat().st_size > 3 * 2**20

    uploads: list[tuple[int, str | None]] = []
    with fresh_chromium(driver, chromium_path) as browser:
        page = browser.new_context(viewport=VIEWPORT, locale="en-US").new_page()
        page.set_default_timeout(120_000)
        page.on(
            "response",
            lambda r: (
                uploads.append((r.status, r.headers.get("x-posviz-upstream")))
                if "/_stcore/upload_file/" in r.url and r.request.method == "PUT"
                else None
            ),
        )
        page.goto(f"{served.url}/inspect")
        page.wait_for_selector('[data-testid="stFileUploader"] input[type="file"]', state="attached")
        home = page.evaluate("() => document.cookie")  # the XSRF cookie only; the sticky one is HttpOnly
        assert "_streamlit_xsrf" in home
        page.locator('[data-testid="stFileUploader"] input[type="file"]').set_input_files(str(path))
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2")
        assert page.locator("[data-testid='stException']").count() == 0
        assert page.locator("[data-testid='stAlertContentError']").count() == 0
        text = page.locator("[data-testid='stMain']").inner_text()
        assert re.search(r"\b1,?024\b.{0,20}\b768\b", text), text[:500]  # the table's shape, read from the file
        sticky = next(c["value"] for c in page.context.cookies() if c["name"] == "posviz_server")
    assert uploads and all(status == 204 or status == 200 for status, _ in uploads), uploads
    assert {served.index_of(upstream) for _, upstream in uploads} == {int(sticky[1:]) - 1}


def test_a_cookie_naming_no_process_is_replaced_by_the_one_that_answered(served):
    """A browser from before the proxy had fewer processes (or a forged cookie) is treated as a first visit."""
    from ._deploy import cookie_for

    browser = Browser(served.url)
    browser.jar.set_cookie(cookie_for("posviz_server", "s9", served.url))
    answer = browser.get("/")
    assert answer.status == 200
    assert browser.cookie("posviz_server") == f"s{served.index_of(answer.upstream) + 1}"
    assert browser.get("/_stcore/health").upstream == answer.upstream
