"""The Sinusoidal page's views: the table and its similarity, the offset profiles, the shift matrix, the
wavelengths, the projection, the positions past a training length, the two layouts, low precision and the norms,
as functions of their settings.

Each view calls the core (``posviz.encodings.sinusoidal``, ``posviz.lessons.sinusoidal``,
``posviz.lessons.precision``, ``posviz.analysis``) and the figure builders (``posviz.figures``) directly; the page
script reads the controls and draws what a view returns (``views.draw``).
"""

from __future__ import annotations

import numpy as np

from posviz import analysis, figures
from posviz.base import checks
from posviz.encodings import sinusoidal as sin
from posviz.figures import sinusoidal as sinfig
from posviz.lessons import precision
from posviz.lessons import sinusoidal as sinlesson

from .. import SIMILARITY_POSITIONS, cache
from ..export import MAX_CSV_CELLS
from ..i18n import t
from ..pagekit import labels
from . import Figure, Item, Text, family_heatmap, heatmap, shared, similarity_heatmap, view

#: Rows a projection reads at most, by method: t-SNE of a thousand points costs about two seconds.
PROJECTION_POSITIONS = {"pca": 2048, "tsne": 512}
#: The bases every similarity-to-position-0 plot draws, besides the one chosen.
REFERENCE_BASES = (100.0, 10_000.0, 1_000_000.0)
#: The position past which an article the page quotes says the low dimensions start to jump (float precision).
ARTICLE_POSITION = 20_000
#: Floors of the log error plots: the spread along a diagonal, and the largest error of a row (exact zeros lie on them).
SPREAD_FLOOR = 1e-17
ERROR_FLOOR = 1e-12
#: The random table the spread along diagonals is compared with: ``learned``'s N(0, 0.02^2) initialisation.
RANDOM_STD = 0.02


def _params(n: int, d: int, base: float, layout: str) -> dict[str, object]:
    return {"base": base, "d_model": d, "layout": layout, "n_positions": n}


def _step(shown: int, total: int) -> float:
    """The spacing of ``shown`` evenly spaced positions out of ``total`` (1 when every position is shown)."""
    return (total - 1) / max(shown - 1, 1) if shown < total else 1.0


def _subsampled(shown: int, total: int) -> list[Item]:
    """The sentence that a figure reads ``shown`` evenly spaced positions of ``total``, when it does."""
    return [Text(t("sinusoidal.subsampled", shown=shown, n=total))] if shown < total else []


@view("sinusoidal")
def table(n: int, d: int, base: float, layout: str):
    """PE[p, 2i] = sin(p w_i), PE[p, 2i + 1] = cos(p w_i), w_i = base^(-2i/d) (Vaswani et al., 2017; the family
    ``posviz.family("sinusoidal")``), and the cosine similarity of at most ``SIMILARITY_POSITIONS`` evenly spaced
    rows (``sinusoidal_similarity``). A table of more than ``MAX_CSV_CELLS`` cells is drawn and exported as its
    block means in closed form (``sinusoidal_block_means``), without building it."""
    named = labels("sinusoidal.table", "axis.dimension", "axis.position")
    if n * d <= MAX_CSV_CELLS:
        data, fig = family_heatmap("sinusoidal", _params(n, d, base, layout), colorbar_title="PE", **named)
    else:
        data = sinlesson.sinusoidal_block_means(n, d, base=base, layout=layout, max_side=figures.MAX_SIDE)
        fig = heatmap(np.broadcast_to(np.nan, (n, d)), reduced=data, colorbar_title="PE", **named)
    positions, similarity = sinlesson.sinusoidal_similarity(n, d, SIMILARITY_POSITIONS, base=base, layout=layout)
    similar = similarity_heatmap(similarity, positions, n)
    return [Figure("table", fig, data), Figure("similarity", similar, similarity), *_subsampled(len(positions), n)]


