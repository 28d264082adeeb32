"""Checkpoint inspector: the position table a trained model learned, next to the sinusoidal table of its shape."""

import json

import numpy as np
import pandas as pd
import streamlit as st

from posviz import analysis, figures
from posviz import checkpoint as ckpt
from posviz.encodings import rope_configs
from posviz.figures import inspect as inspect_figures
from posviz.figures import rope as rope_figures
from posviz.pages import script
from posviz.ui import (
    SIMILARITY_POSITIONS,
    cache,
    controls,
    errors_shown,
    heatmap,
    intro,
    lazy_tabs,
    session_tables,
    show,
    similarity_heatmap,
    spectrum_views,
    t,
    widgets,
)

ORIGINS = ("upload", "path", "cache")
UPLOAD_MB = ckpt.MAX_UPLOAD_BYTES >> 20
PROJECTION_POSITIONS = 1024
PROBE_POSITIONS = 1024
#: The distances m - n at which each head's positional score is drawn.
SCORE_DISTANCES = range(-64, 65)
PATH_KINDS = ("path", "cached")  # sources on disk: a folder with its config.json beside the weights
LEARNED_SESSION = "session:"  # the Learned page's option code for a session table


class Loaded:
    """A loaded table and cached analyses of its real positions (rows ``offset`` onwards), keyed by content."""

    def __init__(self, digest: str, found: ckpt.PositionTable, name: str):
        self.found, self.name = found, name
        self.table = found.table
        self.ref = cache.Table.content(found.table, digest=f"{digest}:{found.key}")

    @property
    def label(self) -> str:
        return f"{self.name} · {self.found.key}"

    @property
    def sinusoidal(self) -> cache.Table:
        """The sinusoidal table of the same shape, as the cached analyses take it."""
        return cache.Table.family("sinusoidal", self.sinusoidal_params)

    @property
    def sinusoidal_params(self) -> tuple:
        n, d = self.table.shape
        return (("base", 10000.0), ("d_model", d), ("layout", "interleaved"), ("n_positions", n))


def pick_source(suffix: str = "") -> tuple | None:
    """The model chosen with the source controls: ``(source, name, kind)``, or None while nothing is chosen; ``kind``
    says what the user gave ("file", "path" or "cached"), for the first words of an error about it."""
    origin = widgets.url_radio(
        t("inspect.ctl.origin"),
        list(ORIGINS),
        key=f"from{suffix}",
        default="upload",
        format_func=lambda o: t(f"inspect.origin.{o}"),
        horizontal=True,
    )
    if origin == "upload":
        upload = st.file_uploader(
            t("inspect.ctl.upload"),
            key=f"upload{suffix}",
            max_upload_size=UPLOAD_MB,
            help=t("inspect.ctl.upload.help", mb=UPLOAD_MB),
        )
        # Streamlit's uploader refuses a larger file in the browser, before the page can see it: say the limit and
        # the way round it here, where the refusal appears
        st.caption(
            t("inspect.upload.limit", mb=UPLOAD_MB, path=t("inspect.origin.path"), cache=t("inspect.origin.cache"))
        )
        return (upload.getvalue(), upload.name, "file") if upload is not None else None
    if origin == "path":
        path = st.text_input(
            t("inspect.ctl.path"),
            key=f"path{suffix}",
            bind="query-params",
            placeholder="~/models/bert-base-uncased",
            help=t("inspect.ctl.path.help"),
        ).strip()
        return (path, path, "path") if path else None
    models = ckpt.list_cached_models()  # a directory listing, read anew so a new download shows up
    if not models:
        st.info(t("inspect.cache.empty", folder=str(ckpt.hf_cache_dir())))
        return None
    names = [m.name for m in models]
    name = st.selectbox(t("inspect.ctl.cached"), names, key=f"model{suffix}", bind="query-params")
    return str(models[names.index(name)].path), name, "cached"


