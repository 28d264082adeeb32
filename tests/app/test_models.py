"""The Models page: every preset opens cleanly and its layer map holds ``model_positions`` layer by layer; the
wavelengths of a layer type are 2 pi / inv_freq; the M-RoPE grid, axes and scores, and the 2-D RoPE similarities are
those of independent computations; bad configs are sentences; links reopen the same view; Chinese shows Chinese; the
RoPE page's config box, Home and Compare point to the page."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from posviz import models
from posviz.pages import script

from ._support import (
    as_array,
    assert_clean,
    assert_matrix,
    chart,
    charts,
    heatmap_z,
    open_page,
    tr,
)


def layer_map_layers(fig: dict) -> dict[str, dict[int, dict]]:
    """Per model row of the layer map: layer index -> the kind, attention, window and style its cell encodes."""
    rows: dict[str, dict[int, dict]] = {}
    for trace in fig["data"]:
        meta = trace["meta"]
        for x in as_array(trace["x"]).astype(int):
            cell = rows.setdefault(meta["model"], {})
            assert x not in cell, f"layer {x} drawn twice"
            cell[int(x)] = {k: meta[k] for k in ("kind", "attention", "window", "style")}
    return rows


def cie76(a: str, b: str) -> float:
    """The CIE76 distance of two #rrggbb colours in CIELAB (sRGB, D65), written out here."""

    def lab(colour: str) -> np.ndarray:
        rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
        linear = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
        xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
        t = xyz / np.array([0.95047, 1.0, 1.08883])  # against the D65 white
        f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
        return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])

    return float(np.linalg.norm(lab(a) - lab(b)))


def test_every_two_layer_types_have_colours_apart():
    """One map can hold any two layer types side by side (a model's global and local RoPE layers, NoPE layers
    between layers without attention, every family on Compare), so every two colours are at least 30 apart."""
    from posviz.figures.models import MIN_COLOUR_DISTANCE, STYLE_COLOURS

    assert MIN_COLOUR_DISTANCE >= 30
    assert cie76("#ffffff", "#000000") == pytest.approx(100, abs=0.01)
    close = [
        (a, b) for a, b in itertools.combinations(STYLE_COLOURS, 2) if cie76(STYLE_COLOURS[a], STYLE_COLOURS[b]) < 30
    ]
    assert not close


def expected_style(layer, first_theta) -> str:
    """The colour code a layer should get: an independent reading of the figure's legend rules."""
    if layer.kind != "rope":
        return layer.kind
    if layer.rope_type != "default":
        return "rope_scaled"
    return "rope" if layer.rope_theta == first_theta else "rope_other_base"


def assert_map_is(cells: dict[int, dict], name: str) -> None:
    found = models.model_positions(models.preset(name))
    assert sorted(cells) == list(range(found.num_layers)) == [x.index for x in found.layers]
    first = next((x.rope_theta for x in found.layers if x.kind == "rope"), None)
    for layer in found.layers:
        cell = cells[layer.index]
        assert cell["kind"] == layer.kind, (name, layer.index)
        assert cell["attention"] == layer.attention, (name, layer.index)
        assert cell["window"] == layer.window, (name, layer.index)
        assert cell["style"] == expected_style(layer, first), (name, layer.index)


