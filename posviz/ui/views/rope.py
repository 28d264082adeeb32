"""The RoPE page's views, one per figure group of its tabs, as functions of their settings: the angle table and the
pairs turning, the scores that depend on m - n only, their decay, the two pair layouts, partial rotation, the
context-extension scalings and a config.json's frequencies.

Each view calls the core (``posviz.encodings.rope``, ``posviz.models.rope_configs``) and the figure builders
(``posviz.figures.rope``) directly; the page script reads the controls and draws what a view returns
(``views.draw``).
"""

from __future__ import annotations

from posviz import figures
from posviz.base import checks, sampling
from posviz.encodings import rope
from posviz.figures import rope as rope_figures
from posviz.models import rope_configs

from ..i18n import t
from ..pagekit import labels
from . import Figure, Frame, Text, family_heatmap, heatmap, view

#: Positions of the shifted-scores pair of maps: at most this many of the page's n, so the two stay readable.
SHIFT_POSITIONS = 64
#: The bases the decay tab draws beside the page's: the original one, Llama 3's and a million.
DECAY_BASES = (10_000.0, 500_000.0, 1_000_000.0)
DECAY_POINTS = 1024
#: Positions of the layout check.
CHECK_POSITIONS = 8
#: The colour bar's title of the score maps.
SCORE = "q·k / d"


def check(head_dim: int, base: float) -> None:
    """Raise the core's ``ValueError`` for the sizes every tab of the page refuses (a base of at most 1, a head
    that cannot turn in pairs), without building a table."""
    checks.positive_float("base", base, minimum_exclusive=1.0)
    rope.rotated_dim(head_dim, 1.0)


@view("rope")
def angle_table(n: int, head_dim: int, base: float):
    """cos(m theta_i) for every position m and pair i: the table of the RoPE family (``posviz.family("rope")``)."""
    table, fig = family_heatmap(
        "rope",
        {"base": base, "head_dim": head_dim, "n_positions": n},
        **labels("rope.table", "axis.pair", "axis.position"),
        zmin=-1.0,
        zmax=1.0,
        colorbar_title="cos",
    )
    return [Figure("table", fig, table)]


@view("rope")
def scores(n: int, head_dim: int, base: float, seed: int | None, shift: int):
    """S[m, n] = RoPE(q, m) . RoPE(k, n) / d (``rope.rope_score_matrix``; q = k = ones for ``seed=None``) and the
    same scores with both positions moved by ``shift`` (``rope.rope_shifted_scores``), on one colour scale (-1 .. 1
    for q = k = ones, where S is a mean of cosines; the largest |S| of the three maps otherwise)."""
    matrix = rope.rope_score_matrix(n, head_dim, base=base, seed=seed)
    k = min(n, SHIFT_POSITIONS)
    plain, shifted, diff = rope.rope_shifted_scores(k, head_dim, shift, base=base, seed=seed)
    reach = 1.0 if seed is None else rope_figures.symmetric_reach(matrix, plain, shifted)
    pair = rope_figures.heatmap_pair(
        plain,
        shifted,
        subtitles=(t("rope.shift.left"), t("rope.shift.right", s=shift)),
        **labels("rope.shift", "axis.key_position", "axis.query_position", k=k, diff=f"{diff:.2g}"),
        zmin=-reach,
        zmax=reach,
        colorbar_title=SCORE,
    )
    grid = heatmap(
        matrix,
        **labels("rope.scores", "axis.key_position", "axis.query_position"),
        zmin=-reach,
        zmax=reach,
        colorbar_title=SCORE,
    )
    return [
        Figure("scores", grid, matrix),
        Figure("shift", pair, {"S": plain.ravel(), "S_shifted": shifted.ravel()}, {"chart": "shift_fig"}),
    ]


@view("rope")
def animation(head_dim: int, base: float, length: int, count: int):
    """A query of ones turning pair by pair, x_m = R(m theta_i) x_0 with theta_i = base^(-2i/d), over positions
    0 .. length - 1, for ``count`` evenly spaced pairs (``rope.rope_pair_trajectory``)."""
    inv, _ = rope.rope_inv_freq(head_dim, base=base)
    pairs = sampling.evenly_spaced(inv.size, count)
    positions = sampling.evenly_spaced(length, length)
    trajectory = rope.rope_pair_trajectory((1.0,) * head_dim, positions, inv, pairs)
    turns = rope.rope_wavelength(inv[pairs])
    titles = [
        t("rope.anim.pair", i=int(i), theta=f"{inv[i]:.3g}", turn=f"{w:,.1f}" if w < 100 else f"{w:,.0f}")
        for i, w in zip(pairs, turns, strict=True)
    ]
    fig = rope_figures.rotation_animation(
        trajectory,
        positions,
        titles,
        title=t("rope.anim"),
        play=t("rope.anim.play"),
        pause=t("rope.anim.pause"),
        slider_prefix=t("rope.anim.position"),
    )
    data = {"position": positions}
    for j, i in enumerate(pairs):
        data[f"pair{int(i)}_a"], data[f"pair{int(i)}_b"] = trajectory[:, j, 0], trajectory[:, j, 1]
    return [Figure("anim", fig, data)]


