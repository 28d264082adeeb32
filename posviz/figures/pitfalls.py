"""Figures of the Pitfalls page: the correct version and the buggy one on the same axes, in the same two colours
on every tab (blue: correct, red: buggy)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import style

CORRECT, BUGGY = "#1f77b4", "#d62728"


def versus(
    x,
    correct: tuple[str, np.ndarray],
    buggy: tuple[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_y: bool = False,
    markers: bool = False,
    height: int = 360,
) -> go.Figure:
    """Two lines over the shared ``x``: ``data[0]`` the correct version (solid blue), ``data[1]`` the buggy one
    (dashed red). Each of ``correct`` and ``buggy`` is ``(name, y)``."""
    fig = go.Figure()
    mode = "lines+markers" if markers else "lines"
    for (name, y), colour, dash in ((correct, CORRECT, "solid"), (buggy, BUGGY, "dash")):
        fig.add_trace(
            go.Scatter(
                x=np.asarray(x),
                y=np.asarray(y, dtype=np.float64),
                mode=mode,
                name=name,
                line={"color": colour, "dash": dash, "width": 2},
            )
        )
    if log_y:
        fig.update_yaxes(type="log", exponentformat="power")
    fig.update_layout(legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"})
    return style(fig, title, x_title, y_title, height)


def versus_bars(
    labels,
    correct: tuple[str, np.ndarray],
    buggy: tuple[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_y: bool = False,
    height: int = 360,
) -> go.Figure:
    """Grouped bars per label: ``data[0]`` the correct values (blue), ``data[1]`` the buggy ones (red)."""
    fig = go.Figure(
        [
            go.Bar(x=list(labels), y=np.asarray(y, dtype=np.float64), name=name, marker_color=colour)
            for (name, y), colour in ((correct, CORRECT), (buggy, BUGGY))
        ]
    )
    fig.update_layout(
        barmode="group",
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
    )
    if log_y:
        fig.update_yaxes(type="log", dtick=1, exponentformat="power")
    return style(fig, title, x_title, y_title, height)
