"""A link never breaks: values a control cannot take keep the reader on the page, show the defaults and are named in
one notice, with the keys that are no setting of the page; the same holds for every link a session opens, not
only its first. A link whose values are all used says nothing."""

from __future__ import annotations

import json
import re

import pytest

from posviz.ui import link, widgets

from ._support import LANGS, PAGE_FILES, PAGE_NAMES, ROOT, assert_clean, open_page, tab_codes, tr

#: Widgets whose key is a URL key (a number box over a slider has the slider's key plus ``.exact``).
INPUT_KINDS = ("slider", "select_slider", "number_input", "toggle", "radio", "selectbox", "multiselect", "text_input")
NUMERIC_KINDS = ("slider", "select_slider", "number_input")
EXACT = ".exact"


def toasts(at) -> list[str]:
    return [t.proto.body for t in at.toast]


def notice(lang: str, dropped: str = "", unknown: str = "") -> list[str]:
    """The link notice as the catalog words it: the values not used, then the keys that are no setting."""
    parts = [tr(lang, "link.ignored", values=dropped)] if dropped else []
    parts += [tr(lang, "link.unknown", keys=unknown)] if unknown else []
    return ["\n\n".join(parts)] if parts else []  # one notice, a paragraph each


def title(at) -> list[str]:
    return [t.value for t in at.title]


@pytest.mark.parametrize(
    ("page", "query", "dropped"),
    [
        ("sinusoidal", {"n": "40000", "d": "abc", "layout": "halves", "base": "100"}, "n=40000, d=abc"),
        ("sinusoidal", {"layout": "nope", "tab": "zzz", "k": "5"}, "layout=nope, tab=zzz"),
        ("lab", {"enc": ["bogus"], "steps": "30"}, "enc=bogus"),
        ("alibi", {"heads": "0", "len": "64"}, "heads=0"),
        ("sinusoidal", {"n": "inf", "d": "64"}, "n=inf"),
        ("lab", {"seed": "-Infinity", "steps": "NaN"}, "seed=-Infinity, steps=NaN"),
        ("sinusoidal", {"n": "63.5", "d": "64"}, "n=63.5"),  # a whole number only: 63.5 is not 63
        ("rope", {"head_dim": "7"}, "head_dim=7"),  # the slider steps by 2: an odd head is not one of its values
    ],
)
def test_values_a_link_cannot_set_are_named_once(page, query, dropped):
    at = open_page(page, query=query)
    assert_clean(at)
    assert title(at) == [tr("en", f"page.{page}")]
    assert toasts(at) == notice("en", dropped)
    at.run()
    assert toasts(at) == []  # said once per link, not on every rerun


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("sinusoidal", {"layout": "interleaved", "tab": "table", "n": "128", "base": "10000", "present": "true"}),
        ("relative", {"tab": "t5", "t5_len": "40"}),
        ("home", {"lang": "zh"}),
        ("sinusoidal", {"n": "1e3", "base": "500,000"}),  # numbers as people write them
        ("sinusoidal", {"tab": "table", "k": "5"}),  # k waits in the link for the shift tab
        ("compare", {"tab": "side", "b": "rope", "b_rope_base": "500000"}),  # keys built at run time are known
    ],
)
def test_a_link_that_is_used_says_nothing(page, query):
    at = open_page(page, query=query)
    assert_clean(at)
    assert toasts(at) == []


@pytest.mark.parametrize("lang", LANGS)
def test_the_notice_is_in_the_links_language(lang):
    at = open_page("sinusoidal", query={"n": "abc", "method": "rope", "lang": lang})
    assert title(at) == [tr(lang, "page.sinusoidal")]
    assert toasts(at) == notice(lang, "n=abc", "method=rope")


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_unknown_keys_are_named(page):
    """``method=`` is no setting of any page; ``k`` is one of Sinusoidal's, not of the Learned page's."""
    query = {"method": "yarn"} | ({"k": "5"} if page == "learned" else {})
    at = open_page(page, query=query)
    assert_clean(at)
    assert title(at) == [tr("en", f"page.{page}")]
    unknown = "method=yarn, k=5" if page == "learned" else "method=yarn"
    assert toasts(at) == notice("en", unknown=unknown)
    assert "method" not in at.query_params  # named once, then gone from the address bar
    at.run()
    assert toasts(at) == [] and "method" not in at.query_params


def test_an_unknown_key_leaves_the_address_bar_and_the_views_values_stay():
    at = open_page("alibi", query={"method": "foo", "heads": "12", "tab": "row"})
    assert toasts(at) == notice("en", unknown="method=foo")
    assert dict(at.query_params) == {"heads": "12", "tab": "row"}


