"""Train a tiny BERT-like encoder and keep its learned position table: the "trained" example of the Learned page.

Model: token embedding + learned absolute position embedding (64 positions, width 64, both drawn from
N(0, 0.02^2) as BERT's ``initializer_range``), LayerNorm, one post-norm Transformer encoder layer (4 heads,
feed-forward 256, GELU), and a masked-language-modelling head tied to the token embedding.

Corpus (generated from ``SEED``, nothing downloaded): every sequence counts upward from a random start,

    x_p = (s + p) mod VOCAB,  s ~ Uniform{0, ..., 7},  p = 0 .. 63,

so a token says roughly where it stands (x_p lies in [p, p + 7] before the wrap) and its neighbours say
exactly what it is (x_p = x_{p-1} + 1 = x_{p+1} - 1). Ten percent of the tokens are then replaced by a uniformly
random token, so no single neighbour can be trusted. Training masks 15% of the positions (BERT's rate) and
predicts the original token there; to do that the model must find the positions next to the masked one, which
is the pressure that makes neighbouring rows of the position table alike.

Run from the repository root (CPU, a few minutes; 230 s on a busy two-core machine):

    python assets/trained/make_example.py

It writes ``example_positions.npy`` (64 x 64 float32) and ``example_positions.json`` (provenance) next to itself.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

SEED = 0
MAX_POSITIONS = 64
HIDDEN = 64
HEADS = 4
VOCAB = 72  # counting tokens; MASK is the next id
MASK = VOCAB
MAX_START = 8
NOISE = 0.10
MASK_RATE = 0.15
STEPS = 3000
BATCH = 64
LR = 3e-3
HERE = Path(__file__).resolve().parent


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB + 1, HIDDEN)
        self.positions = nn.Embedding(MAX_POSITIONS, HIDDEN)
        for table in (self.tokens, self.positions):
            nn.init.normal_(table.weight, mean=0.0, std=0.02)
        self.norm = nn.LayerNorm(HIDDEN)
        self.layer = nn.TransformerEncoderLayer(
            HIDDEN, HEADS, dim_feedforward=4 * HIDDEN, dropout=0.0, activation="gelu", batch_first=True
        )
        self.head = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.GELU(), nn.LayerNorm(HIDDEN))
        self.bias = nn.Parameter(torch.zeros(VOCAB + 1))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1])
        hidden = self.layer(self.norm(self.tokens(ids) + self.positions(pos)))
        return self.head(hidden) @ self.tokens.weight.T + self.bias


def batch(generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of noisy counting sequences, and the same with 15% of positions masked."""
    start = torch.randint(0, MAX_START, (BATCH, 1), generator=generator)
    clean = (start + torch.arange(MAX_POSITIONS)) % VOCAB
    noisy = torch.rand(clean.shape, generator=generator) < NOISE
    target = torch.where(noisy, torch.randint(0, VOCAB, clean.shape, generator=generator), clean)
    masked = torch.rand(clean.shape, generator=generator) < MASK_RATE
    return torch.where(masked, MASK, target), torch.where(masked, target, -100)


def main() -> None:
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model = TinyBert()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=LR, total_steps=STEPS, pct_start=0.1)
    began, losses = time.time(), []
    for step in range(STEPS):
        ids, labels = batch(generator)
        loss = nn.functional.cross_entropy(model(ids).reshape(-1, VOCAB + 1), labels.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if step % 500 == 0 or step == STEPS - 1:
            print(f"step {step:5d}  loss {loss.item():.4f}")
    table = model.positions.weight.detach().numpy().astype(np.float32)
    np.save(HERE / "example_positions.npy", table)
    provenance = {
        "script": "assets/trained/make_example.py",
        "seed": SEED,
        "steps": STEPS,
        "batch": BATCH,
        "learning_rate": LR,
        "first_loss": round(losses[0], 4),
        "final_loss": round(float(np.mean(losses[-100:])), 4),
        "seconds": round(time.time() - began, 1),
        "torch": torch.__version__,
        "model": f"1 encoder layer, hidden {HIDDEN}, {HEADS} heads, {MAX_POSITIONS} learned positions, N(0, 0.02^2)",
        "corpus": f"x_p = (s + p) mod {VOCAB}, s ~ U{{0..{MAX_START - 1}}}, {NOISE:.0%} random tokens, "
        f"{MASK_RATE:.0%} masked",
        "shape": list(table.shape),
    }
    (HERE / "example_positions.json").write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
