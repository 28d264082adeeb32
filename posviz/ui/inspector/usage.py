"""A RoPE model in the inspector: it has no table, but its config decides every pair's frequency, and its q/k weights
show what each layer and head does with each frequency (Barbero et al., 2025, "Round and Round We Go! What makes
Rotary Positional Encodings useful?", arXiv:2410.06205); the numbers are ``posviz.lessons.frequency_usage``'s."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from posviz.figures import rope as rope_figures
from posviz.models import rope_configs

from .. import Figures, cache, errors_shown, menu, t, widgets

FIG = Figures("usage")
CTL = widgets.Controls("usage")
PATH_KINDS = ("path", "cached")  # sources on disk: a folder with its config.json beside the weights
#: The distances m - n at which each head's positional score is drawn.
SCORE_DISTANCES = range(-64, 65)


def rope_model(exc) -> None:
    """The wavelength of every pair of the RoPE model ``exc`` (a ``checkpoint.RopeModel``) names in its config, plain
    and as its scaling makes it, and a link that opens the config on the RoPE page."""
    st.info(t("inspect.rope"))
    fields = rope_configs.rope_fields(exc.config)
    found = cache.config_frequencies(json.dumps(fields, sort_keys=True))
    pairs = range(found.plain.size)
    original = found.config.original_max_position_embeddings
    contexts = {t("rope.ext.orig", L=f"{original:,}"): original} if original else {}
    fig = rope_figures.wavelengths(
        pairs,
        {t("rope.cfg.plain"): found.plain_wavelength, t("rope.cfg.scaled"): found.scaled_wavelength},
        contexts,
        title=t("rope.cfg.wavelength"),
        x_title=t("axis.pair"),
        y_title=t("rope.axis.wavelength"),
    )
    Figures("rope").show("cfg", fig, {"pair": pairs, "inv_freq": found.plain, "inv_freq_scaled": found.scaled})
    st.page_link(
        menu.page("rope"),
        label=t("inspect.open.rope"),
        icon=":material/rotate_right:",
        query_params={"tab": "config", "cfg": json.dumps(fields)},
    )


def _by_pair(matrix, rows: str, index) -> pd.DataFrame:
    """A (rows x pairs) usage table for its CSV: one row per ``rows`` (``index`` its labels), one column per pair."""
    return pd.DataFrame(matrix, index=pd.Index(index, name=rows), columns=[f"pair {i}" for i in range(matrix.shape[1])])


def _group(usage) -> int:
    """The rotary group to show: a control when the model's layers rotate in more than one way (each group has its
    own frequency axis, so groups are shown one at a time, never mixed)."""
    groups = usage.groups
    if len(groups) < 2:
        return usage.group
    return st.selectbox(
        t("usage.ctl.group"),
        list(range(len(groups))),
        format_func=lambda g: t(
            "usage.group.option",
            layers=_ranges(groups[g].layers),
            head_dim=groups[g].head_dim,
            pairs=groups[g].turning_pairs,
        ),
        key="group",
        bind="query-params",
        help=t("usage.ctl.group.help"),
    )


def _ranges(numbers) -> str:
    """0, 1, 2, 5 -> '0–2, 5' (the page language's list separator: '0–2、5' in Chinese)."""
    out: list[list[int]] = []
    for n in sorted(int(x) for x in numbers):
        if out and n == out[-1][-1] + 1:
            out[-1].append(n)
        else:
            out.append([n])
    return t("list.sep").join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in out)


def _captions(usage, pairs: int) -> None:
    """What was measured: heads, the pairing the model uses, and what was left out (other groups, NoPE layers,
    zero-frequency pairs), each in a sentence."""
    st.caption(
        t(
            "usage.summary",
            layers=len(usage.layers),
            heads=usage.query.shape[1],
            kv_heads=usage.key.shape[1],
            head_dim=usage.head_dim,
            pairs=pairs,
            layout=t(f"usage.layout.{usage.layout}"),
        )
    )
    if usage.mla:
        st.caption(t("usage.mla", rope=usage.rotary_dim, head_dim=usage.head_dim))
    if usage.zero_frequency_pairs:
        st.caption(t("usage.zero_pairs", n=usage.zero_frequency_pairs))
    if usage.kv_shared:
        shared = t("list.sep").join(t("usage.kv_shared.one", layer=n, source=m) for n, m in usage.kv_shared.items())
        st.caption(t("usage.kv_shared", pairs=shared))
    if usage.head_norms:
        st.caption(t("usage.head_norms", norms=t("list.sep").join(f"`{n}`" for n in usage.head_norms)))
    if usage.other_groups:
        others = [_ranges(g.layers) for g in usage.other_groups]
        st.caption(t("usage.groups", n=len(usage.groups), others="; ".join(others)))
    if usage.nope_layers:
        st.caption(t("usage.nope", layers=_ranges(usage.nope_layers), n=len(usage.nope_layers)))


