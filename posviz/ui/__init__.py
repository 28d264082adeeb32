"""The only part of posviz that imports Streamlit: page furniture, URL-bound controls, i18n and caches."""

from __future__ import annotations

import contextlib

import streamlit as st

from . import cache, widgets
from .i18n import LANGUAGES, current_language, t, teaching_text

__all__ = ["LANGUAGES", "cache", "current_language", "errors_shown", "intro", "show", "t", "widgets"]

#: Similarity matrices are built on at most this many evenly spaced positions.
SIMILARITY_POSITIONS = 1024


def _through_app_frame() -> None:
    """Make sure the page runs inside app.py's navigation.

    Streamlit treats a project with a ``pages/`` folder as a legacy multipage app until the main script has
    called ``st.navigation`` once; a server whose first visitor opens a page's URL directly would run that page
    alone, without the frame (no language switch, wrong menu). Leave that mode and rerun through app.py.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def intro(page: str) -> None:
    """The page's title and its teaching text (``assets/texts/<page>.<lang>.md``)."""
    _through_app_frame()
    st.title(t(f"page.{page}"))
    st.markdown(teaching_text(page))


def show(fig, *, notice: str | None = None, key: str | None = None) -> None:
    """Draw a figure full width, with its "what to notice" caption under it."""
    st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False, "toImageButtonOptions": {"scale": 3}})
    if notice:
        st.caption(notice)


@contextlib.contextmanager
def errors_shown():
    """Show a core ``ValueError`` / ``IndexError`` as a readable message instead of a traceback."""
    try:
        yield
    except (ValueError, IndexError) as exc:
        st.error(t("error.bad_input", message=str(exc)))
