"""Moving a control redraws the figures with the core's numbers for the new parameters."""

from __future__ import annotations

import numpy as np
import pytest

import posviz

from ._support import (
    LANGS,
    as_array,
    assert_clean,
    assert_matrix,
    button,
    chart,
    charts,
    figures,
    has_widget,
    heatmap_z,
    image_rgba,
    open_page,
    order_on_page,
    rope_score_formula,
    rope_table_formula,
    set_controls,
    sinusoidal_formula,
    title,
    tr,
    widget,
)


def test_sinusoidal_size_base_and_layout():
    at = set_controls(open_page("sinusoidal"), n=64, d=64, base=100, layout="halves")
    table, sim = figures(at)[:2]
    z = heatmap_z(table)
    assert_matrix(z, posviz.sinusoidal(64, 64, base=100.0, layout="halves"), what="vs core")
    assert_matrix(z, sinusoidal_formula(64, 64, base=100.0, layout="halves"), what="vs formula")
    assert not np.allclose(z, posviz.sinusoidal(64, 64, base=100.0)), "layout ignored"
    assert_matrix(
        heatmap_z(sim), posviz.cosine_similarity_matrix(posviz.sinusoidal(64, 64, base=100.0, layout="halves"))
    )


def test_sinusoidal_odd_width():
    at = set_controls(open_page("sinusoidal"), d=7)
    z = heatmap_z(figures(at)[0])
    assert z.shape == (128, 7)
    assert_matrix(z, posviz.sinusoidal(128, 7))
    np.testing.assert_allclose(z[:, 6], np.sin(np.arange(128) * 10000.0 ** (-6 / 7)), atol=1e-6)


def test_large_sinusoidal_table_is_downsampled_with_a_note():
    """2048 x 128 = 262,144 cells > 256 x 256: block means down to 1024 rows, sent as a PNG; the similarity is
    built on 1024 evenly spaced positions and keeps position units on its axes."""
    at = set_controls(open_page("sinusoidal"), n=2048)
    table, sim = figures(at)[:2]
    assert table["layout"]["meta"] == {"source_shape": [2048, 128], "shape": [1024, 128], "downsampled": True}
    note = tr("en", "figure.downsampled", src="2048×128", dst="1024×128")
    assert title(table) == f"{tr('en', 'sinusoidal.table')}<br><sup>{note}</sup>"
    png = image_rgba(table)
    assert png.shape == (1024, 128, 4) and (png[..., 3] == 255).all()
    assert table["data"][0]["dy"] == pytest.approx(2.0)  # each image row stands for 2 positions
    assert sim["layout"]["meta"] == {"source_shape": [1024, 1024], "shape": [1024, 1024], "downsampled": True}
    assert sim["data"][0]["dx"] == pytest.approx(2047 / 1023)  # last position is 2047


def test_learned_bert_std_and_seed():
    at = set_controls(open_page("learned"), n=50, d=20, std=0.5, seed=3)
    table, sim = figures(at)[:2]
    expected = posviz.learned_init(50, 20, std=0.5, seed=3)
    assert_matrix(heatmap_z(table), expected, what="vs core")
    assert not np.allclose(heatmap_z(table), posviz.learned_init(50, 20, std=0.5, seed=0)), "seed ignored"
    assert_matrix(heatmap_z(sim), posviz.cosine_similarity_matrix(expected))


def test_learned_sinusoidal_init_disables_std_and_seed():
    at = open_page("learned")
    assert not at.number_input(key="std").disabled and not at.number_input(key="seed").disabled
    set_controls(at, init="sinusoidal")
    table, sim = figures(at)[:2]
    assert_matrix(heatmap_z(table), posviz.sin_init(128, 128), what="vs core")
    assert_matrix(heatmap_z(table), sinusoidal_formula(128, 128), what="vs formula")
    assert at.number_input(key="std").disabled and at.number_input(key="seed").disabled
    captions = [c.value for c in at.caption]
    assert tr("en", "learned.table.notice.sinusoidal") in captions
    assert tr("en", "learned.table.notice.random") not in captions


def test_rope_size_head_dim_and_base():
    at = set_controls(open_page("rope"), n=48, head_dim=16, base=100)
    table = heatmap_z(figures(at)[0])
    at.session_state["tab"] = tr("en", "rope.tab.scores")  # the scores are on their own tab, at the same sizes
    at.run()
    assert_clean(at)
    scores = heatmap_z(figures(at)[0])
    assert table.shape == (48, 8)
    assert_matrix(table, rope_table_formula(48, 16, base=100.0), what="table vs formula")
    assert_matrix(scores, posviz.rope_score_matrix(48, 16, base=100.0), what="scores vs core")
    assert_matrix(scores, rope_score_formula(48, 16, base=100.0), atol=1e-5, what="scores vs formula")


def test_alibi_head_slider_shows_that_head():
    at = set_controls(open_page("alibi"), head=5)
    slopes, bias = figures(at)[:2]
    assert_matrix(heatmap_z(bias), posviz.alibi_bias(8, 32)[5], what="vs core")
    i, j = np.indices((32, 32))
    assert_matrix(heatmap_z(bias), np.where(j <= i, -(2.0**-6) * (i - j), np.nan), what="vs formula")
    assert title(bias) == tr("en", "alibi.bias", head=5, slope=f"{2.0**-6:.4g}")


def test_alibi_symmetric_bias_without_causal_mask():
    at = set_controls(open_page("alibi"), head=2, causal=False)
    z = heatmap_z(figures(at)[1])
    i, j = np.indices((32, 32))
    assert_matrix(z, posviz.alibi_bias(8, 32, causal=False)[2], what="vs core")
    assert_matrix(z, -(2.0**-3) * np.abs(i - j), what="vs formula")
    assert tr("en", "alibi.bias.notice.symmetric") in [c.value for c in at.caption]


