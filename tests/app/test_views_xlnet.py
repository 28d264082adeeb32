"""The XLNet page's views (posviz/ui/views/xlnet.py): cached by their settings and the language, their numbers
checked against derivations written here from the papers, refused settings raised and never cached.

Conventions, as the page and ``posviz.encodings.xlnet`` state them: an order z lists the tokens in the order they
are predicted, so rank(t) is the step at which token t comes in z. Rows are queries i, columns keys j; in the
content stream i may attend to j iff rank(j) <= rank(i) (itself included), in the query stream iff rank(j) < rank(i)
(Yang et al. 2019, section 2.3). Transformer-XL's R_p is the sinusoid of the relative distance p = i - j,
[sin(p w_k) | cos(p w_k)] with w_k = 10000^(-2k / d) (Dai et al. 2019, section 3.3), and query i of a segment after
M memory keys stands at distance i + M - j from key j.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import plotly
import pytest
import streamlit as st

from posviz.encodings import transformer_xl as txl
from posviz.lessons import attention_demo
from posviz.ui import cache
from posviz.ui.views import Figure
from posviz.ui.views import xlnet as xlnet_views

from ._support import as_array, assert_matrix, catalog, charts, heatmap_z, open_page, tr

ORDER = (3, 1, 4, 0, 2, 5)


pytestmark = pytest.mark.usefixtures("views_in_english")


def spec(fig) -> dict:
    """A figure's dictionary as the browser gets it (JSON: arrays as lists or typed arrays)."""
    return json.loads(json.dumps(fig.to_dict(), cls=plotly.utils.PlotlyJSONEncoder))


def view_keys() -> list[tuple]:
    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def words(n: int, lang: str = "en") -> list[str]:
    sentence = catalog(lang)["xlnet.sentence"].split()
    return [sentence[i] if i < len(sentence) else f"#{i}" for i in range(n)]


def listed(tokens, names, lang: str = "en") -> str:
    return ", ".join(f"{names[j]} ({j})" for j in tokens) or tr(lang, "xlnet.nothing")


def ranks_of(order) -> list[int]:
    """rank[t] = s where order[s] = t, read off the order one step at a time."""
    rank = [0] * len(order)
    for step, token in enumerate(order):
        rank[token] = step
    return rank


def streams(order) -> tuple[np.ndarray, np.ndarray]:
    """The content and query masks cell by cell: rank(j) <= rank(i), and rank(j) < rank(i)."""
    rank, n = ranks_of(order), len(order)
    content = np.array([[rank[j] <= rank[i] for j in range(n)] for i in range(n)])
    query = np.array([[rank[j] < rank[i] for j in range(n)] for i in range(n)])
    return content, query


