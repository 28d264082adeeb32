"""``Figures(page).show`` names a figure once: the chart key, the caption and the file stem all come from its key.
Two of its options name figures that one key cannot: ``each`` (one figure per item in the same run) and
``captioned=False`` (figures side by side, captioned together)."""

from __future__ import annotations

import pytest

import posviz.ui as ui

from ._support import tr


@pytest.fixture
def drawn(monkeypatch) -> list[dict]:
    """What ``Figures.show`` hands to ``show``, one dict of keyword arguments per figure."""
    calls: list[dict] = []
    monkeypatch.setattr(ui, "show", lambda fig, **names: calls.append(names))
    return calls


def test_each_item_gets_its_own_chart_key_and_file_under_the_same_caption(drawn):
    for encoding in ("learned", "sin-init"):
        ui.Figures("lab").show("animation", object(), each=encoding)
    assert [c["key"] for c in drawn] == ["animation_learned", "animation_sin-init"]
    assert [c["name"] for c in drawn] == ["lab-animation-learned", "lab-animation-sin-init"]
    assert [c["notice"] for c in drawn] == [tr("en", "lab.animation.notice")] * 2


def test_each_comes_before_the_setting_in_the_file_stem(drawn):
    ui.Figures("usage").show("by_head.query", object(), each="a", suffix="layer3", layer=3)
    assert drawn[0]["key"] == "by_head_query_a"
    assert drawn[0]["name"] == "usage-by-head-query-a-layer3"


def test_an_uncaptioned_figure_has_no_caption_but_keeps_its_names(drawn):
    ui.Figures("inspect").show("side.table.similarity", object(), captioned=False)
    ui.Figures("inspect").show("side.table.similarity", object())
    uncaptioned, captioned = drawn
    assert uncaptioned["notice"] is None
    assert uncaptioned["key"] == captioned["key"] == "side_table_similarity"
    assert uncaptioned["name"] == captioned["name"] == "inspect-side-table-similarity"
    assert captioned["notice"] == "inspect.side.table.similarity.notice"  # no such text: why captioned=False exists
