"""Myth or fact's views of the claims about learned tables: their block structure, whether learning positions works,
a position past the table's end, ALBERT's table width.

Each view reads its claim's evidence (``claims.evidence``: ``posviz.lessons.claims.check``), draws it with
``posviz.figures`` and ends with the verdict's sentence.
"""

from __future__ import annotations

from posviz import figures
from posviz.figures import claims as claimfig

from ..i18n import t
from ..pagekit import labels
from . import Figure, similarity_heatmap, view
from .claims import evidence, verdict


@view("claims")
def blocks():
    """The cosine similarity cos(PE(i), PE(j)) of the sinusoidal table and of posviz's trained example, in turn, on
    [-1, 1] (``claims.learned_blocks``)."""
    found = evidence("blocks")
    items = []
    for name in ("sinusoidal", "learned"):
        matrix = found.arrays[name]
        fig = similarity_heatmap(matrix, range(len(matrix)), len(matrix), title=t(f"claims.blocks.{name}"))
        items.append(Figure(f"blocks.{name}", fig, matrix))
    return [*items, verdict("blocks", found)]


@view("claims")
def learned():
    """The mean cosine similarity at each offset |i - j| of a trained table, of its random start and of the
    sinusoidal table (``claims.learned_positions_work``)."""
    found = evidence("learned")
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["offset"],
        {
            t("claims.learned.trained"): a["trained"],
            t("claims.learned.init"): a["init"],
            t("claims.learned.sinusoidal"): a["sinusoidal"],
        },
        **labels("claims.learned.fig", "claims.axis.offset", "claims.axis.mean_cos", n=n["n"], d=n["d"]),
    )
    return [Figure("learned", fig, a), verdict("learned", found)]


@view("claims")
def oom():
    """The 4 d L bytes (in MiB) the rows of L tokens take, and the row past the table's end where the lookup stops
    (``claims.past_table_end``)."""
    found = evidence("oom")
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["tokens"],
        {t("claims.oom.found"): a["found"], t("claims.oom.missing"): a["missing"]},
        **labels("claims.oom.fig", "claims.axis.tokens", "claims.axis.mib", n=f"{n['n']:,}", d=n["d"]),
        from_zero=True,
    )
    claimfig.mark(fig, n["first_missing"], n["error"], side="left")
    return [Figure("oom", fig, a), verdict("oom", found)]


@view("claims")
def albert():
    """The width of each stage of ALBERT-base's embedding block against BERT-base's (``claims.albert_table_width``)."""
    found = evidence("albert")
    a = found.arrays
    fig = claimfig.grouped_bars(
        [t(f"claims.albert.stage.{s}") for s in a["stage"]],
        {"ALBERT-base": a["albert"], "BERT-base": a["bert"]},
        **labels("claims.albert.fig", "claims.axis.stage", "claims.axis.width"),
    )
    return [Figure("albert", fig, a), verdict("albert", found)]
