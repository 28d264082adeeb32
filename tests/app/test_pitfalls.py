"""The Pitfalls page: the charts hold the correct and the buggy version computed independently here, every tab
draws in both languages, a link reproduces a view, and nonsense in the URL falls back to the defaults."""

from __future__ import annotations

import json

import numpy as np
import pytest

import posviz
from posviz.lessons import pitfalls, precision

from ._support import (
    as_array,
    assert_clean,
    figures,
    heatmap_z,
    open_page,
    sinusoidal_formula,
    title,
    tr,
    visit_tabs,
    widget,
)

TABS = ["exponent", "axes", "zero", "scale", "shape", "rope", "alibi", "index", "float16"]


def doubled_formula(n, d, base=10000.0, shift_cos=False):
    """The buggy loop, written out: column i (i even) and i + 1 use base^(2i/d); shifted cos: base^(2(i+1)/d)."""
    table = np.empty((n, d))
    pos = np.arange(n)[:, None]
    for i in range(0, d, 2):
        table[:, i] = np.sin(pos[:, 0] / base ** (2 * i / d))
        table[:, i + 1] = np.cos(pos[:, 0] / base ** (2 * (i + 1 if shift_cos else i) / d))
    return table


def ys(fig) -> list[np.ndarray]:
    return [as_array(trace["y"]) for trace in fig["data"]]


def test_default_view_shows_the_doubled_exponent(default_view):
    at = default_view("pitfalls")
    assert_clean(at)
    ok, bug, motion, radius = figures(at)
    np.testing.assert_allclose(heatmap_z(ok), posviz.sinusoidal(128, 128), atol=1e-6)
    np.testing.assert_allclose(heatmap_z(bug), doubled_formula(128, 128), atol=1e-6)
    good, bad = ys(motion)
    np.testing.assert_allclose(bad, np.ptp(doubled_formula(128, 128), axis=0), atol=1e-12)
    # the upper half of the buggy table hardly moves, the correct one still does
    assert (bad[64:] < 0.05).mean() > 0.8 and (good[64:] < 0.05).mean() < 0.5
    assert np.abs(ys(radius)[1]).max() < 1e-12  # doubled: pairs still share a frequency
    assert title(motion) == tr("en", "pitfalls.exponent.motion", n=128)


def test_url_opens_the_shifted_cos_and_sizes():
    at = open_page("pitfalls", query={"bug": "cos_shift", "n": "40", "d": "16"})
    assert_clean(at)
    assert widget(at, "bug").value == "cos_shift" and widget(at, "n").value == 40 and widget(at, "d").value == 16
    _, bug, _, radius = figures(at)
    np.testing.assert_allclose(heatmap_z(bug), doubled_formula(40, 16, shift_cos=True), atol=1e-6)
    table = doubled_formula(40, 16, shift_cos=True)
    expected = np.abs(table[:, 0::2] ** 2 + table[:, 1::2] ** 2 - 1).max(axis=0)
    np.testing.assert_allclose(ys(radius)[1], expected, atol=1e-12)
    assert ys(radius)[1][1:].max() > 0.3
    assert title(bug) == tr("en", "pitfalls.exponent.buggy.cos_shift")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tab_draws_its_signature(lang):
    at = open_page("pitfalls", query={"n": "64", "d": "64"}, lang=lang)
    view = visit_tabs(at, "pitfalls", TABS, lang=lang)
    assert not view.exceptions and not view.errors, view.exceptions + view.errors
    swapped = view.by_tab["axes"][2]
    assert np.max(ys(swapped)[0]) < 1e-9 and np.max(ys(swapped)[1]) > 0.1
    assert tr(lang, "pitfalls.axes.silent", n=64) in view.infos  # n == d: no error to warn you
    nearest = view.by_tab["zero"][0]
    assert ys(nearest)[0].min() > 0 and np.all(ys(nearest)[1] == 0)
    lost = view.by_tab["scale"][2]
    np.testing.assert_array_equal(ys(lost)[0], 0.0)
    assert ys(lost)[1][0] == 0.5  # at position 0 every sin column is 0
    pairing = view.by_tab["rope"][0]
    trained, inference = ys(pairing)
    assert trained[0] == pytest.approx(inference[0]) and np.abs(trained - inference).max() > 0.1
    slopes = view.by_tab["alibi"][0]
    np.testing.assert_allclose(ys(slopes)[0], posviz.alibi_slopes(12), rtol=1e-12)
    np.testing.assert_allclose(ys(slopes)[1], 2.0 ** (-8 * np.arange(1, 13) / 12), rtol=1e-12)
    rounding = view.by_tab["float16"][0]
    positions = as_array(rounding["data"][1]["x"])
    np.testing.assert_array_equal(ys(rounding)[1], np.abs(positions.astype(np.float16).astype(float) - positions))
    assert not ys(rounding)[0].any()
    codes = "\n".join(view.codes)
    assert "index out of range in self" in codes
    assert "The size of tensor a (65) must match the size of tensor b (66)" in codes
    assert "The size of tensor a (512) must match the size of tensor b (768)" in codes
    assert "mat1 and mat2 shapes cannot be multiplied (4x128 and 64x64)" in codes
    assert title(slopes) == tr(lang, "pitfalls.alibi.slopes", n=12)


