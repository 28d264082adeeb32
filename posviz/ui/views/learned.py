"""The Learned page's views: a table and the similarity of its positions, its projection, its spectrum, the position
probes before and after training, and the table past its last row, as functions of the table in use (a
:class:`Source`) and the tab's own settings.

Each view calls the core (``posviz.encodings.learned``, ``posviz.lessons.sinusoidal``, ``posviz.analysis``) and the
figure builders (``posviz.figures``, ``posviz.figures.learned``) directly; the page script reads the controls and
draws what a view returns (``views.draw``). A table trained in this session is named by a digest of its content:
the page offers its array for the views to read (:func:`offering`), and the cache key is the digest, never the array.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Mapping
from typing import NamedTuple

import numpy as np

import posviz
from posviz import analysis, figures
from posviz.base import checks
from posviz.encodings import learned
from posviz.figures import learned as learned_figures
from posviz.lessons import sinusoidal as sinlesson

from .. import SIMILARITY_POSITIONS, cache
from ..export import MAX_CSV_CELLS
from ..i18n import core_message, t
from ..pagekit import labels
from . import Figure, Item, Output, Text, family_heatmap, heatmap, projection_path, similarity_heatmap, view

FAMILY = posviz.family("learned")
#: The tables the family builds (its ``init``): BERT's random start and a sinusoidal one.
INITS = ("random", "sinusoidal")
#: The option of a table loaded or trained in this session: this prefix, then its name in ``ui.session_tables()``.
SESSION = "session:"
#: The spread and seed of a table that reads neither (the family's defaults).
DEFAULT_STD, DEFAULT_SEED = FAMILY.param("std").default, FAMILY.param("seed").default
#: Rows a projection reads at most, by method: t-SNE of a thousand points costs about two seconds.
PROJECTION_POSITIONS = {"pca": 1024, "tsne": 512}
#: Rows a position probe reads at most.
PROBE_POSITIONS = 1024


class Source(NamedTuple):
    """The table in use, as plain values: ``code`` the page's option ("random", "sinusoidal", "example" or
    ``SESSION`` + a name), its ``n`` rows and ``d`` columns, a random table's ``std`` and ``seed`` (the family's
    defaults for any other) and a session table's ``digest`` (``analysis.table_digest``; "" for any other)."""

    code: str
    n: int
    d: int
    std: float = DEFAULT_STD
    seed: int = DEFAULT_SEED
    digest: str = ""

    @property
    def registry(self) -> bool:
        """Whether the family builds it from the controls (random, sinusoidal)."""
        return self.code in INITS

    @property
    def kind(self) -> str:
        """The captions' variant: "random", "sinusoidal" or "trained"."""
        return self.code if self.registry else "trained"


def registry_source(init: str, n: int, d: int, std: float, seed: int) -> Source:
    """The family's table of ``init`` at n x d: a random one with its ``std`` and ``seed``, checked by
    ``learned.RandomTable`` (nothing is drawn; its ValueError names the bad setting); a sinusoidal one reads
    neither."""
    if init == "random":
        learned.RandomTable(n, d, std=std, seed=seed)
        return Source(init, n, d, std, seed)
    return Source(init, n, d)


def example_source() -> Source:
    """The trained example shipped with the app (``learned.example_table``)."""
    n, d = learned.example_table().shape
    return Source("example", n, d)


def session_source(code: str, table) -> Source:
    """The session table ``table`` offered as ``code`` (``SESSION`` + its name), named by its content's digest."""
    n, d = np.shape(table)
    return Source(code, n, d, digest=analysis.table_digest(table))


#: The session tables the running page offers to its views, by digest (:func:`offering`).
_OFFERED: contextvars.ContextVar[Mapping[str, np.ndarray]] = contextvars.ContextVar("learned_offered")


@contextlib.contextmanager
def offering(tables: Mapping[str, np.ndarray]) -> Iterator[None]:
    """Within the block, a view of a session :class:`Source` reads its array from ``tables`` (digest -> array),
    on a miss only: the views are keyed by the digest."""
    token = _OFFERED.set(tables)
    try:
        yield
    finally:
        _OFFERED.reset(token)


