"""The inspector's tabs about the loaded table (``source.Loaded``), each beside the sinusoidal table of its shape:
the table and its row norms, the similarity of its positions, a 2-D projection, the spectrum, the position probe,
the two tables side by side; and a T5 bias, which has buckets instead of positions.

Every caption is written for a table that orders its positions; for one that reads like noise or has too few
positions (``reading``, the core's verdict ``analysis.read_table``), the caption's variant says what is shown instead.
"""

from __future__ import annotations

import streamlit as st

from posviz import figures
from posviz.figures import inspect as inspect_figures

from .. import SIMILARITY_POSITIONS, Figures, cache, heatmap, similarity_heatmap, spectrum_views, t
from .. import projection as projection_view
from .source import Loaded

FIG = Figures("inspect")
PROJECTION_POSITIONS = 1024
PROBE_POSITIONS = 1024


def read(loaded: Loaded):
    """The core's verdict on the loaded table: ordered, random-looking or tiny (``analysis.read_table``)."""
    return cache.read_table(loaded.ref, PROBE_POSITIONS)


def variant(reading) -> str | None:
    """The captions' variant for the table's ``reading``: None for an ordered table (or none read), else its kind."""
    return None if reading is None or reading.kind == "ordered" else reading.kind


def show_reading(reading) -> None:
    """The verdict on the table, with the probe that decides it (``read``)."""
    if reading.kind == "tiny":
        st.info(t("inspect.reading.tiny", n=reading.n_positions), icon=":material/grid_on:")
        return
    probe, guess = f"{reading.probe:.1f}", f"{reading.guess:.1f}"
    if reading.kind == "ordered":
        st.markdown(t("inspect.reading.ordered", probe=probe, guess=guess))
    else:
        st.info(t("inspect.reading.random", probe=probe, guess=guess), icon=":material/grain:")


def t5(loaded: Loaded) -> None:
    """A T5 relative-bias table: one column per head, one row per bucket."""
    matrix = loaded.found.matrix
    fig = heatmap(
        matrix,
        title=t("inspect.t5", buckets=matrix.shape[0], heads=matrix.shape[1]),
        x_title=t("inspect.axis.head"),
        y_title=t("inspect.axis.bucket"),
        colorbar_title=t("inspect.axis.bias"),
    )
    FIG.show("t5", fig, matrix)


def table(loaded: Loaded, reading) -> None:
    """The stored table (its offset rows marked) and the norm of every row beside the sinusoidal table's."""
    found = loaded.found
    fig = heatmap(
        found.matrix,
        title=t("inspect.table", tensor=found.key),
        x_title=t("axis.dimension"),
        y_title=t("inspect.axis.row"),
        colorbar_title="PE",
    )
    if found.offset:
        fig = inspect_figures.mark_rows(fig, found.offset, t("inspect.offset.mark", offset=found.offset))
    n, d = loaded.table.shape
    FIG.show("table", fig, found.matrix, variant=variant(reading), n=n)
    norms = cache.row_norms(loaded.ref)
    fig = figures.lines(
        range(n),
        {loaded.name: norms, t("inspect.sinusoidal"): cache.sinusoidal_row_norm(n, d)},
        title=t("inspect.norms"),
        x_title=t("axis.position"),
        y_title="‖PE(p)‖",
    )
    FIG.show("norms", fig, {"position": range(n), "row_norm": norms}, variant=variant(reading), n=n)


def similarity(loaded: Loaded, reading) -> None:
    """Cosine similarity of the positions, and its mean against the offset beside the sinusoidal table's."""
    positions, sim = cache.sampled_similarity(loaded.ref, SIMILARITY_POSITIONS)
    n = loaded.table.shape[0]
    FIG.show("similarity", similarity_heatmap(sim, positions, n), sim, variant=variant(reading), n=n)
    # the sinusoidal table has the same shape, so the same offsets
    offsets, _, cosine = cache.strided_offset_profile(loaded.ref)
    _, _, ref_cosine = cache.strided_offset_profile(loaded.sinusoidal)
    fig = figures.lines(
        offsets,
        {loaded.name: cosine, t("inspect.sinusoidal"): ref_cosine},
        title=t("inspect.profile"),
        x_title=t("inspect.axis.offset"),
        y_title=t("inspect.axis.cosine"),
    )
    data = {"offset": offsets, "mean_cosine": cosine, "sinusoidal_mean_cosine": ref_cosine}
    FIG.show("offset", fig, data, variant=variant(reading), n=n)


