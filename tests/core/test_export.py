"""CSV export of figure data: exact cells for ordinary tables, honest block means for huge ones."""

import io

import numpy as np
import pandas as pd
import pytest

from posviz import figures
from posviz.ui import export


def _read(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), index_col=0)


def test_matrix_round_trips_to_the_last_digit():
    m = np.random.default_rng(3).normal(size=(7, 5))
    back = _read(export.csv_bytes(m)).to_numpy()
    np.testing.assert_array_equal(back, m)  # %.17g keeps every float64 digit


def test_columns_and_vectors():
    frame = _read(export.csv_bytes({"offset": np.arange(4), "cosine": np.array([1.0, 0.5, 0.25, 0.125])}))
    assert list(frame.columns) == ["offset", "cosine"]
    np.testing.assert_array_equal(frame["cosine"], [1.0, 0.5, 0.25, 0.125])
    assert _read(export.csv_bytes(np.arange(3.0)))["value"].tolist() == [0.0, 1.0, 2.0]


def test_masked_cells_stay_empty_not_invented():
    m = np.array([[0.0, -np.inf], [-1.0, 0.0]])
    frame = _read(export.csv_bytes(np.where(np.isfinite(m), m, np.nan)))
    assert np.isnan(frame.iloc[0, 1]) and frame.iloc[1, 0] == -1.0


def test_huge_matrix_exports_the_block_means_the_figure_shows():
    m = np.add.outer(np.arange(5000.0), np.arange(900.0))  # 4.5 M cells > MAX_CSV_CELLS
    assert m.size > export.MAX_CSV_CELLS
    frame, reduced = export.to_frame(m)
    assert reduced and frame.shape == (1024, 900)
    np.testing.assert_allclose(frame.to_numpy(), figures.block_mean(m))


def test_three_dimensional_data_is_refused():
    with pytest.raises(ValueError, match="shape"):
        export.to_frame(np.zeros((2, 2, 2)))
