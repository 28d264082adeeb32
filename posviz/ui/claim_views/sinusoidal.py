"""The evidence of the claims about the sinusoidal table: the exponent, the row norm, the embedding's scale, float
precision, the shift as a rotation, the sum of two positions, the choice of base."""

from __future__ import annotations

from posviz import figures
from posviz.figures import claims as claimfig
from posviz.lessons import claims

from .. import cache, heatmap, t, widgets
from ..pagekit import labels
from .verdicts import FIG, at_setting

D_MARKS = (64, 128, 256, 512, 768, 1024, 2048, 4096)  # the slider's widths, BERT's 768 among them
#: Floor of the log error plot: exact zeros (position 0) are drawn on it.
ERROR_FLOOR = 1e-12


def at_width(claim_id: str) -> tuple:
    """The claim's evidence at the width d of the sinusoidal table, the control shared by the claims that measure
    one (``?d=``): ``(d, evidence)``."""
    return at_setting(claim_id, "d_model", 64, 4096, 512, key="d", grid=2, marks=D_MARKS)


def exponent() -> claims.Evidence:
    """The wavelength of every pair with the paper's exponent 2i/d and with the doubled one."""
    d, found = at_width("exponent")
    a = found.arrays
    series = {
        t("claims.exponent.correct"): a["wavelength_correct"],
        t("claims.exponent.doubled"): a["wavelength_doubled"],
    }
    fig = cache.lines_figure(
        a["pair"],
        series,
        **labels("claims.exponent.fig", "axis.pair", "claims.axis.wavelength", d=d),
        log_y=True,
    )
    FIG.show("exponent", fig, a)
    return found


def norm() -> claims.Evidence:
    """The norm of every row against the claimed constant."""
    d, found = at_width("norm")
    claimed = found.numbers["claimed"]
    fig = figures.lines(
        found.arrays["position"],
        {t("claims.norm.measured"): found.arrays["norm"]},
        title=t("claims.norm.fig", d=d),
        x_title=t("axis.position"),
        y_title="‖PE(p)‖",
        y_range=(0.0, claimed * 1.15),
    )
    claimfig.level(fig, claimed, t("claims.norm.claimed", d=d, value=f"{claimed:.3g}"))
    FIG.show("norm", fig, found.arrays)
    return found


def unscaled() -> claims.Evidence:
    """The position vector's norm against the token embedding's, unscaled and scaled as the paper and the article do,
    across widths."""
    d, found = at_width("unscaled")
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
    claimfig.mark(fig, d, f"d = {d}")
    FIG.show("unscaled", fig, a)
    return found


def precision() -> claims.Evidence:
    """The error of the table computed in float16, bfloat16 and float32 against float64, by position."""
    found = cache.check("precision")
    a = found.arrays
    fig = figures.lines(
        a["position"],
        {dtype: a[dtype] for dtype in ("float16", "bfloat16", "float32")},
        **labels("claims.precision.fig", "axis.position", "claims.axis.error"),
        log_y=True,
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    claimfig.mark(fig, claims.ARTICLE_POSITION, t("claims.precision.article"))
    FIG.show("precision", fig, a)
    return found


def shift() -> claims.Evidence:
    """The matrix that takes PE(p) to PE(p + k)."""
    k, found = at_setting("shift", "k", 1, 511, 5, key="k", slider=False)
    matrix = found.arrays["M"]
    fig = heatmap(
        matrix,
        **labels("claims.shift.fig", "axis.dimension", "axis.dimension", k=k, d=found.numbers["d"]),
        zmin=-1.0,
        zmax=1.0,
        colorbar_title="M",
    )
    FIG.show("shift", fig, matrix, suffix=f"k{k}")
    return found


def position_sum() -> claims.Evidence:
    """How far PE(i) + PE(j) is from the row of any one position."""
    found = cache.check("sum")
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
    FIG.show("sum", fig, error)
    return found


def base() -> claims.Evidence:
    """Two things a base does, each against the base: how well near positions are told apart and whether the order
    is kept; and the wavelengths of the fastest and slowest pairs against the context."""
    context, found = at_setting("base", "context", 256, 32768, 2048, key="ctx", marks=widgets.POWERS_OF_TWO)
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
    FIG.show("base", fig, {k: a[k] for k in ("base", "near", "order")})
    fig = claimfig.series(
        {
            t("claims.base.fastest"): (a["base"], a["fastest_wavelength"]),
            t("claims.base.slowest"): (a["base"], a["slowest_wavelength"]),
        },
        **labels("claims.base.ends", "claims.axis.base", "claims.axis.wavelength", d=n["pairs"] * 2),
        log_x=True,
        log_y=True,
    )
    claimfig.level(fig, context, t("claims.base.context", context=f"{context:,}"))
    ends = ("base", "fastest_wavelength", "slowest_wavelength", "wrapping_pairs")
    FIG.show("base.ends", fig, {k: a[k] for k in ends})
    return found
