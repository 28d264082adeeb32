"""The Models page's views, as functions of their settings: a model's positions read from its config.json in words
and as the layer map, one group of RoPE layers' wavelengths and turns, two models side by side, Qwen2-VL's M-RoPE
positions, axes and scores, and a patch's similarity to the others under axial and mixed 2-D RoPE.

A view takes the config's text (or a preset's name) and reads it with ``posviz.models.model_positions`` itself; its
numbers come from ``posviz.models`` and ``posviz.models.views``, its figures from ``posviz.figures.models``,
``posviz.figures.rope`` and ``posviz.figures.lines``; its words from ``views.models_words``.
"""

from __future__ import annotations

import numpy as np

from posviz import figures, models
from posviz.encodings import rope
from posviz.figures import models as model_figures
from posviz.figures import rope as rope_figures
from posviz.models import ModelPositions
from posviz.models.views import (
    line_profile,
    mrope_axis_score,
    plain_inv_freq,
    rope_2d_similarity,
    rope_mixed_angles,
    steps_inside,
    turn_share,
)

from ..i18n import t
from ..widgets import shown
from . import Figure, Text, view
from .models_words import group_label, mrope_layer, reading_sentence, rope_groups, summary_sentence

#: The M-RoPE axes, in the order of a position id's rows.
AXES = ("time", "height", "width")
#: The directions of the 2-D similarity profiles from the patch: (row step, column step).
DIRECTIONS = {"diagonal": (1, 1), "antidiagonal": (1, -1)}


# ----------------------------------------------------------------------------------------------------- figures


def style_of(layer, first_theta) -> str:
    """The layer map's colour code of a layer (``figures.models.STYLE_COLOURS``): its kind, or for RoPE whether it
    is scaled or turns with another base than the model's first RoPE layer (``first_theta``)."""
    if layer.kind != "rope":
        return layer.kind
    if layer.rope_type != "default":
        return "rope_scaled"
    return "rope" if layer.rope_theta == first_theta else "rope_other_base"


def map_rows(named: dict[str, ModelPositions]) -> dict[str, list[dict]]:
    """The layer map's rows: for each model, its groups of layers with their label, layers and colour code."""
    rows = {}
    for name, found in named.items():
        first = next((x.rope_theta for x in found.layers if x.kind == "rope"), None)
        rows[name] = [
            {
                "label": group_label(g.layer),
                "indices": np.asarray(g.indices),
                "style": style_of(g.layer, first),
                "kind": g.layer.kind,
                "attention": g.layer.attention,
                "window": g.layer.window,
            }
            for g in found.summary()
        ]
    return rows


def map_figure(named: dict[str, ModelPositions], suffix: str | None = None) -> Figure:
    """The layer map of the models ``named`` (name -> positions), one row each (``figures.models.layer_map``), with a
    CSV of one line per layer; ``suffix`` follows the file name (the compare tab's map)."""
    rows = map_rows(named)
    fig = model_figures.layer_map(
        rows, title=t("models.map"), x_title=t("models.axis.layer"), layer_label=t("models.axis.layer")
    )
    columns = ("kind", "attention", "window")
    data: dict[str, list] = {"model": [], "layer": [], **{c: [] for c in columns}, "group": []}
    for name, groups in rows.items():
        for group in groups:
            for index in group["indices"]:
                data["model"].append(name)
                data["layer"].append(int(index))
                for column in columns:
                    data[column].append(group[column])
                data["group"].append(group["label"])
    return Figure("map", fig, data, {"suffix": suffix})


def wavelength_lines(series: dict[str, np.ndarray], contexts: dict[str, float], title: str):
    """Each pair's wavelength in every entry of ``series`` (name -> one per pair), with the ``contexts`` (name ->
    length) marked (``figures.models.wavelengths``)."""
    pairs = np.arange(max(len(v) for v in series.values()))
    return model_figures.wavelengths(
        pairs, series, contexts, title=title, x_title=t("axis.pair"), y_title=t("rope.axis.wavelength")
    )


# ------------------------------------------------------------------------------------------------------- views


@view("models")
def reading(config: str):
    """The model of ``config`` (``models.model_positions``) in one sentence, and how its config was read."""
    found = models.model_positions(config)
    return [Text(summary_sentence(found)), Text(reading_sentence(found), "caption")]


@view("models")
def layer_map(config: str, name: str):
    """The layer map of the model of ``config``, its row named ``name``: one cell per layer, coloured by its kind."""
    return [map_figure({name: models.model_positions(config)})]


