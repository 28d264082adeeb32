"""The only part of posviz that imports Streamlit: page furniture, URL-bound controls, i18n, the store and the views
(``views``: each page's figures as functions of their settings)."""

from __future__ import annotations

import base64
import contextlib
import functools
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from posviz.figures import screen

from . import cache, export, handout, internals, lesson, link, present, share, slides, widgets
from .i18n import ASSETS, LANGUAGES, core_message, current_language, t, teaching_text
from .present import controls, presenting

__all__ = [
    "LANGUAGES",
    "cache",
    "controls",
    "core_message",
    "current_language",
    "errors_shown",
    "Figures",
    "favicon",
    "finish_page",
    "fragment",
    "intro",
    "lazy_tabs",
    "link",
    "presenting",
    "show",
    "t",
    "unused_controls",
    "widgets",
]


@functools.cache
def favicon() -> str:
    """The app's 32 x 32 icon as a data URL, read once. Given a file path, ``st.set_page_config`` opens, checks and
    re-encodes the image on every script run (a tenth of the server's time with a class on it); a data URL is
    passed through as it is."""
    return "data:image/png;base64," + base64.b64encode((ASSETS / "favicon.png").read_bytes()).decode("ascii")


#: Similarity matrices are built on at most this many evenly spaced positions.
SIMILARITY_POSITIONS = 1024


def intro(page: str) -> None:
    """The page's title and its teaching text (``assets/texts/<page>.<lang>.md``); in presentation mode only the
    text's first sentence, with the rest one click away, so the first figure shows on the first screen."""
    st.title(t(f"page.{page}"))
    lesson_tools(page)
    text = teaching_text(page)
    if not presenting():
        st.markdown(text)
        return
    first, rest = present.first_sentence(text)
    st.markdown(first)
    record = lesson.current()
    if record is not None and record.slides is not None:  # the slide's bar holds the switch, share and counter
        if rest:
            with st.expander(t("present.more"), icon=":material/menu_book:"):
                st.markdown(rest)
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key="posviz-present-bar"):
        if rest:
            with st.expander(t("present.more"), icon=":material/menu_book:"):
                st.markdown(rest)
        else:
            st.space("stretch")
        slides.switch()
        share.button(label=False)  # the icon (its tooltip says it): the introduction keeps the bar's width
        if record is not None:
            record.counter = st.empty()


def lesson_tools(page: str) -> None:
    """Start this run's record of the page's figures (``lesson``); put the slides' switch, "Share this view" and the
    "Download this lesson" button in the sidebar, under presentation mode's switches; in presentation mode the switch
    and the share button are in a bar of the page instead (``intro``: the sidebar is folded), and in slide mode in
    the slide's bar (``slides.start``)."""
    record = lesson.start(page)
    record.slides = slides.start(record)
    if record.slides is None:
        with st.sidebar:
            if not presenting():  # in presentation mode the switch and the share button are in the page's bar
                slides.switch()
                share.button()
            handout.button(record)
            record.slot = st.empty()  # the whole lesson's button, once the run knows the page's tabs


def finish_page() -> None:
    """For the frame, after the page has run: draw the chosen slide of a page whose tabs did not (a page without
    tabs, or with a selector of its own), and keep the view's link and values with its record for the handout."""
    slides.finish()
    record = lesson.current()
    if record is not None:
        handout.seal(record)
        handout.whole_button(record)
        slides.count(record)
    share.open_if_asked(record)


def fragment(func=None, /, **kwargs):
    """``st.fragment`` (``run_every=`` … as there) whose rerun ends by sealing the open page's record again: a
    fragment's rerun is no run of the frame, so without it the handout would say the values and the link of the run
    before (``handout.refresh``); in a whole run the frame seals the record once, at its end. Pages mark their
    fragments with ``@fragment`` instead of ``@st.fragment``."""

    def wrap(body):
        @functools.wraps(body)
        def run(*args, **kw):
            try:
                return body(*args, **kw)
            finally:
                if internals.in_fragment_rerun():
                    handout.refresh()

        return st.fragment(run, **kwargs)

    return wrap if func is None else wrap(func)


