"""The Myth-or-fact page: the summary table lists every claim with its verdict and its sources in full, each claim's
chart holds the evidence (checked against closed forms derived here), the verdict sentences come from the right
catalog in both languages, a selector bound to the URL (``tab=<code>``, as the tabs it replaces) opens a claim with
its control set, and nonsense in the URL falls back cleanly."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from posviz.lessons import claims

from ._support import (
    PAGE_FILES,
    as_array,
    assert_clean,
    figures,
    heatmap_z,
    open_page,
    title,
    tr,
    widget,
)

CODES = list(claims.CLAIMS)


def badge_texts(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def choose(at, code: str):
    """Pick a claim in the selector, as a click would."""
    at.selectbox(key="tab").set_value(code).run()
    return at


def citation_parts(source: claims.Source, lang: str) -> list[str]:
    """What a full citation must contain: a paper's authors, year, title, venue and arXiv id; an article's number and
    its title in ``lang`` (the Chinese title, and in English its translation too)."""
    if source.kind == "paper":
        return [*source.authors, f"({source.year})", source.titles["en"], source.venue, source.arxiv]
    return [source.key, source.titles[lang]]


def short_label(source: claims.Source, lang: str) -> str:
    if source.kind == "paper":
        return tr(lang, "claims.cite.short", first=source.authors[0].split(",")[0], year=source.year)
    return tr(lang, "claims.cite.article.short", id=source.key)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summary_lists_every_claim_with_its_verdict_and_sources(lang):
    at = open_page("claims", lang=lang)
    assert_clean(at)
    frame = at.table[0].value
    assert list(frame.columns) == [
        tr(lang, "claims.col.claim"),
        tr(lang, "claims.col.verdict"),
        tr(lang, "claims.col.source"),
        tr(lang, "claims.col.sources"),
    ]
    rows = frame.values.tolist()
    codes = claims.verdicts()
    assert [r[:3] for r in rows] == [
        [
            tr(lang, f"claims.{c}.short"),
            tr(lang, f"claims.verdict.{v}"),
            tr(lang, "claims.cite.join").join(short_label(claims.SOURCES[k], lang) for k in claims.CLAIMS[c].sources),
        ]
        for c, v in codes.items()
    ]
    assert {r[1] for r in rows} == {tr(lang, f"claims.verdict.{v}") for v in claims.VERDICTS}  # all three occur
    for row, code in zip(rows, codes, strict=True):  # the CSV of the table cites every source in full
        for key in claims.CLAIMS[code].sources:
            for part in citation_parts(claims.SOURCES[key], lang):
                assert part in row[3], (code, key, part)
    fig = figures(at)[0]
    assert title(fig) == tr(lang, "claims.exponent.fig", d=512)
    assert tr(lang, "claims.exponent.notice") in [c.value for c in at.caption]
    [badge] = badge_texts(at)
    assert tr(lang, "claims.verdict.wrong") in badge and "137" in badge and "256" in badge


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_source_is_cited_in_full_on_the_page(lang):
    at = open_page("claims", lang=lang)
    [listing] = [e for e in at.expander if e.label == tr(lang, "claims.sources.all")]
    text = "\n".join(m.value for m in listing.markdown)
    assert len(re.findall(r"^- ", text, flags=re.M)) == len(claims.SOURCES)
    for source in claims.SOURCES.values():
        for part in citation_parts(source, lang):
            assert part in text, (source.key, part)
        if source.kind == "paper":
            assert f"https://arxiv.org/abs/{source.arxiv}" in text
    untitled = tr(lang, "claims.cite.article.untitled", id="002", title=claims.SOURCES["002"].titles[lang])
    assert untitled in text  # article 002 says that its title is a descriptive one of ours
    for code in ("xlnet", "extrapolate"):  # under each claim: its own sources, in full
        choose(at, code)
        assert tr(lang, "claims.sources") in [c.value for c in at.caption]
        [cited] = [m.value for m in at.markdown if m.value.startswith("- :small[")]
        assert len(re.findall(r"^- ", cited, flags=re.M)) == len(claims.CLAIMS[code].sources)
        for key in claims.CLAIMS[code].sources:
            for part in citation_parts(claims.SOURCES[key], lang):
                assert part in cited, (code, key, part)


def test_a_selector_replaces_the_tab_bar_and_keeps_the_links():
    at = open_page("claims", query={"tab": "snippets"}, lang="zh")
    assert_clean(at)
    assert not at.tabs  # twenty claims: no tab bar to overflow
    selector = at.selectbox(key="tab")
    assert selector.value == "snippets"
    labels = [f"{tr('zh', f'claims.topic.{claims.CLAIMS[c].topic}')} · {tr('zh', f'claims.tab.{c}')}" for c in CODES]
    assert selector.options == labels
    assert title(figures(at)[0]) == tr("zh", "claims.snippets.fig")
    choose(at, "albert")
    assert at.query_params["tab"] == "albert"  # the code, not the Chinese label
    choose(at, "exponent")
    assert "tab" not in at.query_params  # the first claim is the default, left out of the link


def test_arriving_from_a_page_with_tabs():
    """Another page's tabs leave their label under the same key ``tab``; the selector reads the link instead."""
    at = open_page("sinusoidal", query={"tab": "norms"})
    at.switch_page(PAGE_FILES["claims"])
    at.query_params["tab"] = "head_dim"
    at.run()
    assert_clean(at)
    assert at.selectbox(key="tab").value == "head_dim"
    assert title(figures(at)[0]) == tr("en", "claims.head_dim.fig", hidden=4096, heads=32, head_dim=128)


