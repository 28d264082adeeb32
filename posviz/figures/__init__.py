"""Plotly figure builders: arrays in, ``go.Figure`` out. No math on positions here, and no Streamlit.

``base`` holds the shared builders (heatmaps with large-matrix handling, lines, bars) and the common style;
a page with figures of its own kind keeps their builders in a module named after it (``figures.rope`` for the
rotation animation, say), built on ``base.style``.
"""

from .base import (
    EXACT_MAX_CELLS,
    FONT,
    MAX_SIDE,
    bars,
    block_mean,
    heatmap,
    hline,
    lines,
    positions_path,
    style,
    vline,
)

__all__ = [
    "EXACT_MAX_CELLS",
    "FONT",
    "MAX_SIDE",
    "bars",
    "block_mean",
    "heatmap",
    "hline",
    "lines",
    "positions_path",
    "style",
    "vline",
]
