"""The Sinusoidal page's lessons, checked against independent derivations.

Precision: the float16, bfloat16 and float32 errors are re-derived entry by entry from scalars: Python's math.sin
of the angle, each number rounded to the format by exact rational arithmetic (``_exact_rounding``), against
math.sin in double precision. Distance: a Toeplitz check by explicit loops, and a
random table as the negative case. Shifts: the residual against the full matrix product M_k @ PE(p).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz
from posviz import analysis
from posviz.encodings import sinusoidal as sin
from posviz.lessons import precision
from posviz.lessons import sinusoidal as sinlesson

from ._exact_rounding import midpoint_distance, round_exact

FAST = settings(max_examples=30, deadline=None)


# ------------------------------------------------------------------------------------------------ precision


def bfloat16(x) -> np.ndarray:
    """Round float64 values to bfloat16 (nearest, ties to even) by exact rational arithmetic."""
    return np.vectorize(lambda v: round_exact(float(v), "bfloat16"), otypes=[float])(np.asarray(x, dtype=np.float64))


def low_precision_error(p: int, w: float, fmt: str, with_cos: bool) -> tuple[float, bool]:
    """The error of pair (p, w) in ``fmt`` from scalars: p and w rounded to the format, their product rounded
    (exactly, by Fractions), math.sin / math.cos of it rounded once, against math.sin(p w) in double precision.
    Also whether the result is defined only to one step of the format (a sine within a few float64 units of a point
    halfway between two numbers of the format, where float64's own last bit decides)."""
    angle = round_exact(round_exact(float(p), fmt) * round_exact(w, fmt), fmt)
    exact = p * w
    e_sin = abs(round_exact(math.sin(angle), fmt) - math.sin(exact))
    e_cos = abs(round_exact(math.cos(angle), fmt) - math.cos(exact)) if with_cos else 0.0
    tie = midpoint_distance(math.sin(angle), fmt) < 4 or (with_cos and midpoint_distance(math.cos(angle), fmt) < 4)
    return max(e_sin, e_cos), tie


@pytest.mark.parametrize("fmt", precision.DTYPES)
@pytest.mark.parametrize("n,d,base", [(3000, 16, 10000.0), (20000, 10, 100.0), (700, 7, 1e6)])
def test_low_precision_error_matches_scalar_arithmetic(fmt, n, d, base):
    """Entry by entry, the error equals the one computed from scalars with Python's math and exact rounding (700
    positions include 300, whose float16 sine numpy gets wrong: sin(300) in float32 lands exactly halfway between two
    float16 numbers). The float64 parts may differ by a unit of float64 between libraries, hence 1e-15; an entry
    that is defined only to one step of the format may differ by that step, and the test says how many there are."""
    positions, error, worst = precision.pair_errors(n, d, base=base, dtype=fmt, max_positions=700)
    omega = [base ** (-2 * k / d) for k in range((d + 1) // 2)]
    step = 2.0 ** -precision.MANTISSA_BITS[fmt]
    ties = 0
    for row, p in enumerate(positions.tolist()):
        for k, w in enumerate(omega):
            expected, tie = low_precision_error(p, w, fmt, 2 * k + 1 < d)
            ties += tie
            assert error[row, k] == pytest.approx(expected, abs=step if tie else 1e-15)
    assert ties <= 2, f"{ties} entries are defined only to one step of {fmt}"
    np.testing.assert_array_equal(worst, error.max(axis=1))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_errors_equal_the_low_precision_table(dtype):
    """The per-pair error is the table posviz.sinusoidal(dtype=...) minus the float64 table, pair by pair: the table
    and the error panel come from the same numbers."""
    positions, error, _ = precision.pair_errors(2500, 12, dtype=np.dtype(dtype).name)
    diff = np.abs(posviz.sinusoidal(2500, 12, dtype=dtype).astype(np.float64) - posviz.sinusoidal(2500, 12))
    np.testing.assert_allclose(error, np.maximum(diff[:, 0::2], diff[:, 1::2])[positions], rtol=0, atol=1e-15)


def test_float32_error_is_bounded_by_angle_rounding():
    """|error| <= |d angle| + rounding of sin, with |d angle| <= (2 * 2^-24) * p * omega + half an ulp of p."""
    positions, error, _ = precision.pair_errors(32768, 64, dtype="float32")
    omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    bound = 2.0 * 2.0**-24 * positions[:, None] * omega[None, :] + 2.0**-23
    assert np.all(error <= bound + 1e-7)
    assert error.max() < 1e-2


@pytest.mark.parametrize("dtype,bits", [("float16", 10), ("bfloat16", 7), ("float32", 23)])
def test_first_merged_position(dtype, bits):
    p = precision.first_merged_position(dtype)
    assert p == 2 ** (bits + 1) + 1
    if dtype == "float16":
        assert float(np.float16(p)) == p - 1 and float(np.float16(p - 1)) == p - 1
        assert all(float(np.float16(q)) == q for q in range(p - 1))
    if dtype == "bfloat16":
        assert bfloat16(np.array([p]))[0] == p - 1
        np.testing.assert_array_equal(bfloat16(np.arange(p - 1.0)), np.arange(p - 1.0))


@given(st.integers(1, 65000))
@FAST
def test_float16_spacing_is_numpys(p):
    assert precision.position_spacing([p], "float16")[0] == float(np.spacing(np.float16(p)))


def test_float16_breaks_down_before_2048_and_float32_never():
    """The claim "past position 2e4 the low dimensions jump": float16 already loses whole radians past ~1,024
    (the product p * omega has spacing 1 there), bfloat16 past ~128; float32 stays below 1e-2 up to 32,768."""
    found = {}
    for dtype in precision.DTYPES:
        positions, _, worst = precision.pair_errors(32768, 512, dtype=dtype)
        found[dtype] = precision.breakdown_position(positions, worst)
    assert 1024 <= found["float16"] <= 2049
    assert 128 <= found["bfloat16"] <= 257
    assert found["float32"] is None


def test_breakdown_position_and_bad_input():
    assert precision.breakdown_position([0, 5, 9], [0.1, 0.7, 0.2]) == 5
    assert precision.breakdown_position([0, 5], [0.1, 0.2]) is None
    with pytest.raises(ValueError, match="dtype"):
        precision.pair_errors(10, 4, dtype="float8")
    with pytest.raises(ValueError, match="positions >= 1"):
        precision.position_spacing([0], "float16")


# ------------------------------------------------------------------------------------------------ distance


def loop_spread(matrix):
    n = matrix.shape[0]
    return np.array([np.ptp([matrix[i, i + k] for i in range(n - k)]) for k in range(n)])


def test_diagonal_spread_matches_a_loop():
    rng = np.random.default_rng(1)
    m = rng.normal(size=(23, 23))
    np.testing.assert_allclose(analysis.diagonal_spread(m), loop_spread(m), rtol=0, atol=0)


@pytest.mark.parametrize("n,d,limit", [(200, 64, 1024), (3000, 32, 256), (64, 7, 64)])
def test_sinusoidal_spread_is_rounding_noise(n, d, limit):
    offsets, dot_spread, cos_spread = analysis.lag_spread(posviz.sinusoidal(n, d), limit)
    stride = -(-n // limit)
    rows = len(range(0, n, stride))
    np.testing.assert_array_equal(offsets, np.arange(1, rows - 1) * stride)
    if d % 2 == 0:
        assert dot_spread.max() < 1e-10 and cos_spread.max() < 1e-12
    else:  # the unpaired sin column adds sin(i w) sin(j w), which is not a function of i - j
        table = posviz.sinusoidal(n, d)[::stride]
        np.testing.assert_allclose(dot_spread, loop_spread(table @ table.T)[1:-1], atol=1e-12)
        assert dot_spread.max() > 1e-4


def test_random_table_spread_is_large():
    _, dot_spread, cos_spread = analysis.lag_spread(posviz.learned_init(200, 64, std=0.02, seed=0))
    assert np.median(cos_spread[:100]) > 0.3
    assert np.median(dot_spread[:100]) > 1e-3


def test_strided_profile_equals_offset_profile_and_closed_form():
    n, d = 5000, 16
    offsets, dot, cosine = analysis.strided_offset_profile(posviz.sinusoidal(n, d), max_positions=1000)
    assert offsets[1] == 5
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    expected_dot = np.cos(offsets[:, None] * omega[None, :]).sum(axis=1)  # PE(i).PE(i+k) = sum cos(k w)
    np.testing.assert_allclose(dot, expected_dot, atol=1e-9)
    np.testing.assert_allclose(cosine, expected_dot / (d / 2), atol=1e-9)
    small = posviz.sinusoidal(300, 8)
    profile = posviz.offset_profile(small)
    np.testing.assert_array_equal(analysis.strided_offset_profile(small)[1], profile.mean_dot)


# ------------------------------------------------------------------------------------------------ shifts


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("k", [1, 7, 100])
def test_shift_residual_is_tiny_and_equals_the_matrix_product(layout, k):
    n, d = 400, 32
    table = posviz.sinusoidal(n, d, layout=layout)
    m = posviz.shift_matrix(d, k, layout=layout)
    direct = np.linalg.norm(table[k:] - table[:-k] @ m.T, axis=1).max()
    residual = sinlesson.shift_residual(table, k, layout=layout, chunk=97)
    assert residual < 1e-12
    assert residual == pytest.approx(direct, abs=1e-13)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_shift_residual_of_another_table_is_large(layout):
    table = posviz.learned_init(100, 16, std=1.0)
    m = posviz.shift_matrix(16, 3, layout=layout)
    residual = sinlesson.shift_residual(table, 3, layout=layout, chunk=9)
    assert residual == pytest.approx(np.linalg.norm(table[3:] - table[:-3] @ m.T, axis=1).max(), rel=1e-12)
    assert residual > 1.0


def test_shift_matrix_is_block_diagonal_and_independent_of_position():
    m = posviz.shift_matrix(12, 5)
    blocks = np.kron(np.eye(6), np.ones((2, 2)))
    assert np.all(m[blocks == 0] == 0)
    halves = posviz.shift_matrix(12, 5, layout="halves")
    order = sin.layout_permutation(12)
    np.testing.assert_array_equal(halves, m[np.ix_(order, order)])
    np.testing.assert_array_equal(posviz.shift_matrix(12, 5), posviz.shift_matrix(12, 5, layout="interleaved"))


def test_shift_errors():
    with pytest.raises(ValueError, match="even; got 7"):
        posviz.shift_matrix(7, 1)
    with pytest.raises(ValueError, match="k = 10"):
        sinlesson.shift_residual(posviz.sinusoidal(10, 4), 10)


# ------------------------------------------------------------------------------------------------ frequencies


@given(st.integers(1, 4096), st.floats(2.0, 1e7))
@FAST
def test_wavelength_formula(d, base):
    wavelength = sin.sinusoidal_wavelengths(d, base=base)
    expected = [2 * math.pi * base ** (2 * k / d) for k in range((d + 1) // 2)]
    np.testing.assert_allclose(wavelength, expected, rtol=1e-12)
    assert wavelength[0] == pytest.approx(2 * math.pi) and wavelength[-1] < 2 * math.pi * base


def test_slow_pairs_do_not_complete_a_turn():
    d, n = 128, 1000
    slow = sinlesson.slow_pairs(d, n)
    k = np.arange(64)
    np.testing.assert_array_equal(slow, 2 * np.pi * 10000.0 ** (2 * k / d) > n)
    # a slow pair's angle stays below one turn over the context
    table = posviz.sinusoidal(n, d)
    angle_span = (n - 1) * 10000.0 ** (-2 * k / d)
    assert np.all(angle_span[slow] < 2 * np.pi)
    assert table.shape == (n, d)


def test_origin_similarity_is_cosine_of_rows():
    n, d = 500, 10
    bases = (100.0, 10000.0)
    offsets, similarity = sinlesson.origin_similarity(n, d, bases, max_points=50)
    assert offsets[0] == 1 and offsets[-1] == n - 1 and np.all(np.diff(offsets) > 0)
    for row, base in enumerate(bases):
        table = posviz.sinusoidal(n, d, base=base)
        expected = table[offsets] @ table[0] / (np.linalg.norm(table[offsets], axis=1) * np.linalg.norm(table[0]))
        np.testing.assert_allclose(similarity[row], expected, atol=1e-12)
    odd_offsets, odd = sinlesson.origin_similarity(50, 7, (10000.0,))
    table = posviz.sinusoidal(50, 7)
    np.testing.assert_allclose(odd[0], posviz.cosine_similarity_matrix(table)[0, odd_offsets], atol=1e-12)


# ------------------------------------------------------------------------------- extrapolation, layouts, norms


def test_beyond_training_by_hand():
    table = np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 3.0], [-2.0, 1.005]])
    share, excess = analysis.beyond_training(table, 2)
    np.testing.assert_array_equal(share, [0.0, 0.0, 0.5, 0.5])
    np.testing.assert_allclose(excess, [2.0, 2.0])
    assert not analysis.beyond_training(table, 4)[1].any()


@pytest.mark.parametrize(("train", "chunk"), [(1, 4), (5, 3), (6, 3), (29, 7), (30, 64)])
def test_beyond_training_in_chunks_equals_one_pass(train, chunk):
    table = np.random.default_rng(2).normal(size=(30, 5))
    low, high = table[:train].min(axis=0), table[:train].max(axis=0)
    outside = np.maximum(low - table, table - high).clip(min=0.0)  # the whole table at once
    share, excess = analysis.beyond_training(table, train, chunk=chunk)
    np.testing.assert_array_equal(share, (outside > 0.01).mean(axis=1))
    np.testing.assert_array_equal(excess, outside[train:].max(axis=0) if train < 30 else np.zeros(5))


def test_beyond_training_fast_pairs_stay_familiar():
    share, excess = analysis.beyond_training(posviz.sinusoidal(2000, 64), 500)
    assert not share[:500].any() and share[500:].max() > 0
    assert excess[:4].max() < 0.01  # pairs 0, 1 turn many times within 500 positions
    assert excess[20:40].max() > 0.5


def test_layout_permutation():
    order = sin.layout_permutation(7)
    np.testing.assert_array_equal(order, [0, 2, 4, 6, 1, 3, 5])
    table = posviz.sinusoidal(30, 9)
    np.testing.assert_array_equal(table[:, sin.layout_permutation(9)], posviz.sinusoidal(30, 9, layout="halves"))


@pytest.mark.parametrize("d", [2, 7, 512, 513])
def test_row_norms_closed_form(d):
    n = 300
    measured = posviz.row_norms(posviz.sinusoidal(n, d))
    closed = sinlesson.sinusoidal_row_norm(n, d)
    np.testing.assert_allclose(closed, measured, rtol=1e-12)
    if d % 2 == 0:
        np.testing.assert_allclose(measured, math.sqrt(d / 2), rtol=1e-12)
    if d == 512:
        assert measured[17] == pytest.approx(16.0) and abs(measured[17] - math.sqrt(512)) > 6


def test_projection_subsamples_evenly():
    positions, coords = analysis.project_positions(posviz.sinusoidal(5000, 8), "pca", max_positions=100)
    np.testing.assert_array_equal(positions, posviz.evenly_spaced(5000, 100))
    np.testing.assert_allclose(coords, posviz.project(posviz.sinusoidal(5000, 8)[positions], "pca"))


# ---------------------------------------------------------------------- the largest sizes: never build the table

LAYOUT = st.sampled_from(sin.LAYOUTS)
BASE = st.sampled_from([100.0, 10_000.0, 1_000_000.0])


@FAST
@given(st.integers(1, 300), st.integers(1, 40), BASE, LAYOUT, st.data())
def test_rows_at_positions_are_the_tables_rows_bit_for_bit(n, d, base, layout, data):
    positions = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=50)), dtype=np.int64)
    rows = sin.sinusoidal_rows(positions, d, base=base, layout=layout)
    assert rows.shape == (positions.size, d)
    np.testing.assert_array_equal(rows, posviz.sinusoidal(n, d, base=base, layout=layout)[positions])


