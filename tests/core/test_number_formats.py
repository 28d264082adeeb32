"""Low-precision numbers are the same on every CPU, whatever the memory layout.

numpy's float16 sine rounds twice (through float32) and its SIMD kernels differ by CPU and by layout: on one
machine sin(300) in float16 was -0.9995 for a contiguous array and -1.0 for a strided one or a scalar, and a figure
and its table disagreed. ``posviz.number_formats`` is the one path every low-precision view takes. These tests feed
it (and the views built on it) the same numbers as a contiguous array, as a strided view and one scalar at a time,
require the same bits every time, and compare them with a reference that uses no float kernel at all: Python's
``math.sin`` in double precision, rounded once by exact rational arithmetic. A change that lets a CPU's kernel
back in fails here on any machine whose kernel rounds twice, and on any machine whose kernels differ by layout.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz
from posviz import number_formats
from posviz.lessons import claims, pitfalls, precision

from ._exact_rounding import midpoint_distance, round_exact

FORMATS = number_formats.FORMATS


def all_16_bit_values(fmt: str) -> np.ndarray:
    """Every finite number of a 16-bit format, as float64."""
    patterns = np.arange(1 << 16, dtype=np.uint32)
    with np.errstate(invalid="ignore"):
        if fmt == "float16":
            values = patterns.astype(np.uint16).view(np.float16).astype(np.float64)
        else:
            values = (patterns << np.uint32(16)).view(np.float32).astype(np.float64)
    return values[np.isfinite(values)]


def angles_for(fmt: str) -> np.ndarray:
    """Angles the format holds: every finite float16 / bfloat16 number up to 1e5 in size, and for float32 a spread of
    products p * omega like the precision tab's. 300 is in each: float32 rounds sin(300) to a float16 midpoint."""
    if fmt == "float32":
        rng = np.random.default_rng(0)
        angles = number_formats.multiply(rng.integers(0, 32768, 20_000), 10.0 ** rng.uniform(-6, 0, 20_000), fmt)
        return np.concatenate([[300.0, 0.0, -300.0], angles])
    values = all_16_bit_values(fmt)
    return values[np.abs(values) <= 1e5]


def reference(angles: np.ndarray, fmt: str, func) -> tuple[np.ndarray, np.ndarray]:
    """math's sine or cosine of each angle rounded once exactly, and a mask of the entries that are defined only to
    one step of the format (within four float64 units of a midpoint of the format)."""
    exact = [func(a) for a in angles.tolist()]
    rounded = np.array([round_exact(v, fmt) for v in exact])
    near_tie = np.array([midpoint_distance(v, fmt) < 4 for v in exact])
    return rounded, near_tie


