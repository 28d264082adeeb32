"""Cached core calls and figures for the pages: one thin wrapper per function, with that function's parameters.

Pages call ``cache.rope_inv_freq(head_dim, base=base)`` where a notebook calls ``rope.rope_inv_freq``: most entries
are the core function itself under a cache (``rope_inv_freq = _results(rope.rope_inv_freq)``, same signature and
docstring); a wrapper written out does something more (names a table, converts an argument) and says so. Two caches,
both shared by every session of the server:

- ``st.cache_data`` for small results (at most ``RESULT_ENTRIES`` per function). Streamlit keys an entry by the
  function's code and the values of its arguments (``10`` and ``10.0`` are different keys), keeps it pickled and
  returns a fresh copy on every hit, so a page can never change a cached result.
- ``TABLES``, one store for what must not be copied on every rerun: a family's table (1 GiB at the largest sizes), a
  loaded checkpoint, results that can reach a million numbers (``_held``) and built figures with their dictionaries
  (``_figure``, ``HeldFigure``). ``st.cache_resource`` would keep them without copying, but it bounds a cache by a
  count of entries; ``TABLES`` bounds them by the bytes they hold (``POSVIZ_CACHE_MB``, every byte counted by
  :func:`nbytes`) and drops the least recently used: the one byte-bounded store of ``posviz.base.store``, which the
  training lab's queue uses for its loaded runs too. Its arrays are read-only; its figures are shared: draw them,
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
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import plotly.graph_objects as go
import streamlit as st

import posviz
from posviz import analysis, figures
from posviz import checkpoint as ckpt
from posviz.analysis import PositionSpectrum, TableReading
from posviz.base.store import ByteStore, nbytes
from posviz.encodings import alibi, learned, relative, rope, xlnet
from posviz.encodings import sinusoidal as sin
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
from posviz.lessons.claims import Evidence
from posviz.models import rope_configs

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
    parts: Iterable[tuple[Any, Any]]
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
    """The pages' store of large read-only results (a :class:`posviz.base.store.ByteStore` of ``budget`` bytes,
    every byte counted by :func:`nbytes`): each result is made read-only (:func:`_frozen`) before it is kept, and
    :meth:`key_of` finds where a held array stands. A result larger than the whole budget is returned but not
    kept. Computations run outside the lock, so two sessions asking for the same new key may both compute it; the
    first stored wins."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._store = ByteStore(budget)

    def get(self, key: tuple, compute: Callable[[], Any]):
        return self._store.get_or_compute(key, lambda: _frozen(compute()))

    def key_of(self, value) -> tuple | None:
        """Where ``value`` itself (not an equal copy) is held: its entry's key, followed by where it stands inside
        the entry (an index of a tuple, a key of a dict, a field of a result object); None when it is not held."""
        for key, held in self._store.items():
            where = _find(held, value)
            if where is not None:
                return (*cast(tuple, key), *where)  # every key of this store is a tuple (``get``)
        return None

    def keys(self) -> list[tuple]:
        return self._store.keys()

    def clear(self) -> None:
        self._store.clear()

    def __len__(self) -> int:
        return len(self._store)

    @property
    def nbytes(self) -> int:
        return self._store.nbytes


TABLES = TableStore(budget_bytes())


def _typed_value(value) -> tuple:
    """``value`` as part of a key, with its type, in tuples, lists and dicts too (``10`` and ``10.0`` are equal keys
    otherwise; a dict's items sorted by key)."""
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, *(_typed_value(item) for item in value))
    if isinstance(value, dict):
        return ("dict", *((name, _typed_value(item)) for name, item in sorted(value.items())))
    return (type(value).__name__, value)


def _untyped(typed: tuple | list):
    """The value ``_typed_value`` made ``typed`` from."""
    kind, *rest = typed
    if kind in ("tuple", "list"):
        return {"tuple": tuple, "list": list}[kind](_untyped(item) for item in rest)
    if kind == "dict":
        return {name: _untyped(item) for name, item in rest}
    return rest[0]


def settings_key(params: Mapping[str, object] | Iterable[tuple[str, object]]) -> tuple:
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
        key = (func.__module__, func.__qualname__, settings_key(bound.arguments))
        return TABLES.get(key, lambda: func(*args, **kwargs))

    return held


