"""Myth or fact: claims from the reference articles, each computed live and given a verdict."""

import json
import numbers

import numpy as np
import pandas as pd
import streamlit as st

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims
from posviz.ui import cache, controls, current_language, errors_shown, heatmap, intro, presenting, show, t, widgets

CTL = widgets.Controls("claims")

ICONS = {"holds": ":material/check_circle:", "wrong": ":material/cancel:", "partly": ":material/error:"}
COLOURS = {"holds": "green", "wrong": "red", "partly": "orange"}
D_MARKS = (64, 128, 256, 512, 768, 1024, 2048, 4096)  # the slider's widths, BERT's 768 among them
#: Floor of the log error plot: exact zeros (position 0) are drawn on it.
ERROR_FLOOR = 1e-12


def evidence(claim_id: str, **params) -> claims.Evidence:
    return cache.check(claim_id, **params)


def formatted(values: dict) -> dict:
    """The numbers of a verdict as text: 3 significant digits, thousands separators, a dash for none."""

    def one(value):
        if value is None:
            return "—"
        if isinstance(value, bool) or not isinstance(value, numbers.Number):
            return str(value)
        if float(value).is_integer() and abs(value) < 1e7:
            return f"{int(value):,}"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3g}"

    return {name: one(value) for name, value in values.items()}


# ----------------------------------------------------------------------------------------------------- sources


def author_list(source: claims.Source) -> str:
    names = source.authors
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", & " + names[-1]


def citation(source: claims.Source, *, linked: bool = True) -> str:
    """The full citation of a source in the current language; ``linked`` makes the arXiv id a link (markdown)."""
    if source.kind == "paper":
        arxiv = f"[{source.arxiv}](https://arxiv.org/abs/{source.arxiv})" if linked else source.arxiv
        return t(
            "claims.cite.paper",
            authors=author_list(source),
            year=source.year,
            title=source.title(current_language()),
            venue=source.venue,
            arxiv=arxiv,
        )
    key = "claims.cite.article.untitled" if source.descriptive else "claims.cite.article"
    return t(key, id=source.key, title=source.title(current_language()))


def short(source: claims.Source) -> str:
    if source.kind == "paper":
        return t("claims.cite.short", first=source.first_author, year=source.year)
    return t("claims.cite.article.short", id=source.key)


def statement(claim_id: str) -> None:
    st.markdown(f"> {t(f'claims.{claim_id}.claim')}")
    st.caption(t("claims.sources"))
    st.markdown("\n".join(f"- :small[{citation(source)}]" for source in claims.sources(claim_id)))


def verdict(claim_id: str, found: claims.Evidence) -> None:
    code = found.verdict
    label = f":{COLOURS[code]}-badge[{ICONS[code]} {t(f'claims.verdict.{code}')}]"
    st.markdown(f"{label} {t(f'claims.{claim_id}.{code}', **formatted(found.numbers))}")


def claim_figure(text: str, fig, data, name: str, *, key: str | None = None) -> None:
    """A figure of a claim's evidence with its "what to notice" caption ``claims.<text>.notice`` and its CSV (``data``,
    saved as ``name``), drawn under the key ``text`` (dots as underscores) unless ``key`` is given."""
    show(fig, notice=t(f"claims.{text}.notice"), key=key or text.replace(".", "_"), data=data, name=name)


def summary() -> None:
    """The table of every verdict, its sources by name and, for the CSV of the table's toolbar, in full."""
    st.subheader(t("claims.summary"))
    codes = {claim_id: evidence(claim_id).verdict for claim_id in claims.CLAIMS}
    table = pd.DataFrame(
        {
            t("claims.col.claim"): [t(f"claims.{c}.short") for c in codes],
            t("claims.col.verdict"): [t(f"claims.verdict.{v}") for v in codes.values()],
            t("claims.col.source"): [t("claims.cite.join").join(short(s) for s in claims.sources(c)) for c in codes],
            t("claims.col.sources"): [" | ".join(citation(s, linked=False) for s in claims.sources(c)) for c in codes],
        }
    )
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=35 * (len(table) + 1) + 3,
        column_config={
            t("claims.col.claim"): st.column_config.TextColumn(width="large"),
            t("claims.col.verdict"): st.column_config.TextColumn(width=130),
            t("claims.col.source"): st.column_config.TextColumn(width="medium"),
            t("claims.col.sources"): st.column_config.TextColumn(width="large"),
        },
    )
    st.caption(t("claims.table.note"))
    with st.expander(t("claims.sources.all"), icon=":material/menu_book:"):
        st.markdown("\n".join(f"- {citation(source)}" for source in claims.cited()))


