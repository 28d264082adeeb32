"""The Compare page's views (posviz/ui/views/compare.py): each kept whole by its settings and the language, its
numbers equal to the formulas derived here by hand, its refused settings raised and never cached."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit as st

import posviz
from posviz.encodings import relative
from posviz.ui import cache
from posviz.ui.views import compare as compare_views

from ._support import (
    as_array,
    assert_matrix,
    assert_same_items,
    heatmap_z,
    rope_table_formula,
    sinusoidal_formula,
    title,
    tr,
)

pytestmark = pytest.mark.usefixtures("views_in_english")


def no_view_cached() -> bool:
    return not [key for key in cache.TABLES.keys() if key[0] == "view"]


def lines(fig) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """A panel figure's line traces by legend name: (x, y)."""
    return {trace["name"]: (as_array(trace["x"]), as_array(trace["y"])) for trace in fig["data"]}


def panel(fig, name: str) -> str:
    return next(trace.get("yaxis", "y") for trace in fig["data"] if trace["name"] == name)


def name(key: str) -> str:
    return tr("en", f"family.{key}.name")


def mean_cos(offsets, width: int, base: float = 10_000.0) -> np.ndarray:
    """mean_k cos(o w_k), w_k = base^(-2k/width): the sinusoidal table's mean cosine by offset (width d) and RoPE's
    score of q = k = ones (width head_dim), each sin/cos pair contributing cos(o w_k) and every row of norm
    sqrt(d/2)."""
    omega = base ** (-np.arange(0, width, 2) / width)
    return np.cos(np.abs(np.asarray(offsets, float))[:, None] * omega).mean(axis=1)


def cosine_by_offset(table, offsets) -> np.ndarray:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    similarity = unit @ unit.T
    return np.array([np.diagonal(similarity, int(o)).mean() for o in offsets])


def visible_share(order, offsets) -> np.ndarray:
    """The share of queries i whose query stream sees key i + o: rank(i + o) < rank(i), rank the place of a token
    in the factorisation order (Yang et al., 2019, eq. 5)."""
    rank = np.empty(len(order), dtype=int)
    rank[np.asarray(order)] = np.arange(len(order))
    n = len(order)
    return np.array([np.mean([rank[i + o] < rank[i] for i in range(n) if 0 <= i + o < n]) for o in offsets])


def t5_bucket(relative_position, **kwargs) -> np.ndarray:
    """transformers' ``T5Attention._relative_position_bucket`` (key index - query index -> bucket)."""
    import torch
    from transformers.models.t5.modeling_t5 import T5Attention

    rel = torch.as_tensor(np.asarray(relative_position, dtype=np.int64))
    return T5Attention._relative_position_bucket(rel, **kwargs).numpy()


def unseen_share(steps, train: int, omega) -> np.ndarray:
    """Share of the pairs k whose angle x w_k (mod 2 pi) lies past the arc [0, (T - 1) w_k] training swept."""
    swept = (train - 1) * np.asarray(omega)
    angle = np.mod(np.asarray(steps, float)[:, None] * omega, 2 * np.pi)
    return ((swept < 2 * np.pi) & (angle > swept + 1e-9)).mean(axis=1)


# ------------------------------------------------------------------------------------------------------ kinds


def test_family_map_places_every_term_by_its_stage_and_signal():
    out = compare_views.family_map()
    assert compare_views.family_map() is out
    fig = out.figure("map").fig.to_dict()
    assert title(fig) == tr("en", "compare.map")
    placed = {}
    for trace in fig["data"]:
        for term in trace["customdata"][0].split(","):
            placed[term] = (trace["x"][0], trace["y"][0], trace["marker"].get("symbol") == "circle-open")
    stages = fig["layout"]["meta"]["x_labels"]
    rows = fig["layout"]["meta"]["y_labels"]
    for fam in posviz.FAMILIES.values():
        for i, term in enumerate(fam.terms):
            row = term.depends_on
            if row == "offset":  # the offset split by whether the query or key takes part too
                row = "offset_content" if term.content else "offset"
            x, y, hollow = placed[fam.key if i == 0 else f"{fam.key}:{term.stage}"]
            assert stages[x] == tr("en", f"compare.stage.{term.stage}")
            assert rows[y] == tr("en", f"compare.signal.{row}")
            if not term.position_code:
                assert hollow
    assert placed["xlnet:mask"][2] and not placed["xlnet"][2]
    data = out.figure("map").data
    assert sorted(data["term"]) == sorted(placed)
    assert dict(zip(data["term"], data["position_code"], strict=True))["xlnet:mask"] is False


