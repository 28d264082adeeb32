"""The control of the 2-D projection of a position table's rows (``analysis.PROJECTIONS``) that the Learned page and
the checkpoint inspector share: the method chosen in the link (``proj``). Its figure is ``views.projection_path``."""

from __future__ import annotations

from posviz import analysis

from . import widgets


def pick_method(page: str) -> str:
    """The projection method, one of ``analysis.PROJECTIONS`` (each shown as ``learned.projection.<method>``), chosen
    with the radio ``<page>.ctl.projection`` and kept in the link as ``proj``."""
    return widgets.Controls(page).radio(
        "proj", list(analysis.PROJECTIONS), "pca", text="projection", names="learned.projection"
    )
