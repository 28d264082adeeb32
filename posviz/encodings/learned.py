"""Learned absolute position tables (BERT, Devlin et al. 2019; GPT-2, Radford et al. 2019).

The table is a trainable parameter of shape (max_position_embeddings, d_model). BERT initialises it
from N(0, 0.02^2) (``initializer_range = 0.02``), and so does Hugging Face's GPT-2; OpenAI's GPT-2 code drew its
position table ``wpe`` with stddev 0.01 (and its token table ``wte`` with 0.02). A hybrid starts the table from the
sinusoidal one and lets training move it. Neither can represent a position past the table's last row, and a row
whose position no training sequence reaches keeps its initial value.
"""

from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._parallel import on_every_core
from ..base import checks
from ..base.sampling import evenly_spaced
from .sinusoidal import sinusoidal, sinusoidal_frequencies

#: Rows drawn from one seeded generator of :class:`RandomTable`: a row is reached by drawing at most this many.
INIT_BLOCK_ROWS = 4
#: Rows a worker of :class:`RandomTable` draws at a time (a whole number of blocks).
_CHUNK_ROWS = 64 * INIT_BLOCK_ROWS
_WORKER = threading.local()


def _scratch(rows: int, d: int):
    """A float32 torch matrix of ``rows`` x ``d`` reused by the calling thread: memory touched once, not per chunk."""
    import torch

    held = getattr(_WORKER, "scratch", None)
    if held is None or held.numel() < rows * d:
        held = _WORKER.scratch = torch.empty(max(rows * d, _CHUNK_ROWS * d), dtype=torch.float32)
    return held[: rows * d].view(rows, d)