def family_table(family: str, params: Mapping[str, object] | Iterable[tuple[str, object]]) -> np.ndarray:
    """``posviz.family(family).build(**params)``, kept in ``TABLES`` (read-only, never copied)."""
    kwargs = dict(params)
    return TABLES.get(
        ("family", family, settings_key(kwargs)), lambda: np.asarray(posviz.family(family).build(**kwargs))
    )


def family_preview(family: str, params: Mapping[str, object] | Iterable[tuple[str, object]]) -> np.ndarray | None:
    """The block means (``figures.block_mean``) of the table of ``family`` at ``params``, kept in ``TABLES`` beside
    it so that a new figure of it does not average 1 GiB again; None when the table is drawn cell for cell."""
    kwargs = dict(params)
    table = family_table(family, kwargs)
    if table.size <= figures.EXACT_MAX_CELLS or max(table.shape) <= figures.MAX_SIDE:
        return None
    return TABLES.get(("preview", "family", family, settings_key(kwargs)), lambda: figures.block_mean(table))


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
        return cls(f"family {family} {settings_key(kwargs)}", lambda: family_table(family, kwargs))

    @classmethod
    def content(cls, matrix, digest: str | None = None) -> Table:
        """``matrix`` keyed by ``digest`` (default: ``analysis.table_digest(matrix)``, a sha256 of its bytes)."""
        return cls(f"sha256 {digest or analysis.table_digest(matrix)}", lambda: matrix)

    @property
    def matrix(self) -> np.ndarray:
        return self.load()


AnyTable = Table | learned.RandomTable
_BY_KEY: dict[str | type, Callable[[Any], Any]] = {Table: lambda table: table.key}


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
    """Cached :func:`posviz.analysis.read_table`, its probe the cached :func:`sampled_position_probe` (the entry the
    inspector's probe view draws), so a table is probed once."""
    array = _array(table)
    if array.ndim != 2 or array.shape[0] < analysis.PROBE_MIN_POSITIONS:
        return analysis.read_table(array, limit)  # the tiny table's verdict, or the sentence for what is not a table
    return analysis.table_reading(array.shape[0], sampled_position_probe(table, limit))


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


constant_guess_error = _results(analysis.constant_guess_error)


# ---------------------------------------------------------------------------------------- posviz.encodings.alibi


alibi_slopes = _results(alibi.alibi_slopes)
alibi_slope_origin = _results(alibi.alibi_slope_origin)
alibi_slope_ladder = _results(alibi.alibi_slope_ladder)
article_slopes = _results(alibi.article_slopes)
alibi_attention_row = _results(alibi.alibi_attention_row)
alibi_span = _results(alibi.alibi_span)
alibi_distance_bias = _held(alibi.alibi_distance_bias)
alibi_mass_beyond = _results(alibi.alibi_mass_beyond)
article_slopes_agree = _results(alibi.article_slopes_agree)


# -------------------------------------------------------------------------------------- posviz.encodings.learned


example_table = _results(learned.example_table)
example_provenance = _results(learned.example_provenance)
torch_lookup_error = _results(learned.torch_lookup_error)
lookup_error = _results(learned.lookup_error)
sinusoidal_column_frequencies = _results(learned.sinusoidal_column_frequencies)


# ------------------------------------------------------------------------------------- posviz.encodings.relative


t5_relative_bucket = _results(relative.t5_relative_bucket)
t5_last_bucket_start = _results(relative.t5_last_bucket_start)
shaw_distinct_count = _results(relative.shaw_distinct_count)
t5_bucket_sizes = _results(relative.t5_bucket_sizes)
t5_unused_buckets = _results(relative.t5_unused_buckets)
t5_synthetic_bias_table = _results(relative.t5_synthetic_bias_table)


# ----------------------------------------------------------------------------------------- posviz.encodings.rope


rope_inv_freq = _results(rope.rope_inv_freq)
interleaved_to_half = _results(rope.interleaved_to_half)
rope_pair_trajectory = _results(rope.rope_pair_trajectory)
rope_decay_profile = _results(rope.rope_decay_profile)
dynamic_ntk_scale = _results(rope.dynamic_ntk_scale)
layout_pair_index = _results(rope.layout_pair_index)
rope_layout_check = _held(rope.rope_layout_check)
partial_rotary_table = _held(rope.partial_rotary_table)


