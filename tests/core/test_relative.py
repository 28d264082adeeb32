"""T5 relative buckets against ``T5Attention._relative_position_bucket``; Shaw et al. indices against loops.

Bucket ids are integers, so the comparison is exact: any difference, including the float32 rounding of the
log at bucket boundaries (which T5 checkpoints were trained with), is a failure.
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
REL = np.arange(-300, 301)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(
    "num_buckets,max_distance",
    [
        (32, 128),  # T5 / mT5 / Flan-T5
        (32, 256),
        (64, 128),
        (16, 64),
        (8, 32),
        (128, 300),
        (10, 20),
        (6, 5),
        (33, 128),  # odd bucket counts: // 2 truncation
        (48, 1000),
    ],
)
def test_t5_buckets_match_hf(bidirectional, num_buckets, max_distance):
    got = posviz.t5_relative_bucket(
        REL, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    want = oracle.t5_bucket(REL, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    assert got.shape == REL.shape
    assert np.issubdtype(got.dtype, np.integer)
    mismatch = np.flatnonzero(got != want)
    assert mismatch.size == 0, (
        f"relative positions {REL[mismatch][:10]} -> posviz {got[mismatch][:10]}, T5 {want[mismatch][:10]}"
    )


def test_t5_float32_log_boundary_case():
    """A bucket boundary where the log ratio in float64 lands just below an integer and T5's float32 just above
    it (found by a random search against the oracle): float64 maths gives 170 here, T5 gives 171."""
    rel = np.arange(-1700, -1685)
    kwargs = dict(bidirectional=False, num_buckets=197, max_distance=4667)
    want = oracle.t5_bucket(rel, **kwargs)
    assert want[rel == -1692][0] == 171
    n, max_exact = 1692, 197 // 2
    assert int(math.log(n / max_exact) / math.log(4667 / max_exact) * (197 - max_exact)) + max_exact == 170
    np.testing.assert_array_equal(posviz.t5_relative_bucket(rel, **kwargs), want)


def test_t5_defaults_are_bidirectional_32_128():
    np.testing.assert_array_equal(
        posviz.t5_relative_bucket(REL), oracle.t5_bucket(REL, bidirectional=True, num_buckets=32, max_distance=128)
    )


@FAST
@given(
    rel=st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=50),
    bidirectional=st.booleans(),
    num_buckets=st.integers(4, 256),
    extra_distance=st.integers(1, 5000),
)
def test_t5_buckets_match_hf_random(rel, bidirectional, num_buckets, extra_distance):
    per_side = num_buckets // 2 if bidirectional else num_buckets
    max_exact = per_side // 2
    max_distance = max_exact + extra_distance  # the log region needs max_distance > max_exact
    rel = np.array(rel)
    got = posviz.t5_relative_bucket(
        rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    want = oracle.t5_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    np.testing.assert_array_equal(got, want)


def test_t5_shapes_are_preserved():
    rel = np.arange(-6, 6).reshape(3, 4)
    got = posviz.t5_relative_bucket(rel)
    assert got.shape == (3, 4)
    np.testing.assert_array_equal(got, oracle.t5_bucket(rel, bidirectional=True, num_buckets=32, max_distance=128))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bucket_structure(bidirectional):
    b = 32 // 2 if bidirectional else 32
    max_exact = b // 2
    got = posviz.t5_relative_bucket(REL, bidirectional=bidirectional)
    # exact region: |n| < max_exact maps to itself (past side), offset by b on the future side if bidirectional
    past = -np.arange(max_exact)
    np.testing.assert_array_equal(posviz.t5_relative_bucket(past, bidirectional=bidirectional), np.arange(max_exact))
    # range and saturation at max_distance
    assert got.min() == 0 and got.max() == (2 * b - 1 if bidirectional else b - 1)
    assert np.all(posviz.t5_relative_bucket(np.arange(-1000, -127), bidirectional=bidirectional) == b - 1)
    if bidirectional:
        np.testing.assert_array_equal(posviz.t5_relative_bucket(np.arange(1, max_exact)), b + np.arange(1, max_exact))
    else:
        # causal: every key after the query shares bucket 0
        assert np.all(posviz.t5_relative_bucket(np.arange(0, 300), bidirectional=False) == 0)
    # monotone in distance on each side
    assert np.all(np.diff(posviz.t5_relative_bucket(-np.arange(300), bidirectional=bidirectional)) >= 0)


@pytest.mark.parametrize(
    "call,needle",
    [
        (lambda: posviz.t5_relative_bucket(np.arange(4), num_buckets=0), "num_buckets"),
        (lambda: posviz.t5_relative_bucket(np.arange(4), max_distance=0), "max_distance"),
        (lambda: posviz.t5_relative_bucket(np.array([0.5, 1.0])), "relative_position"),
    ],
)
def test_t5_bad_inputs(call, needle):
    with pytest.raises(ValueError) as info:
        call()
    assert needle in str(info.value)


# ------------------------------------------------------------------------------------------------ Shaw et al.


def shaw_loop(q_len, k_len, k):
    out = np.zeros((q_len, k_len), dtype=np.int64)
    for i in range(q_len):
        for j in range(k_len):
            out[i, j] = max(-k, min(k, j - i)) + k
    return out


@pytest.mark.parametrize("q_len,k_len,k", [(1, 1, 1), (5, 5, 2), (8, 3, 4), (3, 9, 1), (16, 16, 16), (12, 20, 30)])
def test_shaw_matches_loop(q_len, k_len, k):
    got = posviz.shaw_relative_index(q_len, k_len, k)
    assert np.issubdtype(got.dtype, np.integer)
    np.testing.assert_array_equal(got, shaw_loop(q_len, k_len, k))


@FAST
@given(q_len=st.integers(1, 40), k_len=st.integers(1, 40), k=st.integers(1, 50))
def test_shaw_matches_loop_random(q_len, k_len, k):
    got = posviz.shaw_relative_index(q_len, k_len, k)
    np.testing.assert_array_equal(got, shaw_loop(q_len, k_len, k))
    assert got.min() >= 0 and got.max() <= 2 * k
    # Toeplitz: constant along every diagonal, since it depends on j - i only
    if q_len > 1 and k_len > 1:
        np.testing.assert_array_equal(got[1:, 1:], got[:-1, :-1])


@pytest.mark.parametrize(
    "args,name,value",
    [
        ((0, 4, 2), "q_len", "0"),
        ((4, 0, 2), "k_len", "0"),
        ((4, 4, 0), "max_relative_position", "0"),
        ((4, 4, -3), "max_relative_position", "-3"),
    ],
)
def test_shaw_bad_inputs(args, name, value):
    with pytest.raises(ValueError) as info:
        posviz.shaw_relative_index(*args)
    assert name in str(info.value)
    assert value in str(info.value)


@pytest.mark.parametrize("q_len,k_len", [(1, 1), (5, 9), (40, 40), (9, 5)])
@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_bucket_matrix_matches_hf_on_key_minus_query(q_len, k_len, bidirectional):
    rel = np.arange(k_len)[None, :] - np.arange(q_len)[:, None]  # memory_position - context_position, as T5
    got = posviz.t5_bucket_matrix(q_len, k_len, bidirectional=bidirectional, num_buckets=16, max_distance=20)
    np.testing.assert_array_equal(
        got, oracle.t5_bucket(rel, bidirectional=bidirectional, num_buckets=16, max_distance=20)
    )
