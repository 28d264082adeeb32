"""The RoPE page: every chart holds the core's numbers (the animation's frames included), the new controls round
trip through the URL, both languages, and bad input (URL nonsense, a broken config.json) never raises."""

from __future__ import annotations

import json

import numpy as np
import pytest

import posviz
from posviz.encodings import rope
from posviz.models import rope_configs

from ._support import (
    Chart,
    as_array,
    assert_clean,
    assert_matrix,
    charts,
    charts_by_key,
    figures,
    heatmap_z,
    open_page,
    rope_table_formula,
    title,
    tr,
    visit_tabs,
    widget,
)

METHODS = rope_configs.EXTENSION_METHODS


#: The page's tabs, first tab first, and the charts each draws: a name used in the tests below -> the catalog key of
#: its title.
TABS = {
    "rotation": {"table": "rope.table", "anim": "rope.anim"},
    "scores": {"scores": "rope.scores", "shift": "rope.shift"},
    "decay": {"decay": "rope.decay"},
    "layouts": {"layouts": "rope.layouts", "check": "rope.check"},
    "partial": {"partial": "rope.partial"},
    "extension": {
        "ext_wave": "rope.ext.wavelength",
        "ext_classes": "rope.ext.classes",
        "ext_attention": "rope.ext.attention",
        "ext_dynamic": "rope.ext.dynamic",
    },
    "config": {"cfg": "rope.cfg.wavelength"},
}


def tab_charts(at, tab: str = "rotation", lang: str = "en") -> dict[str, Chart]:
    """The charts of the open tab ``tab``, found by their titles in ``lang`` (the tab draws these and no other)."""
    assert at.session_state["tab.code"] == tab
    found = charts_by_key(charts(at), lang, TABS[tab].values())
    return {name: found[key] for name, key in TABS[tab].items()}


def by_title(at, tab: str = "rotation", lang: str = "en") -> dict[str, dict]:
    """The figures of the open tab ``tab`` by their names in ``TABS``."""
    return {name: found.fig for name, found in tab_charts(at, tab, lang).items()}


def open_tab(at, tab: str, lang: str = "en") -> dict[str, dict]:
    """Open ``tab`` as a click on its label would and return its charts (``by_title``)."""
    at.session_state["tab"] = tr(lang, f"rope.tab.{tab}")
    at.run()
    assert_clean(at)
    return by_title(at, tab)


def series(fig) -> dict[str, np.ndarray]:
    return {trace["name"]: as_array(trace["y"]) for trace in fig["data"]}


# --------------------------------------------------------------------------------------------- the animation


def test_animation_frames_are_the_core_rotation():
    at = open_page("rope", query={"head_dim": "16", "base": "100", "anim_len": "20", "anim_pairs": "3"})
    assert_clean(at)
    fig = by_title(at)["anim"]
    inv, _ = rope.rope_inv_freq(16, base=100.0)
    pairs = [0, 4, 7]  # three pairs evenly spaced over 8
    expected = rope.rope_pair_trajectory(np.ones(16), np.arange(20), inv, pairs)
    frames = fig["frames"]
    assert [f["name"] for f in frames] == [str(m) for m in range(20)]
    assert [s["label"] for s in fig["layout"]["sliders"][0]["steps"]] == [str(m) for m in range(20)]
    buttons = fig["layout"]["updatemenus"][0]["buttons"]
    assert [b["label"] for b in buttons] == [tr("en", "rope.anim.play"), tr("en", "rope.anim.pause")]
    assert buttons[0]["args"][1]["fromcurrent"] is True
    centers = fig["layout"]["meta"]["centers"]
    assert len(centers) == 3 and np.all(np.diff(centers) > 0)
    for m, frame in enumerate(frames):
        assert frame["traces"] == [0, 1]
        trail, hand = (np.column_stack([as_array(t["x"]), as_array(t["y"])]) for t in frame["data"])
        start = max(0, m - 11)
        expected_trail, expected_hand = [], []
        for j, c in enumerate(centers):  # each dial: its points shifted to its centre, then a gap
            expected_trail += [(a + c, b) for a, b in expected[start : m + 1, j]] + [(np.nan, np.nan)]
            expected_hand += [(c, 0.0), (expected[m, j, 0] + c, expected[m, j, 1]), (np.nan, np.nan)]
        np.testing.assert_allclose(trail, expected_trail, atol=1e-5)
        np.testing.assert_allclose(hand, expected_hand, atol=1e-5)
    np.testing.assert_array_equal(as_array(fig["data"][1]["x"]), as_array(frames[0]["data"][1]["x"]))
    # frame 5 by hand: pair 4 of (1, ..., 1) turned by 5 theta_4 from (1, 1)
    c, s = np.cos(5 * 100.0 ** (-8 / 16)), np.sin(5 * 100.0 ** (-8 / 16))
    hand = frames[5]["data"][1]
    np.testing.assert_allclose(as_array(hand["x"])[4] - centers[1], c - s, atol=1e-5)
    np.testing.assert_allclose(as_array(hand["y"])[4], s + c, atol=1e-5)


