"""Every view is a link: query parameters set before the first run produce that view (the chart data are the
core's for those parameters and the controls show them), and nonsense in the URL falls back to a valid view.

Each test opens the page directly, as a visitor following a shared link would (a fresh session whose first
request is the page's URL).
"""

from __future__ import annotations

import numpy as np
import pytest

import posviz

from ._support import (
    PAGE_FILES,
    as_array,
    assert_clean,
    assert_matrix,
    chart,
    charts,
    figures,
    heatmap_z,
    open_page,
    order_on_page,
    sinusoidal_formula,
    title,
    tr,
    widget,
)


def shown(at, keys) -> dict:
    """The value each control of ``keys`` shows, the base as a float (its options are whole numbers on some pages)."""
    values = {key: widget(at, key).value for key in keys}
    if "base" in values:
        values["base"] = float(values["base"])
    return values


def check_sinusoidal(at):
    table, sim = figures(at)[:2]
    expected = posviz.sinusoidal(64, 32, base=100.0, layout="halves")
    assert_matrix(heatmap_z(table), expected, what="table")
    assert_matrix(heatmap_z(table), sinusoidal_formula(64, 32, base=100.0, layout="halves"), what="formula")
    assert_matrix(heatmap_z(sim), posviz.cosine_similarity_matrix(expected), what="similarity")


def check_learned(at):
    table, sim = figures(at)[:2]
    assert_matrix(heatmap_z(table), posviz.learned_init(50, 20, std=0.5, seed=3), what="table")
    assert at.number_input(key="std").value == pytest.approx(0.5)


def check_learned_sin(at):
    assert_matrix(heatmap_z(figures(at)[0]), posviz.sin_init(40, 16), what="table")
    assert at.number_input(key="std").disabled


def check_rope(at):
    """The link opens the rotation tab; the scores tab, opened next, keeps the link's sizes."""
    table = heatmap_z(figures(at)[0])
    at.session_state["tab"] = tr("en", "rope.tab.scores")
    scores = heatmap_z(figures(at.run())[0])
    inv, _ = posviz.rope_inv_freq(16, base=1000.0)
    assert_matrix(table, np.cos(np.arange(40)[:, None] * inv[None, :]), what="table")
    assert_matrix(scores, posviz.rope_score_matrix(40, 16, base=1000.0), what="scores")


def check_alibi(at):
    slopes, bias = figures(at)[:2]
    np.testing.assert_allclose(as_array(slopes["data"][0]["y"]), posviz.alibi_slopes(12), rtol=1e-12)
    assert_matrix(heatmap_z(bias), posviz.alibi_bias(12, 20, causal=False)[9], what="bias")
    assert title(bias) == tr("en", "alibi.bias", head=9, slope=f"{posviz.alibi_slopes(12)[9]:.4g}")


def check_relative(at):
    """The link opens the Shaw tab; its T5 parameters wait in the URL until the T5 tab is opened."""
    shaw = figures(at)[0]
    i, j = np.indices((10, 10))
    assert_matrix(heatmap_z(shaw), np.clip(j - i, -3, 3) + 3, what="shaw")
    at.session_state["tab"] = tr("en", "relative.t5")
    at.run()
    shown = {key: widget(at, key).value for key in ("t5_len", "t5_buckets", "t5_max_distance", "t5_bidirectional")}
    assert shown == {"t5_len": 40, "t5_buckets": 16, "t5_max_distance": 64, "t5_bidirectional": False}
    t5, curve = figures(at)[:2]
    kwargs = dict(bidirectional=False, num_buckets=16, max_distance=64)
    assert_matrix(heatmap_z(t5), posviz.t5_bucket_matrix(40, 40, **kwargs), what="t5")
    np.testing.assert_array_equal(
        as_array(curve["data"][0]["y"]), posviz.t5_relative_bucket(np.arange(-128, 129), **kwargs)
    )


def check_xlnet(at):
    order = posviz.factorisation_order(12, 5)
    assert order_on_page(at) == order.tolist()
    content, query = (heatmap_z(chart(charts(at), "en", key).fig) for key in ("xlnet.content", "xlnet.query"))
    assert_matrix(content, posviz.xlnet_masks(order)[0], what="content")
    assert_matrix(query, posviz.xlnet_masks(order)[1], what="query")


