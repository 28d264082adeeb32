"""The checkpoint inspector's views: the position table a trained model learned, each figure beside the sinusoidal
table of its shape (the table and its row norms, the similarity of its positions and its decay with the offset, the
spectrum, the position probe, the two tables side by side), a second checkpoint beside the first, and a T5 bias.

A view takes the loaded table as a ``cache.Table`` named by the checkpoint's content digest and the tensor
(``inspector.source.Loaded.ref``; ``.stored`` for every stored row) and calls the core (``posviz.analysis``,
``posviz.lessons.sinusoidal``) and the builders of ``posviz.figures`` itself; ``posviz.ui.inspector`` picks and loads
the checkpoint and draws what a view returns. Every caption is written for a table that orders its positions;
``variant`` (the kind of :func:`read`, None for an ordered table) names the caption for noise or a tiny table.
"""

from __future__ import annotations

import pandas as pd

from posviz import analysis, figures
from posviz.base import checks
from posviz.figures import inspect as inspect_figures
from posviz.lessons import sinusoidal as sinlesson

from .. import SIMILARITY_POSITIONS, cache
from ..i18n import t
from . import Figure, Text, family_heatmap, heatmap, projection_path, shared, similarity_heatmap, view
from .learned import spectrum_figures

#: Rows the position probe and the projection read at most (evenly spaced).
PROBE_POSITIONS = 1024
PROJECTION_POSITIONS = 1024
#: The learned family's random start of a table's shape, the probe's third bar: BERT's N(0, 0.02^2), seed 0.
RANDOM_START = {"init": "random", "seed": 0, "std": 0.02}


def sinusoidal_params(n: int, d: int) -> dict[str, object]:
    """The parameters of the sinusoidal table of n positions x d dimensions (``cache.family_table``), the reference
    every figure draws beside the loaded table."""
    return {"base": 10000.0, "d_model": d, "layout": "interleaved", "n_positions": n}


def _probe(table: cache.Table) -> float:
    return analysis.sampled_position_probe(table.matrix, PROBE_POSITIONS)


def probe_error(table: cache.Table) -> float:
    """The position probe's mean absolute error on ``table`` (``analysis.sampled_position_probe`` over at most
    ``PROBE_POSITIONS`` rows), kept in ``cache.TABLES`` by the table's name (``views.shared``): :func:`read` and
    the probe views share it, so a table is probed once."""
    return shared(_probe, table)


def read(table: cache.Table) -> analysis.TableReading:
    """The core's verdict on ``table``: ordered, random-looking or tiny (``analysis.read_table``), its probe
    :func:`probe_error`'s."""
    matrix = table.matrix
    if matrix.ndim != 2 or matrix.shape[0] < analysis.PROBE_MIN_POSITIONS:
        return analysis.read_table(matrix, PROBE_POSITIONS)  # a tiny table's verdict, or the sentence for no table
    return analysis.table_reading(matrix.shape[0], probe_error(table))


def _probe_bars(probes: dict[str, float], title: str):
    """The probe's mean absolute error of each table (``probes``: name -> error) as bars, and their CSV."""
    fig = figures.bars(
        list(probes),
        list(probes.values()),
        title=title,
        x_title=t("learned.axis.table"),
        y_title=t("learned.axis.probe"),
    )
    return fig, {"table": list(probes), "mean_abs_error": list(probes.values())}


@view("inspect")
def t5(stored: cache.Table):
    """A T5 relative-attention bias table b[bucket, head] (Raffel et al., 2020): one column per head, one row per
    bucket of the distance."""
    matrix = stored.matrix
    fig = heatmap(
        matrix,
        title=t("inspect.t5", buckets=matrix.shape[0], heads=matrix.shape[1]),
        x_title=t("inspect.axis.head"),
        y_title=t("inspect.axis.bucket"),
        colorbar_title=t("inspect.axis.bias"),
    )
    return [Figure("t5", fig, matrix)]


