"""posviz.xlnet_masks against the masks transformers builds for XLNet, and against a scalar-loop derivation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posviz

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)


def masks_loop(permutation):
    length = len(permutation)
    rank = [None] * length
    for step, token in enumerate(permutation):
        rank[token] = step
    content = np.zeros((length, length), dtype=bool)
    query = np.zeros((length, length), dtype=bool)
    for i in range(length):
        for j in range(length):
            content[i, j] = rank[j] <= rank[i]
            query[i, j] = rank[j] < rank[i]
    return content, query


@pytest.mark.parametrize(
    "permutation", [[0], [0, 1], [1, 0], [2, 0, 1], [0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [3, 1, 4, 0, 2, 5]]
)
def test_masks_match_loop_and_hf(permutation):
    content, query = posviz.xlnet_masks(permutation)
    assert content.dtype == np.bool_ and query.dtype == np.bool_
    loop_c, loop_q = masks_loop(permutation)
    np.testing.assert_array_equal(content, loop_c)
    np.testing.assert_array_equal(query, loop_q)
    hf_c, hf_q = oracle.xlnet_hf_masks(permutation)
    np.testing.assert_array_equal(content, hf_c)
    np.testing.assert_array_equal(query, hf_q)


@FAST
@given(st.integers(1, 40).flatmap(lambda n: st.permutations(list(range(n)))))
def test_masks_random_permutations(permutation):
    content, query = posviz.xlnet_masks(permutation)
    length = len(permutation)
    assert content.shape == query.shape == (length, length)
    hf_c, hf_q = oracle.xlnet_hf_masks(permutation)
    np.testing.assert_array_equal(query, hf_q)  # perm_mask == ~query_mask
    np.testing.assert_array_equal(content, hf_c)
    # content = query + the diagonal
    np.testing.assert_array_equal(content, query | np.eye(length, dtype=bool))
    assert not np.any(np.diagonal(query))
    # the k-th token in the order sees exactly k tokens in the query stream
    counts = query.sum(axis=1)
    np.testing.assert_array_equal(counts[np.asarray(permutation)], np.arange(length))
    # relabelling tokens by their rank turns the query mask into the strictly lower-triangular causal mask
    order = np.asarray(permutation)
    np.testing.assert_array_equal(query[np.ix_(order, order)], np.tril(np.ones((length, length), bool), -1))


def test_identity_order_is_causal():
    content, query = posviz.xlnet_masks(np.arange(6))
    np.testing.assert_array_equal(content, np.tril(np.ones((6, 6), dtype=bool)))
    np.testing.assert_array_equal(query, np.tril(np.ones((6, 6), dtype=bool), -1))


def test_accepts_numpy_and_tuple():
    a = posviz.xlnet_masks((2, 0, 1))
    b = posviz.xlnet_masks(np.array([2, 0, 1], dtype=np.int32))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


@pytest.mark.parametrize(
    "bad",
    [
        [0, 0, 1],  # duplicate
        [1, 2, 3],  # not starting at 0
        [0, 1, 3],  # gap
        [-1, 0, 1],  # negative
        [0, 2],  # out of range
        [],  # empty
        [[0, 1], [1, 0]],  # not 1-D
        [0.0, 1.5, 2.0],  # not whole numbers
    ],
)
def test_invalid_permutations_raise_value_error(bad):
    with pytest.raises(ValueError) as info:
        posviz.xlnet_masks(bad)
    assert "permutation" in str(info.value)


@pytest.mark.parametrize("seq_len", [1, 2, 9, 64])
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_factorisation_order_and_rank(seq_len, seed):
    order = posviz.factorisation_order(seq_len, seed)
    np.testing.assert_array_equal(np.sort(order), np.arange(seq_len))
    np.testing.assert_array_equal(order, posviz.factorisation_order(seq_len, seed))  # reproducible
    if seed == 0:
        np.testing.assert_array_equal(order, np.arange(seq_len))  # documented: left to right
    rank = posviz.factorisation_rank(order)
    np.testing.assert_array_equal(order[rank], np.arange(seq_len))  # rank is the inverse permutation
    np.testing.assert_array_equal(rank[order], np.arange(seq_len))


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_factorisation_order_bad_seed(seed):
    with pytest.raises(ValueError) as info:
        posviz.factorisation_order(5, seed)
    assert "seed" in str(info.value)