@view("sinusoidal")
def distance(n: int, d: int, base: float, layout: str):
    """The mean PE(i) . PE(i + k) and cosine per offset k (``sinusoidal_offset_profile``: sum_j cos(k w_j) for an
    even d) and their spread along each diagonal (``sinusoidal_lag_spread``), beside the spread of a random table
    (``analysis.lag_spread`` of ``learned``'s random initialisation) of as many rows."""
    offsets, dot, cosine = sinlesson.sinusoidal_offset_profile(n, d, base=base, layout=layout)
    lines = ((t("sinusoidal.offset.dot"), dot), (t("sinusoidal.offset.cos"), cosine))
    profile = sinfig.dual_lines(offsets, *lines, title=t("sinusoidal.offset"), x_title=t("sinusoidal.axis.offset"))
    lags, dot_spread, cos_spread = sinlesson.sinusoidal_lag_spread(n, d, base=base, layout=layout)
    random_params = {"d_model": d, "init": "random", "n_positions": len(lags) + 2, "seed": 0, "std": RANDOM_STD}
    _, _, random_spread = analysis.lag_spread(cache.family_table("learned", random_params))
    spreads = {"dot": dot_spread, "cos": cos_spread, "random": random_spread}
    spread = sinfig.log_lines(
        lags,
        {t(f"sinusoidal.spread.{name}"): values for name, values in spreads.items()},
        **labels("sinusoidal.spread", "sinusoidal.axis.offset", "sinusoidal.axis.spread"),
        log_y=True,
        floor=(SPREAD_FLOOR, t("figure.floor", floor=f"{SPREAD_FLOOR:.0e}")),
    )
    return [
        Figure("offset", profile, {"offset": offsets, "mean_dot": dot, "mean_cosine": cosine}),
        Figure(
            "spread",
            spread,
            {"offset": lags, "dot_spread": dot_spread, "cos_spread": cos_spread, "random_cos_spread": random_spread},
        ),
    ]


@view("sinusoidal")
def shift(d: int, k: int, base: float, layout: str):
    """M_k, the block-diagonal matrix of 2 x 2 rotations by k w_i with PE(p + k) = M_k PE(p)
    (``sin.shift_matrix``); for an odd d, which has no such matrix, the warning that says so."""
    if d % 2:
        return [Text(t("sinusoidal.shift.odd", d=d), "warning")]
    matrix = sin.shift_matrix(d, k, base=base, layout=layout)
    named = labels("sinusoidal.shift", "axis.dimension", "axis.dimension", k=k)
    fig = heatmap(matrix, **named, zmin=-1.0, zmax=1.0, colorbar_title="M")
    return [Figure("shift", fig, matrix, {"suffix": f"k{k}"})]


@view("sinusoidal")
def shift_residual(n: int, d: int, k: int, base: float, layout: str):
    """max_p ||PE(p + k) - M_k PE(p)||_2 over p = 0 .. n - k - 1, at most 4,096 of them evenly spaced
    (``sampled_shift_residual``), in a sentence; the core refuses an odd d and k >= n."""
    residual, used = sinlesson.sampled_shift_residual(n, d, k, base=base, layout=layout)
    if used < n - k:
        return [Text(t("sinusoidal.shift.residual.sampled", k=k, shown=used, n=n - k, residual=f"{residual:.1e}"))]
    return [Text(t("sinusoidal.shift.residual", k=k, n=n, residual=f"{residual:.1e}"))]