# --------------------------------------------------------------------------------- posviz.models.rope_configs


config_frequencies = _results(rope_configs.config_frequencies)
compare_scalings = _results(rope_configs.compare_scalings)


# ----------------------------------------------------------------------------------- posviz.encodings.sinusoidal


shift_matrix = _held(sin.shift_matrix)
layout_permutation = _results(sin.layout_permutation)
sinusoidal_wavelengths = _results(sin.sinusoidal_wavelengths)


# ---------------------------------------------------------------------------------------- posviz.encodings.xlnet


factorisation_rank = _results(xlnet.factorisation_rank)
xlnet_masks = _results(xlnet.xlnet_masks)
prediction_targets = _results(xlnet.prediction_targets)
factorisation_order = _results(xlnet.factorisation_order)
parse_order = _results(xlnet.parse_order)
visible_tokens = _results(xlnet.visible_tokens)


# ------------------------------------------------------------------------------- posviz.encodings.transformer_xl

from posviz.encodings import transformer_xl as txl  # noqa: E402  (this section's own imports, kept with it)
from posviz.figures import transformer_xl as txl_figures  # noqa: E402

transformer_xl_pos_emb = _results(txl.transformer_xl_pos_emb)
transformer_xl_offsets = _results(txl.transformer_xl_offsets)
xl_demo_weights = _results(txl.xl_demo_weights)
xl_token_embeddings = _results(demo.token_embeddings)
transformer_xl_score_terms = _results(txl.transformer_xl_score_terms)
segment_positions = _results(txl.segment_positions)


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


shuffle_demo = _results(demo.shuffle_demo)


# ----------------------------------------------------------------------------------------- posviz.lessons.claims


@_results
def check(claim_id: str, **params) -> Evidence:
    """Cached :func:`posviz.lessons.claims.check`."""
    return claims.check(claim_id, **params)


# ---------------------------------------------------------------------------------------- posviz.lessons.compare


offset_curve = _results(compare.offset_curve)
t5_last_bucket_share = _results(compare.t5_last_bucket_share)
shaw_clipped_share = _results(compare.shaw_clipped_share)
parameter_count = _results(compare.parameter_count)
stored_floats = _results(compare.stored_floats)
beyond_training = _results(compare.beyond_training)
learned_past_end = _results(compare.learned_past_end)


# --------------------------------------------------------------------------------------- posviz.lessons.pitfalls


mix_signature = _results(pitfalls.mix_signature)
lost_dimensions = _results(pitfalls.lost_dimensions)
concat_error = _results(pitfalls.concat_error)
torch_add_error = _results(pitfalls.torch_add_error)
rope_odd_error = _results(pitfalls.rope_odd_error)
rope_odd_reason = _results(pitfalls.rope_odd_reason)
pairing_scores = _held(pitfalls.pairing_scores)
past_end_error = _results(pitfalls.past_end_error)
naive_alibi_slopes = _results(pitfalls.naive_alibi_slopes)
slope_error = _results(pitfalls.slope_error)
merged_neighbours = _results(pitfalls.merged_neighbours)
position_rounding = _results(pitfalls.position_rounding)


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


pair_errors_by_dtype = _held(precision.pair_errors_by_dtype)


# ------------------------------------------------------------------------------------- posviz.lessons.sinusoidal


slow_pairs = _results(sinlesson.slow_pairs)
sampled_shift_residual = _results(sinlesson.sampled_shift_residual)
sinusoidal_offset_profile = _results(sinlesson.sinusoidal_offset_profile)
sinusoidal_lag_spread = _results(sinlesson.sinusoidal_lag_spread)
origin_similarity = _held(sinlesson.origin_similarity)
sinusoidal_beyond_training = _results(sinlesson.sinusoidal_beyond_training)
sinusoidal_projection = _results(sinlesson.sinusoidal_projection)
sinusoidal_similarity = _held(sinlesson.sinusoidal_similarity)
sinusoidal_row_norms = _results(sinlesson.sinusoidal_row_norms)
sinusoidal_block_means = _held(sinlesson.sinusoidal_block_means)
sinusoidal_row_norm = _results(sinlesson.sinusoidal_row_norm)
sinusoidal_position_probe = _results(sinlesson.sinusoidal_position_probe)
sinusoidal_spectrum = _results(sinlesson.sinusoidal_spectrum)