def load(chosen: tuple, *, key_widget: str | None) -> Loaded | None:
    """Load the chosen model's position table; with ``key_widget``, let the user pick any candidate tensor.

    A RoPE model has no table: its frequencies are shown instead (and None is returned)."""
    source, name, _ = chosen
    digest = ckpt.fingerprint(source)
    candidates = cache.candidates(digest, source, name=name)
    try:
        _, found = cache.checkpoint(source, name=name)
    except ckpt.RopeModel as exc:
        rope_model(exc)
        frequency_usage(chosen, has_weights=bool(candidates))
        return None
    except ckpt.NoPositionTable:
        if not candidates or key_widget is None:
            raise
        found = None
    if key_widget is not None:
        candidate_table(candidates)
        keys = [c.key for c in candidates]
        if found is None:
            st.info(t("inspect.pick"))
        key = st.selectbox(
            t("inspect.ctl.key"),
            keys,
            index=keys.index(found.key) if found is not None and found.key in keys else 0,
            key=key_widget,
            bind="query-params",
            help=t("inspect.ctl.key.help"),
        )
        if found is None or key != found.key:
            _, found = cache.checkpoint(source, key, name=name)
    return Loaded(digest, found, name)


def known_label(name: str | None) -> str:
    """The translated name of a known tensor family (the core names them in English), or "" for None."""
    suffix = {known.name: known.suffix for known in ckpt.KNOWN_KEYS}.get(name)
    return t(f"inspect.known.{suffix}") if suffix else (name or "")


def candidate_table(candidates) -> None:
    rows = {
        t("inspect.col.key"): [c.key for c in candidates],
        t("inspect.col.shape"): [" × ".join(map(str, c.shape)) for c in candidates],
        t("inspect.col.dtype"): [c.dtype for c in candidates],
        t("inspect.col.known"): [known_label(c.known) for c in candidates],
    }
    with st.expander(t("inspect.candidates", n=len(candidates))):
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def rope_model(exc: ckpt.RopeModel) -> None:
    """A RoPE model: no table to inspect, but its config decides every pair's frequency; show them."""
    st.info(t("inspect.rope"))
    fields = rope_configs.rope_fields(exc.config)
    found = cache.config_frequencies(json.dumps(fields, sort_keys=True))
    pairs = range(found.plain.size)
    original = found.config.original_max_position_embeddings
    contexts = {t("rope.ext.orig", L=f"{original:,}"): original} if original else {}
    show(
        rope_figures.wavelengths(
            pairs,
            {t("rope.cfg.plain"): found.plain_wavelength, t("rope.cfg.scaled"): found.scaled_wavelength},
            contexts,
            title=t("rope.cfg.wavelength"),
            x_title=t("axis.pair"),
            y_title=t("rope.axis.wavelength"),
        ),
        notice=t("rope.cfg.notice"),
        key="rope_wave",
        data={"pair": pairs, "inv_freq": found.plain, "inv_freq_scaled": found.scaled},
        name="checkpoint_rope",
    )
    st.page_link(
        script("rope"),
        label=t("inspect.open.rope"),
        icon=":material/rotate_right:",
        query_params={"tab": "config", "cfg": json.dumps(fields)},
    )


