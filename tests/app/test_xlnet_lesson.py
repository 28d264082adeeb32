"""The XLNet page's lesson: Transformer-XL's relative embedding R_{i-j}, the four terms of one query's score and the
memory they make possible, then a typed order from the URL, the chosen token's row outlined in both masks, what each
stream may see listed in words of the example sentence, and the order as a rank per position."""

from __future__ import annotations

import re

import numpy as np
import pytest

import posviz
from posviz.encodings import transformer_xl as txl
from posviz.encodings import xlnet
from posviz.lessons import attention_demo

from ._support import (
    as_array,
    assert_clean,
    button,
    catalog,
    chart,
    charts,
    charts_by_key,
    heatmap_z,
    open_page,
    order_on_page,
    says,
    teaching_text,
    tr,
)


def words(lang: str, n: int) -> list[str]:
    sentence = catalog(lang)["xlnet.sentence"].split()
    return [sentence[i] if i < len(sentence) else f"#{i}" for i in range(n)]


def listed(tokens, names, lang) -> str:
    return ", ".join(f"{names[j]} ({j})" for j in tokens) or tr(lang, "xlnet.nothing")


#: The catalog keys of the titles of the relative section's charts.
RELATIVE = ("txl.r", "txl.terms", "txl.memory.title")
D_MODEL, D_HEAD = 16, 8  # the page's demo head


def check_lessons(at, order, token, lang="en"):
    order = np.asarray(order)
    assert order_on_page(at) == order.tolist()
    drawn = charts_by_key(charts(at), lang, ["xlnet.content", "xlnet.query", "xlnet.rank", *RELATIVE])
    content, query, rank = (drawn[key].fig for key in ("xlnet.content", "xlnet.query", "xlnet.rank"))
    expected_content, expected_query = posviz.xlnet_masks(order)
    np.testing.assert_array_equal(heatmap_z(content), expected_content)
    np.testing.assert_array_equal(heatmap_z(query), expected_query)
    for fig in (content, query):
        (outline,) = fig["layout"]["shapes"]
        assert (outline["y0"], outline["y1"]) == (token - 0.5, token + 0.5)
    step = np.argsort(order)  # step[t] = when token t is predicted
    np.testing.assert_array_equal(as_array(rank["data"][0]["y"]), step)
    names = words(lang, len(order))
    assert list(rank["data"][0]["x"]) == [f"{i} {w}" for i, w in enumerate(names)]
    sees_content = [j for j in range(len(order)) if step[j] <= step[token]]
    sees_query = [j for j in range(len(order)) if step[j] < step[token]]
    assert sees_content == np.flatnonzero(expected_content[token]).tolist()
    shown = [m.value for m in at.markdown]
    word = names[token]
    assert tr(lang, "xlnet.for_token", word=word, token=token, rank=step[token], others=len(order) - 1) in shown
    assert tr(lang, "xlnet.content_sees", word=word, listed=listed(sees_content, names, lang)) in shown
    assert tr(lang, "xlnet.query_sees", word=word, listed=listed(sees_query, names, lang)) in shown
    assert tr(lang, "xlnet.why", word=word) in [i.value for i in at.info]
    # partial prediction: only the last round(L / 6) tokens of the order (at least one) are targets, drawn in red
    count = max(1, int(np.floor(len(order) / 6 + 0.5)))
    targets = order[len(order) - count :]
    listed_targets = listed(targets, names, lang)
    assert tr(lang, "xlnet.targets", k=6, count=count, n=len(order), listed=listed_targets) in shown
    colours = rank["data"][0]["marker"]["color"]
    red = [i for i, c in enumerate(colours) if c == colours[int(targets[0])]]
    assert sorted(red) == sorted(targets.tolist()) and len(set(colours)) == (2 if count < len(order) else 1)


