"""Myth or fact's views of the claims about RoPE: ``torch.rot90`` as the rotation, head_dim against d_model, article
003's config snippets, what max_position_embeddings changes.

Each view reads its claim's evidence (``claims.evidence``: ``posviz.lessons.claims.check``), draws it with
``posviz.figures`` and ends with the verdict's sentence.
"""

from __future__ import annotations

from posviz import figures
from posviz.figures import claims as claimfig

from ..i18n import t
from ..pagekit import labels
from . import Figure, view
from .claims import evidence, verdict


@view("claims")
def rot90():
    """||y - RoPE(x, m)|| / ||x|| by position m, for y = ``torch.rot90`` of the pairs and for the quarter turn
    x cos(m theta) + J x sin(m theta) (``claims.rope_rot90``)."""
    found = evidence("rot90")
    a = found.arrays
    fig = figures.lines(
        a["position"],
        {t("claims.rot90.rot90"): a["rot90"], t("claims.rot90.turn"): a["quarter_turn"]},
        **labels("claims.rot90.fig", "axis.position", "claims.axis.relative_error"),
        from_zero=True,
    )
    return [Figure("rot90", fig, a), verdict("rot90", found)]


@view("claims")
def head_dim():
    """The wavelength 2 pi / theta_i of every pair, theta_i = base^(-2i/head_dim) against base^(-2i/d_model), beside
    the model's context (``claims.rope_head_dim``)."""
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
    return [Figure("head_dim", fig, a), verdict("head_dim", found)]


@view("claims")
def snippets():
    """theta'_i / theta_i of every pair under article 003's configs as transformers reads them: linear x4, the
    update at its length, what the update meant and a longer input (``claims.rope_snippets``)."""
    found = evidence("snippets")
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
    return [Figure("snippets", fig, a), verdict("snippets", found)]


@view("claims")
def max_pos():
    """max_i |ln theta_i(small) - ln theta_i(large)| for each rope_type when only max_position_embeddings changes
    (``claims.max_position_effect``)."""
    found = evidence("max_pos")
    small, large = (f"{found.numbers[k]:,}" for k in ("small", "large"))
    fig = figures.bars(
        found.arrays["type"],
        found.arrays["change"],
        **labels("claims.max_pos.fig", "claims.axis.rope_type", "claims.axis.log_change", small=small, large=large),
    )
    return [Figure("max_pos", fig, found.arrays), verdict("max_pos", found)]
