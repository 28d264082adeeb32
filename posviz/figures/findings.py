"""Figures of the classic findings about learned tables, each the answer to a question about the table loaded: the
rows under PCA in three dimensions (a helix?), the cosine similarity by offset (how fast does a position stop
resembling its neighbours?), the roughness along positions (noisier past some index?). Arrays and translated strings
in, ``go.Figure`` out; the 2-D projection is ``base.positions_path``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import FONT, NUMBER_FORMAT, lines, plain_colorbars, vline


def components_3d(
    positions,
    coords,
    *,
    title: str,
    axis_titles: tuple[str, str, str],
    colorbar_title: str,
    height: int = 520,
) -> go.Figure:
    """The first three principal coordinates of each position (``coords`` (n, 3)) as a 3-D path coloured by the
    position; ``axis_titles`` already carry each component's share of the variance if the caller wants it."""
    positions = np.asarray(positions, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    fig = go.Figure(
        go.Scatter3d(
            x=coords[:, 0],
            y=coords[:, 1],
            z=coords[:, 2],
            mode="lines+markers",
            line={"color": "rgba(120,120,120,0.35)", "width": 2},
            marker={
                "color": positions,
                "colorscale": "Viridis",
                "size": 3,
                "showscale": True,
                "colorbar": {"title": {"text": colorbar_title, "side": "right"}},
            },
            customdata=positions,
            hovertemplate=f"{colorbar_title}: %{{customdata:.0f}}<extra></extra>",
            showlegend=False,
        )
    )
    fig.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        font={"family": FONT},
        height=height,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        scene={
            **{
                f"{a}axis": {"title": {"text": t}, "exponentformat": NUMBER_FORMAT}
                for a, t in zip("xyz", axis_titles, strict=True)
            },
            "aspectmode": "data",
        },
    )
    return plain_colorbars(fig)


def similarity_decay_figure(
    offsets,
    mean,
    *,
    title: str,
    x_title: str,
    y_title: str,
    name: str,
    half_offset: int | None = None,
    half_label: str = "",
    height: int = 380,
) -> go.Figure:
    """The mean cosine similarity of positions ``offsets`` apart (one line named ``name``), on a fixed axis from -1
    to 1, with a mark at ``half_offset`` (where it first falls to 1/2) when there is one."""
    fig = lines(
        offsets, {name: mean}, title=title, x_title=x_title, y_title=y_title, y_range=(-1.0, 1.0), height=height
    )
    if half_offset is not None:
        vline(fig, float(half_offset), half_label)
    return fig


def roughness_figure(
    positions,
    value,
    *,
    title: str,
    x_title: str,
    y_title: str,
    name: str,
    change: int | None = None,
    change_label: str = "",
    height: int = 380,
) -> go.Figure:
    """The roughness of each row (its second difference along positions, one line named ``name``) on a log axis, with
    a mark at ``change``, the position where it changes level."""
    value = np.asarray(value, dtype=np.float64)
    floor = float(value[value > 0].min()) if np.any(value > 0) else 1e-12
    fig = lines(
        positions,
        {name: np.maximum(value, floor)},
        title=title,
        x_title=x_title,
        y_title=y_title,
        log_y=True,
        height=height,
    )
    if change is not None:
        vline(fig, float(change), change_label)
    return fig
