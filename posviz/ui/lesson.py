"""What one run of a page showed: its figures in order, with their captions, for the slides and the handout.

``start`` (called by ``intro`` as a page begins) opens a new record for the run; ``record`` (called by ``show`` for
every figure) adds to it, noting the tab it belongs to. A run asked for the whole lesson (``ask_whole``) runs
every tab, the closed ones out of sight (``lazy_tabs``), so its record holds every figure of the page, tab by tab.
Figures are kept by reference, never copied or changed. The record lives in the session until the next run of a
page replaces it, and a handout reads it only when its button is pressed.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from . import internals
from .i18n import current_language, t

if TYPE_CHECKING:
    from .slides import Run

CURRENT = "posviz.lesson"
#: The page whose next run draws every tab, for the handout of the whole lesson (set by its button).
WHOLE = "posviz.lesson.whole"


@dataclasses.dataclass(eq=False)
class Shown:
    """One figure as ``show`` drew it: the figure object, its "what to notice" caption, its key and file stem."""

    fig: object
    notice: str | None
    key: str | None
    name: str
    #: The label of the tab it was drawn in (None: above the tabs, or a page without tabs).
    tab: str | None = None


@dataclasses.dataclass(eq=False)
class Lesson:
    """The record of one run of ``page``: what a slide or a handout of the open view is made from."""

    page: str
    lang: str
    title: str
    figures: list[Shown] = dataclasses.field(default_factory=list)
    #: The URL keys of the controls seen in this run (a fragment's rerun adds its own).
    keys: set[str] = dataclasses.field(default_factory=set)
    #: The open tab: its code and its label, once a tab bar or selector has said which it is.
    tab: str | None = None
    tab_label: str | None = None
    #: Index in ``figures`` of the open tab's first figure (figures above the tabs belong to no slide deck).
    tab_start: int = 0
    #: The slide state of this run (``slides.Run``), or None when the page is not shown as slides.
    slides: Run | None = None
    #: Messages of the errors shown in the open tab (a slide repeats them).
    errors: list[str] = dataclasses.field(default_factory=list)
    #: The link that reopens the view and the values in use, kept as the run ends (``handout.seal``).
    link: str | None = None
    values: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    #: Whether this run draws every tab (``ask_whole``): the record is then the whole lesson's.
    whole: bool = False
    #: The page's tabs in order (code -> label), once a tab bar or selector has declared them.
    tabs: dict[str, str] = dataclasses.field(default_factory=dict)
    #: While a closed tab of a whole-lesson run draws: its figures are recorded, not sent to the browser.
    hidden: bool = False
    #: Whether the page's tabs go through ``lazy_tabs``, which can draw them all (the whole lesson's button shows).
    lazy: bool = False
    #: Where the sidebar keeps the whole lesson's button (an ``st.empty``), filled as the run ends.
    slot: DeltaGenerator | None = None
    #: Where the slide counter of presentation mode's bar goes (an ``st.empty``), filled once the deck is known.
    counter: DeltaGenerator | None = None

    def add(self, shown: Shown) -> None:
        """Append ``shown``; a figure of the same key replaces its earlier self (a fragment drew it again)."""
        if shown.key is not None:
            for i, old in enumerate(self.figures):
                if old.key == shown.key:
                    self.figures[i] = shown
                    return
        self.figures.append(shown)

    def deck(self) -> list[Shown]:
        """The figures of the open tab, in order: the slides of this view (not the closed tabs a whole-lesson run
        draws out of sight, recorded under their own labels)."""
        return [shown for shown in self.figures[self.tab_start :] if shown.tab == self.tab_label]


def current() -> Lesson | None:
    """The record of the page being run (or last run) in this session."""
    return st.session_state.get(CURRENT)


def start(page: str) -> Lesson:
    """A new, empty record for this run of ``page`` (of the whole lesson, when the run was asked for it)."""
    whole = st.session_state.pop(WHOLE, None) == page
    lesson = Lesson(page=page, lang=current_language(), title=t(f"page.{page}"), whole=whole)
    st.session_state[CURRENT] = lesson
    return lesson


def current_keys() -> frozenset[str]:
    """The keys of the widgets created so far in this run."""
    return internals.widget_keys_this_run()


def record(fig, *, notice: str | None, key: str | None, name: str) -> Lesson | None:
    """Add a figure to this run's record; the record, or None outside a page (no ``intro`` ran)."""
    lesson = current()
    if lesson is None:
        return None
    lesson.add(Shown(fig, notice, key, name, tab=lesson.tab_label))
    lesson.keys |= current_keys()
    return lesson


def note_error(message: str) -> None:
    """Note an error message the page showed, for the slide (the page under it is hidden)."""
    lesson = current()
    if lesson is not None and lesson.slides is not None:
        lesson.errors.append(message)


def tab_opened(code: str, label: str, tabs: dict[str, str] | None = None) -> None:
    """Note the open tab of this run (and the page's tabs in order): the figures drawn from here on are its
    slides."""
    lesson = current()
    if lesson is not None:
        lesson.tab, lesson.tab_label, lesson.tab_start = code, label, len(lesson.figures)
        if tabs is not None:
            lesson.tabs = dict(tabs)


def ask_whole(page: str) -> None:
    """Ask the next run of ``page`` to draw every tab, so that its record is the whole lesson's."""
    st.session_state[WHOLE] = page


@contextlib.contextmanager
def drawing_tab(code: str):
    """While a tab other than the open one draws in a whole-lesson run: its figures are recorded under its label
    and not sent to the browser; the open tab's place is restored after it."""
    lesson = current()
    if lesson is None:
        yield
        return
    kept = lesson.tab_label, lesson.hidden
    lesson.tab_label, lesson.hidden = lesson.tabs.get(code, code), True
    try:
        yield
    finally:
        lesson.tab_label, lesson.hidden = kept
