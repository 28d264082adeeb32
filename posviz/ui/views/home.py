"""The Home page's views: one attention head over a sentence and over a shuffle of it, as functions of the settings
of the demo (the sentence, the shuffle's seed, a position table added or not, a causal mask or not).

Attn(P X) = P Attn(X) without positions and without a mask; Attn(P X + PE) != P Attn(X + PE), and a causal mask
alone breaks it too (``posviz.lessons.attention_demo``). Each view calls ``attention_demo.shuffle_demo`` and the figure
builders (``posviz.figures.home``) directly; the page script reads the controls and draws what a view returns
(``views.draw``).
"""

from __future__ import annotations

import pandas as pd

from posviz.figures import home as home_figures
from posviz.lessons import attention_demo as demo

from ..i18n import t
from ..pagekit import labels
from . import Figure, Item, Text, view


def chips(tokens) -> str:
    """The tokens as inline code, one chip each (a token holding a backtick fenced by two)."""
    return " ".join(f"`` {token} ``" if "`" in token else f"`{token}`" for token in tokens)


def slots(tokens) -> list[str]:
    """Row and column names of a CSV: slot number and token, unique even when a word occurs twice."""
    return [f"{i} {token}" for i, token in enumerate(tokens)]


def mode(positions: bool, causal: bool) -> str:
    """The captions' variant: a position table added ("pe"), else a causal mask alone ("causal"), else "plain"."""
    return "pe" if positions else "causal" if causal else "plain"


@view("home")
def attention(sentence: str, seed: int, positions: bool, causal: bool, back: bool):
    """A = softmax(Q K^T / sqrt(d) + M) over the sentence as written and over its shuffle P X by ``seed``
    (``attention_demo.shuffle_demo``; Vaswani et al., 2017, equation 1), PE added by slot with ``positions``, the
    causal mask M with ``causal``; with ``back``, the shuffle's weights put back into the sentence's order, P^T A P."""
    result = demo.shuffle_demo(sentence, seed, positions=positions, causal=causal)
    items: list[Item] = []
    if result.truncated:
        items.append(Text(t("home.demo.truncated", total=result.n_found, shown=len(result.tokens)), "info"))
    items.append(Text(t("home.demo.orders", original=chips(result.tokens), shuffled=chips(result.shuffled_tokens))))
    right, right_tokens = (
        (result.sorted_back, result.tokens) if back else (result.shuffled_weights, result.shuffled_tokens)
    )
    panels = (t("home.attention.written"), t("home.attention.sorted" if back else "home.attention.shuffled"))
    fig = home_figures.attention_pair(
        result.weights,
        right,
        result.tokens,
        right_tokens,
        titles=panels,
        **labels("home.attention", "axis.key_token", "axis.query_token"),
        colorbar_title=t("home.attention.weight"),
    )
    data = pd.concat(
        {
            panels[0]: pd.DataFrame(result.weights, index=slots(result.tokens), columns=slots(result.tokens)),
            panels[1]: pd.DataFrame(right, index=slots(right_tokens), columns=slots(right_tokens)),
        },
        axis=1,
    )
    items.append(Figure("attention", fig, data, {"variant": mode(positions, causal)}))
    return items


@view("home")
def distance(sentence: str, seed: int, positions: bool, causal: bool):
    """Each token's output in the two orders, || Attn(X)[i] - Attn(P X)[slot of i] ||, against its length
    || Attn(X)[i] || (``attention_demo.shuffle_demo``): zero up to rounding without positions and without a mask;
    under the mask alone, zero exactly for the tokens preceded by the same tokens in both orders."""
    result = demo.shuffle_demo(sentence, seed, positions=positions, causal=causal)
    variant = mode(positions, causal)
    names = (t("home.distance.bar"), t("home.distance.norm"))
    named = labels("home.distance", "home.axis.token", "home.axis.distance")
    fig = home_figures.token_bars(result.tokens, result.distance, result.output_norm, names=names, **named)
    data = {"token": list(result.tokens), "distance": result.distance, "output_norm": result.output_norm}
    items: list[Item] = [
        Figure("distance", fig, data, {"variant": variant}),
        Text(t("home.demo.max", value=f"{result.largest_distance:.2g}", scale=f"{result.typical_norm:.2g}")),
    ]
    if variant == "causal":
        kept = [token for token, same in zip(result.tokens, result.same_prefix, strict=True) if same]
        n = len(result.tokens)
        items.append(
            Text(
                t("home.demo.kept", kept=len(kept), n=n, tokens=chips(kept)) if kept else t("home.demo.kept.none", n=n)
            )
        )
    return items