@pytest.mark.parametrize("name", list(models.PRESETS))
def test_each_preset_opens_cleanly_and_maps_its_layers(name):
    at = open_page("models", query={"model": name})
    assert_clean(at)
    fig = chart(charts(at), "en", "models.map").fig
    rows = layer_map_layers(fig)
    assert list(rows) == [tr("en", f"models.preset.{name}")]
    assert_map_is(rows[tr("en", f"models.preset.{name}")], name)
    # the legend says what each colour means even when the model has one layer type (DeepSeek-V3, T5, BLOOM): plotly
    # hides the legend of a single trace unless it is asked for
    assert fig["layout"]["showlegend"] is True and all(trace.get("showlegend", True) for trace in fig["data"])
    colours = {trace["meta"]["style"]: trace["marker"]["color"] for trace in fig["data"]}
    for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2):  # different layer types look different
        assert cie76(ca, cb) >= 30, (name, a, b, ca, cb)
    found = models.model_positions(models.preset(name))
    summary = [m.value for m in at.markdown if m.value.startswith(f"**{found.num_layers} layers**")]
    assert len(summary) == 1
    for group in found.summary():  # each group's count and kind, in the order of the layers
        kind = tr("en", f"models.kind.{group.layer.kind}")
        assert f"{group.count} {kind} (" in summary[0] or f"{group.count} × {kind}" in summary[0]
    infos = " ".join(i.value for i in at.info)
    for key, _ in found.ignored:  # keys transformers ignores are named
        assert f"`{key}`" in infos


def test_llama4_summary_reads_like_the_issue():
    at = open_page("models", query={"model": "llama4_scout"})
    sentence = next(m.value for m in at.markdown if m.value.startswith("**48 layers**"))
    assert "36 RoPE (chunked attention of 8,192" in sentence
    assert "12 NoPE (full attention, temperature tuning)" in sentence


@pytest.mark.parametrize(
    ("name", "group"), [("gemma3_4b", 0), ("gemma3_4b", 1), ("llama3_1_8b", 0), ("deepseek_v3", 0)]
)
def test_wavelengths_are_two_pi_over_the_layer_types_frequencies(name, group):
    at = open_page("models", query={"model": name, "tab": "layers", "group": str(group)})
    assert_clean(at)
    found = models.model_positions(models.preset(name))
    layer = [g for g in found.summary() if g.layer.kind == "rope"][group].layer
    fig = chart(charts(at), "en", "models.layers.wavelength").fig
    traces = {trace["name"]: as_array(trace["y"]) for trace in fig["data"]}
    # before scaling: rope_theta^(-2i / rotary_dim), written out here
    i = np.arange(layer.inv_freq.size)
    plain = layer.rope_theta ** (-2.0 * i / layer.rotary_dim)
    np.testing.assert_allclose(traces[tr("en", "models.layers.plain")], 2 * math.pi / plain, rtol=1e-6)
    if layer.rope_type == "default":
        assert tr("en", "models.layers.scaled", type="default") not in traces  # the same line is drawn once
    else:
        got = traces[tr("en", "models.layers.scaled", type=layer.rope_type)]
        np.testing.assert_allclose(got, 2 * math.pi / layer.inv_freq, rtol=1e-6)
    turns = chart(charts(at), "en", "models.layers.turns").fig
    seen = as_array(turns["data"][0]["y"])
    if found.original_max_position_embeddings:  # what the pairs turned through in pre-training, before scaling
        length, frequencies = found.original_max_position_embeddings, plain
    else:  # no pre-training length in the config: the layer's own frequencies over the whole context
        length, frequencies = found.max_position_embeddings, layer.inv_freq
    np.testing.assert_allclose(seen, np.minimum(1, (length - 1) * frequencies / (2 * math.pi)), rtol=1e-6)


@pytest.mark.parametrize(("name", "variant"), [("llama3_1_8b", ""), ("gemma3_4b", ".context")])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_turns_caption_counts_the_pairs_that_never_turn(name, variant, lang):
    """With a pre-training length in the config the caption speaks of pre-training; without one, of the whole
    context (its own text); either way it counts the pairs below a full turn, counted here from the frequencies."""
    at = open_page("models", query={"model": name, "tab": "layers"}, lang=lang)
    assert_clean(at)
    found = models.model_positions(models.preset(name))
    layer = next(g.layer for g in found.summary() if g.layer.kind == "rope")
    i = np.arange(layer.inv_freq.size)
    if found.original_max_position_embeddings:
        length, frequencies = found.original_max_position_embeddings, layer.rope_theta ** (-2.0 * i / layer.rotary_dim)
    else:
        length, frequencies = found.max_position_embeddings, layer.inv_freq
    never = int(np.sum((length - 1) * frequencies < 2 * math.pi))
    turns = chart(charts(at), lang, "models.layers.turns")
    assert turns.notice == tr(lang, "models.layers.turns.notice" + variant, never=never, pairs=i.size)


