"""The Models page's views (posviz/ui/views/models.py): each kept whole by its settings and the language, its numbers
derived here from the config's own keys and the papers' formulas, a refused config or setting raised and never kept.

RoPE: pair i of a rotated width r turns by theta_i = base^(-2i / r), its wavelength 2 pi / theta_i; over a context
of L positions it covers min(1, (L - 1) theta_i / 2 pi) of a turn. Llama 3.1's scaling (transformers'
``_compute_llama3_parameters``) divides the slow pairs by the factor and blends the middle ones. Qwen2-VL's M-RoPE
(transformers' ``get_rope_index``) numbers an image's patches (p, p + r, p + c) and continues the text from the
largest position plus one; sectioned pairs go to the axes in blocks, interleaved ones in turn (Qwen3-VL). 2-D RoPE:
axial pairs turn with the row or the column, RoPE-Mixed's (Heo et al. 2024) along directions phi_t.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import streamlit as st
from plotly.utils import PlotlyJSONEncoder

from posviz.models import model_positions, presets
from posviz.ui import cache
from posviz.ui.views import Figure, Text, models_words
from posviz.ui.views import models as model_views

from ._support import as_array, assert_matrix, heatmap_z, title, tr
from .test_models import reference_position_ids  # Qwen2-VL's rule, token by token

pytestmark = pytest.mark.usefixtures("views_in_english")


def config(**keys) -> str:
    """A small Llama config.json: 3 layers of 2 heads of 32 dimensions, base 1,000, 512 positions, and ``keys``."""
    base = {"model_type": "llama", "num_hidden_layers": 3, "hidden_size": 64, "num_attention_heads": 2}
    return json.dumps(base | {"rope_theta": 1000.0, "max_position_embeddings": 512} | keys)


SMALL = config()
LINEAR = config(rope_scaling={"rope_type": "linear", "factor": 4.0})
LLAMA3 = config(
    num_hidden_layers=2,
    rope_theta=500_000.0,
    max_position_embeddings=131_072,
    rope_scaling={
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
)
BROKEN = '{"model_type": "not_a_model"}'


def spec(fig) -> str:
    """A figure's dictionary as JSON, arrays included, to compare two figures."""
    return json.dumps(fig.to_dict(), cls=PlotlyJSONEncoder, sort_keys=True)


def view_keys() -> list:
    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def lines_of(fig) -> dict[str, np.ndarray]:
    return {trace["name"]: as_array(trace["y"]) for trace in fig.to_dict()["data"]}


def theta(base: float, rotated: int) -> np.ndarray:
    return base ** (-np.arange(0, rotated, 2) / rotated)


def llama3_theta(base: float, rotated: int, factor: float, low: float, high: float, original: int) -> np.ndarray:
    """Llama 3.1's frequencies, pair by pair: wavelengths below original / high stay, above original / low are
    divided by the factor, and between them blend (1 - s) theta / factor + s theta, s = (original / wavelength - low)
    / (high - low)."""
    out = []
    for f in theta(base, rotated):
        wavelength = 2 * math.pi / f
        if wavelength < original / high:
            out.append(f)
        elif wavelength > original / low:
            out.append(f / factor)
        else:
            s = (original / wavelength - low) / (high - low)
            out.append((1 - s) * f / factor + s * f)
    return np.array(out)


# ------------------------------------------------------------------------------------------- the map and words


def sentence(layers: int, *groups: tuple[int, list[str]]) -> str:
    """The summary of a model of RoPE layers only: each group's count and its details, from the catalog."""
    parts = [
        tr(
            "en",
            "models.summary.part",
            count=n,
            kind=tr("en", "models.kind.rope"),
            details=tr("en", "list.sep").join(said),
        )
        for n, said in groups
    ]
    return tr("en", "models.summary", n=layers, parts=tr("en", "models.summary.sep").join(parts))


#: SMALL in words: 3 layers of RoPE with base 1,000, each attending to everything.
SMALL_SAYS = sentence(3, (3, [tr("en", "models.attention.full"), tr("en", "models.detail.base", base="1,000")]))


def test_reading_says_the_model_in_one_sentence():
    out = model_views.reading(SMALL)
    assert model_views.reading(SMALL) is out
    assert model_views.reading(config(rope_theta=2000.0)) is not out
    assert out.items == (Text(SMALL_SAYS), Text(tr("en", "models.read.family", cls="LlamaConfig"), "caption"))


