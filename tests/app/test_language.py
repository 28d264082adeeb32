"""Both languages: every page renders in English and in Chinese, and what it shows (title, teaching text, figure
titles, control labels, captions) is the catalog text of the chosen language."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from ._support import (
    EMPTY_PAGES,
    LANGS,
    PAGE_NAMES,
    assert_clean,
    catalog,
    default_titles,
    figures,
    heatmap_z,
    open_page,
    teaching_text,
    title,
    tr,
)

CONTROL_KINDS = ("slider", "select_slider", "number_input", "toggle", "radio")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGE_NAMES)
def test_page_in_each_language(default_view, page, lang):
    at = default_view(page, lang)
    assert_clean(at)
    assert [t.value for t in at.title] == [tr(lang, f"page.{page}")]
    assert teaching_text(page, lang).strip() in [m.value.strip() for m in at.markdown]
    titles = default_titles(page, lang)  # a page's first figures; its lesson tests check the rest
    figs = figures(at)
    assert [title(f) for f in figs][: len(titles)] == titles
    params = {v for k, v in catalog(lang).items() if k.startswith(("param.", f"{page}.ctl."))}
    labels = [w.label for kind in CONTROL_KINDS for w in getattr(at.main, kind)]
    assert all(label in params for label in labels), f"labels not from the {lang} catalog: {labels}"
    if page not in EMPTY_PAGES:  # no figure, so no caption, until something is loaded or trained
        assert at.caption and all(from_catalog(c.value, lang) for c in at.caption), [c.value for c in at.caption]


def from_catalog(text: str, lang: str) -> bool:
    """Whether ``text`` is an entry of the ``lang`` catalog, its ``{fields}`` filled with anything."""
    return text in set(catalog(lang).values()) or any(pattern.fullmatch(text) for pattern in templates(lang))


@functools.cache
def templates(lang: str) -> tuple[re.Pattern, ...]:
    """Every catalog entry with ``{fields}`` as a pattern in which each field matches any text."""
    return tuple(
        re.compile(".+?".join(re.escape(part) for part in re.split(r"\{[a-z_0-9]*(?::[^}]*)?\}", entry)), re.S)
        for entry in catalog(lang).values()
        if re.search(r"\{[a-z_0-9]*(?::[^}]*)?\}", entry)
    )


@pytest.mark.parametrize("page", [p for p in PAGE_NAMES if p != "home"])
def test_chinese_view_shows_chinese_and_the_same_numbers(default_view, page):
    en, zh = default_view(page, "en"), default_view(page, "zh")
    assert tr("zh", f"page.{page}") != tr("en", f"page.{page}")
    for fig_en, fig_zh in zip(figures(en), figures(zh), strict=True):
        assert title(fig_en) != title(fig_zh)
        if fig_en["data"][0]["type"] == "heatmap":
            np.testing.assert_array_equal(heatmap_z(fig_en), heatmap_z(fig_zh))


def test_switching_the_language_redraws_in_place():
    at = open_page("rope", query={"tab": "scores"})
    at.slider(key="head_dim").set_value(16).run()
    before = heatmap_z(figures(at)[0])
    at.radio(key="lang").set_value("zh").run()
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("zh", "page.rope")]
    assert title(figures(at)[0]) == tr("zh", "rope.scores")
    assert at.slider(key="head_dim").value == 16 and at.session_state["tab.code"] == "scores"  # the view is kept
    np.testing.assert_array_equal(before, heatmap_z(figures(at)[0]))
    at.radio(key="lang").set_value("en").run()
    assert [t.value for t in at.title] == [tr("en", "page.rope")]


@pytest.mark.parametrize(("locale", "lang"), [("zh-CN", "zh"), ("zh-TW", "zh"), ("en-GB", "en"), ("de-DE", "en")])
def test_default_language_follows_the_browser(locale, lang):
    at = open_page("home", locale=locale)
    assert_clean(at)
    assert at.radio(key="lang").value == lang
    assert [t.value for t in at.title] == [tr(lang, "page.home")]


def test_language_chosen_in_the_sidebar_beats_the_browser():
    at = open_page("home", locale="zh-CN", lang="en")
    assert [t.value for t in at.title] == [tr("en", "page.home")]
    at = open_page("xlnet", query={"lang": "en"}, locale="zh-CN")
    assert [t.value for t in at.title] == [tr("en", "page.xlnet")]