def test_a_model_without_rope_says_so():
    at = open_page("models", query={"model": "t5_base", "tab": "layers"})
    assert_clean(at)
    assert any(tr("en", "models.kind.relative_bias") in i.value for i in at.info)
    assert not charts(at)


def reference_position_ids(segments, merge=2):
    """Qwen2-VL's rule written out token by token: text continues from the largest position used, plus one."""
    ids, nxt = [], 0
    for item in segments:
        if isinstance(item, int):
            ids += [(nxt + j,) * 3 for j in range(item)]
            nxt += item
            continue
        _, frames, h, w = item
        for f in range(frames):
            for r in range(h // merge):
                for c in range(w // merge):
                    ids.append((nxt + f, nxt + r, nxt + c))
        nxt = max(max(x) for x in ids) + 1
    return np.array(ids).T


def test_mrope_grid_axes_and_scores_follow_the_link():
    query = {"tab": "mrope", "model": "qwen3_vl_8b", "text1": "3", "img_h": "4", "img_w": "6", "text2": "2"}
    query |= {"vid_t": "2", "vid_h": "2", "vid_w": "4", "reach": "20"}
    at = open_page("models", query=query)
    assert_clean(at)
    segments = [3, ("image", 1, 4, 6), 2, ("video", 2, 2, 4)]
    found = charts(at)
    grid = heatmap_z(chart(found, "en", "models.mrope.grid").fig)
    np.testing.assert_array_equal(grid, models.mrope_position_ids(segments))
    np.testing.assert_array_equal(grid, reference_position_ids(segments))
    layer = models.model_positions(models.preset("qwen3_vl_8b")).layers[0]
    assert layer.mrope_section == (24, 20, 20)
    strips = chart(found, "en", "models.mrope.axes", section="24, 20, 20").fig
    z = heatmap_z(strips)
    j = np.arange(64)
    sectioned = np.where(j < 24, 0, np.where(j < 44, 1, 2))
    interleaved = np.where((j % 3 == 1) & (j < 60), 1, np.where((j % 3 == 2) & (j < 60), 2, 0))
    np.testing.assert_array_equal(z, np.stack([sectioned, interleaved]))
    scores = {t["name"]: as_array(t["y"]) for t in chart(found, "en", "models.mrope.score").fig["data"]}
    delta = np.arange(21)
    for layout, axes in (
        (tr("en", "models.mrope.sectioned"), sectioned),
        (tr("en", "models.mrope.interleaved"), interleaved),
    ):
        for axis, axis_key in ((1, "models.axis.height"), (2, "models.axis.width")):
            name = tr("en", "models.mrope.score.series", layout=layout, axis=tr("en", axis_key))
            expected = [
                np.mean([math.cos(d * layer.inv_freq[p]) if axes[p] == axis else 1.0 for p in j]) for d in delta
            ]
            np.testing.assert_allclose(scores[name], expected, atol=1e-6)


def test_mrope_uses_qwen2_vl_for_a_text_model():
    at = open_page("models", query={"tab": "mrope", "model": "llama3_1_8b"})
    assert_clean(at)
    assert any(
        c.value == tr("en", "models.mrope.fallback", model=tr("en", "models.preset.qwen2_vl_7b")) for c in at.caption
    )
    chart(charts(at), "en", "models.mrope.axes", section="16, 24, 24")


@pytest.mark.parametrize("directions", [8, 4, 6])
def test_2d_similarity_is_that_of_rotated_ones(directions):
    at = open_page(
        "models",
        query={"tab": "rope2d", "rows": "5", "cols": "6", "hd": "16", "pr": "2", "pc": "3"}
        | {"b2d": "100", "dirs": str(directions)},
    )
    assert_clean(at)
    fig = chart(charts(at), "en", "models.rope2d.similarity", r=2, c=3).fig
    left, right = (as_array(t["z"]) for t in fig["data"])
    angles = models.rope_2d_angles(5, 6, 16, base=100.0)
    patch = 2 * 6 + 3
    expected = np.array([np.mean([math.cos(angles[patch, i] - angles[p, i]) for i in range(8)]) for p in range(30)])
    assert_matrix(left, expected.reshape(5, 6), what="axial")
    # RoPE-Mixed from Heo et al.'s formula: pair t turns by |theta_t| (r sin phi_t + c cos phi_t)
    mixed = np.empty(30)
    for p in range(30):
        r, c = divmod(p, 6)
        total = 0.0
        for t in range(8):
            phi = math.pi / 2 - math.pi * (t % directions) / directions
            mag = 100.0 ** (-2 * t / 16)
            total += math.cos(mag * ((r - 2) * math.sin(phi) + (c - 3) * math.cos(phi)))
        mixed[p] = total / 8
    assert_matrix(right, mixed.reshape(5, 6), what="mixed")
    diag = chart(charts(at), "en", "models.rope2d.directions").fig
    lines = {t["name"]: as_array(t["y"]) for t in diag["data"]}
    axial_name = tr("en", "models.rope2d.axial")
    a = lines[f"{axial_name} · {tr('en', 'models.direction.diagonal')}"]
    b = lines[f"{axial_name} · {tr('en', 'models.direction.antidiagonal')}"]
    np.testing.assert_allclose(a[:3], b[:3], atol=1e-6)  # with q = k = ones axial scores both diagonals alike
    assert a[1] == pytest.approx(expected[3 * 6 + 4], abs=1e-6)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ('{"model_type": "llama", "rope_scaling": {"rope_type": "yarn"}', "JSON"),
        ('{"model_type": "llama", "rope_scaling": {"rope_type": "yarn"}}', "factor"),
        ('{"model_type": "not_a_model"}', "not_a_model"),
        (
            '{"model_type": "qwen2_vl", "head_dim": 128, '
            '"rope_scaling": {"type": "mrope", "mrope_section": [8, 8, 8]}}',
            "mrope_section",
        ),
    ],
)
def test_a_bad_pasted_config_is_a_sentence(config, words):
    at = open_page("models", query={"from": "paste", "cfg": config})
    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert message.startswith(tr("en", "error.input.config", message="")) and words in message
    assert "Traceback" not in message
    at.session_state["tab"] = tr("en", "models.tab.rope2d")  # the vision tabs still work
    at.run()
    assert not at.exception and charts(at)


