"""Myth or fact: claims from the reference articles, each computed live and given a verdict."""

import numbers

import numpy as np
import pandas as pd
import streamlit as st

from posviz import claims, figures
from posviz.figures import claims as claimfig
from posviz.ui import cache, controls, errors_shown, heatmap, intro, lazy_tabs, show, t

ICONS = {"holds": ":material/check_circle:", "wrong": ":material/cancel:", "partly": ":material/error:"}
COLOURS = {"holds": "green", "wrong": "red", "partly": "orange"}
D_OPTIONS = (64, 128, 256, 512, 768, 1024, 2048, 4096)
SNIPPETS = (
    '{"rope_theta": 10000.0, "rope_scaling": {"type": "linear", "factor": 4.0}}\n'
    '{"rope_theta": 50000.0,\n'
    ' "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048}}'
)
CONTEXT_OPTIONS = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


def evidence(claim_id: str, **params) -> claims.Evidence:
    return cache.call(claims.check, claim_id, **params)


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


def sources(claim_id: str) -> str:
    return ", ".join(claims.CLAIMS[claim_id].sources)


def statement(claim_id: str) -> None:
    st.markdown(f"> {t(f'claims.{claim_id}.claim')}")
    st.markdown(f":gray[{t('claims.source', articles=sources(claim_id))}]")


def verdict(claim_id: str, found: claims.Evidence) -> None:
    code = found.verdict
    label = f":{COLOURS[code]}-badge[{ICONS[code]} {t(f'claims.verdict.{code}')}]"
    st.markdown(f"{label} {t(f'claims.{claim_id}.{code}', **formatted(found.numbers))}")


def summary() -> None:
    st.subheader(t("claims.summary"))
    codes = {claim_id: evidence(claim_id).verdict for claim_id in claims.CLAIMS}
    table = pd.DataFrame(
        {
            t("claims.col.claim"): [t(f"claims.{c}.short") for c in codes],
            t("claims.col.source"): [sources(c) for c in codes],
            t("claims.col.verdict"): [t(f"claims.verdict.{v}") for v in codes.values()],
        }
    )
    st.dataframe(table, hide_index=True, width="stretch", height=36 * (len(table) + 1) + 2)


def width() -> int:
    """The width d of the sinusoidal table, shared by the tabs that measure one (``?d=``)."""
    return st.select_slider(
        t("claims.ctl.d"), D_OPTIONS, 512, key="d", bind="query-params", help=t("claims.ctl.d.help")
    )


def exponent_tab() -> None:
    statement("exponent")
    with controls():
        d = width()
    found = evidence("exponent", d_model=d)
    a = found.arrays
    show(
        figures.lines(
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
        notice=t("claims.exponent.notice"),
        key="exponent",
        data=a,
        name="claim_doubled_exponent",
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
    )
    claimfig.level(
        fig, found.numbers["claimed"], t("claims.norm.claimed", d=d, value=f"{found.numbers['claimed']:.3g}")
    )
    fig.update_yaxes(range=[0, found.numbers["claimed"] * 1.15])
    show(fig, notice=t("claims.norm.notice"), key="norm", data=found.arrays, name="claim_row_norm")
    verdict("norm", found)


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
    )
    claimfig.mark(fig, claims.ARTICLE_POSITION, t("claims.precision.article"))
    show(fig, notice=t("claims.precision.notice"), key="precision", data=a, name="claim_precision")
    verdict("precision", found)


def shift_tab() -> None:
    statement("shift")
    with controls():
        k = st.number_input(t("claims.ctl.k"), 1, 511, 5, key="k", bind="query-params", help=t("claims.ctl.k.help"))
    found = evidence("shift", k=k)
    show(
        heatmap(
            found.arrays["M"],
            title=t("claims.shift.fig", k=k, d=found.numbers["d"]),
            x_title=t("axis.dimension"),
            y_title=t("axis.dimension"),
            zmin=-1.0,
            zmax=1.0,
            colorbar_title="M",
        ),
        notice=t("claims.shift.notice"),
        key="shift",
        data=found.arrays["M"],
        name=f"claim_shift_k{k}",
    )
    verdict("shift", found)


def alibi_tab() -> None:
    statement("alibi")
    found = evidence("alibi")
    traces = {}
    for h in claims.ALIBI_HEADS:
        heads = range(h)
        traces[t("claims.alibi.paper", h=h)] = (heads, found.arrays[f"paper_{h}"])
        traces[t("claims.alibi.article", h=h)] = (heads, found.arrays[f"article_{h}"], "dash")
    show(
        claimfig.series(
            traces, title=t("claims.alibi.fig"), x_title=t("axis.head"), y_title=t("axis.slope"), log_y=True
        ),
        notice=t("claims.alibi.notice"),
        key="alibi",
        data=pd.DataFrame(
            {
                "heads": np.repeat(claims.ALIBI_HEADS, claims.ALIBI_HEADS),
                "head": np.concatenate([np.arange(h) for h in claims.ALIBI_HEADS]),
                "paper": np.concatenate([found.arrays[f"paper_{h}"] for h in claims.ALIBI_HEADS]),
                "article": np.concatenate([found.arrays[f"article_{h}"] for h in claims.ALIBI_HEADS]),
            }
        ),
        name="claim_alibi_slopes",
    )
    verdict("alibi", found)


