"""Both languages: every page renders in English and in Chinese, and every string it shows (title, teaching text,
tab labels, figure titles, axes and legends, control labels, captions) is text of the chosen language's catalog."""

from __future__ import annotations

import re

import numpy as np
import pytest

from posviz.lessons import attention_demo, precision
from posviz.models import rope_configs

from ._support import (
    EMPTY_PAGES,
    LANGS,
    PAGE_NAMES,
    as_array,
    assert_clean,
    catalog,
    chart,
    charts,
    from_catalog,
    heatmap_z,
    open_page,
    says,
    tab_codes,
    teaching_text,
    tr,
    visible_strings,
)

CONTROL_KINDS = ("slider", "select_slider", "number_input", "toggle", "radio")
#: The label of each page's tabs (``lazy_tabs``' ``label``), for the pages whose tabs are there from the start.
TAB_LABELS = {"relative": "{page}.{code}"}
#: Pages whose tabs appear only once something is loaded or trained, or whose "tabs" are a menu of many claims.
NO_TAB_VISIT = ("inspect", "lab", "claims")


def neutral() -> set[str]:
    """What a page shows the same in every language: names (models, number formats, the lab's encodings as code),
    the example sentences of Home's demo (data, in their own language), formulas used as labels."""
    from posviz.lab import ENCODINGS

    return {
        *rope_configs.PRESET_NAMES.values(),
        *precision.DTYPES,
        *ENCODINGS,
        *attention_demo.EXAMPLES.values(),
        "‖PE(p)‖",
        "i = j",
    }


def reads_in(text: str, lang: str, names: set[str]) -> bool:
    """Whether ``text`` is made of the ``lang`` catalog: an entry (``from_catalog``) or a name of ``names``, or one
    of the ways a page joins them: lines, an icon before one (``:material/info: ...``), a quote or a list item
    (``> ...``, ``- ...``), small print or a badge before a text (``:small[...]``, ``:red-badge[...] ...``), a note
    under a title (``...<br><sup>...</sup>``), parts joined by `` · ``, a side letter (``A · ...``), a name with
    its settings (``Sinusoidal (Base 100)``: a catalog label and its number)."""
    if from_catalog(text, lang) or text in names or re.fullmatch(r"[A-Z]", text):
        return True
    if "\n" in text:
        return all(reads_in(line, lang, names) for line in text.splitlines() if line.strip())
    if re.match(r":material/\w+: |> |- ", text):
        return reads_in(text.split(" ", 1)[1], lang, names)
    if (small := re.fullmatch(r":small\[(.*)\]", text, re.S)) is not None:
        return reads_in(small[1], lang, names)
    if (badge := re.fullmatch(r":[a-z]+-badge\[(.*?)\] (.*)", text, re.S)) is not None:
        return all(reads_in(part, lang, names) for part in badge.groups())
    if (note := re.fullmatch(r"(.*)<br><sup>(.*)</sup>", text, re.S)) is not None:
        return all(reads_in(part, lang, names) for part in note.groups())
    if " · " in text:
        return all(reads_in(part, lang, names) for part in text.split(" · "))
    if (settings := re.fullmatch(r"(.+) \((.+)\)", text)) is not None:
        name, listed = settings.groups()
        values = [re.fullmatch(r"(.+) (-?[\d.e+]+)", item) for item in listed.split(tr(lang, "list.sep"))]
        return reads_in(name, lang, names) and all(v and from_catalog(v[1], lang) for v in values)
    return False


def shown_strings(page: str, lang: str) -> tuple[list[tuple[str, str]], list]:
    """Every string ``page`` shows in ``lang`` over a visit of each of its tabs (but the language switch, which
    names every language in its own), and the charts of each tab."""
    at = open_page(page, lang=lang)
    assert_clean(at)
    strings, drawn = visible_strings(at), [charts(at)]
    codes = () if page in NO_TAB_VISIT else tab_codes(page)
    for code in codes[1:]:  # the first tab is open already
        at.session_state["tab"] = tr(lang, TAB_LABELS.get(page, "{page}.tab.{code}").format(page=page, code=code))
        at.run()
        assert_clean(at)
        assert at.session_state["tab.code"] == code
        strings += visible_strings(at)
        drawn.append(charts(at))
    return [(where, text) for where, text in strings if not where.startswith("radio lang")], drawn


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGE_NAMES)
def test_page_in_each_language(default_view, page, lang):
    at = default_view(page, lang)
    assert_clean(at)
    assert [t.value for t in at.title] == [tr(lang, f"page.{page}")]
    assert teaching_text(page, lang).strip() in [m.value.strip() for m in at.markdown]
    params = {v for k, v in catalog(lang).items() if k.startswith(("param.", f"{page}.ctl."))}
    labels = [w.label for kind in CONTROL_KINDS for w in getattr(at.main, kind)]
    assert all(label in params for label in labels), f"labels not from the {lang} catalog: {labels}"
    strings, drawn = shown_strings(page, lang)
    teaching = teaching_text(page, lang).strip()
    names = neutral()
    foreign = [(where, text) for where, text in strings if text.strip() != teaching and not reads_in(text, lang, names)]
    assert not foreign, f"not text of the {lang} catalog: {foreign}"
    # every figure of every tab has its "what to notice" caption under it, in the same language
    untold = [c.title for tab in drawn for c in tab if not (c.notice and from_catalog(c.notice, lang))]
    assert not untold, f"figures without a caption of the {lang} catalog: {untold}"
    if page not in EMPTY_PAGES:  # no figure until something is loaded or trained
        assert drawn[0], "the default view draws no figure"


@pytest.mark.parametrize("page", [p for p in PAGE_NAMES if p != "home"])
def test_chinese_view_shows_chinese_and_the_same_numbers(default_view, page):
    """Each chart of the default view, matched across the languages by the key the page gives it, is titled with the
    Chinese text of the catalog entry its English title comes from, and holds the same numbers."""
    en, zh = ({c.key: c for c in charts(default_view(page, lang))} for lang in LANGS)
    assert tr("zh", f"page.{page}") != tr("en", f"page.{page}")
    assert set(en) == set(zh) and "" not in en
    for key, chart_en in en.items():
        chart_zh = zh[key]
        assert chart_en.title != chart_zh.title
        same_entry = [k for k in catalog("en") if says(chart_en.title, "en", k) and says(chart_zh.title, "zh", k)]
        assert same_entry, f"{key}: {chart_zh.title!r} does not translate {chart_en.title!r}"
        assert [t["type"] for t in chart_en.fig["data"]] == [t["type"] for t in chart_zh.fig["data"]]
        for trace_en, trace_zh in zip(chart_en.fig["data"], chart_zh.fig["data"], strict=True):
            if trace_en["type"] == "heatmap":
                np.testing.assert_array_equal(as_array(trace_en["z"]), as_array(trace_zh["z"]), err_msg=key)


def test_switching_the_language_redraws_in_place():
    at = open_page("rope", query={"tab": "scores"})
    at.slider(key="head_dim").set_value(16).run()
    before = heatmap_z(chart(charts(at), "en", "rope.scores").fig)
    at.radio(key="lang").set_value("zh").run()
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("zh", "page.rope")]
    assert at.slider(key="head_dim").value == 16 and at.session_state["tab.code"] == "scores"  # the view is kept
    np.testing.assert_array_equal(before, heatmap_z(chart(charts(at), "zh", "rope.scores").fig))
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
