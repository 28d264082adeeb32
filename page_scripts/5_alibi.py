"""ALiBi: per-head slopes, where they come from, the bias they add and what it does to attention."""

import pandas as pd
import streamlit as st

import posviz
from posviz import figures
from posviz.figures import alibi as alibi_figures
from posviz.ui import Figures, cache, controls, errors_shown, heatmap, intro, lazy_tabs, t, unused_controls, widgets
from posviz.ui.pagekit import labels

CTL = widgets.Controls("alibi")
FIG = Figures("alibi")

FAMILY = posviz.family("alibi")
CHECKED_HEAD_COUNTS = (8, 12, 16)


def _head_names(heads, slopes) -> dict:
    return {int(h): t("alibi.head_label", head=int(h), slope=f"{slopes[h]:.4g}") for h in heads}


def _clamped(key: str, hi: int) -> None:
    """Keep a remembered slider value inside a range that has just shrunk."""
    if isinstance(st.session_state.get(key), int) and st.session_state[key] > hi:
        st.session_state[key] = hi


def agreeing_heads(agree) -> str:
    """The heads (numbered from 0, as on the page) where a per-head test holds, in words: "head 0", "none"."""
    heads = [str(h) for h in agree.nonzero()[0]]
    if not heads:
        return t("alibi.article.which.none")
    return t(
        "alibi.article.which.one" if len(heads) == 1 else "alibi.article.which.many",
        heads=t("alibi.article.which.sep").join(heads),
    )


def bias_tab():
    """Every head's slope, and the bias matrix of the chosen head."""
    heads = tuple(str(h) for h in range(n_heads))
    fig = cache.slopes_by_origin_figure(
        heads, slopes, origin, origin_names, **labels("alibi.slopes", "axis.head", "axis.slope")
    )
    data = {"head": range(n_heads), "slope": slopes, "from_2c_heads": origin}
    FIG.show("slopes", fig, data, variant="power" if c == n_heads else None)

    params = (("causal", causal), ("head", head), ("n_heads", n_heads), ("seq_len", seq_len))
    bias = cache.family_table(FAMILY.key, params)
    named = labels("alibi.bias", "axis.key_position", "axis.query_position", head=head, slope=f"{slopes[head]:.4g}")
    fig = heatmap(bias, **named, colorscale="Viridis", zmid=None, colorbar_title=t("axis.bias"))
    FIG.show("bias", fig, bias, variant="causal" if causal else "symmetric", suffix=f"head{head}")


def origin_tab():
    """Where the slopes of a head count that is not a power of two come from."""
    st.subheader(t("alibi.origin.header"))
    unused_controls(t("param.seq_len"), t("param.head"), t("param.causal"), reason=t("alibi.unused.origin"))
    with errors_shown("setting"):
        st.markdown(t("alibi.origin.text"))
        st.latex(
            r"m_h = 2^{-8(h+1)/c}\ (h = 0..c-1),\qquad m_{c+t} = 2^{-8(2t+1)/(2c)}\ (t = 0..n-c-1),"
            r"\qquad c = 2^{\lfloor \log_2 n \rfloor}"
        )
        ladder, use = cache.alibi_slope_ladder(n_heads)
        closest = len(use) // 2
        named = labels("alibi.ladder", "alibi.ladder.x", "axis.slope", n=n_heads, c=closest, c2=2 * closest)
        data = {"h": range(len(use)), "slope_of_2c_heads": ladder, "use": use}
        fig = alibi_figures.slope_ladder(ladder, use, origin_names, **named)
        FIG.show("ladder", fig, data, variant="power" if closest == n_heads else None)


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
        series, rows = {}, []
        for n in CHECKED_HEAD_COUNTS:
            paper, article = cache.alibi_slopes(n), cache.article_slopes(n)
            agree = cache.article_slopes_agree(n)
            series[t("alibi.article.heads", n=n)] = (paper, article)
            rows.append(
                {
                    t("alibi.col.heads"): n,
                    t("alibi.article.col.count"): int(agree.sum()),
                    t("alibi.article.col.which"): agreeing_heads(agree),
                    t("alibi.article.col.paper_min"): f"{paper.min():.4g}",
                    t("alibi.article.col.article_min"): f"{article.min():.4g}",
                }
            )
        fig = alibi_figures.formula_check(
            series, (paper_rule, article_rule), **labels("alibi.article", "axis.head", "axis.slope")
        )
        data = {
            f"{n}_heads_{rule}": values
            for n, (paper, article) in zip(CHECKED_HEAD_COUNTS, series.values(), strict=True)
            for rule, values in (("paper", paper), ("article", article))
        }
        FIG.show("article", fig, data)
        st.dataframe(pd.DataFrame(rows), hide_index=True)


