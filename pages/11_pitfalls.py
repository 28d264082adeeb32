"""Pitfalls: the mistakes people make with position encodings, each next to the correct version, with the
number that gives it away and its fix."""

import tomllib

import streamlit as st

import posviz
from posviz.encodings import alibi
from posviz.figures import pitfalls as pfig
from posviz.lessons import pitfalls, precision
from posviz.ui import (
    ASSETS,
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

CTL = widgets.Controls("pitfalls")

FAMILY = posviz.family("sinusoidal")
MAX_N, MAX_D = 4096, 1024  # the pitfalls show at these sizes; larger tables add nothing but waiting
PAIRWISE = 512  # positions compared pairwise (similarity, offsets, nearest neighbour)
MIX_TOKENS, MIX_POSITIONS = 8, 16
DUMMY_SEQUENCE = 4  # the length of the dummy batches whose errors are shown
#: Error plots start at zero and reach at least the level that means "large" (a pair as far off the unit circle as
#: it can be, a spread as large as the dot products, one whole position); log error plots stop at ERROR_FLOOR.
LARGE_ERROR = 1.0
ERROR_FLOOR = 1e-10

#: The code of each mistake, buggy and fixed (``assets/code/pitfalls.toml``).
CODE = tomllib.loads((ASSETS / "code" / "pitfalls.toml").read_text(encoding="utf-8"))

intro("pitfalls")
with controls():
    c1, c2, c3 = st.columns(3)
    with c1:
        n = widgets.number(FAMILY.param("n_positions"), key="n", maximum=MAX_N, slider=False)
    with c2:
        d = widgets.number(FAMILY.param("d_model"), key="d", maximum=MAX_D)
    with c3:
        base = widgets.log_number(FAMILY.param("base"), key="base")


def versions(*, correct: str, buggy: str):
    """The correct code (left) and the buggy code (right) in two columns, returned as ``(correct, buggy)`` so that
    each version's figures are drawn under its own code, in its own column."""
    left, right = st.columns(2)
    with left:
        st.markdown(t("pitfalls.fix"))
        st.code(correct, language="python", wrap_lines=True)
    with right:
        st.markdown(t("pitfalls.bug"))
        st.code(buggy, language="python", wrap_lines=True)
    return left, right


def error_box(label: str, message: str) -> None:
    st.markdown(label)
    st.code(message, language="text", wrap_lines=True)


def table_heatmap(kind: str, title: str, key: str) -> None:
    table = cache.pitfall_table(kind, n, d, base=base)
    show(
        heatmap(table, title=title, x_title=t("axis.dimension"), y_title=t("axis.position"), colorbar_title="PE"),
        notice=t(f"pitfalls.{key}.notice"),
        key=key,
        data=table,
        name=f"pitfalls_{kind}_table",
    )


def exponent_tab() -> None:
    variant = widgets.url_radio(
        t("pitfalls.ctl.variant"),
        list(pitfalls.VARIANTS),
        key="bug",
        default="doubled",
        format_func=lambda v: t(f"pitfalls.variant.{v}"),
        horizontal=True,
    )
    st.markdown(t(f"pitfalls.exponent.what.{variant}"))
    correct_column, buggy_column = versions(correct=CODE["correct"], buggy=CODE[variant])
    with correct_column:
        table_heatmap("correct", t("pitfalls.exponent.correct"), "table_ok")
    with buggy_column:
        table_heatmap(variant, t(f"pitfalls.exponent.buggy.{variant}"), "table_bug")
    motion = {kind: cache.column_motion(kind, n, d, base=base) for kind in ("correct", variant)}
    show(
        cache.versus_figure(
            range(d),
            (t("pitfalls.correct"), motion["correct"]),
            (t(f"pitfalls.variant.{variant}"), motion[variant]),
            title=t("pitfalls.exponent.motion", n=n),
            x_title=t("axis.dimension"),
            y_title=t("pitfalls.axis.motion"),
        ),
        notice=t("pitfalls.exponent.motion.notice"),
        key="motion",
        data={"correct": motion["correct"], variant: motion[variant]},
        name="pitfalls_column_motion",
    )
    if d < 2:
        return
    radius = {kind: cache.pair_radius_error(kind, n, d, base=base) for kind in motion}
    show(
        cache.versus_figure(
            range(d // 2),
            (t("pitfalls.correct"), radius["correct"]),
            (t(f"pitfalls.variant.{variant}"), radius[variant]),
            title=t("pitfalls.exponent.radius"),
            x_title=t("axis.pair"),
            y_title=t("pitfalls.axis.radius"),
            scale=(LARGE_ERROR, t("pitfalls.reference.radius")),
        ),
        notice=t("pitfalls.exponent.radius.notice"),
        key="radius",
        data={"correct": radius["correct"], variant: radius[variant]},
        name="pitfalls_pair_radius",
    )
    still = {kind: int((m < 0.05).sum()) for kind, m in motion.items()}
    st.markdown(
        t(
            "pitfalls.exponent.signature",
            d=d,
            n=n,
            ok=still["correct"],
            bug=still[variant],
            radius_ok=f"{radius['correct'].max():.2g}",
            radius_bug=f"{radius[variant].max():.2g}",
        )
    )
    st.success(t("pitfalls.exponent.fix"))


def axes_tab() -> None:
    st.markdown(t("pitfalls.axes.what"))
    columns = versions(correct=CODE["axes.fix"], buggy=CODE["axes.bug"])
    m = min(n, PAIRWISE)
    for column, kind in zip(columns, ("correct", "swapped"), strict=True):
        similarity = cache.pitfall_similarity(kind, m, d, base=base)
        with column:
            show(
                similarity_heatmap(similarity, range(m), m, title=t(f"pitfalls.axes.{kind}")),
                notice=t(f"pitfalls.axes.{kind}.notice"),
                key=f"axes_{kind}",
                data=similarity,
                name=f"pitfalls_similarity_{kind}",
            )
    with columns[1]:  # what torch says about the buggy code without its transpose
        if n == d:
            st.info(t("pitfalls.axes.silent", n=n))
        else:
            error_box(t("pitfalls.axes.error", n=n, d=d), cache.torch_add_error((n, d), (d, n)))
    spread = {kind: cache.offset_dependence(kind, m, d, base=base) for kind in ("correct", "swapped")}
    show(
        pfig.versus(
            range(m),
            (t("pitfalls.correct"), spread["correct"]),
            (t("pitfalls.axes.bugname"), spread["swapped"]),
            title=t("pitfalls.axes.offset"),
            x_title=t("pitfalls.axis.offset"),
            y_title=t("pitfalls.axis.spread"),
            scale=(LARGE_ERROR, t("pitfalls.reference.spread")),
        ),
        notice=t("pitfalls.axes.offset.notice"),
        key="axes_offset",
        data={"offset": range(m), "correct": spread["correct"], "swapped": spread["swapped"]},
        name="pitfalls_offset_dependence",
    )
    st.markdown(
        t(
            "pitfalls.axes.signature",
            m=m,
            ok=f"{spread['correct'].max():.1e}",
            bug=f"{spread['swapped'].max():.2f}",
        )
    )
    st.success(t("pitfalls.axes.fix"))


def zero_tab() -> None:
    unused_controls(t("param.base"), reason=t("pitfalls.unused.zero"))
    st.markdown(t("pitfalls.zero.what"))
    versions(correct=CODE["zero.fix"], buggy=CODE["zero.bug"])
    m = min(n, PAIRWISE)
    if m < 2:
        st.warning(t("pitfalls.zero.one"))
        return
    nearest = {kind: cache.nearest_distance(kind, m, d) for kind in ("random", "zero")}
    show(
        pfig.versus(
            range(m),
            (t("pitfalls.zero.random"), nearest["random"]),
            (t("pitfalls.zero.zero"), nearest["zero"]),
            title=t("pitfalls.zero.nearest"),
            x_title=t("axis.position"),
            y_title=t("pitfalls.axis.nearest"),
        ),
        notice=t("pitfalls.zero.nearest.notice"),
        key="nearest",
        data={"random_init": nearest["random"], "zero_init": nearest["zero"]},
        name="pitfalls_nearest_distance",
    )
    st.markdown(
        t("pitfalls.zero.signature", m=m, ok=f"{nearest['random'].min():.3f}", bug=f"{nearest['zero'].max():g}")
    )
    st.success(t("pitfalls.zero.fix"))


def scale_tab() -> None:
    st.markdown(t("pitfalls.scale.what"))
    columns = versions(correct=CODE["scale.fix"], buggy=CODE["scale.bug"])
    results = {
        scaled: cache.mix_signature(d, MIX_TOKENS, MIX_POSITIONS, scaled=scaled, base=base) for scaled in (True, False)
    }
    for column, scaled in zip(columns, (True, False), strict=True):
        similarity, same_position, same_token, ratio = results[scaled]
        name = "scaled" if scaled else "unscaled"
        with column:
            show(
                heatmap(
                    similarity,
                    title=t(f"pitfalls.scale.{name}"),
                    x_title=t("pitfalls.axis.input"),
                    y_title=t("pitfalls.axis.input"),
                    zmin=-1.0,
                    zmax=1.0,
                    colorbar_title="cos",
                ),
                notice=t(f"pitfalls.scale.{name}.notice"),
                key=f"mix_{name}",
                data=similarity,
                name=f"pitfalls_inputs_{name}",
            )
            st.markdown(
                t(
                    "pitfalls.scale.signature",
                    same_position=f"{same_position:.2f}",
                    same_token=f"{same_token:.2f}",
                    ratio=f"{ratio:.2f}",
                )
            )
    st.markdown(t("pitfalls.scale.inputs", tokens=MIX_TOKENS, positions=MIX_POSITIONS))
    st.subheader(t("pitfalls.combine.header"))
    versions(correct=CODE["scale.fix"], buggy=CODE["multiply"])
    lost = {how: cache.lost_dimensions(n, d, combine=how, base=base) for how in pitfalls.COMBINES}
    show(
        pfig.versus(
            range(n),
            (t("pitfalls.combine.add"), lost["add"]),
            (t("pitfalls.combine.multiply"), lost["multiply"]),
            title=t("pitfalls.combine.lost"),
            x_title=t("axis.position"),
            y_title=t("pitfalls.axis.lost"),
        ),
        notice=t("pitfalls.combine.lost.notice"),
        key="lost",
        data={"add": lost["add"], "multiply": lost["multiply"]},
        name="pitfalls_lost_dimensions",
    )
    st.markdown(t("pitfalls.combine.concat"))
    st.code(CODE["concat"], language="python", wrap_lines=True)
    error_box(t("pitfalls.combine.concat.error", d=d), cache.concat_error(DUMMY_SEQUENCE, d))
    st.success(t("pitfalls.scale.fix"))


def shape_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.shape"))
    st.markdown(t("pitfalls.shape.what"))
    c1, c2, _ = st.columns(3)
    with c1:
        d_tok = CTL.numeric("dtok", 1, posviz.MAX_DIM, 512, slider=False)
    with c2:
        d_pos = CTL.numeric("dpos", 1, posviz.MAX_DIM, 768, slider=False)
    versions(correct=CODE["shape.fix"], buggy=CODE["shape.bug"].format(a=d_tok, b=d_pos))
    if d_tok == d_pos:
        st.info(t("pitfalls.shape.same", d=d_tok))
    else:
        message = cache.torch_add_error((DUMMY_SEQUENCE, d_tok), (DUMMY_SEQUENCE, d_pos))
        error_box(t("pitfalls.shape.error", n=DUMMY_SEQUENCE, a=d_tok, b=d_pos), message)
    st.success(t("pitfalls.shape.fix"))


def rope_tab() -> None:
    unused_controls(t("param.d_model"), reason=t("pitfalls.unused.rope"))
    st.markdown(t("pitfalls.rope.what.odd"))
    odd_column, _ = st.columns([1, 2])
    with odd_column:
        odd = CTL.numeric("odd", 1, posviz.MAX_DIM, 65, slider=False)
    if odd % 2:
        error_box(t("pitfalls.rope.torch", d=odd), cache.rope_odd_error(odd, base=base))
        refusal = pitfalls.rope_odd_config_error(odd)
        if refusal:
            error_box(t("pitfalls.rope.transformers", d=odd), refusal)
        else:
            st.info(t("pitfalls.rope.transformers.tiny", d=odd))
        error_box(t("pitfalls.rope.posviz"), cache.rope_odd_reason(odd))
    else:
        st.info(t("pitfalls.rope.even", d=odd))
    st.subheader(t("pitfalls.rope.pairing.header"))
    st.markdown(t("pitfalls.rope.what.pairing"))
    hd_column, _ = st.columns([1, 2])
    with hd_column:
        head_dim = CTL.numeric("hd", 2, 256, 64, step=2, slider=True)
    versions(correct=CODE["rope.fix"], buggy=CODE["rope.bug"])
    offsets, trained, inference = cache.pairing_scores(head_dim, n, base=base)
    show(
        pfig.versus(
            offsets,
            (t("pitfalls.rope.trained"), trained),
            (t("pitfalls.rope.inference"), inference),
            title=t("pitfalls.rope.scores", d=head_dim),
            x_title=t("pitfalls.axis.offset"),
            y_title=t("pitfalls.axis.score"),
        ),
        notice=t("pitfalls.rope.scores.notice"),
        key="pairing",
        data={"offset": offsets, "interleaved": trained, "half": inference},
        name="pitfalls_rope_pairing",
    )
    st.markdown(t("pitfalls.rope.signature", gap=f"{100 * pitfalls.pairing_gap(trained, inference):.0f}"))
    st.success(t("pitfalls.rope.fix"))


def alibi_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.alibi"))
    st.markdown(t("pitfalls.alibi.what"))
    heads_column, _ = st.columns([1, 2])
    with heads_column:
        heads = CTL.numeric("heads", 1, 64, 12, slider=True)
    versions(correct=CODE["alibi.fix"], buggy=CODE["alibi.bug"])
    paper = cache.alibi_slopes(heads)
    naive = cache.naive_alibi_slopes(heads)
    show(
        pfig.versus_bars(
            range(1, heads + 1),
            (t("pitfalls.alibi.paper"), paper),
            (t("pitfalls.alibi.naive"), naive),
            title=t("pitfalls.alibi.slopes", n=heads),
            x_title=t("axis.head"),
            y_title=t("axis.slope"),
            log_y=True,
        ),
        notice=t("pitfalls.alibi.slopes.notice"),
        key="slopes",
        data={"head": range(1, heads + 1), "paper": paper, "naive": naive},
        name="pitfalls_alibi_slopes",
    )
    error = cache.slope_error(heads)
    c = int((alibi.alibi_slope_origin(heads) == 0).sum())
    key = "pitfalls.alibi.power" if c == heads else "pitfalls.alibi.signature"
    st.markdown(t(key, n=heads, c=c, worst=f"{error.max():.2f}", wrong=int((error > 1e-12).sum())))
    st.success(t("pitfalls.alibi.fix"))


def index_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.index"))
    st.markdown(t("pitfalls.index.what"))
    c1, c2, _ = st.columns(3)
    with c1:
        rows = CTL.numeric("rows", 1, posviz.MAX_POSITIONS, 512, slider=False)
    with c2:
        position = CTL.numeric("pos", 0, 4 * posviz.MAX_POSITIONS, 512, slider=False)
    versions(correct=CODE["index.fix"], buggy=CODE["index.bug"].format(rows=rows, pos=position))
    if position < rows:
        st.info(t("pitfalls.index.inside", pos=position, rows=rows))
    else:
        error_box(t("pitfalls.index.torch"), cache.past_end_error(rows, position))
        error_box(t("pitfalls.index.posviz"), cache.lookup_error(rows, position))
    st.success(t("pitfalls.index.fix"))


def float16_tab() -> None:
    unused_controls(t("param.n_positions"), reason=t("pitfalls.unused.float16"))
    st.markdown(t("pitfalls.float16.what"))
    span_column, _ = st.columns([1, 2])
    with span_column:
        span = CTL.numeric("span", 2, posviz.MAX_POSITIONS, 4096, slider=False)
    versions(correct=CODE["float16.fix"], buggy=CODE["float16.bug"])
    positions, err16, err32 = cache.position_rounding(span)
    show(
        cache.versus_figure(
            positions,
            ("float32", err32),
            ("float16", err16),
            title=t("pitfalls.float16.rounding"),
            x_title=t("axis.position"),
            y_title=t("pitfalls.axis.rounding"),
            scale=(LARGE_ERROR, t("pitfalls.reference.position")),
        ),
        notice=t("pitfalls.float16.rounding.notice"),
        key="rounding",
        data={"position": positions, "float32": err32, "float16": err16},
        name="pitfalls_position_rounding",
    )
    errors = cache.pair_errors_by_dtype(span, d, base=base, dtypes=("float16", "float32"))
    (sampled, _, worst16), (_, _, worst32) = errors["float16"], errors["float32"]
    show(
        cache.versus_figure(
            sampled,
            ("float32", worst32),
            ("float16", worst16),
            title=t("pitfalls.float16.error", d=d),
            x_title=t("axis.position"),
            y_title=t("pitfalls.axis.error"),
            floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
        ),
        notice=t("pitfalls.float16.error.notice"),
        key="fp_error",
        data={"position": sampled, "float32": worst32, "float16": worst16},
        name="pitfalls_float16_error",
    )
    st.markdown(
        t(
            "pitfalls.float16.signature",
            span=f"{span:,}",
            merged16=f"{cache.merged_neighbours(span, 'float16'):,}",
            merged32=f"{cache.merged_neighbours(span, 'float32'):,}",
            first=f"{precision.first_merged_position('float16'):,}",
        )
    )
    if len(positions) < span:
        st.markdown(t("pitfalls.subsampled", shown=len(positions), n=span))
    st.success(t("pitfalls.float16.fix"))


DRAW = {
    "exponent": exponent_tab,
    "axes": axes_tab,
    "zero": zero_tab,
    "scale": scale_tab,
    "shape": shape_tab,
    "rope": rope_tab,
    "alibi": alibi_tab,
    "index": index_tab,
    "float16": float16_tab,
}
lazy_tabs("pitfalls", DRAW)  # only the open tab computes
