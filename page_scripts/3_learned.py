"""Learned absolute: BERT's random initial table, a sinusoidal-initialised one, and trained tables; what training
puts in them, and what happens past their last row."""

import streamlit as st

import posviz
from posviz import analysis, figures, ui
from posviz.encodings import learned
from posviz.ui import (
    SIMILARITY_POSITIONS,
    Figures,
    cache,
    core_message,
    errors_shown,
    heatmap,
    projection,
    similarity_heatmap,
    t,
    widgets,
)
from posviz.ui.export import MAX_CSV_CELLS
from posviz.ui.pagekit import labels

CTL = widgets.Controls("learned")
FIG = Figures("learned")

FAMILY = posviz.family("learned")
INITS = ("random", "sinusoidal")
SESSION = "session:"
PROJECTION_POSITIONS = {"pca": 1024, "tsne": 512}  # t-SNE of a thousand points costs about two seconds
PROBE_POSITIONS = 1024


class Source:
    """The chosen table, and ``ref``, what the cached analyses take for it: a ``learned.RandomTable`` for a random
    one (it draws only the rows or columns an analysis reads), a ``cache.Table`` named by the registry parameters
    (built on first use only: a tab that does not read it never pays for up to 1 GiB) or by the table's content."""

    def __init__(self, code: str, params: tuple | None, table=None):
        self.code, self.params, self._table = code, params, table
        self.ref: cache.AnyTable
        if code == "random":
            kw = dict(params)
            self.ref = learned.RandomTable(kw["n_positions"], kw["d_model"], std=kw["std"], seed=kw["seed"])
        elif params is not None:
            self.ref = cache.Table.family(FAMILY.key, params)
        else:
            self.ref = cache.Table.content(table)

    @property
    def table(self):
        return self._table if self.params is None else cache.family_table(FAMILY.key, self.params)

    @property
    def shape(self) -> tuple[int, int]:
        if self.params is None:
            return self._table.shape
        params = dict(self.params)
        return params["n_positions"], params["d_model"]


def registry_params(n, d, init, std, seed) -> tuple:
    return (("d_model", d), ("init", init), ("n_positions", n), ("seed", seed), ("std", std))


def label(code: str) -> str:
    if code in INITS:
        return t(f"option.{code}")
    if code == "example":
        return t("learned.option.example")
    return t("learned.option.session", name=code.removeprefix(SESSION))


ui.intro("learned")
sessions = ui.session_tables()
source = None  # stays None when the chosen table cannot be built; the error is shown instead of the tabs
with errors_shown("setting"):
    with ui.controls():
        options = [*INITS, "example", *(SESSION + name for name in sessions)]
        code = CTL.radio("init", options, "random", text="table", names=label)
        registry = code in INITS
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
        source = Source(code, registry_params(n, d, code, std, seed))
    elif code == "example":
        source = Source(code, None, cache.example_table())
    else:
        source = Source(code, None, sessions[code.removeprefix(SESSION)])
    n_rows, width = source.shape
    kind = code if registry else "trained"
    if code == "example":
        made = cache.example_provenance()
        st.caption(
            t(
                "learned.example.provenance",
                steps=made["steps"],
                seed=made["seed"],
                first_loss=made["first_loss"],
                final_loss=made["final_loss"],
            )
        )


def table_tab() -> None:
    """The table and the cosine similarity of its positions."""
    st.subheader(t("learned.section.table"))
    named = labels("learned.table", "axis.dimension", "axis.position")
    closed_form = kind == "sinusoidal" and n_rows * width > MAX_CSV_CELLS
    grid = kind == "random" and max(n_rows, width) > figures.MAX_SIDE
    extra = ""
    if closed_form:  # sin_init(n, d) is sinusoidal(n, d): its block means in closed form, the table never held
        data = cache.sinusoidal_block_means(n_rows, width, max_side=figures.MAX_SIDE)
        fig = ui.block_means_heatmap(data, (n_rows, width), colorbar_title="PE", **named)
    elif grid:  # real entries of a large random table on a grid of rows and columns, only those rows drawn
        positions, dims, data = cache.random_grid(source.ref, figures.MAX_SIDE)
        spacing = {"dy": (n_rows - 1) / max(positions.size - 1, 1), "dx": (width - 1) / max(dims.size - 1, 1)}
        fig = heatmap(data, colorbar_title="PE", **named, **spacing)
        extra = t("learned.table.grid", rows=positions.size, n=n_rows, cols=dims.size, d=width)
    else:
        data = source.table
        fig = heatmap(data, colorbar_title="PE", **named)
    FIG.show("table", fig, data, variant=kind, extra=extra)
    if closed_form:
        positions, sim = cache.sinusoidal_similarity(n_rows, width, SIMILARITY_POSITIONS)
    else:
        positions, sim = cache.sampled_similarity(source.ref, SIMILARITY_POSITIONS)
    FIG.show("similarity", similarity_heatmap(sim, positions, n_rows), sim, variant=kind)