@pytest.fixture(scope="module")
def shown():
    """Every claim opened in turn, in English: code -> (figures, markdown, captions)."""
    at = open_page("claims")
    out = {}
    for code in CODES:
        choose(at, code)
        assert not at.exception and not at.error, (code, at.exception, at.error)
        out[code] = (figures(at), [m.value for m in at.markdown], [c.value for c in at.caption])
    return out


def test_every_claim_draws_its_evidence(shown):
    codes = claims.verdicts()
    for code, (figs, markdown, captions) in shown.items():
        assert figs, code
        badges = [m for m in markdown if "-badge[" in m]
        assert len(badges) == 1 and tr("en", f"claims.verdict.{codes[code]}") in badges[0], code
        assert f"> {tr('en', f'claims.{code}.claim')}" in markdown
        assert any(c.startswith("What to notice:") for c in captions), code  # every figure has its caption
    # exponent: wavelengths 2 pi 10000^(2k/d) against 2 pi 10000^(4k/d), d = 512
    k = np.arange(256)
    paper, doubled = (as_array(tr_["y"]) for tr_ in shown["exponent"][0][0]["data"])
    np.testing.assert_allclose(paper, 2 * np.pi * 10000 ** (2 * k / 512), rtol=1e-12)
    np.testing.assert_allclose(doubled, 2 * np.pi * 10000 ** (4 * k / 512), rtol=1e-12)
    # ALiBi: solid paper lines and dashed article lines for 8, 12, 16 heads
    traces = shown["alibi"][0][0]["data"]
    assert [len(as_array(t_["y"])) for t_ in traces] == [8, 8, 12, 12, 16, 16]
    np.testing.assert_allclose(as_array(traces[1]["y"]), 2.0 ** (-(8 + np.arange(8)) / 8), rtol=1e-12)
    np.testing.assert_allclose(as_array(traces[0]["y"]), 2.0 ** (-np.arange(1, 9)), rtol=1e-12)
    assert traces[1]["line"]["dash"] == "dash"
    # tril: zeros above the diagonal, -m |i - j| below, head 0 has m = 1/2
    z = heatmap_z(shown["tril"][0][0])
    i, j = np.indices((16, 16))
    np.testing.assert_allclose(z, np.where(j > i, 0.0, -0.5 * (i - j)), atol=1e-6)
    # max_position_embeddings: default and linear unchanged
    bars = shown["max_pos"][0][0]["data"][0]
    change = dict(zip(bars["x"], as_array(bars["y"]), strict=True))
    assert change["default"] == change["linear"] == 0.0 and change["dynamic"] == pytest.approx(math.log(13), rel=1e-6)


