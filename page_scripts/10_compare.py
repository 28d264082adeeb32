"""Compare: every family on the same axes, past the training length, by cost, by kind, and any two side by side."""

import dataclasses

import pandas as pd
import streamlit as st

import posviz
from posviz.figures import compare as cmpfig
from posviz.figures.compare import Series
from posviz.lessons import compare
from posviz.ui import (
    Figures,
    cache,
    controls,
    core_message,
    errors_shown,
    heatmap,
    intro,
    lazy_tabs,
    menu,
    presenting,
    t,
    widgets,
)
from posviz.ui.i18n import has_text
from posviz.ui.pagekit import labels

CTL = widgets.Controls("compare")
FIG = Figures("compare")

CONTEXTS = tuple(2**e for e in range(4, 16))
XLNET_MAX = int(posviz.family("xlnet").param("seq_len").maximum)
XLNET_SEED = posviz.family("xlnet").param("seed").default  # a shuffled order: seed 0 is plain left to right
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
SIDE_COLOURS = {key: {"colorscale": "Viridis", "zmid": None} for key in ("alibi", "shaw", "t5", "xlnet")}
SIDE_DEFAULTS = {("b", "sinusoidal", "base"): 100.0}  # the first comparison: base 10,000 against base 100
COST_DASH = {"sinusoidal": "dot", "alibi": "dot", "t5": "dash", "xlnet": "dashdot"}  # lines on top of another one
PANELS = (("similarity", ("sinusoidal", "learned", "rope")), ("bias", ("alibi", "t5")), ("index", ("shaw",)))
#: The families whose Cost curves each control of that tab moves (``compare.parameter_count`` and ``stored_floats``):
#: the width sets every table and cache but the per-head biases; the head count sets those biases, the per-head width
#: of Shaw's vectors and RoPE's caches, and every n^2 score term; the layer count only what lives in every layer.
COST_MOVES = {
    "cd": ("sinusoidal", "learned", "rope", "shaw", "xlnet"),
    "ch": ("rope", "alibi", "t5", "shaw", "xlnet"),
    "cl": ("shaw", "xlnet"),
}


def name(key: str) -> str:
    return t(f"family.{key}.name")


def sorted_params(settings: dict) -> tuple:
    return tuple(sorted(settings.items()))


def by_offset(curves: dict) -> pd.DataFrame:
    """Curves over different offset ranges as one table, one row per offset (blank where a curve has none)."""
    frame = pd.DataFrame({column: pd.Series(values, index=offsets) for column, (offsets, values) in curves.items()})
    return frame.rename_axis("offset")


def term_name(key: str, index: int) -> str:
    """A family's name for its position code (term 0), or the label of one of its other terms."""
    return name(key) if index == 0 else t(f"compare.term.{key}.{posviz.family(key).terms[index].stage}")


def term_id(key: str, index: int) -> str:
    return key if index == 0 else f"{key}:{posviz.family(key).terms[index].stage}"


def enters_text(fam) -> str:
    """How a family enters, every term: a position code by its stage, anything else said to be no position code."""
    return t("compare.enters.join").join(
        t(f"enters.{term.stage}") if term.position_code else t("compare.not_code", how=t(f"enters.{term.stage}"))
        for term in fam.terms
    )


def models(fam) -> str:
    """The models that use a family: the registry's list, or the catalog's ``compare.models.<family>`` where the list
    says more than names (Shaw's: which models use only its key term)."""
    key = f"compare.models.{fam.key}"
    return t(key) if has_text(key) else fam.models


def overview_tab() -> None:
    cells = compare.family_cells()
    fig = cmpfig.family_map(
        [
            (
                x,
                y,
                [term_id(k, i) for k, i in terms],
                [term_name(k, i) for k, i in terms],
                not any(posviz.family(k).terms[i].position_code for k, i in terms),
            )
            for x, y, terms in cells
        ],
        [t(f"compare.stage.{s}") for s in compare.STAGES],
        [t(f"compare.signal.{d}") for d in compare.SIGNALS],
        **labels("compare.map", "compare.axis.stage", "compare.axis.depends"),
    )
    data = {
        "term": [term_id(k, i) for _, _, terms in cells for k, i in terms],
        "enters": [compare.STAGES[x] for x, _, terms in cells for _ in terms],
        "depends_on": [compare.SIGNALS[y] for _, y, terms in cells for _ in terms],
        "position_code": [posviz.family(k).terms[i].position_code for _, _, terms in cells for k, i in terms],
    }
    FIG.show("map", fig, data)
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
    yes, no = t("compare.yes"), t("compare.no")
    rows = [
        {
            t("compare.col.family"): name(fam.key),
            t("compare.col.depends"): t(f"compare.signal.{compare.signal(fam.terms[0])}"),
            t("compare.col.content"): yes if fam.content else no,
            t("compare.col.enters"): enters_text(fam),
            t("compare.col.learnable"): yes if fam.learnable else no,
            t("compare.col.extrapolates"): yes if fam.extrapolates else no,
            t("compare.col.params"): (
                t(f"compare.scope.{fam.param_scope}", formula=fam.param_formula) if fam.param_scope else "0"
            ),
            t("compare.col.models"): models(fam),
            t("compare.col.paper"): fam.paper,
        }
        for fam in posviz.FAMILIES.values()
    ]
    st.table(pd.DataFrame(rows).set_index(t("compare.col.family")))
    st.caption(t("compare.table.notice"))
    st.markdown(t("compare.models"))
    st.page_link(menu.page("models"), label=t("compare.models.link"), icon=":material/layers:")


