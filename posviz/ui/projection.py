"""The 2-D projection of a position table's rows (``analysis.PROJECTIONS``) as the Learned page and the checkpoint
inspector draw it: the method chosen in the link (``proj``), the positions as a path coloured by position."""

from __future__ import annotations

import plotly.graph_objects as go

from posviz import analysis, figures

from . import widgets
from .i18n import t


def pick_method(page: str) -> str:
    """The projection method, one of ``analysis.PROJECTIONS`` (each shown as ``learned.projection.<method>``), chosen
    with the radio ``<page>.ctl.projection`` and kept in the link as ``proj``."""
    return widgets.Controls(page).radio(
        "proj", list(analysis.PROJECTIONS), "pca", text="projection", names="learned.projection"
    )


def path_figure(where, coords, n: int, method: str) -> tuple[go.Figure, dict, str]:
    """The projected rows of a table as a path: positions ``where`` (of ``n``) at their 2-D coordinates
    ``coords`` (``analysis.sampled_projection`` with ``method``), coloured by position; its CSV, and the sentence
    saying how many positions are drawn ("" when all are)."""
    fig = figures.positions_path(
        where,
        coords,
        title=t("learned.projection.title", method=t(f"learned.projection.{method}")),
        x_title=t("learned.axis.component", k=1),
        y_title=t("learned.axis.component", k=2),
        colorbar_title=t("axis.position"),
    )
    sampled = t("learned.sampled", shown=len(where), n=n) if len(where) < n else ""
    return fig, {"position": where, "x": coords[:, 0], "y": coords[:, 1]}, sampled
