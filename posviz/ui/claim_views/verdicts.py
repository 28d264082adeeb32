"""How Myth or fact states a claim and judges it: the claim with its sources cited in full, the verdict's badge and
sentence, the table of every verdict; and what every claim's view shares (its figures' names, its controls)."""

from __future__ import annotations

import numbers

import pandas as pd
import streamlit as st

from posviz.lessons import claims

from .. import Figures, cache, controls, current_language, t, widgets

FIG = Figures("claims")
CTL = widgets.Controls("claims")

ICONS = {"holds": ":material/check_circle:", "wrong": ":material/cancel:", "partly": ":material/error:"}
COLOURS = {"holds": "green", "wrong": "red", "partly": "orange"}
#: The styles of the summary's columns (claim, verdict, sources by name, sources in full): widths that keep every
#: column wide enough not to break a word a letter at a time, the rest for the full citations, the longest cells,
#: in a smaller type.
COLUMN_STYLES = (
    {"width": "30%"},
    {"width": "6.5em"},
    {"width": "16%"},
    {"width": "auto", "font-size": "0.85em"},
)


def at_setting(claim_id: str, param: str, *limits, key: str, **options) -> tuple:
    """The claim's evidence at the value of its control ``key`` (``CTL.numeric(key, *limits, **options)``, among the
    page's controls), which the check takes as ``param``: ``(value, evidence)``."""
    with controls():
        value = CTL.numeric(key, *limits, **options)
    return value, cache.check(claim_id, **{param: value})


def formatted(values: dict) -> dict:
    """The numbers of a verdict as text: 3 significant digits, thousands separators, a dash for none."""

    def one(value):
        if value is None:
            return "—"
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return str(value)
        number = float(value)
        if number.is_integer() and abs(number) < 1e7:
            return f"{int(number):,}"
        if abs(number) >= 1000:
            return f"{number:,.0f}"
        return f"{number:.3g}"

    return {name: one(value) for name, value in values.items()}


def author_list(source: claims.Source) -> str:
    """A paper's authors as printed, the last one after "&"."""
    names = source.authors
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + ", & " + names[-1]


def citation(source: claims.Source, *, linked: bool = True) -> str:
    """The full citation of a source in the current language; ``linked`` makes the arXiv id a link (markdown)."""
    if source.kind == "paper":
        arxiv = f"[{source.arxiv}](https://arxiv.org/abs/{source.arxiv})" if linked else source.arxiv
        return t(
            "claims.cite.paper",
            authors=author_list(source),
            year=source.year,
            title=source.title(current_language()),
            venue=source.venue,
            arxiv=arxiv,
        )
    key = "claims.cite.article.untitled" if source.descriptive else "claims.cite.article"
    return t(key, id=source.key, title=source.title(current_language()))


def short(source: claims.Source) -> str:
    """A source in a few words: first author and year, or the article's number."""
    if source.kind == "paper":
        return t("claims.cite.short", first=source.first_author, year=source.year)
    return t("claims.cite.article.short", id=source.key)


def statement(claim_id: str) -> None:
    """The claim as the sources make it, quoted, and the sources cited in full."""
    st.markdown(f"> {t(f'claims.{claim_id}.claim')}")
    st.caption(t("claims.sources"))
    st.markdown("\n".join(f"- :small[{citation(source)}]" for source in claims.sources(claim_id)))


def verdict(claim_id: str, found: claims.Evidence) -> None:
    """The verdict's badge and the sentence that gives it, with the numbers of ``found`` in it."""
    code = found.verdict
    label = f":{COLOURS[code]}-badge[{ICONS[code]} {t(f'claims.verdict.{code}')}]"
    st.markdown(f"{label} {t(f'claims.{claim_id}.{code}', **formatted(found.numbers))}")


def label(claim_id: str) -> str:
    """The claim's name in the selector: its topic, then its own name."""
    return f"{t(f'claims.topic.{claims.CLAIMS[claim_id].topic}')} · {t(f'claims.tab.{claim_id}')}"


def summary() -> None:
    """The table of every verdict, its sources by name and in full, and the same table as CSV.

    A static table (``st.table``), not a grid: its cells wrap, so the whole of every claim and citation is on the
    screen inside the column, where a grid's one-line rows cut them off and scroll sideways (``COLUMN_STYLES``)."""
    st.subheader(t("claims.summary"))
    codes = {claim_id: cache.check(claim_id).verdict for claim_id in claims.CLAIMS}
    table = pd.DataFrame(
        {
            t("claims.col.claim"): [t(f"claims.{c}.short") for c in codes],
            t("claims.col.verdict"): [t(f"claims.verdict.{v}") for v in codes.values()],
            t("claims.col.source"): [t("claims.cite.join").join(short(s) for s in claims.sources(c)) for c in codes],
            t("claims.col.sources"): [" | ".join(citation(s, linked=False) for s in claims.sources(c)) for c in codes],
        }
    )
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
