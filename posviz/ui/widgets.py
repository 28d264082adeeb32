"""Controls bound to the URL: every widget has a stable key, which is also its query parameter, so a shared
link reproduces the view. Ranges and defaults come from the family registry's ``Param`` entries.

Every numeric control goes through ``numeric`` (``number`` and ``log_number`` for registry parameters): a number
box, or a number box with a slider under it, whose value is kept in the URL by hand (``link``). A value arrives
from a link exactly as written (``base=500000``) when the control can take it, and otherwise the default is shown
and the link's notice names it. A typed value is taken exactly; a value out of range is clamped to the nearest
limit, one between the allowed steps goes to the nearest step, and a non-number is refused, each with a message
under the control saying which value is in use.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Protocol, cast

import streamlit as st

from posviz.encodings.registry import Param

from . import link, slides
from .i18n import has_text, t
from .present import presenting

#: Per control key: the range its widgets were drawn with on the previous run (a slider whose range changes is a
#: new widget, which must be given the value again).
DRAWN = "posviz.numbers.drawn"
#: Suffix of the key of the number box over a slider.
EXACT = ".exact"
#: The number boxes say "Press Enter to apply" in English over their own digits; a box applies its value on Enter
#: and when it loses the focus alike, so the hint goes. A box may be emptied (``_box``) but offers no clear button:
#: emptying it only says which value is still used.
STYLE = (
    '<style>[data-testid="stNumberInput"] [data-testid="InputInstructions"],'
    ' [data-testid="stNumberInputClearButton"] { display: none; }</style>'
)


def _label(param: Param, key: str) -> str:
    return t(f"param.{param.name}")


def plain(value) -> str:
    """A number as a link writes it: ``128``, ``500000``, ``0.02`` (at most 12 significant digits)."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.12g}"
    return str(value)  # an int, or a text that already is one (a slider's label)


def shown(value) -> str:
    """A number as a message shows it: ``32,768``, ``500,000``, ``0.02``, ``inf``."""
    if isinstance(value, (int, float)) and math.isfinite(value) and float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.12g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Span:
    """What a numeric control takes: a number in ``[lo, hi]``, a multiple of ``grid`` when one is given (whole
    numbers have a grid of at least 1), ``default`` when nothing else is said."""

    lo: float
    hi: float
    default: int | float
    whole: bool
    grid: float | None

    @property
    def first(self) -> float:
        return self.lo if self.grid is None else math.ceil(self.lo / self.grid - 1e-9) * self.grid

    @property
    def last(self) -> float:
        return self.hi if self.grid is None else math.floor(self.hi / self.grid + 1e-9) * self.grid

    def tidy(self, value: float) -> int | float:
        """``value`` as the page gets it: an int for whole numbers, a float without rounding noise otherwise."""
        if self.whole:
            return int(round(value))
        return float(f"{value:.12g}")

    def on_grid(self, value: float) -> bool:
        if self.grid is None:
            return True
        steps = value / self.grid
        return abs(steps - math.floor(steps + 0.5)) <= 1e-9 * max(1.0, abs(steps))

    def from_link(self, given: list[str]) -> int | float | None:
        """The value a link's ``given`` texts set, or None when this control cannot take it as it is written."""
        if len(given) != 1:
            return None
        value = link.parse(given[0])
        if value is None or not math.isfinite(value) or not self.lo <= value <= self.hi or not self.on_grid(value):
            return None
        return self.tidy(value)

    def within(self, value: float) -> int | float:
        """``value`` moved inside the range, silently (a range that shrank, e.g. fewer heads to pick from)."""
        return self.tidy(min(max(value, self.first), self.last))

    def typed(self, value: float | None, previous: int | float) -> tuple[int | float, str | None]:
        """The value to use for a typed ``value`` (the control used ``previous``), and the message that says what
        was done with it (None: taken as it is)."""
        if value is None or not math.isfinite(value):
            return previous, t("number.refused", given=shown(value), value=shown(previous))
        kept, key, limit = value, None, None
        if self.grid is not None and not self.on_grid(value):
            kept = math.floor(value / self.grid + 0.5) * self.grid
            key = "number.whole" if self.whole and self.grid == 1 else "number.grid"
        if kept < self.first:
            kept, key, limit = self.first, "number.below", self.first
        elif kept > self.last:
            kept, key, limit = self.last, "number.above", self.last
        kept = self.tidy(kept)
        if key is None:
            return kept, None
        fields = {"given": shown(value), "value": shown(kept), "step": shown(self.grid or 1)}
        return kept, t(key, **fields, **({"limit": shown(self.tidy(limit))} if limit is not None else {}))


