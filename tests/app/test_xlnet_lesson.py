"""The XLNet page's lesson: a typed order from the URL, the chosen token's row outlined in both masks, what each
stream may see listed in words of the example sentence, and the order as a rank per position."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.encodings import xlnet

from ._support import as_array, assert_clean, button, catalog, figures, heatmap_z, open_page, order_on_page, tr


def words(lang: str, n: int) -> list[str]:
    sentence = catalog(lang)["xlnet.sentence"].split()
    return [sentence[i] if i < len(sentence) else f"#{i}" for i in range(n)]


def listed(tokens, names, lang) -> str:
    return ", ".join(f"{names[j]} ({j})" for j in tokens) or tr(lang, "xlnet.nothing")


def check_lessons(at, order, token, lang="en"):
    order = np.asarray(order)
    assert order_on_page(at) == order.tolist()
    content, query, rank = figures(at)
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


def test_default_view_lessons(default_view):
    at = default_view("xlnet")
    assert_clean(at)
    check_lessons(at, np.arange(8), token=1)


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
    assert [e.value for e in at.error] == [tr("en", "error.bad_input", message=str(info.value))]


def test_shuffle_replaces_a_typed_order():
    at = open_page("xlnet", query={"order": "1,0"})
    button(at, tr("en", "xlnet.shuffle")).click().run()
    assert_clean(at)
    assert at.text_input(key="order").value == ""
    check_lessons(at, posviz.factorisation_order(8, 1), token=1)


def test_nonsense_token_in_the_url_falls_back():
    at = open_page("xlnet", query={"tok": "99", "len": "4"})
    assert_clean(at)
    assert at.select_slider(key="tok").value == 1
    check_lessons(at, np.arange(4), token=1)


def test_shorter_order_clamps_the_token():
    at = open_page("xlnet", query={"tok": "7"})
    at.slider(key="len").set_value(3).run()
    assert_clean(at)
    check_lessons(at, np.arange(3), token=2)
