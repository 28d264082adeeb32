"""Sinusoidal: the fixed table of Vaswani et al. and its similarity structure."""

import streamlit as st

import posviz
from posviz import figures
from posviz.ui import SIMILARITY_POSITIONS, cache, errors_shown, intro, show, t, widgets

FAMILY = posviz.family("sinusoidal")

intro("sinusoidal")
with errors_shown():
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=4096)
    with c2:
        d = widgets.number(FAMILY.param("d_model"), key="d", maximum=1024)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")
    with c4:
        layout = widgets.choice(FAMILY.param("layout"), key="layout")
    params = (("base", base), ("d_model", d), ("layout", layout), ("n_positions", n))

    table = cache.family_matrix(FAMILY.key, params)
    show(
        figures.heatmap(
            table,
            title=t("sinusoidal.table"),
            x_title=t("axis.dimension"),
            y_title=t("axis.position"),
            colorbar_title="PE",
            downsampled_note=t("figure.downsampled"),
        ),
        notice=t("sinusoidal.table.notice"),
    )

    positions, sim = cache.similarity(FAMILY.key, params, SIMILARITY_POSITIONS)
    step = (n - 1) / max(len(positions) - 1, 1) if len(positions) < n else 1.0
    show(
        figures.heatmap(
            sim,
            title=t("figure.similarity"),
            x_title=t("axis.position"),
            y_title=t("axis.position"),
            zmin=-1.0,
            zmax=1.0,
            dx=step,
            dy=step,
            colorbar_title="cos",
            downsampled_note=t("figure.downsampled"),
        ),
        notice=t("sinusoidal.similarity.notice"),
    )
