"""Cached core calls for the pages, keyed by parameters only (never by a large array).

One process-wide cache, shared by every session like ``st.cache_resource`` but bounded by memory rather than by a
count of entries: tables reach 1 GiB at the largest sizes, so the least recently used results are dropped once
the cached arrays exceed ``BUDGET_BYTES``. Results are returned without copying and made read-only, so a page
cannot change a cached array by accident.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import threading
import weakref
from collections import OrderedDict

import numpy as np
import plotly.graph_objects as go

import posviz

#: Memory the cached arrays may hold together: ``POSVIZ_CACHE_MB`` megabytes (default 1,024). A server's memory is
#: about 0.5 GB for Python and its libraries, this budget, and the figures kept for reruns (``FIGURES`` of them).
CACHE_MB_DEFAULT = 1024


def budget_bytes(environ=os.environ) -> int:
    """The cache budget in bytes from ``POSVIZ_CACHE_MB`` (a whole number of megabytes, at least 64), else the
    default. A value that is not one is refused with a sentence, before the server takes its first student."""
    raw = environ.get("POSVIZ_CACHE_MB", "").strip()
    if not raw:
        return CACHE_MB_DEFAULT << 20
    if not raw.isdigit() or int(raw) < 64:
        raise ValueError(
            f"POSVIZ_CACHE_MB is the cache budget in megabytes, a whole number of at least 64; got {raw!r}"
        )
    return int(raw) << 20


BUDGET_BYTES = budget_bytes()


def _frozen(array: np.ndarray) -> np.ndarray:
    if array.base is not None:  # a view would keep its whole parent array alive in the cache
        array = array.copy()
    array.flags.writeable = False
    return array


def _freeze_result(result):
    """``result`` with every array in it read-only: arrays (copied if they are views), tuples and dicts of them,
    and the array fields of a core result object (frozen in place)."""
    if isinstance(result, np.ndarray):
        return _frozen(result)
    if isinstance(result, tuple):
        return tuple(_freeze_result(r) for r in result)
    if isinstance(result, dict):
        return {key: _freeze_result(value) for key, value in result.items()}
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        for name in (f.name for f in dataclasses.fields(result)):
            value = getattr(result, name)
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            elif isinstance(value, dict):  # e.g. a claim's arrays: frozen where they are, so figures can key on them
                for key, item in value.items():
                    if isinstance(item, np.ndarray):
                        value[key] = _frozen(item)
    return result


def _nbytes(result) -> int:
    if isinstance(result, np.ndarray):
        return result.nbytes
    if isinstance(result, (tuple, list)):
        return sum(_nbytes(r) for r in result)
    if isinstance(result, dict):
        return sum(_nbytes(r) for r in result.values())
    matrix = getattr(result, "matrix", None)  # a loaded checkpoint table
    return matrix.nbytes if isinstance(matrix, np.ndarray) else getattr(result, "nbytes", 0)


class _BudgetCache:
    """A least-recently-used map from hashable keys to results, holding at most ``budget`` bytes of arrays.

    A result larger than the whole budget is returned but not kept. Computations run outside the lock, so two
    sessions asking for the same new key may both compute it; the first stored wins.
    """

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: OrderedDict = OrderedDict()
        self._sizes: dict = {}
        self._lock = threading.Lock()

    def get(self, key, compute):
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        result = _freeze_result(compute())
        size = _nbytes(result)
        with self._lock:
            if key in self._entries:
                return self._entries[key]
            if size <= self.budget:
                self._entries[key], self._sizes[key] = result, size
                while sum(self._sizes.values()) > self.budget:
                    oldest, _ = self._entries.popitem(last=False)
                    del self._sizes[oldest]
        return result

    def peek(self, key):
        """The result stored under ``key``, or None; computes nothing."""
        with self._lock:
            return self._entries.get(key)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()

    @property
    def nbytes(self) -> int:
        return sum(self._sizes.values())


STORE = _BudgetCache(BUDGET_BYTES)


def _resolve(module: str, name: str):
    """The function ``name`` (a qualified name, so a method like ``RandomTable.rows`` too) of ``module``."""
    return functools.reduce(getattr, name.split("."), importlib.import_module(module))


def family_matrix(key: str, params: tuple[tuple[str, object], ...]) -> np.ndarray:
    """``posviz.family(key).build(**params)``, params given as a sorted tuple of (name, value) pairs."""
    return STORE.get(("family", key, params), lambda: np.asarray(posviz.family(key).build(**dict(params))))


def similarity(key: str, params: tuple[tuple[str, object], ...], max_positions: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarity of the family's table on at most ``max_positions`` evenly spaced positions.

    Returns ``(positions, matrix)``; positions are all of them when the table is small enough.
    """

    def compute():
        table = family_matrix(key, params)
        positions = posviz.evenly_spaced(table.shape[0], max_positions)
        return positions, posviz.cosine_similarity_matrix(table[positions])

    return STORE.get(("similarity", key, params, max_positions), compute)


def analyse(func, key: str, params: tuple[tuple[str, object], ...], *args, **kwargs):
    """``func(family_matrix(key, params), *args, **kwargs)``, cached by the function's name, the family and its
    parameters (never by the array), e.g. ``analyse(posviz.project, "sinusoidal", params, method="tsne")``."""
    kw = tuple(sorted(kwargs.items()))
    target = (func.__module__, func.__qualname__)
    return STORE.get(
        ("analyse", target, key, params, args, kw),
        lambda: _resolve(*target)(family_matrix(key, params), *args, **dict(kw)),
    )


