"""Presentation mode and downloads, on every page: what a teacher projects and what a learner takes home."""

from __future__ import annotations

import pytest

from ._support import EMPTY_PAGES, PAGE_NAMES, assert_clean, figures, open_page, tr

FAMILY_PAGES = [p for p in PAGE_NAMES if p not in EMPTY_PAGES]  # test_inspect and test_lab cover those with content


@pytest.mark.parametrize("page", FAMILY_PAGES)
def test_presentation_mode_from_the_url_enlarges_figures_and_folds_controls(page):
    normal, shown = open_page(page), open_page(page, query={"present": "true"})
    assert_clean(shown)
    assert [t.value for t in shown.toggle if t.key == "present"] == [True]
    assert [t.value for t in normal.toggle if t.key == "present"] == [False]
    big, small = figures(shown), figures(normal)
    assert len(big) == len(small) > 0
    assert all(f["layout"]["font"]["size"] == 20 for f in big)
    assert all(f["layout"].get("font", {}).get("size") != 20 for f in small)
    labels = [e.label for e in shown.expander]
    assert tr("en", "present.controls") in labels
    assert tr("en", "present.controls") not in [e.label for e in normal.expander]


@pytest.mark.parametrize("page", FAMILY_PAGES)
def test_every_figure_offers_its_data_as_csv(page):
    at = open_page(page)
    assert_clean(at)
    buttons = [b for b in at.get("download_button") if b.key != "posviz-handout"]  # the lesson's, not a figure's
    assert len(buttons) == len(figures(at)) > 0
    names = [b.proto.label for b in buttons]
    assert set(names) == {tr("en", "download.csv")}
