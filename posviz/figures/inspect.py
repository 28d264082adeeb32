"""Figures of the checkpoint inspector: marks on a loaded table's heatmap."""

from __future__ import annotations

import plotly.graph_objects as go


def mark_rows(fig: go.Figure, stop: int, label: str) -> go.Figure:
    """A copy of ``fig`` (a heatmap, which may be shared) with rows 0 .. stop - 1 (rows on the y axis, one unit a
    row) outlined by a dashed box and a label: the offset rows a model stores but never uses for a real position."""
    fig = go.Figure(fig)
    fig.add_hrect(
        y0=-0.5,
        y1=stop - 0.5,
        line={"color": "#d62728", "width": 2, "dash": "dash"},
        fillcolor="rgba(214,39,40,0.12)",
        annotation_text=label,
        annotation_position="bottom right",
        annotation_font_color="#d62728",
    )
    return fig
