"""Figure builders: exact heatmaps carry the matrix itself; large ones carry honest block means."""

import base64
import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posviz import figures


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
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(fig.data[0].source.split(",", 1)[1]))))
    assert pixels[0, 0, 0] != pixels[-1, -1, 0]


def test_heatmap_rejects_non_matrices():
    with pytest.raises(ValueError, match="2-D"):
        figures.heatmap(np.zeros(5), title="t", x_title="x", y_title="y")