@view("sinusoidal")
def frequencies(n: int, d: int, base: float):
    """lambda_i = 2 pi base^(2i/d) per pair (``sin.sinusoidal_wavelengths``), those longer than the context apart
    (``slow_pairs``), and cos(PE(0), PE(k)) for the reference bases and the chosen one (``origin_similarity``)."""
    wavelength = sin.sinusoidal_wavelengths(d, base=base)
    slow = sinlesson.slow_pairs(d, n, base=base)
    waves = sinfig.wavelengths(
        wavelength,
        slow,
        n,
        **labels("sinusoidal.wavelength", "axis.pair", "sinusoidal.axis.wavelength"),
        fast_name=t("sinusoidal.wavelength.fast"),
        slow_name=t("sinusoidal.wavelength.slow"),
        context_label=t("sinusoidal.wavelength.context", n=n),
    )
    bases = tuple(dict.fromkeys((*REFERENCE_BASES, base)))
    offsets, similarity = sinlesson.origin_similarity(n, d, bases)
    names = [t("sinusoidal.base.line", base=f"{b:,.0f}") for b in bases]
    if base not in REFERENCE_BASES:
        names[-1] = t("sinusoidal.base.chosen", base=f"{base:,.0f}")
    named = labels("sinusoidal.base", "sinusoidal.axis.offset", "sinusoidal.axis.cos0")
    by_base = sinfig.log_lines(offsets, dict(zip(names, similarity, strict=True)), **named, log_x=True)
    return [
        Figure(
            "wavelength",
            waves,
            {"pair": range(len(wavelength)), "wavelength": wavelength, "longer_than_context": slow},
            {"longest": f"{wavelength[-1]:,.0f}"},
        ),
        Text(t("sinusoidal.wavelength.count", slow=int(slow.sum()), pairs=len(slow), n=n)),
        Figure(
            "base",
            by_base,
            {"offset": offsets, **{f"base_{b:g}": s for b, s in zip(bases, similarity, strict=True)}},
            {"chart": "bases"},
        ),
    ]


@view("sinusoidal")
def projection(n: int, d: int, base: float, layout: str, method: str):
    """The rows of at most ``PROJECTION_POSITIONS[method]`` evenly spaced positions projected to 2-D by PCA or
    t-SNE (``sinusoidal_projection``), joined in order."""
    checks.choice("method", method, analysis.PROJECTIONS)
    shown, coords = sinlesson.sinusoidal_projection(
        n, d, method, PROJECTION_POSITIONS[method], base=base, layout=layout
    )
    fig = figures.positions_path(
        shown,
        coords,
        **labels(f"sinusoidal.proj.title.{method}", "sinusoidal.axis.c1", "sinusoidal.axis.c2"),
        colorbar_title=t("axis.position"),
        height=520,
        equal_axes=True,
    )
    data = {"position": shown, "x": coords[:, 0], "y": coords[:, 1]}
    options = {"variant": method, "suffix": method, "chart": "projection"}
    return [Figure("proj", fig, data, options), *_subsampled(len(shown), n)]


@view("sinusoidal")
def extrapolation(n: int, d: int, base: float, layout: str, train: int):
    """The share of each row's entries outside the range the first ``train`` positions cover, and each
    dimension's largest distance outside it (``sinusoidal_beyond_training``)."""
    positions, share, excess = sinlesson.sinusoidal_beyond_training(n, d, train, base=base, layout=layout)
    beyond = sinfig.lines_shaded_from(
        positions,
        {t("sinusoidal.extra.share"): share},
        train,  # the positions from the training length on, if the table has any
        n - 1,
        t("sinusoidal.extra.unseen"),
        **labels("sinusoidal.extra", "axis.position", "sinusoidal.axis.share"),
    )
    bars = figures.bars(
        range(d), excess, **labels("sinusoidal.excess", "axis.dimension", "sinusoidal.axis.excess", train=train)
    )
    told = (
        [Text(t("sinusoidal.extra.none", train=train, n=n), "info")] if train >= n else _subsampled(len(positions), n)
    )
    return [
        Figure("extra", beyond, {"position": positions, "share_outside": share}),
        Figure("excess", bars, {"excess": excess}),
        *told,
    ]