def frequency_usage(chosen: tuple, *, has_weights: bool) -> None:
    """What a RoPE model's q/k weights do with each frequency (Barbero et al., 2025), for a model read from disk:
    usage by layer x pair and by head x pair, against wavelength, the p-RoPE view and each head's score pattern.
    ``has_weights``: the source holds any 2-D tensor (a folder with only its config.json holds none)."""
    source, _, kind = chosen
    st.subheader(t("usage.heading"))
    if kind not in PATH_KINDS:
        st.info(t("usage.needs_folder", path=t("inspect.origin.path"), cache=t("inspect.origin.cache")))
        return
    if not has_weights:
        st.info(t("usage.no_weights"))
        return
    st.markdown(t("usage.intro"))
    with errors_shown(kind):
        digest, usage = cache.rope_frequency_usage(source)
        which = widgets.url_radio(
            t("usage.ctl.which"),
            ["query", "key"],
            key="usage",
            default="query",
            format_func=lambda w: t(f"usage.{w}"),
            horizontal=True,
        )
        name = t(f"usage.{which}")
        layer_usage = usage.layer_means(which)
        pairs = range(layer_usage.shape[1])
        layers = [int(n) for n in usage.layers]
        st.caption(
            t(
                "usage.summary",
                layers=len(layers),
                heads=usage.query.shape[1],
                kv_heads=usage.key.shape[1],
                head_dim=usage.head_dim,
                pairs=len(pairs),
                layout=t(f"usage.layout.{usage.layout}"),
            )
        )
        show(
            cache.usage_heatmap_figure(
                layer_usage,
                row0=layers[0],
                title=t("usage.by_layer", which=name),
                x_title=t("usage.axis.pair"),
                y_title=t("usage.axis.layer"),
                colorbar_title=t("usage.axis.usage"),
            ),
            notice=t("usage.by_layer.notice"),
            key="usage_layers",
            data=pd.DataFrame(layer_usage, index=pd.Index(layers, name="layer"), columns=[f"pair {i}" for i in pairs]),
            name="frequency_usage_layers",
        )
        layer = layers[0]
        if len(layers) > 1:
            layer = st.select_slider(
                t("usage.ctl.layer"),
                layers,
                value=layers[0],
                key="layer",
                bind="query-params",
                help=t("usage.ctl.layer.help"),
            )
        heads = (usage.query if which == "query" else usage.key)[layers.index(layer)]
        show(
            cache.usage_heatmap_figure(
                heads,
                title=t(f"usage.by_head.{which}", layer=layer),
                x_title=t("usage.axis.pair"),
                y_title=t(f"usage.axis.head.{which}"),
                colorbar_title=t("usage.axis.usage"),
            ),
            notice=t(f"usage.by_head.{which}.notice"),
            key="usage_heads",
            data=pd.DataFrame(
                heads, index=pd.Index(range(len(heads)), name="head"), columns=[f"pair {i}" for i in pairs]
            ),
            name=f"frequency_usage_layer{layer}_{which}",
        )
        context = usage.training_context
        means = {t("usage.query"): usage.pair_means("query"), t("usage.key"): usage.pair_means("key")}
        show(
            cache.usage_against_wavelength_figure(
                usage.wavelength,
                means,
                title=t("usage.wavelength"),
                x_title=t("usage.axis.wavelength"),
                y_title=t("usage.axis.mean_usage"),
                training_context=context,
                context_label=t("usage.context", n=f"{context:,}") if context else "",
            ),
            notice=t("usage.wavelength.notice" if context else "usage.wavelength.notice.nocontext", n=context),
            key="usage_wavelength",
            data={"pair": pairs, "inv_freq": usage.inv_freq, "wavelength": usage.wavelength}
            | {f"mean_{w}_usage": usage.pair_means(w) for w in ("query", "key")},
            name="frequency_usage_wavelength",
        )

        p = float(widgets.numeric(t("usage.ctl.p"), 0.0, 1.0, 0.75, key="p", step=0.05, help=t("usage.ctl.p.help")))
        dropped = cache.p_rope_dropped(usage.inv_freq, p)
        mean = usage.pair_means(which)
        share = float(cache.p_rope_share(mean, dropped))
        show(
            cache.p_rope_figure(
                usage.wavelength,
                mean,
                dropped,
                title=t("usage.prope", p=f"{p:g}", which=name),
                x_title=t("usage.axis.wavelength"),
                y_title=t("usage.axis.mean_usage"),
                kept_label=t("usage.prope.kept"),
                dropped_label=t("usage.prope.dropped"),
                share_text=t("usage.prope.share", share=f"{share:.1%}", dropped=int(dropped.sum()), pairs=len(pairs)),
            ),
            notice=t("usage.prope.notice"),
            key="usage_prope",
            data={"pair": pairs, "wavelength": usage.wavelength, f"mean_{which}_usage": mean, "dropped": dropped},
            name="frequency_usage_p_rope",
        )

        pattern = cache.head_score_pattern(digest, source, layer, SCORE_DISTANCES)
        ranked = np.argsort(-pattern.swing, kind="stable")  # the heads whose score swings most first
        show(
            cache.score_pattern_figure(
                pattern.distances,
                pattern.score[ranked],
                [t("usage.head", h=int(h)) for h in ranked],
                title=t("usage.pattern", layer=layer),
                x_title=t("usage.axis.distance"),
                y_title=t("usage.axis.score"),
            ),
            notice=t("usage.pattern.notice"),
            key="usage_pattern",
            data=pd.DataFrame(
                pattern.score.T,
                index=pd.Index(pattern.distances, name="distance"),
                columns=[f"head {h}" for h in range(len(pattern.score))],
            ),
            name=f"frequency_usage_layer{layer}_score_pattern",
        )


def hand_over(loaded: Loaded) -> None:
    """Leave the table in the session for the other pages, with a link that opens it there."""
    found = loaded.found
    tables = session_tables()
    if found.kind == "t5_bias":
        tables[loaded.label] = found.matrix
        st.page_link(
            script("relative"),
            label=t("inspect.open.relative"),
            icon=":material/compare_arrows:",
            query_params={"tab": "t5"},
        )
    else:
        tables[loaded.label] = loaded.table
        st.page_link(
            script("learned"),
            label=t("inspect.open.learned"),
            icon=":material/school:",
            query_params={"init": LEARNED_SESSION + loaded.label},
        )