def test_alibi_head_count_that_is_not_a_power_of_two():
    at = set_controls(open_page("alibi"), heads=12)
    bars = figures(at)[0]["data"][0]
    assert list(bars["x"]) == [str(h) for h in range(12)]
    np.testing.assert_allclose(as_array(bars["y"]), posviz.alibi_slopes(12), rtol=1e-12)
    assert at.slider(key="head").max == 11
    set_controls(at, head=11)
    assert_matrix(heatmap_z(figures(at)[1]), posviz.alibi_bias(12, 32)[11])


def test_alibi_single_head_has_no_head_slider():
    at = set_controls(open_page("alibi"), heads=1, len=10)
    assert not has_widget(at, "head")
    slopes, bias = figures(at)[:2]
    np.testing.assert_allclose(as_array(slopes["data"][0]["y"]), [2.0**-8])
    assert_matrix(heatmap_z(bias), posviz.alibi_bias(1, 10)[0])


def test_relative_controls():
    at = set_controls(open_page("relative"), shaw_len=12, shaw_k=3)
    shaw = figures(at)[0]
    i, j = np.indices((12, 12))
    assert_matrix(heatmap_z(shaw), np.clip(j - i, -3, 3) + 3, what="shaw vs formula")
    assert title(shaw) == tr("en", "relative.shaw.index", k=3)
    at.session_state["tab"] = tr("en", "relative.t5")
    at.run()
    set_controls(at, t5_len=40, t5_buckets=16, t5_max_distance=32, t5_bidirectional=False)
    t5, curve = figures(at)[:2]
    kwargs = dict(bidirectional=False, num_buckets=16, max_distance=32)
    z = heatmap_z(t5)
    assert_matrix(z, posviz.t5_bucket_matrix(40, 40, **kwargs), what="t5 vs core")
    assert (z[np.triu_indices(40, 1)] == 0).all()  # causal: keys after the query share bucket 0
    x, y = as_array(curve["data"][0]["x"]), as_array(curve["data"][0]["y"])
    np.testing.assert_array_equal(x, np.arange(-64, 65))
    np.testing.assert_array_equal(y, posviz.t5_relative_bucket(np.arange(-64, 65), **kwargs))


def test_xlnet_shuffle_changes_the_seed_and_the_masks():
    at = open_page("xlnet")
    assert at.number_input(key="seed").value == 1  # the registry's default: a shuffled order
    for seed in (2, 3):
        button(at, tr("en", "xlnet.shuffle")).click().run()
        assert_clean(at)
        assert at.number_input(key="seed").value == seed
        order = posviz.factorisation_order(8, seed)
        assert order_on_page(at) == order.tolist()
        content, query = (heatmap_z(chart(charts(at), "en", key).fig) for key in ("xlnet.content", "xlnet.query"))
        expected_content, expected_query = posviz.xlnet_masks(order)
        assert_matrix(content, expected_content, what=f"content, seed {seed}")
        assert_matrix(query, expected_query, what=f"query, seed {seed}")
        rank = np.argsort(order)  # rank[t] = step at which token t is predicted
        assert_matrix(query, rank[None, :] < rank[:, None], what=f"query vs formula, seed {seed}")
    assert not np.array_equal(posviz.factorisation_order(8, 1), np.arange(8))


def test_xlnet_length():
    at = set_controls(open_page("xlnet"), len=12, seed=7)
    order = posviz.factorisation_order(12, 7)
    assert order_on_page(at) == order.tolist()
    content, query = (heatmap_z(chart(charts(at), "en", key).fig) for key in ("xlnet.content", "xlnet.query"))
    assert content.shape == (12, 12)
    assert_matrix(query, posviz.xlnet_masks(order)[1])


def test_controls_show_registry_ranges(default_view):
    """The controls take their ranges and defaults from the registry (capped by the page)."""
    at = default_view("sinusoidal")
    n, d = at.number_input(key="n"), at.slider(key="d")
    # the number box has no limits of its own (the browser would refuse a value past them without a word): the
    # registry's range is applied by the server, which says what it did (tests/app/test_numbers.py)
    assert (n.min, n.max, n.value) == (None, None, 128)
    assert (d.min, d.max, d.value) == (1, posviz.MAX_DIM, 128)
    assert at.number_input(key="d.exact").value == 128  # the box over the slider, for an exact value
    base = [float(v) for v in widget(at, "base").options]
    assert base[0] == 100 and base[-1] == 1_000_000 and 10_000 in base and base == sorted(base)
    rope = default_view("rope")
    assert (rope.slider(key="head_dim").min, rope.slider(key="head_dim").step) == (2, 2)


@pytest.mark.parametrize("lang", LANGS)
def test_a_choice_is_named_by_its_text_and_helped_only_where_the_catalog_helps(lang):
    """The Learned page's ``?init=`` radio is its ``learned.ctl.table`` (with that text's help); Pitfalls' ``?bug=``
    radio is ``pitfalls.ctl.variant`` (no help text: no tooltip), each option shown by the catalog prefix the page
    names (``pitfalls.variant.<option>``)."""
    table = widget(open_page("learned", lang=lang), "init")
    assert table.label == tr(lang, "learned.ctl.table") and table.help == tr(lang, "learned.ctl.table.help")
    bug = widget(open_page("pitfalls", lang=lang), "bug")
    assert bug.label == tr(lang, "pitfalls.ctl.variant") and not bug.help
    assert list(bug.options) == [tr(lang, f"pitfalls.variant.{v}") for v in posviz.lessons.pitfalls.VARIANTS]
