"""Pitfalls: the mistakes people make with position encodings, each next to the correct version, with the
number that gives it away and its fix."""

import tomllib

import streamlit as st

import posviz
from posviz import ui
from posviz.encodings import alibi
from posviz.figures import pitfalls as pfig
from posviz.lessons import pitfalls, precision
from posviz.ui import (
    ASSETS,
    Figures,
    cache,
    controls,
    core_message,
    heatmap,
    intro,
    lazy_tabs,
    t,
    unused_controls,
    widgets,
)
from posviz.ui.pagekit import labels, narrow

CTL = widgets.Controls("pitfalls")
FIG = Figures("pitfalls")

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
    """The table ``kind`` builds, as the figure ``key`` titled by the catalog's ``title``."""
    table = cache.pitfall_table(kind, n, d, base=base)
    FIG.show(
        key, heatmap(table, **labels(title, "axis.dimension", "axis.position"), colorbar_title="PE"), table, suffix=kind
    )


def exponent_tab() -> None:
    variant = CTL.radio("bug", list(pitfalls.VARIANTS), "doubled", text="variant", names="pitfalls.variant")
    st.markdown(t(f"pitfalls.exponent.what.{variant}"))
    correct_column, buggy_column = versions(correct=CODE["correct"], buggy=CODE[variant])
    with correct_column:
        table_heatmap("correct", "pitfalls.exponent.correct", "table_ok")
    with buggy_column:
        table_heatmap(variant, f"pitfalls.exponent.buggy.{variant}", "table_bug")
    motion = {kind: cache.column_motion(kind, n, d, base=base) for kind in ("correct", variant)}
    names = (t("pitfalls.correct"), t(f"pitfalls.variant.{variant}"))
    named = labels("pitfalls.exponent.motion", "axis.dimension", "pitfalls.axis.motion", n=n)
    fig = cache.versus_figure(range(d), *zip(names, motion.values(), strict=True), **named)
    FIG.show("exponent.motion", fig, {"correct": motion["correct"], variant: motion[variant]})
    if d < 2:
        return
    radius = {kind: cache.pair_radius_error(kind, n, d, base=base) for kind in motion}
    fig = cache.versus_figure(
        range(d // 2),
        *zip(names, radius.values(), strict=True),
        **labels("pitfalls.exponent.radius", "axis.pair", "pitfalls.axis.radius"),
        scale=(LARGE_ERROR, t("pitfalls.reference.radius")),
    )
    FIG.show("exponent.radius", fig, {"correct": radius["correct"], variant: radius[variant]})
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
            fig = ui.similarity_heatmap(similarity, range(m), m, title=t(f"pitfalls.axes.{kind}"))
            FIG.show(f"axes.{kind}", fig, similarity)
    with columns[1]:  # what torch says about the buggy code without its transpose
        if n == d:
            st.info(t("pitfalls.axes.silent", n=n))
        else:
            error_box(t("pitfalls.axes.error", n=n, d=d), cache.torch_add_error((n, d), (d, n)))
    spread = {kind: cache.offset_dependence(kind, m, d, base=base) for kind in ("correct", "swapped")}
    fig = pfig.versus(
        range(m),
        (t("pitfalls.correct"), spread["correct"]),
        (t("pitfalls.axes.bugname"), spread["swapped"]),
        **labels("pitfalls.axes.offset", "pitfalls.axis.offset", "pitfalls.axis.spread"),
        scale=(LARGE_ERROR, t("pitfalls.reference.spread")),
    )
    FIG.show("axes.offset", fig, {"offset": range(m), "correct": spread["correct"], "swapped": spread["swapped"]})
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
    lines = [(t(f"pitfalls.zero.{kind}"), values) for kind, values in nearest.items()]
    fig = pfig.versus(range(m), *lines, **labels("pitfalls.zero.nearest", "axis.position", "pitfalls.axis.nearest"))
    FIG.show("zero.nearest", fig, {"random_init": nearest["random"], "zero_init": nearest["zero"]})
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
            named = labels(f"pitfalls.scale.{name}", "pitfalls.axis.input", "pitfalls.axis.input")
            FIG.show(
                f"scale.{name}", heatmap(similarity, **named, zmin=-1.0, zmax=1.0, colorbar_title="cos"), similarity
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
    lines = [(t(f"pitfalls.combine.{how}"), lost[how]) for how in ("add", "multiply")]
    fig = pfig.versus(range(n), *lines, **labels("pitfalls.combine.lost", "axis.position", "pitfalls.axis.lost"))
    FIG.show("combine.lost", fig, {"add": lost["add"], "multiply": lost["multiply"]})
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
    with narrow():
        odd = CTL.numeric("odd", 1, posviz.MAX_DIM, 65, slider=False)
    if odd % 2:
        error_box(t("pitfalls.rope.torch", d=odd), cache.rope_odd_error(odd, base=base))
        refusal = pitfalls.rope_odd_config_error(odd)
        if refusal:
            error_box(t("pitfalls.rope.transformers", d=odd), refusal)
        else:
            st.info(t("pitfalls.rope.transformers.tiny", d=odd))
        error_box(t("pitfalls.rope.posviz"), core_message(cache.rope_odd_reason(odd)))
    else:
        st.info(t("pitfalls.rope.even", d=odd))
    st.subheader(t("pitfalls.rope.pairing.header"))
    st.markdown(t("pitfalls.rope.what.pairing"))
    with narrow():
        head_dim = CTL.numeric("hd", 2, 256, 64, step=2, slider=True)
    versions(correct=CODE["rope.fix"], buggy=CODE["rope.bug"])
    offsets, trained, inference = cache.pairing_scores(head_dim, n, base=base)
    lines = (t("pitfalls.rope.trained"), trained), (t("pitfalls.rope.inference"), inference)
    named = labels("pitfalls.rope.scores", "pitfalls.axis.offset", "pitfalls.axis.score", d=head_dim)
    FIG.show(
        "rope.scores",
        pfig.versus(offsets, *lines, **named),
        {"offset": offsets, "interleaved": trained, "half": inference},
    )
    st.markdown(t("pitfalls.rope.signature", gap=f"{100 * pitfalls.pairing_gap(trained, inference):.0f}"))
    st.success(t("pitfalls.rope.fix"))


def alibi_tab() -> None:
    unused_controls(t("param.n_positions"), t("param.d_model"), t("param.base"), reason=t("pitfalls.unused.alibi"))
    st.markdown(t("pitfalls.alibi.what"))
    with narrow():
        heads = CTL.numeric("heads", 1, 64, 12, slider=True)
    versions(correct=CODE["alibi.fix"], buggy=CODE["alibi.bug"])
    paper = cache.alibi_slopes(heads)
    naive = cache.naive_alibi_slopes(heads)
    lines = (t("pitfalls.alibi.paper"), paper), (t("pitfalls.alibi.naive"), naive)
    named = labels("pitfalls.alibi.slopes", "axis.head", "axis.slope", n=heads)
    fig = pfig.versus_bars(range(1, heads + 1), *lines, **named, log_y=True)
    FIG.show("alibi.slopes", fig, {"head": range(1, heads + 1), "paper": paper, "naive": naive})
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
        error_box(t("pitfalls.index.posviz"), core_message(cache.lookup_error(rows, position)))
    st.success(t("pitfalls.index.fix"))


def float16_tab() -> None:
    unused_controls(t("param.n_positions"), reason=t("pitfalls.unused.float16"))
    st.markdown(t("pitfalls.float16.what"))
    with narrow():
        span = CTL.numeric("span", 2, posviz.MAX_POSITIONS, 4096, slider=False)
    versions(correct=CODE["float16.fix"], buggy=CODE["float16.bug"])
    positions, err16, err32 = cache.position_rounding(span)
    fig = cache.versus_figure(
        positions,
        ("float32", err32),
        ("float16", err16),
        **labels("pitfalls.float16.rounding", "axis.position", "pitfalls.axis.rounding"),
        scale=(LARGE_ERROR, t("pitfalls.reference.position")),
    )
    FIG.show("float16.rounding", fig, {"position": positions, "float32": err32, "float16": err16})
    errors = cache.pair_errors_by_dtype(span, d, base=base, dtypes=("float16", "float32"))
    (sampled, _, worst16), (_, _, worst32) = errors["float16"], errors["float32"]
    fig = cache.versus_figure(
        sampled,
        ("float32", worst32),
        ("float16", worst16),
        **labels("pitfalls.float16.error", "axis.position", "pitfalls.axis.error", d=d),
        floor=(ERROR_FLOOR, t("figure.floor", floor=f"{ERROR_FLOOR:.0e}")),
    )
    FIG.show("float16.error", fig, {"position": sampled, "float32": worst32, "float16": worst16})
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