def rot90_tab() -> None:
    statement("rot90")
    found = evidence("rot90")
    a = found.arrays
    show(
        figures.lines(
            a["position"],
            {t("claims.rot90.rot90"): a["rot90"], t("claims.rot90.turn"): a["quarter_turn"]},
            title=t("claims.rot90.fig"),
            x_title=t("axis.position"),
            y_title=t("claims.axis.relative_error"),
        ),
        notice=t("claims.rot90.notice"),
        key="rot90",
        data=a,
        name="claim_rot90",
    )
    verdict("rot90", found)


def base_tab() -> None:
    statement("base")
    with controls():
        context = st.select_slider(
            t("claims.ctl.ctx"), CONTEXT_OPTIONS, 2048, key="ctx", bind="query-params", help=t("claims.ctl.ctx.help")
        )
    found = evidence("base", context=context)
    a = found.arrays
    fig = claimfig.two_scales(
        a["base"],
        (t("claims.base.near"), a["near"]),
        (t("claims.base.order"), a["order"]),
        title=t("claims.base.fig", context=f"{context:,}"),
        x_title=t("claims.axis.base"),
    )
    claimfig.mark(fig, 10_000, "10,000")
    claimfig.mark(fig, found.numbers["best"], t("claims.base.best"), dash="dash")
    show(fig, notice=t("claims.base.notice"), key="base", data=a, name="claim_base")
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


def snippets_tab() -> None:
    statement("snippets")
    st.code(SNIPPETS, language="json")
    found = evidence("snippets")
    a = found.arrays
    show(
        figures.lines(
            a["pair"],
            {
                t("claims.snippets.linear"): a["linear_short"],
                t("claims.snippets.theta"): a["theta_short"],
                t("claims.snippets.dynamic", n=f"{found.numbers['seq_len']:,}"): a["dynamic_long"],
            },
            title=t("claims.snippets.fig"),
            x_title=t("axis.pair"),
            y_title=t("claims.axis.ratio"),
            log_y=True,
        ),
        notice=t("claims.snippets.notice"),
        key="snippets",
        data=a,
        name="claim_rope_snippets",
    )
    verdict("snippets", found)


def sum_tab() -> None:
    statement("sum")
    found = evidence("sum")
    show(
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
        notice=t("claims.sum.notice"),
        key="sum",
        data=found.arrays["error"],
        name="claim_sum",
    )
    verdict("sum", found)


def tril_tab() -> None:
    statement("tril")
    found = evidence("tril")
    a = found.arrays
    show(
        heatmap(
            a["bias"],
            title=t("claims.tril.bias"),
            x_title=t("axis.key_position"),
            y_title=t("axis.query_position"),
            colorbar_title=t("axis.bias"),
        ),
        notice=t("claims.tril.bias.notice"),
        key="tril_bias",
        data=a["bias"],
        name="claim_tril_bias",
    )
    show(
        figures.lines(
            range(a["future_mass"].shape[1]),
            {t("claims.tril.head", head=h): mass for h, mass in enumerate(a["future_mass"])},
            title=t("claims.tril.mass"),
            x_title=t("axis.query_position"),
            y_title=t("claims.axis.future"),
        ),
        notice=t("claims.tril.mass.notice"),
        key="tril_mass",
        data={f"head_{h}": mass for h, mass in enumerate(a["future_mass"])},
        name="claim_tril_future_mass",
    )
    verdict("tril", found)


def max_pos_tab() -> None:
    statement("max_pos")
    found = evidence("max_pos")
    show(
        figures.bars(
            found.arrays["type"],
            found.arrays["change"],
            title=t("claims.max_pos.fig", small=f"{found.numbers['small']:,}", large=f"{found.numbers['large']:,}"),
            x_title=t("claims.axis.rope_type"),
            y_title=t("claims.axis.log_change"),
        ),
        notice=t("claims.max_pos.notice"),
        key="max_pos",
        data=found.arrays,
        name="claim_max_position_embeddings",
    )
    verdict("max_pos", found)


DRAW = {
    "exponent": exponent_tab,
    "norm": norm_tab,
    "precision": precision_tab,
    "shift": shift_tab,
    "alibi": alibi_tab,
    "rot90": rot90_tab,
    "base": base_tab,
    "blocks": blocks_tab,
    "snippets": snippets_tab,
    "sum": sum_tab,
    "tril": tril_tab,
    "max_pos": max_pos_tab,
}

intro("claims")
with errors_shown():
    summary()
lazy_tabs("claims", DRAW)  # only the open tab computes