def test_default_view_opens_on_a_shuffled_order(default_view):
    """The identity order is a plain causal mask, so the page opens on a shuffled one."""
    at = default_view("xlnet")
    assert_clean(at)
    seed = posviz.family("xlnet").param("seed").default
    assert at.number_input(key="seed").value == seed
    order = posviz.factorisation_order(8, seed)
    assert not np.array_equal(order, np.arange(8))
    check_lessons(at, order, token=1)
    _, query = posviz.xlnet_masks(order)
    i, j = np.indices((8, 8))
    assert (query != (j < i)).any()  # not the causal mask
    assert np.array_equal(heatmap_z(chart(charts(at), "en", "xlnet.query").fig), query)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_link_with_a_seed_still_sets_the_order(lang):
    at = open_page("xlnet", query={"seed": "0", "len": "6"}, lang=lang)  # seed 0: left to right
    assert_clean(at)
    check_lessons(at, np.arange(6), token=1, lang=lang)
    at = open_page("xlnet", query={"seed": "5", "len": "12", "tok": "4"}, lang=lang)
    assert_clean(at)
    check_lessons(at, posviz.factorisation_order(12, 5), token=4, lang=lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_typed_order_from_the_url(lang):
    at = open_page("xlnet", query={"order": "3,1,0,2", "tok": "2"}, lang=lang)
    assert_clean(at)
    assert at.text_input(key="order").value == "3,1,0,2" and at.select_slider(key="tok").value == 2
    check_lessons(at, [3, 1, 0, 2], token=2, lang=lang)
    assert tr(lang, "xlnet.typed", n=4) in [c.value for c in at.caption]


def test_first_token_of_the_order_sees_nothing_in_the_query_stream():
    at = open_page("xlnet", query={"order": "3 1 0 2", "tok": "3"})
    assert_clean(at)
    check_lessons(at, [3, 1, 0, 2], token=3)
    assert tr("en", "xlnet.query_sees", word="a", listed=tr("en", "xlnet.nothing")) in [m.value for m in at.markdown]


@pytest.mark.parametrize("typed", ["3,1,x", "0,0,1", "0,2", "5,4,3,2,1,0," * 6])
def test_a_bad_order_shows_the_core_message(typed):
    at = open_page("xlnet", query={"order": typed})
    assert not at.exception
    with pytest.raises(ValueError) as info:
        xlnet.parse_order(typed, 32)
    assert [e.value for e in at.error] == [tr("en", "error.input.order", message=str(info.value))]


def test_shuffle_replaces_a_typed_order():
    at = open_page("xlnet", query={"order": "1,0"})
    button(at, tr("en", "xlnet.shuffle")).click().run()
    assert_clean(at)
    assert at.text_input(key="order").value == ""
    check_lessons(at, posviz.factorisation_order(8, 2), token=1)  # the next seed after the default 1


def test_nonsense_token_in_the_url_falls_back():
    at = open_page("xlnet", query={"tok": "99", "len": "4"})
    assert_clean(at)
    assert at.select_slider(key="tok").value == 1
    check_lessons(at, posviz.factorisation_order(4, 1), token=1)


def test_shorter_order_clamps_the_token():
    at = open_page("xlnet", query={"tok": "7"})
    at.slider(key="len").set_value(3).run()
    assert_clean(at)
    check_lessons(at, posviz.factorisation_order(3, 1), token=2)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_teaching_text_says_where_the_positions_come_from(lang):
    """The text names Transformer-XL's relative encoding as XLNet's position code and the K of partial prediction
    that the page computes with; the masks are presented as a pretraining device."""
    at = open_page("xlnet", lang=lang)
    assert_clean(at)
    text = teaching_text("xlnet", lang)
    assert text.strip() in "\n".join(m.value for m in at.markdown)  # the page shows this text
    assert "Transformer-XL" in text and f"K = {xlnet.PARTIAL_PREDICTION_K}" in text
    assert "W_R" in text and "R_{i-j}" in text  # the relative term itself
    assert r"u^\top k_j" in text and "2.4" in text  # the four terms, and why a memory needs relative offsets


# ------------------------------------------------------------------------ Transformer-XL's relative positions


def sinusoid_row(offset: float, d_model: int) -> np.ndarray:
    """R at ``offset`` from its definition, one entry at a time: sin(p w_k) for k < d/2, then cos(p w_k),
    w_k = 1 / 10000^(2k / d)."""
    half = d_model // 2
    row = np.empty(d_model)
    for k in range(half):
        w = 1.0 / 10000.0 ** (2 * k / d_model)
        row[k], row[half + k] = np.sin(offset * w), np.cos(offset * w)
    return row


def relative_charts(at, lang):
    return {key: chart(charts(at), lang, key) for key in RELATIVE}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_relative_embedding_heatmap_is_r_of_every_offset(lang):
    """Rows run from k_len = M + n down to -(n - 1), each the sinusoid of its offset; the caption names both ends."""
    at = open_page("xlnet", query={"len": "5", "mem": "3"}, lang=lang)
    assert_clean(at)
    r = relative_charts(at, lang)["txl.r"]
    z = heatmap_z(r.fig)
    trace = r.fig["data"][0]
    offsets = trace["y0"] + trace["dy"] * np.arange(z.shape[0])
    np.testing.assert_array_equal(offsets, np.arange(8, -5, -1))  # k_len = 8 down to 1 - q_len = -4
    expected = np.stack([sinusoid_row(p, D_MODEL) for p in offsets])
    np.testing.assert_allclose(z, expected, atol=1e-6)
    np.testing.assert_allclose(z, posviz.transformer_xl_pos_emb(5, 8, D_MODEL), atol=1e-6)
    assert r.notice == tr(lang, "txl.r.notice", top=8, bottom=-4, half=8)


def xlnet_way(hidden, weights, mem, i):
    """The score of query i of the segment on every key the way XLNet computes it: (q_i + u) . k_j for the content
    part and (q_i + v) . W_R R for the position part, one R per offset re-aligned by XLNet's relative shift."""
    q = hidden[mem:] @ weights.w_q
    k = hidden @ weights.w_k
    k_len, q_len = len(hidden), len(hidden) - mem
    r = txl.transformer_xl_pos_emb(q_len, k_len, D_MODEL) @ weights.w_r  # (R, d_head), offsets k_len .. 1 - q_len
    content = (q + weights.u) @ k.T
    position = txl.rel_shift((q + weights.v) @ r.T, k_len)
    return content[i], position[i]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("mem", "query"), [(4, 7), (0, 0), (2, 3)])
