"""The Home page's shuffle demo: the charts hold the core's attention weights and distances (zero without
positions and without a mask, clearly not with positions, nor with a causal mask alone), the controls round-trip
through the URL, both languages, nonsense in the URL, and the tour's links open the right views."""

from __future__ import annotations

import numpy as np
import pytest

from posviz.lessons import attention_demo as demo

from ._support import (
    PAGE_FILES,
    PAGE_NAMES,
    Chart,
    as_array,
    assert_clean,
    assert_matrix,
    charts,
    figures,
    open_page,
    tr,
)

OWN_EXAMPLE = "own"


def demo_charts(at) -> tuple[Chart, Chart]:
    """The demo's two charts, found by what they are in any language: the attention maps (two heatmaps, as written
    and shuffled) and the distances (bars with a reference line)."""
    found = charts(at)
    attention = [c for c in found if len(c.traces("heatmap")) == 2]
    distance = [c for c in found if c.traces("bar")]
    assert len(attention) == len(distance) == 1 and len(found) == 2, [c.title for c in found]
    return attention[0], distance[0]


def attention_panels(fig: dict) -> tuple[np.ndarray, np.ndarray]:
    left, right = (trace for trace in fig["data"] if trace["type"] == "heatmap")
    return as_array(left["z"]), as_array(right["z"])


def tick_labels(fig: dict, axis: str) -> list[str]:
    return list(fig["layout"][axis]["ticktext"])


def bars(fig: dict) -> tuple[np.ndarray, np.ndarray]:
    """The bars' heights and the reference markers; each bar's top is drawn again as a visible dash in its colour,
    outside the axis's clipping, so that bars of height 0 are seen (plotly draws no bar of height 0)."""
    bar, reference, top = fig["data"]
    assert (bar["type"], reference["type"], top["type"]) == ("bar", "scatter", "scatter")
    np.testing.assert_array_equal(as_array(top["y"]), as_array(bar["y"]))
    np.testing.assert_array_equal(as_array(top["x"]), as_array(bar["x"]))
    assert top["mode"] == "markers" and top["cliponaxis"] is False and top["showlegend"] is False
    assert top["marker"]["symbol"] == "line-ew" and top["marker"]["size"] >= 16
    assert top["marker"]["line"]["width"] >= 3 and top["marker"]["line"]["color"] == bar["marker"]["color"]
    return as_array(bar["y"]), as_array(reference["y"])


def check_charts(at, sentence: str, seed: int, positions: bool, back: bool, causal: bool = False) -> demo.ShuffleDemo:
    """The two charts are the core's ``shuffle_demo`` for these settings, and say so in their labels."""
    assert_clean(at)
    expected = demo.shuffle_demo(sentence, seed, positions=positions, causal=causal)
    attention, distance = (c.fig for c in demo_charts(at))
    left, right = attention_panels(attention)
    assert_matrix(left, expected.weights, what="as written")
    assert_matrix(right, expected.sorted_back if back else expected.shuffled_weights, what="shuffled")
    assert tick_labels(attention, "xaxis") == list(expected.tokens)
    assert tick_labels(attention, "xaxis2") == list(expected.tokens if back else expected.shuffled_tokens)
    assert attention["layout"]["meta"]["shape"] == [len(expected.tokens)] * 2
    bar, reference = bars(distance)
    np.testing.assert_allclose(bar, expected.distance, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(reference, expected.output_norm, rtol=1e-12)
    assert tick_labels(distance, "xaxis") == list(expected.tokens)
    return expected


def test_default_view_shows_the_equivariance():
    at = open_page("home")
    check_charts(at, demo.EXAMPLES["dog"], 0, positions=False, back=False)
    attention, distance = (c.fig for c in demo_charts(at))
    bar, reference = bars(distance)
    assert bar.max() < 1e-12 < reference.min()  # every token keeps its output: 0 up to rounding
    left, right = attention_panels(attention)
    order = demo.shuffle_order(5, 0)
    assert_matrix(right, left[np.ix_(order, order)], atol=1e-6, what="a permuted copy")
    assert distance["layout"]["yaxis"]["range"][0] == 0  # flat bars are drawn flat, not zoomed into 1e-16
    assert [c.value for c in at.caption][:2] == [
        tr("en", "home.attention.notice.plain"),
        tr("en", "home.distance.notice.plain"),
    ]


def test_switching_positions_on_breaks_it():
    at = open_page("home")
    at.toggle(key="pe").set_value(True).run()
    expected = check_charts(at, demo.EXAMPLES["dog"], 0, positions=True, back=False)
    assert expected.distance.min() > 1e-3 and expected.largest_distance > 0.1 * expected.typical_norm
    at.toggle(key="back").set_value(True).run()
    check_charts(at, demo.EXAMPLES["dog"], 0, positions=True, back=True)
    assert tr("en", "home.distance.notice.pe") in [c.value for c in at.caption]


def masked_head(x: np.ndarray) -> np.ndarray:
    """One head with the decoder's mask, written here: query i takes a softmax over the keys 0 .. i only."""
    w_q, w_k, w_v = demo.projections()
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / np.sqrt(q.shape[1])
    scores[np.triu_indices(len(x), 1)] = -np.inf
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)) @ v


