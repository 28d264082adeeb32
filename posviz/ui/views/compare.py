"""The Compare page's views, one per tab's figure as functions of their settings: where every family enters the
model, each family's position signal by offset, what each does past the training length, what each costs as the
context grows, and any two families' tables and offset curves side by side.

Each view calls the core (``posviz.lessons.compare``, ``posviz.encodings``) and the figure builders
(``posviz.figures.compare``) directly; the page script reads the controls and draws what a view returns
(``views.draw``). The side-by-side tables are the families' shared tables (``cache.family_table``).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from posviz.encodings import alibi, relative
from posviz.encodings.registry import FAMILIES, Family, family
from posviz.figures import compare as compare_figures
from posviz.figures.compare import Series
from posviz.lessons import compare

from ..i18n import core_message, has_text, t
from ..pagekit import labels
from . import Figure, Text, family_heatmap, shared, view

#: Context lengths of the Cost tab.
CONTEXTS = tuple(2**e for e in range(4, 16))
#: By offset: XLNet's mask is drawn for at most this many positions (its family's longest sequence).
XLNET_MAX = int(cast(float, family("xlnet").param("seq_len").maximum))
XLNET_SEED = family("xlnet").param("seed").default  # a shuffled order: seed 0 is plain left to right
#: By offset: the panels (one kind of quantity each) and their families; XLNet's mask has a panel of its own.
PANELS = (("similarity", ("sinusoidal", "learned", "rope")), ("bias", ("alibi", "t5")), ("index", ("shaw",)))
#: Cost: the lines drawn on top of another one, dashed to show both.
COST_DASH = {"sinusoidal": "dot", "alibi": "dot", "t5": "dash", "xlnet": "dashdot"}
#: Side by side: the tables of biases, indices and masks on a sequential colour scale.
SIDE_COLOURS = {key: {"colorscale": "Viridis", "zmid": None} for key in ("alibi", "shaw", "t5", "xlnet")}
#: Past the training length: the ALiBi heads whose attention mass beyond the training length the text gives.
ALIBI_HEADS = 8

Params = tuple[tuple[str, object], ...]


def name(key: str) -> str:
    """A family's name in the page's language."""
    return t(f"family.{key}.name")


def offset_curve(key: str, params: Params) -> tuple[np.ndarray, np.ndarray]:
    """``compare.offset_curve(key, params)``, shared by the views that draw it (``views.shared``): one side's curve
    is not computed again when only the other side, or the presentation mode, changes."""
    return shared(compare.offset_curve, key, dict(params))


def by_offset(curves: dict) -> pd.DataFrame:
    """Curves over different offset ranges as one table, one row per offset (blank where a curve has none)."""
    frame = pd.DataFrame({column: pd.Series(values, index=offsets) for column, (offsets, values) in curves.items()})
    return frame.rename_axis("offset")


# ------------------------------------------------------------------------------------------------------ kinds


def term_name(key: str, index: int) -> str:
    """A family's name for its position code (term 0), or the label of one of its other terms."""
    return name(key) if index == 0 else t(f"compare.term.{key}.{family(key).terms[index].stage}")


def term_id(key: str, index: int) -> str:
    return key if index == 0 else f"{key}:{family(key).terms[index].stage}"


def enters_text(fam: Family) -> str:
    """How a family enters, every term: a position code by its stage, anything else said to be no position code."""
    return t("compare.enters.join").join(
        t(f"enters.{term.stage}") if term.position_code else t("compare.not_code", how=t(f"enters.{term.stage}"))
        for term in fam.terms
    )


def models(fam: Family) -> str:
    """The models that use a family: the registry's list, or the catalog's ``compare.models.<family>`` where the list
    says more than names (Shaw's: which models use only its key term)."""
    key = f"compare.models.{fam.key}"
    return t(key) if has_text(key) else fam.models


