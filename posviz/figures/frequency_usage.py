"""Figures of a RoPE checkpoint's frequency usage (Barbero et al., 2025): usage by layer x pair and by head x pair,
usage against wavelength with the training context marked, the p-RoPE view, and the positional score pattern of
each head. Arrays and translated strings in, ``go.Figure`` out."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import heatmap, lines, style, vline

KEPT_COLOUR, DROPPED_COLOUR = "#1f77b4", "#d62728"


def usage_heatmap(
    usage,
    *,
    title: str,
    x_title: str,
    y_title: str,
    rows=None,
    colorbar_title: str = "",
    height: int = 460,
) -> go.Figure:
    """Usage as a heatmap: one row per layer (or per head of one layer), top down, labelled by ``rows`` (the layer
    numbers, which need not follow each other: a rotary group skips the layers of other groups; default 0, 1, ...);
    columns the rotary pairs, pair 0 (the highest frequency) on the left; colours from 0 (unused) up."""
    usage = np.asarray(usage, dtype=np.float64)
    labels = np.arange(usage.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    if labels.shape != (usage.shape[0],):
        raise ValueError(f"{usage.shape[0]} rows of usage need as many labels, got {labels.size}")
    fig = heatmap(
        usage,
        title=title,
        x_title=x_title,
        y_title=y_title,
        colorscale="Viridis",
        zmid=None,
        zmin=0.0,
        colorbar_title=colorbar_title,
        height=height,
    )
    if not fig.layout.meta["downsampled"]:  # hover names the row's own layer, not its place in the figure
        fig.update_traces(
            customdata=np.repeat(labels[:, None], usage.shape[1], axis=1),
            hovertemplate=fig.data[0].hovertemplate.replace("%{y}", "%{customdata}"),
        )
    if usage.shape[0] <= 40:  # whole layers and heads, each by its number, not the half steps plotly picks
        fig.update_yaxes(tickvals=list(range(usage.shape[0])), ticktext=[str(int(r)) for r in labels])
    if usage.shape[1] <= 40:
        fig.update_xaxes(dtick=1)
    return fig


def usage_against_wavelength(
    wavelength,
    series: dict[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    training_context: float | None = None,
    context_label: str = "",
    height: int = 380,
) -> go.Figure:
    """One line per entry of ``series`` (translated name -> usage of each pair) against the pairs' wavelengths
    (positions per turn) on a log axis, with a dotted mark at the ``training_context``: pairs to its right never
    turn once inside the context the model was trained on."""
    wavelength = np.asarray(wavelength, dtype=np.float64)
    order = np.argsort(wavelength)
    fig = lines(
        wavelength[order],
        {name: np.asarray(values, dtype=np.float64)[order] for name, values in series.items()},
        title=title,
        x_title=x_title,
        y_title=y_title,
        log_x=True,
        from_zero=True,
        height=height,
    )
    for trace in fig.data:
        trace.mode = "lines+markers"
    if training_context:
        vline(fig, float(training_context), context_label)
    return fig


def p_rope_figure(
    wavelength,
    usage,
    dropped,
    *,
    title: str,
    x_title: str,
    y_title: str,
    kept_label: str,
    dropped_label: str,
    share_text: str = "",
    height: int = 380,
) -> go.Figure:
    """The usage of each pair against its wavelength (log axis), the pairs a p-RoPE would stop rotating (``dropped``,
    the lowest frequencies, the longest wavelengths) in red and the kept ones in blue; ``share_text`` (already
    translated and filled in, e.g. the share of the usage the dropped pairs carry) above the plot."""
    wavelength = np.asarray(wavelength, dtype=np.float64)
    usage = np.asarray(usage, dtype=np.float64)
    dropped = np.asarray(dropped, dtype=bool)
    fig = go.Figure()
    for mask, name, colour in ((~dropped, kept_label, KEPT_COLOUR), (dropped, dropped_label, DROPPED_COLOUR)):
        fig.add_trace(
            go.Scatter(
                x=wavelength[mask],
                y=usage[mask],
                mode="markers",
                name=name,
                marker={"color": colour, "size": 8},
                hovertemplate=f"{x_title}: %{{x:.4g}}<br>{y_title}: %{{y:.4g}}<extra>{name}</extra>",
            )
        )
    fig.update_xaxes(type="log", exponentformat="power")
    fig.update_yaxes(rangemode="tozero")
    if share_text:
        fig.add_annotation(
            x=0.0,
            y=1.0,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            text=share_text,
            showarrow=False,
        )
    return style(fig, title, x_title, y_title, height)


def score_pattern_figure(
    distances,
    score,
    head_labels,
    *,
    title: str,
    x_title: str,
    y_title: str,
    max_lines: int = 8,
    colorbar_title: str = "",
    height: int = 420,
) -> go.Figure:
    """The positional score of each head against the distance m - n: one line per head when there are at most
    ``max_lines`` heads, else a heads x distance heatmap (one row per head, ``head_labels`` on the rows)."""
    distances = np.asarray(distances, dtype=np.float64)
    score = np.atleast_2d(np.asarray(score, dtype=np.float64))
    labels = [str(label) for label in head_labels]
    if len(labels) <= max_lines:
        return lines(
            distances,
            dict(zip(labels, score, strict=True)),
            title=title,
            x_title=x_title,
            y_title=y_title,
            height=height,
        )
    step = float(distances[1] - distances[0]) if distances.size > 1 else 1.0
    fig = heatmap(
        score,
        title=title,
        x_title=x_title,
        y_title="",
        x0=float(distances[0]),
        dx=step,
        colorbar_title=colorbar_title or y_title,
        height=height,
    )
    if score.size <= 256 * 256:
        fig.update_yaxes(tickvals=list(range(len(labels))), ticktext=labels)
    return fig