def test_error_plots_show_zero_as_zero(shown):
    """The precision claim's log axis draws position 0 (an exact zero) on its floor; the rot90 claim's linear axis
    starts at 0, so the quarter turn's 1e-16 lies on the zero line whatever the other line does."""
    fig = shown["precision"][0][0]
    *lines, floor = fig["data"]
    assert floor["name"] == tr("en", "figure.floor", floor="1e-12")
    evidence = claims.check("precision")
    for line in lines:
        y = as_array(line["y"])
        assert y.size == evidence.arrays["position"].size and y.min() >= 1e-12
        np.testing.assert_allclose(y, np.maximum(evidence.arrays[line["name"]], 1e-12), rtol=1e-12)
    assert evidence.arrays["float16"][0] == 0.0
    assert shown["rot90"][0][0]["layout"]["yaxis"]["rangemode"] == "tozero"


def test_base_has_one_axis_per_quantity_and_shows_the_fast_pair_fixed(shown):
    figs = shown["base"][0]
    near, order = figs[0]["data"]
    assert (near.get("yaxis", "y"), order["yaxis"]) == ("y", "y2")  # two panels, no overlaid right axis
    assert "overlaying" not in figs[0]["layout"].get("yaxis2", {})
    assert figs[0]["layout"]["yaxis2"]["type"] == "linear" and figs[0]["layout"]["yaxis"]["type"] == "log"
    bases = as_array(near["x"])
    omega = bases[:, None] ** (-np.arange(0, 512, 2)[None, :] / 512)
    np.testing.assert_allclose(as_array(near["y"]), 1 - np.cos(omega).mean(axis=1), rtol=1e-6)
    fastest, slowest = (as_array(t_["y"]) for t_ in figs[1]["data"])
    np.testing.assert_allclose(fastest, 2 * np.pi, rtol=1e-6)  # base^0 = 1 for every base
    np.testing.assert_allclose(slowest, 2 * np.pi * bases ** (510 / 512), rtol=1e-6)
    [badge] = [m for m in shown["base"][1] if "-badge[" in m]
    assert "617" in badge and "6.28" in badge  # the slowest wavelength at base 100 and the fixed fastest one


def test_article_003_config_as_transformers_reads_it(shown):
    figs, markdown, _ = shown["snippets"]
    traces = {t_["name"]: as_array(t_["y"]) for t_ in figs[0]["data"]}
    default = 10000.0 ** (-np.arange(0, 128, 2) / 128)
    theta = 50000.0 ** (-np.arange(0, 128, 2) / 128)
    # at 8,192 tokens, below max_position_embeddings 32,768, dynamic NTK leaves rope_theta 50,000 alone
    np.testing.assert_allclose(traces[tr("en", "claims.snippets.article", n="8,192")], theta / default, rtol=1e-12)
    np.testing.assert_allclose(traces[tr("en", "claims.snippets.linear")], 0.25, rtol=1e-12)
    # with max_position_embeddings 2,048: base' = 50000 (2 * 8192 / 2048 - 1)^(128 / 126)
    meant = (50000.0 * 7.0 ** (128 / 126)) ** (-np.arange(0, 128, 2) / 128)
    key = tr("en", "claims.snippets.meant", n="8,192", original="2,048")
    np.testing.assert_allclose(traces[key], meant / default, rtol=1e-12)
    [badge] = [m for m in markdown if "-badge[" in m]
    assert tr("en", "claims.verdict.wrong") in badge and "32,768" in badge


