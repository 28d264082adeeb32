"""Figures of the XLNet page: a mask with one token's row outlined, and the rank of every position with the
prediction targets marked."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import heatmap, style

TARGET_COLOUR, CONTEXT_COLOUR = "#d62728", "#9aa5b1"


def mask_heatmap(mask, words, row: int, *, label_limit: int, colour: str = "#d62728", **heatmap_kwargs) -> go.Figure:
    """A token-by-token mask as a heatmap (1 = may attend; ``heatmap_kwargs`` go to ``base.heatmap``), every row
    and column ticked with "index word" when there are at most ``label_limit`` tokens, and row ``row`` outlined."""
    fig = heatmap(np.asarray(mask, dtype=np.float64), **heatmap_kwargs)
    n = len(words)
    if n <= label_limit:
        ticks, text = list(range(n)), [f"{i} {w}" for i, w in enumerate(words)]
        fig.update_xaxes(tickvals=ticks, ticktext=text, tickangle=-45)
        fig.update_yaxes(tickvals=ticks, ticktext=text)
    fig.add_shape(type="rect", x0=-0.5, x1=n - 0.5, y0=row - 0.5, y1=row + 0.5, line={"color": colour, "width": 3})
    return fig


def rank_bars(labels, rank, *, targets=(), title: str, x_title: str, y_title: str) -> go.Figure:
    """One bar per position, as high as its rank in the factorisation order, with the rank written on it (so the
    token predicted first, rank 0, is labelled too); the positions in ``targets`` (the prediction targets) are
    drawn in red, the others in grey."""
    rank = np.asarray(rank, dtype=np.float64)
    is_target = np.isin(np.arange(rank.size), np.asarray(targets, dtype=np.int64))
    colours = np.where(is_target, TARGET_COLOUR, CONTEXT_COLOUR).tolist()
    fig = go.Figure(
        go.Bar(
            x=list(labels),
            y=rank,
            text=rank.astype(np.int64),
            textposition="outside",
            cliponaxis=False,
            marker={"color": colours},
        )
    )
    fig.update_yaxes(dtick=1 if len(rank) <= 16 else None, rangemode="tozero")
    return style(fig, title, x_title, y_title, 340)