def test_score_terms_add_up_to_the_score_xlnet_computes(lang, mem, query):
    """Five panels: (a), (b), (c), (d) and their sum; the sum is the score XLNet computes through the relative shift,
    (a) + (c) its content part and (b) + (d) its position part, and (c) is the same for every query."""
    at = open_page("xlnet", query={"mem": str(mem), "q": str(query)}, lang=lang)
    assert_clean(at)
    terms = relative_charts(at, lang)["txl.terms"]
    bars = terms.traces("bar")
    names = [
        tr(lang, f"txl.term.{n}")
        for n in ("content_content", "content_position", "content_bias", "position_bias", "total")
    ]
    assert [b["name"] for b in bars] == names
    a, b, c, d, total = (as_array(bar["y"]) for bar in bars)
    np.testing.assert_allclose(a + b + c + d, total, atol=1e-5)
    np.testing.assert_array_equal(as_array(bars[0]["x"]), np.arange(mem + 8))

    order = posviz.factorisation_order(8, 1)
    words_ = [f"#{j}" for j in range(-mem, 0)] + words(lang, 8)
    hidden = attention_demo.token_embeddings(words_, D_MODEL)
    weights = posviz.xl_demo_weights(D_MODEL, D_HEAD, 0)
    content, position = xlnet_way(hidden, weights, mem, query)
    np.testing.assert_allclose(a + c, content, atol=1e-5)
    np.testing.assert_allclose(b + d, position, atol=1e-5)
    np.testing.assert_allclose(total, content + position, atol=1e-5)
    np.testing.assert_allclose(c, (hidden @ weights.w_k) @ weights.u, atol=1e-5)  # no query in it
    assert len(terms.fig["layout"].get("shapes", [])) == (5 if mem else 0)  # the memory shaded in every panel
    assert terms.notice == tr(lang, "txl.terms.notice")
    step = np.argsort(order)
    seen = [j for j in range(8) if step[j] < step[query]]
    names_ = words(lang, 8)
    kept = tr(lang, "txl.kept", word=names_[query], query=query, mem=mem, listed=listed(seen, names_, lang))
    assert kept in [m.value for m in at.markdown]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_memory_offsets_stay_distinct_where_absolute_positions_collide(lang):
    at = open_page("xlnet", query={"len": "6", "mem": "4"}, lang=lang)
    assert_clean(at)
    memory = relative_charts(at, lang)["txl.memory.title"]
    (heat,) = memory.traces("heatmap")
    (bars,) = memory.traces("bar")
    offsets = as_array(heat["z"])
    np.testing.assert_array_equal(offsets, np.subtract.outer(np.arange(6) + 4, np.arange(10)))
    assert all(len(set(row)) == len(row) for row in offsets)  # every key at its own offset from each query
    naive = as_array(bars["y"])
    np.testing.assert_array_equal(naive, [0, 1, 2, 3, 0, 1, 2, 3, 4, 5])
    red = [colour == bars["marker"]["color"][0] for colour in bars["marker"]["color"]]
    assert red == [list(naive).count(p) > 1 for p in naive]
    assert memory.notice == tr(lang, "txl.memory.notice", mem=4, n=6)
    assert memory.title.startswith(tr(lang, "txl.memory.title", mem=4, n=6))


