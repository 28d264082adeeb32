"""posviz.sinusoidal (and learned_init) against DistilBERT, RoFormer and a scalar-loop derivation.

Tolerances: the Hugging Face tables are computed in float64 and stored as float32, so each entry is off by at
most half a float32 ulp of a number in [-1, 1], i.e. <= 2^-24 ~ 6e-8. rtol = atol = 1e-6 leaves a margin of
~16x. Our own loop is float64 and the angles p / base^(2k/d) stay below ~1e4, where float64 sin/cos are
accurate to ~1e-12, so the loop comparison uses 1e-10.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)


# ------------------------------------------------------------------------------------------------ HF oracles


@pytest.mark.parametrize("n", [1, 2, 17, 128, 513])
@pytest.mark.parametrize("d", [1, 2, 3, 7, 8, 64, 65, 128])
def test_interleaved_matches_distilbert(n, d):
    expected = oracle.distilbert_sinusoidal(n, d)
    got = posviz.sinusoidal(n, d)
    assert got.shape == (n, d)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", [1, 3, 50, 256])
@pytest.mark.parametrize("d", [1, 2, 5, 16, 33, 96])
def test_halves_matches_roformer(n, d):
    expected = oracle.roformer_sinusoidal(n, d)
    got = posviz.sinusoidal(n, d, layout="halves")
    assert got.shape == (n, d)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_default_base_is_10000_and_layout_interleaved():
    np.testing.assert_array_equal(
        posviz.sinusoidal(40, 12), posviz.sinusoidal(40, 12, base=10000.0, layout="interleaved")
    )


# ------------------------------------------------------------------------------------------------ scalar loops


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
@pytest.mark.parametrize("base", [2.0, 100.0, 10000.0, 500000.0])
@pytest.mark.parametrize("n,d", [(1, 1), (9, 3), (33, 10), (64, 31), (100, 64)])
def test_matches_scalar_loop(layout, base, n, d):
    expected = oracle.sinusoidal_loop(n, d, base, layout)
    np.testing.assert_allclose(posviz.sinusoidal(n, d, base=base, layout=layout), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("d", [1, 3, 7, 65])
def test_odd_d_model_ends_on_a_sin_column(d):
    n = 20
    table = posviz.sinusoidal(n, d, base=10000.0)
    k = (d - 1) // 2  # the unpaired last frequency index
    expected_last = np.sin(np.arange(n) / 10000.0 ** (2 * k / d))
    np.testing.assert_allclose(table[:, -1], expected_last, rtol=1e-12, atol=1e-12)
    halves = posviz.sinusoidal(n, d, layout="halves")
    # halves: ceil(d/2) sin columns then floor(d/2) cos columns, the same numbers as interleaved, reordered
    order = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    np.testing.assert_array_equal(halves, table[:, order])


def test_position_zero_row():
    # sin(0) = 0 and cos(0) = 1, whatever the base and width
    row = posviz.sinusoidal(1, 9, base=37.0)[0]
    np.testing.assert_array_equal(row[0::2], 0.0)
    np.testing.assert_array_equal(row[1::2], 1.0)


def test_first_pair_is_sin_cos_of_p():
    # k = 0 has frequency 1 for every base: columns (0, 1) are (sin p, cos p)
    p = np.arange(300)
    table = posviz.sinusoidal(300, 6, base=123.0)
    np.testing.assert_allclose(table[:, 0], np.sin(p), atol=1e-12)
    np.testing.assert_allclose(table[:, 1], np.cos(p), atol=1e-12)


# ------------------------------------------------------------------------------------------------ properties


def shift_matrix_from_formula(d: int, k: float, base: float) -> np.ndarray:
    """M_k built from the angle-addition formulas, independently of posviz."""
    m = np.zeros((d, d))
    for i in range(d // 2):
        w = 1.0 / base ** (2 * i / d)
        c, s = math.cos(k * w), math.sin(k * w)
        # (sin(a+b), cos(a+b)) = (sin a cos b + cos a sin b, cos a cos b - sin a sin b)
        m[2 * i, 2 * i], m[2 * i, 2 * i + 1] = c, s
        m[2 * i + 1, 2 * i], m[2 * i + 1, 2 * i + 1] = -s, c
    return m


@FAST
@given(
    half_d=st.integers(1, 48),
    p=st.integers(0, 2000),
    k=st.integers(0, 2000),
    base=st.sampled_from([10.0, 10000.0, 1e6]),
)
def test_shift_is_a_rotation_depending_only_on_offset(half_d, p, k, base):
    d = 2 * half_d
    table = posviz.sinusoidal(p + k + 1, d, base=base)
    m_k = shift_matrix_from_formula(d, k, base)
    residual = np.max(np.abs(table[p + k] - m_k @ table[p]))
    assert residual < 1e-9
    # the same M_k maps every other row too: it depends on k only, not on p
    q = p // 2
    assert np.max(np.abs(table[q + k] - m_k @ table[q])) < 1e-9
    # and it is orthogonal (a rotation), so it preserves the norm
    np.testing.assert_allclose(m_k @ m_k.T, np.eye(d), atol=1e-12)


@pytest.mark.parametrize("d,k,base", [(2, 1, 10000.0), (16, 5, 10000.0), (64, 333, 500.0), (10, 0.5, 10000.0)])
def test_posviz_shift_matrix_matches_formula(d, k, base):
    np.testing.assert_allclose(posviz.shift_matrix(d, k, base=base), shift_matrix_from_formula(d, k, base), atol=1e-12)


@FAST
@given(half_d=st.integers(1, 256), n=st.integers(1, 300), base=st.floats(1.5, 1e6))
def test_row_norm_squared_is_half_d(half_d, n, base):
    d = 2 * half_d
    table = posviz.sinusoidal(n, d, base=base)
    np.testing.assert_allclose(np.sum(table**2, axis=1), d / 2, rtol=1e-12)


@FAST
@given(n=st.integers(1, 200), d=st.integers(1, 200), layout=st.sampled_from(["interleaved", "halves"]))
def test_values_bounded_and_finite(n, d, layout):
    table = posviz.sinusoidal(n, d, layout=layout)
    assert table.shape == (n, d)
    assert np.all(np.isfinite(table))
    assert np.all(np.abs(table) <= 1.0)


def test_prefix_consistency():
    # a longer table starts with the shorter one: position p's row does not depend on n_positions
    np.testing.assert_array_equal(posviz.sinusoidal(1000, 32)[:10], posviz.sinusoidal(10, 32))


def test_float32_dtype_respected_and_close():
    n, d = 200, 32
    t32 = posviz.sinusoidal(n, d, dtype=np.float32)
    t64 = posviz.sinusoidal(n, d)
    assert t32.dtype == np.float32
    # angles p * w are formed in float32: w and the product each carry a relative rounding error <= 2^-24, so the
    # angle is off by <= 2 * 2^-24 * p * w <= 2^-23 * p (w <= 1); sin/cos are 1-Lipschitz and their float32 result
    # adds <= 2^-24. Bound the error row by row (with a 4x margin).
    bound = 4 * ((np.arange(n) * 2.0**-23) + 2.0**-24)
    err = np.max(np.abs(t32.astype(np.float64) - t64), axis=1)
    assert np.all(err <= bound)


# ------------------------------------------------------------------------------------------------ learned_init


def test_learned_init_reproducible_by_seed():
    a = posviz.learned_init(64, 16, seed=3)
    b = posviz.learned_init(64, 16, seed=3)
    c = posviz.learned_init(64, 16, seed=4)
    assert a.shape == (64, 16)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


@pytest.mark.parametrize("std", [0.02, 1.0])
def test_learned_init_moments(std):
    n, d = 400, 100
    table = posviz.learned_init(n, d, std=std, seed=0)
    count = n * d
    # mean of N(0, std^2) over `count` draws has standard error std / sqrt(count); the sample std has standard
    # error ~ std / sqrt(2 count). Allow 5 standard errors (a false alarm has probability < 1e-6 per check).
    assert abs(table.mean()) < 5 * std / math.sqrt(count)
    assert abs(table.std() - std) < 5 * std / math.sqrt(2 * count)


def test_learned_init_default_std_is_bert_0_02():
    np.testing.assert_allclose(posviz.learned_init(30, 7), posviz.learned_init(30, 7, std=0.02, seed=0))
    t = posviz.learned_init(500, 100)
    assert abs(t.std() - 0.02) < 5 * 0.02 / math.sqrt(2 * t.size)


# ------------------------------------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "kwargs,name,value",
    [
        ({"n_positions": 0, "d_model": 8}, "n_positions", "0"),
        ({"n_positions": -3, "d_model": 8}, "n_positions", "-3"),
        ({"n_positions": 8, "d_model": 0}, "d_model", "0"),
        ({"n_positions": 8, "d_model": -1}, "d_model", "-1"),
        ({"n_positions": 2.5, "d_model": 8}, "n_positions", "2.5"),
        ({"n_positions": 8, "d_model": 8, "layout": "diagonal"}, "layout", "diagonal"),
        ({"n_positions": 8, "d_model": 8, "base": 0.0}, "base", "0"),
        ({"n_positions": 8, "d_model": 8, "base": -5.0}, "base", "-5"),
        ({"n_positions": 8, "d_model": 8, "base": float("nan")}, "base", "nan"),
        ({"n_positions": 8, "d_model": 8, "base": 1.0}, "base", "1"),  # base 1: every frequency would be 1
        ({"n_positions": 32_769, "d_model": 1}, "n_positions", "32,769"),  # past posviz's table-size limit
        ({"n_positions": 1, "d_model": 4_097}, "d_model", "4,097"),
        ({"n_positions": 8, "d_model": 8, "dtype": np.int32}, "dtype", "int32"),
    ],
)
def test_sinusoidal_bad_input_raises_value_error_naming_it(kwargs, name, value):
    with pytest.raises(ValueError) as info:
        posviz.sinusoidal(**kwargs)
    message = str(info.value)
    assert name in message
    assert value in message


@pytest.mark.parametrize(
    "kwargs,name,value",
    [
        ({"n_positions": 0, "d_model": 8}, "n_positions", "0"),
        ({"n_positions": 8, "d_model": 0}, "d_model", "0"),
        ({"n_positions": 8, "d_model": 8, "std": -0.02}, "std", "-0.02"),
        ({"n_positions": 8, "d_model": 8, "std": 0.0}, "std", "0"),
    ],
)
def test_learned_init_bad_input_raises_value_error_naming_it(kwargs, name, value):
    with pytest.raises(ValueError) as info:
        posviz.learned_init(**kwargs)
    assert name in str(info.value)
    assert value in str(info.value)


@pytest.mark.parametrize("seed", [-1, True, 1.5, "3"])
def test_learned_init_bad_seed(seed):
    with pytest.raises(ValueError) as info:
        posviz.learned_init(4, 4, seed=seed)
    assert "seed" in str(info.value)


# ------------------------------------------------------------------------------------------------ sin_init / lookup


@pytest.mark.parametrize("scale,base", [(1.0, 10000.0), (0.1, 10000.0), (2.5, 100.0)])
def test_sin_init_is_scaled_sinusoidal(scale, base):
    got = posviz.sin_init(30, 12, base=base, scale=scale)
    np.testing.assert_allclose(got, scale * oracle.sinusoidal_loop(30, 12, base, "interleaved"), atol=1e-12)


def test_lookup_rows_and_out_of_range():
    table = posviz.learned_init(10, 4, seed=1)
    np.testing.assert_array_equal(posviz.lookup(table, [0, 9, 3]), table[[0, 9, 3]])
    np.testing.assert_array_equal(posviz.lookup(table, np.array([[1, 2], [3, 4]])), table[[[1, 2], [3, 4]]])
    # like torch.nn.Embedding, a position past the table is an index error, and the message says which and why
    for bad in ([10], [3, 11], [-1]):
        with pytest.raises(IndexError) as info:
            posviz.lookup(table, bad)
        assert str([b for b in bad if b < 0 or b >= 10][0]) in str(info.value)
        assert "10" in str(info.value)


@pytest.mark.parametrize("layout", ["interleaved", "halves"])
def test_a_table_filled_in_parallel_blocks_is_the_formula_bit_for_bit(layout, monkeypatch):
    """A table of more than one block of rows is filled by several threads; every cell is the one np.sin / np.cos
    of p * omega_k gives, whatever the number of threads."""
    from posviz import _parallel
    from posviz.encodings import sinusoidal as module

    n, d = 3 * (module._CHUNK_CELLS // 1030) + 17, 1030  # four blocks, the last one short
    table = posviz.sinusoidal(n, d, layout=layout)
    angles = np.arange(n, dtype=np.float64)[:, None] * posviz.sinusoidal_frequencies(d)[None, :]
    sin_cols = slice(0, d, 2) if layout == "interleaved" else slice(0, d // 2)
    cos_cols = slice(1, d, 2) if layout == "interleaved" else slice(d // 2, d)
    np.testing.assert_array_equal(table[:, sin_cols], np.sin(angles))
    np.testing.assert_array_equal(table[:, cos_cols], np.cos(angles))
    monkeypatch.setattr(_parallel.os, "cpu_count", lambda: 1)
    np.testing.assert_array_equal(posviz.sinusoidal(n, d, layout=layout), table)