def test_a_pasted_config_is_kept_in_the_link():
    text = json.dumps(
        {
            "model_type": "llama",
            "num_hidden_layers": 3,
            "hidden_size": 64,
            "num_attention_heads": 2,
            "rope_theta": 1000.0,
        }
    )
    at = open_page("models", query={"from": "paste", "cfg": text})
    assert_clean(at)
    assert at.text_area(key="cfg").value == text
    rows = layer_map_layers(chart(charts(at), "en", "models.map").fig)
    assert list(rows) == [tr("en", "models.name.pasted")]
    assert sorted(rows[tr("en", "models.name.pasted")]) == [0, 1, 2]
    assert at.query_params["cfg"] == [text] or at.query_params["cfg"] == text


def test_a_link_with_two_models_reopens_the_same_view():
    query = {"tab": "compare", "model": "llama3_1_8b", "model_b": "qwen3_8b"}
    at = open_page("models", query=query)
    assert_clean(at)
    kept = {key: at.query_params[key] for key in ("tab", "model", "model_b")}
    assert {k: v if isinstance(v, str) else v[0] for k, v in kept.items()} == query
    fig = chart(charts(at), "en", "models.map").fig
    rows = layer_map_layers(fig)
    a, b = f"A · {tr('en', 'models.preset.llama3_1_8b')}", f"B · {tr('en', 'models.preset.qwen3_8b')}"
    assert list(rows) == [a, b]
    assert_map_is(rows[a], "llama3_1_8b")
    assert_map_is(rows[b], "qwen3_8b")
    again = open_page("models", query=query)
    assert [c.fig for c in charts(again)] == [c.fig for c in charts(at)]


