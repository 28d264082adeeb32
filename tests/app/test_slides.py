"""Slides: a lesson stepped through one figure at a time, the step in the link.

The oracle of every slide is the page itself without slides: slide k of a tab is the k-th figure that tab draws
in the ordinary view (same data, same title), with that figure's caption, and a tab's slide count is how many
figures it draws there.
"""

from __future__ import annotations

import pytest

from posviz.lessons import claims

from ._support import assert_clean, figures, open_page, tab_codes, title, tr

NEXT, PREVIOUS, SWITCH = "posviz-slide-next", "posviz-slide-previous", "posviz-slides"
#: Captions that are no figure's "what to notice": the controls a tab does not use, a number box's message.
NOT_NOTICES = (":material/info:", ":orange[")


@pytest.fixture(scope="module")
def ordinary():
    """``ordinary(page, tab, lang="en", **query)``: the figures and captions of a tab in the ordinary view."""
    seen = {}

    def get(page, tab, lang="en", **query):
        key = (page, tab, lang, tuple(sorted(query.items())))
        if key not in seen:
            at = open_page(page, query={"lang": lang, **query, **({"tab": tab} if tab else {})})
            assert_clean(at)
            notices = [c.value for c in at.caption if not c.value.startswith(NOT_NOTICES)]
            seen[key] = (figures(at), notices)
        return seen[key]

    return get


def slide_text(at) -> list[str]:
    """The markdown of the slide: its bar's position line and its caption."""
    return [m.value for m in at.markdown]


def assert_slide(at, expected_fig, caption: str | None, position: str) -> None:
    """Exactly one chart, the expected one; its caption and the bar's position line on the slide."""
    assert_clean(at)
    shown = figures(at)
    assert len(shown) == 1, f"{len(shown)} charts sent in slide mode"
    assert title(shown[0]) == title(expected_fig)
    assert shown[0]["data"] == expected_fig["data"]
    texts = slide_text(at)
    assert position in texts, (position, texts[:3])
    if caption:
        assert caption in texts


def position(page, tab, k, n, lang="en"):
    return tr(lang, "slides.position", page=tr(lang, f"page.{page}"), tab=tr(lang, f"{page}.tab.{tab}"), k=k, n=n)


@pytest.mark.parametrize(
    ("page", "tab", "k", "lang"),
    [("sinusoidal", "table", 2, "en"), ("sinusoidal", "distance", 1, "zh"), ("alibi", "row", 2, "en")],
)
def test_a_link_opens_its_slide_and_draws_only_that_figure(ordinary, page, tab, k, lang):
    figs, captions = ordinary(page, tab, lang)
    assert len(figs) >= k
    at = open_page(page, query={"tab": tab, "slide": str(k), "lang": lang})
    assert_slide(at, figs[k - 1], captions[k - 1], position(page, tab, k, len(figs), lang))
    assert at.query_params["slide"] == str(k)


def test_the_same_link_names_the_same_slide_in_both_languages():
    query = {"n": "64", "d": "32", "tab": "distance", "slide": "2"}
    en, zh = (
        open_page("sinusoidal", query={**query, "lang": "en"}),
        open_page("sinusoidal", query={**query, "lang": "zh"}),
    )
    (a,), (b,) = figures(en), figures(zh)
    numbers = [[trace.get(axis) for axis in ("x", "y", "z")] for trace in a["data"]]
    assert numbers == [[trace.get(axis) for axis in ("x", "y", "z")] for trace in b["data"]]
    assert title(a) == tr("en", "sinusoidal.spread")
    assert title(b) == tr("zh", "sinusoidal.spread")


