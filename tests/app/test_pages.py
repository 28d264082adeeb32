"""Every page's default view: it renders cleanly, has its title and charts, and the numbers inside each chart are
the core's (and the closed-form formula's) for the registry defaults."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import posviz

from ._support import (
    PAGE_NAMES,
    as_array,
    assert_clean,
    assert_matrix,
    chart,
    charts,
    charts_by_key,
    from_catalog,
    heatmap_z,
    open_page,
    rope_score_formula,
    rope_table_formula,
    sinusoidal_formula,
    sinusoidal_similarity_formula,
    teaching_text,
    tr,
)


class Role(NamedTuple):
    """What a chart of a page is: the catalog key of its title (and the values it is filled with, when the test
    pins them), its first trace's type and the catalog keys of its x and y axis titles (``None``: no axis title)."""

    title: str
    kind: str
    x: str | None
    y: str | None
    values: dict = {}


POSITION_TABLE = ("heatmap", "axis.dimension", "axis.position")  # positions down, dimensions across
SIMILARITY = ("heatmap", "axis.position", "axis.position")
SCORES = ("heatmap", "axis.key_position", "axis.query_position")  # queries down, keys across
TOKENS = ("heatmap", "axis.key_token", "axis.query_token")

#: The charts of each page's default view (a page with tabs draws only its first, open, tab), in any order.
DEFAULT_VIEW = {
    "home": [Role("home.attention", *TOKENS), Role("home.distance", "bar", "home.axis.token", "home.axis.distance")],
    "sinusoidal": [Role("sinusoidal.table", *POSITION_TABLE), Role("figure.similarity", *SIMILARITY)],
    "learned": [Role("learned.table", *POSITION_TABLE), Role("figure.similarity", *SIMILARITY)],
    "rope": [Role("rope.table", "heatmap", "axis.pair", "axis.position"), Role("rope.anim", "scatter", None, None)],
    "alibi": [
        Role("alibi.slopes", "bar", "axis.head", "axis.slope"),
        Role("alibi.bias", *SCORES, {"head": 0, "slope": "0.5"}),  # 8 heads: head 0's slope 2^-1, 4 digits
    ],
    "relative": [
        Role("relative.shaw.index", *SCORES, {"k": 8}),
        Role("relative.shaw.distinct", "scatter", "param.seq_len", "relative.shaw.distinct.y", {"k": 8, "total": 17}),
    ],
    "xlnet": [
        Role("txl.r", "heatmap", "txl.r.x", "txl.r.y"),
        Role("txl.terms", "bar", None, None),  # five panels: their axis titles are on the last and the middle one
        Role("txl.memory.title", "heatmap", None, "txl.memory.y", {"mem": 4, "n": 8}),
        Role("xlnet.content", *TOKENS),
        Role("xlnet.query", *TOKENS),
        Role("xlnet.rank", "bar", "axis.position", "xlnet.rank.y"),
    ],
    "inspect": [],  # nothing is loaded in the default view
    "lab": [],  # nothing is trained in the default view
    "models": [Role("models.map", "bar", "models.axis.layer", None)],
    "compare": [Role("compare.offset", "scatter", None, "compare.y.similarity", {"n": 128})],
    "pitfalls": [
        Role("pitfalls.exponent.correct", *POSITION_TABLE),
        Role("pitfalls.exponent.buggy.doubled", *POSITION_TABLE),
        Role("pitfalls.exponent.motion", "scatter", "axis.dimension", "pitfalls.axis.motion"),
        Role("pitfalls.exponent.radius", "scatter", "axis.pair", "pitfalls.axis.radius"),
    ],
    "claims": [Role("claims.exponent.fig", "scatter", "axis.pair", "claims.axis.wavelength", {"d": 512})],
}


def test_every_page_of_app_py_is_covered():
    assert set(PAGE_NAMES) == set(DEFAULT_VIEW)


