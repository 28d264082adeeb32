"""Sinusoidal: the fixed table of Vaswani et al. and its similarity structure."""

import streamlit as st

import posviz
from posviz.ui import errors_shown, intro, t, table_and_similarity, widgets

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

    table_and_similarity(
        FAMILY.key,
        params,
        title=t("sinusoidal.table"),
        table_notice=t("sinusoidal.table.notice"),
        similarity_notice=t("sinusoidal.similarity.notice"),
    )
