"""Sinusoidal: the fixed table of Vaswani et al., its distance structure, its shifts, its limits."""

import streamlit as st

import posviz
from posviz import figures, ui
from posviz.figures import sinusoidal as sinfig
from posviz.lessons import precision
from posviz.ui import Figures, cache, heatmap, t, unused_controls, widgets
from posviz.ui.export import MAX_CSV_CELLS
from posviz.ui.pagekit import labels, narrow

CTL = widgets.Controls("sinusoidal")
FIG = Figures("sinusoidal")

FAMILY = posviz.family("sinusoidal")
PROJECTION_POSITIONS = {"pca": 2048, "tsne": 512}  # t-SNE of a thousand points costs about two seconds
REFERENCE_BASES = (100.0, 10_000.0, 1_000_000.0)
ARTICLE_POSITION = 20_000
#: Floors of the log error plots: the spread along a diagonal, and the largest error of a row (exact zeros lie on them).
SPREAD_FLOOR = 1e-17
ERROR_FLOOR = 1e-12

ui.intro("sinusoidal")
with ui.controls():
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=posviz.MAX_POSITIONS, slider=False)
    with c2:
        d = widgets.number(FAMILY.param("d_model"), key="d", maximum=posviz.MAX_DIM)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")
    with c4:
        layout = widgets.choice(FAMILY.param("layout"), key="layout")
params = (("base", base), ("d_model", d), ("layout", layout), ("n_positions", n))


def subsampled(shown: int, total: int) -> None:
    """Say that a figure reads ``shown`` evenly spaced positions of ``total``, when it does."""
    if shown < total:
        st.markdown(t("sinusoidal.subsampled", shown=shown, n=total))


def table_tab() -> None:
    named = labels("sinusoidal.table", "axis.dimension", "axis.position")
    if n * d <= MAX_CSV_CELLS:
        data = cache.family_table(FAMILY.key, params)
        fig = heatmap(data, colorbar_title="PE", **named)
    else:  # shown and exported as block means, here from their closed form: the table (1 GiB at most) is not built
        data = cache.sinusoidal_block_means(n, d, base=base, layout=layout, max_side=figures.MAX_SIDE)
        fig = ui.block_means_heatmap(data, (n, d), colorbar_title="PE", **named)
    FIG.show("table", fig, data)
    positions, similarity = cache.sinusoidal_similarity(n, d, ui.SIMILARITY_POSITIONS, base=base, layout=layout)
    FIG.show("similarity", ui.similarity_heatmap(similarity, positions, n), similarity)
    subsampled(len(positions), n)


def distance_tab() -> None:
    st.latex(r"PE(i)\cdot PE(j) = \sum_{k} \cos\big((i-j)\,\omega_k\big)")
    offsets, dot, cosine = cache.sinusoidal_offset_profile(n, d, base=base, layout=layout)
    lines = ((t("sinusoidal.offset.dot"), dot), (t("sinusoidal.offset.cos"), cosine))
    fig = cache.dual_lines_figure(offsets, *lines, **labels("sinusoidal.offset", "sinusoidal.axis.offset"))
    FIG.show("offset", fig, {"offset": offsets, "mean_dot": dot, "mean_cosine": cosine})
    lags, dot_spread, cos_spread = cache.sinusoidal_lag_spread(n, d, base=base, layout=layout)
    random_params = (("d_model", d), ("init", "random"), ("n_positions", len(lags) + 2), ("seed", 0), ("std", 0.02))
    _, _, random_spread = cache.lag_spread(cache.Table.family("learned", random_params))
    spreads = {"dot": dot_spread, "cos": cos_spread, "random": random_spread}
    fig = cache.log_lines_figure(
        lags,
        {t(f"sinusoidal.spread.{name}"): spread for name, spread in spreads.items()},
        **labels("sinusoidal.spread", "sinusoidal.axis.offset", "sinusoidal.axis.spread"),
        log_y=True,
        floor=(SPREAD_FLOOR, t("figure.floor", floor=f"{SPREAD_FLOOR:.0e}")),
    )
    data = {"offset": lags, "dot_spread": dot_spread, "cos_spread": cos_spread, "random_cos_spread": random_spread}
    FIG.show("spread", fig, data)


