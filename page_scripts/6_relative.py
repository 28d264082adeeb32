"""Relative positions: Shaw et al.'s clipped index and T5's buckets, with a learned (or synthetic) bias table."""

import numpy as np
import streamlit as st

import posviz
from posviz.ui import controls, intro, lazy_tabs, session_tables, t, views, widgets
from posviz.ui.views import relative as relative_views

SHAW, T5 = posviz.family("shaw"), posviz.family("t5")
T5_TABLE = "relative_attention_bias"


def _learned_t5_table():
    """The first session table whose name says it is T5's relative attention bias, as a view takes it (its name,
    its shape and its values row by row), or None."""
    found = sorted((n, a) for n, a in session_tables().items() if T5_TABLE in n and np.ndim(a) == 2)
    if not found:
        return None
    name, table = found[0]
    table = np.asarray(table)
    return name, table.shape, tuple(table.ravel().tolist())


intro("relative")


def shaw_tab() -> None:
    """Shaw et al.: the clipped relative index and what the clip distance does."""
    with controls():
        c1, c2 = st.columns(2)
        with c1:
            length = widgets.number(SHAW.param("seq_len"), key="shaw_len", maximum=512)
        with c2:
            clip = widgets.number(SHAW.param("max_relative_position"), key="shaw_k", maximum=128)
    st.latex(r"a_{ij} = \operatorname{clip}(j - i,\,-k,\,k) + k \in \{0, \dots, 2k\}")
    views.draw(relative_views.shaw(length, clip))


def t5_tab() -> None:
    """T5: the bucket of every relative distance, and a learned bias table when the session has one."""
    with controls():
        c1, c2, c3, c4 = st.columns(4)
        with c1:
            length = widgets.number(T5.param("seq_len"), key="t5_len", maximum=1024)
        with c2:
            buckets = widgets.number(T5.param("num_buckets"), key="t5_buckets", maximum=128)
        with c3:
            max_distance = widgets.number(T5.param("max_distance"), key="t5_max_distance", maximum=1024)
        with c4:
            bidirectional = widgets.toggle(T5.param("bidirectional"), key="t5_bidirectional")
    views.draw(relative_views.t5_matrix(length, buckets, max_distance, bidirectional))
    st.latex(
        r"b(n) = \begin{cases} n & n < E \\ \min\!\left(B - 1,\ E + \left\lfloor \dfrac{\ln(n/E)}{\ln(D/E)}"
        r"\,(B - E) \right\rfloor\right) & n \ge E \end{cases}"
    )
    views.draw(relative_views.t5_buckets(buckets, max_distance, bidirectional))

    st.subheader(t("relative.t5.bias.header"))
    learned = _learned_t5_table()
    # which table is read is said before it is read: above the error a table that cannot be read raises
    if learned is None:
        st.info(t("relative.t5.bias.none"))
        views.draw(relative_views.t5_bias(buckets, max_distance, bidirectional))
    else:
        name, shape, values = learned
        st.caption(t("relative.t5.bias.learned.note", b=shape[0], d=max_distance))
        views.draw(relative_views.t5_learned_bias(name, shape, values, max_distance, bidirectional))


DRAW = {"shaw": shaw_tab, "t5": t5_tab}
lazy_tabs("relative", DRAW, label="{page}.{code}")  # only the open tab computes
