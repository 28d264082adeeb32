"""Checkpoint inspector: the position table a trained model learned, next to the sinusoidal table of its shape.

The views are ``posviz.ui.inspector``'s: ``source`` loads the table, ``tables``, ``findings`` and ``compare`` draw
its tabs, ``usage`` a RoPE model's frequencies (a RoPE model has no table)."""

import streamlit as st

from posviz.ui import controls, errors_shown, intro, lazy_tabs, t
from posviz.ui.inspector import compare, findings, source, tables

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
    if loaded.found.kind == "t5_bias":
        with errors_shown("table"):
            tables.t5(loaded)
    else:
        with errors_shown("table"):
            reading = tables.read(loaded)
            tables.show_reading(reading)
        DRAW = {
            "table": lambda: tables.table(loaded, reading),
            "similarity": lambda: tables.similarity(loaded, reading),
            "projection": lambda: tables.projection(loaded, reading),
            "spectrum": lambda: tables.spectrum(loaded, reading),
            "probe": lambda: tables.probe(loaded, reading),
            "findings": lambda: findings.findings(loaded),
            "sinusoidal": lambda: tables.sinusoidal(loaded),
            "compare": lambda: compare.compare(loaded),
        }
        lazy_tabs("inspect", DRAW, kind="table")  # only the open tab computes
