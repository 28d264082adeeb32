"""XLNet two-stream attention: content and query masks for a factorisation order."""

import numpy as np
import streamlit as st

import posviz
from posviz.ui import cache, errors_shown, heatmap, intro, show, t, widgets

FAMILY = posviz.family("xlnet")


def _shuffle() -> None:
    """Next seed, wrapping round at the largest one."""
    st.session_state["seed"] = int(st.session_state.get("seed", 0)) % int(FAMILY.param("seed").maximum) + 1


intro("xlnet")
with errors_shown():
    c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
    with c1:
        length = widgets.number(FAMILY.param("seq_len"), key="len", maximum=32)
    with c2:
        seed = widgets.number(FAMILY.param("seed"), key="seed", slider=False)
    with c3:
        st.button(t("xlnet.shuffle"), on_click=_shuffle, icon=":material/shuffle:")
    order = cache.call(posviz.factorisation_order, length, seed)
    st.markdown(t("xlnet.order", order=" → ".join(str(i) for i in order)))
    content, query = cache.call(posviz.xlnet_masks, tuple(order.tolist()))
    left, right = st.columns(2)
    with left:
        show(
            heatmap(
                content.astype(np.float64),
                title=t("xlnet.content"),
                x_title=t("axis.key_token"),
                y_title=t("axis.query_token"),
                colorscale="Blues",
                zmin=0.0,
                zmax=1.0,
                zmid=None,
                colorbar_title=t("axis.may_attend"),
            ),
            notice=t("xlnet.content.notice"),
        )
    with right:
        show(
            heatmap(
                query.astype(np.float64),
                title=t("xlnet.query"),
                x_title=t("axis.key_token"),
                y_title=t("axis.query_token"),
                colorscale="Oranges",
                zmin=0.0,
                zmax=1.0,
                zmid=None,
                colorbar_title=t("axis.may_attend"),
            ),
            notice=t("xlnet.query.notice"),
        )