def shift_tab() -> None:
    st.latex(
        r"\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix} = "
        r"\begin{pmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}"
        r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix}"
    )
    with narrow():
        k = CTL.numeric("k", 1, posviz.MAX_POSITIONS - 1, 1, slider=False)
    if d % 2:
        st.warning(t("sinusoidal.shift.odd", d=d))
    else:
        shift = cache.shift_matrix(d, k, base=base, layout=layout)
        named = labels("sinusoidal.shift", "axis.dimension", "axis.dimension", k=k)
        FIG.show("shift", heatmap(shift, **named, zmin=-1.0, zmax=1.0, colorbar_title="M"), shift, suffix=f"k{k}")
        residual, used = cache.sampled_shift_residual(n, d, k, base=base, layout=layout)
        if used < n - k:
            st.markdown(t("sinusoidal.shift.residual.sampled", k=k, shown=used, n=n - k, residual=f"{residual:.1e}"))
        else:
            st.markdown(t("sinusoidal.shift.residual", k=k, n=n, residual=f"{residual:.1e}"))


def frequencies_tab() -> None:
    unused_controls(t("param.layout"), reason=t("sinusoidal.unused.frequencies"))
    st.latex(r"\lambda_i = \frac{2\pi}{\omega_i} = 2\pi\cdot\text{base}^{2i/d} \in [2\pi,\ 2\pi\cdot\text{base})")
    wavelength = cache.sinusoidal_wavelengths(d, base=base)
    slow = cache.slow_pairs(d, n, base=base)
    fig = cache.sinusoidal_wavelengths_figure(
        wavelength,
        slow,
        n,
        **labels("sinusoidal.wavelength", "axis.pair", "sinusoidal.axis.wavelength"),
        fast_name=t("sinusoidal.wavelength.fast"),
        slow_name=t("sinusoidal.wavelength.slow"),
        context_label=t("sinusoidal.wavelength.context", n=n),
    )
    data = {"pair": range(len(wavelength)), "wavelength": wavelength, "longer_than_context": slow}
    FIG.show("wavelength", fig, data, longest=f"{wavelength[-1]:,.0f}")
    st.markdown(t("sinusoidal.wavelength.count", slow=int(slow.sum()), pairs=len(slow), n=n))
    bases = tuple(dict.fromkeys((*REFERENCE_BASES, base)))
    offsets, similarity = cache.origin_similarity(n, d, bases)
    names = [t("sinusoidal.base.line", base=f"{b:,.0f}") for b in bases]
    if base not in REFERENCE_BASES:
        names[-1] = t("sinusoidal.base.chosen", base=f"{base:,.0f}")
    named = labels("sinusoidal.base", "sinusoidal.axis.offset", "sinusoidal.axis.cos0")
    fig = cache.log_lines_figure(offsets, dict(zip(names, similarity, strict=True)), **named, log_x=True)
    data = {"offset": offsets, **{f"base_{b:g}": s for b, s in zip(bases, similarity, strict=True)}}
    FIG.show("base", fig, data, chart="bases")


def projection_tab() -> None:
    method = CTL.radio("proj", ["pca", "tsne"], "pca")
    shown, coords = cache.sinusoidal_projection(n, d, method, PROJECTION_POSITIONS[method], base=base, layout=layout)
    fig = figures.positions_path(
        shown,
        coords,
        **labels(f"sinusoidal.proj.title.{method}", "sinusoidal.axis.c1", "sinusoidal.axis.c2"),
        colorbar_title=t("axis.position"),
        height=520,
        equal_axes=True,
    )
    data = {"position": shown, "x": coords[:, 0], "y": coords[:, 1]}
    FIG.show("proj", fig, data, variant=method, suffix=method, chart="projection")
    subsampled(len(shown), n)


def extrapolation_tab() -> None:
    with narrow():
        train = CTL.numeric("train", 1, posviz.MAX_POSITIONS, 64, slider=False)
    positions, share, excess = cache.sinusoidal_beyond_training(n, d, train, base=base, layout=layout)
    fig = cache.lines_shaded_from_figure(
        positions,
        {t("sinusoidal.extra.share"): share},
        train,  # the positions from the training length on, if the table has any
        n - 1,
        t("sinusoidal.extra.unseen"),
        **labels("sinusoidal.extra", "axis.position", "sinusoidal.axis.share"),
    )
    FIG.show("extra", fig, {"position": positions, "share_outside": share})
    named = labels("sinusoidal.excess", "axis.dimension", "sinusoidal.axis.excess", train=train)
    FIG.show("excess", cache.bars_figure(range(d), excess, **named), {"excess": excess})
    if train >= n:
        st.info(t("sinusoidal.extra.none", train=train, n=n))
    else:
        subsampled(len(positions), n)


