"""Figures of the XLNet page: a mask with one token's row outlined."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import style


def outline_row(fig: go.Figure, row: int, n_cols: int, colour: str = "#d62728") -> go.Figure:
    """A copy of ``fig`` (a heatmap, which may be shared) with a rectangle around row ``row``, cells at integer
    coordinates."""
    fig = go.Figure(fig)
    fig.add_shape(type="rect", x0=-0.5, x1=n_cols - 0.5, y0=row - 0.5, y1=row + 0.5, line={"color": colour, "width": 3})
    return fig


def label_tokens(fig: go.Figure, words) -> go.Figure:
    """A copy of ``fig`` (a token-by-token heatmap, which may be shared), every row and column ticked with
    "index word"."""
    fig = go.Figure(fig)
    ticks = list(range(len(words)))
    text = [f"{i} {w}" for i, w in enumerate(words)]
    fig.update_xaxes(tickvals=ticks, ticktext=text, tickangle=-45)
    fig.update_yaxes(tickvals=ticks, ticktext=text)
    return fig


def rank_bars(labels, rank, *, title: str, x_title: str, y_title: str) -> go.Figure:
    """One bar per position, as high as its rank in the factorisation order, with the rank written on it (so the
    token predicted first, rank 0, is labelled too)."""
    rank = np.asarray(rank, dtype=np.float64)
    fig = go.Figure(
        go.Bar(x=list(labels), y=rank, text=rank.astype(np.int64), textposition="outside", cliponaxis=False)
    )
    fig.update_yaxes(dtick=1 if len(rank) <= 16 else None, rangemode="tozero")
    return style(fig, title, x_title, y_title, 340)
