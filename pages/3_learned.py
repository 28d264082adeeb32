"""Learned absolute: BERT's random initial table and a sinusoidal-initialised one."""

import streamlit as st

import posviz
from posviz import figures
from posviz.ui import SIMILARITY_POSITIONS, cache, errors_shown, intro, show, t, widgets

FAMILY = posviz.family("learned")

intro("learned")
with errors_shown():
    c1, c2, c3, c4, c5 = st.columns(5)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=4096)
    with c2:
        d = widgets.number(FAMILY.param("d_model"), key="d", maximum=1024)
    with c3:
        init = widgets.choice(FAMILY.param("init"), key="init")
    with c4:
        std = widgets.number(FAMILY.param("std"), key="std", slider=False, disabled=init != "random")
    with c5:
        seed = widgets.number(FAMILY.param("seed"), key="seed", slider=False, disabled=init != "random")
    params = (("d_model", d), ("init", init), ("n_positions", n), ("seed", seed), ("std", std))

    table = cache.family_matrix(FAMILY.key, params)
    show(
        figures.heatmap(
            table,
            title=t("learned.table"),
            x_title=t("axis.dimension"),
            y_title=t("axis.position"),
            colorbar_title="PE",
            downsampled_note=t("figure.downsampled"),
        ),
        notice=t(f"learned.table.notice.{init}"),
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
        notice=t(f"learned.similarity.notice.{init}"),
    )