def test_family_map_follows_the_language():
    english = compare_views.family_map()
    st.session_state["lang"] = "zh"
    chinese = compare_views.family_map()
    assert chinese is not english
    assert title(chinese.figure("map").fig.to_dict()) == tr("zh", "compare.map")
    assert_same_items(chinese, compare_views.family_map.uncached())


def test_feature_rows_name_every_family_in_registry_order():
    rows = compare_views.feature_rows()
    assert [row[tr("en", "compare.col.family")] for row in rows] == [name(key) for key in posviz.FAMILIES]
    by_family = {row[tr("en", "compare.col.family")]: row for row in rows}
    assert by_family[name("t5")][tr("en", "compare.col.enters")] == tr("en", "enters.bias")
    assert by_family[name("sinusoidal")][tr("en", "compare.col.params")] == "0"


# -------------------------------------------------------------------------------------------------- by offset


def test_offset_curves_are_the_hand_derived_signals():
    length = 48
    out = compare_views.offset(length, False)
    fig = out.figure("offset").fig.to_dict()
    got = lines(fig)
    offsets = np.arange(-(length - 1), length)
    for key in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        np.testing.assert_array_equal(got[name(key)][0], offsets)
    np.testing.assert_allclose(got[name("sinusoidal")][1], mean_cos(offsets, 128), atol=1e-9)
    table = posviz.learned_init(length, 128, std=0.02, seed=0)
    np.testing.assert_allclose(got[name("learned")][1], cosine_by_offset(table, offsets), atol=1e-9)
    np.testing.assert_allclose(got[name("rope")][1], mean_cos(offsets, 64), atol=1e-12)
    np.testing.assert_allclose(got[name("alibi")][1], -0.5 * np.abs(offsets))  # head 0 of 8: m = 2^-1, symmetric
    np.testing.assert_array_equal(got[name("shaw")][1], np.clip(offsets, -8, 8) + 8)
    bias = relative.t5_synthetic_bias_table(32, 8)[:, 0]  # the made-up table; the lookup is T5's own
    buckets = t5_bucket(offsets, bidirectional=True, num_buckets=32, max_distance=128)
    np.testing.assert_allclose(got[name("t5")][1], bias[buckets])
    x, visible = got[tr("en", "compare.term.xlnet.mask")]
    np.testing.assert_array_equal(x, offsets)  # 48 positions fit XLNet's 64
    np.testing.assert_allclose(visible, visible_share(posviz.factorisation_order(length, 1), offsets.astype(int)))
    assert panel(fig, name("sinusoidal")) == panel(fig, name("rope")) != panel(fig, name("alibi"))
    assert title(fig) == tr("en", "compare.offset", n=length)
    frame = out.figure("offset").data
    assert list(frame.index) == list(offsets)
    np.testing.assert_allclose(frame["rope_score"], mean_cos(offsets, 64), atol=1e-12)
    assert tr("en", "compare.offset.xlnet", n=64) not in out.texts
    assert tr("en", "compare.item", name=name("shaw"), text=tr("en", "compare.what.shaw")) in out.texts[0]


def test_offset_past_xlnets_length_draws_its_mask_shorter_and_says_so():
    out = compare_views.offset(100, False)
    x, _ = lines(out.figure("offset").fig.to_dict())[tr("en", "compare.term.xlnet.mask")]
    np.testing.assert_array_equal(x, np.arange(-63, 64))
    assert out.texts[-1] == tr("en", "compare.offset.xlnet", n=64)
    frame = out.figure("offset").data
    assert frame["xlnet_visible"].isna().sum() == 2 * (99 - 63)  # blank where the mask has no offset


def test_offset_is_kept_by_its_settings_and_shares_its_curves():
    first = compare_views.offset(32, False)
    assert compare_views.offset(32, False) is first
    assert compare_views.offset(length=32, side_by_side=False) is first
    assert compare_views.offset(33, False) is not first
    side_by_side = compare_views.offset(32, True)
    assert side_by_side is not first
    # the panels in a row (presentation mode) from the same curves, not computed again
    stacked, row = first.figure("offset").fig.to_dict(), side_by_side.figure("offset").fig.to_dict()
    assert row["layout"]["xaxis2"]["domain"][0] > row["layout"]["xaxis"]["domain"][1]
    assert stacked["layout"]["yaxis2"]["domain"][1] < stacked["layout"]["yaxis"]["domain"][0]
    assert side_by_side.figure("offset").data.equals(first.figure("offset").data)
    held = compare_views.offset_curve("rope", (("n_positions", 32),))
    assert compare_views.offset_curve("rope", (("n_positions", 32),)) is held
    assert_same_items(side_by_side, compare_views.offset.uncached(32, True))