def width() -> int:
    """The width d of the sinusoidal table, shared by the tabs that measure one (``?d=``)."""
    return CTL.numeric("d", 64, 4096, 512, grid=2, marks=D_MARKS)


# -------------------------------------------------------------------------------------------------- the claims


def exponent_tab() -> None:
    statement("exponent")
    with controls():
        d = width()
    found = evidence("exponent", d_model=d)
    a = found.arrays
    claim_figure(
        "exponent",
        cache.lines_figure(
            a["pair"],
            {
                t("claims.exponent.correct"): a["wavelength_correct"],
                t("claims.exponent.doubled"): a["wavelength_doubled"],
            },
            title=t("claims.exponent.fig", d=d),
            x_title=t("axis.pair"),
            y_title=t("claims.axis.wavelength"),
            log_y=True,
        ),
        a,
        "claim_doubled_exponent",
    )
    verdict("exponent", found)


def norm_tab() -> None:
    statement("norm")
    with controls():
        d = width()
    found = evidence("norm", d_model=d)
    fig = figures.lines(
        found.arrays["position"],
        {t("claims.norm.measured"): found.arrays["norm"]},
        title=t("claims.norm.fig", d=d),
        x_title=t("axis.position"),
        y_title="‖PE(p)‖",
        y_range=(0.0, found.numbers["claimed"] * 1.15),
    )
    claimfig.level(
        fig, found.numbers["claimed"], t("claims.norm.claimed", d=d, value=f"{found.numbers['claimed']:.3g}")
    )
    claim_figure("norm", fig, found.arrays, "claim_row_norm")
    verdict("norm", found)


def unscaled_tab() -> None:
    statement("unscaled")
    with controls():
        d = width()
    found = evidence("unscaled", d_model=d)
    a = found.arrays
    fig = claimfig.series(
        {
            t("claims.unscaled.none"): (a["d_model"], a["unscaled"]),
            t("claims.unscaled.paper"): (a["d_model"], a["paper"]),
            t("claims.unscaled.article"): (a["d_model"], a["article"], "dash"),
        },
        title=t("claims.unscaled.fig", tokens=claims.SCALE_TOKENS),
        legend_below=True,
        x_title="d_model",
        y_title=t("claims.axis.norm_ratio"),
        log_x=True,
        log_y=True,
        x_ticks=claims.SCALE_WIDTHS,
    )
    claimfig.level(fig, 1.0, t("claims.unscaled.equal"))
    claimfig.mark(fig, d, f"d = {d}")
    claim_figure("unscaled", fig, a, "claim_embedding_scale")
    verdict("unscaled", found)