@view("sinusoidal")
def layout_order(d: int):
    """Where each column of the halves layout (sin | cos) stands in the interleaved one
    (``sin.layout_permutation``), and its first columns in a sentence."""
    order = sin.layout_permutation(d)
    fig = sinfig.permutation(
        order, **labels("sinusoidal.layout", "sinusoidal.axis.halves", "sinusoidal.axis.interleaved")
    )
    head = ", ".join(str(i) for i in order[:8]) + (", …" if d > 8 else "")
    return [
        Figure("layout", fig, {"halves_column": range(d), "interleaved_column": order}, {"chart": "layout_perm"}),
        Text(t("sinusoidal.layout.text", order=head, n_sin=(d + 1) // 2)),
    ]


@view("sinusoidal")
def precision_map(span: int, d: int, base: float, dtype: str):
    """error[p, k] = max(|sin_dtype(p w_k) - sin(p w_k)|, |cos_dtype(p w_k) - cos(p w_k)|) over at most 4,096
    evenly spaced positions of ``span`` (``precision.pair_errors_by_dtype``, shared with ``precision_lines``: the
    errors of every format are computed once for both)."""
    checks.choice("dtype", dtype, precision.DTYPES)
    sampled, errors, _ = shared(precision.pair_errors_by_dtype, span, d, base=base)[dtype]
    named = labels("sinusoidal.precision.map", "axis.pair", "axis.position", dtype=dtype)
    fig = heatmap(
        errors,
        **named,
        colorscale="Viridis",
        zmid=None,
        zmin=0.0,
        zmax=2.0,
        dy=_step(len(sampled), span),
        colorbar_title="|err|",
    )
    return [Figure("precision.map", fig, errors, {"suffix": dtype})]


@view("sinusoidal")
def precision_lines(span: int, d: int, base: float):
    """max_k error[p, k] of every format (``precision.pair_errors_by_dtype``), the first position each format
    cannot hold (``first_merged_position``) and the article's, and where each breaks down
    (``breakdown_position``), in sentences."""
    results = shared(precision.pair_errors_by_dtype, span, d, base=base)
    sampled = results[precision.DTYPES[0]][0]
    fig = sinfig.log_lines(
        sampled,
        {dt: results[dt][2] for dt in precision.DTYPES},
        **labels("sinusoidal.precision", "axis.position", "sinusoidal.axis.error"),
        log_y=True,
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    # the marks' labels over the plot, where no curve runs; bfloat16's and float16's marks are close: two rows
    for dt, row in (("bfloat16", 1), ("float16", 0)):
        if precision.first_merged_position(dt) <= span:
            sinfig.mark(
                fig,
                x=precision.first_merged_position(dt),
                label=t("sinusoidal.precision.merge", dtype=dt),
                position="above right",
                row=row,
            )
    if ARTICLE_POSITION <= span:
        sinfig.mark(
            fig, x=ARTICLE_POSITION, label=t("sinusoidal.precision.article"), dash="dot", position="above right"
        )
    data = {"position": sampled, **{f"max_error_{dt}": results[dt][2] for dt in precision.DTYPES}}
    options = {"span": f"{span:,}", "float32": f"{results['float32'][2].max():.1e}"}
    lines = []
    for dt in precision.DTYPES:
        positions, _, worst = results[dt]
        broken = precision.breakdown_position(positions, worst)
        merged = f"{precision.first_merged_position(dt):,}"
        lines.append(
            t("sinusoidal.precision.broken", dtype=dt, position=f"{broken:,}", merged=merged)
            if broken is not None
            else t("sinusoidal.precision.fine", dtype=dt, span=f"{span:,}", error=f"{worst.max():.1e}", merged=merged)
        )
    return [
        Figure("precision", fig, data, options),
        Text("\n".join(f"- {line}" for line in lines)),
        *_subsampled(len(sampled), span),
    ]


@view("sinusoidal")
def norms(n: int, d: int, base: float, layout: str):
    """||PE(p)|| measured on at most 4,096 evenly spaced rows (``sinusoidal_row_norms``) against its closed form
    sqrt(floor(d / 2) + (d mod 2) sin^2(p w_last)) (``sinusoidal_row_norm``), and the claim sqrt(d) marked."""
    positions, measured = sinlesson.sinusoidal_row_norms(n, d, base=base, layout=layout)
    closed = sinlesson.sinusoidal_row_norm(n, d, base=base)[positions]
    fig = sinfig.overlaid_lines(
        positions,
        {t("sinusoidal.norms.measured"): measured, t("sinusoidal.norms.closed"): closed},
        **labels("sinusoidal.norms", "axis.position"),
        y_title="‖PE(p)‖",
    )
    sinfig.mark(fig, y=d**0.5, label=t("sinusoidal.norms.claim", d=d), dash="dot")
    return [
        Figure("norms", fig, {"position": positions, "measured": measured, "closed_form": closed}),
        Text(t("sinusoidal.norms.check", d=d, measured=f"{measured[0]:.4g}", claim=f"{d**0.5:.4g}")),
        *_subsampled(len(positions), n),
    ]
