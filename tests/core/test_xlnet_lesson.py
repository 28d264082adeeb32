"""The XLNet lesson's core: a typed factorisation order (parse_order) and what one token may see in each stream
(visible_tokens), against the masks transformers builds and the rank definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posviz.encodings import xlnet

from . import _oracles as oracle

FAST = settings(max_examples=50, deadline=None)
permutations = st.integers(1, 24).flatmap(lambda n: st.permutations(list(range(n))))


@FAST
@given(order=permutations, sep=st.sampled_from([",", ", ", " ", " ,  "]))
def test_parse_order_reads_back_any_permutation(order, sep):
    np.testing.assert_array_equal(xlnet.parse_order(sep.join(map(str, order))), order)


@FAST
@given(order=permutations)
def test_visible_tokens_are_the_rows_of_the_masks(order):
    content, query = oracle.xlnet_hf_masks(order)
    step = {token: k for k, token in enumerate(order)}  # the step at which each token is predicted
    for token in range(len(order)):
        sees_content, sees_query = xlnet.visible_tokens(order, token)
        np.testing.assert_array_equal(sees_content, np.flatnonzero(content[token]))
        np.testing.assert_array_equal(sees_query, np.flatnonzero(query[token]))
        assert sees_query.tolist() == sorted(j for j in order if step[j] < step[token])
        assert token in sees_content and token not in sees_query  # never its own content
        assert sorted(set(sees_content) - set(sees_query)) == [token]


def test_first_token_of_the_order_sees_only_itself():
    content, query = xlnet.visible_tokens([3, 1, 0, 2], 3)
    assert content.tolist() == [3] and query.tolist() == []


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "for example"),
        ("   ", "for example"),
        ("3,1,x,0", "'x'"),
        ("1,-2,0", "'-2'"),
        ("1.5,0", "'1.5'"),
        ("0,1,1", "token 1 appears more than once"),
        ("0,2", "1 is missing"),
        ("1,2,3", "0 is missing"),
        ("²,0", "'²'"),
    ],
)
def test_parse_order_explains_what_is_wrong(text, fragment):
    with pytest.raises(ValueError) as info:
        xlnet.parse_order(text)
    assert fragment in str(info.value)


def test_parse_order_limits_the_length():
    with pytest.raises(ValueError, match="at most 4 tokens here; got 5"):
        xlnet.parse_order("0,1,2,3,4", max_tokens=4)


@pytest.mark.parametrize("token", [-1, 4, True, 1.0])
def test_visible_tokens_rejects_a_token_outside_the_order(token):
    with pytest.raises(ValueError, match=r"between 0 and 3"):
        xlnet.visible_tokens([3, 1, 0, 2], token)


# ------------------------------------------------------------------------------------------ partial prediction


@FAST
@given(order=permutations, k=st.integers(1, 10))
def test_prediction_targets_are_the_last_one_in_k_of_the_order(order, k):
    """Yang et al. (2019), section 2.3: only z_{>c} is predicted, with |z| / (|z| - c) about K."""
    targets = xlnet.prediction_targets(order, k)
    count = len(targets)
    assert count >= 1 and targets.tolist() == order[len(order) - count :]  # the end of the order, in order
    assert abs(count - len(order) / k) <= 0.5 or count == 1  # the nearest whole number of 1/K of the tokens
    step = {token: s for s, token in enumerate(order)}
    context = set(order) - set(targets.tolist())
    assert all(step[t] > step[c] for t in targets for c in context)  # every target comes after all the context


def test_prediction_targets_of_xlnets_pretraining():
    """K = 6: 85 targets of a 512-token sequence, as the authors' pretraining flags say (num_predict=85); one
    order is sampled per sequence, and most of its tokens are never predicted."""
    assert xlnet.PARTIAL_PREDICTION_K == 6
    order = np.random.default_rng(0).permutation(512)
    assert len(xlnet.prediction_targets(order)) == 85
    np.testing.assert_array_equal(xlnet.prediction_targets([5, 0, 1, 4, 2, 6, 3, 7]), [7])
    np.testing.assert_array_equal(xlnet.prediction_targets(list(range(12)), 6), [10, 11])
    with pytest.raises(ValueError, match="exactly once"):
        xlnet.prediction_targets([0, 0, 1])