def test_without_memory_nothing_collides_and_the_caption_says_so():
    at = open_page("xlnet", query={"mem": "0"})
    assert_clean(at)
    memory = relative_charts(at, "en")["txl.memory.title"]
    (bars,) = memory.traces("bar")
    np.testing.assert_array_equal(as_array(bars["y"]), np.arange(8))
    assert memory.notice == tr("en", "txl.memory.notice.none", mem=0, n=8)


def test_a_shorter_order_clamps_the_query():
    at = open_page("xlnet", query={"q": "7"})
    at.slider(key="len").set_value(3).run()
    assert_clean(at)
    assert at.select_slider(key="q").value == 2
    terms = relative_charts(at, "en")["txl.terms"]
    assert says(terms.title, "en", "txl.terms", word=words("en", 3)[2], query=2)


def alone(symbol: str, text: str) -> bool:
    """Whether ``text`` names ``symbol`` on its own: not inside a Latin word ("u" in "query", "v" in "very")."""
    return re.search(rf"(?<![A-Za-z_]){symbol}(?![A-Za-z_])", text) is not None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_home_and_compare_say_what_xlnets_positions_are(lang):
    """Home's family card and Compare's list name XLNet's position term (sinusoids of i - j read through the query's
    content and the bias v: relative and content-dependent) and put the two-stream mask in pretraining only."""
    summary = tr(lang, "family.xlnet.summary")
    what = tr(lang, "compare.what.xlnet")
    for text in (summary, what, tr(lang, "compare.side.matrix.xlnet.notice")):
        assert "Transformer-XL" in text and " v" in text and alone("v", text)
    assert "R_i−j" in summary and "q_i·W_R R_i−j + v·W_R R_i−j" in what
    assert "u" in summary and alone("u", summary)  # the content bias beside it, named on its own (not in a word)
    home = open_page("home", lang=lang)
    assert_clean(home)
    assert summary in [c.value for c in home.caption]
    compare = open_page("compare", lang=lang)  # its first tab draws every family by offset, XLNet included
    assert_clean(compare)
    shown = "\n".join(m.value for m in compare.markdown)
    assert what in shown
    assert "two-stream masks of a sampled factorisation order only decide" in posviz.family("xlnet").summary
