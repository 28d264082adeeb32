"""Plotly figure builders: arrays in, ``go.Figure`` out. No math on positions here, and no Streamlit.

Large matrices are handled once, here: up to ``EXACT_MAX_CELLS`` cells a matrix is drawn as an exact
``go.Heatmap`` with hover; above that it is reduced by block means to at most ``MAX_SIDE`` per axis and sent
as a colour-mapped PNG, and the figure says so in its title and in ``layout.meta``.
"""

from __future__ import annotations

import base64
import functools
import io
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale, sample_colorscale

from ..base.sampling import block_edges
from . import screen

EXACT_MAX_CELLS = 256 * 256
MAX_SIDE = 1024
FONT = "Inter, 'Noto Sans SC', 'PingFang SC', 'Microsoft YaHei', sans-serif"
#: The colours of lines and bars without a colour of their own (plotly's default qualitative palette). Set on each
#: figure rather than through a template: in the app, Streamlit's theme styles the rest (background, fonts, grid).
COLORWAY = (
    *("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A"),
    *("#19d3f3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52"),
)


def block_mean(matrix: np.ndarray, max_side: int = MAX_SIDE) -> np.ndarray:
    """Average ``matrix`` over near-equal blocks so that neither side exceeds ``max_side``.

    Block edges are ``linspace(0, n, m + 1)`` rounded down, so every block holds floor(n/m) or ceil(n/m)
    rows. NaN cells (masked entries) are left out of their block's mean; an all-NaN block stays NaN.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if max(matrix.shape) <= max_side:
        return np.where(np.isfinite(matrix), matrix, np.nan)
    with np.errstate(over="ignore", invalid="ignore"):  # one streaming sum; only a non-finite one needs a mask
        complete = bool(np.isfinite(matrix.sum())) or bool(np.isfinite(matrix).all())
    counts: np.ndarray | None = None
    sums = matrix
    if not complete:
        valid = np.isfinite(matrix)
        sums, counts = np.where(valid, matrix, 0.0), valid.astype(np.float64)
    rows, cols = (block_edges(n, max_side) for n in matrix.shape)
    sums = np.add.reduceat(_row_block_sums(sums, rows), cols[:-1], axis=1)
    if counts is None:
        return sums / np.outer(np.diff(rows), np.diff(cols))
    counts = np.add.reduceat(_row_block_sums(counts, rows), cols[:-1], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)


def _row_block_sums(matrix: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The sum of the rows of each block, reading the matrix row by row (``np.add.reduceat`` along axis 0 walks
    it column by column, ten times slower on a 32,768 x 4,096 table): equal blocks as a reshape, others by one
    gather of whole rows per offset within a block (at most ceil(n / blocks) of them)."""
    starts, sizes = edges[:-1], np.diff(edges)
    if sizes.max() == 1:
        return matrix
    if sizes.min() == sizes.max() and matrix.flags.c_contiguous:
        return matrix.reshape(starts.size, sizes[0], matrix.shape[1]).sum(axis=1)
    sums = matrix[starts]
    for offset in range(1, int(sizes.max())):
        longer = sizes > offset
        if longer.all():
            sums += matrix[starts + offset]
        else:
            sums[longer] += matrix[starts[longer] + offset]
    return sums


#: Colour levels of a downsampled heatmap image; the palette's last index is the transparent blank (masked) cell.
LEVELS = 255


@functools.cache
def _palette(colorscale: str) -> tuple[int, ...]:
    """``LEVELS`` RGB colours sampled evenly from ``colorscale``, then black for the transparent index."""
    colours = sample_colorscale(get_colorscale(colorscale), np.linspace(0, 1, LEVELS), colortype="rgb")
    return tuple(int(c) for s in colours for c in s[s.index("(") + 1 : -1].split(",")) + (0, 0, 0)


