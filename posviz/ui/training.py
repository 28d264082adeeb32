"""The app's one training queue, shared by every session, and each session's name in it.

``queue()`` is the process-wide ``posviz.lab.TrainingQueue`` (its folder and number of workers from
``POSVIZ_LAB_DIR`` and ``POSVIZ_LAB_WORKERS``), made on first use; its workers start with the first run. ``waiter()``
is this browser session's id in the queue, kept in ``st.session_state``: a session that reconnects keeps it and sees
its runs again, and a new tab is a new waiter.
"""

from __future__ import annotations

import uuid

import streamlit as st

WAITER = "lab.waiter"


def _close(queue) -> None:
    queue.close()


@st.cache_resource(show_spinner=False, on_release=_close)
def queue():
    """The training queue of this server process."""
    from posviz import lab

    return lab.TrainingQueue()


def waiter() -> str:
    """This session's name in the queue, made once per session."""
    return st.session_state.setdefault(WAITER, uuid.uuid4().hex)