def offset_tab() -> None:
    with controls():
        length = CTL.numeric("len", 16, 4096, 128, marks=widgets.POWERS_OF_TWO)
    settings = {
        "sinusoidal": {"n_positions": length},
        "learned": {"n_positions": length},
        "rope": {"n_positions": length},
        "alibi": {"seq_len": length, "causal": False},
        "t5": {"seq_len": length},
        "shaw": {"seq_len": length},
        "xlnet": {"seq_len": min(length, XLNET_MAX), "seed": XLNET_SEED},
    }
    curves = {key: cache.offset_curve(key, sorted_params(s)) for key, s in settings.items()}
    rows = [(t(f"compare.y.{panel}"), [Series(k, name(k), *curves[k]) for k in keys]) for panel, keys in PANELS] + [
        (t("compare.y.visible"), [Series("xlnet", t("compare.term.xlnet.mask"), *curves["xlnet"])])
    ]
    # on a projector the four panels stand side by side, so that the whole figure is on the first screen
    fig = cache.panels_figure(rows, side_by_side=presenting(), **labels("compare.offset", "axis.relative", n=length))
    FIG.show("offset", fig, by_offset({f"{key}_{compare.QUANTITY[key]}": curve for key, curve in curves.items()}))
    st.markdown("\n".join("- " + t("compare.item", name=name(key), text=t(f"compare.what.{key}")) for key in curves))
    if length > XLNET_MAX:
        st.markdown(t("compare.offset.xlnet", n=XLNET_MAX))


def long_tab() -> None:
    with controls():
        c1, c2 = st.columns(2)
        with c1:
            train = CTL.numeric("train", 64, 16384, 512, marks=widgets.POWERS_OF_TWO)
        with c2:
            longer = CTL.numeric("eval", 128, 32768, 2048, marks=widgets.POWERS_OF_TWO)
    if longer <= train:
        st.info(t("compare.long.same", train=train, eval=longer))
    curves = cache.beyond_training(train, longer)
    rows = [
        (
            t("compare.y.unseen"),
            [Series("learned", name("learned"), *curves["learned"], width=6)]
            + [Series(k, name(k), *curves[k]) for k in ("sinusoidal", "rope")],
        ),
        (t("compare.y.bias"), [Series("alibi", name("alibi"), *curves["alibi"])]),
        (t("compare.y.bias"), [Series("t5", name("t5"), *curves["t5"])]),
    ]
    fig = cache.panels_figure(
        rows,
        **labels("compare.long", "compare.axis.step", train=train, eval=longer),
        marker=train,
        marker_text=t("compare.long.marker", n=train),
        panel_height=240,
    )
    FIG.show("long", fig, {"step": curves["rope"][0]} | {key: values for key, (_, values) in curves.items()})
    last = longer - 1
    t5 = cache.t5_last_bucket_share((train, longer))
    k = posviz.family("shaw").param("max_relative_position").default
    shaw = cache.shaw_clipped_share((train, longer), k)
    mass = cache.alibi_mass_beyond(8, train, (longer,))[0, 0]
    error = cache.learned_past_end(train, longer)
    t5_start = cache.t5_last_bucket_start()  # the settings beyond_training reads T5 with
    lines = {
        "sinusoidal": t("compare.long.sinusoidal", p=last, share=f"{curves['sinusoidal'][1][-1]:.0%}"),
        "learned": t("compare.long.learned", error=core_message(error))
        if error
        else t("compare.long.learned.inside", p=last),
        "rope": t("compare.long.rope", p=last, share=f"{curves['rope'][1][-1]:.0%}"),
        "alibi": t("compare.long.alibi", p=last, bias=f"{curves['alibi'][1][-1]:.4g}", mass=f"{mass:.1e}", train=train),
        "t5": t("compare.long.t5", eval=longer, train=train, start=t5_start, **shares(t5)),
        "shaw": t("compare.long.shaw", eval=longer, train=train, k=k, **shares(shaw)),
        "xlnet": t("compare.long.xlnet"),
    }
    st.markdown("\n".join("- " + t("compare.item", name=name(key), text=text) for key, text in lines.items()))