def _png_data_uri(matrix: np.ndarray, colorscale: str, zmin: float, zmax: float) -> str:
    """The matrix as a palette PNG: one byte per cell indexing ``LEVELS`` colours sampled from ``colorscale``,
    so a 1024 x 1024 image is about a megabyte even for noise, and encodes in a fraction of a second."""
    from PIL import Image

    span = zmax - zmin if zmax > zmin else 1.0
    scaled = np.subtract(matrix, zmin, dtype=np.float32)  # one temporary, scaled in place
    scaled *= (LEVELS - 1) / span
    with np.errstate(invalid="ignore"):
        np.clip(np.rint(scaled, out=scaled), 0, LEVELS - 1, out=scaled)
    index = np.where(np.isfinite(matrix), scaled, LEVELS).astype(np.uint8)  # NaN and masks (-inf) transparent
    image = Image.fromarray(index, mode="L").convert("P")  # "P" keeps the bytes, the palette gives the colours
    image.putpalette(_palette(colorscale))
    image.info["transparency"] = LEVELS
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=3, transparency=LEVELS)  # as small as level 6, and faster
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def style(fig: go.Figure, title: str, x_title: str, y_title: str, height: int) -> go.Figure:
    """The common look: title top left, fonts that hold Chinese too, height, margins, axis titles, colours.

    The layout is merged here and assigned once. ``fig.update_layout`` walks every key through plotly's property
    machinery (about 6 ms a figure, and 10 more to name a template), which a class of 40 pays on every page."""
    layout = {
        "title": {"text": title, "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        "font": {"family": FONT},
        "height": height,
        "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
        "colorway": list(COLORWAY),
    }
    single = getattr(fig, "_grid_ref", None) is None  # not from make_subplots: one pair of axes
    if single:
        layout["xaxis"], layout["yaxis"] = {"title": {"text": x_title}}, {"title": {"text": y_title}}
    current = fig.layout.to_plotly_json()
    current.pop("template", None)  # the process default comes back on assignment, without being validated
    fig.layout = _axis_defaults(_merged(current, layout))
    if not single:
        fig.update_xaxes(title_text=x_title)
        fig.update_yaxes(title_text=y_title)
    return plain_colorbars(fig)


def plain_colorbars(fig: go.Figure) -> go.Figure:
    """Every colour bar of ``fig``'s traces (a heatmap's, a marker scale's) writes ``NUMBER_FORMAT`` numbers, unless
    it sets a format of its own."""
    for trace in fig.data:
        if trace.type in COLORBAR_TRACES and trace.colorbar.exponentformat is None:
            trace.colorbar.exponentformat = NUMBER_FORMAT
        marker = getattr(trace, "marker", None)
        if marker is not None and getattr(marker, "showscale", None) and marker.colorbar.exponentformat is None:
            marker.colorbar.exponentformat = NUMBER_FORMAT
    return fig


#: How every axis and colour bar writes its numbers: 6×10⁻⁷ and 2×10⁴, never plotly's default SI prefixes ("600n",
#: "20k", "1µ"), which read as units. An axis that sets a format of its own keeps it.
NUMBER_FORMAT = "power"
#: The traces with a colour bar of their own.
COLORBAR_TRACES = frozenset({"heatmap", "contour", "histogram2d", "histogram2dcontour", "surface"})


def _axis_defaults(layout: dict) -> dict:
    """``layout`` with ``NUMBER_FORMAT`` on every 2-D and 3-D axis and every colour axis's bar that sets none, and
    room made for the labels of every 2-D axis (``automargin``): a row label longer than the margin (a token, a
    model's name) is not cut off, in the app or in the handout, where no theme of Streamlit's makes the room."""
    for name, part in layout.items():
        if not isinstance(part, dict):
            continue
        if name.startswith(("xaxis", "yaxis")):
            part.setdefault("exponentformat", NUMBER_FORMAT)
            part.setdefault("automargin", True)
        elif name.startswith("scene"):
            for axis in ("xaxis", "yaxis", "zaxis"):
                part.setdefault(axis, {}).setdefault("exponentformat", NUMBER_FORMAT)
        elif name.startswith("coloraxis"):
            part.setdefault("colorbar", {}).setdefault("exponentformat", NUMBER_FORMAT)
    return layout


def _merged(base: dict, extra: dict) -> dict:
    """``base`` with ``extra`` written over it, nested dicts merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def heatmap(
    matrix,
    *,
    title: str,
    x_title: str,
    y_title: str,
    colorscale: str = "RdBu_r",
    zmid: float | None = 0.0,
    zmin: float | None = None,
    zmax: float | None = None,
    x0: float = 0.0,
    y0: float = 0.0,
    dx: float = 1.0,
    dy: float = 1.0,
    downsampled_note: str = "block means, {src} -> {dst}",
    colorbar_title: str = "",
    height: int = 460,
    reduced: np.ndarray | None = None,
) -> go.Figure:
    """A matrix as a heatmap, row 0 at the top. Infinite entries (masks) are drawn blank.

    Cell (i, j) is placed at x = x0 + j * dx, y = y0 + i * dy, so a matrix over every k-th position keeps
    position units on its axes.

    ``layout.meta`` records ``{"source_shape", "shape", "downsampled"}`` (``downsampled``: drawn as an image);
    when block means replaced the cells the title gets ``downsampled_note`` with ``{src}`` and ``{dst}`` filled
    in. ``reduced`` is ``block_mean(matrix)`` when the caller already has it (a cached preview); the image's
    colour range is that of the block means it shows.
    """
    source = np.asarray(matrix)
    if source.ndim != 2:
        raise ValueError(f"a heatmap needs a 2-D matrix, got shape {source.shape}")
    exact = source.size <= EXACT_MAX_CELLS
    if exact:
        shown = np.where(np.isfinite(source), source, np.nan).astype(np.float64)
    else:
        shown = block_mean(source) if reduced is None else np.asarray(reduced, dtype=np.float64)
    finite = shown[np.isfinite(shown)]
    lo = float(finite.min()) if zmin is None and finite.size else (zmin if zmin is not None else 0.0)
    hi = float(finite.max()) if zmax is None and finite.size else (zmax if zmax is not None else 1.0)
    if zmid is not None and zmin is None and zmax is None:
        reach = max(abs(lo - zmid), abs(hi - zmid)) or 1.0
        lo, hi = zmid - reach, zmid + reach
    meta = {"source_shape": list(source.shape), "downsampled": not exact}
    if exact:
        hover_x, hover_y = _one_line(x_title), _one_line(y_title)
        fig = go.Figure(
            go.Heatmap(
                z=shown.astype(np.float32),
                x0=x0,
                y0=y0,
                dx=dx,
                dy=dy,
                colorscale=colorscale,
                zmin=lo,
                zmax=hi,
                colorbar={"title": {"text": colorbar_title, "side": "right"}},
                hovertemplate=f"{hover_x}: %{{x}}<br>{hover_y}: %{{y}}<br>%{{z:.4g}}<extra></extra>",
            )
        )
        meta["shape"] = list(source.shape)
    else:
        small = shown
        meta["shape"] = list(small.shape)
        sy, sx = dy * source.shape[0] / small.shape[0], dx * source.shape[1] / small.shape[1]
        fig = go.Figure(go.Image(source=_png_data_uri(small, colorscale, lo, hi), x0=x0, y0=y0, dx=sx, dy=sy))
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                showlegend=False,
                marker={
                    "colorscale": colorscale,
                    "cmin": lo,
                    "cmax": hi,
                    "color": [lo],
                    "showscale": True,
                    "colorbar": {"title": {"text": colorbar_title, "side": "right"}},
                },
            )
        )
        if small.shape != source.shape:
            note = downsampled_note.format(
                src=f"{source.shape[0]}×{source.shape[1]}", dst=f"{small.shape[0]}×{small.shape[1]}"
            )
            title = f"{title}<br><sup>{note}</sup>"
        # fill the plot area rather than keep square pixels, so a tall, narrow matrix is not a thin strip
        fig.update_yaxes(scaleanchor=False, constrain="range")
        fig.update_xaxes(constrain="range")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(meta=meta)
    return style(fig, title, x_title, y_title, height)


def _one_line(text: str) -> str:
    """An axis title as a hover label writes it: the lines of a title wrapped with ``<br>`` (to fit beside a short
    plot) joined by spaces."""
    return " ".join(part.strip() for part in text.split("<br>"))


def lines(
    x,
    series: Mapping[str, np.ndarray | tuple[np.ndarray, np.ndarray]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    floor: tuple[float, str] | None = None,
    from_zero: bool = False,
    y_range: tuple[float, float] | None = None,
    height: int = 380,
) -> go.Figure:
    """One line per entry of ``series`` (name -> y values) over the shared ``x``; an entry ``(x, y)`` has an x of its
    own (two tables of different lengths on one axis; ``x`` None when every entry has).

    ``from_zero`` starts a linear y axis at 0 (an error plot: an error of 1e-16 lies on the zero line); ``y_range``
    fixes the y axis (a share from 0 to 1, say).

    ``floor = (level, name)`` makes a log y axis that stops at ``level`` (an error plot): smaller values, and exact
    zeros, which a log axis would silently drop, are drawn on the floor, a dotted line named ``name``
    (``add_floor``)."""
    fig = go.Figure()
    x = None if x is None else np.asarray(x)
    xs = [np.asarray(v[0]) if isinstance(v, tuple) else x for v in series.values()]
    ys = [np.asarray(v[1] if isinstance(v, tuple) else v, dtype=np.float64) for v in series.values()]
    if floor is not None:
        ys = [np.maximum(y, floor[0]) for y in ys]
    for name, x_of, y in zip(series, xs, ys, strict=True):
        fig.add_trace(go.Scatter(x=x_of, y=y, mode="lines", name=name))
    fig.update_xaxes(type="log" if log_x else "linear", exponentformat="power")
    fig.update_yaxes(type="log", dtick=1, exponentformat="power") if log_y else fig.update_yaxes(type="linear")
    if floor is not None:
        add_floor(fig, x, ys, *floor)
    if from_zero:
        fig.update_yaxes(rangemode="tozero")
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    names = [trace.name for trace in fig.data if trace.showlegend is not False and trace.name]
    if len(names) > 1 and max(_text_width(name) for name in names) > LONG_LEGEND:
        rows = legend_rows(names)
        style(fig, title, x_title, y_title, height + LEGEND_ROW * rows)
        return legend_below(fig, rows)
    return style(fig, title, x_title, y_title, height)


#: A legend beside the plot wider than this (in pixels of 13 px text) takes so much of the width that a plot, a log
#: plot above all, is squeezed to half of it: such legends go under the plot in rows instead (``lines``).
LONG_LEGEND = 150
#: The height of one row of a horizontal legend, and the width the rows are filled to (the narrowest a figure is
#: drawn at in the app's main column at 1280 px, less the margins).
LEGEND_ROW, LEGEND_WIDTH = 22, 640


def _text_width(text: str) -> float:
    """About how wide ``text`` is at 13 px, in pixels: 6.5 a character, 13 a Chinese one."""
    return screen.text_width(text, 13)


def legend_rows(names: list[str]) -> int:
    """How many rows a horizontal legend of ``names`` fills at ``LEGEND_WIDTH`` in 13 px type."""
    return screen.legend_rows(names, 13, LEGEND_WIDTH)


def legend_below(fig: go.Figure, rows: int) -> go.Figure:
    """A horizontal legend of ``rows`` rows under the x axis's title, flush left, with the bottom margin grown to
    hold it: it takes none of the plot's width."""
    margin = fig.layout.margin.b or 50
    return fig.update_layout(
        legend={"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yref": "container", "yanchor": "bottom"},
        margin={"b": margin + LEGEND_ROW * rows + 8},
    )


def legend_above(fig: go.Figure) -> go.Figure:
    """A horizontal legend just above the plot area, flush right, so it covers none of the data."""
    return fig.update_layout(legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"})


#: Colour of reference lines (a floor, a level that means "large").
REFERENCE = "#7f7f7f"


def reference_line(
    fig: go.Figure, x, level: float, name: str, *, color: str = REFERENCE, dash: str = "dot", hover: bool = False
) -> go.Figure:
    """A line named ``name`` at y = ``level`` across the range of ``x``, a trace of its own so that the legend names
    it: by default dotted grey and without hover (a floor, a level that means "large"); ``hover`` shows its value."""
    x = np.asarray(x)
    ends = np.array([x.min(), x.max()]) if x.size else np.zeros(2)
    return fig.add_trace(
        go.Scatter(
            x=ends,
            y=np.full(2, float(level)),
            mode="lines",
            name=name,
            line={"color": color, "dash": dash, "width": 1.5},
            hoverinfo=None if hover else "skip",
        )
    )


def _top(ys: list[np.ndarray], default: float) -> float:
    return max([float(np.nanmax(y)) for y in ys if y.size and np.isfinite(y).any()], default=default)


def add_floor(fig: go.Figure, x, ys: list[np.ndarray], level: float, name: str) -> go.Figure:
    """An error plot on a log axis: the axis runs from just below ``level`` to just above the largest of ``ys``, and
    a reference line named ``name`` at ``level`` carries the values at or below it (the caller raises them to it),
    so an exact zero shows as zero instead of vanishing from a log axis."""
    reference_line(fig, x, level, name)
    low = np.log10(level)
    high = max(np.log10(max(_top(ys, level), level)), low + 1)
    return fig.update_yaxes(type="log", range=[low - 0.3, high + 0.3], exponentformat="power")


def add_scale(fig: go.Figure, x, ys: list[np.ndarray], level: float, name: str) -> go.Figure:
    """An error plot on a linear axis: from 0 to at least ``level``, a reference line named ``name`` that says what a
    large error is; an error of 1e-16 then lies on the zero line instead of filling the plot."""
    reference_line(fig, x, level, name)
    return fig.update_yaxes(type="linear", range=[0.0, 1.08 * max(float(level), _top(ys, 0.0))])


#: Colour of marks: lines at a value the reader should compare with (a training length, a claimed number).
MARK_COLOR = "#555555"


def annotation_coordinate(axis, value: float) -> float:
    """Where ``value`` sits on ``axis`` for an annotation. On a log axis plotly reads an annotation's coordinate as
    log10 of the value (a shape's, or a trace's, is the value itself), so a label given the raw value lands far from
    its line."""
    return float(np.log10(value)) if axis.type == "log" else float(value)


def vline(
    fig: go.Figure,
    x: float,
    label: str = "",
    *,
    dash: str = "dot",
    color: str = MARK_COLOR,
    side: str = "right",
    at: str = "top",
    row: int = 0,
) -> go.Figure:
    """A vertical mark at x = ``x`` with its label on the ``side`` ("right" or "left") of the line, ``at`` the "top"
    or "bottom" of the plot or "above" it, where it covers no curve; labels above the plot go in ``row`` 0, 1, ...
    (counted up from the plot), so that marks close together keep their labels apart, and the top margin grows to
    hold the rows. Call it after the x axis's type is set: the label is placed by ``annotation_coordinate``, so it
    sits on its line on a log axis too."""
    fig.add_vline(x=x, line_dash=dash, line_color=color)
    if label:
        y, anchor = {"top": (1.0, "top"), "bottom": (0.0, "bottom"), "above": (1.0, "bottom")}[at]
        x_at = annotation_coordinate(fig.layout.xaxis, x)
        _mark_label(fig, label, color, x=(x_at, "x", "left" if side == "right" else "right"), y=(y, "paper", anchor))
        if at == "above":
            fig.layout.annotations[-1].yshift = MARK_ROW * row
            fig.layout.margin.t = max(fig.layout.margin.t or 60, 70 + MARK_ROW * (row + 1))
    return fig


#: The height of a row of mark labels above a plot (``vline`` with ``at="above"``).
MARK_ROW = 18


def hline(
    fig: go.Figure,
    y: float,
    label: str = "",
    *,
    dash: str = "dash",
    color: str = MARK_COLOR,
    side: str = "left",
    below: bool = False,
) -> go.Figure:
    """A horizontal mark at y = ``y`` with its label at the ``side`` ("left" or "right") edge of the plot, above the
    line (or ``below`` it). Call it after the y axis's type is set (see ``vline``)."""
    fig.add_hline(y=y, line_dash=dash, line_color=color)
    if label:
        x_at, y_at = 0.0 if side == "left" else 1.0, annotation_coordinate(fig.layout.yaxis, y)
        _mark_label(fig, label, color, x=(x_at, "x domain", side), y=(y_at, "y", "top" if below else "bottom"))
    return fig


def _mark_label(fig: go.Figure, text: str, color: str, *, x: tuple, y: tuple) -> None:
    """The label of a mark (``vline``, ``hline``): ``text`` in the mark's ``color``, no arrow, placed by ``x`` and
    ``y``, each ``(coordinate, reference, anchor)`` as a plotly annotation takes them."""
    place = dict(zip(("x", "xref", "xanchor"), x, strict=True)) | dict(zip(("y", "yref", "yanchor"), y, strict=True))
    fig.add_annotation(**place, text=text, showarrow=False, font={"color": color})


def positions_path(
    positions,
    coords,
    *,
    title: str,
    x_title: str,
    y_title: str,
    colorbar_title: str,
    height: int = 460,
    equal_axes: bool = False,
) -> go.Figure:
    """One marker per position at its 2-D coordinates (a projection of a position table), coloured by the position
    and joined in order by a faint line, so a smooth table draws a curve and a random one a cloud. ``equal_axes``
    gives both axes the same scale (a PCA, whose distances mean something)."""
    positions = np.asarray(positions, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    path = go.Scatter(
        x=coords[:, 0],
        y=coords[:, 1],
        mode="lines",
        line={"color": "rgba(120,120,120,0.35)", "width": 1},
        hoverinfo="skip",
        showlegend=False,
    )
    points = go.Scatter(
        x=coords[:, 0],
        y=coords[:, 1],
        mode="markers",
        marker={
            "color": positions,
            "colorscale": "Viridis",
            "size": 6 if positions.size <= 512 else 4,
            "showscale": True,
            "colorbar": {"title": {"text": colorbar_title, "side": "right"}},
        },
        customdata=positions,
        hovertemplate=f"{colorbar_title}: %{{customdata:.0f}}<extra></extra>",
        showlegend=False,
    )
    fig = go.Figure([path, points])
    if equal_axes:
        fig.update_yaxes(scaleanchor="x", scaleratio=1)
    return style(fig, title, x_title, y_title, height)


def bars(
    labels, values, *, title: str, x_title: str, y_title: str, log_y: bool = False, height: int = 340
) -> go.Figure:
    """A bar chart of ``values`` per label."""
    fig = go.Figure(go.Bar(x=list(labels), y=np.asarray(values, dtype=np.float64)))
    fig.update_yaxes(type="log", dtick=1) if log_y else fig.update_yaxes(type="linear")
    return style(fig, title, x_title, y_title, height)


def animation_controls(
    fig: go.Figure,
    names: list[str],
    *,
    play: str,
    pause: str,
    slider_prefix: str,
    frame_ms: int,
    redraw: bool,
    y: float,
    slider_x: float = 0.17,
) -> go.Figure:
    """Play / Pause buttons and a slider with one step per frame (``names``), side by side at height ``y`` of the
    plot area; ``redraw`` is needed when frames change heatmaps rather than moving points. The slider's current value
    ("position m = 12") is written at its right end: at its left end it would run under the buttons, which grow with
    their words and with presentation mode's type beyond ``slider_x``."""
    still = {"frame": {"duration": 0, "redraw": redraw}, "mode": "immediate", "transition": {"duration": 0}}
    playing = {"frame": {"duration": frame_ms, "redraw": redraw}, "fromcurrent": True, "transition": {"duration": 0}}
    fig.update_layout(
        updatemenus=[
            {
                "type": "buttons",
                "direction": "left",
                "x": 0.0,
                "y": y,
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
                "x": slider_x,
                "len": 1.0 - slider_x,
                "y": y,
                "yanchor": "top",
                "currentvalue": {"prefix": slider_prefix, "xanchor": "right"},
                "steps": [{"label": name, "method": "animate", "args": [[name], still]} for name in names],
            }
        ],
    )
    return fig
