"""The training lab's synthetic corpus: noisy wrap-around counting, generated in-process from a seed.

Every sequence counts upward from a small random start and wraps around the vocabulary of V counting tokens,

    x_p = (s + p) mod V,   s ~ Uniform{0, ..., max_start - 1},   p = 0 .. L - 1,

so a token depends on its absolute position (x_p lies within max_start values of p mod V) and on its order
(x_p = x_{p-1} + 1 = x_{p+1} - 1, mod V). A fraction ``noise`` of the input tokens is then replaced by uniformly
random ones, so no single neighbour can be trusted, and a fraction ``mask_rate`` of the positions (BERT's 15%)
is replaced by the [MASK] token, id V. The label of a masked position is its clean count, so a perfect model
scores 100%.

Why a model without positions cannot solve it: without a positional encoding a Transformer encoder sees its
input as a bag of tokens, and every order of the same bag gives the same outputs (permuted along). All masked
positions of a sequence look the same (the same [MASK] in the same bag), so such a model must give them all the
same prediction, and it gets at most one target value right per sequence. Worse, when L is a multiple of V every
clean sequence holds each token exactly L / V times: the bag is identical for every start s while the targets
differ at every position. :func:`bag_of_tokens_ceiling` computes the best accuracy any order-blind predictor can
reach on a batch.
"""

from __future__ import annotations

import numpy as np

#: Label of positions that are not masked (and so not scored), as in PyTorch's cross-entropy.
IGNORE = -100


def counting(starts, length: int, vocab: int) -> np.ndarray:
    """Clean counting sequences x_p = (s + p) mod V, one row per start: shape (len(starts), length)."""
    return (np.asarray(starts)[:, None] + np.arange(length)[None, :]) % vocab


def mlm_batch(
    rng: np.random.Generator,
    batch: int,
    length: int,
    vocab: int,
    *,
    max_start: int = 8,
    noise: float = 0.1,
    mask_rate: float = 0.15,
) -> tuple[np.ndarray, np.ndarray]:
    """A masked-language-modelling batch ``(inputs, labels)``, both int64 of shape (batch, length).

    ``inputs`` holds the noisy counts with masked positions set to [MASK] (id ``vocab``); ``labels`` holds the
    clean count at masked positions and IGNORE elsewhere. Deterministic for a given generator state.
    """
    clean = counting(rng.integers(0, max_start, batch), length, vocab)
    noisy = np.where(rng.random(clean.shape) < noise, rng.integers(0, vocab, clean.shape), clean)
    masked = rng.random(clean.shape) < mask_rate
    return np.where(masked, vocab, noisy), np.where(masked, clean, IGNORE)


def bag_of_tokens_ceiling(labels) -> float:
    """The highest MLM accuracy any predictor that ignores token order can reach on this batch.

    Such a predictor sees every masked position of a sequence as the same [MASK] in the same bag, so it gives them
    one prediction; the best one is the most frequent label among them. The ceiling is the sum over sequences of
    that label's count, divided by the number of masked positions.
    """
    labels = np.asarray(labels)
    masked = labels != IGNORE
    if not masked.any():
        raise ValueError("the batch has no masked positions, so there is no accuracy to bound")
    width = int(labels.max()) + 1
    counts = np.zeros((labels.shape[0], width), dtype=np.int64)
    rows = np.broadcast_to(np.arange(labels.shape[0])[:, None], labels.shape)
    np.add.at(counts, (rows[masked], labels[masked]), 1)
    return float(counts.max(axis=1).sum() / masked.sum())