def chart_config(stem: str) -> dict:
    """The plotly options of every figure: no logo, and the camera button's PNG at three times the resolution."""
    return {"displaylogo": False, "toImageButtonOptions": {"scale": 3, "filename": stem}}


def show(fig, *, notice: str | None = None, key: str | None = None, data=None, name: str | None = None) -> None:
    """Draw a figure full width, with its "what to notice" caption and a CSV download of ``data`` under it.

    The PNG download is plotly's camera button, at three times the screen resolution. ``name`` is the stem of
    the downloaded files (default: ``key``); ``data`` is anything ``export.to_frame`` takes. Every figure is also
    recorded, by reference, for the handout and the slides (``lesson.record``); in slide mode it is only recorded.
    """
    fig = present.for_screen(fig)  # presentation type, safe colours: a copy, never the shared figure
    stem = name or key or "posviz"
    recorded = lesson.record(fig, notice=notice, key=key, name=stem)  # for the handout and the slides
    if recorded is not None and recorded.slides is not None:
        return  # a slide: drawn by ``slides.finish`` if it is the chosen one, once the open tab has run
    if recorded is not None and recorded.hidden:
        return  # a closed tab drawn for the whole lesson's handout: recorded only
    # the first figure of the view, cut to the first screen, unless it stands beside another (a pair keeps one height)
    if presenting() and recorded is not None and len(recorded.deck()) == 1 and not internals.in_column():
        fig = go.Figure(screen.shorter(fig.to_dict(), FIRST_SCREEN_HEIGHT), _validate=False)
    st.plotly_chart(fig, width="stretch", key=key, config=chart_config(stem))
    if notice:
        st.caption(notice)
    if data is not None:
        st.download_button(
            t("download.csv"),
            data=lambda: export.csv_bytes(data),
            file_name=f"{stem}.csv",
            mime="text/csv",
            key=f"csv-{stem}",
            icon=":material/download:",
            on_click="ignore",
        )


#: In presentation mode the page's first figure is at most this tall (px), so that all of it is on a 1280 x 720
#: projector's first screen under the title, the first sentence, the bar and the folded controls.
FIRST_SCREEN_HEIGHT = 360


@dataclass(frozen=True)
class Figures:
    """The figures of one page, each named once by its key: ``Figures("rope").show("decay", fig, data)`` draws
    ``fig`` under the key ``decay``, captioned by the catalog's ``rope.decay.notice``, its PNG and CSV saved as
    ``rope-decay``. A dotted key is a nested text (``ext.wavelength``: ``rope.ext.wavelength.notice``, saved as
    ``rope-ext-wavelength``)."""

    page: str

    def notice(self, key: str, variant: str | None = None, **values) -> str:
        """The caption of ``key``: ``<page>.<key>.notice``, or ``<page>.<key>.notice.<variant>``."""
        return t(f"{self.page}.{key}.notice" + (f".{variant}" if variant else ""), **values)

    def show(
        self,
        key: str,
        fig,
        data=None,
        *,
        variant: str | None = None,
        suffix: str | int | None = None,
        each: str | None = None,
        extra: str = "",
        chart: str | None = None,
        captioned: bool = True,
        **values,
    ) -> None:
        """``show`` ``fig`` as the figure ``key``: its caption the notice (``variant`` and ``values`` as in
        :meth:`notice`, then ``extra``), its files ``<page>-<key>`` (then ``-<suffix>``, for a figure of one setting:
        ``alibi-bias-head3``).

        ``each`` tells apart the figures of one key drawn in the same run, one per item (per
        encoding: ``lab-animation-rope``): it follows the key in the chart key as well as in the file stem. ``chart``
        names the chart element instead where the key's name is taken: by a control of the page (``base``), or by
        another figure captioned from the same texts. ``captioned=False`` draws no caption (figures side by side,
        captioned together under them)."""
        stem = "-".join(str(part) for part in (self.page, key, each, suffix) if part is not None)
        notice = self.notice(key, variant, **values) + (f" {extra}" if extra else "") if captioned else None
        element = chart or (key if each is None else f"{key}.{each}").replace(".", "_")
        show(fig, notice=notice, key=element, data=data, name=stem.replace(".", "-").replace("_", "-"))