@view("models")
def layers(config: str, group: int):
    """Group ``group`` of the model's RoPE layers: its facts, its wavelengths 2 pi / theta_i before scaling (theta_i =
    rope_theta^(-2i / rotary_dim), ``plain_inv_freq``) and as the layer turns, against the contexts the
    config names, and the share of a turn min(1, (L - 1) theta_i / 2 pi) each pair covers within them
    (``turn_share``)."""
    found = models.model_positions(config)
    chosen = rope_groups(found)[group]
    layer = chosen.layer
    assert layer.inv_freq is not None  # a RoPE layer's
    items: list = [
        Text(
            t(
                "models.layers.facts",
                count=chosen.count,
                type=layer.rope_type,
                factor=f"{layer.attention_factor:.4g}",
                softmax=f"{layer.softmax_scale:.4g}",
                r=layer.rotary_dim,
                d=layer.head_dim,
                pairs=layer.inv_freq.size,
            )
        )
    ]
    plain = plain_inv_freq(layer)
    original, longest = found.original_max_position_embeddings, found.max_position_embeddings
    pairs = np.arange(layer.inv_freq.size)
    series = {t("models.layers.plain"): rope.rope_wavelength(plain)}
    scaled = not np.array_equal(plain, layer.inv_freq)
    if scaled:
        series[t("models.layers.scaled", type=layer.rope_type)] = rope.rope_wavelength(layer.inv_freq)
    if layer.long_inv_freq is not None:
        series[t("models.layers.long")] = rope.rope_wavelength(layer.long_inv_freq)
    contexts: dict[str, float] = {}
    if original:
        contexts[t("rope.ext.orig", L=shown(original))] = original
    if longest and longest != original:
        contexts[t("models.layers.longest", L=shown(longest))] = longest
    if layer.window:
        contexts[t(f"models.layers.{layer.attention}", L=shown(layer.window))] = layer.window
    data = {"pair": pairs, "inv_freq_plain": plain, "inv_freq_layer": layer.inv_freq}
    items.append(Figure("layers.wavelength", wavelength_lines(series, contexts, t("models.layers.wavelength")), data))
    if original:  # the config names the pre-training context: what the pairs saw there, and what they meet at the end
        seen = {t("models.layers.seen", L=shown(original)): turn_share(plain, original)}
        if longest and longest != original:
            seen[t("models.layers.reach", L=shown(longest))] = turn_share(layer.inv_freq, longest)
        variant = None
    elif longest:  # it does not: how far each pair turns within the longest context
        seen = {t("models.layers.within", L=shown(longest)): turn_share(layer.inv_freq, longest)}
        variant = "context"
        if scaled:
            items.append(Text(t("models.layers.unknown_original", type=layer.rope_type), "caption"))
    else:
        return items
    never = int((seen[next(iter(seen))] < 1).sum())
    fig = figures.lines(
        pairs,
        seen,
        title=t("models.layers.turns"),
        x_title=t("axis.pair"),
        y_title=t("models.axis.turn"),
        y_range=(0.0, 1.05),
    )
    options = {"variant": variant, "never": never, "pairs": pairs.size}
    items.append(Figure("layers.turns", fig, {"pair": pairs, **seen}, options))
    return items


@view("models")
def compare(config: str, name: str, other: str):
    """The model of ``config`` (A, named ``name``) beside the preset ``other`` (B): both in a sentence, their layer
    maps, and every RoPE group's wavelengths 2 pi / theta_i, the shorter lines padded with NaN."""
    named = {
        f"A · {name}": models.model_positions(config),
        f"B · {t(f'models.preset.{other}')}": models.model_positions(models.preset_text(other)),
    }
    items: list = [
        Text(t("models.compare.summary", side=side, summary=summary_sentence(found))) for side, found in named.items()
    ]
    items.append(map_figure(named, "compare"))
    series = {
        f"{side[0]} · {group_label(g.layer)}": rope.rope_wavelength(g.layer.inv_freq)
        for side, found in named.items()
        for g in rope_groups(found)
    }
    if series:
        width = max(len(v) for v in series.values())
        padded = {k: np.pad(v, (0, width - len(v)), constant_values=np.nan) for k, v in series.items()}
        fig = wavelength_lines(padded, {}, t("models.compare.wavelength"))
        items.append(Figure("compare.wavelength", fig, {"pair": np.arange(width), **padded}))
    return items


def axis_names() -> tuple[str, str, str]:
    """The three axes' names, in the page's language."""
    time, height, width = (t(f"models.axis.{a}") for a in AXES)
    return time, height, width


@view("models")
def mrope_grid(segments: tuple):
    """Qwen2-VL's three position ids (time, height, width) of every token of ``segments``: text lengths and
    ("image" | "video", t, h, w) (``models.mrope_position_ids``)."""
    ids = models.mrope_position_ids(segments)
    fig = model_figures.position_grid(
        ids,
        list(axis_names()),
        title=t("models.mrope.grid", n=ids.shape[1]),
        x_title=t("models.axis.token"),
        colorbar_title=t("models.axis.position_id"),
    )
    return [Figure("mrope.grid", fig, {"token": np.arange(ids.shape[1]), **{a: ids[i] for i, a in enumerate(AXES)}})]


