"""Models: any model's positions layer by layer, read from its config.json as transformers reads it; two models side
by side; Qwen2-VL's three positions per token (M-RoPE) and a vision encoder's 2-D RoPE, axial and mixed."""

import numpy as np
import streamlit as st

from posviz.encodings import rope
from posviz.models import views
from posviz.ui import cache, controls, errors_shown, intro, lazy_tabs, t, unused_controls, widgets
from posviz.ui.model_views import source, words
from posviz.ui.model_views.words import FIG

CTL = widgets.Controls("models")
DEFAULT_MODEL_B = "gemma3_4b"
#: The M-RoPE settings used when the chosen model has none: Qwen2-VL's.
MROPE_FALLBACK = "qwen2_vl_7b"
AXES = ("time", "height", "width")
#: The directions of the 2-D similarity profiles from the patch: (row step, column step).
DIRECTIONS = {"diagonal": (1, 1), "antidiagonal": (1, -1)}


def lines(key: str, x_name: str, x, series: dict, axes: dict, **notice) -> None:
    """The figure ``key``: every line of ``series`` (name -> values) against ``x``, titled ``models.<key>``, with
    ``axes`` (its axis titles, and range if any); its CSV the column ``x_name`` then the lines; ``notice``: the
    caption's variant and values."""
    fig = cache.lines_figure(x, series, title=t(f"models.{key}"), **axes)
    FIG.show(key, fig, {x_name: x, **series}, **notice)


def wavelengths(key: str, series: dict, contexts: dict, data: dict) -> None:
    """The figure ``key``: each pair's wavelength in every entry of ``series`` (name -> one per pair), with the
    ``contexts`` (name -> length) marked, titled ``models.<key>``; ``data`` is its CSV."""
    pairs = np.arange(max(len(v) for v in series.values()))
    title = t(f"models.{key}")
    fig = cache.model_wavelengths_figure(
        pairs, series, contexts, title=title, x_title=t("axis.pair"), y_title=t("rope.axis.wavelength")
    )
    FIG.show(key, fig, data)


def map_tab() -> None:
    st.markdown(words.summary_sentence(positions))
    words.reading_caption(positions)
    words.ignored_notice(positions)
    words.layer_map({name: positions})


def layers_tab() -> None:
    """One group of RoPE layers: its wavelengths, plain and as scaled, against the contexts the config names, and
    how far each pair turns within them."""
    groups = words.rope_groups(positions)
    if not groups:
        st.info(t("models.layers.none", kinds=t("list.sep").join(t(f"models.kind.{k}") for k in positions.counts())))
        return
    labels = {str(i): words.group_label(g.layer) for i, g in enumerate(groups)}
    with controls():
        choice = widgets.url_select(
            t("models.ctl.group"),
            list(labels),
            key="group",
            default="0",
            format_func=labels.get,
            help=t("models.ctl.group.help"),
        )
    layer = groups[int(choice)].layer
    st.markdown(
        t(
            "models.layers.facts",
            count=groups[int(choice)].count,
            type=layer.rope_type,
            factor=f"{layer.attention_factor:.4g}",
            softmax=f"{layer.softmax_scale:.4g}",
            r=layer.rotary_dim,
            d=layer.head_dim,
            pairs=layer.inv_freq.size,
        )
    )
    plain = cache.plain_inv_freq(layer)
    original, longest = positions.original_max_position_embeddings, positions.max_position_embeddings
    pairs = np.arange(layer.inv_freq.size)
    series = {t("models.layers.plain"): rope.rope_wavelength(plain)}
    scaled = not np.array_equal(plain, layer.inv_freq)
    if scaled:
        series[t("models.layers.scaled", type=layer.rope_type)] = rope.rope_wavelength(layer.inv_freq)
    if layer.long_inv_freq is not None:
        series[t("models.layers.long")] = rope.rope_wavelength(layer.long_inv_freq)
    contexts = {}
    if original:
        contexts[t("rope.ext.orig", L=widgets.shown(original))] = original
    if longest and longest != original:
        contexts[t("models.layers.longest", L=widgets.shown(longest))] = longest
    if layer.window:
        contexts[t(f"models.layers.{layer.attention}", L=widgets.shown(layer.window))] = layer.window
    data = {"pair": pairs, "inv_freq_plain": plain, "inv_freq_layer": layer.inv_freq}
    wavelengths("layers.wavelength", series, contexts, data)
    if original:  # the config names the pre-training context: what the pairs saw there, and what they meet at the end
        seen = {t("models.layers.seen", L=widgets.shown(original)): cache.turn_share(plain, original)}
        if longest and longest != original:
            seen[t("models.layers.reach", L=widgets.shown(longest))] = cache.turn_share(layer.inv_freq, longest)
        variant = None
    elif longest:  # it does not: how far each pair turns within the longest context
        seen = {t("models.layers.within", L=widgets.shown(longest)): cache.turn_share(layer.inv_freq, longest)}
        variant = "context"
        if scaled:
            st.caption(t("models.layers.unknown_original", type=layer.rope_type))
    else:
        return
    never = int((seen[next(iter(seen))] < 1).sum())
    axes = {"x_title": t("axis.pair"), "y_title": t("models.axis.turn"), "y_range": (0.0, 1.05)}
    lines("layers.turns", "pair", pairs, seen, axes, variant=variant, never=never, pairs=pairs.size)


