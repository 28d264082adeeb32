"""The ALiBi page's views: the slopes and where they come from, the bias of one head, the article's formula against
the paper's, one query's attention row, each head's span and the bias and attention far past the training length.

Slopes (Press et al., 2022, "Train Short, Test Long", arXiv:2108.12409, section 3): for n heads a power of two,
m_h = 2^(-8(h + 1)/n), h = 0 .. n - 1; otherwise the c slopes of c heads (c the largest power of two below n), then
every other slope of 2c heads. Each view calls the core (``posviz.encodings.alibi``) and the figure builders
(``posviz.figures``) directly; the page script reads the controls and draws what a view returns (``views.draw``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from posviz import figures
from posviz.base.sampling import evenly_spaced
from posviz.encodings import alibi
from posviz.figures import alibi as alibi_figures

from ..i18n import t
from ..pagekit import labels
from . import Figure, Frame, family_heatmap, view

#: How far a key's weight falls, as a fraction of the nearest key's, at a head's span.
SPAN_RATIO = 0.01


def head_names(heads: Iterable[int], slopes: np.ndarray) -> dict[int, str]:
    """Each head's legend entry, "head h (m = ...)", by head number."""
    return {int(h): t("alibi.head_label", head=int(h), slope=f"{slopes[h]:.4g}") for h in heads}


def agreeing_heads(agree: np.ndarray) -> str:
    """The heads (numbered from 0, as on the page) where a per-head test holds, in words: "head 0", "none"."""
    heads = [str(h) for h in agree.nonzero()[0]]
    if not heads:
        return t("alibi.article.which.none")
    return t(
        "alibi.article.which.one" if len(heads) == 1 else "alibi.article.which.many",
        heads=t("alibi.article.which.sep").join(heads),
    )


def origin_names(n_heads: int) -> tuple[str, ...]:
    """The names of the three origins of a slope (of c heads, an extra one of 2c heads, unused), with this head
    count's c, the largest power of two <= n (``alibi.alibi_slope_origin``: the heads of origin 0)."""
    c = int((alibi.alibi_slope_origin(n_heads) == 0).sum())
    return tuple(t(f"alibi.origin.{use}", c=c, c2=2 * c) for use in ("c", "extra", "unused"))


@view("alibi")
def slopes(n_heads: int):
    """m_h for every head (``alibi.alibi_slopes``), coloured by where it comes from (``alibi.alibi_slope_origin``:
    the slopes of c heads, or every other slope of 2c heads)."""
    values, origin = alibi.alibi_slopes(n_heads), alibi.alibi_slope_origin(n_heads)
    fig = alibi_figures.slopes_by_origin(
        tuple(str(h) for h in range(n_heads)),
        values,
        origin,
        origin_names(n_heads),
        **labels("alibi.slopes", "axis.head", "axis.slope"),
    )
    data = {"head": range(n_heads), "slope": values, "from_2c_heads": origin}
    power = not origin.any()  # c = n: every slope is one of n heads
    return [Figure("slopes", fig, data, {"variant": "power" if power else None})]


@view("alibi")
def bias(n_heads: int, seq_len: int, head: int, causal: bool):
    """-m_h (i - j) for query i and key j of head ``head`` (-inf above the diagonal when causal), -m_h |i - j|
    otherwise: the table of the ALiBi family (``posviz.family("alibi")``)."""
    slope = alibi.alibi_slopes(n_heads)[head]
    params = {"causal": causal, "head": head, "n_heads": n_heads, "seq_len": seq_len}
    named = labels("alibi.bias", "axis.key_position", "axis.query_position", head=head, slope=f"{slope:.4g}")
    table, fig = family_heatmap(
        "alibi", params, **named, colorscale="Viridis", zmid=None, colorbar_title=t("axis.bias")
    )
    return [Figure("bias", fig, table, {"variant": "causal" if causal else "symmetric", "suffix": f"head{head}"})]


@view("alibi")
def ladder(n_heads: int):
    """The 2c slopes of 2c heads, 2^(-8(r + 1)/2c), and which of them n heads use (``alibi.alibi_slope_ladder``)."""
    rungs, use = alibi.alibi_slope_ladder(n_heads)
    closest = len(use) // 2
    named = labels("alibi.ladder", "alibi.ladder.x", "axis.slope", n=n_heads, c=closest, c2=2 * closest)
    fig = alibi_figures.slope_ladder(rungs, use, origin_names(n_heads), **named)
    data = {"h": range(len(use)), "slope_of_2c_heads": rungs, "use": use}
    return [Figure("ladder", fig, data, {"variant": "power" if closest == n_heads else None})]


