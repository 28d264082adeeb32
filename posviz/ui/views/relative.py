"""The relative page's views: Shaw et al.'s clipped index and how many embeddings a length uses, T5's bucket of every
(query, key) pair, its bucket curve with the regions and the bucket sizes, and a bias table read by bucket.

Shaw et al. (2018, arXiv:1803.02155, section 3.2): a_ij = clip(j - i, -k, k) + k. T5 (Raffel et al., 2020, section
2.1): n = |j - i| (or max(i - j, 0) when causal) in bucket n below E, E + floor(ln(n/E) / ln(D/E) (B - E)) capped at
B - 1 above. Each view calls the core (``posviz.encodings.relative``) and the figure builders (``posviz.figures``)
directly; the page script reads the controls and draws what a view returns (``views.draw``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posviz import figures
from posviz.encodings import relative
from posviz.figures import alibi as line_figures
from posviz.figures import relative as relative_figures

from ..i18n import t
from ..pagekit import labels
from . import Figure, Text, family_heatmap, view

#: The axes of a (query, key) matrix.
PAIRS = ("axis.key_position", "axis.query_position")


def offsets(max_distance: int) -> tuple[int, ...]:
    """The relative positions j - i the T5 curves are drawn over: -2D .. 2D."""
    return tuple(range(-2 * max_distance, 2 * max_distance + 1))


@view("relative")
def shaw(length: int, clip: int):
    """clip(j - i, -k, k) + k for every query i and key j (the table of the Shaw family, ``posviz.family("shaw")``)
    and 2 min(L - 1, k) + 1, the embeddings an L x L attention uses, for L = 1 .. max(4k, 2 ``length``)
    (``relative.shaw_distinct_count``)."""
    index, heatmap = family_heatmap(
        "shaw",
        {"max_relative_position": clip, "seq_len": length},
        **labels("relative.shaw.index", *PAIRS, k=clip),
        colorscale="RdBu_r",
        zmid=float(clip),
        colorbar_title=t("axis.index"),
    )
    lengths = tuple(range(1, max(4 * clip, 2 * length) + 1))
    distinct = relative.shaw_distinct_count(lengths, clip)
    fig = line_figures.lines_with_marker(
        lengths,
        {t("relative.shaw.distinct.y"): distinct},
        marker=clip + 1,
        marker_text=t("relative.shaw.distinct.marker", n=clip + 1),
        **labels("relative.shaw.distinct", "param.seq_len", "relative.shaw.distinct.y", k=clip, total=2 * clip + 1),
    )
    return [
        Figure("shaw", heatmap, index),
        Figure("shaw.distinct", fig, {"seq_len": lengths, "distinct_embeddings": distinct}),
    ]


@view("relative")
def t5_matrix(length: int, buckets: int, max_distance: int, bidirectional: bool):
    """T5's bucket of j - i for every query i and key j: the table of the T5 family (``posviz.family("t5")``)."""
    settings = {"bidirectional": bidirectional, "max_distance": max_distance, "num_buckets": buckets}
    matrix, fig = family_heatmap(
        "t5",
        settings | {"seq_len": length},
        **labels("relative.t5.matrix", *PAIRS),
        colorscale="Turbo",
        zmid=None,
        colorbar_title=t("axis.bucket"),
    )
    return [Figure("t5.matrix", fig, matrix)]