@pytest.mark.parametrize("example", ["dog", "zh_dog"])
def test_a_causal_mask_without_positions_changes_the_outputs(example):
    """Without positions the head only permutes its outputs (distances 0); switch the causal mask on and the
    shuffled sentence gets other outputs, as a masked head computed here says (Haviv et al., 2022)."""
    at = open_page("home", query={"ex": example})
    sentence = demo.EXAMPLES[example]
    check_charts(at, sentence, 0, positions=False, back=False)
    attention, distance = (c.fig for c in demo_charts(at))
    bar, _ = bars(distance)
    assert bar.max() < 1e-12
    left, right = attention_panels(attention)
    order = demo.shuffle_order(len(demo.tokenize(sentence)), 0)
    assert_matrix(right, left[np.ix_(order, order)], atol=1e-6, what="a permuted copy")

    at.toggle(key="causal").set_value(True).run()
    expected = check_charts(at, sentence, 0, positions=False, back=False, causal=True)
    x = demo.token_embeddings(demo.tokenize(sentence))
    outputs, shuffled = masked_head(x), masked_head(x[order])
    moved = np.linalg.norm(outputs - shuffled[np.argsort(order)], axis=1)
    attention, distance = (c.fig for c in demo_charts(at))
    bar, reference = bars(distance)
    np.testing.assert_allclose(bar, moved, rtol=1e-9, atol=1e-12)
    assert bar.max() > 0.5 * reference.mean()  # on the scale of the outputs, not of rounding
    left, right = attention_panels(attention)
    assert np.abs(right - left[np.ix_(order, order)]).max() > 0.05  # not merely permuted
    captions = [c.value for c in at.caption]
    assert tr("en", "home.attention.notice.causal") in captions and tr("en", "home.distance.notice.causal") in captions
    assert tr("en", "home.demo.kept.none", n=len(order)) in [m.value for m in at.markdown]
    assert not expected.same_prefix.any()


def test_tokens_with_the_same_prefix_keep_their_output_under_the_mask():
    at = open_page("home", query={"ex": "dog", "seed": "41", "causal": "true"}, lang="zh")
    expected = check_charts(at, demo.EXAMPLES["dog"], 41, positions=False, back=False, causal=True)
    bar, _ = bars(demo_charts(at)[1].fig)
    assert bar[2:].max() < 1e-12 < 1e-3 < bar[:2].min()  # "dog the bit the man": from "bit" on, nothing moved
    kept = tr("zh", "home.demo.kept", kept=3, n=5, tokens="`bit` `the` `man`")
    assert kept in [m.value for m in at.markdown]
    assert expected.same_prefix.tolist() == [False, False, True, True, True]
    assert at.toggle(key="causal").label == tr("zh", "home.ctl.causal")


def test_own_sentence_seed_and_toggles_round_trip_through_the_url():
    query = {
        "ex": "own",
        "text": "colourless green ideas sleep furiously",
        "seed": "7",
        "pe": "true",
        "back": "true",
        "causal": "true",
    }
    at = open_page("home", query=query)
    check_charts(at, query["text"], 7, positions=True, back=True, causal=True)
    assert at.radio(key="ex").value == "own"
    assert at.text_input(key="text").value == query["text"]
    assert at.number_input(key="seed").value == 7
    assert at.toggle(key="pe").value is True and at.toggle(key="back").value is True
    assert at.toggle(key="causal").value is True
    assert at.query_params["ex"] == "own"  # the option's code, whatever the language