def notice(key: str) -> str:
    """The "what to notice" caption ``key``, written for a table that orders its positions; for a table that reads
    like random noise or has too few positions, the caption ``key.random`` or ``key.tiny`` says what is shown
    instead (``reading`` is the core's verdict on the loaded table, None if it could not be read)."""
    suffix = "" if reading is None or reading.kind == "ordered" else f".{reading.kind}"
    return t(key + suffix, n=loaded.table.shape[0])


def show_reading() -> None:
    """The core's verdict on the loaded table: ordered, random-looking or tiny, with the probe that decides it."""
    if reading.kind == "tiny":
        st.info(t("inspect.reading.tiny", n=reading.n_positions), icon=":material/grid_on:")
        return
    probe, guess = f"{reading.probe:.1f}", f"{reading.guess:.1f}"
    if reading.kind == "ordered":
        st.markdown(t("inspect.reading.ordered", probe=probe, guess=guess))
    else:
        st.info(t("inspect.reading.random", probe=probe, guess=guess), icon=":material/grain:")


def t5_view(loaded: Loaded) -> None:
    found = loaded.found
    show(
        heatmap(
            found.matrix,
            title=t("inspect.t5", buckets=found.matrix.shape[0], heads=found.matrix.shape[1]),
            x_title=t("inspect.axis.head"),
            y_title=t("inspect.axis.bucket"),
            colorbar_title=t("inspect.axis.bias"),
        ),
        notice=t("inspect.t5.notice"),
        key="t5",
        data=found.matrix,
        name="checkpoint_t5_bias",
    )


def table_tab() -> None:
    """The stored table (offset rows marked) and the norm of every row."""
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
    show(fig, notice=notice("inspect.table.notice"), key="table", data=found.matrix, name="checkpoint_table")
    norms = cache.row_norms(loaded.ref)
    n, d = loaded.table.shape
    show(
        figures.lines(
            range(n),
            {loaded.name: norms, t("inspect.sinusoidal"): cache.sinusoidal_row_norm(n, d)},
            title=t("inspect.norms"),
            x_title=t("axis.position"),
            y_title="‖PE(p)‖",
        ),
        notice=notice("inspect.norms.notice"),
        key="norms",
        data={"position": range(n), "row_norm": norms},
        name="checkpoint_row_norms",
    )


def similarity_tab() -> None:
    """Cosine similarity of the positions, and its mean against the offset beside the sinusoidal table's."""
    positions, sim = cache.sampled_similarity(loaded.ref, SIMILARITY_POSITIONS)
    n = loaded.table.shape[0]
    show(
        similarity_heatmap(sim, positions, n),
        notice=notice("inspect.similarity.notice"),
        key="similarity",
        data=sim,
        name="checkpoint_similarity",
    )
    offsets, _, cosine = cache.strided_offset_profile(
        loaded.ref
    )  # the same shape, so the same offsets as the reference
    _, _, ref_cosine = cache.strided_offset_profile(loaded.sinusoidal)
    show(
        figures.lines(
            offsets,
            {loaded.name: cosine, t("inspect.sinusoidal"): ref_cosine},
            title=t("inspect.profile"),
            x_title=t("inspect.axis.offset"),
            y_title=t("inspect.axis.cosine"),
        ),
        notice=notice("inspect.offset.notice"),
        key="offset",
        data={"offset": offsets, "mean_cosine": cosine, "sinusoidal_mean_cosine": ref_cosine},
        name="checkpoint_offset_profile",
    )


def projection_tab() -> None:
    method = widgets.url_radio(
        t("inspect.ctl.projection"),
        list(analysis.PROJECTIONS),
        key="proj",
        default="pca",
        format_func=lambda m: t(f"learned.projection.{m}"),
        horizontal=True,
    )
    where, coords = cache.sampled_projection(loaded.ref, PROJECTION_POSITIONS, method=method)
    n = loaded.table.shape[0]
    show(
        figures.positions_path(
            where,
            coords,
            title=t("learned.projection.title", method=t(f"learned.projection.{method}")),
            x_title=t("learned.axis.component", k=1),
            y_title=t("learned.axis.component", k=2),
            colorbar_title=t("axis.position"),
        ),
        notice=notice("inspect.projection.notice")
        + (" " + t("learned.sampled", shown=len(where), n=n) if len(where) < n else ""),
        key="projection",
        data={"position": where, "x": coords[:, 0], "y": coords[:, 1]},
        name="checkpoint_projection",
    )