def label(code: str) -> str:
    """The name of the table ``code`` as the page's options show it."""
    if code in INITS:
        return t(f"option.{code}")
    if code == "example":
        return t("learned.option.example")
    return t("learned.option.session", name=code.removeprefix(SESSION))


def _params(source: Source) -> dict[str, object]:
    return {"d_model": source.d, "init": source.code, "n_positions": source.n, "seed": source.seed, "std": source.std}


def _random(n: int, d: int, std: float, seed: int) -> learned.RandomTable:
    return learned.RandomTable(n, d, std=std, seed=seed)


def _table(source: Source):
    """What the analyses read: a ``learned.RandomTable`` for a random table (it draws only the rows or columns
    read), the family's sinusoidal table (``cache.family_table``: built on first use), the trained example, or the
    session table offered under the source's digest."""
    if source.code == "random":
        return _random(source.n, source.d, source.std, source.seed)
    if source.registry:
        return cache.family_table(FAMILY.key, _params(source))
    if source.code == "example":
        return learned.example_table()
    offered = _OFFERED.get({})
    if source.digest not in offered:
        raise LookupError(f"the session table {source.code!r} is not offered to the views (learned.offering)")
    return offered[source.digest]


@view("learned")
def table(source: Source):
    """The table PE (``posviz.family("learned")``, the trained example or a session table) and the cosine
    similarity of at most ``SIMILARITY_POSITIONS`` evenly spaced rows (``analysis.sampled_similarity``). A
    sinusoidal table of more than ``MAX_CSV_CELLS`` cells is drawn from its block means and its similarity in
    closed form (``sinusoidal_block_means``, ``sinusoidal_similarity``), never built; a random one longer or wider
    than a heatmap's side shows its real entries on a grid (``RandomTable.grid``), never built either."""
    n, d, kind = source.n, source.d, source.kind
    named = labels("learned.table", "axis.dimension", "axis.position")
    extra = ""
    if kind == "sinusoidal" and n * d > MAX_CSV_CELLS:  # sin_init(n, d) is sinusoidal(n, d): block means in closed form
        data = sinlesson.sinusoidal_block_means(n, d, max_side=figures.MAX_SIDE)
        fig = heatmap(np.broadcast_to(np.nan, (n, d)), reduced=data, colorbar_title="PE", **named)
        positions, sim = sinlesson.sinusoidal_similarity(n, d, SIMILARITY_POSITIONS)
    elif kind == "random" and max(n, d) > figures.MAX_SIDE:  # real entries on a grid, only those rows drawn
        ref = _table(source)
        positions, dims, data = ref.grid(figures.MAX_SIDE)
        spacing = {"dy": (n - 1) / max(positions.size - 1, 1), "dx": (d - 1) / max(dims.size - 1, 1)}
        fig = heatmap(data, colorbar_title="PE", **named, **spacing)
        extra = t("learned.table.grid", rows=positions.size, n=n, cols=dims.size, d=d)
        positions, sim = analysis.sampled_similarity(ref, SIMILARITY_POSITIONS)
    elif source.registry:
        data, fig = family_heatmap(FAMILY.key, _params(source), colorbar_title="PE", **named)
        positions, sim = analysis.sampled_similarity(data, SIMILARITY_POSITIONS)
    else:
        matrix = np.asarray(_table(source))
        # the figure's CSV: a copy (the output is held read-only; the session's array is left as it is), or the
        # block means a CSV of a larger table exports
        data = figures.block_mean(matrix) if matrix.size > MAX_CSV_CELLS else matrix.copy()
        reduced = data if matrix.size > MAX_CSV_CELLS else None
        fig = heatmap(matrix, reduced=reduced, colorbar_title="PE", **named)
        positions, sim = analysis.sampled_similarity(matrix, SIMILARITY_POSITIONS)
    return [
        Figure("table", fig, data, {"variant": kind, "extra": extra}),
        Figure("similarity", similarity_heatmap(sim, positions, n), sim, {"variant": kind}),
    ]