@view("rope")
def decay(head_dim: int, base: float, reach: int):
    """Su et al.'s bound on |q.k| as m - n grows, (1/(d/2)) sum_j |S_j| with S_j = sum_{i<j} e^{i(m-n)theta_i}, and
    its running envelope, for the common bases and ``base`` (``rope.rope_decay_profile``)."""
    curves = {}
    for b in dict.fromkeys((*DECAY_BASES, base)):
        distances, bound, envelope = rope.rope_decay_profile(reach, head_dim, base=b, points=DECAY_POINTS)
        curves[t("rope.decay.base", base=f"{b:,.0f}")] = (bound, envelope)
    fig = rope_figures.decay_bounds(
        distances, curves, **labels("rope.decay", "rope.axis.distance", "rope.axis.bound", d=head_dim)
    )
    data = {"distance": distances}
    for name, (bound, envelope) in curves.items():
        data[f"{name}: bound"], data[f"{name}: envelope"] = bound, envelope
    return [Figure("decay", fig, data)]


@view("rope")
def layouts(d: int, base: float):
    """The two pairings of a d-wide head, (2i, 2i + 1) and (i, i + d/2), the permutation p between them, and the
    check that rotating interleaved then permuting equals permuting then rotating half-split
    (``rope.rope_layout_check`` over ``CHECK_POSITIONS`` positions)."""
    perm = rope.interleaved_to_half(d)
    inter, half = rope.layout_pair_index(d)
    rows = [t("rope.layouts.row.interleaved"), t("rope.layouts.row.half"), t("rope.layouts.row.perm")]
    index = rope_figures.index_map([inter, half, perm], rows, **labels("rope.layouts", "axis.dimension"))
    a, b, diff = rope.rope_layout_check(d, CHECK_POSITIONS, base=base)
    check = rope_figures.heatmap_pair(
        a,
        b,
        subtitles=(t("rope.check.left"), t("rope.check.right")),
        **labels("rope.check", "axis.dimension", "axis.position", diff=f"{diff:.2g}"),
    )
    return [
        Figure("layouts", index, {"dimension": range(d), "pair_interleaved": inter, "pair_half": half, "p": perm}),
        Figure("check", check, {"interleaved_then_p": a.ravel(), "p_then_half": b.ravel()}),
    ]


@view("rope")
def partial(n: int, head_dim: int, base: float, factor: float, layout: str):
    """RoPE(1) of a head whose first r = 2 ceil(floor(d factor) / 2) dims turn and the rest pass through
    (transformers' ``partial_rotary_factor``; ``rope.partial_rotary_table``)."""
    table, rotates = rope.partial_rotary_table(n, head_dim, factor, base=base, layout=layout)
    named = labels("rope.partial", "axis.dimension", "axis.position", r=int(rotates.sum()), d=head_dim)
    return [Figure("partial", heatmap(table, **named, zmin=-1.5, zmax=1.5, colorbar_title="RoPE(1)"), table)]


def method_labels() -> list[str]:
    """The context-extension methods' names, in ``rope_configs.EXTENSION_METHODS`` order."""
    return [t(f"rope.method.{m}") for m in rope_configs.EXTENSION_METHODS]


