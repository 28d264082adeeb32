"""Sinusoidal: the fixed table of Vaswani et al., its distance structure, its shifts, its limits."""

import streamlit as st

import posviz
from posviz import figures
from posviz.figures import sinusoidal as sinfig
from posviz.lessons import precision
from posviz.ui import (
    SIMILARITY_POSITIONS,
    block_means_heatmap,
    cache,
    controls,
    heatmap,
    intro,
    lazy_tabs,
    show,
    similarity_heatmap,
    t,
    unused_controls,
    widgets,
)
from posviz.ui.export import MAX_CSV_CELLS

CTL = widgets.Controls("sinusoidal")

FAMILY = posviz.family("sinusoidal")
PROJECTION_POSITIONS = {"pca": 2048, "tsne": 512}  # t-SNE of a thousand points costs about two seconds
REFERENCE_BASES = (100.0, 10_000.0, 1_000_000.0)
ARTICLE_POSITION = 20_000
#: Floors of the log error plots: the spread along a diagonal, and the largest error of a row (exact zeros lie on them).
SPREAD_FLOOR = 1e-17
ERROR_FLOOR = 1e-12

intro("sinusoidal")
with controls():
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


def table_tab() -> None:
    labels = {"title": t("sinusoidal.table"), "x_title": t("axis.dimension"), "y_title": t("axis.position")}
    if n * d <= MAX_CSV_CELLS:
        data = cache.family_table(FAMILY.key, params)
        fig = heatmap(data, colorbar_title="PE", **labels)
    else:  # shown and exported as block means, here from their closed form: the table (1 GiB at most) is not built
        data = cache.sinusoidal_block_means(n, d, base=base, layout=layout, max_side=figures.MAX_SIDE)
        fig = block_means_heatmap(data, (n, d), colorbar_title="PE", **labels)
    show(fig, notice=t("sinusoidal.table.notice"), key="table", data=data, name="sinusoidal_table")
    positions, similarity = cache.sinusoidal_similarity(n, d, SIMILARITY_POSITIONS, base=base, layout=layout)
    show(
        similarity_heatmap(similarity, positions, n),
        notice=t("sinusoidal.similarity.notice"),
        key="similarity",
        data=similarity,
        name="sinusoidal_similarity",
    )
    if len(positions) < n:
        st.markdown(t("sinusoidal.subsampled", shown=len(positions), n=n))


def distance_tab() -> None:
    st.latex(r"PE(i)\cdot PE(j) = \sum_{k} \cos\big((i-j)\,\omega_k\big)")
    offsets, dot, cosine = cache.sinusoidal_offset_profile(n, d, base=base, layout=layout)
    show(
        cache.dual_lines_figure(
            offsets,
            (t("sinusoidal.offset.dot"), dot),
            (t("sinusoidal.offset.cos"), cosine),
            title=t("sinusoidal.offset"),
            x_title=t("sinusoidal.axis.offset"),
        ),
        notice=t("sinusoidal.offset.notice"),
        key="offset",
        data={"offset": offsets, "mean_dot": dot, "mean_cosine": cosine},
        name="sinusoidal_offset_profile",
    )
    lags, dot_spread, cos_spread = cache.sinusoidal_lag_spread(n, d, base=base, layout=layout)
    random_params = (("d_model", d), ("init", "random"), ("n_positions", len(lags) + 2), ("seed", 0), ("std", 0.02))
    _, _, random_spread = cache.lag_spread(cache.Table.family("learned", random_params))
    show(
        cache.log_lines_figure(
            lags,
            {
                t("sinusoidal.spread.dot"): dot_spread,
                t("sinusoidal.spread.cos"): cos_spread,
                t("sinusoidal.spread.random"): random_spread,
            },
            title=t("sinusoidal.spread"),
            x_title=t("sinusoidal.axis.offset"),
            y_title=t("sinusoidal.axis.spread"),
            log_y=True,
            floor=(SPREAD_FLOOR, t("figure.floor", floor=f"{SPREAD_FLOOR:.0e}")),
        ),
        notice=t("sinusoidal.spread.notice"),
        key="spread",
        data={"offset": lags, "dot_spread": dot_spread, "cos_spread": cos_spread, "random_cos_spread": random_spread},
        name="sinusoidal_diagonal_spread",
    )


