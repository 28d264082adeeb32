"""How Myth or fact states a claim and tables every verdict: the claim with its sources cited in full, the table of
every verdict with its CSV and the list of every source; and what every claim's view shares (its controls).

What is computed (each claim's evidence, its verdict's sentence, the citations, the table's columns) is in
``posviz.ui.views.claims``; this module draws it."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from posviz.lessons import claims

from .. import controls, t, widgets
from ..views import Frame
from ..views import claims as claims_views
from ..views.claims import citation

CTL = widgets.Controls("claims")

#: The styles of the summary's columns (claim, verdict, sources by name, sources in full): widths that keep every
#: column wide enough not to break a word a letter at a time, the rest for the full citations, the longest cells,
#: in a smaller type.
COLUMN_STYLES = (
    {"width": "30%"},
    {"width": "6.5em"},
    {"width": "16%"},
    {"width": "auto", "font-size": "0.85em"},
)


def setting(*limits, key: str, **options):
    """The value of the claim's control ``key`` (``CTL.numeric(key, *limits, **options)``, among the page's
    controls), the setting its view takes."""
    with controls():
        return CTL.numeric(key, *limits, **options)


def statement(claim_id: str) -> None:
    """The claim as the sources make it, quoted, and the sources cited in full."""
    st.markdown(f"> {t(f'claims.{claim_id}.claim')}")
    st.caption(t("claims.sources"))
    st.markdown("\n".join(f"- :small[{citation(source)}]" for source in claims.sources(claim_id)))


def label(claim_id: str) -> str:
    """The claim's name in the selector: its topic, then its own name."""
    return f"{t(f'claims.topic.{claims.CLAIMS[claim_id].topic}')} · {t(f'claims.tab.{claim_id}')}"


def summary() -> None:
    """The table of every verdict, its sources by name and in full (``claims_views.verdict_table``), and the same
    table as CSV.

    A static table (``st.table``), not a grid: its cells wrap, so the whole of every claim and citation is on the
    screen inside the column, where a grid's one-line rows cut them off and scroll sideways (``COLUMN_STYLES``)."""
    st.subheader(t("claims.summary"))
    [frame] = claims_views.verdict_table().items
    assert isinstance(frame, Frame)
    table = pd.DataFrame(dict(frame.columns))
    styled = table.style
    for column, style in zip(table.columns, COLUMN_STYLES, strict=True):
        styled = styled.set_properties(subset=[column], **style)
    st.table(styled, hide_index=True)
    st.caption(t("claims.table.note"))
    st.download_button(
        t("download.csv"),
        data=lambda: table.to_csv(index=False).encode("utf-8"),
        file_name="claims-verdicts.csv",
        mime="text/csv",
        key="csv-claims-verdicts",
        icon=":material/download:",
        on_click="ignore",
    )
    with st.expander(t("claims.sources.all"), icon=":material/menu_book:"):
        st.markdown("\n".join(f"- {citation(source)}" for source in claims.cited()))
