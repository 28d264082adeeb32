"""Fixtures of the app tests. AppTest resolves app.py and the pages from the repository root."""

from __future__ import annotations

import logging
import os
import sys

import pytest

from ._support import ROOT, open_page

if str(ROOT) not in sys.path:  # posviz importable from scripts AppTest runs (from_function too)
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session", autouse=True)
def _repo_root():
    """Run from the repository root: app.py opens ``assets/...`` and ``page_scripts/...`` relative to it."""
    previous = os.getcwd()
    os.chdir(ROOT)
    # Streamlit logs "missing ScriptRunContext" for every cached call made outside a script run; keep the
    # report readable (errors still show).
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    yield
    os.chdir(previous)


@pytest.fixture(scope="session")
def default_view():
    """``default_view(page, lang="en")``: the page opened with no query string, run once and shared between the
    tests of a session. Read it, never interact with it (use ``open_page`` for a view of your own)."""
    views = {}

    def get(page: str, lang: str = "en"):
        if (page, lang) not in views:
            views[page, lang] = open_page(page, lang=lang)
        return views[page, lang]

    return get


@pytest.fixture
def views_in_english():
    """A test of views starts in English with an empty store (the process's, shared with the other tests), and
    leaves it empty: ``pytestmark = pytest.mark.usefixtures("views_in_english")``."""
    import streamlit as st

    from posviz.ui import cache

    cache.TABLES.clear()
    st.session_state["lang"] = "en"
    yield
    st.session_state.pop("lang", None)
    cache.TABLES.clear()


def pytest_terminal_summary(terminalreporter):
    """How many states the fuzz test visited on each page (links opened plus control moves)."""
    fuzz = sys.modules.get(f"{__package__}.test_fuzz")
    if fuzz is not None and fuzz.STATES:
        counts = ", ".join(f"{page} {count}" for page, count in fuzz.STATES.items())
        terminalreporter.write_line(f"fuzz states per page: {counts}")
