"""Figures of the training lab: a similarity matrix evolving over training, as a plotly animation, and accuracy
against the sequence length around the training length."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .base import animation_controls, hline, lines, style, vline


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


def accuracy_by_length(
    lengths,
    accuracy: dict[str, np.ndarray],
    *,
    min_len: int,
    train_len: int,
    title: str,
    x_title: str,
    y_title: str,
    trained_label: str,
    train_line_label: str,
) -> go.Figure:
    """Accuracy of every encoding (``accuracy``: name -> one value per length, NaN where the model cannot run) against
    the sequence length, with the band of training lengths ``min_len`` .. ``train_len`` shaded and a dotted line at
    ``train_len``; the accuracy axis runs from 0 to 1."""
    fig = lines(lengths, accuracy, title=title, x_title=x_title, y_title=y_title, height=420)
    fig.update_traces(mode="lines+markers")
    fig.add_vrect(
        x0=min_len,
        x1=train_len,
        fillcolor="#888888",
        opacity=0.12,
        line_width=0,
        annotation_text=trained_label,
        annotation_position="top left",
    )
    vline(fig, train_len, train_line_label, at="bottom")
    fig.update_yaxes(range=[0, 1.05])
    fig.update_layout(legend={"orientation": "h", "y": -0.22})
    return fig


def probe_bars(
    encodings,
    errors: dict[str, np.ndarray],
    *,
    guess: tuple[float, str],
    title: str,
    x_title: str,
    y_title: str,
    height: int = 340,
) -> go.Figure:
    """The position probe's error per encoding, one group of bars per encoding and one bar per entry of ``errors``
    (name -> one error per encoding: before and after training), with a dotted line at ``guess = (level, name)``,
    the error of always guessing the middle position."""
    fig = go.Figure([go.Bar(x=list(encodings), y=np.asarray(y, dtype=np.float64), name=n) for n, y in errors.items()])
    fig.update_layout(barmode="group", showlegend=True)
    style(fig, title, x_title, y_title, height)
    return hline(fig, guess[0], guess[1], dash="dot")
