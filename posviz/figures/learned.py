"""Figures of the Learned page: positions projected to a plane, and each dimension's frequency along positions."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import hline, style


def projection(positions, coords, *, title: str, x_title: str, y_title: str, colorbar_title: str) -> go.Figure:
    """One marker per position at its 2-D coordinates, coloured by the position and joined in order by a faint
    line, so a smooth table draws a curve and a random one a cloud."""
    positions = np.asarray(positions, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    fig = go.Figure(
        [
            go.Scatter(
                x=coords[:, 0],
                y=coords[:, 1],
                mode="lines",
                line={"color": "rgba(120,120,120,0.35)", "width": 1},
                hoverinfo="skip",
                showlegend=False,
            ),
            go.Scatter(
                x=coords[:, 0],
                y=coords[:, 1],
                mode="markers",
                marker={
                    "color": positions,
                    "colorscale": "Viridis",
                    "size": 6,
                    "showscale": True,
                    "colorbar": {"title": {"text": colorbar_title, "side": "right"}},
                },
                customdata=positions,
                hovertemplate=f"{colorbar_title}: %{{customdata:.0f}}<extra></extra>",
                showlegend=False,
            ),
        ]
    )
    return style(fig, title, x_title, y_title, 460)


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
