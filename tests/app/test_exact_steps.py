"""Lengths and factors that a slider offers in steps (powers of two, say) still take any whole value of their range
from a link or the box above the slider: DeepSeek-V3's YaRN factor 40, a training length of 700. Each value is
checked where it ends up, in a figure's numbers, against the formula or the core function it feeds; a value out of
range or off the grid is refused by the link and named, and the page keeps its default."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.encodings import rope
from posviz.lessons import claims, compare

from ._support import as_array, assert_clean, figures, open_page, title, tr, widget
from .test_link import notice, toasts

ROPE = posviz.family("rope")
HEAD_DIM, BASE = int(ROPE.param("head_dim").default), float(ROPE.param("base").default)


def trace(at, name: str) -> dict:
    """The one trace called ``name`` among the page's figures."""
    found = [d for fig in figures(at) for d in fig["data"] if d.get("name") == name]
    assert len(found) == 1, f"{len(found)} traces called {name!r}"
    return found[0]


def titled(at, text: str) -> dict:
    """The one figure whose title contains ``text``."""
    found = [fig for fig in figures(at) if text in title(fig)]
    assert len(found) == 1, f"{len(found)} figures titled with {text!r}"
    return found[0]


def opened(page: str, query: dict, exact: dict):
    """The page opened by a link of ``query``, with each control of ``exact`` showing its value in its box, on its
    slider and in the link, and no notice."""
    at = open_page(page, query=query)
    assert_clean(at)
    assert toasts(at) == []
    for key, value in exact.items():
        assert widget(at, f"{key}.exact").value == value, key
        assert widget(at, key).value == value, key
        assert at.query_params[key] == str(value), key
    return at


def test_rope_extension_takes_deepseeks_factor_and_any_original_context():
    at = opened("rope", {"tab": "extension", "factor": "40", "orig": "6000", "cur": "3"}, {"factor": 40, "orig": 6000})
    inv, _ = rope.rope_inv_freq(HEAD_DIM, base=BASE)
    plain = 1.0 / BASE ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM)  # the formula itself
    np.testing.assert_allclose(inv, plain, rtol=1e-12)
    pi = trace(at, tr("en", "rope.method.linear"))
    np.testing.assert_allclose(as_array(pi["y"]), 2 * np.pi * 40 / plain, rtol=1e-9)  # PI slows every pair by s
    wave = titled(at, tr("en", "rope.ext.wavelength", cur=f"{3 * 6000:,}"))  # read now: 3 x L, below s x L
    assert tr("en", "rope.ext.target", L=f"{40 * 6000:,}") in str(wave)
    dynamic = as_array(trace(at, tr("en", "rope.ext.dynamic.factor", f=40))["y"])  # s (L / L_max) - (s - 1)
    assert dynamic.max() == pytest.approx(40 * 40 - 39)  # at L = s L_max


def test_rope_decay_reaches_any_distance():
    at = opened("rope", {"tab": "decay", "decay_len": "3000"}, {"decay_len": 3000})
    x = as_array(figures(at)[0]["data"][0]["x"])
    assert x[0] == 0 and x[-1] == 3000


def test_alibi_far_view_takes_any_training_length():
    at = opened("alibi", {"tab": "long", "train": "300"}, {"train": 300})
    first = figures(at)[0]["data"][0]  # head 0, slope 1/2 for 8 heads (Press et al., 2022)
    distance = np.arange(4 * 300 + 1)
    np.testing.assert_array_equal(as_array(first["x"]), distance)
    np.testing.assert_allclose(as_array(first["y"]), -0.5 * distance, rtol=1e-12)


def test_compare_takes_any_length():
    at = opened("compare", {"len": "100"}, {"len": 100})
    x = as_array(trace(at, tr("en", "family.sinusoidal.name"))["x"])
    np.testing.assert_array_equal(x, np.arange(-99, 100))  # offsets -(L - 1) .. L - 1
    at = opened("compare", {"tab": "long", "train": "700", "eval": "3000"}, {"train": 700, "eval": 3000})
    titled(at, tr("en", "compare.long", train=700, eval=3000))
    steps, share = compare.beyond_training(700, 3000)["sinusoidal"]
    assert steps[-1] == 2999  # read at 3,000 positions
    drawn = trace(at, tr("en", "family.sinusoidal.name"))
    np.testing.assert_array_equal(as_array(drawn["x"]), steps)
    np.testing.assert_allclose(as_array(drawn["y"]), share, rtol=1e-9)


def test_claims_take_any_context_training_length_and_even_width():
    at = opened("claims", {"tab": "base", "ctx": "3000"}, {"ctx": 3000})
    found = claims.check("base", context=3000)
    drawn = figures(at)[0]["data"]
    np.testing.assert_allclose(as_array(drawn[0]["y"]), found.arrays["near"], rtol=1e-9)
    at = opened("claims", {"tab": "extrapolate", "train": "1000"}, {"train": 1000})
    found = claims.check("extrapolate", train_len=1000)
    np.testing.assert_allclose(as_array(figures(at)[0]["data"][0]["y"]), found.arrays["sinusoidal"], rtol=1e-9)
    at = opened("claims", {"tab": "exponent", "d": "770"}, {"d": 770})
    paper = as_array(figures(at)[0]["data"][0]["y"])
    np.testing.assert_allclose(paper, 2 * np.pi * 10000 ** (np.arange(0, 770, 2) / 770), rtol=1e-9)


def test_learned_stretch_takes_any_whole_factor():
    at = opened("learned", {"tab": "past", "stretch": "5", "n": "64"}, {"stretch": 5})
    titles = [title(fig) for fig in figures(at)]
    assert any("64…319" in text for text in titles), titles  # truncation reuses the last row for 5 x 64 positions
    assert any("320" in text for text in titles), titles


@pytest.mark.parametrize(
    ("page", "query", "key", "default"),
    [
        ("rope", {"tab": "extension", "factor": "1"}, "factor", 8),  # s = 1 extends nothing
        ("rope", {"tab": "extension", "factor": "65"}, "factor", 8),
        ("claims", {"tab": "exponent", "d": "771"}, "d", 512),  # sin/cos pairs: d is even
        ("compare", {"tab": "long", "train": "12.5"}, "train", 512),
    ],
)
def test_a_value_out_of_range_or_off_the_grid_is_named_and_the_default_kept(page, query, key, default):
    at = open_page(page, query=query)
    assert_clean(at)
    assert widget(at, f"{key}.exact").value == default
    assert toasts(at) == notice("en", f"{key}={query[key]}")


def test_a_factor_typed_into_the_box_is_used_and_kept_in_the_link():
    at = open_page("rope", query={"tab": "extension"})
    at.number_input(key="factor.exact").set_value(40).run()
    assert_clean(at)
    assert widget(at, "factor").value == 40 and at.query_params["factor"] == "40"
    pi = trace(at, tr("en", "rope.method.linear"))
    np.testing.assert_allclose(as_array(pi["y"]), 2 * np.pi * 40 * BASE ** (np.arange(0, HEAD_DIM, 2) / HEAD_DIM))
    fresh = open_page("rope", query=dict(at.query_params))
    assert widget(fresh, "factor.exact").value == 40