def gemma3_cells() -> dict[int, dict]:
    """Gemma 3 4B's layers from its config.json: every sliding_window_pattern-th layer attends to everything and
    turns with rope_theta, scaled; the others attend within sliding_window and turn with rope_local_base_freq."""
    text = presets.preset("gemma3_4b")["text_config"]
    cells = {}
    for i in range(text["num_hidden_layers"]):
        if (i + 1) % text["sliding_window_pattern"] == 0:
            cells[i] = {"kind": "rope", "attention": "full", "window": None, "style": "rope_scaled"}
        else:  # the first layer is local: its base is the first RoPE base
            cells[i] = {"kind": "rope", "attention": "sliding", "window": text["sliding_window"], "style": "rope"}
    return cells


def map_cells(fig) -> dict[str, dict[int, dict]]:
    rows: dict[str, dict[int, dict]] = {}
    for trace in fig.to_dict()["data"]:
        meta = trace["meta"]
        for x in as_array(trace["x"]).astype(int):
            rows.setdefault(meta["model"], {})[int(x)] = {k: meta[k] for k in ("kind", "attention", "window", "style")}
    return rows


def test_layer_map_has_a_cell_per_layer_as_the_config_sets_it():
    text = presets.preset_text("gemma3_4b")
    out = model_views.layer_map(text, "Gemma")
    assert model_views.layer_map(text, "Gemma") is out
    assert model_views.layer_map(text, "Gemma 3") is not out
    figure = out.figure("map")
    assert figure.options == {"suffix": None}
    assert title(figure.fig.to_dict()) == tr("en", "models.map")
    expected = gemma3_cells()
    assert map_cells(figure.fig) == {"Gemma": expected}
    # the CSV: one line per layer, in the order of the groups
    assert sorted(figure.data["layer"]) == list(range(34)) and set(figure.data["model"]) == {"Gemma"}
    for layer, kind, attention, window in zip(
        figure.data["layer"], figure.data["kind"], figure.data["attention"], figure.data["window"], strict=True
    ):
        assert (kind, attention, window) == tuple(expected[layer][k] for k in ("kind", "attention", "window"))


def test_ignored_keys_are_named_with_why():
    found = model_positions(presets.preset_text("smollm3_3b"))
    item = tr("en", "models.ignored.item", name="no_rope_layer_interval", why=tr("en", "models.ignored.overridden"))
    assert models_words.ignored_sentence(found) == tr("en", "models.ignored", keys=item)
    assert models_words.ignored_sentence(model_positions(SMALL)) is None


# ------------------------------------------------------------------------------------------------- the layers


def test_layers_wavelengths_and_turns_of_an_unscaled_model():
    out = model_views.layers(SMALL, 0)
    assert model_views.layers(SMALL, 0) is out
    assert model_views.layers(config(rope_theta=999.0), 0) is not out
    expected = theta(1000.0, 32)
    waves = out.figure("layers.wavelength")
    lines = lines_of(waves.fig)
    # unscaled: the line once, not twice; the context the config names marked
    assert list(lines) == [tr("en", "models.layers.plain"), tr("en", "models.layers.longest", L="512")]
    np.testing.assert_allclose(lines[tr("en", "models.layers.plain")], 2 * math.pi / expected, rtol=1e-6)
    np.testing.assert_allclose(waves.data["inv_freq_plain"], expected, rtol=1e-12)
    np.testing.assert_allclose(waves.data["inv_freq_layer"], expected, rtol=1e-12)
    # no pre-training length: the turns within the whole context, 512 positions
    turns = out.figure("layers.turns")
    share = np.minimum(1.0, 511 * expected / (2 * math.pi))
    name = tr("en", "models.layers.within", L="512")
    np.testing.assert_allclose(lines_of(turns.fig)[name], share, rtol=1e-9)
    assert turns.options == {"variant": "context", "never": int((share < 1).sum()), "pairs": 16}
    assert 0 < turns.options["never"] < 16
    facts = out.texts[0]
    assert facts == tr(
        "en", "models.layers.facts", count=3, type="default", factor="1", softmax="1", r=32, d=32, pairs=16
    )


def test_layers_of_a_linear_scaling_without_a_pre_training_length_say_so():
    out = model_views.layers(LINEAR, 0)
    scaled = theta(1000.0, 32) / 4
    lines = lines_of(out.figure("layers.wavelength").fig)
    np.testing.assert_allclose(lines[tr("en", "models.layers.scaled", type="linear")], 2 * math.pi / scaled, rtol=1e-9)
    assert out.texts[1:] == [tr("en", "models.layers.unknown_original", type="linear")]
    # the caption sits between the two figures, as the page drew it
    assert [type(item) for item in out.items] == [Text, Figure, Text, Figure]
    share = np.minimum(1.0, 511 * scaled / (2 * math.pi))
    assert out.figure("layers.turns").options["never"] == int((share < 1).sum())


