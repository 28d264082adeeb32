"""Figures of the training lab: a similarity matrix evolving over training, as a plotly animation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import animation_controls, style


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
    animation_controls(
        fig, names, play=play, pause=pause, slider_prefix=slider_prefix, frame_ms=frame_ms, redraw=True, y=-0.16,
        slider_x=0.24,
    )  # fmt: skip
    fig.update_yaxes(autorange="reversed")
    style(fig, title, axis_title, axis_title, height)
    fig.update_layout(margin={"l": 60, "r": 20, "t": 60, "b": 150})
    return fig
