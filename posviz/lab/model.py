"""A micro BERT: token embedding, one pre-LN encoder layer (4 heads, GELU MLP), a linear output head.

The only thing that changes between runs is how the model learns where a token is (``encoding``):

    sinusoidal  the fixed table of Vaswani et al. (2017), ``posviz.sinusoidal``, added to the token embeddings
    learned     a trainable table, BERT's initialisation N(0, 0.02^2) (Devlin et al., 2019), added (OpenAI's GPT-2
                drew its table with stddev 0.01, Hugging Face's GPT-2 with 0.02)
    sin-init    a trainable table that starts as the sinusoidal one, ``posviz.sin_init``, added
    rope        queries and keys of every head rotated by ``posviz.rope_inv_freq`` frequencies, half-split pairs
                as in LLaMA (Su et al., 2021)
    alibi       -m_h |i - j| added to the scores of head h, ``posviz.alibi_bias`` symmetric, since the encoder
                is bidirectional (Press et al., 2022). The bias is the same read backwards, so this encoder
                commutes with reversing its input: positions p and L-1-p are mirror images, and it cannot tell
                the left edge of a sequence from the right
    nope        nothing: the model sees a bag of tokens

Token embeddings start from PyTorch's N(0, 1), so a token and a sinusoidal row (entries in [-1, 1]) weigh alike
when they are added; the learned table starts fifty times smaller, as BERT's does, and has to grow.

The absolute tables (sinusoidal, learned, sin-init) are ``embeddings.position_embeddings``, so a saved state dict
holds them under TABLE_KEY, where ``posviz.load_position_embeddings`` finds BERT's. The fixed sinusoidal table is
stored too (frozen), as Marian does; past its last row the sinusoidal model computes further rows from the formula,
while the learned tables fail like BERT's.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ..encodings.alibi import alibi_bias
from ..encodings.learned import sin_init
from ..encodings.rope import rope_cos_sin, rope_inv_freq
from ..encodings.sinusoidal import sinusoidal

ENCODINGS = ("sinusoidal", "learned", "sin-init", "rope", "alibi", "nope")
#: Encodings that add a table of position vectors to the token embeddings.
TABLE_ENCODINGS = ("sinusoidal", "learned", "sin-init")
#: Encodings whose table is a trained parameter.
LEARNED_TABLES = ("learned", "sin-init")
TABLE_KEY = "embeddings.position_embeddings.weight"


@lru_cache(maxsize=16)
def rope_angles(length: int, head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of m * theta_i for m = 0 .. length - 1, shape (length, head_dim / 2), from posviz's RoPE."""
    inv_freq, _ = rope_inv_freq(head_dim)
    cos, sin = rope_cos_sin(np.arange(length), inv_freq)
    return torch.from_numpy(cos).float(), torch.from_numpy(sin).float()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE on the last axis of x (..., seq, head_dim), half-split pairs (i, i + d/2) as LLaMA's ``rotate_half``:
    (a, b) -> (a cos - b sin, b cos + a sin)."""
    a, b = x.chunk(2, dim=-1)
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


@lru_cache(maxsize=16)
def alibi(heads: int, length: int) -> torch.Tensor:
    """The symmetric ALiBi bias -m_h |i - j|, shape (heads, length, length), from ``posviz.alibi_bias``. Unchanged
    by reversing the sequence (i -> L-1-i, j -> L-1-j), since |(L-1-i) - (L-1-j)| = |i - j|."""
    return torch.from_numpy(alibi_bias(heads, length, causal=False)).float()


class SelfAttention(nn.Module):
    """Multi-head bidirectional self-attention with the encoding's rotation (rope) or bias (alibi)."""

    def __init__(self, hidden: int, heads: int, encoding: str):
        super().__init__()
        self.heads, self.encoding = heads, encoding
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, hidden = x.shape
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in self.qkv(x).split(hidden, dim=2))
        bias = None
        if self.encoding == "rope":
            cos, sin = rope_angles(length, q.shape[-1])
            q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        elif self.encoding == "alibi":
            bias = alibi(self.heads, length)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.proj(y.transpose(1, 2).reshape(batch, length, hidden))


class Embeddings(nn.Module):
    """Token embeddings plus, for the absolute encodings, the position table (BERT's module and key names)."""

    def __init__(self, encoding: str, vocab: int, max_positions: int, hidden: int):
        super().__init__()
        self.encoding = encoding
        self.word_embeddings = nn.Embedding(vocab, hidden)
        if encoding == "learned":
            self.position_embeddings = nn.Embedding(max_positions, hidden)
            nn.init.normal_(self.position_embeddings.weight, std=0.02)
        elif encoding in TABLE_ENCODINGS:
            table = torch.from_numpy(sin_init(max_positions, hidden)).float()
            self.position_embeddings = nn.Embedding.from_pretrained(table, freeze=encoding == "sinusoidal")

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.word_embeddings(ids)
        if self.encoding not in TABLE_ENCODINGS:
            return x
        length, rows = ids.shape[1], self.position_embeddings.num_embeddings
        if self.encoding == "sinusoidal" and length > rows:
            return x + torch.from_numpy(sinusoidal(length, x.shape[-1])).float()
        return x + self.position_embeddings(torch.arange(length))


class MicroBert(nn.Module):
    """embeddings -> x + attention(LN(x)) -> x + MLP(LN(x)) -> LN -> linear head, one logit vector per token.

    ``vocab`` counts every input id ([MASK] included); ``outputs`` is the size of the head (the counting
    tokens for masked-language modelling, the positions for the isolation check).
    """

    def __init__(self, encoding: str, vocab: int, outputs: int, max_positions: int, hidden: int = 64, heads: int = 4):
        super().__init__()
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}; got {encoding!r}")
        self.encoding = encoding
        self.embeddings = Embeddings(encoding, vocab, max_positions, hidden)
        self.ln_attn, self.ln_mlp, self.ln_out = nn.LayerNorm(hidden), nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attention = SelfAttention(hidden, heads, encoding)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))
        self.head = nn.Linear(hidden, outputs)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embeddings(ids)
        x = x + self.attention(self.ln_attn(x))
        x = x + self.mlp(self.ln_mlp(x))
        return self.head(self.ln_out(x))

    def position_table(self) -> np.ndarray | None:
        """The position table as float64 (max_positions, hidden), or None for rope, alibi and nope."""
        if self.encoding not in TABLE_ENCODINGS:
            return None
        return self.embeddings.position_embeddings.weight.detach().double().numpy().copy()
