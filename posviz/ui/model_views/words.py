"""What a model does to positions, in words: each group of layers labelled by its kind, attention and RoPE details,
the whole model in one sentence, the config keys transformers ignores, and the layer map of one or two models."""

from __future__ import annotations

import numpy as np
import streamlit as st

from posviz.models import ModelPositions

from .. import Figures, cache, t, widgets

FIG = Figures("models")


def attention_words(layer) -> str:
    """The layer's attention in a few words: full, or sliding / chunked with its window."""
    if layer.attention in ("sliding", "chunked"):
        return t(f"models.attention.{layer.attention}", window=widgets.shown(layer.window))
    return t(f"models.attention.{layer.attention}")


def details(layer) -> list[str]:
    """What else a group of layers does to positions, each in a few words."""
    out = [] if layer.kind == "none" else [attention_words(layer)]
    if layer.compress_rate is not None:
        out.append(t("models.detail.compressed", rate=widgets.shown(layer.compress_rate)))
    if layer.kind == "rope":
        out.append(t("models.detail.base", base=widgets.shown(layer.rope_theta)))
        if layer.rope_type == "proportional":  # Gemma 4's global layers: the slowest pairs do not turn at all
            turning = int(np.count_nonzero(layer.inv_freq))
            out.append(t("models.detail.proportional", turning=turning, pairs=layer.inv_freq.size))
        elif layer.rope_type != "default":
            out.append(t(f"models.detail.scaled.{layer.rope_type}"))
        if layer.partial:
            out.append(t("models.detail.partial", r=layer.rotary_dim, d=layer.head_dim))
        if layer.layout == "interleaved":
            out.append(t("models.detail.interleaved"))
        if layer.mrope_section is not None:
            out.append(t("models.detail.mrope", section=", ".join(map(str, layer.mrope_section))))
    if layer.temperature_tuning is not None:
        out.append(t("models.detail.temperature"))
    if layer.kind == "alibi" and layer.num_heads:
        out.append(t("models.detail.alibi", heads=layer.num_heads))
    if layer.kind == "relative_bias" and layer.relative_buckets:
        out.append(t("models.detail.buckets", buckets=layer.relative_buckets, distance=layer.relative_max_distance))
    return out


def group_label(layer) -> str:
    """A group of layers in one line: its kind, then its details."""
    return " · ".join([t(f"models.kind.{layer.kind}"), *details(layer)])


def summary_sentence(positions) -> str:
    """The whole model in one sentence: how many layers of each kind, with what."""
    parts = []
    for g in positions.summary():
        kind, said = t(f"models.kind.{g.layer.kind}"), details(g.layer)
        if said:
            parts.append(t("models.summary.part", count=g.count, kind=kind, details=t("list.sep").join(said)))
        else:
            parts.append(t("models.summary.plain", count=g.count, kind=kind))
    return t("models.summary", n=positions.num_layers, parts=t("models.summary.sep").join(parts))


def ignored_notice(positions) -> None:
    """The config's keys that transformers ignores, each with why, when there are any."""
    if positions.ignored:
        listed = t("list.sep").join(
            t("models.ignored.item", name=key, why=t(f"models.ignored.{why}")) for key, why in positions.ignored
        )
        st.info(t("models.ignored", keys=listed), icon=":material/info:")


def reading_caption(positions) -> None:
    """How the config was read: posviz's own reader of the config class, or transformers' config class with the
    rules posviz adds for what the modeling code decides."""
    name = positions.config_class or positions.text_model_type
    if positions.rules[:1] == ("family",):
        st.caption(t("models.read.family", cls=name))
        return
    rules = [t(f"models.rule.{rule}") for rule in positions.rules[1:]]
    if rules:
        st.caption(t("models.read.rules", cls=name, rules=t("list.sep").join(rules)))
    else:
        st.caption(t("models.read.standard", cls=name))


def rope_groups(positions) -> list:
    """The model's groups of RoPE layers."""
    return [g for g in positions.summary() if g.layer.kind == "rope"]


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
    for name, positions in named.items():
        first = next((x.rope_theta for x in positions.layers if x.kind == "rope"), None)
        rows[name] = [
            {
                "label": group_label(g.layer),
                "indices": np.asarray(g.indices),
                "style": style_of(g.layer, first),
                "kind": g.layer.kind,
                "attention": g.layer.attention,
                "window": g.layer.window,
            }
            for g in positions.summary()
        ]
    return rows


def layer_map(named: dict[str, ModelPositions], suffix: str | None = None) -> None:
    """The layer map of the models ``named`` (name -> ``ModelPositions``), one row each, with a CSV of one line per
    layer; ``suffix`` follows the file name (the compare tab's map)."""
    rows = map_rows(named)
    fig = cache.layer_map_figure(
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
    FIG.show("map", fig, data, suffix=suffix)
