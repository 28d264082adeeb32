"""The inspector's Classic findings tab: the findings about learned tables, each as the question it answers about
the loaded table (the numbers are ``posviz.analysis``'s: ``principal_components``, ``similarity_decay``,
``relative_order_probe``, ``roughness_by_position``)."""

from __future__ import annotations

import streamlit as st

from .. import Figures, cache, t
from .source import Loaded

FIG = Figures("findings")


def findings(loaded: Loaded) -> None:
    """A helix under PCA? How fast does similarity decay with the offset, and does a linear probe read which of two
    rows comes first? Do the rows get noisier past some index?"""
    n = loaded.table.shape[0]
    st.markdown(t("findings.intro"))
    found = cache.principal_components(loaded.ref)
    shares = [f"{share:.0%}" for share in found.share]
    fig = cache.components_3d_figure(
        range(n),
        found.coords,
        title=t("findings.pca"),
        axis_titles=tuple(t("findings.pc", k=k + 1, share=shares[k]) for k in range(3)),
        colorbar_title=t("axis.position"),
    )
    data = {"position": range(n)} | {f"pc{k + 1}": found.coords[:, k] for k in range(3)}
    FIG.show("pca", fig, data, shares=" · ".join(shares), turns=f"{abs(found.winding):.1f}")

    decay = cache.similarity_decay(loaded.ref)
    half = decay.half_offset
    mark = {"half_offset": half, "half_label": t("findings.half", k=half) if half is not None else ""}
    data = {"offset": decay.offsets, "mean_cosine": decay.mean}
    axes = ("inspect.axis.offset", "inspect.axis.cosine")
    variant = None if half is not None else "never"
    curve(loaded, "decay", cache.similarity_decay_figure, data, mark, axes, variant=variant, k=half)

    error = cache.relative_order_probe(loaded.ref)
    st.markdown(t("findings.order", pairs=n, error=f"{error:.0%}"))

    rough = cache.roughness_by_position(loaded.ref)
    change = rough.change
    mark = {"change": change, "change_label": t("findings.change", row=change) if change is not None else ""}
    data = {"position": rough.positions, "roughness": rough.value}
    axes = ("axis.position", "findings.rough.y")
    variant = None if change is not None else "short"
    curve(
        loaded,
        "rough",
        cache.roughness_figure,
        data,
        mark,
        axes,
        variant=variant,
        row=change,
        ratio=f"{rough.ratio:.1f}",
    )


def curve(loaded: Loaded, key: str, figure, data: dict, mark: dict, axes: tuple[str, str], **notice) -> None:
    """The finding ``key`` as one curve of the loaded table: ``figure`` (a cached figure of one named line) draws the
    first two columns of ``data`` against each other with ``mark`` (the figure's own keywords for the point it marks),
    titled ``findings.<key>`` over the axes ``axes`` (catalog keys); ``notice``: its caption's variant and values."""
    x, y = data.values()
    fig = figure(x, y, title=t(f"findings.{key}"), x_title=t(axes[0]), y_title=t(axes[1]), name=loaded.name, **mark)
    FIG.show(key, fig, data, **notice)
