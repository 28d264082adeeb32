"""Which positions or blocks a view samples: evenly spaced indices, and the blocks of a block-mean image."""

from __future__ import annotations

import numpy as np

from . import checks


def evenly_spaced(n_positions: int, limit: int) -> np.ndarray:
    """At most ``limit`` evenly spaced position indices out of ``n_positions`` (all of them if few enough),
    always including the first and last position."""
    n = checks.positive_int("n_positions", n_positions)
    limit = checks.positive_int("limit", limit)
    if n <= limit:
        return np.arange(n)
    return np.unique(np.round(np.linspace(0, n - 1, limit)).astype(np.int64))


def block_edges(n: int, max_side: int) -> np.ndarray:
    """Start of each block when n indices are cut into at most ``max_side`` near-equal blocks, followed by n:
    ``linspace(0, n, max_side + 1)`` rounded down when n > max_side, else one block per index. The blocks of a
    heatmap's block means (``figures.block_mean``), so they can also be computed without the matrix."""
    starts = np.linspace(0, n, max_side + 1).astype(np.int64)[:-1] if n > max_side else np.arange(n)
    return np.append(starts, n)