def test_url_round_trip_of_tab_controls():
    query = {"tab": "alibi", "heads": "16"}
    at = open_page("pitfalls", query=query)
    assert_clean(at)
    (slopes,) = figures(at)
    assert widget(at, "heads").value == 16
    np.testing.assert_array_equal(ys(slopes)[0], ys(slopes)[1])  # a power of two: both rules agree
    assert at.query_params["tab"] == "alibi"
    at = open_page("pitfalls", query={"tab": "shape", "dtok": "256", "dpos": "256"})
    assert tr("en", "pitfalls.shape.same", d=256) in [i.value for i in at.info]


def test_nonsense_in_the_url_falls_back():
    at = open_page("pitfalls", query={"tab": "nope", "bug": "triple", "n": "abc", "heads": "-3"})
    assert_clean(at)
    assert widget(at, "bug").value == "doubled" and widget(at, "n").value == 128
    assert len(figures(at)) == 4


# ------------------------------------------------------------------ each version's code and figures in one column


def version_columns(at, lang: str = "en") -> tuple[list, list]:
    """The columns headed by the catalog's "Correct" and by its "Buggy" label, in page order."""
    correct = [c for c in at.columns if tr(lang, "pitfalls.fix") in [m.value for m in c.markdown]]
    buggy = [c for c in at.columns if tr(lang, "pitfalls.bug") in [m.value for m in c.markdown]]
    assert len(correct) == len(buggy) >= 1
    return correct, buggy


def column_figures(column) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in column.get("plotly_chart")]


def cosine(table: np.ndarray) -> np.ndarray:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    return unit @ unit.T


def mixed_inputs(d: int, scaled: bool, tokens: int = 8, positions: int = 16) -> np.ndarray:
    """x = s E[t] + PE[p], token-major, E ~ N(0, 1/d) drawn from seed 0, s = sqrt(d) or 1 (Vaswani et al. 3.4)."""
    embedding = np.random.default_rng(0).normal(0.0, d**-0.5, size=(tokens, d)) * (np.sqrt(d) if scaled else 1.0)
    table = sinusoidal_formula(positions, d)
    return np.stack([embedding[t] + table[p] for t in range(tokens) for p in range(positions)])


