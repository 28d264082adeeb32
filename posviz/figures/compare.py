"""Figures of the Compare page: stacked panels that share one axis (one kind of quantity per panel, one colour
per family on every figure) and a map of where each family enters the model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import style

FAMILY_COLOURS = {
    "sinusoidal": "#1f77b4",
    "learned": "#ff7f0e",
    "rope": "#2ca02c",
    "alibi": "#d62728",
    "t5": "#9467bd",
    "shaw": "#8c564b",
    "xlnet": "#e377c2",
}
SIDE_DASH = ("solid", "dash")


@dataclass(frozen=True)
class Series:
    """One line: its family (for the colour), legend name, x and y; ``dash`` tells two configurations apart."""

    family: str
    name: str
    x: np.ndarray
    y: np.ndarray
    dash: str = "solid"
    width: float = 2.0


def panels(
    rows: list[tuple[str, list[Series]]],
    *,
    title: str,
    x_title: str,
    side_by_side: bool = False,
    log: bool = False,
    marker: float | None = None,
    marker_text: str = "",
    notes: dict[int, str] | None = None,
    panel_height: int = 230,
) -> go.Figure:
    """One panel per ``(y_title, series)`` entry of ``rows``, stacked over a shared x axis (or side by side with
    ``side_by_side``); ``log`` puts both axes on log scales; ``marker`` draws a dashed vertical line at that x on
    every panel; ``notes`` maps a panel index to a line of text written in its top-left corner."""
    n = len(rows)
    named = set()
    grid = (1, n) if side_by_side else (n, 1)
    fig = make_subplots(
        rows=grid[0],
        cols=grid[1],
        shared_xaxes=not side_by_side,
        vertical_spacing=0.06 if not side_by_side else 0.0,
        horizontal_spacing=0.1,
    )
    for index, (_, series) in enumerate(rows):
        row, col = (1, index + 1) if side_by_side else (index + 1, 1)
        for s in series:
            fig.add_trace(
                go.Scatter(
                    x=np.asarray(s.x),
                    y=np.asarray(s.y, dtype=np.float64),
                    mode="lines",
                    name=s.name,
                    legendgroup=s.name,
                    showlegend=s.name not in named,
                    line={"color": FAMILY_COLOURS.get(s.family), "dash": s.dash, "width": s.width},
                ),
                row=row,
                col=col,
            )
            named.add(s.name)
        if log:
            fig.update_yaxes(type="log", dtick=1, exponentformat="power", row=row, col=col)
            fig.update_xaxes(type="log", dtick=1, exponentformat="power", row=row, col=col)
        if marker is not None:
            fig.add_vline(x=marker, line_dash="dash", line_color="#555", row=row, col=col)
        if notes and index in notes:
            fig.add_annotation(
                text=notes[index],
                xref="x domain" if index == 0 else f"x{index + 1} domain",
                yref="y domain" if index == 0 else f"y{index + 1} domain",
                x=0.01,
                y=0.99,
                xanchor="left",
                yanchor="top",
                showarrow=False,
                font={"size": 12, "color": "#555"},
            )
    if marker is not None and marker_text:
        fig.add_annotation(text=marker_text, x=marker, xref="x", yref="paper", y=1.0, yanchor="bottom", showarrow=False)
    height = 160 + panel_height * (1 if side_by_side else n)
    style(fig, title, "", "", height)
    fig.update_layout(
        legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "x": 0},
        margin={"b": 100},
    )
    for index, (y_title, _) in enumerate(rows):
        row, col = (1, index + 1) if side_by_side else (index + 1, 1)
        fig.update_yaxes(title_text=y_title, row=row, col=col)
        fig.update_xaxes(title_text=x_title if side_by_side or index == n - 1 else "", row=row, col=col)
    return fig


def family_map(
    cells: list[tuple[int, int, list[str], list[str]]],
    x_labels: list[str],
    y_labels: list[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """Where each family enters the model (x: a stage of the attention, left to right) against what its signal
    depends on (y). ``cells`` holds ``(x index, y index, family keys, family names)``; one trace per cell, its
    names written on a marker coloured like the cell's first family."""
    fig = go.Figure()
    for x, y, keys, names in cells:
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers+text",
                text=["<br>".join(names)],
                textposition="middle right",
                marker={"size": 18, "color": FAMILY_COLOURS.get(keys[0]), "line": {"width": 1, "color": "#333"}},
                customdata=[",".join(keys)],
                hovertemplate="%{text}<extra></extra>",
                showlegend=False,
            )
        )
    fig.update_xaxes(
        tickvals=list(range(len(x_labels))), ticktext=x_labels, range=[-0.3, len(x_labels) - 0.2], showgrid=True
    )
    fig.update_yaxes(tickvals=list(range(len(y_labels))), ticktext=y_labels, range=[-0.6, len(y_labels) - 0.4])
    return style(fig, title, x_title, y_title, 360)
