"""Fuzzing every page: random and boundary values in the URL, then random moves of the controls, through AppTest.

Whatever the state, a page may show a readable error (``st.error``) but never an uncaught exception. A failing
state is printed (hypothesis shrinks it to the smallest query and moves that still fail). ``FUZZ_EXAMPLES`` sets
the number of links opened per page, each followed by up to ``FUZZ_MOVES`` moves (default 4): the suite's 12
visit about 35 states a page, ``FUZZ_EXAMPLES=100 pytest tests/app/test_fuzz.py`` 220-310 (the count per page is
printed at the end of the run).
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ._support import PAGE_NAMES, open_page, tab_codes

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
#: Moves after a link is opened: each example visits up to 1 + MOVES states.
MOVES = int(os.environ.get("FUZZ_MOVES", "4"))
#: States visited per page in this session (links opened plus moves), reported at the end.
STATES: dict[str, int] = {}
WIDGET_KINDS = ("slider", "select_slider", "number_input", "toggle", "radio", "selectbox", "multiselect", "text_input")
#: Values that break naive parsing, sit on a limit or just past it; sizes stay within what a test can afford.
SPECIAL = ["", "0", "-1", "1", "2", "7", "64", "4096", "4097", "32768", "1e9", "-1e9", "nan", "inf", "true", "x"]


def keys_of(page: str) -> list[str]:
    """The URL keys of the page: every keyed widget of every tab, plus the tab and the language."""
    found = {"tab", "lang"}
    for code in tab_codes(page) or (None,):
        at = open_page(page, query={"tab": code} if code else None)
        found |= {w.key for kind in WIDGET_KINDS for w in getattr(at, kind) if w.key}
    return sorted(found)


def values() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(SPECIAL),
        st.integers(-(10**6), 10**6).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.text(max_size=8),
    )


def assert_no_exception(at, what: str) -> None:
    assert not at.exception, f"{what}: uncaught exception\n" + "\n".join(e.value for e in at.exception)


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_random_links_and_moves_never_raise(page):
    keys, codes = keys_of(page), tab_codes(page)
    tab = st.sampled_from(codes) if codes else st.nothing()

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        query=st.dictionaries(st.sampled_from([*keys, "junk"]), values(), max_size=4),
        opened=st.one_of(st.none(), tab),  # a link to one of the tabs, most of the time
        data=st.data(),
    )
    def check(query, opened, data):
        if opened is not None:
            query = query | {"tab": opened}
        at = open_page(page, query=query)
        assert_no_exception(at, f"{page}?{query}")
        for step in range(data.draw(st.integers(0, MOVES), label="moves")):
            # what is drawn never depends on the page (hypothesis replays draws): a widget index and a point in
            # [0, 1] that ``move`` maps onto whichever widgets (and tabs) this state shows
            pick, where = data.draw(st.integers(0, 99), label="widget"), data.draw(unit(), label="value")
            widgets = [w for kind in WIDGET_KINDS for w in getattr(at, kind) if w.key and not w.disabled]
            labels = [t.label for t in at.tabs]
            if pick % (len(widgets) + 1) == len(widgets) and labels:  # a click on a tab
                what = f"tab {labels[min(int(where * len(labels)), len(labels) - 1)]!r}"
                at.session_state["tab"] = labels[min(int(where * len(labels)), len(labels) - 1)]
            elif widgets:
                widget = widgets[pick % len(widgets)]
                what = f"{widget.key} at {where}"
                move(widget, where)
            else:
                break
            at.run()
            STATES[page] = STATES.get(page, 0) + 1
            assert_no_exception(at, f"{page}?{query} after move {step + 1}, {what}")
        STATES[page] = STATES.get(page, 0) + 1

    check()
    assert STATES[page] >= EXAMPLES  # every example opened a link, and each move was a state of its own


#: Numbers typed into a box without limits of its own: out of range either way, between steps, huge, negative zero.
TYPED = (-5.0, 0.0, -0.0, 1.0, 2.5, 63.5, 100.0, 1000.0, 1e6, 1e12)


def unit() -> st.SearchStrategy[float]:
    """A point in [0, 1], often an end (the boundaries of a range are where bugs live)."""
    return st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(0.0, 1.0))


def move(widget, where: float) -> None:
    """Set ``widget`` to the value at ``where`` (0 = first option or minimum, 1 = last or maximum)."""
    kind = widget.type
    if kind in ("radio", "selectbox", "select_slider"):
        options = list(widget.options)
        if options:
            widget.set_value(options[min(int(where * len(options)), len(options) - 1)])
    elif kind == "multiselect":
        options = list(widget.options)
        widget.set_value(options[: int(where * len(options))])
    elif kind == "toggle":
        widget.set_value(where >= 0.5)
    elif kind == "text_input":
        widget.input(["", "x", "the dog bit the man", "狗咬人", "a" * 300][min(int(where * 5), 4)])
    else:  # slider, number_input: a point of the range, kept affordable (at most 600 steps above the minimum)
        lo, hi = widget.min, widget.max
        if lo is None or hi is None:  # a number box without limits of its own: what a student might type
            widget.set_value(TYPED[min(int(where * len(TYPED)), len(TYPED) - 1)])
        elif isinstance(lo, int) and isinstance(hi, int):
            widget.set_value(lo + round(where * (min(hi, lo + 600) - lo)))
        else:
            widget.set_value(float(lo) + where * (float(hi) - float(lo)))
