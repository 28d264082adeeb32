"""A killed app process behind deploy/serve.sh costs only its own sessions: they reconnect through the proxy to the
other process and get the message that says so, the sessions on the other process carry on untouched, the proxy
keeps answering, and the dead process is started again without pulling the moved browsers back."""

from __future__ import annotations

import os
import signal

import pytest

from ._deploy import Browser, catalog_text, healthy, serve, wait_until

RESTART_TIMEOUT = 180.0


@pytest.fixture(scope="module")
def served():
    with serve(2) as running:
        yield running


@pytest.fixture
def both_up(served):
    """Both app processes answering (the previous test may have killed one, which serve.sh starts again)."""
    assert wait_until(lambda: all(healthy(served.app_url(i)) for i in range(2)), RESTART_TIMEOUT), served.output()
    return served


def _browsers_on(served, index: int, count: int) -> list[Browser]:
    """``count`` new browsers whose first visit landed on app process ``index``."""
    found = []
    for _ in range(8 * count):
        browser = Browser(served.url)
        if served.index_of(browser.get("/").upstream) == index:
            browser.get("/_stcore/health")
            found.append(browser)
            if len(found) == count:
                return found
    pytest.fail(f"no first visit reached app process {index}")


def _kill(served, index: int) -> None:
    pid = served.pid(index)
    os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid), 10)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_killed_process_costs_only_its_own_sessions(both_up):
    served = both_up
    victims = _browsers_on(served, 0, 2)
    survivor = _browsers_on(served, 1, 1)[0]
    langs = ["en", "zh"]
    lost = []
    for victim, lang in zip(victims, langs, strict=True):
        assert served.index_of(victim.connect()) == 0
        run = victim.run("sinusoidal", f"n=64&d=32&lang={lang}")
        assert run.finished and run.toasts.count(catalog_text(lang, "server.moved")) == 0
        lost.append(run.session_id)
    assert served.index_of(survivor.connect()) == 1
    kept = survivor.run("rope", "head_dim=64")
    assert kept.finished and kept.charts > 0

    _kill(served, 0)

    for victim, lang, old in zip(victims, langs, lost, strict=True):
        victim.close()
        # the frontend's reconnect: health check, then a websocket naming the session it had
        health = victim.get("/_stcore/health")
        assert health.status == 200 and served.index_of(health.upstream) == 1
        assert victim.cookie("posviz_server") == "s2"  # the sticky cookie follows the browser to its new process
        assert served.index_of(victim.connect(previous=old)) == 1
        run = victim.run("sinusoidal", f"n=64&d=32&lang={lang}")
        assert run.finished and run.charts > 0 and not run.exceptions
        assert run.session_id != old
        assert run.toasts.count(catalog_text(lang, "server.moved")) == 1
        victim.close()

    # the session on the surviving process: same websocket, same session, no message
    again = survivor.run("rope", "head_dim=64")
    assert again.finished and again.charts > 0
    assert again.session_id == kept.session_id
    assert catalog_text("en", "server.moved") not in again.toasts
    survivor.close()

    # the proxy keeps answering new browsers
    for _ in range(4):
        newcomer = Browser(served.url)
        assert newcomer.get("/").status == 200
        newcomer.connect()
        assert newcomer.run("", "").finished
        newcomer.close()


def test_the_dead_process_comes_back_and_moved_browsers_stay_where_they_went(both_up):
    served = both_up
    moved = _browsers_on(served, 0, 1)[0]
    _kill(served, 0)
    assert served.index_of(moved.get("/_stcore/host-config").upstream) == 1

    assert wait_until(lambda: healthy(served.app_url(0)), RESTART_TIMEOUT), served.output()
    assert "app process 1" in served.output()  # serve.sh said what happened
    for path in ("/", "/_stcore/health", "/_stcore/host-config"):
        assert served.index_of(moved.get(path).upstream) == 1, path
    # and new browsers use the restarted process again
    assert {served.index_of(Browser(served.url).get("/").upstream) for _ in range(4)} == {0, 1}


def test_a_real_browser_on_a_killed_process_is_told_once_it_clicks(both_up, driver, chromium_path):

    from ._server import fresh_chromium

    served = both_up
    with fresh_chromium(driver, chromium_path) as browser:
        context = browser.new_context(viewport={"width": 1280, "height": 720}, locale="en-US")
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{served.url}/sinusoidal?n=64&d=32")
        page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")

        def process() -> int:
            return int({c["name"]: c["value"] for c in context.cookies()}["posviz_server"][1:]) - 1

        was = process()
        _kill(served, was)
        # the frontend notices, reconnects through the proxy and lands on the other process
        assert wait_until(lambda: process() == 1 - was, 60)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stApp]').dataset.testConnectionState === 'CONNECTED'"
            " && document.querySelector('[data-testid=stApp]').dataset.testScriptState === 'notRunning'"
        )
        assert page.locator("[data-testid='stToast']").count() == 0

        page.get_by_text("Presentation mode").first.click()  # the next click runs the page in the new session
        toast = page.locator("[data-testid='stToast']")
        toast.first.wait_for()
        assert catalog_text("en", "server.moved") in toast.first.inner_text()
        page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
        assert page.locator("[data-testid='stException']").count() == 0
        assert "n=64" in page.url and "d=32" in page.url and "present=true" in page.url
