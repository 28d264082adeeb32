"""Figures of the relative-position page: T5's bucket curve with its three regions shaded (exact, logarithmic,
the last bucket)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import legend_above, style

REGION_COLOURS = {"exact": "44, 160, 44", "log": "31, 119, 180", "flat": "127, 127, 127"}


def bucket_curve(
    offsets, buckets, *, max_exact: int, last_start: int, bidirectional: bool, region_names: dict, **titles
) -> go.Figure:
    """Bucket against relative position n = j - i, with shaded bands: exact for |n| < max_exact, logarithmic up
    to ``last_start`` (where the last bucket of a side begins), flat from there on. Causal T5 buckets only n <= 0,
    so the keys after the query (which all get bucket 0) fall in the exact band. ``data[0]`` is the curve."""
    offsets = np.asarray(offsets)
    lo, hi = float(offsets.min()) - 0.5, float(offsets.max()) + 0.5
    me, s = max_exact - 0.5, last_start - 0.5
    bands = [("exact", -me, me if bidirectional else hi), ("log", -s, -me), ("flat", lo, -s)]
    if bidirectional:
        bands += [("log", me, s), ("flat", s, hi)]
    fig = go.Figure(
        go.Scatter(x=offsets, y=np.asarray(buckets, dtype=np.float64), mode="lines", name=titles["y_title"])
    )
    for region, x0, x1 in bands:
        x0, x1 = max(x0, lo), min(x1, hi)
        if x1 > x0:
            colour = f"rgba({REGION_COLOURS[region]}, 0.15)"
            fig.add_vrect(x0=x0, x1=x1, fillcolor=colour, line_width=0, layer="below")
    for region, name in region_names.items():
        marker = {"symbol": "square", "size": 14, "color": f"rgba({REGION_COLOURS[region]}, 0.45)"}
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, marker=marker))
    legend_above(fig)
    return style(fig, titles["title"], titles["x_title"], titles["y_title"], 400)
