"""Figures of Transformer-XL's relative encoding (the XLNet page): the sinusoids R_{i-j} by offset, the four terms
of one query's score with their sum, and how a cached segment extends the keys (offsets against naive absolute
positions). Arrays and translated strings in, ``go.Figure`` out."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import heatmap, style

MEMORY_SHADE = "rgba(127, 127, 127, 0.15)"
COLLISION_COLOUR, DISTINCT_COLOUR, SUM_COLOUR = "#d62728", "#1f77b4", "#2ca02c"


def relative_embedding_heatmap(
    pos_emb, top_offset: float, *, title: str, x_title: str, y_title: str, colorbar_title: str = "", height: int = 460
) -> go.Figure:
    """R_{i-j} as a heatmap, one row per offset and one column per dimension (sines, then cosines), in XLNet's order:
    row r is the offset ``top_offset - r`` (``top_offset`` = k_len), the largest offset at the top."""
    matrix = np.asarray(pos_emb, dtype=np.float64)
    fig = heatmap(
        matrix,
        title=title,
        x_title=x_title,
        y_title=y_title,
        colorbar_title=colorbar_title,
        y0=float(top_offset),
        dy=-1.0,
        zmin=-1.0,
        zmax=1.0,
        height=height,
    )
    fig.update_yaxes(autorange=True)  # offsets decrease down the rows: the largest stays on top
    return fig


def score_terms_figure(
    keys,
    panels: dict[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    mem_len: int = 0,
    memory_label: str = "",
    height: int = 720,
) -> go.Figure:
    """One bar panel per entry of ``panels`` (translated name -> one value per key, in order: the four terms, then
    their sum, drawn in green), sharing the key axis ``keys``; the first ``mem_len`` keys (the memory) shaded and
    labelled ``memory_label``."""
    keys = np.asarray(keys)
    names = list(panels)
    fig = make_subplots(rows=len(names), cols=1, shared_xaxes=True, subplot_titles=names, vertical_spacing=0.05)
    for row, name in enumerate(names, start=1):
        last = row == len(names)
        fig.add_trace(
            go.Bar(
                x=keys,
                y=np.asarray(panels[name], dtype=np.float32),
                name=name,
                showlegend=False,
                marker={"color": SUM_COLOUR if last else DISTINCT_COLOUR},
            ),
            row=row,
            col=1,
        )
    if mem_len:
        fig.add_vrect(
            x0=float(keys[0]) - 0.5,
            x1=float(keys[mem_len - 1]) + 0.5,
            fillcolor=MEMORY_SHADE,
            line_width=0,
            annotation_text=memory_label,
            annotation_position="top left",
        )
    fig = style(fig, title, "", "", height)
    fig.update_xaxes(title_text=x_title, row=len(names), col=1)
    fig.update_yaxes(title_text=y_title, row=(len(names) + 1) // 2, col=1)
    return fig


def memory_figure(
    offset,
    naive,
    collides,
    mem_len: int,
    *,
    title: str,
    panel_titles: tuple[str, str],
    x_title: str,
    y_title: str,
    offset_title: str,
    naive_title: str,
    memory_label: str = "",
    height: int = 620,
) -> go.Figure:
    """Top: the offset i + mem_len - j of every query (current segment, rows) to every key (memory then segment,
    columns), each one distinct along a row. Bottom: the absolute position a naive model would give each key, red
    where another key has the same one (``collides``). The memory's columns are shaded in both."""
    offset = np.asarray(offset, dtype=np.float64)
    naive = np.asarray(naive, dtype=np.float64)
    collides = np.asarray(collides, dtype=bool)
    keys = np.arange(naive.size)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35], subplot_titles=panel_titles)
    fig.add_trace(
        go.Heatmap(
            z=offset.astype(np.float32),
            x=keys,
            y=np.arange(offset.shape[0]),
            colorscale="RdBu_r",
            zmid=0.0,
            text=offset.astype(np.int64).astype(str),
            texttemplate="%{text}" if offset.size <= 400 else None,
            colorbar={"title": {"text": offset_title, "side": "right"}, "len": 0.6, "y": 0.7},
            hovertemplate=f"{x_title}: %{{x}}<br>%{{y}}<br>{offset_title}: %{{z}}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Bar(
            x=keys,
            y=naive.astype(np.float32),
            marker={"color": np.where(collides, COLLISION_COLOUR, DISTINCT_COLOUR).tolist()},
            text=naive.astype(np.int64).astype(str),
            textposition="outside",
            cliponaxis=False,
            showlegend=False,
            name=naive_title,
        ),
        row=2,
        col=1,
    )
    if mem_len:
        fig.add_vrect(x0=-0.5, x1=mem_len - 0.5, fillcolor=MEMORY_SHADE, line_width=0)
        fig.add_annotation(  # inside the shade of the lower panel, clear of the upper panel's title
            x=(mem_len - 1) / 2, y=1.0, xref="x2", yref="y2 domain", yanchor="top", text=memory_label, showarrow=False
        )
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_yaxes(rangemode="tozero", row=2, col=1)
    fig = style(fig, title, "", "", height)  # clears every axis title: each panel's are set after it
    fig.update_xaxes(title_text=x_title, row=2, col=1)
    fig.update_yaxes(title_text=y_title, row=1, col=1)
    fig.update_yaxes(title_text=naive_title, row=2, col=1)
    return fig
