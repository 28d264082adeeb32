"""Cached core calls for the pages, keyed by parameters only (never by a large array).

Results are kept with ``st.cache_resource`` (no copy on every rerun, which matters for large tables) and made
read-only, so a page cannot change a cached array by accident.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import posviz


def _frozen(array: np.ndarray) -> np.ndarray:
    if array.base is not None:  # a view would keep its whole parent array alive in the cache
        array = array.copy()
    array.flags.writeable = False
    return array


@st.cache_resource(max_entries=48, show_spinner=False)
def family_matrix(key: str, params: tuple[tuple[str, object], ...]) -> np.ndarray:
    """``posviz.family(key).build(**params)``, params given as a sorted tuple of (name, value) pairs."""
    return _frozen(np.asarray(posviz.family(key).build(**dict(params))))


@st.cache_resource(max_entries=48, show_spinner=False)
def similarity(key: str, params: tuple[tuple[str, object], ...], max_positions: int) -> tuple[np.ndarray, np.ndarray]:
    """Cosine similarity of the family's table on at most ``max_positions`` evenly spaced positions.

    Returns ``(positions, matrix)``; positions are all of them when the table is small enough.
    """
    table = family_matrix(key, params)
    positions = posviz.analysis.evenly_spaced(table.shape[0], max_positions)
    return _frozen(positions), _frozen(posviz.cosine_similarity_matrix(table[positions]))


def analyse(func, key: str, params: tuple[tuple[str, object], ...], *args, **kwargs):
    """``func(family_matrix(key, params), *args, **kwargs)``, cached by the function's name, the family and its
    parameters (never by the array), e.g. ``analyse(posviz.project, "sinusoidal", params, method="tsne")``."""
    return _analyse(func.__module__, func.__name__, key, params, args, tuple(sorted(kwargs.items())))


@st.cache_resource(max_entries=64, show_spinner=False)
def _analyse(module: str, name: str, key: str, params: tuple, args: tuple, kwargs: tuple):
    import importlib

    result = getattr(importlib.import_module(module), name)(family_matrix(key, params), *args, **dict(kwargs))
    return _freeze_result(result)


def call(func, *args, **kwargs):
    """A cached call of a core function by name-able arguments (scalars and tuples only)."""
    return _call(func.__module__, func.__name__, args, tuple(sorted(kwargs.items())))


@st.cache_resource(max_entries=64, show_spinner=False)
def _call(module: str, name: str, args: tuple, kwargs: tuple):
    import importlib

    return _freeze_result(getattr(importlib.import_module(module), name)(*args, **dict(kwargs)))


def _freeze_result(result):
    if isinstance(result, np.ndarray):
        return _frozen(result)
    if isinstance(result, tuple):
        return tuple(_frozen(r) if isinstance(r, np.ndarray) else r for r in result)
    return result
