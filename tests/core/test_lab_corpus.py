"""The lab's counting corpus: reproducible from a seed, and impossible to solve without knowing token order."""

import numpy as np

from posviz.lab import IGNORE, bag_of_tokens_ceiling, counting, mlm_batch


def _batch(seed: int, batch: int = 64, length: int = 32, vocab: int = 32):
    return mlm_batch(np.random.default_rng(seed), batch, length, vocab, max_start=8, noise=0.1, mask_rate=0.15)


def test_the_corpus_is_deterministic_per_seed():
    first, again, other = _batch(3), _batch(3), _batch(4)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])


def test_labels_are_the_clean_count_at_masked_positions_only():
    inputs, labels = _batch(0, batch=512)
    masked = labels != IGNORE
    assert np.all(inputs[masked] == 32) and np.all(inputs[~masked] < 32)
    assert 0.12 < masked.mean() < 0.18
    position = np.broadcast_to(np.arange(32), labels.shape)
    start = (labels - position) % 32
    assert np.all(start[masked] < 8)  # x_p = (s + p) mod V with s < max_start
    rows = masked.any(axis=1)  # the start of a sequence is known from any of its masked labels
    starts = np.array([np.bincount(row[m]).argmax() for row, m in zip(start[rows], masked[rows], strict=True)])
    clean = counting(starts, 32, 32)
    kept = ~masked[rows]
    assert 0.85 < np.mean(inputs[rows][kept] == clean[kept]) < 0.95  # about 10% of the visible tokens are noise


def test_every_order_of_the_same_bag_is_a_different_sequence():
    clean = counting(np.arange(8), 64, 32)
    bags = np.sort(clean, axis=1)
    assert np.all(bags == bags[0])  # one bag of tokens for every start ...
    for a in range(8):
        for b in range(a + 1, 8):
            assert np.all(clean[a] != clean[b])  # ... and a different target at every position


def test_the_bag_of_tokens_ceiling_on_a_hand_made_batch():
    labels = np.array([[5, IGNORE, 5, 7], [IGNORE, 1, 2, IGNORE]])
    assert bag_of_tokens_ceiling(labels) == 3 / 5  # two 5s right in the first row, one of 1 or 2 in the second


def test_an_order_blind_model_is_provably_worse_than_reading_a_neighbour():
    inputs, labels = _batch(1, batch=512)
    masked = labels != IGNORE
    left = np.roll(inputs, 1, axis=1)
    guess = (left + 1) % 32  # x_p = x_{p-1} + 1, when the left neighbour is visible
    usable = masked & (left != 32) & (np.arange(32) > 0)
    neighbour = np.mean(guess[usable] == labels[usable])
    ceiling = bag_of_tokens_ceiling(labels)
    assert neighbour > 0.85 and ceiling < 0.3
