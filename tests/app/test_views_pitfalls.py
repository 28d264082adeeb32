"""The Pitfalls page's views (posviz/ui/views/pitfalls.py): each mistake's figure and its signature against the
formula written out here (the buggy loops, the swapped axes, the zero table, the unscaled inputs, the product, the
two RoPE pairings, ALiBi's slopes, positions and sines in float16), each cached by its settings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import streamlit as st

import posviz
from posviz.ui import cache
from posviz.ui.views import Figure
from posviz.ui.views import pitfalls as pitfall_views

from ._support import as_array, assert_matrix, heatmap_z, sinusoidal_formula, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


def views_held() -> list:
    return [key for key in cache.TABLES.keys() if key[0] == "view"]


def ys(fig) -> list[np.ndarray]:
    """The y values of each trace of a figure."""
    return [as_array(trace["y"]) for trace in fig.to_dict()["data"]]


def buggy_formula(n: int, d: int, base: float = 10000.0, *, shift_cos: bool = False) -> np.ndarray:
    """The buggy loop, written out: for i in range(0, d, 2) column i is sin(p / base^(2i/d)), column i + 1
    cos(p / base^(2i/d)), or with the shifted cos cos(p / base^(2(i + 1)/d))."""
    table = np.empty((n, d))
    p = np.arange(n, dtype=float)
    for i in range(0, d, 2):
        table[:, i] = np.sin(p / base ** (2 * i / d))
        if i + 1 < d:
            table[:, i + 1] = np.cos(p / base ** (2 * (i + 1 if shift_cos else i) / d))
    return table


def unit_cosines(rows: np.ndarray) -> np.ndarray:
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit @ unit.T


# ------------------------------------------------------------------------------------------------ exponent tab


@pytest.mark.parametrize(
    ("kind", "key"), [("correct", "table_ok"), ("doubled", "table_bug"), ("cos_shift", "table_bug")]
)
def test_the_exponent_tables_are_the_paper_s_and_the_buggy_loops(kind, key):
    n, d, base = 40, 16, 500.0
    out = pitfall_views.exponent_table(kind, n, d, base)
    expected = (
        sinusoidal_formula(n, d, base)
        if kind == "correct"
        else buggy_formula(n, d, base, shift_cos=kind == "cos_shift")
    )
    figure = out.figure(key)
    assert_matrix(heatmap_z(figure.fig.to_dict()), expected)
    assert_matrix(figure.data, expected, atol=1e-12)
    assert figure.options == {"suffix": kind}
    title = "pitfalls.exponent.correct" if kind == "correct" else f"pitfalls.exponent.buggy.{kind}"
    assert figure.fig.to_dict()["layout"]["title"]["text"] == tr("en", title)
    assert pitfall_views.exponent_table(kind, n, d, base) is out
    assert pitfall_views.exponent_table(kind, n, d + 2, base) is not out


def test_the_motion_is_each_column_s_range_and_the_upper_half_of_the_doubled_table_stands_still():
    n, d, base = 128, 64, 10000.0
    out = pitfall_views.exponent_motion(n, d, base, "doubled")
    good, bad = ys(out.figure("exponent.motion").fig)[:2]
    np.testing.assert_allclose(good, np.ptp(sinusoidal_formula(n, d, base), axis=0), atol=1e-12)
    np.testing.assert_allclose(bad, np.ptp(buggy_formula(n, d, base), axis=0), atol=1e-12)
    assert (bad[d // 2 :] < 0.05).mean() > 0.8 and (good[d // 2 :] < 0.05).mean() < 0.5
    assert sorted(out.figure("exponent.motion").data) == ["correct", "doubled"]
    assert pitfall_views.exponent_motion(n, d, base, "doubled") is out
    assert pitfall_views.exponent_motion(n, d, base, "cos_shift") is not out


def test_the_radius_is_each_pair_s_distance_from_the_unit_circle_and_the_signature_counts_still_columns():
    n, d, base = 48, 16, 10000.0
    out = pitfall_views.exponent_radius(n, d, base, "cos_shift")
    table = buggy_formula(n, d, base, shift_cos=True)
    expected = np.abs(table[:, 0::2] ** 2 + table[:, 1::2] ** 2 - 1).max(axis=0)
    good, bad = ys(out.figure("exponent.radius").fig)[:2]
    np.testing.assert_allclose(bad, expected, atol=1e-12)
    assert good.max() < 1e-12 and bad[1:].max() > 0.3  # the shifted cos leaves the circle; the paper's does not
    still_ok = int((np.ptp(sinusoidal_formula(n, d, base), axis=0) < 0.05).sum())
    still_bug = int((np.ptp(table, axis=0) < 0.05).sum())
    assert out.texts == [
        tr(
            "en",
            "pitfalls.exponent.signature",
            d=d,
            n=n,
            ok=still_ok,
            bug=still_bug,
            radius_ok=f"{good.max():.2g}",
            radius_bug=f"{expected.max():.2g}",
        )
    ]
    assert pitfall_views.exponent_radius(n, d, base, "cos_shift") is out
    assert pitfall_views.exponent_radius(n, d, 1000.0, "cos_shift") is not out


def test_the_exponent_views_build_each_table_once():
    n, d, base = 64, 32, 10000.0
    pitfall_views.exponent_table("correct", n, d, base)
    pitfall_views.exponent_table("doubled", n, d, base)
    pitfall_views.exponent_motion(n, d, base, "doubled")
    pitfall_views.exponent_radius(n, d, base, "doubled")
    from posviz.lessons import pitfalls

    built = {pitfalls.TABLES[kind].__qualname__: kind for kind in ("correct", "doubled")}
    tables = [key for key in cache.TABLES.keys() if key[0] == "shared" and key[2] in built]
    assert sorted(built[key[2]] for key in tables) == ["correct", "doubled"]


# ---------------------------------------------------------------------------------------------------- axes tab


def test_the_swapped_table_s_similarity_depends_on_where_a_pair_sits():
    n, d, base = 40, 24, 10000.0
    correct = pitfall_views.axes_similarity("correct", n, d, base)
    swapped = pitfall_views.axes_similarity("swapped", n, d, base)
    assert_matrix(heatmap_z(correct.figure("axes.correct").fig.to_dict()), unit_cosines(sinusoidal_formula(n, d)))
    assert_matrix(heatmap_z(swapped.figure("axes.swapped").fig.to_dict()), unit_cosines(sinusoidal_formula(d, n).T))
    layout = correct.figure("axes.correct").fig.to_dict()["layout"]
    assert layout["title"]["text"] == tr("en", "pitfalls.axes.correct")
    assert pitfall_views.axes_similarity("correct", n, d, base) is correct


def test_pairwise_views_take_at_most_pairwise_positions():
    out = pitfall_views.axes_similarity("correct", pitfall_views.PAIRWISE + 88, 8, 10000.0)
    assert out.figure("axes.correct").data.shape == (pitfall_views.PAIRWISE, pitfall_views.PAIRWISE)
    nearest = pitfall_views.zero_nearest(pitfall_views.PAIRWISE + 88, 8).figure("zero.nearest").data
    assert nearest["zero_init"].shape == (pitfall_views.PAIRWISE,)


def offset_spread(table: np.ndarray) -> np.ndarray:
    """For each k: max_p - min_p of PE(p) . PE(p + k) over the pairs that fit, over the largest |PE(i) . PE(j)|."""
    n = table.shape[0]
    largest = max(abs(table[i] @ table[j]) for i in range(n) for j in range(n))
    dots = [[table[p] @ table[p + k] for p in range(n - k)] for k in range(n)]
    return np.array([(max(row) - min(row)) / largest for row in dots])


def test_the_offset_spread_is_zero_for_the_paper_s_table_only():
    n, d, base = 24, 16, 10000.0
    out = pitfall_views.axes_offset(n, d, base)
    data = out.figure("axes.offset").data
    np.testing.assert_allclose(data["correct"], offset_spread(sinusoidal_formula(n, d)), atol=1e-12)
    np.testing.assert_allclose(data["swapped"], offset_spread(sinusoidal_formula(d, n).T), atol=1e-12)
    assert data["correct"].max() < 1e-12 and data["swapped"].max() > 0.1
    ok, bug = f"{data['correct'].max():.1e}", f"{data['swapped'].max():.2f}"
    assert out.texts == [tr("en", "pitfalls.axes.signature", m=n, ok=ok, bug=bug)]
    assert pitfall_views.axes_offset(n, d, base) is out
    assert pitfall_views.axes_offset(n + 1, d, base) is not out


# ------------------------------------------------------------------------------------------------ zero, scale


def test_an_all_zero_table_puts_every_position_on_its_neighbour():
    n, d = 30, 8
    out = pitfall_views.zero_nearest(n, d)
    data = out.figure("zero.nearest").data
    np.testing.assert_array_equal(data["zero_init"], 0.0)
    table = posviz.learned_init(n, d)  # the random rows; the nearest other is found by brute force here
    gaps = np.linalg.norm(table[:, None, :] - table[None, :, :], axis=-1) + np.diag(np.full(n, np.inf))
    np.testing.assert_allclose(data["random_init"], gaps.min(axis=1), rtol=1e-9)
    assert out.texts == [tr("en", "pitfalls.zero.signature", m=n, ok=f"{gaps.min():.3f}", bug="0")]
    assert pitfall_views.zero_nearest(n, d) is out
    assert pitfall_views.zero_nearest(n, d + 1) is not out


def mixed_inputs(d: int, scaled: bool, base: float, tokens: int, positions: int) -> tuple[np.ndarray, float]:
    """x = s E[t] + PE[p], token-major, E ~ N(0, 1/d) from seed 0, s = sqrt(d) or 1 (Vaswani et al. 3.4), and
    mean |PE| / mean |s E|."""
    embedding = np.random.default_rng(0).normal(0.0, d**-0.5, size=(tokens, d)) * (np.sqrt(d) if scaled else 1.0)
    table = sinusoidal_formula(positions, d, base)
    inputs = np.stack([embedding[t] + table[p] for t in range(tokens) for p in range(positions)])
    ratio = np.linalg.norm(table, axis=1).mean() / np.linalg.norm(embedding, axis=1).mean()
    return inputs, ratio


@pytest.mark.parametrize("scaled", [True, False])
def test_unscaled_tokens_drown_in_their_positions(scaled):
    d, base = 64, 10000.0
    tokens, positions = pitfall_views.MIX_TOKENS, pitfall_views.MIX_POSITIONS
    out = pitfall_views.scale_mix(d, base, scaled)
    name = "scaled" if scaled else "unscaled"
    inputs, ratio = mixed_inputs(d, scaled, base, tokens, positions)
    similarity = unit_cosines(inputs)
    assert_matrix(heatmap_z(out.figure(f"scale.{name}").fig.to_dict()), similarity)
    token = np.repeat(np.arange(tokens), positions)
    position = np.tile(np.arange(positions), tokens)
    same_position = similarity[(position[:, None] == position) & (token[:, None] != token)].mean()
    same_token = similarity[(token[:, None] == token) & (position[:, None] != position)].mean()
    assert (same_position > 0.9) is not scaled  # without sqrt(d), two words at one place look alike
    assert out.texts == [
        tr(
            "en",
            "pitfalls.scale.signature",
            same_position=f"{same_position:.2f}",
            same_token=f"{same_token:.2f}",
            ratio=f"{ratio:.2f}",
        )
    ]
    assert pitfall_views.scale_mix(d, base, scaled) is out
    assert pitfall_views.scale_mix(d, base, not scaled) is not out


def test_multiplying_erases_the_dimensions_where_the_table_is_near_zero():
    n, d, base = 50, 32, 10000.0
    out = pitfall_views.combine_lost(n, d, base)
    data = out.figure("combine.lost").data
    np.testing.assert_array_equal(data["add"], 0.0)
    np.testing.assert_allclose(data["multiply"], (np.abs(sinusoidal_formula(n, d, base)) < 0.1).mean(axis=1))
    assert data["multiply"][0] == 0.5  # at position 0 every sin column is 0
    assert pitfall_views.combine_lost(n, d, base) is out
    assert pitfall_views.combine_lost(n, d, 100.0) is not out


# ------------------------------------------------------------------------------------------------- rope, alibi


def pairing_logits(head_dim: int, n: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """s(r) = RoPE(q, r) . k / sqrt(d), q, k ~ N(0, 1) from seed 0: each pair (a, b) turned by r theta_i adds
    cos(r theta_i) (q_a k_a + q_b k_b) + sin(r theta_i) (q_a k_b - q_b k_a); pairs (2i, 2i + 1) or (i, i + d/2)."""
    q, k = np.random.default_rng(0).standard_normal((2, head_dim))
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    angle = np.arange(n)[:, None] * theta[None, :]
    half = head_dim // 2
    scores = []
    for a, b in ((np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)), (np.arange(half), np.arange(half) + half)):
        turned = np.cos(angle) * (q[a] * k[a] + q[b] * k[b]) + np.sin(angle) * (q[a] * k[b] - q[b] * k[a])
        scores.append(turned.sum(axis=1) / np.sqrt(head_dim))
    return scores[0], scores[1]


def test_the_two_pairings_agree_at_offset_zero_and_drift_apart():
    head_dim, n, base = 16, 64, 10000.0
    out = pitfall_views.rope_pairing(head_dim, n, base)
    data = out.figure("rope.scores").data
    interleaved, half = pairing_logits(head_dim, n, base)
    np.testing.assert_allclose(data["interleaved"], interleaved, atol=1e-12)
    np.testing.assert_allclose(data["half"], half, atol=1e-12)
    assert data["interleaved"][0] == pytest.approx(data["half"][0])
    gap = np.abs(half - interleaved).max() / np.abs(interleaved).max()
    assert gap > 0.1
    assert out.texts == [tr("en", "pitfalls.rope.signature", gap=f"{100 * gap:.0f}")]
    assert pitfall_views.rope_pairing(head_dim, n, base) is out
    assert pitfall_views.rope_pairing(head_dim + 2, n, base) is not out


def press_slopes(n: int) -> list[float]:
    """Press et al.'s reference get_slopes: 2^(-8/n) to the powers 1 .. n for n a power of two; else those of the
    largest power of two c below n, then every other slope of 2c heads."""
    if math.log2(n).is_integer():
        start = 2 ** (-8 / n)
        return [start ** (i + 1) for i in range(n)]
    c = 2 ** math.floor(math.log2(n))
    return press_slopes(c) + press_slopes(2 * c)[0::2][: n - c]


@pytest.mark.parametrize("heads", [12, 16])
def test_the_naive_slopes_miss_the_paper_s_unless_the_count_is_a_power_of_two(heads):
    out = pitfall_views.alibi_slopes(heads)
    data = out.figure("alibi.slopes").data
    paper = np.array(press_slopes(heads))
    naive = 2.0 ** (-8 * np.arange(1, heads + 1) / heads)
    np.testing.assert_allclose(data["paper"], paper, rtol=1e-12)
    np.testing.assert_allclose(data["naive"], naive, rtol=1e-12)
    error = np.abs(np.log2(naive / paper))
    if heads == 16:
        assert out.texts == [tr("en", "pitfalls.alibi.power", n=16, c=16, worst="0.00", wrong=0)]
    else:  # the first 8 slopes come from 8 heads, the other 4 from 16
        expected = tr(
            "en", "pitfalls.alibi.signature", n=12, c=8, worst=f"{error.max():.2f}", wrong=int((error > 1e-12).sum())
        )
        assert out.texts == [expected] and error.max() > 0.1
    assert pitfall_views.alibi_slopes(heads) is out
    assert pitfall_views.alibi_slopes(heads + 1) is not out


# ------------------------------------------------------------------------------------------------- float16 tab


def test_positions_past_2048_round_in_float16():
    span = 3000
    out = pitfall_views.float16_rounding(span)
    data = out.figure("float16.rounding").data
    p = np.arange(span, dtype=float)
    np.testing.assert_array_equal(data["position"], p)
    np.testing.assert_array_equal(data["float16"], np.abs(p.astype(np.float16).astype(float) - p))
    np.testing.assert_array_equal(data["float32"], 0.0)
    assert data["float16"][:2049].max() == 0 and data["float16"][2049] == 1  # 2049 rounds to 2048 (ties to even)
    assert pitfall_views.float16_rounding(span) is out
    assert pitfall_views.float16_rounding(span + 1) is not out


def rounded_pair_error(positions: np.ndarray, d: int, base: float, dtype) -> np.ndarray:
    """max_k max(|sin_r(p w_k) - sin(p w_k)|, |cos_r - cos|) where p, w_k = base^(-2k/d), their product and the
    sine are each rounded to ``dtype`` (the product of two such numbers is exact in float64, so it rounds once)."""
    p = positions.astype(dtype).astype(float)[:, None]
    w = (base ** (-np.arange(0, d, 2) / d)).astype(dtype).astype(float)[None, :]
    angle = (p * w).astype(dtype).astype(float)
    exact = positions.astype(float)[:, None] * (base ** (-np.arange(0, d, 2) / d))[None, :]
    sin_error = np.abs(np.sin(angle).astype(dtype).astype(float) - np.sin(exact))
    cos_error = np.abs(np.cos(angle).astype(dtype).astype(float) - np.cos(exact))
    return np.maximum(sin_error, cos_error).max(axis=1)


def test_the_float16_error_rounds_every_step_and_stops_at_its_floor():
    span, d, base = 4096, 32, 10000.0
    out = pitfall_views.float16_error(span, d, base)
    data = out.figure("float16.error").data
    positions = np.asarray(data["position"])
    np.testing.assert_array_equal(positions, np.arange(span))
    for dtype in ("float16", "float32"):
        np.testing.assert_allclose(data[dtype], rounded_pair_error(positions, d, base, dtype), rtol=1e-6, atol=1e-12)
    assert data["float16"][-1] > 0.1 and data["float32"].max() < 1e-3
    float32, float16 = ys(out.figure("float16.error").fig)[:2]
    floor = pitfall_views.ERROR_FLOOR
    np.testing.assert_allclose(float16, np.maximum(data["float16"], floor), rtol=1e-12)
    assert float32.min() == floor  # position 0 is exact, drawn on the floor
    assert pitfall_views.float16_error(span, d, base) is out
    assert pitfall_views.float16_error(span, d + 2, base) is not out


@pytest.mark.parametrize("span", [3000, 10_000])
def test_float16_merges_neighbours_past_2048(span):
    out = pitfall_views.float16_merged(span)
    held = np.arange(span).astype(np.float16)
    merged16 = int((held[1:] == held[:-1]).sum())
    signature = tr(
        "en", "pitfalls.float16.signature", span=f"{span:,}", merged16=f"{merged16:,}", merged32="0", first="2,049"
    )
    subsampled = [tr("en", "pitfalls.subsampled", shown=4096, n=span)] if span > 4096 else []
    assert out.texts == [signature, *subsampled]
    assert pitfall_views.float16_merged(span) is out


# --------------------------------------------------------------------------------------- every view, in general


#: Each view with settings it draws and settings it refuses.
VIEWS = [
    ("exponent_table", ("doubled", 24, 8, 1000.0), ("tripled", 24, 8, 1000.0)),
    ("exponent_table", ("correct", 24, 8, 1000.0), ("correct", 24, 8, 1.0)),
    ("exponent_motion", (24, 8, 1000.0, "cos_shift"), (24, 8, 1000.0, "correct")),
    ("exponent_radius", (24, 8, 1000.0, "doubled"), (24, 1, 1000.0, "doubled")),
    ("axes_similarity", ("swapped", 24, 8, 1000.0), ("random", 24, 8, 1000.0)),
    ("axes_offset", (24, 8, 1000.0), (24, 0, 1000.0)),
    ("zero_nearest", (24, 8), (1, 8)),
    ("scale_mix", (16, 1000.0, False), (0, 1000.0, False)),
    ("combine_lost", (24, 8, 1000.0), (0, 8, 1000.0)),
    ("rope_pairing", (8, 24, 1000.0), (0, 24, 1000.0)),
    ("alibi_slopes", (6,), (0,)),
    ("float16_rounding", (100,), (0,)),
    ("float16_error", (100, 8, 1000.0), (100, 0, 1000.0)),
    ("float16_merged", (100,), (0,)),
]


@pytest.mark.parametrize(("name", "good", "bad"), VIEWS, ids=[f"{v[0]}-{i}" for i, v in enumerate(VIEWS)])
def test_refused_settings_raise_and_are_not_cached(name, good, bad):
    func = getattr(pitfall_views, name)
    for _ in range(2):
        with pytest.raises(ValueError):
            func(*bad)
    assert not views_held()
    func(*good)
    assert len(views_held()) == 1


@pytest.mark.parametrize(("name", "good", "bad"), VIEWS, ids=[f"{v[0]}-{i}" for i, v in enumerate(VIEWS)])
def test_a_view_equals_its_uncached_build(name, good, bad):
    func = getattr(pitfall_views, name)
    cached = func(*good)
    fresh = list(func.uncached(*good))
    assert [type(item) for item in cached.items] == [type(item) for item in fresh]
    for got, built in zip(cached.items, fresh, strict=True):
        if isinstance(got, Figure):
            assert (got.key, dict(got.options)) == (built.key, dict(built.options))
            assert got.fig.to_dict() == built.fig.to_dict()
        else:
            assert got == built


def test_a_view_is_kept_per_language():
    english = pitfall_views.alibi_slopes(12)
    st.session_state["lang"] = "zh"
    chinese = pitfall_views.alibi_slopes(12)
    assert chinese is not english
    assert chinese.figure("alibi.slopes").fig.to_dict()["layout"]["title"]["text"] == tr(
        "zh", "pitfalls.alibi.slopes", n=12
    )
    assert chinese.texts != english.texts


# ------------------------------------------------------------------------------------ what the libraries say


def torch_says(func) -> str:
    """The message of the exception ``func`` raises in torch itself."""
    try:
        func()
    except (RuntimeError, IndexError) as exc:
        return str(exc)
    raise AssertionError("torch raised nothing")


def test_the_axes_error_is_torch_s_own_and_a_square_table_is_silent():
    import torch

    out = pitfall_views.axes_error(6, 4)
    assert out.texts == [
        tr("en", "pitfalls.axes.error", n=6, d=4),
        torch_says(lambda: torch.zeros(6, 4) + torch.zeros(4, 6)),
    ]
    assert [item.kind for item in out.items] == ["markdown", "code"]
    square = pitfall_views.axes_error(5, 5)
    assert square.texts == [tr("en", "pitfalls.axes.silent", n=5)] and square.items[0].kind == "info"


def test_the_shape_error_is_torch_s_own():
    import torch

    out = pitfall_views.shape_error(512, 768)
    n = pitfall_views.DUMMY_SEQUENCE
    assert out.texts[1] == torch_says(lambda: torch.zeros(n, 512) + torch.zeros(n, 768))
    assert pitfall_views.shape_error(64, 64).items[0].kind == "info"


def test_a_lookup_past_the_end_is_torch_s_index_error_and_posviz_s_sentence():
    import torch

    out = pitfall_views.index_errors(8, 8)
    assert out.texts[1] == torch_says(lambda: torch.nn.Embedding(8, 1)(torch.tensor([8])))
    assert "8" in out.texts[3] and [item.kind for item in out.items] == ["markdown", "code"] * 2
    assert pitfall_views.index_errors(8, 7).items[0].kind == "info"


def test_an_odd_rope_head_is_refused_by_every_library_and_an_even_one_is_not():
    out = pitfall_views.odd_rope_errors(65, 10_000.0)
    kinds = [item.kind for item in out.items]
    assert kinds[:2] == ["markdown", "code"] and kinds[-2:] == ["markdown", "code"]
    assert tr("en", "pitfalls.rope.torch", d=65) == out.texts[0]
    assert "65" in out.texts[-1]  # posviz names the size it refuses
    even = pitfall_views.odd_rope_errors(64, 10_000.0)
    assert even.texts == [tr("en", "pitfalls.rope.even", d=64)]