@view("relative")
def t5_buckets(buckets: int, max_distance: int, bidirectional: bool):
    """T5's bucket of every j - i in -2D .. 2D (``relative.t5_relative_bucket``) with its exact, logarithmic and flat
    regions (``relative.t5_exact_region``, ``relative.t5_last_bucket_start``), how many of -D .. D each bucket
    holds (``relative.t5_bucket_sizes``) and the buckets none reaches (``relative.t5_unused_buckets``)."""
    kwargs: dict[str, Any] = {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": max_distance}
    max_exact = relative.t5_exact_region(buckets, bidirectional)
    side = buckets // 2 if bidirectional else buckets
    rule = t(
        "relative.t5.n.bidirectional" if bidirectional else "relative.t5.n.causal",
        side=side,
        exact=max_exact,
        d=max_distance,
    )
    shown = offsets(max_distance)
    curve = relative.t5_relative_bucket(shown, **kwargs)
    last_start = relative.t5_last_bucket_start(**kwargs)
    regions = {
        "exact": t("relative.t5.region.exact", n=max_exact),
        "log": t("relative.t5.region.log", n=max_exact, s=last_start),
        "flat": t("relative.t5.region.flat", s=last_start),
    }
    curve_fig = relative_figures.bucket_curve(
        shown,
        curve,
        max_exact=max_exact,
        last_start=last_start,
        bidirectional=bidirectional,
        region_names=regions,
        **labels("relative.t5.curve", "axis.relative", "axis.bucket"),
    )
    sizes = relative.t5_bucket_sizes(**kwargs)
    named = labels("relative.t5.sizes", "axis.bucket", "relative.t5.sizes.y", d=max_distance)
    sizes_fig = figures.bars(tuple(str(b) for b in range(buckets)), sizes, **named)
    listed = ", ".join(str(b) for b in relative.t5_unused_buckets(**kwargs)) or "—"
    unused = (
        t("relative.t5.unused.bidirectional", b=buckets // 2, listed=listed)
        if bidirectional
        else t("relative.t5.unused.causal", listed=listed)
    )
    return [
        Text(rule),
        Figure(
            "t5.curve",
            curve_fig,
            {"relative_position": shown, "bucket": curve},
            {
                "variant": "clamp" if last_start >= max_distance else None,
                "s": last_start,
                "d": max_distance,
                "top": max_distance - 1,
            },
        ),
        Figure("t5.sizes", sizes_fig, {"bucket": range(buckets), "relative_positions": sizes}),
        Text(unused, "info"),
    ]


def _bias_by_offset(table: np.ndarray, title: str, max_distance: int, bidirectional: bool) -> list[Figure]:
    """bias[bucket(j - i), h] for every head h and j - i in -2D .. 2D (``relative.t5_bias_curve``), the buckets of
    ``table``'s own count, which decides where the biases go flat (``relative.t5_last_bucket_start``)."""
    shown = offsets(max_distance)
    bias = relative.t5_bias_curve(table, shown, bidirectional=bidirectional, max_distance=max_distance)
    flat_from = relative.t5_last_bucket_start(
        bidirectional=bidirectional, num_buckets=table.shape[0], max_distance=max_distance
    )
    heads = {t("relative.t5.bias.head", h=h): bias[h] for h in range(bias.shape[0])}
    fig = line_figures.lines_with_marker(
        shown, heads, marker=0, marker_text="i = j", title=title, x_title=t("axis.relative"), y_title=t("axis.bias")
    )
    return [Figure("t5.bias", fig, {"relative_position": shown} | heads, {"s": flat_from})]


@view("relative")
def t5_bias(buckets: int, max_distance: int, bidirectional: bool):
    """Each head's bias by relative position (``_bias_by_offset``) from a made-up table of ``buckets`` buckets and
    eight heads, not a trained one (``relative.t5_synthetic_bias_table``)."""
    title = t("relative.t5.bias.synthetic", b=buckets)
    return _bias_by_offset(relative.t5_synthetic_bias_table(buckets), title, max_distance, bidirectional)


@view("relative")
def t5_learned_bias(
    name: str, shape: tuple[int, ...], values: tuple[float, ...], max_distance: int, bidirectional: bool
):
    """Each head's bias by relative position (``_bias_by_offset``) from the session's table ``name``, its
    ``values`` row by row in a (buckets, heads) ``shape``: T5's ``relative_attention_bias.weight``."""
    table = np.asarray(values, dtype=np.float64).reshape(shape)
    title = t("relative.t5.bias.learned", name=name, b=table.shape[0], h=table.shape[1])
    return _bias_by_offset(table, title, max_distance, bidirectional)