def test_an_example_from_the_url_and_a_new_seed():
    at = open_page("home", query={"ex": "zh_dog"})
    check_charts(at, demo.EXAMPLES["zh_dog"], 0, positions=False, back=False)
    at.number_input(key="seed").set_value(3).run()
    check_charts(at, demo.EXAMPLES["zh_dog"], 3, positions=False, back=False)
    assert at.query_params["ex"] == "zh_dog"
    assert not at.text_input  # the text box shows only for one's own sentence


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_titles_and_notices_in_each_language(lang):
    """The demo's charts, found by what they are, are titled and labelled in ``lang``, each with its own caption,
    and hold the numbers of the language's first example; the page's sections are those of ``lang``."""
    at = open_page("home", query={"pe": "true"}, lang=lang)
    example = {"en": "dog", "zh": "zh_dog"}[lang]
    check_charts(at, demo.EXAMPLES[example], 0, positions=True, back=False)
    attention, distance = demo_charts(at)
    assert (attention.title, distance.title) == (tr(lang, "home.attention"), tr(lang, "home.distance"))
    assert attention.axes() == (tr(lang, "axis.key_token"), tr(lang, "axis.query_token"))
    assert distance.axes() == (tr(lang, "home.axis.token"), tr(lang, "home.axis.distance"))
    panels = sorted(attention.fig["layout"]["annotations"], key=lambda a: a["x"])  # left panel first
    assert [a["text"] for a in panels] == [tr(lang, "home.attention.written"), tr(lang, "home.attention.shuffled")]
    assert attention.notice == tr(lang, "home.attention.notice.pe")
    assert distance.notice == tr(lang, "home.distance.notice.pe")
    sections = [s.value for s in at.subheader]
    assert set(sections) == {tr(lang, key) for key in ("home.demo", "home.tour", "home.families", "home.more")}
    assert sections[0] == tr(lang, "home.demo")  # the demo opens the page
    assert at.radio(key="ex").label == tr(lang, "home.ctl.example")
    assert at.toggle(key="pe").label == tr(lang, "home.ctl.pe")


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ({"ex": "klingon"}, {"ex": "dog", "seed": 0, "pe": False}),
        ({"seed": "-3", "pe": "maybe"}, {"ex": "dog", "seed": 0, "pe": False}),
        ({"seed": "abc", "back": "2"}, {"ex": "dog", "seed": 0, "back": False}),
        ({"causal": "sometimes"}, {"ex": "dog", "seed": 0, "causal": False}),
    ],
)
def test_nonsense_in_the_url_falls_back(query, shown):
    at = open_page("home", query=query)
    check_charts(at, demo.EXAMPLES["dog"], 0, positions=False, back=False)
    assert {
        key: getattr(at, "radio" if key == "ex" else "number_input" if key == "seed" else "toggle")(key=key).value
        for key in shown
    } == shown


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no words"),
        ("   ,", "single token"),
        ("狗", "'狗' is a single token"),
    ],
)
def test_a_sentence_too_short_to_shuffle_gets_a_message(text, message):
    at = open_page("home", query={"ex": "own", "text": text})
    assert not at.exception
    assert len(at.error) == 1 and message in at.error[0].value
    assert at.error[0].value.startswith(tr("en", "error.input.sentence", message="")[:20])
    assert figures(at) == []
    assert len(at.get("page_link")) > len(PAGE_NAMES)  # the rest of the page still draws


def test_a_very_long_sentence_is_truncated_with_a_notice():
    text = ("the cat sat on the mat " * 500)[:10_000]
    at = open_page("home", query={"ex": "own", "text": text, "pe": "true"})
    expected = check_charts(at, text, 0, positions=True, back=False)
    assert len(expected.tokens) == demo.MAX_TOKENS
    assert [i.value for i in at.info] == [
        tr("en", "home.demo.truncated", total=len(demo.tokenize(text)), shown=demo.MAX_TOKENS)
    ]


