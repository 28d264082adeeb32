"""Figure builders: exact heatmaps carry the matrix itself; large ones carry honest block means."""

import base64
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posviz import figures
from posviz.figures import base
from posviz.lessons import sinusoidal as sinlesson


def _z(fig) -> np.ndarray:
    return np.asarray(fig.data[0].z, dtype=np.float64)


def _block_mean_reference(m: np.ndarray, max_side: int) -> np.ndarray:
    """Scalar loops over the same block edges as the documented rule."""
    rows = (
        np.linspace(0, m.shape[0], min(max_side, m.shape[0]) + 1).astype(int)
        if m.shape[0] > max_side
        else np.arange(m.shape[0] + 1)
    )
    cols = (
        np.linspace(0, m.shape[1], min(max_side, m.shape[1]) + 1).astype(int)
        if m.shape[1] > max_side
        else np.arange(m.shape[1] + 1)
    )
    out = np.empty((len(rows) - 1, len(cols) - 1))
    for i in range(len(rows) - 1):
        for j in range(len(cols) - 1):
            block = m[rows[i] : rows[i + 1], cols[j] : cols[j + 1]]
            finite = block[np.isfinite(block)]
            out[i, j] = finite.mean() if finite.size else np.nan
    return out


@given(
    rows=st.integers(1, 40),
    cols=st.integers(1, 40),
    side=st.integers(1, 12),
    seed=st.integers(0, 10**6),
)
def test_block_mean_matches_a_loop(rows, cols, side, seed):
    m = np.random.default_rng(seed).normal(size=(rows, cols))
    m[m > 1.5] = np.nan
    got = figures.block_mean(m, side)
    want = _block_mean_reference(m, side)
    assert got.shape == (min(rows, side), min(cols, side))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_exact_heatmap_carries_the_matrix_and_blanks_masks():
    m = np.arange(12.0).reshape(3, 4)
    m[0, 3] = -np.inf
    fig = figures.heatmap(m, title="t", x_title="x", y_title="y")
    z = _z(fig)
    assert np.isnan(z[0, 3])
    np.testing.assert_array_equal(z[np.isfinite(z)], m[np.isfinite(m)])
    assert fig.layout.meta["downsampled"] is False
    assert fig.layout.yaxis.autorange == "reversed"


def test_symmetric_colour_range_around_zmid():
    fig = figures.heatmap(np.array([[-0.2, 0.9]]), title="t", x_title="x", y_title="y")
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-0.9, 0.9)


def test_large_matrix_becomes_a_labelled_image_of_block_means():
    from PIL import Image

    m = np.add.outer(np.arange(3000.0), np.arange(600.0))
    fig = figures.heatmap(m, title="big", x_title="x", y_title="y", downsampled_note="{src} -> {dst}")
    meta = fig.layout.meta
    assert meta["downsampled"] is True and meta["source_shape"] == [3000, 600] and meta["shape"] == [1024, 600]
    assert "3000×600 -> 1024×600" in fig.layout.title.text
    image = fig.data[0]
    png = Image.open(io.BytesIO(base64.b64decode(image.source.split(",", 1)[1])))
    assert png.size == (600, 1024)
    assert image.dy == pytest.approx(3000 / 1024) and image.dx == pytest.approx(1.0)
    # colour index grows with the block mean: brighter bottom-right than top-left in a monotone colour scale
    fig = figures.heatmap(m, title="big", x_title="x", y_title="y", colorscale="Greys", zmid=None)
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(fig.data[0].source.split(",", 1)[1]))).convert("RGBA"))
    assert pixels[0, 0, 0] != pixels[-1, -1, 0]


def _png(fig):
    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(fig.data[0].source.split(",", 1)[1])))


