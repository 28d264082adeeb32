"""Figures of the Pitfalls page: the correct version and the buggy one on the same axes, in the same two colours
on every tab (blue: correct, red: buggy).

An error plot never lets its axis zoom into rounding noise: on a linear axis it starts at 0 and reaches at least a
reference level that says what a large error is (``scale``), drawn as a dotted line; on a log axis it stops at a
floor (``floor``), on which smaller errors and exact zeros are drawn, also a dotted line with its label.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import add_floor, add_scale, legend_above, style

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
    scale: tuple[float, str] | None = None,
    floor: tuple[float, str] | None = None,
) -> go.Figure:
    """Two lines over the shared ``x``: ``data[0]`` the correct version (solid blue), ``data[1]`` the buggy one
    (dashed red). Each of ``correct`` and ``buggy`` is ``(name, y)``.

    For an error plot give one of:

    ``scale = (level, name)``: a linear y axis from 0 to 1.08 max(level, largest y), with a dotted line at
    ``level`` named ``name`` as ``data[2]``; an error of 1e-16 then lies on the zero line instead of filling the
    plot.
    ``floor = (level, name)``: a log y axis that stops at ``level``; values below it (exact zeros too, which a log
    axis would drop) are drawn on the floor, a dotted line named ``name`` as ``data[2]``.
    """
    if scale is not None and floor is not None:
        raise ValueError("an error plot takes either a linear scale or a log floor, not both")
    fig = go.Figure()
    mode = "lines+markers" if markers else "lines"
    x = np.asarray(x)
    lines = [np.asarray(y, dtype=np.float64) for _, y in (correct, buggy)]
    if floor is not None:
        lines = [np.maximum(y, floor[0]) for y in lines]
    for (name, _), y, colour, dash in zip((correct, buggy), lines, (CORRECT, BUGGY), ("solid", "dash"), strict=True):
        fig.add_trace(go.Scatter(x=x, y=y, mode=mode, name=name, line={"color": colour, "dash": dash, "width": 2}))
    if scale is not None:
        add_scale(fig, x, lines, *scale)
    elif floor is not None:
        add_floor(fig, x, lines, *floor)
    elif log_y:
        fig.update_yaxes(type="log", exponentformat="power")
    legend_above(fig)
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
    legend_above(fig.update_layout(barmode="group"))
    if log_y:
        fig.update_yaxes(type="log", dtick=1, exponentformat="power")
    return style(fig, title, x_title, y_title, height)