def test_next_and_previous_step_through_a_tab_then_into_the_next_and_back(ordinary):
    table, table_captions = ordinary("sinusoidal", "table")
    distance, distance_captions = ordinary("sinusoidal", "distance")
    at = open_page("sinusoidal", query={"slide": "1"})
    assert_slide(at, table[0], table_captions[0], position("sinusoidal", "table", 1, len(table)))
    walk = [(1, "table")] + [(k, "table") for k in range(2, len(table) + 1)] + [(1, "distance"), (2, "distance")]
    for k, tab in walk[1:]:
        at.button(key=NEXT).click().run()
        figs, caps = (table, table_captions) if tab == "table" else (distance, distance_captions)
        assert_slide(at, figs[k - 1], caps[k - 1], position("sinusoidal", tab, k, len(figs)))
        assert at.query_params["slide"] == str(k)
        assert at.query_params.get("tab") == (None if tab == "table" else tab)
    for k, tab in reversed(walk[:-1]):
        at.button(key=PREVIOUS).click().run()
        figs, caps = (table, table_captions) if tab == "table" else (distance, distance_captions)
        assert_slide(at, figs[k - 1], caps[k - 1], position("sinusoidal", tab, k, len(figs)))
        assert at.query_params["slide"] == str(k)


def test_previous_from_a_tabs_first_slide_opens_the_last_slide_of_the_tab_before(ordinary):
    """``relative`` has two tabs: Shaw's, then T5's; a step back from T5's first figure lands on Shaw's last."""
    shaw, captions = ordinary("relative", "shaw")
    at = open_page("relative", query={"tab": "t5", "slide": "1"})
    at.button(key=PREVIOUS).click().run()
    assert_slide(
        at,
        shaw[-1],
        captions[-1],
        tr(
            "en",
            "slides.position",
            page=tr("en", "page.relative"),
            tab=tr("en", "relative.shaw"),
            k=len(shaw),
            n=len(shaw),
        ),
    )
    assert at.query_params["slide"] == str(len(shaw))
    assert "tab" not in at.query_params  # the first tab is the link's default


def test_a_tab_without_figures_is_passed_over_in_the_direction_of_the_step(ordinary):
    """Pitfalls' "shape" tab shows code and torch's error, no figure: the deck goes from "scale" to "rope"."""
    scale, _ = ordinary("pitfalls", "scale")
    shape, _ = ordinary("pitfalls", "shape")
    rope, rope_captions = ordinary("pitfalls", "rope")
    assert not shape and scale and rope
    at = open_page("pitfalls", query={"tab": "scale", "slide": str(len(scale))})
    at.button(key=NEXT).click().run()
    assert_slide(
        at,
        rope[0],
        rope_captions[0],
        tr(
            "en", "slides.position", page=tr("en", "page.pitfalls"), tab=tr("en", "pitfalls.tab.rope"), k=1, n=len(rope)
        ),
    )
    assert at.query_params["tab"] == "rope"
    at.button(key=PREVIOUS).click().run()
    assert title(figures(at)[0]) == title(scale[-1]) and at.query_params["tab"] == "scale"


def test_a_tab_without_figures_opened_by_its_link_says_so():
    at = open_page("pitfalls", query={"tab": "shape", "slide": "1"})
    assert_clean(at)
    assert not figures(at)
    assert tr("en", "slides.none") in [i.value for i in at.info]


def test_the_deck_stops_at_its_first_and_last_slide(ordinary):
    norms, _ = ordinary("sinusoidal", "norms")  # the last tab
    at = open_page("sinusoidal", query={"tab": "norms", "slide": str(len(norms))})
    at.button(key=NEXT).click().run()
    assert title(figures(at)[0]) == title(norms[-1]) and at.query_params["tab"] == "norms"
    assert tr("en", "slides.last") in [i.value for i in at.info]
    at = open_page("sinusoidal", query={"slide": "1"})
    at.button(key=PREVIOUS).click().run()
    assert at.query_params["slide"] == "1" and "tab" not in at.query_params
    assert tr("en", "slides.first") in [i.value for i in at.info]


@pytest.mark.parametrize("given", ["99", "3"])
def test_a_slide_past_the_end_shows_the_last_with_a_notice(ordinary, given):
    figs, captions = ordinary("sinusoidal", "table")
    n = len(figs)
    assert int(given) > n
    at = open_page("sinusoidal", query={"slide": given})
    assert_slide(at, figs[-1], captions[-1], position("sinusoidal", "table", n, n))
    assert at.query_params["slide"] == str(n)
    assert [w.value for w in at.warning] == [tr("en", "slides.missing", given=given, n=n, shown=n)]


