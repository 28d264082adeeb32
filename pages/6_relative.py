"""Relative positions: Shaw et al.'s clipped index and T5's buckets."""

import numpy as np
import streamlit as st

import posviz
from posviz import figures
from posviz.ui import cache, errors_shown, heatmap, intro, show, t, widgets

SHAW, T5 = posviz.family("shaw"), posviz.family("t5")

intro("relative")
shaw_tab, t5_tab = st.tabs([t("relative.shaw"), t("relative.t5")])
with shaw_tab, errors_shown():
    c1, c2 = st.columns(2)
    with c1:
        length = widgets.number(SHAW.param("seq_len"), key="shaw_len", maximum=512)
    with c2:
        clip = widgets.number(SHAW.param("max_relative_position"), key="shaw_k", maximum=128)
    index = cache.family_matrix(SHAW.key, (("max_relative_position", clip), ("seq_len", length)))
    show(
        heatmap(
            index,
            title=t("relative.shaw.index", k=clip),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            colorscale="RdBu_r",
            zmid=float(clip),
            colorbar_title=t("axis.index"),
        ),
        notice=t("relative.shaw.notice"),
    )

with t5_tab, errors_shown():
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        length = widgets.number(T5.param("seq_len"), key="t5_len", maximum=1024)
    with c2:
        buckets = widgets.number(T5.param("num_buckets"), key="t5_buckets", maximum=128)
    with c3:
        max_distance = widgets.number(T5.param("max_distance"), key="t5_max_distance", maximum=1024)
    with c4:
        bidirectional = widgets.toggle(T5.param("bidirectional"), key="t5_bidirectional")
    params = (
        ("bidirectional", bidirectional),
        ("max_distance", max_distance),
        ("num_buckets", buckets),
        ("seq_len", length),
    )
    matrix = cache.family_matrix(T5.key, params)
    show(
        heatmap(
            matrix,
            title=t("relative.t5.matrix"),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            colorscale="Turbo",
            zmid=None,
            colorbar_title=t("axis.bucket"),
        ),
        notice=t("relative.t5.matrix.notice"),
    )
    offsets = np.arange(-2 * max_distance, 2 * max_distance + 1)
    curve = cache.call(
        posviz.t5_relative_bucket,
        tuple(offsets.tolist()),
        bidirectional=bidirectional,
        num_buckets=buckets,
        max_distance=max_distance,
    )
    show(
        figures.lines(
            offsets,
            {t("axis.bucket"): curve},
            title=t("relative.t5.curve"),
            x_title=t("axis.relative"),
            y_title=t("axis.bucket"),
        ),
        notice=t("relative.t5.curve.notice"),
    )