def row_tab():
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
        shown = posviz.evenly_spaced(n_heads, 4)
        with_bias, without = cache.alibi_attention_row(
            n_heads, query, heads=shown, seed=None if scores == "equal" else int(seed)
        )
        names = _head_names(shown, slopes)
        lines = {t("alibi.row.no_bias"): without} | {names[h]: with_bias[k] for k, h in enumerate(shown)}
        fig = figures.lines(
            range(query + 1), lines, **labels("alibi.row", "axis.key_position", "alibi.axis.weight", i=query)
        )
        FIG.show("row", fig, {"key_position": range(query + 1)} | lines, suffix=query)
        span = cache.alibi_span(n_heads, 0.01)
        st.latex(r"d_h = \frac{\ln 100}{m_h} \approx \frac{4.6}{m_h}")
        named = labels("alibi.span", "axis.head", "alibi.axis.distance")
        fig = figures.bars([str(h) for h in range(n_heads)], span, **named, log_y=True)
        FIG.show("span", fig, {"head": range(n_heads), "slope": slopes, "span_1_percent": span})


def long_tab():
    """The bias far beyond the training length, and the attention it leaves there."""
    st.subheader(t("alibi.long.header"))
    unused_controls(t("param.seq_len"), t("param.head"), t("param.causal"), reason=t("alibi.unused.long"))
    with errors_shown("setting"):
        with controls():
            train = CTL.numeric("train", 16, 4096, 512, marks=widgets.POWERS_OF_TWO)
        few = tuple(int(h) for h in posviz.evenly_spaced(n_heads, 8))
        names = _head_names(few, slopes)
        far = cache.alibi_distance_bias(n_heads, 4 * train)
        distance_lines = {names[h]: far[h] for h in few}
        trained = {"marker": train, "marker_text": t("alibi.train_len", n=train)}
        named = labels("alibi.far", "alibi.axis.distance", "axis.bias")
        fig = cache.lines_with_marker_figure(range(4 * train + 1), distance_lines, **trained, **named)
        FIG.show("far", fig, {"distance": range(4 * train + 1)} | distance_lines)
        lengths = posviz.evenly_spaced(8 * train + 1, 65)[1:]
        mass = cache.alibi_mass_beyond(n_heads, train, lengths)
        mass_lines = {names[h]: 100.0 * mass[h] for h in few}
        named = labels("alibi.mass", "alibi.axis.seq_len", "alibi.axis.percent", n=train)
        fig = alibi_figures.lines_with_marker(lengths, mass_lines, **trained, **named)
        FIG.show("mass", fig, {"seq_len": lengths} | mass_lines)


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
    slopes = cache.alibi_slopes(n_heads)
    origin = cache.alibi_slope_origin(n_heads)
    c = int((origin == 0).sum())  # the largest power of two <= n_heads: the heads whose slopes are those of c heads
    origin_names = tuple(t(f"alibi.origin.{use}", c=c, c2=2 * c) for use in ("c", "extra", "unused"))
    DRAW = {"bias": bias_tab, "origin": origin_tab, "article": article_tab, "row": row_tab, "long": long_tab}
    lazy_tabs("alibi", DRAW)  # only the open tab computes