@pytest.mark.parametrize("given", ["0", "-2", "abc", "2.5", ""])
def test_a_slide_that_is_not_a_number_shows_the_first_with_a_notice(ordinary, given):
    figs, captions = ordinary("sinusoidal", "table")
    at = open_page("sinusoidal", query={"slide": given})
    assert_slide(at, figs[0], captions[0], position("sinusoidal", "table", 1, len(figs)))
    assert at.query_params["slide"] == "1"
    assert [w.value for w in at.warning] == [tr("en", "slides.unreadable", given=given, n=len(figs))]


def test_a_valid_slide_link_says_nothing():
    at = open_page("sinusoidal", query={"slide": "2"})
    assert_clean(at)
    assert not at.warning and not at.toast


def test_the_switch_turns_slides_and_presentation_mode_on_and_gives_the_page_back(ordinary):
    figs, _ = ordinary("sinusoidal", "distance")
    at = open_page("sinusoidal", query={"tab": "distance"})
    assert len(figures(at)) == len(figs) > 1
    at.toggle(key=SWITCH).set_value(True).run()
    assert_clean(at)
    assert at.query_params["slide"] == "1" and at.query_params["tab"] == "distance"
    assert at.toggle(key="present").value is True
    (shown,) = figures(at)
    assert shown["data"] == figs[0]["data"]
    at.toggle(key=SWITCH).set_value(False).run()
    assert_clean(at)
    assert "slide" not in at.query_params
    assert at.toggle(key="present").value is False  # as it was before the slides
    assert [f["data"] for f in figures(at)] == [f["data"] for f in figs]


def test_leaving_slides_keeps_presentation_mode_that_was_on_before():
    at = open_page("sinusoidal", query={"present": "true"})
    at.toggle(key=SWITCH).set_value(True).run()
    at.toggle(key=SWITCH).set_value(False).run()
    assert at.toggle(key="present").value is True


# Pages whose figures no tab bar closes (a page without tabs, Myth or fact's selector): the frame draws their slide
# after the page has run (``app.py`` calls ``posviz.ui.finish_page()``).


def test_a_page_without_tabs_is_one_deck_of_its_figures(ordinary):
    figs, _ = ordinary("xlnet", None)
    n = len(figs)
    assert n >= 2
    at = open_page("xlnet", query={"slide": "2"})
    assert_slide(at, figs[1], None, tr("en", "slides.position.page", page=tr("en", "page.xlnet"), k=2, n=n))
    at.button(key=PREVIOUS).click().run()
    assert title(figures(at)[0]) == title(figs[0]) and at.query_params["slide"] == "1"
    at = open_page("xlnet", query={"slide": "50"})
    assert title(figures(at)[0]) == title(figs[-1]) and at.query_params["slide"] == str(n)


def test_myth_or_fact_steps_from_claim_to_claim_through_its_selector(ordinary):
    first, _ = ordinary("claims", "exponent")
    second, captions = ordinary("claims", "norm")
    at = open_page("claims", query={"tab": "exponent", "slide": str(len(first))})
    assert title(figures(at)[0]) == title(first[-1])
    at.button(key=NEXT).click().run()
    label = f"{tr('en', 'claims.topic.' + claims.CLAIMS['norm'].topic)} · {tr('en', 'claims.tab.norm')}"
    assert_slide(
        at,
        second[0],
        None,
        tr("en", "slides.position", page=tr("en", "page.claims"), tab=label, k=1, n=len(second)),
    )
    assert at.query_params["tab"] == "norm" and at.query_params["slide"] == "1"


def test_in_presentation_mode_a_step_into_the_next_tab_sets_the_selector_to_its_code(ordinary):
    """On a projector a selector replaces the row of tabs, and it holds the tab's code, not its label: a step past
    the last slide of a tab must open the next one through that value, not through the link alone."""
    table, _ = ordinary("sinusoidal", "table")
    distance, captions = ordinary("sinusoidal", "distance")
    at = open_page("sinusoidal", query={"slide": str(len(table)), "present": "true"})
    assert_clean(at)
    # what a step will write into the tab widget's state, per tab: the selector's options are the codes
    assert at.session_state["posviz.slides"]["values"] == {code: code for code in tab_codes("sinusoidal")}
    at.button(key=NEXT).click().run()
    assert at.session_state["tab"] == "distance"
    assert_slide(at, distance[0], captions[0], position("sinusoidal", "distance", 1, len(distance)))
