"""Figures of the ALiBi page: slopes coloured by where they come from, the article's formula against the paper's,
and line charts with a marked training length."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import legend_above, style, vline

ORIGIN_COLOURS = ("#1f77b4", "#ff7f0e", "#c7c7c7")


def slopes_by_origin(labels, slopes, origin, names, *, title: str, x_title: str, y_title: str) -> go.Figure:
    """One bar per head in a single trace, coloured by ``origin`` (an index into ``names``); the legend entries
    are marker-only traces, so ``data[0]`` holds every slope in head order."""
    origin = np.asarray(origin)
    fig = go.Figure(
        go.Bar(
            x=list(labels),
            y=np.asarray(slopes, dtype=np.float64),
            marker_color=[ORIGIN_COLOURS[o] for o in origin],
            customdata=np.asarray([names[o] for o in origin]),
            hovertemplate="%{x}: %{y:.6g}<br>%{customdata}<extra></extra>",
            showlegend=False,
        )
    )
    for o in np.unique(origin):
        fig.add_trace(go.Bar(x=[None], y=[None], name=names[o], marker_color=ORIGIN_COLOURS[o]))
    fig.update_yaxes(type="log", dtick=1)
    legend_above(fig)
    return style(fig, title, x_title, y_title, 340)


def slope_ladder(slopes, use, names, *, title: str, x_title: str, y_title: str) -> go.Figure:
    """The slopes of 2c heads as a ladder of markers, one trace per use (c-head slope, extra slope, unused), the
    rungs numbered from 0 like every head on the page (rung h has slope 2^(-8(h + 1) / 2c))."""
    use = np.asarray(use)
    rung = np.arange(len(use))
    fig = go.Figure()
    for u in (0, 1, 2):
        pick = use == u
        if pick.any():
            fig.add_trace(
                go.Scatter(
                    x=rung[pick],
                    y=np.asarray(slopes, dtype=np.float64)[pick],
                    mode="markers",
                    name=names[u],
                    marker={"size": 12, "color": ORIGIN_COLOURS[u], "line": {"width": 1, "color": "#333"}},
                )
            )
    fig.update_yaxes(type="log", dtick=1)
    fig.update_xaxes(dtick=1 if len(use) <= 32 else None)
    return style(fig, title, x_title, y_title, 340)


def formula_check(series: dict[str, tuple[np.ndarray, np.ndarray]], labels: tuple[str, str], **titles) -> go.Figure:
    """Paper (solid) against article (dashed) slopes per head index, one colour per head count:
    ``series`` maps a head-count label to ``(paper, article)``; ``labels`` names the two rules."""
    palette = ("#1f77b4", "#2ca02c", "#d62728", "#9467bd")
    fig = go.Figure()
    for k, (name, (paper, article)) in enumerate(series.items()):
        colour = palette[k % len(palette)]
        x = np.arange(len(paper))
        for rule, y, dash in ((labels[0], paper, "solid"), (labels[1], article, "dash")):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=np.asarray(y, dtype=np.float64),
                    mode="lines+markers",
                    name=f"{name} · {rule}",
                    line={"color": colour, "dash": dash},
                )
            )
    fig.update_yaxes(type="log", dtick=1)
    return style(fig, titles["title"], titles["x_title"], titles["y_title"], 400)


def lines_with_marker(
    x, series: dict[str, np.ndarray], *, marker: float, marker_text: str, log_x=False, log_y=False, **titles
) -> go.Figure:
    """Line chart (one line per entry of ``series``) with a dashed vertical line at x = ``marker``, labelled
    ``marker_text`` above the plot area, where the label covers no curve."""
    fig = go.Figure()
    x = np.asarray(x)
    for name, y in series.items():
        fig.add_trace(go.Scatter(x=x, y=np.asarray(y, dtype=np.float64), mode="lines", name=name))
    fig.update_xaxes(type="log" if log_x else "linear")
    fig.update_yaxes(type="log" if log_y else "linear")
    style(fig, titles["title"], titles["x_title"], titles["y_title"], 380)
    return vline(fig, float(marker), marker_text, dash="dash", at="above")  # after style, which sets the margins