def compare_tab() -> None:
    """The chosen model beside a preset: both in a sentence, their layer maps, and every RoPE group's wavelengths."""
    with controls():
        other = source.pick_preset(DEFAULT_MODEL_B, "models.ctl.model_b", key="model_b")
    found_b = cache.model_positions(cache.model_preset_text(other))
    names = {f"A · {name}": positions, f"B · {source.preset_name(other)}": found_b}
    for side, found in names.items():
        st.markdown(t("models.compare.summary", side=side, summary=words.summary_sentence(found)))
    words.layer_map(names, "compare")
    series = {}
    for side, found in names.items():
        for g in words.rope_groups(found):
            series[f"{side[0]} · {words.group_label(g.layer)}"] = rope.rope_wavelength(g.layer.inv_freq)
    if series:
        width = max(len(v) for v in series.values())
        padded = {k: np.pad(v, (0, width - len(v)), constant_values=np.nan) for k, v in series.items()}
        wavelengths("compare.wavelength", padded, {}, {"pair": np.arange(width), **padded})


def mrope_settings():
    """The chosen model's M-RoPE layer, else Qwen2-VL's, and whether it is the chosen model's."""
    own = None if positions is None else next((x for x in positions.layers if x.mrope_section is not None), None)
    if own is not None:
        return own, True
    fallback = cache.model_positions(cache.model_preset_text(MROPE_FALLBACK))
    return fallback.layers[0], False


def mrope_tab() -> None:
    """Qwen2-VL's three position ids per token for text, an image and a video; which pairs each axis turns; and the
    score of two patches moving apart along one axis."""
    st.latex(r"(t, h, w)_{\text{patch}} = (p + k,\ p + r,\ p + c),\qquad p_{\text{next text}} = p + \max(h, w)/m")
    layer, own = mrope_settings()
    model = name if own else source.preset_name(MROPE_FALLBACK)
    st.caption(t("models.mrope.own" if own else "models.mrope.fallback", model=model))
    with controls():
        c = st.columns(4)
        with c[0]:
            text1 = CTL.numeric("text1", 1, 256, 4, slider=False)
            text2 = CTL.numeric("text2", 1, 256, 3, slider=False)
        with c[1]:
            img_h = CTL.numeric("img_h", 2, 64, 4, step=2, grid=2, slider=False)
            img_w = CTL.numeric("img_w", 2, 64, 6, step=2, grid=2, slider=False)
        with c[2]:
            vid_t = CTL.numeric("vid_t", 1, 16, 2, slider=False)
            vid_h = CTL.numeric("vid_h", 2, 64, 4, step=2, grid=2, slider=False)
        with c[3]:
            vid_w = CTL.numeric("vid_w", 2, 64, 4, step=2, grid=2, slider=False)
            reach = CTL.numeric("reach", 1, 512, 64, slider=False)
    segments = (
        int(text1),
        ("image", 1, int(img_h), int(img_w)),
        int(text2),
        ("video", int(vid_t), int(vid_h), int(vid_w)),
    )
    ids = cache.mrope_position_ids(segments)
    axis_names = tuple(t(f"models.axis.{a}") for a in AXES)
    fig = cache.position_grid_figure(
        ids,
        list(axis_names),
        title=t("models.mrope.grid", n=ids.shape[1]),
        x_title=t("models.axis.token"),
        colorbar_title=t("models.axis.position_id"),
    )
    FIG.show("mrope.grid", fig, {"token": np.arange(ids.shape[1]), **{a: ids[i] for i, a in enumerate(AXES)}})
    layouts = {
        t("models.mrope.sectioned"): cache.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=False),
        t("models.mrope.interleaved"): cache.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=True),
    }
    section = ", ".join(map(str, layer.mrope_section))
    fig = cache.axis_strips_figure(
        layouts, axis_names, title=t("models.mrope.axes", section=section), x_title=t("axis.pair")
    )
    FIG.show("mrope.axes", fig, {"pair": np.arange(layer.inv_freq.size), **layouts})
    distances = np.arange(int(reach) + 1)
    scores = {}
    for layout, axes in layouts.items():
        for axis in (1, 2):
            label = t("models.mrope.score.series", layout=layout, axis=axis_names[axis])
            scores[label] = cache.mrope_axis_score(layer.inv_freq, axes, axis, distances)
    axes = {"x_title": t("models.axis.patches_apart"), "y_title": t("models.axis.score")}
    lines("mrope.score", "distance", distances, scores, axes)


