"""Compare: every family on the same axes, past the training length, by cost, by kind, and any two side by side."""

import dataclasses

import pandas as pd
import streamlit as st

import posviz
from posviz.ui import controls, errors_shown, intro, lazy_tabs, menu, presenting, t, views, widgets
from posviz.ui.views import compare as compare_views
from posviz.ui.views.compare import name

CTL = widgets.Controls("compare")

#: Side by side: caps that keep every view responsive, and the short URL names of the parameters.
SIDE_CAPS = {"n_positions": 4096, "d_model": 1024, "seq_len": 1024, "n_heads": 64}
SHORT = {
    "n_positions": "n",
    "d_model": "d",
    "head_dim": "hd",
    "n_heads": "heads",
    "seq_len": "len",
    "max_relative_position": "k",
    "num_buckets": "buckets",
    "max_distance": "maxd",
    "bidirectional": "bidir",
}
SIDE_DEFAULTS = {("b", "sinusoidal", "base"): 100.0}  # the first comparison: base 10,000 against base 100
#: The families whose Cost curves each control of that tab moves (``compare.parameter_count`` and ``stored_floats``):
#: the width sets every table and cache but the per-head biases; the head count sets those biases, the per-head width
#: of Shaw's vectors and RoPE's caches, and every n^2 score term; the layer count only what lives in every layer.
COST_MOVES = {
    "cd": ("sinusoidal", "learned", "rope", "shaw", "xlnet"),
    "ch": ("rope", "alibi", "t5", "shaw", "xlnet"),
    "cl": ("shaw", "xlnet"),
}


def sorted_params(settings: dict) -> tuple:
    return tuple(sorted(settings.items()))


def overview_tab() -> None:
    views.draw(compare_views.family_map())
    label = {
        part: rf"\text{{{t(f'compare.latex.{part}')}}}"
        for part in ("input", "rotation", "score", "bias", "mask", "values", "hidden")
    }
    st.latex(
        r"\begin{gathered}"
        rf"\underbrace{{x_i + p_i}}_{{{label['input']}}}\qquad"
        rf"\underbrace{{(R_i q)^\top (R_j k) = q^\top R_{{j-i}}\, k}}_{{{label['rotation']}}}\qquad"
        rf"\underbrace{{q_i^\top k_j + q_i^\top a^K_{{j-i}}}}_{{{label['score']}}}\\[1ex]"
        rf"\underbrace{{q_i^\top k_j + b(j - i)}}_{{{label['bias']}}}\qquad"
        rf"\underbrace{{-\infty\ {label['hidden']}}}_{{{label['mask']}}}\qquad"
        rf"\underbrace{{\textstyle\sum_j \alpha_{{ij}}\,(v_j + a^V_{{j-i}})}}_{{{label['values']}}}"
        r"\end{gathered}"
    )
    st.subheader(t("compare.table"))
    st.table(pd.DataFrame(compare_views.feature_rows()).set_index(t("compare.col.family")))
    st.caption(t("compare.table.notice"))
    st.markdown(t("compare.models"))
    st.page_link(menu.page("models"), label=t("compare.models.link"), icon=":material/layers:")


def offset_tab() -> None:
    with controls():
        length = CTL.numeric("len", 16, 4096, 128, marks=widgets.POWERS_OF_TWO)
    # on a projector the four panels stand side by side, so that the whole figure is on the first screen
    with errors_shown("setting"):
        views.draw(compare_views.offset(int(length), presenting()))


def long_tab() -> None:
    with controls():
        c1, c2 = st.columns(2)
        with c1:
            train = CTL.numeric("train", 64, 16384, 512, marks=widgets.POWERS_OF_TWO)
        with c2:
            longer = CTL.numeric("eval", 128, 32768, 2048, marks=widgets.POWERS_OF_TWO)
    with errors_shown("setting"):
        views.draw(compare_views.long(int(train), int(longer)))


def cost_moves(control: str) -> None:
    """Under a Cost control: the families whose curves it moves; the others ignore it."""
    moved = [key for key in posviz.FAMILIES if key in COST_MOVES[control]]  # in the registry's order
    st.caption(t("compare.cost.moves", families=t("list.sep").join(name(key) for key in moved)))


def cost_tab() -> None:
    with controls():
        c1, c2, c3 = st.columns(3)
        with c1:
            d_model = widgets.number(posviz.Param("d_model", 768, 8, posviz.MAX_DIM, 8), key="cd")
            cost_moves("cd")
        with c2:
            n_heads = widgets.number(posviz.Param("n_heads", 12, 1, 64, 1), key="ch")
            cost_moves("ch")
        with c3:
            n_layers = widgets.number(posviz.Param("n_layers", 12, 1, 128, 1), key="cl")
            cost_moves("cl")
    with errors_shown("setting"):
        views.draw(compare_views.cost(int(d_model), int(n_heads), int(n_layers)))


def _clamped(key: str, hi: int) -> None:
    """Keep a remembered slider value inside a range that has just shrunk."""
    if isinstance(st.session_state.get(key), int) and st.session_state[key] > hi:
        st.session_state[key] = hi


def side_controls(side: str, default: str) -> tuple[str, dict]:
    """One column's family picker and that family's parameters, each bound to the URL as ``<side>_<family>_<name>``."""
    key = widgets.url_radio(
        t("compare.side.family", side=side.upper()),
        list(posviz.FAMILIES),
        key=side,
        default=default,
        format_func=name,
        horizontal=True,
    )
    fam = posviz.family(key)
    settings = {}
    for param in fam.params:
        wkey = f"{side}_{key}_{SHORT.get(param.name, param.name)}"
        param = dataclasses.replace(param, default=SIDE_DEFAULTS.get((side, key, param.name), param.default))
        if param.name == "head":
            hi = int(settings["n_heads"]) - 1
            _clamped(wkey, hi)
            settings["head"] = widgets.number(param, key=wkey, maximum=hi) if hi > 0 else 0
        elif param.options and isinstance(param.default, bool):
            settings[param.name] = widgets.toggle(param, key=wkey)
        elif param.options:
            settings[param.name] = widgets.choice(param, key=wkey)
        elif param.log:
            settings[param.name] = widgets.log_number(param, key=wkey)
        else:
            slider = param.name not in ("n_positions", "seed")
            settings[param.name] = widgets.number(param, key=wkey, maximum=SIDE_CAPS.get(param.name), slider=slider)
    return key, settings


def side_tab() -> None:
    columns = st.columns(2)
    chosen = {}
    for column, side, default in zip(columns, ("a", "b"), ("sinusoidal", "sinusoidal"), strict=True):
        with column, errors_shown("setting"):
            chosen[side] = side_controls(side, default)
    drawn = {}
    for column, side in zip(columns, ("a", "b"), strict=True):
        key, settings = chosen[side]
        with column, errors_shown("setting"):
            views.draw(compare_views.side_table(side, key, sorted_params(settings)))
            drawn[side] = (key, sorted_params(settings))
    if len(drawn) < 2:
        return
    with errors_shown("setting"):
        views.draw(compare_views.side_offset(*drawn["a"], *drawn["b"]))


intro("compare")
DRAW = {"offset": offset_tab, "overview": overview_tab, "long": long_tab, "cost": cost_tab, "side": side_tab}
lazy_tabs("compare", DRAW)  # only the open tab computes
