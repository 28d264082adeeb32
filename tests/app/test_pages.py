"""Every page's default view: it renders cleanly, has its title and charts, and the numbers inside each chart are
the core's (and the closed-form formula's) for the registry defaults."""

from __future__ import annotations

import numpy as np
import pytest

import posviz

from ._support import (
    PAGE_NAMES,
    as_array,
    assert_clean,
    assert_matrix,
    default_titles,
    figures,
    heatmap_z,
    open_page,
    rope_score_formula,
    rope_table_formula,
    sinusoidal_formula,
    sinusoidal_similarity_formula,
    teaching_text,
    title,
    tr,
)

#: Charts of the default view; pages with tabs draw only their first (open) tab.
CHART_COUNT = {
    "home": 2,
    "sinusoidal": 2,
    "learned": 2,
    "rope": 2,
    "alibi": 2,
    "relative": 2,
    "xlnet": 3,
    "inspect": 0,
    "lab": 0,
    "compare": 1,
    "pitfalls": 4,
    "claims": 1,
}


def test_every_page_of_app_py_is_covered():
    assert set(PAGE_NAMES) == set(CHART_COUNT)


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_default_view_renders(default_view, page):
    at = default_view(page)
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("en", f"page.{page}")]
    assert teaching_text(page, "en").strip() in [m.value.strip() for m in at.markdown]
    figs = figures(at)
    assert len(figs) == CHART_COUNT[page]
    titles = default_titles(page, "en")
    assert [title(f) for f in figs][: len(titles)] == titles


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_default_view_has_the_language_switch(default_view, page):
    """The page ran inside app.py's frame, whose sidebar holds the language radio."""
    radios = [r for r in default_view(page).sidebar.radio if r.key == "lang"]
    assert len(radios) == 1 and radios[0].value == "en"


# ------------------------------------------------------------------------------------------------------ home


def test_home_links_every_family_to_its_page(default_view):
    at = default_view("home")
    links = {(p.proto.label, p.proto.page) for p in at.get("page_link")}
    expected = {(tr("en", f"family.{f.key}.name"), f.page) for f in posviz.FAMILIES.values()}
    assert expected <= links
    assert {page for _, page in links} <= {*PAGE_NAMES, ""}  # the tour and the tools open pages of app.py ("" = home)
    captions = [c.value for c in at.caption]
    for fam in posviz.FAMILIES.values():
        assert tr("en", f"family.{fam.key}.summary") in captions
        assert f"{tr('en', 'home.enters', how=tr('en', f'enters.{fam.enters}'))} · {fam.paper}" in captions


# ------------------------------------------------------------------------------------------------ sinusoidal


def test_sinusoidal_table(default_view):
    z = heatmap_z(figures(default_view("sinusoidal"))[0])
    assert_matrix(z, posviz.sinusoidal(128, 128), what="vs core")
    assert_matrix(z, sinusoidal_formula(128, 128), what="vs formula")


def test_sinusoidal_similarity(default_view):
    fig = figures(default_view("sinusoidal"))[1]
    z = heatmap_z(fig)
    assert_matrix(z, posviz.cosine_similarity_matrix(posviz.sinusoidal(128, 128)), what="vs core")
    assert_matrix(z, sinusoidal_similarity_formula(128, 128), atol=1e-5, what="vs formula")
    trace = fig["data"][0]
    assert (trace["zmin"], trace["zmax"]) == (-1.0, 1.0)
    assert trace["dx"] == trace["dy"] == 1.0  # every position is drawn


# --------------------------------------------------------------------------------------------------- learned


def test_learned_table_is_bert_init(default_view):
    z = heatmap_z(figures(default_view("learned"))[0])
    expected = posviz.learned_init(128, 128, std=0.02, seed=0)
    assert_matrix(z, expected, atol=1e-8, what="vs core")
    assert abs(z.std() - 0.02) < 0.001  # N(0, 0.02^2) entries


def test_learned_similarity(default_view):
    z = heatmap_z(figures(default_view("learned"))[1])
    table = posviz.learned_init(128, 128, std=0.02, seed=0)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    assert_matrix(z, posviz.cosine_similarity_matrix(table), what="vs core")
    assert_matrix(z, unit @ unit.T, what="vs formula")


# ------------------------------------------------------------------------------------------------------ RoPE


def test_rope_table(default_view):
    z = heatmap_z(figures(default_view("rope"))[0])
    inv_freq, _ = posviz.rope_inv_freq(64, base=10000.0)
    assert_matrix(z, np.cos(np.arange(128)[:, None] * inv_freq[None, :]), what="vs core")
    assert_matrix(z, rope_table_formula(128, 64), what="vs formula")