def spectrum_tab() -> None:
    n, d = loaded.table.shape
    spectrum_views(
        cache.position_spectrum(loaded.ref),
        d,
        table_name=loaded.name,
        notice=notice("inspect.spectrum.notice"),
        stem="checkpoint",
        reference_power=cache.sinusoidal_spectrum(n, d).mean_power,
    )


def probe_tab() -> None:
    n, d = loaded.table.shape
    random_params = (("d_model", d), ("init", "random"), ("n_positions", n), ("seed", 0), ("std", 0.02))
    probes = {
        loaded.name: reading.probe
        if reading is not None and reading.probe is not None
        else cache.sampled_position_probe(loaded.ref, PROBE_POSITIONS),
        t("inspect.sinusoidal"): cache.sampled_position_probe(loaded.sinusoidal, PROBE_POSITIONS),
        t("option.random"): cache.sampled_position_probe(cache.Table.family("learned", random_params), PROBE_POSITIONS),
        t("learned.probe.guess"): cache.constant_guess_error(n),
    }
    show(
        figures.bars(
            list(probes),
            list(probes.values()),
            title=t("learned.probe.title", n=n, d=d),
            x_title=t("learned.axis.table"),
            y_title=t("learned.axis.probe"),
        ),
        notice=notice("inspect.probe.notice"),
        key="probe",
        data={"table": list(probes), "mean_abs_error": list(probes.values())},
        name="checkpoint_probe",
    )


def findings_tab() -> None:
    """The classic findings about learned tables, each as the question it answers about the loaded table: a helix
    under PCA, how fast similarity decays with the offset and whether a linear probe reads which row comes first,
    and whether the rows get noisier past some index."""
    n = loaded.table.shape[0]
    st.markdown(t("findings.intro"))
    found = cache.principal_components(loaded.ref)
    shares = [f"{share:.0%}" for share in found.share]
    show(
        cache.components_3d_figure(
            range(n),
            found.coords,
            title=t("findings.pca"),
            axis_titles=tuple(t("findings.pc", k=k + 1, share=shares[k]) for k in range(3)),
            colorbar_title=t("axis.position"),
        ),
        notice=t("findings.pca.notice", shares=" · ".join(shares), turns=f"{abs(found.winding):.1f}"),
        key="findings_pca",
        data={"position": range(n), "pc1": found.coords[:, 0], "pc2": found.coords[:, 1], "pc3": found.coords[:, 2]},
        name="checkpoint_pca_3d",
    )
    decay = cache.similarity_decay(loaded.ref)
    half = decay.half_offset
    show(
        cache.similarity_decay_figure(
            decay.offsets,
            decay.mean,
            title=t("findings.decay"),
            x_title=t("inspect.axis.offset"),
            y_title=t("inspect.axis.cosine"),
            name=loaded.name,
            half_offset=half,
            half_label=t("findings.half", k=half) if half is not None else "",
        ),
        notice=t("findings.decay.notice" if half is not None else "findings.decay.notice.never", k=half),
        key="findings_decay",
        data={"offset": decay.offsets, "mean_cosine": decay.mean},
        name="checkpoint_similarity_decay",
    )
    error = cache.relative_order_probe(loaded.ref)
    st.markdown(t("findings.order", pairs=n, error=f"{error:.0%}"))
    rough = cache.roughness_by_position(loaded.ref)
    change = rough.change
    show(
        cache.roughness_figure(
            rough.positions,
            rough.value,
            title=t("findings.rough"),
            x_title=t("axis.position"),
            y_title=t("findings.rough.y"),
            name=loaded.name,
            change=change,
            change_label=t("findings.change", row=change) if change is not None else "",
        ),
        notice=t(
            "findings.rough.notice" if change is not None else "findings.rough.notice.short",
            row=change,
            ratio=f"{rough.ratio:.1f}",
        ),
        key="findings_rough",
        data={"position": rough.positions, "roughness": rough.value},
        name="checkpoint_roughness",
    )


