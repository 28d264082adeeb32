"""The Pitfalls page: the charts hold the correct and the buggy version computed independently here, every tab
draws in both languages, a link reproduces a view, and nonsense in the URL falls back to the defaults."""

from __future__ import annotations

import numpy as np
import pytest

import posviz

from ._support import as_array, assert_clean, figures, heatmap_z, open_page, title, tr, visit_tabs, widget

TABS = ["exponent", "axes", "zero", "scale", "shape", "rope", "alibi", "index", "float16"]


def doubled_formula(n, d, base=10000.0, shift_cos=False):
    """The buggy loop, written out: column i (i even) and i + 1 use base^(2i/d); shifted cos: base^(2(i+1)/d)."""
    table = np.empty((n, d))
    pos = np.arange(n)[:, None]
    for i in range(0, d, 2):
        table[:, i] = np.sin(pos[:, 0] / base ** (2 * i / d))
        table[:, i + 1] = np.cos(pos[:, 0] / base ** (2 * (i + 1 if shift_cos else i) / d))
    return table


def ys(fig) -> list[np.ndarray]:
    return [as_array(trace["y"]) for trace in fig["data"]]


def test_default_view_shows_the_doubled_exponent(default_view):
    at = default_view("pitfalls")
    assert_clean(at)
    ok, bug, motion, radius = figures(at)
    np.testing.assert_allclose(heatmap_z(ok), posviz.sinusoidal(128, 128), atol=1e-6)
    np.testing.assert_allclose(heatmap_z(bug), doubled_formula(128, 128), atol=1e-6)
    good, bad = ys(motion)
    np.testing.assert_allclose(bad, np.ptp(doubled_formula(128, 128), axis=0), atol=1e-12)
    # the upper half of the buggy table hardly moves, the correct one still does
    assert (bad[64:] < 0.05).mean() > 0.8 and (good[64:] < 0.05).mean() < 0.5
    assert np.abs(ys(radius)[1]).max() < 1e-12  # doubled: pairs still share a frequency
    assert title(motion) == tr("en", "pitfalls.exponent.motion", n=128)


def test_url_opens_the_shifted_cos_and_sizes():
    at = open_page("pitfalls", query={"bug": "cos_shift", "n": "40", "d": "16"})
    assert_clean(at)
    assert widget(at, "bug").value == "cos_shift" and widget(at, "n").value == 40 and widget(at, "d").value == 16
    _, bug, _, radius = figures(at)
    np.testing.assert_allclose(heatmap_z(bug), doubled_formula(40, 16, shift_cos=True), atol=1e-6)
    table = doubled_formula(40, 16, shift_cos=True)
    expected = np.abs(table[:, 0::2] ** 2 + table[:, 1::2] ** 2 - 1).max(axis=0)
    np.testing.assert_allclose(ys(radius)[1], expected, atol=1e-12)
    assert ys(radius)[1][1:].max() > 0.3
    assert title(bug) == tr("en", "pitfalls.exponent.buggy.cos_shift")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tab_draws_its_signature(lang):
    at = open_page("pitfalls", query={"n": "64", "d": "64"}, lang=lang)
    view = visit_tabs(at, "pitfalls", TABS, lang=lang)
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    swapped = view.by_tab["axes"][2]
    assert np.max(ys(swapped)[0]) < 1e-9 and np.max(ys(swapped)[1]) > 0.1
    assert tr(lang, "pitfalls.axes.silent", n=64) in view.infos  # n == d: no error to warn you
    nearest = view.by_tab["zero"][0]
    assert ys(nearest)[0].min() > 0 and np.all(ys(nearest)[1] == 0)
    lost = view.by_tab["scale"][2]
    np.testing.assert_array_equal(ys(lost)[0], 0.0)
    assert ys(lost)[1][0] == 0.5  # at position 0 every sin column is 0
    pairing = view.by_tab["rope"][0]
    trained, inference = ys(pairing)
    assert trained[0] == pytest.approx(inference[0]) and np.abs(trained - inference).max() > 0.1
    slopes = view.by_tab["alibi"][0]
    np.testing.assert_allclose(ys(slopes)[0], posviz.alibi_slopes(12), rtol=1e-12)
    np.testing.assert_allclose(ys(slopes)[1], 2.0 ** (-8 * np.arange(1, 13) / 12), rtol=1e-12)
    rounding = view.by_tab["float16"][0]
    positions = as_array(rounding["data"][1]["x"])
    np.testing.assert_array_equal(ys(rounding)[1], np.abs(positions.astype(np.float16).astype(float) - positions))
    assert not ys(rounding)[0].any()
    codes = "\n".join(view.codes)
    assert "index out of range in self" in codes
    assert "The size of tensor a (65) must match the size of tensor b (66)" in codes
    assert "The size of tensor a (512) must match the size of tensor b (768)" in codes
    assert "mat1 and mat2 shapes cannot be multiplied (4x128 and 64x64)" in codes
    assert title(slopes) == tr(lang, "pitfalls.alibi.slopes", n=12)


def test_url_round_trip_of_tab_controls():
    query = {"tab": "alibi", "heads": "16"}
    at = open_page("pitfalls", query=query)
    assert_clean(at)
    (slopes,) = figures(at)
    assert widget(at, "heads").value == 16
    np.testing.assert_array_equal(ys(slopes)[0], ys(slopes)[1])  # a power of two: both rules agree
    assert at.query_params["tab"] == "alibi"
    at = open_page("pitfalls", query={"tab": "shape", "dtok": "256", "dpos": "256"})
    assert tr("en", "pitfalls.shape.same", d=256) in [i.value for i in at.info]


def test_nonsense_in_the_url_falls_back():
    at = open_page("pitfalls", query={"tab": "nope", "bug": "triple", "n": "abc", "heads": "-3"})
    assert_clean(at)
    assert widget(at, "bug").value == "doubled" and widget(at, "n").value == 128
    assert len(figures(at)) == 4
