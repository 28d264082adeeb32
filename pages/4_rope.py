"""RoPE: the rotation angle of every pair and the score that depends only on m - n."""

import streamlit as st

import posviz
from posviz.ui import cache, errors_shown, heatmap, intro, show, t, widgets

FAMILY = posviz.family("rope")

intro("rope")
with errors_shown():
    c1, c2, c3 = st.columns(3)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=2048)
    with c2:
        head_dim = widgets.number(FAMILY.param("head_dim"), key="head_dim", maximum=512)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")
    params = (("base", base), ("head_dim", head_dim), ("n_positions", n))

    table = cache.family_matrix(FAMILY.key, params)
    show(
        heatmap(
            table,
            title=t("rope.table"),
            x_title=t("axis.pair"),
            y_title=t("axis.position"),
            zmin=-1.0,
            zmax=1.0,
            colorbar_title="cos",
        ),
        notice=t("rope.table.notice"),
    )

    scores = cache.call(posviz.rope_score_matrix, n, head_dim, base=base)
    show(
        heatmap(
            scores,
            title=t("rope.scores"),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            zmin=-1.0,
            zmax=1.0,
            colorbar_title="q·k / d",
        ),
        notice=t("rope.scores.notice"),
    )
