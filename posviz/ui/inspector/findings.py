"""The inspector's Classic findings tab: the findings about learned tables, each as the question it answers about
the loaded table (the numbers are ``posviz.analysis``'s: ``principal_components``, ``similarity_decay``,
``relative_order_probe``, ``roughness_by_position``)."""

from __future__ import annotations

import streamlit as st

from .. import Figures, cache, t
from .source import Loaded

FIG = Figures("findings")
#: The findings drawn as one curve: their figure, their axes (catalog keys), and their mark (the figure's keywords for
#: where it is and for its label, and the label's catalog key).
CURVES = {
    "decay": (
        cache.similarity_decay_figure,
        ("inspect.axis.offset", "inspect.axis.cosine"),
        ("half_offset", "half_label", "findings.half"),
    ),
    "rough": (
        cache.roughness_figure,
        ("axis.position", "findings.rough.y"),
        ("change", "change_label", "findings.change"),
    ),
}


def findings(loaded: Loaded) -> None:
    """A helix under PCA? How fast does similarity decay with the offset, and does a linear probe read which of two
    rows comes first? Do the rows get noisier past some index (marked only when the change passes a test against
    noise, at the false-alarm rate ``analysis.LEVEL_CHANGE_ALPHA``)?"""
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
    data = {"offset": decay.offsets, "mean_cosine": decay.mean}
    curve(loaded, "decay", data, decay.half_offset, "never", k=decay.half_offset)

    error = cache.relative_order_probe(loaded.ref)
    st.markdown(t("findings.order", pairs=n, error=f"{error:.0%}"))

    rough = cache.roughness_by_position(loaded.ref)
    data = {"position": rough.positions, "roughness": rough.value}
    # marked only when it passes the test against noise; else the caption says why nothing is marked
    missing = "short" if rough.cut is None else "flat" if rough.draws == 0 else "none"
    test = {"p": f"{rough.p_value:.2g}", "alpha": f"{rough.alpha:.0%}", "draws": f"{rough.draws:,}"}
    curve(loaded, "rough", data, rough.change, missing, row=rough.cut, ratio=f"{rough.ratio:.1f}", **test)


def curve(loaded: Loaded, key: str, data: dict, at: int | None, missing: str, **values) -> None:
    """The finding ``key`` of ``CURVES`` as one curve of the loaded table: the first two columns of ``data`` against
    each other, titled ``findings.<key>``, with a mark at ``at`` where there is one. The caption is the finding's
    notice, or its variant ``missing`` when nothing is marked; ``values`` fill the caption and the mark's label."""
    figure, axes, (where, label, text) = CURVES[key]
    marked = {where: at, label: t(text, **values) if at is not None else ""}
    x, y = data.values()
    fig = figure(x, y, title=t(f"findings.{key}"), x_title=t(axes[0]), y_title=t(axes[1]), name=loaded.name, **marked)
    FIG.show(key, fig, data, variant=None if at is not None else missing, **values)
