"""Controls bound to the URL: every widget has a stable key, which is also its query parameter, so a shared
link reproduces the view. Ranges and defaults come from the family registry's ``Param`` entries."""

from __future__ import annotations

import math

import streamlit as st

from posviz.encodings.registry import Param

from . import slides
from .i18n import t


def _label(param: Param, key: str) -> str:
    return t(f"param.{param.name}")


def number(param: Param, *, key: str, maximum: float | None = None, slider: bool = True, **kwargs):
    """A slider (or number box) for a numeric registry parameter, bound to the URL under ``key``."""
    hi = param.maximum if maximum is None else min(param.maximum, maximum)
    widget = st.slider if slider else st.number_input
    if isinstance(param.default, int):
        return widget(
            _label(param, key),
            int(param.minimum),
            int(hi),
            int(min(param.default, hi)),
            step=int(param.step or 1),
            key=key,
            bind="query-params",
            help=t(f"help.{param.name}"),
            **kwargs,
        )
    return widget(
        _label(param, key),
        float(param.minimum),
        float(hi),
        float(param.default),
        step=param.step,
        key=key,
        bind="query-params",
        help=t(f"help.{param.name}"),
        **kwargs,
    )


def log_number(param: Param, *, key: str, per_decade: int = 4):
    """A select-slider over log-spaced whole numbers (1, 1.8, 3.2, 5.6 per decade, to two significant digits)
    for a parameter like a base, bound to the URL as a plain number (``base=10000``)."""
    lo, hi = math.log10(param.minimum), math.log10(param.maximum)
    steps = round((hi - lo) * per_decade)
    values = sorted({int(float(f"{10 ** (lo + i / per_decade):.2g}")) for i in range(steps + 1)} | {int(param.default)})
    return float(
        st.select_slider(
            _label(param, key),
            options=values,
            value=int(param.default),
            key=key,
            bind="query-params",
            help=t(f"help.{param.name}"),
        )
    )


def url_radio(label: str, options: list, *, key: str, default, format_func=str, **kwargs):
    """A radio whose URL parameter is the option's code, not its translated label.

    Streamlit's own binding writes the displayed label into the URL (``layout=Halves``, ``layout=分半``), so a
    link would depend on the language it was made in. Here the code (``layout=halves``) is kept in sync by
    hand: read when the widget first appears (an unknown value falls back to the default), written back on every
    run, and left out of the URL when it equals the default.
    """
    return _url_choice(st.radio, label, options, key=key, default=default, format_func=format_func, **kwargs)


def url_select(label: str, options: list, *, key: str, default, format_func=str, **kwargs):
    """A selectbox bound to the URL by the option's code, as ``url_radio``: for a choice among more options than a
    row of tabs can show. Bound to ``tab`` it replaces ``url_tabs`` and keeps their links (``tab=shift``) working."""
    value = _url_choice(st.selectbox, label, options, key=key, default=default, format_func=format_func, **kwargs)
    if key == "tab":  # in place of tabs: the slides go through its options in order
        slides.tabs({o: format_func(o) for o in options}, value, values={o: o for o in options})
    return value


def _url_choice(widget, label: str, options: list, *, key: str, default, format_func, **kwargs):
    """``widget`` (a radio or a selectbox) over ``options``, its value's code kept in the URL under ``key``. A value
    left in the session that is not an option here (another page's widget of the same key) is read again from the
    URL, or falls back to the default."""
    if st.session_state.get(key) not in options:
        raw = st.query_params.get(key)
        st.session_state[key] = next((o for o in options if str(o) == raw), default)
    labels = {option: format_func(option) for option in options}  # in this run's language, whenever it is called
    value = widget(label, options, key=key, format_func=labels.__getitem__, **kwargs)
    if value == default:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = str(value)
    return value


def url_tabs(labels: dict[str, str], *, key: str = "tab") -> dict[str, object]:
    """Tabs that run only the open tab's code, with the open tab's code in the URL (``tab=shift``).

    ``labels`` maps each tab's code to its translated label, first tab first; returns code -> tab container,
    whose ``.open`` tells whether to compute its content. As with ``url_radio``, the code (not the label) is
    what the URL keeps, so a link opens the same tab in either language; an unknown code opens the first tab.
    """
    codes = list(labels)
    memory = f"{key}.code"  # the open tab's code survives a change of language, which changes every label
    if st.session_state.get(memory) not in labels:  # first visit, or a code remembered from another page's tabs
        raw = st.query_params.get(key)
        st.session_state[memory] = raw if raw in labels else codes[0]
    by_label = {label: code for code, label in labels.items()}
    if st.session_state.get(key) not in by_label:
        st.session_state[key] = labels[st.session_state[memory]]
    tabs = st.tabs(list(labels.values()), key=key, on_change="rerun")
    current = by_label[st.session_state[key]]
    st.session_state[memory] = current
    if current == codes[0]:
        st.query_params.pop(key, None)
    else:
        st.query_params[key] = current
    return dict(zip(codes, tabs, strict=True))


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