def test_image_cells_index_the_colour_scale_and_blank_cells_are_transparent():
    """Each pixel is the colour of its block mean's level out of figures.base.LEVELS on [zmin, zmax]."""
    from plotly.colors import get_colorscale, sample_colorscale

    m = np.add.outer(np.linspace(-1, 1, 600), np.zeros(400))
    m[:, :2] = np.nan  # a masked strip
    fig = figures.heatmap(m, title="t", x_title="x", y_title="y", zmin=-1.0, zmax=1.0, colorscale="Viridis")
    image = _png(fig)
    assert image.mode == "P"
    levels = figures.base.LEVELS
    expected = np.clip(np.rint((m + 1.0) / 2.0 * (levels - 1)), 0, levels - 1)
    index = np.asarray(image)
    np.testing.assert_array_equal(index[:, 2:], expected[:, 2:])
    rgba = np.asarray(image.convert("RGBA"))
    assert (rgba[:, :2, 3] == 0).all() and (rgba[:, 2:, 3] == 255).all()
    colours = sample_colorscale(get_colorscale("Viridis"), np.linspace(0, 1, levels), colortype="rgb")
    last = [int(c) for c in colours[-1][colours[-1].index("(") + 1 : -1].split(",")]
    assert list(rgba[-1, -1, :3]) == last  # the largest value takes the scale's last colour


def test_noise_image_stays_small():
    """One byte per cell: even white noise at the largest preview is about a megabyte of PNG, not four."""
    noise = np.random.default_rng(0).normal(size=(2048, 2048))
    fig = figures.heatmap(noise, title="t", x_title="x", y_title="y")
    assert fig.layout.meta["shape"] == [1024, 1024]
    assert len(fig.data[0].source) < 1.6 * 1024 * 1024  # base64 of the PNG


def test_heatmap_rejects_non_matrices():
    with pytest.raises(ValueError, match="2-D"):
        figures.heatmap(np.zeros(5), title="t", x_title="x", y_title="y")


@pytest.mark.parametrize("default", ["plotly_white", "plotly_dark", "streamlit"])
def test_every_figure_gets_its_colours_and_axis_titles_whatever_the_default_template(default, monkeypatch):
    """Whatever plotly's default template is when a figure is made (Streamlit sets its own on import), a styled
    figure has posviz's colours, title, height and fonts (the app draws it with Streamlit's theme, which styles the
    rest); one figure or a grid of subplots, every axis gets its title. Styling keeps what the builder set before
    (a log axis, a legend)."""
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    if default == "streamlit":
        import streamlit  # noqa: F401  (registers the template)
    monkeypatch.setattr(pio.templates, "default", default)
    built = go.Figure(go.Scatter(x=[1, 10], y=[1, 0])).update_xaxes(type="log").update_layout(showlegend=False)
    single = figures.style(built, "t", "position", "value", 300)
    grid = figures.style(make_subplots(rows=1, cols=2), "t", "position", "value", 300)
    for fig in (single, grid):
        assert list(fig.layout.colorway) == list(base.COLORWAY)
        assert fig.layout.height == 300 and fig.layout.title.text == "t" and fig.layout.font.family == figures.FONT
    assert single.layout.xaxis.type == "log" and single.layout.showlegend is False
    assert (single.layout.xaxis.title.text, single.layout.yaxis.title.text) == ("position", "value")
    assert [a.title.text for a in (grid.layout.xaxis, grid.layout.xaxis2, grid.layout.yaxis, grid.layout.yaxis2)] == [
        "position",
        "position",
        "value",
        "value",
    ]


@given(rows=st.integers(1, 300), cols=st.integers(1, 300), side=st.integers(1, 40), seed=st.integers(0, 10**6))
@settings(max_examples=40, deadline=None)
def test_block_mean_of_a_complete_matrix_matches_a_loop(rows, cols, side, seed):
    m = np.random.default_rng(seed).normal(size=(rows, cols))
    np.testing.assert_allclose(figures.block_mean(m, side), _block_mean_reference(m, side), rtol=1e-12, atol=1e-12)


