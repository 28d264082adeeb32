"""Cached core calls and figures for the pages: one thin wrapper per function, with that function's parameters.

Pages call ``cache.rope_inv_freq(head_dim, base=base)`` where a notebook calls ``rope.rope_inv_freq``; every wrapper
names in its docstring the function it wraps. Two caches, both shared by every session of the server:

- ``st.cache_data`` for small results (at most ``RESULT_ENTRIES`` per function). Streamlit keys an entry by the
  function's code and the values of its arguments (``10`` and ``10.0`` are different keys), keeps it pickled and
  returns a fresh copy on every hit, so a page can never change a cached result.
- ``TABLES``, one store for what must not be copied on every rerun: a family's table (1 GiB at the largest sizes), a
  loaded checkpoint, results that can reach a million numbers (``_held``) and built figures with their dictionaries
  (``_figure``, ``HeldFigure``). ``st.cache_resource`` would keep them without copying, but it bounds a cache by a
  count of entries; ``TABLES`` bounds them by the bytes they hold (``POSVIZ_CACHE_MB``, every byte counted by
  :func:`nbytes`) and drops the least recently used. Its arrays are read-only; its figures are shared: draw them,
  never change them. A figure's arguments are keyed by their exact values (:func:`_key`), an array held by
  ``TABLES`` by its entry's key.

An analysis of a table takes a :class:`Table` (or a ``learned.RandomTable``, which is its own key): the table's
name, a family and its parameters or a digest of its content, is the key, never the array, and the table itself
is only built on a miss.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import posviz
from posviz import analysis, figures
from posviz import checkpoint as ckpt
from posviz.analysis import PositionSpectrum, TableReading
from posviz.encodings import alibi, learned, relative, rope, rope_configs, xlnet
from posviz.encodings import sinusoidal as sin
from posviz.encodings.rope_configs import ConfigFrequencies, ScalingComparison
from posviz.figures import alibi as alibi_figures
from posviz.figures import compare as compare_figures
from posviz.figures import home as home_figures
from posviz.figures import pitfalls as pitfall_figures
from posviz.figures import relative as relative_figures
from posviz.figures import rope as rope_figures
from posviz.figures import sinusoidal as sinusoidal_figures
from posviz.figures import xlnet as xlnet_figures
from posviz.lessons import attention_demo as demo
from posviz.lessons import claims, compare, pitfalls, precision
from posviz.lessons import sinusoidal as sinlesson
from posviz.lessons.attention_demo import ShuffleDemo
from posviz.lessons.claims import Evidence

if TYPE_CHECKING:  # the lab imports torch, which a page that never trains should not pay for
    from posviz import lab

#: Small results kept per cached function (``st.cache_data``): arrays of at most some thousand numbers, strings.
RESULT_ENTRIES = 128
#: Memory the large tables, results and built figures may hold together (``TABLES``): ``POSVIZ_CACHE_MB`` megabytes,
#: by default 1,280: the largest table (1 GiB), its block means and its figures, and 0.25 GB of other figures.
CACHE_MB_DEFAULT = 1280
#: What ``st.cache_data`` holds, as the documented memory of a server counts it: small results, a few kB each (every
#: page and tab at its defaults: 1.1 MB together), ``RESULT_ENTRIES`` per function at most. A server's memory is about
#: 0.5 GB for Python and its libraries, ``POSVIZ_CACHE_MB``, this, and the training lab's.
SMALL_RESULTS_BYTES = 64 << 20


def _results(func):
    return st.cache_data(max_entries=RESULT_ENTRIES, show_spinner=False)(func)


def budget_bytes(environ=os.environ) -> int:
    """The tables' budget in bytes from ``POSVIZ_CACHE_MB`` (a whole number of megabytes, at least 64), else the
    default. A value that is not one is refused with a sentence, before the server takes its first student."""
    raw = environ.get("POSVIZ_CACHE_MB", "").strip()
    if not raw:
        return CACHE_MB_DEFAULT << 20
    if not raw.isdigit() or int(raw) < 64:
        raise ValueError(
            f"POSVIZ_CACHE_MB is the cache budget in megabytes, a whole number of at least 64; got {raw!r}"
        )
    return int(raw) << 20


# ------------------------------------------------------------------------------------------------ large tables


def nbytes(value, _seen: set[tuple[str, int]] | None = None) -> int:
    """Bytes ``value`` holds: the data of its arrays (numpy, and torch tensors and a torch module's parameters and
    buffers) and of its strings, inside tuples, lists, dicts and dataclass fields at any depth, each object counted
    once (two views of one array count their owner once); an object's own ``nbytes`` (a held figure's);
    ``sys.getsizeof`` of anything else."""
    if isinstance(value, (str, bytes, int, float, type(None))):  # leaves, counted wherever they appear (fast)
        return sys.getsizeof(value)
    seen = set() if _seen is None else _seen

    def first_time(kind: str, ident: int) -> bool:
        if (kind, ident) in seen:
            return False
        seen.add((kind, ident))
        return True

    if isinstance(value, np.ndarray):
        owner = value
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        return owner.nbytes if first_time("object", id(owner)) else 0
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        storage = value.untyped_storage()
        return storage.nbytes() if first_time("storage", storage.data_ptr()) else 0
    if not first_time("object", id(value)):
        return 0
    if torch is not None and isinstance(value, torch.nn.Module):
        return sum(nbytes(tensor, seen) for tensor in (*value.parameters(), *value.buffers()))
    if isinstance(value, (tuple, list, set, frozenset)):
        return sys.getsizeof(value) + sum(nbytes(item, seen) for item in value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes(k, seen) + nbytes(v, seen) for k, v in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return sys.getsizeof(value) + sum(nbytes(getattr(value, f.name), seen) for f in fields)
    own = getattr(value, "nbytes", None)
    return own if isinstance(own, int) else sys.getsizeof(value)  # an object that counts itself: a held figure


def _frozen(value):
    """``value`` with every array in it read-only: an array (a copy if it is a view, which would keep its whole
    parent alive), and the arrays in tuples, lists, dicts and dataclass fields (replaced in place)."""
    if isinstance(value, np.ndarray):
        if value.base is not None:
            value = value.copy()
        value.flags.writeable = False
        return value
    if isinstance(value, tuple):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, list):
        return [_frozen(item) for item in value]
    if isinstance(value, dict):
        return {key: _frozen(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            frozen = _frozen(item)
            if frozen is not item:
                object.__setattr__(value, field.name, frozen)  # a frozen dataclass too: it is ours alone
    return value


def _find(held, value, depth: int = 3) -> tuple | None:
    """The path from ``held`` to ``value`` itself (indices, dict keys, field names), or None."""
    if held is value:
        return ()
    if depth == 0:
        return None
    if isinstance(held, (tuple, list)):
        parts = enumerate(held)
    elif isinstance(held, dict):
        parts = iter(held.items())
    elif dataclasses.is_dataclass(held) and not isinstance(held, type):
        parts = ((field.name, getattr(held, field.name)) for field in dataclasses.fields(held))
    else:
        return None
    for name, part in parts:
        where = _find(part, value, depth - 1)
        if where is not None:
            return (name, *where)
    return None


class TableStore:
    """A least-recently-used map from keys to large read-only results, holding at most ``budget`` bytes
    (:func:`nbytes` of each, every byte counted). A result larger than the whole budget is returned but not kept.
    Computations run outside the lock, so two sessions asking for the same new key may both compute it; the first
    stored wins."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: OrderedDict = OrderedDict()
        self._sizes: dict = {}
        self._lock = threading.Lock()

    def get(self, key: tuple, compute: Callable[[], Any]):
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        result = _frozen(compute())
        size = nbytes(result)
        with self._lock:
            if key in self._entries:
                return self._entries[key]
            if size <= self.budget:
                self._entries[key], self._sizes[key] = result, size
                while sum(self._sizes.values()) > self.budget:
                    oldest, _ = self._entries.popitem(last=False)
                    del self._sizes[oldest]
        return result

    def key_of(self, value) -> tuple | None:
        """Where ``value`` itself (not an equal copy) is held: its entry's key, followed by where it stands inside
        the entry (an index of a tuple, a key of a dict, a field of a result object); None when it is not held."""
        with self._lock:
            entries = list(self._entries.items())
        for key, held in entries:
            where = _find(held, value)
            if where is not None:
                return (*key, *where)
        return None

    def keys(self) -> list[tuple]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return sum(self._sizes.values())