def shares(at_lengths) -> dict[str, str]:
    """Shares of the query-key pairs at the training and at the evaluated length (T5's last buckets, Shaw's clipped
    distances), as the texts' ``share_train`` and ``share`` percents."""
    return {"share_train": f"{at_lengths[0]:.0%}", "share": f"{at_lengths[1]:.0%}"}


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
    buckets = posviz.family("t5").param("num_buckets").default
    k = posviz.family("shaw").param("max_relative_position").default
    kw = dict(d_model=d_model, n_heads=n_heads, n_layers=n_layers, num_buckets=buckets, k=k)
    params = {key: cache.parameter_count(key, CONTEXTS, **kw) for key in compare.COST_FAMILIES}
    stored = {key: cache.stored_floats(key, CONTEXTS, **kw) for key in compare.COST_FAMILIES}
    learned_keys = [key for key in compare.COST_FAMILIES if params[key].any()]
    zero = ", ".join(name(key) for key in compare.COST_FAMILIES if key not in learned_keys)
    rows = [
        (
            t("compare.y.params"),
            [Series(key, name(key), CONTEXTS, params[key], dash=COST_DASH.get(key, "solid")) for key in learned_keys],
        ),
        (
            t("compare.y.stored"),
            [
                Series(key, name(key), CONTEXTS, stored[key], dash=COST_DASH.get(key, "solid"))
                for key in compare.COST_FAMILIES
            ],
        ),
    ]
    fig = cache.panels_figure(
        rows,
        **labels("compare.cost", "compare.axis.context", d=d_model, h=n_heads, layers=n_layers),
        side_by_side=True,
        log=True,
        notes={0: t("compare.cost.zero", families=zero)},
        panel_height=360,
    )
    data = {"context": CONTEXTS} | {f"{key}_params": v for key, v in params.items()}
    FIG.show("cost", fig, data | {f"{key}_stored": v for key, v in stored.items()}, buckets=buckets, k=k)
    if d_model % n_heads:
        st.markdown(t("compare.cost.split", d=d_model, h=n_heads, hd=d_model // n_heads))


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


def side_label(side: str, key: str, settings: dict, other: tuple[str, dict]) -> str:
    """``A · Sinusoidal``, with the settings that differ from the other column's when both show the same family."""
    differ = [n for n in settings if other[0] == key and settings[n] != other[1].get(n)]
    detail = t("list.sep").join(
        f"{t(f'param.{n}')} {settings[n]:g}" if isinstance(settings[n], float) else f"{t(f'param.{n}')} {settings[n]}"
        for n in differ
    )
    label = f"{side.upper()} · {name(key)}"
    return t("compare.side.detail", label=label, detail=detail) if detail else label


def bases_differ(chosen: dict) -> bool:
    """Both columns show the sinusoidal table with different bases (the page's first comparison)."""
    (a, sa), (b, sb) = chosen["a"], chosen["b"]
    return a == b == "sinusoidal" and sa["base"] != sb["base"]


def side_tab() -> None:
    columns = st.columns(2)
    chosen = {}
    for column, side, default in zip(columns, ("a", "b"), ("sinusoidal", "sinusoidal"), strict=True):
        with column, errors_shown("setting"):
            chosen[side] = side_controls(side, default)
    curves = {}
    for column, side in zip(columns, ("a", "b"), strict=True):
        key, settings = chosen[side]
        with column, errors_shown("setting"):
            matrix = cache.family_table(key, sorted_params(settings))
            named = labels(
                f"compare.side.matrix.{key}", f"compare.side.x.{key}", f"compare.side.y.{key}", side=side.upper()
            )
            fig = heatmap(matrix, **named, height=420, **SIDE_COLOURS.get(key, {}))
            FIG.show(f"side.matrix.{key}", fig, matrix, suffix=side, chart=f"side_{side}")
            curves[side] = cache.offset_curve(key, sorted_params(settings))
    if len(curves) < 2:
        return
    series = {
        side: Series(
            chosen[side][0],
            side_label(side, *chosen[side], chosen["b" if side == "a" else "a"]),
            *curves[side],
            dash=cmpfig.SIDE_DASH[i],
        )
        for i, side in enumerate(("a", "b"))
    }
    kinds = [compare.QUANTITY[chosen[side][0]] for side in ("a", "b")]
    rows = (
        [(t(f"compare.quantity.{kinds[0]}"), list(series.values()))]
        if kinds[0] == kinds[1]
        else [(t(f"compare.quantity.{kind}"), [series[side]]) for kind, side in zip(kinds, ("a", "b"), strict=True)]
    )
    fig = cmpfig.panels(rows, **labels("compare.side.offset", "axis.relative"), panel_height=300)
    FIG.show(
        "side.offset", fig, by_offset({f"{side}_{compare.QUANTITY[chosen[side][0]]}": curves[side] for side in curves})
    )
    if bases_differ(chosen):
        st.caption(t("compare.side.offset.base"))


intro("compare")
DRAW = {"offset": offset_tab, "overview": overview_tab, "long": long_tab, "cost": cost_tab, "side": side_tab}
lazy_tabs("compare", DRAW)  # only the open tab computes