def test_layers_of_llama3_compare_pre_training_with_the_full_context():
    out = model_views.layers(LLAMA3, 0)
    plain = theta(500_000.0, 32)
    scaled = llama3_theta(500_000.0, 32, 8.0, 1.0, 4.0, 8192)
    assert not np.allclose(plain, scaled)
    lines = lines_of(out.figure("layers.wavelength").fig)
    np.testing.assert_allclose(lines[tr("en", "models.layers.plain")], 2 * math.pi / plain, rtol=1e-9)
    np.testing.assert_allclose(lines[tr("en", "models.layers.scaled", type="llama3")], 2 * math.pi / scaled, rtol=1e-9)
    names = [trace["name"] for trace in out.figure("layers.wavelength").fig.to_dict()["data"]]
    assert tr("en", "rope.ext.orig", L="8,192") in names
    assert tr("en", "models.layers.longest", L="131,072") in names
    turns = out.figure("layers.turns")
    seen = np.minimum(1.0, 8191 * plain / (2 * math.pi))
    reach = np.minimum(1.0, 131_071 * scaled / (2 * math.pi))
    got = lines_of(turns.fig)
    np.testing.assert_allclose(got[tr("en", "models.layers.seen", L="8,192")], seen, rtol=1e-9)
    np.testing.assert_allclose(got[tr("en", "models.layers.reach", L="131,072")], reach, rtol=1e-9)
    assert turns.options == {"variant": None, "never": int((seen < 1).sum()), "pairs": 16}


# ------------------------------------------------------------------------------------------------ the compare tab


def test_compare_puts_the_model_beside_a_preset():
    out = model_views.compare(SMALL, "mine", "gemma3_4b")
    assert model_views.compare(SMALL, "mine", "gemma3_4b") is out
    assert model_views.compare(SMALL, "mine", "llama2_7b") is not out
    b = f"B · {tr('en', 'models.preset.gemma3_4b')}"
    text = presets.preset("gemma3_4b")["text_config"]
    gemma = sentence(
        34,
        (29, [tr("en", "models.attention.sliding", window="1,024"), tr("en", "models.detail.base", base="10,000")]),
        (
            5,
            [
                tr("en", "models.attention.full"),
                tr("en", "models.detail.base", base="1,000,000"),
                tr("en", "models.detail.scaled.linear"),
            ],
        ),
    )
    assert out.texts == [
        tr("en", "models.compare.summary", side="A · mine", summary=SMALL_SAYS),
        tr("en", "models.compare.summary", side=b, summary=gemma),
    ]
    assert map_cells(out.figure("map").fig)[b] == gemma3_cells()
    assert out.figure("map").options == {"suffix": "compare"}
    local = theta(text["rope_local_base_freq"], text["head_dim"])
    full = theta(text["rope_theta"], text["head_dim"]) / text["rope_scaling"]["factor"]
    waves = out.figure("compare.wavelength")
    traces = waves.fig.to_dict()["data"]
    assert len(traces) == 3
    mine = as_array(traces[0]["y"])  # 16 pairs, padded with NaN to Gemma's 128
    assert mine.shape == (128,) and np.isnan(mine[16:]).all()
    np.testing.assert_allclose(mine[:16], 2 * math.pi / theta(1000.0, 32), rtol=1e-6)
    np.testing.assert_allclose(as_array(traces[1]["y"]), 2 * math.pi / local, rtol=1e-6)
    np.testing.assert_allclose(as_array(traces[2]["y"]), 2 * math.pi / full, rtol=1e-6)
    assert list(waves.data["pair"]) == list(range(128))


def test_compare_of_two_models_without_rope_has_no_wavelengths():
    out = model_views.compare(presets.preset_text("t5_base"), "T5", "bloom_560m")
    assert [item.key for item in out.items if isinstance(item, Figure)] == ["map"]


# ------------------------------------------------------------------------------------------------------ M-RoPE


SEGMENTS = (3, ("image", 1, 4, 6), 2, ("video", 2, 2, 4))