def test_rope_scores_depend_on_the_offset_only(default_view):
    z = heatmap_z(figures(open_page("rope", query={"tab": "scores"}))[0])
    assert_matrix(z, posviz.rope_score_matrix(128, 64, base=10000.0), what="vs core")
    assert_matrix(z, rope_score_formula(128, 64), atol=1e-5, what="vs formula")
    for offset in (-100, -7, 0, 1, 50):
        diagonal = np.diagonal(z, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-5, err_msg=f"diagonal {offset}")
    np.testing.assert_allclose(np.diagonal(z), 1.0, atol=1e-6)


# ----------------------------------------------------------------------------------------------------- ALiBi


def test_alibi_slopes(default_view):
    fig = figures(default_view("alibi"))[0]
    trace = fig["data"][0]
    assert trace["type"] == "bar"
    assert list(trace["x"]) == [str(h) for h in range(8)]
    y = as_array(trace["y"])
    np.testing.assert_allclose(y, posviz.alibi_slopes(8), rtol=1e-12)
    np.testing.assert_allclose(y, 2.0 ** -np.arange(1, 9), rtol=1e-12)  # 1/2 .. 1/256 for 8 heads
    assert fig["layout"]["yaxis"]["type"] == "log"


def test_alibi_bias_of_head_0_with_masked_future(default_view):
    z = heatmap_z(figures(default_view("alibi"))[1])
    assert_matrix(z, posviz.alibi_bias(8, 32)[0], what="vs core")
    i, j = np.indices((32, 32))
    expected = np.where(j <= i, -0.5 * (i - j), np.nan)  # -m (i - j); the future is masked (blank)
    assert_matrix(z, expected, what="vs formula")
    assert np.isnan(z[0, 1]) and z[31, 0] == pytest.approx(-15.5)


# -------------------------------------------------------------------------------------------------- relative


def test_shaw_index(default_view):
    z = heatmap_z(figures(default_view("relative"))[0])
    i, j = np.indices((32, 32))
    assert_matrix(z, posviz.shaw_relative_index(32, 32, 8), what="vs core")
    assert_matrix(z, np.clip(j - i, -8, 8) + 8, what="vs formula")


def t5_tab():
    at = open_page("relative", query={"tab": "t5"})
    assert_clean(at)
    return figures(at)


def test_t5_bucket_matrix():
    z = heatmap_z(t5_tab()[0])
    expected = posviz.t5_bucket_matrix(64, 64, num_buckets=32, max_distance=128, bidirectional=True)
    assert_matrix(z, expected, what="vs core")
    # exact region: |j - i| < 8 is its own bucket, keys after the query are offset by 16
    i, j = np.indices((64, 64))
    near = np.abs(j - i) < 8
    assert_matrix(np.where(near, z, np.nan), np.where(near, np.abs(j - i) + 16 * (j > i), np.nan), what="exact")


def test_t5_curve_and_matrix_agree():
    figs = t5_tab()
    trace = figs[1]["data"][0]
    assert trace["type"] == "scatter"
    x, y = as_array(trace["x"]), as_array(trace["y"])
    np.testing.assert_array_equal(x, np.arange(-256, 257))  # +-2 max_distance
    np.testing.assert_array_equal(
        y, posviz.t5_relative_bucket(np.arange(-256, 257), bidirectional=True, num_buckets=32, max_distance=128)
    )
    z = heatmap_z(figs[0])
    i, j = np.indices(z.shape)
    np.testing.assert_array_equal(z, y[(j - i) + 256])  # the matrix is the curve read at j - i


# ----------------------------------------------------------------------------------------------------- XLNet


def test_xlnet_masks_of_the_left_to_right_order():
    at = open_page("xlnet", query={"seed": "0"})
    order = posviz.factorisation_order(8, 0)
    np.testing.assert_array_equal(order, np.arange(8))
    assert tr("en", "xlnet.order", order=" → ".join(map(str, order))) in [m.value for m in at.markdown]
    content, query = (heatmap_z(f) for f in figures(at)[:2])
    expected_content, expected_query = posviz.xlnet_masks(order)
    assert_matrix(content, expected_content, what="content vs core")
    assert_matrix(query, expected_query, what="query vs core")
    i, j = np.indices((8, 8))
    assert_matrix(content, j <= i, what="content: causal incl. itself")
    assert_matrix(query, j < i, what="query: strictly earlier")