def check_home(at):
    assert [t.value for t in at.title] == [tr("zh", "page.home")]


# page, query string, widget values the controls must show, chart check
ROUND_TRIPS = [
    ("home", {"lang": "zh"}, {"lang": "zh"}, check_home),
    (
        "sinusoidal",
        {"n": "64", "d": "32", "base": "100", "layout": "halves"},
        {"n": 64, "d": 32, "base": 100.0, "layout": "halves"},
        check_sinusoidal,
    ),
    (
        "learned",
        {"n": "50", "d": "20", "std": "0.5", "seed": "3"},
        {"n": 50, "d": 20, "seed": 3, "init": "random"},
        check_learned,
    ),
    (
        "learned",
        {"n": "40", "d": "16", "init": "sinusoidal"},
        {"n": 40, "d": 16, "init": "sinusoidal"},
        check_learned_sin,
    ),
    ("rope", {"n": "40", "head_dim": "16", "base": "1000"}, {"n": 40, "head_dim": 16, "base": 1000.0}, check_rope),
    (
        "alibi",
        {"heads": "12", "len": "20", "head": "9", "causal": "false"},
        {"heads": 12, "len": 20, "head": 9, "causal": False},
        check_alibi,
    ),
    (
        "relative",
        {
            "shaw_len": "10",
            "shaw_k": "3",
            "t5_len": "40",
            "t5_buckets": "16",
            "t5_max_distance": "64",
            "t5_bidirectional": "false",
        },
        {"shaw_len": 10, "shaw_k": 3},  # the T5 controls are checked once their tab is open
        check_relative,
    ),
    ("xlnet", {"len": "12", "seed": "5"}, {"len": 12, "seed": 5}, check_xlnet),
]


@pytest.mark.parametrize(
    ("page", "query", "controls", "check"), ROUND_TRIPS, ids=[f"{p}-{'-'.join(q)}" for p, q, _, _ in ROUND_TRIPS]
)
def test_url_sets_the_view(page, query, controls, check):
    at = open_page(page, query=query)
    assert_clean(at)
    assert shown(at, controls) == controls
    check(at)


def test_readme_link_reopens_the_view():
    """README: "a shared link — for example /sinusoidal?n=64&d=32&base=100&lang=zh — reopens exactly the same
    view"."""
    at = open_page("sinusoidal", query={"n": "64", "d": "32", "base": "100", "lang": "zh"})
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("zh", "page.sinusoidal")]
    table = figures(at)[0]
    assert title(table) == tr("zh", "sinusoidal.table")
    assert_matrix(heatmap_z(table), posviz.sinusoidal(64, 32, base=100.0))


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_choice_link_does_not_depend_on_the_readers_language(locale):
    """A link made in one language opens the same view for a reader whose browser (hence the default language)
    is another: the URL holds the option's code, not its translated label."""
    at = open_page("sinusoidal", query={"layout": "halves"}, locale=locale)
    assert_clean(at)
    assert at.session_state["lang"] == locale[:2]
    assert at.session_state["layout"] == "halves"
    assert_matrix(heatmap_z(figures(at)[0]), posviz.sinusoidal(128, 128, layout="halves"))


def test_choosing_an_option_writes_its_code_in_the_url():
    at = open_page("sinusoidal")
    assert "layout" not in at.query_params  # the default stays out of the URL
    at.radio(key="layout").set_value("halves").run()
    assert at.query_params.get("layout") == "halves"
    # Switching the language keeps the choice and its code. (No further run in Chinese here: AppTest calls a
    # radio's format_func outside the script run, where the catalog lookup falls back to English.)
    at.radio(key="lang").set_value("zh").run()
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("zh", "page.sinusoidal")]
    assert at.query_params.get("lang") == "zh"
    assert at.query_params.get("layout") == "halves"
    assert at.session_state["layout"] == "halves"


def test_choosing_a_language_writes_its_code_in_the_url():
    at = open_page("rope")
    assert "lang" not in at.query_params
    at.radio(key="lang").set_value("zh").run()
    assert at.query_params.get("lang") == "zh"
    assert [t.value for t in at.title] == [tr("zh", "page.rope")]
    at.radio(key="lang").set_value("en").run()
    assert "lang" not in at.query_params  # English is this browser's default
    assert [t.value for t in at.title] == [tr("en", "page.rope")]


