"""Presentation mode for classrooms: larger type, figures sized for a projector, page controls folded away.

The switch lives in the sidebar and in the URL (``?present=true``), so a teacher can share a link that opens
straight into it.
"""

from __future__ import annotations

import contextlib

import streamlit as st

from .i18n import t

KEY = "present"
FIGURE_FONT_SIZE = 20

_CSS = """
<style>
  [data-testid="stMain"] { font-size: 1.3rem; }
  [data-testid="stMain"] h1 { font-size: 3.2rem; }
  [data-testid="stMain"] p, [data-testid="stMain"] li { font-size: 1.3rem; line-height: 1.6; }
  [data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.15rem; }
  [data-testid="stMainBlockContainer"] { max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
</style>
"""


def presenting() -> bool:
    """Whether presentation mode is on in this session."""
    return bool(st.session_state.get(KEY, False))


def toggle() -> bool:
    """The sidebar switch (bound to the URL as ``present``); injects the classroom style when on."""
    on = st.toggle(t("present.toggle"), key=KEY, bind="query-params", help=t("present.help"))
    if on:
        st.html(_CSS)
    return on


@contextlib.contextmanager
def controls():
    """Where a page puts its controls: inline normally, in a folded expander in presentation mode."""
    if presenting():
        with st.expander(t("present.controls"), expanded=False, icon=":material/tune:"):
            yield
    else:
        yield
