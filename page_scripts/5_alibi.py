"""ALiBi: per-head slopes, where they come from, the bias they add and what it does to attention."""

import functools

import streamlit as st

import posviz
from posviz.ui import controls, errors_shown, intro, lazy_tabs, t, unused_controls, views, widgets
from posviz.ui.views import alibi as alibi_views

CTL = widgets.Controls("alibi")

FAMILY = posviz.family("alibi")
CHECKED_HEAD_COUNTS = (8, 12, 16)


def _clamped(key: str, hi: int) -> None:
    """Keep a remembered slider value inside a range that has just shrunk."""
    if isinstance(st.session_state.get(key), int) and st.session_state[key] > hi:
        st.session_state[key] = hi


def bias_tab(n_heads, seq_len, head, causal):
    """Every head's slope, and the bias matrix of the chosen head."""
    views.draw(alibi_views.slopes(n_heads))
    views.draw(alibi_views.bias(n_heads, seq_len, head, causal))


def origin_tab(n_heads):
    """Where the slopes of a head count that is not a power of two come from."""
    st.subheader(t("alibi.origin.header"))
    unused_controls(t("param.seq_len"), t("param.head"), t("param.causal"), reason=t("alibi.unused.origin"))
    with errors_shown("setting"):
        st.markdown(t("alibi.origin.text"))
        st.latex(
            r"m_h = 2^{-8(h+1)/c}\ (h = 0..c-1),\qquad m_{c+t} = 2^{-8(2t+1)/(2c)}\ (t = 0..n-c-1),"
            r"\qquad c = 2^{\lfloor \log_2 n \rfloor}"
        )
        views.draw(alibi_views.ladder(n_heads))


def article_tab():
    """The article's slope formula against the paper's."""
    st.subheader(t("alibi.article.header"))
    unused_controls(
        t("param.n_heads"), t("param.seq_len"), t("param.head"), t("param.causal"), reason=t("alibi.unused.article")
    )
    with errors_shown("setting"):
        st.markdown(t("alibi.article.text"))
        paper_rule, article_rule = t("alibi.article.paper"), t("alibi.article.article")
        st.latex(
            rf"\text{{{paper_rule}: }} m_k = 2^{{-8k/n}}\qquad \text{{{article_rule}: }} m_k = 2^{{-(7+k)/n}},"
            r"\qquad k = 1..n"
        )
        views.draw(alibi_views.article(CHECKED_HEAD_COUNTS))


def row_tab(n_heads, seq_len):
    """One query's softmax row with and without the bias, and each head's span."""
    st.subheader(t("alibi.row.header"))
    unused_controls(t("param.head"), t("param.causal"), reason=t("alibi.unused.row"))
    with errors_shown("setting"):
        with controls():
            c1, c2, c3 = st.columns([2, 2, 1])
            with c1:
                if seq_len > 1:
                    _clamped("q", seq_len - 1)
                    query = CTL.numeric("q", 0, seq_len - 1, min(16, seq_len - 1), slider=True)
                else:
                    query = 0
            with c2:
                scores = CTL.radio("scores", ["equal", "random"], "equal")
            with c3:
                seed = widgets.numeric(
                    t("param.seed"),
                    0,
                    2**31 - 1,
                    0,
                    key="seed",
                    slider=False,
                    help=t("help.seed"),
                    disabled=scores == "equal",
                )
        st.latex(
            r"a_h(j) = \frac{e^{\,s_j - m_h (i-j)}}{\sum_{k \le i} e^{\,s_k - m_h (i-k)}},\qquad"
            r"\frac{a_h(j)}{a_h(i)} = e^{-m_h (i-j)}\ \text{(equal scores)}"
        )
        views.draw(alibi_views.row(n_heads, query, None if scores == "equal" else int(seed)))
        st.latex(r"d_h = \frac{\ln 100}{m_h} \approx \frac{4.6}{m_h}")
        views.draw(alibi_views.span(n_heads))


def long_tab(n_heads):
    """The bias far beyond the training length, and the attention it leaves there."""
    st.subheader(t("alibi.long.header"))
    unused_controls(t("param.seq_len"), t("param.head"), t("param.causal"), reason=t("alibi.unused.long"))
    with errors_shown("setting"):
        with controls():
            train = CTL.numeric("train", 16, 4096, 512, marks=widgets.POWERS_OF_TWO)
        views.draw(alibi_views.long(n_heads, train))


intro("alibi")
with errors_shown("setting"):
    with controls():
        c1, c2, c3, c4 = st.columns(4)
        with c1:
            n_heads = widgets.number(FAMILY.param("n_heads"), key="heads", maximum=64)
        with c2:
            seq_len = widgets.number(FAMILY.param("seq_len"), key="len", maximum=1024)
        with c3:
            head = widgets.number(FAMILY.param("head"), key="head", maximum=n_heads - 1) if n_heads > 1 else 0
        with c4:
            causal = widgets.toggle(FAMILY.param("causal"), key="causal")
    DRAW = {
        "bias": functools.partial(bias_tab, n_heads, seq_len, head, causal),
        "origin": functools.partial(origin_tab, n_heads),
        "article": article_tab,
        "row": functools.partial(row_tab, n_heads, seq_len),
        "long": functools.partial(long_tab, n_heads),
    }
    lazy_tabs("alibi", DRAW)  # only the open tab computes
