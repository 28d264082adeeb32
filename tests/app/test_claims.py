"""The Myth-or-fact page: the summary table lists every claim with its verdict, each tab's chart holds the evidence
(checked against closed forms derived here), the verdict sentences come from the right catalog in both languages,
the URL opens a tab with its control set, and nonsense in the URL falls back cleanly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posviz import claims

from ._support import as_array, assert_clean, figures, heatmap_z, open_page, title, tr, visit_tabs, widget

TABS = list(claims.CLAIMS)


def summary_rows(at) -> list[list[str]]:
    frame = at.dataframe[0].value
    return frame.values.tolist()


def badge_texts(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summary_lists_every_claim_with_its_verdict(lang):
    at = open_page("claims", lang=lang)
    assert_clean(at)
    rows = summary_rows(at)
    expected = [
        [tr(lang, f"claims.{c}.short"), ", ".join(claims.CLAIMS[c].sources), tr(lang, f"claims.verdict.{v}")]
        for c, v in claims.verdicts().items()
    ]
    assert rows == expected
    assert {r[2] for r in rows} == {tr(lang, f"claims.verdict.{v}") for v in claims.VERDICTS}  # all three occur
    fig = figures(at)[0]
    assert title(fig) == tr(lang, "claims.exponent.fig", d=512)
    assert tr(lang, "claims.exponent.notice") in [c.value for c in at.caption]
    [badge] = badge_texts(at)
    assert tr(lang, "claims.verdict.wrong") in badge and "137" in badge and "256" in badge


def test_every_tab_draws_its_evidence():
    for lang in ("en",):
        at = open_page("claims", lang=lang)
        view = visit_tabs(at, "claims", TABS, lang)
        assert not view.exceptions and not view.errors, (view.exceptions, view.errors)
        badges = [m for m in view.markdown if "-badge[" in m]
        codes = claims.verdicts()
        for claim_id in TABS:
            assert any(tr(lang, f"claims.verdict.{codes[claim_id]}") in b for b in badges), claim_id
            assert f"> {tr(lang, f'claims.{claim_id}.claim')}" in view.markdown
        assert tr(lang, "claims.tril.mass.notice") in view.captions
    by_tab = view.by_tab
    # exponent: wavelengths 2 pi 10000^(2k/d) against 2 pi 10000^(4k/d), d = 512
    k = np.arange(256)
    paper, doubled = (as_array(tr_["y"]) for tr_ in by_tab["exponent"][0]["data"])
    np.testing.assert_allclose(paper, 2 * np.pi * 10000 ** (2 * k / 512), rtol=1e-12)
    np.testing.assert_allclose(doubled, 2 * np.pi * 10000 ** (4 * k / 512), rtol=1e-12)
    # ALiBi: solid paper lines and dashed article lines for 8, 12, 16 heads
    traces = by_tab["alibi"][0]["data"]
    assert [len(as_array(t_["y"])) for t_ in traces] == [8, 8, 12, 12, 16, 16]
    np.testing.assert_allclose(as_array(traces[1]["y"]), 2.0 ** (-(8 + np.arange(8)) / 8), rtol=1e-12)
    np.testing.assert_allclose(as_array(traces[0]["y"]), 2.0 ** (-np.arange(1, 9)), rtol=1e-12)
    assert traces[1]["line"]["dash"] == "dash"
    # tril: zeros above the diagonal, -m |i - j| below, head 0 has m = 1/2
    z = heatmap_z(by_tab["tril"][0])
    i, j = np.indices((16, 16))
    np.testing.assert_allclose(z, np.where(j > i, 0.0, -0.5 * (i - j)), atol=1e-6)
    # max_position_embeddings: default and linear unchanged
    bars = by_tab["max_pos"][0]["data"][0]
    change = dict(zip(bars["x"], as_array(bars["y"]), strict=True))
    assert change["default"] == change["linear"] == 0.0 and change["dynamic"] == pytest.approx(math.log(13), rel=1e-6)


def test_url_opens_the_norm_tab_with_its_width():
    at = open_page("claims", query={"tab": "norm", "d": "256"})
    assert_clean(at)
    assert widget(at, "d").value == 256
    fig = figures(at)[0]
    assert title(fig) == tr("en", "claims.norm.fig", d=256)
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), math.sqrt(128), rtol=1e-12)
    claimed = [s for s in fig["layout"]["shapes"] if s["y0"] == s["y1"]]
    assert claimed[0]["y0"] == pytest.approx(16.0)  # the article's sqrt(d)
    assert at.query_params["tab"] == "norm" and at.query_params["d"] == "256"


def test_url_opens_the_shift_tab_with_its_offset():
    at = open_page("claims", query={"tab": "shift", "k": "7"}, lang="zh")
    assert_clean(at)
    assert widget(at, "k").value == 7
    fig = figures(at)[0]
    assert title(fig) == tr("zh", "claims.shift.fig", k=7, d=32)
    z = heatmap_z(fig)
    angle = 7 * 10000.0 ** (-np.arange(0, 32, 2) / 32)
    np.testing.assert_allclose(np.diagonal(z)[0::2], np.cos(angle), atol=1e-6)
    np.testing.assert_allclose(np.diagonal(z, 1)[0::2], np.sin(angle), atol=1e-6)
    assert np.count_nonzero(np.abs(z) > 1e-9) == 4 * 16  # one 2 x 2 block per pair


def test_url_opens_the_base_tab_with_its_context():
    at = open_page("claims", query={"tab": "base", "ctx": "512"})
    assert_clean(at)
    assert widget(at, "ctx").value == 512
    fig = figures(at)[0]
    bases, order = as_array(fig["data"][1]["x"]), as_array(fig["data"][1]["y"])
    offsets = np.arange(1, 512)
    omega = 1000.0 ** (-np.arange(0, 512, 2) / 512)
    similarity = np.cos(offsets[:, None] * omega).mean(axis=1)
    ranks = np.argsort(np.argsort(-similarity, kind="stable"))
    expected = np.corrcoef(ranks, np.arange(offsets.size))[0, 1]
    assert order[np.argmin(np.abs(bases - 1000))] == pytest.approx(expected, abs=1e-9)
    assert bases[np.argmax(order)] == pytest.approx(1000.0)  # for 512 positions the best base is 1,000, not 10,000


def test_nonsense_in_the_url_falls_back():
    at = open_page("claims", query={"tab": "bogus", "d": "abc", "k": "-5", "ctx": "7"})
    assert_clean(at)
    assert title(figures(at)[0]) == tr("en", "claims.exponent.fig", d=512)
    at = open_page("claims", query={"tab": "norm", "d": "abc"})
    assert_clean(at)
    assert widget(at, "d").value == 512
    at = open_page("claims", query={"tab": "base", "ctx": "99999"})
    assert_clean(at)
    assert widget(at, "ctx").value == 2048