@pytest.mark.parametrize("page", PAGE_NAMES)
def test_default_view_renders(default_view, page):
    """The page's title and teaching text, and the charts it should draw: each is what its role says (a heatmap of
    positions x dimensions, bars over heads, ...), and has its "what to notice" caption under it."""
    at = default_view(page)
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("en", f"page.{page}")]
    assert teaching_text(page, "en").strip() in [m.value.strip() for m in at.markdown]
    roles = DEFAULT_VIEW[page]
    drawn = charts_by_key(charts(at), "en", [(role.title, role.values) for role in roles])
    for role in roles:
        found = drawn[role.title]
        assert found.fig["data"][0]["type"] == role.kind, role.title
        assert found.axes() == tuple(tr("en", key) if key else "" for key in (role.x, role.y)), role.title
        assert found.notice and from_catalog(found.notice, "en"), f"{role.title}: no caption under it"


def figure(at, key: str) -> dict:
    """The figure of ``at`` titled with the English catalog entry ``key``."""
    return chart(charts(at), "en", key).fig


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
    z = heatmap_z(figure(default_view("sinusoidal"), "sinusoidal.table"))
    assert_matrix(z, posviz.sinusoidal(128, 128), what="vs core")
    assert_matrix(z, sinusoidal_formula(128, 128), what="vs formula")


def test_sinusoidal_similarity(default_view):
    fig = figure(default_view("sinusoidal"), "figure.similarity")
    z = heatmap_z(fig)
    assert_matrix(z, posviz.cosine_similarity_matrix(posviz.sinusoidal(128, 128)), what="vs core")
    assert_matrix(z, sinusoidal_similarity_formula(128, 128), atol=1e-5, what="vs formula")
    trace = fig["data"][0]
    assert (trace["zmin"], trace["zmax"]) == (-1.0, 1.0)
    assert trace["dx"] == trace["dy"] == 1.0  # every position is drawn


# --------------------------------------------------------------------------------------------------- learned


def test_learned_table_is_bert_init(default_view):
    z = heatmap_z(figure(default_view("learned"), "learned.table"))
    expected = posviz.learned_init(128, 128, std=0.02, seed=0)
    assert_matrix(z, expected, atol=1e-8, what="vs core")
    assert abs(z.std() - 0.02) < 0.001  # N(0, 0.02^2) entries


def test_learned_similarity(default_view):
    z = heatmap_z(figure(default_view("learned"), "figure.similarity"))
    table = posviz.learned_init(128, 128, std=0.02, seed=0)
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    assert_matrix(z, posviz.cosine_similarity_matrix(table), what="vs core")
    assert_matrix(z, unit @ unit.T, what="vs formula")


# ------------------------------------------------------------------------------------------------------ RoPE


def test_rope_table(default_view):
    z = heatmap_z(figure(default_view("rope"), "rope.table"))
    inv_freq, _ = posviz.rope_inv_freq(64, base=10000.0)
    assert_matrix(z, np.cos(np.arange(128)[:, None] * inv_freq[None, :]), what="vs core")
    assert_matrix(z, rope_table_formula(128, 64), what="vs formula")


def test_rope_scores_depend_on_the_offset_only(default_view):
    z = heatmap_z(figure(open_page("rope", query={"tab": "scores"}), "rope.scores"))
    assert_matrix(z, posviz.rope_score_matrix(128, 64, base=10000.0), what="vs core")
    assert_matrix(z, rope_score_formula(128, 64), atol=1e-5, what="vs formula")
    for offset in (-100, -7, 0, 1, 50):
        diagonal = np.diagonal(z, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-5, err_msg=f"diagonal {offset}")
    np.testing.assert_allclose(np.diagonal(z), 1.0, atol=1e-6)


# ----------------------------------------------------------------------------------------------------- ALiBi


def test_alibi_slopes(default_view):
    fig = figure(default_view("alibi"), "alibi.slopes")
    trace = fig["data"][0]
    assert trace["type"] == "bar"
    assert list(trace["x"]) == [str(h) for h in range(8)]
    y = as_array(trace["y"])
    np.testing.assert_allclose(y, posviz.alibi_slopes(8), rtol=1e-12)
    np.testing.assert_allclose(y, 2.0 ** -np.arange(1, 9), rtol=1e-12)  # 1/2 .. 1/256 for 8 heads
    assert fig["layout"]["yaxis"]["type"] == "log"