def test_the_tour_opens_the_right_views():
    at = open_page("home")
    url_of_file = {path: name for name, path in PAGE_FILES.items()}
    links = {p.proto.label: (p.proto.page, p.proto.query_string) for p in at.get("page_link")}
    expected = {
        "demo": ("", "pe=true"),  # the home page's own path is ""
        "table": ("sinusoidal", ""),
        "distance": ("sinusoidal", "tab=distance"),
        "shift": ("sinusoidal", "tab=shift"),
        "rope": ("rope", ""),
        "alibi": ("alibi", ""),
    }
    if "compare" in PAGE_NAMES:
        expected["compare"] = ("compare", "")
    for step, target in expected.items():
        assert links[tr("en", f"home.tour.{step}.link")] == target
    steps = [m.value for m in at.markdown if m.value.startswith("**") and ".** " in m.value]
    assert steps == [
        tr("en", "home.tour.step", number=i, text=tr("en", f"home.tour.{step}"))
        for i, step in enumerate(expected, start=1)
    ]
    tools = {"inspect", "lab", "compare", "pitfalls", "claims"} & set(PAGE_NAMES)
    assert {url_of_file[PAGE_FILES[name]] for name in tools} <= {page for page, _ in links.values()}
    for name in tools:
        assert tr("en", f"home.more.{name}") in [c.value for c in at.caption]


def test_every_family_card_opens_its_own_family():
    """A card links to its family's page and, on a page that teaches two families (Relative: Shaw and T5), to that
    family's tab: the link's target, opened as a student would, draws that family's own matrix."""
    import posviz

    at = open_page("home")
    by_label = {p.proto.label: p.proto for p in at.get("page_link")}
    for fam in posviz.FAMILIES.values():
        link = by_label[tr("en", f"family.{fam.key}.name")]
        page = fam.page
        assert link.page == page, fam.key
        query = dict(pair.split("=") for pair in link.query_string.split("&") if pair)
        opened = open_page(page, query=query)
        assert_clean(opened)
        if fam.key in ("shaw", "t5"):
            assert opened.session_state["tab.code"] == fam.key
            (matrix_chart,) = [c for c in charts(opened) if c.traces("heatmap")]  # the tab's one matrix
            assert matrix_chart.axes() == (tr("en", "axis.key_position"), tr("en", "axis.query_position"))
            matrix = as_array(matrix_chart.traces("heatmap")[0]["z"])
            expected = fam.build(**{**fam.defaults(), "seq_len": matrix.shape[0]})
            np.testing.assert_array_equal(matrix, expected)  # Shaw's clipped index, or T5's bucket of every pair
    t5 = by_label[tr("en", "family.t5.name")]
    assert (t5.page, t5.query_string) == ("relative", "tab=t5")  # not the Shaw tab the page opens on


@pytest.mark.parametrize(("lang", "example"), [("en", "dog"), ("zh", "zh_dog")])
def test_the_first_example_is_in_the_language_of_the_page(lang, example):
    at = open_page("home", lang=lang)
    check_charts(at, demo.EXAMPLES[example], 0, positions=False, back=False)
    assert at.radio(key="ex").value == example and "ex" not in at.query_params  # the default: not in the link
    at.radio(key="ex").set_value(OWN_EXAMPLE).run()
    assert at.text_input(key="text").value == {"en": "time flies like an arrow", "zh": "光阴似箭，日月如梭"}[lang]


def test_the_example_follows_a_language_switch_until_one_is_chosen():
    at = open_page("home")
    assert at.radio(key="ex").value == "dog"
    at.run()  # (AppTest drops a widget change made right after Home's very first run)
    at.radio(key="lang").set_value("zh").run()  # the sidebar's language switch
    assert at.radio(key="ex").value == "zh_dog"
    assert demo_charts(at)[0].title == tr("zh", "home.attention")
    check_charts(at, demo.EXAMPLES["zh_dog"], 0, positions=False, back=False)
    at.radio(key="ex").set_value("book").run()  # a choice of one's own stays, in either language
    at.radio(key="lang").set_value("en").run()
    assert at.radio(key="ex").value == at.query_params["ex"] == "book"
    check_charts(at, demo.EXAMPLES["book"], 0, positions=False, back=False)


def test_a_link_that_names_an_example_keeps_it_in_the_other_language():
    at = open_page("home", query={"ex": "dog"}, lang="zh")
    assert at.radio(key="ex").value == "dog"
    check_charts(at, demo.EXAMPLES["dog"], 0, positions=False, back=False)
