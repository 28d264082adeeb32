"""The relative page's views (posviz/ui/views/relative.py): each kept whole by its settings and the language, its
numbers derived here from the papers' definitions, a refused setting raised and never kept.

Shaw et al. (2018, section 3.2): query i and key j use the embedding clip(j - i, -k, k) + k. T5 (Raffel et al.,
2020, section 2.1, after mesh-tensorflow's ``_relative_position_bucket``): with B buckets per side (half of them when
bidirectional, where keys after the query are shifted by B) and E = B / 2, a distance n < E has bucket n and a
farther one E + floor(ln(n / E) / ln(D / E) (B - E)), at most B - 1.
"""

from __future__ import annotations

import collections
import math

import numpy as np
import pytest
import streamlit as st

from posviz.ui import cache
from posviz.ui.views import Text
from posviz.ui.views import relative as relative_views

from ._support import as_array, assert_matrix, assert_same_items, heatmap_z, held_view_keys, title, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


def shaw_index(i: int, j: int, k: int) -> int:
    return max(-k, min(k, j - i)) + k


def t5_bucket(rel: int, *, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """T5's bucket of the relative position rel = j - i, one number at a time, from the paper's definition."""
    side, offset = num_buckets, 0
    if bidirectional:
        side //= 2
        offset = side if rel > 0 else 0
        n = abs(rel)
    else:
        n = max(-rel, 0)
    exact = side // 2
    if n < exact:
        return offset + n
    far = exact + math.floor(math.log(n / exact) / math.log(max_distance / exact) * (side - exact))
    return offset + min(far, side - 1)


def last_bucket_start(*, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """The first distance n whose bucket is the last of its side: where every farther key shares one bias."""
    side = num_buckets // 2 if bidirectional else num_buckets
    kw = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
    return next(n for n in range(max_distance + 1) if t5_bucket(-n, **kw) == side - 1)


def learned_table(buckets: int, heads: int, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(buckets, heads))


def as_setting(table: np.ndarray) -> tuple:
    """A table as the learned-bias view takes it: (shape, values row by row)."""
    return table.shape, tuple(table.ravel().tolist())


#: Settings of T5 (num_buckets, max_distance, bidirectional) the tests draw.
T5_SETTINGS = [(32, 128, True), (16, 64, False), (8, 20, True), (64, 40, False)]


def test_the_bucket_oracle_matches_the_papers_numbers():
    """The oracle itself: T5's defaults put distances from 91 on into the last bucket of a bidirectional side
    (B = 16, E = 8), from 113 on for causal (B = 32, E = 16), as the core's docstring works out by hand."""
    assert last_bucket_start(bidirectional=True, num_buckets=32, max_distance=128) == 91
    assert last_bucket_start(bidirectional=False, num_buckets=32, max_distance=128) == 113
    assert t5_bucket(1, bidirectional=True, num_buckets=32, max_distance=128) == 17
    assert t5_bucket(5, bidirectional=False, num_buckets=32, max_distance=128) == 0


# ------------------------------------------------------------------------------------------------------ caching


def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output():
    shaw = relative_views.shaw(20, 3)
    assert relative_views.shaw(20, 3) is shaw and relative_views.shaw(length=20, clip=3) is shaw
    assert relative_views.shaw(21, 3) is not shaw and relative_views.shaw(20, 4) is not shaw
    matrix = relative_views.t5_matrix(40, 32, 128, True)
    assert relative_views.t5_matrix(40, 32, 128, True) is matrix
    for changed in ((41, 32, 128, True), (40, 16, 128, True), (40, 32, 100, True), (40, 32, 128, False)):
        assert relative_views.t5_matrix(*changed) is not matrix
    curve = relative_views.t5_buckets(32, 128, True)
    assert relative_views.t5_buckets(32, 128, True) is curve
    assert (
        relative_views.t5_buckets(32, 128, False) is not curve and relative_views.t5_buckets(16, 128, True) is not curve
    )
    bias = relative_views.t5_bias(32, 128, True)
    assert relative_views.t5_bias(32, 128, True) is bias and relative_views.t5_bias(32, 64, True) is not bias
    table = learned_table(16, 3)
    learned = relative_views.t5_learned_bias("t5.relative_attention_bias", *as_setting(table), 128, True)
    assert relative_views.t5_learned_bias("t5.relative_attention_bias", *as_setting(table), 128, True) is learned
    other = table.copy()
    other[0, 0] += 1.0
    assert relative_views.t5_learned_bias("t5.relative_attention_bias", *as_setting(other), 128, True) is not learned
    assert relative_views.t5_learned_bias("another", *as_setting(table), 128, True) is not learned


def test_the_language_is_part_of_the_key():
    english = relative_views.t5_buckets(32, 128, True)
    st.session_state["lang"] = "zh"
    chinese = relative_views.t5_buckets(32, 128, True)
    assert chinese is not english
    assert chinese.texts != english.texts
    assert chinese.texts[0] == tr("zh", "relative.t5.n.bidirectional", side=16, exact=8, d=128)
    en, zh = (out.figure("t5.curve").fig.to_dict() for out in (english, chinese))
    np.testing.assert_array_equal(as_array(zh["data"][0]["y"]), as_array(en["data"][0]["y"]))


def uncached_cases():
    table = learned_table(12, 2)
    return [
        ("shaw", (9, 2)),
        ("t5_matrix", (24, 16, 64, False)),
        ("t5_buckets", (8, 20, True)),
        ("t5_bias", (16, 64, False)),
        ("t5_learned_bias", ("t5.bias", *as_setting(table), 64, True)),
    ]


@pytest.mark.parametrize(("name", "settings"), uncached_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_view_equals_its_uncached_build(name, settings):
    made = getattr(relative_views, name)
    assert_same_items(made(*settings), made.uncached(*settings))


@pytest.mark.parametrize(
    ("name", "settings"),
    [
        ("shaw", (0, 3)),
        ("shaw", (10, 0)),
        # 128 buckets leave an exact region of 32 per side, which a max distance of 16 cannot exceed
        ("t5_matrix", (64, 128, 16, True)),
        ("t5_buckets", (128, 16, True)),
        ("t5_buckets", (2, 64, True)),
        ("t5_bias", (128, 16, True)),
        ("t5_learned_bias", ("t5.bias", (2, 2), (0.0, float("nan"), 1.0, 2.0), 64, True)),
        ("t5_learned_bias", ("t5.bias", (0, 3), (), 64, True)),
    ],
)
def test_refused_settings_raise_and_are_not_cached(name, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            getattr(relative_views, name)(*settings)
    assert not held_view_keys()


# ------------------------------------------------------------------------------------------------- the numbers


@pytest.mark.parametrize(("length", "clip"), [(12, 3), (32, 8), (5, 10)])
def test_shaw_index_and_the_embeddings_a_length_uses(length, clip):
    out = relative_views.shaw(length, clip)
    index = out.figure("shaw")
    expected = [[shaw_index(i, j, clip) for j in range(length)] for i in range(length)]
    assert_matrix(heatmap_z(index.fig.to_dict()), expected, what="shaw index")
    assert title(index.fig.to_dict()) == tr("en", "relative.shaw.index", k=clip)
    assert index.data is cache.family_table("shaw", {"max_relative_position": clip, "seq_len": length})
    distinct = out.figure("shaw.distinct")
    fig = distinct.fig.to_dict()
    lengths = list(range(1, max(4 * clip, 2 * length) + 1))
    np.testing.assert_array_equal(as_array(fig["data"][0]["x"]), lengths)
    # enumerated: the set of indices an L x L attention reads
    used = [len({shaw_index(i, j, clip) for i in range(n) for j in range(n)}) for n in lengths]
    np.testing.assert_array_equal(as_array(fig["data"][0]["y"]), used)
    np.testing.assert_array_equal(distinct.data["distinct_embeddings"], used)
    assert max(used) == 2 * clip + 1 and fig["layout"]["shapes"][0]["x0"] == clip + 1
    assert title(fig) == tr("en", "relative.shaw.distinct", k=clip, total=2 * clip + 1)


@pytest.mark.parametrize(("buckets", "max_distance", "bidirectional"), T5_SETTINGS)
def test_t5_matrix_is_the_bucket_of_j_minus_i(buckets, max_distance, bidirectional):
    length = 24
    shown = relative_views.t5_matrix(length, buckets, max_distance, bidirectional).figure("t5.matrix")
    kw = {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": max_distance}
    expected = [[t5_bucket(j - i, **kw) for j in range(length)] for i in range(length)]
    assert_matrix(heatmap_z(shown.fig.to_dict()), expected, what="t5 buckets")
    np.testing.assert_array_equal(shown.data, expected)


@pytest.mark.parametrize(("buckets", "max_distance", "bidirectional"), T5_SETTINGS)
def test_t5_curve_regions_sizes_and_unused_buckets(buckets, max_distance, bidirectional):
    out = relative_views.t5_buckets(buckets, max_distance, bidirectional)
    kw = {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": max_distance}
    side = buckets // 2 if bidirectional else buckets
    exact, start = side // 2, last_bucket_start(**kw)
    assert [item.kind for item in out.items if isinstance(item, Text)] == ["markdown", "info"]
    rule = "relative.t5.n.bidirectional" if bidirectional else "relative.t5.n.causal"
    assert out.texts[0] == tr("en", rule, side=side, exact=exact, d=max_distance)

    curve = out.figure("t5.curve")
    fig = curve.fig.to_dict()
    offsets = list(range(-2 * max_distance, 2 * max_distance + 1))
    np.testing.assert_array_equal(as_array(fig["data"][0]["x"]), offsets)
    np.testing.assert_array_equal(as_array(fig["data"][0]["y"]), [t5_bucket(r, **kw) for r in offsets])
    assert [trace["name"] for trace in fig["data"][1:]] == [
        tr("en", "relative.t5.region.exact", n=exact),
        tr("en", "relative.t5.region.log", n=exact, s=start),
        tr("en", "relative.t5.region.flat", s=start),
    ]
    variant = "clamp" if start >= max_distance else None
    assert curve.options == {"variant": variant, "s": start, "d": max_distance, "top": max_distance - 1}

    sizes = out.figure("t5.sizes")
    counts = collections.Counter(t5_bucket(r, **kw) for r in range(-max_distance, max_distance + 1))
    expected = [counts[b] for b in range(buckets)]
    np.testing.assert_array_equal(as_array(sizes.fig.to_dict()["data"][0]["y"]), expected)
    assert sum(expected) == 2 * max_distance + 1
    unused = ", ".join(str(b) for b in range(buckets) if counts[b] == 0) or "—"
    said = (
        tr("en", "relative.t5.unused.bidirectional", b=buckets // 2, listed=unused)
        if bidirectional
        else tr("en", "relative.t5.unused.causal", listed=unused)
    )
    assert out.texts[1] == said
    if bidirectional:
        assert str(buckets // 2) in unused.split(", ")  # "after the query at distance 0" never occurs


def test_the_flat_tail_can_start_at_the_max_distance():
    """64 causal buckets and D = 40: the logarithmic steps reach the last bucket only at D, so the caption says
    the tail is the cap at D (its "clamp" variant)."""
    assert last_bucket_start(bidirectional=False, num_buckets=64, max_distance=40) == 40
    assert relative_views.t5_buckets(64, 40, False).figure("t5.curve").options["variant"] == "clamp"
    assert relative_views.t5_buckets(32, 128, True).figure("t5.curve").options["variant"] is None


@pytest.mark.parametrize(("buckets", "max_distance", "bidirectional"), T5_SETTINGS)
def test_synthetic_bias_is_read_by_bucket(buckets, max_distance, bidirectional):
    shown = relative_views.t5_bias(buckets, max_distance, bidirectional).figure("t5.bias")
    fig = shown.fig.to_dict()
    kw = {"bidirectional": bidirectional, "num_buckets": buckets, "max_distance": max_distance}
    # the made-up table: bias[b, h] = -r 2^(-h/2) / 4 + N(0, 0.1^2) noise of seed 0, r = b mod (buckets / 2)
    noise = np.random.default_rng(0).normal(0.0, 0.1, size=(buckets, 8))
    table = [[-(b % (buckets // 2)) * 2.0 ** (-h / 2) / 4 + noise[b, h] for h in range(8)] for b in range(buckets)]
    offsets = range(-2 * max_distance, 2 * max_distance + 1)
    lines = [as_array(trace["y"]) for trace in fig["data"]]
    assert len(lines) == 8
    for h, y in enumerate(lines):
        np.testing.assert_allclose(y, [table[t5_bucket(r, **kw)][h] for r in offsets], rtol=1e-12, atol=1e-15)
    assert title(fig) == tr("en", "relative.t5.bias.synthetic", b=buckets)
    assert shown.options == {"s": last_bucket_start(**kw)}


def test_a_learned_table_is_read_with_its_own_bucket_count():
    """A table of 16 buckets drawn while the slider says 32: its buckets, not the slider's, place its biases and
    decide where they go flat."""
    table = learned_table(16, 3).astype(np.float32)
    shown = relative_views.t5_learned_bias("t5.relative_attention_bias", *as_setting(table), 128, True).figure(
        "t5.bias"
    )
    fig = shown.fig.to_dict()
    kw = {"bidirectional": True, "num_buckets": 16, "max_distance": 128}
    offsets = range(-256, 257)
    lines = [as_array(trace["y"]) for trace in fig["data"]]
    assert len(lines) == 3
    for h, y in enumerate(lines):
        np.testing.assert_array_equal(y, [float(table[t5_bucket(r, **kw), h]) for r in offsets])
    start = last_bucket_start(**kw)
    assert start != last_bucket_start(bidirectional=True, num_buckets=32, max_distance=128)
    assert shown.options == {"s": start}
    assert title(fig) == tr("en", "relative.t5.bias.learned", name="t5.relative_attention_bias", b=16, h=3)
    assert list(shown.data["relative_position"]) == list(offsets)
