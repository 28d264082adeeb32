"""The evidence of the claims about ALiBi and attention: the article's slopes, ``tril`` as a causal mask, the
symmetry of attention without positions, extrapolation past the training length, XLNet's two streams."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims

from .. import cache, heatmap, t, widgets
from ..pagekit import labels
from .verdicts import FIG, at_setting


def alibi() -> claims.Evidence:
    """Each head's slope as the paper and as the article compute them, for each head count."""
    found = cache.check("alibi")
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
    FIG.show("alibi", fig, data)
    return found


def tril() -> claims.Evidence:
    """The bias ``tril`` leaves above the diagonal, and the attention each query then gives to later keys."""
    found = cache.check("tril")
    a = found.arrays
    fig = heatmap(
        a["bias"],
        **labels("claims.tril.bias", "axis.key_position", "axis.query_position"),
        colorbar_title=t("axis.bias"),
    )
    FIG.show("tril.bias", fig, a["bias"])
    mass = {t("claims.tril.head", head=h): row for h, row in enumerate(a["future_mass"])}
    fig = figures.lines(
        range(a["future_mass"].shape[1]),
        mass,
        **labels("claims.tril.mass", "axis.query_position", "claims.axis.future"),
    )
    FIG.show("tril.mass", fig, {f"head_{h}": row for h, row in enumerate(a["future_mass"])})
    return found


def symmetry() -> claims.Evidence:
    """The attention scores of a sentence without positions, and how far each token's output moves when the
    sentence is shuffled, without positions and with them."""
    found = cache.check("symmetry")
    a = found.arrays
    tokens = [str(w) for w in a["tokens"]]
    fig = claimfig.token_heatmap(
        a["scores"],
        tokens,
        **labels(
            "claims.symmetry.scores", "axis.key_position", "axis.query_position", sentence=found.numbers["sentence"]
        ),
        colorbar_title="q·k/√d",
    )
    FIG.show("symmetry.scores", fig, a["scores"])
    fig = claimfig.grouped_bars(
        [f"{i} {w}" for i, w in enumerate(tokens)],
        {t("claims.symmetry.plain"): a["plain"], t("claims.symmetry.placed"): a["placed"]},
        **labels("claims.symmetry.shuffle", "claims.axis.token", "claims.axis.moved"),
    )
    FIG.show(
        "symmetry.shuffle", fig, {"token": a["tokens"], "no_positions": a["plain"], "sinusoidal_positions": a["placed"]}
    )
    return found


def extrapolate() -> claims.Evidence:
    """The share of position pairs never seen in training, by step past the training length: sinusoidal and RoPE."""
    train, found = at_setting("extrapolate", "train_len", 128, 8192, 512, key="train", marks=widgets.POWERS_OF_TWO)
    a, n = found.arrays, found.numbers
    fig = figures.lines(
        a["step"],
        {
            t("claims.extrapolate.sinusoidal", d=n["d"]): a["sinusoidal"],
            t("claims.extrapolate.rope", head_dim=n["head_dim"]): a["rope"],
        },
        **labels("claims.extrapolate.fig", "claims.axis.step", "claims.axis.unseen", train=f"{train:,}"),
        y_range=(0.0, 1.0),
    )
    claimfig.mark(fig, train, t("claims.extrapolate.train", train=f"{train:,}"))
    FIG.show("extrapolate", fig, a)
    return found


def xlnet() -> claims.Evidence:
    """A factorisation order, and what each token's content and query streams may see under it."""
    found = cache.check("xlnet")
    a, n = found.arrays, found.numbers
    st.markdown(t("claims.xlnet.order", order=n["order"]))
    fig = claimfig.mask_pair(
        a["content"],
        a["query"],
        subtitles=(t("claims.xlnet.content"), t("claims.xlnet.query")),
        levels=(t("claims.xlnet.hidden"), t("claims.xlnet.seen")),
        **labels("claims.xlnet.fig", "claims.axis.sees", "claims.axis.token_position"),
    )
    seen = {f"content_sees_{j}": a["content"][:, j] for j in range(n["n"])}
    seen |= {f"query_sees_{j}": a["query"][:, j] for j in range(n["n"])}
    FIG.show("xlnet", fig, {"order": a["order"]} | seen)
    return found
