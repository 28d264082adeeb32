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