def projection(loaded: Loaded, reading) -> None:
    """The positions projected on two axes (PCA, or another method of ``analysis.PROJECTIONS``), as a path."""
    method = projection_view.pick_method("inspect")
    n = loaded.table.shape[0]
    fig, data, sampled = projection_view.path(loaded.ref, n, method, PROJECTION_POSITIONS)
    FIG.show("projection", fig, data, variant=variant(reading), extra=sampled, n=n)


def spectrum(loaded: Loaded, reading) -> None:
    """Each dimension's dominant frequency and the mean power spectrum, beside the sinusoidal table's."""
    n, d = loaded.table.shape
    spectrum_views(
        FIG,
        cache.position_spectrum(loaded.ref),
        d,
        table_name=loaded.name,
        reference_power=cache.sinusoidal_spectrum(n, d).mean_power,
        variant=variant(reading),
        n=n,
    )


def probe(loaded: Loaded, reading) -> None:
    """How well a linear probe reads the position from a row: this table, the sinusoidal table, a random table and
    the constant guess."""
    n, d = loaded.table.shape
    random_params = (("d_model", d), ("init", "random"), ("n_positions", n), ("seed", 0), ("std", 0.02))
    probes = {
        loaded.name: cache.sampled_position_probe(loaded.ref, PROBE_POSITIONS),
        t("inspect.sinusoidal"): cache.sampled_position_probe(loaded.sinusoidal, PROBE_POSITIONS),
        t("option.random"): cache.sampled_position_probe(cache.Table.family("learned", random_params), PROBE_POSITIONS),
        t("learned.probe.guess"): cache.constant_guess_error(n),
    }
    show_probes(probes, t("learned.probe.title", n=n, d=d), variant=variant(reading), n=n)


def show_probes(probes: dict, title: str, **options) -> None:
    """The probe's mean absolute error of each table (``probes``: name -> error) as bars titled ``title``: the figure
    ``probe`` (``options``: those of ``Figures.show``)."""
    fig = figures.bars(
        list(probes),
        list(probes.values()),
        title=title,
        x_title=t("learned.axis.table"),
        y_title=t("learned.axis.probe"),
    )
    FIG.show("probe", fig, {"table": list(probes), "mean_abs_error": list(probes.values())}, **options)


def sinusoidal(loaded: Loaded) -> None:
    """The loaded table and the sinusoidal table of the same shape side by side, each over its similarity."""
    reference = cache.family_table("sinusoidal", loaded.sinusoidal_params)
    n, d = loaded.table.shape
    _, ref_sim = cache.sampled_similarity(loaded.sinusoidal, SIMILARITY_POSITIONS)
    positions, sim = cache.sampled_similarity(loaded.ref, SIMILARITY_POSITIONS)
    left, right = st.columns(2)
    for column, name, matrix, sims, key in (
        (left, loaded.name, loaded.table, sim, "table"),
        (right, t("inspect.sinusoidal"), reference, ref_sim, "sinusoidal"),
    ):
        with column:
            fig = heatmap(
                matrix,
                title=name,
                x_title=t("axis.dimension"),
                y_title=t("axis.position"),
                colorbar_title="PE",
                height=380,
            )
            FIG.show(f"side.{key}", fig, matrix, captioned=False)
            fig = similarity_heatmap(sims, positions, n, title=t("figure.similarity"))
            FIG.show(f"side.{key}.similarity", fig, sims, captioned=False)
    st.caption(FIG.notice("side", n=n, d=d))
