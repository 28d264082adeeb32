"""The words the Models page says of a model's positions (``posviz.models.model_positions``): each group of layers
by its kind, attention and RoPE details, the whole model in one sentence, how its config was read and the keys
transformers ignores. The page's views (``views.models``) and its controls name the groups with them.
"""

from __future__ import annotations

import numpy as np

from posviz.models import LayerGroup, LayerPositions, ModelPositions

from ..i18n import t
from ..widgets import shown


def attention_words(layer) -> str:
    """The layer's attention in a few words: full, or sliding / chunked with its window."""
    if layer.attention in ("sliding", "chunked"):
        return t(f"models.attention.{layer.attention}", window=shown(layer.window))
    return t(f"models.attention.{layer.attention}")


def details(layer) -> list[str]:
    """What else a group of layers does to positions, each in a few words."""
    out = [] if layer.kind == "none" else [attention_words(layer)]
    if layer.compress_rate is not None:
        out.append(t("models.detail.compressed", rate=shown(layer.compress_rate)))
    if layer.kind == "rope":
        out.append(t("models.detail.base", base=shown(layer.rope_theta)))
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


def summary_sentence(found: ModelPositions) -> str:
    """The whole model in one sentence: how many layers of each kind, with what."""
    parts = []
    for g in found.summary():
        kind, said = t(f"models.kind.{g.layer.kind}"), details(g.layer)
        if said:
            parts.append(t("models.summary.part", count=g.count, kind=kind, details=t("list.sep").join(said)))
        else:
            parts.append(t("models.summary.plain", count=g.count, kind=kind))
    return t("models.summary", n=found.num_layers, parts=t("models.summary.sep").join(parts))


def reading_sentence(found: ModelPositions) -> str:
    """How the config was read: posviz's own reader of the config class, or transformers' config class with the
    rules posviz adds for what the modeling code decides."""
    name = found.config_class or found.text_model_type
    if found.rules[:1] == ("family",):
        return t("models.read.family", cls=name)
    rules = [t(f"models.rule.{rule}") for rule in found.rules[1:]]
    if rules:
        return t("models.read.rules", cls=name, rules=t("list.sep").join(rules))
    return t("models.read.standard", cls=name)


def ignored_sentence(found: ModelPositions) -> str | None:
    """The config's keys that transformers ignores, each with why; None when there are none."""
    if not found.ignored:
        return None
    listed = t("list.sep").join(
        t("models.ignored.item", name=key, why=t(f"models.ignored.{why}")) for key, why in found.ignored
    )
    return t("models.ignored", keys=listed)


def rope_groups(found: ModelPositions) -> list[LayerGroup]:
    """The model's groups of RoPE layers."""
    return [g for g in found.summary() if g.layer.kind == "rope"]


def mrope_layer(found: ModelPositions) -> LayerPositions | None:
    """The model's first M-RoPE layer (one with an ``mrope_section``), or None."""
    return next((x for x in found.layers if x.mrope_section is not None), None)