def test_mrope_grid_numbers_every_token():
    out = model_views.mrope_grid(SEGMENTS)
    assert model_views.mrope_grid(SEGMENTS) is out
    assert model_views.mrope_grid((4, *SEGMENTS[1:])) is not out
    expected = reference_position_ids(SEGMENTS)
    figure = out.figure("mrope.grid")
    np.testing.assert_array_equal(heatmap_z(figure.fig.to_dict()), expected)
    assert title(figure.fig.to_dict()) == tr("en", "models.mrope.grid", n=expected.shape[1])
    np.testing.assert_array_equal(figure.data["width"], expected[2])


def sectioned(section) -> np.ndarray:
    return np.repeat([0, 1, 2], section)


def interleaved(section) -> np.ndarray:
    """Qwen3-VL's layout: pairs 1, 4, 7, ... below 3 x the height's section turn with the height, 2, 5, 8, ... below
    3 x the width's with the width, every other pair with time."""
    j = np.arange(sum(section))
    return np.where((j % 3 == 1) & (j < 3 * section[1]), 1, np.where((j % 3 == 2) & (j < 3 * section[2]), 2, 0))


@pytest.mark.parametrize("preset", ["qwen2_vl_7b", "qwen3_vl_8b"])
def test_mrope_axes_deal_the_pairs_out_to_the_axes(preset):
    text = presets.preset_text(preset)
    out = model_views.mrope_axes(text)
    assert model_views.mrope_axes(text) is out
    raw = presets.preset(preset)
    rope = raw.get("text_config", raw)
    section = tuple((rope.get("rope_scaling") or rope.get("rope_parameters"))["mrope_section"])
    figure = out.figure("mrope.axes")
    assert title(figure.fig.to_dict()) == tr("en", "models.mrope.axes", section=", ".join(map(str, section)))
    assert_matrix(heatmap_z(figure.fig.to_dict()), np.stack([sectioned(section), interleaved(section)]), atol=0)