def mrope_layouts(config: str) -> tuple[tuple[int, ...], np.ndarray, dict[str, np.ndarray]]:
    """The first M-RoPE layer of the model of ``config``: its ``mrope_section``, its frequencies and the axis of
    each of its pairs, sectioned and interleaved (``models.mrope_axes``)."""
    layer = mrope_layer(models.model_positions(config))
    if layer is None or layer.mrope_section is None or layer.head_dim is None or layer.inv_freq is None:
        raise ValueError("the config sets no M-RoPE layer (no mrope_section in its rope parameters)")
    return (
        layer.mrope_section,
        layer.inv_freq,
        {
            t("models.mrope.sectioned"): models.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=False),
            t("models.mrope.interleaved"): models.mrope_axes(layer.head_dim, layer.mrope_section, interleaved=True),
        },
    )


@view("models")
def mrope_axes(config: str):
    """Which axis (time, height, width) turns each pair of the model's first M-RoPE layer, sectioned (the first
    section's pairs to time, ...) and interleaved (pairs dealt out in turn)."""
    section, inv_freq, layouts = mrope_layouts(config)
    fig = model_figures.axis_strips(
        layouts,
        axis_names(),
        title=t("models.mrope.axes", section=", ".join(map(str, section))),
        x_title=t("axis.pair"),
    )
    return [Figure("mrope.axes", fig, {"pair": np.arange(inv_freq.size), **layouts})]


@view("models")
def mrope_score(config: str, reach: int):
    """The score of q = k = ones of two patches 0 .. ``reach`` apart along the height or the width, S(delta) =
    mean_j cos(delta theta_j [axis_j = axis]) (``mrope_axis_score``), for both layouts."""
    _, inv_freq, layouts = mrope_layouts(config)
    names = axis_names()
    distances = np.arange(reach + 1)
    scores = {
        t("models.mrope.score.series", layout=layout, axis=names[axis]): mrope_axis_score(
            inv_freq, axes, axis, distances
        )
        for layout, axes in layouts.items()
        for axis in (1, 2)
    }
    fig = figures.lines(
        distances,
        scores,
        title=t("models.mrope.score"),
        x_title=t("models.axis.patches_apart"),
        y_title=t("models.axis.score"),
    )
    return [Figure("mrope.score", fig, {"distance": distances, **scores})]


@view("models")
def rope2d(rows: int, cols: int, head_dim: int, base: float, row: int, col: int, directions: int):
    """The similarity S_p = mean_i cos(angle[patch, i] - angle[p, i]) of the patch at (``row``, ``col``) to every
    patch of a ``rows`` x ``cols`` grid, under axial 2-D RoPE (``models.rope_2d_angles``) and RoPE-Mixed with
    ``directions`` directions (``rope_mixed_angles``), and along the two diagonals from it."""
    patch = row * cols + col
    axial_label, mixed_label = t("models.rope2d.axial"), t("models.rope2d.mixed", D=directions)
    axial = rope_2d_similarity(models.rope_2d_angles(rows, cols, head_dim, base=base), patch).reshape(rows, cols)
    mixed = rope_2d_similarity(
        rope_mixed_angles(rows, cols, head_dim, base=base, n_directions=directions), patch
    ).reshape(rows, cols)
    grids = {axial_label: axial, mixed_label: mixed}
    pair = rope_figures.heatmap_pair(
        axial,
        mixed,
        subtitles=(axial_label, mixed_label),
        title=t("models.rope2d.similarity", r=row, c=col),
        x_title=t("models.axis.column"),
        y_title=t("models.axis.row"),
        zmin=-1.0,
        zmax=1.0,
        colorbar_title="S",
    )
    length = max(steps_inside((rows, cols), (row, col), step) for step in DIRECTIONS.values())
    steps = np.arange(length)
    series = {
        f"{label} · {t(f'models.direction.{code}')}": line_profile(grid, (row, col), step, length)
        for label, grid in grids.items()
        for code, step in DIRECTIONS.items()
    }
    lines = figures.lines(
        steps,
        series,
        title=t("models.rope2d.directions"),
        x_title=t("models.axis.steps"),
        y_title=t("models.axis.score"),
    )
    return [
        Figure("rope2d.similarity", pair, {"axial": axial.ravel(), "mixed": mixed.ravel()}),
        Figure("rope2d.directions", lines, {"steps": steps, **series}),
    ]