def sinusoid(p: float, d: int) -> np.ndarray:
    """R_p: sin(p w_k) for k < d/2, then cos(p w_k), w_k = 1 / 10000^(2k / d)."""
    w = np.array([1.0 / 10000.0 ** (2 * k / d) for k in range(d // 2)])
    return np.concatenate([np.sin(p * w), np.cos(p * w)])


def targets_of(order) -> list[int]:
    """XLNet's partial prediction with K = 6: the last max(1, round(L / 6)) tokens of the order."""
    count = max(1, int(np.floor(len(order) / 6 + 0.5)))
    return list(order[len(order) - count :])


# --------------------------------------------------------------------------------------------------- the cache


def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output():
    first = xlnet_views.mask(ORDER, 2, "content")
    assert xlnet_views.mask(ORDER, 2, "content") is first
    assert xlnet_views.mask(order=ORDER, token=2, stream="content") is first
    assert xlnet_views.mask(ORDER, 3, "content") is not first
    assert xlnet_views.mask(ORDER, 2, "query") is not first
    assert xlnet_views.mask((1, 3, 4, 0, 2, 5), 2, "content") is not first
    terms = xlnet_views.score_terms(6, 2, 1)
    assert xlnet_views.score_terms(6, 2, 1) is terms
    assert xlnet_views.score_terms(6, 3, 1) is not terms
    assert xlnet_views.score_terms(6, 2, 0) is not terms
    relative = xlnet_views.relative_embedding(6, 2)
    assert xlnet_views.relative_embedding(6, 2) is relative and xlnet_views.relative_embedding(6, 1) is not relative
    memory = xlnet_views.memory(6, 2)
    assert xlnet_views.memory(6, 2) is memory and xlnet_views.memory(5, 2) is not memory
    summary = xlnet_views.summary(ORDER, False)
    assert xlnet_views.summary(ORDER, False) is summary and xlnet_views.summary(ORDER, True) is not summary
    reading = xlnet_views.reading(ORDER, 2)
    assert xlnet_views.reading(ORDER, 2) is reading and xlnet_views.reading(ORDER, 1) is not reading
    ranks = xlnet_views.ranks(ORDER)
    assert xlnet_views.ranks(ORDER) is ranks and xlnet_views.ranks((0, 1, 2, 3, 4, 5)) is not ranks
    kept = xlnet_views.query_keys(ORDER, 2, 3)
    assert xlnet_views.query_keys(ORDER, 2, 3) is kept and xlnet_views.query_keys(ORDER, 2, 4) is not kept


def test_a_view_reads_only_its_settings():
    """The relative embedding and the memory read the segment's length and the memory, not the order or the query:
    the page asks for them with (n, mem) alone, so a new order or query keeps them."""
    assert list(inspect.signature(xlnet_views.relative_embedding).parameters) == ["n", "mem"]
    assert list(inspect.signature(xlnet_views.memory).parameters) == ["n", "mem"]
    assert list(inspect.signature(xlnet_views.score_terms).parameters) == ["n", "mem", "query"]
    assert list(inspect.signature(xlnet_views.ranks).parameters) == ["order"]


def test_the_language_is_part_of_the_key():
    english = xlnet_views.ranks(ORDER)
    st.session_state["lang"] = "zh"
    chinese = xlnet_views.ranks(ORDER)
    assert chinese is not english
    en_fig, zh_fig = english.figure("rank").fig.to_dict(), chinese.figure("rank").fig.to_dict()
    assert zh_fig["layout"]["title"] != en_fig["layout"]["title"]
    assert list(zh_fig["data"][0]["x"]) == [f"{i} {w}" for i, w in enumerate(words(6, "zh"))]
    np.testing.assert_array_equal(as_array(zh_fig["data"][0]["y"]), as_array(en_fig["data"][0]["y"]))


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("summary", (ORDER, True)),
        ("relative_embedding", (7, 3)),
        ("score_terms", (7, 3, 4)),
        ("query_keys", (ORDER, 4, 3)),
        ("memory", (7, 3)),
        ("mask", (ORDER, 4, "query")),
        ("reading", (ORDER, 4)),
        ("ranks", (ORDER,)),
    ],
)
def test_a_view_equals_its_uncached_build(name, settings):
    func = getattr(xlnet_views, name)
    cached, fresh = func(*settings), list(func.uncached(*settings))
    assert len(cached.items) == len(fresh)
    for got, built in zip(cached.items, fresh, strict=True):
        assert type(got) is type(built)
        if isinstance(built, Figure):
            assert got.key == built.key and dict(got.options) == dict(built.options)
            assert spec(got.fig) == spec(built.fig)
        else:
            assert got == built


# ------------------------------------------------------------------------------------------------- the numbers


@pytest.mark.parametrize("order", [ORDER, (0, 1, 2, 3), (2, 0, 1)])
@pytest.mark.parametrize("stream", ["content", "query"])
def test_masks_follow_the_ranks_of_the_order(order, stream):
    token = len(order) - 1
    out = xlnet_views.mask(order, token, stream)
    figure = out.figure(stream)
    expected = dict(zip(("content", "query"), streams(order), strict=True))[stream]
    fig = figure.fig.to_dict()
    assert_matrix(heatmap_z(fig), expected.astype(float), what=stream)
    np.testing.assert_array_equal(figure.data, expected.astype(np.int8))
    assert figure.data.dtype == np.int8 and figure.options == {}
    (outline,) = fig["layout"]["shapes"]
    assert (outline["y0"], outline["y1"]) == (token - 0.5, token + 0.5)
    other = "query" if stream == "content" else "content"
    assert (
        fig["data"][0]["colorscale"]
        != spec(xlnet_views.mask(order, token, other).figure(other).fig)["data"][0]["colorscale"]
    )
    assert fig["layout"]["title"]["text"].startswith(tr("en", f"xlnet.{stream}"))
    # the query stream is the content stream less its diagonal
    if stream == "query":
        np.testing.assert_array_equal(expected | np.eye(len(order), dtype=bool), streams(order)[0])


def test_ranks_are_the_steps_of_the_order_and_targets_are_red():
    out = xlnet_views.ranks(ORDER)
    figure = out.figure("rank")
    bar = figure.fig.to_dict()["data"][0]
    np.testing.assert_array_equal(as_array(bar["y"]), ranks_of(ORDER))
    assert list(bar["x"]) == [f"{i} {w}" for i, w in enumerate(words(6))]
    red = {
        i for i, colour in enumerate(bar["marker"]["color"]) if colour == bar["marker"]["color"][targets_of(ORDER)[0]]
    }
    assert red == set(targets_of(ORDER)) == {5}
    np.testing.assert_array_equal(figure.data["rank"], ranks_of(ORDER))
    np.testing.assert_array_equal(figure.data["target"], [i == 5 for i in range(6)])
    assert list(figure.data["token"]) == words(6)


def test_summary_says_the_order_and_its_targets():
    order = tuple(range(11, -1, -1))  # 12 tokens: round(12 / 6) = 2 targets, the last two of the order
    typed = xlnet_views.summary(order, True)
    assert [item.kind for item in typed.items] == ["caption", "markdown", "markdown"]
    assert typed.texts == [
        tr("en", "xlnet.typed", n=12),
        tr("en", "xlnet.order", order=" → ".join(str(i) for i in order)),
        tr("en", "xlnet.targets", k=6, count=2, n=12, listed=listed([1, 0], words(12))),
    ]
    assert xlnet_views.summary(order, False).texts == typed.texts[1:]


def test_reading_lists_what_each_stream_sees():
    token = 4  # rank 2 in ORDER: after 3 and 1
    out = xlnet_views.reading(ORDER, token)
    names = words(6)
    rank = ranks_of(ORDER)
    content = [j for j in range(6) if rank[j] <= rank[token]]
    query = [j for j in range(6) if rank[j] < rank[token]]
    assert (content, query) == ([1, 3, 4], [1, 3])
    assert [item.kind for item in out.items] == ["markdown", "markdown", "markdown", "info"]
    assert out.texts == [
        tr("en", "xlnet.for_token", word=names[token], token=token, rank=2, others=5),
        tr("en", "xlnet.content_sees", word=names[token], listed=listed(content, names)),
        tr("en", "xlnet.query_sees", word=names[token], listed=listed(query, names)),
        tr("en", "xlnet.why", word=names[token]),
    ]
    first = xlnet_views.reading(ORDER, 3)  # predicted first: its query stream sees nothing
    assert first.texts[2] == tr("en", "xlnet.query_sees", word=names[3], listed=tr("en", "xlnet.nothing"))


def test_query_keys_lists_the_earlier_tokens_of_the_segment():
    out = xlnet_views.query_keys(ORDER, 0, 5)  # token 0 has rank 3: after 3, 1 and 4
    names = words(6)
    assert out.texts == [tr("en", "txl.kept", word=names[0], query=0, mem=5, listed=listed([1, 3, 4], names))]


@pytest.mark.parametrize(("n", "mem"), [(5, 3), (1, 0), (4, 16)])
def test_relative_embedding_is_the_sinusoid_of_every_distance(n, mem):
    out = xlnet_views.relative_embedding(n, mem)
    figure = out.figure("r")
    fig = figure.fig.to_dict()
    z = heatmap_z(fig)
    trace = fig["data"][0]
    distances = trace["y0"] + trace["dy"] * np.arange(z.shape[0])
    np.testing.assert_array_equal(distances, np.arange(mem + n, -n, -1))  # k_len = mem + n down to 1 - n
    expected = np.stack([sinusoid(p, 16) for p in distances])
    assert_matrix(z, expected, atol=1e-6, what="R")
    np.testing.assert_allclose(figure.data.to_numpy(), expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(figure.data.index.to_numpy(), distances)
    assert list(figure.data.columns) == [f"sin {k}" for k in range(8)] + [f"cos {k}" for k in range(8)]
    assert figure.options == {"top": mem + n, "bottom": 1 - n, "half": 8}


@pytest.mark.parametrize(("n", "mem", "query"), [(8, 4, 7), (8, 0, 0), (5, 2, 3)])
def test_score_terms_are_the_four_terms_from_their_definition(n, mem, query):
    """(a) q_i.k_j, (b) q_i.W_R R_{i+M-j}, (c) u.k_j, (d) v.W_R R_{i+M-j} for the page's demo head, one key at a
    time, on the words' embeddings (memory words #-M .. #-1 first)."""
    out = xlnet_views.score_terms(n, mem, query)
    figure = out.figure("terms")
    hidden = attention_demo.token_embeddings([f"#{j}" for j in range(-mem, 0)] + words(n), 16)
    w = txl.xl_demo_weights(16, 8, 0)
    q = hidden[mem + query] @ w.w_q
    expected = {name: [] for name in ("content_content", "content_position", "content_bias", "position_bias")}
    for j in range(mem + n):
        k = hidden[j] @ w.w_k
        r = sinusoid(query + mem - j, 16) @ w.w_r
        expected["content_content"].append(q @ k)
        expected["content_position"].append(q @ r)
        expected["content_bias"].append(w.u @ k)
        expected["position_bias"].append(w.v @ r)
    total = np.sum([expected[name] for name in expected], axis=0)
    bars = [trace for trace in figure.fig.to_dict()["data"] if trace["type"] == "bar"]
    assert [bar["name"] for bar in bars] == [tr("en", f"txl.term.{name}") for name in (*expected, "total")]
    for bar, values in zip(bars, [*expected.values(), total], strict=True):
        np.testing.assert_allclose(as_array(bar["y"]), values, rtol=0, atol=1e-5)  # float32 in the chart
        np.testing.assert_array_equal(as_array(bar["x"]), np.arange(mem + n))
    for name, values in expected.items():
        np.testing.assert_allclose(figure.data[name], values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(figure.data["total"], total, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(figure.data["offset"], [query + mem - j for j in range(mem + n)])
    assert figure.options == {}


@pytest.mark.parametrize(("n", "mem"), [(6, 4), (8, 0)])
def test_memory_offsets_against_positions_numbered_from_zero(n, mem):
    out = xlnet_views.memory(n, mem)
    figure = out.figure("memory")
    fig = figure.fig.to_dict()
    (heat,) = [trace for trace in fig["data"] if trace["type"] == "heatmap"]
    (bars,) = [trace for trace in fig["data"] if trace["type"] == "bar"]
    offsets = [[i + mem - j for j in range(mem + n)] for i in range(n)]
    naive = list(range(mem)) + list(range(n))
    shared = [naive.count(p) > 1 for p in naive]
    np.testing.assert_array_equal(as_array(heat["z"]), offsets)
    np.testing.assert_array_equal(as_array(bars["y"]), naive)
    np.testing.assert_array_equal(figure.data["naive_position"], naive)
    np.testing.assert_array_equal(figure.data["shares_position"], shared)
    np.testing.assert_array_equal(figure.data[f"offset from query {n - 1}"], offsets[-1])
    assert any(shared) == bool(mem)
    assert figure.options == {"variant": None if mem else "none", "mem": mem, "n": n}


def test_chosen_order_is_the_typed_one_or_the_seeded_shuffle():
    assert xlnet_views.chosen_order("3, 1 0,2", 8, 1) == (3, 1, 0, 2)
    assert xlnet_views.chosen_order("  ", 5, 0) == (0, 1, 2, 3, 4)  # seed 0: left to right
    shuffled = xlnet_views.chosen_order("", 8, 1)
    assert sorted(shuffled) == list(range(8)) and shuffled != tuple(range(8))
    assert all(type(i) is int for i in shuffled)  # a setting of the views, keyed by value and type


# ------------------------------------------------------------------------------------------ refused settings


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("summary", ((0, 0, 1), False)),
        ("relative_embedding", (0, 2)),
        ("relative_embedding", (4, -5)),
        ("score_terms", (4, 2, 4)),
        ("score_terms", (0, 0, 0)),
        ("query_keys", ((0, 1, 2), 3, 0)),
        ("memory", (0, 2)),
        ("memory", (4, -1)),
        ("mask", ((0, 2), 0, "content")),
        ("mask", ((0, 1, 2), 3, "content")),
        ("mask", ((0, 1, 2), 0, "both")),
        ("reading", ((1, 2), 0)),
        ("ranks", ((0, 1, 1),)),
    ],
)
def test_refused_settings_raise_and_are_not_cached(name, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            getattr(xlnet_views, name)(*settings)
    assert not view_keys()


@pytest.mark.parametrize("typed", ["3,1,x", "0,0,1", "0,2", "0," * 33])
def test_a_bad_typed_order_is_refused(typed):
    with pytest.raises(ValueError):
        xlnet_views.chosen_order(typed, 8, 1)


# ------------------------------------------------------------------------------------------------- the page


def test_the_page_draws_what_the_views_return():
    """One hop: every chart of the page is the figure of the view called with the page's settings, kept in the
    store by the page's run."""
    at = open_page("xlnet", query={"order": "3,1,4,0,2,5", "tok": "4", "q": "2", "mem": "3"})
    assert not at.exception and not at.error
    drawn = {chart.key: chart.fig for chart in charts(at)}
    kept = len(view_keys())
    outputs = [
        xlnet_views.relative_embedding(6, 3),
        xlnet_views.score_terms(6, 3, 2),
        xlnet_views.memory(6, 3),
        xlnet_views.mask(ORDER, 4, "content"),
        xlnet_views.mask(ORDER, 4, "query"),
        xlnet_views.ranks(ORDER),
    ]
    assert len(view_keys()) == kept  # all of them already held
    figures = {item.key: spec(item.fig) for out in outputs for item in out.items}
    assert figures.keys() == drawn.keys() == {"r", "terms", "memory", "content", "query", "rank"}
    for key, fig in figures.items():
        assert drawn[key] == fig, key
    shown = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    for out in (xlnet_views.summary(ORDER, True), xlnet_views.reading(ORDER, 4), xlnet_views.query_keys(ORDER, 2, 3)):
        assert set(out.texts) <= set(shown)
