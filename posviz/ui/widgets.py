"""Controls bound to the URL: every widget has a stable key, which is also its query parameter, so a shared
link reproduces the view. Ranges and defaults come from the family registry's ``Param`` entries."""

from __future__ import annotations

import math

import streamlit as st

from posviz.encodings.registry import Param

from .i18n import t


def _label(param: Param, prefix: str) -> str:
    return t(f"param.{param.name}")


def number(param: Param, *, key: str, maximum: float | None = None, slider: bool = True, **kwargs):
    """A slider (or number box) for a numeric registry parameter, bound to the URL under ``key``."""
    hi = param.maximum if maximum is None else min(param.maximum, maximum)
    widget = st.slider if slider else st.number_input
    if isinstance(param.default, int):
        return widget(_label(param, key), int(param.minimum), int(hi), int(min(param.default, hi)),
                      step=int(param.step or 1), key=key, bind="query-params", help=t(f"help.{param.name}"), **kwargs)
    return widget(_label(param, key), float(param.minimum), float(hi), float(param.default),
                  step=param.step, key=key, bind="query-params", help=t(f"help.{param.name}"), **kwargs)


def log_number(param: Param, *, key: str, per_decade: int = 4):
    """A select-slider over log-spaced values (1, 1.8, 3.2, 5.6 per decade) for a parameter like a RoPE base."""
    lo, hi = math.log10(param.minimum), math.log10(param.maximum)
    steps = round((hi - lo) * per_decade)
    values = sorted({float(f"{10 ** (lo + i / per_decade):.2g}") for i in range(steps + 1)} | {float(param.default)})
    return st.select_slider(_label(param, key), options=values, value=float(param.default), key=key,
                            bind="query-params", help=t(f"help.{param.name}"),
                            format_func=lambda v: f"{v:,.0f}")


def choice(param: Param, *, key: str, horizontal: bool = True):
    """A radio over a registry parameter's options, labelled through the catalog (``option.<value>``)."""
    return st.radio(_label(param, key), list(param.options), index=list(param.options).index(param.default),
                    key=key, bind="query-params", horizontal=horizontal,
                    format_func=lambda v: t(f"option.{v}"), help=t(f"help.{param.name}"))


def toggle(param: Param, *, key: str):
    """A toggle for a boolean registry parameter."""
    return st.toggle(_label(param, key), value=bool(param.default), key=key, bind="query-params",
                     help=t(f"help.{param.name}"))