@dataclass(frozen=True)
class RandomTable:
    """The BERT-style initial table ``learned_init(n_positions, d_model, std=std, seed=seed)`` without holding it.

    Every entry is drawn independently from N(0, std^2) (Devlin et al., 2019, whose ``initializer_range`` is
    0.02) in float32, the way ``torch.nn.init.normal_(weight, std=std)`` initialises a float32 parameter. Rows
    come in blocks of ``INIT_BLOCK_ROWS``: block b is ``torch.empty(INIT_BLOCK_ROWS, d).normal_(0, std)`` drawn by
    a generator seeded with ``(key + b) mod 2^32``, where key is the first 32-bit word of
    ``numpy.random.SeedSequence(seed)`` (so the blocks of a table are distinct streams). Any row is drawn by
    drawing its block alone; the columns or the whole table are drawn a chunk of rows at a time on every
    core, and the values never depend on how many threads drew them or on how many rows the table has. A frozen
    value: equal tables compare and hash equal, which makes it a cache key.
    """

    n_positions: int
    d_model: int
    std: float = 0.02
    seed: int = 0

    def __post_init__(self) -> None:
        n, d = checks.table_size(self.n_positions, self.d_model)
        std = checks.positive_float("std", self.std)
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative whole number, got {seed!r}")
        for name, value in (("n_positions", n), ("d_model", d), ("std", std), ("seed", int(seed))):
            object.__setattr__(self, name, value)

    @property
    def shape(self) -> tuple[int, int]:
        return self.n_positions, self.d_model

    @functools.cached_property
    def _key(self) -> int:
        return int(np.random.SeedSequence(self.seed).generate_state(1, np.uint32)[0])

    def block_seed(self, block: int) -> int:
        """The seed of the generator that draws rows ``INIT_BLOCK_ROWS * block`` onwards."""
        return (self._key + block) % (1 << 32)

    def _draw(self, start: int, stop: int):
        """Rows ``start`` .. ``stop - 1`` as a float32 torch matrix (the thread's scratch, valid until its next
        draw); ``start`` is the first row of a block. Whole blocks are drawn even past ``stop``: torch draws a
        shorter tensor differently, not as the first rows of the longer one."""
        import torch

        blocks = -(-(stop - start) // INIT_BLOCK_ROWS)
        rows = _scratch(blocks * INIT_BLOCK_ROWS, self.d_model)
        first_seed = self.block_seed(start // INIT_BLOCK_ROWS)
        for i in range(blocks):
            generator = torch.Generator().manual_seed((first_seed + i) % (1 << 32))
            rows[i * INIT_BLOCK_ROWS : (i + 1) * INIT_BLOCK_ROWS].normal_(0.0, self.std, generator=generator)
        return rows[: stop - start]

    def _chunks(self, func) -> list:
        """``func(start, stop)`` over row chunks of ``_CHUNK_ROWS`` on every core, results in row order."""
        n = self.n_positions
        return on_every_core(lambda start: func(start, min(start + _CHUNK_ROWS, n)), range(0, n, _CHUNK_ROWS))

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        table = np.empty(self.shape)

        def fill(start: int, stop: int) -> None:
            table[start:stop] = self._draw(start, stop).numpy()

        self._chunks(fill)
        return table if dtype is None else table.astype(dtype, copy=False)

    def rows(self, positions) -> np.ndarray:
        """The rows at integer ``positions`` (any order, repeats allowed), shape (len(positions), d_model): only the
        blocks that hold them are drawn. Raises IndexError for a position outside 0 .. n_positions - 1."""
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        if pos.size and (pos.min() < 0 or pos.max() >= self.n_positions):
            raise IndexError(f"rows must lie in 0 .. {self.n_positions - 1}; got {pos.min()} .. {pos.max()}")
        out = np.empty((pos.size, self.d_model))
        blocks = pos // INIT_BLOCK_ROWS
        order = np.argsort(blocks, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(blocks[order]) != 0])  # one group per block, in order
        groups = np.split(order, starts[1:])

        def fill(group_range: range) -> None:
            for g in group_range:
                first = int(blocks[groups[g][0]]) * INIT_BLOCK_ROWS
                drawn = self._draw(first, min(first + INIT_BLOCK_ROWS, self.n_positions)).numpy()
                out[groups[g]] = drawn[pos[groups[g]] - first]

        per_worker = 64
        on_every_core(fill, [range(g, min(g + per_worker, len(groups))) for g in range(0, len(groups), per_worker)])
        return out

    def columns(self, dims) -> np.ndarray:
        """The columns ``dims`` of every row, shape (n_positions, len(dims)), drawn a chunk of rows at a time on
        every core: the whole table is never held."""
        dims = np.asarray(dims, dtype=np.int64).reshape(-1)
        out = np.empty((self.n_positions, dims.size))

        def fill(start: int, stop: int) -> None:
            out[start:stop] = self._draw(start, stop).numpy()[:, dims]

        self._chunks(fill)
        return out

    def grid(self, limit: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At most ``limit`` evenly spaced positions and as many evenly spaced dimensions, and the table's entries
        where they cross: ``(positions, dims, values)``, values of shape (len(positions), len(dims)). What a
        heatmap of a large random table shows: real entries, where block means of independent noise would
        shrink towards zero (a mean of k entries has standard deviation std / sqrt(k))."""
        positions, dims = evenly_spaced(self.n_positions, limit), evenly_spaced(self.d_model, limit)
        return positions, dims, self.rows(positions)[:, dims]


def learned_init(n_positions: int, d_model: int, *, std: float = 0.02, seed: int = 0) -> np.ndarray:
    """The BERT-style initial table: every entry drawn independently from N(0, std^2).

    Source: Devlin et al. (2019), BERT, whose ``initializer_range`` is 0.02. Reproducible from ``seed``; the rows
    are :class:`RandomTable`'s (blocks of ``INIT_BLOCK_ROWS`` rows from independent seeded streams, drawn in
    parallel). Shape (n_positions, d_model), float64.
    """
    return np.asarray(RandomTable(n_positions, d_model, std=std, seed=seed))


def sin_init(n_positions: int, d_model: int, *, base: float = 10000.0, scale: float = 1.0) -> np.ndarray:
    """The initial table of a sinusoidal-initialised learnable encoding: ``scale * sinusoidal(n, d, base)``.

    The parameter starts as the fixed table of Vaswani et al. (2017) and is then trained like BERT's.
    """
    scale = checks.positive_float("scale", scale)
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
    n = checks.positive_int("n_positions", n_positions)
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
    n = checks.positive_int("n_positions", n_positions)
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
    checks.choice("method", method, EXTENSIONS)
    if checks.drawn_on_demand(table):  # draw only the rows the coordinates fall between
        rows_of = table.rows
    else:
        table = checks.finite_table(table)
        rows_of = table.__getitem__
    n = table.shape[0]
    coords = np.clip(np.asarray(coordinates, dtype=np.float64), 0.0, n - 1)
    if method == "clip":
        return rows_of(np.rint(coords).astype(np.int64))
    lower = np.minimum(np.floor(coords).astype(np.int64), max(n - 2, 0))
    upper = np.minimum(lower + 1, n - 1)
    frac = (coords - lower)[:, None]
    needed, which = np.unique(np.concatenate([lower, upper]), return_inverse=True)  # each row fetched once
    rows = rows_of(needed)
    return (1.0 - frac) * rows[which[: lower.size]] + frac * rows[which[lower.size :]]


def interpolate_table(table, n_positions: int) -> np.ndarray:
    """The table resized to ``n_positions`` rows by linear interpolation along positions, corners aligned:
    new row i sits at old position i (n - 1) / (N - 1), so the first and last rows are kept exactly. Equal to
    ``F.interpolate(table.T[None], size=N, mode="linear", align_corners=True)[0].T``."""
    table = checks.finite_table(table)
    target = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    scale = (table.shape[0] - 1) / (target - 1) if target > 1 else 0.0
    return rows_at(table, np.arange(target) * scale)


def truncate_table(table, n_positions: int) -> np.ndarray:
    """The table extended to ``n_positions`` rows by clipping every position to the last row:
    PE'(p) = PE(min(p, n - 1)). Every position from n - 1 on gets the same vector."""
    table = checks.finite_table(table)
    target = checks.positive_int("n_positions", n_positions, maximum=checks.MAX_POSITIONS)
    return rows_at(table, np.arange(target), "clip")


def extended_rows(table, n_positions: int, method: str, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``limit`` evenly spaced positions of the table extended to ``n_positions`` rows by ``method``
    (see :func:`truncate_table`, :func:`interpolate_table`), and their rows, computed without building the whole
    extended table. Returns ``(positions, rows)``."""
    checks.choice("method", method, EXTENSIONS)
    if not checks.drawn_on_demand(table):
        table = checks.finite_table(table)
    target = checks.positive_int("n_positions", n_positions)
    limit = checks.positive_int("limit", limit)
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