def projection_tab() -> None:
    """A 2-D projection of the positions, coloured by index."""
    st.subheader(t("learned.section.table"))
    method = projection.pick_method("learned")
    fig, data, sampled = projection.path(source.ref, n_rows, method, PROJECTION_POSITIONS[method])
    FIG.show("projection", fig, data, variant=kind, extra=sampled)


def spectrum_tab() -> None:
    """Which frequencies each dimension carries, against the sinusoidal ladder."""
    st.subheader(t("learned.section.spectrum"))
    st.latex(
        r"\omega_k = \mathrm{base}^{-2k/d},\qquad P_i(\omega) = \Big|\sum_p \big(PE_{p,i} - \overline{PE_i}\big)"
        r"\, e^{-\mathrm{i}\omega p}\Big|^2,\qquad \omega_{\min} = 2\pi / n"
    )
    if kind == "sinusoidal":  # the spectrum of sin_init(n, d) from its analysed columns alone
        spectrum, sinusoidal = cache.sinusoidal_spectrum(n_rows, width), None
    else:
        spectrum = cache.position_spectrum(source.ref)
        sinusoidal = cache.sinusoidal_spectrum(n_rows, width).mean_power
    ui.spectrum_views(FIG, spectrum, width, table_name=label(code), reference_power=sinusoidal, variant=kind)


def probe_chart(probes: dict, n: int, d: int, *, title: str, variant: str, chart: str) -> None:
    """The probe errors of tables of n rows and d columns, beside always guessing the middle, captioned by
    ``learned.probe.notice.<variant>``; at most PROBE_POSITIONS evenly spaced positions are read, and the caption
    says so when that is fewer than n."""
    guess = cache.constant_guess_error(n)
    names, values = [*probes, t("learned.probe.guess")], [*probes.values(), guess]
    sampled = ""
    if n > PROBE_POSITIONS:
        sampled = t("learned.probe.sampled", shown=len(analysis.evenly_spaced(n, PROBE_POSITIONS)), n=n)
    fig = figures.bars(names, values, **labels(title, "learned.axis.table", "learned.axis.probe", n=n, d=d))
    data = {"table": names, "mean_abs_error": values}
    FIG.show("probe", fig, data, variant=variant, suffix=variant, extra=sampled, chart=chart)


def initial_probes(n: int, d: int) -> dict:
    """The probe errors of the random table (the controls' spread and seed) and the sinusoidal table of n x d,
    each computed from its sampled rows only."""
    random = Source("random", registry_params(n, d, "random", std, seed))
    return {
        t("option.random"): cache.sampled_position_probe(random.ref, PROBE_POSITIONS),
        t("option.sinusoidal"): cache.sinusoidal_position_probe(n, d, PROBE_POSITIONS),
    }


def probe_metrics(probes: dict[str, float]) -> None:
    """One metric per probed table, side by side."""
    for column, (name, value) in zip(st.columns(len(probes)), probes.items(), strict=True):
        column.metric(name, t("learned.probe.value", value=value), help=t("learned.probe.help"))


def probe_tab() -> None:
    """How well a linear probe reads the position back: the tables the controls describe, and a trained one beside
    the two starts of its shape."""
    st.subheader(t("learned.section.probe"))
    if registry:  # the random and sinusoidal tables of the controls' size, then the trained example
        ui.unused_controls(t("learned.ctl.table"), reason=t("learned.unused.probe"))
        probes = initial_probes(n_rows, width)
        probe_metrics(probes)
        probe_chart(probes, n_rows, width, title="learned.probe.title", variant="init", chart="probe")
        trained = Source("example", None, cache.example_table())
    else:
        trained = source
    tn, td = trained.shape
    probes = {**initial_probes(tn, td), label(trained.code): cache.sampled_position_probe(trained.ref, PROBE_POSITIONS)}
    if not registry:
        probe_metrics(probes)
    which = "example" if trained.code == "example" else "session"
    probe_chart(probes, tn, td, title="learned.probe.title.trained", variant=which, chart="probe-trained")


def past_tab() -> None:
    """What happens past the last row: the real error and the usual workarounds."""
    st.subheader(t("learned.section.past"))
    stretch = CTL.numeric("stretch", 2, 8, 2)
    longer = n_rows * stretch
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(t("learned.past.torch", n=n_rows, position=n_rows))
        st.code(cache.torch_lookup_error(n_rows, n_rows), language=None, wrap_lines=True)
    with c2:
        st.markdown(t("learned.past.posviz"))
        st.code(core_message(cache.lookup_error(n_rows, n_rows)), language=None, wrap_lines=True)
    for method in learned.EXTENSIONS:
        where, sim = cache.extended_similarity(source.ref, longer, method, SIMILARITY_POSITIONS)
        title = t(f"learned.past.{method}", n=n_rows, longer=longer, last=longer - 1)
        FIG.show(f"past.{method}", similarity_heatmap(sim, where, longer, title=title), sim)


DRAW = {
    "table": table_tab,
    "projection": projection_tab,
    "spectrum": spectrum_tab,
    "probe": probe_tab,
    "past": past_tab,
}
if source is not None:
    ui.lazy_tabs("learned", DRAW)  # only the open tab computes