#: Marks for a slider over lengths and factors (``numeric(..., marks=POWERS_OF_TWO)``): those within its range show.
POWERS_OF_TWO = tuple(1 << k for k in range(31))


@functools.cache
def _log_grid(lo: float, hi: float, per_decade: int) -> tuple[int, ...]:
    """Log-spaced whole numbers from ``lo`` to ``hi``, two significant digits (1, 1.8, 3.2, 5.6 per decade)."""
    start, stop = math.log10(lo), math.log10(hi)
    steps = round((stop - start) * per_decade)
    return tuple(sorted({int(float(f"{10 ** (start + i / per_decade):.2g}")) for i in range(steps + 1)}))


def _put(key: str, value, force: bool) -> None:
    """Show ``value`` in the widget ``key`` on this run (set before the widget is drawn, only when it changes)."""
    if force or key not in st.session_state or st.session_state[key] != value:
        st.session_state[key] = value


def numeric(
    label: str,
    minimum: float,
    maximum: float,
    default: float,
    *,
    key: str,
    step: float | None = None,
    grid: float | None = None,
    slider: bool = True,
    log: bool = False,
    per_decade: int = 4,
    marks: tuple[float, ...] | None = None,
    help: str | None = None,
    disabled: bool = False,
):
    """A numeric control kept in the URL under ``key``: a number box, with a slider under it when ``slider`` (``log``:
    over log-spaced values; ``marks``: over those values, e.g. the powers of two of a context length). The box takes
    any value of the range, the slider offers a few. Returns the value in use (an int when ``default`` is one).

    ``step`` is the slider's step and the box's increment; ``grid`` the values allowed (multiples of it; default: the
    step of a slider, 1 for a box of whole numbers, any value for a box of real numbers or a log or marked slider).
    """
    whole = isinstance(default, int) and not isinstance(default, bool)
    stepped = slider and not log and marks is None
    if grid is None:
        grid = (step or 1) if whole and stepped else (1 if whole else (step if stepped else None))
    span = Span(float(minimum), float(maximum), default, whole, grid)
    with_slider = slider or log or marks is not None
    box = f"{key}{EXACT}" if with_slider else key
    drawn = st.session_state.setdefault(DRAWN, {})
    signature = (span, step, log, per_decade, marks)

    message = None
    given = link.incoming(key)
    if given is not None:  # a link (or the page's first run) sets the value
        value = span.from_link(given) if given else default
        if value is None:
            link.refuse(key, given)
            value = default
    else:
        previous = link.previous(key, default)
        value = span.within(previous)  # the range may have shrunk since
        typed, moved = st.session_state.get(box), st.session_state.get(key) if with_slider else None
        if box in st.session_state and typed is None:  # emptied, or letters typed (the browser sends no number)
            message = t("number.empty", value=shown(value))
        elif typed is not None and not (typed == previous):  # NaN equals nothing: it is refused below
            value, message = span.typed(typed, value)
        elif moved is not None and moved != previous:
            value = span.within(moved)
    force = given is not None or drawn.get(key) != signature
    drawn[key] = signature

    _put(box, float(value), force)
    _box(label, box, step, disabled, help)  # the box carries the label: type an exact value here ...
    if with_slider:  # ... or drag the slider under it
        _put(key, value, force)
        if log or marks is not None:
            offered = _log_grid(span.lo, span.hi, per_decade) if marks is None else marks
            options = sorted({*(m for m in offered if span.lo <= m <= span.hi), default, value})
            st.select_slider(
                label, options=options, key=key, format_func=plain, disabled=disabled, label_visibility="collapsed"
            )
        else:
            lo, hi = (int(span.lo), int(span.hi)) if whole else (span.lo, span.hi)
            step = step if step is not None else (1 if whole else None)
            st.slider(label, lo, hi, step=step, key=key, disabled=disabled, label_visibility="collapsed")
    if message:
        st.caption(f":orange[{message}]")
    link.leave(key, None if value == default else plain(value), value)
    return value


def _box(label: str, key: str, step, disabled: bool, help: str | None) -> None:
    """A number box without limits of its own: whatever is typed reaches the server, which says what it did with
    it (Streamlit's box refuses a value out of its range in the browser, unsaid, and reads "1e3" as 1 in a box of
    whole numbers). ``%s`` shows the value as it is: 500000, 0.02. ``value=None`` lets the box send "no number"
    when it is emptied or given letters (a box that must hold a number sends 0 instead, which would read as typed)."""
    st.number_input(label, value=None, step=float(step or 1), format="%s", key=key, help=help, disabled=disabled)