def sinusoidal_tab() -> None:
    """The loaded table and the sinusoidal table of the same shape, side by side."""
    reference = cache.family_table("sinusoidal", loaded.sinusoidal_params)
    n, d = loaded.table.shape
    _, ref_sim = cache.sampled_similarity(loaded.sinusoidal, SIMILARITY_POSITIONS)
    positions, sim = cache.sampled_similarity(loaded.ref, SIMILARITY_POSITIONS)
    left, right = st.columns(2)
    for column, name, table, similarity, key in (
        (left, loaded.name, loaded.table, sim, "side_table"),
        (right, t("inspect.sinusoidal"), reference, ref_sim, "side_sinusoidal"),
    ):
        with column:
            show(
                heatmap(
                    table,
                    title=name,
                    x_title=t("axis.dimension"),
                    y_title=t("axis.position"),
                    colorbar_title="PE",
                    height=380,
                ),
                key=key,
                data=table,
                name=key,
            )
            show(
                similarity_heatmap(similarity, positions, n, title=t("figure.similarity")),
                key=f"{key}_similarity",
                data=similarity,
                name=f"{key}_similarity",
            )
    st.caption(t("inspect.side.notice", n=n, d=d))


def compare_tab() -> None:
    """A second checkpoint beside the first: similarity, its offset profile and the probe error."""
    st.markdown(t("inspect.compare.intro"))
    chosen = pick_source("2")
    if chosen is None:
        return
    other = None
    with errors_shown(chosen[2]):
        other = load(chosen, key_widget=None)
    if other is None:
        return
    if other.found.kind != "absolute":
        st.warning(t("inspect.compare.kind"))
        return
    columns = st.columns(2)
    profiles = {}
    probes = {}
    for column, item, key in zip(columns, (loaded, other), ("a", "b"), strict=True):
        positions, sim = cache.sampled_similarity(item.ref, SIMILARITY_POSITIONS)
        with column:
            show(
                similarity_heatmap(sim, positions, item.table.shape[0], title=item.label),
                key=f"compare_{key}",
                data=sim,
                name=f"compare_{key}_similarity",
            )
        offsets, _, cosine = cache.strided_offset_profile(item.ref)
        profiles[item.label] = (offsets, cosine)
        probes[item.label] = cache.sampled_position_probe(item.ref, PROBE_POSITIONS)
    fig = figures.lines(
        profiles[loaded.label][0],
        {loaded.label: profiles[loaded.label][1]},
        title=t("inspect.profile"),
        x_title=t("inspect.axis.offset"),
        y_title=t("inspect.axis.cosine"),
    )
    fig.add_scatter(x=profiles[other.label][0], y=profiles[other.label][1], mode="lines", name=other.label)
    show(
        fig,
        notice=t("inspect.compare.notice"),
        key="compare_offset",
        data={f"{name} offset": pd.Series(o) for name, (o, _) in profiles.items()}
        | {f"{name} mean_cosine": pd.Series(c) for name, (_, c) in profiles.items()},
        name="compare_offset_profile",
    )
    show(
        figures.bars(
            list(probes),
            list(probes.values()),
            title=t("inspect.compare.probe"),
            x_title=t("learned.axis.table"),
            y_title=t("learned.axis.probe"),
        ),
        notice=t("inspect.probe.notice"),
        key="compare_probe",
        data={"table": list(probes), "mean_abs_error": list(probes.values())},
        name="compare_probe",
    )


intro("inspect")
loaded = reading = None
with controls():
    chosen = pick_source()
if chosen is None:
    st.info(t("inspect.empty"))
else:
    with errors_shown(chosen[2]):
        loaded = load(chosen, key_widget="tensor")
if loaded is not None:
    found = loaded.found
    st.markdown(
        t(
            "inspect.summary",
            tensor=found.key,
            rows=found.matrix.shape[0],
            dims=found.matrix.shape[1],
            dtype=found.dtype,
            format=found.format,
            known=known_label(found.known) or t("inspect.unknown"),
        )
    )
    if found.offset:
        st.info(t("inspect.offset", offset=found.offset, rows=found.matrix.shape[0], positions=loaded.table.shape[0]))
    hand_over(loaded)
    if found.kind == "t5_bias":
        with errors_shown("table"):
            t5_view(loaded)
    else:
        with errors_shown("table"):
            reading = cache.read_table(loaded.ref, PROBE_POSITIONS)
            show_reading()
        DRAW = {
            "table": table_tab,
            "similarity": similarity_tab,
            "projection": projection_tab,
            "spectrum": spectrum_tab,
            "probe": probe_tab,
            "findings": findings_tab,
            "sinusoidal": sinusoidal_tab,
            "compare": compare_tab,
        }
        lazy_tabs("inspect", DRAW, kind="table")  # only the open tab computes
