"""The Compare page: every chart's data against closed forms and the core, the URL round trip of every control, both
languages, and nonsense in the URL."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz import compare

from ._support import (
    as_array,
    assert_clean,
    assert_matrix,
    figures,
    heatmap_z,
    open_page,
    sinusoidal_formula,
    title,
    tr,
    visit_tabs,
    widget,
)

TABS = ["offset", "overview", "long", "cost", "side"]


def traces(fig) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Line traces of a panel figure by legend name: (x, y)."""
    return {trace["name"]: (as_array(trace["x"]), as_array(trace["y"])) for trace in fig["data"]}


def panel_of(fig, name: str) -> str:
    return next(trace.get("yaxis", "y") for trace in fig["data"] if trace["name"] == name)


def cosine_by_offset(table, offsets):
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    similarity = unit @ unit.T
    return np.array([np.diagonal(similarity, o).mean() for o in offsets])


@pytest.fixture(scope="module")
def tour():
    at = open_page("compare")
    return visit_tabs(at, "compare", TABS)


# ------------------------------------------------------------------------------------------------------ kinds


def test_map_and_table_come_from_the_registry():
    at = open_page("compare", query={"tab": "overview"})
    assert_clean(at)
    (fig,) = figures(at)
    assert title(fig) == tr("en", "compare.map")
    placed = {}
    for trace in fig["data"]:
        for key in trace["customdata"][0].split(","):
            placed[key] = (trace["x"][0], trace["y"][0])
        names = trace["text"][0].split("<br>")
        assert names == [tr("en", f"family.{k}.name") for k in trace["customdata"][0].split(",")]
    assert set(placed) == set(posviz.FAMILIES)
    for key, (x, y) in placed.items():
        fam = posviz.family(key)
        assert (compare.STAGES[x], compare.DEPENDS[y]) == (fam.enters, fam.depends_on)
    assert fig["layout"]["xaxis"]["ticktext"] == [tr("en", f"compare.stage.{s}") for s in compare.STAGES]

    table = at.table[0].value
    assert list(table.index) == [tr("en", f"family.{k}.name") for k in posviz.FAMILIES]
    assert list(table[tr("en", "compare.col.params")]) == [f.param_formula for f in posviz.FAMILIES.values()]
    learned = [tr("en", "compare.yes" if f.learnable else "compare.no") for f in posviz.FAMILIES.values()]
    assert list(table[tr("en", "compare.col.learnable")]) == learned
    enters = [tr("en", f"enters.{f.enters}") for f in posviz.FAMILIES.values()]
    assert list(table[tr("en", "compare.col.enters")]) == enters


# -------------------------------------------------------------------------------------------------- by offset


