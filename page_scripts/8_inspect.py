"""Checkpoint inspector: the position table a trained model learned, next to the sinusoidal table of its shape.

``posviz.ui.inspector`` picks and loads the checkpoint (``source``; a RoPE model has no table: ``usage`` draws its
frequencies instead); every figure is a view of ``posviz.ui.views.inspect_tables`` (the findings:
``inspect_findings``), given the loaded table by its content digest (``loaded.ref``)."""

import streamlit as st

from posviz.ui import cache, controls, errors_shown, intro, lazy_tabs, projection, t, views
from posviz.ui.inspector import compare, source, tables
from posviz.ui.views import inspect_findings as findings_views
from posviz.ui.views import inspect_tables as table_views


def projection_tab(table: cache.Table, variant: str | None) -> None:
    """The positions projected on two axes, with the method chosen here (PCA or t-SNE), as a path."""
    method = projection.pick_method("inspect")
    views.draw(table_views.projection(table, method, variant))


intro("inspect")
loaded = reading = None
with controls():
    chosen = source.pick_source()
if chosen is None:
    st.info(t("inspect.empty"))
else:
    with errors_shown(chosen[2]):
        loaded = source.load(chosen, key="tensor")  # None for a RoPE model: its views are drawn instead
if loaded is not None:
    source.summary(loaded)
    source.hand_over(loaded)
    table, name, found = loaded.ref, loaded.name, loaded.found
    if found.kind == "t5_bias":
        with errors_shown("table"):
            views.draw(table_views.t5(loaded.stored))
    else:
        with errors_shown("table"):
            reading = table_views.read(table)
            tables.show_reading(reading)
        variant = tables.variant(reading)
        DRAW = {
            "table": lambda: views.draw(table_views.table(loaded.stored, found.key, found.offset, name, variant)),
            "similarity": lambda: views.draw(table_views.similarity(table, name, variant)),
            "projection": lambda: projection_tab(table, variant),
            "spectrum": lambda: tables.spectrum(table_views.spectrum(table, name, variant)),
            "probe": lambda: views.draw(table_views.probe(table, name, variant)),
            "findings": lambda: views.draw(findings_views.findings(table, name)),
            "sinusoidal": lambda: tables.side_by_side(table_views.beside_sinusoidal(table, name), per_column=2),
            "compare": lambda: compare.compare(loaded),
        }
        lazy_tabs("inspect", DRAW, kind="table")  # only the open tab computes