def test_block_mean_leaves_its_input_alone():
    for m in (np.arange(600.0).reshape(60, 10), np.arange(610.0).reshape(61, 10)):  # equal and unequal blocks
        before = m.copy()
        np.testing.assert_allclose(figures.block_mean(m, 4), _block_mean_reference(before, 4), rtol=1e-12)
        np.testing.assert_array_equal(m, before)


@pytest.mark.parametrize(("train", "bands"), [(40, 1), (99, 1), (100, 0), (500, 0)])
def test_the_band_past_the_training_length_is_shaded_only_when_the_table_reaches_it(train, bands):
    from posviz.figures import sinusoidal as sinfig

    x = np.arange(100)
    fig = sinfig.lines_shaded_from(x, {"share": x / 100}, train, 99, "unseen", title="t", x_title="x", y_title="y")
    shapes = fig.layout.shapes
    assert len(shapes) == bands
    if bands:
        assert (shapes[0].x0, shapes[0].x1) == (train, 99)
        assert [a.text for a in fig.layout.annotations] == ["unseen"]


def test_dual_axes_choose_their_own_ticks_and_overlay_a_proportional_curve():
    """The mean cosine is the mean dot product over d/2: the right axis's range is the left one's over d/2, so the
    curves lie on each other, and neither axis takes its ticks from the other (which gave 0.938, 0.781, ...)."""
    from posviz.figures import sinusoidal as sinfig

    offsets, dot, cosine = sinlesson.sinusoidal_offset_profile(64, 32)
    fig = sinfig.dual_lines(offsets, ("dot", dot), ("cos", cosine), title="t", x_title="k")
    left, right = fig.layout.yaxis, fig.layout.yaxis2
    assert left.tickmode == right.tickmode == "auto"
    assert right.overlaying == "y"
    np.testing.assert_allclose(np.array(right.range) * 16, left.range, rtol=1e-12)
    assert left.range[0] < dot.min() and left.range[1] > dot.max()
    rng = np.random.default_rng(0)
    unrelated = sinfig.dual_lines(offsets, ("a", dot), ("b", rng.normal(size=dot.size)), title="t", x_title="k")
    assert unrelated.layout.yaxis.range is None and unrelated.layout.yaxis2.range is None


def test_a_log_error_plot_draws_zero_on_its_floor():
    """An exact zero vanishes from a log axis; with a floor it is drawn on the floor line, inside the axis range."""
    from posviz.figures.base import lines

    errors = np.array([0.0, 1e-20, 3e-9, 0.5])
    fig = lines(
        np.arange(4), {"error": errors}, title="t", x_title="p", y_title="e", log_y=True, floor=(1e-12, "floor")
    )
    line, floor = fig.data
    np.testing.assert_array_equal(line.y, [1e-12, 1e-12, 3e-9, 0.5])
    assert floor.name == "floor" and list(floor.y) == [1e-12, 1e-12] and floor.line.dash == "dot"
    low, high = fig.layout.yaxis.range
    assert fig.layout.yaxis.type == "log" and low < -12 < np.log10(0.5) < high


def test_marks_keep_their_labels_on_their_lines_on_log_axes():
    """plotly reads an annotation's coordinate on a log axis as log10 of the value (a shape's as the value): the
    labels of ``vline`` / ``hline`` must sit at log10 of the mark there, and at the value on a linear axis."""
    from posviz.figures.base import hline, lines, vline

    for log in (False, True):
        fig = lines([1, 10, 1000], {"a": [1e-3, 1e-1, 10.0]}, title="t", x_title="x", y_title="y", log_x=log, log_y=log)
        vline(fig, 250.0, "train", side="left", at="bottom")
        hline(fig, 0.049, "floor", below=True)
        (shape_v, shape_h), (label_v, label_h) = fig.layout.shapes, fig.layout.annotations
        assert shape_v.x0 == shape_v.x1 == 250.0 and shape_h.y0 == shape_h.y1 == 0.049  # shapes take the value
        assert label_v.x == pytest.approx(np.log10(250.0) if log else 250.0)
        assert label_h.y == pytest.approx(np.log10(0.049) if log else 0.049)
        assert (label_v.xanchor, label_v.yref, label_v.y) == ("right", "paper", 0.0)
        assert (label_h.xref, label_h.yanchor) == ("x domain", "top")


