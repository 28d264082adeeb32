"""The views Myth or fact's claims share (page_scripts/12_claims.py): a claim's evidence, its verdict as the page
states it, its sources cited, and the table of every verdict at its default parameters.

Each claim's figures are a view of its check's parameter in the module of its group, beside this one:
``claims_sinusoidal``, ``claims_learned``, ``claims_rope``, ``claims_attention`` (ALiBi and attention). A claim's
view reads its evidence (``evidence``: ``posviz.lessons.claims.check``), draws it with ``posviz.figures`` and ends
with its verdict's sentence (``verdict``).
"""

from __future__ import annotations

import numbers

from posviz.lessons import claims

from ..i18n import current_language, t
from . import Frame, Text, shared, view

ICONS = {"holds": ":material/check_circle:", "wrong": ":material/cancel:", "partly": ":material/error:"}
COLOURS = {"holds": "green", "wrong": "red", "partly": "orange"}


def evidence(claim_id: str, **params) -> claims.Evidence:
    """``claims.check(claim_id, **params)``: the claim's check at its defaults updated by ``params``, kept by its
    arguments (``shared``), not by the language: computed once for the claim's views in every language and the table
    of verdicts (its arrays read-only). An unknown claim is ``claims.check``'s ValueError."""
    if claim_id not in claims.CLAIMS:
        return claims.check(claim_id, **params)
    claim = claims.CLAIMS[claim_id]
    return shared(claim.check, **{**claim.defaults, **params})


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


def verdict(claim_id: str, found: claims.Evidence) -> Text:
    """The verdict's badge and the sentence that gives it, with the numbers of ``found`` in it (``formatted``)."""
    code = found.verdict
    label = f":{COLOURS[code]}-badge[{ICONS[code]} {t(f'claims.verdict.{code}')}]"
    return Text(f"{label} {t(f'claims.{claim_id}.{code}', **formatted(found.numbers))}")


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


@view("claims")
def verdict_table():
    """Every claim's verdict at its default parameters (``claims.check``, through ``evidence``), with its sources by
    name and in full: the columns of the page's table of verdicts and of its CSV."""
    codes = {claim_id: evidence(claim_id).verdict for claim_id in claims.CLAIMS}
    return [
        Frame(
            {
                t("claims.col.claim"): [t(f"claims.{c}.short") for c in codes],
                t("claims.col.verdict"): [t(f"claims.verdict.{v}") for v in codes.values()],
                t("claims.col.source"): [
                    t("claims.cite.join").join(short(s) for s in claims.sources(c)) for c in codes
                ],
                t("claims.col.sources"): [
                    " | ".join(citation(s, linked=False) for s in claims.sources(c)) for c in codes
                ],
            }
        )
    ]
