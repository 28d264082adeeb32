"""The Sinusoidal page's views (posviz/ui/views/sinusoidal.py): each is kept by its settings and the language, its
numbers are those of the paper's formula derived here by hand, a refused setting raises ValueError and is never
cached, and the cached output is the one built afresh."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit as st

import posviz
from posviz.ui import cache, views
from posviz.ui.views import sinusoidal as sin_views

from ._support import as_array, assert_matrix, cosines, heatmap_z, sinusoid_omega, sinusoid_rows, spaced, tr

pytestmark = pytest.mark.usefixtures("views_in_english")


# ------------------------------------------------------------------------------------ the formulas, by hand


def pe(positions, d: int, base: float, layout: str = "interleaved") -> np.ndarray:
    return sinusoid_rows(positions, d, base, layout)


def spread(matrix: np.ndarray) -> np.ndarray:
    """max - min of every diagonal k = 1 .. m - 2 of a square matrix."""
    m = matrix.shape[0]
    return np.array([np.ptp(np.diagonal(matrix, k)) for k in range(1, m - 1)])


def rounded(values, dtype: str) -> np.ndarray:
    """``values`` rounded once to float16 or float32 (IEEE 754, ties to even), as float64."""
    return np.asarray(values, dtype=np.float64).astype(dtype).astype(np.float64)


def pair_errors(positions, d: int, base: float, dtype: str) -> np.ndarray:
    """max(|sin_dtype(p w_k) - sin(p w_k)|, |cos_dtype(p w_k) - cos(p w_k)|): p, w_k, their product and each sine
    rounded to ``dtype``; an odd d's last pair has its sin only."""
    p = np.asarray(positions, dtype=np.float64)[:, None]
    w = sinusoid_omega(d, base)[None, :]
    angle = rounded(rounded(p, dtype) * rounded(w, dtype), dtype)
    sin_error = np.abs(rounded(np.sin(angle), dtype) - np.sin(p * w))
    cos_error = np.abs(rounded(np.cos(angle), dtype) - np.cos(p * w))
    cos_error[:, d // 2 :] = 0.0
    return np.maximum(sin_error, cos_error)


def trace(fig: dict, name: str) -> dict:
    return next(tr_ for tr_ in fig["data"] if tr_.get("name") == name)


def y_of(fig: dict, name: str) -> np.ndarray:
    return as_array(trace(fig, name)["y"])


def fig_of(out, key: str) -> dict:
    return out.figure(key).fig.to_dict()


# ------------------------------------------------------------------------------------------- every view alike

#: Each view with settings it draws and the same settings with one changed.
CASES = {
    "table": (sin_views.table, (40, 8, 100.0, "interleaved"), (40, 8, 100.0, "halves")),
    "distance": (sin_views.distance, (40, 8, 100.0, "interleaved"), (40, 8, 1000.0, "interleaved")),
    "shift": (sin_views.shift, (8, 3, 100.0, "interleaved"), (8, 4, 100.0, "interleaved")),
    "shift_residual": (sin_views.shift_residual, (40, 8, 3, 100.0, "interleaved"), (41, 8, 3, 100.0, "interleaved")),
    "frequencies": (sin_views.frequencies, (40, 8, 100.0), (50, 8, 100.0)),
    "projection": (sin_views.projection, (40, 8, 100.0, "interleaved", "pca"), (40, 10, 100.0, "interleaved", "pca")),
    "extrapolation": (
        sin_views.extrapolation,
        (40, 8, 100.0, "interleaved", 10),
        (40, 8, 100.0, "interleaved", 11),
    ),
    "layout_order": (sin_views.layout_order, (8,), (10,)),
    "precision_map": (sin_views.precision_map, (300, 8, 100.0, "float16"), (300, 8, 100.0, "float32")),
    "precision_lines": (sin_views.precision_lines, (300, 8, 100.0), (301, 8, 100.0)),
    "norms": (sin_views.norms, (40, 8, 100.0, "interleaved"), (40, 7, 100.0, "interleaved")),
}


def same_data(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_data(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("name", CASES)
def test_same_settings_give_the_same_output_and_a_changed_one_a_new_output(name):
    func, settings, changed = CASES[name]
    first = func(*settings)
    assert func(*settings) is first
    other = func(*changed)
    assert other is not first
    assert func(*settings) is first and func(*changed) is other  # both kept side by side


@pytest.mark.parametrize("name", CASES)
def test_a_view_equals_its_uncached_build(name):
    func, settings, _ = CASES[name]
    cached, fresh = func(*settings), list(func.uncached(*settings))
    assert cached.page == "sinusoidal" and len(cached.items) == len(fresh) > 0
    for got, built in zip(cached.items, fresh, strict=True):
        assert type(got) is type(built)
        if isinstance(got, views.Figure):
            assert (got.key, dict(got.options)) == (built.key, dict(built.options))
            assert got.fig.to_dict() == built.fig.to_dict()
            assert same_data(got.data, built.data)
        else:
            assert got == built


def test_the_language_is_part_of_the_key():
    english = sin_views.norms(40, 8, 100.0, "interleaved")
    st.session_state["lang"] = "zh"
    chinese = sin_views.norms(40, 8, 100.0, "interleaved")
    assert chinese is not english
    assert chinese.texts == [tr("zh", "sinusoidal.norms.check", d=8, measured="2", claim=f"{8**0.5:.4g}")]
    np.testing.assert_allclose(y_of(fig_of(chinese, "norms"), tr("zh", "sinusoidal.norms.measured")), 2.0, rtol=1e-12)


REFUSED = [
    (sin_views.table, (0, 8, 100.0, "interleaved")),
    (sin_views.table, (40, 8, 1.0, "interleaved")),
    (sin_views.table, (40, 8, 100.0, "diagonal")),
    (sin_views.distance, (2, 8, 100.0, "interleaved")),
    (sin_views.shift, (8, 3, 0.5, "interleaved")),
    (sin_views.shift_residual, (10, 8, 20, 100.0, "interleaved")),
    (sin_views.shift_residual, (40, 7, 3, 100.0, "interleaved")),
    (sin_views.frequencies, (1, 8, 100.0)),
    (sin_views.projection, (40, 8, 100.0, "interleaved", "umap")),
    (sin_views.extrapolation, (40, 8, 100.0, "interleaved", 0)),
    (sin_views.layout_order, (0,)),
    (sin_views.precision_map, (300, 8, 100.0, "float8")),
    (sin_views.precision_lines, (300, 0, 100.0)),
    (sin_views.norms, (40, 8, 100.0, "diagonal")),
]


@pytest.mark.parametrize(("func", "settings"), REFUSED, ids=lambda value: getattr(value, "__name__", str(value)))
def test_refused_settings_raise_and_are_not_cached(func, settings):
    for _ in range(2):
        with pytest.raises(ValueError):
            func(*settings)
    assert not [key for key in cache.TABLES.keys() if key[0] == "view"]


# ------------------------------------------------------------------------------------------- each view's numbers


@pytest.mark.parametrize(("d", "layout"), [(8, "interleaved"), (8, "halves"), (7, "interleaved"), (7, "halves")])
def test_table_and_similarity_are_the_formula(d, layout):
    n, base = 40, 100.0
    out = sin_views.table(n, d, base, layout)
    expected = pe(np.arange(n), d, base, layout)
    assert_matrix(heatmap_z(fig_of(out, "table")), expected, what="table")
    params = {"base": base, "d_model": d, "layout": layout, "n_positions": n}
    assert out.figure("table").data is cache.family_table("sinusoidal", params)  # the family's table, held once
    assert_matrix(heatmap_z(fig_of(out, "similarity")), cosines(expected), atol=1e-5, what="similarity")
    np.testing.assert_allclose(out.figure("similarity").data, cosines(expected), atol=1e-12)
    assert out.texts == []  # every position is shown


def test_a_table_too_big_to_export_is_its_block_means_without_building_it():
    n, d, base = 4097, 1024, 100.0  # 4,195,328 cells: one more row than a CSV holds cell by cell
    out = sin_views.table(n, d, base, "interleaved")
    fig = fig_of(out, "table")
    assert fig["layout"]["meta"] == {"source_shape": [n, d], "downsampled": True, "shape": [1024, 1024]}
    edges = np.append(np.linspace(0, n, 1025).astype(np.int64)[:-1], n)
    table = pe(np.arange(n), d, base)
    means = np.add.reduceat(table, edges[:-1], axis=0) / np.diff(edges)[:, None]
    np.testing.assert_allclose(out.figure("table").data, means, atol=1e-12)
    assert not cache.held_tables("sinusoidal"), "the table was built"
    positions = spaced(n, 1024)
    np.testing.assert_allclose(out.figure("similarity").data, cosines(pe(positions, d, base)), atol=1e-12)
    assert out.texts == [tr("en", "sinusoidal.subsampled", shown=1024, n=n)]


def test_offset_profile_and_spread_are_the_formula():
    n, d, base = 40, 8, 100.0
    out = sin_views.distance(n, d, base, "interleaved")
    profile = fig_of(out, "offset")
    k = np.arange(n)
    dot = np.cos(k[:, None] * sinusoid_omega(d, base)[None, :]).sum(axis=1)  # PE(i) . PE(i + k) = sum_j cos(k w_j)
    np.testing.assert_array_equal(as_array(profile["data"][0]["x"]), k)
    np.testing.assert_allclose(y_of(profile, tr("en", "sinusoidal.offset.dot")), dot, atol=1e-12)
    np.testing.assert_allclose(y_of(profile, tr("en", "sinusoidal.offset.cos")), dot / (d / 2), atol=1e-12)
    table = pe(np.arange(n), d, base)
    data = out.figure("spread").data
    np.testing.assert_array_equal(data["offset"], np.arange(1, n - 1))
    np.testing.assert_allclose(data["dot_spread"], spread(table @ table.T), atol=1e-12)
    assert np.max(data["cos_spread"]) < 1e-12  # the cosine depends on the offset only
    random = posviz.learned_init(n, d, std=0.02, seed=0)
    np.testing.assert_allclose(data["random_cos_spread"], spread(cosines(random)), atol=1e-12)
    assert np.median(data["random_cos_spread"]) > 0.1
    floored = y_of(fig_of(out, "spread"), tr("en", "sinusoidal.spread.dot"))
    np.testing.assert_allclose(floored, np.maximum(data["dot_spread"], sin_views.SPREAD_FLOOR), atol=1e-15)


def test_offset_profile_of_an_odd_width_is_the_mean_over_pairs():
    n, d, base = 30, 7, 100.0
    table = pe(np.arange(n), d, base)
    dot = [np.mean([table[i] @ table[i + k] for i in range(n - k)]) for k in range(n)]
    fig = fig_of(sin_views.distance(n, d, base, "interleaved"), "offset")
    np.testing.assert_allclose(y_of(fig, tr("en", "sinusoidal.offset.dot")), dot, atol=1e-9)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_shift_matrix_moves_every_row_by_k(layout):
    d, k, base = 8, 5, 100.0
    out = sin_views.shift(d, k, base, layout)
    shift = heatmap_z(fig_of(out, "shift"))
    table = pe(np.arange(30), d, base, layout)
    np.testing.assert_allclose(table[:-k] @ shift.T, table[k:], atol=1e-6)  # PE(p + k) = M_k PE(p), float32 cells
    assert_matrix(shift, out.figure("shift").data, what="figure vs data")
    assert out.figure("shift").options == {"suffix": "k5"}


def test_an_odd_width_has_no_shift_matrix_but_a_warning():
    out = sin_views.shift(7, 3, 100.0, "interleaved")
    assert out.items == (views.Text(tr("en", "sinusoidal.shift.odd", d=7), "warning"),)


def said_residual(text: str, key: str, **values) -> float:
    """The residual a sentence of ``key`` states, the sentence otherwise as the catalog has it."""
    before, after = tr("en", key, residual="@", **values).split("@")
    assert text.startswith(before) and text.endswith(after), text
    return float(text[len(before) : len(text) - len(after)])


def test_shift_residual_is_rounding_noise_and_says_which_rows_it_read():
    (text,) = sin_views.shift_residual(40, 8, 3, 100.0, "interleaved").texts
    assert said_residual(text, "sinusoidal.shift.residual", k=3, n=40) < 1e-13  # float64 rounding, not a miss
    (sampled,) = sin_views.shift_residual(5000, 8, 3, 100.0, "interleaved").texts
    assert said_residual(sampled, "sinusoidal.shift.residual.sampled", k=3, shown=4096, n=4997) < 1e-12


def test_wavelengths_and_the_similarity_to_position_0_are_the_formula():
    n, d, base = 40, 8, 1000.0
    out = sin_views.frequencies(n, d, base)
    wave = fig_of(out, "wavelength")
    expected = 2 * np.pi * base ** (np.arange(0, d, 2) / d)
    slow = expected > n
    np.testing.assert_allclose(y_of(wave, tr("en", "sinusoidal.wavelength.fast")), expected[~slow], rtol=1e-12)
    np.testing.assert_allclose(y_of(wave, tr("en", "sinusoidal.wavelength.slow")), expected[slow], rtol=1e-12)
    assert out.figure("wavelength").options == {"longest": f"{expected[-1]:,.0f}"}
    assert tr("en", "sinusoidal.wavelength.count", slow=int(slow.sum()), pairs=d // 2, n=n) in out.texts
    lines = fig_of(out, "base")["data"]
    bases = (100.0, 10_000.0, 1_000_000.0, base)
    names = [tr("en", "sinusoidal.base.line", base=f"{b:,.0f}") for b in bases[:3]]
    assert [line["name"] for line in lines] == [*names, tr("en", "sinusoidal.base.chosen", base="1,000")]
    for line, b in zip(lines, bases, strict=True):
        k = as_array(line["x"])
        assert k[0] == 1 and k[-1] == n - 1
        expected = np.cos(k[:, None] * sinusoid_omega(d, b)[None, :]).sum(axis=1) / (d / 2)  # (2/d) sum_i cos(k w_i)
        np.testing.assert_allclose(as_array(line["y"]), expected, atol=1e-12)
    assert len(sin_views.frequencies(n, d, 10_000.0).figure("base").fig.to_dict()["data"]) == 3


def test_pca_projection_is_the_top_two_components():
    n, d, base = 40, 8, 100.0
    out = sin_views.projection(n, d, base, "interleaved", "pca")
    points = fig_of(out, "proj")["data"][1]
    coords = np.c_[as_array(points["x"]), as_array(points["y"])]
    np.testing.assert_array_equal(as_array(points["marker"]["color"]), np.arange(n))
    centred = pe(np.arange(n), d, base) - pe(np.arange(n), d, base).mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    expected = u[:, :2] * s[:2]
    scale = np.abs(expected).max() / np.abs(coords).max()  # the core projects the table scaled to unit entries
    np.testing.assert_allclose(np.abs(coords) * scale, np.abs(expected), atol=1e-9)  # each axis up to its sign
    assert out.figure("proj").options == {"variant": "pca", "suffix": "pca", "chart": "projection"}
    many = sin_views.projection(3000, 8, base, "interleaved", "pca")
    np.testing.assert_array_equal(many.figure("proj").data["position"], spaced(3000, 2048))
    assert many.texts == [tr("en", "sinusoidal.subsampled", shown=2048, n=3000)]


def test_positions_past_the_training_length_are_the_formula():
    n, d, base, train = 40, 8, 10.0, 10
    out = sin_views.extrapolation(n, d, base, "interleaved", train)
    table = pe(np.arange(n), d, base)
    low, high = table[:train].min(axis=0), table[:train].max(axis=0)
    outside = np.maximum(low - table, table - high).clip(min=0)
    np.testing.assert_allclose(out.figure("extra").data["share_outside"], (outside > 0.01).mean(axis=1))
    np.testing.assert_allclose(as_array(fig_of(out, "excess")["data"][0]["y"]), outside[train:].max(axis=0))
    assert out.figure("extra").data["share_outside"][train:].max() > 0  # a slow pair leaves its range
    assert out.texts == []
    none = sin_views.extrapolation(n, d, base, "interleaved", n)
    assert none.texts == [tr("en", "sinusoidal.extra.none", train=n, n=n)]
    assert not none.figure("excess").data["excess"].any()


@pytest.mark.parametrize("d", [8, 11])
def test_layout_order_turns_the_interleaved_table_into_the_halves_one(d):
    out = sin_views.layout_order(d)
    order = as_array(fig_of(out, "layout")["data"][0]["y"]).astype(int)
    positions = np.arange(20)
    np.testing.assert_array_equal(pe(positions, d, 100.0, "interleaved")[:, order], pe(positions, d, 100.0, "halves"))
    head = ", ".join(str(i) for i in [*range(0, d, 2), *range(1, d, 2)][:8]) + (", …" if d > 8 else "")
    assert out.texts == [tr("en", "sinusoidal.layout.text", order=head, n_sin=(d + 1) // 2)]


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_precision_map_is_the_rounded_formula(dtype):
    span, d, base = 3000, 8, 100.0
    out = sin_views.precision_map(span, d, base, dtype)
    positions = np.arange(span)
    expected = pair_errors(positions, d, base, dtype)
    np.testing.assert_allclose(out.figure("precision.map").data, expected, atol=1e-12)
    assert out.figure("precision.map").options == {"suffix": dtype}
    odd = sin_views.precision_map(300, 7, base, dtype).figure("precision.map").data
    np.testing.assert_allclose(odd, pair_errors(np.arange(300), 7, base, dtype), atol=1e-12)


def test_precision_map_of_a_long_span_reads_evenly_spaced_positions():
    span, d, base = 10_000, 8, 100.0
    fig = fig_of(sin_views.precision_map(span, d, base, "float16"), "precision.map")
    assert fig["data"][0]["dy"] == pytest.approx((span - 1) / 4095)  # 4,096 rows over 0 .. span - 1
    assert fig["layout"]["meta"]["source_shape"] == [4096, d // 2]


def test_precision_lines_mark_the_merged_positions_and_say_where_each_format_breaks():
    span, d, base = 3000, 8, 100.0
    out = sin_views.precision_lines(span, d, base)
    fig = fig_of(out, "precision")
    positions = np.arange(span)
    worst = {dt: pair_errors(positions, d, base, dt).max(axis=1) for dt in ("float16", "float32")}
    for dt, line in worst.items():
        np.testing.assert_allclose(y_of(fig, dt), np.maximum(line, 1e-12), rtol=1e-12)
    marks = [shape["x0"] for shape in fig["layout"]["shapes"]]
    assert marks == [2**8 + 1, 2**11 + 1]  # bfloat16 keeps 7 mantissa bits, float16 10: 2^(m + 1) + 1
    assert out.figure("precision").options == {"span": "3,000", "float32": f"{worst['float32'].max():.1e}"}
    broken = int(positions[np.argmax(worst["float16"] >= 0.5)])
    assert worst["float16"].max() >= 0.5 and broken <= 2049  # broken by the first position float16 cannot hold
    (statements, *rest) = out.texts
    assert rest == []  # every position read
    line = tr("en", "sinusoidal.precision.broken", dtype="float16", position=f"{broken:,}", merged="2,049")
    assert f"- {line}" in statements.split("\n")
    fine = tr(
        "en",
        "sinusoidal.precision.fine",
        dtype="float32",
        span="3,000",
        error=f"{worst['float32'].max():.1e}",
        merged=f"{2**24 + 1:,}",
    )
    assert f"- {fine}" in statements.split("\n")
    long = sin_views.precision_lines(30_000, d, base)
    assert [shape["x0"] for shape in fig_of(long, "precision")["layout"]["shapes"]] == [257, 2049, 20_000]
    assert long.texts[-1] == tr("en", "sinusoidal.subsampled", shown=4096, n=30_000)


@pytest.mark.parametrize("d", [8, 7])
def test_norms_are_the_closed_form(d):
    n, base = 40, 100.0
    out = sin_views.norms(n, d, base, "interleaved")
    fig = fig_of(out, "norms")
    p = np.arange(n)
    squared = d // 2 + (d % 2) * np.sin(p * sinusoid_omega(d, base)[-1]) ** 2  # each pair adds sin^2 + cos^2 = 1
    np.testing.assert_allclose(y_of(fig, tr("en", "sinusoidal.norms.measured")), np.sqrt(squared), rtol=1e-12)
    np.testing.assert_allclose(y_of(fig, tr("en", "sinusoidal.norms.closed")), np.sqrt(squared), rtol=1e-12)
    assert [shape["y0"] for shape in fig["layout"]["shapes"]] == [pytest.approx(np.sqrt(d))]
    measured = f"{np.sqrt(squared[0]):.4g}"
    assert out.texts == [tr("en", "sinusoidal.norms.check", d=d, measured=measured, claim=f"{d**0.5:.4g}")]
