"""Figures of the training lab: a similarity matrix evolving over training, as a plotly animation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import style


def similarity_animation(
    steps,
    matrices,
    *,
    title: str,
    axis_title: str,
    play: str,
    pause: str,
    slider_prefix: str,
    frame_ms: int = 400,
    height: int = 480,
) -> go.Figure:
    """One cosine-similarity heatmap per snapshot (``matrices`` of shape (snapshots, n, n), colour range [-1, 1]),
    one frame each, named by its training step; Play / Pause buttons and a slider over the steps."""
    stack = np.asarray(matrices, dtype=np.float32)
    names = [str(int(s)) for s in np.asarray(steps)]
    colour = {"colorscale": "RdBu_r", "zmin": -1.0, "zmax": 1.0, "colorbar": {"title": {"text": "cos"}}}
    fig = go.Figure(go.Heatmap(z=stack[0], **colour))
    fig.frames = [go.Frame(data=[go.Heatmap(z=m, **colour)], name=name) for m, name in zip(stack, names, strict=True)]
    still = {"frame": {"duration": 0, "redraw": True}, "mode": "immediate", "transition": {"duration": 0}}
    playing = {"frame": {"duration": frame_ms, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    fig.update_layout(
        updatemenus=[
            {
                "type": "buttons",
                "direction": "left",
                "x": 0.0,
                "y": -0.16,
                "xanchor": "left",
                "yanchor": "top",
                "showactive": False,
                "buttons": [
                    {"label": play, "method": "animate", "args": [None, {**playing, "mode": "immediate"}]},
                    {"label": pause, "method": "animate", "args": [[None], still]},
                ],
            }
        ],
        sliders=[
            {
                "active": 0,
                "x": 0.24,
                "len": 0.76,
                "y": -0.16,
                "yanchor": "top",
                "currentvalue": {"prefix": slider_prefix},
                "steps": [{"label": name, "method": "animate", "args": [[name], still]} for name in names],
            }
        ],
    )
    fig.update_yaxes(autorange="reversed")
    style(fig, title, axis_title, axis_title, height)
    fig.update_layout(margin={"l": 60, "r": 20, "t": 60, "b": 150})
    return fig
