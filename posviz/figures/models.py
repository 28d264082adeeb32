"""Figures of the Models page: the layer map (one cell per layer, coloured by how it sees positions), the three
M-RoPE positions of every token, which axis each rotary pair encodes. Lines, wavelengths and pairs of heatmaps come
from ``base`` and ``figures.rope``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from . import rope as rope_figures
from .base import style

#: The colour of a layer by what it does with positions (a style code the page gives each group of layers): RoPE
#: plain and scaled, RoPE with another base than the model's first RoPE layers (a local base), NoPE, a linear-attention
#: mixer (no softmax attention), the bias families. Okabe–Ito colours, Paul Tol's indigo and two greys, every two at
#: least MIN_COLOUR_DISTANCE apart (CIE76 in CIELAB), since one map can hold any of them side by side: a model's
#: global and local RoPE layers, NoPE layers between linear-attention mixers, models of every family compared.
STYLE_COLOURS = {
    "rope": "#0072b2",
    "rope_scaled": "#d55e00",
    "rope_other_base": "#cc79a7",
    "nope": "#555555",
    "none": "#e5e5e5",
    "alibi": "#009e73",
    "relative_bias": "#332288",
    "learned": "#e69f00",
    "sinusoidal": "#f0e442",
}
MIN_COLOUR_DISTANCE = 30.0
#: Hatching of a layer that attends within a window (sliding) or a chunk, or to the image (cross); full and linear
#: attention are plain.
ATTENTION_PATTERNS = {"full": "", "linear": "", "sliding": "/", "chunked": "x", "cross": "."}
#: Colours of the three M-RoPE axes (time, height, width).
AXIS_COLOURS = ("#e69f00", "#0072b2", "#009e73")


def layer_map(
    rows: dict[str, list[dict]],
    *,
    title: str,
    x_title: str,
    layer_label: str,
    height: int | None = None,
) -> go.Figure:
    """One row per model (the keys of ``rows``, first on top), one cell per layer along x. Each model's layers come
    in groups, each a dict with ``label`` (the legend's words), ``indices`` (its layers), ``style`` (a key of
    STYLE_COLOURS), ``attention`` and ``window`` (a key of ATTENTION_PATTERNS, and the window or chunk size or None).
    Every group is a bar trace of its own, its ``meta`` holding kind, attention and window, so the legend names what
    each colour and hatching means."""
    fig = go.Figure()
    for at, (row, groups) in enumerate(rows.items()):
        for group in groups:
            indices = np.asarray(group["indices"], dtype=np.int64)
            fig.add_trace(
                go.Bar(
                    x=indices,
                    y=np.ones(indices.size, dtype=np.float32),
                    base=np.full(indices.size, float(at), dtype=np.float32),
                    width=0.92,
                    name=group["label"],
                    legendgroup=row,
                    legendgrouptitle={"text": row} if len(rows) > 1 else None,
                    marker={
                        "color": STYLE_COLOURS[group["style"]],
                        "line": {"width": 0},
                        "pattern": {
                            "shape": ATTENTION_PATTERNS[group["attention"]],
                            "fgcolor": "#ffffff",
                            "solidity": 0.3,
                            "fillmode": "overlay",
                        },
                    },
                    meta={
                        "model": row,
                        "kind": group["kind"],
                        "attention": group["attention"],
                        "window": group["window"],
                        "style": group["style"],
                    },
                    hovertemplate=f"{row}<br>{layer_label} %{{x}}<br>{group['label']}<extra></extra>",
                )
            )
    n_rows = len(rows)
    fig.update_yaxes(
        tickvals=[i + 0.5 for i in range(n_rows)],
        ticktext=list(rows),
        range=[n_rows, 0],
        showgrid=False,
        zeroline=False,
    )
    fig.update_xaxes(rangemode="tozero", showgrid=False)
    fig.update_layout(
        barmode="overlay",
        bargap=0.05,
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0.0},
        showlegend=True,  # plotly hides the legend of a single trace: a model of one layer type still says what it is
    )
    entries = sum(len(g) for g in rows.values()) + (n_rows if n_rows > 1 else 0)
    fig = style(fig, title, x_title, "", height or 170 + 60 * n_rows + 22 * entries)
    fig.layout.margin.b = 60 + 22 * entries  # room for the legend under the axis title, one line per entry
    return fig


def wavelengths(
    pairs, series: dict[str, np.ndarray], contexts: dict[str, float], *, title: str, x_title: str, y_title: str
) -> go.Figure:
    """The RoPE page's wavelength figure (``figures.rope.wavelengths``) with its legend under the plot, where the
    long names of a model's layer types leave the plot its width."""
    fig = rope_figures.wavelengths(pairs, series, contexts, title=title, x_title=x_title, y_title=y_title)
    entries = len(series) + len(contexts)
    fig.update_layout(
        legend={"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.0, "x": 0.0},
        height=420 + 22 * entries,
        margin={"b": 70 + 22 * entries},
    )
    return fig


def position_grid(
    ids: np.ndarray,
    row_labels: list[str],
    *,
    title: str,
    x_title: str,
    colorbar_title: str,
    height: int = 300,
) -> go.Figure:
    """The three M-RoPE positions (time, height, width) of every token as a heatmap, one row per axis, tokens along
    x; each cell shows its number when there are few tokens."""
    ids = np.asarray(ids)
    few = ids.shape[1] <= 64
    fig = go.Figure(
        go.Heatmap(
            z=ids.astype(np.float32),
            y=row_labels,
            text=ids.astype(str) if few else None,
            texttemplate="%{text}" if few else None,
            colorscale="Viridis",
            colorbar={"title": {"text": colorbar_title, "side": "right"}},
            hovertemplate=f"{x_title}: %{{x}}<br>%{{y}}: %{{z}}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(meta={"source_shape": list(ids.shape), "shape": list(ids.shape), "downsampled": False})
    return style(fig, title, x_title, "", height)


def axis_strips(
    axes: dict[str, np.ndarray], axis_names: tuple[str, str, str], *, title: str, x_title: str, height: int = 260
) -> go.Figure:
    """Which axis (0 time, 1 height, 2 width) turns each rotary pair, one row per layout (the keys of ``axes``): a
    heatmap of three colours with the axes named on its colour bar."""
    rows = list(axes)
    matrix = np.stack([np.asarray(axes[row]) for row in rows]).astype(np.float32)
    scale = []
    for i, colour in enumerate(AXIS_COLOURS):
        scale += [[i / 3, colour], [(i + 1) / 3, colour]]
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            y=rows,
            zmin=-0.5,
            zmax=2.5,
            colorscale=scale,
            xgap=1,
            colorbar={"tickvals": [0, 1, 2], "ticktext": list(axis_names)},
            customdata=np.array([[axis_names[int(v)] for v in row] for row in matrix]),
            hovertemplate=f"{x_title}: %{{x}}<br>%{{y}}: %{{customdata}}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(meta={"source_shape": list(matrix.shape), "shape": list(matrix.shape), "downsampled": False})
    return style(fig, title, x_title, "", height)


__all__ = [
    "ATTENTION_PATTERNS",
    "AXIS_COLOURS",
    "STYLE_COLOURS",
    "axis_strips",
    "layer_map",
    "position_grid",
    "wavelengths",
]
