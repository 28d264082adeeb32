"""Figure data as CSV for the download buttons under each figure.

A figure's PNG comes from plotly's own camera button (``toImageButtonOptions``, at 3x resolution); its numbers
come from here. Matrices over ``MAX_CSV_CELLS`` cells are exported as the same block means the figure shows.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd

from posviz import figures

#: Largest matrix exported cell for cell (about 64 MB of CSV); larger ones are exported as block means.
MAX_CSV_CELLS = 1 << 22


def to_frame(data) -> tuple[pd.DataFrame, bool]:
    """``(frame, reduced)`` for a DataFrame, a dict of equal-length columns, or a 1-D / 2-D array.

    ``reduced`` is True when a large matrix was replaced by its block means (at most ``figures.MAX_SIDE`` a side).
    """
    if isinstance(data, pd.DataFrame):
        return data, False
    if isinstance(data, dict):
        return pd.DataFrame({k: np.asarray(v) for k, v in data.items()}), False
    array = np.asarray(data)
    if array.ndim == 1:
        return pd.DataFrame({"value": array}), False
    if array.ndim != 2:
        raise ValueError(f"only tables can be exported as CSV; got an array of shape {array.shape}")
    reduced = array.size > MAX_CSV_CELLS
    if reduced:
        array = figures.block_mean(array.astype(np.float64))
    return pd.DataFrame(array), reduced


def csv_bytes(data) -> bytes:
    """The CSV text of ``data`` (see ``to_frame``), UTF-8, full float precision, index included."""
    frame, _ = to_frame(data)
    buffer = io.StringIO()
    frame.to_csv(buffer, float_format="%.17g")
    return buffer.getvalue().encode("utf-8")