def check_offsets(fig, length: int, lang: str = "en"):
    lines = traces(fig)
    name = {key: tr(lang, f"family.{key}.name") for key in posviz.FAMILIES}
    offsets = np.arange(-(length - 1), length)
    for key in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        np.testing.assert_array_equal(lines[name[key]][0], offsets)
    omega = 10_000.0 ** (-np.arange(0, 128, 2) / 128)
    closed = np.cos(np.abs(offsets)[:, None] * omega).mean(axis=1)
    np.testing.assert_allclose(lines[name["sinusoidal"]][1], closed, atol=1e-9)
    table = posviz.learned_init(length, 128, std=0.02, seed=0)
    np.testing.assert_allclose(lines[name["learned"]][1], cosine_by_offset(table, offsets), atol=1e-9)
    theta = 10_000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(lines[name["rope"]][1], np.cos(offsets[:, None] * theta).mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(lines[name["alibi"]][1], -0.5 * np.abs(offsets))  # symmetric ALiBi, head 0 of 8
    np.testing.assert_array_equal(lines[name["shaw"]][1], np.clip(offsets, -8, 8) + 8)
    short = min(length, 64)
    x, visible = lines[name["xlnet"]]
    np.testing.assert_array_equal(x, np.arange(-(short - 1), short))
    _, query = posviz.xlnet_masks(posviz.factorisation_order(short, 1))
    np.testing.assert_allclose(visible, [np.diagonal(query, o).mean() for o in x.astype(int)])
    # one panel per kind of quantity: the similarity families share one, the bias families another
    assert panel_of(fig, name["sinusoidal"]) == panel_of(fig, name["rope"]) == panel_of(fig, name["learned"])
    assert panel_of(fig, name["alibi"]) == panel_of(fig, name["t5"]) != panel_of(fig, name["rope"])
    assert title(fig) == tr(lang, "compare.offset", n=length)


def test_offset_tab(default_view, tour):
    assert not tour.exceptions and not tour.errors
    check_offsets(tour.by_tab["offset"][0], 128)
    check_offsets(figures(default_view("compare"))[0], 128)  # the first tab opens by default
    assert tour.widgets["len"] == 128


def test_offset_tab_from_the_url():
    at = open_page("compare", query={"tab": "offset", "len": "256"})
    assert_clean(at)
    assert widget(at, "len").value == 256
    check_offsets(figures(at)[0], 256)
    assert tr("en", "compare.offset.xlnet", n=64) in [m.value for m in at.markdown]


# ---------------------------------------------------------------------------------------- past the training length


def check_long(at, train: int, longer: int):
    assert_clean(at)
    (fig,) = figures(at)
    lines = traces(fig)
    steps, learned = lines[tr("en", "family.learned.name")]
    assert steps[0] == 0 and steps[-1] == longer - 1
    np.testing.assert_array_equal(np.isnan(learned), steps >= train)
    np.testing.assert_allclose(lines[tr("en", "family.alibi.name")][1], -0.5 * steps)
    _, sin_share = lines[tr("en", "family.sinusoidal.name")]
    assert not sin_share[steps < train].any()
    omega = 10_000.0 ** (-np.arange(0, 128, 2) / 128)
    right_after = np.searchsorted(steps, train)
    if steps[right_after] == train:  # the pairs slower than the training length are the new ones
        assert sin_share[right_after] == pytest.approx(np.mean(2 * np.pi / omega > train))
    assert [shape["x0"] for shape in fig["layout"]["shapes"]] == [train] * 3
    text = "\n".join(m.value for m in at.markdown)
    assert posviz.encodings.learned.lookup_error(train, longer - 1) in text
    i, j = np.indices((longer, longer))
    shaw_share = np.mean(np.abs(j - i) > 8)  # pairs farther apart than Shaw's k = 8
    assert (
        tr(
            "en",
            "compare.long.shaw",
            eval=longer,
            train=train,
            k=8,
            share=f"{shaw_share:.0%}",
            share_train=f"{np.mean(np.abs(j[:train, :train] - i[:train, :train]) > 8):.0%}",
        )
        in text
    )


def test_long_tab(tour):
    assert tour.widgets["train"] == 512 and tour.widgets["eval"] == 2048


def test_long_tab_from_the_url():
    at = open_page("compare", query={"tab": "long", "train": "256", "eval": "1024"})
    assert (widget(at, "train").value, widget(at, "eval").value) == (256, 1024)
    check_long(at, 256, 1024)
    assert title(figures(at)[0]) == tr("en", "compare.long", train=256, eval=1024)


def test_long_tab_says_when_nothing_is_new():
    at = open_page("compare", query={"tab": "long", "train": "4096", "eval": "1024"})
    assert_clean(at)
    assert tr("en", "compare.long.same", train=4096, eval=1024) in [i.value for i in at.info]


# ------------------------------------------------------------------------------------------------------- cost


def check_cost(fig, d: int, h: int):
    n = 2.0 ** np.arange(4, 16)
    name = {key: tr("en", f"family.{key}.name") for key in posviz.FAMILIES}
    params = {t["name"]: as_array(t["y"]) for t in fig["data"] if t.get("yaxis", "y") == "y"}
    stored = {t["name"]: as_array(t["y"]) for t in fig["data"] if t.get("yaxis") == "y2"}
    assert set(params) == {name["learned"], name["t5"], name["shaw"]}  # zeros are not drawn on a log axis
    np.testing.assert_array_equal(params[name["learned"]], n * d)
    np.testing.assert_array_equal(params[name["t5"]], 32 * h)
    np.testing.assert_array_equal(params[name["shaw"]], 2 * (2 * 8 + 1) * (d // h))
    np.testing.assert_array_equal(stored[name["sinusoidal"]], n * d)
    np.testing.assert_array_equal(stored[name["rope"]], n * (d // h))
    np.testing.assert_array_equal(stored[name["alibi"]], h + h * n**2)
    assert fig["layout"]["xaxis"]["type"] == fig["layout"]["yaxis"]["type"] == "log"


def test_cost_tab(tour):
    check_cost(tour.by_tab["cost"][0], 768, 12)


def test_cost_tab_from_the_url():
    at = open_page("compare", query={"tab": "cost", "cd": "512", "ch": "8"})
    assert_clean(at)
    assert (widget(at, "cd").value, widget(at, "ch").value) == (512, 8)
    check_cost(figures(at)[0], 512, 8)


# ------------------------------------------------------------------------------------------------ side by side


def test_side_by_side_default_is_base_10000_against_100(tour):
    a, b, offsets = tour.by_tab["side"]
    assert_matrix(heatmap_z(a), sinusoidal_formula(128, 128), what="A")
    assert_matrix(heatmap_z(b), sinusoidal_formula(128, 128, base=100.0), what="B")
    assert tour.widgets["a_sinusoidal_base"] == 10000 and tour.widgets["b_sinusoidal_base"] == 100
    (xa, ya), (xb, yb) = traces(offsets).values()
    lags = np.arange(-127, 128)
    np.testing.assert_array_equal(xa, lags)
    for base, values in ((10_000.0, ya), (100.0, yb)):
        omega = base ** (-np.arange(0, 128, 2) / 128)
        np.testing.assert_allclose(values, np.cos(np.abs(lags)[:, None] * omega).mean(axis=1), atol=1e-9)
    assert len({t.get("yaxis", "y") for t in offsets["data"]}) == 1  # the same quantity: one panel
    assert tr("en", "compare.side.offset.base") in " ".join(tour.captions)


def test_side_by_side_from_the_url():
    query = {"tab": "side", "a": "rope", "a_rope_hd": "32", "a_rope_n": "40", "b": "alibi", "b_alibi_heads": "4"}
    at = open_page("compare", query=query | {"b_alibi_head": "2", "b_alibi_len": "20", "b_alibi_causal": "false"})
    assert_clean(at)
    assert {k: widget(at, k).value for k in ("a", "a_rope_hd", "a_rope_n", "b", "b_alibi_heads", "b_alibi_head")} == {
        "a": "rope",
        "a_rope_hd": 32,
        "a_rope_n": 40,
        "b": "alibi",
        "b_alibi_heads": 4,
        "b_alibi_head": 2,
    }
    assert widget(at, "b_alibi_causal").value is False
    a, b, offsets = figures(at)
    theta = 10_000.0 ** (-np.arange(0, 32, 2) / 32)
    assert_matrix(heatmap_z(a), np.cos(np.arange(40)[:, None] * theta), what="RoPE table")
    i, j = np.indices((20, 20))
    slope = 2.0 ** (-8 * 3 / 4)  # head 2 of 4: m = 2^(-8h/n), h = 3
    assert_matrix(heatmap_z(b), -slope * np.abs(i - j), what="ALiBi bias")
    (xa, ya), (xb, yb) = traces(offsets).values()
    np.testing.assert_allclose(ya, np.cos(xa[:, None] * theta).mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(yb, -slope * np.abs(xb))
    assert len({t.get("yaxis", "y") for t in offsets["data"]}) == 2  # a score and a bias: two panels
    assert title(a) == tr("en", "compare.side.matrix.rope", side="A")


# --------------------------------------------------------------------------------------------------- languages


def test_chinese_view():
    at = open_page("compare", query={"tab": "offset"}, lang="zh")
    assert_clean(at)
    check_offsets(figures(at)[0], 128, lang="zh")
    assert tr("zh", "compare.offset.notice") in [c.value for c in at.caption]
    assert [t.value for t in at.title] == [tr("zh", "page.compare")]
    tabs = visit_tabs(at, "compare", ["overview"], lang="zh")
    assert title(tabs.by_tab["overview"][0]) == tr("zh", "compare.map")
    assert list(at.table[0].value.index) == [tr("zh", f"family.{k}.name") for k in posviz.FAMILIES]


# ---------------------------------------------------------------------------------------------------- nonsense


def test_nonsense_in_the_url_falls_back():
    at = open_page("compare", query={"tab": "nope"})
    assert_clean(at)
    assert title(figures(at)[0]) == tr("en", "compare.offset", n=128)  # the first tab
    at = open_page("compare", query={"tab": "offset", "len": "7"})
    assert_clean(at)
    assert widget(at, "len").value == 128
    at = open_page("compare", query={"tab": "long", "train": "x", "eval": "-3"})
    assert_clean(at)
    assert (widget(at, "train").value, widget(at, "eval").value) == (512, 2048)
    at = open_page("compare", query={"tab": "cost", "cd": "huge", "ch": "0"})
    assert_clean(at)
    assert (widget(at, "cd").value, widget(at, "ch").value) == (768, 12)
    at = open_page("compare", query={"tab": "side", "a": "nope", "b": "xlnet", "a_sinusoidal_base": "abc"})
    assert_clean(at)
    assert (widget(at, "a").value, widget(at, "b").value, widget(at, "a_sinusoidal_base").value) == (
        "sinusoidal",
        "xlnet",
        10000,
    )
