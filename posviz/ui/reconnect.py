"""Tell a student whose server process went away that they are on another one now.

Behind a proxy with several app processes (``deploy/``), a session lives in the process that holds its websocket.
When that process stops, the browser reconnects through the proxy to another process, which does not know the
session and starts a new one: the page runs again from its link on the next click, but what lived only in the
old process (an uploaded file, a table loaded in the session) is gone. Streamlit's frontend sends the id of the
session it had as the third entry of the websocket's ``Sec-WebSocket-Protocol`` header (``streamlit``, the XSRF
token, the previous session id), and ``st.context.headers`` gives the headers of that handshake. A new session
whose handshake names a session other than itself is such a reconnect: a process that still had the old session
would have resumed it instead. The same holds for a single server that was restarted.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .i18n import t

CHECKED = "posviz.reconnect.checked"


def previous_session_id() -> str | None:
    """The session id the browser had before this websocket, from the handshake's subprotocols; None on a first
    connection (or outside a browser session)."""
    try:
        raw = st.context.headers.get("Sec-WebSocket-Protocol") or ""
    except Exception:  # no browser context (bare script runs, AppTest)
        return None
    entries = [entry.strip() for entry in raw.split(",")]
    return entries[2] if len(entries) >= 3 and entries[2] else None


def moved() -> bool:
    """Whether this session was created for a browser that had another session (which this process does not
    have). Decided on the session's first run only."""
    if CHECKED in st.session_state:
        return False
    st.session_state[CHECKED] = True
    previous = previous_session_id()
    ctx = get_script_run_ctx()
    return previous is not None and ctx is not None and previous != ctx.session_id


def notice() -> None:
    """Once, on the first run of a session that replaced one lost with its server process: say so in a toast."""
    if moved():
        st.toast(t("server.moved"), icon=":material/sync_problem:", duration="long")