def test_offset_refuses_a_length_of_zero():
    for _ in range(2):
        with pytest.raises(ValueError):
            compare_views.offset(0, False)
    assert no_view_cached()


# ---------------------------------------------------------------------------------------- past the training length


def test_long_is_the_hand_derived_shares_biases_and_texts():
    train, longer = 64, 256
    out = compare_views.long(train, longer)
    fig = out.figure("long").fig.to_dict()
    got = lines(fig)
    steps, learned = got[name("learned")]
    np.testing.assert_array_equal(steps, np.arange(longer))
    np.testing.assert_array_equal(np.isnan(learned), steps >= train)
    np.testing.assert_allclose(got[name("alibi")][1], -0.5 * steps)
    omega = 10_000.0 ** (-np.arange(0, 128, 2) / 128)
    np.testing.assert_allclose(got[name("sinusoidal")][1], unseen_share(steps, train, omega))
    theta = 10_000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(got[name("rope")][1], unseen_share(steps, train, theta))
    assert [shape["x0"] for shape in fig["layout"]["shapes"]] == [train] * 3
    assert title(fig) == tr("en", "compare.long", train=train, eval=longer)
    assert not any(text == tr("en", "compare.long.same", train=train, eval=longer) for text in out.texts)
    (text,) = out.texts
    assert posviz.encodings.learned.lookup_error(train, longer - 1) in text
    i, j = np.indices((longer, longer))
    far = np.abs(j - i) > 8
    shaw = tr(
        "en",
        "compare.long.shaw",
        eval=longer,
        train=train,
        k=8,
        share=f"{far.mean():.0%}",
        share_train=f"{far[:train, :train].mean():.0%}",
    )
    assert shaw in text
    last = t5_bucket(j - i, bidirectional=True, num_buckets=32, max_distance=128) % 16 == 15
    t5 = tr(
        "en",
        "compare.long.t5",
        eval=longer,
        train=train,
        start=int(np.abs(j - i)[last].min()),
        share=f"{last.mean():.0%}",
        share_train=f"{last[:train, :train].mean():.0%}",
    )
    assert t5 in text
    m = 0.5  # head 0 of 8; causal, equal scores: the last query's mass on keys at distance >= train
    weights = np.exp(-m * np.arange(longer))
    mass = weights[train:].sum() / weights.sum()
    assert f"{mass:.1e}" in text


def test_long_says_when_nothing_is_new_before_its_figure():
    out = compare_views.long(1024, 512)
    assert out.items[0] == compare_views.Text(tr("en", "compare.long.same", train=1024, eval=512), "info")
    assert tr("en", "compare.long.learned.inside", p=511) in out.texts[-1]
    steps, learned = lines(out.figure("long").fig.to_dict())[name("learned")]
    assert not np.isnan(learned).any() and steps[-1] == 511


def test_long_is_kept_by_its_settings():
    first = compare_views.long(128, 512)
    assert compare_views.long(128, 512) is first
    assert compare_views.long(128, 1024) is not first
    assert compare_views.long(256, 512) is not first
    assert_same_items(first, compare_views.long.uncached(128, 512))


@pytest.mark.parametrize(("train", "longer"), [(0, 512), (64, 0), (64, posviz.MAX_POSITIONS + 1)])
def test_long_refuses_lengths_out_of_range(train, longer):
    for _ in range(2):
        with pytest.raises(ValueError):
            compare_views.long(train, longer)
    assert no_view_cached()


# ------------------------------------------------------------------------------------------------------- cost