def rope2d_tab() -> None:
    """The similarity of one patch to every other under axial and mixed 2-D RoPE, and along the two diagonals."""
    unused_controls(t("models.ctl.from"), t("models.ctl.model"), reason=t("models.unused.rope2d"))
    st.latex(
        r"\text{axial: } \phi_{t} = r\,\theta_{2k}\ \text{or}\ c\,\theta_{2k+1},\qquad"
        r"\text{mixed: } \phi_t = \theta_t\,(r \sin\varphi_t + c \cos\varphi_t),\ "
        r"\varphi_t = \tfrac{\pi}{2} - \tfrac{\pi (t \bmod D)}{D}"
    )
    with controls():
        c = st.columns(3)
        with c[0]:
            rows = int(CTL.numeric("rows", 2, 32, 15, slider=False))
            cols = int(CTL.numeric("cols", 2, 32, 15, slider=False))
        with c[1]:
            head_dim = int(CTL.numeric("hd", 4, 256, 64, step=4, grid=4, slider=False))
            base = float(CTL.numeric("b2d", 2.0, 1_000_000.0, 10.0, log=True))
        with c[2]:
            row = int(CTL.numeric("pr", 0, rows - 1, min(7, rows - 1), slider=False))
            col = int(CTL.numeric("pc", 0, cols - 1, min(7, cols - 1), slider=False))
            directions = int(CTL.numeric("dirs", 2, 16, 8, step=2, grid=2, slider=False))
    patch = row * cols + col
    variants = {t("models.rope2d.axial"): "axial", t("models.rope2d.mixed", D=directions): "mixed"}
    grids = {
        label: cache.rope_2d_similarity(code, rows, cols, head_dim, patch, base=base, n_directions=directions).reshape(
            rows, cols
        )
        for label, code in variants.items()
    }
    axial, mixed = grids.values()
    fig = cache.heatmap_pair_figure(
        axial,
        mixed,
        subtitles=tuple(grids),
        title=t("models.rope2d.similarity", r=row, c=col),
        x_title=t("models.axis.column"),
        y_title=t("models.axis.row"),
        zmin=-1.0,
        zmax=1.0,
        colorbar_title="S",
    )
    FIG.show("rope2d.similarity", fig, {"axial": axial.ravel(), "mixed": mixed.ravel()})
    length = max(views.steps_inside((rows, cols), (row, col), step) for step in DIRECTIONS.values())
    steps = np.arange(length)
    series = {
        f"{label} · {t(f'models.direction.{code}')}": views.line_profile(grid, (row, col), step, length)
        for label, grid in grids.items()
        for code, step in DIRECTIONS.items()
    }
    axes = {"x_title": t("models.axis.steps"), "y_title": t("models.axis.score")}
    lines("rope2d.directions", "steps", steps, series, axes)


intro("models")
positions = None
with controls():
    config, name, kind = source.pick_config()
if config is None:
    st.info(t(f"models.empty.{kind}"))
else:
    with errors_shown(source.ERROR_KIND[kind]):
        positions = source.read_config(config, kind)
DRAW = {"map": map_tab, "layers": layers_tab, "compare": compare_tab, "mrope": mrope_tab, "rope2d": rope2d_tab}
if positions is None:  # the error above says what is wrong; M-RoPE and 2-D RoPE have their own settings
    DRAW = {code: draw if code in ("mrope", "rope2d") else st.empty for code, draw in DRAW.items()}
lazy_tabs("models", DRAW)
