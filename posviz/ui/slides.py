"""Slides: a lesson stepped through one figure at a time, its caption large, for a projector and a clicker.

The step lives in the link. ``?slide=3`` is the third figure of the open tab, so ``tab=shift&slide=2`` names one
slide exactly, in either language (the tab's code, not its label, is in the link). The deck is the page's tabs in
order and each tab's figures in order: "next" past a tab's last figure opens the next tab's first, "previous"
before a tab's first opens the previous tab's last. A page without tabs is one deck of its figures.

→ and Page Down (what a presenter's clicker sends) step forward, ← and Page Up back, and so do the buttons of the
slide. Streamlit has no key events: a small ``st.components.v2`` component (its JavaScript is inline and runs in
the page, so nothing is downloaded and a proxy in front changes nothing) listens on the document and sends each
step to Python as a trigger, which reruns the page like a click.

Only the open tab runs, as without slides; of its figures only the chosen one is sent to the browser. ``show``
records the figures instead of drawing them, and ``finish`` draws the chosen one once the tab has run: ``lazy_tabs``
calls it after the open tab, the frame (``app.py``) after the page, for pages without tabs.
"""

from __future__ import annotations

import dataclasses

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from . import lesson as lessons
from . import link, present, share
from .i18n import t

#: The link's parameter: the slide's number in the open tab, from 1.
KEY = "slide"
#: The switch (in the sidebar; in presentation mode in the page's bar; in the slide's bar while the slides are on).
TOGGLE = "posviz-slides"
#: What the step buttons and keys need from the last run: the slide shown, the tab's count, the tabs in order.
STATE = "posviz.slides"
#: A step back into the previous tab: show its last figure, whatever their number.
LAST = "posviz.slides.last"
#: Set when a step meets the first or last slide of the deck: said once on the slide.
EDGE = "posviz.slides.edge"
#: The direction of the step that opened this view: a tab without figures is passed over in that direction.
MOVING = "posviz.slides.moving"
#: A step to take as the next run starts (passing over a tab without figures).
SKIP = "posviz.slides.skip"
#: Whether presentation mode was on before the slides turned it on (restored when they are left).
BEFORE = "posviz.slides.present"
KEYS_COMPONENT = "posviz-slide-keys"

#: Listens for the clicker's and the keyboard's steps on the page (not while a text box, slider, menu or tab bar
#: has the focus, nor with a modifier held) and sends each one to Python as the trigger ``step``.
_KEYS_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  const STEPS = { ArrowRight: "next", PageDown: "next", ArrowLeft: "prev", PageUp: "prev" };
  const busy = (el) => el instanceof Element && (el.isContentEditable ||
    /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) ||
    el.closest('[role="slider"], [role="listbox"], [role="combobox"], [role="tablist"], [role="menu"]') !== null);
  const onKey = (event) => {
    const step = STEPS[event.key];
    if (!step || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (busy(event.target) || busy(document.activeElement)) return;
    event.preventDefault();
    setTriggerValue("step", step);
  };
  document.addEventListener("keydown", onKey);
  return () => document.removeEventListener("keydown", onKey);
}
"""

_keys = st.components.v2.component("posviz_slide_keys", js=_KEYS_JS)

#: While the slides are on, the page shows the slide only: every block of the main area that does not hold it is
#: hidden (the page still runs; its controls keep their values and come back when the slides are left), except an
#: error the frame shows under the page. Errors inside the page are repeated on the slide (``lesson.note_error``).
_CSS = """
<style>
  [data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"] > :not(:has(.st-key-posviz-slide)):not(
      [data-testid="stElementContainer"]:has([data-testid="stAlertContentError"], [data-testid="stException"])) {
    display: none !important;
  }
  [data-testid="stMainBlockContainer"] { padding-top: 4.25rem !important; padding-bottom: 1rem !important; }
  .st-key-posviz-slide-counter p { font-size: 1.35rem !important; font-weight: 600; margin: 0; white-space: nowrap; }
  .st-key-posviz-slide, .st-key-posviz-slide-body { gap: 0.5rem !important; }
  .st-key-posviz-slide-title p { font-size: 1.35rem !important; font-weight: 600; margin: 0; line-height: 1.3; }
  .st-key-posviz-slide-caption p, .st-key-posviz-slide-caption li {
    font-size: 1.3rem !important; line-height: 1.4 !important;
  }