def test_rows_at_positions_reject_what_is_not_a_position():
    for bad in (np.array([-1]), np.array([0.5]), np.zeros((2, 2), dtype=np.int64)):
        with pytest.raises(ValueError, match="whole numbers"):
            sin.sinusoidal_rows(bad, 8)


@FAST
@given(st.integers(1, 80), st.integers(1, 30), st.integers(1, 400), BASE)
def test_dirichlet_sum_equals_the_direct_sum(a, length, w_inverse, base):
    w = 1.0 / w_inverse
    b = a + length - 1
    p = np.arange(a, b + 1)
    kernel = math.sin(length * w / 2) / math.sin(w / 2)
    assert math.sin((a + b) * w / 2) * kernel == pytest.approx(np.sin(p * w).sum(), abs=1e-11)
    assert math.cos((a + b) * w / 2) * kernel == pytest.approx(np.cos(p * w).sum(), abs=1e-11)


@FAST
@given(st.integers(1, 3000), st.integers(1, 70), st.integers(1, 64), BASE, LAYOUT)
def test_closed_form_block_means_equal_the_block_means_of_the_table(n, d, side, base, layout):
    from posviz.figures import block_mean

    means = sinlesson.sinusoidal_block_means(n, d, base=base, layout=layout, max_side=side)
    expected = block_mean(posviz.sinusoidal(n, d, base=base, layout=layout), side)
    assert means.shape == expected.shape
    np.testing.assert_allclose(means, expected, rtol=0, atol=1e-12 * max(n, 1))