def test_mrope_score_turns_only_the_pairs_of_the_moving_axis():
    raw = presets.preset("qwen2_vl_7b")
    section = raw["rope_scaling"]["mrope_section"]
    inv = theta(raw["rope_theta"], raw["hidden_size"] // raw["num_attention_heads"])
    text = presets.preset_text("qwen2_vl_7b")
    out = model_views.mrope_score(text, 20)
    assert model_views.mrope_score(text, 20) is out
    assert model_views.mrope_score(text, 21) is not out
    got = lines_of(out.figure("mrope.score").fig)
    for layout, axes in (
        ("models.mrope.sectioned", sectioned(section)),
        ("models.mrope.interleaved", interleaved(section)),
    ):
        for axis, axis_key in ((1, "models.axis.height"), (2, "models.axis.width")):
            name = tr("en", "models.mrope.score.series", layout=tr("en", layout), axis=tr("en", axis_key))
            expected = [
                np.mean([math.cos(d * f) if a == axis else 1.0 for f, a in zip(inv, axes, strict=True)])
                for d in range(21)
            ]
            np.testing.assert_allclose(got[name], expected, atol=1e-9)


# ------------------------------------------------------------------------------------------------------ 2-D RoPE


def axial_similarity(rows, cols, head_dim, base, row, col) -> np.ndarray:
    """Pixtral's axial 2-D RoPE with q = k = ones: of the head's frequencies base^(-2i / d), the even-indexed turn
    with the row, the odd-indexed with the column, so S = (sum_k cos(dr theta_2k) + sum_k cos(dc theta_2k+1)) / (d/2)
    (transformers' ``PixtralRotaryEmbedding``)."""
    freqs = theta(base, head_dim)
    out = np.empty((rows, cols))
    for r in range(rows):
        for c in range(cols):
            total = sum(math.cos((r - row) * f) for f in freqs[0::2]) + sum(
                math.cos((c - col) * f) for f in freqs[1::2]
            )
            out[r, c] = total / freqs.size
    return out


def mixed_similarity(rows, cols, head_dim, base, row, col, directions) -> np.ndarray:
    """RoPE-Mixed from Heo et al.'s formula with fixed directions: pair t turns by |theta_t| (dr sin phi_t + dc cos
    phi_t), phi_t = pi/2 - pi (t mod D) / D."""
    out = np.empty((rows, cols))
    for r in range(rows):
        for c in range(cols):
            total = 0.0
            for t in range(head_dim // 2):
                phi = math.pi / 2 - math.pi * (t % directions) / directions
                mag = base ** (-2 * t / head_dim)
                total += math.cos(mag * ((r - row) * math.sin(phi) + (c - col) * math.cos(phi)))
            out[r, c] = total / (head_dim // 2)
    return out


def test_2d_similarity_is_that_of_rotated_ones():
    settings = (5, 6, 16, 100.0, 2, 3, 6)
    out = model_views.rope2d(*settings)
    assert model_views.rope2d(*settings) is out
    assert model_views.rope2d(5, 6, 16, 100.0, 2, 3, 8) is not out
    assert model_views.rope2d(5, 6, 16, 100, 2, 3, 6) is not out  # 100 and 100.0 are keyed apart
    pair = out.figure("rope2d.similarity").fig.to_dict()
    assert title(pair) == tr("en", "models.rope2d.similarity", r=2, c=3)
    left, right = (as_array(trace["z"]) for trace in pair["data"])
    axial, mixed = axial_similarity(5, 6, 16, 100.0, 2, 3), mixed_similarity(5, 6, 16, 100.0, 2, 3, 6)
    assert_matrix(left, axial, what="axial")
    assert_matrix(right, mixed, what="mixed")
    assert not np.allclose(axial, mixed)
    lines = lines_of(out.figure("rope2d.directions").fig)
    name = f"{tr('en', 'models.rope2d.mixed', D=6)} · {tr('en', 'models.direction.antidiagonal')}"
    # from (2, 3) on a 5 x 6 grid: (2, 3), (3, 2), (4, 1), then off the grid; the diagonal reaches (4, 5)
    np.testing.assert_allclose(lines[name], [mixed[2, 3], mixed[3, 2], mixed[4, 1]], atol=1e-6)
    name = f"{tr('en', 'models.rope2d.axial')} · {tr('en', 'models.direction.diagonal')}"
    np.testing.assert_allclose(lines[name], [axial[2, 3], axial[3, 4], axial[4, 5]], atol=1e-6)
    assert list(out.figure("rope2d.directions").data["steps"]) == [0, 1, 2]


# ------------------------------------------------------------------------------------ what every view promises


#: Each view with settings it draws.
VIEWS = [
    (model_views.reading, (SMALL,)),
    (model_views.layer_map, (SMALL, "mine")),
    (model_views.layers, (LLAMA3, 0)),
    (model_views.compare, (SMALL, "mine", "gemma3_4b")),
    (model_views.mrope_grid, (SEGMENTS,)),
    (model_views.mrope_axes, (presets.preset_text("qwen2_vl_7b"),)),
    (model_views.mrope_score, (presets.preset_text("qwen2_vl_7b"), 12)),
    (model_views.rope2d, (7, 7, 32, 10.0, 3, 3, 8)),
]


def items_json(items) -> list:
    return [(item.key, spec(item.fig), dict(item.options)) if isinstance(item, Figure) else item for item in items]


@pytest.mark.parametrize(("view", "settings"), VIEWS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_view_equals_its_uncached_build(view, settings):
    cached = view(*settings)
    assert cached.page == "models"
    assert items_json(cached.items) == items_json(view.uncached(*settings))


@pytest.mark.parametrize(("view", "settings"), VIEWS, ids=lambda v: getattr(v, "__name__", ""))
def test_the_language_is_part_of_the_key(view, settings):
    english = view(*settings)
    st.session_state["lang"] = "zh"
    chinese = view(*settings)
    assert chinese is not english
    assert items_json(chinese.items) != items_json(english.items)


@pytest.mark.parametrize(
    ("view", "settings"),
    [
        (model_views.reading, (BROKEN,)),
        (model_views.reading, ('{"model_type": "llama", "rope_scaling": {"rope_type": "yarn"}',)),
        (model_views.layer_map, (BROKEN, "broken")),
        (model_views.layers, (config(rope_scaling={"rope_type": "yarn"}), 0)),
        (model_views.compare, (BROKEN, "broken", "gemma3_4b")),
        (model_views.compare, (SMALL, "mine", "no_such_preset")),
        (model_views.mrope_grid, ((3, ("image", 1, 3, 4)),)),  # 3 rows of patches do not merge 2 x 2
        (model_views.mrope_grid, ((),)),
        (model_views.mrope_axes, (SMALL,)),  # a text model has no M-RoPE layer
        (model_views.mrope_score, (presets.preset_text("llama3_1_8b"), 10)),
        (model_views.rope2d, (5, 5, 18, 10.0, 2, 2, 8)),  # 18 is no multiple of 4
        (model_views.rope2d, (5, 5, 16, 1.0, 2, 2, 8)),
        (model_views.rope2d, (5, 5, 16, 10.0, 5, 2, 8)),  # the patch is off the grid
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_refused_settings_raise_and_are_not_cached(view, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            view(*settings)
    assert not view_keys()
