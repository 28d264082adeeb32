"""Learned absolute position tables (BERT, Devlin et al. 2019; GPT-2, Radford et al. 2019).

The table is a trainable parameter of shape (max_position_embeddings, d_model). BERT initialises it
from N(0, 0.02^2) (``initializer_range = 0.02``); a hybrid starts it from the sinusoidal table and lets
training move it. Neither can represent a position past the table's last row.
"""

from __future__ import annotations

import numpy as np

from . import _checks
from .sinusoidal import sinusoidal


def learned_init(n_positions: int, d_model: int, *, std: float = 0.02, seed: int = 0) -> np.ndarray:
    """The BERT-style initial table: every entry drawn independently from N(0, std^2).

    Source: Devlin et al. (2019), BERT, whose ``initializer_range`` is 0.02. Reproducible from ``seed``
    (numpy's PCG64 generator), shape (n_positions, d_model), float64.
    """
    n, d = _checks.table_size(n_positions, d_model)
    std = _checks.positive_float("std", std)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number, got {seed!r}")
    return np.random.default_rng(int(seed)).normal(0.0, std, size=(n, d))


def sin_init(n_positions: int, d_model: int, *, base: float = 10000.0, scale: float = 1.0) -> np.ndarray:
    """The initial table of a sinusoidal-initialised learnable encoding: ``scale * sinusoidal(n, d, base)``.

    The parameter starts as the fixed table of Vaswani et al. (2017) and is then trained like BERT's.
    """
    scale = _checks.positive_float("scale", scale)
    return scale * sinusoidal(n_positions, d_model, base=base)


def lookup(table: np.ndarray, positions) -> np.ndarray:
    """Rows of a learned table for the given positions, failing the way a real model does past its end.

    ``torch.nn.Embedding`` raises "index out of range in self" for a position >= max_position_embeddings; this
    raises an IndexError that says which positions fall outside the table and how long it is.
    """
    table = np.asarray(table)
    pos = np.asarray(positions)
    if pos.size and (pos.min() < 0 or pos.max() >= table.shape[0]):
        bad = pos[(pos < 0) | (pos >= table.shape[0])]
        raise IndexError(
            f"position {int(bad.flat[0])} is outside the learned table, which has rows 0..{table.shape[0] - 1} "
            f"(max_position_embeddings = {table.shape[0]}); a learned table cannot represent later positions"
        )
    return table[pos]
