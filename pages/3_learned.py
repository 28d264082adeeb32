"""Learned absolute: BERT's random initial table and a sinusoidal-initialised one."""

import streamlit as st

import posviz
from posviz.ui import errors_shown, intro, t, table_and_similarity, widgets

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

    table_and_similarity(
        FAMILY.key,
        params,
        title=t("learned.table"),
        table_notice=t(f"learned.table.notice.{init}"),
        similarity_notice=t(f"learned.similarity.notice.{init}"),
    )
