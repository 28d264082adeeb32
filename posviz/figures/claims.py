"""Figures of the Myth-or-fact page: several series with their own x values, reference levels and marks, and
two quantities with different ranges on one x axis. Arrays in, ``go.Figure`` out; built on ``base.style``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import style


def series(
    traces: dict[str, tuple],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    height: int = 400,
) -> go.Figure:
    """One line with markers per entry of ``traces``: name -> (x, y) or (x, y, dash)."""
    fig = go.Figure()
    for name, (x, y, *dash) in traces.items():
        fig.add_trace(
            go.Scatter(
                x=np.asarray(x),
                y=np.asarray(y, dtype=np.float64),
                mode="lines+markers",
                name=name,
                line={"dash": dash[0] if dash else "solid"},
            )
        )
    fig.update_xaxes(type="log" if log_x else "linear", exponentformat="power")
    fig.update_yaxes(type="log" if log_y else "linear", exponentformat="power")
    return style(fig, title, x_title, y_title, height)


def level(fig: go.Figure, y: float, label: str, *, dash: str = "dash") -> go.Figure:
    """A horizontal reference line at ``y`` with its label."""
    fig.add_hline(y=y, line_dash=dash, line_color="grey", annotation_text=label, annotation_position="top left")
    return fig


def mark(fig: go.Figure, x: float, label: str, *, dash: str = "dot") -> go.Figure:
    """A vertical reference line at ``x`` with its label."""
    fig.add_vline(x=x, line_dash=dash, line_color="grey", annotation_text=label, annotation_position="top right")
    return fig


def two_scales(
    x,
    left: tuple[str, np.ndarray],
    right: tuple[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    log_x: bool = True,
    height: int = 420,
) -> go.Figure:
    """Two series over the same ``x``, the first on the left axis, the second on the right one."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.asarray(x), y=np.asarray(left[1], dtype=np.float64), name=left[0], mode="lines"))
    fig.add_trace(
        go.Scatter(x=np.asarray(x), y=np.asarray(right[1], dtype=np.float64), name=right[0], mode="lines", yaxis="y2")
    )
    fig.update_layout(
        yaxis2={"title": {"text": right[0]}, "overlaying": "y", "side": "right", "showgrid": False},
        legend={"orientation": "h", "y": -0.2},
    )
    fig.update_xaxes(type="log" if log_x else "linear", exponentformat="power")
    style(fig, title, x_title, left[0], height)
    fig.update_layout(yaxis2_title_text=right[0])
    return fig
