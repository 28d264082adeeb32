"""Learned absolute: BERT's random initial table, a sinusoidal-initialised one, and trained tables; what training
puts in them, and what happens past their last row."""

import functools

import streamlit as st

import posviz
from posviz import ui
from posviz.ui import errors_shown, projection, t, views, widgets
from posviz.ui.views import learned as learned_views

CTL = widgets.Controls("learned")

FAMILY = posviz.family("learned")
SESSION = learned_views.SESSION


def table_tab(source: learned_views.Source) -> None:
    """The table and the cosine similarity of its positions."""
    st.subheader(t("learned.section.table"))
    views.draw(learned_views.table(source))


def projection_tab(source: learned_views.Source) -> None:
    """A 2-D projection of the positions, coloured by index."""
    st.subheader(t("learned.section.table"))
    method = projection.pick_method("learned")
    views.draw(learned_views.projection(source, method))


def spectrum_tab(source: learned_views.Source) -> None:
    """Which frequencies each dimension carries, against the sinusoidal ladder."""
    st.subheader(t("learned.section.spectrum"))
    st.latex(
        r"\omega_k = \mathrm{base}^{-2k/d},\qquad P_i(\omega) = \Big|\sum_p \big(PE_{p,i} - \overline{PE_i}\big)"
        r"\, e^{-\mathrm{i}\omega p}\Big|^2,\qquad \omega_{\min} = 2\pi / n"
    )
    views.draw(learned_views.spectrum(source))


def probe_metrics(output: views.Output) -> None:
    """One metric per probed table of ``output``, side by side."""
    probes = learned_views.probed(output)
    for column, (name, value) in zip(st.columns(len(probes)), probes.items(), strict=True):
        column.metric(name, t("learned.probe.value", value=value), help=t("learned.probe.help"))


def probe_tab(source: learned_views.Source, std: float, seed: int) -> None:
    """How well a linear probe reads the position back: the tables the controls describe, and a trained one beside
    the two starts of its shape (random ones of the controls' spread and seed)."""
    st.subheader(t("learned.section.probe"))
    trained = source
    if source.registry:  # the random and sinusoidal tables of the controls' size, then the trained example
        ui.unused_controls(t("learned.ctl.table"), reason=t("learned.unused.probe"))
        initial = learned_views.initial_probes(source.n, source.d, std, seed)
        probe_metrics(initial)
        views.draw(initial)
        trained = learned_views.example_source()
    output = learned_views.trained_probes(trained, std, seed)
    if not source.registry:
        probe_metrics(output)
    views.draw(output)


def past_tab(source: learned_views.Source) -> None:
    """What happens past the last row: the real error and the usual workarounds."""
    st.subheader(t("learned.section.past"))
    stretch = CTL.numeric("stretch", 2, 8, 2)
    n = source.n
    for column, speaker in zip(st.columns(2), ("torch", "posviz"), strict=True):
        with column:
            views.draw(learned_views.lookup_error(n, speaker))
    views.draw(learned_views.past(source, stretch))


ui.intro("learned")
sessions = ui.session_tables()
source = None  # stays None when the chosen table cannot be built; the error is shown instead of the tabs
offered = {}  # a session table's array by its digest, what the views read it from (learned_views.offering)
with errors_shown("setting"):
    with ui.controls():
        options = [*learned_views.INITS, "example", *(SESSION + name for name in sessions)]
        code = CTL.radio("init", options, "random", text="table", names=learned_views.label)
        registry = code in learned_views.INITS
        c1, c2, c3, c4 = st.columns(4)
        with c1:
            n = widgets.number(
                FAMILY.param("n_positions"), key="n", maximum=posviz.MAX_POSITIONS, disabled=not registry
            )
        with c2:
            d = widgets.number(FAMILY.param("d_model"), key="d", maximum=posviz.MAX_DIM, disabled=not registry)
        with c3:
            std = widgets.number(FAMILY.param("std"), key="std", slider=False, disabled=code != "random")
        with c4:
            seed = widgets.number(FAMILY.param("seed"), key="seed", slider=False, disabled=code != "random")

    if registry:
        source = learned_views.registry_source(code, n, d, std, seed)
    elif code == "example":
        source = learned_views.example_source()
        views.draw(learned_views.provenance())
    else:
        table = sessions[code.removeprefix(SESSION)]
        source = learned_views.session_source(code, table)
        offered[source.digest] = table


if source is not None:
    DRAW = {
        "table": functools.partial(table_tab, source),
        "projection": functools.partial(projection_tab, source),
        "spectrum": functools.partial(spectrum_tab, source),
        "probe": functools.partial(probe_tab, source, std, seed),
        "past": functools.partial(past_tab, source),
    }
    with learned_views.offering(offered):
        ui.lazy_tabs("learned", DRAW)  # only the open tab computes