</style>
"""

#: The figure's height on a slide: what is left of a 720-pixel screen under the bar and above a two-line caption.
FIGURE_HEIGHT = 460


@dataclasses.dataclass(eq=False)
class Run:
    """The slides of one run: the slide asked for and where its parts go on the page."""

    target: int | None  # None: the tab's last figure
    given: str | None  # the link's value, when it was not a slide number of this tab
    title: DeltaGenerator  # the bar's text (an st.empty)
    body: DeltaGenerator  # the slide: figure and caption (a container)
    order: dict[str, str] = dataclasses.field(default_factory=dict)  # tab code -> label, in order
    values: dict[str, object] = dataclasses.field(default_factory=dict)  # tab code -> the session value opening it
    finished: bool = False


def _parse(raw: str) -> tuple[int, str | None]:
    """The slide number in the link and, if it is not a whole number of at least 1, the value as given."""
    text = raw.strip()
    if text.isdigit() and int(text) >= 1:
        return int(text), None
    return 1, raw


def active() -> bool:
    """Whether this run shows the page as slides."""
    lesson = lessons.current()
    return lesson is not None and lesson.slides is not None


def start(lesson) -> Run | None:
    """As the page begins: in slide mode (``slide`` in the link), the slide's bar and its empty body at the top of
    the page (filled by ``finish``); otherwise None, and the caller places the switch."""
    skip = st.session_state.pop(SKIP, 0)
    if skip:
        step(skip)
    raw = st.query_params.get(KEY)
    back = st.session_state.pop(LAST, False)
    if raw is None:
        st.session_state[TOGGLE] = False
        return None
    target, given = _parse(raw)
    st.session_state[TOGGLE] = True
    st.html(_CSS)
    with st.container(key="posviz-slide"):
        with st.container(horizontal=True, vertical_alignment="center", key="posviz-slide-bar"):
            st.button(
                t("slides.previous"),
                key="posviz-slide-previous",
                icon=":material/chevron_left:",
                on_click=_step_button,
                args=(-1,),
                help=t("slides.previous.help"),
            )
            title = st.empty()
            st.button(
                t("slides.next"),
                key="posviz-slide-next",
                icon=":material/chevron_right:",
                on_click=_step_button,
                args=(1,),
                help=t("slides.next.help"),
            )
            switch()
            share.button(label=False)
            lesson.counter = st.empty()
            _keys(key=KEYS_COMPONENT, on_step_change=_keyboard, height=0, width="content")
        body = st.container(key="posviz-slide-body")
    return Run(target=None if back else target, given=None if back else given, title=title, body=body)


def count(lesson) -> None:
    """Write the slide counter of the page's bar (presentation mode, or the slides): ``3 / 12`` on a slide, ``– / 12``
    beside the switch when the slides are off (the view has 12 of them)."""
    if lesson.counter is None:
        return
    state = st.session_state.get(STATE) if lesson.slides is not None else None
    if state is not None and state.get("page") == lesson.page:
        k, n = str(state["slide"]), state["count"]
    else:
        k, n = "–", len(lesson.deck())
    with lesson.counter.container(key="posviz-slide-counter"):
        st.markdown(t("slides.counter", k=k, n=n), help=t("slides.counter.help", n=n))


def switch() -> None:
    """The slides' on / off switch."""
    st.toggle(t("slides.toggle"), key=TOGGLE, on_change=_toggled, help=t("slides.toggle.help"))


def tabs(labels: dict[str, str], open_code: str, *, values: dict) -> None:
    """Declare the page's tabs (code -> label, in order) and the open one: the deck goes from tab to tab in this
    order. ``values`` is what the tab widget's session state holds for each tab (a row of tabs holds its label, a
    selector its code); only the widget knows, so only the widget declares its tabs."""
    lessons.tab_opened(open_code, labels[open_code], labels)
    lesson = lessons.current()
    if lesson is not None and lesson.slides is not None:
        lesson.slides.order = dict(labels)
        lesson.slides.values = dict(values)