@view("learned")
def projection(source: Source, method: str):
    """The rows of the table, at most ``PROJECTION_POSITIONS[method]`` evenly spaced, projected on two axes with
    ``method`` (``analysis.sampled_projection``: PCA or t-SNE) and joined in order, coloured by position."""
    checks.choice("method", method, analysis.PROJECTIONS)
    where, coords = analysis.sampled_projection(_table(source), PROJECTION_POSITIONS[method], method=method)
    fig, data, sampled = projection_path(where, coords, source.n, method)
    return [Figure("projection", fig, data, {"variant": source.kind, "extra": sampled})]


@view("learned")
def spectrum(source: Source):
    """P_i(omega) = |sum_p (PE[p, i] - mean_i) e^(-i omega p)|^2 of each analysed column
    (``analysis.position_spectrum``; a sinusoidal table's from its columns alone, ``sinusoidal_spectrum``): each
    column's dominant frequency against the ladder omega_k = base^(-2k/d), and the mean power beside the
    sinusoidal table's of the same shape."""
    n, d, kind = source.n, source.d, source.kind
    if kind == "sinusoidal":  # the spectrum of sin_init(n, d) from its analysed columns alone
        found, reference_power = sinlesson.sinusoidal_spectrum(n, d), None
    else:
        found = analysis.position_spectrum(_table(source))
        reference_power = sinlesson.sinusoidal_spectrum(n, d).mean_power
    options = {"variant": kind, "chart": "dominant"}
    return spectrum_figures(found, d, label(source.code), reference_power, options, {"chart": "power"})


def spectrum_figures(
    found: analysis.PositionSpectrum,
    d: int,
    table_name: str,
    reference_power: np.ndarray | None,
    dominant_options: dict,
    mean_options: dict,
) -> list[Item]:
    """The two figures of a table's spectrum ``found`` (d its width), on the Learned page and in the inspector: each
    analysed column's dominant frequency against the sinusoidal ladder (``learned.sinusoidal_column_frequencies``),
    the sentence when some columns are sampled; the mean power beside ``reference_power``, the sinusoidal table's
    (None: the table is the sinusoidal one)."""
    reference = learned.sinusoidal_column_frequencies(d)
    dominant = learned_figures.dominant_frequencies(
        found.dims,
        found.dominant,
        reference,
        found.resolution,
        title=t("learned.spectrum.dominant"),
        x_title=t("axis.dimension"),
        y_title=t("learned.axis.frequency"),
        table_name=table_name,
        reference_name=t("learned.spectrum.reference"),
        floor_name=t("learned.spectrum.floor"),
    )
    dominant_data = {
        "dimension": found.dims,
        "dominant_frequency": found.dominant,
        "sinusoidal_frequency": reference[found.dims],
    }
    extra = t("learned.sampled_dims", shown=len(found.dims), d=d) if len(found.dims) < d else ""
    series = {table_name: found.mean_power}
    if reference_power is not None:
        series[t("learned.spectrum.reference")] = reference_power
    mean = figures.lines(
        found.frequencies,
        series,
        title=t("learned.spectrum.mean"),
        x_title=t("learned.axis.frequency"),
        y_title=t("learned.axis.power"),
    )
    return [
        Figure("spectrum", dominant, dominant_data, {**dominant_options, "extra": extra}),
        Figure("spectrum.mean", mean, {"frequency": found.frequencies, **series}, mean_options),
    ]


def _starts(n: int, d: int, std: float, seed: int) -> dict[str, float]:
    """The probe errors of the random table of n x d (``std``, ``seed``) and the sinusoidal one, each from its
    sampled rows only (``analysis.sampled_position_probe``, ``sinusoidal_position_probe``)."""
    return {
        t("option.random"): analysis.sampled_position_probe(_random(n, d, std, seed), PROBE_POSITIONS),
        t("option.sinusoidal"): sinlesson.sinusoidal_position_probe(n, d, PROBE_POSITIONS),
    }