def test_cost_counts_are_the_hand_derived_sizes():
    d, h, layers = 96, 8, 3
    out = compare_views.cost(d, h, layers)
    fig = out.figure("cost").fig.to_dict()
    n = 2.0 ** np.arange(4, 16)
    params = {t["name"]: as_array(t["y"]) for t in fig["data"] if t.get("yaxis", "y") == "y"}
    stored = {t["name"]: as_array(t["y"]) for t in fig["data"] if t.get("yaxis") == "y2"}
    assert set(params) == {name(k) for k in ("learned", "t5", "shaw", "xlnet")}  # no zeros on a log axis
    d_head = d // h
    np.testing.assert_array_equal(params[name("learned")], n * d)
    np.testing.assert_array_equal(params[name("t5")], 32 * h)
    np.testing.assert_array_equal(params[name("shaw")], layers * 2 * (2 * 8 + 1) * d_head)
    np.testing.assert_array_equal(params[name("xlnet")], layers * (d + 1) * h * d_head)
    np.testing.assert_array_equal(stored[name("sinusoidal")], n * d)
    np.testing.assert_array_equal(stored[name("rope")], n * d_head)
    np.testing.assert_array_equal(stored[name("alibi")], h + h * n**2)
    np.testing.assert_array_equal(stored[name("t5")], 32 * h + h * n**2)
    assert title(fig) == tr("en", "compare.cost", d=d, h=h, layers=layers)
    assert out.figure("cost").options == {"buckets": 32, "k": 8}
    np.testing.assert_array_equal(out.figure("cost").data["learned_params"], n * d)
    assert out.texts == []


def test_cost_says_when_the_heads_do_not_split_the_width():
    out = compare_views.cost(104, 12, 1)
    assert out.texts == [tr("en", "compare.cost.split", d=104, h=12, hd=8)]


def test_cost_is_kept_by_its_settings():
    first = compare_views.cost(768, 12, 12)
    assert compare_views.cost(768, 12, 12) is first
    assert compare_views.cost(768, 12, 6) is not first
    assert compare_views.cost(768, 8, 12) is not first
    assert_same_items(first, compare_views.cost.uncached(768, 12, 12))


def test_cost_refuses_more_heads_than_dimensions():
    for _ in range(2):
        with pytest.raises(ValueError, match="12 heads cannot split a model dimension of 8"):
            compare_views.cost(8, 12, 1)
    assert no_view_cached()


# ------------------------------------------------------------------------------------------------ side by side


SIN_A = (("base", 10_000.0), ("d_model", 32), ("layout", "interleaved"), ("n_positions", 24))
SIN_B = (("base", 100.0), ("d_model", 32), ("layout", "interleaved"), ("n_positions", 24))


def test_side_table_is_the_familys_shared_table():
    out = compare_views.side_table("a", "sinusoidal", SIN_A)
    item = out.figure("side.matrix.sinusoidal")
    assert_matrix(heatmap_z(item.fig.to_dict()), sinusoidal_formula(24, 32), what="A")
    assert item.data is cache.family_table("sinusoidal", dict(SIN_A))
    assert item.options == {"suffix": "a", "chart": "side_a"}
    assert title(item.fig.to_dict()) == tr("en", "compare.side.matrix.sinusoidal", side="A")
    rope = compare_views.side_table("b", "rope", (("base", 500.0), ("head_dim", 16), ("n_positions", 30)))
    fig = rope.figure("side.matrix.rope").fig.to_dict()
    assert_matrix(heatmap_z(fig), rope_table_formula(30, 16, base=500.0), what="B")
    i, j = np.indices((12, 12))
    alibi = compare_views.side_table(
        "b", "alibi", (("causal", False), ("head", 1), ("n_heads", 4), ("seq_len", 12))
    ).figure("side.matrix.alibi")
    assert_matrix(heatmap_z(alibi.fig.to_dict()), -(2.0**-4) * np.abs(i - j), what="ALiBi head 1 of 4")
    assert alibi.fig.to_dict()["data"][0]["colorscale"][0][1] != fig["data"][0]["colorscale"][0][1]  # Viridis


def test_side_table_is_kept_by_its_settings():
    first = compare_views.side_table("a", "sinusoidal", SIN_A)
    assert compare_views.side_table("a", "sinusoidal", SIN_A) is first
    assert compare_views.side_table("b", "sinusoidal", SIN_A) is not first
    assert compare_views.side_table("a", "sinusoidal", SIN_B) is not first
    assert_same_items(first, compare_views.side_table.uncached("a", "sinusoidal", SIN_A))


