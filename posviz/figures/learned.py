"""Figures of the Learned page: positions projected to a plane, and each dimension's frequency along positions."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import hline, style


def dominant_frequencies(
    dims,
    dominant,
    reference,
    floor: float,
    *,
    title: str,
    x_title: str,
    y_title: str,
    table_name: str,
    reference_name: str,
    floor_name: str,
) -> go.Figure:
    """Markers: the dominant frequency of each analysed column; a line: the sinusoidal table's frequency of every
    column; a dotted line, labelled ``floor_name`` just under it: the slowest frequency ``floor`` that the table's
    length can resolve. Log frequency axis."""
    dims = np.asarray(dims, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    fig = go.Figure(
        [
            go.Scatter(
                x=np.arange(reference.size, dtype=np.float64),
                y=reference,
                mode="lines",
                name=reference_name,
                line={"color": "#888888", "width": 2},
            ),
            go.Scatter(
                x=dims,
                y=np.asarray(dominant, dtype=np.float64),
                mode="markers",
                name=table_name,
                marker={"size": 6, "color": "#d62728"},
            ),
        ]
    )
    fig.update_yaxes(type="log", dtick=1, exponentformat="power")
    hline(fig, floor, floor_name, dash="dot", color="#1f77b4", below=True)
    fig.update_layout(legend={"orientation": "h", "y": -0.2})
    return style(fig, title, x_title, y_title, 420)