def precision_tab() -> None:
    statement("precision")
    found = evidence("precision")
    a = found.arrays
    fig = figures.lines(
        a["position"],
        {dtype: a[dtype] for dtype in ("float16", "bfloat16", "float32")},
        title=t("claims.precision.fig"),
        x_title=t("axis.position"),
        y_title=t("claims.axis.error"),
        log_y=True,
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    claimfig.mark(fig, claims.ARTICLE_POSITION, t("claims.precision.article"))
    claim_figure("precision", fig, a, "claim_precision")
    verdict("precision", found)


def shift_tab() -> None:
    statement("shift")
    with controls():
        k = CTL.numeric("k", 1, 511, 5, slider=False)
    found = evidence("shift", k=k)
    claim_figure(
        "shift",
        heatmap(
            found.arrays["M"],
            title=t("claims.shift.fig", k=k, d=found.numbers["d"]),
            x_title=t("axis.dimension"),
            y_title=t("axis.dimension"),
            zmin=-1.0,
            zmax=1.0,
            colorbar_title="M",
        ),
        found.arrays["M"],
        f"claim_shift_k{k}",
    )
    verdict("shift", found)


def sum_tab() -> None:
    statement("sum")
    found = evidence("sum")
    claim_figure(
        "sum",
        heatmap(
            found.arrays["error"],
            title=t("claims.sum.fig"),
            x_title="j",
            y_title="i",
            colorscale="Viridis",
            zmid=None,
            zmin=0.0,
            colorbar_title=t("claims.axis.relative_error"),
        ),
        found.arrays["error"],
        "claim_sum",
    )
    verdict("sum", found)


def base_tab() -> None:
    statement("base")
    with controls():
        context = CTL.numeric("ctx", 256, 32768, 2048, marks=widgets.POWERS_OF_TWO)
    found = evidence("base", context=context)
    a, n = found.arrays, found.numbers
    fig = claimfig.stacked(
        a["base"],
        [
            (t("claims.base.near.axis"), {t("claims.base.near"): a["near"]}, True),
            (t("claims.base.order.axis"), {t("claims.base.order"): a["order"]}, False),
        ],
        title=t("claims.base.fig", d=n["pairs"] * 2, context=f"{context:,}"),
        x_title=t("claims.axis.base"),
    )
    claimfig.marks(fig, {10_000: "10,000", n["best"]: t("claims.base.best")})
    claim_figure("base", fig, {k: a[k] for k in ("base", "near", "order")}, "claim_base")
    fig = claimfig.series(
        {
            t("claims.base.fastest"): (a["base"], a["fastest_wavelength"]),
            t("claims.base.slowest"): (a["base"], a["slowest_wavelength"]),
        },
        title=t("claims.base.ends", d=n["pairs"] * 2),
        x_title=t("claims.axis.base"),
        y_title=t("claims.axis.wavelength"),
        log_x=True,
        log_y=True,
    )
    claimfig.level(fig, context, t("claims.base.context", context=f"{context:,}"))
    claim_figure(
        "base.ends",
        fig,
        {k: a[k] for k in ("base", "fastest_wavelength", "slowest_wavelength", "wrapping_pairs")},
        "claim_base_wavelengths",
    )
    verdict("base", found)


def blocks_tab() -> None:
    statement("blocks")
    found = evidence("blocks")
    for name in ("sinusoidal", "learned"):
        show(
            heatmap(
                found.arrays[name],
                title=t(f"claims.blocks.{name}"),
                x_title=t("axis.position"),
                y_title=t("axis.position"),
                zmin=-1.0,
                zmax=1.0,
                colorbar_title="cos",
            ),
            notice=t(f"claims.blocks.{name}.notice"),
            key=f"blocks_{name}",
            data=found.arrays[name],
            name=f"claim_similarity_{name}",
        )
    verdict("blocks", found)


def learned_tab() -> None:
    statement("learned")
    found = evidence("learned")
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["offset"],
        {
            t("claims.learned.trained"): a["trained"],
            t("claims.learned.init"): a["init"],
            t("claims.learned.sinusoidal"): a["sinusoidal"],
        },
        title=t("claims.learned.fig", n=n["n"], d=n["d"]),
        x_title=t("claims.axis.offset"),
        y_title=t("claims.axis.mean_cos"),
    )
    claim_figure("learned", fig, a, "claim_learned_positions")
    verdict("learned", found)


def oom_tab() -> None:
    statement("oom")
    found = evidence("oom")
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["tokens"],
        {t("claims.oom.found"): a["found"], t("claims.oom.missing"): a["missing"]},
        title=t("claims.oom.fig", n=f"{n['n']:,}", d=n["d"]),
        x_title=t("claims.axis.tokens"),
        y_title=t("claims.axis.mib"),
        from_zero=True,
    )
    claimfig.mark(fig, n["first_missing"], n["error"], side="left")
    claim_figure("oom", fig, a, "claim_past_table_end")
    verdict("oom", found)


def albert_tab() -> None:
    statement("albert")
    found = evidence("albert")
    a = found.arrays
    labels = [t(f"claims.albert.stage.{s}") for s in a["stage"]]
    claim_figure(
        "albert",
        claimfig.grouped_bars(
            labels,
            {"ALBERT-base": a["albert"], "BERT-base": a["bert"]},
            title=t("claims.albert.fig"),
            x_title=t("claims.axis.stage"),
            y_title=t("claims.axis.width"),
        ),
        a,
        "claim_albert_widths",
    )
    verdict("albert", found)


def rot90_tab() -> None:
    statement("rot90")
    found = evidence("rot90")
    a = found.arrays
    claim_figure(
        "rot90",
        figures.lines(
            a["position"],
            {t("claims.rot90.rot90"): a["rot90"], t("claims.rot90.turn"): a["quarter_turn"]},
            title=t("claims.rot90.fig"),
            x_title=t("axis.position"),
            y_title=t("claims.axis.relative_error"),
            from_zero=True,
        ),
        a,
        "claim_rot90",
    )
    verdict("rot90", found)