def expected_in_columns(tab: str, query: dict) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """What the figures under the correct code and under the buggy code must hold, each as the core computes it
    and as it is written out here (the two agree, and differ from the other version)."""
    n, d = int(query["n"]), int(query["d"])
    if tab == "exponent":
        variant = query.get("bug", "doubled")
        core = pitfalls.TABLES["correct"](n, d), pitfalls.TABLES[variant](n, d)
        written = sinusoidal_formula(n, d), doubled_formula(n, d, shift_cos=variant == "cos_shift")
    elif tab == "axes":
        core = (
            posviz.cosine_similarity_matrix(pitfalls.TABLES["correct"](n, d)),
            posviz.cosine_similarity_matrix(pitfalls.TABLES["swapped"](n, d)),
        )
        written = cosine(sinusoidal_formula(n, d)), cosine(sinusoidal_formula(d, n).T)
    else:
        core = tuple(pitfalls.mix_signature(d, 8, 16, scaled=scaled)[0] for scaled in (True, False))
        written = cosine(mixed_inputs(d, True)), cosine(mixed_inputs(d, False))
    for a, b in zip(core, written, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)  # the oracle written here is the core's table
    return [core[0]], [core[1]]


COLUMN_VIEWS = [
    ("exponent", {"n": "48", "d": "32"}),
    ("exponent", {"n": "48", "d": "32", "bug": "cos_shift"}),
    ("axes", {"n": "48", "d": "32"}),
    ("scale", {"n": "48", "d": "32"}),
]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("tab", "query"), COLUMN_VIEWS)
def test_each_version_has_its_figures_under_its_own_code(tab, query, lang):
    at = open_page("pitfalls", query={**query, "tab": tab}, lang=lang)
    assert_clean(at)
    correct, buggy = (columns[0] for columns in version_columns(at, lang))
    want_correct, want_buggy = expected_in_columns(tab, query)
    got_correct, got_buggy = [[heatmap_z(f) for f in column_figures(c)] for c in (correct, buggy)]
    assert len(got_correct) == len(want_correct) and len(got_buggy) == len(want_buggy)
    for got, want, other in zip(got_correct, want_correct, want_buggy, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg="under the correct code")
        assert np.abs(got - other).max() > 0.05  # and it is not the buggy picture
    for got, want, other in zip(got_buggy, want_buggy, want_correct, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg="under the buggy code")
        assert np.abs(got - other).max() > 0.05
    # the code above each picture is the code that computes it
    codes = [c.value for c in correct.code], [c.value for c in buggy.code]
    if tab == "exponent":
        assert "base ** (i / d)" in codes[0][0] and "base ** (2 * i / d)" in codes[1][0]
    elif tab == "axes":
        assert "sinusoidal(max_len, d_model)" in codes[0][0] and "pe.T" in codes[1][0]
        # torch's complaint about the buggy code (without its transpose) stands in the buggy column
        assert "must match the size of tensor b" in codes[1][-1]
    else:
        assert "math.sqrt(d_model)" in codes[0][0] and "math.sqrt" not in codes[1][0]


@pytest.mark.parametrize("tab", TABS)
def test_the_correct_code_is_left_and_blue_the_buggy_right_and_red_on_every_tab(tab):
    at = open_page("pitfalls", query={"tab": tab, "n": "48", "d": "32"})
    assert_clean(at)
    correct, buggy = version_columns(at)
    order = [id(c.proto) for c in at.columns]
    for c, b in zip(correct, buggy, strict=True):  # each pair: Correct in the left column, Buggy just right of it
        assert order.index(id(b.proto)) == order.index(id(c.proto)) + 1
        assert c.code and b.code
    for fig in figures(at):
        lines = [trace for trace in fig["data"] if trace["type"] in ("scatter", "bar")]
        if len(lines) >= 2 and not fig["layout"].get("meta"):
            colours = [trace.get("line", {}).get("color") or trace.get("marker", {}).get("color") for trace in lines]
            assert colours[:2] == ["#1f77b4", "#d62728"], (title(fig), colours)


# ------------------------------------------------------------------------- error plots show zero as zero


def y_range(fig) -> list[float]:
    axis = fig["layout"]["yaxis"]
    assert "range" in axis, f"{title(fig)}: the axis zooms into whatever the data holds"
    return [float(v) for v in axis["range"]]


