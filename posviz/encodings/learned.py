"""Learned absolute position tables (BERT, Devlin et al. 2019; GPT-2, Radford et al. 2019).

The table is a trainable parameter of shape (max_position_embeddings, d_model). BERT initialises it
from N(0, 0.02^2) (``initializer_range = 0.02``); a hybrid starts it from the sinusoidal table and lets
training move it. Neither can represent a position past the table's last row.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._parallel import on_every_core
from . import _checks
from .sinusoidal import sinusoidal, sinusoidal_frequencies

#: Rows drawn from one random stream of :func:`learned_init`.
INIT_BLOCK_ROWS = 1024


def learned_init(n_positions: int, d_model: int, *, std: float = 0.02, seed: int = 0) -> np.ndarray:
    """The BERT-style initial table: every entry drawn independently from N(0, std^2).

    Source: Devlin et al. (2019), BERT, whose ``initializer_range`` is 0.02. Reproducible from ``seed``: rows
    ``INIT_BLOCK_ROWS * b`` onwards come from numpy's PCG64 generator seeded with the b-th child of
    ``SeedSequence(seed)``, so the blocks are drawn in parallel (a 32,768 x 4,096 table is 134 M draws) and the
    values never depend on how many threads drew them. Shape (n_positions, d_model), float64.
    """
    n, d = _checks.table_size(n_positions, d_model)
    std = _checks.positive_float("std", std)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative whole number, got {seed!r}")
    table = np.empty((n, d))
    starts = range(0, n, INIT_BLOCK_ROWS)
    streams = np.random.SeedSequence(int(seed)).spawn(len(starts))

    def draw(block: int) -> None:
        rows = table[starts[block] : starts[block] + INIT_BLOCK_ROWS]
        np.random.default_rng(streams[block]).standard_normal(out=rows)
        rows *= std

    on_every_core(draw, range(len(starts)))
    return table


def sin_init(n_positions: int, d_model: int, *, base: float = 10000.0, scale: float = 1.0) -> np.ndarray:
    """The initial table of a sinusoidal-initialised learnable encoding: ``scale * sinusoidal(n, d, base)``.

    The parameter starts as the fixed table of Vaswani et al. (2017) and is then trained like BERT's.
    """
    scale = _checks.positive_float("scale", scale)
    table = sinusoidal(n_positions, d_model, base=base)
    table *= scale  # in place: no second copy of a table that reaches 1 GiB
    return table


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


#: Where the shipped trained example lives (written by ``assets/trained/make_example.py``).
EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "assets" / "trained"
EXAMPLE_TABLE = EXAMPLE_DIR / "example_positions.npy"
EXTENSIONS = ("clip", "interpolate")


def example_table() -> np.ndarray:
    """The position table of a tiny BERT-like encoder trained with masked-language modelling, shape (64, 64).

    Produced by ``assets/trained/make_example.py`` (fixed seed, CPU): the rows started from N(0, 0.02^2) and were
    trained on counting sequences whose tokens depend on their position; see the script's docstring. Loaded with
    ``np.load(allow_pickle=False)`` and returned as float64.
    """
    return np.load(EXAMPLE_TABLE, allow_pickle=False).astype(np.float64)


def example_provenance() -> dict:
    """How the example table was made: seed, steps, first and final loss, model and corpus (the JSON next to it)."""
    return json.loads(EXAMPLE_TABLE.with_suffix(".json").read_text(encoding="utf-8"))


def torch_lookup_error(n_positions: int, position: int) -> str:
    """The message a real model gives for a position past its table: ``torch.nn.Embedding(n_positions, 1)`` asked
    for ``position``. Returns the text of the exception torch raises ("index out of range in self"); raises
    ValueError when the position is inside the table, where there is no error to show."""
    n = _checks.positive_int("n_positions", n_positions)
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or position < 0:
        raise ValueError(f"position must be a whole number >= 0, got {position!r}")
    if position < n:
        raise ValueError(f"position {position} is inside a table of {n} rows, so the lookup succeeds")
    import torch

    with torch.no_grad():
        try:
            torch.nn.Embedding(n, 1)(torch.tensor([position]))
        except IndexError as exc:
            return str(exc)
    raise AssertionError("torch.nn.Embedding accepted a position past its end")


def lookup_error(n_positions: int, position: int) -> str:
    """posviz's explanation of the same failure: the IndexError message of :func:`lookup` on a table of
    ``n_positions`` rows asked for ``position``."""
    n = _checks.positive_int("n_positions", n_positions)
    try:
        lookup(np.zeros((n, 1)), [position])
    except IndexError as exc:
        return str(exc)
    raise ValueError(f"position {position} is inside a table of {n} rows, so the lookup succeeds")


def rows_at(table, coordinates, method: str = "interpolate") -> np.ndarray:
    """Rows of ``table`` at real-valued positions, for positions the table may not have.

    ``"clip"`` (truncation): row min(round(c), n - 1), so every position past the end reuses the last row.
    ``"interpolate"``: linear interpolation between the two nearest rows,
    PE(c) = (1 - f) PE(floor c) + f PE(floor c + 1), f = c - floor c, the 1-D case of how ViT/DeiT resize their
    position tables (``torch.nn.functional.interpolate``). Coordinates are clipped to [0, n - 1].
    """
    _checks.choice("method", method, EXTENSIONS)
    table = _checks.finite_table(table)
    n = table.shape[0]
    coords = np.clip(np.asarray(coordinates, dtype=np.float64), 0.0, n - 1)
    if method == "clip":
        return table[np.rint(coords).astype(np.int64)]
    lower = np.minimum(np.floor(coords).astype(np.int64), max(n - 2, 0))
    upper = np.minimum(lower + 1, n - 1)
    frac = (coords - lower)[:, None]
    return (1.0 - frac) * table[lower] + frac * table[upper]


def interpolate_table(table, n_positions: int) -> np.ndarray:
    """The table resized to ``n_positions`` rows by linear interpolation along positions, corners aligned:
    new row i sits at old position i (n - 1) / (N - 1), so the first and last rows are kept exactly. Equal to
    ``F.interpolate(table.T[None], size=N, mode="linear", align_corners=True)[0].T``."""
    table = _checks.finite_table(table)
    target = _checks.positive_int("n_positions", n_positions, maximum=_checks.MAX_POSITIONS)
    scale = (table.shape[0] - 1) / (target - 1) if target > 1 else 0.0
    return rows_at(table, np.arange(target) * scale)


def truncate_table(table, n_positions: int) -> np.ndarray:
    """The table extended to ``n_positions`` rows by clipping every position to the last row:
    PE'(p) = PE(min(p, n - 1)). Every position from n - 1 on gets the same vector."""
    table = _checks.finite_table(table)
    target = _checks.positive_int("n_positions", n_positions, maximum=_checks.MAX_POSITIONS)
    return rows_at(table, np.arange(target), "clip")


