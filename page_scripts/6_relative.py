"""Relative positions: Shaw et al.'s clipped index and T5's buckets, with a learned (or synthetic) bias table."""

import numpy as np
import streamlit as st

import posviz
from posviz.encodings import relative
from posviz.figures import alibi as line_figures
from posviz.ui import Figures, cache, controls, heatmap, intro, lazy_tabs, session_tables, t, widgets
from posviz.ui.pagekit import labels

SHAW, T5 = posviz.family("shaw"), posviz.family("t5")
T5_TABLE = "relative_attention_bias"
FIG = Figures("relative")
#: The axes of a (query, key) matrix.
PAIRS = ("axis.key_position", "axis.query_position")


def _learned_t5_table():
    """The first session table whose name says it is T5's relative attention bias, as (name, array) or None."""
    found = sorted((n, a) for n, a in session_tables().items() if T5_TABLE in n and np.ndim(a) == 2)
    return found[0] if found else None


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
    index = cache.family_table(SHAW.key, (("max_relative_position", clip), ("seq_len", length)))
    named = labels("relative.shaw.index", *PAIRS, k=clip)
    FIG.show(
        "shaw", heatmap(index, **named, colorscale="RdBu_r", zmid=float(clip), colorbar_title=t("axis.index")), index
    )
    lengths = tuple(range(1, max(4 * clip, 2 * length) + 1))
    distinct = cache.shaw_distinct_count(lengths, clip)
    fig = cache.lines_with_marker_figure(
        lengths,
        {t("relative.shaw.distinct.y"): distinct},
        marker=clip + 1,
        marker_text=t("relative.shaw.distinct.marker", n=clip + 1),
        **labels("relative.shaw.distinct", "param.seq_len", "relative.shaw.distinct.y", k=clip, total=2 * clip + 1),
    )
    FIG.show("shaw.distinct", fig, {"seq_len": lengths, "distinct_embeddings": distinct})


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
    kwargs = {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": max_distance}
    params = tuple(sorted(kwargs.items())) + (("seq_len", length),)
    matrix = cache.family_table(T5.key, tuple(sorted(params)))
    named = labels("relative.t5.matrix", *PAIRS)
    FIG.show(
        "t5.matrix", heatmap(matrix, **named, colorscale="Turbo", zmid=None, colorbar_title=t("axis.bucket")), matrix
    )
    max_exact = relative.t5_exact_region(buckets, bidirectional)
    side = buckets // 2 if bidirectional else buckets
    st.latex(
        r"b(n) = \begin{cases} n & n < E \\ \min\!\left(B - 1,\ E + \left\lfloor \dfrac{\ln(n/E)}{\ln(D/E)}"
        r"\,(B - E) \right\rfloor\right) & n \ge E \end{cases}"
    )
    st.markdown(
        t(
            "relative.t5.n.bidirectional" if bidirectional else "relative.t5.n.causal",
            side=side,
            exact=max_exact,
            d=max_distance,
        )
    )
    offsets = tuple(range(-2 * max_distance, 2 * max_distance + 1))
    curve = cache.t5_relative_bucket(offsets, **kwargs)
    last_start = cache.t5_last_bucket_start(**kwargs)
    regions = {
        "exact": t("relative.t5.region.exact", n=max_exact),
        "log": t("relative.t5.region.log", n=max_exact, s=last_start),
        "flat": t("relative.t5.region.flat", s=last_start),
    }
    fig = cache.bucket_curve_figure(
        offsets,
        curve,
        max_exact=max_exact,
        last_start=last_start,
        bidirectional=bidirectional,
        region_names=regions,
        **labels("relative.t5.curve", "axis.relative", "axis.bucket"),
    )
    clamped = "clamp" if last_start >= max_distance else None
    data = {"relative_position": offsets, "bucket": curve}
    FIG.show("t5.curve", fig, data, variant=clamped, s=last_start, d=max_distance, top=max_distance - 1)
    sizes = cache.t5_bucket_sizes(**kwargs)
    named = labels("relative.t5.sizes", "axis.bucket", "relative.t5.sizes.y", d=max_distance)
    fig = cache.bars_figure(tuple(str(b) for b in range(buckets)), sizes, **named)
    FIG.show("t5.sizes", fig, {"bucket": range(buckets), "relative_positions": sizes})
    unused = cache.t5_unused_buckets(**kwargs)
    listed = ", ".join(str(b) for b in unused)
    if bidirectional:
        st.info(t("relative.t5.unused.bidirectional", b=buckets // 2, listed=listed or "—"))
    else:
        st.info(t("relative.t5.unused.causal", listed=listed or "—"))

    st.subheader(t("relative.t5.bias.header"))
    learned = _learned_t5_table()
    if learned is None:
        st.info(t("relative.t5.bias.none"))
        table_name, table = t("relative.t5.bias.synthetic_name"), cache.t5_synthetic_bias_table(buckets)
        title = t("relative.t5.bias.synthetic", b=buckets)
    else:
        table_name, table = learned
        title = t("relative.t5.bias.learned", name=table_name, b=table.shape[0], h=table.shape[1])
        st.caption(t("relative.t5.bias.learned.note", b=table.shape[0], d=max_distance))
    bias = relative.t5_bias_curve(table, offsets, bidirectional=bidirectional, max_distance=max_distance)
    table_kwargs = kwargs | {"num_buckets": table.shape[0]}
    flat_from = last_start if table.shape[0] == buckets else cache.t5_last_bucket_start(**table_kwargs)
    heads = {t("relative.t5.bias.head", h=h): bias[h] for h in range(bias.shape[0])}
    fig = line_figures.lines_with_marker(
        offsets, heads, marker=0, marker_text="i = j", title=title, x_title=t("axis.relative"), y_title=t("axis.bias")
    )
    FIG.show("t5.bias", fig, {"relative_position": offsets} | heads, s=flat_from)


DRAW = {"shaw": shaw_tab, "t5": t5_tab}
lazy_tabs("relative", DRAW, label="{page}.{code}")  # only the open tab computes
