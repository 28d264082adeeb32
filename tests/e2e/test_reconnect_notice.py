"""The message for a browser whose session was lost, on a plain ``streamlit run app.py`` server, driven over
Streamlit's websocket protocol as the frontend drives it: the handshake's ``Sec-WebSocket-Protocol`` reaches the
script through ``st.context.headers``; a new session for a browser that names a session this process never ran
(its process stopped) is told so once, in the page's language; one that names a session this process let go after
``server.disconnectedSessionTTL`` is told that instead; a first visit or a resumed session gets no message."""

from __future__ import annotations

import time
import uuid

import pytest

from ._deploy import Browser, catalog_text, serve


def _moved(run, lang: str = "en") -> int:
    return run.toasts.count(catalog_text(lang, "server.moved"))


def _expired(run, lang: str = "en") -> int:
    return run.toasts.count(catalog_text(lang, "server.expired"))


@pytest.fixture
def browser(app_url):
    opened = Browser(app_url)
    opened.get("/")
    opened.get("/_stcore/health")  # sets the XSRF cookie, as the frontend's first request does
    yield opened
    opened.close()


def test_a_first_visit_gets_no_message(browser):
    browser.connect()
    run = browser.run("sinusoidal", "n=64&d=32")
    assert run.finished and run.charts > 0 and not run.exceptions
    assert _moved(run) == 0


def test_a_reconnect_to_the_process_that_has_the_session_gets_no_message(browser):
    browser.connect()
    first = browser.run("sinusoidal", "n=64&d=32")
    browser.close()
    browser.connect(previous=first.session_id)  # a dropped connection, the same process
    again = browser.run("sinusoidal", "n=64&d=32")
    assert again.session_id == first.session_id  # resumed
    assert _moved(again) == 0 and _expired(again) == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_browser_whose_session_this_process_never_had_gets_the_message_once(browser, lang):
    lost = str(uuid.uuid4())  # the id of a session in a process that is gone
    browser.connect(previous=lost)
    query = f"n=64&d=32&lang={lang}"
    run = browser.run("sinusoidal", query)
    assert run.finished and run.charts > 0 and not run.exceptions
    assert run.session_id and run.session_id != lost
    assert _moved(run, lang) == 1 and _expired(run, lang) == 0
    # once: the reruns of the new session and a reconnect to it carry on without it
    assert _moved(browser.run("sinusoidal", query), lang) == 0
    browser.close()
    browser.connect(previous=run.session_id)
    resumed = browser.run("sinusoidal", query)
    assert resumed.session_id == run.session_id
    assert _moved(resumed, lang) == 0


def test_a_browser_away_longer_than_the_session_ttl_is_told_its_session_ended():
    ttl = 2  # seconds a disconnected session is kept (Streamlit's default: 120)
    with serve(1, f"--streamlit=--server.disconnectedSessionTTL={ttl}") as served:
        for lang in ("en", "zh"):
            browser = Browser(served.url)
            browser.get("/")
            browser.get("/_stcore/health")
            browser.connect()
            query = f"n=64&d=32&lang={lang}"
            first = browser.run("sinusoidal", query)
            assert first.finished and _expired(first, lang) == 0
            browser.close()
            time.sleep(2 * ttl + 1)
            browser.connect(previous=first.session_id)
            run = browser.run("sinusoidal", query)
            assert run.finished and run.charts > 0 and not run.exceptions
            assert run.session_id != first.session_id  # the process let the old session go
            assert _expired(run, lang) == 1 and _moved(run, lang) == 0
            assert _expired(browser.run("sinusoidal", query), lang) == 0
            browser.close()
