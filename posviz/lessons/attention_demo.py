"""Why a Transformer needs positions: one head of self-attention run over a sentence and over a shuffle of it.

Self-attention (Vaswani et al., 2017, "Attention Is All You Need", equation 1) compares tokens by content only:

    Attn(X) = softmax(Q K^T / sqrt(d)) V,   Q = X W_Q,  K = X W_K,  V = X W_V

For any permutation matrix P, (P X) W = P (X W) and softmax(P S P^T) = P softmax(S) P^T, so

    Attn(P X) = P Attn(X)

(permutation equivariance; Lee et al., 2019, "Set Transformer", lemma 1): shuffling the tokens only shuffles their
outputs, each token's own output is unchanged. Adding a position table PE (a function of the slot, not of the
token) breaks it, because P (X + PE) != P X + PE:  Attn(P X + PE) != P Attn(X + PE).

A causal mask breaks it too, with no position table at all. The mask M (query i sees keys j <= i) belongs to the
slots, and P M P^T != M, so Attn_M(P X) != P Attn_M(X): the output in slot i is attention over the tokens in slots
0 .. i, and which tokens those are depends on the order (the first token attends to itself alone, every later
one to a longer prefix). That is how decoder-only language models without any position encoding still learn
positions (Haviv et al., 2022, "Transformer Language Models without Positional Encodings Still Learn Positional
Information", Findings of EMNLP 2022, arXiv:2203.16634; Kazemnejad et al., 2023, "The Impact of Positional Encoding
on Length Generalization in Transformers", NeurIPS 2023, arXiv:2305.19466). Attention over a prefix is still blind
to the order within it: a token keeps its output exactly when the same tokens precede it in both orders.

Everything here is small and deterministic: token vectors come from a fixed random table indexed by a hash of the
token string (no vocabulary, no download), the projections from a fixed seed.
"""

from __future__ import annotations

import hashlib
import numbers
import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..encodings.sinusoidal import sinusoidal

#: Width of the token vectors and of the attention head.
D_MODEL = 16
#: Rows of the hashed embedding table (a token string picks row sha256(token) mod VOCAB_SIZE).
VOCAB_SIZE = 4096
#: Longest sentence the demo attends over; longer ones are cut to their first MAX_TOKENS tokens.
MAX_TOKENS = 32
EMBEDDING_SEED = 0
PROJECTION_SEED = 1

#: Example sentences: code -> sentence. Chinese is split into one token per character.
EXAMPLES = {
    "dog": "the dog bit the man",
    "book": "she gave him the book before he gave her the pen",
    "zh_dog": "狗咬人不是新闻，人咬狗才是新闻",
    "zh_cat": "小猫坐在垫子上",
}

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")


def tokenize(sentence: str) -> tuple[str, ...]:
    """Split ``sentence`` into tokens: each Chinese character alone, each run of letters or digits, each
    punctuation mark. "the dog bit." -> ("the", "dog", "bit", "."); "狗咬人" -> ("狗", "咬", "人")."""
    if not isinstance(sentence, str):
        raise ValueError(f"the sentence must be text, got {sentence!r}")
    return tuple(_TOKEN.findall(sentence))


def token_ids(tokens) -> np.ndarray:
    """Row of the embedding table for each token: the first 8 bytes of sha256(token, UTF-8) mod VOCAB_SIZE.

    The same string always gets the same row, in every session and on every machine (Python's ``hash`` of a
    string changes between runs, sha256 does not).
    """
    digests = [hashlib.sha256(token.encode("utf-8")).digest()[:8] for token in tokens]
    return np.frombuffer(b"".join(digests), dtype=">u8").astype(np.uint64) % np.uint64(VOCAB_SIZE)


@cache
def embedding_table(d_model: int = D_MODEL, seed: int = EMBEDDING_SEED) -> np.ndarray:
    """The (VOCAB_SIZE, d_model) token table, entries N(0, 1) drawn from ``seed``; read-only."""
    table = np.random.default_rng(seed).standard_normal((VOCAB_SIZE, d_model))
    table.flags.writeable = False
    return table


def token_embeddings(tokens, d_model: int = D_MODEL) -> np.ndarray:
    """X[i] = E[id(tokens[i])], shape (len(tokens), d_model): identical strings get identical vectors."""
    return embedding_table(d_model)[token_ids(tokens).astype(np.intp)]


