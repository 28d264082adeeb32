"""The pages' one store, keyed by parameters: ``TABLES``, bounded by the bytes it holds, shared by every session.

What it keeps, each under a key made of names and values with their types (``settings_key``: ``10`` and ``10.0``
are two keys, since a value's type can change what a figure says):

- a view's whole output (``posviz.ui.views``: its figures as ``HeldFigure``, built once with their dictionaries),
  and the core results several views read (``views.shared``);
- a family's table (``family_table``: up to 1 GiB, built once, read-only, never copied) and its block means
  (``family_preview``);
- a loaded checkpoint by its content fingerprint (``checkpoint``, ``candidates``), and a model's positions by its
  config's text (``model_positions``).

``st.cache_resource`` would keep them without copying, but it bounds a cache by a count of entries; ``TABLES``
bounds them by the bytes they hold (``POSVIZ_CACHE_MB``, every byte counted by ``posviz.base.store.nbytes``) and
drops the least recently used: the one byte-bounded store of ``posviz.base.store``, which the training lab's queue
uses for its loaded runs too. Its arrays are read-only and its figures shared: draw them, never change them
(``go.Figure(fig)`` is a copy to change). A table to analyse is named by a :class:`Table`, by its family and
parameters or its content's digest, never by the array.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

import posviz
from posviz import analysis, figures, models
from posviz import checkpoint as ckpt
from posviz.base.store import ByteStore, nbytes
from posviz.models import ModelPositions

#: Memory the large tables, results and built figures may hold together (``TABLES``): ``POSVIZ_CACHE_MB`` megabytes,
#: by default 1,280: the largest table (1 GiB), its block means and its figures, and 0.25 GB of other figures.
CACHE_MB_DEFAULT = 1280


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


class TableStore:
    """The pages' store of read-only results (a :class:`posviz.base.store.ByteStore` of ``budget`` bytes, every byte
    counted by :func:`nbytes`): each result is made read-only (:func:`_frozen`) before it is kept. A result larger
    than the whole budget is returned but not kept. Computations run outside the lock, so two sessions asking for
    the same new key may both compute it; the first stored wins."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._store = ByteStore(budget)

    def get(self, key: tuple, compute: Callable[[], Any]):
        return self._store.get_or_compute(key, lambda: _frozen(compute()))

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


def checkpoint(source, key: str | None = None, *, name: str | None = None) -> tuple[str, ckpt.PositionTable]:
    """``(fingerprint, posviz.load_position_embeddings(source, key))``, kept in ``TABLES`` by the source's
    content fingerprint (``posviz.checkpoint.fingerprint``) and the key; the matrix is read-only."""
    digest = ckpt.fingerprint(source)
    return digest, TABLES.get(
        ("checkpoint", digest, key), lambda: ckpt.load_position_embeddings(source, key, name=name)
    )


def candidates(digest: str, source, *, name: str | None = None) -> list:
    """:func:`posviz.checkpoint.list_position_candidates` of ``source``, kept in ``TABLES`` by its fingerprint
    ``digest`` (and the name it is shown by)."""
    return TABLES.get(("candidates", digest, name), lambda: ckpt.list_position_candidates(source, name=name))


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


# ------------------------------------------------------------------------------------------------ models


def model_positions(config: str) -> ModelPositions:
    """:func:`posviz.models.model_positions` of a config.json's text (kept by that text), or of a path to one or to
    a model folder (read anew on every call: the file may change, and reading it takes a millisecond)."""
    if config.lstrip().startswith("{"):
        return TABLES.get(("model_positions", config), lambda: models.model_positions(config))
    return models.model_positions(config)


def model_preset_text(name: str) -> str:
    """:func:`posviz.models.preset_text` of the preset ``name``, kept in ``TABLES``."""
    return TABLES.get(("model_preset_text", name), lambda: models.preset_text(name))