def head_dim_tab() -> None:
    statement("head_dim")
    found = evidence("head_dim")
    a, n = found.arrays, found.numbers
    fig = claimfig.series(
        {
            t("claims.head_dim.head", head_dim=n["head_dim"]): (a["pair"], a["head_dim"]),
            t("claims.head_dim.model", hidden=n["hidden"]): (a["pair"], a["d_model"], "dash"),
        },
        title=t("claims.head_dim.fig", hidden=n["hidden"], heads=n["heads"], head_dim=n["head_dim"]),
        legend_below=True,
        x_title=t("axis.pair"),
        y_title=t("claims.axis.wavelength"),
        log_y=True,
    )
    claimfig.level(fig, n["context"], t("claims.head_dim.context", context=f"{n['context']:,}"))
    claim_figure("head_dim", fig, a, "claim_rope_head_dim")
    verdict("head_dim", found)


def snippets_tab() -> None:
    statement("snippets")
    first, update = (json.dumps(c, indent=4) for c in (claims.ARTICLE_CONFIG, claims.ARTICLE_UPDATE))
    st.code(f"model_config = {first}\nmodel_config.update({update})", language="python", wrap_lines=True)
    found = evidence("snippets")
    a, n = found.arrays, found.numbers
    claim_figure(
        "snippets",
        claimfig.series(
            {
                t("claims.snippets.linear"): (a["pair"], a["linear"]),
                t("claims.snippets.article", n=f"{n['seq_len']:,}"): (a["pair"], a["article"]),
                t("claims.snippets.meant", n=f"{n['seq_len']:,}", original=f"{n['original']:,}"): (
                    a["pair"],
                    a["meant"],
                    "dash",
                ),
                t("claims.snippets.past", n=f"{n['past_len']:,}"): (a["pair"], a["past"], "dot"),
            },
            title=t("claims.snippets.fig"),
            legend_below=True,
            x_title=t("axis.pair"),
            y_title=t("claims.axis.ratio"),
            log_y=True,
        ),
        a,
        "claim_rope_snippets",
    )
    verdict("snippets", found)


def max_pos_tab() -> None:
    statement("max_pos")
    found = evidence("max_pos")
    claim_figure(
        "max_pos",
        figures.bars(
            found.arrays["type"],
            found.arrays["change"],
            title=t("claims.max_pos.fig", small=f"{found.numbers['small']:,}", large=f"{found.numbers['large']:,}"),
            x_title=t("claims.axis.rope_type"),
            y_title=t("claims.axis.log_change"),
        ),
        found.arrays,
        "claim_max_position_embeddings",
    )
    verdict("max_pos", found)


def alibi_tab() -> None:
    statement("alibi")
    found = evidence("alibi")
    traces = {}
    for h in claims.ALIBI_HEADS:
        heads = range(h)
        traces[t("claims.alibi.paper", h=h)] = (heads, found.arrays[f"paper_{h}"])
        traces[t("claims.alibi.article", h=h)] = (heads, found.arrays[f"article_{h}"], "dash")
    claim_figure(
        "alibi",
        claimfig.series(
            traces, title=t("claims.alibi.fig"), x_title=t("axis.head"), y_title=t("axis.slope"), log_y=True
        ),
        pd.DataFrame(
            {
                "heads": np.repeat(claims.ALIBI_HEADS, claims.ALIBI_HEADS),
                "head": np.concatenate([np.arange(h) for h in claims.ALIBI_HEADS]),
                "paper": np.concatenate([found.arrays[f"paper_{h}"] for h in claims.ALIBI_HEADS]),
                "article": np.concatenate([found.arrays[f"article_{h}"] for h in claims.ALIBI_HEADS]),
            }
        ),
        "claim_alibi_slopes",
    )
    verdict("alibi", found)


def tril_tab() -> None:
    statement("tril")
    found = evidence("tril")
    a = found.arrays
    claim_figure(
        "tril.bias",
        heatmap(
            a["bias"],
            title=t("claims.tril.bias"),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            colorbar_title=t("axis.bias"),
        ),
        a["bias"],
        "claim_tril_bias",
    )
    claim_figure(
        "tril.mass",
        figures.lines(
            range(a["future_mass"].shape[1]),
            {t("claims.tril.head", head=h): mass for h, mass in enumerate(a["future_mass"])},
            title=t("claims.tril.mass"),
            x_title=t("axis.query_position"),
            y_title=t("claims.axis.future"),
        ),
        {f"head_{h}": mass for h, mass in enumerate(a["future_mass"])},
        "claim_tril_future_mass",
    )
    verdict("tril", found)


