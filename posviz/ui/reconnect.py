"""Tell a student whose session was lost, and why, when the page runs again in a new one.

Behind a proxy with several app processes (``deploy/``), a session lives in the process that holds its websocket.
When that process stops, the browser reconnects through the proxy to another process, which does not know the
session and starts a new one: the page runs again from its link on the next click, but what lived only in the
old session (an uploaded file, a table loaded in it) is gone. Streamlit's frontend sends the id of the session it
had as the third entry of the websocket's ``Sec-WebSocket-Protocol`` header (``streamlit``, the XSRF token, the
previous session id), and ``st.context.headers`` gives the headers of that handshake. A new session whose
handshake names a session other than itself is such a reconnect: a process that still had the old session would
have resumed it instead.

The same happens on one server, for two reasons that deserve different sentences: the server was restarted, or
the browser stayed away longer than ``server.disconnectedSessionTTL`` (2 minutes by default) and the server let
the session go. The process remembers the ids of the sessions it ran (the most recent ``REMEMBERED``, about
100 bytes each), which tells the second case from the first.
"""

from __future__ import annotations

import threading

import streamlit as st

from . import internals
from .i18n import t

CHECKED = "posviz.reconnect.checked"
#: How many session ids the process keeps (at most about 1 MB); a session older than that reads as "moved".
REMEMBERED = 10_000

_sessions: dict[str, None] = {}  # ids of the sessions this process ran, oldest first
_lock = threading.Lock()


def previous_session_id() -> str | None:
    """The session id the browser had before this websocket, from the handshake's subprotocols; None on a first
    connection (or outside a browser session)."""
    try:
        raw = st.context.headers.get("Sec-WebSocket-Protocol") or ""
    except Exception:  # no browser context (bare script runs, AppTest)
        return None
    entries = [entry.strip() for entry in raw.split(",")]
    return entries[2] if len(entries) >= 3 and entries[2] else None


def _ran_here(previous: str, current: str) -> bool:
    """Whether this process ran ``previous``; records ``current`` as run here."""
    with _lock:
        known = previous in _sessions
        _sessions[current] = None
        while len(_sessions) > REMEMBERED:
            del _sessions[next(iter(_sessions))]
    return known


def lost_session() -> str | None:
    """Decided on a session's first run: ``"moved"`` when the browser had a session in another process (or in
    this one before it restarted), ``"expired"`` when this process had it and let it go, None otherwise (a first
    visit, or a session resumed by this process)."""
    if CHECKED in st.session_state:
        return None
    st.session_state[CHECKED] = True
    session = internals.session_id()
    if session is None:
        return None
    previous = previous_session_id()
    known = _ran_here(previous or "", session)
    if previous is None or previous == session:
        return None
    return "expired" if known else "moved"


def notice() -> None:
    """Once, on the first run of a session that replaced a lost one: say what happened in a toast."""
    lost = lost_session()
    if lost:
        text = t("server.moved" if lost == "moved" else "server.expired")
        st.toast(text, icon=":material/sync_problem:", duration="long")
