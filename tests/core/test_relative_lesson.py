"""The relative-position lesson's core: how many Shaw embeddings a sequence uses, T5's exact region, bucket
sizes and the buckets no relative position reaches (found by enumeration with transformers' T5 bucket function
and by the derivation in the docstring), and a bias table read at bucket(j - i)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import posviz
from posviz.encodings import relative

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)
T5_SETTINGS = [(32, 128), (32, 256), (64, 128), (16, 64), (8, 32), (128, 1024), (64, 40), (12, 40)]


@FAST
@given(length=st.integers(1, 120), k=st.integers(1, 80))
def test_distinct_shaw_embeddings_equal_enumeration(length, k):
    used = np.unique(posviz.shaw_relative_index(length, length, k)).size
    assert relative.shaw_distinct_count([length], k)[0] == used
    assert used <= 2 * k + 1


def test_distinct_shaw_embeddings_saturate_at_k_plus_one():
    counts = relative.shaw_distinct_count(list(range(1, 30)), 8)
    np.testing.assert_array_equal(counts[:9], 2 * np.arange(9) + 1)  # L = 1 .. 9 adds two offsets per step
    assert (counts[8:] == 17).all()


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), T5_SETTINGS)
def test_bucket_sizes_count_every_relative_position(num_buckets, max_distance, bidirectional):
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    sizes = relative.t5_bucket_sizes(**kw)
    rel = np.arange(-max_distance, max_distance + 1)
    reference = oracle.t5_bucket(rel, **kw)
    assert sizes.shape == (num_buckets,)
    assert sizes.sum() == rel.size == 2 * max_distance + 1
    np.testing.assert_array_equal(sizes, [(reference == b).sum() for b in range(num_buckets)])


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), T5_SETTINGS)
def test_enumerating_far_past_max_distance_reaches_no_new_bucket(num_buckets, max_distance, bidirectional):
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    wide = np.arange(-8 * max_distance, 8 * max_distance + 1)
    never = sorted(set(range(num_buckets)) - set(oracle.t5_bucket(wide, **kw).tolist()))
    np.testing.assert_array_equal(relative.t5_unused_buckets(**kw), never)


def log_steps_skip(num_buckets: int, max_distance: int, bidirectional: bool) -> bool:
    """Does one step of distance climb more than one bucket at the start of the log region? The slope of
    E + ln(n/E)/ln(D/E) (B - E) at n = E is (B - E) / (E ln(D/E)), and it only decreases after that."""
    side = num_buckets // 2 if bidirectional else num_buckets
    exact = side // 2
    return (side - exact) / (exact * math.log(max_distance / exact)) > 1


@FAST
@given(half=st.integers(2, 64), max_distance=st.integers(2, 2000), bidirectional=st.booleans())
def test_unused_bucket_is_num_buckets_over_two_in_bidirectional_mode(half, max_distance, bidirectional):
    num_buckets = 2 * half
    side = half if bidirectional else num_buckets
    assume(max_distance > side // 2 and not log_steps_skip(num_buckets, max_distance, bidirectional))
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    expected = [num_buckets // 2] if bidirectional else []  # "after the query, distance 0" cannot happen
    np.testing.assert_array_equal(relative.t5_unused_buckets(**kw), expected)


def test_steep_log_region_skips_buckets_as_the_docstring_says():
    kw = dict(bidirectional=True, num_buckets=64, max_distance=20)
    assert log_steps_skip(64, 20, True)
    unused = relative.t5_unused_buckets(**kw)
    assert 32 in unused and len(unused) > 1
    assert not set(unused.tolist()) & set(range(16))  # the exact region is never skipped


@pytest.mark.parametrize(("num_buckets", "bidirectional"), [(32, True), (32, False), (12, True), (64, False)])
def test_exact_region_gives_each_distance_its_own_bucket(num_buckets, bidirectional):
    exact = relative.t5_exact_region(num_buckets, bidirectional)
    n = np.arange(exact + 1)
    buckets = oracle.t5_bucket(-n, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=4 * exact + 8)
    np.testing.assert_array_equal(buckets[:exact], n[:exact])  # one bucket per distance below max_exact ...
    assert buckets[exact] == exact  # ... and the log region starts at bucket max_exact, for n = max_exact


@pytest.mark.parametrize("bidirectional", [True, False])
def test_bias_curve_reads_the_table_at_the_bucket(bidirectional):
    table = np.random.default_rng(3).normal(size=(32, 6))
    rel = np.arange(-300, 301)
    curve = relative.t5_bias_curve(table, rel, bidirectional=bidirectional, max_distance=128)
    buckets = oracle.t5_bucket(rel, bidirectional=bidirectional, num_buckets=32, max_distance=128)
    assert curve.shape == (6, rel.size)
    for h in range(6):
        np.testing.assert_array_equal(curve[h], [table[b, h] for b in buckets])


def test_synthetic_table_is_reproducible_and_shaped_like_t5():
    a, b = relative.t5_synthetic_bias_table(32, 8, seed=1), relative.t5_synthetic_bias_table(32, 8, seed=1)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (32, 8) and np.isfinite(a).all()
    assert not np.array_equal(a, relative.t5_synthetic_bias_table(32, 8, seed=2))


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: relative.shaw_distinct_count([0, 3], 4), "[0, 3]"),
        (lambda: relative.t5_bias_curve(np.full((32, 2), np.nan), [0]), "NaN"),
        (lambda: relative.t5_bias_curve(np.zeros((32, 2)), [0], max_distance=4), "max_distance (4)"),
        (lambda: relative.t5_bucket_sizes(num_buckets=3), "3"),
    ],
)
def test_bad_arguments_name_the_value(call, fragment):
    with pytest.raises(ValueError) as info:
        call()
    assert fragment in str(info.value)


# ------------------------------------------------------------------------------ where T5's last bucket starts


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize(("num_buckets", "max_distance"), T5_SETTINGS)
def test_last_bucket_starts_where_transformers_first_reaches_it(num_buckets, max_distance, bidirectional):
    """The smallest distance in the last bucket of its side, found with ``T5Attention._relative_position_bucket``
    over distances well past max_distance: from it on, every distance shares that bucket."""
    kw = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    side = num_buckets // 2 if bidirectional else num_buckets
    n = np.arange(0, 4 * max_distance)
    past = oracle.t5_bucket(-n, **kw)  # keys before the query
    start = int(np.flatnonzero(past == side - 1)[0])
    assert (past[start:] == side - 1).all() and (past[:start] < side - 1).all()
    assert relative.t5_last_bucket_start(**kw) == start <= max_distance
    if bidirectional:  # keys after the query reach their last bucket at the same distance
        future = oracle.t5_bucket(n[1:], **kw)
        assert int(np.flatnonzero(future == num_buckets - 1)[0]) + 1 == start


def test_last_bucket_of_the_default_settings_starts_before_max_distance():
    """T5's 32 buckets and max distance 128: the tail is flat from 91 (bidirectional) and 113 (causal), not from
    128 — both read off transformers' bucket function, and from the closed form in the docstring."""
    for bidirectional, expected in ((True, 91), (False, 113)):
        n = np.arange(0, 200)
        buckets = oracle.t5_bucket(-n, bidirectional=bidirectional, num_buckets=32, max_distance=128)
        assert int(np.flatnonzero(buckets == buckets.max())[0]) == expected
        assert relative.t5_last_bucket_start(bidirectional=bidirectional) == expected
        side = 16 if bidirectional else 32
        exact = side // 2
        closed = exact * (128 / exact) ** ((side - exact - 1) / (side - exact))
        assert math.ceil(closed) == expected


def test_last_bucket_start_rejects_settings_t5_rejects():
    with pytest.raises(ValueError, match="max_distance"):
        relative.t5_last_bucket_start(num_buckets=64, max_distance=16)