# ----------------------------------------------------------------------- posviz.lessons.frequency_usage

from posviz.figures import frequency_usage as usage_figures  # noqa: E402
from posviz.lessons import frequency_usage as usage_core  # noqa: E402  (this section's own imports, kept with it)


def rope_frequency_usage(
    source, *, layers=None, group: int | None = None, config: dict | None = None
) -> tuple[str, usage_core.FrequencyUsage]:
    """``(fingerprint, posviz.rope_frequency_usage(source, layers=layers, group=group, config=config))``, kept in
    ``TABLES`` by the source's content fingerprint (``posviz.checkpoint.fingerprint``), the layers, the rotary group
    and the config, like :func:`checkpoint`; its arrays are read-only."""
    digest = ckpt.fingerprint(source)
    key = ("frequency_usage", digest, _key(layers), group, _key(config))
    return digest, TABLES.get(
        key, lambda: usage_core.rope_frequency_usage(source, layers=layers, group=group, config=config)
    )


def head_score_pattern(
    digest: str, _source, layer: int, distances, *, config: dict | None = None
) -> usage_core.ScorePattern:
    """Cached :func:`posviz.lessons.frequency_usage.head_score_pattern` of ``_source`` at its mean token
    embedding, kept in ``TABLES`` by the source's fingerprint ``digest``, the layer and the distances."""
    key = ("head_score_pattern", digest, layer, _key(distances), _key(config))
    return TABLES.get(key, lambda: usage_core.head_score_pattern(_source, layer, distances, config=config))


p_rope_dropped = _results(usage_core.p_rope_dropped)
p_rope_share = _results(usage_core.p_rope_share)


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
    return ("bytes", array.dtype.str, array.shape, hashlib.blake2b(data.data.cast("B")).digest())


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
@functools.wraps(figures.heatmap, assigned=())  # its signature (inspect follows ``__wrapped__``), not its name
def heatmap_figure(matrix, **kwargs) -> go.Figure:
    """Cached :func:`posviz.figures.heatmap`, with its parameters; unless ``reduced`` is given, a large table held
    by ``TABLES`` is drawn from its ``preview`` (the block means kept beside it)."""
    if "reduced" not in kwargs:
        kwargs["reduced"] = preview(matrix)
    return figures.heatmap(matrix, **kwargs)


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


model_preset_text = _results(_models.preset_text)
plain_inv_freq = _results(_model_views.plain_inv_freq)
turn_share = _results(_model_views.turn_share)
mrope_position_ids = _results(_models.mrope_position_ids)
mrope_axes = _results(_models.mrope_axes)
mrope_axis_score = _results(_model_views.mrope_axis_score)
rope_2d_angles = _held(_models.rope_2d_angles)
rope_mixed_angles = _held(_model_views.rope_mixed_angles)


@_results
def rope_2d_similarity(
    variant: str, n_rows: int, n_cols: int, head_dim: int, patch: int, *, base: float, n_directions: int = 8
) -> np.ndarray:
    """Cached :func:`posviz.models.views.rope_2d_similarity` of the angles of ``variant``: "axial"
    (:func:`posviz.models.rope_2d_angles`) or "mixed" (:func:`posviz.models.views.rope_mixed_angles`, with
    ``n_directions`` directions) on that grid."""
    if variant == "mixed":
        angles = rope_mixed_angles(n_rows, n_cols, head_dim, base=base, n_directions=n_directions)
    else:
        angles = rope_2d_angles(n_rows, n_cols, head_dim, base=base)
    return _model_views.rope_2d_similarity(angles, patch)


layer_map_figure = _figure(_model_figures.layer_map)
position_grid_figure = _figure(_model_figures.position_grid)
axis_strips_figure = _figure(_model_figures.axis_strips)
model_wavelengths_figure = _figure(_model_figures.wavelengths)
