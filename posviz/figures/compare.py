"""Figures of the Compare page: stacked panels that share one axis (one kind of quantity per panel, one colour
per family on every figure) and a map of where each family enters the model."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import annotation_coordinate, style

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
CLOSING, OPENING = set("）)，。、；：！？"), set("（(")  # never start, never end a wrapped line


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
    every panel; ``notes`` maps a panel index to a line of text written in its top-left corner. Stacked panels each
    have a legend of their own, in one line over the panel (one legend under a column of panels is far from most of
    its lines); panels side by side share one legend under them."""
    n = len(rows)
    own_legends = not side_by_side and n > 1
    named: set = set()
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
        legend = ("legend" if index == 0 else f"legend{index + 1}") if own_legends else "legend"
        if own_legends:
            named = set()  # every panel names its own lines
        for s in series:
            fig.add_trace(
                go.Scatter(
                    x=np.asarray(s.x),
                    y=np.asarray(s.y, dtype=np.float64),
                    mode="lines",
                    name=s.name,
                    legendgroup=s.name,
                    showlegend=s.name not in named,
                    legend=legend,
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
        x = annotation_coordinate(fig.layout.xaxis, marker)  # log10 of it on a log axis
        lift = 24 if own_legends else 0  # over the first panel's legend
        fig.add_annotation(
            text=marker_text, x=x, xref="x", yref="paper", y=1.0, yanchor="bottom", yshift=lift, showarrow=False
        )
    height = 160 + panel_height * (1 if side_by_side else n)
    style(fig, title, "", "", height)
    if own_legends:
        for index in range(n):
            top = fig.layout[f"yaxis{index + 1 if index else ''}"].domain[1]
            fig.layout[f"legend{index + 1 if index else ''}"] = {
                "orientation": "h",
                "x": 0.0,
                "xanchor": "left",
                "y": top,
                "yanchor": "bottom",
                "yref": "paper",
                "bgcolor": "rgba(0,0,0,0)",
            }
        fig.update_layout(margin={"t": 110 if marker_text else 90, "b": 60})
    else:
        fig.update_layout(
            legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "x": 0},
            margin={"b": 100},
        )
    for index, (y_title, _) in enumerate(rows):
        row, col = (1, index + 1) if side_by_side else (index + 1, 1)
        fig.update_yaxes(title_text=y_title, row=row, col=col)
        fig.update_xaxes(title_text=x_title if side_by_side or index == n - 1 else "", row=row, col=col)
    return fig


def wrap(text: str, width: int) -> str:
    """``text`` broken into lines of about ``width`` characters with ``<br>`` (a Chinese character counts twice and
    may end a line; ``<sup>…</sup>`` and a short full-width bracket group stay whole), for labels on a figure."""
    units = re.findall(
        r"<sup>.*?</sup>|（[^（）]{1,8}）|[\u3000-\u9fff\uff00-\uffef]|[^\s\u3000-\u9fff\uff00-\uffef<]+|<|\s+", text
    )
    lines, line, size = [], "", 0
    for unit in units:
        if unit.isspace():
            if line:
                line, size = line + " ", size + 1
            continue
        plain = re.sub(r"</?sup>", "", unit)
        wide = len(plain) + len(re.findall(r"[\u3000-\u9fff\uff00-\uffef]", plain))  # wide characters count twice
        if size + wide > width and line.strip() and unit not in CLOSING:
            carry = line[-1] if line[-1] in OPENING else ""  # an opening bracket moves to the next line
            lines.append(line[: len(line) - len(carry)].rstrip())
            line, size = carry, 2 * len(carry)
        line, size = line + unit, size + wide
    return "<br>".join(lines + [line.rstrip()])


def family_map(
    cells: list[tuple[int, int, list[str], list[str], bool]],
    x_labels: list[str],
    y_labels: list[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
) -> go.Figure:
    """Where each family's terms enter the model (x: a stage of the attention, left to right) against what they
    depend on (y, top to bottom). ``cells`` holds ``(x index, y index, ids, names, device)``: ``ids`` are the
    terms' ids ("family" or "family:stage", kept in ``customdata``), ``names`` their labels; one trace per cell,
    its names (kept whole in the trace's ``meta``) written, wrapped, under a marker coloured like the cell's first
    family, hollow when ``device`` says the cell holds no position code (a training device). The axis labels are
    wrapped too and kept whole in ``layout.meta``."""
    fig = go.Figure()
    for x, y, ids, names, device in cells:
        colour = FAMILY_COLOURS.get(ids[0].split(":")[0])
        marker = {"size": 18, "color": colour, "line": {"width": 1, "color": "#333"}}
        if device:
            marker = {"size": 18, "symbol": "circle-open", "color": colour, "line": {"width": 3}}
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers+text",
                text=["<br>".join(wrap(n, 16) for n in names)],
                textposition="bottom center",
                cliponaxis=False,  # labels may reach into the margins
                marker=marker,
                customdata=[",".join(ids)],
                meta=list(names),
                hovertemplate="%{text}<extra></extra>",
                showlegend=False,
            )
        )
    fig.update_layout(meta={"x_labels": list(x_labels), "y_labels": list(y_labels)})
    fig.update_xaxes(
        tickvals=list(range(len(x_labels))),
        ticktext=[wrap(label, 14) for label in x_labels],
        tickangle=0,
        range=[-0.75, len(x_labels) - 0.25],
        showgrid=True,
    )
    fig.update_yaxes(
        tickvals=list(range(len(y_labels))),
        ticktext=[wrap(label, 22) for label in y_labels],
        range=[len(y_labels) + 0.4, -0.5],  # room under the last row for its wrapped labels
    )
    return style(fig, title, x_title, y_title, 520)