def test_new_claims_draw_what_they_compute(shown):
    # unscaled: the paper's and the article's scaling give the same ratio, about sqrt(1/2)
    traces = shown["unscaled"][0][0]["data"]
    np.testing.assert_allclose(as_array(traces[1]["y"]), as_array(traces[2]["y"]), rtol=1e-12)
    np.testing.assert_allclose(as_array(traces[1]["y"]), math.sqrt(0.5), rtol=0.02)
    np.testing.assert_allclose(as_array(traces[0]["y"]), np.sqrt(as_array(traces[0]["x"]) / 2), rtol=0.02)
    # head_dim: 2 pi 10000^(2i/128) against 2 pi 10000^(2i/4096)
    head, model = (as_array(t_["y"]) for t_ in shown["head_dim"][0][0]["data"])
    i = np.arange(64)
    np.testing.assert_allclose(head, 2 * np.pi * 10000.0 ** (2 * i / 128), rtol=1e-12)
    np.testing.assert_allclose(model, 2 * np.pi * 10000.0 ** (2 * i / 4096), rtol=1e-12)
    # extrapolation: zero up to the training length 512, about half of the pairs just past it
    sin, rope = shown["extrapolate"][0][0]["data"]
    steps = as_array(rope["x"])
    assert as_array(rope["y"])[steps < 512].max() == as_array(sin["y"])[steps < 512].max() == 0.0
    slow = sum(511 * 10000.0 ** (-2 * k / 128) < 2 * np.pi for k in range(64))
    assert as_array(rope["y"])[np.searchsorted(steps, 512)] == pytest.approx(slow / 64)
    # past the table: memory 4 d L bytes, and torch's own IndexError in the verdict
    found, missing = shown["oom"][0][0]["data"]
    tokens = as_array(found["x"])
    np.testing.assert_allclose(as_array(found["y"])[:1024], 4 * 768 * tokens[:1024] / 2**20, rtol=1e-6)
    assert np.isnan(as_array(found["y"])[1024:]).all()
    [badge] = [m for m in shown["oom"][1] if "-badge[" in m]
    assert "IndexError: index out of range in self" in badge
    # ALBERT: 128-wide tables, 768 only after the projection; BERT 768 throughout
    albert, bert = shown["albert"][0][0]["data"]
    assert list(as_array(albert["y"])) == [128, 128, 128, 128, 768] and set(as_array(bert["y"])) == {768}
    [badge] = [m for m in shown["albert"][1] if "-badge[" in m]
    assert "The size of tensor a (128) must match the size of tensor b (768)" in badge
    # symmetry: the score matrix is not symmetric; shuffling moves nothing without positions
    scores = heatmap_z(shown["symmetry"][0][0])
    assert np.abs(scores - scores.T).max() > 0.1
    plain, placed = shown["symmetry"][0][1]["data"]
    assert as_array(plain["y"]).max() < 1e-12 < as_array(placed["y"]).max()
    # XLNet: the two masks differ exactly on the diagonal
    content, query = (as_array(t_["z"]) for t_ in shown["xlnet"][0][0]["data"])
    np.testing.assert_array_equal(content - query, np.eye(len(content)))
    # learned: before training no order, after training neighbours most alike
    trained, init, _ = (as_array(t_["y"]) for t_ in shown["learned"][0][0]["data"])
    assert trained[0] > 0.5 > np.abs(init).max()


def test_url_opens_the_norm_claim_with_its_width():
    at = open_page("claims", query={"tab": "norm", "d": "256"})
    assert_clean(at)
    assert widget(at, "d").value == 256
    fig = figures(at)[0]
    assert title(fig) == tr("en", "claims.norm.fig", d=256)
    np.testing.assert_allclose(as_array(fig["data"][0]["y"]), math.sqrt(128), rtol=1e-12)
    claimed = [s for s in fig["layout"]["shapes"] if s["y0"] == s["y1"]]
    assert claimed[0]["y0"] == pytest.approx(16.0)  # the article's sqrt(d)
    assert at.query_params["tab"] == "norm" and at.query_params["d"] == "256"


def test_url_opens_the_shift_claim_with_its_offset():
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


def test_url_opens_the_base_claim_with_its_context():
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


def test_url_opens_the_extrapolation_claim_with_its_training_length():
    at = open_page("claims", query={"tab": "extrapolate", "train": "2048"}, lang="zh")
    assert_clean(at)
    assert widget(at, "train").value == 2048
    fig = figures(at)[0]
    assert title(fig) == tr("zh", "claims.extrapolate.fig", train="2,048")
    steps = as_array(fig["data"][1]["x"])
    assert steps[-1] == 4 * 2048 and as_array(fig["data"][1]["y"])[steps < 2048].max() == 0.0


def test_nonsense_in_the_url_falls_back():
    at = open_page("claims", query={"tab": "bogus", "d": "abc", "k": "-5", "ctx": "7", "train": "5"})
    assert_clean(at)
    assert title(figures(at)[0]) == tr("en", "claims.exponent.fig", d=512)
    assert at.selectbox(key="tab").value == "exponent"
    at = open_page("claims", query={"tab": "norm", "d": "abc"})
    assert_clean(at)
    assert widget(at, "d").value == 512
    at = open_page("claims", query={"tab": "base", "ctx": "99999"})
    assert_clean(at)
    assert widget(at, "ctx").value == 2048
    at = open_page("claims", query={"tab": "extrapolate", "train": "8193"})
    assert_clean(at)
    assert widget(at, "train").value == 512