def test_deep_link_on_a_fresh_server_runs_inside_the_app_frame():
    """The first request of a new session is a page URL: the page must still get app.py's frame (the language
    switch in the sidebar, the language from the URL), not run on its own."""
    at = open_page("rope", query={"lang": "zh", "head_dim": "32"})
    assert_clean(at)
    assert [r.key for r in at.sidebar.radio] == ["lang"]
    assert [t.value for t in at.title] == [tr("zh", "page.rope")]
    assert at.slider(key="head_dim").value == 32


# page, nonsense query, the controls that must fall back to their defaults
NONSENSE = [
    ("sinusoidal", {"n": "abc"}, {"n": 128}),
    ("sinusoidal", {"n": "-5", "d": "1e9"}, {"n": 128, "d": 128}),
    ("sinusoidal", {"layout": "nope", "base": "abc"}, {"layout": "interleaved", "base": 10000.0}),
    ("sinusoidal", {"n": "", "base": "99"}, {"n": 128, "base": 10000.0}),  # any base from 100 is exact: 99 is not
    ("learned", {"std": "-1", "seed": "x", "init": "nope"}, {"std": 0.02, "seed": 0, "init": "random"}),
    ("rope", {"n": "0", "base": "-1"}, {"n": 128, "base": 10000.0}),
    ("alibi", {"heads": "0", "head": "-1", "causal": "maybe"}, {"heads": 8, "head": 0, "causal": True}),
    ("alibi", {"heads": "4", "head": "7"}, {"heads": 4, "head": 0}),
    ("relative", {"shaw_k": "abc", "shaw_len": "0"}, {"shaw_k": 8, "shaw_len": 32}),
    (
        "relative",
        {"tab": "t5", "t5_bidirectional": "yes", "t5_len": "99999"},
        {"t5_bidirectional": True, "t5_len": 64},
    ),
    ("xlnet", {"len": "1", "seed": "-3"}, {"len": 8, "seed": 1}),
    ("home", {"lang": "fr"}, {"lang": "en"}),
]


@pytest.mark.parametrize(("page", "query", "fallback"), NONSENSE, ids=[f"{p}-{q}" for p, q, _ in NONSENSE])
def test_nonsense_in_the_url_falls_back_to_a_valid_view(page, query, fallback):
    at = open_page(page, query=query)
    assert_clean(at)
    values = shown(at, fallback)
    assert values == fallback
    rejected = [key for key in query if key != "tab" and str(fallback.get(key)) != query[key]]  # heads=4 is valid
    left = {key: at.query_params[key] for key in rejected if key in at.query_params}
    assert not left, f"the URL still carries the rejected values {left}"
    default = {
        "home": None,
        "sinusoidal": lambda: posviz.sinusoidal(128, 128),
        "learned": lambda: posviz.learned_init(128, 128),
        "rope": lambda: np.cos(np.arange(128)[:, None] * posviz.rope_inv_freq(64)[0][None, :]),
        "alibi": lambda: posviz.alibi_bias(int(values.get("heads", 8)), 32)[0],
        "relative": lambda: (
            posviz.t5_bucket_matrix(64, 64) if query.get("tab") == "t5" else posviz.shaw_relative_index(32, 32, 8)
        ),
        "xlnet": lambda: posviz.xlnet_masks(posviz.factorisation_order(8, 1))[0],
    }[page]
    if default is None:
        assert [t.value for t in at.title] == [tr("en", "page.home")]
    else:
        index = 1 if page == "alibi" else 0
        fig = chart(charts(at), "en", "xlnet.content").fig if page == "xlnet" else figures(at)[index]
        assert_matrix(heatmap_z(fig), default())


def test_a_tab_opened_on_one_page_does_not_break_the_next_page():
    """The open tab's code is remembered across reruns; on another page whose tabs have other codes it must give way
    to that page's link or first tab (it raised KeyError: 'norms')."""
    at = open_page("sinusoidal", query={"tab": "norms"})
    assert_clean(at)
    at.query_params.clear()
    at.switch_page(PAGE_FILES["learned"]).run()
    assert_clean(at)
    assert at.tabs[0].label == tr("en", "learned.tab.table") and "tab" not in at.query_params
    at.switch_page(PAGE_FILES["rope"])
    at.query_params["tab"] = "decay"
    at.run()
    assert_clean(at)
    assert at.query_params["tab"] == "decay"