TABLES = TableStore(budget_bytes())


def _typed_value(value) -> tuple:
    """``value`` as part of a key, with its type, in tuples too (``10`` and ``10.0`` are equal keys otherwise)."""
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *(_typed_value(item) for item in value))
    return (type(value).__name__, value)


def _untyped(typed: tuple | list):
    """The value ``_typed_value`` made ``typed`` from."""
    kind, *rest = typed
    return (
        {"tuple": tuple, "list": list}[kind](_untyped(item) for item in rest) if kind in ("tuple", "list") else rest[0]
    )


def _typed(params: Mapping[str, object] | Iterable[tuple[str, object]]) -> tuple:
    """Named parameters as a key: sorted by name, each value with its type."""
    return tuple((name, *_typed_value(value)) for name, value in sorted(dict(params).items()))


def _held(func):
    """``func`` with its results kept in ``TABLES``, keyed by its name and the values and types of its arguments:
    for functions whose result can reach a million numbers, which ``st.cache_data`` would copy on every rerun,
    count by entries rather than bytes, and leave to be hashed again whenever a figure is keyed on them."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def held(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = (func.__module__, func.__qualname__, _typed(bound.arguments))
        return TABLES.get(key, lambda: func(*args, **kwargs))

    return held


def family_table(family: str, params: Mapping[str, object] | Iterable[tuple[str, object]]) -> np.ndarray:
    """``posviz.family(family).build(**params)``, kept in ``TABLES`` (read-only, never copied)."""
    kwargs = dict(params)
    return TABLES.get(("family", family, _typed(kwargs)), lambda: np.asarray(posviz.family(family).build(**kwargs)))


def held_tables(family: str) -> list[dict]:
    """The parameters of every table of ``family`` that ``TABLES`` holds now (what a test asks: was it built?)."""
    return [
        {name: _untyped(typed) for name, *typed in key[2]} for key in TABLES.keys() if key[:2] == ("family", family)
    ]


def preview(matrix: np.ndarray) -> np.ndarray | None:
    """The block means (``figures.block_mean``) of a large table held in ``TABLES``, kept there beside it, so a
    rerun does not average 1 GiB again; None for any other matrix (its figure computes what it needs)."""
    if not isinstance(matrix, np.ndarray) or matrix.size <= figures.EXACT_MAX_CELLS:
        return None
    if max(matrix.shape) <= figures.MAX_SIDE:  # drawn cell for cell: a preview would only copy the matrix
        return None
    key = TABLES.key_of(matrix)
    return None if key is None else TABLES.get(("preview", key), lambda: figures.block_mean(matrix))


def checkpoint(source, key: str | None = None, *, name: str | None = None) -> tuple[str, ckpt.PositionTable]:
    """``(fingerprint, posviz.load_position_embeddings(source, key))``, kept in ``TABLES`` by the source's
    content fingerprint (``posviz.checkpoint.fingerprint``) and the key; the matrix is read-only."""
    digest = ckpt.fingerprint(source)
    return digest, TABLES.get(
        ("checkpoint", digest, key), lambda: ckpt.load_position_embeddings(source, key, name=name)
    )


@_results
def candidates(digest: str, _source, *, name: str | None = None) -> list:
    """Cached :func:`posviz.checkpoint.list_position_candidates` of ``_source``, keyed by its fingerprint
    ``digest`` only."""
    return ckpt.list_position_candidates(_source, name=name)


# ------------------------------------------------------------------------------------------------ analyses


@dataclasses.dataclass(frozen=True)
class Table:
    """A position table to analyse, named by what identifies its content; cached analyses key on ``key`` alone.

    Made by :meth:`family` (a family and its parameters: built in ``TABLES`` on a miss only) or :meth:`content`
    (any array: keyed by a sha256 of its bytes, so a changed upload is a new key)."""

    key: str
    load: Callable[[], np.ndarray] = dataclasses.field(compare=False, repr=False)

    @classmethod
    def family(cls, family: str, params: Mapping[str, object] | Iterable[tuple[str, object]]) -> Table:
        kwargs = dict(params)
        return cls(f"family {family} {_typed(kwargs)}", lambda: family_table(family, kwargs))

    @classmethod
    def content(cls, matrix, digest: str | None = None) -> Table:
        """``matrix`` keyed by ``digest`` (default: ``analysis.table_digest(matrix)``, a sha256 of its bytes)."""
        return cls(f"sha256 {digest or analysis.table_digest(matrix)}", lambda: matrix)

    @property
    def matrix(self) -> np.ndarray:
        return self.load()


AnyTable = Table | learned.RandomTable
_BY_KEY = {Table: lambda table: table.key}


def _array(table: AnyTable):
    """What the core analyses: the array of a ``Table``, a ``RandomTable`` itself (it draws only what is read)."""
    return table.matrix if isinstance(table, Table) else table


def _analysis(func):
    return st.cache_data(max_entries=RESULT_ENTRIES, hash_funcs=_BY_KEY, show_spinner=False)(func)


@_analysis
def row_norms(table: AnyTable) -> np.ndarray:
    """Cached :func:`posviz.analysis.row_norms`."""
    return analysis.row_norms(_array(table))


@_held
def sampled_similarity(table: AnyTable, limit: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.analysis.sampled_similarity`."""
    return analysis.sampled_similarity(_array(table), limit)