def frequency_usage(chosen: tuple, *, has_weights: bool) -> None:
    """What a RoPE model's q/k weights do with each frequency, for a model read from disk (``chosen`` as
    ``source.pick_source`` gives it): usage by layer x pair and by head x pair, against the wavelength, the p-RoPE
    view and each head's score against the distance. ``has_weights``: the source holds any 2-D tensor (a folder with
    only its config.json holds none)."""
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
        group = _group(usage)
        if group != usage.group:
            digest, usage = cache.rope_frequency_usage(source, group=group)
        which = CTL.radio("usage", ["query", "key"], "query", text="which", names="usage")
        name = t(f"usage.{which}")
        layer_usage = usage.layer_means(which)
        pairs = range(layer_usage.shape[1])
        layers = [int(n) for n in usage.layers]
        _captions(usage, len(pairs))
        usage_axes = {"x_title": t("usage.axis.pair"), "colorbar_title": t("usage.axis.usage")}
        fig = cache.usage_heatmap_figure(
            layer_usage,
            rows=layers,
            title=t("usage.by_layer", which=name),
            y_title=t("usage.axis.layer"),
            **usage_axes,
        )
        FIG.show("by_layer", fig, _by_pair(layer_usage, "layer", layers))
        layer = layers[0]
        if len(layers) > 1:
            layer = st.select_slider(
                t("usage.ctl.layer"),
                layers,
                value=layers[0],
                key="layer" if usage.group == 0 else f"layer.g{usage.group}",  # each group its own layers
                bind="query-params",
                help=t("usage.ctl.layer.help"),
            )
        heads = (usage.query if which == "query" else usage.key)[layers.index(layer)]
        fig = cache.usage_heatmap_figure(
            heads, title=t(f"usage.by_head.{which}", layer=layer), y_title=t(f"usage.axis.head.{which}"), **usage_axes
        )
        FIG.show(f"by_head.{which}", fig, _by_pair(heads, "head", range(len(heads))), suffix=f"layer{layer}")

        context = usage.training_context
        fig = cache.usage_against_wavelength_figure(
            usage.wavelength,
            {t("usage.query"): usage.pair_means("query"), t("usage.key"): usage.pair_means("key")},
            title=t("usage.wavelength"),
            x_title=t("usage.axis.wavelength"),
            y_title=t("usage.axis.mean_usage"),
            training_context=context,
            context_label=t("usage.context", n=f"{context:,}") if context else "",
        )
        means = {f"mean_{w}_usage": usage.pair_means(w) for w in ("query", "key")}
        data = {"pair": pairs, "inv_freq": usage.inv_freq, "wavelength": usage.wavelength} | means
        FIG.show("wavelength", fig, data, variant=None if context else "nocontext", n=context)

        p = float(CTL.numeric("p", 0.0, 1.0, 0.75, step=0.05))
        dropped = cache.p_rope_dropped(usage.inv_freq, p)
        mean = usage.pair_means(which)
        share = float(cache.p_rope_share(mean, dropped))
        fig = cache.p_rope_figure(
            usage.wavelength,
            mean,
            dropped,
            title=t("usage.prope", p=f"{p:g}", which=name),
            x_title=t("usage.axis.wavelength"),
            y_title=t("usage.axis.mean_usage"),
            kept_label=t("usage.prope.kept"),
            dropped_label=t("usage.prope.dropped"),
            share_text=t("usage.prope.share", share=f"{share:.1%}", dropped=int(dropped.sum()), pairs=len(pairs)),
        )
        data = {"pair": pairs, "wavelength": usage.wavelength, f"mean_{which}_usage": mean, "dropped": dropped}
        FIG.show("prope", fig, data)

        if usage.mla:  # its queries and keys pass through a norm of a latent: no score of a constant input
            st.info(t("usage.pattern.mla"))
            return
        pattern = cache.head_score_pattern(digest, source, layer, SCORE_DISTANCES)
        ranked = np.argsort(-pattern.swing, kind="stable")  # the heads whose score swings most first
        fig = cache.score_pattern_figure(
            pattern.distances,
            pattern.score[ranked],
            [t("usage.head", h=int(h)) for h in ranked],
            title=t("usage.pattern", layer=layer),
            x_title=t("usage.axis.distance"),
            y_title=t("usage.axis.score"),
        )
        data = pd.DataFrame(
            pattern.score.T,
            index=pd.Index(pattern.distances, name="distance"),
            columns=[f"head {h}" for h in range(len(pattern.score))],
        )
        FIG.show("pattern", fig, data, suffix=f"layer{layer}")
