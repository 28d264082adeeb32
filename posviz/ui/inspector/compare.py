"""The inspector's compare tab: a second checkpoint, chosen with its own source controls, beside the first."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from posviz import figures

from .. import SIMILARITY_POSITIONS, cache, errors_shown, similarity_heatmap, t
from .source import Loaded, load, pick_source
from .tables import FIG, PROBE_POSITIONS, show_probes


def compare(loaded: Loaded) -> None:
    """The similarity of both tables side by side, their mean similarity against the offset, and the probe error of
    each; the second table must be an absolute position table too."""
    st.markdown(t("inspect.compare.intro"))
    chosen = pick_source("2")
    if chosen is None:
        return
    other = None
    with errors_shown(chosen[2]):
        other = load(chosen, key=None)
    if other is None:
        return
    if other.found.kind != "absolute":
        st.warning(t("inspect.compare.kind"))
        return
    profiles, probes = {}, {}
    for column, item, key in zip(st.columns(2), (loaded, other), ("a", "b"), strict=True):
        positions, sim = cache.sampled_similarity(item.ref, SIMILARITY_POSITIONS)
        with column:
            fig = similarity_heatmap(sim, positions, item.table.shape[0], title=item.label)
            FIG.show(f"compare.{key}", fig, sim, captioned=False)
        offsets, _, cosine = cache.strided_offset_profile(item.ref)
        profiles[item.label] = (offsets, cosine)
        probes[item.label] = cache.sampled_position_probe(item.ref, PROBE_POSITIONS)
    fig = figures.lines(
        None, profiles, title=t("inspect.profile"), x_title=t("inspect.axis.offset"), y_title=t("inspect.axis.cosine")
    )
    data = {f"{name} offset": pd.Series(o) for name, (o, _) in profiles.items()}
    FIG.show("compare", fig, data | {f"{name} mean_cosine": pd.Series(c) for name, (_, c) in profiles.items()})
    show_probes(probes, t("inspect.compare.probe"), suffix="compare")