def finish() -> None:
    """Draw the chosen slide of the open tab, once its figures are all known (a second call does nothing)."""
    lesson = lessons.current()
    run = lesson.slides if lesson is not None else None
    if lesson is None or run is None or run.finished:
        return
    run.finished = True
    deck = lesson.deck()
    count = len(deck)
    asked = count if run.target is None else run.target
    shown = min(asked, count)
    if count:
        st.query_params[KEY] = str(shown)
    st.session_state[STATE] = {
        "page": lesson.page,
        "slide": max(shown, 1),
        "count": count,
        "tab": lesson.tab,
        "tabs": list(run.order),
        "values": dict(run.values),
    }
    moving = st.session_state.pop(MOVING, 0)
    if not count and moving:  # a step landed on a tab without figures (code only, say): on to one that has some
        st.session_state[SKIP] = moving
        st.rerun()  # the step is taken as the next run starts, before the tab bar is made again
    where = (
        t("slides.position", page=lesson.title, tab=lesson.tab_label, k=shown, n=count)
        if lesson.tab_label
        else t("slides.position.page", page=lesson.title, k=shown, n=count)
    )
    with run.title.container(key="posviz-slide-title"):
        st.markdown(where)
    with run.body:
        if run.given is not None:
            st.warning(t("slides.unreadable", given=run.given, n=count), icon=":material/link_off:")
            link.explained("slide")
        elif asked > count and count:
            st.warning(t("slides.missing", given=asked, n=count, shown=shown), icon=":material/link_off:")
        edge = st.session_state.pop(EDGE, None)
        if edge:
            st.info(t(f"slides.{edge}"), icon=":material/info:")
        for message in lesson.errors:
            st.error(message)
        if not count:
            st.info(t("slides.none"), icon=":material/info:")
            return
        figure = deck[shown - 1]
        from . import chart_config  # the same chart options as the page's own figures

        st.plotly_chart(
            figure.fig, width="stretch", height=FIGURE_HEIGHT, key=figure.key, config=chart_config(figure.name)
        )
        if figure.notice:
            with st.container(key="posviz-slide-caption"):
                st.markdown(figure.notice)


# ------------------------------------------------------------------------------------------------------ steps


def _open_tab(code: str, state: dict) -> None:
    """Open the tab ``code`` on the next run, as a click on it would (``widgets.url_tabs`` / ``url_select``)."""
    st.session_state["tab.code"] = code
    st.session_state["tab"] = state["values"][code]
    st.query_params["tab"] = code


def step(delta: int) -> bool:
    """One slide forward (``delta`` 1) or back (-1), into the next or previous tab at a tab's end; False at the
    deck's first or last slide, where the slide says so instead."""
    state = st.session_state.get(STATE)
    if not state or KEY not in st.query_params:
        return False
    k, count, tabs, tab = state["slide"], state["count"], state["tabs"], state["tab"]
    where = tabs.index(tab) if tab in tabs else None
    if delta > 0 and k < count:
        st.query_params[KEY] = str(k + 1)
    elif delta < 0 and 1 < k <= count:
        st.query_params[KEY] = str(k - 1)
    elif delta > 0 and where is not None and where + 1 < len(tabs):
        _open_tab(tabs[where + 1], state)
        st.query_params[KEY] = "1"
    elif delta < 0 and where:
        _open_tab(tabs[where - 1], state)
        st.session_state[LAST] = True
        st.query_params[KEY] = "1"
    else:
        st.session_state[EDGE] = "last" if delta > 0 else "first"
        return False
    st.session_state[MOVING] = delta
    return True


def _step_button(delta: int) -> None:
    step(delta)


def _keyboard() -> None:
    pressed = (st.session_state.get(KEYS_COMPONENT) or {}).get("step")
    if pressed in ("next", "prev"):
        step(1 if pressed == "next" else -1)


def _toggled() -> None:
    if st.session_state.get(TOGGLE):
        st.session_state[BEFORE] = present.presenting()
        st.session_state[present.KEY] = True  # figures and type sized for the projector
        st.query_params[KEY] = "1"
    else:
        st.query_params.pop(KEY, None)
        if BEFORE in st.session_state:
            st.session_state[present.KEY] = st.session_state.pop(BEFORE)
