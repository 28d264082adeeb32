"""The Pitfalls page's views, one per figure (or per version's column) of its tabs, as functions of their settings:
each mistake's table or curve beside the correct one, and the number that gives it away.

Each view calls the core (``posviz.lessons.pitfalls``, ``posviz.lessons.precision``, ``posviz.encodings.alibi``,
``posviz.analysis``) and the figure builders (``posviz.figures.pitfalls``, ``views.heatmap``) directly; the page
script reads the controls, draws each version's code and torch's messages, and draws what a view returns
(``views.draw``).
"""

from __future__ import annotations

import numpy as np

from posviz import analysis
from posviz.base import checks
from posviz.encodings import alibi, learned
from posviz.figures import pitfalls as pitfall_figures
from posviz.lessons import pitfalls, precision

from ..i18n import core_message, t
from ..pagekit import labels
from . import Figure, Item, Text, heatmap, shared, similarity_heatmap, view

#: Positions compared pairwise (similarity, offsets, nearest neighbour): at most this many of the page's n.
PAIRWISE = 512
#: Tokens and positions of the inputs whose cosine similarity the scale tab draws.
MIX_TOKENS, MIX_POSITIONS = 8, 16
#: Error plots start at zero and reach at least the level that means "large" (a pair as far off the unit circle as
#: it can be, a spread as large as the dot products, one whole position); log error plots stop at ERROR_FLOOR.
LARGE_ERROR = 1.0
ERROR_FLOOR = 1e-10
#: The tables of the exponent tab: the correct one and the buggy loops'.
EXPONENT_KINDS = ("correct", *pitfalls.VARIANTS)
#: The tables of the axes tab.
AXES_KINDS = ("correct", "swapped")


def _table(kind: str, n: int, d: int, base: float) -> np.ndarray:
    """``pitfalls.TABLES[kind](n, d, base=base)``, shared by the views that draw it and those that measure it (up to
    4096 x 1024 numbers; ``views.shared``)."""
    return shared(pitfalls.TABLES[kind], n, d, base=base)


@view("pitfalls")
def exponent_table(kind: str, n: int, d: int, base: float):
    """The correct table PE[p, 2k] = sin(p base^(-2k/d)), PE[p, 2k + 1] = cos(p base^(-2k/d)) (Vaswani et al.,
    2017), or a buggy loop's, whose pair k turns at base^(-4k/d) (``pitfalls.TABLES[kind]``)."""
    checks.choice("kind", kind, EXPONENT_KINDS)
    table = _table(kind, n, d, base)
    title, key = (
        ("pitfalls.exponent.correct", "table_ok")
        if kind == "correct"
        else (f"pitfalls.exponent.buggy.{kind}", "table_bug")
    )
    fig = heatmap(table, **labels(title, "axis.dimension", "axis.position"), colorbar_title="PE")
    return [Figure(key, fig, table, {"suffix": kind})]


def _versions(variant: str) -> tuple[str, str]:
    checks.choice("variant", variant, pitfalls.VARIANTS)
    return t("pitfalls.correct"), t(f"pitfalls.variant.{variant}")


@view("pitfalls")
def exponent_motion(n: int, d: int, base: float, variant: str):
    """How far each column moves over the positions, max_p PE[p, j] - min_p PE[p, j] (``pitfalls.column_motion``),
    of the correct table and of the buggy loop ``variant``."""
    names = _versions(variant)
    motion = {kind: pitfalls.column_motion(_table(kind, n, d, base)) for kind in ("correct", variant)}
    named = labels("pitfalls.exponent.motion", "axis.dimension", "pitfalls.axis.motion", n=n)
    fig = pitfall_figures.versus(range(d), *zip(names, motion.values(), strict=True), **named)
    return [Figure("exponent.motion", fig, {"correct": motion["correct"], variant: motion[variant]})]


