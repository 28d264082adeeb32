"""The inspector's Classic findings tab as one view of the loaded table: the questions studies of trained models have
asked of their position tables, each answered for this table (the numbers are ``posviz.analysis``'s:
``principal_components``, ``similarity_decay``, ``relative_order_probe``, ``roughness_by_position``; the figures
``posviz.figures.findings``'s)."""

from __future__ import annotations

from posviz import analysis
from posviz.figures import findings as findings_figures

from .. import cache
from ..i18n import t
from . import Figure, Text, view


@view("findings")
def findings(table: cache.Table, name: str):
    """A helix under PCA (the first three principal coordinates U_k S_k of the centred table and their shares
    s_k^2 / sum s^2)? How fast does the mean cosine of rows k apart fall, and does a linear probe read which of two
    rows comes first (Wang & Chen, 2020)? Does the roughness ||PE(p+1) - 2 PE(p) + PE(p-1)|| change level past some
    row (marked only when the change passes a test against noise, at the false-alarm rate
    ``analysis.LEVEL_CHANGE_ALPHA``)? ``name``: the table's name in the legends."""
    matrix = table.matrix
    n = matrix.shape[0]
    found = analysis.principal_components(matrix)
    shares = [f"{share:.0%}" for share in found.share]
    pc = [t("findings.pc", k=k + 1, share=shares[k]) for k in range(3)]
    pca = findings_figures.components_3d(
        range(n),
        found.coords,
        title=t("findings.pca"),
        axis_titles=(pc[0], pc[1], pc[2]),
        colorbar_title=t("axis.position"),
    )
    pca_data = {"position": range(n)} | {f"pc{k + 1}": found.coords[:, k] for k in range(3)}

    decay = analysis.similarity_decay(matrix)
    half = decay.half_offset
    decay_fig = findings_figures.similarity_decay_figure(
        decay.offsets,
        decay.mean,
        title=t("findings.decay"),
        x_title=t("inspect.axis.offset"),
        y_title=t("inspect.axis.cosine"),
        name=name,
        half_offset=half,
        half_label=t("findings.half", k=half) if half is not None else "",
    )

    error = analysis.relative_order_probe(matrix)

    rough = analysis.roughness_by_position(matrix)
    values = {"row": rough.cut, "ratio": f"{rough.ratio:.1f}", "p": f"{rough.p_value:.2g}"}
    values |= {"alpha": f"{rough.alpha:.0%}", "draws": f"{rough.draws:,}"}
    # marked only when it passes the test against noise; else the caption says why nothing is marked
    missing = "short" if rough.cut is None else "flat" if rough.draws == 0 else "none"
    rough_fig = findings_figures.roughness_figure(
        rough.positions,
        rough.value,
        title=t("findings.rough"),
        x_title=t("axis.position"),
        y_title=t("findings.rough.y"),
        name=name,
        change=rough.change,
        change_label=t("findings.change", **values) if rough.change is not None else "",
    )
    return [
        Text(t("findings.intro")),
        Figure("pca", pca, pca_data, {"shares": " · ".join(shares), "turns": f"{abs(found.winding):.1f}"}),
        Figure(
            "decay",
            decay_fig,
            {"offset": decay.offsets, "mean_cosine": decay.mean},
            {"variant": None if half is not None else "never", "k": half},
        ),
        Text(t("findings.order", pairs=n, error=f"{error:.0%}")),
        Figure(
            "rough",
            rough_fig,
            {"position": rough.positions, "roughness": rough.value},
            {
                "variant": None if rough.change is not None else missing,
                "row": values["row"],
                "ratio": values["ratio"],
                "p": values["p"],
                "alpha": values["alpha"],
                "draws": values["draws"],
            },
        ),
    ]
