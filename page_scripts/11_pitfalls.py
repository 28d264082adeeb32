"""Pitfalls: the mistakes people make with position encodings, each next to the correct version, with the
number that gives it away and its fix."""

import functools
import tomllib

import streamlit as st

import posviz
from posviz.lessons import pitfalls
from posviz.ui import (
    ASSETS,
    controls,
    intro,
    lazy_tabs,
    t,
    unused_controls,
    views,
    widgets,
)
from posviz.ui.pagekit import narrow
from posviz.ui.views import pitfalls as pitfall_views

CTL = widgets.Controls("pitfalls")

FAMILY = posviz.family("sinusoidal")
MAX_N, MAX_D = 4096, 1024  # the pitfalls show at these sizes; larger tables add nothing but waiting

#: The code of each mistake, buggy and fixed (``assets/code/pitfalls.toml``).
CODE = tomllib.loads((ASSETS / "code" / "pitfalls.toml").read_text(encoding="utf-8"))


def versions(*, correct: str, buggy: str):
    """The correct code (left) and the buggy code (right) in two columns, returned as ``(correct, buggy)`` so that
    each version's figures are drawn under its own code, in its own column."""
    left, right = st.columns(2)
    with left:
        st.markdown(t("pitfalls.fix"))
        st.code(correct, language="python", wrap_lines=True)
    with right:
        st.markdown(t("pitfalls.bug"))
        st.code(buggy, language="python", wrap_lines=True)
    return left, right


def exponent_tab(n: int, d: int, base: float) -> None:
    variant = CTL.radio("bug", list(pitfalls.VARIANTS), "doubled", text="variant", names="pitfalls.variant")
    st.markdown(t(f"pitfalls.exponent.what.{variant}"))
    correct_column, buggy_column = versions(correct=CODE["correct"], buggy=CODE[variant])
    with correct_column:
        views.draw(pitfall_views.exponent_table("correct", n, d, base))
    with buggy_column:
        views.draw(pitfall_views.exponent_table(variant, n, d, base))
    views.draw(pitfall_views.exponent_motion(n, d, base, variant))
    if d < 2:  # one column: no sin/cos pair to measure
        return
    views.draw(pitfall_views.exponent_radius(n, d, base, variant))
    st.success(t("pitfalls.exponent.fix"))


def axes_tab(n: int, d: int, base: float) -> None:
    st.markdown(t("pitfalls.axes.what"))
    columns = versions(correct=CODE["axes.fix"], buggy=CODE["axes.bug"])
    for column, kind in zip(columns, pitfall_views.AXES_KINDS, strict=True):
        with column:
            views.draw(pitfall_views.axes_similarity(kind, n, d, base))
    with columns[1]:  # what torch says about the buggy code without its transpose
        views.draw(pitfall_views.axes_error(n, d))
    views.draw(pitfall_views.axes_offset(n, d, base))
    st.success(t("pitfalls.axes.fix"))


def zero_tab(n: int, d: int) -> None:
    unused_controls(t("param.base"), reason=t("pitfalls.unused.zero"))
    st.markdown(t("pitfalls.zero.what"))
    versions(correct=CODE["zero.fix"], buggy=CODE["zero.bug"])
    if n < 2:  # one position has no other to be told apart from
        st.warning(t("pitfalls.zero.one"))
        return
    views.draw(pitfall_views.zero_nearest(n, d))
    st.success(t("pitfalls.zero.fix"))


def scale_tab(n: int, d: int, base: float) -> None:
    st.markdown(t("pitfalls.scale.what"))
    columns = versions(correct=CODE["scale.fix"], buggy=CODE["scale.bug"])
    for column, scaled in zip(columns, (True, False), strict=True):
        with column:
            views.draw(pitfall_views.scale_mix(d, base, scaled))
    st.markdown(t("pitfalls.scale.inputs", tokens=pitfall_views.MIX_TOKENS, positions=pitfall_views.MIX_POSITIONS))
    st.subheader(t("pitfalls.combine.header"))
    versions(correct=CODE["scale.fix"], buggy=CODE["multiply"])
    views.draw(pitfall_views.combine_lost(n, d, base))
    st.markdown(t("pitfalls.combine.concat"))
    st.code(CODE["concat"], language="python", wrap_lines=True)
    views.draw(pitfall_views.concat_error(d))
    st.success(t("pitfalls.scale.fix"))