def test_block_edges_follow_block_mean():
    from posviz.base.sampling import block_edges

    np.testing.assert_array_equal(block_edges(5, 8), np.arange(6))
    np.testing.assert_array_equal(block_edges(10, 4), [0, 2, 5, 7, 10])  # linspace(0, 10, 5) rounded down


@pytest.mark.parametrize(("n", "d", "layout"), [(3000, 8, "interleaved"), (9000, 6, "halves"), (50, 7, "halves")])
def test_sampled_views_equal_the_views_of_the_built_table(n, d, layout):
    table = posviz.sinusoidal(n, d, layout=layout)
    offsets, dot, cosine = sinlesson.sinusoidal_offset_profile(n, d, layout=layout)  # closed form for an even d
    want_offsets, want_dot, want_cosine = analysis.strided_offset_profile(table)
    np.testing.assert_array_equal(offsets, want_offsets)
    np.testing.assert_allclose(dot, want_dot, rtol=0, atol=1e-12 * d)
    np.testing.assert_allclose(cosine, want_cosine, rtol=0, atol=1e-12)
    for got, want in (
        (sinlesson.sinusoidal_lag_spread(n, d, layout=layout), analysis.lag_spread(table)),
        (
            sinlesson.sinusoidal_projection(n, d, "pca", 2048, layout=layout),
            analysis.project_positions(table, "pca", 2048),
        ),
    ):
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    positions, similarity = sinlesson.sinusoidal_similarity(n, d, 1024, layout=layout)
    np.testing.assert_array_equal(positions, posviz.evenly_spaced(n, 1024))
    built = posviz.cosine_similarity_matrix(table[positions])
    if d % 2:  # computed from the rows, as the built table's
        np.testing.assert_array_equal(similarity, built)
    else:  # the closed form sum_k cos(lag w_k) / (d/2): the same numbers up to rounding
        np.testing.assert_allclose(similarity, built, rtol=0, atol=1e-13)
    positions, norms = sinlesson.sinusoidal_row_norms(n, d, layout=layout, max_positions=1000)
    np.testing.assert_array_equal(norms, posviz.row_norms(table)[positions])