def projections(d_model: int = D_MODEL, seed: int = PROJECTION_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W_Q, W_K, W_V)``, each (d_model, d_model) with entries N(0, 1 / d_model) drawn from ``seed``."""
    w = np.random.default_rng(seed).standard_normal((3, d_model, d_model)) / np.sqrt(d_model)
    return w[0], w[1], w[2]


def self_attention(x, w_q, w_k, w_v, *, causal: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, outputs)`` of one head, without a mask or with a causal one:

        A = softmax(Q K^T / sqrt(d) + M) row by row,   outputs = A V,   Q = x W_Q, K = x W_K, V = x W_V,

    with d the width of the queries (Vaswani et al., 2017, equation 1) and M = 0, or with ``causal`` M[i, j] = -inf
    for j > i (the decoder's mask, section 3.2.3: query i sees keys 0 .. i only, and gets weight 0 on the others).
    The softmax subtracts each row's maximum first, which leaves it unchanged and keeps exp from overflowing.
    """
    x = np.asarray(x, dtype=np.float64)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        n = scores.shape[0]
        scores = np.where(np.arange(n)[None, :] > np.arange(n)[:, None], -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights, weights @ v


def shuffle_order(n_tokens: int, seed: int) -> np.ndarray:
    """A permutation of 0 .. n_tokens - 1 drawn from ``seed``: slot j of the shuffled sentence holds token
    order[j]. Should the draw leave every token in place, it is rolled by one, so the order always changes."""
    order = np.random.default_rng(seed).permutation(n_tokens)
    return np.roll(order, 1) if np.array_equal(order, np.arange(n_tokens)) else order


@dataclass(frozen=True)
class ShuffleDemo:
    """One head of self-attention over a sentence and over a shuffle of it.

    ``positions`` and ``causal`` say whether a position table was added and whether a causal mask was applied.
    ``order[j]`` is the token in slot j of the shuffle; ``back`` its inverse (token i sits in slot ``back[i]``).
    ``weights`` and ``outputs`` belong to the sentence as written, ``shuffled_weights`` and ``shuffled_outputs``
    to the shuffle, row j = slot j; ``sorted_back`` is ``shuffled_weights`` with rows and columns put back into
    the sentence's order. ``distance[i]`` = || outputs[i] - shuffled_outputs[back[i]] ||, token i's output in
    the two orders; ``output_norm[i]`` = || outputs[i] ||, its scale. ``n_found`` counts the tokens before
    truncation to ``len(tokens)``.
    """

    tokens: tuple[str, ...]
    n_found: int
    positions: bool
    order: np.ndarray
    back: np.ndarray
    weights: np.ndarray
    shuffled_weights: np.ndarray
    sorted_back: np.ndarray
    outputs: np.ndarray
    shuffled_outputs: np.ndarray
    distance: np.ndarray
    output_norm: np.ndarray
    causal: bool = False

    def __post_init__(self) -> None:
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    @property
    def shuffled_tokens(self) -> tuple[str, ...]:
        return tuple(self.tokens[i] for i in self.order)

    @property
    def truncated(self) -> bool:
        return self.n_found > len(self.tokens)

    @property
    def same_prefix(self) -> np.ndarray:
        """Per token i of the sentence as written: whether the same tokens (counted with repeats, compared by
        text) fill the slots up to and including it in both orders. Under a causal mask exactly these tokens keep
        their output, since attention over a prefix does not see the order within it.

        C[s, u] = number of tokens u in slots 0 .. s (a cumulative sum of one-hot rows); token i sits in slot i
        as written and in slot ``back[i]`` in the shuffle, so the answer is C[i] == C_shuffled[back[i]].
        """
        _, vocab = np.unique(np.array(self.tokens, dtype=str), return_inverse=True)
        one_hot = np.eye(vocab.max() + 1, dtype=np.int64)[vocab]
        counts, shuffled = np.cumsum(one_hot, axis=0), np.cumsum(one_hot[self.order], axis=0)
        return (counts == shuffled[self.back]).all(axis=1)

    @property
    def largest_distance(self) -> float:
        return float(self.distance.max())

    @property
    def typical_norm(self) -> float:
        """The mean length of the outputs, the scale ``distance`` is measured against."""
        return float(self.output_norm.mean())


def shuffle_demo(
    sentence: str,
    seed: int = 0,
    *,
    positions: bool = False,
    max_tokens: int = MAX_TOKENS,
    d_model: int = D_MODEL,
    causal: bool = False,
) -> ShuffleDemo:
    """Attend over ``sentence`` (its first ``max_tokens`` tokens) and over its shuffle by ``seed``.

    Without ``positions`` the inputs are the token vectors X and P X; with it the sinusoidal table PE of
    Vaswani et al. (2017, section 3.5) is added by slot, X + PE and P X + PE. ``causal`` applies the decoder's
    causal mask in both orders. By the module docstring, ``distance`` is zero (up to rounding, ~1e-16) without
    positions and without the mask; with positions, or with the mask alone, it is not: under the mask a token keeps
    its output only when the same tokens precede it in both orders.
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"the shuffle seed must be a whole number 0 or more, got {seed!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, numbers.Integral) or max_tokens < 2:
        raise ValueError(f"max_tokens must be a whole number of at least 2, got {max_tokens!r}")
    if isinstance(d_model, bool) or not isinstance(d_model, numbers.Integral) or not 2 <= d_model <= 1024:
        raise ValueError(f"d_model must be a whole number from 2 to 1024, got {d_model!r}")
    found = tokenize(sentence)
    if not found:
        raise ValueError("the sentence has no words in it: type a few words or Chinese characters to shuffle")
    if len(found) == 1:
        raise ValueError(f"{found[0]!r} is a single token, and one token has no order to shuffle: add a second one")
    tokens = found[:max_tokens]
    n = len(tokens)
    order = shuffle_order(n, int(seed))
    back = np.argsort(order)
    x = token_embeddings(tokens, d_model)
    shuffled_x = x[order]
    if positions:
        pe = sinusoidal(n, d_model)
        x, shuffled_x = x + pe, shuffled_x + pe
    w = projections(d_model)
    weights, outputs = self_attention(x, *w, causal=causal)
    shuffled_weights, shuffled_outputs = self_attention(shuffled_x, *w, causal=causal)
    return ShuffleDemo(
        tokens=tokens,
        n_found=len(found),
        positions=bool(positions),
        order=order,
        back=back,
        weights=weights,
        shuffled_weights=shuffled_weights,
        sorted_back=shuffled_weights[np.ix_(back, back)],
        outputs=outputs,
        shuffled_outputs=shuffled_outputs,
        distance=np.linalg.norm(outputs - shuffled_outputs[back], axis=1),
        output_norm=np.linalg.norm(outputs, axis=1),
        causal=bool(causal),
    )
