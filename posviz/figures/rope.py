"""Figures of the RoPE page: the rotation animation, paired heatmaps, wavelength charts, per-pair class maps, the
decay bound with its envelope and dynamic NTK's scale against the length read.

Arrays in (computed by ``posviz.encodings.rope`` / ``posviz.models.rope_configs``), ``go.Figure`` out.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .base import animation_controls, reference_line, style

#: Colours of the pair classes (kept, blended, interpolated, beyond, faster).
CLASS_COLOURS = ("#2b8cbe", "#9ebcda", "#e34a33", "#7f0000", "#31a354")
#: Line colours and dashes of the decay curves, one per base, distinguishable in print and for colour-blind eyes.
LINE_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00")
LINE_DASHES = ("solid", "dash", "dot", "dashdot", "longdash")


def symmetric_reach(*matrices) -> float:
    """The largest |value| over ``matrices`` (1 when all are 0): the half-width of one colour range -r .. r that
    several heatmaps on a screen share, so a colour means the same number in each."""
    reach = max(float(np.nanmax(np.abs(np.asarray(m, dtype=np.float64)))) for m in matrices)
    return reach or 1.0


def rotation_animation(
    trajectory,
    positions,
    pair_titles: list[str],
    *,
    title: str,
    play: str,
    pause: str,
    slider_prefix: str,
    trail: int = 12,
    frame_ms: int = 120,
    height: int = 420,
) -> go.Figure:
    """One dial per pair showing its rotated point (a', b') at each position, as a plotly animation.

    ``trajectory`` has shape (positions, pairs, 2). The dials sit side by side on one square-scaled axis, dial j
    centred at (``layout.meta["centers"][j]``, 0) with a dotted guide circle through its first point. Two traces
    are animated: trace 0 holds every dial's trail of the last ``trail`` points, trace 1 every dial's hand from
    its centre to the current point (dials separated by NaN gaps, one frame per position, named by it).
    ``layout.updatemenus`` holds Play / Pause and ``layout.sliders`` one step per frame.
    """
    traj = np.asarray(trajectory, dtype=np.float64)
    n_frames, n_pairs, _ = traj.shape
    reach = float(np.abs(traj).max()) * 1.15 or 1.0
    centers = 2.4 * reach * np.arange(n_pairs)
    gap = np.full((n_pairs, 1), np.nan)

    def frame_traces(k: int) -> list[dict]:
        """The two traces at frame ``k``, as plain dicts: plotly checks a frame given as a dict three times faster
        than one built from ``go.Scatter`` objects (64 frames: 0.07 s instead of 0.2 s), with the same result."""
        start = max(0, k - trail + 1)
        tail = traj[start : k + 1].transpose(1, 0, 2)
        trail_x = np.hstack([tail[..., 0] + centers[:, None], gap]).ravel()
        trail_y = np.hstack([tail[..., 1], gap]).ravel()
        hand_x = np.hstack([centers[:, None], traj[k, :, :1] + centers[:, None], gap]).ravel()
        hand_y = np.hstack([np.zeros((n_pairs, 1)), traj[k, :, 1:], gap]).ravel()
        return [
            {"type": "scatter", "x": trail_x.astype(np.float32), "y": trail_y.astype(np.float32)},
            {"type": "scatter", "x": hand_x.astype(np.float32), "y": hand_y.astype(np.float32)},
        ]

    fig = go.Figure(frame_traces(0))
    fig.update_traces(selector=0, mode="lines+markers", line={"color": "#9ebcda", "width": 2}, marker={"size": 5})
    fig.update_traces(selector=1, mode="lines+markers", line={"color": "#e34a33", "width": 3}, marker={"size": 9})
    fig.update_traces(showlegend=False, hoverinfo="skip")
    for center, radius, label in zip(centers, np.hypot(traj[0, :, 0], traj[0, :, 1]), pair_titles, strict=True):
        fig.add_shape(
            type="circle",
            x0=center - radius,
            x1=center + radius,
            y0=-radius,
            y1=radius,
            line={"color": "#bbbbbb", "dash": "dot"},
        )
        fig.add_annotation(x=center, y=reach, text=label, showarrow=False, yanchor="bottom", font={"size": 12})
    names = [str(int(p)) for p in np.asarray(positions)]
    fig.frames = [{"data": frame_traces(k), "traces": [0, 1], "name": names[k]} for k in range(n_frames)]
    fig.update_layout(meta={"centers": centers.tolist()})
    animation_controls(
        fig, names, play=play, pause=pause, slider_prefix=slider_prefix, frame_ms=frame_ms, redraw=False, y=-0.05
    )
    fig.update_xaxes(range=[-reach, centers[-1] + reach], showgrid=False, zeroline=False, showticklabels=False)
    fig.update_yaxes(
        range=[-reach, reach * 1.35], scaleanchor="x", showgrid=False, zeroline=False, showticklabels=False
    )
    style(fig, title, "", "", height)
    fig.update_layout(margin={"l": 20, "r": 20, "t": 60, "b": 120})
    return fig


def heatmap_pair(
    left,
    right,
    *,
    subtitles: tuple[str, str],
    title: str,
    x_title: str,
    y_title: str,
    zmin: float | None = None,
    zmax: float | None = None,
    y0: float = 0.0,
    colorscale: str = "RdBu_r",
    colorbar_title: str = "",
    height: int = 420,
) -> go.Figure:
    """Two matrices of the same shape as exact heatmaps side by side, on one colour scale: ``zmin`` .. ``zmax``,
    by default symmetric about 0 (-r .. r, r = ``symmetric_reach`` of both), so white is 0."""
    left, right = (np.asarray(m, dtype=np.float32) for m in (left, right))
    reach = symmetric_reach(left, right)
    lo = -reach if zmin is None else zmin
    hi = reach if zmax is None else zmax
    fig = make_subplots(rows=1, cols=2, subplot_titles=list(subtitles), horizontal_spacing=0.08)
    for col, matrix in enumerate((left, right), start=1):
        fig.add_trace(
            go.Heatmap(
                z=matrix,
                y0=y0,
                colorscale=colorscale,
                zmin=lo,
                zmax=hi,
                showscale=col == 2,
                colorbar={"title": {"text": colorbar_title, "side": "right"}},
                hovertemplate=f"{x_title}: %{{x}}<br>{y_title}: %{{y}}<br>%{{z:.6g}}<extra></extra>",
            ),
            row=1,
            col=col,
        )
        fig.update_yaxes(autorange="reversed", row=1, col=col)
    fig.update_layout(meta={"source_shape": list(left.shape), "shape": list(left.shape), "downsampled": False})
    style(fig, title, x_title, y_title, height)
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title, col=1)
    fig.update_yaxes(title_text="", col=2)  # the panels share the axis title; on the right it would hit the ticks
    return fig


def index_map(
    matrix, row_labels: list[str], *, title: str, x_title: str, colorbar_title: str = "", height: int = 240
) -> go.Figure:
    """Small integer matrix (rows = named layouts) as a heatmap with each cell's number written in it."""
    matrix = np.asarray(matrix)
    fig = go.Figure(
        go.Heatmap(
            z=matrix.astype(np.float32),
            y=row_labels,
            text=matrix.astype(str),
            texttemplate="%{text}",
            colorscale="Viridis",
            colorbar={"title": {"text": colorbar_title, "side": "right"}},
            hovertemplate=f"{x_title}: %{{x}}<br>%{{y}}: %{{z}}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(dtick=1 if matrix.shape[1] <= 32 else None)
    fig.update_layout(meta={"source_shape": list(matrix.shape), "shape": list(matrix.shape), "downsampled": False})
    return style(fig, title, x_title, "", height)


def wavelengths(
    pairs,
    series: Mapping[str, np.ndarray],
    contexts: Mapping[str, float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    height: int = 440,
) -> go.Figure:
    """Wavelength of every pair (log y), one line per named series, then a dashed horizontal line per context
    (name -> length) as a trace of its own, so it is named in the legend."""
    fig = go.Figure()
    pairs = np.asarray(pairs)
    for name, values in series.items():
        fig.add_trace(go.Scatter(x=pairs, y=np.asarray(values, dtype=np.float64), mode="lines", name=name))
    for (name, length), dash in zip(contexts.items(), ("dash", "dot", "dashdot"), strict=False):
        reference_line(fig, pairs, length, name, color="#444444", dash=dash, hover=True)
    fig.update_yaxes(type="log", dtick=1, exponentformat="power")
    return style(fig, title, x_title, y_title, height)


def class_map(
    classes,
    ratio,
    row_labels: list[str],
    class_labels: list[str],
    *,
    title: str,
    x_title: str,
    ratio_label: str,
    height: int = 340,
) -> go.Figure:
    """Per-pair class of each method (rows) as a categorical heatmap; hover shows the ratio."""
    classes = np.asarray(classes)
    n = len(class_labels)
    scale = []
    for code, colour in enumerate(CLASS_COLOURS[:n]):
        scale += [[code / n, colour], [(code + 1) / n, colour]]
    fig = go.Figure(
        go.Heatmap(
            z=classes.astype(np.float32),
            y=row_labels,
            customdata=np.asarray(ratio, dtype=np.float64),
            zmin=0,
            zmax=n,
            colorscale=scale,
            xgap=1,
            ygap=1,
            colorbar={
                "tickvals": np.arange(n, dtype=np.float64) + 0.5,
                "ticktext": class_labels,
            },
            hovertemplate=f"%{{y}}<br>{x_title}: %{{x}}<br>{ratio_label}: %{{customdata:.4g}}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(meta={"source_shape": list(classes.shape), "shape": list(classes.shape), "downsampled": False})
    return style(fig, title, x_title, "", height)


def decay_bounds(
    distances,
    curves: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    height: int = 460,
) -> go.Figure:
    """RoFormer's decay bound, one colour and dash per named curve (name -> ``(bound, envelope)`` over
    ``distances``, on a log axis): the envelope as a thick line named in the legend, the bound itself as a thin,
    faint line of the same colour behind it (same legend group, so a click on the name hides both)."""
    fig = go.Figure()
    x = np.asarray(distances, dtype=np.float64)
    for k, (name, (bound, envelope)) in enumerate(curves.items()):
        colour, dash = LINE_COLOURS[k % len(LINE_COLOURS)], LINE_DASHES[k % len(LINE_DASHES)]
        hover = f"{name}<br>{x_title}: %{{x}}<br>%{{y:.4g}}<extra></extra>"
        shared = {"x": x, "mode": "lines", "name": name, "legendgroup": name, "hovertemplate": hover}
        thin, thick = {"color": colour, "width": 1}, {"color": colour, "width": 3.5, "dash": dash}
        fig.add_trace(
            go.Scatter(y=np.asarray(bound, dtype=np.float64), showlegend=False, opacity=0.35, line=thin, **shared)
        )
        fig.add_trace(go.Scatter(y=np.asarray(envelope, dtype=np.float64), line=thick, **shared))
    fig.update_yaxes(rangemode="tozero")
    fig.update_xaxes(type="log", exponentformat="power")  # distance 0 is left out; the decay is over decades
    fig.update_layout(legend={"x": 0.99, "xanchor": "right", "y": 0.99, "bgcolor": "rgba(255,255,255,0.8)"})
    return style(fig, title, x_title, y_title, height)


def scale_growth(
    lengths,
    series: dict[str, np.ndarray],
    levels: dict[str, float],
    marks: dict[str, float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    height: int = 400,
) -> go.Figure:
    """Lines over ``lengths`` (log y), a dashed horizontal line per level (name -> value) and a dotted vertical
    line per mark (name -> x), each a trace of its own so it is named in the legend."""
    fig = go.Figure()
    x = np.asarray(lengths, dtype=np.float64)
    for k, (name, values) in enumerate(series.items()):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=np.asarray(values, dtype=np.float64),
                mode="lines",
                name=name,
                line={"color": LINE_COLOURS[k % len(LINE_COLOURS)], "width": 3, "dash": LINE_DASHES[k % 5]},
            )
        )
    top = max(float(np.max(v)) for v in series.values())
    for name, level in levels.items():
        reference_line(fig, x, level, name, color="#444444", dash="dash", hover=True)
    for name, at in marks.items():
        fig.add_trace(
            go.Scatter(
                x=np.full(2, float(at)),
                y=np.array([1.0, max(top, *levels.values())]),
                mode="lines",
                name=name,
                line={"color": "#888888", "width": 1.5, "dash": "dot"},
            )
        )
    fig.update_yaxes(type="log", dtick="D2", exponentformat="power")  # ticks at 1, 2, 5, 10, 20, 50, ...
    fig.update_xaxes(rangemode="tozero")
    return style(fig, title, x_title, y_title, height)
