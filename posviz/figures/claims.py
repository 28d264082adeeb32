"""Figures of the Myth-or-fact page: several series with their own x values, reference levels and marks, panels
stacked over one x axis (two quantities with different ranges, each on its own axis), grouped bars and token-by-token
heatmaps. Arrays in, ``go.Figure`` out; built on ``base.style``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from .base import MARK_COLOR, heatmap, hline, style, vline

COLOURS = qualitative.Plotly


def series(
    traces: dict[str, tuple],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    x_ticks=None,
    legend_below: bool = False,
    height: int = 400,
) -> go.Figure:
    """One line with markers per entry of ``traces``: name -> (x, y) or (x, y, dash). A log x axis is ticked at the
    decades, or at ``x_ticks`` when given; ``legend_below`` puts long legend entries under the plot, which then
    takes the full width."""
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
    fig.update_xaxes(type="log" if log_x else "linear", exponentformat="power", dtick=1 if log_x else None)
    fig.update_yaxes(type="log" if log_y else "linear", exponentformat="power")
    if legend_below:
        fig.update_layout(legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "x": 0})
        fig.update_layout(margin={"b": 110})
        height += 60
    if x_ticks is not None:
        fig.update_xaxes(tickmode="array", tickvals=np.asarray(x_ticks), ticktext=[f"{v:,}" for v in x_ticks])
    return style(fig, title, x_title, y_title, height)


def level(fig: go.Figure, y: float, label: str, *, dash: str = "dash") -> go.Figure:
    """A horizontal reference line at ``y`` with its label above it at the left edge."""
    return hline(fig, y, label, dash=dash, color=MARK_COLOR)


def mark(fig: go.Figure, x: float, label: str, *, dash: str = "dot", side: str = "right") -> go.Figure:
    """A vertical reference line at ``x`` with its label at the top, on the ``side`` ("right" or "left") of it."""
    return vline(fig, x, label, dash=dash, color=MARK_COLOR, side=side)


def stacked(
    x,
    panels: list[tuple[str, dict[str, np.ndarray], bool]],
    *,
    title: str,
    x_title: str,
    log_x: bool = True,
    panel_height: int = 230,
) -> go.Figure:
    """Panels stacked over one shared x axis, one per ``(y_title, series, log_y)`` entry (series: name -> y), each
    with its own y axis and its own ticks, so two quantities with different ranges never share an axis."""
    rows = len(panels)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    x = np.asarray(x)
    colour = 0
    for row, (y_title, series, log_y) in enumerate(panels, start=1):
        for name, y in series.items():
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=np.asarray(y, dtype=np.float64),
                    mode="lines+markers",
                    name=name,
                    line={"color": COLOURS[colour % len(COLOURS)]},
                ),
                row=row,
                col=1,
            )
            colour += 1
        fig.update_yaxes(title_text=y_title, type="log" if log_y else "linear", exponentformat="power", row=row, col=1)
        fig.update_xaxes(
            type="log" if log_x else "linear", exponentformat="power", dtick=1 if log_x else None, row=row, col=1
        )
    style(fig, title, "", "", 120 + panel_height * rows)
    for row, (y_title, _, _) in enumerate(panels, start=1):
        fig.update_yaxes(title_text=y_title, row=row, col=1)
    fig.update_xaxes(title_text=x_title, row=rows, col=1)
    fig.update_layout(legend={"orientation": "h", "yref": "container", "y": 0.0, "yanchor": "bottom", "x": 0})
    fig.update_layout(margin={"b": 90})
    return fig


def marks(fig: go.Figure, xs: dict[float, str], *, dash: str = "dot") -> go.Figure:
    """Vertical reference lines at each x of ``xs`` (x -> label) across every panel of a stacked figure, their labels
    above the top panel: the leftmost label extends to the left of its line, the others to the right, so two lines
    close together keep readable labels."""
    for index, (x, label) in enumerate(sorted(xs.items())):
        side = "left" if index == 0 and len(xs) > 1 else "right"
        vline(fig, x, label, dash=dash, color=MARK_COLOR, side=side, at="above")
    return fig


def grouped_bars(
    labels,
    series: dict[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_y: bool = False,
    height: int = 380,
) -> go.Figure:
    """Bars side by side per label, one colour per entry of ``series`` (name -> one value per label), each bar with
    its value written on it; a linear axis starts at 0 so a zero shows as nothing, not as a short bar."""
    fig = go.Figure()
    for index, (name, values) in enumerate(series.items()):
        values = np.asarray(values, dtype=np.float64)
        fig.add_trace(
            go.Bar(
                x=list(labels),
                y=values,
                name=name,
                marker_color=COLOURS[index % len(COLOURS)],
                text=[f"{v:.3g}" for v in values],
                textposition="outside",
                cliponaxis=False,
            )
        )
    fig.update_layout(barmode="group", legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    if log_y:
        fig.update_yaxes(type="log", exponentformat="power")
    else:
        top = max(float(np.nanmax(np.asarray(v, dtype=np.float64))) for v in series.values())
        fig.update_yaxes(range=[0.0, 1.15 * max(top, 1e-12)])
    return style(fig, title, x_title, y_title, height)


def token_heatmap(matrix, labels, **heatmap_kwargs) -> go.Figure:
    """A token-by-token matrix (rows: queries, columns: keys) as an exact heatmap (``base.heatmap``, with
    ``heatmap_kwargs``), every row and column ticked with "index token"."""
    fig = heatmap(np.asarray(matrix, dtype=np.float64), **heatmap_kwargs)
    ticks, text = list(range(len(labels))), [f"{i} {w}" for i, w in enumerate(labels)]
    fig.update_xaxes(tickvals=ticks, ticktext=text, tickangle=-45)
    fig.update_yaxes(tickvals=ticks, ticktext=text)
    return fig


def mask_pair(left, right, *, subtitles: tuple[str, str], levels: tuple[str, str], **titles) -> go.Figure:
    """Two boolean token-by-token masks side by side (``figures.rope.heatmap_pair``), every token ticked, the colour
    bar naming its two ``levels`` (False, True)."""
    from .rope import heatmap_pair

    fig = heatmap_pair(
        np.asarray(left, dtype=np.float64),
        np.asarray(right, dtype=np.float64),
        subtitles=subtitles,
        zmin=0.0,
        zmax=1.0,
        colorscale="Blues",
        **titles,
    )
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(dtick=1)
    fig.update_traces(colorbar={"tickvals": [0, 1], "ticktext": list(levels)})
    return fig
