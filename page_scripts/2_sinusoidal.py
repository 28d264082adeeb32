"""Sinusoidal: the fixed table of Vaswani et al., its distance structure, its shifts, its limits."""

import functools

import streamlit as st

import posviz
from posviz import ui
from posviz.lessons import precision
from posviz.ui import t, unused_controls, views, widgets
from posviz.ui.pagekit import narrow
from posviz.ui.views import sinusoidal as sin_views

CTL = widgets.Controls("sinusoidal")

FAMILY = posviz.family("sinusoidal")


def table_tab(n, d, base, layout):
    views.draw(sin_views.table(n, d, base, layout))


def distance_tab(n, d, base, layout):
    st.latex(r"PE(i)\cdot PE(j) = \sum_{k} \cos\big((i-j)\,\omega_k\big)")
    views.draw(sin_views.distance(n, d, base, layout))


def shift_tab(n, d, base, layout):
    st.latex(
        r"\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix} = "
        r"\begin{pmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}"
        r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix}"
    )
    with narrow():
        k = CTL.numeric("k", 1, posviz.MAX_POSITIONS - 1, 1, slider=False)
    views.draw(sin_views.shift(d, k, base, layout))  # for an odd d, the warning that there is no M_k
    if d % 2 == 0:
        views.draw(sin_views.shift_residual(n, d, k, base, layout))


def frequencies_tab(n, d, base):
    unused_controls(t("param.layout"), reason=t("sinusoidal.unused.frequencies"))
    st.latex(r"\lambda_i = \frac{2\pi}{\omega_i} = 2\pi\cdot\text{base}^{2i/d} \in [2\pi,\ 2\pi\cdot\text{base})")
    views.draw(sin_views.frequencies(n, d, base))


def projection_tab(n, d, base, layout):
    method = CTL.radio("proj", ["pca", "tsne"], "pca")
    views.draw(sin_views.projection(n, d, base, layout, method))


def extrapolation_tab(n, d, base, layout):
    with narrow():
        train = CTL.numeric("train", 1, posviz.MAX_POSITIONS, 64, slider=False)
    views.draw(sin_views.extrapolation(n, d, base, layout, train))


def layout_tab(d):
    unused_controls(t("param.n_positions"), t("param.base"), t("param.layout"), reason=t("sinusoidal.unused.layout"))
    views.draw(sin_views.layout_order(d))


def precision_tab(d, base):
    unused_controls(t("param.n_positions"), t("param.layout"), reason=t("sinusoidal.unused.precision"))
    c1, c2 = st.columns(2)
    with c1:
        span = CTL.numeric("span", 2, posviz.MAX_POSITIONS, posviz.MAX_POSITIONS, slider=False)
    with c2:
        dtype = CTL.radio("dtype", list(precision.DTYPES), "float16", names=str)
    views.draw(sin_views.precision_map(span, d, base, dtype))
    views.draw(sin_views.precision_lines(span, d, base))


def norms_tab(n, d, base, layout):
    st.latex(r"\|PE(p)\|^2 = \sum_{i} \big(\sin^2 p\,\omega_i + \cos^2 p\,\omega_i\big) = \frac{d}{2}")
    views.draw(sin_views.norms(n, d, base, layout))


ui.intro("sinusoidal")
with ui.controls():
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=posviz.MAX_POSITIONS, slider=False)
    with c2:
        d = widgets.number(FAMILY.param("d_model"), key="d", maximum=posviz.MAX_DIM)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")
    with c4:
        layout = widgets.choice(FAMILY.param("layout"), key="layout")
DRAW = {
    "table": functools.partial(table_tab, n, d, base, layout),
    "distance": functools.partial(distance_tab, n, d, base, layout),
    "shift": functools.partial(shift_tab, n, d, base, layout),
    "frequencies": functools.partial(frequencies_tab, n, d, base),
    "projection": functools.partial(projection_tab, n, d, base, layout),
    "extrapolation": functools.partial(extrapolation_tab, n, d, base, layout),
    "layout": functools.partial(layout_tab, d),
    "precision": functools.partial(precision_tab, d, base),
    "norms": functools.partial(norms_tab, n, d, base, layout),
}
ui.lazy_tabs("sinusoidal", DRAW)  # only the open tab computes