@pytest.mark.parametrize("layout", sin.LAYOUTS)
@pytest.mark.parametrize("k", [1, 7, 299])
def test_sampled_shift_residual(layout, k):
    n, d = 300, 16
    table = posviz.sinusoidal(n, d, layout=layout)
    assert sinlesson.sampled_shift_residual(n, d, k, layout=layout) == (
        sinlesson.shift_residual(table, k, layout=layout),
        n - k,
    )
    residual, used = sinlesson.sampled_shift_residual(n, d, k, layout=layout, max_positions=40)
    positions = posviz.evenly_spaced(n - k, 40)
    matrix = posviz.shift_matrix(d, k, layout=layout)
    misses = [np.linalg.norm(table[p + k] - matrix @ table[p]) for p in positions]  # the full product, row by row
    assert used == positions.size
    assert residual == pytest.approx(max(misses), abs=1e-14)
    with pytest.raises(ValueError, match="d_model must be even"):
        sinlesson.sampled_shift_residual(n, 7, k)
    with pytest.raises(ValueError, match="needs more than"):
        sinlesson.sampled_shift_residual(n, d, n)


@FAST
@given(st.integers(2, 400), st.integers(1, 12), st.integers(1, 500), st.integers(1, 60), st.integers(1, 50), LAYOUT)
def test_sampled_beyond_training(n, d, train, limit, chunk, layout):
    table = posviz.sinusoidal(n, d, layout=layout)
    positions, share, excess = sinlesson.sinusoidal_beyond_training(
        n, d, train, layout=layout, max_positions=limit, chunk=chunk
    )
    np.testing.assert_array_equal(positions, posviz.evenly_spaced(n, limit))
    full_share, full_excess = analysis.beyond_training(table, train)
    np.testing.assert_array_equal(share, full_share[positions])  # the training range is exact
    low, high = table[:train].min(axis=0), table[:train].max(axis=0)
    later = table[positions[positions >= train]]
    expected = np.maximum(low - later, later - high).clip(min=0.0).max(axis=0) if later.size else np.zeros(d)
    np.testing.assert_array_equal(excess, expected)
    if limit >= n:
        np.testing.assert_array_equal(excess, full_excess)


@pytest.mark.parametrize("n,d,base", [(8150, 32, 10000.0), (700, 10, 100.0), (40, 6, 1e6)])
def test_similarity_of_an_even_table_is_the_sum_of_cosines_of_the_lag(n, d, base):
    """For an even d the similarity of positions p and q is sum_k cos((p - q) w_k) / (d/2), entry by entry with
    Python's math (a few rows, every column)."""
    positions, similarity = sinlesson.sinusoidal_similarity(n, d, 1024, base=base)
    omega = [base ** (-2 * k / d) for k in range(d // 2)]
    for i in (0, 1, len(positions) // 2, len(positions) - 1):
        expected = [
            sum(math.cos((int(positions[i]) - int(q)) * w) for w in omega) / (d // 2) for q in positions.tolist()
        ]
        np.testing.assert_allclose(similarity[i], expected, rtol=0, atol=1e-12)
