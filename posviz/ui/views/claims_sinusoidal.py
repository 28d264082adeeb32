"""Myth or fact's views of the claims about the sinusoidal table: the exponent, the row norm, the embedding's scale,
float precision, the shift as a rotation, the sum of two positions, the choice of base.

Each view reads its claim's evidence at its setting (``claims.evidence``: ``posviz.lessons.claims.check``), draws it
with ``posviz.figures`` and ends with the verdict's sentence.
"""

from __future__ import annotations

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims

from ..i18n import t
from ..pagekit import labels
from . import Figure, heatmap, view
from .claims import evidence, verdict

#: Floor of the log error plot: exact zeros (position 0) are drawn on it.
ERROR_FLOOR = 1e-12


@view("claims")
def exponent(d_model: int):
    """The wavelength 2 pi / omega of every pair with the paper's omega_k = 10000^(-2k/d) and with the doubled
    exponent 10000^(-4k/d) of articles 000 and 003 (``claims.doubled_exponent``)."""
    found = evidence("exponent", d_model=d_model)
    a = found.arrays
    series = {
        t("claims.exponent.correct"): a["wavelength_correct"],
        t("claims.exponent.doubled"): a["wavelength_doubled"],
    }
    fig = figures.lines(
        a["pair"],
        series,
        **labels("claims.exponent.fig", "axis.pair", "claims.axis.wavelength", d=d_model),
        log_y=True,
    )
    return [Figure("exponent", fig, a), verdict("exponent", found)]


@view("claims")
def norm(d_model: int):
    """||PE(p)|| of every row, sqrt(d/2), against the claimed sqrt(d) (``claims.row_norm``)."""
    found = evidence("norm", d_model=d_model)
    claimed = found.numbers["claimed"]
    fig = figures.lines(
        found.arrays["position"],
        {t("claims.norm.measured"): found.arrays["norm"]},
        title=t("claims.norm.fig", d=d_model),
        x_title=t("axis.position"),
        y_title="‖PE(p)‖",
        y_range=(0.0, claimed * 1.15),
    )
    claimfig.level(fig, claimed, t("claims.norm.claimed", d=d_model, value=f"{claimed:.3g}"))
    return [Figure("norm", fig, found.arrays), verdict("norm", found)]


@view("claims")
def unscaled(d_model: int):
    """The position's norm sqrt(d/2) over the token embedding's, unscaled, with the token times sqrt(d) (the paper)
    and with the position over sqrt(d) (the article), across widths (``claims.embedding_scale``)."""
    found = evidence("unscaled", d_model=d_model)
    a = found.arrays
    fig = claimfig.series(
        {
            t("claims.unscaled.none"): (a["d_model"], a["unscaled"]),
            t("claims.unscaled.paper"): (a["d_model"], a["paper"]),
            t("claims.unscaled.article"): (a["d_model"], a["article"], "dash"),
        },
        title=t("claims.unscaled.fig", tokens=claims.SCALE_TOKENS),
        legend_below=True,
        x_title="d_model",
        y_title=t("claims.axis.norm_ratio"),
        log_x=True,
        log_y=True,
        x_ticks=claims.SCALE_WIDTHS,
    )
    claimfig.level(fig, 1.0, t("claims.unscaled.equal"))
    claimfig.mark(fig, d_model, f"d = {d_model}")
    return [Figure("unscaled", fig, a), verdict("unscaled", found)]


@view("claims")
def precision():
    """The largest error of any pair of the table computed in float16, bfloat16 and float32 against float64, by
    position (``claims.float_breakdown``)."""
    found = evidence("precision")
    a = found.arrays
    fig = figures.lines(
        a["position"],
        {dtype: a[dtype] for dtype in ("float16", "bfloat16", "float32")},
        **labels("claims.precision.fig", "axis.position", "claims.axis.error"),
        log_y=True,
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    claimfig.mark(fig, claims.ARTICLE_POSITION, t("claims.precision.article"))
    return [Figure("precision", fig, a), verdict("precision", found)]


@view("claims")
def shift(k: int):
    """M_k, the matrix of one 2 x 2 rotation by k omega_i per pair that takes PE(p) to PE(p + k)
    (``claims.shift_is_rotation``)."""
    found = evidence("shift", k=k)
    matrix = found.arrays["M"]
    fig = heatmap(
        matrix,
        **labels("claims.shift.fig", "axis.dimension", "axis.dimension", k=k, d=found.numbers["d"]),
        zmin=-1.0,
        zmax=1.0,
        colorbar_title="M",
    )
    return [Figure("shift", fig, matrix, {"suffix": f"k{k}"}), verdict("shift", found)]


@view("claims")
def position_sum():
    """||PE(i) + PE(j) - PE(i + j)|| / ||PE(i + j)|| for every i, j (``claims.sum_is_shift``)."""
    found = evidence("sum")
    error = found.arrays["error"]
    fig = heatmap(
        error,
        title=t("claims.sum.fig"),
        x_title="j",
        y_title="i",
        colorscale="Viridis",
        zmid=None,
        zmin=0.0,
        colorbar_title=t("claims.axis.relative_error"),
    )
    return [Figure("sum", fig, error), verdict("sum", found)]


@view("claims")
def base(context: int):
    """Against the base b: 1 - mean_k cos(omega_k), how unlike neighbours are, and the rank correlation of distance
    and dissimilarity over ``context`` positions; the wavelengths of the fastest and slowest pairs, 2 pi and
    2 pi b^((d - 2)/d), against the context (``claims.base_optimum``)."""
    found = evidence("base", context=context)
    a, n = found.arrays, found.numbers
    fig = claimfig.stacked(
        a["base"],
        [
            (t("claims.base.near.axis"), {t("claims.base.near"): a["near"]}, True),
            (t("claims.base.order.axis"), {t("claims.base.order"): a["order"]}, False),
        ],
        title=t("claims.base.fig", d=n["pairs"] * 2, context=f"{context:,}"),
        x_title=t("claims.axis.base"),
    )
    claimfig.marks(fig, {10_000: "10,000", n["best"]: t("claims.base.best")})
    ends = claimfig.series(
        {
            t("claims.base.fastest"): (a["base"], a["fastest_wavelength"]),
            t("claims.base.slowest"): (a["base"], a["slowest_wavelength"]),
        },
        **labels("claims.base.ends", "claims.axis.base", "claims.axis.wavelength", d=n["pairs"] * 2),
        log_x=True,
        log_y=True,
    )
    claimfig.level(ends, context, t("claims.base.context", context=f"{context:,}"))
    columns = ("base", "fastest_wavelength", "slowest_wavelength", "wrapping_pairs")
    return [
        Figure("base", fig, {k: a[k] for k in ("base", "near", "order")}),
        Figure("base.ends", ends, {k: a[k] for k in columns}),
        verdict("base", found),
    ]
