"""A RoPE model in the inspector: it has no table, but its config decides every pair's frequency, and its q/k weights
show what each layer and head does with each frequency. The figures are the views of ``posviz.ui.views.inspect_usage``;
here are the controls that choose them (the rotary group, the projection, the layer, p-RoPE's p) and the link to the
RoPE page."""

from __future__ import annotations

import json

import streamlit as st

from posviz.models import rope_configs

from .. import errors_shown, menu, t, views, widgets
from ..views import inspect_usage as usage_views

CTL = widgets.Controls("usage")
PATH_KINDS = ("path", "cached")  # sources on disk: a folder with its config.json beside the weights


def rope_model(exc) -> None:
    """The wavelength of every pair of the RoPE model ``exc`` (a ``checkpoint.RopeModel``) names in its config, plain
    and as its scaling makes it, and a link that opens the config on the RoPE page."""
    st.info(t("inspect.rope"))
    fields = rope_configs.rope_fields(exc.config)
    views.draw(usage_views.config(json.dumps(fields, sort_keys=True)))
    st.page_link(
        menu.page("rope"),
        label=t("inspect.open.rope"),
        icon=":material/rotate_right:",
        query_params={"tab": "config", "cfg": json.dumps(fields)},
    )


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
            layers=usage_views.ranges(groups[g].layers),
            head_dim=groups[g].head_dim,
            pairs=groups[g].turning_pairs,
        ),
        key="group",
        bind="query-params",
        help=t("usage.ctl.group.help"),
    )


def frequency_usage(chosen: tuple, digest: str, *, has_weights: bool) -> None:
    """What a RoPE model's q/k weights do with each frequency, for a model read from disk (``chosen`` as
    ``source.pick_source`` gives it, ``digest`` its fingerprint): usage by layer x pair and by head x pair, against
    the wavelength, the p-RoPE view and each head's score against the distance. ``has_weights``: the source holds
    any 2-D tensor (a folder with only its config.json holds none)."""
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
        model = usage_views.Model(digest, source)
        usage = usage_views.frequency_usage(model)  # its groups and layers, for the controls
        group = _group(usage)
        if group != usage.group:
            usage = usage_views.frequency_usage(model, group)
        group = int(usage.group)
        which = CTL.radio("usage", ["query", "key"], "query", text="which", names="usage")
        views.draw(usage_views.summary(model, group))
        views.draw(usage_views.by_layer(model, group, which))
        layers = [int(n) for n in usage.layers]
        layer = layers[0]
        if len(layers) > 1:
            layer = st.select_slider(
                t("usage.ctl.layer"),
                layers,
                value=layers[0],
                key="layer" if group == 0 else f"layer.g{group}",  # each group its own layers
                bind="query-params",
                help=t("usage.ctl.layer.help"),
            )
        views.draw(usage_views.by_head(model, group, which, layer))
        views.draw(usage_views.wavelength(model, group))
        p = float(CTL.numeric("p", 0.0, 1.0, 0.75, step=0.05))
        views.draw(usage_views.prope(model, group, which, p))
        views.draw(usage_views.pattern(model, group, layer))