def layout_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.base"), t("param.layout"), reason=t("sinusoidal.unused.layout"))
    order = cache.layout_permutation(d)
    fig = sinfig.permutation(
        order, **labels("sinusoidal.layout", "sinusoidal.axis.halves", "sinusoidal.axis.interleaved")
    )
    FIG.show("layout", fig, {"halves_column": range(d), "interleaved_column": order}, chart="layout_perm")
    head = ", ".join(str(i) for i in order[:8]) + (", …" if d > 8 else "")
    st.markdown(t("sinusoidal.layout.text", order=head, n_sin=(d + 1) // 2))


def precision_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.layout"), reason=t("sinusoidal.unused.precision"))
    c1, c2 = st.columns(2)
    with c1:
        span = CTL.numeric("span", 2, posviz.MAX_POSITIONS, posviz.MAX_POSITIONS, slider=False)
    with c2:
        dtype = CTL.radio("dtype", list(precision.DTYPES), "float16", names=str)
    results = cache.pair_errors_by_dtype(span, d, base=base)
    sampled, errors, _ = results[dtype]
    step = (span - 1) / max(len(sampled) - 1, 1) if len(sampled) < span else 1.0
    named = labels("sinusoidal.precision.map", "axis.pair", "axis.position", dtype=dtype)
    colours = {"colorscale": "Viridis", "zmid": None, "zmin": 0.0, "zmax": 2.0}
    FIG.show(
        "precision.map", heatmap(errors, **named, **colours, dy=step, colorbar_title="|err|"), errors, suffix=dtype
    )
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
    FIG.show("precision", fig, data, span=f"{span:,}", float32=f"{results['float32'][2].max():.1e}")
    lines = []
    for dt in precision.DTYPES:
        positions, _, worst = results[dt]
        broken = precision.breakdown_position(positions, worst)
        lines.append(
            t(
                "sinusoidal.precision.broken",
                dtype=dt,
                position=f"{broken:,}",
                merged=f"{precision.first_merged_position(dt):,}",
            )
            if broken is not None
            else t(
                "sinusoidal.precision.fine",
                dtype=dt,
                span=f"{span:,}",
                error=f"{worst.max():.1e}",
                merged=f"{precision.first_merged_position(dt):,}",
            )
        )
    st.markdown("\n".join(f"- {line}" for line in lines))
    subsampled(len(sampled), span)


def norms_tab() -> None:
    st.latex(r"\|PE(p)\|^2 = \sum_{i} \big(\sin^2 p\,\omega_i + \cos^2 p\,\omega_i\big) = \frac{d}{2}")
    positions, measured = cache.sinusoidal_row_norms(n, d, base=base, layout=layout)
    closed = cache.sinusoidal_row_norm(n, d, base=base)[positions]
    fig = sinfig.overlaid_lines(
        positions,
        {t("sinusoidal.norms.measured"): measured, t("sinusoidal.norms.closed"): closed},
        **labels("sinusoidal.norms", "axis.position"),
        y_title="‖PE(p)‖",
    )
    sinfig.mark(fig, y=d**0.5, label=t("sinusoidal.norms.claim", d=d), dash="dot")
    FIG.show("norms", fig, {"position": positions, "measured": measured, "closed_form": closed})
    st.markdown(t("sinusoidal.norms.check", d=d, measured=f"{measured[0]:.4g}", claim=f"{d**0.5:.4g}"))
    subsampled(len(positions), n)


DRAW = {
    "table": table_tab,
    "distance": distance_tab,
    "shift": shift_tab,
    "frequencies": frequencies_tab,
    "projection": projection_tab,
    "extrapolation": extrapolation_tab,
    "layout": layout_tab,
    "precision": precision_tab,
    "norms": norms_tab,
}
ui.lazy_tabs("sinusoidal", DRAW)  # only the open tab computes
