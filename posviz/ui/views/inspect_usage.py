"""A RoPE model in the inspector, as views: the wavelength of every pair its config sets, and what its q/k weights do
with each frequency (Barbero et al., 2025, "Round and Round We Go! What makes Rotary Positional Encodings useful?",
arXiv:2410.06205): usage by layer and by head, against the wavelength, p-RoPE's share and each head's positional
score. The numbers are ``posviz.lessons.frequency_usage``'s and ``posviz.models.rope_configs``'s.

A view takes the model as a :class:`Model`: named by its content fingerprint, which alone keys the view; the folder
it holds is what the core reads, on a miss only. The measured usage of a rotary group is held once in
``cache.TABLES`` (:func:`frequency_usage`), which the page's controls read too (its groups and layers).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from posviz.base import checks
from posviz.figures import frequency_usage as usage_figures
from posviz.figures import rope as rope_figures
from posviz.lessons import frequency_usage as usage_core
from posviz.models import rope_configs

from ..i18n import t
from . import Figure, Text, shared, view

#: The projections a usage figure reads.
WHICH = ("query", "key")
#: The distances m - n at which each head's positional score is drawn.
SCORE_DISTANCES = range(-64, 65)


@dataclasses.dataclass(frozen=True)
class Model:
    """A RoPE model on disk as a view takes it, compared and hashed by ``digest`` alone."""

    #: Its content fingerprint (``posviz.checkpoint.fingerprint``: the folder's name, and every file's size and
    #: modification time): what keys a view.
    digest: str
    #: The folder the core reads (``usage_core.rope_frequency_usage``), on a miss only; never part of a key.
    source: Any = dataclasses.field(compare=False, repr=False)


def _read(model: Model, group: int | None) -> usage_core.FrequencyUsage:
    return usage_core.rope_frequency_usage(model.source, group=group)


def frequency_usage(model: Model, group: int | None = None) -> usage_core.FrequencyUsage:
    """``usage_core.rope_frequency_usage(model.source, group=group)``, kept in ``cache.TABLES`` by the model's
    digest and the group (``views.shared``; its arrays read-only); the model's first group (``group=None``) is read
    first, and is the one returned when ``group`` names it."""
    first = shared(_read, model, None)
    return first if group is None or group == first.group else shared(_read, model, group)


def ranges(numbers) -> str:
    """0, 1, 2, 5 -> '0–2, 5' (the page language's list separator: '0–2、5' in Chinese)."""
    out: list[list[int]] = []
    for n in sorted(int(x) for x in numbers):
        if out and n == out[-1][-1] + 1:
            out[-1].append(n)
        else:
            out.append([n])
    return t("list.sep").join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in out)


def _by_pair(matrix, rows: str, index) -> pd.DataFrame:
    """A (rows x pairs) usage table for its CSV: one row per ``rows`` (``index`` its labels), one column per pair."""
    return pd.DataFrame(matrix, index=pd.Index(index, name=rows), columns=[f"pair {i}" for i in range(matrix.shape[1])])


@view("rope")
def config(text: str):
    """The wavelength 2 pi / theta_i of every pair a config.json sets, theta_i = base^(-2i/d), plain and as its
    ``rope_scaling`` makes it (``rope_configs.config_frequencies``; ``text`` the config's RoPE fields as JSON),
    against its original context."""
    found = rope_configs.config_frequencies(text)
    pairs = range(found.plain.size)
    original = found.config.original_max_position_embeddings
    contexts = {t("rope.ext.orig", L=f"{original:,}"): original} if original else {}
    fig = rope_figures.wavelengths(
        pairs,
        {t("rope.cfg.plain"): found.plain_wavelength, t("rope.cfg.scaled"): found.scaled_wavelength},
        contexts,
        title=t("rope.cfg.wavelength"),
        x_title=t("axis.pair"),
        y_title=t("rope.axis.wavelength"),
    )
    return [Figure("cfg", fig, {"pair": pairs, "inv_freq": found.plain, "inv_freq_scaled": found.scaled})]


@view("usage")
def summary(model: Model, group: int):
    """What was measured, a caption each: the layers and heads of the rotary group ``group``, the pairing the model
    uses, and what was left out (its other groups, NoPE layers, zero-frequency pairs, head norms, shared keys)."""
    usage = frequency_usage(model, group)
    items = [
        Text(
            t(
                "usage.summary",
                layers=len(usage.layers),
                heads=usage.query.shape[1],
                kv_heads=usage.key.shape[1],
                head_dim=usage.head_dim,
                pairs=usage.query.shape[2],
                layout=t(f"usage.layout.{usage.layout}"),
            ),
            "caption",
        )
    ]
    if usage.mla:
        items.append(Text(t("usage.mla", rope=usage.rotary_dim, head_dim=usage.head_dim), "caption"))
    if usage.zero_frequency_pairs:
        items.append(Text(t("usage.zero_pairs", n=usage.zero_frequency_pairs), "caption"))
    if usage.kv_shared:
        shared = t("list.sep").join(t("usage.kv_shared.one", layer=n, source=m) for n, m in usage.kv_shared.items())
        items.append(Text(t("usage.kv_shared", pairs=shared), "caption"))
    if usage.head_norms:
        norms = t("list.sep").join(f"`{n}`" for n in usage.head_norms)
        items.append(Text(t("usage.head_norms", norms=norms), "caption"))
    if usage.other_groups:
        others = "; ".join(ranges(g.layers) for g in usage.other_groups)
        items.append(Text(t("usage.groups", n=len(usage.groups), others=others), "caption"))
    if usage.nope_layers:
        items.append(Text(t("usage.nope", layers=ranges(usage.nope_layers), n=len(usage.nope_layers)), "caption"))
    return items