def test_image_cells_index_the_palette_and_masks_are_transparent():
    """Each cell of a drawn image is its value's level out of 255 colours between zmin and zmax (clipped); NaN and
    infinite cells (a causal mask) get the transparent index."""
    from PIL import Image

    m = np.array([[-1.0, 0.0, 1.0, 5.0], [-np.inf, np.nan, np.inf, -0.5]])
    uri = base._png_data_uri(m, "RdBu_r", -1.0, 1.0)
    image = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    cells = np.array(image)
    expected = np.clip(np.rint((np.nan_to_num(m, posinf=9, neginf=9) + 1.0) / 2.0 * (base.LEVELS - 1)), 0, 254)
    expected[~np.isfinite(m)] = base.LEVELS
    np.testing.assert_array_equal(cells, expected)
    assert image.info["transparency"] == base.LEVELS
    palette = image.getpalette()[: 3 * base.LEVELS]
    assert palette[:3] != palette[-3:]  # the two ends of the colour scale differ


def test_lines_of_their_own_x_keep_each_its_points():
    """Two profiles of different lengths on one axis: each line is drawn over its own offsets, in the given order."""
    short, long = (np.arange(5), np.linspace(1, 0, 5)), (np.arange(-3, 9), np.cos(np.arange(12)))
    fig = figures.lines(None, {"a": short, "b": long}, title="t", x_title="x", y_title="y")
    assert [trace.name for trace in fig.data] == ["a", "b"]
    for trace, (x, y) in zip(fig.data, (short, long), strict=True):
        np.testing.assert_array_equal(np.asarray(trace.x), x)
        np.testing.assert_array_equal(np.asarray(trace.y), y)
    shared = figures.lines(np.arange(5), {"a": short[1], "c": 2 * short[1]}, title="t", x_title="x", y_title="y")
    assert all(np.array_equal(np.asarray(trace.x), np.arange(5)) for trace in shared.data)


def test_long_legend_goes_below_the_plot_and_keeps_its_width():
    x = np.arange(1, 100)
    names = [f"a rather long series name, number {i}" for i in range(4)]
    fig = base.lines(x, {n: x * (i + 1) for i, n in enumerate(names)}, title="t", x_title="x", y_title="y", log_y=True)
    assert fig.layout.legend.orientation == "h"
    assert fig.layout.legend.yref == "container" and fig.layout.legend.y == 0.0
    # four entries of about 300 px each fill two rows of 640 px: the bottom margin grows by two rows
    rows = base.legend_rows(names)
    assert rows == 2
    assert fig.layout.margin.b >= 50 + base.LEGEND_ROW * rows
    short = base.lines(x, {"a": x, "b": x * 2}, title="t", x_title="x", y_title="y")
    assert short.layout.legend.orientation != "h"


def test_mark_labels_above_the_plot_in_rows_grow_the_top_margin():
    fig = base.lines(np.arange(1, 10), {"a": np.arange(1, 10)}, title="t", x_title="x", y_title="y")
    base.vline(fig, 3, "first", at="above", row=0)
    base.vline(fig, 4, "second", at="above", row=1)
    first, second = fig.layout.annotations[-2:]
    assert first.yref == "paper" and first.y == 1.0 and first.yanchor == "bottom"
    assert (second.yshift or 0) - (first.yshift or 0) == base.MARK_ROW
    assert fig.layout.margin.t >= 70 + 2 * base.MARK_ROW