@view("inspect")
def table(stored: cache.Table, tensor: str, offset: int, name: str, variant: str | None):
    """The stored rows of the tensor ``tensor`` (the first ``offset`` are no position: outlined) and each position's
    length ||PE(p)|| (``analysis.row_norms`` of rows ``offset`` on) beside the sinusoidal table's, sqrt(d/2) for an
    even d (``sinlesson.sinusoidal_row_norm``); ``name`` the loaded table's name in the legend."""
    matrix = stored.matrix
    n, d = matrix[offset:].shape
    fig = heatmap(
        matrix,
        title=t("inspect.table", tensor=tensor),
        x_title=t("axis.dimension"),
        y_title=t("inspect.axis.row"),
        colorbar_title="PE",
    )
    if offset:
        fig = inspect_figures.mark_rows(fig, offset, t("inspect.offset.mark", offset=offset))
    norms = analysis.row_norms(matrix[offset:])
    lines = figures.lines(
        range(n),
        {name: norms, t("inspect.sinusoidal"): sinlesson.sinusoidal_row_norm(n, d)},
        title=t("inspect.norms"),
        x_title=t("axis.position"),
        y_title="‖PE(p)‖",
    )
    return [
        Figure("table", fig, matrix, {"variant": variant, "n": n}),
        Figure("norms", lines, {"position": range(n), "row_norm": norms}, {"variant": variant, "n": n}),
    ]


@view("inspect")
def similarity(table: cache.Table, name: str, variant: str | None):
    """cos(PE(i), PE(j)) of at most ``SIMILARITY_POSITIONS`` evenly spaced positions (``analysis.sampled_similarity``)
    and its mean over the pairs |i - j| apart (``analysis.strided_offset_profile``) beside the sinusoidal table's of
    the same shape, hence the same offsets."""
    matrix = table.matrix
    n, d = matrix.shape
    positions, sim = analysis.sampled_similarity(matrix, SIMILARITY_POSITIONS)
    offsets, _, cosine = analysis.strided_offset_profile(matrix)
    _, _, ref_cosine = analysis.strided_offset_profile(cache.family_table("sinusoidal", sinusoidal_params(n, d)))
    fig = figures.lines(
        offsets,
        {name: cosine, t("inspect.sinusoidal"): ref_cosine},
        title=t("inspect.profile"),
        x_title=t("inspect.axis.offset"),
        y_title=t("inspect.axis.cosine"),
    )
    data = {"offset": offsets, "mean_cosine": cosine, "sinusoidal_mean_cosine": ref_cosine}
    return [
        Figure("similarity", similarity_heatmap(sim, positions, n), sim, {"variant": variant, "n": n}),
        Figure("offset", fig, data, {"variant": variant, "n": n}),
    ]


@view("inspect")
def projection(table: cache.Table, method: str, variant: str | None):
    """The rows of the table, at most ``PROJECTION_POSITIONS`` evenly spaced, projected on two axes with ``method``
    (``analysis.sampled_projection``: PCA or t-SNE) and joined in order, coloured by position
    (``views.projection_path``)."""
    checks.choice("method", method, analysis.PROJECTIONS)
    matrix = table.matrix
    n = matrix.shape[0]
    where, coords = analysis.sampled_projection(matrix, PROJECTION_POSITIONS, method=method)
    fig, data, sampled = projection_path(where, coords, n, method)
    return [Figure("projection", fig, data, {"variant": variant, "extra": sampled, "n": n})]


@view("inspect")
def spectrum(table: cache.Table, name: str, variant: str | None):
    """P_i(omega) = |sum_p (PE[p, i] - mean_i) e^(-i omega p)|^2 of each analysed column
    (``analysis.position_spectrum``): each column's dominant frequency against the sinusoidal ladder
    omega_k = base^(-2k/d) (``learned.sinusoidal_column_frequencies``), and the mean power beside the sinusoidal
    table's of the same shape (``sinlesson.sinusoidal_spectrum``).

    The second figure is captioned with the Learned page's sentence (``learned.spectrum.mean.notice``), which the
    inspector draws under it (``inspector.tables.spectrum``)."""
    matrix = table.matrix
    n, d = matrix.shape
    found = analysis.position_spectrum(matrix)
    reference_power = sinlesson.sinusoidal_spectrum(n, d).mean_power
    dominant = {"variant": variant, "chart": "dominant", "n": n}
    return spectrum_figures(found, d, name, reference_power, dominant, {"chart": "power", "captioned": False})