@pytest.mark.parametrize("fmt", FORMATS)
def test_sin_cos_is_the_same_for_contiguous_strided_and_scalar_input(fmt):
    angles = angles_for(fmt)
    contiguous = number_formats.sin_cos(angles, fmt)
    spread = np.repeat(angles, 3)[1::3]  # the same numbers as a strided view
    assert not spread.flags.c_contiguous
    strided = number_formats.sin_cos(spread, fmt)
    sample = angles[:: max(1, angles.size // 3000)].tolist() + [300.0]
    scalars = [number_formats.sin_cos(a, fmt) for a in sample]
    for which in (0, 1):
        np.testing.assert_array_equal(contiguous[which], strided[which])
        by_scalar = np.array([float(s[which]) for s in scalars])
        np.testing.assert_array_equal(by_scalar, number_formats.sin_cos(np.array(sample), fmt)[which])


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_sin_cos_is_the_correctly_rounded_sine(fmt):
    """Every sine and cosine equals math's rounded once, except where the double-precision value sits within four
    float64 units of a midpoint of the format: there either neighbour is right (one step of the format), and such
    entries must be rare."""
    angles = angles_for(fmt)
    got_sin, got_cos = number_formats.sin_cos(angles, fmt)
    for got, func in ((got_sin, math.sin), (got_cos, math.cos)):
        expected, near_tie = reference(angles, fmt, func)
        np.testing.assert_array_equal(got[~near_tie], expected[~near_tie])
        step = np.array([number_formats.round_to(abs(v), fmt) for v in expected[near_tie]]) * 2.0**-10
        assert np.all(np.abs(got[near_tie] - expected[near_tie]) <= np.maximum(step, 2.0**-24))
        assert near_tie.sum() <= 3


def test_sin_of_300_in_float16_is_rounded_once():
    """The case that split CI: sin(300) = -0.99975517..., below the float16 midpoint -0.999755859375 in size, so it
    rounds to -0.99951171875; rounding float32's sine (which is that midpoint) again gives -1.0."""
    assert math.sin(300.0) > -0.999755859375
    assert float(np.float32(math.sin(300.0))) == -0.999755859375
    sin, _ = number_formats.sin_cos(300.0, "float16")
    assert float(sin) == -0.99951171875 == round_exact(math.sin(300.0), "float16")


@pytest.mark.parametrize("fmt", FORMATS)
@given(x=st.floats(-1e30, 1e30, allow_nan=False, allow_subnormal=False))
@settings(max_examples=400, deadline=None)
def test_round_to_rounds_once_to_nearest_even(fmt, x):
    if fmt == "float16" and abs(x) > 65504:
        return  # past float16's largest number: infinite, checked below
    assert float(number_formats.round_to(x, fmt)) == round_exact(x, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_to_at_midpoints_and_just_off_them(fmt):
    """Exactly halfway goes to the even neighbour; a float64 hair above or below goes to the nearer one (rounding
    through a wider format first would round the hair away and then land on the even neighbour)."""
    bits = {"float16": 11, "bfloat16": 8, "float32": 24}[fmt]
    for odd in (1, 3, 5, 2 ** (bits - 1) - 1):
        low = (2 ** (bits - 1) + odd) * 2.0**-bits  # a number of the format whose last bit is 1, in [0.5, 1)
        high = low + 2.0**-bits
        mid = (low + high) / 2
        assert float(number_formats.round_to(mid, fmt)) == high  # high is the even one
        assert float(number_formats.round_to(np.nextafter(mid, 0.0), fmt)) == low
        assert float(number_formats.round_to(np.nextafter(mid, 1.0), fmt)) == high
        assert float(number_formats.round_to(-mid, fmt)) == -high
    assert np.isinf(number_formats.round_to(70000.0, "float16"))
    assert np.isinf(number_formats.round_to(1e39, "bfloat16"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_multiply_is_the_exact_product_rounded_once(fmt):
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 32768, 500).astype(np.float64), 10.0 ** rng.uniform(-6, 0, 500)
    got = number_formats.multiply(a, b, fmt)
    expected = [round_exact(round_exact(x, fmt) * round_exact(y, fmt), fmt) for x, y in zip(a, b, strict=True)]
    np.testing.assert_array_equal(got, expected)


def test_bad_format():
    with pytest.raises(ValueError, match="float16, bfloat16, float32"):
        number_formats.round_to(1.0, "float8")


# ------------------------------------------------------- every view the app shows comes from the one path


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_table_is_the_one_path(dtype, layout):
    """The Sinusoidal table in float16 / float32 (written column by column through strided views of the table) holds
    exactly number_formats' sines of number_formats' angles."""
    n, d = 2500, 10
    table = posviz.sinusoidal(n, d, dtype=dtype, layout=layout)
    fmt = np.dtype(dtype).name
    angles = number_formats.multiply(np.arange(n)[:, None], posviz.sinusoidal_frequencies(d)[None, :], fmt)
    sin, cos = number_formats.sin_cos(angles, fmt)
    sin_cols, cos_cols = (
        (slice(0, None, 2), slice(1, None, 2)) if layout == "interleaved" else (slice(0, 5), slice(5, 10))
    )
    np.testing.assert_array_equal(table[:, sin_cols].astype(np.float64), sin)
    np.testing.assert_array_equal(table[:, cos_cols].astype(np.float64), cos)


@pytest.mark.parametrize("fmt", FORMATS)
def test_precision_views_agree_bit_for_bit(fmt):
    """The precision tab's error map (all formats at once), the single-format error and the error from a strided
    position list are the same numbers, and the Myth-or-fact breakdown position is read from them."""
    n, d = 4000, 16
    together = precision.pair_errors_by_dtype(n, d)[fmt]
    alone = precision.pair_errors(n, d, dtype=fmt)
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_array_equal(a, b)
    positions = together[0]
    omega = posviz.sinusoidal_frequencies(d)
    strided = np.repeat(positions.astype(np.float64), 2)[::2]
    sin, cos = precision._sin_cos_in(fmt, strided, omega)
    sin_c, cos_c = precision._sin_cos_in(fmt, positions.astype(np.float64).copy(), omega)
    np.testing.assert_array_equal(sin, sin_c)
    np.testing.assert_array_equal(cos, cos_c)


def test_myth_or_fact_and_pitfalls_read_the_same_numbers():
    """The float16 claim on Myth or fact reads its breakdown from the precision errors, and the Pitfalls page's
    rounded positions are number_formats' rounding of whole numbers."""
    evidence = claims.float_breakdown(d_model=64, span=8192)
    errors = precision.pair_errors_by_dtype(8192, 64)
    for fmt in FORMATS:
        positions, _, worst = errors[fmt]
        assert evidence.numbers[f"broken_{fmt}"] == precision.breakdown_position(positions, worst)
        np.testing.assert_array_equal(evidence.arrays[fmt], worst)
    assert evidence.numbers["broken_float16"] is not None and evidence.numbers["broken_float32"] is None
    for fmt in ("float16", "float32"):
        np.testing.assert_array_equal(
            pitfalls.rounded_positions(5000, fmt), number_formats.round_to(np.arange(5000), fmt)
        )
    positions, err16, err32 = pitfalls.position_rounding(32768)
    np.testing.assert_array_equal(err16, np.abs(number_formats.round_to(positions, "float16") - positions))
    np.testing.assert_array_equal(err32, np.abs(number_formats.round_to(positions, "float32") - positions))