@_analysis
def strided_offset_profile(table: AnyTable, max_positions: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.analysis.strided_offset_profile`."""
    return analysis.strided_offset_profile(_array(table), max_positions)


@_analysis
def lag_spread(table: AnyTable, max_positions: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.analysis.lag_spread`."""
    return analysis.lag_spread(_array(table), max_positions)


@_analysis
def sampled_projection(
    table: AnyTable, limit: int = 2048, method: str = "pca", seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.analysis.sampled_projection`."""
    return analysis.sampled_projection(_array(table), limit, method, seed)


@_analysis
def position_spectrum(table: AnyTable, *, max_dims: int = 512) -> PositionSpectrum:
    """Cached :func:`posviz.analysis.position_spectrum`."""
    return analysis.position_spectrum(_array(table), max_dims=max_dims)


@_analysis
def sampled_position_probe(table: AnyTable, limit: int = 1024, *, folds: int = 5, seed: int = 0) -> float:
    """Cached :func:`posviz.analysis.sampled_position_probe`."""
    return analysis.sampled_position_probe(_array(table), limit, folds=folds, seed=seed)


@_analysis
def read_table(table: AnyTable, limit: int = 1024) -> TableReading:
    """Cached :func:`posviz.analysis.read_table`."""
    return analysis.read_table(_array(table), limit)


@_held
def extended_similarity(
    table: AnyTable, n_positions: int, method: str, limit: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.learned.extended_similarity`."""
    return learned.extended_similarity(_array(table), n_positions, method, limit)


@_held
def random_grid(table: learned.RandomTable, limit: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :meth:`posviz.encodings.learned.RandomTable.grid`."""
    return table.grid(limit)


# ------------------------------------------------------------------------------------------------ the lab


@_results
def lab_similarities(config: lab.TrainConfig, _run: lab.RunResult) -> np.ndarray:
    """Cached :func:`posviz.analysis.similarity_stack` of a run's table snapshots, keyed by its configuration (a
    run is fully determined by it)."""
    return analysis.similarity_stack(_run.snapshots)


@_results
def lab_lengths(config: lab.TrainConfig, lengths: tuple[int, ...], _run: lab.RunResult) -> lab.LengthAccuracy:
    """Cached :func:`posviz.lab.evaluate_lengths` of a run, keyed by its configuration and the lengths."""
    from posviz.lab import evaluate_lengths

    return evaluate_lengths(_run, list(lengths))


# ----------------------------------------------------------------------------------------------- posviz.analysis


@_results
def constant_guess_error(n_positions: int) -> float:
    """Cached :func:`posviz.analysis.constant_guess_error`."""
    return analysis.constant_guess_error(n_positions)


# ---------------------------------------------------------------------------------------- posviz.encodings.alibi


@_results
def alibi_slopes(n_heads: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.alibi_slopes`."""
    return alibi.alibi_slopes(n_heads)


@_results
def alibi_slope_origin(n_heads: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.alibi_slope_origin`."""
    return alibi.alibi_slope_origin(n_heads)


@_results
def alibi_slope_ladder(n_heads: int) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.alibi.alibi_slope_ladder`."""
    return alibi.alibi_slope_ladder(n_heads)


@_results
def article_slopes(n_heads: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.article_slopes`."""
    return alibi.article_slopes(n_heads)


@_results
def alibi_attention_row(n_heads: int, query: int, heads=None, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.alibi.alibi_attention_row`."""
    return alibi.alibi_attention_row(n_heads, query, heads, seed)


@_results
def alibi_span(n_heads: int, ratio: float = 0.01) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.alibi_span`."""
    return alibi.alibi_span(n_heads, ratio)


@_held
def alibi_distance_bias(n_heads: int, max_distance: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.alibi_distance_bias`."""
    return alibi.alibi_distance_bias(n_heads, max_distance)


@_results
def alibi_mass_beyond(n_heads: int, train_len: int, seq_lens) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.alibi_mass_beyond`."""
    return alibi.alibi_mass_beyond(n_heads, train_len, seq_lens)


@_results
def article_slopes_agree(n_heads: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.alibi.article_slopes_agree`."""
    return alibi.article_slopes_agree(n_heads)


# -------------------------------------------------------------------------------------- posviz.encodings.learned


@_results
def example_table() -> np.ndarray:
    """Cached :func:`posviz.encodings.learned.example_table`."""
    return learned.example_table()


@_results
def example_provenance() -> dict:
    """Cached :func:`posviz.encodings.learned.example_provenance`."""
    return learned.example_provenance()


@_results
def torch_lookup_error(n_positions: int, position: int) -> str:
    """Cached :func:`posviz.encodings.learned.torch_lookup_error`."""
    return learned.torch_lookup_error(n_positions, position)


@_results
def lookup_error(n_positions: int, position: int) -> str:
    """Cached :func:`posviz.encodings.learned.lookup_error`."""
    return learned.lookup_error(n_positions, position)


@_results
def sinusoidal_column_frequencies(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.encodings.learned.sinusoidal_column_frequencies`."""
    return learned.sinusoidal_column_frequencies(d_model, base=base)


# ------------------------------------------------------------------------------------- posviz.encodings.relative


@_results
def t5_relative_bucket(
    relative_position, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> np.ndarray:
    """Cached :func:`posviz.encodings.relative.t5_relative_bucket`."""
    return relative.t5_relative_bucket(
        relative_position, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )


@_results
def t5_last_bucket_start(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> int:
    """Cached :func:`posviz.encodings.relative.t5_last_bucket_start`."""
    return relative.t5_last_bucket_start(
        bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )


@_results
def shaw_distinct_count(seq_lens, max_relative_position: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.relative.shaw_distinct_count`."""
    return relative.shaw_distinct_count(seq_lens, max_relative_position)


@_results
def t5_bucket_sizes(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Cached :func:`posviz.encodings.relative.t5_bucket_sizes`."""
    return relative.t5_bucket_sizes(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)


@_results
def t5_unused_buckets(*, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Cached :func:`posviz.encodings.relative.t5_unused_buckets`."""
    return relative.t5_unused_buckets(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)


@_results
def t5_synthetic_bias_table(num_buckets: int = 32, n_heads: int = 8, seed: int = 0) -> np.ndarray:
    """Cached :func:`posviz.encodings.relative.t5_synthetic_bias_table`."""
    return relative.t5_synthetic_bias_table(num_buckets, n_heads, seed)


# ----------------------------------------------------------------------------------------- posviz.encodings.rope


@_results
def rope_inv_freq(
    head_dim: int,
    *,
    base: float = 10000.0,
    scaling: dict | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> tuple[np.ndarray, float]:
    """Cached :func:`posviz.encodings.rope.rope_inv_freq`."""
    return rope.rope_inv_freq(
        head_dim,
        base=base,
        scaling=scaling,
        max_position_embeddings=max_position_embeddings,
        seq_len=seq_len,
        partial_rotary_factor=partial_rotary_factor,
    )


@_results
def interleaved_to_half(rotated_dim: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.rope.interleaved_to_half`."""
    return rope.interleaved_to_half(rotated_dim)


@_held
def rope_score_matrix(
    n_positions: int, head_dim: int, *, base: float = 10000.0, layout: str = "half", seed: int | None = None
) -> np.ndarray:
    """Cached :func:`posviz.encodings.rope.rope_score_matrix`."""
    return rope.rope_score_matrix(n_positions, head_dim, base=base, layout=layout, seed=seed)


@_held
def rope_shifted_scores(
    n_positions: int, head_dim: int, shift: int, *, base: float = 10000.0, seed: int | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Cached :func:`posviz.encodings.rope.rope_shifted_scores`."""
    return rope.rope_shifted_scores(n_positions, head_dim, shift, base=base, seed=seed)


@_results
def rope_pair_trajectory(q, positions, inv_freq, pairs, *, layout: str = "half") -> np.ndarray:
    """Cached :func:`posviz.encodings.rope.rope_pair_trajectory`."""
    return rope.rope_pair_trajectory(q, positions, inv_freq, pairs, layout=layout)


@_results
def rope_decay_profile(
    max_distance: int, head_dim: int, *, base: float = 10000.0, points: int = 1024, horizon: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.rope.rope_decay_profile`."""
    return rope.rope_decay_profile(max_distance, head_dim, base=base, points=points, horizon=horizon)


@_results
def dynamic_ntk_scale(seq_len, factor: float, max_position_embeddings: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.rope.dynamic_ntk_scale`."""
    return rope.dynamic_ntk_scale(seq_len, factor, max_position_embeddings)


@_results
def layout_pair_index(rotated_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.rope.layout_pair_index`."""
    return rope.layout_pair_index(rotated_dim)


@_held
def rope_layout_check(
    head_dim: int, n_positions: int, *, base: float = 10000.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, float]:
    """Cached :func:`posviz.encodings.rope.rope_layout_check`."""
    return rope.rope_layout_check(head_dim, n_positions, base=base, seed=seed)


@_held
def partial_rotary_table(
    n_positions: int, head_dim: int, partial_rotary_factor: float, *, base: float = 10000.0, layout: str = "half"
) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.rope.partial_rotary_table`."""
    return rope.partial_rotary_table(n_positions, head_dim, partial_rotary_factor, base=base, layout=layout)


# --------------------------------------------------------------------------------- posviz.encodings.rope_configs


@_results
def config_frequencies(config: str | dict) -> ConfigFrequencies:
    """Cached :func:`posviz.encodings.rope_configs.config_frequencies`."""
    return rope_configs.config_frequencies(config)


@_results
def compare_scalings(
    head_dim: int, base: float, factor: float, original: int, current_length: int | None = None
) -> ScalingComparison:
    """Cached :func:`posviz.encodings.rope_configs.compare_scalings`."""
    return rope_configs.compare_scalings(head_dim, base, factor, original, current_length)


# ----------------------------------------------------------------------------------- posviz.encodings.sinusoidal


@_held
def shift_matrix(d_model: int, k: float, *, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """Cached :func:`posviz.encodings.sinusoidal.shift_matrix`."""
    return sin.shift_matrix(d_model, k, base=base, layout=layout)


@_results
def layout_permutation(d_model: int) -> np.ndarray:
    """Cached :func:`posviz.encodings.sinusoidal.layout_permutation`."""
    return sin.layout_permutation(d_model)


@_results
def sinusoidal_wavelengths(d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.encodings.sinusoidal.sinusoidal_wavelengths`."""
    return sin.sinusoidal_wavelengths(d_model, base=base)


# ---------------------------------------------------------------------------------------- posviz.encodings.xlnet


@_results
def factorisation_rank(permutation) -> np.ndarray:
    """Cached :func:`posviz.encodings.xlnet.factorisation_rank`."""
    return xlnet.factorisation_rank(permutation)


@_results
def xlnet_masks(permutation) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.xlnet.xlnet_masks`."""
    return xlnet.xlnet_masks(permutation)


@_results
def prediction_targets(permutation, k: int = 6) -> np.ndarray:
    """Cached :func:`posviz.encodings.xlnet.prediction_targets`."""
    return xlnet.prediction_targets(permutation, k)


@_results
def factorisation_order(seq_len: int, seed: int = 0) -> np.ndarray:
    """Cached :func:`posviz.encodings.xlnet.factorisation_order`."""
    return xlnet.factorisation_order(seq_len, seed)


@_results
def parse_order(text: str, max_tokens: int = 32768) -> np.ndarray:
    """Cached :func:`posviz.encodings.xlnet.parse_order`."""
    return xlnet.parse_order(text, max_tokens)


@_results
def visible_tokens(permutation, token: int) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.encodings.xlnet.visible_tokens`."""
    return xlnet.visible_tokens(permutation, token)


# ------------------------------------------------------------------------------- posviz.encodings.transformer_xl

from posviz.encodings import transformer_xl as txl  # noqa: E402  (this section's own imports, kept with it)
from posviz.figures import transformer_xl as txl_figures  # noqa: E402


@_results
def transformer_xl_pos_emb(
    q_len: int, k_len: int, d_model: int, *, attn_type: str = "bi", clamp_len: int = -1, bi_data: bool = False
) -> np.ndarray:
    """Cached :func:`posviz.encodings.transformer_xl.transformer_xl_pos_emb`."""
    return txl.transformer_xl_pos_emb(q_len, k_len, d_model, attn_type=attn_type, clamp_len=clamp_len, bi_data=bi_data)


@_results
def transformer_xl_offsets(q_len: int, k_len: int, *, attn_type: str = "bi", clamp_len: int = -1) -> np.ndarray:
    """Cached :func:`posviz.encodings.transformer_xl.transformer_xl_offsets`."""
    return txl.transformer_xl_offsets(q_len, k_len, attn_type=attn_type, clamp_len=clamp_len)


@_results
def xl_demo_weights(d_model: int, d_head: int, seed: int = 0) -> txl.XLWeights:
    """Cached :func:`posviz.encodings.transformer_xl.xl_demo_weights`."""
    return txl.xl_demo_weights(d_model, d_head, seed)


@_results
def xl_token_embeddings(tokens: tuple[str, ...], d_model: int = demo.D_MODEL) -> np.ndarray:
    """Cached :func:`posviz.lessons.attention_demo.token_embeddings`: the XLNet page's hidden states, one per token
    of the memory and the segment."""
    return demo.token_embeddings(tokens, d_model)


@_results
def transformer_xl_score_terms(
    query_hidden, key_hidden, weights: txl.XLWeights, *, mem_len: int = 0, clamp_len: int = -1
) -> txl.ScoreTerms:
    """Cached :func:`posviz.encodings.transformer_xl.transformer_xl_score_terms`."""
    return txl.transformer_xl_score_terms(query_hidden, key_hidden, weights, mem_len=mem_len, clamp_len=clamp_len)


@_results
def segment_positions(mem_len: int, seg_len: int) -> txl.SegmentPositions:
    """Cached :func:`posviz.encodings.transformer_xl.segment_positions`."""
    return txl.segment_positions(mem_len, seg_len)


# This section's figures, held like every figure by ``_figure`` (defined with the figures below, so looked up when
# a page draws one; the key is the builder's name and arguments, the same on every call).


def relative_embedding_heatmap_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.transformer_xl.relative_embedding_heatmap`."""
    return _figure(txl_figures.relative_embedding_heatmap)(*args, **kwargs)


def score_terms_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.transformer_xl.score_terms_figure`."""
    return _figure(txl_figures.score_terms_figure)(*args, **kwargs)


def memory_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.transformer_xl.memory_figure`."""
    return _figure(txl_figures.memory_figure)(*args, **kwargs)


# --------------------------------------------------------------------------------- posviz.lessons.attention_demo


@_results
def shuffle_demo(
    sentence: str,
    seed: int = 0,
    *,
    positions: bool = False,
    max_tokens: int = 32,
    d_model: int = 16,
    causal: bool = False,
) -> ShuffleDemo:
    """Cached :func:`posviz.lessons.attention_demo.shuffle_demo`."""
    return demo.shuffle_demo(sentence, seed, positions=positions, max_tokens=max_tokens, d_model=d_model, causal=causal)


# ----------------------------------------------------------------------------------------- posviz.lessons.claims


@_results
def check(claim_id: str, **params) -> Evidence:
    """Cached :func:`posviz.lessons.claims.check`."""
    return claims.check(claim_id, **params)


# ---------------------------------------------------------------------------------------- posviz.lessons.compare


@_results
def offset_curve(key: str, params=None) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.compare.offset_curve`."""
    return compare.offset_curve(key, params)


@_results
def t5_last_bucket_share(seq_lens, *, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True):
    """Cached :func:`posviz.lessons.compare.t5_last_bucket_share`."""
    return compare.t5_last_bucket_share(
        seq_lens, num_buckets=num_buckets, max_distance=max_distance, bidirectional=bidirectional
    )


@_results
def shaw_clipped_share(seq_lens, max_relative_position: int) -> np.ndarray:
    """Cached :func:`posviz.lessons.compare.shaw_clipped_share`."""
    return compare.shaw_clipped_share(seq_lens, max_relative_position)


@_results
def parameter_count(
    key: str, n_positions, *, d_model: int, n_heads: int, n_layers: int = 1, num_buckets: int = 32, k: int = 16
):
    """Cached :func:`posviz.lessons.compare.parameter_count`."""
    return compare.parameter_count(
        key, n_positions, d_model=d_model, n_heads=n_heads, n_layers=n_layers, num_buckets=num_buckets, k=k
    )


@_results
def stored_floats(
    key: str, n_positions, *, d_model: int, n_heads: int, n_layers: int = 1, num_buckets: int = 32, k: int = 16
):
    """Cached :func:`posviz.lessons.compare.stored_floats`."""
    return compare.stored_floats(
        key, n_positions, d_model=d_model, n_heads=n_heads, n_layers=n_layers, num_buckets=num_buckets, k=k
    )


@_results
def beyond_training(train_len: int, eval_len: int, params: dict | None = None, *, max_points: int = 2048) -> dict:
    """Cached :func:`posviz.lessons.compare.beyond_training`."""
    return compare.beyond_training(train_len, eval_len, params, max_points=max_points)


@_results
def learned_past_end(train_len: int, eval_len: int) -> str:
    """Cached :func:`posviz.lessons.compare.learned_past_end`."""
    return compare.learned_past_end(train_len, eval_len)


# --------------------------------------------------------------------------------------- posviz.lessons.pitfalls


@_results
def mix_signature(
    d_model: int, n_tokens: int, n_positions: int, *, scaled: bool, seed: int = 0, base: float = 10000.0
) -> tuple[np.ndarray, float, float, float]:
    """Cached :func:`posviz.lessons.pitfalls.mix_signature`."""
    return pitfalls.mix_signature(d_model, n_tokens, n_positions, scaled=scaled, seed=seed, base=base)


@_results
def lost_dimensions(
    n_positions: int, d_model: int, *, combine: str = "multiply", tol: float = 0.1, base: float = 10000.0
) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.lost_dimensions`."""
    return pitfalls.lost_dimensions(n_positions, d_model, combine=combine, tol=tol, base=base)


@_results
def concat_error(n_positions: int, d_model: int) -> str:
    """Cached :func:`posviz.lessons.pitfalls.concat_error`."""
    return pitfalls.concat_error(n_positions, d_model)


@_results
def torch_add_error(shape_a: tuple[int, ...], shape_b: tuple[int, ...]) -> str:
    """Cached :func:`posviz.lessons.pitfalls.torch_add_error`."""
    return pitfalls.torch_add_error(shape_a, shape_b)


@_results
def rope_odd_error(head_dim: int, n_positions: int = 4, *, base: float = 10000.0) -> str:
    """Cached :func:`posviz.lessons.pitfalls.rope_odd_error`."""
    return pitfalls.rope_odd_error(head_dim, n_positions, base=base)


@_results
def rope_odd_reason(head_dim: int) -> str:
    """Cached :func:`posviz.lessons.pitfalls.rope_odd_reason`."""
    return pitfalls.rope_odd_reason(head_dim)


@_held
def pairing_scores(
    head_dim: int,
    n_positions: int,
    *,
    trained: str = "interleaved",
    inference: str = "half",
    base: float = 10000.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.pitfalls.pairing_scores`."""
    return pitfalls.pairing_scores(head_dim, n_positions, trained=trained, inference=inference, base=base, seed=seed)


@_results
def past_end_error(n_positions: int, position: int) -> str:
    """Cached :func:`posviz.lessons.pitfalls.past_end_error` (torch's error for a row past a table's end)."""
    return pitfalls.past_end_error(n_positions, position)


@_results
def naive_alibi_slopes(n_heads: int) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.naive_alibi_slopes`."""
    return pitfalls.naive_alibi_slopes(n_heads)


@_results
def slope_error(n_heads: int) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.slope_error`."""
    return pitfalls.slope_error(n_heads)


@_results
def merged_neighbours(n_positions: int, dtype: str = "float16") -> int:
    """Cached :func:`posviz.lessons.pitfalls.merged_neighbours`."""
    return pitfalls.merged_neighbours(n_positions, dtype)


@_results
def position_rounding(n_positions: int, max_positions: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.pitfalls.position_rounding`."""
    return pitfalls.position_rounding(n_positions, max_positions)


@_held
def pitfall_table(kind: str, n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached ``posviz.lessons.pitfalls.TABLES[kind]``: the correct sinusoidal table or one of its buggy variants."""
    return pitfalls.TABLES[kind](n_positions, d_model, base=base)


@_results
def column_motion(kind: str, n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.column_motion` of the pitfall table ``kind``."""
    return pitfalls.column_motion(pitfalls.TABLES[kind](n_positions, d_model, base=base))


@_results
def pair_radius_error(kind: str, n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.pair_radius_error` of the pitfall table ``kind``."""
    return pitfalls.pair_radius_error(pitfalls.TABLES[kind](n_positions, d_model, base=base))


@_results
def offset_dependence(kind: str, n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.offset_dependence` of the pitfall table ``kind``."""
    return pitfalls.offset_dependence(pitfalls.TABLES[kind](n_positions, d_model, base=base))


@_results
def nearest_distance(kind: str, n_positions: int, d_model: int) -> np.ndarray:
    """Cached :func:`posviz.lessons.pitfalls.nearest_distance` of the pitfall table ``kind``."""
    return pitfalls.nearest_distance(pitfalls.TABLES[kind](n_positions, d_model))


@_held
def pitfall_similarity(kind: str, n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.analysis.cosine_similarity_matrix` of the pitfall table ``kind``."""
    return analysis.cosine_similarity_matrix(pitfalls.TABLES[kind](n_positions, d_model, base=base))


# -------------------------------------------------------------------------------------- posviz.lessons.precision


@_held
def pair_errors_by_dtype(
    n_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    dtypes: tuple[str, ...] = ("float16", "bfloat16", "float32"),
    max_positions: int = 4096,
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Cached :func:`posviz.lessons.precision.pair_errors_by_dtype`."""
    return precision.pair_errors_by_dtype(n_positions, d_model, base=base, dtypes=dtypes, max_positions=max_positions)


# ------------------------------------------------------------------------------------- posviz.lessons.sinusoidal


@_results
def slow_pairs(d_model: int, n_positions: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.lessons.sinusoidal.slow_pairs`."""
    return sinlesson.slow_pairs(d_model, n_positions, base=base)


@_results
def sampled_shift_residual(
    n_positions: int,
    d_model: int,
    k: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    max_positions: int = 4096,
) -> tuple[float, int]:
    """Cached :func:`posviz.lessons.sinusoidal.sampled_shift_residual`."""
    return sinlesson.sampled_shift_residual(
        n_positions, d_model, k, base=base, layout=layout, max_positions=max_positions
    )


@_results
def sinusoidal_offset_profile(
    n_positions: int, d_model: int, *, base: float = 10000.0, layout: str = "interleaved", max_positions: int = 4096
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_offset_profile`."""
    return sinlesson.sinusoidal_offset_profile(
        n_positions, d_model, base=base, layout=layout, max_positions=max_positions
    )


@_results
def sinusoidal_lag_spread(
    n_positions: int, d_model: int, *, base: float = 10000.0, layout: str = "interleaved", max_positions: int = 1024
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_lag_spread`."""
    return sinlesson.sinusoidal_lag_spread(n_positions, d_model, base=base, layout=layout, max_positions=max_positions)


@_held
def origin_similarity(
    n_positions: int, d_model: int, bases: tuple[float, ...], *, max_points: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.sinusoidal.origin_similarity`."""
    return sinlesson.origin_similarity(n_positions, d_model, bases, max_points=max_points)


@_results
def sinusoidal_beyond_training(
    n_positions: int,
    d_model: int,
    train_len: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    margin: float = 0.01,
    max_positions: int = 4096,
    chunk: int = 1024,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_beyond_training`."""
    return sinlesson.sinusoidal_beyond_training(
        n_positions,
        d_model,
        train_len,
        base=base,
        layout=layout,
        margin=margin,
        max_positions=max_positions,
        chunk=chunk,
    )


@_results
def sinusoidal_projection(
    n_positions: int,
    d_model: int,
    method: str = "pca",
    max_positions: int = 2048,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    seed: int = 0,
):
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_projection`."""
    return sinlesson.sinusoidal_projection(
        n_positions, d_model, method, max_positions, base=base, layout=layout, seed=seed
    )


@_held
def sinusoidal_similarity(
    n_positions: int, d_model: int, max_positions: int = 1024, *, base: float = 10000.0, layout: str = "interleaved"
) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_similarity`."""
    return sinlesson.sinusoidal_similarity(n_positions, d_model, max_positions, base=base, layout=layout)


@_results
def sinusoidal_row_norms(
    n_positions: int, d_model: int, *, base: float = 10000.0, layout: str = "interleaved", max_positions: int = 4096
) -> tuple[np.ndarray, np.ndarray]:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_row_norms`."""
    return sinlesson.sinusoidal_row_norms(n_positions, d_model, base=base, layout=layout, max_positions=max_positions)


@_held
def sinusoidal_block_means(
    n_positions: int, d_model: int, *, base: float = 10000.0, layout: str = "interleaved", max_side: int = 1024
) -> np.ndarray:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_block_means`."""
    return sinlesson.sinusoidal_block_means(n_positions, d_model, base=base, layout=layout, max_side=max_side)


@_results
def sinusoidal_row_norm(n_positions: int, d_model: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_row_norm`."""
    return sinlesson.sinusoidal_row_norm(n_positions, d_model, base=base)


@_results
def sinusoidal_position_probe(n_positions: int, d_model: int, limit: int = 1024, *, folds: int = 5, seed: int = 0):
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_position_probe`."""
    return sinlesson.sinusoidal_position_probe(n_positions, d_model, limit, folds=folds, seed=seed)


@_results
def sinusoidal_spectrum(n_positions: int, d_model: int, *, max_dims: int = 512):
    """Cached :func:`posviz.lessons.sinusoidal.sinusoidal_spectrum`."""
    return sinlesson.sinusoidal_spectrum(n_positions, d_model, max_dims=max_dims)


# ----------------------------------------------------------------------- posviz.checkpoint.frequency_usage

from posviz.checkpoint import frequency_usage as usage_core  # noqa: E402  (this section's own imports, kept with it)
from posviz.figures import frequency_usage as usage_figures  # noqa: E402


def rope_frequency_usage(source, *, layers=None, config: dict | None = None) -> tuple[str, usage_core.FrequencyUsage]:
    """``(fingerprint, posviz.rope_frequency_usage(source, layers=layers, config=config))``, kept in ``TABLES`` by
    the source's content fingerprint (``posviz.checkpoint.fingerprint``), the layers and the config, like
    :func:`checkpoint`; its arrays are read-only."""
    digest = ckpt.fingerprint(source)
    key = ("frequency_usage", digest, _key(layers), _key(config))
    return digest, TABLES.get(key, lambda: usage_core.rope_frequency_usage(source, layers=layers, config=config))


def head_score_pattern(
    digest: str, _source, layer: int, distances, *, config: dict | None = None
) -> usage_core.ScorePattern:
    """Cached :func:`posviz.checkpoint.frequency_usage.head_score_pattern` of ``_source`` at its mean token
    embedding, kept in ``TABLES`` by the source's fingerprint ``digest``, the layer and the distances."""
    key = ("head_score_pattern", digest, layer, _key(distances), _key(config))
    return TABLES.get(key, lambda: usage_core.head_score_pattern(_source, layer, distances, config=config))


@_results
def p_rope_dropped(inv_freq, p: float) -> np.ndarray:
    """Cached :func:`posviz.checkpoint.frequency_usage.p_rope_dropped`."""
    return usage_core.p_rope_dropped(inv_freq, p)


@_results
def p_rope_share(usage, dropped) -> np.ndarray:
    """Cached :func:`posviz.checkpoint.frequency_usage.p_rope_share`."""
    return usage_core.p_rope_share(usage, dropped)


# This section's figures, held like every figure by ``_figure`` (defined with the figures below, so looked up when
# a page draws one; the key is the builder's name and arguments, the same on every call).


def usage_heatmap_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.frequency_usage.usage_heatmap`."""
    return _figure(usage_figures.usage_heatmap)(*args, **kwargs)


def usage_against_wavelength_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.frequency_usage.usage_against_wavelength`."""
    return _figure(usage_figures.usage_against_wavelength)(*args, **kwargs)


def p_rope_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.frequency_usage.p_rope_figure`."""
    return _figure(usage_figures.p_rope_figure)(*args, **kwargs)


def score_pattern_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.frequency_usage.score_pattern_figure`."""
    return _figure(usage_figures.score_pattern_figure)(*args, **kwargs)


# ---------------------------------------------------------------- findings (posviz.analysis, posviz.figures.findings)

from posviz.figures import findings as findings_figures  # noqa: E402  (this section's own import, kept with it)


@_analysis
def principal_components(table: AnyTable, k: int = 3) -> analysis.Components:
    """Cached :func:`posviz.analysis.principal_components`."""
    return analysis.principal_components(_array(table), k)


@_analysis
def similarity_decay(table: AnyTable) -> analysis.SimilarityDecay:
    """Cached :func:`posviz.analysis.similarity_decay`."""
    return analysis.similarity_decay(_array(table))


@_analysis
def relative_order_probe(table: AnyTable, *, pairs: int | None = None, folds: int = 5, seed: int = 0) -> float:
    """Cached :func:`posviz.analysis.relative_order_probe`."""
    return analysis.relative_order_probe(_array(table), pairs=pairs, folds=folds, seed=seed)


@_analysis
def roughness_by_position(table: AnyTable) -> analysis.Roughness:
    """Cached :func:`posviz.analysis.roughness_by_position`."""
    return analysis.roughness_by_position(_array(table))


def components_3d_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.findings.components_3d`."""
    return _figure(findings_figures.components_3d)(*args, **kwargs)


def similarity_decay_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.findings.similarity_decay_figure`."""
    return _figure(findings_figures.similarity_decay_figure)(*args, **kwargs)


def roughness_figure(*args, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.findings.roughness_figure`."""
    return _figure(findings_figures.roughness_figure)(*args, **kwargs)


# ------------------------------------------------------------------------------------------------------------ figures
#
# Held in ``TABLES`` with their dictionaries: building a plotly figure, and then its dictionary (a copy of every array
# as base64), is most of a warm rerun and of a class's server CPU (RoPE's animation of 64 frames: 0.14 s to build,
# 40 ms for its dictionary, on every rerun of every session otherwise).


class HeldFigure(go.Figure):
    """A built figure and its dictionary, computed once: ``st.plotly_chart``, the presentation mode and the handout
    read the figure through ``to_dict``, which otherwise copies every array on every rerun. Shared by every session
    that draws the same figure: draw it, never change it (``go.Figure(held)`` is a copy to change)."""

    def __init__(self, fig: go.Figure) -> None:
        spec = fig.to_dict()
        super().__init__(spec, _validate=False)
        self._spec = spec

    def to_dict(self) -> dict:
        return self._spec

    @property
    def nbytes(self) -> int:
        """Its dictionary's bytes, and twice as many again for the figure built from it (measured: at most 1.3
        times)."""
        return 3 * nbytes(self._spec)


def _array_key(array: np.ndarray) -> tuple:
    """What identifies ``array``'s values exactly: an array held by ``TABLES``, or a window of one, by its entry's
    key and the window (no pass over 1 GiB); any other array by its dtype, shape and a blake2b digest of its bytes."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    held = None if owner.flags.writeable else TABLES.key_of(owner)
    if held is not None:
        start = array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return ("held", held, start, array.shape, array.strides, array.dtype.str)
    data = np.ascontiguousarray(array)
    if data.dtype.hasobject:
        return ("objects", array.shape, _key(data.ravel().tolist()))
    return ("bytes", array.dtype.str, array.shape, hashlib.blake2b(memoryview(data).cast("B")).digest())


class _Unkeyable(TypeError):
    """An argument whose value cannot name a figure (an arbitrary object)."""


def _key(value) -> tuple:
    """``value`` as part of a figure's key, exactly: plain values with their types (``True``, ``1`` and ``1.0`` draw
    differently), arrays by :func:`_array_key`, containers and result objects (compare's ``Series``) item by item."""
    if isinstance(value, np.ndarray):
        return _array_key(value)
    if value is None or isinstance(value, (str, bool, int, float, np.generic)):
        return (type(value).__name__, value)
    if isinstance(value, range):
        return ("range", value.start, value.stop, value.step)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *(_key(item) for item in value))
    if isinstance(value, dict):
        return ("dict", *((_key(k), _key(v)) for k, v in value.items()))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (_key(getattr(value, field.name)) for field in dataclasses.fields(value))
        return (type(value).__module__, type(value).__qualname__, *fields)
    raise _Unkeyable(type(value).__name__)


def _figure(build):
    """``build`` (a builder of ``posviz.figures``) with its figures held in ``TABLES`` as ``HeldFigure``, keyed by
    its name and the exact values of its arguments; with an argument that has no such key, built afresh."""

    @functools.wraps(build)
    def held(*args, **kwargs):
        try:
            key = ("figure", build.__module__, build.__qualname__, _key(args), _key(kwargs))
        except _Unkeyable:
            return build(*args, **kwargs)
        return TABLES.get(key, lambda: HeldFigure(build(*args, **kwargs)))

    return held


@_figure
def heatmap_figure(
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
) -> go.Figure:
    """Cached :func:`posviz.figures.heatmap`; a large table held by ``TABLES`` is drawn from its ``preview``."""
    return figures.heatmap(
        matrix,
        title=title,
        x_title=x_title,
        y_title=y_title,
        colorscale=colorscale,
        zmid=zmid,
        zmin=zmin,
        zmax=zmax,
        x0=x0,
        y0=y0,
        dx=dx,
        dy=dy,
        downsampled_note=downsampled_note,
        colorbar_title=colorbar_title,
        height=height,
        reduced=preview(matrix),
    )


@_figure
def block_means_figure(means: np.ndarray, shape: tuple[int, int], **heatmap_kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.heatmap` of a ``shape`` table that is never built, from its block means."""
    return figures.heatmap(np.broadcast_to(np.nan, tuple(shape)), reduced=means, **heatmap_kwargs)


# Each builder of ``posviz.figures`` that a page draws unchanged, cached with its own signature and docstring.
bars_figure = _figure(figures.bars)
lines_figure = _figure(figures.lines)
slopes_by_origin_figure = _figure(alibi_figures.slopes_by_origin)
lines_with_marker_figure = _figure(alibi_figures.lines_with_marker)
panels_figure = _figure(compare_figures.panels)
attention_pair_figure = _figure(home_figures.attention_pair)
token_bars_figure = _figure(home_figures.token_bars)
versus_figure = _figure(pitfall_figures.versus)
bucket_curve_figure = _figure(relative_figures.bucket_curve)
rotation_animation_figure = _figure(rope_figures.rotation_animation)
heatmap_pair_figure = _figure(rope_figures.heatmap_pair)
decay_bounds_figure = _figure(rope_figures.decay_bounds)
index_map_figure = _figure(rope_figures.index_map)
rope_wavelengths_figure = _figure(rope_figures.wavelengths)
class_map_figure = _figure(rope_figures.class_map)
scale_growth_figure = _figure(rope_figures.scale_growth)
dual_lines_figure = _figure(sinusoidal_figures.dual_lines)
log_lines_figure = _figure(sinusoidal_figures.log_lines)
sinusoidal_wavelengths_figure = _figure(sinusoidal_figures.wavelengths)
lines_shaded_from_figure = _figure(sinusoidal_figures.lines_shaded_from)
mask_heatmap_figure = _figure(xlnet_figures.mask_heatmap)
rank_bars_figure = _figure(xlnet_figures.rank_bars)


# ------------------------------------------------ the Models page

from posviz import models as _models  # noqa: E402  (this section's own imports, kept with it)
from posviz.figures import models as _model_figures  # noqa: E402
from posviz.models import views as _model_views  # noqa: E402


@_results
def _model_positions_of_text(text: str) -> _models.ModelPositions:
    return _models.model_positions(text)


def model_positions(config: str) -> _models.ModelPositions:
    """:func:`posviz.models.model_positions` of a config.json's text (cached by that text), or of a path to one or to
    a model folder (read anew on every call: the file may change, and reading it takes a millisecond)."""
    if config.lstrip().startswith("{"):
        return _model_positions_of_text(config)
    return _models.model_positions(config)


@_results
def model_preset_text(name: str) -> str:
    """Cached :func:`posviz.models.preset_text`."""
    return _models.preset_text(name)


@_results
def plain_inv_freq(layer: _models.LayerPositions) -> np.ndarray:
    """Cached :func:`posviz.models.views.plain_inv_freq`."""
    return _model_views.plain_inv_freq(layer)


@_results
def turn_share(inv_freq, length: int) -> np.ndarray:
    """Cached :func:`posviz.models.views.turn_share`."""
    return _model_views.turn_share(inv_freq, length)


@_results
def mrope_position_ids(segments, *, spatial_merge_size: int = 2) -> np.ndarray:
    """Cached :func:`posviz.models.mrope_position_ids`."""
    return _models.mrope_position_ids(segments, spatial_merge_size=spatial_merge_size)


@_results
def mrope_axes(head_dim: int, mrope_section, *, interleaved: bool = False) -> np.ndarray:
    """Cached :func:`posviz.models.mrope_axes`."""
    return _models.mrope_axes(head_dim, mrope_section, interleaved=interleaved)


@_results
def mrope_axis_score(inv_freq, axes, axis: int, distances) -> np.ndarray:
    """Cached :func:`posviz.models.views.mrope_axis_score`."""
    return _model_views.mrope_axis_score(inv_freq, axes, axis, distances)


@_held
def rope_2d_angles(n_rows: int, n_cols: int, head_dim: int, *, base: float = 10000.0) -> np.ndarray:
    """Cached :func:`posviz.models.rope_2d_angles`."""
    return _models.rope_2d_angles(n_rows, n_cols, head_dim, base=base)


@_held
def rope_mixed_angles(
    n_rows: int, n_cols: int, head_dim: int, *, base: float = 10000.0, n_directions: int = 8
) -> np.ndarray:
    """Cached :func:`posviz.models.views.rope_mixed_angles`."""
    return _model_views.rope_mixed_angles(n_rows, n_cols, head_dim, base=base, n_directions=n_directions)


@_results
def rope_2d_similarity(variant: str, n_rows: int, n_cols: int, head_dim: int, patch: int, *, base: float) -> np.ndarray:
    """Cached :func:`posviz.models.views.rope_2d_similarity` of the angles of ``variant``: "axial"
    (:func:`posviz.models.rope_2d_angles`) or "mixed" (:func:`posviz.models.views.rope_mixed_angles`) on that grid."""
    angles = {"axial": rope_2d_angles, "mixed": rope_mixed_angles}[variant](n_rows, n_cols, head_dim, base=base)
    return _model_views.rope_2d_similarity(angles, patch)


layer_map_figure = _figure(_model_figures.layer_map)
position_grid_figure = _figure(_model_figures.position_grid)
axis_strips_figure = _figure(_model_figures.axis_strips)
model_wavelengths_figure = _figure(_model_figures.wavelengths)
