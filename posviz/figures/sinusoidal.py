"""Figures of the Sinusoidal page that the shared builders do not cover: two-axis offset profiles, wavelengths
against the context, projections coloured by position, the layout permutation, and reference marks."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import MARK_COLOR, hline, lines, style, vline

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


def mark(
    fig: go.Figure,
    *,
    x: float | None = None,
    y: float | None = None,
    label: str = "",
    dash: str = "dash",
    position: str | None = None,
    row: int = 0,
) -> go.Figure:
    """A labelled vertical (``x``) or horizontal (``y``) reference line; ``position`` places the label ("top right",
    "bottom right", "above right" for a vertical line, "above" meaning over the plot, in label ``row`` 0, 1, ...;
    "top left", "top right" for a horizontal one). The label sits on its line on a log axis too (``base.vline`` /
    ``base.hline``)."""
    if x is not None:
        at, side = (position or "top right").split()
        vline(fig, x, label, dash=dash, color=MARK_COLOR, side=side, at=at, row=row)
    if y is not None:
        at, side = (position or "top left").split()
        hline(fig, y, label, dash=dash, color=MARK_COLOR, side=side, below=at == "bottom")
    return fig


def shade_from(fig: go.Figure, x0: float, x1: float, label: str = "", *, vertical: bool = True) -> go.Figure:
    """Shade the band [x0, x1] (positions past the training length, say), vertically or horizontally."""
    band = {"fillcolor": "rgba(214, 39, 40, 0.08)", "line_width": 0, "annotation_text": label}
    if vertical:
        fig.add_vrect(x0=x0, x1=x1, annotation_position="top left", **band)
    else:
        fig.add_hrect(y0=x0, y1=x1, annotation_position="bottom left", **band)
    return fig


def lines_shaded_from(x, series: dict[str, np.ndarray], x0: float, x1: float, label: str, **kwargs) -> go.Figure:
    """``base.lines`` with the band [x0, x1] shaded (:func:`shade_from`) unless it is empty (x0 > x1)."""
    fig = lines(x, series, **kwargs)
    return shade_from(fig, x0, x1, label) if x0 <= x1 else fig


def log_lines(x, series: dict[str, np.ndarray], **kwargs) -> go.Figure:
    """``base.lines`` with log axes labelled as powers of ten (10⁻¹², not 1p)."""
    fig = lines(x, series, **kwargs)
    fig.update_xaxes(exponentformat="power")
    fig.update_yaxes(exponentformat="power")
    return fig


def overlaid_lines(x, series: dict[str, np.ndarray], **kwargs) -> go.Figure:
    """``base.lines`` where the first series is drawn wide and the others dashed on top, so that a measured
    curve and its closed form stay visible when they coincide."""
    fig = lines(x, series, **kwargs)
    for index, trace in enumerate(fig.data):
        trace.line = (
            {"width": 4, "color": PALETTE[0]}
            if index == 0
            else {"width": 1.5, "dash": "dash", "color": PALETTE[index % len(PALETTE)]}
        )
    return fig


def dual_lines(
    x, left: tuple[str, np.ndarray], right: tuple[str, np.ndarray], *, title: str, x_title: str, height: int = 380
) -> go.Figure:
    """Two series over the same x, the first on the left axis and the second on the right axis.

    Each axis chooses its own round ticks over its own range (ticks synchronised to the other axis would read
    0.938, 0.781, ...). When the right series is a fixed multiple of the left one (the mean cosine is the mean dot
    product over d/2), the right range is the left range times that multiple, so the two curves lie on each other
    and either axis reads the same curve."""
    fig = go.Figure()
    for (name, y), axis, line in (
        (left, "y", {"color": PALETTE[0], "width": 4}),
        (right, "y2", {"color": PALETTE[1], "width": 1.5, "dash": "dash"}),
    ):
        fig.add_trace(
            go.Scatter(
                x=np.asarray(x), y=np.asarray(y, dtype=np.float64), name=name, yaxis=axis, mode="lines", line=line
            )
        )
    yaxis: dict = {"title": {"text": left[0], "font": {"color": PALETTE[0]}}, "tickmode": "auto"}
    yaxis2: dict = {
        "title": {"text": right[0], "font": {"color": PALETTE[1]}},
        "overlaying": "y",
        "side": "right",
        "tickmode": "auto",
        "showgrid": False,
    }
    scale = _common_scale(np.asarray(left[1], dtype=np.float64), np.asarray(right[1], dtype=np.float64))
    if scale is not None:
        low, high = _padded_range(np.asarray(left[1], dtype=np.float64))
        yaxis["range"], yaxis2["range"] = [low, high], [low * scale, high * scale]
    fig.update_layout(yaxis=yaxis, yaxis2=yaxis2, legend={"orientation": "h", "y": -0.2})
    style(fig, title, x_title, left[0], height)
    fig.update_layout(margin={"r": 70}, yaxis2_title_text=right[0])
    return fig


def _common_scale(left: np.ndarray, right: np.ndarray) -> float | None:
    """s with right = s * left everywhere (to 1e-9 relative), or None."""
    finite = np.isfinite(left) & np.isfinite(right)
    if not finite.any() or not np.any(left[finite]):
        return None
    big = np.argmax(np.abs(left[finite]))
    scale = right[finite][big] / left[finite][big]
    tolerance = 1e-9 * np.abs(right[finite]).max()
    return float(scale) if scale > 0 and np.all(np.abs(right[finite] - scale * left[finite]) <= tolerance) else None


def _padded_range(values: np.ndarray) -> tuple[float, float]:
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    pad = 0.05 * (high - low or abs(high) or 1.0)
    return low - pad, high + pad


def wavelengths(
    wavelength,
    slow,
    context: int,
    *,
    title: str,
    x_title: str,
    y_title: str,
    fast_name: str,
    slow_name: str,
    context_label: str,
    height: int = 400,
) -> go.Figure:
    """Wavelength of each pair on a log axis, pairs longer than the context drawn apart, the context marked."""
    wavelength, slow = np.asarray(wavelength, dtype=np.float64), np.asarray(slow, dtype=bool)
    pairs = np.arange(wavelength.size)
    fig = go.Figure()
    for name, chosen, color in ((fast_name, ~slow, PALETTE[0]), (slow_name, slow, PALETTE[1])):
        fig.add_trace(
            go.Scatter(
                x=pairs[chosen],
                y=wavelength[chosen],
                mode="markers",
                name=name,
                marker={"color": color, "size": 6 if wavelength.size <= 256 else 3},
            )
        )
    fig.add_trace(  # a trace, not add_hline: annotations on a log axis take log10 coordinates
        go.Scatter(
            x=[-0.5, pairs.size - 0.5],
            y=[context, context],
            mode="lines",
            name=context_label,
            line={"color": MARK_COLOR, "width": 1.5, "dash": "dash"},
        )
    )
    fig.update_yaxes(type="log", dtick=1, exponentformat="power")
    fig.update_layout(legend={"orientation": "h", "y": -0.2})
    return style(fig, title, x_title, y_title, height)


def permutation(order, *, title: str, x_title: str, y_title: str, height: int = 340) -> go.Figure:
    """Where each column of one layout comes from in the other: a dot at (j, order[j])."""
    order = np.asarray(order, dtype=np.float64)
    fig = go.Figure(
        go.Scatter(
            x=np.arange(order.size),
            y=order,
            mode="markers+lines",
            marker={"size": 6 if order.size <= 128 else 3, "color": PALETTE[0]},
            line={"color": "#ccc", "width": 1},
        )
    )
    return style(fig, title, x_title, y_title, height)