def shift_tab() -> None:
    st.latex(
        r"\begin{pmatrix}\sin((p+k)\omega)\\ \cos((p+k)\omega)\end{pmatrix} = "
        r"\begin{pmatrix}\cos k\omega & \sin k\omega\\ -\sin k\omega & \cos k\omega\end{pmatrix}"
        r"\begin{pmatrix}\sin p\omega\\ \cos p\omega\end{pmatrix}"
    )
    k_column, _ = st.columns([1, 2])
    with k_column:
        k = CTL.numeric("k", 1, posviz.MAX_POSITIONS - 1, 1, slider=False)
    if d % 2:
        st.warning(t("sinusoidal.shift.odd", d=d))
    else:
        shift = cache.shift_matrix(d, k, base=base, layout=layout)
        show(
            heatmap(
                shift,
                title=t("sinusoidal.shift", k=k),
                x_title=t("axis.dimension"),
                y_title=t("axis.dimension"),
                zmin=-1.0,
                zmax=1.0,
                colorbar_title="M",
            ),
            notice=t("sinusoidal.shift.notice"),
            key="shift",
            data=shift,
            name=f"sinusoidal_shift_k{k}",
        )
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
    show(
        cache.sinusoidal_wavelengths_figure(
            wavelength,
            slow,
            n,
            title=t("sinusoidal.wavelength"),
            x_title=t("axis.pair"),
            y_title=t("sinusoidal.axis.wavelength"),
            fast_name=t("sinusoidal.wavelength.fast"),
            slow_name=t("sinusoidal.wavelength.slow"),
            context_label=t("sinusoidal.wavelength.context", n=n),
        ),
        notice=t("sinusoidal.wavelength.notice", longest=f"{wavelength[-1]:,.0f}"),
        key="wavelength",
        data={"pair": range(len(wavelength)), "wavelength": wavelength, "longer_than_context": slow},
        name="sinusoidal_wavelengths",
    )
    st.markdown(t("sinusoidal.wavelength.count", slow=int(slow.sum()), pairs=len(slow), n=n))
    bases = tuple(dict.fromkeys((*REFERENCE_BASES, base)))
    offsets, similarity = cache.origin_similarity(n, d, bases)
    names = [t("sinusoidal.base.line", base=f"{b:,.0f}") for b in bases]
    if base not in REFERENCE_BASES:
        names[-1] = t("sinusoidal.base.chosen", base=f"{base:,.0f}")
    show(
        cache.log_lines_figure(
            offsets,
            dict(zip(names, similarity, strict=True)),
            title=t("sinusoidal.base"),
            x_title=t("sinusoidal.axis.offset"),
            y_title=t("sinusoidal.axis.cos0"),
            log_x=True,
        ),
        notice=t("sinusoidal.base.notice"),
        key="bases",
        data={"offset": offsets, **{f"base_{b:g}": s for b, s in zip(bases, similarity, strict=True)}},
        name="sinusoidal_bases",
    )


def projection_tab() -> None:
    method = CTL.radio("proj", ["pca", "tsne"], "pca")
    shown, coords = cache.sinusoidal_projection(n, d, method, PROJECTION_POSITIONS[method], base=base, layout=layout)
    show(
        figures.positions_path(
            shown,
            coords,
            title=t(f"sinusoidal.proj.title.{method}"),
            x_title=t("sinusoidal.axis.c1"),
            y_title=t("sinusoidal.axis.c2"),
            colorbar_title=t("axis.position"),
            height=520,
            equal_axes=True,
        ),
        notice=t(f"sinusoidal.proj.notice.{method}"),
        key="projection",
        data={"position": shown, "x": coords[:, 0], "y": coords[:, 1]},
        name=f"sinusoidal_{method}",
    )
    if len(shown) < n:
        st.markdown(t("sinusoidal.subsampled", shown=len(shown), n=n))


def extrapolation_tab() -> None:
    train_column, _ = st.columns([1, 2])
    with train_column:
        train = CTL.numeric("train", 1, posviz.MAX_POSITIONS, 64, slider=False)
    positions, share, excess = cache.sinusoidal_beyond_training(n, d, train, base=base, layout=layout)
    fig = cache.lines_shaded_from_figure(
        positions,
        {t("sinusoidal.extra.share"): share},
        train,  # the positions from the training length on, if the table has any
        n - 1,
        t("sinusoidal.extra.unseen"),
        title=t("sinusoidal.extra"),
        x_title=t("axis.position"),
        y_title=t("sinusoidal.axis.share"),
    )
    show(
        fig,
        notice=t("sinusoidal.extra.notice"),
        key="extra",
        data={"position": positions, "share_outside": share},
        name="sinusoidal_beyond_training",
    )
    show(
        cache.bars_figure(
            range(d),
            excess,
            title=t("sinusoidal.excess", train=train),
            x_title=t("axis.dimension"),
            y_title=t("sinusoidal.axis.excess"),
        ),
        notice=t("sinusoidal.excess.notice"),
        key="excess",
        data={"excess": excess},
        name="sinusoidal_excess",
    )
    if train >= n:
        st.info(t("sinusoidal.extra.none", train=train, n=n))
    elif len(positions) < n:
        st.markdown(t("sinusoidal.subsampled", shown=len(positions), n=n))