@pytest.mark.parametrize("lang", LANGS)
def test_a_slide_that_is_no_number_gets_one_notice(lang):
    """The slides say why ``slide=abc`` is not used and which slide is shown: the link's notice does not repeat it."""
    at = open_page("alibi", query={"slide": "abc", "lang": lang})
    assert_clean(at)
    assert toasts(at) == []
    n = 2  # the open tab's figures: the slope of each head and the bias matrix
    assert [w.value for w in at.warning] == [tr(lang, "slides.unreadable", given="abc", n=n)]


# ---------------------------------------------------------------------------------------- every link of a session


def test_a_second_link_in_the_same_session_is_read_and_checked():
    """The browser's back button, or a link the app opens on the page it shows: a new query string on a page that
    has already run. Its values set the controls again, and its bad values are named again (the first link was
    checked once, and a second ``n=inf`` raised "OverflowError: cannot convert float infinity to integer")."""
    at = open_page("sinusoidal", query={"n": "64", "base": "500000"})
    assert_clean(at)
    assert at.number_input(key="n").value == 64 and toasts(at) == []
    at.query_params.clear()
    at.query_params.update({"n": "inf", "base": "1000"})
    at.run()
    assert_clean(at)
    assert at.number_input(key="n").value == 128  # the default: infinity is no number of positions
    assert at.number_input(key="base.exact").value == 1000  # the new link's base
    assert toasts(at) == notice("en", "n=inf")
    at.query_params.clear()
    at.query_params.update({"n": "32"})  # back to a link without a base: the base is the default again
    at.run()
    assert_clean(at)
    assert at.number_input(key="n").value == 32 and at.number_input(key="base.exact").value == 10_000
    assert toasts(at) == []


def test_a_link_to_another_page_in_the_same_session_is_checked():
    """A page opened from the app (``st.page_link`` with a query) is a link like the first one."""
    at = open_page("home", query={"seed": "7"})
    assert_clean(at)
    at.query_params.clear()
    at.query_params.update({"n": "inf", "d": "64", "method": "x"})
    at.switch_page(PAGE_FILES["sinusoidal"]).run()
    assert_clean(at)
    assert title(at) == [tr("en", "page.sinusoidal")]
    assert at.number_input(key="n").value == 128 and at.slider(key="d").value == 64
    assert toasts(at) == notice("en", "n=inf", "method=x")


# ------------------------------------------------------------------------------------- every control of every page


def views(page: str) -> tuple[str | None, ...]:
    return tab_codes(page) or (None,)


def open_view(page: str, code: str | None, query: dict | None = None, **kwargs):
    return open_page(page, query=({"tab": code} if code else {}) | (query or {}), **kwargs)


def numeric_controls(at) -> dict[str, float]:
    """The URL keys of the numeric controls a view shows, with their values (a box over a slider counts once)."""
    found: dict[str, float] = {}
    for kind in NUMERIC_KINDS:
        for w in getattr(at.main, kind):
            if w.key:
                found.setdefault(w.key.removesuffix(EXACT), float(w.value))
    return found


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_numeric_control_refuses_infinity_from_a_link(page):
    """Every numeric control of every view, given ``inf`` by a link with a key that is no setting: the page stays,
    each control shows the value it shows when the view opens plainly, and one notice names them all."""
    for code in views(page):
        controls = numeric_controls(open_view(page, code))
        at = open_view(page, code, {key: "inf" for key in controls} | {"method": "x"})
        assert_clean(at)
        assert title(at) == [tr("en", f"page.{page}")]
        assert numeric_controls(at) == controls, code
        assert toasts(at) == notice("en", ", ".join(f"{key}=inf" for key in controls), "method=x"), code


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_every_control_key_is_a_setting_of_its_page(page):
    """The keys read from the source (``link.known_keys``) hold every key the page's controls have, in every view,
    so no control's value is ever called "not a setting of this page"."""
    script = PAGE_FILES[page]
    for code in views(page):
        at = open_view(page, code)
        keys = {w.key.removesuffix(EXACT) for kind in INPUT_KINDS for w in getattr(at, kind) if w.key}
        assert {key for key in keys | {"tab", "lang", "present"} if not link.is_known(key, script)} == set(), code
    assert not link.is_known("method", script)


# ---------------------------------------------------------------------------------------------- catalog strings


def test_link_strings_are_in_both_languages_and_fill_the_same_fields():
    files = {
        lang: json.loads((ROOT / "assets" / "i18n" / lang / "links.json").read_text(encoding="utf-8")) for lang in LANGS
    }
    assert files["en"].keys() == files["zh"].keys()
    for key in files["en"]:
        fields = {lang: set(re.findall(r"\{(\w+)\}", files[lang][key])) for lang in LANGS}
        assert fields["en"] == fields["zh"], key


def test_the_keys_of_a_pages_controls_are_read_from_every_control_method():
    """``widgets.Controls`` names a control by its first argument; the source reader looks there for each method
    that draws one (the others only look up its texts)."""
    drawing = {name for name, value in vars(widgets.Controls).items() if callable(value) and not name.startswith("_")}
    assert drawing - {"label", "help"} == link.CONTROL_METHODS
