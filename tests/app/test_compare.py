"""The Compare page: every chart's data against closed forms and the core, the URL round trip of every control, both
languages, and nonsense in the URL."""

from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.lessons import compare

from ._support import (
    as_array,
    assert_clean,
    assert_matrix,
    figures,
    heatmap_z,
    open_page,
    sinusoidal_formula,
    teaching_text,
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


def t5_bucket(relative_position, **kwargs) -> np.ndarray:
    """transformers' ``T5Attention._relative_position_bucket`` (key index - query index -> bucket)."""
    import torch
    from transformers.models.t5.modeling_t5 import T5Attention

    rel = torch.as_tensor(np.asarray(relative_position, dtype=np.int64))
    return T5Attention._relative_position_bucket(rel, **kwargs).numpy()


def cosine_by_offset(table, offsets):
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    similarity = unit @ unit.T
    return np.array([np.diagonal(similarity, o).mean() for o in offsets])


@pytest.fixture(scope="module")
def tour():
    at = open_page("compare")
    return visit_tabs(at, "compare", TABS)


# ------------------------------------------------------------------------------------------------------ kinds


def map_terms(fig) -> dict[str, dict]:
    """The map's markers by term id ("shaw", "shaw:values", ...): position, label, hollow or not."""
    placed = {}
    for trace in fig["data"]:
        ids = trace["customdata"][0].split(",")
        names = trace["meta"]  # the whole labels; the text drawn is the same, wrapped
        assert trace["text"][0].replace("<br>", "").replace(" ", "") == "".join(names).replace(" ", "")
        for term, label in zip(ids, names, strict=True):
            placed[term] = {
                "x": trace["x"][0],
                "y": trace["y"][0],
                "name": label,
                "hollow": trace["marker"].get("symbol") == "circle-open",
            }
    return placed


def check_map(fig, lang: str = "en"):
    assert title(fig) == tr(lang, "compare.map")
    placed = map_terms(fig)
    expected = {}
    for fam in posviz.FAMILIES.values():
        for i, term in enumerate(fam.terms):
            expected[fam.key if i == 0 else f"{fam.key}:{term.stage}"] = (fam, term, i)
    assert set(placed) == set(expected)
    stages, rows = fig["layout"]["meta"]["x_labels"], fig["layout"]["meta"]["y_labels"]
    for axis, labels in (("xaxis", stages), ("yaxis", rows)):
        drawn = [text.replace("<br>", "").replace(" ", "") for text in fig["layout"][axis]["ticktext"]]
        assert drawn == [label.replace(" ", "") for label in labels]
    assert stages == [tr(lang, f"compare.stage.{s}") for s in compare.STAGES]
    assert rows == [tr(lang, f"compare.signal.{s}") for s in compare.SIGNALS]
    for term_id, (fam, term, i) in expected.items():
        got = placed[term_id]
        assert (compare.STAGES[got["x"]], compare.SIGNALS[got["y"]]) == (term.stage, compare.signal(term))
        label = tr(lang, f"family.{fam.key}.name") if i == 0 else tr(lang, f"compare.term.{fam.key}.{term.stage}")
        assert got["name"] == label and got["hollow"] == (not term.position_code)
    return placed, stages, rows


def test_map_and_table_come_from_the_registry():
    at = open_page("compare", query={"tab": "overview"})
    assert_clean(at)
    (fig,) = figures(at)
    placed, stages, rows = check_map(fig)
    # what a reader sees: Shaw's term depends on the tokens and the offset, T5's on the offset only; Shaw also acts
    # on the values; XLNet's positions sit with Shaw, its mask (hollow) in a row of its own; labels are wrapped
    where = {key: (stages[p["x"]], rows[p["y"]]) for key, p in placed.items()}
    score, bias = tr("en", "compare.stage.score"), tr("en", "compare.stage.bias")
    with_tokens, offset_only = tr("en", "compare.signal.offset_content"), tr("en", "compare.signal.offset")
    assert where["shaw"] == where["xlnet"] == (score, with_tokens)
    assert where["t5"] == where["alibi"] == (bias, offset_only)
    assert where["shaw:values"] == (tr("en", "compare.stage.values"), offset_only)
    assert where["xlnet:mask"] == (tr("en", "compare.stage.mask"), tr("en", "compare.signal.order"))
    assert placed["xlnet:mask"]["hollow"] and not placed["xlnet"]["hollow"]

    table = at.table[0].value
    families = list(posviz.FAMILIES.values())
    assert list(table.index) == [tr("en", f"family.{f.key}.name") for f in families]
    params = [
        tr("en", f"compare.scope.{f.param_scope}", formula=f.param_formula) if f.param_scope else "0" for f in families
    ]
    assert list(table[tr("en", "compare.col.params")]) == params
    learned = [tr("en", "compare.yes" if f.learnable else "compare.no") for f in families]
    assert list(table[tr("en", "compare.col.learnable")]) == learned
    content = dict(zip(table.index, table[tr("en", "compare.col.content")], strict=True))
    assert content[tr("en", "family.shaw.name")] == content[tr("en", "family.xlnet.name")] == tr("en", "compare.yes")
    assert content[tr("en", "family.t5.name")] == content[tr("en", "family.alibi.name")] == tr("en", "compare.no")
    enters = dict(zip(table.index, table[tr("en", "compare.col.enters")], strict=True))
    join = tr("en", "compare.enters.join")
    assert enters[tr("en", "family.shaw.name")] == join.join([tr("en", "enters.score"), tr("en", "enters.values")])
    assert enters[tr("en", "family.xlnet.name")] == join.join(
        [tr("en", "enters.score"), tr("en", "compare.not_code", how=tr("en", "enters.mask"))]
    )
    assert enters[tr("en", "family.t5.name")] == tr("en", "enters.bias")
    scope = dict(zip(table.index, table[tr("en", "compare.col.params")], strict=True))
    assert scope[tr("en", "family.learned.name")] == tr("en", "compare.scope.input", formula="n·d")
    assert scope[tr("en", "family.t5.name")] == tr("en", "compare.scope.first_layer", formula="num_buckets·num_heads")
    assert scope[tr("en", "family.shaw.name")] == tr("en", "compare.scope.layer", formula="2(2k+1)·d_head")


# -------------------------------------------------------------------------------------------------- by offset


def check_offsets(fig, length: int, lang: str = "en"):
    lines = traces(fig)
    name = {key: tr(lang, f"family.{key}.name") for key in posviz.FAMILIES}
    offsets = np.arange(-(length - 1), length)
    for key in ("sinusoidal", "learned", "rope", "alibi", "t5", "shaw"):
        np.testing.assert_array_equal(lines[name[key]][0], offsets)
    assert name["xlnet"] not in lines  # the mask is not drawn as XLNet's position signal
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
    x, visible = lines[tr(lang, "compare.term.xlnet.mask")]  # XLNet's mask, labelled as such
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
    # T5 (32 bidirectional buckets, max distance 128): the last bucket starts where transformers first reaches it
    buckets = t5_bucket(j - i, bidirectional=True, num_buckets=32, max_distance=128)
    last = buckets % 16 == 15
    start = int(np.abs(j - i)[last].min())
    assert start == 91
    t5_text = tr(
        "en",
        "compare.long.t5",
        eval=longer,
        train=train,
        share=f"{last.mean():.0%}",
        share_train=f"{last[:train, :train].mean():.0%}",
        start=start,
    )
    assert t5_text in text


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


def check_cost(fig, d: int, h: int, layers: int):
    n = 2.0 ** np.arange(4, 16)
    name = {key: tr("en", f"family.{key}.name") for key in posviz.FAMILIES}
    params = {t["name"]: as_array(t["y"]) for t in fig["data"] if t.get("yaxis", "y") == "y"}
    stored = {t["name"]: as_array(t["y"]) for t in fig["data"] if t.get("yaxis") == "y2"}
    assert set(params) == {name[k] for k in ("learned", "t5", "shaw", "xlnet")}  # zeros are not drawn on a log axis
    d_head = d // h
    np.testing.assert_array_equal(params[name["learned"]], n * d)  # one table for the whole model
    np.testing.assert_array_equal(params[name["t5"]], 32 * h)  # one table, in the first layer
    np.testing.assert_array_equal(params[name["shaw"]], layers * 2 * (2 * 8 + 1) * d_head)  # a^K, a^V per layer
    np.testing.assert_array_equal(params[name["xlnet"]], layers * (d + 1) * h * d_head)  # W_R and v per layer
    np.testing.assert_array_equal(stored[name["sinusoidal"]], n * d)
    np.testing.assert_array_equal(stored[name["rope"]], n * d_head)
    np.testing.assert_array_equal(stored[name["alibi"]], h + h * n**2)
    assert fig["layout"]["xaxis"]["type"] == fig["layout"]["yaxis"]["type"] == "log"
    assert title(fig) == tr("en", "compare.cost", d=d, h=h, layers=layers)


def test_cost_tab(tour):
    check_cost(tour.by_tab["cost"][0], 768, 12, 12)


def test_cost_tab_from_the_url():
    at = open_page("compare", query={"tab": "cost", "cd": "512", "ch": "8", "cl": "3"})
    assert_clean(at)
    assert (widget(at, "cd").value, widget(at, "ch").value, widget(at, "cl").value) == (512, 8, 3)
    check_cost(figures(at)[0], 512, 8, 3)


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
    check_map(tabs.by_tab["overview"][0], lang="zh")
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
    at = open_page("compare", query={"tab": "cost", "cd": "huge", "ch": "0", "cl": "-1"})
    assert_clean(at)
    assert (widget(at, "cd").value, widget(at, "ch").value, widget(at, "cl").value) == (768, 12, 12)
    at = open_page("compare", query={"tab": "side", "a": "nope", "b": "xlnet", "a_sinusoidal_base": "abc"})
    assert_clean(at)
    assert (widget(at, "a").value, widget(at, "b").value, widget(at, "a_sinusoidal_base").value) == (
        "sinusoidal",
        "xlnet",
        10000,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_offset_notice_does_not_credit_the_synthetic_t5_curve_to_trained_t5(lang):
    """The T5 curve of the offset tab reads a made-up table (``t5_synthetic_bias_table``), which falls with the
    distance by construction; the notice must say so instead of claiming that T5 subtracts more the farther."""
    notice = tr(lang, "compare.offset.notice")
    assert ("made-up" if lang == "en" else "虚构") in notice and "T5" in notice
    assert "ALiBi and T5 subtract" not in notice and "ALiBi 和 T5 对越远的键减得越多" not in notice
    table = posviz.encodings.relative.t5_synthetic_bias_table(32, compare.T5_HEADS)
    side = np.arange(32) % 16
    assert np.corrcoef(side, table[:, 0])[0, 1] < -0.9  # the synthetic head 0 decays by design


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_teaching_texts_say_where_shaw_and_xlnet_act(lang):
    relative_text, compare_text = teaching_text("relative", lang), teaching_text("compare", lang)
    assert r"q_i \cdot a^K_{j-i}" in relative_text and "a^V_{j-i}" in relative_text  # Shaw et al., eq. 3-4
    assert r"q_i \cdot a^K_{j-i}" in compare_text and "Transformer-XL" in compare_text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_side_by_side_names_the_settings_that_differ_in_the_pages_language(lang):
    """The same family on both sides: each line is named by its side, the family and the settings that differ, in
    the language's own brackets and list separator (Chinese: full-width brackets and 、)."""
    query = {"tab": "side", "a": "sinusoidal", "b": "sinusoidal", "b_sinusoidal_base": "500", "b_sinusoidal_d": "64"}
    at = open_page("compare", query=query, lang=lang)
    assert_clean(at)
    family, sep = tr(lang, "family.sinusoidal.name"), tr(lang, "list.sep")

    def named(side: str, d: int, base: int) -> str:
        detail = sep.join([f"{tr(lang, 'param.d_model')} {d}", f"{tr(lang, 'param.base')} {base}"])
        return tr(lang, "compare.side.detail", label=f"{side} · {family}", detail=detail)

    names = [trace["name"] for fig in figures(at) for trace in fig["data"] if trace.get("name")]
    assert named("A", 128, 10000) in names and named("B", 64, 500) in names, names
    if lang == "zh":
        assert not any("(" in name or ", " in name for name in names), names


def test_stacked_panels_each_name_their_own_lines(tour):
    """By offset and Past the training length stack their panels: each panel has a legend of its own, in one line
    right over it, naming exactly the lines drawn in it (one legend under five panels was far from most of its
    lines); the training-length mark is written over the first panel's legend, not on it."""
    for tab in ("offset", "long"):
        fig = tour.by_tab[tab][0]
        layout = fig["layout"]
        panels = sorted({trace.get("yaxis", "y") for trace in fig["data"]}, key=lambda y: int(y[1:] or 1))
        assert len(panels) >= 3
        for k, axis in enumerate(panels):
            legend = "legend" if k == 0 else f"legend{k + 1}"
            drawn = [t for t in fig["data"] if t.get("yaxis", "y") == axis]
            assert {t.get("legend", "legend") for t in drawn} == {legend}
            assert [t["name"] for t in drawn if t.get("showlegend", True)] == list(
                dict.fromkeys(t["name"] for t in drawn)
            )
            box = layout[legend]
            top = layout[f"yaxis{axis[1:]}"]["domain"][1]
            assert box["orientation"] == "h" and box["yanchor"] == "bottom" and box["y"] == pytest.approx(top)
        if tab == "long":
            (mark,) = [a for a in layout["annotations"] if a.get("yref") == "paper" and a.get("y") == 1.0]
            assert mark["yanchor"] == "bottom" and mark["yshift"] >= 20