def shape_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.shape"))
    st.markdown(t("pitfalls.shape.what"))
    c1, c2, _ = st.columns(3)
    with c1:
        d_tok = CTL.numeric("dtok", 1, posviz.MAX_DIM, 512, slider=False)
    with c2:
        d_pos = CTL.numeric("dpos", 1, posviz.MAX_DIM, 768, slider=False)
    versions(correct=CODE["shape.fix"], buggy=CODE["shape.bug"].format(a=d_tok, b=d_pos))
    views.draw(pitfall_views.shape_error(d_tok, d_pos))
    st.success(t("pitfalls.shape.fix"))


def rope_tab(n: int, base: float) -> None:
    unused_controls(t("param.d_model"), reason=t("pitfalls.unused.rope"))
    st.markdown(t("pitfalls.rope.what.odd"))
    with narrow():
        odd = CTL.numeric("odd", 1, posviz.MAX_DIM, 65, slider=False)
    views.draw(pitfall_views.odd_rope_errors(odd, base))
    st.subheader(t("pitfalls.rope.pairing.header"))
    st.markdown(t("pitfalls.rope.what.pairing"))
    with narrow():
        head_dim = CTL.numeric("hd", 2, 256, 64, step=2, slider=True)
    versions(correct=CODE["rope.fix"], buggy=CODE["rope.bug"])
    views.draw(pitfall_views.rope_pairing(head_dim, n, base))
    st.success(t("pitfalls.rope.fix"))


def alibi_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.alibi"))
    st.markdown(t("pitfalls.alibi.what"))
    with narrow():
        heads = CTL.numeric("heads", 1, 64, 12, slider=True)
    versions(correct=CODE["alibi.fix"], buggy=CODE["alibi.bug"])
    views.draw(pitfall_views.alibi_slopes(heads))
    st.success(t("pitfalls.alibi.fix"))


def index_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.index"))
    st.markdown(t("pitfalls.index.what"))
    c1, c2, _ = st.columns(3)
    with c1:
        rows = CTL.numeric("rows", 1, posviz.MAX_POSITIONS, 512, slider=False)
    with c2:
        position = CTL.numeric("pos", 0, 4 * posviz.MAX_POSITIONS, 512, slider=False)
    versions(correct=CODE["index.fix"], buggy=CODE["index.bug"].format(rows=rows, pos=position))
    views.draw(pitfall_views.index_errors(rows, position))
    st.success(t("pitfalls.index.fix"))


def float16_tab(d: int, base: float) -> None:
    unused_controls(t("param.n_positions"), reason=t("pitfalls.unused.float16"))
    st.markdown(t("pitfalls.float16.what"))
    with narrow():
        span = CTL.numeric("span", 2, posviz.MAX_POSITIONS, 4096, slider=False)
    versions(correct=CODE["float16.fix"], buggy=CODE["float16.bug"])
    views.draw(pitfall_views.float16_rounding(span))
    views.draw(pitfall_views.float16_error(span, d, base))
    views.draw(pitfall_views.float16_merged(span))
    st.success(t("pitfalls.float16.fix"))


intro("pitfalls")
with controls():
    c1, c2, c3 = st.columns(3)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=MAX_N, slider=False)
    with c2:
        d = widgets.number(FAMILY.param("d_model"), key="d", maximum=MAX_D)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")
DRAW = {
    "exponent": functools.partial(exponent_tab, n, d, base),
    "axes": functools.partial(axes_tab, n, d, base),
    "zero": functools.partial(zero_tab, n, d),
    "scale": functools.partial(scale_tab, n, d, base),
    "shape": shape_tab,
    "rope": functools.partial(rope_tab, n, base),
    "alibi": alibi_tab,
    "index": index_tab,
    "float16": functools.partial(float16_tab, d, base),
}
lazy_tabs("pitfalls", DRAW)  # only the open tab computes
