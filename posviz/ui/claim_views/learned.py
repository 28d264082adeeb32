"""The evidence of the claims about learned tables: their block structure, whether learning positions works, a
position past the table's end, ALBERT's table width."""

from __future__ import annotations

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims

from .. import cache, similarity_heatmap, t
from ..pagekit import labels
from .verdicts import FIG


def blocks() -> claims.Evidence:
    """The cosine similarity of the positions of the sinusoidal table and of a learned one, side by side in turn."""
    found = cache.check("blocks")
    for name in ("sinusoidal", "learned"):
        matrix = found.arrays[name]
        fig = similarity_heatmap(matrix, range(len(matrix)), len(matrix), title=t(f"claims.blocks.{name}"))
        FIG.show(f"blocks.{name}", fig, matrix)
    return found


def learned() -> claims.Evidence:
    """The mean similarity by offset of a trained table, of its random start and of the sinusoidal table."""
    found = cache.check("learned")
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
    FIG.show("learned", fig, a)
    return found


def oom() -> claims.Evidence:
    """The memory a lookup past the table's end would take, and where it fails."""
    found = cache.check("oom")
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["tokens"],
        {t("claims.oom.found"): a["found"], t("claims.oom.missing"): a["missing"]},
        **labels("claims.oom.fig", "claims.axis.tokens", "claims.axis.mib", n=f"{n['n']:,}", d=n["d"]),
        from_zero=True,
    )
    claimfig.mark(fig, n["first_missing"], n["error"], side="left")
    FIG.show("oom", fig, a)
    return found


def albert() -> claims.Evidence:
    """The width of each stage of ALBERT's embedding block against BERT's."""
    found = cache.check("albert")
    a = found.arrays
    fig = claimfig.grouped_bars(
        [t(f"claims.albert.stage.{s}") for s in a["stage"]],
        {"ALBERT-base": a["albert"], "BERT-base": a["bert"]},
        **labels("claims.albert.fig", "claims.axis.stage", "claims.axis.width"),
    )
    FIG.show("albert", fig, a)
    return found