@view("compare")
def family_map():
    """Every term of every registry family placed by where it enters and what it depends on
    (``compare.family_cells``), hollow where a cell holds no position code."""
    cells = compare.family_cells()
    fig = compare_figures.family_map(
        [
            (
                x,
                y,
                [term_id(k, i) for k, i in terms],
                [term_name(k, i) for k, i in terms],
                not any(family(k).terms[i].position_code for k, i in terms),
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
        "position_code": [family(k).terms[i].position_code for _, _, terms in cells for k, i in terms],
    }
    return [Figure("map", fig, data)]


def feature_rows() -> list[dict[str, str]]:
    """The feature table, one row per registry family: what it depends on, where it enters, whether it is learned
    and extrapolates, its parameters, the models that use it and its paper."""
    yes, no = t("compare.yes"), t("compare.no")
    return [
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
        for fam in FAMILIES.values()
    ]


# -------------------------------------------------------------------------------------------------- by offset


def offset_settings(length: int) -> dict[str, Params]:
    """Each family's parameters on the By offset tab: its length set to ``length`` (XLNet's at most ``XLNET_MAX``,
    in a shuffled order), symmetric ALiBi, every other parameter its default."""
    settings: dict[str, dict[str, object]] = {
        "sinusoidal": {"n_positions": length},
        "learned": {"n_positions": length},
        "rope": {"n_positions": length},
        "alibi": {"seq_len": length, "causal": False},
        "t5": {"seq_len": length},
        "shaw": {"seq_len": length},
        "xlnet": {"seq_len": min(length, XLNET_MAX), "seed": XLNET_SEED},
    }
    return {key: tuple(sorted(params.items())) for key, params in settings.items()}


@view("compare")
def offset(length: int, side_by_side: bool):
    """Each family's position signal against the offset o = j - i, o = -(L - 1) .. L - 1 (``compare.offset_curve``:
    a cosine, a score, a bias, an index or a share of visible keys, ``compare.QUANTITY``), one panel per kind;
    ``side_by_side`` puts the panels in a row (a projector's first screen)."""
    curves = {key: offset_curve(key, params) for key, params in offset_settings(length).items()}
    rows = [(t(f"compare.y.{panel}"), [Series(k, name(k), *curves[k]) for k in keys]) for panel, keys in PANELS] + [
        (t("compare.y.visible"), [Series("xlnet", t("compare.term.xlnet.mask"), *curves["xlnet"])])
    ]
    fig = compare_figures.panels(
        rows, title=t("compare.offset", n=length), x_title=t("axis.relative"), side_by_side=side_by_side
    )
    data = by_offset({f"{key}_{compare.QUANTITY[key]}": curve for key, curve in curves.items()})
    items: list[Figure | Text] = [
        Figure("offset", fig, data),
        Text("\n".join("- " + t("compare.item", name=name(key), text=t(f"compare.what.{key}")) for key in curves)),
    ]
    if length > XLNET_MAX:
        items.append(Text(t("compare.offset.xlnet", n=XLNET_MAX)))
    return items


# ---------------------------------------------------------------------------------------- past the training length


def shares(at_lengths) -> dict[str, str]:
    """Shares of the query-key pairs at the training and at the evaluated length (T5's last buckets, Shaw's clipped
    distances), as the texts' ``share_train`` and ``share`` percents."""
    return {"share_train": f"{at_lengths[0]:.0%}", "share": f"{at_lengths[1]:.0%}"}


@view("compare")
def long(train: int, longer: int):
    """What each family does at steps 0 .. ``longer`` - 1 after training on ``train`` positions
    (``compare.beyond_training``), and in words: the share of new angles, the learned table's lookup error,
    ALiBi's attention mass past ``train`` (``alibi.alibi_mass_beyond``), the pairs in T5's last bucket
    (``compare.t5_last_bucket_share``) and past Shaw's clipping distance (``compare.shaw_clipped_share``)."""
    items: list[Figure | Text] = []
    if longer <= train:
        items.append(Text(t("compare.long.same", train=train, eval=longer), "info"))
    curves = compare.beyond_training(train, longer)
    steps, missing = curves["learned"]  # NaN past the learned table
    rows = [
        (
            t("compare.y.unseen"),
            [Series("learned", name("learned"), steps, missing, width=6)]
            + [Series(k, name(k), *curves[k]) for k in ("sinusoidal", "rope")],
        ),
        (t("compare.y.bias"), [Series("alibi", name("alibi"), *curves["alibi"])]),
        (t("compare.y.bias"), [Series("t5", name("t5"), *curves["t5"])]),
    ]
    fig = compare_figures.panels(
        rows,
        title=t("compare.long", train=train, eval=longer),
        x_title=t("compare.axis.step"),
        marker=train,
        marker_text=t("compare.long.marker", n=train),
        panel_height=240,
    )
    items.append(Figure("long", fig, {"step": curves["rope"][0]} | {key: v for key, (_, v) in curves.items()}))
    last = longer - 1
    t5 = compare.t5_last_bucket_share((train, longer))
    k = family("shaw").param("max_relative_position").default
    shaw = compare.shaw_clipped_share((train, longer), k)
    mass = alibi.alibi_mass_beyond(ALIBI_HEADS, train, (longer,))[0, 0]
    error = compare.learned_past_end(train, longer)
    t5_start = relative.t5_last_bucket_start()  # the settings beyond_training reads T5 with
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
    items.append(Text("\n".join("- " + t("compare.item", name=name(key), text=text) for key, text in lines.items())))
    return items


# ------------------------------------------------------------------------------------------------------- cost


@view("compare")
def cost(d_model: int, n_heads: int, n_layers: int):
    """Learned parameters (``compare.parameter_count``) and numbers held in a forward pass
    (``compare.stored_floats``) of every family at the context lengths ``CONTEXTS``, on log axes; the families
    with no parameters are named in the first panel (zero has no place on a log axis)."""
    buckets = family("t5").param("num_buckets").default
    k = family("shaw").param("max_relative_position").default
    kw = dict(d_model=d_model, n_heads=n_heads, n_layers=n_layers, num_buckets=buckets, k=k)
    params = {key: compare.parameter_count(key, CONTEXTS, **kw) for key in compare.COST_FAMILIES}
    stored = {key: compare.stored_floats(key, CONTEXTS, **kw) for key in compare.COST_FAMILIES}
    learned_keys = [key for key in compare.COST_FAMILIES if params[key].any()]
    contexts = np.asarray(CONTEXTS)
    zero = ", ".join(name(key) for key in compare.COST_FAMILIES if key not in learned_keys)
    rows = [
        (
            t("compare.y.params"),
            [Series(key, name(key), contexts, params[key], dash=COST_DASH.get(key, "solid")) for key in learned_keys],
        ),
        (
            t("compare.y.stored"),
            [
                Series(key, name(key), contexts, stored[key], dash=COST_DASH.get(key, "solid"))
                for key in compare.COST_FAMILIES
            ],
        ),
    ]
    fig = compare_figures.panels(
        rows,
        title=t("compare.cost", d=d_model, h=n_heads, layers=n_layers),
        x_title=t("compare.axis.context"),
        side_by_side=True,
        log=True,
        notes={0: t("compare.cost.zero", families=zero)},
        panel_height=360,
    )
    data = {"context": CONTEXTS} | {f"{key}_params": v for key, v in params.items()}
    data |= {f"{key}_stored": v for key, v in stored.items()}
    items: list[Figure | Text] = [Figure("cost", fig, data, {"buckets": buckets, "k": k})]
    if d_model % n_heads:
        items.append(Text(t("compare.cost.split", d=d_model, h=n_heads, hd=d_model // n_heads)))
    return items


# ------------------------------------------------------------------------------------------------ side by side


@view("compare")
def side_table(side: str, key: str, params: Params):
    """The table of ``key`` at ``params`` (``cache.family_table``: the family's own, shared), drawn for column
    ``side`` ("a" or "b")."""
    named = labels(f"compare.side.matrix.{key}", f"compare.side.x.{key}", f"compare.side.y.{key}", side=side.upper())
    table, fig = family_heatmap(key, dict(params), **named, height=420, **SIDE_COLOURS.get(key, {}))
    return [Figure(f"side.matrix.{key}", fig, table, {"suffix": side, "chart": f"side_{side}"})]


def side_label(side: str, key: str, settings: dict, other: tuple[str, dict]) -> str:
    """``A · Sinusoidal``, with the settings that differ from the other column's when both show the same family, in
    the order of the family's parameters."""
    order = [param.name for param in family(key).params if param.name in settings]
    differ = [n for n in order if other[0] == key and settings[n] != other[1].get(n)]
    detail = t("list.sep").join(
        f"{t(f'param.{n}')} {settings[n]:g}" if isinstance(settings[n], float) else f"{t(f'param.{n}')} {settings[n]}"
        for n in differ
    )
    label = f"{side.upper()} · {name(key)}"
    return t("compare.side.detail", label=label, detail=detail) if detail else label


@view("compare")
def side_offset(a: str, a_params: Params, b: str, b_params: Params):
    """The offset curves of both columns' families (``compare.offset_curve``), on one panel when they are the same
    kind of quantity (``compare.QUANTITY``), on one panel each otherwise; with a note when both are sinusoidal
    tables of different bases."""
    chosen = {"a": (a, dict(a_params)), "b": (b, dict(b_params))}
    curves = {"a": offset_curve(a, a_params), "b": offset_curve(b, b_params)}
    series = {
        side: Series(
            chosen[side][0],
            side_label(side, *chosen[side], chosen["b" if side == "a" else "a"]),
            *curves[side],
            dash=compare_figures.SIDE_DASH[i],
        )
        for i, side in enumerate(("a", "b"))
    }
    kinds = [compare.QUANTITY[a], compare.QUANTITY[b]]
    rows = (
        [(t(f"compare.quantity.{kinds[0]}"), list(series.values()))]
        if kinds[0] == kinds[1]
        else [(t(f"compare.quantity.{kind}"), [series[side]]) for kind, side in zip(kinds, ("a", "b"), strict=True)]
    )
    fig = compare_figures.panels(rows, title=t("compare.side.offset"), x_title=t("axis.relative"), panel_height=300)
    data = by_offset({f"{side}_{kind}": curves[side] for side, kind in zip(("a", "b"), kinds, strict=True)})
    items: list[Figure | Text] = [Figure("side.offset", fig, data)]
    if a == b == "sinusoidal" and chosen["a"][1]["base"] != chosen["b"][1]["base"]:  # the page's first comparison
        items.append(Text(t("compare.side.offset.base"), "caption"))
    return items