def on_table(func, digest: str, table, *args, **kwargs):
    """``func(table, *args, **kwargs)`` for a table that has no parameters (trained, loaded), cached by its
    content ``digest`` (``posviz.analysis.table_digest``), so a changed upload never shows a stale result."""
    kw = tuple(sorted(kwargs.items()))
    target = (func.__module__, func.__qualname__)
    return STORE.get(("table", target, digest, args, kw), lambda: _resolve(*target)(table, *args, **dict(kw)))


def checkpoint(source, key: str | None = None, *, name: str | None = None):
    """``(fingerprint, PositionTable)`` of ``posviz.load_position_embeddings(source, key)``, cached by the source's
    content fingerprint (``posviz.checkpoint.fingerprint``) and the key; the matrix is made read-only."""
    from posviz import checkpoint as ckpt

    digest = ckpt.fingerprint(source)

    def load():
        loaded = ckpt.load_position_embeddings(source, key, name=name)
        loaded.matrix.flags.writeable = False
        return loaded

    return digest, STORE.get(("checkpoint", digest, key), load)


def candidates(source, digest: str, *, name: str | None = None) -> list:
    """``posviz.list_position_candidates(source)``, cached by the source's fingerprint ``digest``."""
    from posviz import checkpoint as ckpt

    return STORE.get(("candidates", digest), lambda: ckpt.list_position_candidates(source, name=name))


def call(func, *args, **kwargs):
    """A cached call of a core function (or method, called on its object) by hashable arguments: scalars, tuples
    and frozen values such as ``learned.RandomTable``, compared by value."""
    kw = tuple(sorted(kwargs.items()))
    target = (func.__module__, func.__qualname__)
    return STORE.get(("call", target, args, kw), lambda: _resolve(*target)(*args, **dict(kw)))


#: Built figures kept across reruns, least recently used dropped first.
FIGURES = 128


class SharedFigure(go.Figure):
    """A figure kept by :func:`figure` for every rerun and session: its dictionary, which ``st.plotly_chart``
    serialises on every rerun, is computed once (a deep copy of every array each time otherwise)."""

    def to_dict(self) -> dict:
        cached = self.__dict__.get("_shared_dict")
        if cached is None:
            cached = self.__dict__["_shared_dict"] = super().to_dict()
        return cached


class _Unkeyable(Exception):
    """An argument that cannot identify a figure (a writeable array, an arbitrary object)."""


def _identity(value, arrays: list):
    """A hashable stand-in for ``value``: plain values as themselves, read-only arrays (cached results, which never
    change) by identity — a read-only view by its read-only owner's identity and the window it shows — with the
    owners recorded in ``arrays`` so that a reused ``id`` is never mistaken for the same array."""
    if isinstance(value, np.ndarray):
        owner = value if value.base is None else value.base  # numpy points a view of a view at the owner
        if value.flags.writeable or not isinstance(owner, np.ndarray) or owner.flags.writeable:
            raise _Unkeyable
        arrays.append(owner)  # a view (a row of a cached matrix, say) is its owner and where it looks into it
        start = value.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return ("array", id(owner), start, value.shape, value.strides, value.dtype.str)
    if value is None or isinstance(value, (str, bool, int, float, np.generic)):
        return type(value).__name__, value  # True, 1 and 1.0 are equal keys, not equal figures
    if isinstance(value, range):
        return ("range", value.start, value.stop, value.step)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, *(_identity(v, arrays) for v in value))
    if isinstance(value, dict):
        return ("dict", *((k, _identity(v, arrays)) for k, v in value.items()))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (_identity(getattr(value, f.name), arrays) for f in dataclasses.fields(value))
        return (type(value).__module__, type(value).__qualname__, *fields)
    raise _Unkeyable


class _FigureCache:
    """The last ``size`` figures built, keyed by their builder and arguments (``_identity``), each holding weak
    references to the arrays it was built from: once one of them is gone the entry is stale."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, build, args: tuple, kwargs: dict):
        arrays: list = []
        try:
            key = ((build.__module__, build.__qualname__), _identity(args, arrays), _identity(kwargs, arrays))
        except _Unkeyable:
            return build(*args, **kwargs)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and all(ref() is a for ref, a in zip(hit[0], arrays, strict=True)):
                self._entries.move_to_end(key)
                return hit[1]
        fig = build(*args, **kwargs)
        fig.__class__ = SharedFigure  # the same figure, now read through a dictionary computed once
        with self._lock:
            for stale in [k for k, (refs, _) in self._entries.items() if any(ref() is None for ref in refs)]:
                del self._entries[stale]  # built from an array that is gone: can never be asked for again
            self._entries[key] = ([weakref.ref(a) for a in arrays], fig)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return fig

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


FIGURE_STORE = _FigureCache(FIGURES)


def figure(build, *args, **kwargs):
    """``build(*args, **kwargs)`` — a figure builder of ``posviz.figures`` — built once for the same arguments and
    reused by later reruns and sessions. Arguments are compared by value, arrays by identity, and only read-only
    arrays (results of this module, which never change) qualify; with any other argument the figure is built
    afresh. The figure returned is shared: draw it, never change it."""
    return FIGURE_STORE.get(build, args, kwargs)
