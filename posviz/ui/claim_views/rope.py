"""The evidence of the claims about RoPE: ``torch.rot90`` as the rotation, head_dim against d_model, the articles'
config snippets, what max_position_embeddings changes."""

from __future__ import annotations

import json

import streamlit as st

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims

from .. import cache, t
from ..pagekit import labels
from .verdicts import FIG


def rot90() -> claims.Evidence:
    """The error of ``torch.rot90`` and of a quarter turn of each pair, against the true rotation, by position."""
    found = cache.check("rot90")
    a = found.arrays
    fig = figures.lines(
        a["position"],
        {t("claims.rot90.rot90"): a["rot90"], t("claims.rot90.turn"): a["quarter_turn"]},
        **labels("claims.rot90.fig", "axis.position", "claims.axis.relative_error"),
        from_zero=True,
    )
    FIG.show("rot90", fig, a)
    return found


def head_dim() -> claims.Evidence:
    """The wavelength of every pair with RoPE over head_dim and over the whole d_model."""
    found = cache.check("head_dim")
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
    FIG.show("head_dim", fig, a)
    return found


def snippets() -> claims.Evidence:
    """The article's config and its update, as code; then each pair's frequency under them, against linear scaling,
    what the update meant and a longer past."""
    first, update = (json.dumps(c, indent=4) for c in (claims.ARTICLE_CONFIG, claims.ARTICLE_UPDATE))
    st.code(f"model_config = {first}\nmodel_config.update({update})", language="python", wrap_lines=True)
    found = cache.check("snippets")
    a, n = found.arrays, found.numbers
    meant = t("claims.snippets.meant", n=f"{n['seq_len']:,}", original=f"{n['original']:,}")
    fig = claimfig.series(
        {
            t("claims.snippets.linear"): (a["pair"], a["linear"]),
            t("claims.snippets.article", n=f"{n['seq_len']:,}"): (a["pair"], a["article"]),
            meant: (a["pair"], a["meant"], "dash"),
            t("claims.snippets.past", n=f"{n['past_len']:,}"): (a["pair"], a["past"], "dot"),
        },
        title=t("claims.snippets.fig"),
        legend_below=True,
        x_title=t("axis.pair"),
        y_title=t("claims.axis.ratio"),
        log_y=True,
    )
    FIG.show("snippets", fig, a)
    return found


def max_pos() -> claims.Evidence:
    """How much the frequencies change, for each rope_type, when only max_position_embeddings changes."""
    found = cache.check("max_pos")
    small, large = (f"{found.numbers[k]:,}" for k in ("small", "large"))
    fig = figures.bars(
        found.arrays["type"],
        found.arrays["change"],
        **labels("claims.max_pos.fig", "claims.axis.rope_type", "claims.axis.log_change", small=small, large=large),
    )
    FIG.show("max_pos", fig, found.arrays)
    return found