@view("usage")
def by_layer(model: Model, group: int, which: str):
    """usage[layer, i] = the mean over a layer's heads of ||W[rows of pair i]||_F, the Frobenius norm of the rows of
    the ``which`` projection ("query" or "key") that feed pair i (``FrequencyUsage.layer_means``)."""
    usage = frequency_usage(model, group)
    matrix = usage.layer_means(which)
    layers = [int(n) for n in usage.layers]
    fig = usage_figures.usage_heatmap(
        matrix,
        rows=layers,
        title=t("usage.by_layer", which=t(f"usage.{which}")),
        y_title=t("usage.axis.layer"),
        x_title=t("usage.axis.pair"),
        colorbar_title=t("usage.axis.usage"),
    )
    return [Figure("by_layer", fig, _by_pair(matrix, "layer", layers))]


@view("usage")
def by_head(model: Model, group: int, which: str, layer: int):
    """usage[head, i] = ||W[rows of pair i]||_F of each head of ``layer`` in the ``which`` projection: the query
    heads, or the key-value heads."""
    checks.choice("which", which, WHICH)
    usage = frequency_usage(model, group)
    layers = [int(n) for n in usage.layers]
    if layer not in layers:
        raise ValueError(f"layer must be one of the layers read, {', '.join(map(str, layers))}; got {layer!r}")
    heads = (usage.query if which == "query" else usage.key)[layers.index(layer)]
    fig = usage_figures.usage_heatmap(
        heads,
        title=t(f"usage.by_head.{which}", layer=layer),
        y_title=t(f"usage.axis.head.{which}"),
        x_title=t("usage.axis.pair"),
        colorbar_title=t("usage.axis.usage"),
    )
    data = _by_pair(heads, "head", range(len(heads)))
    return [Figure(f"by_head.{which}", fig, data, {"suffix": f"layer{layer}"})]


@view("usage")
def wavelength(model: Model, group: int):
    """The mean usage of each pair over every head of every layer, queries and keys (``FrequencyUsage.pair_means``),
    against its wavelength 2 pi / theta_i, with the context the model was trained on."""
    usage = frequency_usage(model, group)
    context = usage.training_context
    means = {w: usage.pair_means(w) for w in WHICH}
    fig = usage_figures.usage_against_wavelength(
        usage.wavelength,
        {t("usage.query"): means["query"], t("usage.key"): means["key"]},
        title=t("usage.wavelength"),
        x_title=t("usage.axis.wavelength"),
        y_title=t("usage.axis.mean_usage"),
        training_context=context,
        context_label=t("usage.context", n=f"{context:,}") if context else "",
    )
    data = {"pair": range(usage.query.shape[2]), "inv_freq": usage.inv_freq, "wavelength": usage.wavelength}
    data |= {f"mean_{w}_usage": mean for w, mean in means.items()}
    return [Figure("wavelength", fig, data, {"variant": None if context else "nocontext", "n": context})]


@view("usage")
def prope(model: Model, group: int, which: str, p: float):
    """p-RoPE (Barbero et al., 2025): the round(p x pairs) fastest pairs keep turning, the others stop
    (``usage_core.p_rope_dropped``), and the share of the squared mean usage of the ``which`` projection the stopped
    ones carry, sum over them of usage_i^2 / sum of usage_i^2 (``usage_core.p_rope_share``)."""
    usage = frequency_usage(model, group)
    dropped = usage_core.p_rope_dropped(usage.inv_freq, p)
    mean = usage.pair_means(which)
    share = float(usage_core.p_rope_share(mean, dropped))
    pairs = mean.size
    fig = usage_figures.p_rope_figure(
        usage.wavelength,
        mean,
        dropped,
        title=t("usage.prope", p=f"{p:g}", which=t(f"usage.{which}")),
        x_title=t("usage.axis.wavelength"),
        y_title=t("usage.axis.mean_usage"),
        kept_label=t("usage.prope.kept"),
        dropped_label=t("usage.prope.dropped"),
        share_text=t("usage.prope.share", share=f"{share:.1%}", dropped=int(dropped.sum()), pairs=pairs),
    )
    data = {"pair": range(pairs), "wavelength": usage.wavelength, f"mean_{which}_usage": mean, "dropped": dropped}
    return [Figure("prope", fig, data)]


@view("usage")
def pattern(model: Model, group: int, layer: int):
    """The positional part of q_m . k_n of every head of ``layer`` for a constant input, the mean token embedding:
    sum_i |q_i| |k_i| cos((m - n) theta_i + phi_i) over the distances ``SCORE_DISTANCES``
    (``usage_core.head_score_pattern``), the heads whose score swings most first; a note instead for multi-head
    latent attention, whose queries and keys pass through a norm of a latent."""
    if frequency_usage(model, group).mla:
        return [Text(t("usage.pattern.mla"), "info")]
    found = usage_core.head_score_pattern(model.source, layer, SCORE_DISTANCES)
    ranked = np.argsort(-found.swing, kind="stable")
    fig = usage_figures.score_pattern_figure(
        found.distances,
        found.score[ranked],
        [t("usage.head", h=int(h)) for h in ranked],
        title=t("usage.pattern", layer=layer),
        x_title=t("usage.axis.distance"),
        y_title=t("usage.axis.score"),
    )
    data = pd.DataFrame(
        found.score.T,
        index=pd.Index(found.distances, name="distance"),
        columns=[f"head {h}" for h in range(len(found.score))],
    )
    return [Figure("pattern", fig, data, {"suffix": f"layer{layer}"})]