def test_gemma3_local_and_global_side_by_side():
    at = open_page("models", query={"tab": "compare", "model": "gemma3_4b", "model_b": "gemma3_4b"})
    assert_clean(at)
    waves = chart(charts(at), "en", "models.compare.wavelength").fig
    found = models.model_positions(models.preset("gemma3_4b")).summary()
    assert len(waves["data"]) == 4  # two layer types per side
    for trace, group in zip(waves["data"], found * 2, strict=True):
        np.testing.assert_allclose(as_array(trace["y"]), 2 * math.pi / group.layer.inv_freq, rtol=1e-6)


def test_ignored_keys_are_named_in_chinese_with_chinese_brackets():
    at = open_page("models", lang="zh", query={"model": "smollm3_3b"})
    assert_clean(at)
    item = tr("zh", "models.ignored.item", name="no_rope_layer_interval", why=tr("zh", "models.ignored.overridden"))
    assert [i.value for i in at.info] == [tr("zh", "models.ignored", keys=item)]


def test_the_page_in_chinese_shows_chinese():
    at = open_page("models", lang="zh", query={"model": "llama4_scout"})
    assert_clean(at)
    assert [t.value for t in at.title] == [tr("zh", "page.models")]
    assert any(m.value.startswith("**共 48 层**") for m in at.markdown)
    fig = chart(charts(at), "zh", "models.map").fig
    names = {trace["name"] for trace in fig["data"]}
    parts = ("models.kind.nope", "models.attention.full", "models.detail.temperature")
    assert " · ".join(tr("zh", key) for key in parts) in names


def test_the_rope_config_box_points_to_the_models_page_for_per_layer_configs():
    text = models.preset_text("gemma3_4b")
    at = open_page("rope", query={"tab": "config", "cfg": text})
    assert not at.exception
    links = [p for p in at.get("page_link") if p.proto.label == tr("en", "rope.cfg.models.link")]
    assert len(links) == 1 and links[0].proto.page == "models"
    plain = open_page("rope", query={"tab": "config"})  # one RoPE for the whole model: no pointer
    assert not [p for p in plain.get("page_link") if p.proto.label == tr("en", "rope.cfg.models.link")]


def test_home_and_compare_list_the_models_page():
    home = open_page("home")
    assert any(p.proto.label == tr("en", "page.models") for p in home.get("page_link"))
    compare = open_page("compare", query={"tab": "overview"})
    assert any(p.proto.label == tr("en", "compare.models.link") for p in compare.get("page_link"))
    assert script("models") == "page_scripts/13_models.py"