@pytest.mark.parametrize(
    ("key", "params"),
    [
        ("rope", (("base", 10_000.0), ("head_dim", 15), ("n_positions", 8))),
        ("sinusoidal", (("base", 10_000.0), ("d_model", 0), ("layout", "interleaved"), ("n_positions", 8))),
    ],
)
def test_side_table_refuses_a_bad_setting(key, params):
    for _ in range(2):
        with pytest.raises(ValueError):
            compare_views.side_table("a", key, params)
    assert no_view_cached()


def test_side_offset_of_two_bases_is_one_panel_with_a_note():
    out = compare_views.side_offset("sinusoidal", SIN_A, "sinusoidal", SIN_B)
    fig = out.figure("side.offset").fig.to_dict()
    got = lines(fig)
    offsets = np.arange(-23, 24)
    a = tr("en", "compare.side.detail", label=f"A · {name('sinusoidal')}", detail=f"{tr('en', 'param.base')} 10000")
    b = tr("en", "compare.side.detail", label=f"B · {name('sinusoidal')}", detail=f"{tr('en', 'param.base')} 100")
    assert list(got) == [a, b]  # only the base differs, so only the base is named
    np.testing.assert_allclose(got[a][1], mean_cos(offsets, 32, 10_000.0), atol=1e-9)
    np.testing.assert_allclose(got[b][1], mean_cos(offsets, 32, 100.0), atol=1e-9)
    assert panel(fig, a) == panel(fig, b)
    assert [trace["line"]["dash"] for trace in fig["data"]] == ["solid", "dash"]
    assert out.items[-1] == compare_views.Text(tr("en", "compare.side.offset.base"), "caption")
    assert list(out.figure("side.offset").data.columns) == ["a_cosine", "b_cosine"]


def test_side_offset_of_two_kinds_is_two_panels_named_by_family():
    rope = (("base", 10_000.0), ("head_dim", 32), ("n_positions", 40))
    alibi = (("causal", True), ("head", 2), ("n_heads", 4), ("seq_len", 20))
    out = compare_views.side_offset("rope", rope, "alibi", alibi)
    fig = out.figure("side.offset").fig.to_dict()
    (xa, ya), (xb, yb) = lines(fig).values()
    assert list(lines(fig)) == [f"A · {name('rope')}", f"B · {name('alibi')}"]
    np.testing.assert_allclose(ya, mean_cos(xa, 32), atol=1e-12)
    slope = 2.0 ** (-8 * 3 / 4)  # head 2 of 4: m = 2^(-8h/n), h = 3
    np.testing.assert_array_equal(np.isnan(yb), xb > 0)  # causal: later keys are masked
    np.testing.assert_allclose(yb[xb <= 0], -slope * np.abs(xb[xb <= 0]))
    assert len({trace.get("yaxis", "y") for trace in fig["data"]}) == 2
    assert out.texts == []


def test_side_offset_keeps_each_sides_curve_when_the_other_changes():
    first = compare_views.side_offset("sinusoidal", SIN_A, "sinusoidal", SIN_B)
    assert compare_views.side_offset("sinusoidal", SIN_A, "sinusoidal", SIN_B) is first
    held = compare_views.offset_curve("sinusoidal", SIN_A)
    shaw = (("max_relative_position", 3), ("seq_len", 9))
    other = compare_views.side_offset("sinusoidal", SIN_A, "shaw", shaw)
    assert other is not first and not other.texts
    assert compare_views.offset_curve("sinusoidal", SIN_A) is held  # side A's curve, not computed again
    _, index = lines(other.figure("side.offset").fig.to_dict())[f"B · {name('shaw')}"]
    np.testing.assert_array_equal(index, np.clip(np.arange(-8, 9), -3, 3) + 3)
    assert_same_items(other, compare_views.side_offset.uncached("sinusoidal", SIN_A, "shaw", shaw))


def test_side_offset_refuses_a_parameter_the_family_does_not_have():
    for _ in range(2):
        with pytest.raises(ValueError):
            compare_views.side_offset("sinusoidal", SIN_A, "shaw", (("seq_len", 9), ("width", 3)))
    assert no_view_cached()


def test_side_offset_notes_the_bases_of_sinusoidal_tables_only():
    rope = (("base", 10_000.0), ("head_dim", 16), ("n_positions", 12))
    other_base = (("base", 100.0), ("head_dim", 16), ("n_positions", 12))
    out = compare_views.side_offset("rope", rope, "rope", other_base)
    assert out.texts == []
    assert compare_views.side_offset("sinusoidal", SIN_A, "sinusoidal", SIN_A).texts == []