def test_the_unit_circle_plot_shows_rounding_as_zero():
    at = open_page("pitfalls", query={"n": "128", "d": "128"})  # doubled: both stay on the circle
    radius = figures(at)[3]
    assert title(radius) == tr("en", "pitfalls.exponent.radius")
    values = np.concatenate(ys(radius)[:2])
    assert 0 < values.max() < 1e-15  # rounding only ...
    low, high = y_range(radius)
    assert low == 0 and high >= 1.0  # ... drawn against the largest departure a pair can have (1)
    assert radius["layout"]["yaxis"].get("type", "linear") == "linear"
    reference = radius["data"][2]
    assert reference["name"] == tr("en", "pitfalls.reference.radius") and set(as_array(reference["y"])) == {1.0}
    # the signature writes both departures alike: rounding in the buggy table is not printed as a clean 0.00
    signature = next(m.value for m in at.markdown if "(buggy)" in m.value)
    good, bad = ys(radius)[:2]
    assert f"{good.max():.2g} (correct) vs {bad.max():.2g} (buggy)" in signature
    at = open_page("pitfalls", query={"n": "128", "d": "128", "bug": "cos_shift"})
    radius = figures(at)[3]
    low, high = y_range(radius)
    assert low == 0 and high >= max(1.0, ys(radius)[1].max())


def test_the_offset_spread_and_the_rounding_start_at_zero():
    at = open_page("pitfalls", query={"tab": "axes", "n": "64", "d": "32"})
    spread = figures(at)[2]
    assert ys(spread)[0].max() < 1e-12
    low, high = y_range(spread)
    assert low == 0 and high >= max(1.0, ys(spread)[1].max())
    at = open_page("pitfalls", query={"tab": "float16", "span": "1000"})  # below 2048: nothing rounds at all
    rounding = figures(at)[0]
    assert not np.concatenate(ys(rounding)[:2]).any()
    low, high = y_range(rounding)
    assert low == 0 and high >= 1.0
    assert rounding["data"][2]["name"] == tr("en", "pitfalls.reference.position")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_log_error_plot_has_a_labelled_floor_for_zero(lang):
    at = open_page("pitfalls", query={"tab": "float16", "span": "4096", "d": "64"}, lang=lang)
    error = figures(at)[1]
    floor = 1e-10
    assert error["layout"]["yaxis"]["type"] == "log"
    low, high = y_range(error)
    assert 10**low <= floor and 10**high >= 1.0
    positions = as_array(error["data"][0]["x"])
    expected = {dt: worst for dt, (_, _, worst) in precision.pair_errors_by_dtype(4096, 64).items()}
    for trace, dtype in zip(error["data"][:2], ("float32", "float16"), strict=True):
        shown = as_array(trace["y"])
        assert np.isfinite(shown).all() and shown.min() >= floor  # nothing a log axis would drop
        np.testing.assert_allclose(shown, np.maximum(expected[dtype], floor), rtol=1e-9)
    assert positions[0] == 0 and expected["float32"][0] == 0  # position 0 is exact: it sits on the floor
    floor_line = error["data"][2]
    assert set(as_array(floor_line["y"])) == {floor}
    assert floor_line["name"] == tr(lang, "figure.floor", floor="1e-10")


# ------------------------------------------------------------------------------------------ what the fix says


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_zero_init_fix_names_each_model_s_own_std(lang):
    """BERT's initializer_range is 0.02 (transformers' BertConfig); OpenAI's GPT-2 drew wpe with stddev 0.01 and
    wte with 0.02 (openai/gpt-2, src/model.py), so 0.02 must not be put down to GPT-2's position table."""
    from transformers import BertConfig

    at = open_page("pitfalls", query={"tab": "zero"}, lang=lang)
    fix = tr(lang, "pitfalls.zero.fix")
    assert fix in [s.value for s in at.success]
    assert f"std={BertConfig().initializer_range}" in fix and "BERT" in fix
    assert "0.01" in fix and "`wpe`" in fix
    assert "BERT and GPT-2" not in fix and "BERT 和 GPT-2" not in fix
