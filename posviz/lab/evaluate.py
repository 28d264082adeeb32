"""Evaluations of the lab's models: accuracy against the sequence length, and the isolation check.

The isolation check follows the reference articles: train the same micro BERT to name each token's position
index from uniformly random tokens, which carry no information about where they stand, so whatever it gets right
comes from the encoding alone. A model without positions sees the same bag of tokens at every position and can
only guess: its accuracy stays near chance, 1 / seq_len. ALiBi's symmetric bias -m |i - j| is the same read
backwards, so a model with only ALiBi gives the reversed tokens the reversed predictions: random tokens are as
likely reversed as not, so it names p at position L-1-p as often as at p, and is right at most half the time.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .train import RunResult, TrainConfig, accuracy, build_model, fit, held_out


@dataclasses.dataclass(frozen=True)
class LengthAccuracy:
    """MLM accuracy per sequence length. ``accuracy[i]`` is NaN where the model cannot run at ``lengths[i]``,
    and ``errors[i]`` is then the message the model raised (torch's IndexError past a learned table's end)."""

    lengths: np.ndarray
    accuracy: np.ndarray
    errors: tuple[str | None, ...]
    train_length: int


def evaluate_lengths(result: RunResult, lengths, sequences: int = 256) -> LengthAccuracy:
    """Held-out MLM accuracy of a trained model on counting sequences of each length in ``lengths``.

    The corpus rule is the same at every length, and training mixes lengths from ``min_len`` to ``seq_len``
    (``train.batch_length``), so at those lengths the model is tested in distribution, and its accuracy there is the
    baseline for longer sequences (a little lower at the shortest: fewer neighbours to read a count from, and
    fewer tokens to average the noise over). Past ``seq_len`` two things
    change at once: the sinusoidal model meets positions it never saw, RoPE and ALiBi offsets larger than any in
    training, and every model attends over more tokens than it ever did. A drop there shows how a model copes with
    both; this evaluation does not tell them apart. A learned table has no row for position
    ``max_position_embeddings`` and beyond: there the real ``torch.nn.Embedding`` error is reported instead of an
    accuracy.
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or lengths.size == 0 or lengths.dtype.kind not in "iu" or np.any(lengths < 1):
        raise ValueError(f"lengths must be a list of sequence lengths of at least 1; got {lengths.tolist()!r}")
    scores: list[float] = []
    errors: list[str | None] = []
    for length in lengths.tolist():  # one forward pass per length: a handful, each a different shape
        try:
            scores.append(accuracy(result.model, *held_out(result.config, length, sequences)))
            errors.append(None)
        except IndexError as exc:
            scores.append(float("nan"))
            errors.append(f"IndexError: {exc}")
    return LengthAccuracy(lengths, np.asarray(scores), tuple(errors), result.config.seq_len)


def position_batch(rng: np.random.Generator, config: TrainConfig, sequences: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniformly random tokens and, as every token's label, its position index 0 .. seq_len - 1."""
    tokens = rng.integers(0, config.vocab, (sequences, config.seq_len))
    return tokens, np.broadcast_to(np.arange(config.seq_len), tokens.shape).copy()


def position_accuracy(encoding: str, config: TrainConfig | None = None, progress=None, should_stop=None) -> float:
    """The isolation check: held-out accuracy of the micro BERT trained to predict each token's position index
    from random tokens, with ``encoding`` and the budget of ``config`` (default ``TrainConfig()``). Chance is
    1 / seq_len. ``progress`` and ``should_stop`` are those of ``train``: a stopped check is scored as it is."""
    config = dataclasses.replace(config or TrainConfig(), encoding=encoding)
    model = build_model(config, outputs=config.seq_len)
    rng = np.random.default_rng(config.seed)
    fit(model, config, lambda: position_batch(rng, config, config.batch), progress, should_stop)
    return accuracy(model, *position_batch(np.random.default_rng([config.seed, 1]), config, 256))
