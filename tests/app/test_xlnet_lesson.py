"""The XLNet page's lesson: a typed order from the URL, the chosen token's row outlined in both masks, what each
stream may see listed in words of the example sentence, and the order as a rank per position."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.encodings import xlnet

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
    teaching_text,
    tr,
)


def words(lang: str, n: int) -> list[str]:
    sentence = catalog(lang)["xlnet.sentence"].split()
    return [sentence[i] if i < len(sentence) else f"#{i}" for i in range(n)]


def listed(tokens, names, lang) -> str:
    return ", ".join(f"{names[j]} ({j})" for j in tokens) or tr(lang, "xlnet.nothing")


def check_lessons(at, order, token, lang="en"):
    order = np.asarray(order)
    assert order_on_page(at) == order.tolist()
    drawn = charts_by_key(charts(at), lang, ["xlnet.content", "xlnet.query", "xlnet.rank"])
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
