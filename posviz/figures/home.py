"""Figures of the Home page: two attention matrices side by side on one colour scale, and one bar per token
against a reference marker. Tokens label the axes by index, so a word that occurs twice keeps both its rows."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import legend_above, style

BAR_COLOR = "#d62728"
REFERENCE_COLOR = "#1f77b4"


def _token_axis(labels) -> dict:
    """Ticks at 0 .. n - 1 named by the tokens; upright for single characters (Chinese), slanted for words."""
    labels = list(labels)
    angle = 0 if all(len(label) <= 2 for label in labels) else -45
    return {"tickmode": "array", "tickvals": np.arange(len(labels)), "ticktext": labels, "tickangle": angle}


def attention_pair(
    left: np.ndarray,
    right: np.ndarray,
    left_labels,
    right_labels,
    *,
    titles: tuple[str, str],
    title: str,
    x_title: str,
    y_title: str,
    colorbar_title: str = "",
    height: int = 480,
) -> go.Figure:
    """Two square matrices (rows: queries, columns: keys) side by side, row 0 at the top, one colour scale
    from 0 to the larger maximum of the two. ``layout.meta`` holds the shape, as for ``base.heatmap``."""
    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, horizontal_spacing=0.12)
    hover = f"{y_title}: %{{customdata[0]}}<br>{x_title}: %{{customdata[1]}}<br>%{{z:.4f}}<extra></extra>"
    for col, (matrix, labels) in enumerate(((left, left_labels), (right, right_labels)), start=1):
        names = np.asarray(list(labels), dtype=object)
        pairs = np.stack(np.broadcast_arrays(names[:, None], names[None, :]), axis=-1)
        fig.add_trace(
            go.Heatmap(
                z=matrix.astype(np.float32),
                customdata=pairs.tolist(),
                coloraxis="coloraxis",
                hovertemplate=hover,
            ),
            row=1,
            col=col,
        )
        fig.update_xaxes(_token_axis(labels), row=1, col=col)
        fig.update_yaxes(_token_axis(labels), autorange="reversed", tickangle=0, row=1, col=col)
    top = max(float(left.max()), float(right.max()), 1e-12)
    fig.update_layout(
        coloraxis={"colorscale": "Blues", "cmin": 0.0, "cmax": top, "colorbar": {"title": {"text": colorbar_title}}},
        meta={"source_shape": list(left.shape), "shape": list(left.shape), "downsampled": False},
    )
    style(fig, title, x_title, y_title, height)
    fig.update_layout(margin={"t": 90})
    return fig


def token_bars(
    labels,
    values: np.ndarray,
    reference: np.ndarray,
    *,
    names: tuple[str, str],
    title: str,
    x_title: str,
    y_title: str,
    height: int = 380,
) -> go.Figure:
    """One bar per token (``values``) with a marker for each token's ``reference`` value on the same axis,
    which starts at 0 and reaches past the largest of both: bars of 1e-16 stay flat instead of being zoomed, and
    each bar's top is marked by a dash in its colour, so that a bar of height 0 is seen to be 0, not missing."""
    values, reference = np.asarray(values, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    x = np.arange(len(values))
    fig = go.Figure(
        [
            go.Bar(x=x, y=values, name=names[0], marker_color=BAR_COLOR, hovertemplate="%{y:.3g}<extra></extra>"),
            go.Scatter(
                x=x,
                y=reference,
                name=names[1],
                mode="markers",
                marker={"symbol": "line-ew-open", "size": 18, "line": {"width": 3}, "color": REFERENCE_COLOR},
                hovertemplate="%{y:.3g}<extra></extra>",
            ),
            # the top of each bar as a dash in the bar's colour, drawn over the axis line: a bar of height 0 (which
            # plotly leaves out) still shows, at 0
            go.Scatter(
                x=x,
                y=values,
                name=names[0],
                mode="markers",
                marker={"symbol": "line-ew", "size": 22, "line": {"width": 4, "color": BAR_COLOR}},
                cliponaxis=False,
                showlegend=False,
                hoverinfo="skip",
            ),
        ]
    )
    top = max(float(values.max()), float(reference.max()), 1e-12)
    fig.update_xaxes(_token_axis(labels))
    fig.update_yaxes(range=[0.0, 1.1 * top])
    legend_above(fig)
    return style(fig, title, x_title, y_title, height)