def extended_rows(table, n_positions: int, method: str, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` evenly spaced positions of the table extended to ``n_positions`` rows by ``method``
    (see :func:`truncate_table`, :func:`interpolate_table`), and their rows, computed without building the whole
    extended table. Returns ``(positions, rows)``."""
    _checks.choice("method", method, EXTENSIONS)
    table = _checks.finite_table(table)
    target = _checks.positive_int("n_positions", n_positions)
    limit = _checks.positive_int("limit", limit)
    positions = np.arange(target) if target <= limit else np.unique(np.rint(np.linspace(0, target - 1, limit)))
    positions = positions.astype(np.int64)
    if method == "clip":
        return positions, rows_at(table, positions, "clip")
    scale = (table.shape[0] - 1) / (target - 1) if target > 1 else 0.0
    return positions, rows_at(table, positions * scale)


def extended_similarity(table, n_positions: int, method: str, limit: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarity between at most ``limit`` evenly spaced positions of the table extended to
    ``n_positions`` rows by ``method`` (``"clip"`` or ``"interpolate"``). Returns ``(positions, S)``.

    Clipping makes every position past the end identical to the last one (a block of ones); interpolation keeps
    the table's pattern but stretched by (N - 1) / (n - 1), so neighbours become more alike."""
    positions, rows = extended_rows(table, n_positions, method, limit)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.where(norms > 0, norms, 1.0)
    return positions, np.clip(unit @ unit.T, -1.0, 1.0)


def sinusoidal_column_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """The angular frequency of every column of the sinusoidal table: column 2k (sin) and 2k + 1 (cos) both turn
    at omega_k = base^(-2k / d) radians per position (Vaswani et al., 2017). Shape (d_model,)."""
    return np.repeat(sinusoidal_frequencies(d_model, base=base), 2)[:d_model]


def sinusoidal_spectrum(n_positions: int, d_model: int, *, max_dims: int = 512):
    """``analysis.position_spectrum(sin_init(n_positions, d_model), max_dims=max_dims)`` built from the analysed
    columns only, a chunk at a time: column 2k is sin(p omega_k) and 2k + 1 is cos(p omega_k), so the reference
    spectrum of a 32,768 x 4,096 table costs 512 columns, not the whole table."""
    from ..analysis import evenly_spaced, spectrum_of_columns

    n, d = _checks.table_size(n_positions, d_model)
    dims = evenly_spaced(d, max_dims)
    omega, even = sinusoidal_column_frequencies(d)[dims], dims % 2 == 0

    def columns(start: int, stop: int) -> np.ndarray:
        angles = np.arange(n, dtype=np.float64)[:, None] * omega[None, start:stop]
        chosen = even[start:stop]
        angles[:, chosen] = np.sin(angles[:, chosen])
        angles[:, ~chosen] = np.cos(angles[:, ~chosen])
        return angles

    return spectrum_of_columns(columns, n, dims)