@view("pitfalls")
def exponent_radius(n: int, d: int, base: float, variant: str):
    """Each pair's distance from the unit circle, max_p |PE[p, 2k]^2 + PE[p, 2k + 1]^2 - 1|
    (``pitfalls.pair_radius_error``), of the correct table and of the buggy loop ``variant``, and the signature:
    the columns that move by less than 0.05 (``pitfalls.still_columns``) and the largest departure of each."""
    names = _versions(variant)
    tables = {kind: _table(kind, n, d, base) for kind in ("correct", variant)}
    radius = {kind: pitfalls.pair_radius_error(table) for kind, table in tables.items()}
    fig = pitfall_figures.versus(
        range(d // 2),
        *zip(names, radius.values(), strict=True),
        **labels("pitfalls.exponent.radius", "axis.pair", "pitfalls.axis.radius"),
        scale=(LARGE_ERROR, t("pitfalls.reference.radius")),
    )
    still = {kind: pitfalls.still_columns(table) for kind, table in tables.items()}
    signature = t(
        "pitfalls.exponent.signature",
        d=d,
        n=n,
        ok=still["correct"],
        bug=still[variant],
        radius_ok=f"{radius['correct'].max():.2g}",
        radius_bug=f"{radius[variant].max():.2g}",
    )
    return [
        Figure("exponent.radius", fig, {"correct": radius["correct"], variant: radius[variant]}),
        Text(signature),
    ]


@view("pitfalls")
def axes_similarity(kind: str, n: int, d: int, base: float):
    """The cosine similarity PE(i) . PE(j) / (|PE(i)| |PE(j)|) (``analysis.cosine_similarity_matrix``) of the first
    min(n, ``PAIRWISE``) positions of the correct table or of the one with position and dimension swapped
    (``pitfalls.swapped_axes_table``)."""
    checks.choice("kind", kind, AXES_KINDS)
    m = min(n, PAIRWISE)
    similarity = analysis.cosine_similarity_matrix(pitfalls.TABLES[kind](m, d, base=base))
    fig = similarity_heatmap(similarity, range(m), m, title=t(f"pitfalls.axes.{kind}"))
    return [Figure(f"axes.{kind}", fig, similarity)]


@view("pitfalls")
def axes_offset(n: int, d: int, base: float):
    """For each offset k, the spread over p of PE(p) . PE(p + k), over the largest |dot|
    (``pitfalls.offset_dependence``), of the correct table and the swapped one over min(n, ``PAIRWISE``) positions,
    and its largest value."""
    m = min(n, PAIRWISE)
    spread = {kind: pitfalls.offset_dependence(pitfalls.TABLES[kind](m, d, base=base)) for kind in AXES_KINDS}
    fig = pitfall_figures.versus(
        range(m),
        (t("pitfalls.correct"), spread["correct"]),
        (t("pitfalls.axes.bugname"), spread["swapped"]),
        **labels("pitfalls.axes.offset", "pitfalls.axis.offset", "pitfalls.axis.spread"),
        scale=(LARGE_ERROR, t("pitfalls.reference.spread")),
    )
    signature = t(
        "pitfalls.axes.signature", m=m, ok=f"{spread['correct'].max():.1e}", bug=f"{spread['swapped'].max():.2f}"
    )
    return [
        Figure("axes.offset", fig, {"offset": range(m), "correct": spread["correct"], "swapped": spread["swapped"]}),
        Text(signature),
    ]


@view("pitfalls")
def zero_nearest(n: int, d: int):
    """Each position's distance to its nearest other, min_{q != p} |PE(p) - PE(q)| (``pitfalls.nearest_distance``),
    in BERT's random initial table and in an all-zero one, over min(n, ``PAIRWISE``) positions (at least 2)."""
    m = min(n, PAIRWISE)
    nearest = {kind: pitfalls.nearest_distance(pitfalls.TABLES[kind](m, d)) for kind in ("random", "zero")}
    lines = [(t(f"pitfalls.zero.{kind}"), values) for kind, values in nearest.items()]
    fig = pitfall_figures.versus(
        range(m), *lines, **labels("pitfalls.zero.nearest", "axis.position", "pitfalls.axis.nearest")
    )
    signature = t("pitfalls.zero.signature", m=m, ok=f"{nearest['random'].min():.3f}", bug=f"{nearest['zero'].max():g}")
    return [
        Figure("zero.nearest", fig, {"random_init": nearest["random"], "zero_init": nearest["zero"]}),
        Text(signature),
    ]


@view("pitfalls")
def scale_mix(d: int, base: float, scaled: bool):
    """The cosine similarity of the inputs x = s E[t] + PE[p] of ``MIX_TOKENS`` tokens at ``MIX_POSITIONS``
    positions, s = sqrt(d) when ``scaled`` and 1 when not (Vaswani et al., 2017, section 3.4;
    ``pitfalls.mix_signature``), and what it says: the mean cosine at one position, of one token, and |PE| / |s E|."""
    similarity, same_position, same_token, ratio = pitfalls.mix_signature(
        d, MIX_TOKENS, MIX_POSITIONS, scaled=scaled, base=base
    )
    name = "scaled" if scaled else "unscaled"
    named = labels(f"pitfalls.scale.{name}", "pitfalls.axis.input", "pitfalls.axis.input")
    fig = heatmap(similarity, **named, zmin=-1.0, zmax=1.0, colorbar_title="cos")
    signature = t(
        "pitfalls.scale.signature",
        same_position=f"{same_position:.2f}",
        same_token=f"{same_token:.2f}",
        ratio=f"{ratio:.2f}",
    )
    return [Figure(f"scale.{name}", fig, similarity), Text(signature)]


@view("pitfalls")
def combine_lost(n: int, d: int, base: float):
    """The share of a token's dimensions that position p nearly erases, |dx_j / dE_j| < 0.1, for x = E + PE (none)
    and x = E * PE (where |PE[p, j]| < 0.1; ``pitfalls.lost_dimensions``)."""
    lost = {how: pitfalls.lost_dimensions(n, d, combine=how, base=base) for how in pitfalls.COMBINES}
    lines = [(t(f"pitfalls.combine.{how}"), lost[how]) for how in ("add", "multiply")]
    fig = pitfall_figures.versus(
        range(n), *lines, **labels("pitfalls.combine.lost", "axis.position", "pitfalls.axis.lost")
    )
    return [Figure("combine.lost", fig, {"add": lost["add"], "multiply": lost["multiply"]})]


@view("pitfalls")
def rope_pairing(head_dim: int, n: int, base: float):
    """The logits s(r) = RoPE(q, r) . RoPE(k, 0) / sqrt(d) by offset r under the pairing a model was trained with,
    (2i, 2i + 1), and the one inference applies, (i, i + d/2) (``pitfalls.pairing_scores``), and their largest gap
    over the largest trained logit (``pitfalls.pairing_gap``)."""
    offsets, trained, inference = pitfalls.pairing_scores(head_dim, n, base=base)
    lines = (t("pitfalls.rope.trained"), trained), (t("pitfalls.rope.inference"), inference)
    named = labels("pitfalls.rope.scores", "pitfalls.axis.offset", "pitfalls.axis.score", d=head_dim)
    fig = pitfall_figures.versus(offsets, *lines, **named)
    gap = pitfalls.pairing_gap(trained, inference)
    return [
        Figure("rope.scores", fig, {"offset": offsets, "interleaved": trained, "half": inference}),
        Text(t("pitfalls.rope.signature", gap=f"{100 * gap:.0f}")),
    ]


@view("pitfalls")
def alibi_slopes(heads: int):
    """ALiBi's slopes for ``heads`` heads as the paper sets them (``alibi.alibi_slopes``; Press et al., 2022) and
    by the power-of-two rule m_h = 2^(-8h/n) applied to any count (``pitfalls.naive_alibi_slopes``), with how many
    heads the rule gets wrong and by how many factors of two at most (``pitfalls.slope_error``)."""
    paper = alibi.alibi_slopes(heads)
    naive = pitfalls.naive_alibi_slopes(heads)
    lines = (t("pitfalls.alibi.paper"), paper), (t("pitfalls.alibi.naive"), naive)
    named = labels("pitfalls.alibi.slopes", "axis.head", "axis.slope", n=heads)
    fig = pitfall_figures.versus_bars(range(1, heads + 1), *lines, **named, log_y=True)
    error = pitfalls.slope_error(heads)
    c = int((alibi.alibi_slope_origin(heads) == 0).sum())
    key = "pitfalls.alibi.power" if c == heads else "pitfalls.alibi.signature"
    return [
        Figure("alibi.slopes", fig, {"head": range(1, heads + 1), "paper": paper, "naive": naive}),
        Text(t(key, n=heads, c=c, worst=f"{error.max():.2f}", wrong=int((error > 1e-12).sum()))),
    ]


@view("pitfalls")
def float16_rounding(span: int):
    """How far each position p < ``span`` moves when held in float16 and in float32, |round(p) - p|
    (``pitfalls.position_rounding``, at most 4096 evenly spaced positions)."""
    positions, err16, err32 = pitfalls.position_rounding(span)
    fig = pitfall_figures.versus(
        positions,
        ("float32", err32),
        ("float16", err16),
        **labels("pitfalls.float16.rounding", "axis.position", "pitfalls.axis.rounding"),
        scale=(LARGE_ERROR, t("pitfalls.reference.position")),
    )
    return [Figure("float16.rounding", fig, {"position": positions, "float32": err32, "float16": err16})]


@view("pitfalls")
def float16_error(span: int, d: int, base: float):
    """The largest error of a position's sin/cos pairs computed in float16 and in float32 against float64,
    max_k max(|sin_dtype(p w_k) - sin(p w_k)|, |cos_dtype(p w_k) - cos(p w_k)|) (``precision.pair_errors_by_dtype``),
    on a log axis that stops at ``ERROR_FLOOR``."""
    errors = precision.pair_errors_by_dtype(span, d, base=base, dtypes=("float16", "float32"))
    (sampled, _, worst16), (_, _, worst32) = errors["float16"], errors["float32"]
    fig = pitfall_figures.versus(
        sampled,
        ("float32", worst32),
        ("float16", worst16),
        **labels("pitfalls.float16.error", "axis.position", "pitfalls.axis.error", d=d),
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    return [Figure("float16.error", fig, {"position": sampled, "float32": worst32, "float16": worst16})]


@view("pitfalls")
def float16_merged(span: int):
    """How many of the positions 1 .. ``span`` - 1 hold the same number as the one before in float16 and in float32
    (``pitfalls.merged_neighbours``), the first position float16 cannot hold (``precision.first_merged_position``),
    and, past 4096 positions, that the rounding is drawn at evenly spaced ones."""
    signature = t(
        "pitfalls.float16.signature",
        span=f"{span:,}",
        merged16=f"{pitfalls.merged_neighbours(span, 'float16'):,}",
        merged32=f"{pitfalls.merged_neighbours(span, 'float32'):,}",
        first=f"{precision.first_merged_position('float16'):,}",
    )
    shown = len(pitfalls.position_rounding(span)[0])
    return [Text(signature)] + ([Text(t("pitfalls.subsampled", shown=shown, n=span))] if shown < span else [])


# ------------------------------------------------------------------------------------ what the libraries say

#: The length of the dummy batches whose errors are shown.
DUMMY_SEQUENCE = 4


def _said(label: str, message: str) -> list[Item]:
    """A sentence naming who speaks, then the message as it is printed."""
    return [Text(label), Text(message, "code")]


@view("pitfalls")
def axes_error(n: int, d: int):
    """What torch says when the (n, d) table is added to its (d, n) transpose (``pitfalls.torch_add_error``), or
    that it says nothing for a square table."""
    if n == d:
        return [Text(t("pitfalls.axes.silent", n=n), "info")]
    return _said(t("pitfalls.axes.error", n=n, d=d), pitfalls.torch_add_error((n, d), (d, n)))


@view("pitfalls")
def concat_error(d: int):
    """torch's error for a concatenation of a (4, d) table with (4, d) embeddings fed to a d-wide layer
    (``pitfalls.concat_error``)."""
    return _said(t("pitfalls.combine.concat.error", d=d), pitfalls.concat_error(DUMMY_SEQUENCE, d))


@view("pitfalls")
def shape_error(d_tok: int, d_pos: int):
    """torch's error for token embeddings of width ``d_tok`` plus positions of width ``d_pos``, or that the two
    widths agree."""
    if d_tok == d_pos:
        return [Text(t("pitfalls.shape.same", d=d_tok), "info")]
    message = pitfalls.torch_add_error((DUMMY_SEQUENCE, d_tok), (DUMMY_SEQUENCE, d_pos))
    return _said(t("pitfalls.shape.error", n=DUMMY_SEQUENCE, a=d_tok, b=d_pos), message)


@view("pitfalls")
def odd_rope_errors(odd: int, base: float):
    """What torch, transformers and posviz say of a RoPE head of odd size (``pitfalls.rope_odd_error``,
    ``rope_odd_config_error``, ``rope_odd_reason``), or that an even one turns in whole pairs."""
    if odd % 2 == 0:
        return [Text(t("pitfalls.rope.even", d=odd), "info")]
    items = _said(t("pitfalls.rope.torch", d=odd), pitfalls.rope_odd_error(odd, base=base))
    refusal = pitfalls.rope_odd_config_error(odd)
    if refusal:
        items += _said(t("pitfalls.rope.transformers", d=odd), refusal)
    else:
        items.append(Text(t("pitfalls.rope.transformers.tiny", d=odd), "info"))
    return items + _said(t("pitfalls.rope.posviz"), core_message(pitfalls.rope_odd_reason(odd)))


@view("pitfalls")
def index_errors(rows: int, position: int):
    """What torch and posviz say of a lookup at ``position`` in a table of ``rows`` rows
    (``pitfalls.past_end_error``, ``learned.lookup_error``), or that the position is inside it."""
    if position < rows:
        return [Text(t("pitfalls.index.inside", pos=position, rows=rows), "info")]
    return _said(t("pitfalls.index.torch"), pitfalls.past_end_error(rows, position)) + _said(
        t("pitfalls.index.posviz"), core_message(learned.lookup_error(rows, position))
    )