def test_alibi_bias_of_head_0_with_masked_future(default_view):
    z = heatmap_z(figure(default_view("alibi"), "alibi.bias"))
    assert_matrix(z, posviz.alibi_bias(8, 32)[0], what="vs core")
    i, j = np.indices((32, 32))
    expected = np.where(j <= i, -0.5 * (i - j), np.nan)  # -m (i - j); the future is masked (blank)
    assert_matrix(z, expected, what="vs formula")
    assert np.isnan(z[0, 1]) and z[31, 0] == pytest.approx(-15.5)


# -------------------------------------------------------------------------------------------------- relative


def test_shaw_index(default_view):
    z = heatmap_z(figure(default_view("relative"), "relative.shaw.index"))
    i, j = np.indices((32, 32))
    assert_matrix(z, posviz.shaw_relative_index(32, 32, 8), what="vs core")
    assert_matrix(z, np.clip(j - i, -8, 8) + 8, what="vs formula")


def t5_tab():
    at = open_page("relative", query={"tab": "t5"})
    assert_clean(at)
    return at


def test_t5_bucket_matrix():
    z = heatmap_z(figure(t5_tab(), "relative.t5.matrix"))
    expected = posviz.t5_bucket_matrix(64, 64, num_buckets=32, max_distance=128, bidirectional=True)
    assert_matrix(z, expected, what="vs core")
    # exact region: |j - i| < 8 is its own bucket, keys after the query are offset by 16
    i, j = np.indices((64, 64))
    near = np.abs(j - i) < 8
    assert_matrix(np.where(near, z, np.nan), np.where(near, np.abs(j - i) + 16 * (j > i), np.nan), what="exact")


def test_t5_curve_and_matrix_agree():
    at = t5_tab()
    trace = figure(at, "relative.t5.curve")["data"][0]
    assert trace["type"] == "scatter"
    x, y = as_array(trace["x"]), as_array(trace["y"])
    np.testing.assert_array_equal(x, np.arange(-256, 257))  # +-2 max_distance
    np.testing.assert_array_equal(
        y, posviz.t5_relative_bucket(np.arange(-256, 257), bidirectional=True, num_buckets=32, max_distance=128)
    )
    z = heatmap_z(figure(at, "relative.t5.matrix"))
    i, j = np.indices(z.shape)
    np.testing.assert_array_equal(z, y[(j - i) + 256])  # the matrix is the curve read at j - i


# ----------------------------------------------------------------------------------------------------- XLNet


def test_xlnet_masks_of_the_left_to_right_order():
    at = open_page("xlnet", query={"seed": "0"})
    order = posviz.factorisation_order(8, 0)
    np.testing.assert_array_equal(order, np.arange(8))
    assert tr("en", "xlnet.order", order=" → ".join(map(str, order))) in [m.value for m in at.markdown]
    content, query = (heatmap_z(figure(at, key)) for key in ("xlnet.content", "xlnet.query"))
    expected_content, expected_query = posviz.xlnet_masks(order)
    assert_matrix(content, expected_content, what="content vs core")
    assert_matrix(query, expected_query, what="query vs core")
    i, j = np.indices((8, 8))
    assert_matrix(content, j <= i, what="content: causal incl. itself")
    assert_matrix(query, j < i, what="query: strictly earlier")


def test_xlnet_rank_is_where_each_position_comes_in_the_order():
    at = open_page("xlnet", query={"seed": "3"})
    order = posviz.factorisation_order(8, 3)
    assert sorted(order) == list(range(8)) and list(order) != sorted(order)  # a shuffled order
    rank = figure(at, "xlnet.rank")["data"][0]
    assert [int(label.split()[0]) for label in rank["x"]] == list(range(8))  # "0 New", "1 York", ...
    np.testing.assert_array_equal(as_array(rank["y"]), [list(order).index(p) for p in range(8)])
