"""The inspector's tabs about the loaded table, drawn from the views of ``posviz.ui.views.inspect_tables``: the
verdict on the table and its captions' variant, and the layouts the views leave to the page (the spectrum's second
figure under the Learned page's caption, two tables in two columns).

Every caption is written for a table that orders its positions; for one that reads like noise or has too few
positions (``reading``, the core's verdict ``analysis.read_table``), the caption's variant says what is shown instead.
"""

from __future__ import annotations

import streamlit as st

from .. import show, t, views


def variant(reading) -> str | None:
    """The captions' variant for the table's ``reading``: None for an ordered table (or none read), else its kind."""
    return None if reading is None or reading.kind == "ordered" else reading.kind


def show_reading(reading) -> None:
    """The verdict on the table, with the probe that decides it (``views.inspect_tables.read``)."""
    if reading.kind == "tiny":
        st.info(t("inspect.reading.tiny", n=reading.n_positions), icon=":material/grid_on:")
        return
    probe, guess = f"{reading.probe:.1f}", f"{reading.guess:.1f}"
    if reading.kind == "ordered":
        st.markdown(t("inspect.reading.ordered", probe=probe, guess=guess))
    else:
        st.info(t("inspect.reading.random", probe=probe, guess=guess), icon=":material/grain:")


def spectrum(output: views.Output) -> None:
    """The spectrum view's figures: each dimension's dominant frequency as the view gives it, and the mean power
    spectrum captioned with the Learned page's sentence (the inspector has none of its own for it), saved as
    ``inspect-spectrum-mean``."""
    views.draw(views.Output(output.page, (output.figure("spectrum"),)))
    mean = output.figure("spectrum.mean")
    notice = t("learned.spectrum.mean.notice")
    show(mean.fig, notice=notice, key=mean.options["chart"], data=mean.data, name=f"{output.page}-spectrum-mean")


def side_by_side(output: views.Output, per_column: int) -> None:
    """``output`` with its first ``per_column`` items in a left column, the next ``per_column`` in a right one,
    and the rest under both."""
    left, right = st.columns(2)
    items = output.items
    for column, part in ((left, items[:per_column]), (right, items[per_column : 2 * per_column])):
        with column:
            views.draw(views.Output(output.page, part))
    views.draw(views.Output(output.page, items[2 * per_column :]))
