"""A shared link whose values a control cannot take shows the defaults and says, once, which values it dropped;
a link whose values are all used says nothing."""

from __future__ import annotations

import pytest

from ._support import assert_clean, open_page, tr


def toasts(at) -> list[str]:
    return [t.proto.body for t in at.toast]


@pytest.mark.parametrize(
    ("page", "query", "dropped"),
    [
        ("sinusoidal", {"n": "40000", "d": "abc", "layout": "halves", "base": "100"}, "n=40000, d=abc"),
        ("sinusoidal", {"layout": "nope", "tab": "zzz", "k": "5"}, "layout=nope, tab=zzz"),
        ("lab", {"enc": ["bogus"], "steps": "30"}, "enc=bogus"),
        ("alibi", {"heads": "0", "len": "64"}, "heads=0"),
        ("sinusoidal", {"n": "inf", "d": "64"}, "n=inf"),  # number boxes cannot read infinity at all
        ("lab", {"seed": "-Infinity", "steps": "NaN"}, "seed=-Infinity, steps=NaN"),
    ],
)
def test_values_a_link_cannot_set_are_named_once(page, query, dropped):
    at = open_page(page, query=query)
    assert_clean(at)
    assert toasts(at) == [tr("en", "link.ignored", values=dropped)]
    at.run()
    assert toasts(at) == []  # said once per session, not on every rerun


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("sinusoidal", {"layout": "interleaved", "tab": "table", "n": "128", "base": "10000", "present": "true"}),
        ("relative", {"tab": "t5", "t5_len": "40"}),
        ("home", {"lang": "zh"}),
        ("learned", {"n": "64", "k": "5"}),  # k belongs to no control here: it is left alone, not reported
    ],
)
def test_a_link_that_is_used_says_nothing(page, query):
    at = open_page(page, query=query)
    assert_clean(at)
    assert toasts(at) == []


def test_the_notice_is_in_the_links_language():
    at = open_page("sinusoidal", query={"n": "abc", "lang": "zh"})
    assert toasts(at) == [tr("zh", "link.ignored", values="n=abc")]
