"""Presentation mode for classrooms, and the high-contrast, colour-blind-safe colours.

Two switches in the sidebar, each bound to the URL so a teacher can share a link that opens straight into them:
``?present=true`` (large type in the page and in every figure, the sidebar closed, each page's introduction folded to
its first sentence, the page's controls folded into a panel with the values in use written beside it, a selector
instead of a row of tabs) and ``?contrast=true`` (colour-blind-safe palettes, thicker lines, darker text). How a
figure changes is ``posviz.figures.screen``; this module only knows the switches and the page's furniture.
"""

from __future__ import annotations

import contextlib
import re

import plotly.graph_objects as go
import streamlit as st

from posviz.figures import screen

from . import internals
from .i18n import t

KEY = "present"
CONTRAST = "contrast"
FIGURE_FONT_SIZE = screen.FONT_SIZE

#: Every tab bar wraps onto a second row rather than hiding tabs behind a scroll arrow ("Nor›"). (Streamlit draws the
#: open tab's underline inside the tab itself, so it stays on the right row.) A table's column is never narrower than
#: a few characters: the browser would give a short header one Chinese character a line.
_BASE_CSS = """
  [data-testid="stTable"] th, [data-testid="stTable"] td { min-width: 4.5em; }
  [data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; overflow-x: visible; row-gap: 0.25rem; }
  [data-testid="stTabs"] button[data-testid^="stTabsScroll"] { display: none; }
"""

#: Type for the back row, and the least space above the first figure: the page starts under the header's controls,
#: and the header, which is taller than that space, paints no background over the page's title.
_PRESENT_CSS = """
  [data-testid="stHeader"] { background: transparent; }
  [data-testid="stMain"] { font-size: 1.3rem; }
  [data-testid="stMain"] h1 { font-size: 2.3rem; padding: 0 0 0.25rem 0; }
  [data-testid="stMain"] p, [data-testid="stMain"] li { font-size: 1.3rem; line-height: 1.5; }
  [data-testid="stMain"] [data-testid="stCaptionContainer"] p { font-size: 1.2rem; }
  [data-testid="stMain"] [data-testid="stExpander"] summary p { font-size: 1.2rem; }
  [data-testid="stMain"] label p { font-size: 1.15rem; }
  [data-testid="stMain"] [data-testid="stSelectbox"] input { font-size: 1.3rem; }
  [data-testid="stMainBlockContainer"] { max-width: 100%; padding: 3rem 2rem 2rem 2rem; }
  [data-testid="stMain"] [data-testid="stVerticalBlock"] { gap: 0.45rem; }
  .st-key-posviz-present-bar > [data-testid="stElementContainer"]:has([data-testid="stExpander"]),
  .st-key-posviz-present-bar > [data-testid="stExpander"] { flex: 1 1 0; min-width: 0; }
  .st-key-posviz-slide-counter p { font-size: 1.3rem; font-weight: 600; margin: 0; white-space: nowrap; }
"""

#: Stronger contrast: body text and captions in near-black, links underlined.
_CONTRAST_CSS = """
  [data-testid="stMain"], [data-testid="stSidebar"] { color: #111111; }
  [data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { color: #1f1f1f; }
  [data-testid="stMain"] a { text-decoration: underline; }
"""


def presenting() -> bool:
    """Whether presentation mode is on in this session."""
    return bool(st.session_state.get(KEY, False))


def high_contrast() -> bool:
    """Whether the high-contrast, colour-blind-safe colours are on in this session."""
    return bool(st.session_state.get(CONTRAST, False))


def requested(query_params) -> bool:
    """Whether a link asks for presentation mode (``?present=true``), read before the sidebar's switch exists."""
    return str(query_params.get(KEY, "")).strip().lower() in ("true", "1")


def toggle() -> bool:
    """The sidebar switches (bound to the URL as ``present`` and ``contrast``); injects the matching style."""
    on = st.toggle(t("present.toggle"), key=KEY, bind="query-params", help=t("present.help"))
    safe = st.toggle(t("present.contrast"), key=CONTRAST, bind="query-params", help=t("present.contrast.help"))
    st.html("<style>" + _BASE_CSS + (_PRESENT_CSS if on else "") + (_CONTRAST_CSS if safe else "") + "</style>")
    return on


# ------------------------------------------------------------------------------------------------ the intro

