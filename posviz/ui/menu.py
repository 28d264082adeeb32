"""The app's menu: Streamlit's page object of every page in ``posviz.pages``, built once per language in a server
process.

Building an ``st.Page`` resolves its script on disk (``Path.resolve``: a pure-Python walk with a system call per
folder), and ``st.page_link`` given a script path does the same again. For the 14 page objects of every run that was
about a seventh of a warm page's own time when a class opens pages on one server. Each run gets shallow copies of the
process's objects: ``st.navigation`` marks the copy it picks as the one to run (and the default page as default), and
``Page.run`` clears the mark, so two sessions running at once never share that state. Links take the process's
objects as they are (``st.page_link`` only reads them).
"""

from __future__ import annotations

import copy
import functools

import streamlit as st

from posviz.pages import BY_KEY, HOME, PAGES, SECTIONS

from . import internals
from .i18n import DEFAULT_LANGUAGE, catalog, current_language

#: Home's second name: ``/home`` opens Home too (hidden in the menu; Streamlit would otherwise answer that path with a
#: "Page not found" dialog in English).
HOME_BY_NAME = f"{HOME}-by-name"


def _title(key: str, language: str) -> str:
    name = f"page.{key}"
    return catalog(language).get(name) or catalog(DEFAULT_LANGUAGE)[name]


def _built(language: str) -> dict[str, st.Page]:
    if internals.session_id() is None:  # outside a run st.Page keeps only its title, and that must not be kept
        raise RuntimeError("the menu's pages are built inside a script run")
    return _kept(language)


@functools.cache
def _kept(language: str) -> dict[str, st.Page]:
    pages = {
        p.key: st.Page(p.file, title=_title(p.key, language), icon=p.icon, url_path=p.url_path, default=p.key == HOME)
        for p in PAGES
    }
    home = BY_KEY[HOME]
    pages[HOME_BY_NAME] = st.Page(
        home.file, title=_title(HOME, language), icon=home.icon, url_path=HOME, visibility="hidden"
    )
    return pages


def pages() -> dict[str, st.Page]:
    """This run's page objects by page key, and Home's second name under ``HOME_BY_NAME``: fresh copies."""
    return {key: copy.copy(page) for key, page in _built(current_language()).items()}


def sections(pages: dict[str, st.Page]) -> dict[str, list[st.Page]]:
    """``pages`` by the menu's sections (catalog keys ``nav.<section>``), in the table's order; Home's second name
    last among the lessons."""
    by_section = {section: [pages[p.key] for p in PAGES if p.section == section] for section in SECTIONS}
    by_section[BY_KEY[HOME].section].append(pages[HOME_BY_NAME])
    return by_section


def page(key: str) -> st.Page:
    """The page ``key`` for ``st.page_link``, in the current language."""
    try:
        return _built(current_language())[key]
    except KeyError:
        raise KeyError(f"no page {key!r}; the pages are {', '.join(BY_KEY)}") from None
