"""XLNet: Transformer-XL's relative positions (R_{i-j}, the four terms of a score, memory), then the content and query
masks of a factorisation order, read for one token."""

import streamlit as st

import posviz
from posviz.ui import controls, errors_shown, intro, t, views, widgets
from posviz.ui.views import xlnet as xlnet_views

FAMILY = posviz.family("xlnet")
CTL = widgets.Controls("xlnet")
MAX_MEMORY = 16


def _shuffle() -> None:
    """Next seed, wrapping round at the largest one; a typed order gives way to the shuffled one."""
    seed = int(st.session_state.get("seed", FAMILY.param("seed").default))
    st.session_state["seed"] = seed % int(FAMILY.param("seed").maximum) + 1
    st.session_state["order"] = ""


def _clamped(key: str, n: int) -> None:
    """A token index kept in the session (or the URL) that the current order no longer has becomes its last one."""
    if isinstance(st.session_state.get(key), int) and st.session_state[key] >= n:
        st.session_state[key] = n - 1


def relative_positions(order: tuple[int, ...]) -> None:
    """Transformer-XL's relative encoding for the segment of the chosen order: R_{i-j} by offset, the four terms of one
    query's score, and the memory that relative offsets make possible."""
    n = len(order)
    st.subheader(t("txl.heading"))
    left, right = st.columns(2, vertical_alignment="bottom")
    with left:
        mem = CTL.numeric("mem", 0, MAX_MEMORY, 4)
    with right:
        _clamped("q", n)
        query = st.select_slider(
            t("xlnet.ctl.q"),
            list(range(n)),
            value=n - 1,
            key="q",
            bind="query-params",
            help=t("xlnet.ctl.q.help"),
        )
    views.draw(xlnet_views.relative_embedding(n, mem))

    st.markdown(t("txl.terms.intro"))
    st.latex(
        r"A_{i,j} = \underbrace{q_i^\top k_j}_{(a)} + \underbrace{q_i^\top W_{k,R} R_{i-j}}_{(b)}"
        r" + \underbrace{u^\top k_j}_{(c)} + \underbrace{v^\top W_{k,R} R_{i-j}}_{(d)},"
        r"\qquad q_i = W_q h_i,\ k_j = W_{k,E}\, h_j"
    )
    views.draw(xlnet_views.score_terms(n, mem, query))
    views.draw(xlnet_views.query_keys(order, query, mem))
    views.draw(xlnet_views.memory(n, mem))


def two_streams(order: tuple[int, ...]) -> None:
    """The content and query masks of the order, the chosen token's row outlined and read in words, then the order
    as a rank per position."""
    st.subheader(t("txl.masks.heading"))
    _clamped("tok", len(order))
    token = st.select_slider(
        t("xlnet.ctl.token"),
        list(range(len(order))),
        value=min(1, len(order) - 1),
        key="tok",
        bind="query-params",
        help=t("xlnet.ctl.token.help"),
    )
    left, right = st.columns(2)
    with left:
        views.draw(xlnet_views.mask(order, token, "content"))
    with right:
        views.draw(xlnet_views.mask(order, token, "query"))
    views.draw(xlnet_views.reading(order, token))
    st.latex(
        r"h_{z_t} \leftarrow \mathrm{Attention}(Q = h_{z_t},\ KV = h_{z_{\le t}}),\qquad "
        r"g_{z_t} \leftarrow \mathrm{Attention}(Q = g_{z_t},\ KV = h_{z_{< t}})"
    )
    views.draw(xlnet_views.ranks(order))


intro("xlnet")
with controls():
    c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
    with c1:
        length = widgets.number(FAMILY.param("seq_len"), key="len", maximum=xlnet_views.MAX_TOKENS)
    with c2:
        seed = widgets.number(FAMILY.param("seed"), key="seed", slider=False)
    with c3:
        st.button(t("xlnet.shuffle"), on_click=_shuffle, icon=":material/shuffle:")
    typed = st.text_input(
        t("xlnet.ctl.order"),
        key="order",
        bind="query-params",
        placeholder="3,1,0,2",
        help=t("xlnet.ctl.order.help"),
    )
# with a typed order, the order is all the page reads: length and seed are not used
with errors_shown("order" if typed.strip() else "setting"):
    order = xlnet_views.chosen_order(typed, length, seed)
    views.draw(xlnet_views.summary(order, bool(typed.strip())))
    relative_positions(order)
    two_streams(order)
