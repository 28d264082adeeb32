"""Each page's views: functions of the settings in use that return what the page shows.

A view (``@view``) takes the settings it reads, as plain values, and returns an :class:`Output`: its figures
(:class:`Figure`: the plotly figure, its CSV data and how its caption is filled) and the texts between them, in
order. It is computed by calling the core and the figure builders directly and cached as a whole in
``cache.TABLES``, keyed by its name, the values and types of its settings and the language; its figures are held
with their dictionaries (``cache.HeldFigure``), shared by every session: draw them, never change them. A page
script reads its controls and calls ``draw(views.rope.scores(n, head_dim, base, seed, shift))``: where any
figure's numbers come from is one hop from the page.

Settings a view refuses raise ``ValueError`` with a sentence, which the page shows (``errors_shown``); an error is
never cached.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from posviz import figures

from .. import cache
from ..i18n import current_language, t


@dataclasses.dataclass(frozen=True)
class Figure:
    """A figure of a page, drawn by ``Figures(page).show(key, fig, data, **options)``: ``options`` are that
    method's keywords (``variant``, ``suffix``, ``chart``, ``extra``, ``captioned``) and the caption's values."""

    key: str
    fig: go.Figure
    data: Any = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)


#: How a :class:`Text` is drawn: Markdown, a caption, a blue note, a yellow warning, a LaTeX formula, a block of
#: plain code (an error message as a library prints it).
TEXT_KINDS = ("markdown", "caption", "info", "warning", "latex", "code")


@dataclasses.dataclass(frozen=True)
class Text:
    """A sentence between the figures, already in the page's language."""

    text: str
    kind: str = "markdown"

    def __post_init__(self) -> None:
        if self.kind not in TEXT_KINDS:
            raise TypeError(f"Text kind is one of {TEXT_KINDS}, not {self.kind!r}")


@dataclasses.dataclass(frozen=True)
class Frame:
    """A table of numbers (``st.dataframe``): column name -> values."""

    columns: Mapping[str, Any]


Item = Figure | Text | Frame


@dataclasses.dataclass(frozen=True)
class Output:
    """What a view shows, in order, on the page ``page``."""

    page: str
    items: tuple[Item, ...]

    def figure(self, key: str) -> Figure:
        """The figure of ``key`` (what a test reads)."""
        for item in self.items:
            if isinstance(item, Figure) and item.key == key:
                return item
        raise KeyError(key)

    @property
    def texts(self) -> list[str]:
        return [item.text for item in self.items if isinstance(item, Text)]


def _held(item: Item) -> Item:
    if isinstance(item, Figure) and not isinstance(item.fig, cache.HeldFigure):
        return dataclasses.replace(item, fig=cache.HeldFigure(item.fig))
    return item


class View:
    """A view of ``page`` made by :func:`view`: called with its settings, the cached :class:`Output` of ``func``;
    ``uncached`` is ``func`` itself, what a test compares with (the same items, built afresh)."""

    def __init__(self, page: str, func: Callable[..., Iterable[Item]]) -> None:
        functools.update_wrapper(self, func)
        self.page, self.uncached = page, func
        self._signature = inspect.signature(func)

    def __call__(self, *args, **kwargs) -> Output:
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        func = self.uncached
        key = ("view", func.__module__, func.__qualname__, cache.settings_key(bound.arguments), current_language())
        return cache.TABLES.get(key, lambda: Output(self.page, tuple(_held(item) for item in func(*args, **kwargs))))


@functools.lru_cache(maxsize=256)
def _signature(func: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(func)


def shared(func: Callable[..., Any], *args, **kwargs):
    """``func(*args, **kwargs)`` of the core, kept in ``cache.TABLES`` by its name and the values and types of its
    arguments: a result two views of different settings both read (the precision tab's errors of every format, drawn
    as one format's map and as every format's lines), computed once."""
    bound = _signature(func).bind(*args, **kwargs)
    bound.apply_defaults()
    key = ("shared", func.__module__, func.__qualname__, cache.settings_key(bound.arguments))
    return cache.TABLES.get(key, lambda: func(*args, **kwargs))


def view(page: str):
    """Make ``func`` (settings -> a sequence of items) a view of ``page``: its :class:`Output` cached as a whole in
    ``cache.TABLES`` by the function's name, its settings (values and types: ``10`` and ``10.0`` draw differently)
    and the current language, its figures held with their dictionaries."""
    return functools.partial(View, page)


def draw(output: Output) -> None:
    """Draw ``output`` on the page, item by item: figures with their captions and downloads (``Figures.show``)."""
    from .. import Figures

    shows = Figures(output.page)
    for item in output.items:
        if isinstance(item, Figure):
            shows.show(item.key, item.fig, item.data, **item.options)
        elif isinstance(item, Frame):
            st.dataframe(dict(item.columns), hide_index=True)
        elif item.kind == "markdown":
            st.markdown(item.text)
        elif item.kind == "caption":
            st.caption(item.text)
        elif item.kind == "info":
            st.info(item.text)
        elif item.kind == "latex":
            st.latex(item.text)
        elif item.kind == "code":
            st.code(item.text, language="text", wrap_lines=True)
        else:
            st.warning(item.text)


def heatmap(matrix, *, reduced: np.ndarray | None = None, **kwargs) -> go.Figure:
    """``figures.heatmap`` with the downsampling note in the current language; ``reduced`` the block means of a
    large table when they are kept (``cache.family_preview``)."""
    return figures.heatmap(matrix, downsampled_note=t("figure.downsampled"), reduced=reduced, **kwargs)


def similarity_heatmap(matrix, positions, n_positions: int, *, title: str | None = None) -> go.Figure:
    """A cosine-similarity matrix over ``positions`` (evenly spaced out of ``n_positions``), its axes in position
    units, its colours fixed to [-1, 1]."""
    step = (n_positions - 1) / max(len(positions) - 1, 1) if len(positions) < n_positions else 1.0
    return heatmap(
        matrix,
        title=title or t("figure.similarity"),
        x_title=t("axis.position"),
        y_title=t("axis.position"),
        zmin=-1.0,
        zmax=1.0,
        dx=step,
        dy=step,
        colorbar_title="cos",
    )


def projection_path(where, coords, n: int, method: str) -> tuple[go.Figure, dict, str]:
    """The projected rows of a table as a path: positions ``where`` (of ``n``) at their 2-D coordinates
    ``coords`` (``analysis.sampled_projection`` with ``method``), coloured by position; its CSV, and the sentence
    saying how many positions are drawn ("" when all are)."""
    fig = figures.positions_path(
        where,
        coords,
        title=t("learned.projection.title", method=t(f"learned.projection.{method}")),
        x_title=t("learned.axis.component", k=1),
        y_title=t("learned.axis.component", k=2),
        colorbar_title=t("axis.position"),
    )
    sampled = t("learned.sampled", shown=len(where), n=n) if len(where) < n else ""
    return fig, {"position": where, "x": coords[:, 0], "y": coords[:, 1]}, sampled


def family_heatmap(family: str, params: Mapping[str, object], **kwargs) -> tuple[np.ndarray, go.Figure]:
    """The table of ``family`` at ``params`` (``cache.family_table``: built once, shared) and its heatmap, drawn
    from its block means kept beside it when it is large."""
    table = cache.family_table(family, params)
    return table, heatmap(table, reduced=cache.family_preview(family, params), **kwargs)


__all__ = [
    "Figure",
    "Frame",
    "Output",
    "Text",
    "draw",
    "family_heatmap",
    "heatmap",
    "projection_path",
    "shared",
    "similarity_heatmap",
    "view",
]