@view("alibi")
def article(head_counts: tuple[int, ...]):
    """The paper's m_k = 2^(-8k/n) against one article's 2^(-(7 + k)/n), k = 1 .. n, for each head count
    (``alibi.alibi_slopes``, ``alibi.article_slopes``), and the heads where the two agree."""
    paper_rule, article_rule = t("alibi.article.paper"), t("alibi.article.article")
    series, agree = {}, []
    for n in head_counts:
        series[t("alibi.article.heads", n=n)] = (alibi.alibi_slopes(n), alibi.article_slopes(n))
        agree.append(alibi.article_slopes_agree(n))
    fig = alibi_figures.formula_check(
        series, (paper_rule, article_rule), **labels("alibi.article", "axis.head", "axis.slope")
    )
    data = {
        f"{n}_heads_{rule}": values
        for n, (paper, theirs) in zip(head_counts, series.values(), strict=True)
        for rule, values in (("paper", paper), ("article", theirs))
    }
    pairs = list(series.values())
    table = {
        t("alibi.col.heads"): list(head_counts),
        t("alibi.article.col.count"): [int(a.sum()) for a in agree],
        t("alibi.article.col.which"): [agreeing_heads(a) for a in agree],
        t("alibi.article.col.paper_min"): [f"{paper.min():.4g}" for paper, _ in pairs],
        t("alibi.article.col.article_min"): [f"{theirs.min():.4g}" for _, theirs in pairs],
    }
    return [Figure("article", fig, data), Frame(table)]


@view("alibi")
def row(n_heads: int, query: int, seed: int | None):
    """a_h(j) = exp(s_j - m_h (i - j)) / sum_k exp(s_k - m_h (i - k)) over the keys j <= i of query i, for four
    heads, and softmax(s) without the bias (``alibi.alibi_attention_row``; s = 0, or N(0, 1) draws from ``seed``)."""
    shown = evenly_spaced(n_heads, 4)
    with_bias, without = alibi.alibi_attention_row(n_heads, query, heads=shown, seed=seed)
    names = head_names(shown, alibi.alibi_slopes(n_heads))
    lines = {t("alibi.row.no_bias"): without} | {names[h]: with_bias[k] for k, h in enumerate(shown)}
    fig = figures.lines(
        range(query + 1), lines, **labels("alibi.row", "axis.key_position", "alibi.axis.weight", i=query)
    )
    return [Figure("row", fig, {"key_position": range(query + 1)} | lines, {"suffix": query})]


@view("alibi")
def span(n_heads: int):
    """d_h = ln(100) / m_h, the distance at which a key's weight is 1 % of the nearest key's (``alibi.alibi_span``)."""
    values, spans = alibi.alibi_slopes(n_heads), alibi.alibi_span(n_heads, SPAN_RATIO)
    named = labels("alibi.span", "axis.head", "alibi.axis.distance")
    fig = figures.bars([str(h) for h in range(n_heads)], spans, **named, log_y=True)
    return [Figure("span", fig, {"head": range(n_heads), "slope": values, "span_1_percent": spans})]


@view("alibi")
def long(n_heads: int, train: int):
    """-m_h d for d = 0 .. 4T (``alibi.alibi_distance_bias``) and the attention mass the last query of L tokens puts
    on keys at distance >= T, L up to 8T (``alibi.alibi_mass_beyond``), for at most eight heads; T = ``train``."""
    few = tuple(int(h) for h in evenly_spaced(n_heads, 8))
    names = head_names(few, alibi.alibi_slopes(n_heads))
    trained = t("alibi.train_len", n=train)
    distances = range(4 * train + 1)
    far = alibi.alibi_distance_bias(n_heads, 4 * train)
    distance_lines = {names[h]: far[h] for h in few}
    named = labels("alibi.far", "alibi.axis.distance", "axis.bias")
    far_fig = alibi_figures.lines_with_marker(distances, distance_lines, marker=train, marker_text=trained, **named)
    lengths = evenly_spaced(8 * train + 1, 65)[1:]
    mass = alibi.alibi_mass_beyond(n_heads, train, lengths)
    mass_lines = {names[h]: 100.0 * mass[h] for h in few}
    named = labels("alibi.mass", "alibi.axis.seq_len", "alibi.axis.percent", n=train)
    mass_fig = alibi_figures.lines_with_marker(lengths, mass_lines, marker=train, marker_text=trained, **named)
    return [
        Figure("far", far_fig, {"distance": distances} | distance_lines),
        Figure("mass", mass_fig, {"seq_len": lengths} | mass_lines),
    ]