#: Spans a sentence never ends inside: display and inline formulas, inline code, emphasis ("*where is it?*").
_SPANS = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|`[^`\n]+`|\*\*[^*]+?\*\*|\*[^*\n]+\*", re.DOTALL)
#: The end of a sentence: a Chinese full stop, question or exclamation mark; or . ? ! followed by a space or the end
#: of a line, after a word that is not a common abbreviation.
_END = re.compile(r"[。！？]|(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bvs)(?<!\bcf)(?<!\bEq)(?<!\bFig)[.?!](?=\s|$)")


def first_sentence(text: str) -> tuple[str, str]:
    """``(first sentence, the rest)`` of a teaching text in markdown: the first sentence ends at the first sentence
    mark outside formulas and code, and never past the first paragraph."""
    paragraph_end = text.find("\n\n")
    paragraph_end = len(text) if paragraph_end < 0 else paragraph_end
    masked = _SPANS.sub(lambda m: "x" * len(m.group()), text)  # same offsets, nothing inside them can end a sentence
    end = _END.search(masked, 0, paragraph_end)
    cut = end.end() if end else paragraph_end
    return text[:cut].strip(), text[cut:].strip()


# ------------------------------------------------------------------------------------------------ figures


def for_screen(fig: go.Figure) -> go.Figure:
    """``fig`` as the current mode draws it: itself in the normal mode; otherwise a restyled copy (``fig`` itself
    is never changed)."""
    mode = (presenting(), high_contrast())
    if not any(mode):
        return fig
    return go.Figure(screen.restyle(fig.to_dict(), large=mode[0], safe=mode[1]), _validate=False)


# ------------------------------------------------------------------------------------------------ controls


def _number(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def _shown(kind: str, state) -> str | None:
    """What a widget shows, from its serialized state (the formatted option of a choice, the number of a box)."""
    field = state.WhichOneof("value") if state is not None else None
    if field is None:
        return None
    value = getattr(state, field)
    if field in ("double_value", "int_value"):
        return _number(value)
    if field == "bool_value":
        return t("present.on") if value else t("present.off")
    if field == "string_value":
        return value.strip() or None
    if field in ("double_array_value", "int_array_value"):
        return " – ".join(_number(v) for v in value.data) or None
    if field == "string_array_value":
        shown = list(value.data)
        if kind == "slider" and all(_is_number(v) for v in shown):
            shown = [_number(float(v)) for v in shown]
        return (" – " if kind == "slider" else ", ").join(shown) or None
    return None


def _set_on(kind: str, proto) -> str | None:
    """What a widget shows when it has no serialized state yet (a value the page set through the session state):
    the option the widget was told to show, else its value in the session state."""
    if kind in ("radio", "selectbox") and proto.set_value and proto.HasField("raw_value"):
        return proto.raw_value
    user_key = proto.id.split("-", 2)[2] if proto.id.startswith("$$ID-") and proto.id.count("-") >= 2 else None
    if not user_key or user_key not in st.session_state:
        if kind in ("radio", "selectbox") and proto.HasField("default") and proto.default < len(proto.options):
            return proto.options[proto.default]
        return None
    value = st.session_state[user_key]
    if isinstance(value, bool):
        return t("present.on") if value else t("present.off")
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or None
    return str(value).strip() or None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def values_in_use(drawn) -> str:
    """One line naming each enabled widget of ``drawn`` with the value it holds, in the page's language
    (``Positions = 128 · Base = 10,000 · Column layout: interleaved``); a label met twice is named once."""
    states = internals.widget_states()
    parts: dict[str, str] = {}
    for kind, proto in drawn:
        if getattr(proto, "disabled", False) or not proto.label:
            continue
        value = _shown(kind, states.get(proto.id))
        if value is None:
            value = _set_on(kind, proto)
        if value is None:
            continue
        number = kind in ("number_input", "slider") and _is_number(value.split(" – ")[0].replace(",", ""))
        parts[proto.label] = t("present.value.number" if number else "present.value.choice", label=proto.label,
                               value=value)  # fmt: skip
    return t("present.values.separator").join(parts.values())


@contextlib.contextmanager
def controls():
    """Where a page puts its controls: inline normally; in presentation mode folded into an expander, with the
    values in use written under it, so the projected page says what it shows."""
    if not presenting():
        yield
        return
    with st.expander(t("present.controls"), expanded=False, icon=":material/tune:"), internals.widgets_sent() as drawn:
        yield
    line = values_in_use(drawn)
    if line:
        st.caption(t("present.values", values=line))