def symmetry_tab() -> None:
    statement("symmetry")
    found = evidence("symmetry")
    a = found.arrays
    tokens = [str(w) for w in a["tokens"]]
    claim_figure(
        "symmetry.scores",
        claimfig.token_heatmap(
            a["scores"],
            tokens,
            title=t("claims.symmetry.scores", sentence=found.numbers["sentence"]),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            colorbar_title="q·k/√d",
        ),
        a["scores"],
        "claim_attention_scores",
    )
    claim_figure(
        "symmetry.shuffle",
        claimfig.grouped_bars(
            [f"{i} {w}" for i, w in enumerate(tokens)],
            {t("claims.symmetry.plain"): a["plain"], t("claims.symmetry.placed"): a["placed"]},
            title=t("claims.symmetry.shuffle"),
            x_title=t("claims.axis.token"),
            y_title=t("claims.axis.moved"),
        ),
        {"token": a["tokens"], "no_positions": a["plain"], "sinusoidal_positions": a["placed"]},
        "claim_attention_shuffle",
    )
    verdict("symmetry", found)


def extrapolate_tab() -> None:
    statement("extrapolate")
    with controls():
        train = CTL.numeric("train", 128, 8192, 512, marks=widgets.POWERS_OF_TWO)
    found = evidence("extrapolate", train_len=train)
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["step"],
        {
            t("claims.extrapolate.sinusoidal", d=n["d"]): a["sinusoidal"],
            t("claims.extrapolate.rope", head_dim=n["head_dim"]): a["rope"],
        },
        title=t("claims.extrapolate.fig", train=f"{train:,}"),
        x_title=t("claims.axis.step"),
        y_title=t("claims.axis.unseen"),
        y_range=(0.0, 1.0),
    )
    claimfig.mark(fig, train, t("claims.extrapolate.train", train=f"{train:,}"))
    claim_figure("extrapolate", fig, a, "claim_extrapolation")
    verdict("extrapolate", found)


def xlnet_tab() -> None:
    statement("xlnet")
    found = evidence("xlnet")
    a, n = found.arrays, found.numbers
    st.markdown(t("claims.xlnet.order", order=n["order"]))
    claim_figure(
        "xlnet",
        claimfig.mask_pair(
            a["content"],
            a["query"],
            subtitles=(t("claims.xlnet.content"), t("claims.xlnet.query")),
            levels=(t("claims.xlnet.hidden"), t("claims.xlnet.seen")),
            title=t("claims.xlnet.fig"),
            x_title=t("claims.axis.sees"),
            y_title=t("claims.axis.token_position"),
        ),
        {"order": a["order"]}
        | {f"content_sees_{j}": a["content"][:, j] for j in range(n["n"])}
        | {f"query_sees_{j}": a["query"][:, j] for j in range(n["n"])},
        "claim_xlnet_streams",
    )
    verdict("xlnet", found)


#: One entry per claim, in the order of ``claims.CLAIMS`` (grouped by topic); the code is the link's ``tab=``.
DRAW = {
    "exponent": exponent_tab,
    "norm": norm_tab,
    "unscaled": unscaled_tab,
    "precision": precision_tab,
    "shift": shift_tab,
    "sum": sum_tab,
    "base": base_tab,
    "blocks": blocks_tab,
    "learned": learned_tab,
    "oom": oom_tab,
    "albert": albert_tab,
    "rot90": rot90_tab,
    "head_dim": head_dim_tab,
    "snippets": snippets_tab,
    "max_pos": max_pos_tab,
    "alibi": alibi_tab,
    "tril": tril_tab,
    "symmetry": symmetry_tab,
    "extrapolate": extrapolate_tab,
    "xlnet": xlnet_tab,
}


def claim_label(code: str) -> str:
    return f"{t(f'claims.topic.{claims.CLAIMS[code].topic}')} · {t(f'claims.tab.{code}')}"


intro("claims")
if not presenting():  # on a projector the chosen claim and its figure come first, the table of verdicts after it
    with errors_shown("setting"):
        summary()
    st.divider()
# twenty claims do not fit a row of tabs: a selector, bound to the link as the tabs were (``tab=<code>``)
chosen = widgets.url_select(t("claims.pick"), list(DRAW), key="tab", default=next(iter(DRAW)), format_func=claim_label)
with errors_shown("setting"):
    DRAW[chosen]()  # only the chosen claim computes
if presenting():
    st.divider()
    with errors_shown("setting"):
        summary()