def test_animation_titles_name_each_pair(default_view):
    fig = by_title(default_view("rope"))["anim"]
    annotations = [a["text"] for a in fig["layout"]["annotations"]]
    inv, _ = rope.rope_inv_freq(64)
    assert len(fig["frames"]) == 64
    assert annotations == [tr("en", "rope.anim.pair", i=0, theta="1", turn="6.3")] + [
        tr("en", "rope.anim.pair", i=i, theta=f"{inv[i]:.3g}", turn=f"{2 * np.pi / inv[i]:,.0f}") for i in (10, 21, 31)
    ]


# ------------------------------------------------------------------------------------------- scores and shift


def test_random_query_and_key_from_the_url():
    query = {"tab": "scores", "n": "40", "head_dim": "16", "qk": "random", "seed": "7", "shift": "333"}
    at = open_page("rope", query=query)
    assert_clean(at)
    assert (at.session_state["qk"], widget(at, "seed").value, widget(at, "shift").value) == ("random", 7, 333)
    figs = by_title(at, "scores")
    assert_matrix(heatmap_z(figs["scores"]), posviz.rope_score_matrix(40, 16, seed=7), what="scores")
    plain, shifted, diff = rope.rope_shifted_scores(40, 16, 333, seed=7)
    left, right = (as_array(t["z"]) for t in figs["shift"]["data"])
    assert_matrix(left, plain, what="S")
    assert_matrix(right, shifted, what="S shifted")
    np.testing.assert_allclose(left, right, atol=1e-6)  # the lesson itself
    assert title(figs["shift"]) == tr("en", "rope.shift", k=40, diff=f"{diff:.2g}")
    # one colour scale on the screen: the same symmetric range on all three maps, covering every score
    reach = np.abs(posviz.rope_score_matrix(40, 16, seed=7)).max()
    ranges = {(t["zmin"], t["zmax"]) for fig in figs.values() for t in fig["data"]}
    assert len(ranges) == 1
    ((lo, hi),) = ranges
    assert lo == -hi and hi == pytest.approx(reach, rel=1e-6)
    assert all(
        t["colorbar"]["title"]["text"] == "q·k / d" for fig in figs.values() for t in fig["data"] if "colorbar" in t
    )