@view("rope")
def extension(head_dim: int, base: float, factor: int, original: int, current: int):
    """Each scaling's wavelengths lambda_i = 2 pi / theta_i' and ratios theta_i' / theta_i for a ``factor`` longer
    context than ``original`` (PI, NTK, dynamic NTK read at ``current`` tokens, YaRN, Llama 3, LongRoPE:
    ``rope_configs.compare_scalings``), the pairs each leaves, interpolates or scales, and its attention factor."""
    cmp = rope_configs.compare_scalings(head_dim, base, float(factor), original, current)
    methods = method_labels()
    pairs = range(cmp.original.size)
    series = {t("rope.method.none"): cmp.original_wavelength, **dict(zip(methods, cmp.wavelength, strict=True))}
    contexts = {
        t("rope.ext.orig", L=f"{original:,}"): original,
        t("rope.ext.target", L=f"{factor * original:,}"): factor * original,
    }
    named = labels("rope.ext.wavelength", "axis.pair", "rope.axis.wavelength", cur=f"{current:,}")
    wavelengths = rope_figures.wavelengths(pairs, series, contexts, **named)
    class_labels = [t(f"rope.class.{c}") for c in rope.PAIR_CLASSES]
    classes = rope_figures.class_map(
        cmp.classes, cmp.ratio, methods, class_labels, **labels("rope.ext.classes", "axis.pair"), ratio_label="θ′/θ"
    )
    attention = figures.bars(
        methods, cmp.attention_factor, **labels("rope.ext.attention", "rope.axis.method", "rope.axis.attention")
    )
    counts = cmp.counts()
    return [
        Figure("ext.wavelength", wavelengths, {"pair": pairs, **series}),
        Figure(
            "ext.classes",
            classes,
            {
                "pair": pairs,
                **{f"{m}_ratio": r for m, r in zip(cmp.methods, cmp.ratio, strict=True)},
                **{f"{m}_class": c for m, c in zip(cmp.methods, cmp.classes, strict=True)},
            },
        ),
        Figure("ext.attention", attention, {"method": list(cmp.methods), "attention_factor": cmp.attention_factor}),
        Frame(
            {
                t("rope.axis.method"): methods,
                **{label: counts[:, c] for c, label in enumerate(class_labels)},
                t("rope.axis.attention"): cmp.attention_factor,
            }
        ),
    ]


@view("rope")
def dynamic_growth(factor: int, original: int, current: int):
    """Dynamic NTK's scale s_eff = max(1, factor L / L_max - (factor - 1)) over lengths L of 1 .. factor L_max, for
    factors 1, 2 and ``factor`` (``rope.dynamic_ntk_scale``), with the length read now."""
    lengths = sampling.evenly_spaced(factor * original + 1, 257)[1:]  # 1 .. s L tokens
    series = {
        t("rope.ext.dynamic.factor", f=f): rope.dynamic_ntk_scale(lengths, float(f), original)
        for f in dict.fromkeys((1, 2, factor))
    }
    fig = rope_figures.scale_growth(
        lengths,
        series,
        {t("rope.ext.dynamic.target", s=factor): float(factor)},
        {t("rope.ext.dynamic.now", cur=f"{current:,}"): float(current)},
        **labels("rope.ext.dynamic", "rope.axis.length", "rope.axis.scale", L=f"{original:,}"),
    )
    return [
        Text(t("rope.ext.dynamic.text", s=factor, overshoot=f"{factor * factor - factor + 1:,}")),
        Figure("ext.dynamic", fig, {"length": lengths, **series}),
    ]


@view("rope")
def config(text: str):
    """The frequencies a config.json sets, theta_i = base^(-2i/d) and the same scaled by its ``rope_scaling`` (read
    by ``posviz.model_positions``: ``rope_configs.config_frequencies``), in one sentence and as wavelengths against
    its original and target contexts."""
    found = rope_configs.config_frequencies(text)
    read = found.config
    original, longest = read.original_max_position_embeddings, read.target_context
    summary = t(
        "rope.cfg.summary",
        head_dim=read.head_dim,
        base=f"{read.base:,.0f}",
        type=read.rope_type,
        rotated=2 * found.plain.size,
        pairs=found.plain.size,
        layout=t(f"rope.cfg.layout.{read.layout}"),
        max=f"{read.max_position_embeddings or 0:,}",
        orig=f"{original or 0:,}",
        attn=f"{found.attention_factor:.4g}",
    )
    contexts = {t("rope.ext.orig", L=f"{original:,}"): original} if original else {}
    if longest and longest != original:
        contexts[t("rope.ext.target", L=f"{longest:,}")] = longest
    series = {t("rope.cfg.plain"): found.plain_wavelength, t("rope.cfg.scaled"): found.scaled_wavelength}
    pairs = range(found.plain.size)
    fig = rope_figures.wavelengths(
        pairs, series, contexts, **labels("rope.cfg.wavelength", "axis.pair", "rope.axis.wavelength")
    )
    data = {"pair": pairs, "inv_freq": found.plain, "inv_freq_scaled": found.scaled}
    return [Text(summary), Figure("cfg", fig, data, {"chart": "cfg_wave"})]