@view("inspect")
def probe(table: cache.Table, name: str, variant: str | None):
    """How well a linear probe reads the position p from the row PE(p) (Wang & Chen, 2020: mean |p_hat - p| of a
    cross-validated ridge regression, ``analysis.sampled_position_probe``): this table, the sinusoidal table and the
    learned family's random start of its shape, and always guessing the median (``analysis.constant_guess_error``)."""
    n, d = table.matrix.shape
    random_start = cache.family_table("learned", {**RANDOM_START, "d_model": d, "n_positions": n})
    probes = {
        name: probe_error(table),
        t("inspect.sinusoidal"): analysis.sampled_position_probe(
            cache.family_table("sinusoidal", sinusoidal_params(n, d)), PROBE_POSITIONS
        ),
        t("option.random"): analysis.sampled_position_probe(random_start, PROBE_POSITIONS),
        t("learned.probe.guess"): analysis.constant_guess_error(n),
    }
    fig, data = _probe_bars(probes, t("learned.probe.title", n=n, d=d))
    return [Figure("probe", fig, data, {"variant": variant, "n": n})]


@view("inspect")
def beside_sinusoidal(table: cache.Table, name: str):
    """The loaded table and the sinusoidal table of the same shape, PE[p, 2k] = sin(p omega_k), PE[p, 2k + 1] =
    cos(p omega_k) (``cache.family_table``), each over the cosine similarity of its positions: the left pair, then
    the right pair, then their caption (the inspector draws the pairs in two columns)."""
    matrix = table.matrix
    n, d = matrix.shape
    x_title, y_title = t("axis.dimension"), t("axis.position")
    reference, reference_fig = family_heatmap(
        "sinusoidal",
        sinusoidal_params(n, d),
        title=t("inspect.sinusoidal"),
        x_title=x_title,
        y_title=y_title,
        colorbar_title="PE",
        height=380,
    )
    own = heatmap(matrix, title=name, x_title=x_title, y_title=y_title, colorbar_title="PE", height=380)
    positions, sim = analysis.sampled_similarity(matrix, SIMILARITY_POSITIONS)
    _, ref_sim = analysis.sampled_similarity(reference, SIMILARITY_POSITIONS)
    similarity_title = t("figure.similarity")
    return [
        Figure("side.table", own, matrix, {"captioned": False}),
        Figure(
            "side.table.similarity",
            similarity_heatmap(sim, positions, n, title=similarity_title),
            sim,
            {"captioned": False},
        ),
        Figure("side.sinusoidal", reference_fig, reference, {"captioned": False}),
        Figure(
            "side.sinusoidal.similarity",
            similarity_heatmap(ref_sim, positions, n, title=similarity_title),
            ref_sim,
            {"captioned": False},
        ),
        Text(t("inspect.side.notice", n=n, d=d), "caption"),
    ]


@view("inspect")
def compare(first: cache.Table, first_label: str, second: cache.Table, second_label: str):
    """Two checkpoints' tables side by side: the cosine similarity of each (``analysis.sampled_similarity``), the
    mean cosine of rows |i - j| apart of both against the offset, each over its own offsets
    (``analysis.strided_offset_profile``), and the position probe's error of each (:func:`probe_error`)."""
    items: list = []
    profiles, probes = {}, {}
    for ref, label, key in ((first, first_label, "a"), (second, second_label, "b")):
        matrix = ref.matrix
        positions, sim = analysis.sampled_similarity(matrix, SIMILARITY_POSITIONS)
        fig = similarity_heatmap(sim, positions, matrix.shape[0], title=label)
        items.append(Figure(f"compare.{key}", fig, sim, {"captioned": False}))
        offsets, _, cosine = analysis.strided_offset_profile(matrix)
        profiles[label] = (offsets, cosine)
        probes[label] = probe_error(ref)
    fig = figures.lines(
        None, profiles, title=t("inspect.profile"), x_title=t("inspect.axis.offset"), y_title=t("inspect.axis.cosine")
    )
    data = {f"{name} offset": pd.Series(o) for name, (o, _) in profiles.items()}
    data |= {f"{name} mean_cosine": pd.Series(c) for name, (_, c) in profiles.items()}
    bars, bars_data = _probe_bars(probes, t("inspect.compare.probe"))
    return [*items, Figure("compare", fig, data), Figure("probe", bars, bars_data, {"suffix": "compare"})]