def test_ones_share_the_range_of_a_mean_of_cosines():
    """q = k = (1, ..., 1): S is a mean of cosines, so both the map and the shift panels run from -1 to 1 (the
    shifted panels once ran from their own minimum to maximum, a different meaning of the same colours)."""
    figs = by_title(open_page("rope", query={"tab": "scores", "n": "40", "head_dim": "16"}), "scores")
    assert {(t["zmin"], t["zmax"]) for fig in figs.values() for t in fig["data"]} == {(-1.0, 1.0)}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_query_and_key_help_says_what_the_random_map_shows(lang):
    """The choice's help says random means one query and one key, the same at every position, so the map changes shape
    from the all-ones one but every diagonal still holds one value: that is what the page draws."""
    at = open_page("rope", query={"tab": "scores", "n": "24", "head_dim": "16", "qk": "random", "seed": "3"}, lang=lang)
    assert_clean(at)
    assert widget(at, "qk").help == tr(lang, "rope.ctl.qk.help")
    z = heatmap_z(by_title(at, "scores", lang)["scores"])
    for offset in range(-23, 24):
        diagonal = np.diagonal(z, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-6)
    ones = heatmap_z(
        by_title(open_page("rope", query={"tab": "scores", "n": "24", "head_dim": "16"}), "scores")["scores"]
    )
    assert np.abs(z - ones).max() > 0.1


def test_ones_disable_the_seed():
    at = open_page("rope", query={"tab": "scores"})
    assert widget(at, "seed").disabled
    assert "qk" not in at.query_params


# ------------------------------------------------------------------------------------------------- the decay


def test_decay_lines_are_the_bound_and_its_envelope_for_each_base():
    at = open_page("rope", query={"tab": "decay", "head_dim": "32", "base": "1000", "decay_len": "256"})
    assert_clean(at)
    fig = by_title(at, "decay")["decay"]
    bases = [10_000.0, 500_000.0, 1_000_000.0, 1000.0]
    names = [tr("en", "rope.decay.base", base=f"{b:,.0f}") for b in bases]
    traces = fig["data"]
    assert [t["name"] for t in traces] == [name for name in names for _ in range(2)]
    assert [t.get("showlegend", True) for t in traces] == [False, True] * 4  # one legend entry per base
    for b, thin, thick in zip(bases, traces[0::2], traces[1::2], strict=True):
        np.testing.assert_array_equal(as_array(thin["x"]), np.arange(257))
        every = rope.rope_decay_bound(np.arange(2 * 256 + 1), 32, base=b)  # the envelope looks twice as far
        np.testing.assert_allclose(as_array(thin["y"]), every[:257], rtol=1e-12)
        suffix_max = np.array([every[r:].max() for r in range(257)])
        np.testing.assert_allclose(as_array(thick["y"]), suffix_max, rtol=1e-12)
        assert as_array(thick["y"])[0] == pytest.approx(32 / 4 + 0.5)
        assert thin["line"]["color"] == thick["line"]["color"] and thick["line"]["width"] > thin["line"]["width"]
    envelopes = traces[1::2]
    assert len({t["line"]["color"] for t in envelopes}) == len({t["line"]["dash"] for t in envelopes}) == 4


def test_decay_envelope_covers_distances_between_the_points_shown():
    """Past 1,024 distances the bound is drawn at evenly spaced ones, but the envelope still counts every peak."""
    at = open_page("rope", query={"tab": "decay", "head_dim": "16", "decay_len": "4096"})
    fig = by_title(at, "decay")["decay"]
    x = as_array(fig["data"][1]["x"]).astype(int)
    assert x.size <= 1024 and x[-1] == 4096
    every = rope.rope_decay_bound(np.arange(2 * 4096 + 1), 16)
    np.testing.assert_allclose(as_array(fig["data"][1]["y"]), [every[r:].max() for r in x], rtol=1e-12)


# ------------------------------------------------------------------------------------------ layouts, partial


