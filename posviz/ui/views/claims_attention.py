"""Myth or fact's views of the claims about ALiBi and attention: the article's slopes, ``tril`` as a causal mask,
the symmetry of attention without positions, extrapolation past the training length, XLNet's two streams.

Each view reads its claim's evidence at its setting (``claims.evidence``: ``posviz.lessons.claims.check``), draws it
with ``posviz.figures`` and ends with the verdict's sentence.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims

from ..i18n import t
from ..pagekit import labels
from . import Figure, Text, heatmap, view
from .claims import evidence, verdict


@view("claims")
def alibi():
    """Each head's slope, the paper's m_h = 2^(-8(h + 1)/n) (for n a power of two) and the article's 2^(-(8 + h)/n),
    for each head count of ``claims.ALIBI_HEADS`` (``claims.alibi_article_slopes``)."""
    found = evidence("alibi")
    traces: dict[str, tuple] = {}
    for h in claims.ALIBI_HEADS:
        heads = range(h)
        traces[t("claims.alibi.paper", h=h)] = (heads, found.arrays[f"paper_{h}"])
        traces[t("claims.alibi.article", h=h)] = (heads, found.arrays[f"article_{h}"], "dash")
    fig = claimfig.series(
        traces, title=t("claims.alibi.fig"), x_title=t("axis.head"), y_title=t("axis.slope"), log_y=True
    )
    data = pd.DataFrame(
        {
            "heads": np.repeat(claims.ALIBI_HEADS, claims.ALIBI_HEADS),
            "head": np.concatenate([np.arange(h) for h in claims.ALIBI_HEADS]),
            "paper": np.concatenate([found.arrays[f"paper_{h}"] for h in claims.ALIBI_HEADS]),
            "article": np.concatenate([found.arrays[f"article_{h}"] for h in claims.ALIBI_HEADS]),
        }
    )
    return [Figure("alibi", fig, data), verdict("alibi", found)]


@view("claims")
def tril():
    """The bias ``tril(-m |i - j|)`` of head 0, 0 above the diagonal, and the share of attention each query of each
    head then gives to later keys (``claims.alibi_tril``)."""
    found = evidence("tril")
    a = found.arrays
    bias = heatmap(
        a["bias"],
        **labels("claims.tril.bias", "axis.key_position", "axis.query_position"),
        colorbar_title=t("axis.bias"),
    )
    mass = {t("claims.tril.head", head=h): row for h, row in enumerate(a["future_mass"])}
    lines = figures.lines(
        range(a["future_mass"].shape[1]),
        mass,
        **labels("claims.tril.mass", "axis.query_position", "claims.axis.future"),
    )
    return [
        Figure("tril.bias", bias, a["bias"]),
        Figure("tril.mass", lines, {f"head_{h}": row for h, row in enumerate(a["future_mass"])}),
        verdict("tril", found),
    ]


@view("claims")
def symmetry():
    """The scores q_i . k_j / sqrt(d) of a sentence without positions, and how far each token's output moves when the
    sentence is shuffled, without positions and with sinusoidal ones (``claims.attention_symmetry``)."""
    found = evidence("symmetry")
    a = found.arrays
    tokens = [str(w) for w in a["tokens"]]
    scores = claimfig.token_heatmap(
        a["scores"],
        tokens,
        **labels(
            "claims.symmetry.scores", "axis.key_position", "axis.query_position", sentence=found.numbers["sentence"]
        ),
        colorbar_title="q·k/√d",
    )
    moved = claimfig.grouped_bars(
        [f"{i} {w}" for i, w in enumerate(tokens)],
        {t("claims.symmetry.plain"): a["plain"], t("claims.symmetry.placed"): a["placed"]},
        **labels("claims.symmetry.shuffle", "claims.axis.token", "claims.axis.moved"),
    )
    data = {"token": a["tokens"], "no_positions": a["plain"], "sinusoidal_positions": a["placed"]}
    return [
        Figure("symmetry.scores", scores, a["scores"]),
        Figure("symmetry.shuffle", moved, data),
        verdict("symmetry", found),
    ]


@view("claims")
def extrapolate(train_len: int):
    """The share of pairs at an angle training on ``train_len`` tokens never produced, by position (sinusoidal) and by
    distance (RoPE), up to ``claims.EXTRAPOLATION_SPAN`` training lengths (``claims.extrapolation``)."""
    found = evidence("extrapolate", train_len=train_len)
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["step"],
        {
            t("claims.extrapolate.sinusoidal", d=n["d"]): a["sinusoidal"],
            t("claims.extrapolate.rope", head_dim=n["head_dim"]): a["rope"],
        },
        **labels("claims.extrapolate.fig", "claims.axis.step", "claims.axis.unseen", train=f"{train_len:,}"),
        y_range=(0.0, 1.0),
    )
    claimfig.mark(fig, train_len, t("claims.extrapolate.train", train=f"{train_len:,}"))
    return [Figure("extrapolate", fig, a), verdict("extrapolate", found)]


@view("claims")
def xlnet():
    """A factorisation order, and which tokens each token's content stream (itself and earlier steps) and query
    stream (earlier steps only) may see under it (``claims.xlnet_streams``)."""
    found = evidence("xlnet")
    a, n = found.arrays, found.numbers
    fig = claimfig.mask_pair(
        a["content"],
        a["query"],
        subtitles=(t("claims.xlnet.content"), t("claims.xlnet.query")),
        levels=(t("claims.xlnet.hidden"), t("claims.xlnet.seen")),
        **labels("claims.xlnet.fig", "claims.axis.sees", "claims.axis.token_position"),
    )
    seen = {f"content_sees_{j}": a["content"][:, j] for j in range(n["n"])}
    seen |= {f"query_sees_{j}": a["query"][:, j] for j in range(n["n"])}
    return [
        Text(t("claims.xlnet.order", order=n["order"])),
        Figure("xlnet", fig, {"order": a["order"]} | seen),
        verdict("xlnet", found),
    ]
