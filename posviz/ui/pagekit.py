"""Wiring the lesson pages share: a figure's title and axis titles from their catalog keys, and the narrow column a
lone control sits in."""

from __future__ import annotations

from typing import TypedDict, overload

import streamlit as st

from .i18n import t


class AxisLabels(TypedDict):
    """The keyword arguments of a figure builder that name it and its x axis: ``**labels(title, x)`` passes them."""

    title: str
    x_title: str


class Labels(AxisLabels):
    """... and its y axis too: ``**labels(title, x, y)``."""

    y_title: str


@overload
def labels(title: str, x: str, y: None = None, **values) -> AxisLabels: ...


@overload
def labels(title: str, x: str, y: str, **values) -> Labels: ...


def labels(title: str, x: str, y: str | None = None, **values) -> AxisLabels | Labels:
    """The ``title``, ``x_title`` and ``y_title`` of a figure from their catalog keys, the ``{fields}`` of each
    filled from ``values`` (a text uses those it names): ``labels("rope.decay", "rope.axis.distance",
    "rope.axis.bound", d=64)``. Without ``y`` the figure keeps its own y title (none, or one it draws per panel)."""
    named = AxisLabels(title=t(title, **values), x_title=t(x, **values))
    if y is None:
        return named
    return Labels(**named, y_title=t(y, **values))


def narrow():
    """A column a third of the page wide, for a control that stands alone on its row (a full-width number box and
    slider would stretch across the page): ``with narrow(): k = CTL.numeric("k", 1, 100, 1)``."""
    return st.columns([1, 2])[0]