def test_a_model_folder_and_the_local_cache_are_read_like_the_inspector(tmp_path, monkeypatch):
    folder = tmp_path / "qwen3"
    folder.mkdir()
    (folder / "config.json").write_text(models.preset_text("qwen3_next_80b"), encoding="utf-8")
    at = open_page("models", query={"from": "path", "path": str(folder)})
    assert_clean(at)
    rows = layer_map_layers(chart(charts(at), "en", "models.map").fig)
    assert_map_is(rows[tr("en", "models.name.folder")], "qwen3_next_80b")
    hub = tmp_path / "hub"
    snapshot = hub / "models--google--gemma-3-4b-it" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(models.preset_text("gemma3_4b"), encoding="utf-8")
    (hub / "models--google--gemma-3-4b-it" / "refs").mkdir()
    (hub / "models--google--gemma-3-4b-it" / "refs" / "main").write_text("abc123", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    at = open_page("models", query={"from": "cache"})
    assert_clean(at)
    rows = layer_map_layers(chart(charts(at), "en", "models.map").fig)
    assert_map_is(rows["google/gemma-3-4b-it"], "gemma3_4b")


def test_a_folder_without_a_config_or_with_a_broken_one_is_a_sentence(tmp_path):
    at = open_page("models", query={"from": "path", "path": str(tmp_path)})
    assert not at.exception
    assert [e.value for e in at.error] == [
        tr("en", "error.input.path", message=tr("en", "models.no_config", path=str(tmp_path)))
    ]
    (tmp_path / "config.json").write_text('{"model_type": "llama", ', encoding="utf-8")
    at = open_page("models", query={"from": "path", "path": str(tmp_path)})
    assert not at.exception
    assert len(at.error) == 1 and "config.json is not valid JSON" in at.error[0].value


def test_a_huge_pasted_config_is_a_sentence_and_stays_out_of_the_link():
    at = open_page("models", query={"from": "paste"})
    text = '{"model_type": "llama", "pad": "' + "x" * 2_000_000 + '"}'
    at.text_area(key="cfg").set_value(text).run()
    assert not at.exception
    assert len(at.error) == 1
    assert at.error[0].value.startswith(tr("en", "error.input.config", message=f"the config is {len(text):,} bytes"))
    assert "cfg" not in at.query_params
    assert any(c.value == tr("en", "models.cfg.unlinked", n="64,000") for c in at.caption)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_turns_figure_keeps_its_width_under_a_long_legend(lang):
    """The share-of-a-turn figure names its lines with long words (pre-training and the full context, with their
    lengths): its legend lies in rows under the plot, in the bottom margin grown to hold them, not beside the plot,
    where it would take half of the width."""
    from posviz.figures import base

    at = open_page("models", query={"model": "llama3_1_8b", "tab": "layers"}, lang=lang)
    assert_clean(at)
    fig = chart(charts(at), lang, "models.layers.turns").fig
    names = [trace["name"] for trace in fig["data"]]
    assert len(names) > 1 and max(base._text_width(name) for name in names) > base.LONG_LEGEND, names
    legend, margin = fig["layout"].get("legend", {}), fig["layout"]["margin"]
    assert legend.get("orientation") == "h" and legend.get("yref") == "container" and legend.get("y") == 0.0, legend
    assert legend.get("yanchor") == "bottom", legend
    assert margin["b"] >= base.LEGEND_ROW * base.legend_rows(names) + 50, margin


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("model_type", "key", "rules"),
    [
        ("llama", "models.read.family", ()),
        ("qwen3_moe", "models.read.standard", ()),
        ("cohere", "models.read.rules", ("interleaved",)),
        ("glm4", "models.read.rules", ("interleaved", "partial")),
    ],
)
def test_the_page_says_how_the_config_was_read(model_type, key, rules, lang):
    """A pasted config of any model type transformers registers is read; the caption names the config class and
    the rules posviz added for what the modeling code decides (the reader's own record of them)."""
    from transformers import CONFIG_MAPPING

    config = CONFIG_MAPPING[model_type]()
    found = models.model_positions(config.to_json_string())
    assert found.rules[1:] == rules and found.config_class == type(config).__name__
    text = json.dumps({"model_type": model_type, "num_hidden_layers": 4})
    at = open_page("models", query={"from": "paste", "cfg": text, "lang": lang})
    assert_clean(at)
    words = tr(lang, "list.sep").join(tr(lang, f"models.rule.{rule}") for rule in rules)
    expected = tr(lang, key, cls=type(config).__name__, rules=words)
    assert expected in [c.value for c in at.caption]