INPUT_KINDS = (
    "setting",  # controls and link values: a size, a base, a head count ...
    "file",  # an uploaded model file
    "path",  # a typed local path to a model file or folder
    "cached",  # a model picked from the local Hugging Face cache
    "table",  # a loaded table that an analysis cannot use
    "order",  # a typed factorisation order
    "config",  # a typed or pasted config.json
    "sentence",  # a typed sentence
    "lab",  # the training lab's runs and the server's settings for them
)


@contextlib.contextmanager
def errors_shown(kind: str):
    """Show a core ``ValueError`` / ``IndexError`` as a readable message instead of a traceback, starting with what
    was wrong: ``kind`` (one of ``INPUT_KINDS``) is what the user gave that the code in the block reads."""
    if kind not in INPUT_KINDS:
        raise TypeError(f"errors_shown() takes one of {INPUT_KINDS}, not {kind!r}")
    try:
        yield
    except (ValueError, IndexError) as exc:
        message = t(f"error.input.{kind}", message=core_message(str(exc)))
        st.error(message)
        lesson.note_error(message)  # a slide says it too: the page under it is hidden


def lazy_tabs(page: str, draw: dict, *, label: str = "{page}.tab.{code}", kind: str = "setting") -> None:
    """One tab per entry of ``draw`` (code -> function that draws it), labelled from the catalog key ``label``;
    only the open tab's function runs, inside ``errors_shown(kind)``, and its code is kept in the URL
    (``widgets.url_tabs``). A run asked for the whole lesson (``lesson.ask_whole``) runs every tab: the closed ones
    out of sight, their figures recorded for the handout only, with a progress bar in the sidebar."""
    tabs = widgets.url_tabs({code: t(label.format(page=page, code=code)) for code in draw})
    record = lesson.current()
    whole = record is not None and record.whole and record.slides is None
    if record is not None:
        record.lazy = True
    progress = record.slot.progress(0.0) if record is not None and whole and record.slot is not None else None
    if whole:
        st.html(f"<style>[class*='st-key-{HIDDEN}'] {{ display: none !important; }}</style>")
    for i, (code, func) in enumerate(draw.items()):
        if progress is not None:
            progress.progress(i / len(draw), text=t("handout.whole.progress", k=i + 1, n=len(draw)))
        with tabs[code], errors_shown(kind):
            if tabs[code].open:
                func()
            elif whole:
                with st.container(key=f"{HIDDEN}{code}"), lesson.drawing_tab(code):
                    func()
    slides.finish()  # in slide mode, the chosen figure of the open tab


#: The key prefix of the containers that hold a closed tab drawn for the whole lesson (hidden by style).
HIDDEN = "posviz-hidden-"


def unused_controls(*labels: str, reason: str) -> None:
    """Say at the top of a tab which of the page's controls above it does not use (``labels``, as the controls show
    them) and ``reason``, what it reads instead, so that a student who moves one and sees nothing change knows why."""
    listed = t("list.sep").join(f"**{label}**" for label in labels)
    st.caption(":material/info: " + t("controls.unused", controls=listed, reason=reason))


#: Where other pages leave position tables for this session: name -> (positions, dims) array. The checkpoint
#: inspector and the training lab add to it; the Learned page offers every entry.
SESSION_TABLES = "posviz.tables"


def session_tables() -> dict:
    """The position tables loaded or trained in this session (name -> array), created empty on first use."""
    return st.session_state.setdefault(SESSION_TABLES, {})
