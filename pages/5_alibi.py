"""ALiBi: per-head slopes and the bias they add to attention scores."""

import streamlit as st

import posviz
from posviz import figures
from posviz.ui import cache, errors_shown, heatmap, intro, show, t, widgets

FAMILY = posviz.family("alibi")

intro("alibi")
with errors_shown():
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n_heads = widgets.number(FAMILY.param("n_heads"), key="heads", maximum=64)
    with c2:
        seq_len = widgets.number(FAMILY.param("seq_len"), key="len", maximum=1024)
    with c3:
        head = widgets.number(FAMILY.param("head"), key="head", maximum=n_heads - 1) if n_heads > 1 else 0
    with c4:
        causal = widgets.toggle(FAMILY.param("causal"), key="causal")

    slopes = cache.call(posviz.alibi_slopes, n_heads)
    show(
        figures.bars(
            [str(h) for h in range(n_heads)],
            slopes,
            title=t("alibi.slopes"),
            x_title=t("axis.head"),
            y_title=t("axis.slope"),
            log_y=True,
        ),
        notice=t("alibi.slopes.notice"),
    )

    params = (("causal", causal), ("head", head), ("n_heads", n_heads), ("seq_len", seq_len))
    bias = cache.family_matrix(FAMILY.key, params)
    show(
        heatmap(
            bias,
            title=t("alibi.bias", head=head, slope=f"{slopes[head]:.4g}"),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            colorscale="Viridis",
            zmid=None,
            colorbar_title=t("axis.bias"),
        ),
        notice=t("alibi.bias.notice.causal" if causal else "alibi.bias.notice.symmetric"),
    )