@dataclass(frozen=True)
class Controls:
    """The controls of one page, each named once by its URL key: its label and help are the catalog's
    ``<page>.ctl.<key>`` and ``<page>.ctl.<key>.help`` (``Controls("rope").numeric("factor", 2, 64, 8)``; a control
    without a help text has no tooltip). Where a link's key says something else than the control's text (the Learned
    page's ``?init=`` is its ``learned.ctl.table``), ``text`` names the text."""

    page: str

    def label(self, key: str, text: str | None = None) -> str:
        return t(f"{self.page}.ctl.{text or key}")

    def help(self, key: str, text: str | None = None) -> str | None:
        name = f"{self.page}.ctl.{text or key}.help"
        return t(name) if has_text(name) else None

    def numeric(self, key: str, minimum: float, maximum: float, default: float, **kwargs):
        """``numeric`` for the control ``key``."""
        return numeric(self.label(key), minimum, maximum, default, key=key, help=self.help(key), **kwargs)

    def toggle(self, key: str, value: bool = False, **kwargs) -> bool:
        """A switch kept in the URL under ``key``."""
        return st.toggle(self.label(key), value, key=key, bind="query-params", help=self.help(key), **kwargs)

    def radio(self, key: str, options: list, default, *, text: str | None = None, names=None, **kwargs):
        """``url_radio`` for the control ``key``, in a row unless ``horizontal=False``. An option is shown as the
        catalog's ``<page>.<text or key>.<option>``; ``names`` says otherwise: another catalog prefix (``"rope.layout"``
        shows ``half`` as ``rope.layout.half``) or a function of the option."""
        prefix = names if isinstance(names, str) else f"{self.page}.{text or key}"
        kwargs.setdefault("horizontal", True)
        return url_radio(
            self.label(key, text),
            options,
            key=key,
            default=default,
            format_func=names if callable(names) else lambda option: t(f"{prefix}.{option}"),
            help=self.help(key, text),
            **kwargs,
        )


def style() -> None:
    """The styling of the number boxes, once a run."""
    st.html(STYLE)


def number(param: Param, *, key: str, maximum: float | None = None, slider: bool = True, **kwargs):
    """A number box with a slider under it (or a number box alone) for a numeric registry parameter, kept in the
    URL under ``key``; the parameter's step is the grid of its values."""
    lo, top = param.bounds
    hi = top if maximum is None else min(top, maximum)
    whole = isinstance(param.default, int)
    default = type(param.default)(min(param.default, hi))
    return numeric(
        _label(param, key),
        int(lo) if whole else float(lo),
        int(hi) if whole else float(hi),
        default,
        key=key,
        step=param.step if not whole else int(param.step or 1),
        grid=int(param.step or 1) if whole else None,
        slider=slider,
        help=t(f"help.{param.name}"),
        **kwargs,
    )


def log_number(param: Param, *, key: str, per_decade: int = 4):
    """A slider over log-spaced values (1, 1.8, 3.2, 5.6 per decade, to two significant digits) for a parameter like
    a base, under a number box that takes any value of the range (``base=500000``)."""
    lo, hi = param.bounds
    return float(
        numeric(
            _label(param, key),
            float(lo),
            float(hi),
            float(param.default),
            key=key,
            log=True,
            per_decade=per_decade,
            help=t(f"help.{param.name}"),
        )
    )


def url_radio(label: str, options: list, *, key: str, default, format_func=str, **kwargs):
    """A radio whose URL parameter is the option's code, not its translated label.

    Streamlit's own binding writes the displayed label into the URL (``layout=Halves``, ``layout=分半``), so a
    link would depend on the language it was made in. Here the code (``layout=halves``) is kept in sync by
    hand: read whenever a link sets it (``link.incoming``; an unknown value falls back to the default), written
    back when it changes, and left out of the URL when it equals the default.
    """
    return _url_choice(st.radio, label, options, key=key, default=default, format_func=format_func, **kwargs)


def url_select(label: str, options: list, *, key: str, default, format_func=str, **kwargs):
    """A selectbox bound to the URL by the option's code, as ``url_radio``: for a choice among more options than a
    row of tabs can show. Bound to ``tab`` it replaces ``url_tabs`` and keeps their links (``tab=shift``) working."""
    value = _url_choice(st.selectbox, label, options, key=key, default=default, format_func=format_func, **kwargs)
    if key == "tab":  # in place of tabs: the slides go through its options in order
        slides.tabs({o: format_func(o) for o in options}, value, values={o: o for o in options})
    return value