def layout_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.base"), t("param.layout"), reason=t("sinusoidal.unused.layout"))
    order = cache.layout_permutation(d)
    show(
        sinfig.permutation(
            order,
            title=t("sinusoidal.layout"),
            x_title=t("sinusoidal.axis.halves"),
            y_title=t("sinusoidal.axis.interleaved"),
        ),
        notice=t("sinusoidal.layout.notice"),
        key="layout_perm",
        data={"halves_column": range(d), "interleaved_column": order},
        name="sinusoidal_layout_permutation",
    )
    head = ", ".join(str(i) for i in order[:8]) + (", …" if d > 8 else "")
    st.markdown(t("sinusoidal.layout.text", order=head, n_sin=(d + 1) // 2))


def precision_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.layout"), reason=t("sinusoidal.unused.precision"))
    c1, c2 = st.columns(2)
    with c1:
        span = CTL.numeric("span", 2, posviz.MAX_POSITIONS, posviz.MAX_POSITIONS, slider=False)
    with c2:
        dtype = widgets.url_radio(
            t("sinusoidal.ctl.dtype"),
            list(precision.DTYPES),
            key="dtype",
            default="float16",
            horizontal=True,
            help=t("sinusoidal.ctl.dtype.help"),
        )
    results = cache.pair_errors_by_dtype(span, d, base=base)
    sampled, errors, _ = results[dtype]
    step = (span - 1) / max(len(sampled) - 1, 1) if len(sampled) < span else 1.0
    show(
        heatmap(
            errors,
            title=t("sinusoidal.precision.map", dtype=dtype),
            x_title=t("axis.pair"),
            y_title=t("axis.position"),
            colorscale="Viridis",
            zmid=None,
            zmin=0.0,
            zmax=2.0,
            dy=step,
            colorbar_title="|err|",
        ),
        notice=t("sinusoidal.precision.map.notice"),
        key="precision_map",
        data=errors,
        name=f"sinusoidal_error_{dtype}",
    )
    fig = sinfig.log_lines(
        sampled,
        {dt: results[dt][2] for dt in precision.DTYPES},
        title=t("sinusoidal.precision"),
        x_title=t("axis.position"),
        y_title=t("sinusoidal.axis.error"),
        log_y=True,
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    for dt, where in (("bfloat16", "bottom right"), ("float16", "top right")):
        if precision.first_merged_position(dt) <= span:
            sinfig.mark(
                fig,
                x=precision.first_merged_position(dt),
                label=t("sinusoidal.precision.merge", dtype=dt),
                position=where,
            )
    if ARTICLE_POSITION <= span:
        sinfig.mark(fig, x=ARTICLE_POSITION, label=t("sinusoidal.precision.article"), dash="dot")
    show(
        fig,
        notice=t("sinusoidal.precision.notice", span=f"{span:,}", float32=f"{results['float32'][2].max():.1e}"),
        key="precision",
        data={"position": sampled, **{f"max_error_{dt}": results[dt][2] for dt in precision.DTYPES}},
        name="sinusoidal_precision",
    )
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
    if len(sampled) < span:
        st.markdown(t("sinusoidal.subsampled", shown=len(sampled), n=span))


def norms_tab() -> None:
    st.latex(r"\|PE(p)\|^2 = \sum_{i} \big(\sin^2 p\,\omega_i + \cos^2 p\,\omega_i\big) = \frac{d}{2}")
    positions, measured = cache.sinusoidal_row_norms(n, d, base=base, layout=layout)
    closed = cache.sinusoidal_row_norm(n, d, base=base)[positions]
    fig = sinfig.overlaid_lines(
        positions,
        {t("sinusoidal.norms.measured"): measured, t("sinusoidal.norms.closed"): closed},
        title=t("sinusoidal.norms"),
        x_title=t("axis.position"),
        y_title="‖PE(p)‖",
    )
    sinfig.mark(fig, y=d**0.5, label=t("sinusoidal.norms.claim", d=d), dash="dot")
    show(
        fig,
        notice=t("sinusoidal.norms.notice"),
        key="norms",
        data={"position": positions, "measured": measured, "closed_form": closed},
        name="sinusoidal_row_norms",
    )
    st.markdown(t("sinusoidal.norms.check", d=d, measured=f"{measured[0]:.4g}", claim=f"{d**0.5:.4g}"))
    if len(positions) < n:
        st.markdown(t("sinusoidal.subsampled", shown=len(positions), n=n))


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
lazy_tabs("sinusoidal", DRAW)  # only the open tab computes