def test_layout_maps_and_check():
    at = open_page("rope", query={"tab": "layouts", "perm_d": "12", "factor": "2", "cur": "32"})
    assert_clean(at)
    figs = by_title(at, "layouts")
    z = heatmap_z_any(figs["layouts"])
    dims = np.arange(12)
    np.testing.assert_array_equal(z, [dims // 2, dims % 6, [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]])
    a, b, _ = rope.rope_layout_check(12, 8)
    left, right = (as_array(t["z"]) for t in figs["check"]["data"])
    assert_matrix(left, a)
    assert_matrix(right, b)
    # another tab of the same link: the current length is capped at the target, factor x original
    assert title(open_tab(at, "extension")["ext_wave"]) == tr("en", "rope.ext.wavelength", cur="8,192")


def heatmap_z_any(fig) -> np.ndarray:
    return as_array(fig["data"][0]["z"])


def test_partial_rotary_factor():
    at = open_page("rope", query={"tab": "partial", "n": "30", "head_dim": "32", "prf": "0.25"})
    for layout in ("half", "interleaved"):
        if layout != "half":
            at.radio(key="rope_layout").set_value(layout).run()
        assert_clean(at)
        fig = by_title(at, "partial")["partial"]
        table, rotates = rope.partial_rotary_table(30, 32, 0.25, layout=layout)
        assert_matrix(heatmap_z(fig), table, what=layout)
        assert rotates.sum() == 8
        assert title(fig) == tr("en", "rope.partial", r=8, d=32)
        np.testing.assert_array_equal(heatmap_z(fig)[:, 8:], 1.0)


def test_an_odd_rotated_part_turns_whole_pairs():
    """64 x 0.05 = 3.2 -> 3 rotated dimensions, rounded up to 2 pairs as transformers does: 4 columns turn, with
    the frequencies 10000^(-0/3) and 10000^(-2/3)."""
    at = open_page("rope", query={"tab": "partial", "n": "20", "head_dim": "64", "prf": "0.05"})
    assert_clean(at)
    fig = by_title(at, "partial")["partial"]
    assert title(fig) == tr("en", "rope.partial", r=4, d=64)
    z = heatmap_z(fig)
    theta = 10000.0 ** (-np.arange(0, 3, 2) / 3)
    angles = np.arange(20)[:, None] * theta
    np.testing.assert_allclose(z[:, :2], np.cos(angles) - np.sin(angles), atol=1e-6)
    np.testing.assert_allclose(z[:, 2:4], np.sin(angles) + np.cos(angles), atol=1e-6)
    np.testing.assert_array_equal(z[:, 4:], 1.0)


# --------------------------------------------------------------------------------------- context extension


def test_extension_explorer_shows_the_core_comparison():
    at = open_page("rope", query={"tab": "extension", "head_dim": "32", "factor": "4", "orig": "2048", "cur": "2"})
    assert_clean(at)
    figs = by_title(at, "extension")
    cmp = rope_configs.compare_scalings(32, 10_000.0, 4.0, 2048, 4096)
    lines = series(figs["ext_wave"])
    names = [tr("en", "rope.method.none")] + [tr("en", f"rope.method.{m}") for m in METHODS]
    contexts = [tr("en", "rope.ext.orig", L="2,048"), tr("en", "rope.ext.target", L="8,192")]
    assert list(lines) == names + contexts
    np.testing.assert_allclose(lines[names[0]], 2 * np.pi / cmp.original, rtol=1e-12)
    for name, inv_freq in zip(names[1:], cmp.inv_freq, strict=True):
        np.testing.assert_allclose(lines[name], 2 * np.pi / inv_freq, rtol=1e-12)
    np.testing.assert_array_equal(lines[contexts[0]], [2048, 2048])
    np.testing.assert_array_equal(lines[contexts[1]], [8192, 8192])
    assert title(figs["ext_wave"]) == tr("en", "rope.ext.wavelength", cur="4,096")
    classes = figs["ext_classes"]["data"][0]
    np.testing.assert_array_equal(as_array(classes["z"]), cmp.classes)
    np.testing.assert_allclose(as_array(classes["customdata"]), cmp.inv_freq / cmp.original, rtol=1e-12)
    bars = figs["ext_attention"]["data"][0]
    np.testing.assert_allclose(as_array(bars["y"]), cmp.attention_factor, rtol=1e-12)
    assert as_array(bars["y"])[METHODS.index("yarn")] == pytest.approx(0.1 * np.log(4.0) + 1)
    # linear interpolates every pair: one colour over its whole row
    assert (cmp.classes[METHODS.index("linear")] == rope.PAIR_CLASSES.index("interpolated")).all()
    # halfway (2 L of 4 L) dynamic NTK slows its slowest pair by 2, the stretch of the text read so far
    assert lines[names[1 + METHODS.index("dynamic")]][-1] == pytest.approx(2 * 2 * np.pi / cmp.original[-1])
    # how dynamic NTK's factor and the length read combine: 1 + factor (L / L_max - 1) past L_max
    growth = series(figs["ext_dynamic"])
    length = as_array(figs["ext_dynamic"]["data"][0]["x"])
    assert length[0] >= 1 and length[-1] == 8192
    for f in (1, 2, 4):
        expected = 1 + f * (np.maximum(length, 2048) / 2048 - 1)
        np.testing.assert_allclose(growth[tr("en", "rope.ext.dynamic.factor", f=f)], expected, rtol=1e-12)
    assert growth[tr("en", "rope.ext.dynamic.factor", f=4)][-1] == pytest.approx(4**2 - 4 + 1)
    np.testing.assert_array_equal(growth[tr("en", "rope.ext.dynamic.target", s=4)], [4, 4])
    assert title(figs["ext_dynamic"]) == tr("en", "rope.ext.dynamic", L="2,048")
    text = tr("en", "rope.ext.dynamic.text", s=4, overshoot="13")
    assert text in [m.value for m in at.markdown]


def test_dynamic_ntk_at_the_target_length_is_no_more_than_the_extension():
    """Default view (head_dim 64, s = 8, L = 4,096, read at 32,768): dynamic NTK's slowest pair is slowed by
    exactly 8, no pair by more, and its wavelengths are NTK-aware's."""
    at = open_page("rope", query={"tab": "extension"})
    figs = by_title(at, "extension")
    lines = series(figs["ext_wave"])
    dynamic = lines[tr("en", "rope.method.dynamic")]
    original = lines[tr("en", "rope.method.none")]
    assert dynamic[-1] / original[-1] == pytest.approx(8.0, rel=1e-12)
    np.testing.assert_allclose(dynamic, lines[tr("en", "rope.method.ntk")], rtol=1e-12)
    classes = as_array(figs["ext_classes"]["data"][0]["z"])[METHODS.index("dynamic")]
    assert not (classes == rope.PAIR_CLASSES.index("beyond")).any()


# ---------------------------------------------------------------------------------------------- config.json


def test_preset_from_the_url_fills_the_box_and_the_chart():
    """A link's preset fills the box; one named as the box named it before its presets came from the one store
    (qwen25_7b_yarn) opens that preset under its name now, without a notice that the link was not used."""
    at = open_page("rope", query={"tab": "config", "preset": "qwen25_7b_yarn"})
    assert not [toast for toast in at.toast if "preset" in toast.value]
    for preset in ("qwen2_5_7b_yarn", "llama2_7b"):
        if preset != "qwen2_5_7b_yarn":
            at.radio(key="preset").set_value(preset).run()
        assert_clean(at)
        assert at.session_state["preset"] == at.query_params.get("preset") == preset
        assert at.text_area(key="cfg").value == rope_configs.preset_text(preset)
        found = rope_configs.config_frequencies(rope_configs.PRESETS[preset])
        lines = series(by_title(at, "config")["cfg"])
        np.testing.assert_allclose(lines[tr("en", "rope.cfg.plain")], 2 * np.pi / found.plain, rtol=1e-12)
        np.testing.assert_allclose(lines[tr("en", "rope.cfg.scaled")], 2 * np.pi / found.scaled, rtol=1e-12)
        summary = tr(
            "en",
            "rope.cfg.summary",
            head_dim=128,
            base=f"{found.config.base:,.0f}",
            type=found.config.rope_type,
            rotated=128,
            pairs=64,
            layout=tr("en", "rope.cfg.layout.half"),
            max=f"{found.config.max_position_embeddings:,}",
            orig=f"{found.config.original_max_position_embeddings:,}",
            attn=f"{found.attention_factor:.4g}",
        )
        assert summary in [m.value for m in at.markdown]


@pytest.mark.parametrize(
    ("preset", "model_type", "pairs", "layout"),
    [("pythia_410m", "gpt_neox", 8, "half"), ("gptj_6b", "gptj", 32, "interleaved")],
)
def test_pythia_and_gptj_presets_read_as_their_models_read_them(preset, model_type, pairs, layout):
    """Pythia-410M: a quarter of each 64-wide head turns (rotary_pct), 8 pairs; GPT-J-6B: rotary_dim 64 of a
    256-wide head, 32 interleaved pairs. The wavelengths are those of the model's own rotary module."""
    import copy

    from transformers import CONFIG_MAPPING

    at = open_page("rope", query={"tab": "config", "preset": preset})
    assert_clean(at)
    config = {k: v for k, v in rope_configs.PRESETS[preset].items() if k != "model_type"}
    hf = CONFIG_MAPPING[model_type](**copy.deepcopy(config))
    if model_type == "gptj":
        from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

        inv = np.arcsin(create_sinusoidal_positions(2, hf.rotary_dim)[1, : hf.rotary_dim // 2].double().numpy())
    else:
        from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding

        inv = GPTNeoXRotaryEmbedding(hf).inv_freq.double().numpy()
    assert inv.size == pairs
    lines = series(by_title(at, "config")["cfg"])
    np.testing.assert_allclose(lines[tr("en", "rope.cfg.plain")], 2 * np.pi / inv, rtol=1e-6)
    summary = "\n".join(m.value for m in at.markdown)
    assert f"({pairs} pairs)" in summary and tr("en", f"rope.cfg.layout.{layout}") in summary


def test_pasted_config_is_read():
    at = open_page("rope", query={"tab": "config"})
    config = {
        "hidden_size": 2560,
        "num_attention_heads": 32,
        "max_position_embeddings": 2048,
        "rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0, "partial_rotary_factor": 0.4},
    }
    at.text_area(key="cfg").input(json.dumps(config)).run()
    assert_clean(at)
    lines = series(by_title(at, "config")["cfg"])
    scaled = lines[tr("en", "rope.cfg.scaled")]
    inv, _ = rope.rope_inv_freq(80, scaling={"rope_type": "linear", "factor": 2.0}, partial_rotary_factor=0.4)
    assert scaled.size == 16
    np.testing.assert_allclose(scaled, 2 * np.pi / inv, rtol=1e-12)
    assert json.loads(at.query_params["cfg"]) == config  # the edited text travels in the link

    assert at.query_params["tab"] == "config"
    shared = open_page("rope", query=dict(at.query_params))  # and reopens the same view
    assert_clean(shared)
    assert json.loads(shared.text_area(key="cfg").value) == config
    np.testing.assert_allclose(series(by_title(shared, "config")["cfg"])[tr("en", "rope.cfg.scaled")], scaled, rtol=0)
    shared.radio(key="preset").set_value("mistral_7b").run()  # a preset replaces it, and leaves the link
    assert shared.text_area(key="cfg").value == rope_configs.preset_text("mistral_7b")
    assert "cfg" not in shared.query_params


BAD_CONFIGS = ['{"hidden_size": 4096', '{"head_dim": 63}', '{"head_dim": 64, "rope_scaling": {"type": "x"}}']


def test_bad_config_shows_an_error_and_keeps_the_page():
    at = open_page("rope", query={"tab": "config"})
    for text in BAD_CONFIGS:
        at.text_area(key="cfg").input(text).run()
        assert not at.exception, [e.value for e in at.exception]
        with pytest.raises(ValueError) as info:
            rope_configs.parse_config(text)
        assert [e.value for e in at.error] == [tr("en", "error.input.config", message=str(info.value))]
        assert not figures(at) and at.text_area(key="cfg").value == text  # the box keeps what was typed
    assert open_tab(at, "rotation")  # and the other tabs still draw


# --------------------------------------------------------------------------------------------- URL, languages


def test_new_controls_round_trip_through_the_url():
    query = {
        "anim_len": "30",
        "anim_pairs": "5",
        "qk": "random",
        "seed": "12",
        "shift": "7",
        "decay_len": "4096",
        "perm_d": "6",
        "prf": "0.75",
        "rope_layout": "interleaved",
        "factor": "16",
        "orig": "8192",
        "cur": "4",
        "preset": "mistral_7b",
    }
    at = open_page("rope", query=query)
    assert_clean(at)
    assert len(by_title(at)["anim"]["frames"]) == 30
    view = visit_tabs(at, "rope", list(TABS))  # every tab's controls, each read from the same link
    assert not view.exceptions and not view.errors
    shown = {key: view.widgets[key] for key in query if key not in ("qk", "rope_layout", "preset")}
    assert shown == {
        "anim_len": 30,
        "anim_pairs": 5,
        "seed": 12,
        "shift": 7,
        "decay_len": 4096,
        "perm_d": 6,
        "prf": 0.75,
        "factor": 16,
        "orig": 8192,
        "cur": 4,
    }
    assert {k: view.widgets[k] for k in ("qk", "rope_layout", "preset")} == {
        "qk": "random",
        "rope_layout": "interleaved",
        "preset": "mistral_7b",
    }
    controls = {
        "rotation": ("anim_len", "anim_pairs"),
        "scores": ("qk", "seed", "shift"),
        "decay": ("decay_len",),
        "layouts": ("perm_d",),
        "partial": ("prf", "rope_layout"),
        "extension": ("factor", "orig", "cur"),
        "config": ("preset",),
    }
    for tab, keys in controls.items():  # a link copied on any tab keeps that tab's values
        linked = open_page("rope", query=query | {"tab": tab})
        assert {k: linked.query_params.get(k) for k in keys} == {k: query[k] for k in keys}, tab


def test_nonsense_in_the_url_falls_back():
    query = {
        "anim_len": "999",
        "anim_pairs": "x",
        "qk": "nope",
        "prf": "abc",
        "rope_layout": "diagonal",
        "factor": "3.5",
        "preset": "gpt5",
        "decay_len": "-1",
    }
    at = open_page("rope", query=query)
    assert_clean(at)
    view = visit_tabs(at, "rope", list(TABS))
    assert not view.exceptions and not view.errors
    assert {k: view.widgets[k] for k in ("anim_len", "anim_pairs", "prf", "factor", "decay_len")} == {
        "anim_len": 64,
        "anim_pairs": 4,
        "prf": 0.5,
        "factor": 8,
        "decay_len": 1024,
    }
    assert {k: view.widgets[k] for k in ("qk", "rope_layout", "preset")} == {
        "qk": "ones",
        "rope_layout": "half",
        "preset": "llama3_1_8b",
    }
    assert at.text_area(key="cfg").value == rope_configs.preset_text("llama3_1_8b")


def hf_inv_freq(rope_parameters: dict, head_dim: int, max_position_embeddings: int, seq_len=None) -> np.ndarray:
    """transformers' ``ROPE_INIT_FUNCTIONS`` for a tiny Llama config with these RoPE parameters (float32 maths)."""
    import transformers
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    transformers.logging.set_verbosity_error()
    config = transformers.LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters={"rope_theta": 10_000.0, **rope_parameters},
        num_hidden_layers=1,
        intermediate_size=8,
        vocab_size=8,
    )
    inv_freq, _ = ROPE_INIT_FUNCTIONS[rope_parameters["rope_type"]](config, "cpu", seq_len=seq_len)
    return inv_freq.double().numpy()


def check_default_data(found: dict[str, Chart], lang: str) -> None:
    """The default view's numbers (n 128, head_dim 64, base 10^4; extension x8 from 4,096, read at 32,768; the
    Llama 3.1 preset), each chart found by its title in ``lang``, against the formula or transformers."""
    assert_matrix(heatmap_z(found["table"].fig), rope_table_formula(128, 64), what="cos(m theta_i)")
    waves = {trace["name"]: as_array(trace["y"]) for trace in found["ext_wave"].fig["data"]}
    theta = 10_000.0 ** (-np.arange(0, 64, 2) / 64)
    np.testing.assert_allclose(waves[tr(lang, "rope.method.none")], 2 * np.pi / theta, rtol=1e-12)
    ntk = (10_000.0 * 8 ** (64 / 62)) ** (-np.arange(0, 64, 2) / 64)  # bloc97: base s^(d / (d - 2))
    np.testing.assert_allclose(waves[tr(lang, "rope.method.ntk")], 2 * np.pi / ntk, rtol=1e-12)
    common = {"factor": 8.0, "original_max_position_embeddings": 4096}
    llama3 = {"rope_type": "llama3", "low_freq_factor": 1.0, "high_freq_factor": 4.0, **common}
    oracles = {
        "linear": hf_inv_freq({"rope_type": "linear", "factor": 8.0}, 64, 4096),
        "dynamic": hf_inv_freq({"rope_type": "dynamic", "factor": 1.0}, 64, 4096, seq_len=32_768),
        "yarn": hf_inv_freq({"rope_type": "yarn", **common}, 64, 4096),
        "llama3": hf_inv_freq(llama3, 64, 4096),
    }
    for method, inv_freq in oracles.items():
        np.testing.assert_allclose(waves[tr(lang, f"rope.method.{method}")], 2 * np.pi / inv_freq, rtol=2e-6)
    preset = {k: v for k, v in rope_configs.PRESETS["llama3_1_8b"].items() if k != "model_type"}
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    llama = LlamaRotaryEmbedding(LlamaConfig(**preset)).inv_freq.double().numpy()
    cfg = {trace["name"]: as_array(trace["y"]) for trace in found["cfg"].fig["data"]}
    np.testing.assert_allclose(cfg[tr(lang, "rope.cfg.scaled")], 2 * np.pi / llama, rtol=2e-6)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_both_languages(lang):
    """Each tab draws its charts, titled in ``lang`` (with the default view's values), each with its own "what to
    notice" caption under it, and the numbers of the default view."""
    view = visit_tabs(open_page("rope", lang=lang), "rope", list(TABS), lang)
    assert not view.exceptions and not view.errors
    _, _, shift_diff = rope.rope_shifted_scores(64, 64, 100)
    _, _, check_diff = rope.rope_layout_check(8, 8)
    values = {
        "shift": {"k": 64, "diff": f"{shift_diff:.2g}"},
        "decay": {"d": 64},
        "check": {"diff": f"{check_diff:.2g}"},
        "partial": {"r": 32, "d": 64},
        "ext_wave": {"cur": "32,768"},
        "ext_dynamic": {"L": "4,096"},
    }
    notices = {"ext_wave": "ext.wavelength", "ext_classes": "ext.classes", "ext_attention": "ext.attention"}
    notices |= {"ext_dynamic": "ext.dynamic"}
    found = {}
    for tab, names in TABS.items():
        drawn = charts_by_key(view.charts[tab], lang, [(names[name], values.get(name, {})) for name in names])
        for name, key in names.items():
            found[name] = drawn[key]
            assert drawn[key].notice == tr(lang, f"rope.{notices.get(name, name)}.notice"), name
    check_default_data(found, lang)
    buttons = [b["label"] for b in found["anim"].fig["layout"]["updatemenus"][0]["buttons"]]
    assert buttons == [tr(lang, "rope.anim.play"), tr(lang, "rope.anim.pause")]