def _url_choice(widget, label: str, options: list, *, key: str, default, format_func, aliases=None, **kwargs):
    """``widget`` (a radio or a selectbox) over ``options``, its value's code kept in the URL under ``key``. A value
    left in the session that is not an option here (another page's widget of the same key) gives way to the one this
    control used last on this page, or to the default. ``aliases``: codes older links use, and the option each
    means (the link's value is then used, and written back under its current code)."""
    given = link.incoming(key)
    if given is not None and (given or link.previous(key) is not None or st.session_state.get(key) not in options):
        # a link sets it; a value that is no option leaves the default (and the notice says so). A link without it
        # keeps a value set before the control was first drawn (by code, or a test's click).
        code = (aliases or {}).get(given[-1], given[-1]) if given else None
        if code is not None and code != given[-1]:
            link.explained(key)
        st.session_state[key] = next((o for o in options if str(o) == code), default)
    elif st.session_state.get(key) not in options:  # another page's widget of the same key left its value
        remembered = link.previous(key)
        st.session_state[key] = remembered if remembered in options else default
    labels = {option: format_func(option) for option in options}  # in this run's language, whenever it is called
    value = widget(label, options, key=key, format_func=labels.__getitem__, **kwargs)
    link.leave(key, None if value == default else str(value), value)
    return value


class Pane(Protocol):
    """A tab of ``url_tabs``: a container to draw in, and whether it is the open one."""

    open: bool

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> bool | None: ...


def url_tabs(labels: dict[str, str], *, key: str = "tab") -> dict[str, Pane]:
    """Tabs that run only the open tab's code, with the open tab's code in the URL (``tab=shift``).

    ``labels`` maps each tab's code to its translated label, first tab first; returns code -> tab container,
    whose ``.open`` tells whether to compute its content. As with ``url_radio``, the code (not the label) is
    what the URL keeps, so a link opens the same tab in either language; an unknown code opens the first tab.
    In presentation mode a selector (``url_select``, the same ``tab=`` in the URL) replaces the row of tabs, which
    would not fit at a projector's size; elsewhere the row wraps onto a second line when it is too long.
    """
    codes = list(labels)
    memory = f"{key}.code"  # the open tab's code survives a change of language, which changes every label
    if presenting():
        if st.session_state.get(key) not in labels and st.session_state.get(memory) in labels:
            st.session_state[key] = st.session_state[memory]  # the tab that was open before the switch
        current = url_select(
            t("present.view"), codes, key=key, default=codes[0], format_func=labels.get, label_visibility="collapsed"
        )
        st.session_state[memory] = current
        return {code: _Pane(code == current) for code in codes}
    if st.session_state.get(memory) not in labels:  # first visit, or a code remembered from another page's tabs
        raw = st.query_params.get(key)
        st.session_state[memory] = raw if raw in labels else codes[0]
    by_label = {label: code for code, label in labels.items()}
    if st.session_state.get(key) not in by_label:
        st.session_state[key] = labels[st.session_state[memory]]
    tabs = st.tabs(list(labels.values()), key=key, on_change="rerun")
    current = by_label[st.session_state[key]]
    st.session_state[memory] = current
    slides.tabs(labels, current, values=labels)  # the deck goes through the tabs in order (the selector says it itself)
    if current == codes[0]:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = current
    return dict(zip(codes, cast(list[Pane], tabs), strict=True))


class _Pane:
    """What a selector-driven "tab" gives: a container for the open one, nothing drawn for the others."""

    def __init__(self, is_open: bool) -> None:
        self.open = is_open
        self._box = st.container() if is_open else None

    def __enter__(self):
        return self._box.__enter__() if self._box is not None else self

    def __exit__(self, *exc):
        return self._box.__exit__(*exc) if self._box is not None else False


def choice(param: Param, *, key: str, horizontal: bool = True):
    """A radio over a registry parameter's options, labelled through the catalog (``option.<value>``)."""
    return url_radio(
        _label(param, key),
        list(param.options),
        key=key,
        default=param.default,
        horizontal=horizontal,
        format_func={o: t(f"option.{o}") for o in param.options}.get,
        help=t(f"help.{param.name}"),
    )


def toggle(param: Param, *, key: str):
    """A toggle for a boolean registry parameter."""
    return st.toggle(
        _label(param, key), value=bool(param.default), key=key, bind="query-params", help=t(f"help.{param.name}")
    )