def _probe_figure(probes: dict[str, float], n: int, d: int, *, title: str, variant: str, chart: str) -> Figure:
    """The probe errors of tables of n x d beside always guessing the middle (``analysis.constant_guess_error``),
    captioned by ``learned.probe.notice.<variant>``, with a sentence when fewer than n positions are read."""
    names, values = [*probes, t("learned.probe.guess")], [*probes.values(), analysis.constant_guess_error(n)]
    sampled = ""
    if n > PROBE_POSITIONS:
        sampled = t("learned.probe.sampled", shown=len(analysis.evenly_spaced(n, PROBE_POSITIONS)), n=n)
    fig = figures.bars(names, values, **labels(title, "learned.axis.table", "learned.axis.probe", n=n, d=d))
    data = {"table": names, "mean_abs_error": values}
    return Figure("probe", fig, data, {"variant": variant, "suffix": variant, "extra": sampled, "chart": chart})


@view("learned")
def initial_probes(n: int, d: int, std: float, seed: int):
    """Mean |p_hat - p| of a ridge probe from PE(p) back to p (``analysis.sampled_position_probe``, 5 folds, at
    most ``PROBE_POSITIONS`` rows) for the random table of n x d and the sinusoidal one, beside always guessing
    the middle, floor(n^2 / 4) / n."""
    probes = _starts(n, d, std, seed)
    return [_probe_figure(probes, n, d, title="learned.probe.title", variant="init", chart="probe")]


@view("learned")
def trained_probes(source: Source, std: float, seed: int):
    """The probe error of a trained table (the example or a session table) beside the random start of its shape
    (``std``, ``seed``), the sinusoidal start and always guessing the middle (as :func:`initial_probes`)."""
    probes = _starts(source.n, source.d, std, seed)
    probes[label(source.code)] = analysis.sampled_position_probe(_table(source), PROBE_POSITIONS)
    which = "example" if source.code == "example" else "session"
    figure = _probe_figure(
        probes, source.n, source.d, title="learned.probe.title.trained", variant=which, chart="probe-trained"
    )
    return [figure]


def probed(output: Output) -> dict[str, float]:
    """The probe error of each table in a probe view's ``output``, without the constant guess: what the page's
    metrics show."""
    data = output.figure("probe").data
    return dict(zip(data["table"][:-1], data["mean_abs_error"][:-1], strict=True))


@view("learned")
def past(source: Source, stretch: int):
    """The cosine similarity of at most ``SIMILARITY_POSITIONS`` evenly spaced positions of the table extended to
    N = stretch x n rows (``learned.extended_similarity``): by truncation, PE'(p) = PE(min(p, n - 1)), and by
    linear interpolation, corners aligned."""
    n = source.n
    longer = n * stretch
    ref = _table(source)
    items: list[Item] = []
    for method in learned.EXTENSIONS:
        where, sim = learned.extended_similarity(ref, longer, method, SIMILARITY_POSITIONS)
        title = t(f"learned.past.{method}", n=n, longer=longer, last=longer - 1)
        items.append(Figure(f"past.{method}", similarity_heatmap(sim, where, longer, title=title), sim))
    return items


@view("learned")
def lookup_error(n: int, speaker: str):
    """What torch (``learned.torch_lookup_error``) or posviz (``learned.lookup_error``) says of position n, one past
    the last row of an n-row table."""
    checks.choice("speaker", speaker, ("torch", "posviz"))
    if speaker == "torch":
        return [Text(t("learned.past.torch", n=n, position=n)), Text(learned.torch_lookup_error(n, n), "code")]
    return [Text(t("learned.past.posviz")), Text(core_message(learned.lookup_error(n, n)), "code")]


@view("learned")
def provenance():
    """How the trained example was made: its steps, seed and first and final losses (``learned.example_provenance``)."""
    made = learned.example_provenance()
    keys = ("steps", "seed", "first_loss", "final_loss")
    return [Text(t("learned.example.provenance", **{key: made[key] for key in keys}), "caption")]
